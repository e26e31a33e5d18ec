"""The `fabgen` command: parse arguments, call the pipeline, print, return an exit code."""

from __future__ import annotations

import argparse
import contextlib
import importlib.resources
import json
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from fabgen import __version__, resources
from fabgen.errors import Diagnostic, FabgenError
from fabgen.render import Progress

if TYPE_CHECKING:
    from fabgen.intent.loader import LoadedIntent
    from fabgen.output import WriteReport

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2
EXIT_BUG = 3  # fabgen's own bug (never an input error: those are exit 1 with file:line:col)
EXIT_CHANGES = 2  # `fabgen diff` only, as terraform plan -detailed-exitcode
LOCAL_INTENT = Path("fabgen.yaml")  # what `fabgen init` writes; `fabgen render` reads it
EXIT_PIPE = 128 + 13  # stdout closed early (`| head`): what a shell reports for git or grep

EPILOG = """\
examples:
  fabgen validate inventories/*.yaml          check intents (exit 1 on any error)
  fabgen init && fabgen render                write ./fabgen.yaml from an example, render it
  fabgen render                               render ./fabgen.yaml (else the built-in example)
  fabgen render pod-a.yaml -o configs/pod-a   render an intent into a directory
  fabgen render pod-a.yaml -o configs/pod-a --check
                                              exit 1 if configs/pod-a differs (CI gate)
  fabgen plan pod-a.yaml --json               switch/cable counts, bisection, as JSON
  fabgen diff git:HEAD~1:configs/pod-a configs/pod-a
                                              what a change does, per device (exit 2)
  fabgen schema > fabgen-intent.schema.json   JSON Schema for editors

exit codes: 0 ok, 1 invalid input or failed check, 2 usage error
"""


class Console:
    """stderr/stdout with colour only on a terminal (and never with NO_COLOR)."""

    def __init__(self, quiet: bool = False, color: bool | None = None) -> None:
        self.quiet = quiet
        if color is None:
            color = sys.stderr.isatty() and "NO_COLOR" not in os.environ
        self.color = color

    def _paint(self, text: str, code: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.color else text

    def diagnostic(self, diag: Diagnostic) -> None:
        if self.quiet and diag.severity == "warning":  # -q: errors only
            return
        code = "33" if diag.severity == "warning" else "31"
        print(self._paint(diag.render(), code), file=sys.stderr)

    def info(self, text: str, stream: TextIO | None = None) -> None:
        if not self.quiet:
            print(text, file=stream or sys.stdout)

    def error(self, text: str) -> None:
        print(self._paint(f"error: {text}", "31"), file=sys.stderr)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fabgen",
        description="Generate every config of a GPU-cluster fabric (cabling, switch QoS, NIC "
                    "scripts, NCCL env, subnet manager, report) from one intent file.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"fabgen {__version__}")
    parser.add_argument("--debug", action="store_true", help="show a traceback on errors")
    parser.add_argument("--no-color", action="store_true", help="never colour output")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show a traceback on errors")
        p.add_argument("--strict", action="store_true",
                       help="treat warnings (dangerous but legal choices) as errors")
        p.add_argument("-q", "--quiet", action="store_true", help="print errors only")
        p.add_argument("--json", action="store_true", help="print the result as JSON")

    p = sub.add_parser("validate", help="check intent files", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Validate intents: every error of each file with "
                                   "file:line:col, then warnings. Each valid intent is also "
                                   "rendered in memory (nothing is written), so an intent "
                                   "that validates renders.")
    p.add_argument("intents", nargs="+", metavar="INTENT")
    common(p)

    p = sub.add_parser("render", help="render all artifacts of an intent", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       description="Render every artifact into a directory, atomically. "
                                   "With --check, compare instead of writing.")
    p.add_argument("intent", nargs="?", metavar="INTENT",
                   help=f"intent YAML (default: ./{LOCAL_INTENT} if it exists, else the "
                        f"built-in example {resources.DEFAULT_EXAMPLE})")
    p.add_argument("-o", "--output", metavar="DIR", help="output directory (default: out/NAME)")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if DIR differs from a fresh render")
    p.add_argument("--only", action="append", metavar="TARGETS",
                   help="render only these targets or groups, comma-separated (switches, hosts, "
                        "infiniband, cabling, report, sonic, eos, nvue, nic, nccl, ...)")
    p.add_argument("--devices", metavar="PATTERN",
                   help="render per-device files only for devices matching a glob "
                        "(e.g. 'leaf-su1-*'); fabric-wide files are kept")
    p.add_argument("--follow-symlinks", action="store_true",
                   help="if DIR is a symbolic link, write at its target (refused otherwise)")
    p.add_argument("--jobs", "-j", type=_jobs, metavar="N",
                   help="render with N processes (default: this machine's cores; 1 renders in "
                        "one process); the files are the same for every N")
    common(p)

    p = sub.add_parser("plan", help="print switch/cable counts without writing files",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("intent", metavar="INTENT")
    common(p)

    p = sub.add_parser(
        "diff", help="compare two renders, a git revision, or backed-up running configs",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compare OLD and NEW: each a render directory, git:REV:PATH, or a directory "
                    "of device backups (Oxidized/RANCID). JSON/YAML configs are compared key by "
                    "key, ignoring key order.",
        epilog="examples:\n"
               "  fabgen diff git:HEAD~1:configs/pod-a configs/pod-a\n"
               "  fabgen diff /var/lib/oxidized/configs configs/pod-a --format json\n\n"
               "exit codes: 0 no change, 2 changes, 1 error (like terraform plan "
               "-detailed-exitcode)")
    p.add_argument("old", metavar="OLD")
    p.add_argument("new", metavar="NEW")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--all", action="store_true",
                   help="against backups, compare everything, not only what fabgen renders "
                        "(SONiC tables, EOS sections)")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the summary line")

    p = sub.add_parser(
        "check-cabling", help="check a cabling sheet against the invariants and the plan",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read a cabling sheet (fabgen's cabling.csv or cabling.json, e.g. after a "
                    "field team edited it) and report asymmetric uplinks, reused ports, rail "
                    "misalignment, and cables missing from or added to the plan of INTENT.",
        epilog="example:\n  fabgen check-cabling pod-a.yaml as-built/cabling.csv\n\n"
               "exit codes: 0 no finding, 1 findings or invalid input")
    p.add_argument("intent", metavar="INTENT")
    p.add_argument("sheet", metavar="SHEET", help="cabling.csv or cabling.json")
    p.add_argument("--json", action="store_true", help="print findings as JSON")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing; exit code only")

    p = sub.add_parser(
        "whatif", help="what the fabric loses when switches, links or a plane fail",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Fail switches, links or planes and compute, from the fabric model, the "
                    "remaining bisection, the worst oversubscription, ECMP imbalance, which "
                    "rails/units/nodes are hit and whether any GPU pair loses every path.",
        epilog="SPEC: a switch (spine-03), a link (leaf-su1-r2:spine-03), a cable id "
               "(c000123),\n  a role count (spine:2, worst case), a plane (plane:1), all-single, "
               "or A+B together\n\nexamples:\n"
               "  fabgen whatif pod-a.yaml --fail spine-01 --fail spine:2\n"
               "  fabgen whatif pod-a.yaml --fail all-single --min-bisection 0.9 "
               "--max-oversubscription 2.0\n\n"
               "exit codes: 0 every scenario within the limits, 1 a limit violated or bad input")
    p.add_argument("intent", metavar="INTENT")
    p.add_argument("--fail", action="append", required=True, metavar="SPEC",
                   help="what fails (repeatable)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--min-bisection", type=float, metavar="FRACTION",
                   help="exit 1 if any scenario keeps less than this share of the intact "
                        "bisection (0.9 = 90%%)")
    p.add_argument("--max-oversubscription", type=float, metavar="RATIO",
                   help="exit 1 if any scenario leaves a switch oversubscribed above RATIO:1")
    p.add_argument("--limit", type=int, default=50, help="rows in the table (0 = all)")
    p.add_argument("-q", "--quiet", action="store_true", help="print only violations")

    p = sub.add_parser(
        "verify-cabling", help="compare an InfiniBand fabric's ibnetdiscover output with the plan",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="List missing, extra and swapped cables (exact ports) and links running "
                    "below the planned width or speed, matching nodes by GUID or description.",
        epilog="example:\n  ibnetdiscover > fabric.txt && fabgen verify-cabling pod-a.yaml "
               "--ibnetdiscover fabric.txt\n\nexit codes: 0 the fabric matches the plan, "
               "1 findings or invalid input")
    p.add_argument("intent", metavar="INTENT")
    p.add_argument("--ibnetdiscover", required=True, metavar="FILE")
    p.add_argument("--plane", type=int, metavar="N", help="which plane FILE shows (1-based)")
    p.add_argument("--expect-speed", metavar="NAME",
                   help="speed to expect instead of the plan's (HDR for a simulated fabric)")
    p.add_argument("--json", action="store_true", help="print findings as JSON")

    p = sub.add_parser(
        "verify", help="compare SONiC/NVUE switches' saved show outputs with the plan",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Read DIR/<switch>/ (the files verify/collect-<platform>.sh saves: LLDP, "
                    "interfaces, BGP, PFC and PFC watchdog) and report every port, neighbour "
                    "or session that differs from the plan. EOS switches: run "
                    "verify/anta-catalog.yaml with ANTA.",
        epilog="example:\n  fabgen verify pod-a.yaml saved/ --devices 'leaf-*'\n\n"
               "exit codes: 0 every switch matches, 1 mismatches or invalid input, 2 usage")
    p.add_argument("intent", metavar="INTENT")
    p.add_argument("saved", metavar="DIR", help="one sub-directory of saved outputs per switch")
    p.add_argument("--devices", metavar="PATTERN", help="only switches matching this glob")
    p.add_argument("--checks", metavar="LIST",
                   help="comma-separated subset of: outputs, interfaces, lldp, bgp, pfc, "
                        "pfc-watchdog (default: all)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")

    p = sub.add_parser(
        "push", help="push rendered configs to switches (dry run by default)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Connect to each selected switch, load the rendered config and show the "
                    "device's diff (dry run, the default). With --commit: a canary, then "
                    "batches, each under commit-confirm (EOS session timer, NVUE apply "
                    "--confirm, a rollback timer fabgen arms on SONiC), stopping and rolling "
                    "back at the first failed batch. Credentials come from FABGEN_USERNAME / "
                    "FABGEN_PASSWORD or a prompt, never from the intent or a file.",
        epilog="examples:\n"
               "  fabgen push pod-a.yaml --hosts mgmt.yaml                    # dry run: diffs\n"
               "  fabgen push pod-a.yaml --hosts mgmt.yaml --commit --role leaf --batch-size 8\n"
               "\nexit codes: 0 every device ok, 1 a device failed, the rollout stopped, or "
               "bad input")
    p.add_argument("intent", metavar="INTENT")
    p.add_argument("--hosts", required=True, metavar="FILE",
                   help="YAML: switch name -> management host[:port]")
    p.add_argument("-r", "--render-dir", metavar="DIR", help="rendered configs (default out/NAME)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", dest="commit", action="store_false",
                      help="show each device's diff, change nothing (default)")
    mode.add_argument("--commit", dest="commit", action="store_true",
                      help="apply: canary, then batches, with commit-confirm and rollback")
    p.set_defaults(commit=False)
    p.add_argument("--devices", metavar="GLOB[,GLOB]", help="only these switches")
    p.add_argument("--role", default="", metavar="ROLES", help="only these roles (leaf,spine,core)")
    p.add_argument("--rail", default="", metavar="RAILS", help="only leaves of these rails (0,3)")
    p.add_argument("--workers", type=int, default=8, help="devices at once (default 8)")
    p.add_argument("--timeout", type=int, default=60, help="per-command timeout, s")
    p.add_argument("--apply-timeout", type=int, default=300, help="applying command timeout, s")
    p.add_argument("--canary", metavar="GLOB", help="canary devices (default: the first leaf)")
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--max-tier-fraction", type=float, default=0.25, metavar="F",
                   help="at most this share of a failure domain (a unit's leaves, a pod's "
                        "spines) in one batch (default 0.25)")
    p.add_argument("--health-timeout", type=float, default=60.0, metavar="SECONDS",
                   help="wait this long for BGP sessions to be Established before confirming "
                        "(0: no health check)")
    p.add_argument("--confirm-timeout", type=int, default=600,
                   help="seconds before an unconfirmed commit rolls back")
    p.add_argument("--known-hosts", metavar="FILE", help="default ~/.ssh/known_hosts")
    p.add_argument("--accept-new-host-keys", action="store_true",
                   help="accept and record unknown host keys (changed keys are always refused)")
    p.add_argument("--audit", metavar="FILE", help="JSON-lines audit log")
    p.add_argument("--sonic-apply", choices=("reload", "replace"), default="reload")
    p.add_argument("--username", help="login name (else FABGEN_USERNAME)")
    p.add_argument("--ssh-config", metavar="FILE")
    p.add_argument("--no-diff", action="store_true", help="do not print diffs")
    common(p)

    sub.add_parser("schema", help="print the intent's JSON Schema")

    examples = "\n".join(f"  {name:<20} {resources.example_summary(name)}"
                         for name in resources.examples())
    p = sub.add_parser(
        "init", help="write a starter intent from one of the examples",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Write an example intent to edit, and the JSON Schema beside it (its "
                    "`# yaml-language-server: $schema=` line points there, so editors complete "
                    "and check keys). Existing files are never replaced without --force.",
        epilog=f"examples (EXAMPLE):\n{examples}\n\n"
               "  fabgen init && fabgen render              ./fabgen.yaml, rendered to out/NAME\n"
               "  fabgen init ib-ndr-1024 -o pods/ib.yaml   another example, another file\n\n"
               "exit codes: 0 written, 1 a file exists (nothing written)")
    p.add_argument("example", nargs="?", default=resources.DEFAULT_EXAMPLE, metavar="EXAMPLE",
                   choices=list(resources.examples()),
                   help=f"which example (default: {resources.DEFAULT_EXAMPLE})")
    p.add_argument("-o", "--output", metavar="FILE", default=str(LOCAL_INTENT),
                   help=f"the intent file to write (default: {LOCAL_INTENT})")
    p.add_argument("--force", action="store_true", help="replace existing files")
    p.add_argument("-q", "--quiet", action="store_true", help="print errors only")
    return parser


def _warnings(console: Console, diags: Sequence[Diagnostic]) -> None:
    for diag in diags:
        console.diagnostic(diag)


def cmd_validate(args: argparse.Namespace, console: Console) -> int:
    from fabgen.intent import load

    results: list[dict[str, Any]] = []
    status = EXIT_OK
    for path in args.intents:
        try:
            loaded = load(path, strict=args.strict)
        except FabgenError as exc:
            status = EXIT_INVALID
            results.append({"file": path, "valid": False,
                            "errors": [d.render() for d in exc.diagnostics]})
            if not args.json:
                _warnings(console, exc.diagnostics)
            continue
        problems = _dry_render(loaded)
        if problems:
            status = EXIT_INVALID
            results.append({"file": path, "valid": False,
                            "errors": [d.render() for d in problems]})
            if not args.json:
                _warnings(console, [*loaded.warnings, *problems])
            continue
        results.append({"file": path, "valid": True,
                        "warnings": [d.render() for d in loaded.warnings]})
        if not args.json:
            _warnings(console, loaded.warnings)
            console.info(f"{path}: ok")
    if args.json:
        print(json.dumps(results, indent=2))
    return status


def _dry_render(loaded: LoadedIntent) -> list[Diagnostic]:
    """Render every file in memory and drop it: what render would refuse, validate refuses
    (a file the intent names, such as a cable-length sheet, with its own file:line:col).
    One file at a time, so a large fabric costs time but not memory."""
    from fabgen.render import RenderError, render_iter

    try:
        with _placed(loaded):
            for _path, content in render_iter(loaded):
                if not isinstance(content, str):
                    for _chunk in content:
                        pass
    except RenderError as exc:
        return [Diagnostic(str(exc), file=loaded.source.path)]
    except FabgenError as exc:
        return list(exc.diagnostics)
    return []


@contextlib.contextmanager
def _placed(loaded: LoadedIntent) -> Iterator[None]:
    """An intent error found while rendering (a file the intent names) gets its file:line:col
    like every other: renderers know the field, the intent's source knows where it is."""
    try:
        yield
    except FabgenError as exc:
        raise FabgenError([loaded.source.place(d) if d.file is None else d
                           for d in exc.diagnostics]) from None


def cmd_render(args: argparse.Namespace, console: Console) -> int:
    from fabgen import output
    from fabgen.intent import load
    from fabgen.jobs import available_cores
    from fabgen.render import render_iter

    with default_intent(args.intent, console) as intent_path:
        loaded = load(intent_path, strict=args.strict)
    if not args.json:
        _warnings(console, loaded.warnings)
    only = [n.strip() for item in args.only for n in item.split(",") if n.strip()] \
        if args.only is not None else None
    if only == []:
        console.error("--only needs at least one target or group")
        return EXIT_USAGE
    partial = only is not None or args.devices is not None
    dest = Path(args.output) if args.output else Path("out") / loaded.intent.name
    if partial and not args.check and output.holds_full_render(dest):
        raise output.OutputError(f"{dest} holds a full render; write a partial render "
                                 "(--only/--devices) to another directory")
    with progress_bar(console, enabled=not (args.json or args.quiet)) as progress, \
            _placed(loaded):
        # Files stream from the renderers into the writer (or the comparison) one at a time.
        files = render_iter(loaded, only=only, devices=args.devices, progress=progress,
                            jobs=args.jobs or available_cores())
        if args.check:
            result = output.check(dest, files, subset=partial)
        else:
            report = output.write(dest, files, follow_symlinks=args.follow_symlinks)
    if args.check:
        if args.json:
            print(json.dumps({"output": str(dest), "ok": result.ok, "changed": result.changed,
                              "missing": result.missing, "extra": result.extra}, indent=2))
        else:
            for label, paths in (("differs", result.changed), ("missing", result.missing),
                                 ("not rendered", result.extra)):
                for path in paths:
                    print(f"{dest / path}: {label}", file=sys.stderr)
            if result.ok:
                console.info(f"{dest}: up to date ({result.files} files)")
            else:
                n = len(result.changed) + len(result.missing) + len(result.extra)
                console.error(f"{dest}: {n} file(s) differ from a fresh render of {intent_path}")
        return EXIT_OK if result.ok else EXIT_INVALID
    if args.json:
        print(json.dumps({"output": str(dest), "files": report.files,
                          "warnings": [d.render() for d in loaded.warnings],
                          "kept": report.kept,
                          "restored": str(report.restored) if report.restored else None,
                          "removed": [str(p) for p in report.removed]}, indent=2))
        return EXIT_OK
    _write_notes(console, dest, report)
    console.info(f"wrote {report.files} files to {dest}")
    return EXIT_OK


def _jobs(text: str) -> int:
    """--jobs N: a whole number of processes, at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"at least 1 process, not {value}")
    return value


def _write_notes(console: Console, dest: Path, report: WriteReport) -> None:
    """What the writer did besides writing: said once, on stderr, never silently."""
    if report.restored is not None:
        console.info(f"note: {dest}: put back the previous render an interrupted run had "
                     f"left in {report.restored.name}", stream=sys.stderr)
    if report.removed:
        console.info(f"note: removed {len(report.removed)} temporary directory(ies) left by "
                     f"interrupted runs: {', '.join(p.name for p in report.removed)}",
                     stream=sys.stderr)
    if report.kept:
        shown = ", ".join(report.kept[:5]) + (" ..." if len(report.kept) > 5 else "")
        console.info(f"note: {dest}: kept {len(report.kept)} file(s) fabgen did not write: "
                     f"{shown}", stream=sys.stderr)


@contextlib.contextmanager
def default_intent(given: str | None, console: Console) -> Iterator[Path]:
    """The intent `fabgen render` reads: the one named, ./fabgen.yaml, or the built-in example
    (from the package: a wheel has no repository around it)."""
    if given:
        yield Path(given)
    elif LOCAL_INTENT.is_file():
        yield LOCAL_INTENT
    else:
        console.info(f"note: no INTENT given and no ./{LOCAL_INTENT}: rendering the built-in "
                     f"example {resources.DEFAULT_EXAMPLE}; `fabgen init` writes a starter "
                     "intent to edit", stream=sys.stderr)
        with importlib.resources.as_file(
                resources.examples()[resources.DEFAULT_EXAMPLE]) as path:
            yield path


@contextlib.contextmanager
def progress_bar(console: Console, enabled: bool) -> Iterator[Progress | None]:
    """A progress bar on stderr when it is a terminal; nothing when piped or in CI logs."""
    if not (enabled and sys.stderr.isatty()):
        yield None
        return
    from rich.console import Console as RichConsole
    from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as RichProgress

    # Redrawn on each step, not by rich's refresh thread: `--jobs` forks worker processes,
    # and forking while another thread holds a lock (the terminal's) can hang the child.
    bar = RichProgress(TextColumn("rendering {task.description:<12}"), BarColumn(),
                       TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(),
                       console=RichConsole(stderr=True, no_color=not console.color),
                       transient=True, auto_refresh=False)
    with bar:
        task = bar.add_task("", total=None)

        def update(name: str, done: int, total: int) -> None:
            bar.update(task, description=name, completed=done, total=total, refresh=True)

        yield update


def cmd_plan(args: argparse.Namespace, console: Console) -> int:
    from fabgen.intent import load
    from fabgen.jobs import paused_gc
    from fabgen.topology.build import build
    from fabgen.topology.summary import summarize

    loaded = load(args.intent, strict=args.strict)
    with paused_gc():
        summary = summarize(build(loaded.intent), loaded.intent)
    if args.json:
        print(json.dumps(summary, indent=2))
        return EXIT_OK
    _warnings(console, loaded.warnings)
    console.info(format_plan(summary))
    return EXIT_OK


def format_plan(summary: dict[str, Any]) -> str:
    sw, cables = summary["switches"], summary["cables"]
    lines = [
        f"{summary['name']}: {summary['nodes']} nodes, {summary['gpus']} GPUs, "
        f"{summary['transport']} {summary['speed_gbps']}G, {summary['tiers']} tiers, "
        f"{summary['planes']} plane(s)",
        "switches:      " + ", ".join(f"{k} {v}" for k, v in sw.items() if v),
        "cables:        " + ", ".join(f"{k} {v}" for k, v in cables.items() if v),
        "transceivers:  " + ", ".join(f"{k} {v}" for k, v in summary["transceivers"].items()),
        "oversubscription: " + ", ".join(f"{k} {v}" for k, v in
                                         summary["oversubscription"].items() if v),
        f"bisection:     {summary['bisection_gbps'] / 1000:g} Tb/s",
    ]
    if summary.get("sm_hosts"):  # InfiniBand: the subnet manager's dedicated hosts
        lines.append("sm hosts:      " + ", ".join(summary["sm_hosts"]))
    for role, net in summary.get("networks", {}).items():
        lines.append(f"{role + ':':<14} " + ", ".join(
            f"{k} {v} {net['switch_models'].get(k, '')}".rstrip()
            for k, v in net["switches"].items()) + f", {net['cables']} cables")
    lines += [f"warning: {w}" for w in summary.get("warnings", [])]
    return "\n".join(lines)


def cmd_diff(args: argparse.Namespace, console: Console) -> int:
    from fabgen import diff

    try:
        result = diff.diff(args.old, args.new, owned=not args.all)
    except diff.DiffError as exc:
        console.error(str(exc))
        return EXIT_INVALID
    if args.format == "json":
        print(json.dumps(result.to_json(), indent=2))
    else:
        text = diff.format_text(result, color=console.color and sys.stdout.isatty())
        sys.stdout.write(text.splitlines()[-1] + "\n" if args.quiet else text)
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
        for f in findings:
            print(f"{args.sheet}: {f.code}: {f.message}")
        print(f"{args.sheet}: {len(findings)} finding(s)" if findings
              else f"{args.sheet}: matches the plan")
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
        debug=args.debug)
    quiet = args.json or args.quiet
    if quiet or not (sys.stderr.isatty() and sys.stdout.isatty()):
        report = push.run(options, (lambda _: None) if quiet else _print_through)
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


def cmd_init(args: argparse.Namespace, console: Console) -> int:
    from fabgen.init import InitError, starter

    try:
        written = starter(args.example, Path(args.output), force=args.force)
    except InitError as exc:
        console.error(str(exc))
        return EXIT_INVALID
    intent = Path(args.output)
    then = "fabgen render" if intent == LOCAL_INTENT else f"fabgen render {intent}"
    console.info(f"wrote {', '.join(str(p) for p in written)} (example {args.example}); "
                 f"edit it, then: {then}")
    return EXIT_OK


def cmd_schema(args: argparse.Namespace, console: Console) -> int:
    from fabgen.schema import schema_text

    sys.stdout.write(schema_text())
    return EXIT_OK


COMMANDS: dict[str, Callable[[argparse.Namespace, Console], int]] = {
    "validate": cmd_validate,
    "render": cmd_render,
    "plan": cmd_plan,
    "schema": cmd_schema,
    "diff": cmd_diff,
    "check-cabling": cmd_check_cabling,
    "whatif": cmd_whatif,
    "verify-cabling": cmd_verify_cabling,
    "verify": cmd_verify,
    "push": cmd_push,
    "init": cmd_init,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    console = Console(quiet=getattr(args, "quiet", False),
                      color=False if args.no_color else None)
    try:
        code = COMMANDS[args.command](args, console)
        sys.stdout.flush()  # a closed pipe shows here, not at exit as "Exception ignored"
        return code
    except BrokenPipeError:
        return _closed_stdout()
    except FabgenError as exc:
        for diag in exc.diagnostics:
            console.diagnostic(diag)
        return EXIT_INVALID
    except KeyboardInterrupt:
        console.error("interrupted")
        return 130
    except Exception as exc:
        from fabgen.output import OutputError

        if args.debug:
            traceback.print_exc()
        from fabgen.intent.loader import CheckCrashed
        from fabgen.render import RenderError

        if isinstance(exc, OutputError | OSError | RenderError):
            console.error(_one_line(str(exc)))
            return EXIT_INVALID
        if isinstance(exc, MemoryError):
            console.error("out of memory (a ulimit or the machine's); the README's Scale "
                          "section says what a fabric of this size needs")
            return EXIT_INVALID
        what = "" if isinstance(exc, CheckCrashed) else f"{type(exc).__name__}: "
        console.error(f"internal error: {what}{_one_line(str(exc))} (rerun with --debug and "
                      "report it)")
        return EXIT_BUG


def _one_line(text: str, limit: int = 500) -> str:
    """An error as one readable line, however long or multi-line the exception's text."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _print_through(text: str) -> None:
    """print() for a push: a reader that goes away (`| head`) must not stop a rollout halfway,
    so a closed stdout is dropped and the push goes on."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        _closed_stdout()


def _closed_stdout() -> int:
    """The reader went away (`fabgen whatif ... | head`): stop quietly, as git and grep do.

    stdout is pointed at /dev/null so the interpreter's final flush cannot fail again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return EXIT_PIPE
