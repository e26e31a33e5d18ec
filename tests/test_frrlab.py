"""The SONiC underlay in real FRR (Debian's frr), one network namespace per switch.

Every RoCE inventory with SONiC switches comes up as rendered: each switch boots the frr.conf
its bgp container builds from config_db.json (every line taken by FRR), every BGP session is
Established, every BFD session up, every announced prefix in every other switch's kernel with
the ECMP width eBGP gives (a leaf reaches a remote leaf over all its uplinks). Then one leaf
uplink's packets are dropped with the link up, and BFD must notice within its detection time;
a small in-test fabric with a 3 s hold time also times the hold timer with BFD off, and shows
the checks fail when a leaf stops announcing.

The expectation model itself is checked without root against counts made by hand.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from fabgen import qos
from fabgen.intent import load
from fabgen.platforms.sonic import snmp as sonic_snmp
from fabgen.platforms.sonic.frrlab import lab as frrlab
from fabgen.platforms.sonic.frrlab import model
from fabgen.platforms.sonic.frrlab.netns import SNMP_USER, available, snmp_available
from fabgen.platforms.sonic.frrlab.run import from_context, run_lab
from fabgen.targets.base import RenderContext
from fabgen.topology.build import build
from tests import snmp_exporter_model
from tests.conftest import INVENTORIES, _missing

# Two leaves, one spine, four links per leaf-spine pair, a 3 s hold time: the smallest fabric
# with ECMP, quick enough to time the hold timer.
TINY = """\
name: lab-tiny
description: small SONiC fabric for the FRR lab tests
fabric: {transport: roce, speed: 400G}
cluster:
  nodes: 4
  node: {model: generic, gpus: 8, nics: 2, nic: connectx-7, nic_ports: 1}
topology:
  style: rail-optimized
  leaf: {model: sn5600, breakout: 2x400G}
platforms: {leaf: sonic, spine: sonic}
underlay:
  bgp: {keepalive_s: 1, hold_s: 3}
"""


def _sonic_roce(path: Path) -> bool:
    """A RoCE example whose every switch runs SONiC: the lab wires SONiC switches only."""
    from fabgen.qos import used_platforms

    intent = load(path).intent
    return intent.fabric.transport == "roce" and set(used_platforms(intent).values()) == {"sonic"}


EXAMPLES = [p for p in INVENTORIES if _sonic_roce(p)]


def _context(path: Path) -> RenderContext:
    intent = load(path).intent
    return RenderContext(intent=intent, fabric=build(intent), qos=qos.plan(intent))


def _need_lab() -> None:
    why = available()
    if why is not None:
        _missing(why)


def test_cli_refuses_what_has_no_bgp_underlay(cli) -> None:  # type: ignore[no-untyped-def]
    ib = next(p for p in INVENTORIES if p.stem.startswith("ib-"))
    run = cli("frr-lab", str(ib))
    assert run.code == 1 and "an InfiniBand fabric has no BGP underlay" in run.err
    helped = cli("frr-lab", "--help")
    assert helped.code == 0 and "sudo fabgen frr-lab pod-a.yaml" in helped.out


def test_every_sonic_example_is_covered() -> None:
    assert [p.stem for p in EXAMPLES] == ["roce-256-sonic"]


# --- the expectations, counted by hand ------------------------------------------------------

def test_expected_widths_of_the_256_gpu_example() -> None:
    """roce-256-sonic: 8 leaves and 4 spines, 8 links per leaf-spine pair (1:1, 32 uplinks a
    leaf). A leaf reaches each other leaf's loopback and 32 host /31s over its 32 uplinks; a
    spine reaches each leaf's over the 8 links to it; a leaf reaches a spine's loopback over the
    8 links to that spine; spines share AS 65000, so no spine learns another spine's."""
    lab = from_context(_context(next(p for p in EXAMPLES if p.stem == "roce-256-sonic")))
    want = model.expectations(lab)
    leaves = [s for s in lab.switches if s.role == "leaf"]
    spines = [s for s in lab.switches if s.role == "spine"]
    assert (len(leaves), len(spines), len(lab.cables)) == (8, 4, 8 * 32)
    loopback = {s.name: next(i.address.split("/")[0] + "/32" for i in s.interfaces
                             if i.kind == "loopback") for s in lab.switches}
    for leaf in leaves:
        routes = want.routes[leaf.name]
        assert len(leaf.announced) == 1 + 32
        for other in leaves:
            if other is leaf:
                assert not set(other.announced) & set(routes)
                continue
            assert {routes[p] for p in other.announced} == {32}
        assert {routes[loopback[s.name]] for s in spines} == {8}
        assert len(routes) == 7 * 33 + 4
        assert len(want.sessions[leaf.name]) == 32
    for spine in spines:
        routes = want.routes[spine.name]
        assert set(routes) == {p for leaf in leaves for p in leaf.announced}
        assert set(routes.values()) == {8}
        assert not set(routes) & {loopback[s.name] for s in spines}


def test_as_path_rule_blocks_spine_to_spine() -> None:
    """A spine hears another spine's prefix only through a leaf, with the shared spine AS in
    the path: eBGP drops it (the model must too, or the lab would wait for it forever)."""
    a = ("s1", "spine", 65000, {}, "")
    b = ("s2", "spine", 65000, {}, "")
    leaf = ("l1", "leaf", 65101, {}, "")
    paths = model._best_paths("s2", {"s1": 65000, "s2": 65000, "l1": 65101},
                              {"s2": {"l1": 2}, "l1": {"s2": 2, "s1": 1}, "s1": {"l1": 1}})
    assert set(paths) == {"s2", "l1"} and paths["l1"] == ((65000,), 2)
    assert model.plan([a, b, leaf], []).outside == ()


# --- the lab ---------------------------------------------------------------------------------

@pytest.mark.realtool
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_underlay_runs_in_frr(path: Path) -> None:
    _need_lab()
    ctx = _context(path)
    lab = from_context(ctx)
    want = model.expectations(lab)
    result = run_lab(lab, timeout=120, detect=True, run_id=f"t{os.getpid() % 10000}")
    assert not result.refused, result.refused
    assert result.ok, "\n".join(result.problems[:20])
    sessions = sum(len(v) for v in want.sessions.values())
    assert sessions == 2 * sum(1 for link in ctx.fabric.links if link.kind != "node-leaf")
    assert (result.sessions_up, result.bfd_up) == (sessions, sessions)
    assert result.routes_ok == result.routes == sum(len(v) for v in want.routes.values())
    # No session went down again once all were up (a flap fails the lab: result.ok).
    assert result.first_up_s is not None and not result.flaps and result.settle_s >= 5
    # The BgpSessionDown alert's source: FRR's BGP4-MIB through snmpd, every session.
    if snmp_available():
        assert (result.snmp_sessions, result.snmp_established) == (sessions, sessions)
    (bfd,) = result.detections
    assert bfd.detector == "bfd" and bfd.expected_ms == 900
    # BFD declares the session down within interval x multiplier of the last packet it got;
    # the verdict allows the poll before each event plus DETECTION_SLACK_MS, and is part of ok.
    assert bfd.verdict == "in time" and bfd.late == [], bfd
    for seen, before in ((bfd.bfd_down_ms, bfd.bfd_last_up_ms),
                         (bfd.bgp_down_ms, bfd.bgp_last_up_ms),
                         (bfd.route_ms, bfd.route_last_up_ms)):
        assert seen is not None and before is not None and before <= seen, bfd
        assert seen - before <= bfd.poll_ms
        assert before <= bfd.expected_ms + frrlab.DETECTION_SLACK_MS, bfd
    if snmp_available():
        assert bfd.bgp_peer_state is not None and bfd.bgp_peer_state != 6


@pytest.mark.realtool
def test_bfd_beats_the_hold_timer_and_failures_show(tmp_path: Path) -> None:
    _need_lab()
    intent = tmp_path / "tiny.yaml"
    intent.write_text(TINY, encoding="utf-8")
    lab = from_context(_context(intent))
    with frrlab.running(lab, run_id=f"u{os.getpid() % 10000}") as ns:
        result = frrlab.check(ns, lab, timeout=60)
        assert result.ok and result.routes == result.routes_ok == 22, result.problems
        cable = frrlab.pick_link(lab)
        bfd = frrlab.measure(ns, lab, cable, "bfd", 900, 8)
        frrlab.wait_session(ns, lab, cable)
        sw, peer = cable[0][0], cable[1][0]
        for end in (sw, peer):
            ns.configure(end, [f"router bgp {lab.switch(end).asn}", "no neighbor FABRIC bfd"])
        frrlab.wait_session(ns, lab, cable, bfd=False)
        hold = frrlab.measure(ns, lab, cable, "hold-timer", 3000, 8)
        assert bfd.bgp_down_ms is not None and hold.bgp_down_ms is not None, (bfd, hold)
        assert bfd.bgp_down_ms <= 1800, bfd
        # The hold timer runs from the last keepalive received (sent every second).
        assert 1800 <= hold.bgp_down_ms <= 3000 + 1500, hold
        assert hold.bfd_down_ms is None and hold.bgp_down_ms > bfd.bgp_down_ms + 500
        # FRR refuses a line: boot reports it.
        leaf = lab.switches[0].name
        ns.write(leaf, "frr.conf", lab.switches[0].frr_conf + "bgp no-such-command\n")
        assert any("no-such-command" in line for line in ns.boot(leaf))
        # A leaf stops announcing (no outbound policy: RFC 8212 withholds everything): the
        # other leaf and the spine lose its prefixes, and the check says which.
        frrlab.wait_session(ns, lab, cable, bfd=False)
        ns.configure(leaf, [f"router bgp {lab.switches[0].asn}", "address-family ipv4 unicast",
                            "no neighbor FABRIC route-map FABRIC out"])
        for _ in range(40):  # until the withdrawals arrive (check(timeout=0) looks once)
            broken = frrlab.check(ns, lab, timeout=0, boot=False)
            missing = {p.split()[2] for p in broken.problems if "route" in p}
            if missing == set(lab.switches[0].announced):
                break
            time.sleep(0.2)
        assert not broken.ok
        assert missing == set(lab.switches[0].announced), broken.problems


def test_late_detection_fails_the_lab() -> None:
    """The verdict (and so the exit code) follows the poll before each event: 1198 ms seen
    with the previous poll at 1100 ms is late for a 900 ms plan; the same with the previous
    poll at 950 ms may have been in time (within the stated tolerance), and passes."""
    def detection(before: int, seen: int) -> frrlab.Detection:
        return frrlab.Detection("leaf", "Ethernet0", "spine", "Ethernet0", "bfd", 900, seen,
                                seen, seen + 20, "10.0.0.1/32", before, before, before,
                                poll_ms=seen - before)
    late = detection(1100, 1198)
    assert late.late and late.verdict.startswith("LATE: BFD down after 1100-1198 ms")
    result = frrlab.LabResult(2, converged_s=1.0, detections=[late])
    assert not result.ok
    assert frrlab.LabResult(2, converged_s=1.0, detections=[detection(950, 1198)]).ok
    missing = frrlab.Detection("leaf", "Ethernet0", "spine", "Ethernet0", "bfd", 900, None,
                               300, 320, "10.0.0.1/32")
    assert missing.late == ["BFD down not seen"]
    assert not frrlab.LabResult(2, converged_s=1.0, flaps=["x"]).ok
    assert "LATE" in frrlab.format_result(result)


def test_flaps_are_counted_from_frr_counters() -> None:
    before = {"leaf": {"10.0.0.1": (0, 1), "10.0.0.3": (2, 0)}}
    after = {"leaf": {"10.0.0.1": (0, 1), "10.0.0.3": (3, 1)}}
    assert frrlab._flaps(before, after) == [
        "leaf: 10.0.0.3: BGP dropped 1 time(s), BFD went down 1 time(s)"]
    assert frrlab._flaps(after, after) == []


@pytest.mark.realtool
def test_snmp_exporter_reads_bgp_state_from_frr(tmp_path: Path) -> None:
    """The SONiC BgpSessionDown alert's source, for real: FRR's bgpd (-M snmp, `agentx` in the
    booted frr.conf) registers BGP4-MIB with an AgentX master snmpd configured as SONiC's, and
    Prometheus's snmp_exporter (Debian's) walks it with the rendered module: the series equal
    what tests/snmp_exporter_model.py makes of the same walk, and every session is 6."""
    _need_lab()
    if not snmp_available():
        _missing("snmpd and snmpwalk are not installed (Debian packages snmpd, snmp)")
    exporter = shutil.which("prometheus-snmp-exporter")
    if exporter is None:
        _missing("prometheus-snmp-exporter is not installed (Debian package)")
    intent = tmp_path / "tiny.yaml"
    intent.write_text(TINY, encoding="utf-8")
    lab = from_context(_context(intent))
    module = sonic_snmp.exporter_config()["modules"][sonic_snmp.MODULE]
    # Debian's snmp_exporter is 0.21, before `auths` moved out of modules (0.23): the rendered
    # module with the lab's user inside it; the walk and the metric are the rendered ones.
    user, auth, priv = SNMP_USER
    old = {**module, "version": 3, "auth": {
        "username": user, "password": auth, "priv_password": priv, "auth_protocol": "SHA",
        "priv_protocol": "AES", "security_level": "authPriv"}}
    with frrlab.running(lab, run_id=f"s{os.getpid() % 10000}") as ns:
        result = frrlab.check(ns, lab, timeout=60, settle_s=0)
        assert result.converged_s is not None, result.problems
        leaf = lab.switches[0]
        config = ns.dir(leaf.name) / "snmp_exporter.yml"
        config.write_text(yaml.safe_dump({sonic_snmp.MODULE: old}))
        walk = ns.snmp_walk(leaf.name, sonic_snmp.BGP_PEER_STATE_OID)
        proc = subprocess.Popen(["ip", "netns", "exec", ns.namespaces[leaf.name], exporter,
                                 f"--config.file={config}",
                                 "--web.listen-address=127.0.0.1:9116"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            text = ""
            for _ in range(50):
                got = ns.exec(leaf.name, ["curl", "-sf", "http://127.0.0.1:9116/snmp?target="
                                          f"127.0.0.1&module={sonic_snmp.MODULE}"], check=False)
                if got.returncode == 0:
                    text = got.stdout
                    break
                time.sleep(0.1)
        finally:
            proc.terminate()
            proc.wait(10)
    real = {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
            for line in text.splitlines() if line.startswith(sonic_snmp.METRIC + "{")}
    assert real == snmp_exporter_model.exporter_samples(module, walk)
    peers = {ip for ip in model.expectations(lab).sessions[leaf.name]}
    assert real == {f'{sonic_snmp.METRIC}{{neighbor="{ip}"}}': 6.0 for ip in peers}
