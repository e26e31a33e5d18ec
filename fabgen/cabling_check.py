"""Check a cabling sheet (fabgen's CSV/JSON, maybe edited by hand or by a field team) against
the topology invariants and against the plan of the intent it claims to implement."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
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


def links_from_rows(fabric: Fabric, rows: list[dict[str, Any]], source: str) -> list[Link]:
    """Rows back to Links, port names back to port numbers, by the plan's own naming."""
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
    links: list[Link] = []
    for n, row in enumerate(rows, start=2 if source.endswith(".csv") else 1):
        where = f"{source}: {'line' if source.endswith('.csv') else 'cable'} {n}"
        try:
            kind = row["kind"]
            a_dev, z_dev = str(row["a_device"]), str(row["z_device"])
            a_name, z_name = str(row["a_port"]), str(row["z_port"])
        except KeyError as exc:
            raise CablingFileError(f"{where}: missing column {exc}") from None
        ends: list[int] = []
        host_end = kind in ("node-leaf", "sm-leaf")
        for dev, name, table in ((a_dev, a_name, host_ports if host_end else switch_ports),
                                 (z_dev, z_name, switch_ports)):
            found = table.get((dev, name))
            if found is None:
                raise CablingFileError(f"{where}: {dev} has no port {name!r} in the plan")
            ends.append(found)
        plane = fabric.by_name[z_dev].plane if z_dev in fabric.by_name else 0
        links.append(Link(id=str(row.get("id") or f"row{n}"), kind=kind, a_device=a_dev,
                          a_port=ends[0], z_device=z_dev, z_port=ends[1],
                          speed_gbps=fabric.speed_gbps, plane=int(row.get("plane", plane)),
                          media=str(row.get("media", ""))))
    return links


def compare(planned: Fabric, actual: list[Link]) -> list[Finding]:
    """Cables the plan has and the sheet lacks, and the reverse, by their two ends."""
    def ends(link: Link) -> tuple[tuple[str, int], tuple[str, int]]:
        return (link.a_device, link.a_port), (link.z_device, link.z_port)

    plan = {ends(link): link for link in (*planned.links, *planned.sm_links)}
    sheet = {ends(link): link for link in actual}
    out = [Finding("missing", f"planned cable {link.id} {link.a_device}:{link.a_port} - "
                   f"{link.z_device}:{link.z_port} is not in the sheet")
           for key, link in plan.items() if key not in sheet]
    out += [Finding("unplanned", f"cable {link.id} {link.a_device}:{link.a_port} - "
                    f"{link.z_device}:{link.z_port} is not in the plan")
            for key, link in sheet.items() if key not in plan]
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
    first = 2 if source.endswith(".csv") else 1
    for n, (row, link) in enumerate(zip(rows, links, strict=True), start=first):
        where = f"{source}: {'line' if source.endswith('.csv') else 'cable'} {n}"
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


def check_file(fabric: Fabric, path: Path) -> list[Finding]:
    """Invariant findings of the sheet as cabled, its differences from the plan, then rows
    whose panel columns contradict their ports."""
    rows = read_rows(path, sheet_limit(fabric))
    links = links_from_rows(fabric, rows, str(path))
    as_cabled = replace(fabric, links=tuple(x for x in links if x.kind != "sm-leaf"),
                        sm_links=tuple(x for x in links if x.kind == "sm-leaf"), extras=())
    return (check_fabric(as_cabled) + compare(fabric, links)
            + panel_findings(fabric, rows, links, str(path)))
