"""Topology invariants (DESIGN §3) over many generated intents, and checks.py's own failures.

Three layers: `check_fabric` finds nothing on any built fabric; the same invariants asserted
directly here, written differently, so a blind spot in checks.py does not hide a builder bug;
and hand-made miscablings that checks.py must report, so a check that always passes fails here.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections import Counter, defaultdict
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabgen import catalog
from fabgen.intent.models import Intent
from fabgen.topology import sizing
from fabgen.topology.build import build
from fabgen.topology.checks import CODES, Finding, check_fabric
from fabgen.topology.model import Fabric, Link, LinkKind, Role, Switch

try:  # tests/ is a package (tests/__init__.py); fall back to a plain rootdir-relative import
    from tests.strategies import intents
except ImportError:  # pragma: no cover
    from strategies import intents  # type: ignore[no-redef,import-not-found]

# FABGEN_EXAMPLES=5000 pytest ... for a longer hunt than the default run's ~15 s.
_SCALE = int(os.environ.get("FABGEN_EXAMPLES", "150"))
_HEALTH = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]
PROPERTY = settings(max_examples=_SCALE, deadline=None, suppress_health_check=_HEALTH)
NEGATIVE = settings(max_examples=max(1, _SCALE // 4), deadline=None,
                    suppress_health_check=_HEALTH)


def _expected(intent: Intent, fabric: Fabric) -> dict[str, Fraction]:
    ratios = intent.topology.oversubscription
    expected = {"leaf": ratios.leaf}
    if fabric.tiers == 3:
        expected["spine"] = ratios.spine
    return expected


def _by_role(fabric: Fabric) -> dict[Role, list[Switch]]:
    out: dict[Role, list[Switch]] = defaultdict(list)
    for s in fabric.switches:
        out[s.role].append(s)
    return out


def _ib(nodes: int, **topology: object) -> Intent:
    topo: dict[str, object] = {"style": "rail-optimized", "scalable_unit": 32,
                               "leaf": {"model": "qm9700"}, "spine": {"model": "qm9700"}}
    topo.update(topology)
    # Whole units of nodes: no node slot given to dedicated subnet-manager hosts.
    return Intent.model_validate({
        "name": "neg", "fabric": {"transport": "infiniband", "generation": "ndr"},
        "cluster": {"nodes": nodes, "node": {"nics": 8}}, "topology": topo,
        "infiniband": {"management": {"hosts": []}}})


def _roce_256() -> Intent:
    # The inventories/roce-256-sonic.yaml fabric: 8 rail leaves, 4 spines, 8 links per pair.
    return Intent.model_validate({
        "name": "neg", "fabric": {"transport": "roce", "speed": "400G"},
        "cluster": {"nodes": 32, "node": {"nics": 8}},
        "topology": {"scalable_unit": 32, "min_spines": 4,
                     "leaf": {"model": "sn5600", "breakout": "2x400G"}}})


# --- 1. checks.py finds nothing on what the builder builds ----------------------------------

@PROPERTY
@given(intents())
def test_built_fabric_passes_check_fabric(intent: Intent) -> None:
    fabric = build(intent)
    assert check_fabric(fabric, expected_oversubscription=_expected(intent, fabric)) == []


# --- 2. the invariants, asserted directly ---------------------------------------------------

@PROPERTY
@given(intents())
def test_ports_cabled_once_and_within_radix(intent: Intent) -> None:
    fabric = build(intent)
    node = intent.cluster.node
    assert len(fabric.links_of("node-leaf")) == intent.cluster.nodes * node.nics * node.nic_ports
    for network in (fabric, *fabric.extras):  # compute, then storage/management if any
        _assert_ports(network)


def _assert_ports(fabric: Fabric) -> None:
    switches = {s.name: s for s in fabric.switches}
    assert len(switches) == len(fabric.switches), "switch names are unique"

    # Every NIC port exactly once, and nothing but NIC ports on the host side.
    host_ends = Counter((link.a_device, link.a_port) for link in fabric.links_of("node-leaf"))
    nic_ports = {(h.name, p.dev) for h in fabric.hosts for p in h.ports}
    assert set(host_ends) == nic_ports
    assert set(host_ends.values()) == {1}

    # Every switch port at most once, numbered 1..radix; used ports never exceed the radix.
    ends = Counter((link.z_device, link.z_port) for link in fabric.links)
    ends.update((link.a_device, link.a_port) for link in fabric.links
                if link.kind != "node-leaf")
    assert max(ends.values()) == 1
    used: Counter[str] = Counter()
    for device, port in ends:
        assert 1 <= port <= switches[device].radix, (device, port)
        used[device] += 1
    assert all(used[name] <= s.radix for name, s in switches.items())

    # The documented port plan: downlinks on 1..down, uplinks after them starting on a cage
    # boundary, so no cage (twin-port OSFP, split cable) serves a host and a spine at once.
    for link in fabric.links:
        lower = switches.get(link.a_device)
        if link.kind == "peer-link":
            # an MLAG pair's peer link: the same port on both leaves, above the down/up plan
            assert lower is not None and link.a_port == link.z_port, link
            cage = _cage_ports(lower)
            first_up = -(-lower.down_ports // cage) * cage
            assert first_up + lower.up_ports < link.a_port <= lower.radix, link
            continue
        if lower is not None:
            cage = _cage_ports(lower)
            first_up = -(-lower.down_ports // cage) * cage
            assert first_up < link.a_port <= first_up + lower.up_ports, (link, cage)
            assert (link.a_port - 1) // cage >= -(-lower.down_ports // cage)
        assert 1 <= link.z_port <= switches[link.z_device].down_ports


def _cage_ports(switch: Switch) -> int:
    """Logical ports per cage, from the catalog (twin-port OSFP) and the breakout."""
    model = catalog.switches().get(switch.model)
    return (model.ports_per_cage if model else 1) * switch.breakout


@PROPERTY
@given(intents())
def test_rails_and_planes(intent: Intent) -> None:
    fabric = build(intent)
    switches = {s.name: s for s in fabric.switches}
    ports = {(h.name, p.dev): (h, p) for h in fabric.hosts for p in h.ports}
    leaf_of = {(link.a_device, link.a_port): link.z_device
               for link in fabric.links_of("node-leaf")}
    node = intent.cluster.node

    for host in fabric.hosts:
        for port in host.ports:
            leaf = switches[leaf_of[host.name, port.dev]]
            assert leaf.plane == port.plane, "a NIC port is cabled into its own plane"
            assert leaf.group == host.su, "a node is cabled to the leaves of its own SU"
        if intent.topology.planes == 2:
            # Dual-plane: the two ports of each NIC go to different planes.
            for nic in range(node.nics):
                assert {p.plane for p in host.ports if p.nic == nic} == {0, 1}

    if intent.topology.style == "rail-optimized":
        assert fabric.rails == node.nics * node.nic_ports // intent.topology.planes
        # One leaf per (plane, SU, rail), and that leaf serves that rail of that SU only.
        leaves: dict[tuple[int, int, int], set[str]] = defaultdict(set)
        for (host_name, dev), leaf_name in leaf_of.items():
            host, port = ports[host_name, dev]
            leaves[port.plane, host.su, port.rail].add(leaf_name)
            assert switches[leaf_name].rail == port.rail
        assert all(len(v) == 1 for v in leaves.values())
        served = Counter(next(iter(v)) for v in leaves.values())
        assert set(served.values()) == {1}
        # Every node's rails: distinct leaves, one per rail.
        for host in fabric.hosts:
            assert len({leaf_of[host.name, p.dev] for p in host.ports}) == len(host.ports)
    else:
        assert fabric.rails == 0
        # Classic fat-tree: each node's ports on one plane share one leaf (top of rack).
        for host in fabric.hosts:
            per_plane = {(p.plane, leaf_of[host.name, p.dev]) for p in host.ports}
            assert len(per_plane) == intent.topology.planes


def _pair_counts(fabric: Fabric, kind: LinkKind) -> Counter[tuple[str, str]]:
    return Counter((link.a_device, link.z_device) for link in fabric.links if link.kind == kind)


@PROPERTY
@given(intents())
def test_symmetry(intent: Intent) -> None:
    fabric = build(intent)
    roles = _by_role(fabric)
    switches = {s.name: s for s in fabric.switches}

    # Leaf-spine: one link count for every leaf-spine pair of the fabric; each leaf reaches
    # exactly the spines of one (plane, pod), and the pairs are the full bipartite graph.
    pairs = _pair_counts(fabric, "leaf-spine")
    assert len(set(pairs.values())) == 1
    spines_of_pod: dict[tuple[int, int], frozenset[str]] = defaultdict(frozenset)
    for s in roles["spine"]:
        spines_of_pod[s.plane, s.group] |= {s.name}
    reached: dict[str, set[str]] = defaultdict(set)
    for leaf, spine in pairs:
        reached[leaf].add(spine)
    assert set(reached) == {s.name for s in roles["leaf"]}, "every leaf has uplinks"
    leaves_of_pod: Counter[frozenset[str]] = Counter()
    for leaf, spines in reached.items():
        assert frozenset(spines) in spines_of_pod.values(), leaf
        assert all(switches[sp].plane == switches[leaf].plane for sp in spines)
        leaves_of_pod[frozenset(spines)] += 1
    assert len(pairs) == sum(n * len(spines) for spines, n in leaves_of_pod.items())
    # Min-spines honoured, and the uplinks divide evenly over them.
    for s in roles["leaf"]:
        n_spines = len(reached[s.name])
        assert s.up_ports % n_spines == 0
        assert n_spines >= min(intent.topology.min_spines, s.up_ports) or fabric.tiers == 3

    if fabric.tiers == 2:
        assert "core" not in roles
        assert not fabric.links_of("spine-core")
        return
    # Spine-core: one count for every pair; spine j of a pod reaches one whole core group, and
    # every core hears equally from every pod of its plane.
    pairs = _pair_counts(fabric, "spine-core")
    assert len(set(pairs.values())) == 1
    cores_of_group: dict[tuple[int, int], set[str]] = defaultdict(set)
    for s in roles["core"]:
        cores_of_group[s.plane, s.group].add(s.name)
    up: dict[str, set[str]] = defaultdict(set)
    from_pods: dict[str, Counter[int]] = defaultdict(Counter)
    for (spine, core), n in pairs.items():
        up[spine].add(core)
        from_pods[core][switches[spine].group] += n
    assert set(up) == {s.name for s in roles["spine"]}
    for spine, cores in up.items():
        assert cores in cores_of_group.values(), spine
    pods = {(s.plane, s.group) for s in roles["spine"]}
    for c in roles["core"]:
        got = from_pods[c.name]
        assert {(c.plane, pod) for pod in got} == {pg for pg in pods if pg[0] == c.plane}
        assert len(set(got.values())) == 1


@PROPERTY
@given(intents())
def test_oversubscription_counts_and_tiers(intent: Intent) -> None:
    fabric = build(intent)
    roles = _by_role(fabric)
    topo = intent.topology
    uplinks = Counter(link.a_device for link in fabric.links if link.kind != "node-leaf")
    downlinks = Counter(link.z_device for link in fabric.links)

    # The oversubscription asked for is achieved (or better), and the report says so.
    for s in roles["leaf"]:
        assert uplinks[s.name] == s.up_ports > 0
        assert downlinks[s.name] <= s.down_ports
        assert Fraction(s.down_ports, uplinks[s.name]) <= topo.oversubscription.leaf
    if fabric.tiers == 3:
        for s in roles["spine"]:
            assert uplinks[s.name] == s.up_ports > 0
            assert Fraction(downlinks[s.name], uplinks[s.name]) <= topo.oversubscription.spine
    facts = {t.role: t for t in fabric.tier_facts}
    assert facts["leaf"].oversubscription is not None
    assert facts["leaf"].oversubscription <= topo.oversubscription.leaf

    # Counts are computed, not guessed: tier facts, cables and bisection agree with the links.
    for role, members in roles.items():
        assert facts[role].count == len(members)
    node = intent.cluster.node
    host_links = len(fabric.links_of("node-leaf"))
    assert host_links == intent.cluster.nodes * node.nics * node.nic_ports
    # Bisection recounted per plane: half of the narrowest of host ports, the leaves' usable
    # uplinks (min(hosts, uplinks) per leaf: a nearly empty leaf's uplinks carry only its
    # hosts), the leaf-spine links (2 tiers) or each spine's min(down, up), spine-core links.
    expected = 0
    for plane in range(fabric.planes):
        links_p = [lk for lk in fabric.links if lk.plane == plane]
        host_n = Counter(lk.z_device for lk in links_p if lk.kind == "node-leaf")
        up_n = Counter(lk.a_device for lk in links_p if lk.kind != "node-leaf")
        down_n = Counter(lk.z_device for lk in links_p if lk.kind != "node-leaf")
        tiers = [sum(host_n.values()), sum(min(n, up_n[leaf]) for leaf, n in host_n.items())]
        if fabric.tiers == 2:
            tiers.append(sum(1 for lk in links_p if lk.kind == "leaf-spine"))
        else:
            spines = [s for s in fabric.switches if s.role == "spine" and s.plane == plane]
            tiers.append(sum(min(down_n[s.name], up_n[s.name]) for s in spines))
            tiers.append(sum(1 for lk in links_p if lk.kind == "spine-core"))
        expected += min(tiers)
    assert fabric.bisection_gbps == expected * fabric.speed_gbps // 2
    assert len({link.id for link in fabric.links}) == len(fabric.links)

    # Tiers: forced is obeyed; `auto` picks 3 only when no symmetric 2-tier layout exists.
    if topo.tiers != "auto":
        assert fabric.tiers == topo.tiers
    elif fabric.tiers == 3:
        leaves = len(roles["leaf"]) // fabric.planes
        up = roles["leaf"][0].up_ports
        radix = sizing.shape(intent).spine.radix
        fits = [n for n in range(1, up + 1)
                if up % n == 0 and n >= min(topo.min_spines, up) and leaves * (up // n) <= radix]
        assert fits == [], f"{leaves} leaves x {up} uplinks fit under {fits[0]} spines"


def test_auto_picks_two_tiers_when_they_fit() -> None:
    # 8 units of 32 nodes fill 64 QM9700 leaves whose 32 uplinks land 1:1 on 32 spines.
    fabric = build(_ib(256))
    assert fabric.tiers == 2
    assert Counter(s.role for s in fabric.switches) == {"leaf": 64, "spine": 32}


# --- 3. checks.py fails on hand-made miscablings --------------------------------------------

def _codes(findings: list[Finding]) -> set[str]:
    codes = {f.code for f in findings}
    assert codes <= set(CODES), "every code is documented"
    return codes


def _free_ports(fabric: Fabric) -> dict[str, list[int]]:
    """Unused ports of every switch."""
    used: dict[str, set[int]] = defaultdict(set)
    for link in fabric.links:
        used[link.z_device].add(link.z_port)
        used[link.a_device].add(link.a_port)  # hosts too: harmless, never looked up
    return {s.name: sorted(set(range(1, s.radix + 1)) - used[s.name]) for s in fabric.switches}


def _move_uplink(fabric: Fabric, kind: LinkKind) -> tuple[Fabric, Link, str]:
    """Re-plug the first `kind` cable that can move into a free port of another switch of the
    same group (same plane and pod, or same core group)."""
    free = _free_ports(fabric)
    for index, link in enumerate(fabric.links):
        if link.kind != kind:
            continue
        old = fabric.by_name[link.z_device]
        other = next((s for s in fabric.switches if s.role == old.role and s.name != old.name
                      and (s.plane, s.group) == (old.plane, old.group) and free[s.name]), None)
        if other is not None:
            moved = dataclasses.replace(link, z_device=other.name, z_port=free[other.name][0])
            links = (*fabric.links[:index], moved, *fabric.links[index + 1:])
            return dataclasses.replace(fabric, links=links), link, other.name
    raise AssertionError(f"no {kind} cable can move to a free port")


@pytest.mark.parametrize("intent", [_roce_256(), _ib(224), _ib(448)],
                         ids=["8-links-per-pair", "1-link-per-pair", "3-tier"])
def test_moved_leaf_spine_cable_is_asymmetric(intent: Intent) -> None:
    fabric = build(intent)
    assert check_fabric(fabric) == []
    bad, link, new_spine = _move_uplink(fabric, "leaf-spine")
    findings = check_fabric(bad)
    asym = [f.message for f in findings if f.code == "asymmetric"]
    assert any(m.startswith(f"{link.a_device} has unequal links") for m in asym), findings
    assert any(m.startswith(f"{link.z_device} has unequal links") for m in asym)
    assert any(m.startswith(f"{new_spine} has unequal links") for m in asym)
    # A free port: nothing else is wrong, except the new spine may now exceed its down ports.
    assert _codes(findings) <= {"asymmetric", "port-plan"}


def test_moved_spine_core_cable_is_asymmetric() -> None:
    fabric = build(_ib(384))  # 3 pods: every core has 16 free ports
    bad, link, new_core = _move_uplink(fabric, "spine-core")
    findings = check_fabric(bad)
    asym = [f.message for f in findings if f.code == "asymmetric"]
    assert any(m.startswith(f"{link.a_device} has unequal links") for m in asym), findings
    assert any(m.startswith(f"{new_core} has unequal links from the pods") for m in asym)
    assert _codes(findings) == {"asymmetric", "port-plan"}  # the core's 48 down ports: 49 used


def test_spine_cabled_to_another_core_group_is_asymmetric() -> None:
    fabric = build(_ib(384))
    spine = next(s for s in fabric.switches if s.role == "spine")
    foreign = next(s for s in fabric.switches if s.role == "core" and s.group != spine.index)
    index, link = next((i, x) for i, x in enumerate(fabric.links) if x.a_device == spine.name)
    moved = dataclasses.replace(link, z_device=foreign.name,
                                z_port=_free_ports(fabric)[foreign.name][0])
    bad = dataclasses.replace(fabric, links=(*fabric.links[:index], moved,
                                             *fabric.links[index + 1:]))
    messages = [f.message for f in check_fabric(bad) if f.code == "asymmetric"]
    assert any(m.startswith(f"{spine.name} reaches 2 core groups") for m in messages)


@NEGATIVE
@given(intents(), st.data())
def test_any_moved_uplink_is_caught(intent: Intent, data: st.DataObject) -> None:
    """Any cable re-plugged into another switch of its own group, on any free port."""
    fabric = build(intent)
    kinds: list[LinkKind] = ["leaf-spine", "spine-core"] if fabric.tiers == 3 else ["leaf-spine"]
    kind = data.draw(st.sampled_from(kinds))
    link = data.draw(st.sampled_from(fabric.links_of(kind)))
    old = fabric.by_name[link.z_device]
    others = [s for s in fabric.switches if s.role == old.role and s.name != old.name
              and (s.plane, s.group) == (old.plane, old.group)]
    if not others:
        return  # one spine per pod, or one core per group: nowhere else to plug the cable
    other = data.draw(st.sampled_from(others))
    used = {x.z_port for x in fabric.links if x.z_device == other.name}
    used |= {x.a_port for x in fabric.links if x.a_device == other.name}
    free = sorted(set(range(1, other.radix + 1)) - used) or [1]  # a full switch: reuse port 1
    moved = dataclasses.replace(link, z_device=other.name, z_port=free[0])
    links = tuple(moved if x is link else x for x in fabric.links)
    findings = check_fabric(dataclasses.replace(fabric, links=links))
    asym = [f.message for f in findings if f.code == "asymmetric"]
    assert any(m.startswith(f"{link.a_device} has unequal links") for m in asym), findings
    assert _codes(findings) <= {"asymmetric", "port-plan", "port-reused"}


@NEGATIVE
@given(intents(), st.data())
def test_any_crossed_pair_of_uplinks_is_caught(intent: Intent, data: st.DataObject) -> None:
    """Two cables of one group with their upper ends swapped: every port stays in use once."""
    fabric = build(intent)
    kinds: list[LinkKind] = ["leaf-spine", "spine-core"] if fabric.tiers == 3 else ["leaf-spine"]
    kind = data.draw(st.sampled_from(kinds))
    first = data.draw(st.sampled_from(fabric.links_of(kind)))
    group = fabric.by_name[first.z_device]
    candidates = [x for x in fabric.links_of(kind)
                  if x.a_device != first.a_device and x.z_device != first.z_device
                  and (fabric.by_name[x.z_device].plane, fabric.by_name[x.z_device].group)
                  == (group.plane, group.group)]
    if not candidates:
        return
    second = data.draw(st.sampled_from(candidates))
    swap = {first.id: dataclasses.replace(first, z_device=second.z_device, z_port=second.z_port),
            second.id: dataclasses.replace(second, z_device=first.z_device, z_port=first.z_port)}
    findings = check_fabric(dataclasses.replace(
        fabric, links=tuple(swap.get(x.id, x) for x in fabric.links)))
    assert _codes(findings) == {"asymmetric"}, findings
    named = " ".join(f.message.split()[0] for f in findings)
    assert first.a_device in named and second.a_device in named


def test_leaf_moved_to_another_pod_splits_its_unit() -> None:
    # 3 pods of 4 SUs; move every uplink of one leaf of SU 1 to the spines of pod 2, port for
    # port: each pod stays symmetric on its own, but SU 1 now straddles two pods.
    fabric = build(_ib(384))
    leaf = "leaf-su1-r0"
    spines = {s.index: s for s in fabric.switches if s.role == "spine" and s.group == 1}
    top = {s.name: max(x.z_port for x in fabric.links if x.z_device == s.name)
           for s in spines.values()}
    moved: dict[str, Link] = {}
    for x in fabric.links:
        if x.a_device == leaf:
            target = spines[fabric.by_name[x.z_device].index]
            top[target.name] += 1
            moved[x.id] = dataclasses.replace(x, z_device=target.name, z_port=top[target.name])
    findings = check_fabric(dataclasses.replace(
        fabric, links=tuple(moved.get(x.id, x) for x in fabric.links)))
    assert "su-split" in _codes(findings), findings
    assert any(f.code == "su-split" and leaf in f.message and "SU 1 of plane 1" in f.message
               for f in findings)


def test_duplicate_switch_port_is_port_reused() -> None:
    fabric = build(_roce_256())
    leaf = "leaf-su1-r0"
    first, second = [x for x in fabric.links if x.z_device == leaf][:2]
    links = tuple(dataclasses.replace(x, z_port=first.z_port) if x is second else x
                  for x in fabric.links)
    findings = check_fabric(dataclasses.replace(fabric, links=links))
    assert [f.code for f in findings] == ["port-reused"]
    assert f"{leaf} port {first.z_port} carries 2 cables: {first.id}, {second.id}" in (
        findings[0].message)


def test_dropped_host_link_is_nic_port_uncabled() -> None:
    fabric = build(_roce_256())
    gone = fabric.links_of("node-leaf")[13]
    findings = check_fabric(dataclasses.replace(
        fabric, links=tuple(x for x in fabric.links if x is not gone)))
    assert [f.code for f in findings] == ["nic-port-uncabled"]
    assert findings[0].message.startswith(f"{gone.a_device} port {gone.a_port} ")


def test_host_port_cabled_twice() -> None:
    fabric = build(_ib(31))  # one node slot free on every rail leaf
    link = fabric.links_of("node-leaf")[0]
    extra = dataclasses.replace(link, id="extra", z_port=32)
    findings = check_fabric(dataclasses.replace(fabric, links=(*fabric.links, extra)))
    assert "nic-port-cabled-twice" in _codes(findings)
    assert any(f.message.startswith(f"{link.a_device} port {link.a_port} ") for f in findings)


def test_swapped_rails_are_misaligned() -> None:
    fabric = build(_roce_256())
    host = fabric.hosts[5].name
    r0, r1 = [x for x in fabric.links if x.a_device == host][:2]
    swap = {r0.id: dataclasses.replace(r0, z_device=r1.z_device, z_port=r1.z_port),
            r1.id: dataclasses.replace(r1, z_device=r0.z_device, z_port=r0.z_port)}
    links = tuple(swap.get(x.id, x) for x in fabric.links)
    findings = check_fabric(dataclasses.replace(fabric, links=links))
    assert _codes(findings) == {"rail-misaligned"}
    text = "\n".join(f.message for f in findings)
    assert f"{host} port {r0.a_port}" in text and f"{host} port {r1.a_port}" in text
    assert f"{r0.z_device} serves 2 rails" in text


def test_port_beyond_radix() -> None:
    fabric = build(_roce_256())
    link = fabric.links_of("leaf-spine")[0]
    radix = fabric.by_name[link.z_device].radix
    links = tuple(dataclasses.replace(x, z_port=radix + 1) if x is link else x
                  for x in fabric.links)
    findings = check_fabric(dataclasses.replace(fabric, links=links))
    assert "radix-exceeded" in _codes(findings)
    assert any(f"{link.z_device} port {radix + 1}, outside 1..{radix}" in f.message
               for f in findings)


def test_oversubscription_above_expected() -> None:
    intent = Intent.model_validate({
        "name": "neg", "fabric": {"transport": "roce", "speed": "400G"},
        "cluster": {"nodes": 64, "node": {"nics": 8}},
        "topology": {"scalable_unit": 64, "oversubscription": "2:1",
                     "leaf": {"model": "sn5600", "breakout": "2x400G"}}})
    fabric = build(intent)
    assert check_fabric(fabric, expected_oversubscription={"leaf": Fraction(2)}) == []
    findings = check_fabric(fabric, expected_oversubscription={"leaf": Fraction(1)})
    assert _codes(findings) == {"oversubscription"}
    assert len(findings) == 8  # every rail leaf
    assert "leaf-su1-r0 is 2:1 (64 down, 32 up), above the 1:1" in findings[0].message


def test_lost_uplink_breaks_oversubscription_and_symmetry() -> None:
    fabric = build(_ib(127))
    gone = fabric.links_of("leaf-spine")[0]
    bad = dataclasses.replace(fabric, links=tuple(x for x in fabric.links if x is not gone))
    findings = check_fabric(bad, expected_oversubscription={"leaf": Fraction(1)})
    assert {"asymmetric", "oversubscription"} <= _codes(findings)
    assert any(f.code == "oversubscription" and gone.a_device in f.message for f in findings)


def test_cable_into_the_wrong_plane() -> None:
    intent = Intent.model_validate({
        "name": "neg", "fabric": {"transport": "infiniband", "generation": "ndr"},
        "cluster": {"nodes": 64, "node": {"nics": 4, "nic_ports": 2}},
        "topology": {"planes": 2, "scalable_unit": 32, "leaf": {"model": "qm9700"}}})
    fabric = build(intent)
    assert check_fabric(fabric) == []
    link = fabric.links_of("node-leaf")[0]
    other = next(s for s in fabric.switches
                 if s.role == "leaf" and s.plane != fabric.by_name[link.z_device].plane)
    links = tuple(dataclasses.replace(x, z_device=other.name) if x is link else x
                  for x in fabric.links)
    findings = check_fabric(dataclasses.replace(fabric, links=links))
    assert "plane-mismatch" in _codes(findings)


def test_cable_of_the_wrong_kind() -> None:
    fabric = build(_roce_256())
    link = fabric.links_of("leaf-spine")[0]
    links = tuple(dataclasses.replace(x, kind="spine-core") if x is link else x
                  for x in fabric.links)
    findings = check_fabric(dataclasses.replace(fabric, links=links))
    assert "link-kind" in _codes(findings)
    assert any(f.message.startswith(f"{link.id} (spine-core) ends at {link.z_device}")
               for f in findings)


def test_check_is_linear_in_links() -> None:
    # 64 SUs of DGX nodes: 49,152 cables over three tiers. The check is a few dict passes per
    # cable (about 0.2 s here); a per-switch scan of all links would take minutes.
    fabric = build(_ib(2048))
    assert len(fabric.links) == 3 * 16384
    start = time.perf_counter()
    assert check_fabric(fabric, expected_oversubscription={"leaf": Fraction(1),
                                                           "spine": Fraction(1)}) == []
    assert time.perf_counter() - start < 5
