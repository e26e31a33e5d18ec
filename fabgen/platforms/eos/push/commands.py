"""EOS's own subcommand: `fabgen verify-counters`, two ANTA snapshots of EOS counters
compared with the plan (counters.py)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from fabgen.errors import one_line
from fabgen.platforms.contract.push import EXIT_INVALID, EXIT_OK, EXIT_USAGE, Command, Console

__all__ = ["VERIFY_COUNTERS", "VerifyCounters"]


class VerifyCounters(Command):
    name = "verify-counters"
    help = "compare two ANTA snapshots of EOS counters with the plan"

    def parser_kwargs(self) -> dict[str, Any]:
        return {
            "description": (
                "Read two `anta exec snapshot` directories taken before and after a window "
                "of traffic (verify/anta-check.sh takes them) and check, per planned EOS "
                "port, the counters' increase: PFC frames each way within the PfcPauseRate "
                "alert's rate times the elapsed seconds (or monitoring.verify_pfc_frames_max)"
                ", no drop on the lossless queue, ECN marks within "
                "monitoring.verify_ecn_marks_max when set. Needs no cleared counters."),
            "epilog": ("example:\n  fabgen verify-counters pod-a.yaml snap/before snap/after "
                       "--elapsed 1800\n\n"
                       "exit codes: 0 within the plan, 1 a port is not (or bad input), 2 usage"),
        }

    def configure(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("intent", metavar="INTENT")
        p.add_argument("before", metavar="BEFORE", help="anta exec snapshot directory, before")
        p.add_argument("after", metavar="AFTER", help="anta exec snapshot directory, after")
        p.add_argument("--elapsed", type=float, required=True, metavar="SECONDS",
                       help="seconds between the two snapshots")
        p.add_argument("--devices", metavar="PATTERN", help="only switches matching this glob")
        p.add_argument("--json", action="store_true", help="print findings as JSON")

    def run(self, args: argparse.Namespace, console: Console) -> int:
        import fnmatch

        from fabgen import qos
        from fabgen.intent import load
        from fabgen.platforms.eos.counters import Budget, compare_dirs
        from fabgen.targets.base import RenderContext
        from fabgen.targets.pfc_rates import pfc_thresholds
        from fabgen.topology.build import build
        from fabgen.verify.expect import expected_switches

        for name in (args.before, args.after):
            if not Path(name).is_dir():
                console.error(f"{name}: not an `anta exec snapshot` directory")
                return EXIT_USAGE
        if args.elapsed <= 0:
            console.error("--elapsed must be positive")
            return EXIT_USAGE
        intent = load(args.intent).intent
        if intent.fabric.transport != "roce":
            console.error(f"{args.intent}: an InfiniBand fabric has no EOS counters to check")
            return EXIT_INVALID
        plan = qos.plan(intent)
        ctx = RenderContext(intent=intent, fabric=build(intent), qos=plan)
        switches = {s.name: [p.name for p in s.ports]
                    for s in expected_switches(ctx.index, plan, platforms=("eos",))
                    if args.devices is None or fnmatch.fnmatchcase(s.name, args.devices)}
        if not switches:
            console.error(f"{intent.name}: no EOS switch"
                          + (f" matches --devices {args.devices!r}" if args.devices else ""))
            return EXIT_INVALID
        mon = intent.monitoring
        budget = Budget(pause_pps=pfc_thresholds(ctx)[1],
                        pfc_frames_max=mon.verify_pfc_frames_max,
                        lossless_queue=plan.rdma.queue, ecn_marks_max=mon.verify_ecn_marks_max)
        findings = compare_dirs(switches, Path(args.before), Path(args.after), args.elapsed,
                                budget)
        if args.json:
            print(json.dumps([asdict(f) for f in findings], indent=2))
        else:
            lines = [_one_line(f.message) for f in findings]
            lines.append(f"{len(findings)} finding(s) on {len({f.device for f in findings})} of "
                         f"{len(switches)} switch(es)" if findings else
                         f"{len(switches)} switch(es) within the plan over {args.elapsed:.0f} s")
            sys.stdout.write("\n".join(lines) + "\n")
        return EXIT_INVALID if findings else EXIT_OK


def _one_line(text: str, limit: int = 500) -> str:
    """A finding's text on one line (as the CLI prints any message)."""
    text = one_line(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 3] + "..."


VERIFY_COUNTERS = VerifyCounters()
