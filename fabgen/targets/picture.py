"""A plain SVG picture of the fabric by tier: boxes per group of devices, cable counts between.

Written by hand (no graphviz) so the report renders anywhere and the text is byte-stable. The
picture aggregates: rows are tiers (core, spine, leaf, nodes), a box is a group from
summary.view, planes after the first (identical copies) share one box per row, and a row shows at
most ROW_MAX_BOXES boxes, ending with "... N more" past that, so a 100k-GPU fabric draws as small
as a pod. The separate storage and management networks the intent defines are a row of their
own under the nodes: a box each, cabled to the nodes.

The canvas is sized to its text (svg_text measures it): the title, the legend and the row
labels on the left fit whatever the fabric's size, and a box's lines are cut to its width.
"""

from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from fabgen.intent.units import format_speed
from fabgen.targets.svg_text import text_width
from fabgen.topology.model import Fabric
from fabgen.topology.summary import SM_GROUP_ID, FabricView, Group, GroupRole, view

__all__ = ["ROW_MAX_BOXES", "SVG_MAX_GROUPS", "render_svg"]

# Groups per tier and plane before consecutive units/pods merge into one box.
SVG_MAX_GROUPS = 8
# Boxes drawn per row, the "... N more" box included; keeps the width readable on a screen.
ROW_MAX_BOXES = 10
# Past this many lines between two rows, per-line labels overlap; the row total is enough.
EDGE_LABELS_MAX = 16

_BOX_W, _BOX_H, _GAP_X, _ROW_GAP = 168, 60, 16, 90
_LEFT, _TOP, _RIGHT, _BOTTOM = 150, 70, 20, 30
_MARGIN = 10  # the left edge of the title, the legend and the row labels
_LABEL_GAP = 16  # between the row labels and the first box
_ROWS: tuple[tuple[GroupRole, str], ...] = (
    ("core", "core"), ("spine", "spine"), ("leaf", "leaf"), ("hosts", "nodes"))
_FILL: dict[GroupRole, str] = {
    "core": "#f3e5f5", "spine": "#e3f2fd", "leaf": "#e8f5e9", "hosts": "#fff8e1"}
_NETWORK_FILL = "#eceff1"
_KIND_BETWEEN = {"spine-core": ("spine", "core"), "leaf-spine": ("leaf", "spine"),
                 "node-leaf": ("hosts", "leaf"), "sm-leaf": ("hosts", "leaf")}
_TRANSPORT = {"roce": "Ethernet", "infiniband": "InfiniBand"}


@dataclass(frozen=True, slots=True)
class _Box:
    x: int
    y: int
    lines: tuple[str, ...]
    fill: str
    more: bool = False


@dataclass(frozen=True, slots=True)
class _Text:
    x: int
    y: int
    text: str
    size: int = 11
    anchor: str = "middle"
    bold: bool = False
    halo: bool = False

    def svg(self) -> str:
        halo = ' stroke="#ffffff" stroke-width="3" paint-order="stroke"' if self.halo else ""
        weight = "bold" if self.bold else "normal"
        return (f'<text x="{self.x}" y="{self.y}" font-size="{self.size}" '
                f'text-anchor="{self.anchor}" font-weight="{weight}"{halo}>'
                f"{escape(self.text)}</text>")

    def width(self) -> int:
        return text_width(self.text, self.size, bold=self.bold)


def _fit(text: str, size: int, room: int, *, bold: bool = False) -> str:
    """`text`, cut with an ellipsis to fit `room` px (a box's line; names are short, but a
    custom model's key is the intent's)."""
    if text_width(text, size, bold=bold) <= room:
        return text
    while text and text_width(text + "\u2026", size, bold=bold) > room:
        text = text[:-1]
    return text + "\u2026"


def _visible(row: tuple[Group, ...], planes: int) -> tuple[tuple[Group, ...],
                                                              tuple[tuple[str, str], ...]]:
    """The groups drawn in a row, and the text of the summary boxes that stand for the rest.

    Planes are identical copies, so only plane 1 is drawn box by box; the others get one box.
    """
    first = tuple(g for g in row if g.plane in (None, 0))
    extra: list[tuple[str, str]] = []
    others = len(row) - len(first)
    if others:
        extra.append((f"planes 2-{planes}" if planes > 2 else "plane 2",
                      f"{others} group{'s' if others != 1 else ''}, as plane 1"))
    room = ROW_MAX_BOXES - len(extra)
    if len(first) > room:
        shown = first[:room - 1]
        extra.insert(0, (f"\u2026 {len(first) - len(shown)} more", "groups like these"))
        first = shown
    return first, tuple(extra)


def _network_lines(net: Fabric) -> tuple[str, ...]:
    """A storage or management network's box: what it is, its switches, its links."""
    names = {"leaf": ("leaf", "leaves"), "spine": ("spine", "spines")}
    tiers = ", ".join(f"{n:,} {names[role][n != 1]}" for role in ("leaf", "spine")
                      if (n := len(net.switches_of(role))))
    models = "/".join(dict.fromkeys(s.model for s in net.switches))
    return (f"{net.role} network", tiers,
            f"{models}, {format_speed(net.speed_gbps)} {_TRANSPORT[net.transport]}")


def render_svg(fabric: Fabric, gpus_per_node: int = 0, grouped: FabricView | None = None) -> str:
    """The picture as SVG text (UTF-8, trailing newline); pure and deterministic."""
    v = grouped if grouped is not None else view(fabric, SVG_MAX_GROUPS, gpus_per_node)
    rows = [(role, title, *_visible(v.row(role), fabric.planes))
            for role, title in _ROWS if v.row(role)]
    networks = [net for net in fabric.extras if net.role in ("storage", "management")]
    speed = format_speed(fabric.speed_gbps)

    # The text left of the boxes: each row's name and total, each cable kind's total.
    per_kind: dict[str, int] = {}
    for e in v.edges:
        per_kind[e.kind] = per_kind.get(e.kind, 0) + e.links
    row_labels: list[tuple[int, str, str]] = []  # (row index, name, total)
    for i, (role, name, _, _) in enumerate(rows):
        # The subnet-manager hosts share the nodes' row but are not nodes.
        members = sum(g.members for g in v.row(role) if g.id != SM_GROUP_ID)
        row_labels.append((i, name, f"{members:,} total"))
    if networks:
        switches = sum(len(net.switches) for net in networks)
        row_labels.append((len(rows), "networks", f"{switches:,} switches"))
    kind_labels = {kind: f"{total:,} x {speed} {kind}" for kind, total in per_kind.items()}
    network_labels = [f"{sum(1 for x in net.links if x.kind == 'node-leaf'):,} x "
                      f"{format_speed(net.speed_gbps)} node-{net.role}" for net in networks]
    label_w = max([text_width(name, 13, bold=True) for _, name, _ in row_labels]
                  + [text_width(total, 11) for _, _, total in row_labels]
                  + [text_width(text, 10) for text in [*kind_labels.values(), *network_labels]])
    left = max(_LEFT, _MARGIN + label_w + _LABEL_GAP)

    # Plane-1 boxes are centred on one axis in every row, summary boxes go to their right, so
    # a unit's nodes sit under its leaves whatever the other rows hold.
    widest_shown = max([len(shown) for _, _, shown, _ in rows] + [len(networks)], default=1)
    widest = widest_shown + max((len(extra) for _, _, _, extra in rows), default=0)
    boxes_w = widest * (_BOX_W + _GAP_X) - _GAP_X
    title = _Text(_MARGIN, 24, f"{fabric.name}: {fabric.tiers}-tier {fabric.transport} fabric, "
                  f"{speed} links, {fabric.planes} plane(s)", size=15, anchor="start", bold=True)
    legend = _Text(_MARGIN, 44, "boxes are groups of devices; numbers on lines count cables",
                   anchor="start")
    width = max(left + boxes_w, _MARGIN + title.width(), _MARGIN + legend.width()) + _RIGHT
    left += (width - _RIGHT - left - boxes_w) // 2  # the boxes in the middle of their room
    row_count = len(rows) + (1 if networks else 0)
    height = _TOP + row_count * (_BOX_H + _ROW_GAP) - _ROW_GAP + _BOTTOM

    boxes: dict[str, _Box] = {}
    row_y: dict[GroupRole, int] = {}
    more_boxes: list[_Box] = []
    host_more: list[_Box] = []  # the nodes row's summary boxes (the networks reach them too)
    for i, (role, _, shown, extra) in enumerate(rows):
        y = _TOP + i * (_BOX_H + _ROW_GAP)
        row_y[role] = y
        x0 = left + (widest_shown - len(shown)) * (_BOX_W + _GAP_X) // 2
        for j, g in enumerate(shown):
            lines = tuple(part for part in (g.label, g.detail, g.model) if part)
            boxes[g.id] = _Box(x0 + j * (_BOX_W + _GAP_X), y, lines, _FILL[role])
        for k, lines in enumerate(extra):
            more_boxes.append(_Box(x0 + (len(shown) + k) * (_BOX_W + _GAP_X), y, lines,
                                   _FILL[role], True))
            if role == "hosts":
                host_more.append(more_boxes[-1])
    texts: list[_Text] = []
    for i, name, total in row_labels:
        y = _TOP + i * (_BOX_H + _ROW_GAP)
        texts.append(_Text(_MARGIN, y + _BOX_H // 2 - 4, name, size=13, anchor="start",
                           bold=True))
        texts.append(_Text(_MARGIN, y + _BOX_H // 2 + 12, total, anchor="start"))

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif">',
        f"<title>{escape(fabric.name)} fabric</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        title.svg(), legend.svg(),
    ]
    # Cables first so boxes paint over line ends.
    drawn = [e for e in v.edges if e.a in boxes and e.z in boxes]
    label_kinds = {kind for kind in per_kind
                   if sum(1 for e in drawn if e.kind == kind) <= EDGE_LABELS_MAX}
    line = ('<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#90a4ae" '
            'stroke-width="1.5"/>').format
    for e in drawn:
        a, z = boxes[e.a], boxes[e.z]
        out.append(line(a.x + _BOX_W // 2, a.y, z.x + _BOX_W // 2, z.y + _BOX_H))
    edge_labels: list[_Text] = []
    for e in drawn:
        if e.kind not in label_kinds:
            continue
        a, z = boxes[e.a], boxes[e.z]
        mx = (a.x + z.x) // 2 + _BOX_W // 2
        my = (a.y + z.y + _BOX_H) // 2 + 4
        edge_labels.append(_Text(mx, my, f"{e.links:,}", size=10, halo=True))
    for kind, text in kind_labels.items():
        lower, upper = _KIND_BETWEEN[kind]
        if lower in row_y and upper in row_y:
            y = (row_y[lower] + row_y[upper] + _BOX_H) // 2 + 4
            y += 12 if kind == "sm-leaf" else 0  # under the node-leaf total of the same gap
            texts.append(_Text(_MARGIN, y, text, size=10, anchor="start"))
    if networks:
        # Every node box drops a stub onto a bus under the nodes row; each network hangs from
        # the bus: the networks reach all the nodes (not the subnet-manager hosts).
        y = _TOP + len(rows) * (_BOX_H + _ROW_GAP)
        top = row_y.get("hosts", y - _ROW_GAP - _BOX_H) + _BOX_H
        bus = top + _ROW_GAP // 3
        node_boxes = [boxes[g.id] for g in v.row("hosts") if g.id in boxes
                      and g.id != SM_GROUP_ID] + host_more
        x0 = left + (widest_shown - len(networks)) * (_BOX_W + _GAP_X) // 2
        drops = [x0 + k * (_BOX_W + _GAP_X) + _BOX_W // 2 for k in range(len(networks))]
        stubs = [b.x + _BOX_W // 2 for b in node_boxes]
        out.extend(line(x, top, x, bus) for x in stubs)
        out.append(line(min(stubs + drops), bus, max(stubs + drops), bus))
        for k, (net, x) in enumerate(zip(networks, drops, strict=True)):
            more_boxes.append(_Box(x - _BOX_W // 2, y, _network_lines(net), _NETWORK_FILL))
            out.append(line(x, bus, x, y))
            cables = sum(1 for link in net.links if link.kind == "node-leaf")
            edge_labels.append(_Text(x, (bus + y) // 2 + 4, f"{cables:,}", size=10, halo=True))
            texts.append(_Text(_MARGIN, (top + y) // 2 + 4 + 12 * k,
                               network_labels[k], size=10, anchor="start"))
    out.extend(t.svg() for t in edge_labels)
    out.extend(t.svg() for t in texts)
    for box in [*boxes.values(), *more_boxes]:
        dash = ' stroke-dasharray="4 3"' if box.more else ""
        out.append(f'<rect x="{box.x}" y="{box.y}" width="{_BOX_W}" height="{_BOX_H}" rx="6" '
                   f'fill={quoteattr(box.fill)} stroke="#455a64"{dash}/>')
        first = box.y + _BOX_H // 2 - 7 * (len(box.lines) - 1) + 4
        for k, text in enumerate(box.lines):
            bold = k == 0
            out.append(_Text(box.x + _BOX_W // 2, first + 14 * k,
                             _fit(text, 11, _BOX_W - 8, bold=bold), bold=bold).svg())
    out.append("</svg>")
    return "\n".join(out) + "\n"
