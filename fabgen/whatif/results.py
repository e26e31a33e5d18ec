"""What-if's data: a failure Scenario in, a Result out, and the order of severity between them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from fabgen.topology.model import Role

__all__ = ["Ftree", "Result", "Scenario", "ScenarioKind", "UplinkLoss", "WhatifError",
           "worst_first"]

ScenarioKind = Literal["none", "switch", "link", "cable", "plane", "role", "combined"]


class WhatifError(ValueError):
    """A failure spec that does not name anything in the fabric; the message says what would."""


@dataclass(frozen=True, slots=True)
class Scenario:
    """One failure case: switches and cables that fail together, plus worst-case role picks."""

    label: str
    kind: ScenarioKind
    switches: tuple[str, ...] = ()
    cables: tuple[str, ...] = ()
    picks: tuple[tuple[Role, int], ...] = ()  # (role, n): the worst n switches of that role
    detail: str = ""


@dataclass(frozen=True, slots=True)
class UplinkLoss:
    """A live switch that lost uplinks: links before and after, and its oversubscription."""

    switch: str
    role: Role
    intact_links: int
    live_links: int
    lost_gbps: int
    oversubscription: float  # math.inf: downlinks left but no uplink


@dataclass(frozen=True, slots=True)
class Ftree:
    """Is the remaining cabling a pure fat-tree by OpenSM's fabric_validate_topology() rule."""

    ok: bool
    reason: str | None = None  # the first rule broken, with OpenSM's error code
    fallback: str | None = None  # what OpenSM does then, with and without root_guid_file


@dataclass(frozen=True, slots=True)
class Result:
    """Everything one scenario does to the fabric (definitions: fabgen.whatif's docstring)."""

    scenario: Scenario
    failed_switches: tuple[str, ...]
    failed_cables: int  # cables down, including every cable of a failed switch
    method: str  # how `role:N` picks were chosen; "" when there were none
    bisection_gbps: float
    intact_bisection_gbps: float
    bisection_pct: float
    narrowest_tier: str  # "hosts" | "leaf-spine" | "spine-core", in the most reduced plane
    uplink_loss: tuple[UplinkLoss, ...]
    worst_oversubscription: float
    worst_oversubscribed: str | None
    ecmp_imbalance: float
    ecmp_min_pct: float  # the lowest live/intact path ratio of a connected leaf pair
    ecmp_worst_pair: tuple[str, str] | None
    ecmp_sampled: bool
    cut_leaf_pairs: int  # live leaf pairs of a plane with no path left
    cut_leaf_examples: tuple[tuple[str, str], ...]
    cut_off_gpus: tuple[str, ...]  # "node/gpuN" with no live port at all
    lost_gpu_pairs: int  # GPU pairs on different nodes with no path left
    lost_pairs_same_rail: int
    lost_pairs_cross_rail: int
    min_gpu_bandwidth_pct: float  # the worst GPU's live port bandwidth, % of intact
    affected_rails: tuple[int, ...]
    affected_units: tuple[int, ...]  # 1-based, as in the switch names (su1, su2, ...)
    affected_nodes: int
    affected_node_ranges: tuple[str, ...]
    ftree: Ftree | None  # None on RoCE

    @property
    def same_rail_pair_lost(self) -> bool:
        return self.lost_pairs_same_rail > 0

    @property
    def cross_rail_pair_lost(self) -> bool:
        return self.lost_pairs_cross_rail > 0


def _severity(r: Result) -> tuple[float, ...]:
    """Larger is worse: lost GPU pairs, then bisection, oversubscription, ECMP, ftree."""
    ftree_broken = 1.0 if r.ftree is not None and not r.ftree.ok else 0.0
    return (float(r.lost_gpu_pairs), float(r.cut_leaf_pairs), -r.bisection_gbps,
            r.worst_oversubscription, r.ecmp_imbalance, ftree_broken)


def worst_first(results: Iterable[Result]) -> list[Result]:
    """Results ordered worst scenario first; ties keep their given order."""
    return sorted(results, key=_severity, reverse=True)
