"""The registered platforms' facts, and the names the intent accepts.

The only module of the bottom layers that imports a platform's folder. Two orders:
`PLATFORMS` is the output order (render targets, alert groups, report sentences), and
`INTENT_NAMES` the order of the intent's `platforms` enum, frozen by the published JSON Schema
and README reference: a new platform is appended to both.
"""

from __future__ import annotations

from fabgen.platforms.contract.facts import Facts
from fabgen.platforms.eos import facts as eos
from fabgen.platforms.junos import facts as junos
from fabgen.platforms.nvue import facts as nvue
from fabgen.platforms.sonic import facts as sonic

__all__ = ["DEFAULT", "INTENT_NAMES", "PLATFORMS", "all", "get", "names"]

PLATFORMS: tuple[Facts, ...] = (sonic.FACTS, eos.FACTS, nvue.FACTS, junos.FACTS)
INTENT_NAMES: tuple[str, ...] = ("sonic", "nvue", "eos", "junos")
DEFAULT = "sonic"  # platforms.leaf when the intent names none


def all() -> tuple[Facts, ...]:
    """Every registered platform's facts, in output order."""
    return PLATFORMS


def names() -> tuple[str, ...]:
    """The registered names, in output order."""
    return tuple(f.name for f in PLATFORMS)


def get(name: str) -> Facts:
    """A platform's facts; KeyError naming the platform when it is not registered."""
    for facts in PLATFORMS:
        if facts.name == name:
            return facts
    raise KeyError(f"no platform {name!r} is registered (known: {', '.join(names())})")
