"""The registered platforms' outputs (contract/outputs.py), in output order: the order their
switch configs, day-two files, alert groups and report lines are written in."""

from __future__ import annotations

from fabgen.platforms.contract.outputs import Outputs
from fabgen.platforms.eos import outputs as eos
from fabgen.platforms.junos import outputs as junos
from fabgen.platforms.nvue import outputs as nvue
from fabgen.platforms.sonic import outputs as sonic

__all__ = ["PLATFORMS", "all", "get", "names"]

PLATFORMS: tuple[Outputs, ...] = (sonic.OUTPUTS, eos.OUTPUTS, nvue.OUTPUTS, junos.OUTPUTS)


def all() -> tuple[Outputs, ...]:
    """Every registered platform's outputs, in output order."""
    return PLATFORMS


def names() -> tuple[str, ...]:
    return tuple(o.facts.name for o in PLATFORMS)


def get(name: str) -> Outputs:
    """A platform's outputs; KeyError naming the platform when it is not registered."""
    for outputs in PLATFORMS:
        if outputs.facts.name == name:
            return outputs
    raise KeyError(f"no platform {name!r} is registered (known: {', '.join(names())})")
