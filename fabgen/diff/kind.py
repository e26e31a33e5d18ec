"""One kind of file fabgen writes, as `fabgen diff` compares it: its name, the paths it is
found at, how it is compared and how a place in it is printed. The kinds themselves are in
kinds.py (the core's) and in each platform's push face (its device configs)."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from fabgen.diff.model import Change, Style
from fabgen.diff.sections import Locator, line_locator
from fabgen.diff.tables import TableSpec

__all__ = ["AtStyle", "BackupCompare", "Format", "Kind", "kind", "path_parts"]

Format = Literal["json", "yaml", "text"]
# How a place in the file is printed: key paths with dots, `TABLE|key` then fields
# (table-key, a JSON file of keyed rows per table), `set a b c` paths (set-path, a tree of
# `set` operations), section paths, line numbers, row ids.
AtStyle = Literal["dots", "table-key", "set-path", "sections", "lines", "table"]

# A backup against the render (or two backups): (backup text, render text, where each is
# shown, compare only what fabgen owns, the backup is the old side) -> the changes.
BackupCompare = Callable[[str, str, tuple[str, str], bool, bool], list[Change]]


@dataclass(frozen=True, slots=True)
class Kind:
    name: str
    patterns: tuple[str, ...]
    style: Style
    fmt: Format
    what: str  # what the file is, for the README's table
    at: AtStyle = "dots"
    os: str | None = None  # the platform of the device the file configures
    role: str | None = None  # the role of that device when the path says it (hosts)
    device: bool = False  # the first `*` of the pattern names a device
    table: TableSpec | None = None
    locate: Locator = line_locator
    # sections: "!" or "#" (indented config with that comment mark), "blocks" (ibnetdiscover)
    parser: str = "!"
    generic: bool = False  # a fallback: no rule names this file
    # A device backup (Oxidized, RANCID: the running config) holds this file; when False, a
    # backup that lacks it is no drift (a file only the device's own tools read).
    backed_up: bool = True
    # How a backup of this kind is compared with the render on what fabgen owns (a platform's
    # device configs: fabgen/platforms/<os>/push/backup.py); None: as two renders are.
    backup: BackupCompare | None = None

    def matches(self, parts: tuple[str, ...]) -> bool:
        return any(_match(p, parts) for p in self.patterns)

    def device_of(self, path: str) -> str | None:
        if not self.device:
            return None
        parts = path_parts(path)
        for pattern in self.patterns:
            pat = pattern.split("/")
            if _match(pattern, parts):
                i = next(i for i, p in enumerate(pat) if "*" in p)
                return parts[i] if pat[i] == "*" else PurePosixPath(parts[i]).stem
        return None


def path_parts(path: str) -> tuple[str, ...]:
    return tuple(p for p in path.split("/") if not re.fullmatch(r"plane\d+", p))


def _match(pattern: str, parts: tuple[str, ...]) -> bool:
    pat = pattern.split("/")
    return len(pat) == len(parts) and all(fnmatch.fnmatchcase(x, p)
                                          for x, p in zip(parts, pat, strict=True))


def kind(name: str, patterns: str, style: Style, fmt: Format, what: str, **kw: object) -> Kind:
    return Kind(name, tuple(patterns.split()), style, fmt, what, **kw)  # type: ignore[arg-type]
