"""Where the dedicated subnet-manager (UFM) hosts go: reserved node slots, their cables in the
plan and the sheet, and the invariants that hold for them as for the nodes."""

from __future__ import annotations

import csv
import dataclasses
import io
from pathlib import Path
from typing import Any

import pytest

from fabgen import cabling_check
from fabgen.intent.models import Intent
from fabgen.targets import cabling
from fabgen.topology.build import build, plan_warnings
from fabgen.topology.checks import check_fabric
from fabgen.topology.model import Fabric
from fabgen.topology.sizing import shape


def intent(nodes: int = 127, **over: Any) -> Intent:
    data: dict[str, Any] = {
        "name": "t", "fabric": {"transport": "infiniband", "generation": "ndr"},
        "cluster": {"nodes": nodes},
        "topology": {"leaf": {"model": "qm9700"}, "scalable_unit": 32},
    }
    for key, value in over.items():
        data[key] = {**data.get(key, {}), **value}
    return Intent.model_validate(data)


def sm_cables(fabric: Fabric) -> list[tuple[str, int, str, int, int]]:
    return [(x.a_device, x.a_port, x.z_device, x.z_port, x.plane) for x in fabric.sm_links]


def test_nvidia_layout_on_the_last_slot_of_the_first_unit() -> None:
    fabric = build(intent())
    assert fabric.units == 4 and len(fabric.hosts) == 127
    assert [h.name for h in fabric.sm_hosts] == ["ufm01", "ufm02"]
    # slot 32 of SU 1 (the unit every size of the fabric has, so growth never moves them):
    # one port on each of four rail leaves; the HA pair on different leaves
    assert sm_cables(fabric) == [("ufm01", 0, "leaf-su1-r0", 32, 0),
                                 ("ufm01", 1, "leaf-su1-r1", 32, 0),
                                 ("ufm02", 0, "leaf-su1-r2", 32, 0),
                                 ("ufm02", 1, "leaf-su1-r3", 32, 0)]
    assert {h.su for h in fabric.sm_hosts} == {0}
    assert all(hp.gpu == -1 for h in fabric.sm_hosts for hp in h.ports)
    # a cable id names the leaf port it plugs into
    assert [x.id for x in fabric.sm_links] == [f"c-su1-r{r}-32" for r in range(4)]
    assert check_fabric(fabric) == []
    assert not any("subnet-manager" in w.message for w in plan_warnings(intent(), shape(intent())))


def test_a_partial_unit_leaves_the_slots_in_unit_one() -> None:
    """The SM hosts take unit 1's last slot, the nodes fill the units from their start, the
    last unit partly: adding nodes later never moves the SM hosts' cables."""
    fabric = build(intent(100))
    assert fabric.units == 4
    assert {(z, p) for _, _, z, p, _ in sm_cables(fabric)} == {
        (f"leaf-su1-r{r}", 32) for r in range(4)}
    # unit 1 holds 31 nodes beside the slot, units 2 and 3 32 each: 100 - 95 in unit 4
    assert max(x.z_port for x in fabric.links if x.kind == "node-leaf"
               and x.z_device == "leaf-su1-r0") == 31
    assert max(x.z_port for x in fabric.links if x.kind == "node-leaf"
               and x.z_device == "leaf-su4-r0") == 5
    assert sm_cables(build(intent(127))) == sm_cables(fabric)
    assert check_fabric(fabric) == []


def test_more_ports_take_more_slots() -> None:
    fabric = build(intent(120, infiniband={"management": {
        "ports": 6, "hosts": [{"name": f"sm{i}"} for i in range(1, 4)]}}))
    # 3 hosts x 6 ports = 18 leaf ports = 3 slots of 8 rail ports (the last 6 stay free)
    assert len(fabric.sm_links) == 18
    assert {p for _, _, _, p, _ in sm_cables(fabric)} == {30, 31, 32}
    per_host = {h.name: {x.z_device for x in fabric.sm_links if x.a_device == h.name}
                for h in fabric.sm_hosts}
    assert all(len(leaves) == 6 for leaves in per_host.values()), "one leaf per port"
    assert check_fabric(fabric) == []


def test_classic_fat_tree_warns_when_one_leaf_carries_every_sm() -> None:
    classic = intent(40, topology={"style": "rail-unaware"})
    fabric = build(classic)
    leaves = {z for _, _, z, _, _ in sm_cables(fabric)}
    assert len(leaves) == 1
    # The warning places the hosts as build does (without building the fabric).
    assert [(w.message, w.loc) for w in plan_warnings(classic, shape(classic))
            if "every subnet-manager host" in w.message] == [
        (f"every subnet-manager host hangs from {next(iter(leaves))} only: one leaf failure "
         "leaves the subnet without an SM", ("infiniband", "management"))]
    assert check_fabric(fabric) == []


def test_dual_plane_puts_a_port_of_each_host_on_each_plane() -> None:
    fabric = build(intent(60, cluster={"node": {"nics": 4, "nic_ports": 2}},
                          topology={"planes": 2}))
    for host in fabric.sm_hosts:
        assert sorted((hp.dev, hp.plane) for hp in host.ports) == [(0, 0), (1, 1)]
    for _, dev, leaf, _, plane in sm_cables(fabric):
        assert fabric.by_name[leaf].plane == plane == dev
    assert check_fabric(fabric) == []


def test_roce_fabrics_have_no_sm_hosts() -> None:
    roce = Intent.model_validate({
        "name": "r", "fabric": {"transport": "roce", "speed": "400G"},
        "cluster": {"nodes": 32}, "topology": {"leaf": {"model": "sn5600"}}})
    fabric = build(roce)
    assert fabric.sm_hosts == () and fabric.sm_links == ()
    assert all(link.kind != "sm-leaf" for link in fabric.links)


def test_storage_network_has_no_sm_hosts() -> None:
    fabric = build(intent(topology={"storage": {
        "transport": "infiniband", "generation": "ndr", "nics": 2, "speed": "200G",
        "leaf": {"model": "qm9700", "breakout": "2x200G"}}}))
    (storage,) = fabric.extras
    assert storage.sm_hosts == () and len(fabric.sm_hosts) == 2


# --------------------------------------------------------------------------- checks


def test_checks_see_the_sm_cables() -> None:
    fabric = build(intent())
    node_port = next(x for x in fabric.links if x.kind == "node-leaf"
                     and x.z_device == "leaf-su4-r0")
    moved = dataclasses.replace(fabric.sm_links[0], z_port=node_port.z_port)
    clash = dataclasses.replace(fabric, sm_links=(moved, *fabric.sm_links[1:]))
    codes = {f.code for f in check_fabric(clash)}
    assert "port-reused" in codes
    gone = dataclasses.replace(fabric, sm_links=fabric.sm_links[1:])
    findings = check_fabric(gone)
    assert [f.code for f in findings] == ["nic-port-uncabled"]
    assert "ufm01 port 0" in findings[0].message


def _sheet(fabric: Fabric, drop: str | None = None) -> str:
    rows = [r for r in cabling.cable_rows(fabric) if r["id"] != drop]
    return cabling.render_csv(fabric, rows)


def test_check_cabling_reads_the_sm_rows(tmp_path: Path) -> None:
    fabric = build(intent())
    sheet = tmp_path / "cabling.csv"
    sheet.write_text(_sheet(fabric))
    rows = list(csv.DictReader(io.StringIO(sheet.read_text())))
    assert [r["kind"] for r in rows[-4:]] == ["sm-leaf"] * 4
    assert rows[-4]["a_port"] == "mlx5_0" and rows[-4]["a_netdev"] == "ib0"
    assert cabling_check.check_file(fabric, sheet) == []
    sheet.write_text(_sheet(fabric, drop=fabric.sm_links[2].id))
    findings = cabling_check.check_file(fabric, sheet)
    assert {f.code for f in findings} == {"nic-port-uncabled", "missing"}
    assert any("ufm02" in f.message and f.code == "missing" for f in findings)


def with_kind(loaded: Any, kind: str) -> Any:
    """A loaded intent whose compute SM hosts run `kind` (ufm or plain opensm)."""
    data = loaded.intent.model_dump(mode="json")
    data["infiniband"]["management"]["kind"] = kind
    return dataclasses.replace(loaded, intent=Intent.model_validate(data))


@pytest.mark.parametrize("devices", ["ufm01", "leaf-su4-*"])
def test_device_filter_knows_the_sm_hosts(devices: str) -> None:
    from fabgen.intent.loader import load
    from fabgen.render import render

    path = Path(__file__).resolve().parent.parent / "inventories" / "ib-ndr-1024.yaml"
    files = render(load(path), only=["opensm"], devices=devices)
    confs = sorted(p for p in files if p.endswith("opensm.conf"))
    # A UFM pair's one configuration names no node: it serves both, like a fabric-wide file.
    assert confs == ["infiniband/storage/ufm/opensm.conf", "infiniband/ufm/opensm.conf"]
    plain = with_kind(load(path), "opensm")
    confs = sorted(p for p in render(plain, only=["opensm"], devices=devices)
                   if p.endswith("opensm.conf") and "/storage/" not in p)
    assert confs == (["infiniband/ufm01/opensm.conf"] if devices == "ufm01" else [])
