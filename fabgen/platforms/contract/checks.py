"""A platform's load-time rules: what the generic MTU, watchdog, ECMP and hash checks (qos.check,
underlay.check) cannot know about one OS, refused or warned about at load time and blamed on
the intent's fields, like every other intent error.

The registry (registry/checks.py) calls them from the semantic checks, for every platform the
intent uses, after qos.check and underlay.check; the loader sorts every diagnostic by its place
in the file, so the order of the calls changes no message.
"""

from __future__ import annotations

from fabgen.errors import Diagnostics
from fabgen.intent.models import Intent

__all__ = ["Checks"]


class Checks:
    """One platform's rules. A platform without rules of its own needs no `checks.py`."""

    name: str
    """The platform's name (its facts' `name`)."""

    def check_intent(self, intent: Intent, diags: Diagnostics) -> None:
        """Append this OS's errors and warnings about a RoCE intent that uses it."""
        raise NotImplementedError
