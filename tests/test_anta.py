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
                     "VerifyInterfaceErrors",
                     "VerifyLLDPNeighbors", "VerifyBGPPeerSession", "VerifyRunningConfigLines",
                     "VerifyRunningConfig",
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
    (rule,) = by_name["VerifyRunningConfig"].rules
    assert rule.section == [r"interface Ethernet[0-9/]+",
                            f"uc-tx-queue (?!{plan.rdma.queue}$)[0-9]+"]
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


def _snapshots(tmp_path: Path, ports: list[str], seconds: int, pps: int, *,
               storm: str | None = None, drops_on: str | None = None,
               cleared: bool = False) -> tuple[Path, Path]:
    """Two `anta exec snapshot` directories of leaf-su1-r0, `seconds` apart, in the layout
    ANTA writes (<dir>/<device>/json/<command>.json) and the shapes of ANTA's unit-test data:
    counters that have been running for a day (never cleared) grow by `pps` pause frames a
    second each way, the lossy queue 0 drops as lossy queues do, `storm` receives a hundred
    times more, `drops_on` drops 7 packets on the lossless queue; `cleared`: someone cleared
    the counters in between."""
    import json

    day = 86_400

    def pfc(t: int) -> dict[str, Any]:
        return {"interfaceCounters": {p: {"rxFrames": pps * t * (100 if p == storm else 1),
                                          "txFrames": pps * t} for p in ports}}

    def drops(t: int, later: bool) -> dict[str, Any]:
        def tcs(port: str) -> dict[str, Any]:
            return {"trafficClasses": {f"TC{tc}": {"dropPrecedences": {"DP0": {
                "droppedPackets": (7 if port == drops_on and tc == 3 and later else 0)
                + (t // 10 if tc == 0 else 0)}}} for tc in range(8)}}
        return {"egressQueueCounters": {"interfaces": {
            p: {"ucastQueues": tcs(p), "mcastQueues": tcs(p)} for p in ports}}}

    out = []
    for name, t, later in (("before", day, False), ("after", day + seconds, True)):
        if cleared and later:
            t = seconds // 2
        d = tmp_path / name / "leaf-su1-r0" / "json"
        d.mkdir(parents=True)
        (d / "show_priority-flow-control_counters.json").write_text(json.dumps(pfc(t)))
        (d / "show_interfaces_counters_queue_detail.json").write_text(
            json.dumps(drops(t, later)))
        out.append(tmp_path / name)
    return out[0], out[1]


def test_counters_compare_deltas_for_any_window(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A 30-minute run at a normal 200 pauses/s on counters never cleared passes (the old
    catalog's 357,600-frame threshold for 300 s failed it, and any day-old counter); a storm on
    one port, or one lossless drop, fails and is named."""
    from fabgen.verify import counters

    ports = [p.name for p in expected_switches(
        FabricIndex(build(load(MIXED).intent)), qos.plan(load(MIXED).intent),
        platforms=("eos",))[0].ports]
    assert counters.snapshot_file(tmp_path, "leaf-su1-r0", counters.PFC).name == (
        "show_priority-flow-control_counters.json")
    run = tmp_path / "ok"
    before, after = _snapshots(run, ports, 1800, 200)
    ok = cli("verify-counters", str(MIXED), str(before), str(after), "--elapsed", "1800",
             "--devices", "leaf-su1-r0")
    assert (ok.code, ok.out) == (0, "1 switch(es) within the plan over 1800 s\n"), ok.out + ok.err
    assert 200 * 1800 > 357_600  # what the cumulative threshold would have failed
    bad = tmp_path / "bad"
    before, after = _snapshots(bad, ports, 1800, 200, storm=ports[0], drops_on=ports[1])
    run_bad = cli("verify-counters", str(MIXED), str(before), str(after), "--elapsed", "1800",
                  "--devices", "leaf-su1-r0")
    assert run_bad.code == 1
    lines = run_bad.out.splitlines()
    assert lines[0].startswith(f"leaf-su1-r0 {ports[0]}: pfc: expected at most 2145600 PFC "
                               "frames each way in 1800 s (1192/s")
    assert lines[1] == (f"leaf-su1-r0 {ports[1]}: lossless-drops: expected no packet dropped "
                        "by the lossless queue TC3 (PFC pauses the sender first), got 7 dropped")
    # Counters cleared mid-window: the after value is what was counted since, still judged.
    cleared = tmp_path / "cleared"
    before, after = _snapshots(cleared, ports, 1800, 200, cleared=True)
    assert cli("verify-counters", str(MIXED), str(before), str(after), "--elapsed", "1800",
               "--devices", "leaf-su1-r0").code == 0
    # Another eAPI shape is an error, never a pass; a switch without a snapshot is named.
    (after / "leaf-su1-r0" / "json" / "show_priority-flow-control_counters.json").write_text(
        '{"interfaces": {}}')
    shape = cli("verify-counters", str(MIXED), str(before), str(after), "--elapsed", "1800",
                "--devices", "leaf-su1-r0")
    assert shape.code == 1 and ": snapshot: expected the port's PFC" in shape.out
    missing = cli("verify-counters", str(MIXED), str(before), str(after), "--elapsed", "60")
    assert missing.code == 1 and "leaf-su1-r1: snapshot: expected both snapshots" in missing.out


def test_ecn_marks_are_bounded_when_the_intent_sets_a_budget(tmp_path: Path) -> None:
    from fabgen.verify import counters

    budget = counters.Budget(pause_pps=1192, pfc_frames_max=None, lossless_queue=3,
                             ecn_marks_max=1_000_000)

    def snap(marks: int) -> dict[str, Any]:
        return {counters.PFC: {"interfaceCounters": {"Ethernet1/1": {"rxFrames": 0,
                                                                     "txFrames": 0}}},
                counters.QUEUE_DROPS: {"egressQueueCounters": {"interfaces": {"Ethernet1/1": {
                    "ucastQueues": {"trafficClasses": {"TC3": {"dropPrecedences": {
                        "DP0": {"droppedPackets": 0}}}}}}}}},
                # queues without ECN print "-" (ANTA's unit-test data); the RoCE queue counts
                counters.ECN: {"intfQueueCounters": {"Ethernet1/1": {"queueCounters": {
                    "0": "-", "1": "-", "3": str(marks), "6": "-"}}}}}
    assert counters.compare("leaf", ["Ethernet1/1"], snap(5), snap(250_005), 300, budget) == []
    (finding,) = counters.compare("leaf", ["Ethernet1/1"], snap(5), snap(2_000_005), 300,
                                  budget)
    assert (finding.check, finding.actual) == ("ecn", "2000000")
    intent = tmp_path / "ecn.yaml"
    intent.write_text(MIXED.read_text() + "monitoring:\n  verify_ecn_marks_max: 1000000\n")
    commands = render(load(intent), only=["anta"])[anta_target.COUNTERS]
    assert "- show qos interfaces ecn counters queue" in commands


def test_catalog_has_no_cumulative_counter_test_and_checks_ecn_config(tmp_path: Path) -> None:
    """Counters left to verify-counters; instead ECN configured on any other queue fails,
    through ANTA's own VerifyRunningConfig on `show running-config | json` shaped as EOS
    nests interface sub-modes ({"cmds": {...}})."""
    tests = _leaf_inputs(tmp_path)
    assert not {"VerifyInterfacesPFCCounters", "VerifyInterfacesEgressQueueDrops",
                "VerifyInterfacesECNCounters"} & set(tests)
    rule = tests["VerifyRunningConfig"]

    def running(ecn_on: int) -> dict[str, Any]:
        ecn = ("random-detect ecn minimum-threshold 150000 bytes maximum-threshold 1500000 "
               "bytes max-mark-probability 100")
        queues = {f"uc-tx-queue {q}": {"cmds": {"no priority": None, **(
            {ecn: None, "random-detect ecn count": None} if q in (3, ecn_on) else {})}}
            for q in (0, 1, 3, 6)}
        return {"cmds": {"interface Ethernet1/1": {"cmds": {"mtu 9214": None, **queues}},
                         "interface Management1": {"cmds": {"vrf MGMT": None}}}}
    assert _run(rule, running(3)) == "success"
    assert _run(rule, running(1)) == "failure"


def test_check_script_snapshots_around_the_traffic_then_runs_the_catalog(
        tmp_path: Path) -> None:
    """verify/anta-check.sh with stand-ins for `anta` and `fabgen` that log their arguments:
    snapshot, traffic, snapshot, verify-counters with the elapsed seconds, nrfu; a failure of
    either check is the exit status."""
    import os
    import subprocess

    files = render(load(MIXED), only=["anta"])
    verify = tmp_path / "verify"
    verify.mkdir()
    for name in (anta_target.CHECK, anta_target.CATALOG, anta_target.COUNTERS):
        (tmp_path / name).write_text(files[name])
    log = tmp_path / "log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool, var in (("anta", "NRFU_EXIT"), ("fabgen", "COUNTERS_EXIT")):
        fake = bin_dir / tool
        fake.write_text(f'#!/bin/sh\necho "{tool} $*" >> {log}\n'
                        f'case "$1" in nrfu|verify-counters) exit "${{{var}:-0}}";; esac\n'
                        'exit 0\n')
        fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}",
           "FABGEN_INTENT": "pod.yaml"}
    run = subprocess.run(["bash", str(verify / "anta-check.sh"), "inv.yml", "sh", "-c",
                          f"echo traffic >> {log}"], env=env, capture_output=True, text=True,
                         check=False)
    assert run.returncode == 0, run.stderr
    lines = log.read_text().splitlines()
    assert lines[0].startswith(f"anta exec snapshot --inventory inv.yml --commands-list "
                               f"{verify}/anta-counters.yaml --output /")
    assert lines[1] == "traffic" and lines[2].startswith("anta exec snapshot")
    before, after = lines[0].split()[-1], lines[2].split()[-1]
    assert before.endswith("/before") and after.endswith("/after")
    assert lines[3].startswith(f"fabgen verify-counters pod.yaml {before} {after} --elapsed ")
    assert int(lines[3].split()[-1]) >= 1
    assert lines[4] == f"anta nrfu --catalog {verify}/anta-catalog.yaml --inventory inv.yml table"
    for var in ("NRFU_EXIT", "COUNTERS_EXIT"):
        failed = subprocess.run(["bash", str(verify / "anta-check.sh"), "inv.yml", "true"],
                                env={**env, var: "1"}, capture_output=True, check=False)
        assert failed.returncode == 1, var
    unset = subprocess.run(["bash", str(verify / "anta-check.sh"), "inv.yml", "true"],
                           env={k: v for k, v in env.items() if k != "FABGEN_INTENT"},
                           capture_output=True, text=True, check=False)
    assert unset.returncode != 0 and "FABGEN_INTENT" in unset.stderr


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
