"""The ibnetdiscover target: pure checks of the text, then proof with the real ibsim + OpenSM."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from pathlib import Path

import pytest

from fabgen.targets.ibnetdiscover import (
    CA_GUID_BASE,
    MAX_LINE,
    SWITCH_GUID_BASE,
    ca_node_id,
    compute_node_guids,
    guid_plan,
    render_topology,
    root_guids,
    switch_node_id,
)
from fabgen.topology.model import Fabric

try:  # pytest puts tests/ on sys.path while it has no __init__.py, the repo root once it has
    import ibsim_harness as h
except ImportError:
    from tests import ibsim_harness as h  # type: ignore[no-redef]


@pytest.fixture(scope="module")
def fat_tree() -> Fabric:
    # 2 cables per leaf-spine pair so a single missing or crossed cable unbalances a port group
    return h.make_fat_tree(leaves=4, spines=2, hosts_per_leaf=4, links_per_pair=2)


# --------------------------------------------------------------------------- pure


def test_guid_plan_ranges_and_port_guids(fat_tree: Fabric) -> None:
    plan = guid_plan(fat_tree)
    assert list(plan.switch_guids) == [s.name for s in fat_tree.switches]
    assert all(g >> 32 == SWITCH_GUID_BASE >> 32 for g in plan.switch_guids.values())
    assert all(g >> 32 == CA_GUID_BASE >> 32 for g in plan.ca_guids.values())
    all_guids = [*plan.switch_guids.values(), *plan.ca_guids.values(), *plan.port_guids.values()]
    assert len(all_guids) == len(set(all_guids))
    for host in fat_tree.hosts:
        for hp in host.ports:
            node = plan.ca_guids[(host.name, hp.nic)]
            assert plan.port_guids[(host.name, hp.dev)] == node + hp.port + 1
    assert guid_plan(fat_tree) == plan


def test_root_and_compute_node_guids(fat_tree: Fabric) -> None:
    plan = guid_plan(fat_tree)
    assert root_guids(fat_tree, plan) == [
        plan.switch_guids[s.name] for s in fat_tree.switches_of("spine")
    ]
    cns = compute_node_guids(fat_tree, plan)
    assert len(cns) == len(fat_tree.hosts)
    assert set(cns) == set(plan.port_guids.values())  # ports, never CA node GUIDs
    assert not set(cns) & set(plan.ca_guids.values())


def test_topology_deterministic_and_cabled_on_both_ends(fat_tree: Fabric) -> None:
    plan = guid_plan(fat_tree)
    text = render_topology(fat_tree, plan)
    rebuilt = h.make_fat_tree(leaves=4, spines=2, hosts_per_leaf=4, links_per_pair=2)
    assert render_topology(rebuilt, guid_plan(rebuilt)) == text

    lines = h.port_lines(text)
    assert len(lines) == 2 * len(fat_tree.links)
    seen = Counter((a, ap) for a, ap, _z, _zp in lines)
    assert max(seen.values()) == 1, "a port is declared twice"
    declared = {(a, ap): (z, zp) for a, ap, z, zp in lines}
    for (a, ap), (z, zp) in declared.items():
        assert declared.get((z, zp)) == (a, ap), f"{a}[{ap}] -> {z}[{zp}] has no reverse line"

    assert all(len(line) <= MAX_LINE for line in text.splitlines())
    assert "4x HDR" in text and "400 Gb/s (NDR)" in text


def test_topology_guid_lines_match_plan(fat_tree: Fabric) -> None:
    plan = guid_plan(fat_tree)
    lines = render_topology(fat_tree, plan).splitlines()
    headers = [(i, line) for i, line in enumerate(lines) if line.startswith(("Switch", "Ca"))]
    assert len(headers) == len(plan.switch_guids) + len(plan.ca_guids)
    for i, header in headers:
        assert "guid=" in lines[i - 1], "each node's GUID is pinned right before its header"
        key, value = lines[i - 1].split("=")
        guid = int(value, 16)
        node_id = switch_node_id(guid) if key == "switchguid" else ca_node_id(guid)
        assert f'"{node_id}"' in header
    # every record is closed by a blank line: ibsim consumes the line that ends a record
    for i, _header in headers[1:]:
        assert lines[i - 2] == ""


def test_miscabled_copies_differ_only_there(fat_tree: Fabric) -> None:
    plan = guid_plan(fat_tree)
    good = h.cables(render_topology(fat_tree, plan))
    dropped = h.cables(render_topology(h.drop_link(fat_tree, "leaf01:6"), plan))
    assert len(good - dropped) == 1 and not dropped - good
    moved = h.cables(render_topology(h.move_link(fat_tree, "leaf01:6", "spine02"), plan))
    assert len(good - moved) == 1 and len(moved - good) == 1


def test_render_rejects_port_cabled_twice(fat_tree: Fabric) -> None:
    links = list(fat_tree.links)
    links[1] = dataclasses.replace(links[1], z_port=links[0].z_port)
    with pytest.raises(ValueError, match="cabled twice"):
        render_topology(dataclasses.replace(fat_tree, links=tuple(links)), guid_plan(fat_tree))


# --------------------------------------------------------------------------- real tools


@pytest.mark.realtool
def test_fat_tree_accepted_by_ftree(fat_tree: Fabric, tmp_path: Path) -> None:
    h.require_tools()
    # cabling proof: no root file, so ftree itself has to recognise the fat tree
    proof, plan, text = h.run_fabric(fat_tree, tmp_path / "proof", discover=True)
    assert proof.subnet_up, proof.log[-2000:]
    assert proof.ftree_ok and not proof.fell_back, proof.log[-2000:]
    assert proof.ftree_errors == ()
    # what a discoverer sees through the simulator is exactly the plan
    assert proof.ibnetdiscover is not None
    assert h.cables(proof.ibnetdiscover) == h.cables(text)
    # deployment run: root and compute-node GUID files, as production OpenSM would get them
    deploy, _, _ = h.run_fabric(fat_tree, tmp_path / "deploy", with_roots=True)
    assert deploy.subnet_up and deploy.ftree_ok and not deploy.fell_back, deploy.log[-2000:]
    assert "Fabric has no valid compute nodes" not in deploy.log
    assert f"{len(fat_tree.hosts)} of them CNs" in deploy.log
    assert f"{len(root_guids(fat_tree, plan))} switches at rank 0 (roots)" in deploy.log


@pytest.mark.realtool
@pytest.mark.parametrize("fault", ["drop", "move"])
def test_miscabled_fat_tree_refused_by_ftree(
    fault: str, fat_tree: Fabric, tmp_path: Path
) -> None:
    h.require_tools()
    bad = (h.drop_link(fat_tree, "leaf01:6") if fault == "drop"
           else h.move_link(fat_tree, "leaf01:6", "spine02"))
    result, _, _ = h.run_fabric(bad, tmp_path)
    # OpenSM still comes up (minhop): SUBNET UP alone would have hidden the fault
    assert result.subnet_up, result.log[-2000:]
    assert not result.ftree_ok
    assert result.fell_back or "AB0B" in result.ftree_errors
    assert "AB0B" in result.ftree_errors


@pytest.mark.realtool
def test_root_file_hides_miscabling(fat_tree: Fabric, tmp_path: Path) -> None:
    """Why the cabling proof runs without a root file: with one, ftree skips validation."""
    h.require_tools()
    bad = h.drop_link(fat_tree, "leaf01:6")
    result, _, _ = h.run_fabric(bad, tmp_path, with_roots=True)
    assert result.subnet_up and result.ftree_ok and not result.ftree_errors


@pytest.mark.realtool
def test_ibsim_refuses_one_sided_cable(fat_tree: Fabric, tmp_path: Path) -> None:
    h.require_tools()
    text = render_topology(fat_tree, guid_plan(fat_tree))
    # forget the host end of the first cable: only the leaf declares it
    one_sided = re.sub(r'(Ca\t1 "[^"]+"[^\n]*)\n\[1\][^\n]*\n', r"\1\n", text, count=1)
    assert one_sided != text
    with pytest.raises(h.IbsimError) as err:
        h.run_opensm(one_sided, tmp_path, timeout=20)
    assert "connect" in err.value.output
