"""The report's InfiniBand bring-up section: where the subnet managers run, and the steps from
racked switches to a subnet routed as planned (embedded SMs off, discovery, GUIDs, install,
check-routing.sh).

Every value is computed here from the same functions the OpenSM target renders with, so the
section names the files, ports and engines the render really holds.
"""

from __future__ import annotations

from typing import Any

from fabgen import templating
from fabgen.targets.base import RenderContext
from fabgen.targets.opensm import (
    deploy_dir,
    log_file,
    out_dir,
    real_guids,
    sm_ports,
)
from fabgen.targets.opensm_plan import (
    ENGINE_BUILDS,
    ftree_fits,
    routing_engines,
    settings_from_intent,
    sl_plan,
)

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
    sharp = (f"on: SL {settings.sharp_sl} on VL {plan.sl2vl[settings.sharp_sl]} of its own"
             if settings.sharp else "off")
    return [
        {"setting": "OpenSM build", "value": _BUILD[settings.opensm]},
        {"setting": "routing engine", "value": engine},
        {"setting": "adaptive routing", "value": ar},
        {"setting": "SHARP", "value": sharp},
        {"setting": "service level (compute traffic)", "value": str(settings.service_level)},
        {"setting": "data VLs", "value": str(plan.vls)},
        {"setting": "subnet manager priority", "value": str(settings.sm_priority)},
    ]


def bringup_data(ctx: RenderContext) -> dict[str, Any]:
    """Everything the bring-up section prints."""
    fabric, intent = ctx.fabric, ctx.intent
    settings = settings_from_intent(intent)
    guids = real_guids(ctx)
    multi = fabric.planes > 1
    planes: list[dict[str, Any]] = []
    firsts: list[str] = []
    for plane in range(fabric.planes):
        in_plane = plane if multi else None
        sms = sm_ports(ctx.index, guids, settings, in_plane)
        engine = routing_engines(settings, fits_ftree=ftree_fits(fabric, in_plane))
        firsts.append(engine.split(",")[0])
        planes.append({
            "label": f"plane {plane + 1}" if multi else "",
            "dir": out_dir(fabric, plane),
            "deploy": deploy_dir(fabric, plane),
            "log": log_file(fabric, plane),
            "engine": engine,
            "first": engine.split(",")[0],
            "sms": [{
                "host": sm.host,
                "role": "master" if i == 0 else "standby",
                "priority": sm.priority,
                "port": f"{sm.port.rdma_device} ({sm.port.netdev})",
                "rdma": sm.port.rdma_device,
                "netdev": sm.port.netdev,
                "leaf": sm.leaf,
                "leaf_port": sm.leaf_port,
                "guid": f"0x{sm.guid:016x}" if sm.guid is not None else None,
                "dedicated": sm.dedicated,
            } for i, sm in enumerate(sms)],
        })
    sm_hosts = fabric.sm_hosts
    plan = sl_plan(settings, {p.name: p.pkey for p in settings.partitions})
    slot_leaves = sorted({link.z_device for link in fabric.sm_links})
    return {
        "fabric": fabric.name,
        "kind": settings.management,
        "ufm": settings.management == "ufm" and bool(sm_hosts),
        "dedicated": bool(sm_hosts),
        "sm_host": settings.sm_host,
        "hosts": len(sm_hosts),
        "ports": sum(len(h.ports) for h in sm_hosts),
        "cables": len(fabric.sm_links),
        "slot_leaves": ", ".join(slot_leaves),
        "reserved_su": sm_hosts[0].su + 1 if sm_hosts else None,
        "planes": planes,
        "guids_known": guids is not None,
        "guids_files": ", ".join(settings.guids_files),
        "sm_guids_missing": any(sm["guid"] is None for p in planes for sm in p["sms"]),
        "tenants": [p.name for p in settings.partitions],
        "sharp": settings.sharp,
        "sharp_sl": settings.sharp_sl,
        "sharp_vl": plan.sl2vl[settings.sharp_sl],
        "adaptive": settings.adaptive_routing,
        "opensm": settings.opensm,
        "nvidia_only": sorted(e for e in set(firsts) if ENGINE_BUILDS.get(e) == ("nvidia",)),
        # Only ftree (and ar_ftree) find the compute nodes and check the fat tree themselves;
        # updn and ar_updn pick roots by min-hop and route any cabling (opensm.conf says so).
        "ftree_everywhere": all(e in ("ftree", "ar_ftree") for e in firsts),
        "engines_first": ", ".join(sorted(set(firsts))),
        "multi": multi,
    }


def bringup_markdown(ctx: RenderContext) -> str:
    """The bring-up section (Markdown) for the report of an InfiniBand fabric."""
    return templating.render("opensm/bringup.md.j2", **bringup_data(ctx))
