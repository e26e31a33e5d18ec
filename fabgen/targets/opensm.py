"""OpenSM target: opensm.conf, GUID files, partitions, QoS policy, node names and SHARP settings.

Every file names real ports: GUIDs come from the deterministic plan (fabgen.targets.ibnetdiscover)
or, when the intent gives `infiniband.guids_file`, from an `ibnetdiscover` of the real fabric,
matched by node description (a relative `guids_file` is read from the current directory unless
the loader made it absolute). Each InfiniBand plane is its own subnet with its own subnet manager,
so a fabric of several planes gets one directory per plane. Paths inside opensm.conf are the
deployment paths under DEPLOY_DIR, where the operator installs the files.

Two layers: `opensm_data()` builds the per-plane dict (every value computed here), the templates
under templates/opensm/ only lay it out.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from fabgen import templating
from fabgen.errors import FabgenError
from fabgen.targets.base import Artifacts, RenderContext
from fabgen.targets.ibnetdiscover import (
    GuidPlan,
    compute_node_guids,
    guid_plan,
    render_topology,
    root_guids,
)
from fabgen.topology.model import Fabric
from fabgen.verify_cabling import discovered_node, node_index, parse_ibnetdiscover

__all__ = [
    "DEPLOY_DIR",
    "FILES",
    "OUT_DIR",
    "TARGET",
    "TOPOLOGY_TARGET",
    "IbTopologyTarget",
    "OpenSMSettings",
    "OpenSMTarget",
    "Partition",
    "PartitionSpec",
    "SlPlan",
    "TrafficClassSpec",
    "deploy_dir",
    "ftree_fits",
    "guid_plan_for",
    "guids_from_ibnetdiscover",
    "opensm_data",
    "out_dir",
    "partitions",
    "plane_files",
    "render_opensm",
    "render_topologies",
    "routing_engines",
    "settings_from_intent",
    "sl_plan",
]

# Where the operator installs the files on the subnet-manager host (Debian's and MLNX OpenSM's
# default configuration directory); a fabric of several planes gets DEPLOY_DIR/plane<N>.
DEPLOY_DIR = "/etc/opensm"
OUT_DIR = "infiniband"
# File names inside a plane's directory, in the order they are written.
FILES = ("opensm.conf", "root_guids.txt", "cn_guids.txt", "partitions.conf", "qos-policy.conf",
         "node-name-map", "sharp_am.cfg")

DEFAULT_PKEY = 0x7FFF
# IBTA MTU code 5 = 4096 bytes: the IPoIB broadcast group of each partition (and so IPoIB's
# datagram MTU) is created at 4 KB, what every HDR/NDR/XDR port supports.
IPOIB_MTU_CODE = 5
# VL arbitration weights count 64-byte credits: 64 lets one 4 KB packet through per turn.
CREDITS_PER_4K = 64
COMPUTE_WEIGHT = 3 * CREDITS_PER_4K  # the compute VL, when it has a VL of its own
BEST_EFFORT_WEIGHT = CREDITS_PER_4K
# High-priority VL arbitration: at most 4 x 4 KB in a row before a low-priority VL gets a turn.
HIGH_LIMIT = 4
# Data VLs every ConnectX and Quantum port offers (VLCap VL0-7).
MAX_DATA_VLS = 8


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True, slots=True)
class PartitionSpec:
    """A tenant partition (proposed intent field `infiniband.partitions[]`)."""

    name: str
    pkey: int  # 0x0001..0x7ffe; the full-member bit is added per member
    hosts: tuple[str, ...] = ("*",)  # host names or shell patterns (fnmatch)
    membership: Literal["full", "limited"] = "full"
    ipoib: bool = True


@dataclass(frozen=True, slots=True)
class TrafficClassSpec:
    """A traffic class on its own SL (proposed intent field `infiniband.traffic_classes[]`)."""

    name: str
    sl: int  # 0..14
    vl: int | None = None  # data VL 0..7; by default VLs are handed out in class order
    weight: int = CREDITS_PER_4K  # VL arbitration weight, 64-byte credits (1..255)
    priority: Literal["high", "low"] = "low"
    partitions: tuple[str, ...] = ()  # path queries on these partitions get this SL
    ipoib: bool = False  # IPoIB on the default partition gets this SL
    default: bool = False  # path queries no other rule matches get this SL


@dataclass(frozen=True, slots=True)
class OpenSMSettings:
    """What the OpenSM files are rendered from: the intent's infiniband section, resolved."""

    routing_engine: str = "ftree"
    adaptive_routing: bool = False
    sharp: bool = False
    service_level: int = 0
    sm_priority: int = 15
    generation: str | None = None
    partitions: tuple[PartitionSpec, ...] = ()
    traffic_classes: tuple[TrafficClassSpec, ...] = ()
    default_membership: Literal["full", "limited"] | None = None  # None: limited with tenants
    guids_files: tuple[str, ...] = ()
    sm_host: str | None = None  # the host whose port each plane's SM binds to (`guid`)
    deploy_dir: str = DEPLOY_DIR


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
    """Resolve the intent's infiniband section (existing and proposed fields) into settings."""
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
    return OpenSMSettings(
        routing_engine=str(_get(ib, "routing_engine", "ftree")),
        adaptive_routing=bool(_get(ib, "adaptive_routing", False)),
        sharp=bool(_get(ib, "sharp", False)),
        service_level=int(_get(ib, "service_level", 0)),
        sm_priority=int(_get(ib, "sm_priority", 15)),
        generation=intent.fabric.generation,
        partitions=tuple(parts),
        traffic_classes=tuple(classes),
        default_membership=_get(ib, "default_membership", None),
        guids_files=_strings(_get(ib, "guids_file", None)),
        sm_host=_get(ib, "sm_host", None),
    )


# --------------------------------------------------------------------------- GUIDs


def guids_from_ibnetdiscover(text: str, fabric: Fabric, *, strict: bool = True) -> GuidPlan:
    """The GUID plan of the real fabric, from an `ibnetdiscover` output (or several, joined).

    Nodes are matched by node description: a switch by its name (or "MF0;<name>:<model>"), a
    host adapter by "<host> HCA-<nic>" or "<host> <rdma device>". Port GUIDs are the ones
    ibnetdiscover prints for each cabled adapter port. strict: every planned switch, adapter and
    host port must be found (else ValueError naming them); otherwise the deterministic plan
    fills the gaps.
    """
    disc = parse_ibnetdiscover(text)
    index = node_index(fabric, None)
    found_sw: dict[str, int] = {}
    found_ca: dict[tuple[str, int], tuple[int, int, dict[int, int]]] = {}
    for node in disc.nodes.values():
        key = discovered_node(node, index)
        if key is None or node.guid is None:
            continue
        if key[0] == "switch":
            if key[1] in found_sw and found_sw[key[1]] != node.guid:
                raise ValueError(f"two switches describe themselves as {key[1]!r}: "
                                 f"{found_sw[key[1]]:#018x} and {node.guid:#018x}")
            found_sw[key[1]] = node.guid
        else:
            hn = key[1]
            if hn in found_ca and found_ca[hn][0] != node.guid:
                raise ValueError(f"two adapters describe themselves as "
                                 f"'{hn[0]} HCA-{hn[1]}': {found_ca[hn][0]:#018x} and "
                                 f"{node.guid:#018x}")
            ports = dict(found_ca.get(hn, (0, 0, {}))[2])
            ports.update(node.port_guids)
            found_ca[hn] = (node.guid, node.nports, ports)

    fallback = guid_plan(fabric)
    missing: list[str] = []
    switch_guids: dict[str, int] = {}
    for sw in fabric.switches:
        if sw.name in found_sw:
            switch_guids[sw.name] = found_sw[sw.name]
        else:
            missing.append(sw.name)
            switch_guids[sw.name] = fallback.switch_guids[sw.name]
    ca_guids: dict[tuple[str, int], int] = {}
    ca_ports: dict[tuple[str, int], int] = {}
    port_guids: dict[tuple[str, int], int] = {}
    for host in fabric.hosts:
        for hp in host.ports:
            hn = (host.name, hp.nic)
            got = found_ca.get(hn)
            if got is None:
                if hn not in ca_guids:
                    missing.append(f"{host.name} HCA-{hp.nic}")
                ca_guids[hn] = fallback.ca_guids[hn]
                ca_ports[hn] = fallback.ca_ports[hn]
                port_guids[(host.name, hp.dev)] = fallback.port_guids[(host.name, hp.dev)]
                continue
            ca_guids[hn] = got[0]
            ca_ports[hn] = max(got[1], fallback.ca_ports[hn])
            if hp.port + 1 in got[2]:
                port_guids[(host.name, hp.dev)] = got[2][hp.port + 1]
            else:
                missing.append(f"{host.name} HCA-{hp.nic} port {hp.port + 1} ({hp.rdma_device})")
                port_guids[(host.name, hp.dev)] = fallback.port_guids[(host.name, hp.dev)]
    if strict and missing:
        shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8
                                          else "")
        raise ValueError(f"the ibnetdiscover output lacks {len(missing)} planned node(s) or "
                         f"port(s): {shown} (matched by node description)")
    return GuidPlan(switch_guids, ca_guids, ca_ports, port_guids)


def guid_plan_for(fabric: Fabric, settings: OpenSMSettings, *,
                  base: Path | None = None) -> GuidPlan:
    """The GUIDs the files name: read from settings.guids_files when given, else planned.

    Relative file names are taken from `base` (the intent's directory) when given.
    """
    if not settings.guids_files:
        return guid_plan(fabric)
    texts = []
    for i, name in enumerate(settings.guids_files):
        path = Path(name)
        if base is not None and not path.is_absolute():
            path = base / path
        try:
            texts.append(path.read_text(errors="replace"))
        except OSError as exc:
            raise FabgenError.single(f"cannot read {path}: {exc.strerror}",
                                     loc=("infiniband", "guids_file", i)) from None
    try:
        return guids_from_ibnetdiscover("\n".join(texts), fabric)
    except ValueError as exc:
        raise FabgenError.single(str(exc), loc=("infiniband", "guids_file")) from None


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
    """The routing_engine value: the topology's engine, the adaptive one first when asked.

    fabgen fabrics are fat trees, so `ftree` (`updn` when the intent says so, or when the
    subnet is too small for ftree: see ftree_fits). With adaptive routing, NVIDIA's OpenSM
    engine goes first and the plain one after it: OpenSM tries the list in order, and an OpenSM
    without AR (upstream 3.3.23, measured) logs "cannot find or setup routing engine
    'ar_ftree'" and routes with the next one instead of falling back to minhop. NVIDIA supports
    ar_updn, not ar_ftree, on XDR (UFM "Appendix - Adaptive Routing").
    """
    engine = settings.routing_engine
    plain = "updn" if engine in ("updn", "ar_updn") or not fits_ftree else "ftree"
    if not (settings.adaptive_routing or engine.startswith("ar_")):
        return plain
    xdr = (settings.generation or "").lower() == "xdr"
    adaptive = "ar_updn" if plain == "updn" or xdr else "ar_ftree"
    return f"{adaptive},{plain}"


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
    Only the VLs in use are made operational: fewer VLs leave more buffer credits to each, and
    fat-tree routing needs no extra VLs to be deadlock-free.
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


@dataclass(frozen=True, slots=True)
class Member:
    guid: int
    full: bool
    label: str  # "dgx001 mlx5_0", a comment for the reviewer


@dataclass(frozen=True, slots=True)
class Partition:
    """One partitions.conf definition, with its members resolved to port GUIDs."""

    name: str
    pkey: int
    ipoib: bool
    everyone: str | None  # "ALL=full", or the default partition's member rule
    members: tuple[Member, ...]


def partitions(fabric: Fabric, guids: GuidPlan, settings: OpenSMSettings,
               plane: int | None = None) -> tuple[Partition, ...]:
    """The default partition and every tenant partition, members as port GUIDs of the plane.

    Without tenant partitions every port is a full member of the default partition. With them,
    hosts are limited members of the default partition by default (they reach the SM and SA but
    not each other there) while switches and the SM's own port stay full members.
    """
    loc = ("infiniband", "partitions")
    membership = settings.default_membership or ("limited" if settings.partitions else "full")
    everyone = ("ALL=full" if membership == "full"
                else "ALL=limited, ALL_SWITCHES=full, SELF=full")
    out = [Partition("Default", DEFAULT_PKEY, True, everyone, ())]
    names: set[str] = set()
    pkeys: set[int] = {DEFAULT_PKEY}
    for i, spec in enumerate(settings.partitions):
        if not spec.name or any(ch in spec.name for ch in "=,:;#\" \t\n"):
            raise FabgenError.single(f"partition name {spec.name!r} cannot be written to "
                                     "partitions.conf (no spaces or = , : ; # quotes)",
                                     loc=(*loc, i, "name"))
        if spec.name in names or spec.name == "Default":
            raise FabgenError.single(f"partition {spec.name!r} is defined twice",
                                     loc=(*loc, i, "name"))
        if spec.pkey in pkeys:
            raise FabgenError.single(f"P_Key {spec.pkey:#06x} is used twice",
                                     loc=(*loc, i, "pkey"))
        names.add(spec.name)
        pkeys.add(spec.pkey)
        hosts = [h for h in fabric.hosts if any(fnmatch.fnmatchcase(h.name, pat)
                                                for pat in spec.hosts)]
        if not hosts:
            raise FabgenError.single(f"partition {spec.name!r}: no host matches "
                                     f"{', '.join(spec.hosts)}", loc=(*loc, i, "hosts"))
        members = tuple(
            Member(guids.port_guids[(h.name, hp.dev)], spec.membership == "full",
                   f"{h.name} {hp.rdma_device}")
            for h in hosts for hp in h.ports if plane is None or hp.plane == plane)
        out.append(Partition(spec.name, spec.pkey, spec.ipoib, None, members))
    return tuple(out)


# --------------------------------------------------------------------------- rendering


def out_dir(fabric: Fabric, plane: int) -> str:
    """Where a plane's files go in the output: infiniband/ or infiniband/plane<N>/ (1-based)."""
    return OUT_DIR if fabric.planes <= 1 else f"{OUT_DIR}/plane{plane + 1}"


def deploy_dir(fabric: Fabric, plane: int, base: str = DEPLOY_DIR) -> str:
    """Where a plane's files are installed: /etc/opensm or /etc/opensm/plane<N>."""
    return base if fabric.planes <= 1 else f"{base}/plane{plane + 1}"


def _opt(name: str, value: object, comment: str = "") -> dict[str, str]:
    return {"name": name, "value": str(value), "comment": comment}


def _pairs(pairs: Iterable[tuple[int, int]]) -> str:
    return ",".join(f"{vl}:{w}" for vl, w in pairs)


def opensm_data(fabric: Fabric, guids: GuidPlan, settings: OpenSMSettings,
                plane: int = 0) -> dict[str, Any]:
    """Everything one plane's files say, display-ready: the target-shaped layer."""
    multi = fabric.planes > 1
    scope = f", plane {plane + 1} of {fabric.planes}" if multi else ""
    where = deploy_dir(fabric, plane, settings.deploy_dir)
    parts = partitions(fabric, guids, settings, plane if multi else None)
    plan = sl_plan(settings, {p.name: p.pkey for p in parts})
    roots = root_guids(fabric, guids, plane=plane if multi else None)
    cns = compute_node_guids(fabric, guids, plane=plane if multi else None)
    switches = [sw for sw in fabric.switches if not multi or sw.plane == plane]
    cas = [(host.name, nic) for host in fabric.hosts
           for nic in sorted({hp.nic for hp in host.ports if not multi or hp.plane == plane})]
    engine = routing_engines(settings, fits_ftree=ftree_fits(fabric, plane if multi else None))
    if engine.split(",")[-1] == "ftree":
        why = ("fat-tree routing; OpenSM tries the engines in this order" if "," in engine
               else "fat-tree routing, credit-loop free")
    else:
        why = ("up/down routing: ftree wants two leaves with hosts and two adapters per subnet"
               if settings.routing_engine not in ("updn", "ar_updn") else "up/down routing")

    routing = [
        _opt("routing_engine", engine, why),
        _opt("lmc", 0, "one LID per port: ftree does not support LMC > 0"),
        _opt("root_guid_file", f"{where}/root_guids.txt",
             f"node GUIDs of the {len(roots)} top-tier switches (ftree left to guess takes "
             "an empty leaf for a root)"),
        _opt("cn_guid_file", f"{where}/cn_guids.txt",
             f"port GUIDs (not node GUIDs) of the {len(cns)} compute ports"),
    ]
    qos_opts = [
        _opt("qos", "TRUE"),
        _opt("qos_policy_file", f"{where}/qos-policy.conf"),
        _opt("max_op_vls", plan.max_op_vls,
             f"operational data VLs: VL0-{plan.vls - 1}" if plan.vls > 1 else
             "operational data VLs: VL0 only"),
        _opt("qos_max_vls", plan.vls),
        _opt("qos_high_limit", plan.high_limit),
        _opt("qos_vlarb_high", _pairs(plan.vlarb_high), "VL:weight, weights in 64-byte credits"),
        _opt("qos_vlarb_low", _pairs(plan.vlarb_low)),
        _opt("qos_sl2vl", ",".join(str(v) for v in plan.sl2vl), "VL of SL 0..15"),
    ]
    sm = [_opt("sm_priority", settings.sm_priority, "15 is the highest: the master SM")]
    sm_title = "Subnet manager"
    if settings.sm_host is not None:
        host = next((h for h in fabric.hosts if h.name == settings.sm_host), None)
        if host is None:
            raise FabgenError.single(f"sm_host {settings.sm_host!r} is not a host of the fabric",
                                     loc=("infiniband", "sm_host"))
        port = next((hp for hp in host.ports if not multi or hp.plane == plane), None)
        if port is None:
            raise FabgenError.single(f"sm_host {host.name!r} has no port on plane {plane + 1}",
                                     loc=("infiniband", "sm_host"))
        sm.insert(0, _opt("guid", f"0x{guids.port_guids[(host.name, port.dev)]:016x}",
                          f"the SM binds to {host.name} {port.rdma_device}"
                          + (" (its port on this plane)" if multi else "")))
    elif multi:
        sm_title += " (set guid to the SM host's port on this plane: one SM per plane)"
    sections = [
        {"title": sm_title, "options": sm},
        {"title": "Routing", "options": routing},
        {"title": "Partitions and node names", "options": [
            _opt("partition_config_file", f"{where}/partitions.conf"),
            _opt("node_name_map_name", f"{where}/node-name-map"),
        ]},
        {"title": "QoS: SL to VL, VL arbitration", "options": qos_opts},
    ]
    if settings.sharp:
        sections.append({"title": "SHARP (NVIDIA OpenSM; upstream OpenSM ignores the option)",
                         "options": [_opt("sharp_enabled", 2,
                                          "2: enable SHARP on every switch that supports it")]})
    if multi:
        sections.append({"title": "This plane's SM shares the host with the other planes' SMs",
                         "options": [_opt("log_file", f"/var/log/opensm-plane{plane + 1}.log")]})

    names = [(guids.switch_guids[sw.name], sw.name) for sw in switches]
    names += [(guids.ca_guids[ca], f"{ca[0]} HCA-{ca[1]}") for ca in cas]

    policy = [("default", plan.default_sl, "path queries no rule below matches")]
    for c in plan.classes:
        if c.ipoib and c.sl != plan.default_sl:
            policy.append(("ipoib", c.sl, f"IPoIB on the default partition: {c.name}"))
        for pkey in c.pkeys:
            policy.append((f"any, pkey {pkey:#06x}", c.sl, f"partition traffic: {c.name}"))

    return {
        "fabric": fabric.name,
        "scope": scope,
        "deploy_dir": where,
        "sections": sections,
        "roots": [f"0x{g:016x}" for g in roots],
        "compute_nodes": [f"0x{g:016x}" for g in cns],
        "partitions": [
            {"name": p.name, "pkey": f"{p.pkey:#06x}", "flags": "ipoib, " if p.ipoib else "",
             "mtu": IPOIB_MTU_CODE, "everyone": p.everyone,
             "members": [{"guid": f"0x{m.guid:016x}", "membership": "full" if m.full else
                          "limited", "label": m.label} for m in p.members],
             "count": len(p.members)}
            for p in parts if p.everyone is not None or p.members],
        "node_names": [{"guid": f"0x{g:016x}", "name": n} for g, n in names],
        "classes": [{"name": c.name, "sl": c.sl, "vl": c.vl, "weight": c.weight,
                     "priority": "high" if c.high else "low"} for c in plan.classes],
        "policy": [{"match": m, "sl": sl, "comment": why} for m, sl, why in policy],
        "sharp": {"root_guids_file": f"{where}/root_guids.txt", "sl": settings.service_level}
        if settings.sharp else None,
        "service_level": settings.service_level,
    }


_TEMPLATES = {
    "opensm.conf": "opensm/opensm.conf.j2",
    "root_guids.txt": "opensm/guids.txt.j2",
    "cn_guids.txt": "opensm/guids.txt.j2",
    "partitions.conf": "opensm/partitions.conf.j2",
    "qos-policy.conf": "opensm/qos-policy.conf.j2",
    "node-name-map": "opensm/node-name-map.j2",
    "sharp_am.cfg": "opensm/sharp_am.cfg.j2",
}


def _render_plane(data: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name in FILES:
        if name == "sharp_am.cfg" and not data["sharp"]:
            continue
        extra: dict[str, Any] = {}
        if name == "root_guids.txt":
            extra = {"what": "root switch node GUIDs (ftree/updn roots)", "guids": data["roots"]}
        elif name == "cn_guids.txt":
            extra = {"what": "compute-node port GUIDs (ftree cn_guid_file)",
                     "guids": data["compute_nodes"]}
        out[name] = templating.render(_TEMPLATES[name], **data, **extra)
    return out


def render_opensm(fabric: Fabric, guids: GuidPlan, settings: OpenSMSettings) -> Artifacts:
    """Every plane's OpenSM files, {"infiniband[/plane<N>]/<file>": text}."""
    if fabric.transport != "infiniband":
        raise ValueError(f"fabric {fabric.name!r} is {fabric.transport}, not infiniband")
    files: Artifacts = {}
    for plane in range(max(fabric.planes, 1)):
        prefix = out_dir(fabric, plane)
        for name, text in _render_plane(opensm_data(fabric, guids, settings, plane)).items():
            files[f"{prefix}/{name}"] = text
    return files


def render_topologies(fabric: Fabric, guids: GuidPlan) -> Artifacts:
    """The ibnetdiscover-format topology of each plane (what ibsim loads)."""
    if fabric.planes <= 1:
        return {f"{OUT_DIR}/topology.ibnet": render_topology(fabric, guids)}
    return {f"{out_dir(fabric, p)}/topology.ibnet": render_topology(fabric, guids, plane=p)
            for p in range(fabric.planes)}


# --------------------------------------------------------------------------- targets


class OpenSMTarget:
    name = "opensm"
    description = ("infiniband/opensm.conf, root/cn GUID files, partitions.conf, qos-policy.conf, "
                   "node-name-map, sharp_am.cfg (per plane)")

    def applies(self, ctx: RenderContext) -> bool:
        return ctx.fabric.transport == "infiniband"

    def render(self, ctx: RenderContext) -> Artifacts:
        settings = settings_from_intent(ctx.intent)
        return render_opensm(ctx.fabric, guid_plan_for(ctx.fabric, settings, base=ctx.base_dir),
                             settings)


class IbTopologyTarget:
    name = "ibtopology"
    description = "infiniband/topology.ibnet: the planned fabric in ibnetdiscover format (ibsim)"

    def applies(self, ctx: RenderContext) -> bool:
        return ctx.fabric.transport == "infiniband"

    def render(self, ctx: RenderContext) -> Artifacts:
        settings = settings_from_intent(ctx.intent)
        return render_topologies(ctx.fabric,
                                 guid_plan_for(ctx.fabric, settings, base=ctx.base_dir))


TARGET = OpenSMTarget()
TOPOLOGY_TARGET = IbTopologyTarget()


def plane_files(files: Mapping[str, str], fabric: Fabric, plane: int) -> dict[str, str]:
    """One plane's rendered files by bare name ({"opensm.conf": ...}), e.g. to install them."""
    prefix = out_dir(fabric, plane) + "/"
    return {path[len(prefix):]: text for path, text in files.items()
            if path.startswith(prefix) and "/" not in path[len(prefix):]}

