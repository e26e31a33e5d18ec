"""A plain SVG picture of the fabric by tier: boxes per group of devices, cable counts between.

Written by hand (no graphviz) so the report renders anywhere and the text is byte-stable. The
picture aggregates: rows are tiers (core, spine, leaf, nodes), a box is a group from
summary.view, planes after the first (identical copies) share one box per row, and a row shows at
most ROW_MAX_BOXES boxes, ending with "... N more" past that, so a 100k-GPU fabric draws as small
as a pod.
"""

from __future__ import annotations

from dataclasses import dataclass
from xml.sax.saxutils import escape, quoteattr

from fabgen.intent.units import format_speed
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
_ROWS: tuple[tuple[GroupRole, str], ...] = (
    ("core", "core"), ("spine", "spine"), ("leaf", "leaf"), ("hosts", "nodes"))
_FILL: dict[GroupRole, str] = {
    "core": "#f3e5f5", "spine": "#e3f2fd", "leaf": "#e8f5e9", "hosts": "#fff8e1"}
_KIND_BETWEEN = {"spine-core": ("spine", "core"), "leaf-spine": ("leaf", "spine"),
                 "node-leaf": ("hosts", "leaf"), "sm-leaf": ("hosts", "leaf")}


@dataclass(frozen=True, slots=True)
class _Box:
    x: int
    y: int
    lines: tuple[str, ...]
    role: GroupRole
    more: bool = False


def _text(x: int, y: int, text: str, *, size: int = 11, anchor: str = "middle",
          weight: str = "normal", halo: bool = False) -> str:
    halo_attr = ' stroke="#ffffff" stroke-width="3" paint-order="stroke"' if halo else ""
    return (f'<text x="{x}" y="{y}" font-size="{size}" text-anchor="{anchor}" '
            f'font-weight="{weight}"{halo_attr}>{escape(text)}</text>')


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
                      f"{others} groups, as plane 1"))
    room = ROW_MAX_BOXES - len(extra)
    if len(first) > room:
        shown = first[:room - 1]
        extra.insert(0, (f"\u2026 {len(first) - len(shown)} more", "groups like these"))
        first = shown
    return first, tuple(extra)


def render_svg(fabric: Fabric, gpus_per_node: int = 0, grouped: FabricView | None = None) -> str:
    """The picture as SVG text (UTF-8, trailing newline); pure and deterministic."""
    v = grouped if grouped is not None else view(fabric, SVG_MAX_GROUPS, gpus_per_node)
    rows = [(role, title, *_visible(v.row(role), fabric.planes))
            for role, title in _ROWS if v.row(role)]
    # Plane-1 boxes are centred on one axis in every row, summary boxes go to their right, so
    # a unit's nodes sit under its leaves whatever the other rows hold.
    widest_shown = max((len(shown) for _, _, shown, _ in rows), default=1)
    widest = widest_shown + max((len(extra) for _, _, _, extra in rows), default=0)
    width = _LEFT + widest * (_BOX_W + _GAP_X) - _GAP_X + _RIGHT
    height = _TOP + len(rows) * (_BOX_H + _ROW_GAP) - _ROW_GAP + _BOTTOM

    boxes: dict[str, _Box] = {}
    row_y: dict[GroupRole, int] = {}
    more_boxes: list[_Box] = []
    labels: list[str] = []
    for i, (role, title, shown, extra) in enumerate(rows):
        y = _TOP + i * (_BOX_H + _ROW_GAP)
        row_y[role] = y
        x0 = _LEFT + (widest_shown - len(shown)) * (_BOX_W + _GAP_X) // 2
        for j, g in enumerate(shown):
            lines = tuple(part for part in (g.label, g.detail, g.model) if part)
            boxes[g.id] = _Box(x0 + j * (_BOX_W + _GAP_X), y, lines, role)
        for k, lines in enumerate(extra):
            more_boxes.append(_Box(x0 + (len(shown) + k) * (_BOX_W + _GAP_X), y, lines, role,
                                   True))
        # The subnet-manager hosts share the nodes' row but are not nodes.
        members = sum(g.members for g in v.row(role) if g.id != SM_GROUP_ID)
        labels.append(_text(10, y + _BOX_H // 2 - 4, title, size=13, anchor="start",
                            weight="bold"))
        labels.append(_text(10, y + _BOX_H // 2 + 12, f"{members:,} total", size=11,
                            anchor="start"))

    speed = format_speed(fabric.speed_gbps)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif">',
        f"<title>{escape(fabric.name)} fabric</title>",
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>',
        _text(10, 24, f"{fabric.name}: {fabric.tiers}-tier {fabric.transport} fabric, "
              f"{speed} links, {fabric.planes} plane(s)", size=15, anchor="start",
              weight="bold"),
        _text(10, 44, "boxes are groups of devices; numbers on lines count cables", size=11,
              anchor="start"),
    ]
    # Cables first so boxes paint over line ends.
    per_kind: dict[str, int] = {}
    for e in v.edges:
        per_kind[e.kind] = per_kind.get(e.kind, 0) + e.links
    drawn = [e for e in v.edges if e.a in boxes and e.z in boxes]
    label_kinds = {kind for kind in per_kind
                   if sum(1 for e in drawn if e.kind == kind) <= EDGE_LABELS_MAX}
    for e in drawn:
        a, z = boxes[e.a], boxes[e.z]
        x1, y1 = a.x + _BOX_W // 2, a.y
        x2, y2 = z.x + _BOX_W // 2, z.y + _BOX_H
        out.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#90a4ae" '
                   'stroke-width="1.5"/>')
    for e in drawn:
        if e.kind not in label_kinds:
            continue
        a, z = boxes[e.a], boxes[e.z]
        mx = (a.x + z.x) // 2 + _BOX_W // 2
        my = (a.y + z.y + _BOX_H) // 2 + 4
        out.append(_text(mx, my, f"{e.links:,}", size=10, halo=True))
    for kind, total in per_kind.items():
        lower, upper = _KIND_BETWEEN[kind]
        if lower in row_y and upper in row_y:
            y = (row_y[lower] + row_y[upper] + _BOX_H) // 2 + 4
            y += 12 if kind == "sm-leaf" else 0  # under the node-leaf total of the same gap
            out.append(_text(10, y, f"{total:,} x {speed} {kind}", size=10, anchor="start"))
    out.extend(labels)
    for box in [*boxes.values(), *more_boxes]:
        dash = ' stroke-dasharray="4 3"' if box.more else ""
        out.append(f'<rect x="{box.x}" y="{box.y}" width="{_BOX_W}" height="{_BOX_H}" rx="6" '
                   f'fill={quoteattr(_FILL[box.role])} stroke="#455a64"{dash}/>')
        first = box.y + _BOX_H // 2 - 7 * (len(box.lines) - 1) + 4
        for k, line in enumerate(box.lines):
            out.append(_text(box.x + _BOX_W // 2, first + 14 * k, line,
                             weight="bold" if k == 0 else "normal"))
    out.append("</svg>")
    return "\n".join(out) + "\n"
