"""Partial scalable units: built in full by default, cabled for installed nodes on request."""

from __future__ import annotations

from collections import Counter

from fabgen.errors import Diagnostics
from fabgen.intent.models import Intent
from fabgen.intent.semantic import check
from fabgen.topology.build import build
from fabgen.topology.checks import check_fabric


def _intent(**topology: object) -> Intent:
    return Intent.model_validate({
        "name": "t", "fabric": {"transport": "roce", "speed": "400G"},
        "cluster": {"nodes": 40},
        "topology": {"leaf": {"model": "sn5600"}, "scalable_unit": 32, "min_spines": 4,
                     **topology},
    })


def _uplinks(fabric) -> Counter[str]:  # type: ignore[no-untyped-def]
    return Counter(link.a_device for link in fabric.links if link.kind == "leaf-spine")


def test_full_units_by_default() -> None:
    fabric = build(_intent())
    up = _uplinks(fabric)
    assert up["leaf-su2-r0"] == up["leaf-su1-r0"] == 32
    assert check_fabric(fabric) == []


def test_partial_unit_cabled_for_its_nodes_only() -> None:
    fabric = build(_intent(full_units=False))
    up = _uplinks(fabric)
    # 8 installed nodes in SU 2 at 1:1 need 8 uplinks: 2 to each of the 4 spines.
    assert up["leaf-su1-r0"] == 32 and up["leaf-su2-r0"] == 8
    per_spine = Counter(link.z_device for link in fabric.links
                        if link.a_device == "leaf-su2-r3" and link.kind == "leaf-spine")
    assert sorted(per_spine.values()) == [2, 2, 2, 2]
    # the trimmed leaf keeps the ports a full leaf uses, so growth only adds cables
    ports = sorted(link.a_port for link in fabric.links if link.a_device == "leaf-su2-r0"
                   and link.kind == "leaf-spine")
    assert ports == [33, 34, 41, 42, 49, 50, 57, 58]
    assert check_fabric(fabric) == []


def test_classic_partial_unit_skips_empty_leaves() -> None:
    fabric = build(_intent(full_units=False, style="rail-unaware"))
    leaves = [s.name for s in fabric.switches if s.role == "leaf" and s.group == 1]
    # 8 nodes x 8 ports fill one leaf (64 host ports at 1:1 on 128 x 400G); the unit's other
    # three leaves are not built yet
    assert leaves == ["leaf-su2-01"]
    assert [s.name for s in fabric.switches if s.role == "leaf" and s.group == 0] == [
        "leaf-su1-01", "leaf-su1-02", "leaf-su1-03", "leaf-su1-04"]
    assert check_fabric(fabric) == []


def test_infiniband_refuses_partial_cabling() -> None:
    intent = Intent.model_validate({
        "name": "t", "fabric": {"transport": "infiniband", "generation": "ndr"},
        "cluster": {"nodes": 40},
        "topology": {"leaf": {"model": "qm9700"}, "scalable_unit": 32, "full_units": False},
    })
    diags = Diagnostics()
    check(intent, diags)
    assert [(d.loc, d.severity) for d in diags.items] == [(("topology", "full_units"), "error")]


def test_min_spines_that_cannot_be_met_is_a_warning() -> None:
    intent = Intent.model_validate({
        "name": "t", "fabric": {"transport": "roce", "speed": "400G"},
        "cluster": {"nodes": 16, "node": {"nics": 1}},
        "topology": {"style": "rail-unaware", "leaf": {"ports": 8, "speed": "400G"},
                     "min_spines": 8},
        "addressing": {"asn": {"leaf_start": 4200000000}},
        "platforms": {"leaf": "eos"},  # a custom switch has no SONiC HwSKU
    })
    diags = Diagnostics()
    check(intent, diags)
    # (qos.check also warns that the intent gives no cable lengths)
    assert [d.message for d in diags.warnings if d.loc[:1] != ("qos",)] == [
        "min_spines 8 cannot be met: each leaf has 4 uplinks, so at most 4 spines per plane "
        "get equal links",
        "spines use 4 of their 8 ports: the fabric can grow to twice its size on these spines, "
        "or fewer/smaller spines would do"]
