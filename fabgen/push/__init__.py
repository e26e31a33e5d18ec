"""`fabgen push`: send rendered switch configs to the devices, dry run by default.

    report = push.run(PushOptions(intent=..., hosts=...), print)
    sys.exit(report.exit_code)

The run itself is rollout.py; the platforms' drivers are their own (fabgen/platforms/<os>/
push/), asked through registry/push.py. This package's `__init__` hands out the run's names on
first use (PEP 562) and imports nothing: a platform's driver imports push.drivers.base, which
runs this file first, and the run imports the platforms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fabgen.push.credentials import Credentials
    from fabgen.push.results import DeviceReport, PushReport
    from fabgen.push.rollout import PushOptions, run

__all__ = ["Credentials", "DeviceReport", "PushOptions", "PushReport", "run"]


def __getattr__(name: str) -> Any:
    if name in ("PushOptions", "run"):
        from fabgen.push import rollout

        return getattr(rollout, name)
    if name == "Credentials":
        from fabgen.push import credentials

        return credentials.Credentials
    if name in ("DeviceReport", "PushReport"):
        from fabgen.push import results

        return getattr(results, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
