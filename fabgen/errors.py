"""Diagnostics: one error/warning type carrying the intent field, its position and a hint."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

Severity = Literal["error", "warning"]
Loc = tuple[str | int, ...]


# Unicode categories that break a line or hide what it says: controls (C0, DEL, C1 with NEL
# U+0085), format characters (bidi overrides, zero-width), line and paragraph separators
# (U+2028, U+2029), surrogates.
_UNSHOWN = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def one_line(text: str) -> str:
    """`text` as one line, whatever a user value in it holds: each line break or control
    character is shown as its Python escape (\\n, \\x85, \\u2028, \\x1b), so one error
    is one line, starting with its file name, in a terminal, a CI log or an editor."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(repr(c)[1:-1] if unicodedata.category(c) in _UNSHOWN else c for c in text)


def format_loc(loc: Loc) -> str:
    """Render a pydantic-style location as a dotted field path: `topology.leaf.model`, `x[2].y`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding about the input, blamed on the field that owns it."""

    message: str
    loc: Loc = ()
    severity: Severity = "error"
    file: str | None = None
    line: int | None = None  # 1-based
    col: int | None = None  # 1-based
    hint: str | None = None

    def render(self) -> str:
        where = ""
        if self.file is not None:
            where = self.file
            if self.line is not None:
                where += f":{self.line}"
                if self.col is not None:
                    where += f":{self.col}"
            where += ": "
        sev = "warning: " if self.severity == "warning" else ""
        path = f"{format_loc(self.loc)}: " if self.loc else ""
        text = f"{where}{sev}{path}{self.message}"
        if self.hint:
            text += f" ({self.hint})"
        return one_line(text)

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.file or "", self.line or 0, self.col or 0, self.message)


@dataclass(slots=True)
class Diagnostics:
    """Collector passed explicitly through a stage; checked at the stage barrier."""

    items: list[Diagnostic] = field(default_factory=list)

    def error(self, message: str, loc: Loc = (), hint: str | None = None) -> None:
        self.items.append(Diagnostic(message, loc, "error", hint=hint))

    def warn(self, message: str, loc: Loc = (), hint: str | None = None) -> None:
        self.items.append(Diagnostic(message, loc, "warning", hint=hint))

    def extend(self, other: Iterable[Diagnostic]) -> None:
        self.items.extend(other)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.items if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.items if d.severity == "warning"]


class FabgenError(Exception):
    """Raised at a stage barrier: carries every diagnostic of the stage, sorted by position."""

    def __init__(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics = sorted(diagnostics, key=Diagnostic.sort_key)
        super().__init__("\n".join(d.render() for d in self.diagnostics))

    def __reduce__(self) -> tuple[type[FabgenError], tuple[list[Diagnostic]]]:
        # Rebuilt from the diagnostics, not the message: a `--jobs` worker's error is
        # pickled to the parent, which reports it like an in-process one.
        return (type(self), (self.diagnostics,))

    @classmethod
    def single(cls, message: str, file: str | None = None, line: int | None = None,
               col: int | None = None, loc: Loc = ()) -> FabgenError:
        return cls([Diagnostic(message, loc, "error", file, line, col)])
