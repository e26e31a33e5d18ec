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
import time
from pathlib import Path

import pytest

from fabgen import qos
from fabgen.frrlab import lab as frrlab
from fabgen.frrlab import model
from fabgen.frrlab.netns import available
from fabgen.frrlab.run import from_context, run_lab
from fabgen.intent import load
from fabgen.targets.base import RenderContext
from fabgen.topology.build import build
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
    intent = load(path).intent
    p = intent.platforms
    return intent.fabric.transport == "roce" and "sonic" in (p.leaf, p.spine, p.core)


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
    (bfd,) = result.detections
    assert bfd.detector == "bfd" and bfd.expected_ms == 900
    # BFD declares the session down within interval x multiplier of the last packet it got;
    # the slack is the poll (one vtysh call) on a loaded machine, still far below the 9 s hold.
    for seen in (bfd.bfd_down_ms, bfd.bgp_down_ms, bfd.route_ms):
        assert seen is not None and seen <= 2 * bfd.expected_ms, bfd


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
