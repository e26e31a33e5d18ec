"""Benchmark: full render time, peak memory and output size by fabric size (not a test).

Run: python benchmarks/render_scale.py [--sizes 1024,8192,32768,131072] [--transport roce,ib]
                                       [--jobs N]
Each size runs in a fresh subprocess so peak RSS is that render's alone. `--jobs` is passed to
the render (default: fabgen's own, the usable cores); peak RSS is the parent's and, with
workers, the largest worker's (the parent's peak plus the workers' is the most the render held
at once; forked workers share the parent's pages until they write them, so it overstates).
InfiniBand sizes above one subnet's LID space (about 47,000 GPUs of 8 HCA ports) are refused
by fabgen and print as failed with its error.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOPOLOGY_TARGETS = ("slurm", "kubernetes", "ibdm", "rails")


def intent_for(gpus: int, transport: str) -> dict[str, object]:
    nodes = gpus // 8
    if transport == "ib":
        # XDR Quantum-X800 (144 ports): 3 tiers reach 746k endpoints, where 64-port NDR
        # switches stop at 65,536 (DGX SuperPOD B300 uses the same switch).
        return {
            "name": f"bench-ib-{gpus}",
            "fabric": {"transport": "infiniband", "generation": "xdr"},
            "cluster": {"nodes": nodes, "node": {"gpus": 8, "nics": 8, "nic": "connectx-8"}},
            "topology": {"style": "rail-optimized", "scalable_unit": 64,
                         "leaf": {"model": "q3400"}},
        }
    return {
        "name": f"bench-roce-{gpus}",
        "fabric": {"transport": "roce", "speed": "400G"},
        "cluster": {"nodes": nodes, "node": {"gpus": 8, "nics": 8}},
        "topology": {"style": "rail-optimized", "scalable_unit": 64,
                     "leaf": {"model": "sn5600", "breakout": "2x400G"}},
        "addressing": {"p2p": "10.0.0.0/11", "hosts": "10.64.0.0/11",
                       "loopbacks": "10.255.0.0/16", "asn": {"leaf_start": 4200000000}},
    }


def one(gpus: int, transport: str, jobs: int) -> dict[str, object]:
    """Render one size in this process and report its figures."""
    import yaml

    from fabgen import output
    from fabgen.intent import load
    from fabgen.render import render_iter

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "intent.yaml"
        path.write_text(yaml.safe_dump(intent_for(gpus, transport)))
        # Per target: the progress callback marks when its first work item is taken. With
        # --jobs 1 the time to the next target's mark is the target's render time.
        marks: list[tuple[str, float]] = []

        def mark(name: str, _done: int, _total: int) -> None:
            if not marks or marks[-1][0] != name:
                marks.append((name, time.perf_counter()))

        start = time.perf_counter()
        loaded = load(path)
        # As `fabgen render` does: each file streams from its renderer into the writer.
        report = output.write(Path(tmp) / "out",
                              render_iter(loaded, progress=mark, jobs=jobs))
        took = {name: t1 - t0 for (name, t0), (_next, t1) in itertools.pairwise(marks)}
        done = time.perf_counter()
        written = [p for p in (Path(tmp) / "out").rglob("*") if p.is_file()]
        size = sum(p.stat().st_size for p in written)
        from fabgen.topology.build import build

        fabric = build(loaded.intent)
        switches, hosts = len(fabric.switches), len(fabric.hosts)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    worker_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    total = done - start
    return {
        "gpus": gpus, "transport": transport, "switches": switches, "hosts": hosts,
        "jobs": jobs, "total_s": round(total, 2),
        "peak_rss_mib": round(peak_kib / 1024), "worker_rss_mib": round(worker_kib / 1024),
        "files": report.files, "bytes": size,
        "ms_per_switch": round(1000 * total / max(switches, 1), 2),
        "ms_per_host": round(1000 * total / max(hosts, 1), 2),
        "us_per_gpu": round(1e6 * total / gpus, 1),
        # scheduler/ and bringup/ files (slurm, kubernetes, ibdm, rails targets); in one
        # process only (with workers the marks time the parent's reading, not the rendering)
        "topology_s": (round(sum(took.get(t, 0.0) for t in TOPOLOGY_TARGETS), 2)
                       if jobs == 1 else "-"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1024,8192,32768,131072")
    parser.add_argument("--transport", default="roce,ib")
    parser.add_argument("--jobs", type=int, default=None,
                        help="render processes (default: fabgen's, the usable cores)")
    parser.add_argument("--one", nargs=3, metavar=("GPUS", "TRANSPORT", "JOBS"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(int(args.one[0]), args.one[1], int(args.one[2]))))
        return 0
    from fabgen.jobs import available_cores

    jobs = args.jobs or available_cores()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}; --jobs {jobs}")
    head = ("| GPUs | fabric | switches | hosts | total s | peak RSS MiB (parent + largest "
            "worker) | files | MB written | ms/switch | ms/host | us/GPU | scheduler+bringup s |")
    print(head)
    print("|---" * 12 + "|")
    for transport in args.transport.split(","):
        for size in (int(s) for s in args.sizes.split(",")):
            proc = subprocess.run([sys.executable, __file__, "--one", str(size), transport,
                                   str(jobs)], capture_output=True, text=True, cwd=ROOT)
            if proc.returncode:
                print(f"| {size} | {transport} | failed: {proc.stderr.strip()[-200:]} |")
                continue
            r = json.loads(proc.stdout)
            print(f"| {r['gpus']:,} | {r['transport']} | {r['switches']:,} | {r['hosts']:,} "
                  f"| {r['total_s']} | {r['peak_rss_mib']:,} + {r['worker_rss_mib']:,} "
                  f"| {r['files']:,} "
                  f"| {r['bytes'] / 1e6:.1f} | {r['ms_per_switch']} | {r['ms_per_host']} "
                  f"| {r['us_per_gpu']} | {r['topology_s']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
