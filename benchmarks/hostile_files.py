"""Benchmark: how fast and how small hostile files besides the intent fail (issue 18; not a
test: tests/test_hostile_files.py checks exit 1, one line, nothing written and 100 MiB).

Run: python benchmarks/hostile_files.py
Each case plants one hostile file (a FIFO with no writer, a 4 GiB sparse file, binary
garbage, a YAML alias bomb or deep nesting) where a command reads one, and runs the command
in a fresh process; the table gives wall time (interpreter start included), the child's own
peak RSS, the exit code and the error's start. The goal: every case exit 1 within a second
and 100 MiB, and none blocks (a 60 s timeout would show as exit -).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROCE = (ROOT / "inventories" / "roce-256-sonic.yaml").read_text(encoding="utf-8")
IB = (ROOT / "inventories" / "ib-ndr-1024.yaml").read_text(encoding="utf-8").replace(
    "\ninfiniband:\n", "\ninfiniband:\n  guids_file: fabric.ibnd\n", 1)
BOMB = "x: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"x{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 9))

# name: (file to plant, what, command)
CASES: dict[str, tuple[str, str, list[str]]] = {
    "push --hosts FIFO": ("hosts.yaml", "fifo", ["push", "roce.yaml", "--hosts", "hosts.yaml"]),
    "push --hosts alias bomb": ("hosts.yaml", "bomb", ["push", "roce.yaml", "--hosts",
                                                      "hosts.yaml"]),
    "push --hosts 5,000 nested lists": ("hosts.yaml", "deep", ["push", "roce.yaml", "--hosts",
                                                              "hosts.yaml"]),
    "push --hosts 4 GiB": ("hosts.yaml", "huge", ["push", "roce.yaml", "--hosts",
                                                 "hosts.yaml"]),
    "push --audit FIFO": ("audit.jsonl", "fifo", ["push", "roce.yaml", "--hosts", "ok.yaml",
                                                  "--audit", "audit.jsonl"]),
    "render guids_file FIFO": ("fabric.ibnd", "fifo", ["render", "ib.yaml", "-o", "out"]),
    "render guids_file 4 GiB": ("fabric.ibnd", "huge", ["render", "ib.yaml", "-o", "out"]),
    "render guids_file garbage": ("fabric.ibnd", "garbage", ["render", "ib.yaml", "-o",
                                                             "out"]),
    "verify-cabling FIFO": ("ibnd.out", "fifo", ["verify-cabling", "ib.yaml",
                                                 "--ibnetdiscover", "ibnd.out"]),
    "check-cabling 4 GiB sheet": ("sheet.csv", "huge", ["check-cabling", "roce.yaml",
                                                        "sheet.csv"]),
    "verify saved output FIFO": ("saved/leaf-su1-r0/lldp.txt", "fifo", ["verify", "roce.yaml",
                                                                        "saved"]),
    "diff YAML alias bomb": ("b/x.yaml", "bomb", ["diff", "a", "b"]),
    "render into OUT with a FIFO manifest": ("out/manifest.json", "fifo",
                                             ["render", "roce.yaml", "-o", "out"]),
}

CHILD = ("import re, sys\n"
         "from fabgen.cli import main\n"
         "code = main(sys.argv[1:])\n"
         "print(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())[1])\n"
         "sys.exit(code)\n")


def plant(path: Path, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "huge":
        with path.open("wb") as fh:
            fh.truncate(4 * 1024 ** 3)
    elif kind == "garbage":
        path.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4)
    elif kind == "bomb":
        path.write_text(BOMB)
    elif kind == "deep":
        path.write_text("leaf-su1-r0: " + "[" * 5000 + "]" * 5000 + "\n")


def run(name: str, tmp: Path) -> tuple[float, str, int | None, str]:
    work = tmp / name.replace(" ", "_").replace("/", "_")
    work.mkdir()
    (work / "roce.yaml").write_text(ROCE, encoding="utf-8")
    (work / "ib.yaml").write_text(IB, encoding="utf-8")
    (work / "ok.yaml").write_text("leaf-su1-r0: 127.0.0.1:9\n")
    (work / "a").mkdir()
    (work / "a" / "x.yaml").write_text("a: 1\n")
    target, kind, args = CASES[name]
    plant(work / target, kind)
    start = time.perf_counter()
    try:
        proc = subprocess.run([sys.executable, "-c", CHILD, "--no-color", *args],
                              capture_output=True, text=True, cwd=work, timeout=60)
    except subprocess.TimeoutExpired:
        return 60.0, "-", None, "blocked (timeout)"
    elapsed = time.perf_counter() - start
    rss = f"{int(proc.stdout.split()[-1]) / 1024:.0f}" if proc.stdout.strip() else "-"
    first = proc.stderr.splitlines()[0] if proc.stderr else ""
    return elapsed, rss, proc.returncode, first


def main() -> int:
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}")
    print("| case | process s | peak RSS MiB | exit | error |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in CASES:
            elapsed, rss, code, first = run(name, Path(tmp))
            print(f"| {name} | {elapsed:.2f} | {rss} | {code} | `{first[:80]}` |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
