"""OpenSM target: each subnet manager's opensm.conf, and the files they share.

Per plane (each InfiniBand plane is its own subnet with its own subnet managers; a fabric of
several planes gets infiniband/plane<N>/):

- `<sm host>/opensm.conf` for each host that runs a subnet manager (the dedicated management
  hosts, master first, or `infiniband.sm_host`), binding its port by `guid` with priorities
  master > standby; a plain `opensm.conf` when the intent plans no SM host;
- `partitions.conf`, `qos-policy.conf` and, with SHARP, `sharp_am.cfg` (master only);
- `check-routing.sh`, run on the master once the subnet is up: did OpenSM route with the
  planned engine (no silent fallback), is the planned port master, are SL2VL/VLArb as planned;
- with real GUIDs only (`infiniband.guids_file`, an ibnetdiscover of the fabric): the
  `root_guids.txt` and `cn_guids.txt` OpenSM's ftree reads, and `node-name-map`. Without them
  no GUID file is written at all: ftree finds its roots and compute nodes itself, and the
  report's bring-up section says how to discover the fabric and re-render.

Two layers: `opensm_data()` builds the per-plane dict (every value computed here or in
opensm_plan), the templates under templates/opensm/ only lay it out. Paths inside opensm.conf
are the deployment paths under DEPLOY_DIR.
"""

from __future__ import annotations

import fnmatch
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fabgen import templating, user_files
from fabgen.errors import FabgenError
from fabgen.targets.base import Artifacts, RenderContext
from fabgen.targets.ibnetdiscover import MAX_BYTES as IBND_MAX_BYTES
from fabgen.targets.ibnetdiscover import (
    GuidPlan,
    ca_name,
    compute_node_guids,
    guid_plan,
    guids_from_ibnetdiscover,
    render_topology,
    root_guids,
)
from fabgen.targets.opensm_plan import (
    ENGINE_BUILDS,
    OpenSMSettings,
    SlPlan,
    ftree_fits,
    routing_engines,
    settings_from_intent,
    sl_plan,
)
from fabgen.topology.index import FabricIndex
from fabgen.topology.model import Fabric, Host, HostPort

__all__ = [
    "DEPLOY_DIR",
    "OUT_DIR",
    "TARGET",
    "TOPOLOGY_TARGET",
    "IbTopologyTarget",
    "OpenSMTarget",
    "Partition",
    "SmPort",
    "deploy_dir",
    "guid_plan_for",
    "log_file",
    "opensm_data",
    "out_dir",
    "partitions",
    "plane_files",
    "real_guids",
    "render_opensm",
    "render_topologies",
    "sm_ports",
]

# Where the operator installs the files on the subnet-manager hosts (Debian's and NVIDIA's
# OpenSM configuration directory); a fabric of several planes gets DEPLOY_DIR/plane<N>.
DEPLOY_DIR = "/etc/opensm"
OUT_DIR = "infiniband"
# OpenSM's default log (opensm(8) -f), where check-routing.sh looks unless told otherwise.
DEFAULT_LOG = "/var/log/opensm.log"

DEFAULT_PKEY = 0x7FFF
# IBTA MTU code 5 = 4096 bytes: the IPoIB broadcast group of each partition (and so IPoIB's
# datagram MTU) is created at 4 KB, what every HDR/NDR/XDR port supports.
IPOIB_MTU_CODE = 5

_TEMPLATES = {
    "opensm.conf": "opensm/opensm.conf.j2",
    "root_guids.txt": "opensm/guids.txt.j2",
    "cn_guids.txt": "opensm/guids.txt.j2",
    "partitions.conf": "opensm/partitions.conf.j2",
    "qos-policy.conf": "opensm/qos-policy.conf.j2",
    "node-name-map": "opensm/node-name-map.j2",
    "sharp_am.cfg": "opensm/sharp_am.cfg.j2",
    "check-routing.sh": "opensm/check-routing.sh.j2",
}


# --------------------------------------------------------------------------- GUIDs


def guid_plan_for(fabric: Fabric, settings: OpenSMSettings, *,
                  base: Path | None = None) -> GuidPlan | None:
    """The real GUIDs, read from settings.guids_files, or None when the intent names none.

    Relative file names are taken from `base` (the intent's directory) when given. fabgen's
    deterministic plan (ibnetdiscover.guid_plan) never reaches an OpenSM file: it only numbers
    the simulated fabric of topology.ibnet.
    """
    if not settings.guids_files:
        return None
    texts = []
    inside = base if base is not None else Path(".")
    for i, name in enumerate(settings.guids_files):
        path = Path(name)
        if base is not None and not path.is_absolute():
            path = base / path
        # Bounded, not a FIFO or device, UTF-8, and not through a link out of the directory.
        texts.append(user_files.read_text(path, what="an ibnetdiscover output",
                                          limit=IBND_MAX_BYTES, inside=inside,
                                          loc=("infiniband", "guids_file", i)))
    try:
        return guids_from_ibnetdiscover("\n".join(texts), fabric)
    except ValueError as exc:
        raise FabgenError.single(str(exc), loc=("infiniband", "guids_file")) from None


def real_guids(ctx: RenderContext) -> GuidPlan | None:
    """The render's real GUIDs (guid_plan_for): the OpenSM, topology, ibdm and bring-up
    targets all need them, and the files are read and parsed once per render."""
    return ctx.derived(_read_real_guids)


def _read_real_guids(ctx: RenderContext) -> GuidPlan | None:
    return guid_plan_for(ctx.fabric, settings_from_intent(ctx.intent), base=ctx.base_dir)


# --------------------------------------------------------------------------- subnet managers


@dataclass(frozen=True, slots=True)
class SmPort:
    """One subnet manager of a plane: its host, the port it binds, where that port is cabled."""

    host: str
    port: HostPort
    leaf: str  # the leaf its port is cabled to
    leaf_port: int
    priority: int  # sm_priority: the master's is the highest
    guid: int | None  # the port GUID it binds (`guid`), None when nothing names it yet
    dedicated: bool  # a management host, not a compute node


def _port_on(host: Host, plane: int | None) -> HostPort | None:
    return next((hp for hp in host.ports if plane is None or hp.plane == plane), None)


def sm_ports(index: FabricIndex, guids: GuidPlan | None, settings: OpenSMSettings,
             plane: int | None = None) -> tuple[SmPort, ...]:
    """The subnet managers of a plane, master first: the dedicated management hosts (priority
    sm_priority, one less for each standby, so the election never falls back to comparing
    GUIDs), else the compute host `sm_host`, else none. Each binds its first port on the plane;
    its GUID comes from the discovered fabric, else from the intent's `port_guids`. `index`:
    the render's index of the fabric, which says where each host port is cabled."""
    fabric = index.fabric
    if fabric.sm_hosts:
        hosts: list[tuple[Host, bool]] = [(h, True) for h in fabric.sm_hosts]
    elif settings.sm_host is not None:
        host = next((h for h in fabric.hosts if h.name == settings.sm_host), None)
        if host is None:
            raise FabgenError.single(f"sm_host {settings.sm_host!r} is not a host of the fabric",
                                     loc=("infiniband", "sm_host"))
        hosts = [(host, False)]
    else:
        return ()
    given = {h.name: h.port_guids for h in settings.sm_hosts}
    out = []
    for i, (host, dedicated) in enumerate(hosts):
        port = _port_on(host, plane)
        if port is None:
            raise FabgenError.single(f"{host.name} has no port on plane {(plane or 0) + 1}",
                                     loc=("infiniband", "sm_host"))
        if guids is not None:
            guid: int | None = guids.port_guids[(host.name, port.dev)]
        else:
            known = given.get(host.name, ())
            guid = known[port.dev] if port.dev < len(known) else None
        leaf, leaf_port = next((link.z_device, link.z_port) for link in index.links(host.name)
                               if link.a_device == host.name and link.a_port == port.dev)
        out.append(SmPort(host.name, port, leaf, leaf_port, max(settings.sm_priority - i, 0),
                          guid, dedicated))
    return tuple(out)


# --------------------------------------------------------------------------- partitions


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
    pending: bool = False  # a tenant partition whose members need the real port GUIDs


def partitions(fabric: Fabric, guids: GuidPlan | None, settings: OpenSMSettings,
               plane: int | None = None, sms: tuple[SmPort, ...] = ()) -> tuple[Partition, ...]:
    """The default partition and every tenant partition, members as port GUIDs of the plane.

    Without tenant partitions every port is a full member of the default partition. With them,
    hosts are limited members of the default partition by default (they reach the SM and SA but
    not each other there) while switches, the SM's own port (SELF) and the standby SMs' ports
    stay full members. Tenant members are port GUIDs: without real ones (guids=None) the tenant
    partitions are `pending` and every host stays a full member of the default partition, so
    nothing is cut off before the re-render that isolates the tenants.
    """
    loc = ("infiniband", "partitions")
    tenants = bool(settings.partitions) and guids is not None
    membership = settings.default_membership or ("limited" if tenants else "full")
    everyone = "ALL=full"
    if membership == "limited":
        standby = "".join(f", 0x{sm.guid:016x}=full" for sm in sms[1:] if sm.guid is not None)
        everyone = f"ALL=limited, ALL_SWITCHES=full, SELF=full{standby}"
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
        if guids is None:
            out.append(Partition(spec.name, spec.pkey, spec.ipoib, None, (), pending=True))
            continue
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


def log_file(fabric: Fabric, plane: int) -> str:
    """The OpenSM log of a plane: the default one, or one per plane when SMs share a host."""
    return DEFAULT_LOG if fabric.planes <= 1 else f"/var/log/opensm-plane{plane + 1}.log"


def _opt(name: str, value: object, comment: str = "", *, disabled: bool = False
         ) -> dict[str, Any]:
    return {"name": name, "value": str(value), "comment": comment, "disabled": disabled}


def _pairs(pairs: Iterable[tuple[int, int]]) -> str:
    return ",".join(f"{vl}:{w}" for vl, w in pairs)


def _engine_comment(engine: str, settings: OpenSMSettings, fits: bool) -> str:
    first = engine.split(",")[0]
    builds = ENGINE_BUILDS[first]
    if first.startswith("ar_"):
        return (f"adaptive routing ({first}, NVIDIA's OpenSM only: MLNX_OFED, DOCA-Host or UFM; "
                "an upstream OpenSM skips it and routes with updn, AR off), then updn")
    if first == "ftree":
        why = "fat-tree routing, credit-loop free; updn if ftree refuses the fabric"
    elif settings.routing_engine in ("updn", "ar_updn"):
        why = "up/down routing, credit-loop free"
    else:
        why = ("up/down routing: ftree wants two leaves with hosts and two adapters per subnet"
               if not fits else "up/down routing")
    return why + (" (upstream and NVIDIA OpenSM)" if "upstream" in builds else "")


def _sm_section(sm: SmPort | None, settings: OpenSMSettings, multi: bool, plane: int
                ) -> dict[str, Any]:
    if sm is None:
        return {"title": "Subnet manager", "notes": [
            "No host of the intent runs the SM (infiniband.management.hosts, sm_host): set",
            "guid to its port's GUID there, or OpenSM binds the first port that is up."],
            "options": [_opt("sm_priority", settings.sm_priority)]}
    where = (f"{sm.host} {sm.port.rdma_device} ({sm.port.netdev}), cabled to {sm.leaf} port "
             f"{sm.leaf_port}" + (f", its port on plane {plane + 1}" if multi else ""))
    if sm.guid is not None:
        bind = _opt("guid", f"0x{sm.guid:016x}", f"bind {where}")
    else:
        bind = _opt("guid", f"<port GUID of {sm.host} {sm.port.rdma_device}>",
                    f"fill in: {where}. Unset, OpenSM binds the first port that is up, maybe a "
                    "storage-fabric port; `ibstat -p` on the host prints the GUIDs (report: "
                    "bring-up)", disabled=True)
    role = "master" if sm.priority == settings.sm_priority else "standby"
    return {"title": f"Subnet manager on {sm.host} ({role})", "notes": [], "options": [
        bind,
        _opt("sm_priority", sm.priority,
             "the master has the highest priority, each standby one less (0-15)"),
    ]}


def opensm_data(index: FabricIndex, guids: GuidPlan | None, settings: OpenSMSettings,
                plane: int = 0) -> dict[str, Any]:
    """Everything one plane's files say, display-ready: the target-shaped layer."""
    fabric = index.fabric
    multi = fabric.planes > 1
    scope = f", plane {plane + 1} of {fabric.planes}" if multi else ""
    where = deploy_dir(fabric, plane)
    in_plane = plane if multi else None
    sms = sm_ports(index, guids, settings, in_plane)
    parts = partitions(fabric, guids, settings, in_plane, sms)
    plan = sl_plan(settings, {p.name: p.pkey for p in parts})
    fits = ftree_fits(fabric, in_plane)
    engine = routing_engines(settings, fits_ftree=fits)

    routing = [
        _opt("routing_engine", engine, _engine_comment(engine, settings, fits)),
        _opt("lmc", 0, "one LID per port: ftree does not support LMC > 0"),
    ]
    routing_notes: list[str] = []
    roots: list[str] = []
    cns: list[str] = []
    names: list[dict[str, str]] = []
    if guids is not None:
        roots = [f"0x{g:016x}" for g in root_guids(fabric, guids, plane=in_plane)]
        cns = [f"0x{g:016x}" for g in compute_node_guids(fabric, guids, plane=in_plane)]
        routing += [
            _opt("root_guid_file", f"{where}/root_guids.txt",
                 f"node GUIDs of the {len(roots)} top-tier switches (ftree left to guess takes "
                 "an empty leaf for a root)"),
            _opt("cn_guid_file", f"{where}/cn_guids.txt",
                 f"port GUIDs (not node GUIDs) of the {len(cns)} compute ports"),
        ]
        switches = [sw for sw in fabric.switches if not multi or sw.plane == plane]
        names = [{"guid": f"0x{guids.switch_guids[sw.name]:016x}", "name": sw.name}
                 for sw in switches]
        names += [{"guid": f"0x{guids.ca_guids[(h.name, nic)]:016x}", "name": ca_name(h, nic)}
                  for h in (*fabric.hosts, *fabric.sm_hosts)
                  for nic in sorted({hp.nic for hp in h.ports if not multi or hp.plane == plane})]
    else:
        routing_notes = _no_guid_files_note(engine.split(",")[0])
    qos_opts = [
        _opt("qos", "TRUE"),
        _opt("qos_policy_file", f"{where}/qos-policy.conf"),
        _opt("max_op_vls", plan.max_op_vls, _vls_comment(plan, settings)),
        _opt("qos_max_vls", plan.vls),
        _opt("qos_high_limit", plan.high_limit),
        _opt("qos_vlarb_high", _pairs(plan.vlarb_high), "VL:weight, weights in 64-byte credits"),
        _opt("qos_vlarb_low", _pairs(plan.vlarb_low)),
        _opt("qos_sl2vl", ",".join(str(v) for v in plan.sl2vl), "VL of SL 0..15"),
    ]
    shared = [
        {"title": "Routing", "notes": routing_notes, "options": routing},
        {"title": "Partitions and node names", "notes": [], "options": [
            _opt("partition_config_file", f"{where}/partitions.conf"),
            *([_opt("node_name_map_name", f"{where}/node-name-map")] if guids is not None
              else []),
        ]},
        {"title": "QoS: SL to VL, VL arbitration", "notes": [], "options": qos_opts},
    ]
    if settings.sharp:
        shared.append({"title": "SHARP (NVIDIA OpenSM)", "notes": [], "options": [
            _opt("sharp_enabled", 2, "2: enable SHARP on every switch that supports it")]})
    if multi:
        shared.append({"title": "This plane's SM shares the host with the other planes' SMs",
                       "notes": [], "options": [_opt("log_file", log_file(fabric, plane))]})

    policy = [("default", plan.default_sl, "path queries no rule below matches")]
    for c in plan.classes:
        if c.ipoib and c.sl != plan.default_sl:
            policy.append(("ipoib", c.sl, f"IPoIB on the default partition: {c.name}"))
        for pkey in c.pkeys:
            policy.append((f"any, pkey {pkey:#06x}", c.sl, f"partition traffic: {c.name}"))

    master = sms[0] if sms else None
    return {
        "fabric": fabric.name,
        "scope": scope,
        "deploy_dir": where,
        "ufm": settings.management == "ufm" and bool(fabric.sm_hosts),
        "sms": [{"host": sm.host if sm is not None else None,
                 "sections": [_sm_section(sm, settings, multi, plane), *shared]}
                for sm in (sms or (None,))],
        "roots": roots,
        "compute_nodes": cns,
        "partitions": [
            {"name": p.name, "pkey": f"{p.pkey:#06x}", "flags": "ipoib, " if p.ipoib else "",
             "mtu": IPOIB_MTU_CODE, "everyone": p.everyone, "pending": p.pending,
             "members": [{"guid": f"0x{m.guid:016x}", "membership": "full" if m.full else
                          "limited", "label": m.label} for m in p.members],
             "count": len(p.members)}
            for p in parts if p.everyone is not None or p.members or p.pending],
        "node_names": names,
        "classes": [{"name": c.name, "sl": c.sl, "vl": c.vl, "weight": c.weight,
                     "priority": "high" if c.high else "low"} for c in plan.classes],
        "policy": [{"match": m, "sl": sl, "comment": why} for m, sl, why in policy],
        "sharp": {"sl": settings.sharp_sl,
                  "vl": plan.sl2vl[settings.sharp_sl],
                  "root_guids_file": f"{where}/root_guids.txt" if guids is not None else None,
                  "host": master.host if master is not None else None,
                  "on_compute_host": master is not None and not master.dedicated}
        if settings.sharp else None,
        "service_level": settings.service_level,
        "check": _check_data(fabric, settings, plan, engine, master, plane),
    }


def _no_guid_files_note(first: str) -> list[str]:
    """What the first engine does without root/cn GUID files. Only ftree validates the fat
    tree (osm_ucast_ftree.c fabric_validate_topology); updn, and NVIDIA's ar_updn built on it,
    pick their roots from the switches' min-hop tables (osm_ucast_updn.c
    updn_find_root_nodes_by_min_hop) and route whatever is cabled."""
    if first in ("ftree", "ar_ftree"):
        text = (f"{first} then ranks the switches and takes every adapter for a compute node "
                "itself; it also validates the fat tree, so a miscabled one is refused (updn "
                "routes it) instead of routed unevenly.")
    else:
        text = (f"{first} then picks its roots itself from the switches' hop counts to the "
                "adapters. It does not validate the fat tree: a miscabled one is routed "
                "unevenly without a word, so check the cabling first (fabgen verify-cabling "
                "with an ibnetdiscover of the fabric).")
    return textwrap.wrap("No root_guid_file / cn_guid_file: the real GUIDs are not known yet "
                         f"(no infiniband.guids_file). {text} Re-render with guids_file to pin "
                         "the roots (report: bring-up).", 80, break_on_hyphens=False)


def _vls_comment(plan: SlPlan, settings: OpenSMSettings) -> str:
    vls = "VL0 only" if plan.vls == 1 else f"VL0-{plan.vls - 1}"
    if settings.sharp:
        return (f"operational data VLs: {vls}; SHARP's SL {settings.sharp_sl} has VL "
                f"{plan.sl2vl[settings.sharp_sl]} to itself")
    return f"operational data VLs: {vls}"


def _check_data(fabric: Fabric, settings: OpenSMSettings, plan: SlPlan, engine: str,
                master: SmPort | None, plane: int) -> dict[str, Any]:
    """What check-routing.sh compares: the engine that must have routed, the master's port,
    and the SL2VL / VLArb tables OpenSM must have programmed."""
    low = list(plan.vlarb_low)
    return {
        "engine": engine.split(",")[0],
        "engines": engine,
        "ftree": engine.split(",")[0] in ("ftree", "ar_ftree"),
        "log": log_file(fabric, plane),
        "master_guid": f"0x{master.guid:x}" if master is not None and master.guid else None,
        "master": master.host if master is not None else None,
        "ca": master.port.rdma_device if master is not None else "",
        "leaf": master.leaf if master is not None else None,
        "leaf_port": master.leaf_port if master is not None else None,
        "sl2vl": " ".join(str(v) for v in plan.sl2vl),
        "vlarb_vls": " ".join(f"0x{vl:x}" for vl, _ in low),
        "vlarb_weights": " ".join(f"0x{w:x}" for _, w in low),
        "vlarb_entries": len(low),
    }


def _render_plane(data: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for sm in data["sms"]:
        name = f"{sm['host']}/opensm.conf" if sm["host"] else "opensm.conf"
        out[name] = templating.render(_TEMPLATES["opensm.conf"], **data,
                                      sections=sm["sections"], host=sm["host"])
    if data["roots"]:
        out["root_guids.txt"] = templating.render(
            _TEMPLATES["root_guids.txt"], **data,
            what="root switch node GUIDs (ftree/updn roots)", guids=data["roots"])
        out["cn_guids.txt"] = templating.render(
            _TEMPLATES["cn_guids.txt"], **data,
            what="compute-node port GUIDs (ftree cn_guid_file)", guids=data["compute_nodes"])
    for name in ("partitions.conf", "qos-policy.conf"):
        out[name] = templating.render(_TEMPLATES[name], **data)
    if data["node_names"]:
        out["node-name-map"] = templating.render(_TEMPLATES["node-name-map"], **data)
    if data["sharp"]:
        out["sharp_am.cfg"] = templating.render(_TEMPLATES["sharp_am.cfg"], **data)
    out["check-routing.sh"] = templating.render(_TEMPLATES["check-routing.sh"], **data)
    return out


def render_opensm(index: FabricIndex, guids: GuidPlan | None, settings: OpenSMSettings
                  ) -> Artifacts:
    """Every plane's OpenSM files, {"infiniband[/plane<N>]/<file>": text}.

    index: the render's index of the fabric. guids: the real fabric's GUIDs (from an
    ibnetdiscover), or None when they are not known: then no file names a GUID the intent does
    not give.
    """
    fabric = index.fabric
    if fabric.transport != "infiniband":
        raise ValueError(f"fabric {fabric.name!r} is {fabric.transport}, not infiniband")
    files: Artifacts = {}
    for plane in range(max(fabric.planes, 1)):
        prefix = out_dir(fabric, plane)
        for name, text in _render_plane(opensm_data(index, guids, settings, plane)).items():
            files[f"{prefix}/{name}"] = text
    return files


def render_topologies(fabric: Fabric, guids: GuidPlan | None = None) -> Artifacts:
    """The ibnetdiscover-format topology of each plane (what ibsim loads): with the real GUIDs
    when known, else fabgen's simulation plan (said so in the file's header)."""
    plan = guids if guids is not None else guid_plan(fabric)
    real = guids is not None
    if fabric.planes <= 1:
        return {f"{OUT_DIR}/topology.ibnet": render_topology(fabric, plan, real_guids=real)}
    return {f"{out_dir(fabric, p)}/topology.ibnet": render_topology(fabric, plan, plane=p,
                                                                    real_guids=real)
            for p in range(fabric.planes)}


# --------------------------------------------------------------------------- targets


class OpenSMTarget:
    name = "opensm"
    description = ("infiniband/<sm host>/opensm.conf, partitions.conf, qos-policy.conf, "
                   "check-routing.sh, sharp_am.cfg; root/cn GUID files and node-name-map "
                   "from real GUIDs (per plane)")

    def applies(self, ctx: RenderContext) -> bool:
        return ctx.fabric.transport == "infiniband"

    def render(self, ctx: RenderContext) -> Artifacts:
        return render_opensm(ctx.index, real_guids(ctx), settings_from_intent(ctx.intent))


class IbTopologyTarget:
    name = "ibtopology"
    description = "infiniband/topology.ibnet: the planned fabric in ibnetdiscover format (ibsim)"

    def applies(self, ctx: RenderContext) -> bool:
        return ctx.fabric.transport == "infiniband"

    def render(self, ctx: RenderContext) -> Artifacts:
        return render_topologies(ctx.fabric, real_guids(ctx))


TARGET = OpenSMTarget()
TOPOLOGY_TARGET = IbTopologyTarget()


def plane_files(files: Mapping[str, str], fabric: Fabric, plane: int) -> dict[str, str]:
    """One plane's rendered files by their path under the plane's directory
    ({"ufm01/opensm.conf": ..., "partitions.conf": ...}), e.g. to install them."""
    prefix = out_dir(fabric, plane) + "/"
    return {path[len(prefix):]: text for path, text in files.items() if path.startswith(prefix)}
