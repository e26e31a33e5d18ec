"""The intent: models of the input file, loading with positions, semantic checks.

`load` and `LoadedIntent` are imported on first use, not here. Checking an intent asks
topology (does it fit?) and qos (is the plan consistent?), which sit above the models; and this
file runs whenever any `fabgen.intent.*` module is imported, topology's imports of the models
included. Importing the loader here would make that a circle (docs/architecture.md, layers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fabgen.intent.models import Intent

if TYPE_CHECKING:
    from fabgen.intent.loader import LoadedIntent, load

__all__ = ["Intent", "LoadedIntent", "load"]


def __getattr__(name: str) -> Any:
    if name in ("LoadedIntent", "load"):
        from fabgen.intent import loader

        return getattr(loader, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
