"""The per-render fabric index: one build per render, and answers equal to a scan of the
Fabric (ports, peers, names, classes, host layout); /31 ends as LinkAddress agree with
ipaddress."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from ipaddress import IPv4Interface
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabgen import render as render_module
from fabgen.catalog.ports import switch_port_name
from fabgen.intent import load
from fabgen.render import render
from fabgen.topology import index as index_module
from fabgen.topology.build import build
from fabgen.topology.index import FabricIndex
from fabgen.topology.model import Fabric, LinkAddress
from tests.conftest import INVENTORIES


def _count_builds(monkeypatch: pytest.MonkeyPatch, log: Path) -> Callable[[], list[str]]:
    """Count FabricIndex builds in this process and in every --jobs worker: each build appends
    its fabric's role to `log` (forked workers inherit the patch; a line append is atomic), so
    a worker that rebuilt an index would show although its memory dies with it."""
    real = FabricIndex.__init__

    def counting(self: FabricIndex, fabric: Fabric) -> None:
        with log.open("a", encoding="utf-8") as out:
            out.write(f"{fabric.name} {fabric.role}\n")
        real(self, fabric)

    monkeypatch.setattr(index_module.FabricIndex, "__init__", counting)
    return lambda: log.read_text(encoding="utf-8").splitlines() if log.exists() else []


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("intent", INVENTORIES, ids=lambda p: p.stem)
def test_a_full_render_builds_one_index(intent: Path, jobs: int, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    builds = _count_builds(monkeypatch, tmp_path / "builds")
    loaded = load(intent)
    files = render(loaded, jobs=jobs)
    assert len(files) > 10  # every target ran, not an empty render
    # One index of the compute fabric, which every target read; the storage and management
    # networks (cabled apart, in the cabling plan) get one each, from it, when they exist.
    fabric = build(loaded.intent)
    expected = [f"{fabric.name} compute", *(f"{e.name} {e.role}" for e in fabric.extras)]
    built = builds()
    assert built[0] == f"{fabric.name} compute"  # the parent's, before any worker starts
    assert sorted(built) == sorted(expected)


def test_the_build_count_sees_a_worker_that_rebuilds(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The count can fail: an index built inside a --jobs worker is counted by the parent."""
    builds = _count_builds(monkeypatch, tmp_path / "builds")
    fabric = build(load(INVENTORIES[0]).intent)
    with multiprocessing.get_context("fork").Pool(1) as pool:
        pool.apply(FabricIndex, (fabric,))
    assert builds() == [f"{fabric.name} compute"]


def test_every_target_of_a_mixed_fabric_shares_the_one_index(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The RoCE inventory with EOS and NVUE switches runs every switch target, the host
    targets, the ANTA catalog and the alerts (which share the expected switch state)."""
    builds = _count_builds(monkeypatch, tmp_path / "builds")
    intent = next(p for p in INVENTORIES if p.stem == "roce-eos-nvue-2to1")
    loaded = load(intent)
    names = render_module.select(None)
    ctx = render_module.context(loaded.intent, intent.parent)
    items = render_module.plan_work(ctx, names, jobs=1)
    ran = {item.target for item in items}
    assert {"eos", "nvue", "nic", "nccl", "preflight", "anta", "alerts", "report"} <= ran
    for item in items:
        render_module.render_item(ctx, item)
    assert [line.split()[-1] for line in builds()] == ["compute"]


def _scan_ports(fabric: Fabric, name: str) -> list[tuple[int, str, str, str | None]]:
    """(port, name, peer, peer address) of a switch, by scanning every link (the old way),
    subnet-manager host cables included."""
    switch = fabric.by_name[name]
    out = []
    for link in (*fabric.links, *fabric.sm_links):
        for here, port, peer, peer_addr in (
                (link.a_device, link.a_port, link.z_device, link.z_address),
                (link.z_device, link.z_port, link.a_device, link.a_address)):
            if here == name:
                out.append((port, switch_port_name(switch, port), peer,
                            peer_addr.ip if peer_addr else None))
    return sorted(out)


@pytest.mark.parametrize("intent", INVENTORIES, ids=lambda p: p.stem)
def test_ports_equal_a_scan_of_the_links(intent: Path) -> None:
    fabric = build(load(intent).intent)
    index = FabricIndex(fabric)
    for switch in fabric.switches[:: max(1, len(fabric.switches) // 12)]:
        ports = index.ports(switch)
        assert [(p.port, p.name, p.peer, p.peer_address.ip if p.peer_address else None)
                for p in ports] == _scan_ports(fabric, switch.name)
        for p in ports:
            assert p.uplink == (p.link.a_device == switch.name and p.kind != "node-leaf")
            if p.peer_switch is not None:
                far = p.link.z_port if p.link.a_device == switch.name else p.link.a_port
                assert p.peer_port == switch_port_name(p.peer_switch, far)
            else:
                assert p.peer_host_port is not None
                assert p.peer_port == p.peer_host_port.netdev
        assert index.port_names(switch) == tuple(
            switch_port_name(switch, n) for n in range(1, switch.radix + 1))


def test_port_classes_follow_cables_and_the_port_plan_for_spares() -> None:
    intent = next(p for p in INVENTORIES if p.stem == "roce-eos-nvue-2to1")
    fabric = build(load(intent).intent)
    index = FabricIndex(fabric)
    leaf = fabric.switches_of("leaf")[0]
    classes = index.port_classes(leaf)
    assert len(classes) == leaf.radix
    cabled = {p.port: p.kind for p in index.ports(leaf)}
    for number, kind in enumerate(classes, start=1):
        if number in cabled:
            assert kind == cabled[number]
        else:  # a spare: host-facing within the down ports, else an uplink
            assert kind == ("node-leaf" if number <= leaf.down_ports else "leaf-spine")
    spine = fabric.switches_of("spine")[0]  # top tier of 2: every spare faces the leaves
    assert set(index.port_classes(spine)) == {"leaf-spine"}


def test_host_layout_is_checked_once_and_refuses_a_mixed_fabric() -> None:
    import dataclasses

    fabric = build(load(INVENTORIES[0]).intent)
    index = FabricIndex(fabric)
    layout = index.host_layout
    assert [hp.dev for hp in layout] == list(range(len(fabric.hosts[0].ports)))
    assert all(hp.address is None for hp in layout)
    odd = fabric.hosts[-1]
    swapped = dataclasses.replace(odd, ports=tuple(
        dataclasses.replace(hp, netdev="other0") if hp.dev == 0 else hp for hp in odd.ports))
    mixed = dataclasses.replace(fabric, hosts=(*fabric.hosts[:-1], swapped))
    with pytest.raises(ValueError, match=f"host {odd.name} has a different NIC layout"):
        _ = FabricIndex(mixed).host_layout


@given(st.integers(min_value=0, max_value=2**32 - 1), st.integers(min_value=0, max_value=32))
def test_link_address_prints_as_ipaddress_does(value: int, prefixlen: int) -> None:
    ours = LinkAddress(value, prefixlen)
    theirs = IPv4Interface((value, prefixlen))
    assert ours.ip == str(theirs.ip)
    assert ours.with_prefixlen == str(ours) == theirs.with_prefixlen
    assert ours.network == str(theirs.network)
    assert ours.packed == theirs.packed
    assert ours.interface == theirs
