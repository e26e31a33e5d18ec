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


class CableLength(StrictModel):
    """One measured cable: named by its cable id (the `id` column of fabgen's cabling sheet)
    or by one end, a device and its port as the sheet prints them."""

    cable: SafeName | None = None
    """Cable id from cabling/cabling.csv (`c000123`)."""
    device: SafeName | None = None
    """A switch or host at either end of the cable."""
    port: SafeName | None = None
    """That device's port: a switch interface (`Ethernet8`, `swp3s1`, `Ethernet2/1`) or a
    host's RDMA device or netdev (`mlx5_0`, `enp24s0np0`)."""
    length_m: float = Field(gt=0, le=2000)
    """Measured length, metres; a fraction (a 2.5 m DAC) is rounded up to the next metre."""

    @model_validator(mode="after")
    def _one_name(self) -> CableLength:
        if (self.cable is None) == (self.device is None and self.port is None):
            raise ValueError("name the cable by `cable`, or by `device` and `port`, not both")
        if self.cable is None and (self.device is None or self.port is None):
            raise ValueError("`device` and `port` go together")
        return self


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
    """Longest host-to-leaf cable, metres (of those `cable_lengths` does not measure): PFC
    headroom on NICs (`mlnx_qos --cable_len`) and leaf host ports. Not set: 5, with a warning
    (measure it)."""
    fabric_cable_length_m: int = Field(100, ge=1, le=2000)
    """Longest leaf-to-spine cable, metres (of those `cable_lengths` does not measure): PFC
    headroom on those ports (row-to-row fibre runs are tens of metres; Cumulus' RoCE default
    is 100). Not set: 100, with a warning."""
    core_cable_length_m: int | None = Field(None, ge=1, le=2000)
    """Longest spine-to-core cable, metres (3 tiers). Not set: `fabric_cable_length_m`."""
    cable_lengths: list[CableLength] = Field([], max_length=1000)
    """Measured lengths of single cables, overriding their class's length (the three fields
    above) on both ends of that cable: the switch port's headroom and the NIC's
    `mlnx_qos --cable_len`. Longer lists belong in `cable_lengths_file`."""
    cable_lengths_file: str | None = None
    """CSV of measured cable lengths, relative to the intent's directory (inside it): a header
    row, a `length_m` column, and per row the cable's `id`, or one end as `a_device`+`a_port`,
    `z_device`+`z_port` or `device`+`port`. fabgen's own cabling/cabling.csv with its
    `length_m` column filled in is such a file; other columns are ignored, a row with an empty
    `length_m` keeps its class's length."""
    buffer_model: Literal["auto", "traditional", "dynamic"] = "auto"
    """SONiC buffer model. `auto`: the platform vendor's default (dynamic on NVIDIA Spectrum,
    as NVIDIA builds SONiC; traditional elsewhere). `traditional`: fabgen writes every lossless
    profile from the vendor's lookup table; `dynamic`: SONiC's buffermgrd computes headroom
    from the cable lengths."""


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


def _guid(value: object) -> int:
    if isinstance(value, str):
        try:
            value = int(value, 16)  # int() takes an optional 0x prefix with base 16
        except ValueError:
            raise ValueError(f"GUID {value!r} is not a hex number like 0x0002c90300a1b2c4") \
                from None
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**64:
        return value
    raise ValueError(f"GUID {value!r} is not a 64-bit hex number like 0x0002c90300a1b2c4")


Guid = Annotated[int, BeforeValidator(_guid),
                 PlainSerializer(lambda v: f"0x{v:016x}", return_type=str),
                 WithJsonSchema({"type": "string", "pattern": "^(0[xX])?[0-9a-fA-F]{1,16}$",
                                 "examples": ["0x0002c90300a1b2c4"]})]


class IbManagementHost(StrictModel):
    """One dedicated management server on the compute fabric."""

    name: SafeName
    port_guids: list[Guid] = []
    """Port GUID of each of its fabric ports, in port order (`ibstat -p` on the host): binds
    its subnet manager (opensm.conf `guid`) when no `infiniband.guids_file` names it."""


class IbManagementSpec(StrictModel):
    """Where the subnet manager, UFM and SHARP's aggregation manager run: dedicated hosts on
    reserved leaf ports of the compute fabric. NVIDIA's DGX SuperPOD gives up one node slot for
    them (SuperPOD H100 RA Table 4: 4 "UFM" cables, 127 instead of 128 DGX in 4 SUs)."""

    kind: Literal["ufm", "opensm"] = "ufm"
    """`ufm`: UFM Enterprise appliances (UFM runs OpenSM and sharp_am), NVIDIA's layout;
    `opensm`: servers running OpenSM (and sharp_am with SHARP) themselves."""
    hosts: list[IbManagementHost] = Field(
        [IbManagementHost(name="ufm01"), IbManagementHost(name="ufm02")], max_length=8)
    """The first runs the master subnet manager (and sharp_am), the others standby ones.
    Empty: no dedicated host (the SM runs on `infiniband.sm_host`, or where you start it)."""
    ports: int = Field(2, ge=1, le=8)
    """Fabric ports of each host, one per ConnectX port (2 x 2 = the RA's 4 UFM cables)."""
    rdma_devices: str | list[str] = "mlx5_{dev}"
    """RDMA device of each fabric port: a template with `{dev}` (0-based) or a list."""
    netdevs: str | list[str] = "ib{dev}"
    """IPoIB netdev of each fabric port (UFM's `fabric_interface`): a template or a list."""

    @field_validator("rdma_devices", "netdevs")
    @classmethod
    def _devices(cls, v: str | list[str], info: Any) -> str | list[str]:
        pattern = names.RDMA_NAME if info.field_name == "rdma_devices" else names.NETDEV_NAME
        what = "RDMA device" if info.field_name == "rdma_devices" else "netdev"
        if isinstance(v, str):
            return names.check_template(v, ("dev",), pattern, [{"dev": 0}, {"dev": 7}], what)
        for item in v:
            if not pattern.match(item):
                raise ValueError(f"{what} {item!r} is not safe in a shell script; "
                                 f"{names.UNSAFE_HINT}")
        return v


# OpenSM builds and what they know. NVIDIA's (MLNX_OFED/DOCA-Host opensm, the one inside UFM)
# adds adaptive routing engines (ar_updn, ar_ftree...) and SHARP (sharp_enabled); upstream
# linux-rdma/opensm (Debian's 3.3.23) has neither and silently routes with another engine when
# asked for one it does not know.
OpenSMBuild = Literal["nvidia", "upstream"]
AR_GENERATIONS = ("ndr", "xdr")


class InfinibandSpec(StrictModel):
    opensm: OpenSMBuild = "nvidia"
    """Which OpenSM runs the subnet: `nvidia` (MLNX_OFED/DOCA-Host OpenSM or UFM: adaptive
    routing, SHARP) or `upstream` (linux-rdma OpenSM, e.g. Debian's: neither)."""
    routing_engine: Literal["ftree", "updn", "ar_ftree", "ar_updn"] = "ftree"
    """Base engine: `ftree` (fat-tree) or `updn`. With adaptive routing NVIDIA's OpenSM runs
    `ar_updn` (its documented default) unless `ar_ftree` is named here."""
    adaptive_routing: bool | None = None
    """Not set: on for NDR and XDR with NVIDIA's OpenSM (NVIDIA's default), off otherwise."""
    sharp: bool = False
    """Enable SHARP in-network reductions (NCCL CollNet); needs NVIDIA's OpenSM."""
    sharp_sl: int = Field(1, ge=0, le=14)
    """SL of SHARP's aggregation QPs (sharp_am `ib_qpc_sl`, `ib_sat_qpc_sl`), mapped to a VL of
    its own so reductions never wait behind bulk transfers."""
    service_level: int = Field(0, ge=0, le=15)
    """SL of the compute traffic (NCCL_IB_SL)."""
    sm_priority: int = Field(15, ge=0, le=15)
    """Priority of the master subnet manager; each standby gets one less."""
    management: IbManagementSpec = IbManagementSpec()
    """Dedicated hosts of the subnet manager, UFM and sharp_am, on leaf ports reserved in the
    plan. Default: NVIDIA's SuperPOD layout, 2 UFM appliances x 2 ports on one node slot."""
    sm_host: SafeName | None = None
    """A compute host running OpenSM instead of dedicated management hosts (needs
    `management.hosts: []`); its opensm.conf binds to its port there."""
    guids_file: str | list[str] | None = None
    """`ibnetdiscover` output(s) of the real fabric (relative to the intent file): the GUID
    files (root, compute nodes, node names, partition members, SM ports) are rendered from it.
    Without it OpenSM gets no GUID files: ftree finds roots and compute nodes itself."""
    partitions: list[IbPartition] = []
    default_membership: Literal["full", "limited"] | None = None
    """Default partition membership (full without tenant partitions, limited with them)."""
    traffic_classes: list[IbTrafficClass] = []

    def adaptive_routing_on(self, generation: str | None) -> bool:
        """Whether the subnet manager runs adaptive routing (see `adaptive_routing_on`)."""
        return adaptive_routing_on(self.adaptive_routing, self.routing_engine, self.opensm,
                                   generation)


def adaptive_routing_on(asked: bool | None, routing_engine: str, opensm: str,
                        generation: str | None) -> bool:
    """The intent's choice, else on with an `ar_` engine, else NVIDIA's default: on for NDR and
    XDR with NVIDIA's OpenSM (InfiniBand Cluster Bring-up Procedure, "Adaptive Routing": "AR is
    enabled by default in the opensm.conf file"), off with upstream OpenSM, which has no AR."""
    if asked is not None:
        return asked
    if routing_engine.startswith("ar_"):
        return True
    return opensm == "nvidia" and generation in AR_GENERATIONS


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


# --- underlay and load balancing (RoCE) -----------------------------------------------------

class BgpTimersSpec(StrictModel):
    keepalive_s: int = Field(3, ge=1, le=3600)
    """BGP keepalive, seconds, on every switch platform. 3 s is FRR's `datacenter` profile and
    Cumulus' default; EOS would otherwise keep 60 s."""
    hold_s: int = Field(9, ge=3, le=3600)
    """BGP hold time, seconds (FRR datacenter and Cumulus default 9; EOS default 180). At least
    three keepalives (RFC 4271 §10 suggests hold = 3 x keepalive)."""

    @model_validator(mode="after")
    def _three_keepalives(self) -> BgpTimersSpec:
        if self.hold_s < 3 * self.keepalive_s:
            raise ValueError(f"hold_s ({self.hold_s}) must be at least 3 x keepalive_s "
                             f"({self.keepalive_s}): one lost keepalive would drop the session")
        return self


class BfdSpec(StrictModel):
    enabled: bool = True
    """BFD on every underlay BGP session (FRR bfdd on SONiC, EOS, NVUE): a dead link is
    withdrawn in interval x multiplier instead of the BGP hold time."""
    interval_ms: int = Field(300, ge=50, le=60000)
    """Transmit and minimum receive interval, ms. 300 is the default of FRR bfdd, Cumulus and
    EOS; 50-60000 is the range all three accept."""
    multiplier: int = Field(3, ge=3, le=50)
    """Missed packets before the session is down (default 3 on all three; EOS takes 3-50)."""


class UnderlaySpec(StrictModel):
    """The eBGP underlay's failure detection, the same on every platform."""

    bgp: BgpTimersSpec = BgpTimersSpec()
    bfd: BfdSpec = BfdSpec()


HashField = Literal["src-ip", "dst-ip", "ip-protocol", "src-port", "dst-port", "roce-dest-qp"]


class LoadBalancingSpec(StrictModel):
    """How the switches spread RoCE flows over the equal-cost uplinks."""

    mode: Literal["hash", "adaptive"] = "hash"
    """`hash`: each flow stays on the uplink a hash of `hash_fields` picks (every platform).
    `adaptive`: the switch moves traffic to less-loaded uplinks: flowlet dynamic load balancing
    on EOS, per-packet adaptive routing on Cumulus (Spectrum-4 at 200G/400G; the NICs must
    reorder, NCCL_IB_ADAPTIVE_ROUTING=1); SONiC has no such setting and refuses it."""
    hash_fields: list[HashField] = Field(
        ["src-ip", "dst-ip", "ip-protocol", "src-port", "dst-port"], min_length=1)
    """Packet fields the ECMP hash reads. The default 5-tuple is Cumulus' default: a RoCEv2
    NIC gives each queue pair its own UDP source port, so more QPs are more flows.
    `roce-dest-qp` (the BTH destination QP) exists on EOS Tomahawk switches only."""

    @field_validator("hash_fields")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        dupes = sorted({f for f in v if v.count(f) > 1})
        if dupes:
            raise ValueError(f"hash field {dupes[0]!r} is listed twice")
        return v


# --- day two: verification and alert thresholds ---------------------------------------------

class MonitoringSpec(StrictModel):
    """Thresholds of the day-two pack: `fabgen verify`, the ANTA catalog and the Prometheus
    alerting rules. These are operational choices, not hardware facts: tune them against a
    healthy baseline of your own fabric."""

    pfc_storm_pps: int | None = Field(None, ge=1)
    """PFC pause frames per second received on the lossless priority that count as a storm
    when they last `pfc_storm_for_s`. Not set: the rate that keeps the link paused without a
    gap (link speed / (65535 quanta x 512 bit times), IEEE 802.1Qbb), 11,921/s at 400G."""
    pfc_storm_for_s: int = Field(60, ge=10, le=3600)
    """How long the storm rate must last before `PfcStorm` fires (the PFC watchdog acts within
    its detection time; this alert is for a storm the watchdog did not end)."""
    pause_rate_pps: int | None = Field(None, ge=1)
    """Sustained pause frames per second on a port and the lossless priority that `PfcPauseRate`
    warns about. Not set: a tenth of the storm rate (the link paused about 10% of the time)."""
    pause_rate_for_s: int = Field(300, ge=10, le=86400)
    """How long the pause rate must stay above `pause_rate_pps`."""
    bgp_down_for_s: int = Field(30, ge=0, le=3600)
    """How long a planned BGP session may be down before `BgpSessionDown` fires (the underlay
    hold time is 9 s)."""
    link_flaps: int = Field(3, ge=1, le=1000)
    """Carrier transitions of one port in `link_flap_window_s` that make `LinkFlapping` fire."""
    link_flap_window_s: int = Field(600, ge=60, le=86400)
    verify_pfc_frames_max: int = Field(0, ge=0)
    """`fabgen verify` and the ANTA catalog: PFC frames (sent + received) a port may show since
    the counters were last cleared. 0 for an idle fabric; raise it to check a fabric under load."""
    verify_ecn_marks_max: int = Field(0, ge=0)
    """ECN-marked packets a queue may show since the counters were cleared (ANTA)."""
    ib_symbol_errors: int = Field(10, ge=0)
    """InfiniBand: symbol errors of one port per hour that make `IbSymbolErrors` fire."""
    ib_xmit_wait_per_s: int = Field(1_000_000, ge=1)
    """InfiniBand: PortXmitWait ticks per second (sustained 5 min) that flag a congested port.
    The tick length is device-specific (IBTA leaves it to the implementation)."""
    host_lldp: bool = False
    """Check the hosts' LLDP neighbours on leaf host ports (needs lldpd on every host sending its
    netdev name as the port ID: `lldpcli configure lldp portidsubtype ifname`)."""
    otlp_destination: SafeName | None = None
    """Cumulus NVUE: host name or IPv4 address of the OpenTelemetry collector the switches
    export to (`nv set system telemetry export otlp grpc destination`)."""
    otlp_port: int = Field(4317, ge=1, le=65535)
    """OTLP/gRPC port of that collector (4317 is OTLP's registered gRPC port)."""
    gnmi_port: int = Field(8080, ge=1, le=65535)
    """gNMI port gnmic dials on SONiC and EOS switches (SONiC's telemetry container listens on
    8080; set it to EOS's `management api gnmi` port when it differs)."""


# --- job schedulers -------------------------------------------------------------------------

# A Kubernetes label key: an optional DNS-subdomain prefix and a name of at most 63 characters
# (the nodeLabel pattern of the Kueue and KAI Topology CRDs).
_LABEL_KEY = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?" \
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
LabelKey = Annotated[str, Field(pattern=_LABEL_KEY, max_length=316)]


class NodeLabelKeys(StrictModel):
    """Kubernetes node label keys, one per network tier. The defaults are the keys NVIDIA
    topograph writes (network.topology.nvidia.com/*), which Kueue and KAI setups already use."""

    leaf: LabelKey = "network.topology.nvidia.com/leaf"
    """The node's leaf group: its scalable unit's rail group, or its leaf (rail-unaware)."""
    spine: LabelKey = "network.topology.nvidia.com/spine"
    """The node's spine set (its pod in a 3-tier fabric; one value for all in 2 tiers)."""
    core: LabelKey = "network.topology.nvidia.com/core"
    """The node's core tier (3-tier fabrics only)."""

    @model_validator(mode="after")
    def _distinct(self) -> NodeLabelKeys:
        keys = [self.leaf, self.spine, self.core]
        if len(set(keys)) != len(keys) or "kubernetes.io/hostname" in keys:
            raise ValueError("the leaf, spine and core label keys must differ from each other "
                             "and from kubernetes.io/hostname")
        return self


class SchedulingSpec(StrictModel):
    labels: NodeLabelKeys = NodeLabelKeys()
    """Node label keys of the Kubernetes files (Kueue/KAI Topology levels, label-nodes.sh)."""


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
    def _bootstrap(cls, v: str | None) -> str | None:
        if v is not None and not names.NETDEV_NAME.match(v):
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
    underlay: UnderlaySpec = UnderlaySpec()
    """BGP timers and BFD of the RoCE underlay, the same on every switch platform."""
    load_balancing: LoadBalancingSpec = LoadBalancingSpec()
    """ECMP hashing or adaptive load balancing of the RoCE fabric."""
    monitoring: MonitoringSpec = MonitoringSpec()
    """Day-two checks and alerts: thresholds for `fabgen verify`, ANTA and Prometheus."""
    scheduling: SchedulingSpec = SchedulingSpec()
    """What job schedulers are told about the fabric (Slurm needs no settings)."""
