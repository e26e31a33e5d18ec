"""NVUE's rows of the report's PFC headroom table: Cumulus sizes headroom itself from the PFC
profiles' `cable-length` (target.pfc_cable_lengths), so the rows state the lengths given."""

from __future__ import annotations

from fabgen.platforms.common.headroom import CLASS, cable_cell
from fabgen.platforms.nvue.target import measured_profile, pfc_cable_lengths
from fabgen.qos import QosPlan
from fabgen.targets.base import RenderContext
from fabgen.targets.cable_lengths import cable_lengths
from fabgen.topology.model import Switch

__all__ = ["headroom_rows"]


def headroom_rows(ctx: RenderContext, switches: list[Switch],
                  plan: QosPlan) -> list[dict[str, str]]:
    """The rows of one group of NVUE switches: the cable-length each port's PFC profile
    gives Cumulus, which sizes the headroom itself."""
    lengths = ctx.derived(cable_lengths)
    found: dict[tuple[int, int, str], dict[str, str]] = {}
    for switch in switches:
        default, own = pfc_cable_lengths(ctx, switch)
        ports = ctx.index.ports(switch)
        cables = [(p.kind, lengths.link_m(p.link), own.get(p.name)) for p in ports] or [
            ("leaf-spine", plan.cable_m("leaf-spine"), None)]
        for kind, metres, profile_m in cables:
            if profile_m is None:
                inputs = f"cable-length {default} m (longest class on this switch)"
            else:
                inputs = (f"cable-length {profile_m} m (PFC profile "
                          f"{measured_profile(profile_m)} of its own)")
            key = (list(CLASS).index(kind), metres, inputs)
            found.setdefault(key, {
                "platform": "Cumulus NVUE", "switch": f"{switch.role} {switch.model}",
                "class": CLASS[kind], "speed": f"{switch.speed_gbps}G",
                "cable": cable_cell(plan, kind, metres), "model": "Cumulus (qos pfc cable-length)",
                "inputs": inputs, "formula": "Cumulus internal, not published",
                "result": "computed on the switch", "vendor": "-",
                "status": "computed on the switch"})
    return [found[key] for key in sorted(found)]
