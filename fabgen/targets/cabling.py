"""Cabling target: the cable plan as CSV and JSON (a row per cable) and a grouped graphviz DOT.

Port names are the ones each end's platform prints (its facts' `port_name`: Ethernet0,
Ethernet1/1, swp1s0..., InfiniBand port numbers; hosts by RDMA device), so the sheet can be
checked against LLDP or ibnetdiscover on the installed fabric. The panel columns say where a
crew plugs each end in: a host port by its chassis label from the node catalog (`OSFP4 P2` on a
DGX H100: User Guide Table 6), a switch port by cage, port in the cage and split from the
switch catalog (`cage 17 port 2`; catalog.ports.switch_panels); empty where the hardware's
labels are not known. Rows follow Fabric.links, which is already in a stable order; nothing
here reads a clock or the disk.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from fabgen.catalog.ports import host_port_name, switch_panel
from fabgen.intent.units import format_speed
from fabgen.targets.base import Artifacts, RenderContext, Stream
from fabgen.targets.cable_lengths import CableLengths, cable_lengths
from fabgen.topology.index import FabricIndex
from fabgen.topology.model import Fabric, Link
from fabgen.topology.summary import FabricView, Group, view

__all__ = [
    "ADDRESS_COLUMNS",
    "COLUMNS",
    "DOT_MAX_GROUPS",
    "SWITCH_KEYS",
    "TARGET",
    "CablingTarget",
    "cable_rows",
    "columns",
    "render_csv",
    "render_dot",
    "render_json",
    "switch_rows",
]

COLUMNS = ("id", "kind", "plane", "a_device", "a_port", "a_netdev", "a_panel", "z_device",
           "z_port", "z_panel", "speed", "media")
# RoCE links are routed /31s; InfiniBand has no IP on the fabric, so it gets no address columns.
ADDRESS_COLUMNS = ("a_address", "z_address")
SWITCH_KEYS = ("name", "role", "plane", "group", "rail", "model", "radix", "platform", "asn",
               "loopback")
# Per tier and plane; beyond it consecutive units/pods merge into one box (see summary.view).
# Eight keeps a dual-plane 100k-GPU drawing within a screen's width.
DOT_MAX_GROUPS = 8

Row = dict[str, Any]


# RoCE compute cables: the length PFC headroom is sized for on both ends (measured, or its
# class's). Fill it in with measured lengths and give the sheet back as qos.cable_lengths_file.
LENGTH_COLUMN = "length_m"


def _has_length(fabric: Fabric) -> bool:
    return fabric.transport == "roce" and fabric.role == "compute"


def columns(fabric: Fabric) -> tuple[str, ...]:
    """CSV columns (and JSON row keys) of this fabric, in order."""
    return (COLUMNS + ((LENGTH_COLUMN,) if _has_length(fabric) else ())
            + (ADDRESS_COLUMNS if fabric.transport == "roce" else ()))


def _row(link: Link, index: FabricIndex, roce: bool,
         lengths: CableLengths | None = None) -> Row:
    switches = index.switches
    if link.kind in ("node-leaf", "sm-leaf"):
        try:
            hp = index.host_port(link.a_device, link.a_port)
        except KeyError:
            raise ValueError(f"cable {link.id}: {link.a_device} has no port dev "
                             f"{link.a_port}") from None
        a_port, a_netdev, a_panel = host_port_name(hp), hp.netdev, hp.panel
    else:
        a_sw = switches[link.a_device]
        a_port, a_netdev = index.port_name(a_sw, link.a_port), None
        a_panel = switch_panel(a_sw, link.a_port)
    z_sw = switches[link.z_device]
    row: Row = {
        "id": link.id,
        "kind": link.kind,
        "plane": link.plane,
        "a_device": link.a_device,
        "a_port": a_port,
        "a_netdev": a_netdev,
        "a_panel": a_panel or None,
        "z_device": link.z_device,
        "z_port": index.port_name(z_sw, link.z_port),
        "z_panel": switch_panel(z_sw, link.z_port) or None,
        "speed": format_speed(link.speed_gbps),
        "media": link.media,
    }
    if lengths is not None:
        row[LENGTH_COLUMN] = lengths.link_m(link)
    if roce:
        row["a_address"] = str(link.a_address) if link.a_address is not None else None
        row["z_address"] = str(link.z_address) if link.z_address is not None else None
    return row


def cable_rows(fabric: Fabric, index: FabricIndex | None = None,
               lengths: CableLengths | None = None) -> list[Row]:
    """One row per cable, in Fabric.links order, then the subnet-manager hosts' cables (kind
    `sm-leaf`, InfiniBand); keys are `columns(fabric)`. `index`: the render's index of
    `fabric` (one is built when it is not given).

    `plane` is the 0-based plane of the model; `a_netdev` is the host port's Linux netdev (None
    on switch-to-switch cables); `a_panel`/`z_panel` where each end plugs in (None unknown);
    addresses are `a.b.c.d/31` strings (RoCE only); `length_m` (RoCE compute fabric) the cable's
    length from `lengths`, None without them.
    """
    return list(iter_cable_rows(fabric, index, lengths))


def iter_cable_rows(fabric: Fabric, index: FabricIndex | None = None,
                    lengths: CableLengths | None = None) -> Iterator[Row]:
    """cable_rows one at a time: at 131k GPUs the rows as dicts are hundreds of MB."""
    found = index or FabricIndex(fabric)
    roce = fabric.transport == "roce"
    if not _has_length(fabric):
        lengths = None
    rows = (_row(link, found, roce, lengths)
            for links in (fabric.links, fabric.sm_links) for link in links)
    if lengths is None and _has_length(fabric):
        return ({**row, LENGTH_COLUMN: None} for row in rows)
    return rows


def switch_rows(fabric: Fabric) -> list[Row]:
    """One object per switch with the keys of SWITCH_KEYS, in Fabric.switches order."""
    return [{
        "name": sw.name,
        "role": sw.role,
        "plane": sw.plane,
        "group": sw.group,
        "rail": sw.rail,
        "model": sw.model,
        "radix": sw.radix,
        "platform": sw.platform,
        "asn": sw.asn,
        "loopback": str(sw.loopback) if sw.loopback is not None else None,
    } for sw in fabric.switches]


CHUNK_ROWS = 4096  # rows per streamed chunk: big enough to write efficiently, small in memory


def csv_chunks(fabric: Fabric, rows: Iterable[Row] | None = None) -> Iterator[str]:
    """RFC 4180 CSV with a header; empty cells for None; `\\n` line ends for stable diffs.
    Given in chunks of CHUNK_ROWS rows, so the table is never whole in memory."""
    cols = columns(fabric)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(cols)
    for i, row in enumerate(rows if rows is not None else iter_cable_rows(fabric), 1):
        writer.writerow(["" if row[c] is None else row[c] for c in cols])
        if i % CHUNK_ROWS == 0:
            yield out.getvalue()
            out.seek(0)
            out.truncate()
    yield out.getvalue()


def render_csv(fabric: Fabric, rows: list[Row] | None = None) -> str:
    return "".join(csv_chunks(fabric, rows))


def json_chunks(fabric: Fabric, rows: Iterable[Row] | None = None) -> Iterator[str]:
    """`{"cables": [...], "name": ..., "switches": [...]}`: byte for byte what json_text (sorted
    keys, indent 2) writes for the whole document, written a chunk of rows at a time (orjson
    on one document of 400k rows needs gigabytes, and crashed under a memory cap)."""
    yield '{\n  "cables": '
    yield from _json_array(rows if rows is not None else iter_cable_rows(fabric))
    yield f',\n  "name": {orjson.dumps(fabric.name).decode()},\n  "switches": '
    yield from _json_array(switch_rows(fabric))
    yield "\n}\n"


_ROW_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS


def _json_array(items: Iterable[Row]) -> Iterator[str]:
    """A JSON list at nesting level 1 of an indent-2 document: each item's own indent-2 text
    shifted right by four spaces, as the whole document's serialisation places it."""
    chunk: list[str] = []
    empty = True
    for item in items:
        text = orjson.dumps(item, option=_ROW_OPTIONS).decode()
        chunk.append(("[\n    " if empty else ",\n    ") + text.replace("\n", "\n    "))
        empty = False
        if len(chunk) == CHUNK_ROWS:
            yield "".join(chunk)
            chunk = []
    chunk.append("[]" if empty else "\n  ]")
    yield "".join(chunk)


def render_json(fabric: Fabric, rows: list[Row] | None = None) -> str:
    return "".join(json_chunks(fabric, rows))


def _dot_text(text: str) -> str:
    """A DOT double-quoted string: quotes and backslashes escaped, newlines as label breaks."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def render_dot(fabric: Fabric, grouped: FabricView | None = None, gpus_per_node: int = 0) -> str:
    """Undirected DOT graph, one node per group of devices and one edge per group pair.

    Groups are what summary.view makes (a plane's leaves of a scalable unit, a pod's spines, a
    core group), merged further past DOT_MAX_GROUPS per tier so a 100k-GPU fabric still draws;
    edge labels are cable counts. Hosts are never drawn one by one.
    """
    v = grouped if grouped is not None else view(fabric, DOT_MAX_GROUPS, gpus_per_node)
    speed = format_speed(fabric.speed_gbps)
    lines = [
        f"// fabgen cabling of {fabric.name}: devices grouped by tier, plane and unit;",
        "// edge labels count the cables between two groups.",
        f"graph {_dot_text(fabric.name)} {{",
        "  graph [rankdir=BT, nodesep=0.3, ranksep=1.2, splines=line];",
        '  node [shape=box, style=rounded, fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    def node_lines(groups: tuple[Group, ...], indent: str) -> list[str]:
        out = [f"{indent}{{ rank=same; // {groups[0].role}"]
        for g in groups:
            label = "\n".join(part for part in (g.label, g.detail, g.model) if part)
            out.append(f"{indent}  {_dot_text(g.id)} [label={_dot_text(label)}];")
        out.append(f"{indent}}}")
        return out

    # Planes are disjoint copies; a cluster per plane keeps each one's tiers together.
    for plane in range(fabric.planes):
        rows = [tuple(g for g in v.row(role) if g.plane == plane)
                for role in ("core", "spine", "leaf")]
        if fabric.planes == 1:
            lines.extend(line for row in rows if row for line in node_lines(row, "  "))
            continue
        lines.append(f"  subgraph {_dot_text(f'cluster_plane{plane + 1}')} {{")
        lines.append(f"    label={_dot_text(f'plane {plane + 1}')};")
        lines.extend(line for row in rows if row for line in node_lines(row, "    "))
        lines.append("  }")
    if v.row("hosts"):
        lines.extend(node_lines(v.row("hosts"), "  "))
    for e in v.edges:
        label = f"{e.links:,} x {speed}"
        lines.append(f"  {_dot_text(e.a)} -- {_dot_text(e.z)} [label={_dot_text(label)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


class CablingTarget:
    """The `cabling` target: cabling/cabling.csv, cabling/cabling.json, cabling/topology.dot."""

    name = "cabling"
    description = "cable plan (CSV, JSON) and a grouped topology drawing (graphviz DOT)"

    def applies(self, ctx: RenderContext) -> bool:
        # Every fabric has cables, InfiniBand and RoCE alike.
        del ctx
        return True

    def render(self, ctx: RenderContext) -> Artifacts:
        return {path: text if isinstance(text, str) else "".join(text)
                for path, text in self.render_iter(ctx)}

    def render_iter(self, ctx: RenderContext) -> Stream:
        """The tables as chunks, a few thousand rows at a time (fabgen.render streams them to
        disk): each table builds its rows afresh rather than holding them all between two."""
        fabric = ctx.fabric
        lengths = ctx.derived(cable_lengths) if ctx.qos is not None else None
        yield "cabling/cabling.csv", csv_chunks(fabric, iter_cable_rows(fabric, ctx.index,
                                                                        lengths))
        yield "cabling/cabling.json", json_chunks(fabric, iter_cable_rows(fabric, ctx.index,
                                                                          lengths))
        yield "cabling/topology.dot", render_dot(fabric,
                                                 gpus_per_node=ctx.intent.cluster.node.gpus)
        for extra in fabric.extras:
            index = ctx.index.extras[extra.role]
            yield f"cabling/{extra.role}.csv", csv_chunks(extra, iter_cable_rows(extra, index))
            yield f"cabling/{extra.role}.json", json_chunks(extra, iter_cable_rows(extra, index))


TARGET = CablingTarget()
