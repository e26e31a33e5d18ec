"""Pieces the hostile-input tests share: the YAML alias bomb and a guard that turns a hang
into a failure."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

# Billion laughs: 9 levels of 10 aliases, a few hundred bytes expanding to 10^9 values.
ALIAS_BOMB = "x: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 9))


@contextmanager
def hang_guard(seconds: int, why: str) -> Iterator[None]:
    """Raise TimeoutError(why) if the block has not ended after `seconds` (SIGALRM: the main
    thread only, which is where pytest runs a test)."""
    def hung(*_: object) -> None:
        raise TimeoutError(why)

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
