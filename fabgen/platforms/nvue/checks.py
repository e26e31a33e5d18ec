"""NVUE's load-time rules: adaptive routing only where Cumulus has it."""

from __future__ import annotations

from fabgen import underlay
from fabgen.errors import Diagnostics
from fabgen.intent.models import Intent
from fabgen.platforms.contract.checks import Checks
from fabgen.platforms.nvue.facts import ADAPTIVE_MODELS, ADAPTIVE_SPEEDS, FACTS
from fabgen.topology import sizing

__all__ = ["CHECKS", "NvueChecks"]


class NvueChecks(Checks):
    name = FACTS.name

    def check_intent(self, intent: Intent, diags: Diagnostics) -> None:
        if intent.load_balancing.mode != "adaptive":
            return
        try:
            shape = sizing.shape(intent)
        except sizing.SizingError:
            return  # the sizing check reports it
        roles = underlay.tiers_in_use(intent) or {}
        for role in sorted(r for r, p in roles.items() if p == self.name):
            kind = shape.leaf if role == "leaf" else shape.spine if role == "spine" else \
                shape.core
            model = kind.model if kind is not None else None
            if model not in ADAPTIVE_MODELS or shape.speed_gbps not in ADAPTIVE_SPEEDS:
                diags.error(f"Cumulus adaptive routing needs Spectrum-4 switches at 200G or 400G; "
                            f"the {role}s are {model or 'custom'} at {shape.speed_gbps}G",
                            ("load_balancing", "mode"), "use mode: hash")


CHECKS = NvueChecks()
