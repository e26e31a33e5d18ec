"""Slurm hostlist expressions: `gpu[0001-0032,0065]` for a list of names, and back.

Slurm's parser (src/common/hostlist.c) reads `prefix[lo-hi,...]` where the digits of `lo` set the
zero-padded width of every number of the range. Names are grouped by their prefix and by the width
of their trailing number, so a range never needs a width its names do not have: `node9,node10`
becomes `node9,node10` (two groups), never `node[9-10]` written from padded names. A name without
a trailing number stands alone. Correct first, short second: a 16,384-node SU list stays one range.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["compress", "expand"]

_TAIL = re.compile(r"^(.*?)(\d+)$")
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def compress(names: Iterable[str]) -> str:
    """A hostlist expression naming exactly `names` (duplicates dropped), groups in order of first
    appearance, numbers ascending within a group."""
    groups: dict[tuple[str, int], list[int]] = {}
    plain: dict[str, None] = {}
    order: list[tuple[str, int] | str] = []
    for name in names:
        if any(c in name for c in "[],"):
            raise ValueError(f"{name!r} cannot be written in a Slurm hostlist")
        m = _TAIL.match(name)
        if m is None:
            if name not in plain:
                plain[name] = None
                order.append(name)
            continue
        key = (m.group(1), len(m.group(2)))
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(int(m.group(2)))
    parts: list[str] = []
    for item in order:
        if isinstance(item, str):
            parts.append(item)
            continue
        prefix, width = item
        numbers = sorted(set(groups[item]))
        ranges: list[str] = []
        start = prev = numbers[0]
        for n in [*numbers[1:], None]:
            if n is not None and n == prev + 1:
                prev = n
                continue
            ranges.append(f"{start:0{width}d}" if start == prev
                          else f"{start:0{width}d}-{prev:0{width}d}")
            if n is not None:
                start = prev = n
        if len(numbers) == 1:
            parts.append(f"{prefix}{numbers[0]:0{width}d}")
        else:
            parts.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join(parts)


def _split_top(expr: str) -> list[str]:
    """Split on commas outside brackets."""
    parts: list[str] = []
    depth = 0
    current = ""
    for c in expr:
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += c
    if current:
        parts.append(current)
    return parts


def expand(expr: str) -> list[str]:
    """The names of a hostlist expression with one bracket per name (what compress writes, and
    what `scontrol show topology` prints), in order."""
    out: list[str] = []
    for part in _split_top(expr):
        if "[" not in part:
            out.append(part)
            continue
        prefix, _, rest = part.partition("[")
        body, _, suffix = rest.partition("]")
        for piece in body.split(","):
            m = _RANGE.match(piece)
            if m is None:
                raise ValueError(f"bad range {piece!r} in {expr!r}")
            lo, hi = m.group(1), m.group(2) or m.group(1)
            width = len(lo)
            out.extend(f"{prefix}{n:0{width}d}{suffix}" for n in range(int(lo), int(hi) + 1))
    return out
