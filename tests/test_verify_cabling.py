"""verify-cabling: a discovered fabric (ibnetdiscover) against the plan, with exact ports.

The pure tests feed ibnetdiscover-format text rendered from a deliberately miscabled copy of
the fabric; the real-tool tests take the text from ibnetdiscover run through ibsim.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from fabgen.intent import load
from fabgen.targets import opensm
from fabgen.targets.base import RenderContext
from fabgen.targets.ibnetdiscover import guid_plan, parse_ibnetdiscover, render_topology
from fabgen.topology.build import build
from fabgen.topology.model import Fabric, Link
from fabgen.verify_cabling import (
    End,
    format_findings,
    planned_rate,
    verify,
    verify_file,
)

try:  # pytest puts tests/ on sys.path while it has no __init__.py, the repo root once it has
    import ibsim_harness as h
except ImportError:
    from tests import ibsim_harness as h  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def fabric() -> Fabric:
    # 2 cables per leaf-spine pair: leaf01 ports 5,6 -> spine01 ports 1,2; 7,8 -> spine02 1,2
    return h.make_fat_tree(leaves=4, spines=2, hosts_per_leaf=4, links_per_pair=2)


def swap_links(fabric: Fabric, first: str, second: str) -> Fabric:
    """A copy where two cables' upper ends are exchanged (plugged into each other's ports)."""
    by_id = {link.id: link for link in fabric.links}
    a, b = by_id[first], by_id[second]

    def swapped(link: Link) -> Link:
        if link.id == a.id:
            return dataclasses.replace(link, z_device=b.z_device, z_port=b.z_port)
        if link.id == b.id:
            return dataclasses.replace(link, z_device=a.z_device, z_port=a.z_port)
        return link

    return dataclasses.replace(fabric, links=tuple(swapped(link) for link in fabric.links))


def miscabled(fabric: Fabric) -> Fabric:
    """Two swapped cables (leaf01 ports 5 and 7) and one missing cable (leaf03 port 6)."""
    return h.drop_link(swap_links(fabric, "leaf01:5", "leaf01:7"), "leaf03:6")


THREE_FINDINGS = [
    ("missing", "missing cable: leaf03 port 6 <-> spine01 port 6 is not connected"),
    ("swapped", "swapped cable: leaf01 port 5 is cabled to spine02 port 1, planned spine01 "
                "port 1 (swapped with the cable of leaf01 port 7, planned to spine02 port 1)"),
    ("swapped", "swapped cable: leaf01 port 7 is cabled to spine01 port 1, planned spine02 "
                "port 1 (swapped with the cable of leaf01 port 5, planned to spine01 port 1)"),
]


# --------------------------------------------------------------------------- pure


def test_plan_matches_itself(fabric: Fabric) -> None:
    plan = guid_plan(fabric)
    text = render_topology(fabric, plan)
    assert verify(fabric, plan, text, expected_speed="HDR") == []
    # the simulator's HDR is below the planned NDR: speed is checked, not ignored
    slow = verify(fabric, plan, text)
    assert len(slow) == len(fabric.links)
    assert {f.kind for f in slow} == {"degraded"}
    assert ("degraded link: node001 mlx5_0 port 1 <-> leaf01 port 1 runs at 4xHDR, "
            "planned 4xNDR") in [f.message for f in slow]


def test_two_swapped_and_one_missing_cable(fabric: Fabric) -> None:
    plan = guid_plan(fabric)
    text = render_topology(miscabled(fabric), plan)
    findings = verify(fabric, plan, text, expected_speed="HDR")
    assert [(f.kind, f.message) for f in findings] == THREE_FINDINGS
    swap = findings[1]
    assert swap.planned == (End("leaf01", 5), End("spine01", 1))
    assert swap.found == (End("leaf01", 5), End("spine02", 1))
    assert findings[0].found is None
    report = format_findings(findings)
    assert report.splitlines()[0] == "3 findings: 1 missing, 2 swapped"
    assert all(f"  {f.message}" in report for f in findings)


def test_moved_and_extra_cables(fabric: Fabric) -> None:
    plan = guid_plan(fabric)
    moved = h.move_link(fabric, "leaf01:6", "spine02")
    findings = verify(fabric, plan, render_topology(moved, plan), expected_speed="HDR")
    assert [f.message for f in findings] == [
        "miscabled: leaf01 port 6 is cabled to spine02 port 9, planned spine01 port 2"]

    # a cable the plan does not have: moved.links has leaf01:6 on spine02:9; keep the original
    # as well by giving the planned fabric one cable less
    fewer = h.drop_link(fabric, "leaf02:8")
    findings = verify(fewer, plan, render_topology(fabric, plan), expected_speed="HDR")
    assert [f.message for f in findings] == [
        "extra cable: leaf02 port 8 <-> spine02 port 4 is not in the plan"]


def test_nodes_matched_by_description(fabric: Fabric) -> None:
    """A real fabric has other GUIDs: switch names and "<host> mlx5_<n>" (rdma-ndd) or the
    simulator's "<host> HCA-<n>" identify the nodes."""
    plan = guid_plan(fabric)
    real = dataclasses.replace(
        plan, switch_guids={k: v + 0x5000 for k, v in plan.switch_guids.items()},
        ca_guids={k: v + 0x5000 for k, v in plan.ca_guids.items()},
        port_guids={k: v + 0x5000 for k, v in plan.port_guids.items()})
    text = render_topology(fabric, real)
    text = text.replace('"leaf02"', '"MF0;leaf02:MQM9700/U1"')
    text = text.replace('"node005 HCA-0"', '"node005 mlx5_0"')
    assert verify(fabric, plan, text, expected_speed="HDR") == []
    assert verify(fabric, None, text, expected_speed="HDR") == []
    stranger = text.replace('"node007 HCA-0"', '"visitor HCA-0"')
    assert [f.message for f in verify(fabric, None, stranger, expected_speed="HDR")] == [
        f'miscabled: leaf02 port 3 is cabled to unplanned adapter "visitor HCA-0" '
        f'{real.ca_guids[("node007", 0)]:#018x} port 1, planned node007 mlx5_0 port 1'
    ]


def test_findings_name_the_adapter_and_the_panels() -> None:
    """On a DGX H100 / QM9700 fabric a finding names the adapter as the host does (mlx5_3, not
    its NIC index) and where both ends plug in, as the cabling sheet's panel columns do."""
    intent = load(ROOT / "inventories" / "ib-ndr-1024.yaml").intent
    fabric = build(intent)
    plan = guid_plan(fabric)
    dgx = fabric.hosts[0]
    rail1 = next(x for x in fabric.links if x.a_device == dgx.name and x.a_port == 1)
    other = next(x for x in fabric.links if x.kind == "node-leaf" and x.z_device ==
                 rail1.z_device and x.a_device != dgx.name)
    swapped = dataclasses.replace(fabric, links=tuple(
        dataclasses.replace(x, z_port=other.z_port) if x.id == rail1.id else
        dataclasses.replace(x, z_port=rail1.z_port) if x.id == other.id else x
        for x in fabric.links))
    findings = verify(fabric, plan, render_topology(swapped, plan), expected_speed="HDR")
    messages = [f.message for f in findings]
    assert len(messages) == 2 and all(m.startswith("swapped cable: ") for m in messages)
    # mlx5_3 is GPU1's port, behind OSFP3 P2 (DGX H100 User Guide Table 6); leaf port 1 sits in
    # cage 1 of the QM9700, port 2 in the same cage
    assert (f"{dgx.name} mlx5_3 port 1 (OSFP3 P2) is cabled to {rail1.z_device} port "
            f"{other.z_port} (cage 1 port 2), planned {rail1.z_device} port 1 (cage 1 port 1)"
            ) in messages[0] + messages[1]
    assert "HCA-" not in "".join(messages)


def test_narrow_link_is_degraded(fabric: Fabric) -> None:
    plan = guid_plan(fabric)
    text = render_topology(fabric, plan)
    lines = text.splitlines()
    # leaf01 port 5 trained at 2x: both ends report it
    for i, line in enumerate(lines):
        if re.match(r'\[5\]\s+"S-0002c90100000005"\[1\]', line) or re.match(
                r'\[1\]\s+"S-0002c90100000001"\[5\]', line):
            lines[i] = line.replace("4xHDR", "2xHDR")
    findings = verify(fabric, plan, "\n".join(lines), expected_speed="HDR")
    assert [f.message for f in findings] == [
        "degraded link: leaf01 port 5 <-> spine01 port 1 runs at 2xHDR, planned 4xHDR"]


def test_planned_rates() -> None:
    assert planned_rate(400, "ndr") == (4, "NDR")
    assert planned_rate(200, "ndr") == (2, "NDR")  # NDR200 split port
    assert planned_rate(200, "hdr") == (4, "HDR")
    assert planned_rate(200) == (4, "HDR")
    assert planned_rate(800) == (4, "XDR")
    with pytest.raises(ValueError, match="300 Gb/s"):
        planned_rate(300, "ndr")


def test_parse_real_ibnetdiscover_lines() -> None:
    text = """
vendid=0x2c9
devid=0xd2f0
sysimgguid=0xb83fd203008a2e80
switchguid=0xb83fd203008a2e80(b83fd203008a2e80)
Switch	65 "S-b83fd203008a2e80"		# "MF0;leaf01:MQM9700/U1" enhanced port 0 lid 12 lmc 0
[1]	"H-a088c20300d1e2f0"[1](a088c20300d1e2f0) 		# "dgx001 mlx5_0" lid 31 4xNDR
[33]	"S-b83fd203008a3f00"[1]		# "MF0;spine01:MQM9700/U1" lid 7 2xNDR

vendid=0x2c9
caguid=0xa088c20300d1e2f0
Ca	1 "H-a088c20300d1e2f0"		# "dgx001 mlx5_0"
[1](a088c20300d1e2f0) 	"S-b83fd203008a2e80"[1]		# lid 31 lmc 0 "MF0;leaf01" lid 12 4xNDR
"""
    disc = parse_ibnetdiscover(text)
    leaf = disc.nodes["S-b83fd203008a2e80"]
    assert (leaf.kind, leaf.nports, leaf.desc, leaf.guid) == (
        "switch", 65, "MF0;leaf01:MQM9700/U1", 0xB83FD203008A2E80)
    ca = disc.nodes["H-a088c20300d1e2f0"]
    assert ca.port_guids == {1: 0xA088C20300D1E2F0}
    rates = {(p.node_id[:1], p.port): (p.width, p.speed) for p in disc.ports}
    assert rates == {("S", 1): (4, "NDR"), ("S", 33): (2, "NDR"), ("H", 1): (4, "NDR")}


def test_two_planes_pick_the_discovered_plane() -> None:
    intent = load(ROOT / "inventories" / "ib-ndr-1024.yaml").intent
    dual = intent.model_copy(update={"topology": intent.topology.model_copy(
        update={"planes": 2}), "cluster": intent.cluster.model_copy(update={
            "node": intent.cluster.node.model_copy(update={"nic_ports": 2}), "nodes": 16})})
    fabric = build(dual)
    plan = guid_plan(fabric)
    plane2 = render_topology(fabric, plan, plane=1)
    assert verify(fabric, plan, plane2, expected_speed="HDR") == []
    wrong = verify(fabric, plan, plane2, plane=0, expected_speed="HDR")
    assert {f.kind for f in wrong} == {"missing", "extra"}


def test_verify_file_on_the_inventory(tmp_path: Path) -> None:
    path = ROOT / "inventories" / "ib-ndr-1024.yaml"
    intent = load(path).intent
    fabric = build(intent)
    files = opensm.TOPOLOGY_TARGET.render(RenderContext(intent=intent, fabric=fabric))
    discovered = tmp_path / "ibnetdiscover.out"
    discovered.write_text(files["infiniband/topology.ibnet"])
    assert verify_file(path, discovered, expected_speed="HDR") == []
    # every cable, the UFM hosts' too, is below NDR in the simulation
    cables = len(fabric.links) + len(fabric.sm_links)
    assert len(verify_file(path, discovered)) == cables == 2044
    assert format_findings([], cables=cables).startswith(
        "cabling matches the plan (2044 cables checked)")


# --------------------------------------------------------------------------- real tools


@pytest.mark.realtool
def test_simulated_fabric_matches_its_plan(fabric: Fabric, tmp_path: Path) -> None:
    h.require_tools()
    result, plan, _ = h.run_fabric(fabric, tmp_path, discover=True)
    assert result.ibnetdiscover is not None and result.subnet_up
    assert verify(fabric, plan, result.ibnetdiscover, expected_speed="HDR") == []
    # ibsim models no NDR: without the override every link is reported below plan
    assert {f.kind for f in verify(fabric, plan, result.ibnetdiscover)} == {"degraded"}


@pytest.mark.realtool
def test_simulated_miscabling_is_reported_exactly(fabric: Fabric, tmp_path: Path) -> None:
    h.require_tools()
    result, _, _ = h.run_fabric(miscabled(fabric), tmp_path, discover=True)
    assert result.ibnetdiscover is not None and result.subnet_up, result.log[-2000:]
    findings = verify(fabric, guid_plan(fabric), result.ibnetdiscover, expected_speed="HDR")
    assert [(f.kind, f.message) for f in findings] == THREE_FINDINGS
    # by node description alone (as for a fabric whose GUIDs fabgen never saw)
    by_name = verify(fabric, None, result.ibnetdiscover, expected_speed="HDR")
    assert [(f.kind, f.message) for f in by_name] == THREE_FINDINGS
