"""The ANTA catalog loads with ANTA's own catalog parser, every entry is a real ANTA test with
valid inputs, and its expectations are the plan's (ports, speeds, MTU, LLDP peers, BGP)."""

from __future__ import annotations

from pathlib import Path

import anta.tests.connectivity
import anta.tests.interfaces
from anta.catalog import AntaCatalog

from fabgen import qos
from fabgen.intent.loader import load
from fabgen.render import render
from fabgen.targets import anta as anta_target
from fabgen.topology.build import build
from fabgen.topology.index import FabricIndex
from fabgen.verify.expect import expected_switches
from tests.conftest import ROOT

MIXED = ROOT / "inventories" / "roce-eos-nvue-2to1.yaml"


def _catalog(tmp_path: Path) -> AntaCatalog:
    files = render(load(MIXED), only=["anta"])
    path = tmp_path / "catalog.yaml"
    path.write_text(files[anta_target.CATALOG])
    return AntaCatalog.parse(path)


def test_catalog_parses_with_anta_and_names_real_tests(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    names = {t.test.__name__ for t in catalog.tests}
    assert names == {"VerifyInterfacesStatus", "VerifyInterfacesSpeed", "VerifyL3MTU",
                     "VerifyInterfaceErrors", "VerifyInterfacesPFCCounters",
                     "VerifyInterfacesECNCounters", "VerifyInterfacesEgressQueueDrops",
                     "VerifyLLDPNeighbors", "VerifyBGPPeerSession", "VerifyRunningConfigLines",
                     "VerifyBFDSpecificPeers", "VerifyBFDPeersRegProtocols",
                     "VerifyBFDPeersIntervals"}
    for t in catalog.tests:  # a class of ANTA's own test modules, not a look-alike
        assert t.test.__module__.startswith("anta.tests."), t.test


def test_catalog_checks_the_plan(tmp_path: Path) -> None:
    catalog = _catalog(tmp_path)
    loaded = load(MIXED)
    plan = qos.plan(loaded.intent)
    switches = expected_switches(FabricIndex(build(loaded.intent)), plan)
    eos = [s for s in switches if s.platform == "eos"]
    leaf = eos[0]
    mine = [t for t in catalog.tests if t.inputs.filters and t.inputs.filters.tags == {leaf.name}]
    by_name = {t.test.__name__: t.inputs for t in mine}
    # Every test of every EOS switch is tagged with that switch and nothing else.
    assert len(catalog.tests) == len(eos) * len(by_name)
    speed = by_name["VerifyInterfacesSpeed"]
    assert [(i.name, i.speed) for i in speed.interfaces] == [
        (p.name, p.speed_gbps) for p in leaf.ports]
    assert by_name["VerifyL3MTU"].mtu == plan.mtu == 9214
    lldp = by_name["VerifyLLDPNeighbors"]
    uplinks = [p for p in leaf.ports if p.peer_is_switch]
    assert [(n.port, n.neighbor_device, n.neighbor_port) for n in lldp.neighbors] == [
        (p.name, p.peer, p.peer_port) for p in uplinks]
    assert uplinks and all(p.peer.startswith("spine-") for p in uplinks)
    bgp = by_name["VerifyBGPPeerSession"]
    assert sorted(str(p.peer_address) for p in bgp.bgp_peers) == sorted(
        s.peer_ip for s in leaf.sessions)
    # every BGP peer has BFD, registered by BGP, at the plan's 300 ms x 3 (underlay.bfd)
    for test in ("VerifyBFDSpecificPeers", "VerifyBFDPeersRegProtocols",
                 "VerifyBFDPeersIntervals"):
        assert sorted(str(p.peer_address) for p in by_name[test].bfd_peers) == sorted(
            s.peer_ip for s in leaf.sessions), test
    assert {p.protocols == ["bgp"] for p in by_name["VerifyBFDPeersRegProtocols"].bfd_peers} \
        == {True}
    assert {(p.tx_interval, p.rx_interval, p.multiplier)
            for p in by_name["VerifyBFDPeersIntervals"].bfd_peers} == {(300, 300, 3)}
    queue_drops = by_name["VerifyInterfacesEgressQueueDrops"]
    assert queue_drops.traffic_classes == [f"TC{plan.rdma.queue}"]
    assert queue_drops.packet_drop_threshold == 0
    assert isinstance(lldp, anta.tests.connectivity.VerifyLLDPNeighbors.Input)
    assert isinstance(speed, anta.tests.interfaces.VerifyInterfacesSpeed.Input)


def test_watchdog_patterns_match_the_rendered_eos_config(tmp_path: Path) -> None:
    import re

    files = render(load(MIXED), only=["eos", "anta"])
    config = files["eos/leaf-su1-r0.cfg"]
    catalog = _catalog(tmp_path)
    lines = next(t.inputs for t in catalog.tests
                 if t.test.__name__ == "VerifyRunningConfigLines"
                 and t.inputs.filters.tags == {"leaf-su1-r0"})
    assert len(lines.regex_patterns) == 4
    for pattern in lines.regex_patterns:  # as ANTA searches them
        assert re.compile(pattern, flags=re.MULTILINE).search(config), pattern
    assert not re.compile(lines.regex_patterns[0], flags=re.MULTILINE).search(
        config.replace("timeout 0.2", "timeout 0.5"))


def test_catalog_written_test_by_test_is_the_whole_document() -> None:
    """catalog_text writes each test alone (memory); the text is what dumping the whole
    {module: [tests]} document writes."""
    from fabgen.serialize import yaml_text

    loaded = load(MIXED)
    plan = qos.plan(loaded.intent)
    switches = expected_switches(FabricIndex(build(loaded.intent)), plan, platforms=("eos",))
    data = anta_target.catalog_data(list(switches), plan, loaded.intent.monitoring)
    assert len(data) == 4
    text = anta_target.catalog_text(data, loaded.intent.name)
    header, _, body = text.partition("\nanta.tests.")
    assert "anta.tests." + body == yaml_text(data, width=100)
    assert header.startswith("# fabgen: ANTA catalog")


def test_inventory_parses_with_anta_and_runs_the_whole_catalog(tmp_path: Path) -> None:
    """verify/anta-inventory.yaml loads with ANTA's own inventory parser: one device per EOS
    switch (the NVUE spines are not ANTA's), reached at the switch's name, tagged with its role
    and, by ANTA, its name; every test of the catalog selects exactly one of them by its tag
    filter, and every device gets tests. The file holds no credential of any kind."""
    from anta.inventory import AntaInventory

    files = render(load(MIXED), only=["anta"])
    path = tmp_path / "inventory.yaml"
    path.write_text(files[anta_target.INVENTORY])
    username, password = "fabgen-user", "pw-never-in-the-file"
    inventory = AntaInventory.parse(path, username=username, password=password)
    fabric = build(load(MIXED).intent)
    eos = [s for s in fabric.switches if s.platform == "eos"]
    assert list(inventory) == [s.name for s in eos]
    for sw in eos:
        device = inventory[sw.name]
        assert device.tags == {sw.name, sw.role}
        assert device._keys == (sw.name, 443)  # (host, eAPI port): ANTA's https default
    catalog = _catalog(tmp_path)
    for test in catalog.tests:
        assert test.inputs.filters is not None and test.inputs.filters.tags is not None
        assert len([d for d in inventory.values()
                    if d.tags & test.inputs.filters.tags]) == 1, test
    catalog.build_indexes()  # ANTA's own selection of tests by device tags
    for device in inventory.values():
        assert catalog.get_tests_by_tags(device.tags), device.name
    text = files[anta_target.INVENTORY]
    assert username not in text and password not in text
    import yaml

    data = yaml.safe_load(text)
    assert list(data) == ["anta_inventory"] and list(data["anta_inventory"]) == ["hosts"]
    assert {key for host in data["anta_inventory"]["hosts"] for key in host} == {
        "name", "host", "tags"}
