"""One scenario to one Result: the worst-case picks for `role:N`, the measures, names attached."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass

from fabgen.topology.model import Role
from fabgen.whatif.measure import Measure, Model, severity
from fabgen.whatif.results import Result, Scenario, WhatifError

__all__ = ["Limits", "result"]


@dataclass(frozen=True, slots=True)
class Limits:
    """How far searches go before they approximate (the knobs live in fabgen.whatif)."""

    exact: int  # `role:N` combinations tried exhaustively, at most
    ecmp_pairs: int  # changed leaf-class pairs counted exactly, at most
    greedy_candidates: int  # switches a greedy step after the first tries, at most


def result(model: Model, scenario: Scenario, limits: Limits) -> Result:
    dead = set(scenario.switches)
    method = ""
    if scenario.picks:
        chosen, method = _pick(model, dead, scenario.picks, set(scenario.cables), limits)
        dead |= chosen
    m = model.measure(frozenset(dead), frozenset(scenario.cables), full=True,
                      ecmp_pair_limit=limits.ecmp_pairs)
    return _result(model, scenario, dead, method, m)


def _result(model: Model, scenario: Scenario, dead: set[str], method: str,
            m: Measure) -> Result:
    g = model.g
    pct = 100.0 * m.bisection / g.intact if g.intact else 0.0
    return Result(
        scenario=scenario,
        failed_switches=tuple(sorted(dead, key=g.rank.__getitem__)),
        failed_cables=m.failed_cables,
        method=method,
        bisection_gbps=m.bisection,
        intact_bisection_gbps=g.intact,
        bisection_pct=pct,
        narrowest_tier=m.narrowest,
        uplink_loss=tuple(m.uplink_loss),
        worst_oversubscription=m.worst_os,
        worst_oversubscribed=m.worst_os_name,
        ecmp_imbalance=m.imbalance,
        ecmp_min_pct=100.0 * m.min_ratio,
        ecmp_worst_pair=m.worst_pair,
        ecmp_sampled=m.sampled,
        cut_leaf_pairs=m.cut_pairs,
        cut_leaf_examples=tuple(m.cut_examples),
        cut_off_gpus=tuple(model.gpus.name(gpu) for gpu in sorted(m.cut_off)),
        lost_gpu_pairs=m.lost_pairs,
        lost_pairs_same_rail=m.lost_same,
        lost_pairs_cross_rail=m.lost_pairs - m.lost_same,
        min_gpu_bandwidth_pct=m.min_gpu_bw,
        affected_rails=tuple(sorted(m.rails)),
        affected_units=tuple(sorted(m.units)),
        affected_nodes=len(m.nodes),
        affected_node_ranges=tuple(_ranges(model, m.nodes)),
        ftree=m.ftree,
    )


def _ranges(model: Model, nodes: set[int]) -> list[str]:
    hosts = model.g.fabric.hosts
    out: list[str] = []
    for _, run in itertools.groupby(enumerate(sorted(nodes)), lambda t: t[1] - t[0]):
        ids = [i for _, i in run]
        first, last = hosts[ids[0]].name, hosts[ids[-1]].name
        out.append(first if len(ids) == 1 else f"{first}..{last}")
    return out


def _pick(model: Model, fixed: set[str], picks: tuple[tuple[Role, int], ...], cables: set[str],
          limits: Limits) -> tuple[set[str], str]:
    """The switches whose failure (with `fixed` and `cables`) hurts most, and how they were
    found: every combination up to `limits.exact`, else greedily (a lower bound)."""
    by_role = model.g.by_role
    pools = [[n for n in by_role[role] if n not in fixed] for role, _ in picks]
    combos = 1
    for pool, (_, k) in zip(pools, picks, strict=True):
        if k > len(pool):
            raise WhatifError(f"cannot fail {k} more {picks[0][0]} switches: only "
                              f"{len(pool)} are left")
        combos *= math.comb(len(pool), k)
    frozen_cables = frozenset(cables)

    def score(extra: Iterable[str]) -> tuple[float, ...]:
        m = model.measure(frozenset(fixed | set(extra)), frozen_cables, full=False,
                          ecmp_pair_limit=limits.ecmp_pairs)
        return severity(m)

    if combos <= limits.exact:
        best: tuple[str, ...] = ()
        best_score: tuple[float, ...] | None = None
        per_role = [itertools.combinations(pool, k) for pool, (_, k) in zip(pools, picks,
                                                                             strict=True)]
        for combo in itertools.product(*per_role):
            chosen = tuple(itertools.chain.from_iterable(combo))
            s = score(chosen)
            if best_score is None or s > best_score:
                best, best_score = chosen, s
        return set(best), f"exact: worst of {combos:,} combinations"
    chosen_list: list[str] = []
    for pool, (_, k) in zip(pools, picks, strict=True):
        for step in range(k):
            left = [n for n in pool if n not in chosen_list]
            if step and len(left) > limits.greedy_candidates:
                left.sort(key=lambda n: -_shared(model, n, chosen_list))
                left = left[:limits.greedy_candidates]
            best_n, best_s = left[0], score([*chosen_list, left[0]])
            for n in left[1:]:
                s = score([*chosen_list, n])
                if s > best_s or (s == best_s and _shared(model, n, chosen_list)
                                  > _shared(model, best_n, chosen_list)):
                    best_n, best_s = n, s
            chosen_list.append(best_n)
    return set(chosen_list), (
        f"greedy worst-first ({combos:,} combinations exceed {limits.exact:,}): each step "
        "adds the switch that hurts most, ties to the one sharing most neighbours with "
        "those already picked; a lower bound on the true worst case")


def _shared(model: Model, name: str, chosen: list[str]) -> int:
    up, down = model.g.up, model.g.down
    mine = set(up[name]) | set(down[name])
    return sum(len(mine & (set(up[c]) | set(down[c]))) for c in chosen)
