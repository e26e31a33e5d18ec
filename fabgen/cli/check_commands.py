"""Commands that hold the plan against something else: another render (diff), a cabling
sheet, failures (whatif), a live InfiniBand fabric (verify-cabling), saved switch outputs
(verify). A platform's own commands are in its push face."""

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

    if args.quiet and args.format != "text":
        # -q prints the text summary line; a script asking for JSON or a comment must not be
        # handed that instead of what it parses.
        console.error(f"-q prints the summary line only; it does not go with --format "
                      f"{args.format}")
        return EXIT_USAGE
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
