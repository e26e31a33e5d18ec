"""The ANTA catalog loads with ANTA's own catalog parser, every entry is a real ANTA test with
valid inputs, and its expectations are the plan's (ports, speeds, MTU, LLDP peers, BGP)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anta.tests.connectivity
import anta.tests.interfaces
from anta.catalog import AntaCatalog

from fabgen import qos
from fabgen.intent.loader import load
from fabgen.platforms.eos import anta as anta_target
from fabgen.render import render
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
                     "VerifyInterfacesEgressQueueDrops",
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
    assert len(lines.regex_patterns) == 6
    for pattern in lines.regex_patterns:  # as ANTA searches them
        assert re.compile(pattern, flags=re.MULTILINE).search(config), pattern
    assert not re.compile(lines.regex_patterns[0], flags=re.MULTILINE).search(
        config.replace("timeout 0.2", "timeout 0.5"))
    # ECN marks counted on the RoCE queue: without the line the ECN counters stay at zero
    assert not re.compile(lines.regex_patterns[-1], flags=re.MULTILINE).search(
        config.replace("      random-detect ecn count\n", ""))


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


# --- counter tests that hold after normal traffic ---------------------------------------------

def _leaf_inputs(tmp_path: Path, intent: Path = MIXED) -> dict[str, Any]:
    files = render(load(intent), only=["anta"])
    path = tmp_path / "catalog.yaml"
    path.write_text(files[anta_target.CATALOG])
    catalog = AntaCatalog.parse(path)
    return {t.test.__name__: t for t in catalog.tests
            if t.inputs.filters and t.inputs.filters.tags == {"leaf-su1-r0"}}


def _run(definition: Any, eos_data: dict[str, Any]) -> str:
    """One catalog test run by ANTA's own class on a command output, as ANTA's unit tests do
    (tests/units/anta_tests/__init__.py: the class with `eos_data`, on a device whose
    hardware model is not a lab one, so skip_on_platforms lets it run)."""
    import asyncio
    from unittest.mock import patch

    from anta.device import AntaDevice

    with patch.object(AntaDevice, "__abstractmethods__", set()):
        device = AntaDevice(name="leaf-su1-r0")  # type: ignore[abstract]
        device.hw_model = "DCS-7060X6-64PE"
        test = definition.test(device, inputs=definition.inputs, eos_data=[eos_data])
        asyncio.run(test.test())
    return str(test.result.result)


def _pfc(ports: list[str], rx: int, tx: int, storm: str | None = None) -> dict[str, Any]:
    """`show priority-flow-control counters`, shaped as ANTA's unit-test data."""
    return {"interfaceCounters": {p: {"rxFrames": rx * (100 if p == storm else 1),
                                      "txFrames": tx} for p in ports}}


def _queue_drops(ports: list[str], drops_on: str | None = None) -> dict[str, Any]:
    """`show interfaces counters queue detail`: unicast and multicast TCs, DP0."""
    def tcs(port: str) -> dict[str, Any]:
        return {"trafficClasses": {f"TC{tc}": {"dropPrecedences": {"DP0": {
            "droppedPackets": 7 if (port == drops_on and tc == 3) else (1200 if tc == 0 else 0)
        }}} for tc in range(8)}}
    return {"egressQueueCounters": {"interfaces": {
        p: {"ucastQueues": tcs(p), "mcastQueues": tcs(p)} for p in ports}}}


def test_counter_tests_pass_after_normal_roce_traffic_and_fail_on_drops(tmp_path: Path) -> None:
    """The catalog's counter tests, run by ANTA's own classes on counters cleared before a
    normal RoCE run (pauses well under the PfcPauseRate budget, lossy queue 0 dropping as
    lossy queues do, no lossless drop): pass. A lossless drop, or a port paused at storm rate
    for the window: fail."""
    tests = _leaf_inputs(tmp_path)
    pfc, drops = tests["VerifyInterfacesPFCCounters"], tests["VerifyInterfacesEgressQueueDrops"]
    ports = [str(p) for p in pfc.inputs.interfaces]
    window = load(MIXED).intent.monitoring.verify_window_s
    # 1,192 frames/s: a tenth of the rate that holds a 400G link paused (alerts target)
    assert pfc.inputs.counters_threshold == 1192 * window
    normal = 200 * window  # 200 pauses/s each way during an all-reduce with incast
    assert _run(pfc, _pfc(ports, normal, normal)) == "success"
    assert _run(drops, _queue_drops(ports)) == "success"
    assert _run(drops, _queue_drops(ports, drops_on=ports[1])) == "failure"
    assert _run(pfc, _pfc(ports, normal, normal, storm=ports[0])) == "failure"
    # At the old threshold 0 the same normal run failed: the budget is what makes it hold.
    assert "VerifyInterfacesECNCounters" not in tests


def test_ecn_budget_is_checked_when_the_intent_sets_one(tmp_path: Path) -> None:
    intent = tmp_path / "ecn.yaml"
    intent.write_text(MIXED.read_text() + "monitoring:\n  verify_ecn_marks_max: 1000000\n"
                      "  verify_pfc_frames_max: 5000\n")
    tests = _leaf_inputs(tmp_path, intent)
    ecn = tests["VerifyInterfacesECNCounters"]
    assert ecn.inputs.counters_threshold == 1_000_000
    assert tests["VerifyInterfacesPFCCounters"].inputs.counters_threshold == 5000
    ports = [str(p) for p in ecn.inputs.interfaces]

    def ecn_counters(marks: int) -> dict[str, Any]:
        # queues without ECN print "-" (ANTA skips them); the RoCE queue counts its marks
        return {"intfQueueCounters": {p: {"queueCounters": {
            "0": "-", "1": "-", "3": str(marks), "6": "-"}} for p in ports}}
    assert _run(ecn, ecn_counters(250_000)) == "success"
    assert _run(ecn, ecn_counters(2_000_000)) == "failure"


def test_check_script_clears_counters_before_the_traffic_and_the_catalog(
        tmp_path: Path) -> None:
    """verify/anta-check.sh run with a stand-in `anta` that logs its arguments: clear, then
    the traffic command, then nrfu with the rendered catalog; nrfu's failure is the exit."""
    import os
    import subprocess

    files = render(load(MIXED), only=["anta"])
    verify = tmp_path / "verify"
    verify.mkdir()
    (verify / "anta-check.sh").write_text(files[anta_target.CHECK])
    (verify / "anta-catalog.yaml").write_text(files[anta_target.CATALOG])
    log = tmp_path / "log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "anta"
    fake.write_text(f'#!/bin/sh\necho "anta $*" >> {log}\n'
                    '[ "$1" = nrfu ] && exit "${NRFU_EXIT:-0}"\nexit 0\n')
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    run = subprocess.run(["bash", str(verify / "anta-check.sh"), "inv.yml", "sh", "-c",
                          f"echo traffic >> {log}"], env=env, capture_output=True, text=True,
                         check=False)
    assert run.returncode == 0, run.stderr
    assert log.read_text().splitlines() == [
        "anta exec clear-counters --inventory inv.yml", "traffic",
        f"anta nrfu --catalog {verify}/anta-catalog.yaml --inventory inv.yml table"]
    failed = subprocess.run(["bash", str(verify / "anta-check.sh"), "inv.yml", "true"],
                            env={**env, "NRFU_EXIT": "1"}, capture_output=True, check=False)
    assert failed.returncode == 1


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
