"""Hypothesis strategies shared by the tests: valid, small-to-medium fabric intents."""

from __future__ import annotations

from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from fabgen.errors import Diagnostics
from fabgen.intent import semantic
from fabgen.intent.models import Intent
from fabgen.topology import sizing

# Compute ports (nodes x nics x nic_ports) per example: at most this many, so that validating,
# sizing and building one intent stays far below 0.1 s and a 150-example run takes seconds.
MAX_HOST_PORTS = 1200
RATIOS = ("1:1", "2:1", "3:1", "8:7", "3:2")

# (generation, switch spec, fabric speed or None): InfiniBand switches at a speed they offer,
# including NDR200 split ports (128 logical ports on a QM9700).
_IB_SWITCHES: tuple[tuple[str, dict[str, Any], str | None], ...] = (
    ("ndr", {"model": "qm9700"}, None),
    ("ndr", {"model": "qm9700", "breakout": "2x200G"}, "200G"),
    ("hdr", {"model": "qm8700"}, None),
)
# RoCE switches that give 400G ports: native, split 800G cages, or custom radixes.
_ROCE_SWITCHES: tuple[dict[str, Any], ...] = (
    {"model": "sn5600", "breakout": "2x400G"},
    {"model": "sn4700"},
    {"model": "7060x6-64pe", "breakout": "2x400G"},
)


_STORAGE: tuple[dict[str, Any], ...] = (
    {"transport": "infiniband", "generation": "ndr", "nics": 2, "speed": "400G",
     "leaf": {"model": "qm9700"}},
    {"nics": 1, "speed": "400G", "leaf": {"model": "sn4700"}, "oversubscription": "2:1"},
)
_MANAGEMENT: tuple[dict[str, Any], ...] = (
    {"nics": 2, "speed": "100G", "leaf": {"model": "sn4600c"}},
    {"nics": 1, "speed": "100G", "leaf": {"ports": 16, "speed": "100G"}, "oversubscription": "3:1"},
)


def _roce_switch() -> st.SearchStrategy[dict[str, Any]]:
    custom = st.integers(4, 32).map(lambda half: {"ports": 2 * half, "speed": "400G"})
    return st.one_of(st.sampled_from(_ROCE_SWITCHES), custom)


@st.composite
def intent_dicts(draw: st.DrawFn, max_host_ports: int = MAX_HOST_PORTS) -> dict[str, Any]:
    """A plain intent dict (what a YAML file would hold), not yet validated."""
    transport = draw(st.sampled_from(("roce", "infiniband")))
    fabric: dict[str, Any] = {"transport": transport}
    topology: dict[str, Any] = {}
    if transport == "infiniband":
        generation, switch, speed = draw(st.sampled_from(_IB_SWITCHES))
        fabric["generation"] = generation
        if speed is not None:
            fabric["speed"] = speed
        topology["leaf"] = switch
        # An explicit spine equal to the leaf must size like the default (spine = leaf).
        if draw(st.booleans()):
            topology["spine"] = switch
    else:
        fabric["speed"] = "400G"
        topology["leaf"] = draw(_roce_switch())
        if draw(st.booleans()):
            topology["spine"] = draw(_roce_switch())
            if draw(st.booleans()):
                topology["core"] = draw(_roce_switch())

    planes = draw(st.sampled_from((1, 2)))
    # Dual-plane needs each NIC's two ports split over the planes.
    nic_ports = 2 if planes == 2 else draw(st.sampled_from((1, 2)))
    nics = draw(st.integers(1, 8))
    max_nodes = max(1, min(300, max_host_ports // (nics * nic_ports)))
    nodes = draw(st.integers(1, max_nodes))

    ratio = draw(st.sampled_from(RATIOS))
    topology.update({
        "style": draw(st.sampled_from(("rail-optimized", "rail-unaware"))),
        "planes": planes,
        "oversubscription": draw(st.one_of(
            st.just(ratio),
            st.builds(lambda spine: {"leaf": ratio, "spine": spine}, st.sampled_from(RATIOS)))),
        "tiers": draw(st.sampled_from(("auto", 2, 3))),
        "full_units": True,
        "min_spines": draw(st.integers(1, 8)),
    })
    su = draw(st.one_of(st.none(), st.integers(1, 32)))
    if su is not None:
        topology["scalable_unit"] = su
    # Now and then a storage or management network: separate fabrics built beside the compute
    # one (DGX SuperPOD: storage on NDR InfiniBand, in-band management on Ethernet).
    if draw(st.integers(0, 5)) == 0:
        topology["storage"] = draw(st.sampled_from(_STORAGE))
    if draw(st.integers(0, 5)) == 0:
        topology["management"] = draw(st.sampled_from(_MANAGEMENT))
    return {
        "name": "prop",
        "fabric": fabric,
        "cluster": {"nodes": nodes,
                    "node": {"nics": nics, "nic_ports": nic_ports, "nic": "connectx-7"}},
        "topology": topology,
        # Pools and ASNs large enough for any fabric drawn here: the topology is under test,
        # not the pool-size errors (which have their own tests).
        "addressing": {"loopbacks": "10.200.0.0/16", "p2p": "10.254.0.0/16",
                       "hosts": "10.100.0.0/16", "asn": {"leaf_start": 4200000000}},
    }


@st.composite
def intents(draw: st.DrawFn, max_host_ports: int = MAX_HOST_PORTS) -> Intent:
    """A valid Intent that sizes without error and passes the semantic checks."""
    intent = Intent.model_validate(draw(intent_dicts(max_host_ports)))
    try:
        sizing.shape(intent)
    except sizing.SizingError:
        assume(False)
    diags = Diagnostics()
    semantic.check(intent, diags)
    assume(not diags.errors)
    return intent
