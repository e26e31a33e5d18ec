"""Built fabrics against published switch, cable and transceiver counts (SuperPOD, fat-tree).

Sources:
- [RA] NVIDIA, "NVIDIA DGX SuperPOD: Next Generation Scalable Infrastructure for AI Leadership.
  Reference Architecture Featuring NVIDIA DGX H100 Systems", RA-11333-001 V11 (2023-09-22):
  Table 3 "Larger SuperPOD component counts" (PDF p. 9), Table 4 "Compute fabric component
  count" (p. 11), Appendix A Table 7 "Major components" and Table 8 "Estimate of cables
  required for a 4 SU, 127-node DGX SuperPOD" (pp. iii-iv).
  Web copy: docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-h100/
  latest/network-fabrics.html (Table 4) and .../dgx-superpod-architecture.html (Table 3).
- [FT] M. Al-Fares, A. Loukissas, A. Vahdat, "A Scalable, Commodity Data Center Network
  Architecture", SIGCOMM 2008 (CCR 38(4) pp. 63-74), section "Clos Networks/Fat-Trees": k pods
  of k/2 edge and k/2 aggregation k-port switches, (k/2)^2 cores, k^3/4 hosts.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from fabgen import catalog
from fabgen.intent.models import Intent
from fabgen.topology import sizing
from fabgen.topology.build import build
from fabgen.topology.checks import check_fabric
from fabgen.topology.model import Fabric


def _superpod(nodes: int, *, ufm: bool = True) -> Intent:
    """DGX H100 SuperPOD compute fabric: 8 single-port ConnectX-7 rails per node, NDR QM9700
    leaves and spines, 32-node scalable units, rail-optimized, full fat-tree ([RA] Table 1);
    with `ufm`, fabgen's default subnet-manager hosts (2 UFM appliances x 2 ports)."""
    return Intent.model_validate({
        "name": "superpod", "fabric": {"transport": "infiniband", "generation": "ndr"},
        "cluster": {"nodes": nodes,
                    "node": {"model": "dgx-h100", "gpus": 8, "nics": 8, "nic": "connectx-7"}},
        "topology": {"style": "rail-optimized", "scalable_unit": 32, "oversubscription": "1:1",
                     "leaf": {"model": "qm9700"}, "spine": {"model": "qm9700"}},
        **({} if ufm else {"infiniband": {"management": {"hosts": []}}})})


def _custom(k: int, nodes: int, tiers: object = "auto") -> Intent:
    """Single-NIC hosts on identical k-port 400G switches, no rails: the textbook Clos."""
    return Intent.model_validate({
        "name": "clos", "fabric": {"transport": "roce", "speed": "400G"},
        "cluster": {"nodes": nodes, "node": {"nics": 1, "gpus": 1}},
        "topology": {"style": "rail-unaware", "tiers": tiers,
                     "leaf": {"ports": k, "speed": "400G"}},
        "addressing": {"loopbacks": "10.200.0.0/16", "asn": {"leaf_start": 4200000000}}})


def _switches(fabric: Fabric) -> Counter[str]:
    return Counter(s.role for s in fabric.switches)


def _cables(fabric: Fabric) -> Counter[str]:
    return Counter(link.kind for link in fabric.links)


# --- [RA] Table 4 "Compute fabric component count" ------------------------------------------
# | SU | nodes | leaf | spine | cables "Compute + UFM" | cables "Spine-Leaf" |
# |  1 |  31   |   8  |   4   |   252                  |   256               |
# |  2 |  63   |  16  |   8   |   508                  |   512               |
# |  3 |  95   |  24  |  16   |   764                  |   768               |
# |  4 | 127   |  32  |  16   |  1020                  |  1024               |
# Footnote: "This is a 32 node per SU design, however a DGX system must be removed to
# accommodate for UFM connectivity." One node slot in the whole fabric goes to UFM, and the
# "Compute + UFM" column includes 4 UFM cables (Table 8: 4 x "UFM to leaf ports"): fabgen's
# default subnet-manager hosts, 2 x 2 ports (sm-leaf). The table does not say which slot;
# fabgen takes the last slot of unit 1, which every size of the fabric has, so that adding a
# unit never moves the UFM cables (topology.numbering).
TABLE_4 = [(1, 31, 8, 4, 252, 256), (2, 63, 16, 8, 508, 512), (3, 95, 24, 16, 764, 768),
           (4, 127, 32, 16, 1020, 1024)]


@pytest.mark.parametrize(("su", "nodes", "leaves", "spines", "compute_ufm", "spine_leaf"),
                         TABLE_4, ids=[f"{row[0]}SU" for row in TABLE_4])
def test_superpod_table4(su: int, nodes: int, leaves: int, spines: int, compute_ufm: int,
                         spine_leaf: int) -> None:
    fabric = build(_superpod(nodes))
    assert fabric.tiers == 2
    assert fabric.units == su
    assert _switches(fabric) == {"leaf": leaves, "spine": spines}
    assert _cables(fabric) == {"node-leaf": compute_ufm - 4, "leaf-spine": spine_leaf}
    assert _cables(fabric)["node-leaf"] == 8 * nodes
    assert len(fabric.sm_links) == 4
    # The UFM cables take the one node slot left: port 32 of four rail leaves of unit 1.
    assert {(x.z_device, x.z_port) for x in fabric.sm_links} == {
        (f"leaf-su1-r{r}", 32) for r in range(4)}
    # "balanced, full-fat tree" ([RA] Design Requirements): 1:1 at every leaf, symmetric.
    assert all(s.down_ports == s.up_ports == 32 for s in fabric.switches if s.role == "leaf")
    assert check_fabric(fabric) == []


def test_superpod_three_su_spines_divide_the_uplinks() -> None:
    # [RA] Table 4 has 16 spines at 3 SU although 12 would have the ports (768 / 64): 32 uplinks
    # per leaf do not divide over 12 spines, so each of 24 leaves gets 2 links to each of 16
    # spines and the spines are 48 of 64 ports full.
    fabric = build(_superpod(95))
    pairs = Counter((x.a_device, x.z_device) for x in fabric.links if x.kind == "leaf-spine")
    assert set(pairs.values()) == {2}
    assert len(pairs) == 24 * 16
    per_spine = Counter(x.z_device for x in fabric.links if x.kind == "leaf-spine")
    assert set(per_spine.values()) == {48}


# --- [RA] Table 3 "Larger SuperPOD component counts" (32 nodes per SU, no UFM slot) -----------
# | SU | nodes | leaf | spine | core | node-leaf | leaf-spine | spine-core |
# |  4 |  128  |  32  |  16   |  -   |   1024    |    1024    |     -      |
# |  8 |  256  |  64  |  32   |  -   |   2048    |    2048    |     -      |
# | 16 |  512  | 128  | 128   |  64  |   4096    |    4096    |   4096     |
# | 32 | 1024  | 256  | 256   | 128  |   8192    |    8192    |   8192     |
# | 64 | 2048  | 512  | 512   | 256  |  16384    |   16384    |  16384     |
TABLE_3 = [(4, 128, 32, 16, 0, 1024), (8, 256, 64, 32, 0, 2048), (16, 512, 128, 128, 64, 4096),
           (32, 1024, 256, 256, 128, 8192), (64, 2048, 512, 512, 256, 16384)]


@pytest.mark.parametrize(("su", "nodes", "leaves", "spines", "cores", "per_tier"), TABLE_3,
                         ids=[f"{row[0]}SU" for row in TABLE_3])
def test_superpod_table3(su: int, nodes: int, leaves: int, spines: int, cores: int,
                         per_tier: int) -> None:
    fabric = build(_superpod(nodes, ufm=False))  # full units: Table 3 counts no UFM slot
    expected = {"leaf": leaves, "spine": spines} | ({"core": cores} if cores else {})
    assert _switches(fabric) == expected
    cables = {"node-leaf": per_tier, "leaf-spine": per_tier}
    if cores:
        cables["spine-core"] = per_tier
    assert _cables(fabric) == cables
    assert fabric.tiers == (3 if cores else 2)
    assert check_fabric(fabric) == []


# --- [RA] Appendix A Table 8, 4 SU / 127 nodes: transceivers -----------------------------------
# 1536 "Switch OSFP Transceivers - Leaf and spine transceivers" and 508 "System OSFP
# Transceivers - Transceivers in the DGX H100 systems". One transceiver per cage with at least
# one cabled port: a QM9700 carries its 64 NDR ports in 32 twin-port OSFP cages, a DGX H100 its
# 8 ConnectX-7 ports in 4 twin-port OSFP cages ("a two-port transceiver", [RA]).

def test_superpod_transceivers_4su() -> None:
    fabric = build(_superpod(127))
    switches = {s.name: s for s in fabric.switches}
    models = catalog.switches()

    def cage(device: str, port: int) -> tuple[str, int]:
        s = switches[device]
        native = (port - 1) // s.breakout  # logical port -> native port (0-based)
        return device, native // models[s.model].ports_per_cage

    switch_cages = {cage(x.z_device, x.z_port) for x in fabric.links}
    switch_cages |= {cage(x.a_device, x.a_port) for x in fabric.links if x.kind != "node-leaf"}
    per_node = catalog.NODE_PORTS_PER_CAGE["dgx-h100"]
    node_cages = {(x.a_device, x.a_port // per_node) for x in fabric.links
                  if x.kind == "node-leaf"}
    assert len(switch_cages) == 1536
    assert len(node_cages) == 508 == 127 * 4
    # Table 8: 2040 "NDR Cables, 400 Gbps - DGX H100 systems to leaf, leaf to spine", and
    # 4 x "UFM to leaf ports".
    assert len(fabric.links) == 2040
    assert len(fabric.sm_links) == 4
    # Table 7: "48 fabric switches, NVIDIA Quantum QM9700".
    assert len(fabric.switches) == 48


# --- [FT] k-ary fat-tree ----------------------------------------------------------------------

@pytest.mark.parametrize("k", [4, 8])
def test_k_ary_fat_tree(k: int) -> None:
    fabric = build(_custom(k, k**3 // 4, tiers=3))
    half = k // 2
    roles = _switches(fabric)
    assert roles == {"leaf": k * half, "spine": k * half, "core": half**2}
    assert sum(roles.values()) == 5 * k**2 // 4
    assert len(fabric.links) == 3 * k**3 // 4
    assert len(fabric.hosts) == k**3 // 4

    # k pods: group leaves by the aggregation (spine) switches they reach.
    spines_of_leaf: dict[str, set[str]] = defaultdict(set)
    for x in fabric.links:
        if x.kind == "leaf-spine":
            spines_of_leaf[x.a_device].add(x.z_device)
    pods = Counter(frozenset(v) for v in spines_of_leaf.values())
    assert len(pods) == k
    assert all(len(spines) == half and n == half for spines, n in pods.items())
    # "Each k-port switch in the lower layer is directly connected to k/2 hosts."
    hosts_per_edge = Counter(x.z_device for x in fabric.links if x.kind == "node-leaf")
    assert set(hosts_per_edge.values()) == {half}
    # "Each core switch has one port connected to each of k pods."
    pod_of_spine = {s.name: s.group for s in fabric.switches if s.role == "spine"}
    per_core = Counter((x.z_device, pod_of_spine[x.a_device])
                       for x in fabric.links if x.kind == "spine-core")
    assert set(per_core.values()) == {1}
    assert len(per_core) == half**2 * k
    assert check_fabric(fabric) == []


# --- 2-tier folded Clos at 1:1, radix k = 64: k^2/2 endpoints, k leaves, k/2 spines ------------
# [RA] Table 3's 8-SU row is exactly this fabric (64 leaves x 32 up = 2048 = 32 spines x 64).

def test_two_tier_clos_k64_maximum() -> None:
    fabric = build(_custom(64, 2048))
    assert fabric.tiers == 2
    assert _switches(fabric) == {"leaf": 64, "spine": 32}
    assert _cables(fabric) == {"node-leaf": 2048, "leaf-spine": 2048}
    assert check_fabric(fabric) == []


def test_two_tier_clos_k64_one_more_endpoint_needs_three_tiers() -> None:
    with pytest.raises(sizing.SizingError):
        sizing.shape(_custom(64, 2049, tiers=2))
    assert sizing.shape(_custom(64, 2049)).tiers == 3
