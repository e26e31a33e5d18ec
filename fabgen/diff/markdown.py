"""`fabgen diff --format markdown`: a pull-request comment.

What a reviewer reads first comes first: the summary (devices by role and platform, files,
cables), platform changes, then each change made identically in several places once, with
where ("8 leaves (<os>), 128 places each: interface Ethernet*/* > uc-tx-queue 3"), then cables,
then
each file's remaining changes folded in `<details>`. The comment is cut to `limit` characters
(a GitHub comment holds 65,536) between whole items, and then says what it left out and where
the full diff is.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from fabgen.diff.kinds import BY_NAME
from fabgen.diff.model import Change, Device, DiffResult, FileDiff
from fabgen.diff.tables import describe
from fabgen.diff.text import (
    device_phrase,
    file_body,
    format_at,
    plural,
    roles,
    value_text,
)
from fabgen.natural import natural_key

GITHUB_LIMIT = 65_536  # characters in a GitHub issue or pull-request comment
ROWS = 40  # cable rows listed before "and N more"
FILES = 150  # files in the folded list of every file before "and N more"
BLOCK_LINES = 120  # lines of one folded block before "and N more"
NAMES = 6  # names listed before "…"


def code(text: str) -> str:
    """Inline code that holds any text (backticks included)."""
    run = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (run + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or run else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def fenced(lines: list[str], lang: str = "diff") -> str:
    run = max((len(m) for line in lines for m in re.findall(r"`{3,}", line)), default=2)
    fence = "`" * (run + 1)
    return "\n".join([fence + lang, *lines, fence])


def names(items: Iterable[str]) -> str:
    """`a`, `b`, … `z` (N): the first few and the last, in natural order."""
    ordered = sorted(items, key=natural_key)
    if len(ordered) <= NAMES:
        return ", ".join(code(n) for n in ordered)
    return (", ".join(code(n) for n in ordered[:NAMES - 1]) + f", … {code(ordered[-1])} "
            f"({len(ordered):,})")


# Distinct changes tracked for grouping: past this many, a new one is only shown per file (a
# comment of 65,536 characters holds a few hundred groups anyway).
MAX_GROUPS = 50_000
_NUMBERS = re.compile(r"(\d+)")


@dataclass
class Group:
    """One change made identically in several places (devices or files): its count by file
    and the text its places share, kept as they are met (not the places themselves)."""

    kind: str
    op: str
    old: str | None
    new: str | None
    example: tuple[str, ...]  # the first place
    parts: list[str]  # the first place, numbers apart; a number that varies becomes `*`
    by_file: dict[str, int] = field(default_factory=dict)
    devices: dict[str, str] = field(default_factory=dict)  # file -> its device or itself

    def meet(self, f: FileDiff, at: tuple[str, ...]) -> None:
        self.by_file[f.name] = self.by_file.get(f.name, 0) + 1
        self.devices[f.name] = f.device or f.name
        parts = _NUMBERS.split(format_at(self.kind, at))
        if len(parts) != len(self.parts):
            self.parts = _NUMBERS.split(re.sub(r"\d+", "*", "".join(self.parts)))
            return
        for i in range(1, len(parts), 2):
            if parts[i] != self.parts[i]:
                self.parts[i] = "*"

    @property
    def places(self) -> int:
        return sum(self.by_file.values())

    @property
    def where(self) -> str:
        return "".join(self.parts)

    def lines(self) -> list[str]:
        if BY_NAME[self.kind].style == "keys":
            if self.op == "~":
                return [f"~ {self.where}: {self.old} → {self.new}"]
            return [f"{self.op} {self.where}: {self.old if self.op == '-' else self.new}"]
        out = [f"- {line}" for line in (self.old or "").split("\n") if self.old is not None]
        return out + [f"+ {line}" for line in (self.new or "").split("\n")
                      if self.new is not None]


Key = tuple[str, str, str, str | None, str | None]


def _key(f: FileDiff, c: Change) -> Key:
    old = None if c.op == "+" else value_text(f.kind, c.old)
    new = None if c.op == "-" else value_text(f.kind, c.new)
    return (f.kind, re.sub(r"\d+", "*", format_at(f.kind, c.at)), c.op, old, new)


def groups(result: DiffResult) -> dict[Key, Group]:
    """Changes repeated in at least two places, most widespread first."""
    found: dict[Key, Group] = {}
    for f in result.files:
        if f.status != "changed" or BY_NAME[f.kind].style == "table":
            continue
        for c in f.changes:
            key = _key(f, c)
            group = found.get(key)
            if group is None:
                if len(found) >= MAX_GROUPS:
                    continue
                group = found[key] = Group(f.kind, c.op, key[3], key[4], c.at,
                                           _NUMBERS.split(format_at(f.kind, c.at)))
            group.meet(f, c.at)
    common = [(k, g) for k, g in found.items() if g.places > 1]
    common.sort(key=lambda kg: (-len(kg[1].by_file), -kg[1].places, natural_key(kg[1].where)))
    return dict(common)


def _who(group: Group, devices: dict[str, Device]) -> str:
    owners = set(group.devices.values())
    known = [devices[o] for o in owners if o in devices]
    if len(known) == len(owners):
        return device_phrase(known)
    return plural(len(group.by_file), "file")


def _summary(result: DiffResult) -> list[str]:
    devices = result.devices
    changed = [plural(len(devices), "device")] if devices else []
    changed.append(plural(len(result.files), "file" if result.by == "path" else "config"))
    if result.cables.total():
        changed.append(plural(result.cables.total(), "cable"))
    head = f"### fabgen diff: {', '.join(changed)} changed"
    out = [head, "", f"{code(result.old)} → {code(result.new)}"
           + (f" · {html.escape('; '.join(result.notes))}" if result.notes else ""), ""]
    if not result.changed:
        return [*out, "No changes."]
    if devices:
        statuses = ("added", "removed", "changed", "replatformed")
        rows: dict[tuple[str, str], dict[str, int]] = {}
        for d in devices:
            row = rows.setdefault((roles(d.role), d.os), dict.fromkeys(statuses, 0))
            row[d.status] += 1
        out += ["| devices | added | removed | changed | platform changed |",
                "|---|--:|--:|--:|--:|"]
        for (role, os), row in sorted(rows.items(), key=lambda x: natural_key(" ".join(x[0]))):
            cells = " | ".join(str(row[s] or "") for s in statuses)
            what = f"{role} ({os})" if os else role
            out.append(f"| {html.escape(what)} | {cells} |")
        out.append("")
    files = (f"- **Files:** {result.count('added')} added, {result.count('removed')} removed, "
             f"{result.count('changed')} changed, {result.count('unchanged'):,} unchanged")
    out.append(files)
    if result.by == "path":
        cables = {k: v for k, v in result.cables.as_dict().items() if v}
        text = ", ".join(f"{v:,} {k}" for k, v in cables.items()) if cables else "none changed"
        out.append(f"- **Cables:** {text}"
                   + (" (renumbered: both ends kept under a new id; relabel them)"
                      if result.cables.renumbered else ""))
    return out


def _platforms(result: DiffResult) -> list[str]:
    """Devices now on another platform, by role and change: `spines, <old> → <new>: ...`."""
    moved: dict[tuple[str, str], list[str]] = {}
    for d in result.devices:
        if d.status == "replatformed":
            moved.setdefault((roles(d.role), d.os), []).append(d.name)
    if not moved:
        return []
    return ["#### Platform changes\n\n" + "\n".join(
        f"- {html.escape(role)}, {html.escape(os)}: {names(devices)}"
        for (role, os), devices in sorted(moved.items()))]


def _group_item(g: Group, devices: dict[str, Device]) -> str:
    where = g.where
    counts = set(g.by_file.values())
    places = (f"{plural(counts.pop(), 'place')} each" if len(counts) == 1 and len(g.by_file) > 1
              else plural(g.places, "place"))
    about = f"**{html.escape(_who(g, devices))}**, {places}: {code(where)}"
    if "*" in where:
        about += f" (e.g. {code(format_at(g.kind, g.example))})"
    return about + "\n\n" + fenced(g.lines()) + "\n"


def _cables(result: DiffResult) -> list[str]:
    out: list[str] = []
    for f in result.files:
        if f.kind != "cables" or f.status != "changed":
            continue
        spec = BY_NAME[f.kind].table
        assert spec is not None
        rows = [c for c in f.changes if c.note]
        lines = [f"{c.op} {c.at[0]} {c.note}: {describe(c, spec)}" for c in rows[:ROWS]]
        if len(rows) > ROWS:
            lines.append(f"… and {len(rows) - ROWS:,} more")
        out.append(f"<details><summary><code>{html.escape(f.name)}</code>: "
                   f"{plural(len(rows), 'cable')}</summary>\n\n{fenced(lines)}\n\n</details>")
    return out


def _file_list(result: DiffResult) -> list[str]:
    """Every file that is not unchanged, folded: one line each."""
    if not result.files:
        return []
    lines = []
    for f in result.files[:FILES]:
        what = (plural(f.count, "change") if f.status == "changed"
                else plural(f.size, "row" if f.style == "table" else "line"))
        lines.append(f"| {code(f.name)} | {f.status} | {what} |")
    if len(result.files) > FILES:
        lines.append(f"| … and {len(result.files) - FILES:,} more | | |")
    noun = "file" if result.by == "path" else "config"
    summary = f"{plural(len(result.files), noun)} added, removed or changed"
    return [f"<details><summary>{summary}</summary>\n\n| {noun} | status | size |\n"
            "|---|---|--:|\n" + "\n".join(lines) + "\n\n</details>"]


def _file_item(f: FileDiff, common: dict[Key, Group], devices: dict[str, Device]
               ) -> str | None:
    if f.status != "changed":
        return None
    table = f.kind in ("cables", "cables-json")
    rest = [c for c in f.changes if not (table and c.note) and _key(f, c) not in common]
    if not rest:
        return None
    d = devices.get(f.device or "")
    about = ""
    if d:
        what = ", ".join(x for x in (d.role, d.os) if x)
        about = f" · {html.escape(f.device or '')} ({html.escape(what)})"
    lines: list[str] = []
    for op, text in file_body(f, rest):
        if len(lines) == BLOCK_LINES:
            lines.append("… and more: the full diff has them")
            break
        lines.append("@@ " + text if op == "@" else f"{op} {text}")
    common_here = f.count - len(rest)
    note = f", {common_here:,} more above" if common_here else ""
    return (f"<details><summary><code>{html.escape(f.name)}</code>{about}: "
            f"{plural(len(rest), 'change')}{note}</summary>\n\n{fenced(lines)}\n\n</details>")


def format_markdown(result: DiffResult, limit: int = GITHUB_LIMIT,
                    full_diff: str | None = None) -> str:
    """The comment, at most `limit` characters; `full_diff` (a URL, a CI artifact) is where
    it points when it had to leave something out."""
    devices = {d.name: d for d in result.devices}
    common = groups(result)
    details = (item for f in result.files if (item := _file_item(f, common, devices)))
    sections: list[tuple[str, Iterable[str]]] = [
        ("", _platforms(result)),
        ("", _file_list(result)),
        ("#### Changes made in several places", (_group_item(g, devices)
                                                 for g in common.values())),
        ("#### Cables", _cables(result)),
        ("#### Changes by file", details),  # made as they fit: a file read back at a time
    ]
    out = "\n".join(_summary(result)) + "\n"
    shown = 0
    where = (f"the full diff: {full_diff}" if full_diff else
             f"run `fabgen diff {result.old} {result.new}` for the full diff")
    for title, entries in sections:
        head = f"\n{title}\n\n" if title else "\n"
        for n, entry in enumerate(entries):
            piece = (head if n == 0 else "\n") + entry + "\n"
            footer = (f"\n---\n✂ Cut to fit a comment ({limit:,} characters) after "
                      f"{plural(shown, 'item')}; {where}.\n")
            if len(out) + len(piece) + len(footer) > limit:
                return out + footer
            out += piece
            shown += 1
    return out
