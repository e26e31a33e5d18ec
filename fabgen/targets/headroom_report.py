"""The report's PFC headroom table: per platform, switch model and port class, what headroom
the switch gets, from which inputs and formula, and the vendor's published value beside it.

Rows are computed by each platform from the same code its switch configs are rendered with
(its `headroom_rows`), so the report cannot claim sizing the configs do not have: every row
says whether the value is the vendor's, computed on the switch, or not sized at all. A
platform without rows of its own gets NOT SIZED rows.
"""

from __future__ import annotations

from fabgen.platforms.common import headroom as cells
from fabgen.platforms.registry import outputs as platforms
from fabgen.qos import QosPlan
from fabgen.targets.base import RenderContext
from fabgen.targets.cable_lengths import CableLengths, cable_lengths
from fabgen.topology.model import Switch

__all__ = ["headroom_formulas", "headroom_notes", "headroom_rows"]


def _representatives(ctx: RenderContext) -> list[list[Switch]]:
    """Per (platform, role, model, split) the switches whose headroom the table must show:
    the first (they all get the same headroom from the class lengths), and every switch with
    a measured cable, whose ports may need another row."""
    lengths = ctx.derived(cable_lengths)
    seen: dict[tuple[str, str, str, int], list[Switch]] = {}
    for switch in ctx.fabric.switches:
        key = (switch.platform, switch.role, switch.model, switch.breakout)
        if key not in seen:
            seen[key] = [switch]
        elif lengths.device_key(switch.name):
            seen[key].append(switch)
    return list(seen.values())


def _unmodelled_rows(ctx: RenderContext, switches: list[Switch],
                     plan: QosPlan) -> list[dict[str, str]]:
    """A platform without a headroom statement of its own (one added by the platform recipe
    before its buffer story is written): the report says so instead of implying sizing."""
    switch = switches[0]
    return [{"platform": switch.platform, "switch": f"{switch.role} {switch.model}",
             "class": cells.CLASS[k], "speed": f"{switch.speed_gbps}G",
             "cable": cells.cable_cell(plan, k, m), "model": "none", "inputs": "-",
             "formula": f"fabgen has no headroom model for {switch.platform}",
             "result": "platform default", "vendor": "-", "status": "NOT SIZED"}
            for k, m in cells.lengths(ctx, switches)]


def headroom_rows(ctx: RenderContext) -> list[dict[str, str]]:
    plan = ctx.qos
    if plan is None:
        return []
    rows: list[dict[str, str]] = []
    for switches in _representatives(ctx):
        platform = switches[0].platform
        own = platforms.get(platform).headroom_rows(ctx, switches, plan)
        rows.extend(own if own is not None else _unmodelled_rows(ctx, switches, plan))
    return rows


def headroom_formulas(rows: list[dict[str, str]]) -> list[str]:
    """The formulas the table's rows refer to, printed once under it (each platform's)."""
    return [line for outputs in platforms.all() for line in outputs.headroom_footnotes(rows)]


def headroom_notes(plan: QosPlan, measured: CableLengths | None = None) -> list[str]:
    lengths = [f"hosts {plan.cable_length_m} m (also the NICs' mlnx_qos --cable_len)",
               f"leaf-spine {plan.fabric_cable_length_m} m"]
    if plan.core_cable_length_m is not None:
        lengths.append(f"spine-core {plan.core_cable_length_m} m")
    notes = ["PFC headroom cable lengths: " + ", ".join(lengths)]
    if measured is not None and measured.by_link:
        sources = sorted({m.source.rsplit(":", 1)[0] if ":" in m.source else "qos.cable_lengths"
                          for m in measured.by_link.values()})
        longer = sum(1 for m in measured.by_link.values() if m.metres > m.class_m)
        notes.append(f"Measured cable lengths: {len(measured.by_link)} cables "
                     f"({', '.join(sources)}) replace their class's length on both ends, "
                     f"{longer} of them longer than it (more headroom on those ports)")
    if plan.cable_defaults:
        notes.append("Default (not measured) cable lengths: "
                     + ", ".join(f"qos.{f}" for f in plan.cable_defaults))
    return notes
