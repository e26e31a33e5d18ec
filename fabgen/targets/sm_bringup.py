"""The report's InfiniBand bring-up section: where the subnet managers run, and the steps from
racked switches to a subnet routed as planned (embedded SMs off, discovery, GUIDs, install,
check-routing.sh).

Every value is computed here from the same functions the OpenSM target renders with, so the
section names the files, ports and engines the render really holds.
"""

from __future__ import annotations

from typing import Any

from fabgen import templating
from fabgen.targets import ib_hosts
from fabgen.targets import sharp as sharp_am
from fabgen.targets.base import RenderContext
from fabgen.targets.opensm import (
    deploy_dir,
    log_file,
    out_dir,
    real_guids,
    sm_ports,
    ufm_layout,
)
from fabgen.targets.opensm_partitions import tenant_of
from fabgen.targets.opensm_plan import (
    ENGINE_BUILDS,
    OpenSMSettings,
    ftree_fits,
    routing_engines,
    settings_from_intent,
    sl_plan,
)
from fabgen.targets.ufm import (
    UFM_GV_CFG,
    UFM_OPENSM_CONF,
    UFM_PARTITIONS_USER_EXT,
    UFM_SHARP_AM_CFG,
    UFM_SM_LOG,
)
from fabgen.topology.build import extra_intent
from fabgen.topology.index import FabricIndex

__all__ = ["bringup_data", "bringup_markdown", "ib_rows"]

_BUILD = {"nvidia": "NVIDIA (MLNX_OFED, DOCA-Host or UFM)", "upstream": "upstream (linux-rdma)"}


def ib_rows(ctx: RenderContext) -> list[dict[str, str]]:
    """The report's InfiniBand service plan table, from the resolved settings."""
    settings = settings_from_intent(ctx.intent)
    fabric = ctx.fabric
    engine = routing_engines(settings, fits_ftree=ftree_fits(fabric, 0 if fabric.planes > 1
                                                                  else None))
    plan = sl_plan(settings, {p.name: p.pkey for p in settings.partitions})
    ar = ("on" if settings.adaptive_routing else "off") + (
        "" if ctx.intent.infiniband.adaptive_routing is not None else
        " (NVIDIA's default for NDR/XDR)" if settings.adaptive_routing else
        " (upstream OpenSM has none)" if settings.opensm == "upstream" else "")
    sharp = (f"on: SL {settings.sharp_sl} on VL {plan.sl2vl[settings.sharp_sl]} of its own; "
             f"libsharp over {'UCX' if settings.sharp_transport == 'ucx' else 'sockets (TCP)'} "
             f"(SHARP {settings.sharp_version})" if settings.sharp else "off")
    hosts = ib_hosts.ib_plan(ctx)
    ipoib = ctx.intent.infiniband.ipoib
    tenants = ("none" if not settings.partitions else
               f"{len(settings.partitions)}, NCCL_IB_PKEY={hosts.pkey_index} (each tenant's "
               "P_Key index)" if hosts.pkey_index is not None else
               f"{len(settings.partitions)}, written once infiniband.guids_file names the ports")
    return [
        {"setting": "OpenSM build", "value": _BUILD[settings.opensm]},
        {"setting": "subnet manager", "value": (
            "UFM HA pair (active/standby), "
            + ("UFM Enterprise Appliances (CLI)" if settings.ufm == "appliance"
               else "UFM Enterprise software")) if ufm_layout(fabric, settings) else "OpenSM"},
        {"setting": "routing engine", "value": engine},
        {"setting": "adaptive routing", "value": ar},
        {"setting": "SHARP", "value": sharp},
        {"setting": "service level (compute traffic)", "value": str(settings.service_level)},
        {"setting": "data VLs", "value": str(plan.vls)},
        {"setting": "subnet manager priority", "value": str(settings.sm_priority)},
        {"setting": "IPoIB", "value": str(ipoib.prefix) if ipoib is not None else "none planned"},
        {"setting": "tenant partitions", "value": tenants},
    ]


def _subnet(index: FabricIndex, guids: Any, settings: OpenSMSettings) -> dict[str, Any]:
    """One subnet's SM hosts, planes, engines and files (the compute fabric, or the storage
    network's)."""
    fabric = index.fabric
    multi = fabric.planes > 1
    ufm = ufm_layout(fabric, settings)
    planes: list[dict[str, Any]] = []
    firsts: list[str] = []
    for plane in range(fabric.planes):
        in_plane = plane if multi else None
        sms = sm_ports(index, guids, settings, in_plane)
        engine = routing_engines(settings, fits_ftree=ftree_fits(fabric, in_plane))
        firsts.append(engine.split(",")[0])
        planes.append({
            "label": f"plane {plane + 1}" if multi else "",
            "dir": out_dir(fabric, plane),
            "deploy": deploy_dir(fabric, plane, ufm=ufm),
            # the appliances run no shell: their log, copied to a node, is read there
            "log": "opensm.log" if ufm and settings.ufm == "appliance"
            else log_file(fabric, plane, ufm=ufm),
            "engine": engine,
            "first": engine.split(",")[0],
            "sms": [{
                "host": sm.host,
                "role": ("active" if i == 0 else "standby") if ufm else
                        ("master" if i == 0 else "standby"),
                "priority": sm.priority if not ufm else "-",
                "port": f"{sm.port.rdma_device} ({sm.port.netdev})",
                "rdma": sm.port.rdma_device,
                "netdev": sm.port.netdev,
                "leaf": sm.leaf,
                "leaf_port": sm.leaf_port,
                "guid": f"0x{sm.guid:016x}" if sm.guid is not None else None,
                "ipoib": sm.port.ipoib.with_prefixlen if sm.port.ipoib is not None else None,
                "dedicated": sm.dedicated,
            } for i, sm in enumerate(sms)],
        })
    sm_hosts = fabric.sm_hosts
    slot_leaves = sorted({link.z_device for link in fabric.sm_links})
    return {
        "name": fabric.name,
        "kind": settings.management,
        "ufm": ufm,
        "ufm_product": settings.ufm if ufm else None,
        "ha": ufm and len(sm_hosts) > 1,
        "dedicated": bool(sm_hosts),
        "sm_host": settings.sm_host,
        "hosts": len(sm_hosts),
        "ports": sum(len(h.ports) for h in sm_hosts),
        "cables": len(fabric.sm_links),
        "slot_leaves": ", ".join(slot_leaves),
        "reserved_su": sm_hosts[0].su + 1 if sm_hosts else None,
        "planes": planes,
        "multi": multi,
        "nvidia_only": sorted(e for e in set(firsts) if ENGINE_BUILDS.get(e) == ("nvidia",)),
        # Only ftree (and ar_ftree) find the compute nodes and check the fat tree themselves;
        # updn and ar_updn pick roots by min-hop and route any cabling (opensm.conf says so).
        "ftree_everywhere": all(e in ("ftree", "ar_ftree") for e in firsts),
        "engines_first": ", ".join(sorted(set(firsts))),
        "sm_guids_missing": any(sm["guid"] is None for p in planes for sm in p["sms"]),
    }


def _storage(ctx: RenderContext) -> dict[str, Any] | None:
    fabric = next((x for x in ctx.fabric.extras
                   if x.role == "storage" and x.transport == "infiniband"), None)
    if fabric is None:
        return None
    spec = ctx.intent.topology.storage
    assert spec is not None
    data = _subnet(ctx.index.extras["storage"], None,
                   settings_from_intent(extra_intent(ctx.intent, "storage")))
    targets = [h for h in fabric.hosts if h.target]
    nodes = [h for h in fabric.hosts if not h.target]
    leaves = {len({link.z_device for link in fabric.links if link.a_device == h.name})
              for h in nodes}
    data.update(
        targets=len(targets),
        target_ports=sum(len(h.ports) for h in targets),
        target_names=", ".join(h.name for h in targets[:3]) + (", ..." if len(targets) > 3
                                                               else ""),
        leaves_per_node=min(leaves) if leaves else 0,
        ports_per_node=spec.nics,
        ipoib=str(spec.ipoib.prefix) if spec.ipoib is not None else None,
    )
    return data


def _sharp(ufm: bool) -> dict[str, Any]:
    return {"gv_cfg": UFM_GV_CFG, "sharp_am_cfg": UFM_SHARP_AM_CFG if ufm else
            sharp_am.PLAIN_SHARP_AM_CFG, "port": sharp_am.SHARP_AM_TCP_PORT}


def bringup_data(ctx: RenderContext) -> dict[str, Any]:
    """Everything the bring-up section prints."""
    fabric, intent = ctx.fabric, ctx.intent
    settings = settings_from_intent(intent)
    guids = real_guids(ctx)
    compute = _subnet(ctx.index, guids, settings)
    plan = sl_plan(settings, {p.name: p.pkey for p in settings.partitions})
    hosts = ib_hosts.ib_plan(ctx)
    ipoib = intent.infiniband.ipoib
    first_port = next((hp.ipoib for h in fabric.hosts for hp in h.ports), None)
    last_port = next((hp.ipoib for h in reversed(fabric.hosts) for hp in reversed(h.ports)),
                     None)
    tenants = tenant_of(fabric, settings)
    return {
        "fabric": fabric.name,
        **compute,
        "guids_known": guids is not None,
        "guids_files": ", ".join(settings.guids_files),
        "tenants": [p.name for p in settings.partitions],
        "tenant_pkey_index": hosts.pkey_index,
        "untenanted": sum(1 for h in fabric.hosts if h.name not in tenants),
        "sharp": settings.sharp,
        "sharp_sl": settings.sharp_sl,
        "sharp_vl": plan.sl2vl[settings.sharp_sl],
        "sharp_files": _sharp(compute["ufm"]),
        "sharp_transport": settings.sharp_transport,
        "smx_protocol": sharp_am.SMX_PROTOCOL[settings.sharp_transport],
        "sharp_version": settings.sharp_version,
        "reservation_auto": sharp_am.reservation_auto(settings),
        "limited_default": (settings.default_membership or "limited") == "limited",
        # what the hosts end up as: UFM Enterprise software cannot make them limited
        "limited_effective": (settings.default_membership or "limited") == "limited"
        and not (compute["ufm"] and settings.ufm == "software"),
        "adaptive": settings.adaptive_routing,
        "opensm": settings.opensm,
        "ipoib": str(ipoib.prefix) if ipoib is not None else None,
        "ipoib_first": first_port.ip if first_port is not None else None,
        "ipoib_last": last_port.ip if last_port is not None else None,
        "ufm_paths": {"opensm": UFM_OPENSM_CONF, "gv": UFM_GV_CFG, "log": UFM_SM_LOG,
                      "user_ext": UFM_PARTITIONS_USER_EXT},
        "storage": _storage(ctx),
        # where an appliance fabric is discovered from: a compute host's first rail port
        "discover": {"host": fabric.hosts[0].name,
                     "rdma": fabric.hosts[0].ports[0].rdma_device} if fabric.hosts else None,
    }


def bringup_markdown(ctx: RenderContext) -> str:
    """The bring-up section (Markdown) for the report of an InfiniBand fabric."""
    return templating.render("opensm/bringup.md.j2", **bringup_data(ctx))
