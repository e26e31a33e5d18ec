"""The intent: pydantic models of the one YAML file every artifact is rendered from."""

from __future__ import annotations

from fractions import Fraction
from ipaddress import IPv4Network
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from fabgen.intent import names
from fabgen.intent.units import (
    format_ratio,
    format_speed,
    parse_bytes,
    parse_ratio,
    parse_speed_gbps,
)

# --- reusable field types -------------------------------------------------------------------

SpeedGbps = Annotated[
    int,
    BeforeValidator(parse_speed_gbps),
    PlainSerializer(format_speed, return_type=str),
    WithJsonSchema({"type": "string", "pattern": r"^\d+(\.\d+)?[GgTt]", "examples": ["400G"]}),
]
Bytes = Annotated[
    int,
    BeforeValidator(parse_bytes),
    WithJsonSchema({"anyOf": [{"type": "integer", "minimum": 0},
                              {"type": "string", "pattern": r"^\d+\s*([KkMm][Ii]?)?[Bb]?$"}],
                    "examples": ["150KB", "1MiB"]}),
]
Ratio = Annotated[
    Fraction,
    BeforeValidator(parse_ratio),
    PlainSerializer(format_ratio, return_type=str),
    WithJsonSchema({"type": "string", "pattern": r"^\d+(\.\d+)?:\d+(\.\d+)?$",
                    "examples": ["1:1", "2:1", "8:7"]}),
]


def _net(value: object) -> IPv4Network:
    if isinstance(value, IPv4Network):
        return value
    if not isinstance(value, str):
        raise ValueError(f"expected an IPv4 prefix like '10.0.0.0/16', got {value!r}")
    try:
        return IPv4Network(value, strict=True)
    except ValueError as exc:
        raise ValueError(f"{value!r} is not an IPv4 prefix: {exc}") from None


Prefix = Annotated[
    IPv4Network,
    BeforeValidator(_net),
    PlainSerializer(str, return_type=str),
    WithJsonSchema({"type": "string", "format": "ipv4-prefix", "examples": ["10.254.0.0/16"]}),
]
SafeName = Annotated[str, AfterValidator(names.check_name)]
SafeText = Annotated[str, AfterValidator(names.check_text)]
Dscp = Annotated[int, Field(ge=0, le=63)]
Priority = Annotated[int, Field(ge=0, le=7)]


class StrictModel(BaseModel):
    """Unknown keys are errors; no silent coercion of '12' into 12; frozen once validated."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True,
                              use_attribute_docstrings=True)


# --- fabric ---------------------------------------------------------------------------------

IB_GENERATION_SPEED = {"hdr": 200, "ndr": 400, "xdr": 800}

# The largest fabric fabgen builds: host ports of every network together (compute, storage,
# management). Memory grows with ports, not GPUs; at this size a full render peaks at 0.9 GiB
# (RoCE, 53,260 files) and 1.1 GiB (InfiniBand), within the 2 GiB goal with room to spare
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
    model: SafeName = "dgx-h100"
    """Server model, for the report and bill of materials."""
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


# --- topology -------------------------------------------------------------------------------

def _breakout(value: str) -> str:
    from fabgen.catalog import Breakout

    Breakout.parse(value)  # raises "expected a breakout like '2x400G', got ..."
    return value


class SwitchSpec(StrictModel):
    """A switch from the catalog (`model`), or a custom one (`ports` and `speed`)."""

    model: str | None = None
    """Catalog model: qm8700, qm9700, q3400, sn4600c, sn4700, sn5600, 7060x6-64pe, th5-51t."""
    ports: int | None = Field(None, ge=4, le=512)
    """Custom switch: native port count."""
    speed: SpeedGbps | None = None
    """Custom switch: native port speed."""
    breakout: Annotated[str, AfterValidator(_breakout)] | None = None
    """Split each native port, e.g. `2x400G` (the fabric speed picks one if omitted)."""

    @model_validator(mode="after")
    def _model_or_custom(self) -> SwitchSpec:
        if self.model is None and (self.ports is None or self.speed is None):
            raise ValueError("give a catalog `model`, or `ports` and `speed` for a custom switch")
        if self.model is not None and (self.ports is not None or self.speed is not None):
            raise ValueError("give either a catalog `model` or custom `ports`/`speed`, not both")
        return self


def _oversub(value: object) -> object:
    # A bare ratio is the leaf's down:up split, the number every design document quotes.
    if isinstance(value, str):
        return {"leaf": value}
    return value


class Oversubscription(StrictModel):
    leaf: Ratio = Field("1:1", validate_default=True)
    """Leaf downlink:uplink bandwidth, e.g. `1:1`, `2:1`, `8:7`."""
    spine: Ratio = Field("1:1", validate_default=True)
    """Spine downlink:uplink bandwidth in a 3-tier fabric."""


class ExtraFabricSpec(StrictModel):
    """A separate storage or management network from the reference architectures."""

    transport: Literal["ethernet", "infiniband"] = "ethernet"
    """DGX SuperPOD runs storage on InfiniBand and management on Ethernet."""
    generation: Literal["hdr", "ndr", "xdr"] | None = None
    """InfiniBand generation of this network (InfiniBand only)."""
    nics: int = Field(ge=1, le=8)
    """NICs (ports) per node on this network."""
    speed: SpeedGbps
    """Port speed of those NICs."""
    leaf: SwitchSpec
    spine: SwitchSpec | None = None
    oversubscription: Ratio = Field("1:1", validate_default=True)
    """Leaf downlink:uplink bandwidth (storage and management are often oversubscribed)."""


class TopologySpec(StrictModel):
    style: Literal["rail-optimized", "rail-unaware"] = "rail-optimized"
    """`rail-optimized`: rail r of every node of a scalable unit on one leaf.
    `rail-unaware`: classic fat-tree, each node's ports on the same leaf."""
    planes: int = Field(1, ge=1, le=8)
    """Independent fabric planes; with 2, each NIC's two ports go to different planes."""
    scalable_unit: int | None = Field(None, ge=1)
    """Nodes per scalable unit (default: as many as one leaf's downlinks serve)."""
    oversubscription: Annotated[Oversubscription, BeforeValidator(_oversub)] = Oversubscription()
    """A ratio (leaf tier), or per tier: `{leaf: "2:1", spine: "1:1"}`."""
    leaf: SwitchSpec
    spine: SwitchSpec | None = None
    """Defaults to the leaf model."""
    core: SwitchSpec | None = None
    """Defaults to the spine model."""
    min_spines: int = Field(1, ge=1, le=512)
    """At least this many spines per plane (per pod in 3 tiers): with 2 spines one failure
    halves the bandwidth, with 8 it costs 12.5%."""
    tiers: Literal["auto", 2, 3] = "auto"
    """`auto` picks the smallest that fits; 2 or 3 forces it."""
    full_units: bool = True
    """Build a partial scalable unit's leaves and uplinks in full, so it grows without recabling."""
    storage: ExtraFabricSpec | None = None
    management: ExtraFabricSpec | None = None


# --- QoS (RoCE) -----------------------------------------------------------------------------

class ClassMark(StrictModel):
    dscp: Dscp
    priority: Priority


class ExtraClass(StrictModel):
    name: SafeName
    dscp: list[Dscp] = Field(min_length=1)
    priority: Priority
    weight: int = Field(10, ge=1, le=100)
    """DWRR weight of this class's queue."""


class EcnSpec(StrictModel):
    enabled: bool = True
    min: Bytes = 150_000
    """Queue depth where ECN marking starts (bytes; `150KB`)."""
    max: Bytes = 1_500_000
    """Queue depth where marking reaches `probability`."""
    probability: int = Field(100, ge=1, le=100)
    """Marking probability at `max`, percent."""

    @model_validator(mode="after")
    def _ordered(self) -> EcnSpec:
        if self.min >= self.max:
            raise ValueError(f"min ({self.min} B) must be below max ({self.max} B)")
        return self


class PfcWatchdogSpec(StrictModel):
    enabled: bool = True
    detection_ms: int = Field(200, ge=200, le=5000)
    """Stuck-queue detection time; at least 200 ms so the 100 ms poll (Cumulus' floor) sees a
    storm twice before acting."""
    restoration_ms: int = Field(400, ge=100, le=60000)
    action: Literal["drop", "forward", "alert"] = "drop"


class SchedulerSpec(StrictModel):
    rdma_weight: int = Field(50, ge=1, le=100)
    """DWRR weight of the lossless RDMA queue."""
    default_weight: int = Field(50, ge=1, le=100)
    """DWRR weight of the default (best-effort) queue."""


class QosSpec(StrictModel):
    rdma: ClassMark = ClassMark(dscp=26, priority=3)
    """RoCE data: the only lossless (PFC) priority."""
    cnp: ClassMark = ClassMark(dscp=48, priority=6)
    """Congestion notification packets: strict priority, not lossless."""
    classes: list[ExtraClass] = []
    """Other traffic classes (storage, control...); never on the RDMA or CNP priority."""
    ecn: EcnSpec = EcnSpec()
    pfc_watchdog: PfcWatchdogSpec = PfcWatchdogSpec()
    scheduler: SchedulerSpec = SchedulerSpec()
    mtu: int = Field(9216, ge=1500, le=9216)
    """Switch port MTU (L2 frame payload), the same on every hop. Not set: the largest every
    switch platform of the fabric takes (9216 on SONiC and NVUE, 9214 with EOS)."""
    host_mtu: int = Field(9000, ge=1500, le=9216)
    """NIC netdev MTU; must fit inside the switch MTU. Not set: 9000, or the switch MTU when
    that is lower."""
    cable_length_m: int = Field(5, ge=1, le=2000)
    """Longest host-to-leaf cable, metres: PFC headroom on NICs and leaf host ports."""
    fabric_cable_length_m: int = Field(100, ge=1, le=2000)
    """Longest switch-to-switch cable, metres: PFC headroom on uplinks (row-to-row fibre runs
    are tens of metres; Cumulus' RoCE default is 100)."""


# --- InfiniBand -----------------------------------------------------------------------------

def _pkey(value: object) -> int:
    if isinstance(value, str):
        try:
            return int(value, 0)
        except ValueError:
            raise ValueError(f"P_Key {value!r} is not a number like 0x0101") from None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ValueError(f"P_Key {value!r} is not a number like 0x0101")


HostPattern = Annotated[str, AfterValidator(names.check_glob)]


class IbPartition(StrictModel):
    """A tenant partition: its P_Key and the hosts that are members."""

    name: SafeName
    pkey: Annotated[int, BeforeValidator(_pkey), Field(ge=0x0001, le=0x7FFE),
                    WithJsonSchema({"anyOf": [{"type": "integer"},
                                              {"type": "string", "pattern": "^0[xX][0-9a-fA-F]+$"}],
                                    "examples": ["0x0101"]})]
    """P_Key 0x0001-0x7ffe (0x7fff is the default partition)."""
    hosts: list[HostPattern] = Field(["*"], min_length=1)
    """Shell patterns over host names, e.g. `dgx0[0-3]*`."""
    membership: Literal["full", "limited"] = "full"
    ipoib: bool = True
    """Create an IPoIB broadcast group in this partition."""


class IbTrafficClass(StrictModel):
    """A service level with its virtual lane and arbitration weight (OpenSM QoS)."""

    name: SafeName
    sl: int = Field(ge=0, le=14)
    vl: int | None = Field(None, ge=0, le=7)
    """Virtual lane; handed out in order when omitted."""
    weight: int = Field(64, ge=1, le=255)
    """VL arbitration weight in 64-byte credits."""
    priority: Literal["high", "low"] = "low"
    partitions: list[SafeName] = []
    """Tenant partitions whose traffic uses this SL (qos-policy.conf)."""
    ipoib: bool = False
    default: bool = False
    """The SL of traffic no other class matches."""


class InfinibandSpec(StrictModel):
    routing_engine: Literal["ftree", "ar_ftree", "updn"] = "ftree"
    adaptive_routing: bool = False
    sharp: bool = False
    """Enable SHARP in-network reductions (NCCL CollNet)."""
    service_level: int = Field(0, ge=0, le=15)
    """SL of the compute traffic (NCCL_IB_SL)."""
    sm_priority: int = Field(15, ge=0, le=15)
    sm_host: SafeName | None = None
    """The host running OpenSM; each plane's opensm.conf binds to its port there."""
    guids_file: str | list[str] | None = None
    """`ibnetdiscover` output(s) of the real fabric (relative to the intent file): the files
    then name the real GUIDs instead of fabgen's deterministic plan."""
    partitions: list[IbPartition] = []
    default_membership: Literal["full", "limited"] | None = None
    """Default partition membership (full without tenant partitions, limited with them)."""
    traffic_classes: list[IbTrafficClass] = []


# --- NCCL -----------------------------------------------------------------------------------

class NcclSpec(StrictModel):
    profile: Literal["auto", "efa"] = "auto"
    """`auto`: RoCE or InfiniBand variables from the fabric; `efa`: AWS EFA (aws-ofi-nccl)."""
    gid_index: int = Field(3, ge=0, le=255)
    """RoCE v2 IPv4 GID index (NCCL_IB_GID_INDEX); `show_gids` on a host tells."""
    qps_per_connection: int = Field(4, ge=1, le=128)
    """NCCL_IB_QPS_PER_CONNECTION: more QPs give ECMP more flows to spread."""
    timeout: int = Field(22, ge=1, le=31)
    """NCCL_IB_TIMEOUT (4.096 us * 2^timeout); larger for large fabrics."""
    retry_cnt: int = Field(7, ge=0, le=7)
    """NCCL_IB_RETRY_CNT."""
    gdr_level: Literal["LOC", "PIX", "PXB", "PHB", "SYS"] = "PXB"
    """NCCL_NET_GDR_LEVEL: the farthest GPU-NIC path that still uses GPUDirect RDMA."""


# --- platforms, addressing, hosts -----------------------------------------------------------

Platform = Literal["sonic", "nvue", "eos"]


class PlatformsSpec(StrictModel):
    leaf: Platform = "sonic"
    spine: Platform | None = None
    """Defaults to the leaf platform."""
    core: Platform | None = None
    """Defaults to the spine platform."""


class AsnSpec(StrictModel):
    spine: int = Field(65000, ge=1, le=4294967294)
    """ASN shared by the spines of a 2-tier fabric (of pod 1 in a 3-tier)."""
    core: int = Field(64900, ge=1, le=4294967294)
    leaf_start: int = Field(65101, ge=1, le=4294967294)
    """First leaf ASN; each leaf gets its own (RFC 7938)."""


class AddressingSpec(StrictModel):
    p2p: Prefix = IPv4Network("10.254.0.0/16")
    """Pool of /31 switch-to-switch links."""
    loopbacks: Prefix = IPv4Network("10.255.0.0/22")
    """Pool of /32 switch loopbacks."""
    hosts: Prefix = IPv4Network("10.100.0.0/16")
    """Pool of /31 leaf-to-NIC links (RoCE)."""
    asn: AsnSpec = AsnSpec()


class HostsSpec(StrictModel):
    name: str = "gpu{index:04d}"
    """Host name template; placeholders: `index` (1-based), `su` (1-based)."""
    rdma_devices: str | list[str] = "mlx5_{dev}"
    """RDMA device per compute port: a template (`dev` = nic*nic_ports+port, `nic`, `port`,
    `rail`) or an explicit list in that order."""
    netdevs: str | list[str] = "rdma{dev}"
    """Linux netdev per compute port: a template like `rdma_devices`, or a list."""
    bootstrap_interface: str = "eth0"
    """Interface NCCL uses for its bootstrap (NCCL_SOCKET_IFNAME)."""

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return names.check_template(v, ("index", "su"), names.SAFE_NAME,
                                    [{"index": 1, "su": 1}, {"index": 99999, "su": 999}],
                                    "host name")

    @field_validator("rdma_devices", "netdevs")
    @classmethod
    def _devices(cls, v: str | list[str], info: Any) -> str | list[str]:
        pattern = names.RDMA_NAME if info.field_name == "rdma_devices" else names.NETDEV_NAME
        what = "RDMA device" if info.field_name == "rdma_devices" else "netdev"
        if isinstance(v, str):
            return names.check_template(v, ("dev", "nic", "port", "rail"), pattern,
                                        [{"dev": 0, "nic": 0, "port": 0, "rail": 0},
                                         {"dev": 63, "nic": 31, "port": 1, "rail": 31}], what)
        for item in v:
            if not pattern.match(item):
                raise ValueError(f"{what} {item!r} is not safe in a shell script; "
                                 f"{names.UNSAFE_HINT}")
        return v

    @field_validator("bootstrap_interface")
    @classmethod
    def _bootstrap(cls, v: str) -> str:
        if not names.NETDEV_NAME.match(v):
            raise ValueError(f"netdev {v!r} is not a valid interface name; {names.UNSAFE_HINT}")
        return v


# --- the intent -----------------------------------------------------------------------------

class Intent(StrictModel):
    """A GPU-cluster fabric: what to build, from which every artifact is rendered."""

    model_config = ConfigDict(title="fabgen intent")

    name: SafeName
    """Cluster/fabric name, used in file names and descriptions."""
    description: SafeText = ""
    fabric: FabricSpec
    cluster: ClusterSpec
    topology: TopologySpec
    qos: QosSpec = QosSpec()
    """RoCE QoS plan inputs (ignored for InfiniBand, which uses service levels)."""
    infiniband: InfinibandSpec = InfinibandSpec()
    platforms: PlatformsSpec = PlatformsSpec()
    """Configuration target per switch role (RoCE only)."""
    addressing: AddressingSpec = AddressingSpec()
    hosts: HostsSpec = HostsSpec()
    nccl: NcclSpec = NcclSpec()
