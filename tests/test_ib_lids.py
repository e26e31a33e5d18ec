"""One InfiniBand subnet (one plane) must fit the unicast LID space, 0x0001-0xBFFF (IBA spec
vol. 1 4.1.3; OpenSM ib_types.h IB_LID_UCAST_END_HO), at the LMC 0 fabgen's opensm.conf sets:
every CA port and every switch takes one LID."""

from __future__ import annotations

from fabgen.errors import Diagnostics
from fabgen.intent import semantic
from fabgen.intent.models import Intent
from fabgen.topology import sizing
from fabgen.topology.build import build


def _intent(nodes: int, planes: int = 1) -> Intent:
    return Intent.model_validate({
        "name": "t",
        "fabric": {"transport": "infiniband", "generation": "xdr"},
        "cluster": {"nodes": nodes, "node": {"gpus": 8, "nics": 8, "nic": "connectx-8",
                                             "nic_ports": planes}},
        "topology": {"leaf": {"model": "q3400"}, "planes": planes},
    })


def _lid_errors(intent: Intent) -> list[str]:
    diags = Diagnostics()
    semantic.check(intent, diags)
    return [d.message for d in diags.errors if "unicast LIDs" in d.message]


def _lids(intent: Intent) -> int:
    """LIDs of one plane, counted from the plan here independently of the check: CA ports
    of the nodes and management hosts on the plane, and every switch of the plane."""
    s = sizing.shape(intent)
    mgmt = intent.infiniband.management
    hosts = s.nodes * s.ports_per_node + len(mgmt.hosts) * -(-mgmt.ports // s.planes)
    switches = s.units * s.leaves_per_unit + s.pods * s.spines_per_pod + (
        s.core_groups * s.cores_per_group if s.tiers == 3 else 0)
    return hosts + switches


def _built_lids(intent: Intent) -> int:
    """The same count from the built fabric's plane 0: its switches and CA ports."""
    fabric = build(intent)
    switches = sum(1 for sw in fabric.switches if sw.plane == 0)
    ports = sum(1 for host in (*fabric.hosts, *fabric.sm_hosts) for p in host.ports
                if p.plane == 0)
    return switches + ports


def test_the_largest_subnet_that_fits_passes_and_one_more_node_is_refused() -> None:
    nodes = 5_000
    while _lids(_intent(nodes + 1)) <= 0xBFFF:
        nodes += 1
    assert _lids(_intent(nodes)) <= 49_151 < _lids(_intent(nodes + 1))
    assert _built_lids(_intent(nodes)) == _lids(_intent(nodes))  # the count is the fabric's
    assert _lid_errors(_intent(nodes)) == []
    (message,) = _lid_errors(_intent(nodes + 1))
    assert f"need {_lids(_intent(nodes + 1)):,} LIDs" in message
    assert "49,151 unicast LIDs" in message


def test_planes_are_subnets_of_their_own() -> None:
    # Two planes of the same nodes: each NIC's two ports on different subnets, so each plane
    # counts one port per NIC, as one plane does.
    assert _lid_errors(_intent(5_000, planes=2)) == []
    assert _lid_errors(_intent(6_500, planes=2))
    assert "per plane" in _lid_errors(_intent(6_500, planes=2))[0]
