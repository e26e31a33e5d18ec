"""`fabgen push`: the rendered configs onto the switches, with a device-count bar on a terminal."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fabgen.cli.console import (
    EXIT_USAGE,
    Console,
    print_through,
)


def cmd_push(args: argparse.Namespace, console: Console) -> int:
    from fabgen import push

    def split(text: str) -> tuple[str, ...]:
        return tuple(x.strip() for x in text.split(",") if x.strip())

    try:
        rails = tuple(int(r) for r in split(args.rail))
    except ValueError:
        console.error(f"--rail takes comma-separated rail numbers, got {args.rail!r}")
        return EXIT_USAGE
    options = push.PushOptions(
        intent=Path(args.intent), hosts=Path(args.hosts),
        render_dir=Path(args.render_dir) if args.render_dir else None,
        commit=args.commit, devices=args.devices, roles=split(args.role), rails=rails,
        workers=args.workers, timeout=args.timeout, apply_timeout=args.apply_timeout,
        canary=args.canary, batch_size=args.batch_size, confirm_timeout=args.confirm_timeout,
        known_hosts=Path(args.known_hosts) if args.known_hosts else None,
        accept_new_host_keys=args.accept_new_host_keys,
        audit=Path(args.audit) if args.audit else None, sonic_apply=args.sonic_apply,
        username=args.username, ssh_config=Path(args.ssh_config) if args.ssh_config else None,
        show_diff=not args.no_diff, strict=args.strict,
        max_tier_fraction=args.max_tier_fraction, health_timeout=args.health_timeout,
        sonic_change_hwsku=args.sonic_change_hwsku,
        debug=args.debug)
    quiet = args.json or args.quiet
    if quiet or not (sys.stderr.isatty() and sys.stdout.isatty()):
        report = push.run(options, (lambda _: None) if quiet else print_through)
    else:
        # On a terminal: a device-count bar; lines print above it through rich's console so
        # the two do not garble each other.
        from rich.console import Console as RichConsole
        from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as RichProgress

        bar = RichProgress(TextColumn("pushing"), BarColumn(),
                           TextColumn("{task.completed}/{task.total} devices"),
                           TimeElapsedColumn(),
                           console=RichConsole(stderr=True, no_color=not console.color),
                           transient=True)
        with bar:
            task = bar.add_task("", total=None)

            def say(text: str) -> None:
                bar.console.print(text, markup=False, highlight=False, soft_wrap=True)

            report = push.run(options, say, progress=lambda done, total: bar.update(
                task, completed=done, total=total))
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    elif args.quiet:
        for dev in report.failed:
            console.error(f"{dev.name}: {dev.error_kind}: {dev.error}")
    return report.exit_code

