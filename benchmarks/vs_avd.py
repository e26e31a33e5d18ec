"""Benchmark: fabgen beside Arista's pyavd on the same all-EOS leaf/spine fabrics (not a test).

Run: python benchmarks/vs_avd.py [--fabrics 32x4,128x8,512x16] [--jobs N] [--runs 3]

Each fabric is LEAVESxSPINES: leaves of 32 x 400G ports (16 routed host ports, 16 uplinks spread
evenly over the spines), spines with one port per leaf uplink; EOS on every switch, one RoCE QoS
profile (DSCP trust, ECN, PFC no-drop, watchdog) on every port, eBGP underlay.
- fabgen: `fabgen render -q` of the matching intent, as a whole process: load, build, every
  target (EOS configs, and also hosts, NCCL, cabling, report), write to disk.
- pyavd 6.4.0: benchmarks/avd_side.py in pyavd's own venv, as a whole process: validate inputs,
  facts, structured config, eos_cli_config_gen and the device docs of every switch (AVD's
  equivalent of configs + report), no disk writes.
pyavd is not a dependency of fabgen: the script makes its venv on first use (under
~/.cache/fabgen-bench, or --avd-venv). Wall time and peak RSS (ru_maxrss of the child) are the
median over --runs; both sides run one after the other in the same run, so the ratio compares
like with like on this machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AVD_VERSION = "6.4.0"
HOSTS_PER_LEAF = 16
UPLINKS_PER_LEAF = 16


@dataclass(frozen=True)
class Run:
    seconds: float
    peak_mib: float


def timed(cmd: list[str], cwd: Path) -> Run:
    """Run a command to completion; its wall time and peak RSS (the child's own ru_maxrss)."""
    with tempfile.TemporaryFile() as err:  # a file, not a pipe: wait4 cannot block on it
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed:\n{err.read().decode()[-2000:]}")
    return Run(seconds, usage.ru_maxrss / 1024)


def median(runs: list[Run]) -> Run:
    return Run(statistics.median(r.seconds for r in runs),
               statistics.median(r.peak_mib for r in runs))


def intent(leaves: int, spines: int) -> str:
    """The fabgen intent of a LEAVESxSPINES fabric (rail-unaware, so one leaf per 2 nodes)."""
    return f"""\
name: bench-eos-{leaves}x{spines}
fabric: {{transport: roce, speed: 400G}}
cluster:
  nodes: {leaves * HOSTS_PER_LEAF // 8}
  node: {{gpus: 8, nics: 8}}
topology:
  style: rail-unaware
  leaf: {{ports: {HOSTS_PER_LEAF + UPLINKS_PER_LEAF}, speed: 400G}}
  spine: {{ports: {leaves * UPLINKS_PER_LEAF // spines}, speed: 400G}}
  min_spines: {spines}
platforms: {{leaf: eos, spine: eos}}
addressing: {{p2p: 10.0.0.0/12, hosts: 10.64.0.0/12, loopbacks: 10.255.0.0/16,
              asn: {{leaf_start: 4200000000}}}}
"""


def avd_python(venv: Path) -> Path:
    """pyavd's interpreter, making its venv on first use."""
    python = venv / "bin" / "python"
    probe = [str(python), "-c", f"import pyavd; assert pyavd.__version__ == '{AVD_VERSION}'"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    print(f"making a venv with pyavd {AVD_VERSION} in {venv} (once)", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", f"pyavd=={AVD_VERSION}"],
                   check=True)
    return python


def supports_jobs() -> bool:
    help_text = subprocess.run([sys.executable, "-m", "fabgen", "render", "--help"],
                               capture_output=True, text=True).stdout
    return "--jobs" in help_text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fabrics", default="32x4,128x8,512x16")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=None,
                        help="fabgen render --jobs (default: the usable cores, fabgen's default)")
    parser.add_argument("--avd-venv", type=Path,
                        default=Path.home() / ".cache" / "fabgen-bench" / f"pyavd-{AVD_VERSION}")
    args = parser.parse_args()
    python = avd_python(args.avd_venv)
    jobs: list[str] = []
    if supports_jobs():
        from fabgen.jobs import available_cores

        jobs = ["--jobs", str(args.jobs or available_cores())]
    elif args.jobs:
        raise SystemExit("this fabgen has no `render --jobs`")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}; pyavd {AVD_VERSION}; "
          f"fabgen render {' '.join(jobs) or '(no --jobs)'}; median of {args.runs} run(s)")
    print("| fabric | switches | fabgen s | fabgen MiB | pyavd s | pyavd MiB | speed-up "
          "| memory ratio |")
    print("|---" * 8 + "|")
    for spec in args.fabrics.split(","):
        leaves, spines = (int(x) for x in spec.lower().split("x"))
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            path = work / "intent.yaml"
            path.write_text(intent(leaves, spines))
            ours = median([timed([sys.executable, "-m", "fabgen", "render", "-q", str(path),
                                  "-o", str(work / f"out{i}"), *jobs], ROOT)
                           for i in range(args.runs)])
            theirs = median([timed([str(python), str(ROOT / "benchmarks" / "avd_side.py"),
                                    str(leaves), str(spines), str(HOSTS_PER_LEAF),
                                    str(UPLINKS_PER_LEAF)], work)
                             for _ in range(args.runs)])
        print(f"| {leaves}x{spines} | {leaves + spines} | {ours.seconds:.2f} "
              f"| {ours.peak_mib:.0f} | {theirs.seconds:.2f} | {theirs.peak_mib:.0f} "
              f"| {theirs.seconds / ours.seconds:.1f}x "
              f"| {theirs.peak_mib / ours.peak_mib:.1f}x |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
