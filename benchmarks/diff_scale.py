"""Benchmark: `fabgen diff` time and peak memory on two renders, by fabric size (not a test).

Run: python benchmarks/diff_scale.py [--sizes 8192,32768,131072,262144] [--changes ecn,su]
                                     [--baseline DIR] [--keep DIR]
For each size the rail-optimized RoCE fabric of benchmarks/render_scale.py (SONiC leaves and
spines) is rendered, then each change of it, and `fabgen diff OLD NEW` runs in a fresh process
per output format (peak RSS is that process's own):
  ecn  the ECN minimum threshold 150 KB -> 200 KB: every switch's config_db.json changes
  su   one more scalable unit (64 nodes, 512 GPUs): hosts, leaves, cables and the scheduler
       files added, every spine changed (sizes whose fabric still fits)
`--baseline DIR` also times the `fabgen diff` of another checkout (DIR/fabgen, e.g. main's)
on the same renders; it prints "failed" where that one cannot compare the files.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.render_scale import intent_for  # noqa: E402

CHANGES = {
    "ecn": lambda i: i.setdefault("qos", {}).update({"ecn": {"min": "200KB"}}),
    "su": lambda i: i["cluster"].update({"nodes": i["cluster"]["nodes"] + 64}),
}


def render(intent: dict[str, object], out: Path) -> None:
    path = out.with_suffix(".yaml")
    path.write_text(yaml.safe_dump(intent))
    subprocess.run([sys.executable, "-m", "fabgen", "render", "-q", str(path), "-o", str(out)],
                   check=True, cwd=ROOT)


def measure(args: list[str], pythonpath: Path) -> tuple[float, int, int]:
    """(seconds, peak RSS KiB, exit code) of one `fabgen diff` in a fresh process."""
    code = ("import resource, subprocess, sys, time; t = time.perf_counter(); "
            "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
            "print(time.perf_counter() - t, "
            "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode)")
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    # cwd: `python -m` puts the current directory first on sys.path.
    out = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "fabgen", "diff",
                          *args], capture_output=True, text=True, check=True, env=env,
                         cwd=pythonpath)
    seconds, kib, rc = out.stdout.split()
    return float(seconds), int(kib), int(rc)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="8192,32768,131072,262144")
    parser.add_argument("--changes", default="ecn,su")
    parser.add_argument("--formats", default="text,json,markdown")
    parser.add_argument("--baseline", type=Path, help="another checkout to time alike")
    parser.add_argument("--keep", type=Path, help="render here and keep the renders")
    args = parser.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d')}")
    print("| GPUs | change | files | MB | changed files | format | s | peak RSS MiB |"
          + (" baseline s | baseline MiB |" if args.baseline else ""))
    print("|---" * (10 if args.baseline else 8) + "|")
    for gpus in (int(s) for s in args.sizes.split(",")):
        work = Path(tempfile.mkdtemp(dir=args.keep))
        try:
            base = intent_for(gpus, "roce")
            render(base, work / "old")
            files = [p for p in (work / "old").rglob("*") if p.is_file()]
            mb = sum(p.stat().st_size for p in files) / 1e6
            for change in args.changes.split(","):
                intent = json.loads(json.dumps(base))
                CHANGES[change](intent)
                try:
                    render(intent, work / change)
                except subprocess.CalledProcessError:
                    print(f"| {gpus:,} | {change} | the changed intent does not render |")
                    continue
                quiet = subprocess.run([sys.executable, "-m", "fabgen", "diff", "-q",
                                        str(work / "old"), str(work / change)],
                                       capture_output=True, text=True, cwd=ROOT)
                # "files: A added, R removed, C changed, U unchanged; ..."
                counts = quiet.stdout.split(";")[0].split(": ")[1].split(", ")[:3]
                changed = sum(int(c.split()[0].replace(",", "")) for c in counts)
                for fmt in args.formats.split(","):
                    s, kib, rc = measure(["--format", fmt, "--no-pager", str(work / "old"),
                                          str(work / change)], ROOT)
                    row = (f"| {gpus:,} | {change} | {len(files):,} | {mb:,.0f} | {changed:,} "
                           f"| {fmt} | {s:.1f} | {kib // 1024:,} |")
                    if args.baseline and fmt != "markdown":
                        bs, bkib, brc = measure(["--format", fmt, str(work / "old"),
                                                 str(work / change)], args.baseline)
                        row += (f" {bs:.1f} | {bkib // 1024:,} |" if brc == 2
                                else f" failed (exit {brc}) | {bkib // 1024:,} |")
                    elif args.baseline:
                        row += " - | - |"
                    print(row, flush=True)
                    assert rc == 2, f"fabgen diff exited {rc}"
                shutil.rmtree(work / change)
        finally:
            if args.keep is None:
                shutil.rmtree(work)
    print(f"peak RSS of this script: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}"
          " MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
