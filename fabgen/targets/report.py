"""Report target: report.md (summary, bill of materials, oversubscription, bisection, QoS plan,
warnings) and report.svg, the fabric drawn by tier.

All numbers are computed here or in topology.summary and passed to the template as display
strings; the template only lays them out (no counting, sorting or arithmetic in Jinja).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from fractions import Fraction
from typing import Any

from fabgen import __version__, catalog, qos, templating
from fabgen.intent.models import Intent
from fabgen.intent.units import format_ratio, format_speed
from fabgen.qos import QosPlan, TrafficClass
from fabgen.targets import headroom_report
from fabgen.targets.base import Artifacts, RenderContext
from fabgen.targets.cable_lengths import CableLengths, cable_lengths
from fabgen.targets.picture import render_svg
from fabgen.topology.index import FabricIndex
from fabgen.topology.model import ROLES, Fabric, Switch
from fabgen.topology.summary import ALL_LINK_KINDS, SM_TRANSCEIVER, summarize

__all__ = ["TARGET", "ReportTarget", "report_context"]

_TIER_TITLE = {"leaf": "Leaf", "spine": "Spine", "core": "Core"}
_TRANSPORT = {"roce": "RoCEv2 (Ethernet)", "infiniband": "InfiniBand"}


def _number(value: Fraction, places: int = 2) -> str:
    """A decimal with at most `places` digits, trailing zeros dropped (51.2, 400, 0.33)."""
    text = f"{float(value):,.{places}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _bytes(n: int) -> str:
    return f"{n // 1000} KB" if n % 1000 == 0 else f"{n} B"


def _catalog_name(model: str) -> str:
    known = catalog.switches().get(model)
    if known is None:
        return "custom (not in the catalog)"
    if known.name.lower().startswith(known.vendor.lower()):
        return known.name
    return f"{known.vendor} {known.name}"


def _switch_rows(fabric: Fabric) -> list[dict[str, str]]:
    """One row per (tier, model): count, catalog name, ports and how they are used."""
    by_key: dict[tuple[int, str], list[Switch]] = {}
    for sw in fabric.switches:
        by_key.setdefault((ROLES.index(sw.role), sw.model), []).append(sw)
    rows = []
    for (role_index, model), devs in sorted(by_key.items()):
        first = devs[0]
        split = (f" ({first.breakout}x{format_speed(first.speed_gbps)} breakout)"
                 if first.breakout > 1 else "")
        rows.append({
            "tier": _TIER_TITLE[ROLES[role_index]],
            "model": model,
            "name": _catalog_name(model),
            "count": f"{len(devs):,}",
            "ports": f"{first.radix} x {format_speed(first.speed_gbps)}{split}",
            "use": f"{first.down_ports} down / {first.up_ports} up",
        })
    return rows


def _cable_rows(fabric: Fabric) -> list[dict[str, str]]:
    counts = Counter((link.kind, link.media) for link in (*fabric.links, *fabric.sm_links))
    return [{"kind": kind, "media": media, "count": f"{counts[kind, media]:,}"}
            for kind, media in sorted(counts, key=lambda k: (ALL_LINK_KINDS.index(k[0]), k[1]))]


def _hosts_per_leaf(index: FabricIndex) -> list[dict[str, str]]:
    """Leaves grouped by how many host ports and nodes they serve (a partial SU shows apart)."""
    shapes: Counter[tuple[int, int]] = Counter()
    for sw in index.fabric.switches:
        if sw.role == "leaf":
            hosts = [link.a_device for link in index.links(sw.name) if link.kind == "node-leaf"]
            shapes[len(hosts), len(set(hosts))] += 1
    return [{"ports": f"{p:,}", "nodes": f"{n:,}", "leaves": f"{shapes[p, n]:,}"}
            for p, n in sorted(shapes, reverse=True)]


def _oversubscription_rows(fabric: Fabric, intent: Intent) -> list[dict[str, str]]:
    asked = intent.topology.oversubscription
    requested = {"leaf": asked.leaf, "spine": asked.spine if fabric.tiers == 3 else None}
    rows = []
    for tf in fabric.tier_facts:
        want = requested.get(tf.role)
        achieved = tf.oversubscription
        if achieved is None:
            verdict = "top tier (no uplinks)"
        elif want is None or achieved <= want:
            verdict = "as requested" if want is None or achieved == want else "better"
        else:
            verdict = "WORSE than requested"
        rows.append({
            "tier": _TIER_TITLE[tf.role],
            "requested": format_ratio(want) if want is not None else "-",
            "achieved": format_ratio(achieved) if achieved is not None else "-",
            "ports": f"{tf.down_ports} down / {tf.up_ports} up",
            "verdict": verdict,
        })
    return rows


def _dscp_text(cls: TrafficClass, all_others: bool) -> str:
    if all_others:
        return f"all others ({len(cls.dscp)} values)"
    return ", ".join(str(d) for d in cls.dscp)


def _qos_rows(plan: QosPlan) -> list[dict[str, str]]:
    """One row per traffic class of the plan, in the plan's order (rdma, cnp, extras, default)."""
    ecn = plan.ecn
    rows = []
    for cls in plan.classes:
        if cls.ecn and ecn is not None:
            ecn_text = (f"{_bytes(ecn.min_bytes)} - {_bytes(ecn.max_bytes)}, "
                        f"{ecn.probability}%")
        else:
            ecn_text = "off"
        scheduler = ("strict priority" if cls.scheduling == "strict"
                     else f"DWRR weight {cls.weight}")
        rows.append({
            "name": cls.name,
            "dscp": _dscp_text(cls, cls.name == "default"),
            "priority": str(cls.priority),
            "queue": str(cls.queue),
            "pfc": "on" if cls.lossless else "off",
            "ecn": ecn_text,
            "scheduler": scheduler,
        })
    return rows


def _qos_notes(plan: QosPlan, lengths: CableLengths | None) -> list[str]:
    wd = plan.watchdog
    watchdog = (f"detection {wd.detection_ms} ms, restoration {wd.restoration_ms} ms, "
                f"poll {wd.poll_ms} ms, action {wd.action}" if wd.enabled else "off")
    mtu = f"MTU: switch ports {plan.mtu}, host netdevs {plan.host_mtu}"
    return [
        f"{mtu} ({plan.mtu_note})" if plan.mtu_note else mtu,
        "PFC on priorities: " + ", ".join(str(p) for p in plan.pfc_priorities),
        f"PFC watchdog: {watchdog}",
        *headroom_report.headroom_notes(plan, lengths),
    ]


def _extra_rows(fabric: Fabric) -> list[dict[str, str]]:
    """One row per switch tier of each separate storage/management network."""
    rows = []
    for extra in fabric.extras:
        cables = len(extra.links) + len(extra.sm_links)  # storage.csv lists the SM hosts' too
        for tf in extra.tier_facts:
            rows.append({
                "network": extra.role,
                "transport": "InfiniBand" if extra.transport == "infiniband" else "Ethernet",
                "tier": _TIER_TITLE[tf.role],
                "model": tf.model,
                "count": str(tf.count),
                "oversubscription": format_ratio(tf.oversubscription)
                if tf.oversubscription is not None else "-",
                "cables": str(cables) if tf.role == "leaf" else "",
            })
    return rows


def _extra_notes(fabric: Fabric) -> list[str]:
    """What the table cannot say: how a network's nodes are homed (MLAG leaf pairs)."""
    out = []
    for extra in fabric.extras:
        peers = [link for link in extra.links if link.kind == "peer-link"]
        if not peers:
            continue
        pairs = sorted({(link.a_device, link.z_device) for link in peers})
        ports = sorted({link.a_port for link in peers})
        example = f"{pairs[0][0]} + {pairs[0][1]}" + (", ..." if len(pairs) > 1 else "")
        plural = "s" if len(pairs) > 1 else ""
        out.append(
            f"The {extra.role} network's leaves are {len(pairs)} MLAG pair{plural} ({example}), "
            f"each joined by a peer link of {len(ports)} cables on ports "
            f"{', '.join(str(p) for p in ports)} of both leaves (the DGX BasePOD deployment "
            "guide bonds swp63 and swp64 of its SN4600C pair); each node's two ports, the "
            "members of its in-band bond, land on the two leaves of its pair at the same port. "
            f"The {len(peers)} peer-link cables are in the cable count.")
    return out


def report_context(index: FabricIndex, intent: Intent, qos_plan: QosPlan | None = None,
                   lengths: CableLengths | None = None) -> dict[str, Any]:
    """Every value the report template prints, as display-ready strings and lists, for the
    fabric of `index` (the render's).

    The QoS table comes from `qos_plan` (the context's resolved plan), else from qos.plan(intent)
    for a RoCE fabric, so the report prints the numbers the switches and NICs get.
    """
    fabric = index.fabric
    roce = fabric.transport == "roce"
    if roce and qos_plan is None:
        qos_plan = qos.plan(intent)
    plan = summarize(fabric, intent)
    node = intent.cluster.node
    gpus = plan["gpus"]
    transport = _TRANSPORT[fabric.transport]
    if intent.fabric.generation:
        transport += f" {intent.fabric.generation.upper()}"
    units = f"{plan['scalable_units']} x {plan['su_size']} nodes"
    summary = [
        ("Nodes", f"{plan['nodes']:,} x {node.model}"),
        ("GPUs", f"{gpus:,} ({node.gpus} per node)"),
        ("Compute NIC ports", f"{node.nics * node.nic_ports} per node ({node.nic})"),
        ("Transport", transport),
        ("Link speed", format_speed(fabric.speed_gbps)),
        ("Topology", intent.topology.style),
        ("Tiers", str(fabric.tiers)),
        ("Planes", str(fabric.planes)),
        ("Rails", str(fabric.rails) if fabric.rails else "- (rail-unaware)"),
        ("Scalable units", units),
    ]
    bisection = fabric.bisection_gbps
    per_gpu = Fraction(bisection, gpus // 2) if gpus >= 2 else Fraction(0)
    switches_total = sum(plan["switches"].values())
    cables_total = sum(plan["cables"].values())
    return {
        "title": intent.name,
        "description": intent.description,
        "summary": [{"label": k, "value": v} for k, v in summary],
        "switches": _switch_rows(fabric),
        "switches_total": f"{switches_total:,}",
        "cables": _cable_rows(fabric),
        "cables_total": f"{cables_total:,}",
        "transceivers": [{"type": k, "count": f"{v:,}"}
                         for k, v in plan["transceivers"].items()],
        "transceivers_total": f"{sum(plan['transceivers'].values()):,}",
        "sm_transceivers": ", ".join(k for k in plan["transceivers"]
                                     if k.startswith(SM_TRANSCEIVER)),
        "hosts_per_leaf": _hosts_per_leaf(index),
        "oversubscription": _oversubscription_rows(fabric, intent),
        "extras": _extra_rows(fabric),
        "extra_notes": _extra_notes(fabric),
        "bisection_tbps": _number(Fraction(bisection, 1000)),
        "bisection_gbps": f"{bisection:,}",
        "bisection_per_gpu": _number(per_gpu),
        "roce": roce,
        "qos": _qos_rows(qos_plan) if roce and qos_plan is not None else [],
        "qos_notes": _qos_notes(qos_plan, lengths) if roce and qos_plan is not None else [],
        "ib": [],
        "warnings": [],  # the render's, which the target fills in
        "provenance": provenance(""),
        "picture": "report.svg",
    }


# all-single costs about 0.2-0.6 ms per cable, growing with the fabric; past this the report
# points at `fabgen whatif` so a large render stays quick (8k GPUs in 2 tiers still fit).
WHATIF_MAX_CABLES = 25_000


def _whatif_section(ctx: RenderContext) -> str:
    from fabgen import whatif

    if len(ctx.fabric.links) <= WHATIF_MAX_CABLES:
        engine = None
        if ctx.fabric.transport == "infiniband":
            from fabgen.targets import opensm_plan

            settings = opensm_plan.settings_from_intent(ctx.intent)
            engine = opensm_plan.routing_engines(settings, fits_ftree=opensm_plan.ftree_fits(
                ctx.fabric, 0 if ctx.fabric.planes > 1 else None)).split(",")[0]
        return whatif.report_section(ctx.fabric, engine).rstrip("\n")
    return (f"## Single failures\n\nThis fabric has {len(ctx.fabric.links):,} cables; run "
            f"`fabgen whatif INTENT --fail all-single` for the single-failure summary.")


class ReportTarget:
    """The `report` target: report.md and the report.svg it embeds."""

    name = "report"
    description = "Markdown report (BoM, oversubscription, bisection, QoS plan) and an SVG"

    def applies(self, ctx: RenderContext) -> bool:
        # Every fabric gets a report.
        del ctx
        return True

    def render(self, ctx: RenderContext) -> Artifacts:
        context = report_context(ctx.index, ctx.intent, ctx.qos,
                                 ctx.derived(cable_lengths) if ctx.qos is not None else None)
        # The validation runbook is the host target's: it knows the devices and NCCL env.
        from fabgen.targets import preflight

        if ctx.qos is None and ctx.fabric.transport == "roce":
            ctx = replace(ctx, qos=qos.plan(ctx.intent))
        context["headroom"] = headroom_report.headroom_rows(ctx)
        context["headroom_formulas"] = headroom_report.headroom_formulas(context["headroom"])
        context["runbook"] = preflight.runbook_markdown(ctx).rstrip("\n")
        context["ib_bringup"] = ""
        if ctx.fabric.transport == "infiniband":
            from fabgen.targets import sm_bringup

            context["ib"] = sm_bringup.ib_rows(ctx)
            context["ib_bringup"] = sm_bringup.bringup_markdown(ctx).rstrip("\n")
        context["whatif"] = _whatif_section(ctx)
        from fabgen.targets import howto

        context["howto"] = howto.howto_markdown(ctx)
        from fabgen.targets import balance

        context["underlay"] = balance.underlay_markdown(ctx)
        from fabgen.targets import placement  # the scheduler targets' view of the tiers

        context["placement"] = placement.report_section(ctx)
        # Every warning the render printed, as on the terminal (the plan's are the intent's),
        # then what each platform's configs cannot make whole (render facts, not intent
        # warnings).
        from fabgen.platforms.registry import outputs as platforms

        notes = [note for o in platforms.all() if o.target.applies(ctx)
                 for note in o.report_notes(ctx)]
        context["warnings"] = [*ctx.warnings, *notes]
        context["provenance"] = provenance(ctx.intent_sha256)
        return {
            "report.md": templating.render("report/report.md.j2", **context),
            "report.svg": render_svg(ctx.fabric, ctx.intent.cluster.node.gpus),
        }


def provenance(intent_sha256: str) -> str:
    """Which fabgen rendered this report from which intent: the version and the intent's
    sha256 as manifest.json records them (the hash of the intent file, line ends as LF), so
    a reviewer can tell a report of another intent or another fabgen at its first line."""
    source = (f" from the intent with sha256 `{intent_sha256}` (as in manifest.json)"
              if intent_sha256 else "")
    return f"Rendered by fabgen {__version__}{source}."


TARGET = ReportTarget()
