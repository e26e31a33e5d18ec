"""Tables of rows compared row by row, streamed: the cable tables (cabling/*.csv and
cabling/*.json) and the rails table.

A cable is matched by its two ends, not by its id: fabgen numbers cables in plan order, so
adding a scalable unit gives later cables new ids, and matching by id would show every one of
them as moved. So a cable whose ends are kept is the same cable (renumbered if its id
changed, changed if another column did); one whose a-end is kept but whose z-end is not (or
the other way round) moved; one whose devices and panel labels (cage, split) are kept but
whose port names are not was renamed (a switch's new OS names the same cage another way);
any other is added or removed. Rows without ids (rails.csv) are
matched by their key columns.

Both sides stream: the old side is held as a digest of each row's content (16 bytes and its
id), the new side is read against it, and only the rows left unmatched are kept whole, so a
table of 800,000 cables costs some 150 MB whatever the change, not gigabytes.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from fabgen.diff.model import CableCount, Change, DiffError
from fabgen.natural import natural_key

Row = dict[str, str]
Rows = Callable[[], Iterator[Row]]  # a fresh pass over a side's rows


@dataclass(frozen=True, slots=True)
class TableSpec:
    key: tuple[str, ...]  # the columns that name a row (a cable: both ends)
    id: str | None = None  # the id column (cables); not part of a row's content
    a_end: tuple[str, ...] = ()  # a cable's ends: a row keeping one of them moved
    z_end: tuple[str, ...] = ()
    cables: bool = False  # count the rows as cables in the summary
    # Where a cable physically sits: both devices and their panel labels (cage, split). A
    # cable whose place is kept and whose port names changed was renamed, not moved.
    place: tuple[str, ...] = ()


CABLES = TableSpec(key=("a_device", "a_port", "z_device", "z_port"), id="id",
                   a_end=("a_device", "a_port"), z_end=("z_device", "z_port"), cables=True,
                   place=("a_device", "a_panel", "z_device", "z_panel"))
RAILS = TableSpec(key=("host", "nic", "nic_port"))


def csv_rows(lines: Iterable[str], where: str) -> Iterator[Row]:
    """Rows of a CSV with a header line, as column -> text."""
    reader = csv.reader(lines)
    header = next(reader, None)
    if header is None:
        return
    for number, values in enumerate(reader, 2):
        if not values:
            continue
        if len(values) != len(header):
            raise DiffError(f"{where}:{number}: {len(values)} columns where the header has "
                            f"{len(header)}")
        yield dict(zip(header, values, strict=True))


def cell(value: Any) -> str:
    """A JSON value as the CSV writes it: None empty, numbers as digits."""
    kind = type(value)
    if kind is str:
        return str(value)
    if value is None:
        return ""
    if kind is int:
        return str(value)
    return json.dumps(value)


def _digest(row: Row, spec: TableSpec) -> bytes:
    """16 bytes standing for the row's content (its columns and values, the id left out,
    column order ignored). A collision of two different rows is a 1 in 2^64 event even for
    a million rows."""
    keys = row.keys()
    order = _ORDERS.get(tuple(keys))
    if order is None:
        order = _ORDERS[tuple(keys)] = tuple(sorted(k for k in keys if k != spec.id))
    text = "\x1f".join([*order, *(row[k] for k in order)])
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


# The sorted columns of each column order seen (a table has one or two).
_ORDERS: dict[tuple[str, ...], tuple[str, ...]] = {}


def _key(row: Row, columns: tuple[str, ...]) -> tuple[str, ...] | None:
    if not columns or any(c not in row for c in columns):
        return None
    return tuple(row[c] for c in columns)


def row_id(row: Row, spec: TableSpec) -> str:
    """The row's name: its id, else its key columns (`host=gpu0001 nic=0 nic_port=0`)."""
    if spec.id and row.get(spec.id):
        return row[spec.id]
    return " ".join(f"{c}={row.get(c, '')}" for c in spec.key)


def diff_rows(old: Rows, new: Rows, spec: TableSpec) -> tuple[list[Change], CableCount]:
    """Row changes (each at its row's id, values the whole rows) and their counts."""
    index: dict[bytes, list[str]] = {}
    for row in old():
        index.setdefault(_digest(row, spec), []).append(row.get(spec.id or "", ""))
    changes: list[Change] = []
    count = CableCount()
    left_new: list[Row] = []
    for row in new():
        ids = index.get(_digest(row, spec))
        if ids is None:
            left_new.append(row)
            continue
        # Same content: the row with the same id if there is one, else the first.
        new_id = row.get(spec.id or "", "")
        old_id = new_id if new_id in ids else ids[0]
        ids.remove(old_id)
        if not ids:
            del index[_digest(row, spec)]
        if old_id != new_id:  # the old side of a renumbered row is its old id alone
            changes.append(Change("~", (new_id,), {spec.id or "": old_id},
                                  _slim(row, spec, ()), "renumbered"))
            count.renumbered += 1
    left_old: list[Row] = []
    if index:
        for row in old():
            ids = index.get(_digest(row, spec))
            if ids is not None:
                left_old.append(row)
                ids.pop()
                if not ids:
                    del index[_digest(row, spec)]
    changes.extend(_pair(left_old, left_new, spec, count))
    changes.sort(key=lambda c: natural_key(c.at[0]))
    return changes, count


def _slim(row: Row, spec: TableSpec, differ: tuple[str, ...]) -> Row:
    """What a changed row keeps: its id, its key columns (a cable's ends and place) and the columns
    that changed; the rest is the same on both sides (and a table of 800,000 renumbered
    cables would otherwise be held whole)."""
    keep = {spec.id or "", *spec.key, *spec.a_end, *spec.z_end, *spec.place, *differ}
    return {c: v for c, v in row.items() if c in keep}


def _pair(old: list[Row], new: list[Row], spec: TableSpec, count: CableCount) -> list[Change]:
    """Unmatched rows: the same key (changed), one end kept (moved), else removed and added."""
    out: list[Change] = []
    for columns, note in ((spec.key, "changed"), (spec.place, "renamed"), (spec.a_end, "moved"),
                          (spec.z_end, "moved")):
        if not columns:
            continue
        by_key: dict[tuple[str, ...], Row] = {}
        for row in old:
            k = _key(row, columns)
            if k is not None and (note != "renamed" or all(k)):  # no panel label, no place
                by_key.setdefault(k, row)
        still: list[Row] = []
        matched: set[int] = set()
        for row in new:
            k = _key(row, columns)
            match = by_key.pop(k, None) if k is not None else None
            if match is None:
                still.append(row)
                continue
            matched.add(id(match))
            differ = tuple(c for c in match.keys() | row.keys() if match.get(c) != row.get(c))
            out.append(Change("~", (row_id(row, spec),), _slim(match, spec, differ),
                              _slim(row, spec, differ), note))
            if note == "moved":
                count.moved += 1
            elif note == "renamed":
                count.renamed += 1
            else:
                count.changed += 1
        old = [r for r in old if id(r) not in matched]
        new = still
    for row in old:
        out.append(Change("-", (row_id(row, spec),), row, None, "removed"))
    for row in new:
        out.append(Change("+", (row_id(row, spec),), None, row, "added"))
    count.removed += len(old)
    count.added += len(new)
    return out


def ends(row: Row) -> str:
    """A cable by its ends: `gpu0001:mlx5_0 ↔ leaf-su1-r0:Ethernet0`."""
    return (f"{row.get('a_device', '')}:{row.get('a_port', '')} ↔ "
            f"{row.get('z_device', '')}:{row.get('z_port', '')}")


def describe(change: Change, spec: TableSpec) -> str:
    """One line for a row change: a cable by its ends (both ends always shown), another row
    by its columns."""
    def others(row: Row) -> str:
        return " ".join(f"{c}={v}" for c, v in row.items() if c not in spec.key and c != spec.id)

    if change.op != "~":
        row = change.new if change.op == "+" else change.old
        return ends(row) if spec.cables else others(row)
    old, new = change.old, change.new
    if change.note == "renumbered":
        return f"{ends(new)}: id {old.get(spec.id or '', '')} → {new.get(spec.id or '', '')}"
    fields = [f"{c} {old.get(c, '')!s} → {new.get(c, '')!s}"
              for c in sorted(old.keys() | new.keys(), key=natural_key)
              if old.get(c) != new.get(c) and c not in spec.key]
    if not spec.cables:
        return ", ".join(fields)
    if change.note == "renamed":
        fields = [f for f in fields if not f.startswith(("a_panel", "z_panel"))]
        moved = f"{ends(old)} → {ends(new)}: ports renamed, same cages"
    else:
        moved = f"{ends(old)} → {ends(new)}" if change.note == "moved" else ends(new)
    return moved + (f" ({', '.join(fields)})" if fields else "")


# --- fabgen's cabling.json, streamed --------------------------------------------------------

_DECODER = json.JSONDecoder()
_WS = " \t\r\n"


class _Stream:
    """JSON text from chunks, decoded one value at a time (a value cut by a chunk boundary
    is decoded again with the next chunk)."""

    def __init__(self, chunks: Iterator[str], where: str) -> None:
        self.chunks = chunks
        self.where = where
        self.buf = ""
        self.pos = 0
        self.eof = False

    def _more(self) -> bool:
        chunk = next(self.chunks, None)
        if chunk is None:
            self.eof = True
            return False
        if self.pos > 1 << 20:
            self.buf, self.pos = self.buf[self.pos:], 0
        self.buf += chunk
        return True

    def peek(self) -> str:
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in _WS:
                self.pos += 1
            if self.pos < len(self.buf) or not self._more():
                return self.buf[self.pos:self.pos + 1]

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise DiffError(f"{self.where}: cannot parse as json: expected {char!r}")
        self.pos += 1

    def value(self) -> Any:
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if self._more():
                    continue
                raise DiffError(f"{self.where}: cannot parse as json: {exc}") from None
            except RecursionError:
                raise DiffError(f"{self.where}: nested too deeply to compare") from None
            if end == len(self.buf) and not self.eof and self._more():
                continue  # a number may go on in the next chunk
            self.pos = end
            return value


def json_cables(chunks: Iterator[str], where: str, rest: dict[str, Any] | None = None
                ) -> Iterator[Row]:
    """The rows of `{"cables": [...], ...}` one by one; the other top-level keys go in
    `rest`."""
    stream = _Stream(chunks, where)
    stream.expect("{")
    if stream.peek() == "}":
        return
    while True:
        key = stream.value()
        if not isinstance(key, str):
            raise DiffError(f"{where}: cannot parse as json: a key that is not a string")
        stream.expect(":")
        if key == "cables" and stream.peek() == "[":
            stream.pos += 1
            if stream.peek() == "]":
                stream.pos += 1
            else:
                while True:
                    item = stream.value()
                    if not isinstance(item, dict):
                        raise DiffError(f"{where}: cables: an item that is not an object")
                    yield {str(k): cell(v) for k, v in item.items()}
                    if stream.peek() == ",":
                        stream.pos += 1
                        continue
                    stream.expect("]")
                    break
        else:
            value = stream.value()
            if rest is not None:
                rest[key] = value
        if stream.peek() == ",":
            stream.pos += 1
            continue
        stream.expect("}")
        return
