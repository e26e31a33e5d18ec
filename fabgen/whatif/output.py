"""What people read: the terminal table, the JSON document, the gate's messages, the report's
single-failure section. Pure formatting of Results; nothing here measures."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from fabgen.whatif.ftree import FTREE_FALLBACK
from fabgen.whatif.results import Result, WhatifError, worst_first

__all__ = ["format_table", "gate", "single_failures_section", "to_json"]


def gate(results: Sequence[Result], min_bisection: float | None,
         max_oversubscription: float | None) -> list[str]:
    """Violations of the thresholds, worst scenario first; the CLI exits 1 when any.

    `min_bisection` is a percentage of the intact fabric's bisection (75 = 75%);
    `max_oversubscription` a down:up ratio (2 = 2:1).
    """
    if min_bisection is not None and not 0 <= min_bisection <= 100:
        raise WhatifError(f"min_bisection is a percentage of the intact bisection (0 to 100), "
                          f"got {min_bisection:g}")
    if max_oversubscription is not None and max_oversubscription < 1:
        raise WhatifError(f"max_oversubscription is a down:up ratio of at least 1, "
                          f"got {max_oversubscription:g}")
    out: list[str] = []
    for r in worst_first(results):
        label = r.scenario.label
        if min_bisection is not None and r.bisection_pct < min_bisection:
            out.append(f"{label}: bisection {_pct(r.bisection_pct)} of intact "
                       f"({_gbps(r.bisection_gbps)}) is below the minimum {min_bisection:g}%")
        if max_oversubscription is not None and r.worst_oversubscription > max_oversubscription:
            how = ("has downlinks but no live uplink" if math.isinf(r.worst_oversubscription)
                   else f"is oversubscribed {_os_text(r.worst_oversubscription)}")
            out.append(f"{label}: {r.worst_oversubscribed} {how}, above the maximum "
                       f"{max_oversubscription:g}:1")
    return out


def _pct(value: float) -> str:
    return f"{value:.1f}%"


def _gbps(value: float) -> str:
    if value >= 1000:
        return f"{value / 1000:,.1f} Tb/s"
    return f"{value:,.0f} Gb/s"


def _os_text(value: float) -> str:
    if math.isinf(value):
        return "no uplink"
    return f"{value:.2f}:1".replace(".00:", ":")


def _gpu_text(r: Result) -> str:
    if not r.lost_gpu_pairs:
        return "-" if r.min_gpu_bandwidth_pct >= 100 else f"{r.min_gpu_bandwidth_pct:.0f}% bw"
    parts = [f"{len(r.cut_off_gpus):,} cut off"] if r.cut_off_gpus else []
    rails = ("same+cross rail" if r.same_rail_pair_lost and r.cross_rail_pair_lost
             else "same rail" if r.same_rail_pair_lost else "cross rail")
    parts.append(f"{r.lost_gpu_pairs:,} pairs ({rails})")
    return ", ".join(parts)


def _affected_text(r: Result) -> str:
    if not r.affected_nodes:
        return "-"
    return ", ".join([f"{r.affected_nodes:,} node{'s' if r.affected_nodes != 1 else ''}",
                      _few("rail", r.affected_rails), _few("SU", r.affected_units)])


def _few(word: str, values: tuple[int, ...]) -> str:
    """`rail 2`, `rails 0,1,2`, or `8 rails` when the list would not fit a table cell."""
    if not values:
        return f"no {word}"
    text = ",".join(str(v) for v in values)
    if len(text) > 12:
        return f"{len(values)} {word}s"
    return f"{word}{'s' if len(values) > 1 else ''} {text}"


def format_table(results: Sequence[Result], limit: int | None = 50) -> str:
    """A terminal table, worst scenario first; at most `limit` rows (None: all)."""
    if not results:
        return "no scenarios\n"
    ordered = worst_first(results)
    shown = ordered if limit is None else ordered[:limit]
    head = ("scenario", "bisection left", "worst oversub", "GPUs without a path", "ECMP",
            "affected", "ftree")
    rows: list[tuple[str, ...]] = []
    for r in shown:
        label = r.scenario.label if len(r.scenario.label) <= 40 else r.scenario.label[:39] + "…"
        if r.scenario.kind == "role":
            label += " = " + "+".join(r.failed_switches)
            label = label if len(label) <= 40 else label[:39] + "…"
        ecmp = "1.00" if r.ecmp_imbalance == 1 else f"{r.ecmp_imbalance:.2f}"
        if r.ecmp_sampled:
            ecmp += "~"
        ftree = "-" if r.ftree is None else "yes" if r.ftree.ok else "no"
        worst = (f"{_os_text(r.worst_oversubscription)} {r.worst_oversubscribed}"
                 if r.worst_oversubscribed else "-")
        rows.append((label, f"{_pct(r.bisection_pct)} {_gbps(r.bisection_gbps)}", worst,
                     _gpu_text(r), ecmp, _affected_text(r), ftree))
    widths = [max(len(row[i]) for row in (head, *rows)) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip()
             for row in (head, tuple("-" * w for w in widths), *rows)]
    first = ordered[0]
    lines.insert(0, f"{len(results):,} scenario{'s' if len(results) != 1 else ''}, worst first; "
                    f"intact bisection {_gbps(first.intact_bisection_gbps)}")
    if len(shown) < len(ordered):
        lines.append(f"... {len(ordered) - len(shown):,} more (--format json lists all)")
    notes = sorted({r.method for r in shown if r.method})
    lines += [f"note: {n}" for n in notes]
    if any(r.ecmp_sampled for r in shown):
        lines.append("~ ECMP imbalance from a deterministic sample of leaf-class pairs")
    return "\n".join(lines) + "\n"


def _finite(value: float) -> float | None:
    return None if math.isinf(value) else round(value, 4)


def to_json(results: Sequence[Result]) -> dict[str, Any]:
    """Plain JSON values, worst scenario first; an infinite oversubscription is null."""
    out: list[dict[str, Any]] = []
    for r in worst_first(results):
        s = r.scenario
        out.append({
            "scenario": {"label": s.label, "kind": s.kind, "switches": list(s.switches),
                         "cables": list(s.cables),
                         "picks": [{"role": role, "count": n} for role, n in s.picks],
                         "detail": s.detail},
            "failed_switches": list(r.failed_switches),
            "failed_cables": r.failed_cables,
            "method": r.method or None,
            "bisection": {"gbps": r.bisection_gbps, "intact_gbps": r.intact_bisection_gbps,
                          "pct": round(r.bisection_pct, 4), "narrowest_tier": r.narrowest_tier},
            "oversubscription": {"worst": _finite(r.worst_oversubscription),
                                 "switch": r.worst_oversubscribed},
            "uplink_loss": [{"switch": u.switch, "role": u.role, "intact_links": u.intact_links,
                             "live_links": u.live_links, "lost_gbps": u.lost_gbps,
                             "oversubscription": _finite(u.oversubscription)}
                            for u in r.uplink_loss],
            "ecmp": {"imbalance": round(r.ecmp_imbalance, 4),
                     "min_pct": round(r.ecmp_min_pct, 4),
                     "worst_pair": list(r.ecmp_worst_pair) if r.ecmp_worst_pair else None,
                     "sampled": r.ecmp_sampled},
            "connectivity": {"cut_leaf_pairs": r.cut_leaf_pairs,
                             "cut_leaf_examples": [list(p) for p in r.cut_leaf_examples],
                             "cut_off_gpus": list(r.cut_off_gpus),
                             "lost_gpu_pairs": r.lost_gpu_pairs,
                             "lost_pairs_same_rail": r.lost_pairs_same_rail,
                             "lost_pairs_cross_rail": r.lost_pairs_cross_rail,
                             "same_rail_pair_lost": r.same_rail_pair_lost,
                             "cross_rail_pair_lost": r.cross_rail_pair_lost,
                             "min_gpu_bandwidth_pct": round(r.min_gpu_bandwidth_pct, 4)},
            "affected": {"rails": list(r.affected_rails), "scalable_units": list(r.affected_units),
                         "nodes": r.affected_nodes, "node_ranges": list(r.affected_node_ranges)},
            "ftree": None if r.ftree is None else {"ok": r.ftree.ok, "reason": r.ftree.reason,
                                                   "fallback": r.ftree.fallback},
        })
    return {"format": "fabgen-whatif/1", "count": len(out), "results": out}


def single_failures_section(results: Sequence[Result], intact_gbps: float,
                            routing_engine: str | None = None) -> str:
    """Markdown for the render report from the `all-single` results: the worst single switch,
    link and cable failure, and whether any single failure cuts GPUs apart."""
    kinds = (("switch", "any one switch"), ("link", "any one switch-to-switch link bundle"),
             ("cable", "any one cable"))
    lines = [
        "## Single failures",
        "",
        f"Every switch, every switch-pair bundle, one cable of each bundle and every node cable "
        f"failed one at a time ({len(results):,} scenarios, `fabgen whatif --fail all-single`). "
        f"Bisection is against the intact {_gbps(intact_gbps)}.",
        "",
        "| failure | worst case | bisection left | worst oversubscription | GPU pairs without a "
        "path | ECMP imbalance | "
        + ("ftree" if routing_engine in (None, "ftree", "ar_ftree") else "fat tree") + " |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind, title in kinds:
        group = [r for r in results if r.scenario.kind == kind]
        if not group:
            continue
        r = worst_first(group)[0]
        worst = (f"{_os_text(r.worst_oversubscription)} ({r.worst_oversubscribed})"
                 if r.worst_oversubscribed else "-")
        ftree = "-" if r.ftree is None else "pure" if r.ftree.ok else "not pure"
        what = f"`{r.scenario.label}`" + (f" ({r.scenario.detail})" if kind == "cable" else "")
        lines.append(f"| {title} | {what} | {_pct(r.bisection_pct)} "
                     f"({_gbps(r.bisection_gbps)}) | {worst} | {_gpu_text(r)} | "
                     f"{r.ecmp_imbalance:.2f} | {ftree} |")
    cutting = [r for r in results if r.lost_gpu_pairs]
    lines.append("")
    if cutting:
        lines.append(f"{len(cutting):,} of {len(results):,} single failures leave some GPU pair "
                     "without a network path; dual-plane NICs or a second rail port avoid it.")
    else:
        lines.append("No single failure leaves a GPU pair without a network path.")
    broken = [r for r in results if r.ftree is not None and not r.ftree.ok]
    if broken and routing_engine not in (None, "ftree", "ar_ftree"):
        # Only ftree validates the tree (osm_ucast_ftree.c); up/down routes what is cabled.
        lines.append(f"{len(broken):,} single failures leave a tree that is no longer a pure "
                     f"fat tree; {routing_engine} does not check that and routes what is left, "
                     "unevenly, without a word: verify-cabling finds the cables that changed.")
    elif broken:
        lines.append(f"{len(broken):,} single failures leave a tree that is no longer a pure "
                     f"fat-tree by OpenSM's ftree check: {FTREE_FALLBACK}.")
    return "\n".join(lines) + "\n"
