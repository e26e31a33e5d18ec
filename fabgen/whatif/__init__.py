"""What-if failure analysis: what losing switches, cables or a plane does to a built fabric.

Every number is recounted from the Fabric's switches, hosts and cabling plan with the failed
elements removed; nothing is estimated. Definitions (the same in the table, JSON and report):

Bisection after failures
    Per plane, the capacity of each tier in links, then half of the narrowest tier, summed over
    the planes -- `build.bisection_gbps` applied to what is still alive:
      hosts       live host ports (cable up, leaf alive);
      leaf-spine  2 tiers: live leaf-spine links between live switches. 3 tiers: the sum over
                  spines of min(live downlinks, live uplinks) -- a leaf's uplink to spine s is
                  only usable as far as s can still carry it up, so each leaf's usable uplink
                  capacity is min(its live uplinks, what its spines carry up); summed over leaves
                  that is the max flow from the leaf tier through the spines to the cores;
      spine-core  3 tiers: live spine-core links between live switches.
    With nothing failed this equals `Fabric.bisection_gbps` (it can be lower in a 3-tier fabric
    whose last pod is too small to fill its spines' uplinks: then it is the true bound).

Oversubscription (per switch, worst reported)
    Leaf: live host ports / live uplinks. Spine of a 3-tier fabric: live downlinks / live
    uplinks. A switch that still has downlinks but no uplink is infinitely oversubscribed.

ECMP imbalance
    For every pair of live leaves of a plane, the number of live shortest valley-free paths
    (through a common spine; or leaf-spine-core-spine-leaf between pods, and within a pod that
    lost every common spine), counted over parallel links, divided by the same count in the
    intact fabric. Imbalance = max / min of that ratio over the pairs still connected (1.0: every
    pair lost the same share of its paths). Leaves with identical live uplinks form one class
    and one computation serves all its pairs; when more than ECMP_PAIR_LIMIT class pairs change
    they are sampled deterministically (every k-th) and the result says so. Connectivity is
    always exact.

GPU pairs
    A GPU is an endpoint with the NIC ports local to it (HostPort.gpu). Two GPUs on different
    nodes are connected when some live port of one and some live port of the other sit on the
    same plane and on the same leaf or on leaves with a valley-free path -- the paths ECMP over
    eBGP (one spine ASN) and OpenSM's up/down engines use. Traffic relayed through another GPU or
    NIC (NCCL's PXN over NVLink) is not counted. A GPU's rail is the rail of its first port.

OpenSM ftree
    InfiniBand only: whether OpenSM's fabric_validate_topology() would accept the remaining
    cabling of each plane (its own subnet) as a pure fat-tree: per rank, every switch has the
    same number of up-port groups (a group = the ports to one neighbour) and, above the leaves,
    of down-port groups, and every group of a rank has the same number of ports. OpenSM runs
    this check only when no root GUID file is configured: then a failed check makes it try the
    next engine of `routing_engine` (fabgen lists updn), else minhop. With a root GUID file
    (fabgen's opensm.conf sets one once infiniband.guids_file gives the real GUIDs) ftree skips
    the check and routes the lopsided tree anyway, unevenly --
    the verdict then says where ECMP-like balance is lost, not that routing stops.
"""

from __future__ import annotations

from collections.abc import Sequence

from fabgen.topology.model import Fabric
from fabgen.whatif import scenarios as _scenarios
from fabgen.whatif.evaluate import Limits, result
from fabgen.whatif.ftree import FTREE_FALLBACK
from fabgen.whatif.measure import Model
from fabgen.whatif.output import format_table, gate, single_failures_section, to_json
from fabgen.whatif.results import (
    Ftree,
    Result,
    Scenario,
    ScenarioKind,
    UplinkLoss,
    WhatifError,
    worst_first,
)

__all__ = [
    "ECMP_PAIR_LIMIT",
    "EXACT_LIMIT",
    "FTREE_FALLBACK",
    "GREEDY_CANDIDATES",
    "Ftree",
    "Result",
    "Scenario",
    "ScenarioKind",
    "UplinkLoss",
    "WhatifError",
    "evaluate",
    "format_table",
    "gate",
    "parse_specs",
    "report_section",
    "to_json",
    "worst_first",
]

# The search limits are read at each call (tests and tuning set them on this module).
# `role:N` is solved exactly while the combinations to try stay at most this many; past it a
# greedy worst-first search keeps `spine:4` on a 512-spine fabric to seconds.
EXACT_LIMIT = 5000
# Class pairs whose ECMP path counts are computed per scenario before sampling kicks in.
ECMP_PAIR_LIMIT = 4096
# Greedy steps after the first try only this many candidates (most shared neighbours first).
GREEDY_CANDIDATES = 64


def _limits() -> Limits:
    return Limits(EXACT_LIMIT, ECMP_PAIR_LIMIT, GREEDY_CANDIDATES)


_CACHE: list[tuple[Fabric, Model]] = []


def _model(fabric: Fabric) -> Model:
    """The model of the last fabric asked about (the CLI and report ask twice in a row)."""
    if _CACHE and _CACHE[0][0] is fabric:
        return _CACHE[0][1]
    model = Model(fabric)
    _CACHE[:] = [(fabric, model)]
    return model


def parse_specs(fabric: Fabric, specs: list[str]) -> list[Scenario]:
    """Failure specs to scenarios; every bad spec is reported at once in one WhatifError.

    A spec is a switch (`spine-03`), a link (`leaf-su1-r2:spine-03`: every cable between the
    two; a node may stand on one side), a cable id from the cabling plan (`c-su1-r0-001`), a role
    count (`spine:2`: the worst 2 spines), a plane (`plane:1`, 1-based), `none` (the intact
    fabric) or `all-single`. Elements joined by `+` fail together (`spine-01+leaf-su2-r0`).
    """
    graph = _model(fabric).g
    out: list[Scenario] = []
    errors: list[str] = []
    for spec in specs:
        try:
            out.extend(_scenarios.parse(graph, spec))
        except WhatifError as exc:
            errors.append(str(exc))
    if errors:
        raise WhatifError("\n".join(errors))
    return out


def evaluate(fabric: Fabric, scenarios: Sequence[Scenario]) -> list[Result]:
    """One Result per scenario, in the given order (see `worst_first`)."""
    model = _model(fabric)
    limits = _limits()
    return [result(model, s, limits) for s in scenarios]


def report_section(fabric: Fabric, routing_engine: str | None = None) -> str:
    """Markdown for the render report: the worst single switch, link and cable failure.
    routing_engine: the first engine OpenSM runs (InfiniBand), which decides what a tree that
    is no longer a pure fat tree does."""
    model = _model(fabric)
    limits = _limits()
    results = [result(model, s, limits) for s in _scenarios.all_single(model.g)]
    return single_failures_section(results, model.g.intact, routing_engine)
