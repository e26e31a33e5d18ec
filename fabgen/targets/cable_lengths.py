"""Cable length of every RoCE cable: its class's length, or the length measured for it.

PFC headroom is sized for the cable a port drives: the intent gives one length per link
class (`qos.cable_length_m`, `fabric_cable_length_m`, `core_cable_length_m`), and measured
lengths of single cables override it, inline (`qos.cable_lengths`) or from a sheet
(`qos.cable_lengths_file`: fabgen's own cabling/cabling.csv with its `length_m` column filled
in, or any CSV naming cables the same way). The measured length applies to both ends of its
cable: each switch platform's headroom sizing of each end (cable-length tables, per-port PFC
profiles or headroom comments), and the NIC's `mlnx_qos --cable_len`. A fraction of a metre is
rounded up, so a cable is never sized as shorter than it is.

Every row of the sheet must name a cable of the plan: an unknown cable, device or port, a
spare (uncabled) port, or two rows giving one cable two lengths is an error at the sheet's
`file:line:col`. The sheet is read once per render, bounded in size.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from fabgen import user_files
from fabgen.errors import Diagnostic, FabgenError, Loc
from fabgen.qos import QosPlan
from fabgen.suggest import closest
from fabgen.targets.base import RenderContext
from fabgen.topology.index import FabricIndex, FabricPort
from fabgen.topology.model import Link

__all__ = ["MAX_BYTES", "MAX_M", "CableLengths", "Measured", "cable_lengths", "parse_length"]

# fabgen's own sheet of a 131,072-GPU fabric (about 400,000 cables) is about 60 MB; a sheet
# larger than this is not a cabling sheet, and is not read into memory. A fabric of more
# cables allows MAX_BYTES per 300,000 of them (224 bytes a cable, against about 150 measured):
# the largest fabric, 262,144 host ports over three tiers (about 800,000 cables), gets 192 MiB.
MAX_BYTES = 64 * 1024 * 1024
CABLES_PER_MAX_BYTES = 300_000
MAX_M = 2000  # as the intent's class lengths (qos.cable_length_m)
LENGTH_COLUMN = "length_m"
# Ways a row names its cable, in the order they are tried; each pair is (device, port).
_ENDS = (("a_device", "a_port"), ("z_device", "z_port"), ("device", "port"))
_NUMBER = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*m?\s*$")
# fabgen's former cable ids (c000123: a count in build order). A sheet made with them names
# each cable by its ends too, which decide: such a sheet stays valid after the renumbering,
# and after growth, where the old ids would name other cables.
LEGACY_ID = re.compile(r"^c\d{6,}$")


@dataclass(frozen=True, slots=True)
class Measured:
    """A measured length, whole metres (rounded up), and where it was given."""

    metres: int
    source: str  # "lengths.csv:12" or "qos.cable_lengths[3]"
    class_m: int  # what its link class would have given it


@dataclass(frozen=True)
class CableLengths:
    """The length each cable's ends are sized for: measured, or its class's."""

    plan: QosPlan
    by_link: dict[str, Measured] = field(default_factory=dict)
    by_device: dict[str, dict[str, int]] = field(default_factory=dict)  # device: {link: m}

    def link_m(self, link: Link) -> int:
        measured = self.by_link.get(link.id)
        return measured.metres if measured is not None else self.plan.cable_m(link.kind)

    def on_ports(self, device: str, ports: Iterable[FabricPort],
                 default_kind: str = "leaf-spine") -> dict[str, tuple[int, ...]]:
        """The distinct lengths of a switch's cabled ports per link class, shortest first
        (a switch with no cable: `default_kind`'s length, as its spare ports are sized)."""
        found: dict[str, set[int]] = {}
        measured = bool(self.by_device.get(device))
        for p in ports:
            metres = self.link_m(p.link) if measured else self.plan.cable_m(p.kind)
            found.setdefault(p.kind, set()).add(metres)
        if not found:
            found[default_kind] = {self.plan.cable_m(default_kind)}
        order = ("node-leaf", "leaf-spine", "spine-core")
        return {kind: tuple(sorted(found[kind])) for kind in sorted(found, key=order.index)}

    def device_key(self, device: str) -> tuple[tuple[str, int], ...]:
        """The measured lengths on one device's cables (empty for most): what a per-shape
        cache must add to its key so two switches with different cables never share one."""
        mine = self.by_device.get(device)
        return tuple(sorted(mine.items())) if mine else ()


def parse_length(text: str) -> int | None:
    """Whole metres from `3`, `2.5` or `30 m` (rounded up: a cable is never treated as
    shorter than it is), or None when the text is not a length."""
    match = _NUMBER.match(text)
    if match is None:
        return None
    return math.ceil(float(match.group(1)))


class _Resolver:
    """Cables of the plan by id and by (device, port name)."""

    def __init__(self, index: FabricIndex) -> None:
        self.index = index
        self._ids: dict[str, Link] | None = None

    def by_id(self, cable: str) -> Link | None:
        if self._ids is None:
            self._ids = {link.id: link for link in self.index.fabric.links}
        return self._ids.get(cable)

    def by_end(self, device: str, port: str) -> Link | tuple[str, bool]:
        """The cable on a device's port, or why there is none (and whether the port, rather
        than the device, is to blame)."""
        switch = self.index.switches.get(device)
        if switch is not None:
            names = self.index.port_names(switch)
            if port not in names:
                guess = closest(port, list(names))
                return (f"{device} has no port {port!r}"
                        + (f" (did you mean {guess!r}?)" if guess else "")), True
            number = names.index(port) + 1
            for link in self.index.links(device):
                end = link.a_port if link.a_device == device else link.z_port
                if end == number:
                    return link
            return f"{device} {port} is a spare port: no cable of the plan ends on it", True
        host = self.index.hosts.get(device)
        if host is None:
            known = [*self.index.switches, *self.index.hosts]
            guess = closest(device, known)
            return f"no switch or host named {device!r}" + (
                f" (did you mean {guess!r}?)" if guess else ""), False
        hp = next((p for p in host.ports if port in (p.rdma_device, p.netdev)), None)
        if hp is None:
            ports = ", ".join(p.rdma_device for p in host.ports)
            return f"{device} has no compute port {port!r} (its ports: {ports})", True
        for link in self.index.links(device):
            if link.a_device == device and link.a_port == hp.dev:
                return link
        return f"{device} {port} has no cable in the plan", True


@dataclass(frozen=True, slots=True)
class _Row:
    """One measured cable as given: how it is named, and where (for errors)."""

    cable: str | None
    ends: tuple[tuple[str, str, str, str], ...]  # device, port, and their columns
    metres: int
    source: str
    file: str | None  # the sheet (None: an inline entry of the intent)
    line: int | None
    cols: dict[str, int]  # sheet: the character column of each cell, by column name
    loc: Loc = ()  # an inline entry's place in the intent
    first: str = "id"  # the column (or field) that names the cable first


def _error(row: _Row, message: str, column: str | None = None) -> Diagnostic:
    """An error blamed on one cell of the row (by default, the one naming the cable)."""
    column = column or row.first
    if row.file is not None:
        return Diagnostic(message, (column,), file=row.file, line=row.line,
                          col=row.cols.get(column, 1))
    return Diagnostic(message, (*row.loc, column))


def _cell_columns(line: str) -> list[int]:
    """1-based character column where each CSV cell of a line starts (quotes understood)."""
    starts = [1]
    quoted = False
    for i, ch in enumerate(line):
        if ch == '"':
            quoted = not quoted
        elif ch == "," and not quoted:
            starts.append(i + 2)
    return starts


def _sheet_rows(text: str, shown: str) -> Iterator[_Row | Diagnostic]:
    lines = text.splitlines()
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader, None)
    except csv.Error as exc:
        yield Diagnostic(f"not a CSV sheet: {exc}", file=shown, line=1, col=1)
        return
    if header is None:
        yield Diagnostic("the sheet is empty; it needs a header row with a `length_m` column "
                         "and `id` or device/port columns", file=shown, line=1, col=1)
        return
    columns = {name.strip().lower(): i for i, name in enumerate(header)}
    if LENGTH_COLUMN not in columns:
        yield Diagnostic(f"no `{LENGTH_COLUMN}` column in the header", file=shown, line=1,
                         col=1, hint="columns: " + ", ".join(h.strip() for h in header)[:200])
        return
    naming = ["id", *(c for pair in _ENDS for c in pair)]
    if not any(c in columns for c in naming):
        yield Diagnostic("no column names a cable: give `id`, or `a_device`/`a_port`, "
                         "`z_device`/`z_port` or `device`/`port`", file=shown, line=1, col=1)
        return
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield Diagnostic(f"not valid CSV: {exc}", file=shown, line=reader.line_num, col=1)
            return
        line = reader.line_num
        starts = _cell_columns(lines[line - 1]) if line <= len(lines) else [1]

        def cell(name: str, cells: list[str] = cells) -> str:
            i = columns.get(name)
            return cells[i].strip() if i is not None and i < len(cells) else ""

        def col(name: str, starts: list[int] = starts) -> int:
            i = columns.get(name, 0)
            return starts[i] if i < len(starts) else 1

        if not any(c.strip() for c in cells):
            continue  # a blank line
        length_text = cell(LENGTH_COLUMN)
        if not length_text:
            continue  # not measured: the class's length stays
        metres = parse_length(length_text)
        if metres is None or not 1 <= metres <= MAX_M:
            yield Diagnostic(f"{length_text!r} is not a length in metres (1 to {MAX_M})",
                             (LENGTH_COLUMN,), file=shown, line=line, col=col(LENGTH_COLUMN))
            continue
        ends = tuple((cell(d), cell(p), d, p) for d, p in _ENDS if cell(d) or cell(p))
        cable = cell("id") or None
        first = "id" if cable else next((d for d, p in _ENDS if cell(d) or cell(p)), "id")
        yield _Row(cable, ends, metres, f"{shown}:{line}", shown, line,
                   {name: col(name) for name in columns}, first=first)


def _inline_rows(plan_rows: list[tuple[int, str | None, str | None, str | None, float]]
                 ) -> Iterator[_Row]:
    for i, cable, device, port, length in plan_rows:
        ends = ((device or "", port or "", "device", "port"),) if cable is None else ()
        yield _Row(cable, ends, math.ceil(length), f"qos.cable_lengths[{i}]", None, None, {},
                   ("qos", "cable_lengths", i), first="cable" if cable else "device")


def _resolve(row: _Row, resolver: _Resolver) -> Link | tuple[str, str]:
    """The row's cable, or why it has none and which cell is to blame."""
    link: Link | None = None
    if row.cable is not None:
        link = resolver.by_id(row.cable)
        if link is None and not (LEGACY_ID.match(row.cable) and row.ends):
            if LEGACY_ID.match(row.cable):
                return (f"{row.cable!r} is a cable id of fabgen's old numbering, which counted "
                        "cables in build order and so named other cables once the fabric "
                        "grew; cable ids now name the port a cable plugs into "
                        "(c-su1-r0-001): give the id from cabling/cabling.csv, or the cable's "
                        "ends", row.first)
            return (f"no cable {row.cable!r} in the plan (ids as in cabling/cabling.csv)",
                    row.first)
    for device, port, device_col, port_col in row.ends:
        if not device or not port:
            return ("a cable end needs both its device and its port",
                    port_col if device else device_col)
        found = resolver.by_end(device, port)
        if isinstance(found, tuple):
            message, blame_port = found
            return message, port_col if blame_port else device_col
        if link is not None and found.id != link.id:
            return (f"{device} {port} is cable {found.id}, not {link.id}: the row names two "
                    "different cables", device_col)
        link = found
    if link is None:
        return "the row names no cable (give `id`, or a device and its port)", row.first
    return link


def _limit(ctx: RenderContext) -> int:
    cables = len(ctx.fabric.links) + sum(len(extra.links) for extra in ctx.fabric.extras)
    return MAX_BYTES * max(1, -(-cables // CABLES_PER_MAX_BYTES))


def cable_lengths(ctx: RenderContext) -> CableLengths:
    """The render's cable lengths (use `ctx.derived(cable_lengths)`: read once per render).
    Raises FabgenError with every bad row of the sheet and of `qos.cable_lengths`."""
    plan = ctx.qos
    if plan is None:
        raise ValueError("cable lengths are a RoCE QoS fact; this fabric has no QosPlan")
    q = ctx.intent.qos
    if not q.cable_lengths and q.cable_lengths_file is None:
        return CableLengths(plan)
    rows: list[_Row] = []
    errors: list[Diagnostic] = []
    rows.extend(_inline_rows([(i, e.cable, e.device, e.port, e.length_m)
                              for i, e in enumerate(q.cable_lengths)]))
    if q.cable_lengths_file is not None:
        base = ctx.base_dir or Path(".")
        path = base / q.cable_lengths_file
        shown = str(path)
        # qos.check keeps the name inside the directory; a link inside it may still point out.
        text = user_files.read_text(path, what="a cable-length sheet", limit=_limit(ctx),
                                    shown=shown, inside=base,
                                    loc=("qos", "cable_lengths_file"), save_as="UTF-8 CSV")
        for item in _sheet_rows(text, shown):
            if isinstance(item, Diagnostic):
                errors.append(item)
            else:
                rows.append(item)
    resolver = _Resolver(ctx.index)
    by_link: dict[str, Measured] = {}
    by_device: dict[str, dict[str, int]] = {}
    for row in rows:
        found = _resolve(row, resolver)
        if isinstance(found, tuple):
            errors.append(_error(row, *found))
            continue
        if found.kind not in ("node-leaf", "leaf-spine", "spine-core"):
            errors.append(_error(row, f"cable {found.id} is a {found.kind} cable, which has "
                                      "no PFC headroom to size"))
            continue
        earlier = by_link.get(found.id)
        if earlier is not None and earlier.metres != row.metres:
            errors.append(_error(row, f"cable {found.id} is {row.metres} m here but "
                                      f"{earlier.metres} m at {earlier.source}",
                                 LENGTH_COLUMN))
            continue
        by_link[found.id] = Measured(row.metres, row.source, plan.cable_m(found.kind))
        for device in (found.a_device, found.z_device):
            by_device.setdefault(device, {})[found.id] = row.metres
    if errors:
        raise FabgenError(errors)
    return CableLengths(plan, by_link, by_device)
