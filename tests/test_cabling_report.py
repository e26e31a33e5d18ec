"""Tests of the cabling and report targets, port naming and the fabric summary."""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabgen import catalog
from fabgen.catalog.ports import cage_of, native_lanes, port_name, switch_port_name
from fabgen.intent import load
from fabgen.intent.models import Intent
from fabgen.targets import opensm_plan
from fabgen.targets.base import RenderContext
from fabgen.targets.cabling import TARGET as CABLING
from fabgen.targets.cabling import columns, render_dot
from fabgen.targets.report import TARGET as REPORT
from fabgen.topology.build import build
from fabgen.topology.model import Fabric
from fabgen.topology.sizing import SizingError
from fabgen.topology.summary import host_ports_per_cage, summarize, view
from tests.conftest import require_tool

ROOT = Path(__file__).resolve().parent.parent
INVENTORIES = sorted(p.stem for p in (ROOT / "inventories").glob("*.yaml"))
SVG = "{http://www.w3.org/2000/svg}"

# Shapes the inventories do not cover: 3 tiers, rail-unaware, dual-plane, a partial SU, custom
# switches, 4-lane cages. Port names and cage counts break in exactly these corners.
EXTRA: dict[str, dict[str, Any]] = {
    "ib-3tier-partial": {
        "name": "ib-3tier-partial",
        "fabric": {"transport": "infiniband", "generation": "ndr"},
        # 126 nodes + 1 slot of subnet-manager hosts: SU 4 stays one slot short of full.
        "cluster": {"nodes": 126},
        "topology": {"leaf": {"model": "qm9700"}, "scalable_unit": 32, "tiers": 3},
    },
    "roce-unaware-eos": {
        "name": "roce-unaware-eos",
        "fabric": {"transport": "roce", "speed": "400G"},
        "cluster": {"nodes": 24, "node": {"model": "hgx-h100"}},
        "topology": {"style": "rail-unaware", "leaf": {"model": "7060x6-64pe"},
                     "oversubscription": "3:1"},
        "platforms": {"leaf": "eos", "spine": "sonic"},
    },
    "roce-dual-plane-nvue": {
        "name": "roce-dual-plane-nvue",
        "fabric": {"transport": "roce", "speed": "200G"},
        "cluster": {"nodes": 40, "node": {"nic_ports": 2, "nic": "connectx-7"}},
        "topology": {"planes": 2, "leaf": {"model": "sn5600", "breakout": "4x200G"},
                     "spine": {"model": "sn5600", "breakout": "4x200G"}},
        "platforms": {"leaf": "nvue"},
    },
    "roce-100g-qsfp28": {
        "name": "roce-100g-qsfp28",
        "fabric": {"transport": "roce", "speed": "100G"},
        "cluster": {"nodes": 16, "node": {"nic": "connectx-6", "nics": 4}},
        "topology": {"leaf": {"model": "sn4600c"}},
        "platforms": {"leaf": "sonic", "spine": "nvue"},  # EOS runs on no SN4600C
    },
    "roce-custom": {
        "name": "roce-custom",
        "fabric": {"transport": "roce", "speed": "400G"},
        "cluster": {"nodes": 8},
        "topology": {"leaf": {"ports": 32, "speed": "800G", "breakout": "2x400G"}},
        # A custom switch has no SONiC HwSKU (refused on SONiC at load): EOS names its ports.
        "platforms": {"leaf": "eos"},
    },
}
CASES = [*INVENTORIES, *EXTRA]

_BUILT: dict[str, tuple[Intent, Fabric]] = {}


def _get(case: str) -> tuple[Intent, Fabric]:
    if case not in _BUILT:
        if case in EXTRA:
            intent = Intent.model_validate(EXTRA[case])
        else:
            intent = load(ROOT / "inventories" / f"{case}.yaml").intent
        _BUILT[case] = (intent, build(intent))
    return _BUILT[case]


def _render(case: str) -> dict[str, str]:
    intent, fabric = _get(case)
    ctx = RenderContext(intent, fabric)
    return {**CABLING.render(ctx), **REPORT.render(ctx)}


def _csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


# --- port naming ------------------------------------------------------------------------------

PORT_NAMES = [
    # (platform, logical port, breakout, lanes, expected)
    ("sonic", 1, 1, 8, "Ethernet0"),
    ("sonic", 2, 1, 8, "Ethernet8"),
    ("sonic", 64, 1, 8, "Ethernet504"),
    ("sonic", 1, 2, 8, "Ethernet0"),
    ("sonic", 2, 2, 8, "Ethernet4"),
    ("sonic", 3, 2, 8, "Ethernet8"),
    ("sonic", 4, 4, 8, "Ethernet6"),
    ("sonic", 8, 8, 8, "Ethernet7"),
    ("sonic", 9, 8, 8, "Ethernet8"),
    ("sonic", 2, 1, 4, "Ethernet4"),
    ("sonic", 2, 2, 4, "Ethernet2"),
    ("eos", 1, 1, 8, "Ethernet1/1"),
    ("eos", 2, 1, 8, "Ethernet2/1"),
    ("eos", 1, 2, 8, "Ethernet1/1"),
    ("eos", 2, 2, 8, "Ethernet1/5"),
    ("eos", 3, 2, 8, "Ethernet2/1"),
    ("eos", 4, 4, 8, "Ethernet1/7"),
    ("eos", 8, 8, 8, "Ethernet1/8"),
    ("eos", 2, 2, 4, "Ethernet1/3"),
    ("nvue", 1, 1, 8, "swp1"),
    ("nvue", 64, 1, 8, "swp64"),
    ("nvue", 1, 2, 8, "swp1s0"),
    ("nvue", 2, 2, 8, "swp1s1"),
    ("nvue", 3, 2, 8, "swp2s0"),
    ("nvue", 8, 4, 8, "swp2s3"),
    ("infiniband", 1, 1, 8, "1"),
    ("infiniband", 64, 2, 8, "64"),
]


@pytest.mark.parametrize(("platform", "port", "breakout", "lanes", "expected"), PORT_NAMES)
def test_port_name(platform: str, port: int, breakout: int, lanes: int, expected: str) -> None:
    assert port_name(platform, port, breakout, lanes=lanes) == expected


def test_port_name_defaults_to_8_lanes() -> None:
    assert port_name("sonic", 2) == "Ethernet8"
    assert port_name("sonic", 2, 2) == "Ethernet4"


@pytest.mark.parametrize(("platform", "port", "breakout"),
                         [("sonic", 0, 1), ("sonic", 1, 3), ("no-such-os", 1, 1)])
def test_port_name_rejects(platform: str, port: int, breakout: int) -> None:
    with pytest.raises(ValueError):
        port_name(platform, port, breakout)


def test_native_lanes_from_cage() -> None:
    assert native_lanes("sn4600c") == 4  # QSFP28
    assert native_lanes("sn5600") == 8  # OSFP
    assert native_lanes("custom") == 8


def test_switch_port_name_and_cage() -> None:
    _, fabric = _get("ib-ndr-1024")
    leaf = fabric.switches_of("leaf")[0]
    assert switch_port_name(leaf, 33) == "33"
    # QM9700: two NDR ports per twin-port OSFP cage.
    assert [cage_of(leaf, p) for p in (1, 2, 3, 64)] == [0, 0, 1, 31]
    _, roce = _get("roce-256-sonic")
    leaf = roce.switches_of("leaf")[0]
    assert [switch_port_name(leaf, p) for p in (1, 2, 3)] == ["Ethernet0", "Ethernet4",
                                                               "Ethernet8"]
    # SN5600 split 2x400G: two logical ports per OSFP cage.
    assert [cage_of(leaf, p) for p in (1, 2, 3)] == [0, 0, 1]


# --- cabling ----------------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES)
def test_csv_one_row_per_link(case: str) -> None:
    _, fabric = _get(case)
    text = _render(case)["cabling/cabling.csv"]
    reader = csv.reader(io.StringIO(text))
    header = next(reader)
    assert tuple(header) == columns(fabric)
    body = list(reader)
    cables = (*fabric.links, *fabric.sm_links)  # the subnet-manager hosts' cables last
    assert len(body) == len(cables)
    assert all(len(row) == len(header) for row in body)
    rows = _csv_rows(text)
    assert [r["id"] for r in rows] == [link.id for link in cables]
    assert [(r["a_device"], r["z_device"]) for r in rows] == [
        (link.a_device, link.z_device) for link in cables]
    assert [r["kind"] for r in rows if r["kind"] == "sm-leaf"] == ["sm-leaf"] * len(
        fabric.sm_links)
    assert bool(fabric.sm_links) is (fabric.transport == "infiniband")
    assert {r["speed"] for r in rows} == {f"{fabric.speed_gbps}G"}
    roce = fabric.transport == "roce"
    assert ("a_address" in header) is roce
    if roce:
        assert all(r["a_address"].endswith("/31") and r["z_address"].endswith("/31")
                   for r in rows)


@pytest.mark.parametrize("case", CASES)
def test_json_round_trips_and_matches_csv(case: str) -> None:
    _, fabric = _get(case)
    out = _render(case)
    text = out["cabling/cabling.json"]
    doc = json.loads(text)
    assert json.dumps(doc, sort_keys=True, indent=2) + "\n" == text
    assert sorted(doc) == ["cables", "name", "switches"]
    assert len(doc["cables"]) == len(fabric.links) + len(fabric.sm_links)
    for obj, row in zip(doc["cables"], _csv_rows(out["cabling/cabling.csv"]), strict=True):
        assert set(obj) == set(columns(fabric))
        assert {k: "" if v is None else str(v) for k, v in obj.items()} == row
    assert [s["name"] for s in doc["switches"]] == [s.name for s in fabric.switches]
    assert set(doc["switches"][0]) == {"name", "role", "plane", "group", "rail", "model",
                                       "radix", "platform", "asn", "loopback"}


@pytest.mark.parametrize("case", CASES)
def test_every_port_used_once(case: str) -> None:
    _, fabric = _get(case)
    rows = _csv_rows(_render(case)["cabling/cabling.csv"])
    ends = [(r["a_device"], r["a_port"]) for r in rows] + [
        (r["z_device"], r["z_port"]) for r in rows]
    dupes = [end for end, n in Counter(ends).items() if n > 1]
    assert not dupes
    # Names are unique because the logical ports are: the naming is injective per switch.
    by_switch: dict[str, set[str]] = {}
    for device, port in ends:
        if device in fabric.by_name:
            by_switch.setdefault(device, set()).add(port)
    for name, ports in by_switch.items():
        radix = fabric.by_name[name].radix
        assert len({switch_port_name(fabric.by_name[name], p)
                     for p in range(1, radix + 1)}) == radix
        assert len(ports) <= radix


@pytest.mark.parametrize("case", CASES)
def test_dot_is_grouped(case: str) -> None:
    _, fabric = _get(case)
    dot = _render(case)["cabling/topology.dot"]
    assert dot.startswith("// fabgen cabling") and dot.endswith("}\n")
    nodes = [line for line in dot.splitlines() if "[label=" in line and " -- " not in line]
    edges = [line for line in dot.splitlines() if " -- " in line]
    assert len(nodes) < len(fabric.hosts) + len(fabric.switches)
    labelled = sum(int(line.split('label="')[1].split(" x ")[0].replace(",", ""))
                   for line in edges)
    assert labelled == len(fabric.links) + len(fabric.sm_links)
    if fabric.sm_hosts:
        assert f'"sm_hosts" [label="subnet manager\\n{len(fabric.sm_hosts)} hosts' in dot


@pytest.mark.realtool
@pytest.mark.parametrize("case", CASES)
def test_dot_renders_with_graphviz(case: str) -> None:
    require_tool("dot")
    dot = _render(case)["cabling/topology.dot"]
    result = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True,
                            check=False, timeout=60)
    assert result.returncode == 0, result.stderr
    assert not result.stderr


@pytest.mark.parametrize("case", CASES)
def test_renders_are_deterministic(case: str) -> None:
    intent, fabric = _get(case)
    first = _render(case)
    again = {**CABLING.render(RenderContext(intent, build(intent))),
             **REPORT.render(RenderContext(intent, fabric))}
    assert first == again
    extras = sorted(f"cabling/{e.role}.{ext}" for e in fabric.extras for ext in ("csv", "json"))
    assert sorted(first) == sorted(["cabling/cabling.csv", "cabling/cabling.json",
                                    "cabling/topology.dot", "report.md", "report.svg", *extras])
    assert all(text.endswith("\n") for text in first.values())


# --- summary ----------------------------------------------------------------------------------

def _recount_transceivers(fabric: Fabric, intent: Intent) -> tuple[int, int]:
    cages: dict[str, set[int]] = {}
    for link in (*fabric.links, *fabric.sm_links):
        ends = [(link.z_device, link.z_port)]
        if link.kind not in ("node-leaf", "sm-leaf"):
            ends.append((link.a_device, link.a_port))
        for device, port in ends:
            sw = fabric.by_name[device]
            model = catalog.switches().get(sw.model)
            per_cage = (model.ports_per_cage if model else 1) * sw.breakout
            cages.setdefault(device, set()).add((port - 1) // per_cage)
    host_ports = Counter(link.a_device for link in fabric.links if link.kind == "node-leaf")
    per = host_ports_per_cage(intent)
    return (sum(len(c) for c in cages.values()),
            sum(math.ceil(n / per) for n in host_ports.values()))


@pytest.mark.parametrize("case", CASES)
def test_summary_matches_recount(case: str) -> None:
    intent, fabric = _get(case)
    plan = summarize(fabric, intent)
    assert json.loads(json.dumps(plan)) == plan
    ib = fabric.transport == "infiniband"
    assert list(plan) == ["name", "transport", "speed_gbps", "nodes", "gpus", "tiers", "planes",
                          "rails", "scalable_units", "su_size", "switches", "switch_models",
                          "cables", "transceivers", "oversubscription", "bisection_gbps",
                          "networks", *(["sm_hosts"] if ib else [])]
    assert plan["networks"] == {
        e.role: {"transport": e.transport, "speed_gbps": e.speed_gbps,
                 "switches": dict(Counter(s.role for s in e.switches)),
                 "switch_models": {tf.role: tf.model for tf in e.tier_facts},
                 "cables": len(e.links)} for e in fabric.extras}
    kinds = Counter(link.kind for link in fabric.links)
    assert plan["cables"] == {"node-leaf": kinds["node-leaf"], "leaf-spine": kinds["leaf-spine"],
                              "spine-core": kinds["spine-core"]} | (
        {"sm-leaf": len(fabric.sm_links)} if ib else {})
    if ib:
        assert plan["sm_hosts"] == [h.name for h in fabric.sm_hosts]
    roles = Counter(sw.role for sw in fabric.switches)
    assert plan["switches"] == {"leaf": roles["leaf"], "spine": roles["spine"],
                                "core": roles["core"]}
    hosts = {link.a_device for link in fabric.links if link.kind == "node-leaf"}
    assert plan["nodes"] == len(hosts) == intent.cluster.nodes
    assert plan["gpus"] == len(hosts) * intent.cluster.node.gpus
    assert plan["tiers"] == (3 if kinds["spine-core"] else 2)
    assert plan["planes"] == len({link.plane for link in fabric.links})
    # Folded Clos: half of the narrowest tier of cables, which the builder computes from sizing.
    narrowest = min(n for n in kinds.values() if n)
    assert plan["bisection_gbps"] == narrowest * fabric.speed_gbps // 2
    switch_side, node_side = _recount_transceivers(fabric, intent)
    assert sum(n for k, n in plan["transceivers"].items() if k.startswith("switch ")) \
        == switch_side
    assert sum(n for k, n in plan["transceivers"].items() if k.startswith("node ")) \
        == node_side
    # Achieved leaf oversubscription from the cabling of the fullest leaf.
    down = Counter(link.z_device for link in fabric.links if link.kind == "node-leaf")
    up = Counter(link.a_device for link in fabric.links if link.kind == "leaf-spine")
    leaf = max(down, key=lambda name: (down[name], name))
    ratio = down[leaf] / up[leaf]
    num, den = (int(x) for x in plan["oversubscription"]["leaf"].split(":"))
    assert math.isclose(ratio, num / den)


def test_summary_superpod_numbers() -> None:
    # DGX SuperPOD H100 RA, 4 SU, 127 nodes: 32 leaves, 16 spines, 1,020 "Compute and UFM"
    # cables (1,016 + 4 UFM, Table 4) and 1,024 spine-leaf ones, 1536 switch OSFPs (48 x 32
    # cages: the UFM ports share the cages of the slot they take) and 4 twin-port OSFPs per DGX
    # (508, Table 8).
    intent, fabric = _get("ib-ndr-1024")
    plan = summarize(fabric, intent)
    assert plan["switches"] == {"leaf": 32, "spine": 16, "core": 0}
    assert plan["cables"] == {"node-leaf": 1016, "leaf-spine": 1024, "spine-core": 0,
                              "sm-leaf": 4}
    assert plan["cables"]["node-leaf"] + plan["cables"]["sm-leaf"] == 1020
    # The UFM hosts' own ends of the 4 UFM cables (the RA's 508 counts DGX systems only).
    assert plan["transceivers"] == {"switch OSFP (twin-port) 2x400G": 1536,
                                    "management host 1x400G": 4, "node 2x400G": 508}


@pytest.mark.parametrize("case", [c for c in CASES if _get(c)[0].fabric.transport
                                  == "infiniband"])
def test_bom_transceivers_match_the_cabling_sheet(case: str) -> None:
    """Every cable end in cabling.csv has its transceiver in the report's BoM: the compute
    nodes' per host cage, the management hosts' per port, the switches' per cage; the sheet's
    sm-leaf rows and the BoM's management-host count are the same ports."""
    intent, fabric = _get(case)
    files = _render(case)
    rows = _csv_rows(files["cabling/cabling.csv"])
    md = files["report.md"].splitlines()
    bom = {}
    for line in md[md.index("### Transceivers"):md.index("### Hosts per leaf")]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 2 and cells[1].replace(",", "").isdigit() and "Total" not in cells[0]:
            bom[cells[0]] = int(cells[1].replace(",", ""))
    sm = {(r["a_device"], r["a_port"]) for r in rows if r["kind"] == "sm-leaf"}
    assert len(sm) == len(fabric.sm_links) > 0
    assert bom[f"management host 1x{fabric.speed_gbps}G"] == len(sm)
    per = host_ports_per_cage(intent)
    node_ports = Counter(r["a_device"] for r in rows if r["kind"] == "node-leaf")
    assert sum(n for k, n in bom.items() if k.startswith("node ")) == sum(
        math.ceil(n / per) for n in node_ports.values())
    switches = fabric.by_name
    cages = {(r["z_device"], cage_of(switches[r["z_device"]], int(r["z_port"]))) for r in rows}
    cages |= {(r["a_device"], cage_of(switches[r["a_device"]], int(r["a_port"])))
              for r in rows if r["kind"] not in ("node-leaf", "sm-leaf")}
    assert sum(n for k, n in bom.items() if k.startswith("switch ")) == len(cages)


def test_summary_roce_256(snapshot: Any) -> None:
    intent, fabric = _get("roce-256-sonic")
    assert summarize(fabric, intent) == snapshot


# --- report -----------------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES)
def test_report_has_bom_numbers(case: str) -> None:
    intent, fabric = _get(case)
    plan = summarize(fabric, intent)
    md = _render(case)["report.md"]
    lines = md.splitlines()
    assert lines[0] == f"# {intent.name}"
    for tier, role in (("Leaf", "leaf"), ("Spine", "spine"), ("Core", "core")):
        row = [line for line in lines if line.startswith(f"| {tier} | ")]
        count = plan["switches"][role]
        if count:
            assert any(f"| {count:,} |" in line for line in row), (tier, row)
    total = sum(plan["switches"].values())
    assert f"| **Total** | | | **{total:,}** | | |" in lines
    for kind, count in plan["cables"].items():
        if count:
            assert any(line.startswith(f"| {kind} |") and line.endswith(f"| {count:,} |")
                       for line in lines), kind
    assert f"| **Total** | | **{sum(plan['cables'].values()):,}** |" in lines
    for kind, count in plan["transceivers"].items():
        assert f"| {kind} | {count:,} |" in lines
    bisection = plan["bisection_gbps"]
    assert f"({bisection:,} Gb/s)" in md
    assert "## Oversubscription" in md and f"| {plan['oversubscription']['leaf']} |" in md
    if fabric.transport == "roce":
        qos = intent.qos
        rdma, cnp = qos.rdma, qos.cnp
        assert f"| rdma | {rdma.dscp} | {rdma.priority} | {rdma.priority} | on |" in md
        assert f"| cnp | {cnp.dscp} | {cnp.priority} | {cnp.priority} | off |" in md
    else:
        settings = opensm_plan.settings_from_intent(intent)
        engine = opensm_plan.routing_engines(settings,
                                             fits_ftree=opensm_plan.ftree_fits(fabric))
        assert f"| routing engine | {engine} |" in md
        assert f"| service level (compute traffic) | {intent.infiniband.service_level} |" in md
        assert "## InfiniBand bring-up" in md
        for host in fabric.sm_hosts:
            assert f"| {host.name} | " in md
    assert "{{" not in md and "{%" not in md


def test_report_notes_partial_unit_warning(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The plan's warning about a partial unit is the intent's: printed, and in the report."""
    path = tmp_path / "partial.yaml"
    path.write_text(yaml.safe_dump(EXTRA["ib-3tier-partial"]), encoding="utf-8")
    run = cli("--no-color", "render", str(path), "-o", str(tmp_path / "out"), "--only", "report")
    assert run.code == 0, run.err
    printed = [line for line in run.err.splitlines() if "warning: cluster.nodes: scalable unit"
               in line]
    assert len(printed) == 1, run.err
    section = (tmp_path / "out" / "report.md").read_text().split("## Warnings")[1]
    assert f"- {printed[0].replace(f'{tmp_path}/', '')}" in section.splitlines()


@pytest.mark.parametrize("case", CASES)
def test_report_svg_parses(case: str) -> None:
    svg = _render(case)["report.svg"]
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    assert root.findall(f"{SVG}rect")


def _big_fabric() -> tuple[Intent, Fabric, float]:
    """131072 GPUs. Plain QM9700 (64 x NDR) tops out at 65536 host ports in 3 tiers, so the
    same GPU count uses NDR200 (2x200G split, 128 ports); a slow build falls back to 4096 nodes.
    """
    def intent_for(nodes: int, split: bool) -> Intent:
        leaf: dict[str, str] = {"model": "qm9700"}
        fabric: dict[str, str] = {"transport": "infiniband", "generation": "ndr"}
        if split:
            leaf["breakout"] = "2x200G"
            fabric["speed"] = "200G"
        return Intent.model_validate({
            "name": f"big-{nodes}", "fabric": fabric, "cluster": {"nodes": nodes},
            "topology": {"leaf": leaf, "tiers": "auto"}})

    for nodes, split in ((16384, False), (16384, True), (4096, False)):
        intent = intent_for(nodes, split)
        start = time.perf_counter()
        try:
            fabric = build(intent)
        except SizingError:
            continue
        elapsed = time.perf_counter() - start
        if elapsed <= 20 or nodes == 4096:
            return intent, fabric, elapsed
    raise AssertionError("no large fabric could be built")


@pytest.fixture(scope="module")
def big() -> tuple[Intent, Fabric, float]:
    return _big_fabric()


def test_big_fabric_picture_stays_small(big: tuple[Intent, Fabric, float]) -> None:
    intent, fabric, _ = big
    ctx = RenderContext(intent, fabric)
    out = REPORT.render(ctx)
    root = ET.fromstring(out["report.svg"])
    boxes = root.findall(f"{SVG}rect")
    assert len(boxes) < 200
    assert len(out["report.svg"]) < 100_000
    grouped = view(fabric, 16, intent.cluster.node.gpus)
    assert len(grouped.groups) <= 4 * 16 * fabric.planes
    if intent.cluster.nodes == 16384:
        assert summarize(fabric, intent)["gpus"] == 131072


def test_big_fabric_dot_stays_small(big: tuple[Intent, Fabric, float]) -> None:
    intent, fabric, _ = big
    dot = render_dot(fabric, gpus_per_node=intent.cluster.node.gpus)
    assert dot.count("[label=") < 400
    assert len(dot) < 100_000
