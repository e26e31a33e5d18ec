"""What the fabric connects: its transport and speed, the GPU nodes, the hosts' names and
devices, and the NCCL settings they run with."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    Field,
    field_validator,
)

from fabgen.intent import names
from fabgen.intent.models.fields import (
    SafeName,
    SpeedGbps,
    StrictModel,
    device_names,
)

# --- fabric ---------------------------------------------------------------------------------

IB_GENERATION_SPEED = {"hdr": 200, "ndr": 400, "xdr": 800}

# The largest fabric fabgen builds: host ports of every network together (compute, storage,
# management). Memory grows with ports, not GPUs; at this size a full render peaks at 1.7 GiB
# (RoCE, 53,271 files) and 1.1 GiB (InfiniBand), within the 2 GiB goal
# (benchmarks/render_scale.py --sizes 262144; README "Scale"). semantic.py enforces it, since
# a product of fields is beyond a JSON Schema.
MAX_HOST_PORTS = 262_144


class FabricSpec(StrictModel):
    transport: Literal["roce", "infiniband"]
    """`roce` (RoCEv2 over Ethernet) or `infiniband`."""
    generation: Literal["hdr", "ndr", "xdr"] | None = None
    """InfiniBand generation (HDR 200G, NDR 400G, XDR 800G); InfiniBand only."""
    speed: SpeedGbps | None = None
    """Speed of every compute NIC port and fabric link, e.g. `400G`. Defaults to the IB
    generation's rate, or to the NIC's rate for RoCE."""


# --- cluster --------------------------------------------------------------------------------

class NodeSpec(StrictModel):
    model: SafeName = "generic"
    """Server model from the node catalog: `dgx-h100`, `dgx-h200`, `dgx-b200`, `hgx-h100`,
    `hgx-h200`, `hgx-b200` or `generic`. A model with a published port table gives each compute
    port's RDMA device, netdev, GPU and NUMA node, and the in-band interface NCCL bootstraps
    over."""
    gpus: int = Field(8, ge=1, le=72)
    """GPUs per node."""
    nics: int = Field(8, ge=1, le=32)
    """Compute-fabric NICs per node (one per rail in a rail-optimized fabric)."""
    nic: str = "connectx-7"
    """NIC model from the catalog (`connectx-6`, `connectx-7`, `connectx-8`, `bluefield-3`)."""
    nic_ports: int = Field(1, ge=1, le=2)
    """Ports of each NIC cabled to the compute fabric (2 with `planes: 2` = dual-plane)."""
    port_cages: int | None = Field(None, ge=1, le=4)
    """NIC ports per host-side transceiver (2 = twin-port OSFP cages as on DGX H100); defaults
    from the node model."""
    numa_nodes: int = Field(2, ge=1, le=8)
    """NUMA nodes (CPU sockets); GPUs and NICs split evenly over them in index order."""


class ClusterSpec(StrictModel):
    nodes: int = Field(ge=1, le=65536)
    """Number of GPU nodes installed."""
    node: NodeSpec = NodeSpec()


class HostsSpec(StrictModel):
    name: str = "gpu{index:04d}"
    """Host name template; placeholders: `index` (1-based), `su` (1-based)."""
    rdma_devices: str | list[str] | None = None
    """RDMA device per compute port: a template (`dev` = nic*nic_ports+port, `nic`, `port`,
    `rail`) or an explicit list in that order. Not set: the node model's compute NICs in GPU
    order (placeholders `mlx5_{dev}` for a model without a published map). With a published
    map, only its compute NICs are accepted (a subset of them cables fewer rails)."""
    netdevs: str | list[str] | None = None
    """Linux netdev per compute port: a template like `rdma_devices`, or a list. Not set: the
    node model's names for the fabric's link type (placeholders `rdma{dev}` without a map)."""
    bootstrap_interface: str | None = None
    """Interface NCCL bootstraps over (NCCL_SOCKET_IFNAME). Not set: the node model's in-band
    interface (bond0 on DGX), or none, which leaves NCCL to pick one."""

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return names.check_template(v, ("index", "su"), names.SAFE_NAME,
                                    [{"index": 1, "su": 1}, {"index": 99999, "su": 999}],
                                    "host name")

    @field_validator("rdma_devices", "netdevs")
    @classmethod
    def _devices(cls, v: str | list[str] | None, info: Any) -> str | list[str] | None:
        if v is None:
            return v
        return device_names(v, info.field_name, ("dev", "nic", "port", "rail"),
                            [{"dev": 0, "nic": 0, "port": 0, "rail": 0},
                             {"dev": 63, "nic": 31, "port": 1, "rail": 31}])

    @field_validator("bootstrap_interface")
    @classmethod
    def _bootstrap(cls, v: str | None) -> str | None:
        if v is not None and not names.NETDEV_NAME.match(v):
            raise ValueError(f"netdev {v!r} is not a valid interface name; {names.UNSAFE_HINT}")
        return v


# --- NCCL -----------------------------------------------------------------------------------

class NcclSpec(StrictModel):
    profile: Literal["auto", "efa"] = "auto"
    """`auto`: RoCE or InfiniBand variables from the fabric; `efa`: AWS EFA (aws-ofi-nccl)."""
    gid_index: int = Field(3, ge=0, le=255)
    """RoCE v2 IPv4 GID index (NCCL_IB_GID_INDEX); `show_gids` on a host tells."""
    qps_per_connection: int | None = Field(None, ge=1, le=128)
    """NCCL_IB_QPS_PER_CONNECTION. Not set: 4 on RoCE (each QP is a UDP flow ECMP can hash
    apart), NCCL's 1 on InfiniBand (with LMC 0 every QP to a port follows the same route)."""
    timeout: int = Field(20, ge=1, le=31)
    """NCCL_IB_TIMEOUT: ACK timeout 4.096 us * 2^timeout per retry; NCCL's default is 20."""
    retry_cnt: int = Field(7, ge=0, le=7)
    """NCCL_IB_RETRY_CNT."""
    gdr_level: Literal["LOC", "PIX", "PXB", "PHB", "SYS"] = "PXB"
    """NCCL_NET_GDR_LEVEL: the farthest GPU-NIC path that still uses GPUDirect RDMA."""
