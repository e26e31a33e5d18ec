"""The registered platforms' load-time rules (contract/checks.py), run for a RoCE intent on
every platform it uses, in output order."""

from __future__ import annotations

from fabgen.errors import Diagnostics
from fabgen.intent.models import Intent
from fabgen.platforms.contract.checks import Checks
from fabgen.platforms.eos import checks as eos
from fabgen.platforms.nvue import checks as nvue
from fabgen.platforms.registry import facts
from fabgen.platforms.sonic import checks as sonic
from fabgen.qos import used_platforms

__all__ = ["CHECKS", "check"]

CHECKS: dict[str, Checks] = {c.name: c for c in (sonic.CHECKS, eos.CHECKS, nvue.CHECKS)}


def check(intent: Intent, diags: Diagnostics) -> None:
    """Every used platform's own rules (a RoCE intent's; InfiniBand has no switch OS here)."""
    if intent.fabric.transport != "roce":
        return
    used = set(used_platforms(intent).values())
    for name in facts.names():
        rules = CHECKS.get(name)
        if name in used and rules is not None:
            rules.check_intent(intent, diags)
