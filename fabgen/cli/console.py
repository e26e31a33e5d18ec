"""What the user sees and what the shell gets: the console (colour on a terminal only), exit
codes, one-line errors, a reader that goes away."""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Sequence
from typing import TextIO

from fabgen.errors import Diagnostic
from fabgen.errors import one_line as escaped

# One table for every command. 2 means "changes" (`fabgen diff`, as terraform plan
# -detailed-exitcode) and nothing else, so a usage error (a mistyped flag) is 1 like any other
# error, never something a CI gate could read as changes.
EXIT_OK = 0
EXIT_INVALID = 1  # invalid input, a failed check, or any other error
EXIT_USAGE = 1  # a usage error is an error: argparse's own 2 is remapped (parser.Parser)
EXIT_CHANGES = 2  # `fabgen diff` only: the two sides differ
EXIT_BUG = 3  # fabgen's own bug (never an input error: those are exit 1 with file:line:col)
EXIT_CODES = """exit codes (every command): 0 ok (diff: no changes), 1 error: invalid input, a
failed check or a usage error, 2 changes (diff only), 3 internal error (a bug in fabgen)"""
EXIT_PIPE = 128 + 13  # stdout closed early (`| head`): what a shell reports for git or grep


class UsageError(Exception):
    """The command line cannot be carried out as given (exit 1, as every usage error); the
    message says what to do."""


class Console:
    """stderr/stdout with colour only on a terminal (and never with NO_COLOR)."""

    def __init__(self, quiet: bool = False, color: bool | None = None) -> None:
        self.quiet = quiet
        if color is None:
            color = sys.stderr.isatty() and "NO_COLOR" not in os.environ
        self.color = color

    def _paint(self, text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.color else text

    def diagnostic(self, diag: Diagnostic) -> None:
        if self.quiet and diag.severity == "warning":  # -q: errors only
            return
        code = "33" if diag.severity == "warning" else "31"
        print(self._paint(diag.render(), code), file=sys.stderr)

    def diagnostics(self, diags: Sequence[Diagnostic]) -> None:
        for diag in diags:
            self.diagnostic(diag)

    def info(self, text: str, stream: TextIO | None = None) -> None:
        if not self.quiet:
            print(text, file=stream or sys.stdout)

    def error(self, text: str) -> None:
        # Messages echo user text (a path, a device name from a sheet): one error, one line.
        print(self._paint(f"error: {escaped(text)}", "31"), file=sys.stderr)


def one_line(text: str, limit: int = 500) -> str:
    """An exception's text as one readable line, however long or multi-line: its own line
    breaks become spaces (a traceback-like message reads on), any control left is escaped."""
    text = escaped(re.sub(r"[ \t\r\n]+", " ", text).strip())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def print_through(text: str) -> None:
    """print() for a push: a reader that goes away (`| head`) must not stop a rollout halfway,
    so a closed stdout is dropped and the push goes on."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        closed_stdout()


def closed_stdout() -> int:
    """The reader went away (`fabgen whatif ... | head`): stop quietly, as git and grep do.

    stdout is pointed at /dev/null so the interpreter's final flush cannot fail again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return EXIT_PIPE
