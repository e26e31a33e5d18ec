"""Commands that hold the plan against something else: another render (diff), a cabling
sheet, failures (whatif), a live InfiniBand fabric (verify-cabling), saved switch outputs
(verify), real FRR in network namespaces (frr-lab)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fabgen.cli import pager
from fabgen.cli.console import (
    EXIT_CHANGES,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    Console,
    one_line,
)


def cmd_diff(args: argparse.Namespace, console: Console) -> int:
    from fabgen import diff
    from fabgen.diff import jsonout
    from fabgen.diff.markdown import format_markdown

    try:
        result = diff.diff(args.old, args.new, owned=not args.all)
    except diff.DiffError as exc:
        console.error(one_line(str(exc)))
        return EXIT_INVALID
    try:
        if args.quiet:
            sys.stdout.write(diff.summary_line(result) + "\n")
        elif args.format == "json":
            for chunk in jsonout.chunks(result):
                sys.stdout.write(chunk)
        elif args.format == "markdown":
            sys.stdout.write(format_markdown(result, args.max_chars, args.full_diff_url))
        else:
            lines = diff.text_lines(result, color=console.color and sys.stdout.isatty())
            if pager.wanted(args.no_pager):
                pager.page(lines)
            else:
                for line in lines:
                    sys.stdout.write(line + "\n")
    finally:
        result.close()
    return EXIT_CHANGES if result.changed else EXIT_OK


def cmd_check_cabling(args: argparse.Namespace, console: Console) -> int:
    from fabgen.cabling_check import CablingFileError, check_file
    from fabgen.intent import load
    from fabgen.topology.build import build

    loaded = load(args.intent)
    try:
        findings = check_file(build(loaded.intent), Path(args.sheet))
    except CablingFileError as exc:
        console.error(str(exc))
        return EXIT_INVALID
    if args.json:
        print(json.dumps([{"code": f.code, "message": f.message} for f in findings], indent=2))
    elif not args.quiet:
        for f in findings:  # the sheet's own text is echoed: one finding, one line
            print(one_line(f"{args.sheet}: {f.code}: {f.message}"))
        print(one_line(f"{args.sheet}: {len(findings)} finding(s)" if findings
                       else f"{args.sheet}: matches the plan"))
    return EXIT_INVALID if findings else EXIT_OK


def cmd_whatif(args: argparse.Namespace, console: Console) -> int:
    from fabgen import whatif
    from fabgen.intent import load
    from fabgen.topology.build import build

    if args.min_bisection is not None and not 0 <= args.min_bisection <= 1:
        console.error(f"--min-bisection is a fraction of the intact bisection (0 to 1), got "
                      f"{args.min_bisection:g}")
        return EXIT_USAGE
    fabric = build(load(args.intent).intent)
    try:
        scenarios = whatif.parse_specs(fabric, args.fail)
        results = whatif.evaluate(fabric, scenarios)
        violations = whatif.gate(
            results, None if args.min_bisection is None else args.min_bisection * 100,
            args.max_oversubscription)
    except whatif.WhatifError as exc:
        console.error(str(exc))
        return EXIT_INVALID
    if args.format == "json":
        data = whatif.to_json(results)
        data["violations"] = violations
        print(json.dumps(data, indent=2))
    else:
        if not args.quiet:
            sys.stdout.write(whatif.format_table(results, limit=args.limit or None))
        for line in violations:
            print(f"violation: {line}", file=sys.stderr)
    return EXIT_INVALID if violations else EXIT_OK


def cmd_verify_cabling(args: argparse.Namespace, console: Console) -> int:
    from fabgen.verify_cabling import format_findings, verify_file

    try:
        findings = verify_file(args.intent, args.ibnetdiscover,
                               plane=None if args.plane is None else args.plane - 1,
                               expected_speed=args.expect_speed)
    except ValueError as exc:
        console.error(str(exc))
        return EXIT_INVALID
    if args.json:
        print(json.dumps([{"kind": f.kind, "message": f.message} for f in findings], indent=2))
    else:
        sys.stdout.write(format_findings(findings).rstrip("\n") + "\n")
    return EXIT_INVALID if findings else EXIT_OK


def cmd_verify(args: argparse.Namespace, console: Console) -> int:
    from fabgen.verify.check import CHECKS, format_report, verify_intent

    checks = CHECKS
    if args.checks:
        checks = tuple(c.strip() for c in args.checks.split(",") if c.strip())
        unknown = [c for c in checks if c not in CHECKS]
        if unknown:
            console.error(f"--checks: unknown check(s) {', '.join(unknown)} (choose from "
                          f"{', '.join(CHECKS)})")
            return EXIT_USAGE
    saved = Path(args.saved)
    if not saved.is_dir():
        console.error(f"{saved}: not a directory of saved outputs")
        return EXIT_USAGE
    try:
        report = verify_intent(Path(args.intent), saved, args.devices, checks)
    except ValueError as exc:
        console.error(str(exc))
        return EXIT_INVALID
    if args.json:
        print(json.dumps(report.as_json(), indent=2))
    else:
        sys.stdout.write(format_report(report))
    return EXIT_INVALID if report.findings else EXIT_OK



def cmd_verify_counters(args: argparse.Namespace, console: Console) -> int:
    import fnmatch

    from fabgen import qos
    from fabgen.intent import load
    from fabgen.targets import alerts
    from fabgen.targets.base import RenderContext
    from fabgen.topology.build import build
    from fabgen.verify.counters import Budget, compare_dirs
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
    budget = Budget(pause_pps=alerts.pfc_thresholds(ctx)[1],
                    pfc_frames_max=mon.verify_pfc_frames_max,
                    lossless_queue=plan.rdma.queue, ecn_marks_max=mon.verify_ecn_marks_max)
    findings = compare_dirs(switches, Path(args.before), Path(args.after), args.elapsed,
                            budget)
    if args.json:
        print(json.dumps([f.as_json() for f in findings], indent=2))
    else:
        lines = [one_line(f.message) for f in findings]
        lines.append(f"{len(findings)} finding(s) on {len({f.device for f in findings})} of "
                     f"{len(switches)} switch(es)" if findings else
                     f"{len(switches)} switch(es) within the plan over {args.elapsed:.0f} s")
        sys.stdout.write("\n".join(lines) + "\n")
    return EXIT_INVALID if findings else EXIT_OK


def cmd_frr_lab(args: argparse.Namespace, console: Console) -> int:
    from fabgen import qos
    from fabgen.frrlab import lab as frrlab
    from fabgen.frrlab.netns import LabError, available
    from fabgen.frrlab.run import from_context, run_lab
    from fabgen.intent import load
    from fabgen.targets.base import RenderContext
    from fabgen.topology.build import build

    intent = load(args.intent).intent
    if intent.fabric.transport != "roce":
        console.error(f"{args.intent}: an InfiniBand fabric has no BGP underlay")
        return EXIT_INVALID
    why = available()
    if why is not None:
        console.error(f"cannot run an FRR lab here: {why}")
        return EXIT_USAGE
    ctx = RenderContext(intent=intent, fabric=build(intent), qos=qos.plan(intent))
    def progress(message: str) -> None:  # stderr: stdout carries the result
        console.info(message, sys.stderr)

    quiet = args.quiet or args.json
    try:
        lab = from_context(ctx, args.switches)
        result = run_lab(lab, timeout=args.timeout, detect=args.detect, hold=args.hold,
                         progress=None if quiet else progress)
    except LabError as exc:
        console.error(str(exc))
        return EXIT_INVALID
    if args.json:
        print(json.dumps(result.as_json(), indent=2))
    else:
        sys.stdout.write(frrlab.format_result(result))
    return EXIT_OK if result.ok else EXIT_INVALID
