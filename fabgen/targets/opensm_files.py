"""What one subnet's OpenSM files say, display-ready: opensm_data() builds the per-plane dict
(every value computed here or in opensm_plan, opensm_partitions, sharp), the templates under
templates/opensm/ only lay it out.

Two layouts of the same values (opensm_sms.ufm_layout): plain OpenSM hosts get one opensm.conf
each (their own `guid`, master and standby priorities) and the shared files beside it under
/etc/opensm; a UFM HA pair gets one configuration at UFM's paths (fabgen.targets.ufm), no
`guid` (UFM binds OpenSM to gv.cfg's fabric_interface, ib0 on either node), and its tenant
partitions as partitions.conf.user_ext.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from typing import Any

from fabgen.targets import sharp as sharp_am
from fabgen.targets import ufm_appliance
from fabgen.targets.ibnetdiscover import GuidPlan, ca_name, compute_node_guids, root_guids
from fabgen.targets.opensm_partitions import (
    IPOIB_MTU_CODE,
    TENANT_PKEY_INDEX,
    partitions,
    tenants_written,
)
from fabgen.targets.opensm_plan import (
    ENGINE_BUILDS,
    OpenSMSettings,
    SlPlan,
    ftree_fits,
    routing_engines,
    sl_plan,
)
from fabgen.targets.opensm_sms import SmPort, deploy_dir, log_file, sm_ports, ufm_layout
from fabgen.targets.ufm import (
    UFM_GV_CFG,
    UFM_NODE_NAME_MAP,
    UFM_OPENSM_CONF,
    UFM_PARTITIONS,
    UFM_PARTITIONS_USER_EXT,
    UFM_SHARP_AM_CFG,
    UFM_SYNC_PARTITIONS,
)
from fabgen.topology.index import FabricIndex
from fabgen.topology.model import Fabric, Switch

__all__ = ["ftree_in_chain", "opensm_data"]


def _opt(name: str, value: object, comment: str = "", *, disabled: bool = False
         ) -> dict[str, Any]:
    return {"name": name, "value": str(value), "comment": comment, "disabled": disabled}


def _pairs(pairs: Iterable[tuple[int, int]]) -> str:
    return ",".join(f"{vl}:{w}" for vl, w in pairs)


def ftree_in_chain(engine: str) -> bool:
    """Whether an ftree engine is in the routing_engine list (its texts and files apply)."""
    return any(e in ("ftree", "ar_ftree") for e in engine.split(","))


def _engine_comment(engine: str, settings: OpenSMSettings, fits: bool) -> str:
    first = engine.split(",")[0]
    builds = ENGINE_BUILDS[first]
    if first.startswith("ar_"):
        base = "fat-tree" if first == "ar_ftree" else "up/down"
        return (f"adaptive routing over {base} routing ({first}, NVIDIA's OpenSM only: "
                "MLNX_OFED, DOCA-Host or UFM; an upstream OpenSM skips it and routes with "
                "updn, AR off), then updn")
    if first == "ftree":
        why = "fat-tree routing, credit-loop free; updn if ftree refuses the fabric"
    elif settings.routing_engine in ("updn", "ar_updn"):
        why = "up/down routing, credit-loop free"
    else:
        why = ("up/down routing: ftree wants two leaves with hosts and two adapters per subnet"
               if not fits else "up/down routing")
    return why + (" (upstream and NVIDIA OpenSM)" if "upstream" in builds else "")


def _lmc_comment(engine: str) -> str:
    if ftree_in_chain(engine):
        return "one LID per port: ftree does not support LMC > 0"
    return ("one LID per port: up/down routing gives each destination one path per switch"
            + ("; adaptive routing spreads packets over the others" if engine.startswith("ar_")
               else ""))


def _roots_comment(engine: str, count: int) -> str:
    if engine.split(",")[0] in ("ftree", "ar_ftree"):
        return (f"node GUIDs of the {count} top-tier switches (ftree left to guess takes an "
                "empty leaf for a root)")
    return (f"node GUIDs of the {count} top-tier switches: up/down's own root search ranks a "
            "leaf a root when its hosts are under 5% of the subnet's adapters "
            "(osm_ucast_updn.c updn_find_root_nodes_by_min_hop), every leaf of a large fabric, "
            "and up/down turns of no use")


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


def _ufm_section(sms: tuple[SmPort, ...], settings: OpenSMSettings) -> dict[str, Any]:
    pair = " / ".join(f"{sm.host} {sm.port.netdev}" for sm in sms)
    return {"title": f"Subnet manager: the UFM HA pair {pair}", "notes": textwrap.wrap(
        "One file for both nodes: UFM HA replicates UFM's files to the standby and runs UFM, "
        "and its SM, on the active node only. No `guid`: UFM binds OpenSM to the port of "
        "gv.cfg's fabric_interface, the same netdev on either node.", 94,
        break_on_hyphens=False),
        "options": [_opt("sm_priority", settings.sm_priority,
                         "the only SM of the subnet; a switch's embedded SM must stay off")]}


def _no_guid_files_note(first: str, updn_roots: int, top: int, switches: int) -> list[str]:
    """What the first engine does without root/cn GUID files. Only ftree validates the fat
    tree (osm_ucast_ftree.c fabric_validate_topology); updn, and NVIDIA's ar_updn built on it,
    pick their roots from the switches' min-hop tables (osm_ucast_updn.c
    updn_find_root_nodes_by_min_hop) and route whatever is cabled."""
    if first in ("ftree", "ar_ftree"):
        text = (f"{first} then ranks the switches and takes every adapter for a compute node "
                "itself; it also validates the fat tree, so a miscabled one is refused (updn "
                "routes it) instead of routed unevenly.")
    else:
        found = (f"which here makes {updn_roots} of the {switches} switches roots, leaves "
                 "included, and leaves up/down no loop-free order to keep" if updn_roots > top
                 else f"which here finds the {top} top-tier switches")
        text = (f"{first} then picks its roots itself from the switches' hop counts to the "
                "adapters: a switch whose own adapters are under 5% of the subnet's is a root, "
                f"{found}. It does not validate the fat tree either: check the cabling first "
                "(fabgen verify-cabling with an ibnetdiscover of the fabric).")
    return textwrap.wrap("No root_guid_file: the real GUIDs are not known yet (no "
                         f"infiniband.guids_file). {text} Re-render with guids_file to pin "
                         "the roots (report: bring-up).", 80, break_on_hyphens=False)


def updn_auto_roots(fabric: Fabric, plane: int | None = None) -> int:
    """How many switches updn's own root search ranks roots (osm_ucast_updn.c
    updn_find_root_nodes_by_min_hop): a switch is a root when one hop count holds over 90% of
    the adapters and only one holds over 5%. In a fat tree each top-tier switch sees every
    adapter at one distance; a leaf sees its own adapters at 1 and the rest at 3, so it is a
    root too once its own are under 5%."""
    cas: dict[str, int] = {}
    total = 0
    for host in (*fabric.hosts, *fabric.sm_hosts):
        for hp in host.ports:
            if plane is None or hp.plane == plane:
                total += 1
    for link in (*fabric.links, *fabric.sm_links):
        if link.kind in ("node-leaf", "sm-leaf") and (plane is None or link.plane == plane):
            cas[link.z_device] = cas.get(link.z_device, 0) + 1
    switches = [sw for sw in fabric.switches if plane is None or sw.plane == plane]
    top = _top_role(switches)
    roots = 0
    for sw in switches:
        if sw.role == top or (sw.role == "leaf" and cas.get(sw.name, 0) <= total * 0.05):
            roots += 1
    return roots


def _top_role(switches: list[Switch]) -> str:
    return max((sw.role for sw in switches), key=("leaf", "spine", "core").index, default="leaf")


def _vls_comment(plan: SlPlan, settings: OpenSMSettings) -> str:
    vls = "VL0 only" if plan.vls == 1 else f"VL0-{plan.vls - 1}"
    if settings.sharp:
        return (f"operational data VLs: {vls}; SHARP's SL {settings.sharp_sl} has VL "
                f"{plan.sl2vl[settings.sharp_sl]} to itself")
    return f"operational data VLs: {vls}"


def _check_data(fabric: Fabric, plan: SlPlan, engine: str, sms: tuple[SmPort, ...],
                plane: int, ufm: bool, appliance: bool = False) -> dict[str, Any]:
    """What check-routing.sh compares: the engine that must have routed, the master's port
    (either node's with a UFM pair: the active one runs the SM), and the SL2VL / VLArb tables
    OpenSM must have programmed."""
    low = list(plan.vlarb_low)
    master = sms[0] if sms else None
    masters = sms if ufm else sms[:1]
    # An appliance runs no bash: the script runs on a node of the subnet, through its port.
    node = fabric.hosts[0] if appliance and fabric.hosts else None
    node_port = next((hp for hp in node.ports if fabric.planes <= 1 or hp.plane == plane),
                     None) if node is not None else None
    return {
        "appliance": node_port is not None,
        "node": node.name if node is not None else None,
        "engine": engine.split(",")[0],
        "engines": engine,
        "ftree": engine.split(",")[0] in ("ftree", "ar_ftree"),
        "ufm": ufm,
        # on a node, the log copied off the master appliance; else where OpenSM writes it
        "log": "opensm.log" if node_port is not None else log_file(fabric, plane, ufm=ufm),
        "ufm_log": log_file(fabric, plane, ufm=ufm),
        "masters": [{"host": sm.host, "guid": f"0x{sm.guid:x}"} for sm in masters
                    if sm.guid is not None],
        "master": " or ".join(sm.host for sm in masters) if masters else None,
        "ca": node_port.rdma_device if node_port is not None else
        master.port.rdma_device if master is not None else "",
        "leaf": master.leaf if master is not None else None,
        "leaf_port": master.leaf_port if master is not None else None,
        "sl2vl": " ".join(str(v) for v in plan.sl2vl),
        "vlarb_vls": " ".join(f"0x{vl:x}" for vl, _ in low),
        "vlarb_weights": " ".join(f"0x{w:x}" for _, w in low),
        "vlarb_entries": len(low),
    }


def opensm_data(index: FabricIndex, guids: GuidPlan | None, settings: OpenSMSettings,
                plane: int = 0) -> dict[str, Any]:
    """Everything one plane's files say, display-ready: the target-shaped layer."""
    fabric = index.fabric
    multi = fabric.planes > 1
    ufm = ufm_layout(fabric, settings)
    scope = (f", plane {plane + 1} of {fabric.planes}" if multi else "") + (
        f" ({fabric.role} network)" if fabric.role != "compute" else "")
    where = deploy_dir(fabric, plane, ufm=ufm)
    in_plane = plane if multi else None
    sms = sm_ports(index, guids, settings, in_plane)
    standby = () if ufm else tuple(sm.guid for sm in sms[1:] if sm.guid is not None)
    parts = partitions(fabric, guids, settings, in_plane, standby)
    plan = sl_plan(settings, {p.name: p.pkey for p in parts})
    fits = ftree_fits(fabric, in_plane)
    engine = routing_engines(settings, fits_ftree=fits)
    ftree = ftree_in_chain(engine)
    paths = {
        "root": f"{where}/root_guids.txt", "cn": f"{where}/cn_guids.txt",
        "partitions": UFM_PARTITIONS if ufm else f"{where}/partitions.conf",
        "qos": f"{where}/qos-policy.conf",
        "names": UFM_NODE_NAME_MAP if ufm else f"{where}/node-name-map",
    }

    routing = [
        _opt("routing_engine", engine, _engine_comment(engine, settings, fits)),
        _opt("lmc", 0, _lmc_comment(engine)),
    ]
    routing_notes: list[str] = []
    roots: list[str] = []
    cns: list[str] = []
    names: list[dict[str, str]] = []
    if guids is not None:
        roots = [f"0x{g:016x}" for g in root_guids(fabric, guids, plane=in_plane)]
        routing.append(_opt("root_guid_file", paths["root"],
                            _roots_comment(engine, len(roots))))
        if ftree:
            # cn_guid_file is ftree's (and dfsssp's): up/down reads no compute-node list.
            cns = [f"0x{g:016x}" for g in compute_node_guids(fabric, guids, plane=in_plane)]
            routing.append(_opt("cn_guid_file", paths["cn"],
                                f"port GUIDs (not node GUIDs) of the {len(cns)} compute ports"))
        switches = [sw for sw in fabric.switches if not multi or sw.plane == plane]
        names = [{"guid": f"0x{guids.switch_guids[sw.name]:016x}", "name": sw.name}
                 for sw in switches]
        names += [{"guid": f"0x{guids.ca_guids[(h.name, nic)]:016x}", "name": ca_name(h, nic)}
                  for h in (*fabric.hosts, *fabric.sm_hosts)
                  for nic in sorted({hp.nic for hp in h.ports if not multi or hp.plane == plane})]
    else:
        in_subnet = [sw for sw in fabric.switches if not multi or sw.plane == plane]
        routing_notes = _no_guid_files_note(
            engine.split(",")[0], updn_auto_roots(fabric, in_plane),
            sum(1 for sw in in_subnet if sw.role == _top_role(in_subnet)), len(in_subnet))
    qos_opts = [
        _opt("qos", "TRUE"),
        _opt("qos_policy_file", paths["qos"]),
        _opt("max_op_vls", plan.max_op_vls, _vls_comment(plan, settings)),
        _opt("qos_max_vls", plan.vls),
        _opt("qos_high_limit", plan.high_limit),
        _opt("qos_vlarb_high", _pairs(plan.vlarb_high), "VL:weight, weights in 64-byte credits"),
        _opt("qos_vlarb_low", _pairs(plan.vlarb_low)),
        _opt("qos_sl2vl", ",".join(str(v) for v in plan.sl2vl), "VL of SL 0..15"),
    ]
    tenants = tenants_written(settings, guids)
    part_opts = [_opt("partition_config_file", paths["partitions"],
                      f"UFM's own file: it merges {UFM_PARTITIONS_USER_EXT} (the tenants) into "
                      "it" if ufm else "")]
    if guids is not None:
        part_opts.append(_opt("node_name_map_name", paths["names"]))
    shared = [
        {"title": "Routing", "notes": routing_notes, "options": routing},
        {"title": "Partitions and node names", "notes": [], "options": part_opts},
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
    if ufm:
        confs = [{"path": "ufm/opensm.conf", "host": None,
                  "sections": [_ufm_section(sms, settings), *shared]}]
    else:
        confs = [{"path": f"{sm.host}/opensm.conf" if sm is not None else "opensm.conf",
                  "host": sm.host if sm is not None else None,
                  "sections": [_sm_section(sm, settings, multi, plane), *shared]}
                 for sm in (sms or (None,))]
    sharp_path = UFM_SHARP_AM_CFG if ufm else sharp_am.PLAIN_SHARP_AM_CFG
    return {
        "fabric": fabric.name,
        "scope": scope,
        "deploy_dir": where,
        "ufm": ufm,
        "confs": confs,
        "roots": roots,
        "compute_nodes": cns,
        "paths": paths,
        "partitions": [
            {"name": p.name, "pkey": f"{p.pkey:#06x}", "flags": "ipoib, " if p.ipoib else "",
             "mtu": IPOIB_MTU_CODE, "everyone": p.everyone, "pending": p.pending,
             "members": [{"guid": f"0x{m.guid:016x}", "membership": "full" if m.full else
                          "limited", "label": m.label} for m in p.members],
             "count": len(p.members)}
            for p in parts if (p.everyone is not None and not ufm) or p.members or p.pending],
        "tenants": tenants,
        "ufm_product": settings.ufm if ufm else None,
        "tenant_index": TENANT_PKEY_INDEX,
        "limited_default": tenants and (settings.default_membership or "limited") == "limited",
        "node_names": names,
        "classes": [{"name": c.name, "sl": c.sl, "vl": c.vl, "weight": c.weight,
                     "priority": "high" if c.high else "low"} for c in plan.classes],
        "policy": [{"match": m, "sl": sl, "comment": why} for m, sl, why in policy],
        "sharp": {"path": sharp_path,
                  "options": sharp_am.sharp_am_options(
                      settings, plan, paths["root"] if guids is not None else None, tenants),
                  "host": master.host if master is not None else None,
                  "on_compute_host": master is not None and not master.dedicated}
        if settings.sharp else None,
        "service_level": settings.service_level,
        "check": _check_data(fabric, plan, engine, sms, plane, ufm,
                             ufm and settings.ufm == "appliance"),
        "setup": _setup_data(settings, sms, confs, tenants, _installs(
            paths, guids is not None, ftree, bool(settings.partitions)))
        if ufm and settings.ufm == "software" else None,
        "appliance": _appliance_data(settings, sms, engine, tenants, plan, len(roots),
                                     bool(parts and any(p.members for p in parts)),
                                     f"topology.{fabric.role}.ipoib" if fabric.role != "compute"
                                     else "infiniband.ipoib")
        if ufm and settings.ufm == "appliance" else None,
    }


def _installs(paths: dict[str, str], guids: bool, ftree: bool, partitions_: bool
              ) -> list[dict[str, str]]:
    """The whole files ufm-setup.sh copies from infiniband/ufm/ into UFM's tree."""
    out = [("qos-policy.conf", paths["qos"])]
    if guids:
        out += [("ib-node-name-map", paths["names"]), ("root_guids.txt", paths["root"])]
        if ftree:
            out.append(("cn_guids.txt", paths["cn"]))
    if partitions_:
        out.append(("partitions.conf.user_ext", UFM_PARTITIONS_USER_EXT))
    return [{"name": name, "dest": dest} for name, dest in out]


def _appliance_data(settings: OpenSMSettings, sms: tuple[SmPort, ...], engine: str,
                    tenants: bool, plan: SlPlan, roots: int, user_ext: bool, ipoib_field: str
                    ) -> dict[str, Any]:
    """What appliance.cli says, node by node."""
    return {
        "hosts": [sm.host for sm in sms],
        "blocks": ufm_appliance.appliance_blocks(
            settings, sms, engine, tenants, settings.sharp_sl, plan.sl2vl[settings.sharp_sl],
            roots, UFM_PARTITIONS if user_ext else None, ipoib_field),
    }


def _setup_data(settings: OpenSMSettings, sms: tuple[SmPort, ...], confs: list[dict[str, Any]],
                tenants: bool, installs: list[dict[str, str]]) -> dict[str, Any]:
    """What ufm-setup.sh (UFM Enterprise software) writes and checks on the UFM host(s)."""
    netdev = sms[0].port.netdev
    options = [(o["name"], o["value"]) for section in confs[0]["sections"]
               for o in section["options"] if not o["disabled"]]
    hosts = [{"name": sm.host, "netdev": sm.port.netdev,
              "address": sm.port.ipoib.with_prefixlen if sm.port.ipoib is not None else ""}
             for sm in sms]
    return {
        "ha": len(sms) > 1,
        "gv_cfg": UFM_GV_CFG,
        "opensm_conf": UFM_OPENSM_CONF,
        "partitions": UFM_PARTITIONS,
        "gv": [{"section": g.section or "", "add_to": g.add_to or "", "key": g.key,
                "value": g.value, "why": g.comment, "unverified": g.unverified}
               for g in sharp_am.gv_settings(settings, netdev, tenants)],
        "options": options,
        "hosts": hosts,
        "installs": installs,
        "sharp_options": sharp_am.sharp_am_options(
            settings, sl_plan(settings, {p.name: p.pkey for p in settings.partitions}),
            next((i["dest"] for i in installs if i["name"] == "root_guids.txt"), None),
            tenants) if settings.sharp else (),
        "sharp_am_cfg": UFM_SHARP_AM_CFG,
        "sharp_tcp": settings.sharp and settings.sharp_transport == "sockets",
        "tenant_pkeys": [f"{p.pkey:#06x}" for p in settings.partitions] if tenants else [],
        "user_ext": UFM_PARTITIONS_USER_EXT,
        "sync": UFM_SYNC_PARTITIONS,
        "sharp_port": sharp_am.SHARP_AM_TCP_PORT,
        "netdev": netdev,
    }
