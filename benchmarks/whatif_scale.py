"""Benchmark: `whatif --fail all-single` time and peak memory on 1,024-node fabrics (not a test).

Run: python benchmarks/whatif_scale.py [--fabrics ib3,roce2] [--nodes 1024]
  ib3    NDR InfiniBand, QM9700 leaves/spines/cores: 3 tiers (8,192 GPUs, 640 switches)
  roce2  RoCE 400G, SN5600 2x400G: 2 tiers (8,192 GPUs, 192 switches)
Each fabric runs in a fresh subprocess so its peak RSS (ru_maxrss) is its own.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def intent_for(kind: str, nodes: int) -> dict[str, object]:
    node = {"gpus": 8, "nics": 8}
    if kind == "ib3":
        return {"name": f"bench-ib-{nodes}",
                "fabric": {"transport": "infiniband", "generation": "ndr"},
                "cluster": {"nodes": nodes, "node": node},
                "topology": {"style": "rail-optimized", "scalable_unit": 32,
                             "leaf": {"model": "qm9700"}}}
    return {"name": f"bench-roce-{nodes}",
            "fabric": {"transport": "roce", "speed": "400G"},
            "cluster": {"nodes": nodes, "node": node},
            "topology": {"style": "rail-optimized", "scalable_unit": 64,
                         "leaf": {"model": "sn5600", "breakout": "2x400G"}},
            # Pools large enough for 8,192 host /31s and the fabric's p2p links.
            "addressing": {"p2p": "10.0.0.0/11", "hosts": "10.64.0.0/11",
                           "loopbacks": "10.255.0.0/16", "asn": {"leaf_start": 4200000000}}}


def _rss_mib() -> float:
    # Linux reports ru_maxrss in KiB.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one(kind: str, nodes: int) -> dict[str, object]:
    """Build the fabric and run all-single in this process; report the figures."""
    from fabgen import whatif
    from fabgen.intent.models import Intent
    from fabgen.topology.build import build

    start = time.perf_counter()
    fabric = build(Intent.model_validate(intent_for(kind, nodes)))
    built = time.perf_counter()
    rss_built = _rss_mib()
    scenarios = whatif.parse_specs(fabric, ["all-single"])  # includes the one-off model build
    parsed = time.perf_counter()
    results = whatif.evaluate(fabric, scenarios)
    evaluated = time.perf_counter()
    table = whatif.format_table(results)
    json.dumps(whatif.to_json(results))
    done = time.perf_counter()
    worst = whatif.worst_first(results)[0]
    return {
        "fabric": kind, "nodes": nodes, "gpus": nodes * 8, "tiers": fabric.tiers,
        "switches": len(fabric.switches), "cables": len(fabric.links),
        "scenarios": len(scenarios),
        "build_s": round(built - start, 2), "parse_s": round(parsed - built, 2),
        "evaluate_s": round(evaluated - parsed, 2), "output_s": round(done - evaluated, 2),
        "whatif_s": round(evaluated - built, 2),
        "us_per_scenario": round(1e6 * (evaluated - parsed) / max(len(scenarios), 1)),
        "rss_after_build_mib": round(rss_built), "peak_rss_mib": round(_rss_mib()),
        "worst": worst.scenario.label, "table_lines": len(table.splitlines()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--fabrics", default="ib3,roce2")
    parser.add_argument("--nodes", type=int, default=1024)
    parser.add_argument("--one", metavar="KIND", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.nodes)))
        return 0
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}")
    print("| fabric | GPUs | tiers | switches | cables | scenarios | build s | whatif s "
          "(parse + evaluate) | us/scenario | RSS after build MiB | peak RSS MiB | worst |")
    print("|---" * 12 + "|")
    failed = False
    for kind in args.fabrics.split(","):
        proc = subprocess.run([sys.executable, __file__, "--one", kind, "--nodes",
                               str(args.nodes)], capture_output=True, text=True, cwd=ROOT)
        if proc.returncode:
            print(f"| {kind} | failed: {proc.stderr.strip()[-300:]} |")
            failed = True
            continue
        r = json.loads(proc.stdout)
        print(f"| {r['fabric']} | {r['gpus']:,} | {r['tiers']} | {r['switches']:,} "
              f"| {r['cables']:,} | {r['scenarios']:,} | {r['build_s']} "
              f"| {r['whatif_s']} ({r['parse_s']} + {r['evaluate_s']}) "
              f"| {r['us_per_scenario']} | {r['rss_after_build_mib']:,} "
              f"| {r['peak_rss_mib']:,} | {r['worst']} |")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
