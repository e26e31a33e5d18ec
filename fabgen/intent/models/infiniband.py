"""InfiniBand: the subnet manager (OpenSM build, routing engine, adaptive routing, SHARP),
its dedicated hosts, tenant partitions and service levels."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    PlainSerializer,
    WithJsonSchema,
    field_validator,
)

from fabgen.intent import names
from fabgen.intent.models.fields import (
    Prefix,
    SafeName,
    StrictModel,
    device_names,
)

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
    """`ufm`: UFM Enterprise (UFM runs OpenSM and sharp_am), NVIDIA's layout; `opensm`:
    servers running OpenSM (and sharp_am with SHARP) themselves."""
    ufm: Literal["appliance", "software"] = "appliance"
    """With `kind: ufm`, how UFM is installed, which decides how it is configured.
    `appliance` (the default, as NVIDIA's DGX SuperPOD ships it): UFM Enterprise Appliances,
    configured through their CLI; fabgen renders the CLI commands (`ufm/appliance.cli`) and
    says which settings the CLI has no command for. `software`: UFM Enterprise installed on
    your own servers, configured by editing its files under /opt/ufm/files; fabgen renders
    `ufm/ufm-setup.sh`, which writes and checks them. UFM Enterprise software documents no
    setting that makes the hosts limited members of the default partition, so with tenants the
    hosts stay full members there (the report warns)."""
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
        return device_names(v, info.field_name, ("dev",), [{"dev": 0}, {"dev": 7}])


class IbIpoibSpec(StrictModel):
    """IPoIB on the compute fabric's default partition: one IPv4 subnet (the partition is one
    broadcast domain) with an address on every compute port and on each subnet-manager host's
    fabric interface. SHARP's aggregation manager and libsharp talk over it (TCP 6126) and UFM
    does not start without an IPv4 address on its `fabric_interface`."""

    prefix: Prefix
    """The subnet, e.g. `10.224.0.0/20`: the subnet-manager hosts' fabric interfaces take its
    first addresses, then every compute port, host by host in rail order."""


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
    sharp_version: Annotated[str, Field(pattern=r"^[0-9]{1,2}\.[0-9]{1,2}(\.[0-9]{1,2})?$",
                                        examples=["3.13", "3.10.3"])] = "3.13"
    """The NVIDIA SHARP release of the aggregation manager (`sharp_am --version` on the UFM
    host): it decides which sharp_am options exist and what libsharp uses by default. fabgen
    assumes 3.13 unless told; set yours."""
    sharp_protocol: Literal["ucx", "sockets"] | None = None
    """How libsharp reaches sharp_am (sharp_am `smx_protocol`): `ucx` over InfiniBand, or
    `sockets`, TCP 6126 over IPoIB. Not set: `ucx` from SHARP 3.13 on (NVIDIA's default for new
    installs, which it advises upgraded ones to switch to), `sockets` before."""
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
    ipoib: IbIpoibSpec | None = None
    """IPoIB addressing (needed by SHARP and by UFM's fabric interface). Not set: no host gets an
    IPoIB address from fabgen, and the report warns when SHARP or UFM needs one."""

    def sharp_transport(self) -> Literal["ucx", "sockets"]:
        """How libsharp reaches sharp_am (see `sharp_transport`)."""
        return sharp_transport(self.sharp_protocol, self.sharp_version)

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


def sharp_release(version: str) -> tuple[int, ...]:
    """A SHARP release as numbers: "3.10.3" -> (3, 10, 3), "3.13" -> (3, 13)."""
    return tuple(int(x) for x in version.split("."))


# SHARP Rev 3.13.0, Changes and New Features, "Default Client-Server Communication": "New
# installations of SHARP_am now use UCX as the default communication method with libsharp
# instead of sockets ... customers are advised to switch to UCX"; smx_protocol "The default
# value is modified in this release from Sockets to UCX".
SHARP_UCX_DEFAULT_FROM = (3, 13)


def sharp_transport(asked: str | None, version: str) -> Literal["ucx", "sockets"]:
    """The intent's choice, else what sharp_am of that release defaults to on a new install:
    UCX from SHARP 3.13, sockets before."""
    if asked == "ucx":
        return "ucx"
    if asked == "sockets":
        return "sockets"
    return "ucx" if sharp_release(version) >= SHARP_UCX_DEFAULT_FROM else "sockets"
