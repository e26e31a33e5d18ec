"""What the OpenSM files are rendered from: the intent's infiniband section resolved into
settings, the routing engine list, and the SL-to-VL / VL-arbitration plan (with SHARP's VL).

Which OpenSM build knows what (the intent's `infiniband.opensm` says which one runs):

- ftree, updn, minhop: upstream OpenSM (linux-rdma, e.g. Debian's 3.3.23) and NVIDIA's
  (MLNX_OFED, DOCA-Host, UFM);
- ar_updn, ar_ftree (adaptive routing): NVIDIA's only; upstream logs "cannot find or setup
  routing engine" and routes with the next engine of the list;
- sharp_enabled (SHARP): NVIDIA's only; upstream ignores the option.

ENGINE_BUILDS holds the engine rows; a test pins upstream's behaviour in ibsim.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from fabgen.errors import FabgenError
from fabgen.intent.models import adaptive_routing_on, sharp_transport
from fabgen.topology.model import Fabric

__all__ = [
    "BEST_EFFORT_WEIGHT",
    "COMPUTE_WEIGHT",
    "CREDITS_PER_4K",
    "ENGINE_BUILDS",
    "HIGH_LIMIT",
    "MAX_DATA_VLS",
    "SHARP_WEIGHT",
    "OpenSMSettings",
    "PartitionSpec",
    "SlPlan",
    "SmHost",
    "TrafficClassSpec",
    "VlClass",
    "ftree_fits",
    "routing_engines",
    "settings_from_intent",
    "sl_plan",
]

# VL arbitration weights count 64-byte credits: 64 lets one 4 KB packet through per turn.
CREDITS_PER_4K = 64
COMPUTE_WEIGHT = 3 * CREDITS_PER_4K  # the compute VL, when it has a VL of its own
BEST_EFFORT_WEIGHT = CREDITS_PER_4K
# SHARP's VL gets the same turn as the compute VL. NVIDIA publishes no weights for this split
# (its bring-up procedure leaves qos_vlarb_* at OpenSM's defaults): what matters is that SHARP's
# small reduction packets sit in a VL buffer of their own instead of behind bulk transfers, and
# an equal weight gives them up to half the link when both VLs are busy. fabgen's choice.
SHARP_WEIGHT = CREDITS_PER_4K
# High-priority VL arbitration: at most 4 x 4 KB in a row before a low-priority VL gets a turn.
HIGH_LIMIT = 4
# Data VLs every ConnectX and Quantum port offers (VLCap VL0-7).
MAX_DATA_VLS = 8

Build = Literal["nvidia", "upstream"]
# Which OpenSM build knows each engine. Upstream: opensm/osm_opensm.c routing_modules[] (minhop,
# updn, dnup, file, ftree, lash, dor, torus-2QoS, nue, dfsssp, sssp); NVIDIA adds the adaptive
# ones (InfiniBand Cluster Bring-up Procedure, "Adaptive Routing": default ar_updn; UFM
# Enterprise User Manual, "Appendix - Adaptive Routing": ar_updn, not ar_ftree, on XDR).
ENGINE_BUILDS: dict[str, tuple[Build, ...]] = {
    "minhop": ("upstream", "nvidia"),
    "updn": ("upstream", "nvidia"),
    "ftree": ("upstream", "nvidia"),
    "ar_updn": ("nvidia",),
    "ar_ftree": ("nvidia",),
}


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True, slots=True)
class PartitionSpec:
    """A tenant partition (intent field `infiniband.partitions[]`)."""

    name: str
    pkey: int  # 0x0001..0x7ffe; the full-member bit is added per member
    hosts: tuple[str, ...] = ("*",)  # host names or shell patterns (fnmatch)
    membership: Literal["full", "limited"] = "full"
    ipoib: bool = True


@dataclass(frozen=True, slots=True)
class TrafficClassSpec:
    """A traffic class on its own SL (intent field `infiniband.traffic_classes[]`)."""

    name: str
    sl: int  # 0..14
    vl: int | None = None  # data VL 0..7; by default VLs are handed out in class order
    weight: int = CREDITS_PER_4K  # VL arbitration weight, 64-byte credits (1..255)
    priority: Literal["high", "low"] = "low"
    partitions: tuple[str, ...] = ()  # path queries on these partitions get this SL
    ipoib: bool = False  # IPoIB on the default partition gets this SL
    default: bool = False  # path queries no other rule matches get this SL


@dataclass(frozen=True, slots=True)
class SmHost:
    """A host that runs a subnet manager: its name and the port GUIDs the intent gives."""

    name: str
    port_guids: tuple[int, ...] = ()  # per fabric port, in port order; () when not given


@dataclass(frozen=True, slots=True)
class OpenSMSettings:
    """What the OpenSM files are rendered from: the intent's infiniband section, resolved."""

    routing_engine: str = "ftree"
    adaptive_routing: bool = False  # resolved: the intent's, else NVIDIA's default
    sharp: bool = False
    sharp_sl: int = 1
    service_level: int = 0
    sm_priority: int = 15
    opensm: Build = "nvidia"
    generation: str | None = None
    partitions: tuple[PartitionSpec, ...] = ()
    traffic_classes: tuple[TrafficClassSpec, ...] = ()
    default_membership: Literal["full", "limited"] | None = None  # None: limited with tenants
    guids_files: tuple[str, ...] = ()
    management: str = "ufm"  # what runs on the dedicated hosts: ufm | opensm
    ufm: str = "appliance"  # with ufm: UFM Enterprise Appliances (CLI) or software (files)
    sharp_version: str = "3.13"  # the SHARP release sharp_am runs
    sharp_transport: str = "ucx"  # libsharp to sharp_am: ucx | sockets (resolved)
    sm_hosts: tuple[SmHost, ...] = ()  # intent order: the master first
    sm_host: str | None = None  # a compute host running the SM instead (no dedicated hosts)


def _get(obj: Any, name: str, default: Any) -> Any:
    """A field of a pydantic model or of a plain dict (proposed fields arrive either way)."""
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def _pkey(value: Any, loc: tuple[str | int, ...]) -> int:
    try:
        pkey = int(value, 0) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        raise FabgenError.single(f"P_Key {value!r} is not a number like 0x0101", loc=loc) from None
    pkey &= 0x7FFF  # the top bit is the membership bit, set per member
    if not 0x0001 <= pkey <= 0x7FFE:
        raise FabgenError.single(f"P_Key {pkey:#06x} is reserved; use 0x0001..0x7ffe "
                                 "(0x7fff is the default partition)", loc=loc)
    return pkey


def _strings(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def settings_from_intent(intent: Any) -> OpenSMSettings:
    """Resolve the intent's infiniband section into settings (a pydantic intent, or any object
    or dict of the same shape, which the tests use)."""
    ib = intent.infiniband
    base = ("infiniband",)
    parts = []
    for i, p in enumerate(_get(ib, "partitions", None) or ()):
        loc = (*base, "partitions", i)
        parts.append(PartitionSpec(
            name=str(_get(p, "name", "")),
            pkey=_pkey(_get(p, "pkey", None), (*loc, "pkey")),
            hosts=_strings(_get(p, "hosts", ("*",))) or ("*",),
            membership=_get(p, "membership", "full"),
            ipoib=bool(_get(p, "ipoib", True)),
        ))
    classes = []
    for c in _get(ib, "traffic_classes", None) or ():
        classes.append(TrafficClassSpec(
            name=str(_get(c, "name", "")),
            sl=int(_get(c, "sl", 0)),
            vl=_get(c, "vl", None),
            weight=int(_get(c, "weight", CREDITS_PER_4K)),
            priority=_get(c, "priority", "low"),
            partitions=_strings(_get(c, "partitions", ())),
            ipoib=bool(_get(c, "ipoib", False)),
            default=bool(_get(c, "default", False)),
        ))
    engine = str(_get(ib, "routing_engine", "ftree"))
    build = _get(ib, "opensm", "nvidia")
    generation = intent.fabric.generation
    mgmt = _get(ib, "management", None)
    hosts = tuple(SmHost(str(_get(h, "name", "")),
                         tuple(int(g) for g in _get(h, "port_guids", ()) or ()))
                  for h in (_get(mgmt, "hosts", ()) or ()))
    return OpenSMSettings(
        routing_engine=engine,
        adaptive_routing=adaptive_routing_on(_get(ib, "adaptive_routing", None), engine, build,
                                             generation),
        sharp=bool(_get(ib, "sharp", False)),
        sharp_sl=int(_get(ib, "sharp_sl", 1)),
        service_level=int(_get(ib, "service_level", 0)),
        sm_priority=int(_get(ib, "sm_priority", 15)),
        opensm=build,
        generation=generation,
        partitions=tuple(parts),
        traffic_classes=tuple(classes),
        default_membership=_get(ib, "default_membership", None),
        guids_files=_strings(_get(ib, "guids_file", None)),
        management=str(_get(mgmt, "kind", "ufm")),
        ufm=str(_get(mgmt, "ufm", "appliance")),
        sharp_version=str(_get(ib, "sharp_version", "3.13")),
        sharp_transport=sharp_transport(_get(ib, "sharp_protocol", None),
                                        str(_get(ib, "sharp_version", "3.13"))),
        sm_hosts=hosts,
        sm_host=_get(ib, "sm_host", None),
    )


# --------------------------------------------------------------------------- plans


def ftree_fits(fabric: Fabric, plane: int | None = None) -> bool:
    """Whether OpenSM's ftree engine accepts the subnet's size (osm_ucast_ftree.c).

    construct_fabric wants two switches and two CA nodes; fabric_create_leaf_switch_array wants
    two leaf switches with compute nodes. A smaller fabric (one leaf with hosts) falls back to
    minhop, so it is routed with updn instead.
    """
    switches = [sw for sw in fabric.switches if plane is None or sw.plane == plane]
    cas = {(h.name, hp.nic) for h in fabric.hosts for hp in h.ports
           if plane is None or hp.plane == plane}
    host_leaves = {link.z_device for link in fabric.links
                   if link.kind == "node-leaf" and (plane is None or link.plane == plane)}
    return len(switches) >= 2 and len(cas) >= 2 and len(host_leaves) >= 2


def routing_engines(settings: OpenSMSettings, *, fits_ftree: bool = True) -> str:
    """The routing_engine value: the planned engine first, updn after it.

    fabgen fabrics are fat trees: `ftree` (`updn` when the intent says so, or when the subnet
    is too small for ftree: see ftree_fits). Adaptive routing is NVIDIA OpenSM's: `ar_updn`,
    NVIDIA's default engine, unless the intent names `ar_ftree`; with upstream OpenSM it is
    never written (an engine OpenSM does not know is skipped with one log line). OpenSM tries
    the list in order and falls back to minhop only after the last one fails: updn last keeps a
    refused ftree (a miscabled tree, when no root_guid_file switches ftree's check off) on a
    credit-loop-free engine, and check-routing.sh reports which engine actually ran.
    """
    engine = settings.routing_engine
    plain = "updn" if engine in ("updn", "ar_updn") or not fits_ftree else "ftree"
    first = plain
    if settings.adaptive_routing and settings.opensm == "nvidia":
        first = "ar_ftree" if engine == "ar_ftree" and plain == "ftree" else "ar_updn"
    return first if first == "updn" else f"{first},updn"


@dataclass(frozen=True, slots=True)
class VlClass:
    """A traffic class as programmed: its SL, the VL it maps to, and that VL's arbitration."""

    name: str
    sl: int
    vl: int
    weight: int
    high: bool
    pkeys: tuple[int, ...]
    ipoib: bool


@dataclass(frozen=True, slots=True)
class SlPlan:
    """The subnet's SL-to-VL map and VL arbitration, the InfiniBand side of the QoS plan."""

    classes: tuple[VlClass, ...]
    default_sl: int  # SL of path queries no rule matches
    sl2vl: tuple[int, ...]  # VL of SL 0..15
    vls: int  # data VLs in use (VL0..vls-1)
    max_op_vls: int  # PortInfo:OperationalVLs code: 1=VL0, 2=VL0-1, 3=VL0-3, 4=VL0-7, 5=VL0-14
    high_limit: int
    vlarb_high: tuple[tuple[int, int], ...]  # (VL, weight)
    vlarb_low: tuple[tuple[int, int], ...]


def _op_vls_code(vls: int) -> int:
    return next(code for code, n in ((1, 1), (2, 2), (3, 4), (4, 8), (5, 15)) if vls <= n)


def sl_plan(settings: OpenSMSettings, partition_keys: Mapping[str, int] | None = None) -> SlPlan:
    """SL-to-VL map and VL arbitration from the intent's service-level plan.

    Without traffic classes: the compute SL (infiniband.service_level) on VL0 when it is SL 0,
    else on VL1 with three times the weight of the best-effort VL0 that every other SL maps to.
    With SHARP, its SL (infiniband.sharp_sl) gets the next VL of its own, at SHARP_WEIGHT, unless
    a traffic class already gives it one: NVIDIA's SHARP guide has OpenSM run 2 operational VLs
    with SHARP ("Reducing the Number of Operational VLs in the Subnet in OpenSM", SHARP v2.6.1:
    max_op_vls 2), which is exactly the compute VL and SHARP's. Only the VLs in use are made
    operational: fewer VLs leave more buffer credits to each, and fat-tree routing needs no
    extra VLs to be deadlock-free.
    """
    keys = partition_keys or {}
    loc = ("infiniband", "traffic_classes")
    specs = list(settings.traffic_classes)
    if not specs and settings.service_level == 0:
        specs = [TrafficClassSpec("compute", 0, ipoib=True, default=True)]
    elif not specs:
        specs = [TrafficClassSpec("best-effort", 0, weight=BEST_EFFORT_WEIGHT, ipoib=True,
                                  default=True),
                 TrafficClassSpec("compute", settings.service_level, weight=COMPUTE_WEIGHT)]
    elif settings.service_level not in {c.sl for c in specs}:
        raise FabgenError.single(f"infiniband.service_level {settings.service_level} has no "
                                 "traffic class; add one with that sl", loc=loc)
    if settings.sharp:
        if settings.sharp_sl == settings.service_level:
            raise FabgenError.single(f"SHARP's SL {settings.sharp_sl} is the compute SL: give "
                                     "SHARP an SL (and so a VL) of its own",
                                     loc=("infiniband", "sharp_sl"))
        if settings.sharp_sl not in {c.sl for c in specs}:
            specs.append(TrafficClassSpec("sharp", settings.sharp_sl, weight=SHARP_WEIGHT))
    sls = [c.sl for c in specs]
    dup = sorted({s for s in sls if sls.count(s) > 1})
    if dup:
        raise FabgenError.single(f"SL {dup[0]} is given to two traffic classes", loc=loc)
    classes: list[VlClass] = []
    next_vl = 0
    for i, c in enumerate(specs):
        if not 0 <= c.sl <= 14:
            raise FabgenError.single(f"SL {c.sl} of {c.name!r} is outside 0..14", loc=(*loc, i))
        vl = c.vl if c.vl is not None else next_vl
        if not 0 <= vl < MAX_DATA_VLS:
            raise FabgenError.single(f"VL {vl} of {c.name!r} is outside 0..{MAX_DATA_VLS - 1} "
                                     "(the data VLs ConnectX and Quantum ports offer)",
                                     loc=(*loc, i))
        if not 1 <= c.weight <= 255:
            raise FabgenError.single(f"weight {c.weight} of {c.name!r} is outside 1..255",
                                     loc=(*loc, i))
        next_vl = max(next_vl, vl + 1)
        unknown = [p for p in c.partitions if p not in keys]
        if unknown:
            raise FabgenError.single(f"traffic class {c.name!r} names unknown partition "
                                     f"{unknown[0]!r}", loc=(*loc, i, "partitions"))
        classes.append(VlClass(c.name, c.sl, vl, c.weight, c.priority == "high",
                               tuple(keys[p] for p in c.partitions), c.ipoib))
    per_vl: dict[int, tuple[int, bool]] = {}
    for vc in classes:
        if per_vl.setdefault(vc.vl, (vc.weight, vc.high)) != (vc.weight, vc.high):
            raise FabgenError.single(f"classes sharing VL {vc.vl} disagree on weight or "
                                     "priority", loc=loc)
    if settings.sharp:
        sharp = next(vc for vc in classes if vc.sl == settings.sharp_sl)
        shared = [vc.name for vc in classes if vc.vl == sharp.vl and vc is not sharp]
        if shared:
            raise FabgenError.single(f"SHARP's SL {sharp.sl} shares VL {sharp.vl} with "
                                     f"{shared[0]!r}: give SHARP's traffic class a VL of its "
                                     "own", loc=loc)
    default = next((vc for vc, spec in zip(classes, specs, strict=True) if spec.default),
                   classes[0])
    sl2vl = [default.vl] * 16
    for vc in classes:
        sl2vl[vc.sl] = vc.vl
    vls = max(per_vl) + 1
    high = tuple((vl, w) for vl, (w, h) in sorted(per_vl.items()) if h)
    low = tuple((vl, w) for vl, (w, h) in sorted(per_vl.items()) if not h)
    return SlPlan(
        classes=tuple(classes),
        default_sl=default.sl,
        sl2vl=tuple(sl2vl),
        vls=vls,
        max_op_vls=_op_vls_code(vls),
        high_limit=HIGH_LIMIT if high else 0,
        vlarb_high=high or ((0, 0),),  # an all-zero high table: no high-priority VL
        vlarb_low=low or ((0, 0),),
    )
