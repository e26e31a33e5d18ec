"""report.svg fits its text (issue 29): the title, the legend, the row labels and every box's
lines stay on the canvas for every fabric size, in the fonts a viewer falls back to. Measured
on a real render: rsvg-convert draws the picture on a canvas grown by a transparent margin, and
no ink may land in the margin. The storage and management networks are drawn."""

from __future__ import annotations

import functools
import re
import subprocess
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from fabgen.intent import load
from fabgen.intent.models import Intent
from fabgen.targets.picture import render_svg
from fabgen.topology.build import build
from fabgen.topology.model import Fabric
from tests.conftest import INVENTORIES, require_fonts, require_tool
from tests.png import alpha

SVG = "{http://www.w3.org/2000/svg}"
MARGIN = 40  # px of transparent canvas around the picture's own

# Every shape of picture: one SU (the cut title of issue 29), several, planes, three tiers
# with many groups, the longest fabric name, the extra networks (ib-ndr-1024).
SHAPES: dict[str, dict[str, Any]] = {
    "one-su-longest-name": {
        "name": "a" * 30 + "-" + "b" * 32,  # 63 characters, names' limit
        "fabric": {"transport": "roce", "speed": "400G"}, "cluster": {"nodes": 8},
        "topology": {"leaf": {"model": "sn5600", "breakout": "2x400G"}}},
    "two-planes": {
        "name": "roce-2-planes", "fabric": {"transport": "roce", "speed": "200G"},
        "cluster": {"nodes": 256, "node": {"nic_ports": 2, "nic": "connectx-7"}},
        "topology": {"planes": 2, "leaf": {"model": "sn5600", "breakout": "4x200G"}}},
    "three-tiers-many-groups": {
        "name": "ib-3-tier", "fabric": {"transport": "infiniband", "generation": "ndr"},
        "cluster": {"nodes": 2048},
        "topology": {"leaf": {"model": "qm9700"}, "scalable_unit": 32, "tiers": 3}},
}


NAMES = [p.stem for p in INVENTORIES] + list(SHAPES)


@functools.cache
def _fabric(name: str) -> tuple[Fabric, int]:
    """(fabric, GPUs per node) of an inventory or a shape, built once."""
    path = next((p for p in INVENTORIES if p.stem == name), None)
    intent = load(path).intent if path else Intent.model_validate(SHAPES[name])
    return build(intent), intent.cluster.node.gpus


def _fonts() -> list[str]:
    """The fonts the measurement uses: Liberation Sans (Arial's metrics, what Helvetica and
    Arial map to on Linux) and DejaVu Sans (the wider fallback)."""
    require_tool("rsvg-convert")
    wanted = ["Liberation Sans", "DejaVu Sans"]
    require_fonts(*wanted)
    return wanted


def _ink_outside(svg: str, font: str) -> list[tuple[int, int]]:
    """Pixels with ink outside the picture's own canvas, as rsvg-convert draws it in `font`."""
    head = re.match(r'<svg xmlns="http://www.w3.org/2000/svg" width="(\d+)" height="(\d+)" '
                    r'viewBox="0 0 \1 \2" font-family="[^"]*"', svg)
    assert head, svg[:200]
    w, h = int(head[1]), int(head[2])
    grown = svg.replace(head[0], (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w + 2 * MARGIN}" '
        f'height="{h + 2 * MARGIN}" viewBox="{-MARGIN} {-MARGIN} {w + 2 * MARGIN} '
        f'{h + 2 * MARGIN}" font-family="{font}"'), 1)
    png = subprocess.run(["rsvg-convert", "--format", "png"], input=grown.encode(),
                         capture_output=True, check=True).stdout
    width, height, rows = alpha(png)
    assert (width, height) == (w + 2 * MARGIN, h + 2 * MARGIN)
    inside_x = range(MARGIN, MARGIN + w)
    inside_y = range(MARGIN, MARGIN + h)
    assert rows[MARGIN + h // 2][MARGIN + w // 2] == 255, "the picture is drawn"
    return [(x - MARGIN, y - MARGIN) for y, row in enumerate(rows) for x, a in enumerate(row)
            if a and not (x in inside_x and y in inside_y)]


@pytest.mark.parametrize("name", NAMES)
def test_every_text_fits_the_canvas(name: str) -> None:
    fabric, gpus = _fabric(name)
    svg = render_svg(fabric, gpus)
    for font in _fonts():
        outside = _ink_outside(svg, font)
        assert not outside, (f"{name} in {font}: {len(outside)} px of ink off the canvas, "
                             f"e.g. {outside[:5]}")


def test_the_title_was_cut_before() -> None:
    """The measurement catches what issue 29 saw: the canvas of the single-SU example at its
    old width (338 px) cuts the title."""
    fabric, gpus = _fabric("roce-256-sonic")
    svg = render_svg(fabric, gpus)
    width = re.search(r'width="(\d+)"', svg)
    assert width and int(width[1]) > 338
    old = re.sub(r'width="\d+" height="(\d+)" viewBox="0 0 \d+ \1"',
                 r'width="338" height="\1" viewBox="0 0 338 \1"', svg, count=1)
    assert _ink_outside(old, _fonts()[0])


def test_storage_and_management_networks_are_drawn() -> None:
    fabric, gpus = _fabric("ib-ndr-1024")
    root = ET.fromstring(render_svg(fabric, gpus))
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert {e.role for e in fabric.extras} == {"storage", "management"}
    for net in fabric.extras:
        assert f"{net.role} network" in texts
        leaves, spines = len(net.switches_of("leaf")), len(net.switches_of("spine"))
        assert f"{leaves} leaves, {spines} spines" in texts
        cables = sum(1 for x in net.links if x.kind == "node-leaf")
        assert f"{cables:,}" in texts  # on the line from the nodes
        assert any(t and t.startswith(f"{cables:,} x ") and t.endswith(f"node-{net.role}")
                   for t in texts)
    assert "networks" in texts
    # A fabric without them draws no such row.
    plain = ET.fromstring(render_svg(*_fabric("roce-256-sonic")))
    assert "networks" not in [t.text for t in plain.iter(f"{SVG}text")]
