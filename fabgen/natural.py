"""Natural order of names: `Ethernet2` before `Ethernet10`, digit runs compared as numbers."""

from __future__ import annotations

import re

__all__ = ["natural_key"]

_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders `Ethernet2` before `Ethernet10` (digit runs compare as numbers)."""
    return tuple((0, int(part)) if part.isdigit() else (1, part)
                 for part in _DIGITS.split(text) if part)
