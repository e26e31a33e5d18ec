"""Commands that read an intent and render it: validate, render, plan, schema, and init,
which writes a starter intent."""

from __future__ import annotations

import argparse
import contextlib
import importlib.resources
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabgen import resources
from fabgen.cli.console import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    Console,
    UsageError,
)
from fabgen.errors import Diagnostic, FabgenError, one_line
from fabgen.render import Progress

if TYPE_CHECKING:
    from fabgen.intent.loader import LoadedIntent
    from fabgen.output import WriteReport


LOCAL_INTENT = Path("fabgen.yaml")  # what `fabgen init` writes; `fabgen render` reads it


def cmd_validate(args: argparse.Namespace, console: Console) -> int:
    from fabgen.intent import load

    results: list[dict[str, Any]] = []
    status = EXIT_OK
    for path in args.intents or [str(local_intent())]:
        try:
            loaded = load(path, strict=args.strict)
        except FabgenError as exc:
            status = EXIT_INVALID
            results.append({"file": path, "valid": False,
                            "errors": [d.render() for d in exc.diagnostics]})
            if not args.json:
                console.diagnostics(exc.diagnostics)
            continue
        problems = _dry_render(loaded)
        if problems:
            status = EXIT_INVALID
            results.append({"file": path, "valid": False,
                            "errors": [d.render() for d in problems]})
            if not args.json:
                console.diagnostics([*loaded.warnings, *problems])
            continue
        results.append({"file": path, "valid": True,
                        "warnings": [d.render() for d in loaded.warnings]})
        if not args.json:
            console.diagnostics(loaded.warnings)
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

    with default_intent(args.intent, console, args.output) as intent_path:
        loaded = load(intent_path, strict=args.strict)
    if not args.json:
        console.diagnostics(loaded.warnings)
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
    if not args.check and not args.force:
        # Neither named nor ./fabgen.yaml: default_intent read the built-in example.
        builtin = not args.intent and intent_path != LOCAL_INTENT
        _refuse_another_render(dest, loaded, builtin)
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
                    # A file fabgen did not write may be named anything: one line each.
                    print(one_line(f"{dest / path}: {label}"), file=sys.stderr)
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
        console.info(one_line(f"note: {dest}: kept {len(report.kept)} file(s) fabgen did not "
                              f"write: {shown}"), stream=sys.stderr)


def _refuse_another_render(dest: Path, loaded: LoadedIntent, builtin: bool) -> None:
    """A render replaces only a render of the same fabric: the manifest names the fabric (and
    the intent's hash), so pod-b's render never lands silently on pod-a's. The built-in
    example, read when no intent was named, replaces only a render of itself: a stray
    `fabgen render` in the wrong directory replaces no edited roce-256 of the user's."""
    from fabgen.output import OutputError, rendered_intent

    held = rendered_intent(dest)
    if held is None:
        return
    name, digest = held
    if name != loaded.intent.name:
        raise OutputError(f"{dest} holds the render of fabric {name!r}, not "
                          f"{loaded.intent.name!r} ({loaded.source.path}); --force replaces "
                          "it, or choose another -o DIR")
    if builtin and digest != loaded.source.sha256:
        raise OutputError(f"{dest} holds a render of a {name!r} intent that is not the "
                          "built-in example (its manifest.json has intent sha256 "
                          f"{digest[:12]}...); name the intent to render (fabgen render "
                          "INTENT), or --force replaces it")


def _note(text: str) -> None:
    """Which intent was read when none was named: said on stderr even with -q, since a
    quiet run in the wrong directory must still show what it rendered."""
    print(one_line(f"note: {text}"), file=sys.stderr)


def local_intent() -> Path:
    """./fabgen.yaml for a command given no INTENT that only reads (validate, plan): no
    built-in example there, since a check that passes on the wrong intent passes silently."""
    if not LOCAL_INTENT.is_file():
        raise UsageError(f"no INTENT given and no ./{LOCAL_INTENT}: name the intent, or "
                         "`fabgen init` writes a starter intent here")
    _note(f"no INTENT given: reading ./{LOCAL_INTENT}")
    return LOCAL_INTENT


@contextlib.contextmanager
def default_intent(given: str | None, console: Console,
                   output: str | None = None) -> Iterator[Path]:
    """The intent `fabgen render` reads: the one named, ./fabgen.yaml, or the built-in example
    (from the package: a wheel has no repository around it). The example is never rendered
    into a directory the user named: `-o configs/pod-a` without an intent is a mistake."""
    if given:
        yield Path(given)
    elif LOCAL_INTENT.is_file():
        yield local_intent()
    elif output is not None:
        raise UsageError(f"no INTENT given and no ./{LOCAL_INTENT}: name the intent to render "
                         f"into {output} (fabgen render INTENT -o {output}); the built-in "
                         "example renders only to its default out/NAME")
    else:
        _note(f"no INTENT given and no ./{LOCAL_INTENT}: rendering the built-in "
                      f"example {resources.DEFAULT_EXAMPLE}; `fabgen init` writes a starter "
                      "intent to edit")
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

    loaded = load(args.intent or local_intent(), strict=args.strict)
    with paused_gc():
        summary = summarize(build(loaded.intent), loaded.intent)
    if args.json:
        # The intent's warnings, as validate and render print them (file:line:col).
        summary["warnings"] = [d.render() for d in loaded.warnings]
        print(json.dumps(summary, indent=2))
        return EXIT_OK
    console.diagnostics(loaded.warnings)
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
    return "\n".join(lines)


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

