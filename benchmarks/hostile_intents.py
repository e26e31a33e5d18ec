"""Benchmark: how fast and how small hostile intents fail (issues 15 and 18; not a test).

Run: python benchmarks/hostile_intents.py
Each case is the default example plus one hostile addition, checked by `fabgen validate` in a
fresh process; the table gives wall time (interpreter start included), the child's own peak
RSS, the exit code and the error's start, and the time fabgen's own loading takes in this
process (without the interpreter's start and imports). The goal: every case exit 1 within a
second and 100 MiB.
"""

from __future__ import annotations

import contextlib
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASE = (ROOT / "inventories" / "roce-256-sonic.yaml").read_text(encoding="utf-8")

CASES: dict[str, str | tuple[str, str]] = {
    "none (the valid example)": "",
    "billion laughs (9 x 10 aliases)": "x: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, "
    "lol]\n" + "".join(f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n"
                       for i in range(1, 9)),
    "5,000 nested lists": "x: " + "[" * 5000 + "]" * 5000 + "\n",
    "3,000 nested maps": "x: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n",
    "aliases nesting 100 deep": "a0: &a0 [[[[[[[[[[1]]]]]]]]]]\n" + "".join(
        f"a{i}: &a{i} [[[[[[[[[[*a{i - 1}]]]]]]]]]]\n" for i in range(1, 10)),
    "a 4,000-digit integer": "x: " + "9" * 4000 + "\n",
    "30,000 list items (89 KiB)": "x: [" + ", ".join(["1"] * 30000) + "]\n",
    "120 KiB of comments": "#" + "x" * 120_000 + "\n",
    "a 1 MiB file": "x: '" + "y" * (1 << 20) + "'\n",
    "gpu{index:0999999999d}": ("gpu{index:04d}", "gpu{index:0999999999d}"),
    "%YAML 9.9 inside": "%YAML 9.9\n",
    "!!python/object tag": "x: !!python/object/apply:os.system ['id']\n",
}


# The child prints its own peak RSS (VmHWM, Linux): rusage of a child counts pages it was
# forked with from its parent.
CHILD = ("import re, sys\n"
         "from fabgen.cli import main\n"
         "code = main(sys.argv[1:])\n"
         "print(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())[1])\n"
         "sys.exit(code)\n")


def intent_text(case: str | tuple[str, str]) -> str:
    """The example plus the case's lines, or with one string of it replaced."""
    return BASE.replace(*case) if isinstance(case, tuple) else BASE + case


def in_process(path: Path) -> float:
    """Seconds fabgen itself spends loading and checking (interpreter start excluded)."""
    from fabgen.errors import FabgenError
    from fabgen.intent import load

    start = time.perf_counter()
    with contextlib.suppress(FabgenError):
        load(path)
    return time.perf_counter() - start


def run(case: str | tuple[str, str], tmp: Path) -> tuple[float, float, float, int, str]:
    path = tmp / "intent.yaml"
    path.write_text(intent_text(case), encoding="utf-8")
    loading = in_process(path)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD, "--no-color", "validate", str(path)],
                          capture_output=True, text=True, cwd=tmp)
    elapsed = time.perf_counter() - start
    first = proc.stderr.splitlines()[0].removeprefix(str(path)) if proc.stderr else ""
    return loading, elapsed, int(proc.stdout.split()[-1]) / 1024, proc.returncode, first


def main() -> int:
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}")
    print("| case | load s | process s | peak RSS MiB | exit | error |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, case in CASES.items():
            loading, elapsed, rss, code, first = run(case, Path(tmp))
            print(f"| {name} | {loading:.3f} | {elapsed:.2f} | {rss:.0f} | {code} "
                  f"| `{first[:70]}` |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
