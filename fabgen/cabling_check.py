"""Check a cabling sheet (fabgen's CSV/JSON, maybe edited by hand or by a field team) against
the topology invariants and against the plan of the intent it claims to implement."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fabgen import user_files
from fabgen.catalog.ports import switch_panel, switch_port_name
from fabgen.topology.checks import Finding, check_fabric
from fabgen.topology.model import Fabric, Link


class CablingFileError(ValueError):
    """The sheet cannot be read; the message names the file, row and column."""


# A sheet lists the plan's cables, so its bound follows the fabric: fabgen's own cabling.csv
# takes about 145 bytes a cable and cabling.json about 410 (the golden renders); 1 KiB a
# cable leaves room for columns a field team adds. The floor covers a small lab's sheet.
SHEET_FLOOR_BYTES = 1024 * 1024
SHEET_BYTES_PER_CABLE = 1024


def sheet_limit(fabric: Fabric) -> int:
    """The largest sheet read for this fabric (a larger one is refused unread)."""
    cables = len(fabric.links) + len(fabric.sm_links) + sum(
        len(extra.links) + len(extra.sm_links) for extra in fabric.extras)
    return SHEET_FLOOR_BYTES + SHEET_BYTES_PER_CABLE * cables


def read_rows(path: Path, limit: int = SHEET_FLOOR_BYTES) -> list[dict[str, Any]]:
    """The sheet's rows; a file that is too large, not a regular file or not UTF-8 text is
    a FabgenError naming it (user_files), and never blocks or fills memory."""
    text = user_files.read_text(path, what="a cabling sheet", limit=limit)
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise CablingFileError(f"{path}: not JSON: {exc}") from None
        except RecursionError:  # json recurses once per level of nesting
            raise CablingFileError(f"{path}: not a cabling sheet: nested too deeply") from None
        rows = data.get("cables") if isinstance(data, dict) else None
        if not isinstance(rows, list):
            raise CablingFileError(f"{path}: expected an object with a 'cables' list")
        return rows
    return list(csv.DictReader(io.StringIO(text)))


REQUIRED = ("kind", "a_device", "a_port", "z_device", "z_port")


@dataclass(frozen=True, slots=True)
class SheetCable:
    """One row of the sheet: where it is (a CSV row as a spreadsheet numbers it, the header
    being row 1; a JSON sheet's cable, from 1), the cable as a Link, and its ports as the sheet
    names them (what a field team looks for on the panel)."""

    where: str
    link: Link
    a_port: str
    z_port: str

    @property
    def ends(self) -> tuple[str, str]:
        return f"{self.link.a_device} {self.a_port}", f"{self.link.z_device} {self.z_port}"


def cables_from_rows(fabric: Fabric, rows: list[dict[str, Any]], source: str) -> list[SheetCable]:
    """Rows back to cables, port names back to port numbers, by the plan's own naming."""
    if not rows:
        raise CablingFileError(f"{source}: no cables")
    missing = [c for c in REQUIRED if c not in rows[0]]
    if missing:
        raise CablingFileError(f"{source}: missing column(s) {', '.join(missing)}")
    switch_ports: dict[tuple[str, str], int] = {}
    for sw in fabric.switches:
        for port in range(1, sw.radix + 1):
            switch_ports[sw.name, switch_port_name(sw, port)] = port
    host_ports = {(h.name, p.rdma_device): p.dev
                  for h in (*fabric.hosts, *fabric.sm_hosts) for p in h.ports}
    csv_sheet = not source.endswith(".json")
    cables: list[SheetCable] = []
    for n, row in enumerate(rows, start=2 if csv_sheet else 1):
        where = f"{'row' if csv_sheet else 'cable'} {n}"
        try:
            kind = row["kind"]
            a_dev, z_dev = str(row["a_device"]), str(row["z_device"])
            a_name, z_name = str(row["a_port"]), str(row["z_port"])
        except KeyError as exc:
            raise CablingFileError(f"{source}: {where}: missing column {exc}") from None
        ends: list[int] = []
        host_end = kind in ("node-leaf", "sm-leaf")
        for dev, name, table in ((a_dev, a_name, host_ports if host_end else switch_ports),
                                 (z_dev, z_name, switch_ports)):
            found = table.get((dev, name))
            if found is None:
                raise CablingFileError(f"{source}: {where}: {dev} has no port {name!r} in the "
                                       "plan")
            ends.append(found)
        plane = fabric.by_name[z_dev].plane if z_dev in fabric.by_name else 0
        link = Link(id=str(row.get("id") or f"row{n}"), kind=kind, a_device=a_dev,
                    a_port=ends[0], z_device=z_dev, z_port=ends[1],
                    speed_gbps=fabric.speed_gbps, plane=int(row.get("plane", plane)),
                    media=str(row.get("media", "")))
        cables.append(SheetCable(where, link, a_name, z_name))
    return cables


def links_from_rows(fabric: Fabric, rows: list[dict[str, Any]], source: str) -> list[Link]:
    """The sheet's cables as Links (see cables_from_rows)."""
    return [c.link for c in cables_from_rows(fabric, rows, source)]


End = tuple[str, int]


def _ends(link: Link) -> tuple[End, End]:
    return (link.a_device, link.a_port), (link.z_device, link.z_port)


def compare(planned: Fabric, sheet: list[SheetCable]) -> list[Finding]:
    """The sheet against the plan, by each cable's two ends: two cables that exchanged an end
    (a swap, the commonest field mistake) as one finding naming both rows, then cables the
    plan has and the sheet lacks, then the reverse. Ports as the sheet names them."""
    plan = {_ends(link): link for link in (*planned.links, *planned.sm_links)}
    found = {_ends(c.link) for c in sheet}
    missing = {key: link for key, link in plan.items() if key not in found}
    unplanned = [c for c in sheet if _ends(c.link) not in plan]
    missing_at_a: dict[End, Link] = {link_a: link for (link_a, _), link in missing.items()}
    unplanned_at_z: dict[End, list[SheetCable]] = {}
    for c in unplanned:
        unplanned_at_z.setdefault(_ends(c.link)[1], []).append(c)
    out: list[Finding] = []
    swapped: set[int] = set()  # ids of the sheet cables a swap explains
    for one in unplanned:
        if id(one) in swapped:
            continue
        (a1, z_one) = _ends(one.link)
        p1 = missing_at_a.get(a1)  # what a1 should reach: z1
        if p1 is None:
            continue
        z1 = (p1.z_device, p1.z_port)
        for two in unplanned_at_z.get(z1, []):
            a2 = _ends(two.link)[0]
            p2 = missing.get((a2, z_one))
            if id(two) in swapped or two is one or p2 is None:
                continue
            swapped.update((id(one), id(two)))
            del missing[_ends(p1)], missing[_ends(p2)]
            out.append(Finding("swapped", _swap_message(one, two, p1, p2)))
            break
    named = _plan_names(planned) if missing else lambda device, port: f"{device} {port}"
    out += [Finding("missing", f"planned cable {link.id} {named(link.a_device, link.a_port)} - "
                    f"{named(link.z_device, link.z_port)} is not in the sheet")
            for link in missing.values()]
    out += [Finding("unplanned", f"{c.where}: cable {c.link.id} {c.ends[0]} - {c.ends[1]} is "
                    "not in the plan")
            for c in unplanned if id(c) not in swapped]
    return out


def panel_findings(fabric: Fabric, rows: list[dict[str, Any]], links: list[Link],
                   source: str) -> list[Finding]:
    """Rows whose panel columns (a_panel, z_panel), where filled in, do not name where their
    port is. A crew cables by the panel: a row edited in one column and not the other is a
    cable that lands somewhere else than its port column says."""
    hosts = {h.name: {p.dev: p.panel for p in h.ports} for h in (*fabric.hosts,
                                                                 *fabric.sm_hosts)}
    switches = {sw.name: sw for sw in fabric.switches}
    out: list[Finding] = []
    csv_sheet = not source.endswith(".json")
    first = 2 if csv_sheet else 1
    for n, (row, link) in enumerate(zip(rows, links, strict=True), start=first):
        where = f"{'row' if csv_sheet else 'cable'} {n}"
        host_end = link.kind in ("node-leaf", "sm-leaf")
        for col, dev, port, name in (("a_panel", link.a_device, link.a_port, row["a_port"]),
                                     ("z_panel", link.z_device, link.z_port, row["z_port"])):
            given = row.get(col)
            if given in (None, ""):
                continue
            if col == "a_panel" and host_end:
                want, what = hosts[dev][port], f"{dev} {name}"
            else:
                want, what = switch_panel(switches[dev], port), f"{dev} port {name}"
            if str(given).strip() != want:
                out.append(Finding("panel-mismatch", f"{where}: {col} {given!r} is not where "
                                   f"{what} is ({want or 'not known'})"))
    return out


def _swap_message(one: SheetCable, two: SheetCable, p1: Link, p2: Link) -> str:
    """Rows `one` and `two` reach each other's planned far ends: say where to exchange them."""
    (a1, z1), (a2, z2) = one.ends, two.ends
    fix = (f"exchange them at {one.link.z_device}" if one.link.z_device == two.link.z_device
           else f"exchange their plugs at {z1} and {z2}")
    return (f"{one.where} and {two.where} are swapped: {a1} reaches {z1} and {a2} reaches {z2}, "
            f"planned the other way round ({p1.id} {a1} - {z2}, {p2.id} {a2} - {z1}); {fix}")


def _plan_names(fabric: Fabric) -> Callable[[str, int], str]:
    """A planned cable's end as fabgen's cabling.csv names it: device and port name."""
    host_ports = {(h.name, p.dev): p.rdma_device
                  for h in (*fabric.hosts, *fabric.sm_hosts) for p in h.ports}

    def named(device: str, port: int) -> str:
        switch = fabric.by_name.get(device)
        if switch is not None:
            return f"{device} {switch_port_name(switch, port)}"
        return f"{device} {host_ports.get((device, port), port)}"

    return named


def check_file(fabric: Fabric, path: Path) -> list[Finding]:
    """Invariant findings of the sheet as cabled, its differences from the plan, then rows
    whose panel columns contradict their ports."""
    rows = read_rows(path, sheet_limit(fabric))
    cables = cables_from_rows(fabric, rows, str(path))
    links = [c.link for c in cables]
    as_cabled = replace(fabric, links=tuple(x for x in links if x.kind != "sm-leaf"),
                        sm_links=tuple(x for x in links if x.kind == "sm-leaf"), extras=())
    return (check_fabric(as_cabled) + compare(fabric, cables)
            + panel_findings(fabric, rows, links, str(path)))
