"""A pager for long text on a terminal, as git does: $FABGEN_PAGER, else $PAGER, else
`less` with LESS=FRX (quit when the text fits one screen, keep colours, leave the screen as
it was) unless LESS is set; off when stdout is not a terminal, with --no-pager, or with a
pager of "" or "cat"."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable


def command() -> str | None:
    """The pager to run, or None for none."""
    chosen = os.environ.get("FABGEN_PAGER", os.environ.get("PAGER"))
    if chosen is None:
        return "less" if shutil.which("less") else None
    chosen = chosen.strip()
    return None if chosen in ("", "cat") else chosen


def wanted(no_pager: bool) -> bool:
    return not no_pager and sys.stdout.isatty() and command() is not None


def page(lines: Iterable[str]) -> None:
    """Show `lines` through the pager, as they come (or print them when it cannot start)."""
    pager = command()
    if pager is None:
        for line in lines:
            sys.stdout.write(line + "\n")
        return
    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    sys.stdout.flush()
    try:
        # Through the shell, as git runs core.pager: PAGER may carry options ("less -S").
        proc = subprocess.Popen(pager, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:
        for line in lines:
            sys.stdout.write(line + "\n")
        return
    assert proc.stdin is not None
    with contextlib.suppress(BrokenPipeError):  # the reader quit the pager early
        for line in lines:
            proc.stdin.write((line + "\n").encode("utf-8"))
    with contextlib.suppress(BrokenPipeError):
        proc.stdin.close()
    proc.wait()
