"""The diff as text for a terminal or a log: the summary line first, then each platform
change, then each file with its changes, grouped by where they are."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

from fabgen.diff.kinds import BY_NAME
from fabgen.diff.model import Change, Device, DiffResult, FileDiff
from fabgen.diff.tables import describe

ARROW = "→"


def format_at(kind: str, at: tuple[str, ...]) -> str:
    """A place in a file as its platform writes it."""
    style = BY_NAME[kind].at
    if not at:
        return "(top level)" if style in ("sections", "lines") else "(whole file)"
    if style == "table-key" and len(at) >= 2:
        return f"{at[0]}|{at[1]}" + "".join(_dotted(at[2:]))
    if style == "set-path":
        # `set` paths: the list items of the file (`- set:`) are not part of them.
        return " ".join(p for p in at if not p.startswith("["))
    if style == "sections":
        return " > ".join(at)
    if style == "lines" or (style == "table" and len(at) == 1):
        return " ".join(at)
    head = ""
    if at[0].startswith("{"):
        head, at = at[0].strip("{}") + ": ", at[1:]
    return head + "".join(_dotted(at)).lstrip(".")


def _dotted(parts: tuple[str, ...]) -> Iterator[str]:
    for p in parts:
        yield p if p.startswith("[") else f".{p}"


def value_text(kind: str, value: Any) -> str:
    style = BY_NAME[kind].style
    if style in ("keys", "table"):  # a table's rows are described, its other keys are JSON
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def change_lines(f: FileDiff, change: Change) -> list[tuple[str, str]]:
    """(op, text) lines of one change, without its place (sections, lines) or with it."""
    kind = BY_NAME[f.kind]
    if kind.style == "table" and change.note:
        assert kind.table is not None
        return [(change.op, f"{change.at[0]} {change.note}: {describe(change, kind.table)}")]
    if kind.style in ("sections", "lines"):
        out: list[tuple[str, str]] = []
        if change.op != "+":
            out.extend(("-", line) for line in str(change.old).split("\n"))
        if change.op != "-":
            out.extend(("+", line) for line in str(change.new).split("\n"))
        return out
    where = format_at(f.kind, change.at)
    if change.op == "~":
        return [("~", f"{where}: {value_text(f.kind, change.old)} {ARROW} "
                      f"{value_text(f.kind, change.new)}")]
    value = change.new if change.op == "+" else change.old
    return [(change.op, f"{where}: {value_text(f.kind, value)}")]


def file_body(f: FileDiff, changes: list[Change] | None = None
              ) -> Iterator[tuple[str, str]]:
    """(op, text) lines of a file's changes (or of `changes` of it); op "@" heads the
    changes at one place."""
    placed = BY_NAME[f.kind].style in ("sections", "lines")
    last: tuple[str, ...] | None = None
    for change in f.changes if changes is None else changes:
        if placed and change.at != last and not (change.note):
            last = change.at
            yield "@", format_at(f.kind, change.at)
        yield from change_lines(f, change)


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


PLURALS = {"leaf": "leaves", "switch": "switches"}


def roles(role: str) -> str:
    """`leaves`, `spines`, `subnet managers`, `devices` (no role known)."""
    role = role or "device"
    return PLURALS.get(role, role + "s")


def role_count(n: int, role: str) -> str:
    """`1 leaf`, `126 leaves`, `4 subnet managers`."""
    return f"{n:,} {(role or 'device') if n == 1 else roles(role)}"


def device_phrase(devices: list[Device]) -> str:
    """`8 leaves (<platform>), 4 spines (<old> → <new>), 32 hosts`."""
    counts = Counter((d.role, d.os) for d in devices)
    return ", ".join(f"{role_count(n, role)}{f' ({os})' if os else ''}"
                     for (role, os), n in sorted(counts.items(), key=lambda x: (-x[1], x[0])))


def summary_line(result: DiffResult) -> str:
    what = "files" if result.by == "path" else "devices' configs"
    parts = [f"{what}: {result.count('added')} added, {result.count('removed')} removed, "
             f"{result.count('changed')} changed, {result.count('unchanged')} unchanged"]
    if result.devices:
        by: dict[str, list[Device]] = {}
        for d in result.devices:
            by.setdefault(d.status, []).append(d)
        parts.append("devices: " + ", ".join(
            f"{len(ds)} {status} ({device_phrase(ds)})"
            for status in ("replatformed", "added", "removed", "changed")
            if (ds := by.get(status))))
    if result.by == "path":
        counts = {k: v for k, v in result.cables.as_dict().items() if v}
        parts.append("cables: " + (", ".join(f"{v:,} {k}" for k, v in counts.items())
                                   if counts else "none changed"))
    parts.append(plural(result.change_count, "change"))
    if result.notes:
        parts.append("; ".join(result.notes))
    return "; ".join(parts)


def text_lines(result: DiffResult, color: bool = False) -> Iterator[str]:
    """The text a line at a time (a file's changes read back from the spool one file at a
    time), the summary line first."""
    def paint(op: str, line: str) -> str:
        code = {"+": "32", "-": "31", "~": "33", "@": "36", "=": "1"}.get(op)
        return f"\033[{code}m{line}\033[0m" if color and code else line

    yield summary_line(result)
    folded = {d.name for d in result.devices if d.status == "replatformed"}
    for d in result.devices:
        if d.status == "replatformed":
            yield paint("=", f"== {d.name}: {d.os}" + (f" ({d.role})" if d.role else ""))
            for f in result.files:
                if f.device == d.name:
                    yield f"   {f.status}: {f.name}"
    roles = {d.name: d for d in result.devices}
    twins = {f.name.removesuffix(".csv") + ".json": f for f in result.files
             if f.kind == "cables" and f.status == "changed"}
    for f in result.files:
        if f.device in folded and f.status != "changed":
            continue
        who = ""
        if f.device:
            known = roles.get(f.device)
            about = ", ".join(x for x in (known.role, known.os) if x) if known else ""
            if result.by == "path":  # the path does not always say which device
                who = f" [{f.device}{': ' + about if about else ''}]"
            elif about:
                who = f" [{about}]"
        if f.status in ("added", "removed"):
            unit = "row" if BY_NAME[f.kind].style == "table" else "line"
            yield paint("=", f"== {f.name}{who}: {f.status} ({plural(f.size, unit)})")
            continue
        yield paint("=", f"== {f.name}{who}: changed, {plural(f.count, 'change')}")
        changes = f.changes
        if f.kind == "cables-json" and (twin := twins.get(f.name)):
            # cabling.json holds the rows of cabling.csv: said once, there.
            rows = sum(1 for c in changes if c.note)
            yield f"  ({plural(rows, 'cable row')} as in {twin.name} above)"
            changes = [c for c in changes if not c.note]
        for op, line in file_body(f, changes):
            prefix = "  " if op == "@" else f"  {op} "
            yield paint(op, prefix + line)


def format_text(result: DiffResult, color: bool = False) -> str:
    return "".join(line + "\n" for line in text_lines(result, color))
