"""What `fabgen diff` finds: changes inside a file, files, devices, and the whole result.

A change is an operation (`+` added, `-` removed, `~` changed) at a place inside one file: a
key path (JSON, YAML, config tables, `set` paths), a section path (CLI configs), a row (a cable by
its id) or a line (scripts, env files, the report). Values are what the file holds there: a
JSON value, a config line, a row, or a block of lines.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

Op = Literal["+", "-", "~"]
Status = Literal["added", "removed", "changed", "unchanged"]
DeviceStatus = Literal["added", "removed", "changed", "replatformed"]
# How a file's changes are located and printed (one per kind of file, see kinds.py).
Style = Literal["keys", "sections", "lines", "table"]


class DiffError(RuntimeError):
    """A side cannot be read or compared (missing directory, bad revision, unparsable file)."""


@dataclass(frozen=True, slots=True)
class Change:
    op: Op
    at: tuple[str, ...]  # where in the file, outermost first
    old: Any = None  # the value before (`-`, `~`)
    new: Any = None  # the value after (`+`, `~`)
    note: str = ""  # tables: added, removed, moved, changed, renumbered, renamed


class Spool:
    """Changes kept on disk once a comparison holds many (SPOOL_AT): a temporary file, gone
    when closed, a file's changes pickled together and read back when printed. A change to
    every switch of the largest fabric (millions of changes) then costs the memory of one
    file's changes, not of all."""

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()

    def put(self, changes: list[Change]) -> tuple[int, int]:
        offset = self.file.seek(0, os.SEEK_END)
        data = pickle.dumps(changes, protocol=pickle.HIGHEST_PROTOCOL)
        self.file.write(data)
        return offset, len(data)

    def get(self, where: tuple[int, int]) -> list[Change]:
        self.file.seek(where[0])
        # Our own temporary file (unlinked, unreadable to others): trusted bytes.
        changes: list[Change] = pickle.loads(self.file.read(where[1]))
        return changes

    def close(self) -> None:
        self.file.close()


# Changes held in memory before a comparison spools them (about 500 bytes each).
SPOOL_AT = 200_000


@dataclass(slots=True)
class FileDiff:
    """One file (by path), or one device's config (comparing against backups)."""

    name: str
    kind: str  # the rule of kinds.KINDS that compared it
    style: Style
    status: Status
    held: list[Change] = field(default_factory=list)  # the changes, unless spooled
    device: str | None = None
    size: int = 0  # lines (rows of a table) of an added or removed file
    count: int = -1  # changes (set from `held`)
    spooled: tuple[int, int] | None = None
    spool: Spool | None = None

    def __post_init__(self) -> None:
        if self.count < 0:
            self.count = len(self.held)

    @property
    def changes(self) -> list[Change]:
        """The changes, read back from the spool when there (read each once: it costs)."""
        if self.spooled is None or self.spool is None:
            return self.held
        return self.spool.get(self.spooled)

    def spool_to(self, spool: Spool) -> None:
        self.spooled, self.spool, self.held = spool.put(self.held), spool, []


@dataclass(slots=True)
class Device:
    """A switch or host with at least one changed file, and what its files say about it."""

    name: str
    role: str  # leaf, spine, core, host, subnet manager, or "" when no side says
    old_os: str | None  # the platform its files are under (a registered name); None: absent
    new_os: str | None
    status: DeviceStatus
    files: list[str] = field(default_factory=list)

    @property
    def os(self) -> str:
        if self.status == "replatformed":
            return f"{self.old_os} → {self.new_os}"
        return self.new_os or self.old_os or ""


@dataclass(slots=True)
class CableCount:
    """Cables of the cable tables (cabling/*.csv) by what happened to them."""

    added: int = 0
    removed: int = 0
    moved: int = 0  # one end kept, the other on another port
    changed: int = 0  # both ends kept, another column (speed, length, address) changed
    renumbered: int = 0  # both ends and every column kept, another id
    # Both ends in the same cage (device and panel label kept), a port name changed: a
    # switch's OS names its ports another way (Ethernet0 -> swp1s0); nothing to re-cable.
    renamed: int = 0

    def total(self) -> int:
        return (self.added + self.removed + self.moved + self.changed + self.renumbered
                + self.renamed)

    def as_dict(self) -> dict[str, int]:
        return {"added": self.added, "removed": self.removed, "moved": self.moved,
                "changed": self.changed, "renumbered": self.renumbered,
                "renamed": self.renamed}


@dataclass(slots=True)
class DiffResult:
    old: str
    new: str
    by: Literal["path", "device"]
    files: list[FileDiff]  # every file that is not unchanged, in natural order of name
    unchanged: int
    devices: list[Device]
    cables: CableCount
    notes: list[str] = field(default_factory=list)  # fabgen version or intent of each side
    spool: Spool | None = None

    def close(self) -> None:
        if self.spool is not None:
            self.spool.close()

    @property
    def change_count(self) -> int:
        return sum(f.count for f in self.files)

    @property
    def changed(self) -> bool:
        return bool(self.files)

    def count(self, status: Status) -> int:
        if status == "unchanged":
            return self.unchanged
        return sum(1 for f in self.files if f.status == status)

    def device_counts(self) -> Counter[tuple[str, str, DeviceStatus]]:
        """(role, os, status) -> devices."""
        return Counter((d.role, d.os, d.status) for d in self.devices)
