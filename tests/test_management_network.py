"""The Ethernet management network as DGX BasePOD cables it: MLAG leaf pairs, each node's
in-band bond dual-homed (Deployment Guide, "Network Deployment": "MLAG between the two SN4600C
switches", "each headnode / K8s node / DGX is dual homed to the SN4600C switches via bond
interface", peer link "nv set interface peerlink bond member swp63,swp64")."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from typing import Any

import pytest

from fabgen.catalog.ports import port_name
from fabgen.errors import Diagnostics
from fabgen.intent import load, semantic
from fabgen.intent.models import Intent
from fabgen.render import render
from fabgen.topology.build import build
from fabgen.topology.checks import check_fabric
from fabgen.topology.model import Fabric
from tests.conftest import INVENTORIES

IB = next(p for p in INVENTORIES if p.stem == "ib-ndr-1024")


def basepod(nodes: int = 4, nics: int = 2, **management: Any) -> Intent:
    """A DGX BasePOD: DGX H100 on NDR, management on a pair of SN4600C."""
    return Intent.model_validate({
        "name": "basepod", "fabric": {"transport": "infiniband", "generation": "ndr"},
        "cluster": {"nodes": nodes, "node": {"model": "dgx-h100", "gpus": 8, "nics": 8,
                                             "nic": "connectx-7", "nic_ports": 1}},
        "topology": {"leaf": {"model": "qm9700"},
                     "management": {"transport": "ethernet", "nics": nics, "speed": "100G",
                                    "leaf": {"model": "sn4600c"}, **management}},
        "infiniband": {"management": {"hosts": []}},
    })


def management(fabric: Fabric) -> Fabric:
    return next(e for e in fabric.extras if e.role == "management")


def assert_dual_homed(net: Fabric) -> None:
    """Each node's two ports on the two leaves of one pair, at the same port; each pair joined
    by its peer link on the leaves' last two ports; the network's invariants hold."""
    assert check_fabric(net) == []
    peers: dict[frozenset[str], list[tuple[int, int]]] = defaultdict(list)
    for link in net.links:
        if link.kind == "peer-link":
            peers[frozenset({link.a_device, link.z_device})].append((link.a_port, link.z_port))
    radix = {sw.name: sw.radix for sw in net.switches}
    leaves = {sw.name for sw in net.switches if sw.role == "leaf"}
    assert set().union(*peers) == leaves  # every leaf has exactly one peer
    for pair, ports in peers.items():
        (r,) = {radix[x] for x in pair}
        assert sorted(ports) == [(r - 1, r - 1), (r, r)], pair
    ends: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for link in net.links:
        if link.kind == "node-leaf":
            ends[link.a_device].append((link.z_device, link.z_port))
    assert set(ends) == {h.name for h in net.hosts}
    for host, (a, b) in ends.items():
        assert a[0] != b[0] and frozenset({a[0], b[0]}) in peers, host
        assert a[1] == b[1], host  # the same port on both switches of the pair


def test_basepod_management_is_one_mlag_pair() -> None:
    intent = basepod()
    net = management(build(intent))
    assert_dual_homed(net)
    leaves = [sw for sw in net.switches if sw.role == "leaf"]
    assert len(leaves) == 2 and {sw.model for sw in leaves} == {"sn4600c"}
    # the peer link on the pair's last two ports: BasePOD's swp63 and swp64 on SN4600C
    peer = [x for x in net.links if x.kind == "peer-link"]
    assert [port_name("nvue", x.a_port) for x in peer] == ["swp63", "swp64"]
    # the bond members of the node model: slot 1 port 2 on one switch, slot 2 port 2 on the other
    dgx = net.hosts[0]
    assert [(p.rdma_device, p.netdev, p.panel) for p in dgx.ports] == [
        ("mlx5_8", "enp170s0f1np1", "Slot1 P2"), ("mlx5_2", "enp41s0f1np1", "Slot2 P2")]
    diags = Diagnostics()
    semantic.check(intent, diags)
    assert not [d for d in diags.warnings if "management" in d.message]


def test_the_superpod_inventory_dual_homes_every_node() -> None:
    net = management(build(load(IB).intent))
    assert_dual_homed(net)
    assert sum(1 for x in net.links if x.kind == "peer-link") == 2 * len(
        [sw for sw in net.switches if sw.role == "leaf"]) // 2


def test_the_sheet_and_the_report_carry_the_pair() -> None:
    files = render(load(IB), only=["cabling", "report"])
    rows = list(csv.DictReader(io.StringIO(files["cabling/management.csv"])))
    peer = [r for r in rows if r["kind"] == "peer-link"]
    assert peer and all(r["a_port"] == r["z_port"] for r in peer)
    assert {(r["a_panel"], r["z_panel"]) for r in peer} == {("cage 63", "cage 63"),
                                                            ("cage 64", "cage 64")}
    assert all(r["media"].endswith("MLAG peer link") for r in peer)
    report = files["report.md"]
    leaves = len({r["z_device"] for r in rows if r["kind"] == "node-leaf"})
    assert f"leaves are {leaves // 2} MLAG pairs" in report
    # the BoM's cable count includes the peer links
    assert f"| management | Ethernet | Leaf | sn4600c | {leaves} |" in report
    assert f"| {len(rows)} |" in report.split("| management | Ethernet | Leaf |", 1)[1]


@pytest.mark.parametrize(("nics", "words"), [(1, "one port, on one switch"),
                                             (3, "dual-homes a two-port bond")])
def test_a_single_homed_management_network_is_a_warning(nics: int, words: str) -> None:
    intent = basepod(nics=nics)
    diags = Diagnostics()
    semantic.check(intent, diags)
    found = [d for d in diags.warnings if words in d.message]
    assert len(found) == 1 and found[0].loc == ("topology", "management", "nics")
    net = management(build(intent))
    assert check_fabric(net) == []
    assert not [x for x in net.links if x.kind == "peer-link"]
    # each node's ports on one switch: what the warning is about
    leaves = defaultdict(set)
    for link in net.links:
        if link.kind == "node-leaf":
            leaves[link.a_device].add(link.z_device)
    assert all(len(v) == 1 for v in leaves.values())


def test_a_pair_takes_as_many_nodes_as_its_free_ports_serve() -> None:
    # SN4600C: 64 ports, 2 for the peer link; at 1:1 31 down + 31 up: 31 nodes per pair
    small = management(build(basepod(nodes=31, oversubscription="1:1")))
    assert len([sw for sw in small.switches if sw.role == "leaf"]) == 2
    assert_dual_homed(small)
    grown = management(build(basepod(nodes=32, oversubscription="1:1")))
    assert len([sw for sw in grown.switches if sw.role == "leaf"]) == 4
    assert_dual_homed(grown)
