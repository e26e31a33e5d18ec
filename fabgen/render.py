"""The pipeline: intent -> Fabric -> every target's files -> manifest. No disk, no network."""

from __future__ import annotations

import fnmatch
import gc
import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from fabgen import jobs as jobs_module
from fabgen import qos
from fabgen.errors import FabgenError
from fabgen.intent.loader import IntentSource, LoadedIntent
from fabgen.intent.models import Intent
from fabgen.output import FileItem, text_of, with_streamed_manifest
from fabgen.platforms.registry import outputs as platforms
from fabgen.targets import (
    RenderContext,
    Target,
    alerts,
    cable_lengths,
    cabling,
    collect,
    ibdm,
    kubernetes,
    nccl,
    nic,
    opensm,
    preflight,
    rails,
    report,
    resolved,
    slurm,
    telemetry,
)
from fabgen.targets.base import SplitTarget, UnsupportedPlan
from fabgen.topology.build import build
from fabgen.topology.model import Fabric

Progress = Callable[[str, int, int], None]  # (target name, index, total)


def targets() -> dict[str, Target]:
    """Every target, in the order their files are produced (an explicit list, not discovery):
    the registered platforms' switch configs and day-two targets in their output order."""
    switches = [o.target for o in platforms.all()]
    day_two = [t for o in platforms.all() for t in o.day_two]
    order: list[Target] = [resolved.TARGET, cabling.TARGET, report.TARGET, *switches,
                           nic.TARGET, nccl.TARGET, preflight.TARGET,
                           opensm.TOPOLOGY_TARGET, opensm.TARGET, *day_two, collect.TARGET,
                           telemetry.TARGET, alerts.TARGET, slurm.TARGET, kubernetes.TARGET,
                           ibdm.TARGET, rails.TARGET]
    return {t.name: t for t in order}


def groups() -> dict[str, tuple[str, ...]]:
    """The groups `--only` accepts besides target names (the registered platforms' targets in
    `switches` and `daytwo`)."""
    return {
        "switches": tuple(o.target.name for o in platforms.all()),
        "hosts": ("nic", "nccl", "preflight"),
        "infiniband": ("opensm", "ibtopology"),
        "daytwo": (*(t.name for o in platforms.all() for t in o.day_two), "collect",
                   "telemetry", "alerts"),
        "scheduler": ("slurm", "kubernetes"),
        "bringup": ("ibdm", "rails"),
    }


class RenderError(RuntimeError):
    """Two targets claimed one path, or a selection names nothing; the message says which."""


def select(only: Iterable[str] | None) -> list[str]:
    """Expand `--only` names and groups into target names, in registry order."""
    registry = targets()
    if only is None:
        return list(registry)
    named = groups()
    wanted: set[str] = set()
    for name in only:
        if name in named:
            wanted.update(named[name])
        elif name in registry:
            wanted.add(name)
        else:
            choices = sorted([*registry, *named])
            raise RenderError(f"--only: unknown target {name!r} (choose from "
                              f"{', '.join(choices)})")
    return [n for n in registry if n in wanted]


def _device_filter(fabric: Fabric, pattern: str) -> Callable[[str], bool]:
    """Keep a file when a path component names a matching device, or names no device at all.

    Fabric-wide files (cabling, report, manifest) are kept: they describe the matching devices
    too. Per-device files are recognised by a path component equal to a device name or its stem.
    """
    devices = ({s.name for s in fabric.switches} | {h.name for h in fabric.hosts}
               | {h.name for h in fabric.sm_hosts})
    matching = {d for d in devices if fnmatch.fnmatchcase(d, pattern)}
    if not matching:
        raise RenderError(f"--devices {pattern!r} matches no switch or host of {fabric.name}")

    def keep(path: str) -> bool:
        named = [p for p in path.split("/") if p in devices or p.rsplit(".", 1)[0] in devices]
        return not named or any(p in matching or p.rsplit(".", 1)[0] in matching for p in named)

    return keep


@dataclass(frozen=True, slots=True)
class WorkItem:
    """One piece of a render: a whole target, or a run of a split target's units."""

    target: str
    units: tuple[str, ...] | None  # None: the whole target


# Units per work item: enough to amortise handing an item to a worker (a few hundred
# microseconds), few enough that several items per worker balance the load and a finished item
# (a few MB of configs at most) is small in memory.
MAX_UNITS_PER_ITEM = 64
ITEMS_PER_JOB = 8


def context(intent: Intent, base_dir: Path | None,
            warnings: tuple[str, ...] = (), intent_sha256: str = "") -> RenderContext:
    """Build and plan the fabric; the context (and its index) every target renders from.
    A RoCE fabric's measured cable lengths are read here, once, so a bad sheet is reported
    before any file is written (forked workers inherit them)."""
    ctx = RenderContext(intent=intent, fabric=build(intent),
                        qos=qos.plan(intent) if intent.fabric.transport == "roce" else None,
                        base_dir=base_dir, warnings=warnings, intent_sha256=intent_sha256)
    if ctx.qos is not None:
        ctx.derived(cable_lengths.cable_lengths)
    return ctx


def warning_lines(loaded: LoadedIntent) -> tuple[str, ...]:
    """The intent's warnings as `fabgen render` prints them, the file shown by its name alone
    so the report does not depend on the directory the render ran from."""
    return tuple(replace(d, file=Path(d.file).name if d.file else None).render()
                 for d in loaded.warnings)


def plan_work(ctx: RenderContext, names: list[str], jobs: int,
              devices: Callable[[str], bool] | None = None) -> list[WorkItem]:
    """The render cut into items, in output order. `devices` drops the units of devices that
    do not match `--devices` (the files of other units are kept)."""
    registry = targets()
    known = ctx.index.switches.keys() | ctx.index.hosts.keys()
    items: list[WorkItem] = []
    for name in names:
        target = registry[name]
        if not target.applies(ctx):
            continue
        split = getattr(target, "units", None)
        if split is None:
            items.append(WorkItem(name, None))
            continue
        units = [u for u in split(ctx) if devices is None or u not in known or devices(u)]
        size = max(1, min(MAX_UNITS_PER_ITEM, -(-len(units) // (jobs * ITEMS_PER_JOB))))
        items.extend(WorkItem(name, tuple(units[i:i + size]))
                     for i in range(0, len(units), size))
    return items


def render_item(ctx: RenderContext, item: WorkItem) -> Iterator[FileItem]:
    """The files of one work item, in order, as they are rendered: a split target's unit by
    unit, a streaming target's file by file (a big table as chunks), any other whole."""
    target = targets()[item.target]
    if item.units is not None:
        split: SplitTarget = target  # type: ignore[assignment]
        for unit in item.units:
            yield from split.render_unit(ctx, unit).items()
        return
    stream = getattr(target, "render_iter", None)
    yield from (stream(ctx) if stream is not None else target.render(ctx).items())


# What a worker renders from: set by `_rendered` before the pool starts, so a forked worker
# inherits it; a spawned worker builds the context from the intent in _init_worker.
_CONTEXT: RenderContext | None = None
_SPOOL: jobs_module.Spool | None = None


def _init_worker(intent: Intent, base_dir: Path | None, warnings: tuple[str, ...],
                 intent_sha256: str, spool: jobs_module.Spool) -> None:
    global _CONTEXT, _SPOOL
    _SPOOL = spool
    if _CONTEXT is None:  # spawned: nothing was inherited
        gc.disable()  # as the parent renders (jobs.paused_gc); the process ends with the pool
        _CONTEXT = context(intent, base_dir, warnings, intent_sha256)


def _render_in_worker(numbered: tuple[int, WorkItem]) -> jobs_module.Spooled:
    """Render an item; its files go back through the spool (big texts stay off the pipe)."""
    assert _CONTEXT is not None and _SPOOL is not None, "worker started without a context"
    number, item = numbered
    return _SPOOL.put(str(number), render_item(_CONTEXT, item))


def _rendered(ctx: RenderContext, items: list[WorkItem],
              jobs: int) -> Iterator[tuple[WorkItem, Iterable[FileItem]]]:
    """Each item with its files, in item order: rendered here as they are read (one process),
    or by `jobs` workers a bounded number of items ahead of the reader."""
    global _CONTEXT
    if jobs <= 1 or len(items) <= 1:
        for item in items:
            yield item, render_item(ctx, item)
        return
    _CONTEXT = ctx
    spool = jobs_module.Spool()
    results = jobs_module.ordered_map(_render_in_worker, enumerate(items), jobs,
                                      initializer=_init_worker,
                                      initargs=(ctx.intent, ctx.base_dir, ctx.warnings,
                                                ctx.intent_sha256, spool))
    try:
        try:
            first = next(results, None)
        except jobs_module.PoolUnavailable:
            # No processes or threads left to start workers with (a ulimit, a full machine):
            # the render is the same in this process, which then meets the limit itself.
            for item in items:
                yield item, render_item(ctx, item)
            return
        for item, spooled in zip(items, itertools.chain([first], results), strict=True):
            assert spooled is not None
            yield item, spool.take(spooled)
    finally:
        results.close()  # stops the workers now, also when the reader gave up early
        spool.close()
        _CONTEXT = None


def render_iter(loaded: LoadedIntent, only: Iterable[str] | None = None,
                devices: str | None = None, progress: Progress | None = None,
                jobs: int = 1) -> Iterator[FileItem]:
    """Every applicable target's files (or the selected ones) as each is produced, then
    manifest.json. Read each file's content before asking for the next (output.write and
    output.check do): a file may come as chunks, hashed for the manifest as they are read.

    `jobs` > 1 spreads the work over that many processes (fabgen.jobs); the files, their order
    and the first error are those of `jobs` 1, which renders in this process.

    The fabric is built and planned here, before the first file, so an input error is raised
    before a writer has created anything.
    """
    intent = loaded.intent
    names = select(only)
    with jobs_module.paused_gc():
        try:
            ctx = context(intent, Path(loaded.source.path).parent, warning_lines(loaded),
                          loaded.source.sha256)
        except FabgenError as exc:  # a file the intent names (qos.cable_lengths_file)
            raise FabgenError([d if d.file else loaded.source.place(d)
                               for d in exc.diagnostics]) from None
    keep = _device_filter(ctx.fabric, devices) if devices else None
    matching = (lambda d: fnmatch.fnmatchcase(d, devices)) if devices else None
    items = plan_work(ctx, names, jobs, matching)
    partial: dict[str, object] | None = None
    if only is not None or devices is not None:
        partial = {"only": names, "devices": devices}
    return with_streamed_manifest(_files(ctx, items, jobs, keep, progress, loaded.source),
                                  loaded.source.sha256, intent.name, partial=partial)


def _files(ctx: RenderContext, items: list[WorkItem], jobs: int,
           keep: Callable[[str], bool] | None, progress: Progress | None,
           source: IntentSource) -> Iterator[FileItem]:
    seen: set[str] = set()
    with jobs_module.paused_gc():  # forked workers inherit the pause
        try:
            for i, (item, files) in enumerate(_rendered(ctx, items, jobs)):
                if progress:
                    progress(item.target, i, len(items))
                for path, content in files:
                    if path in seen:
                        raise RenderError(f"target {item.target!r} writes {path}, already "
                                          "written by another")
                    seen.add(path)
                    if keep is None or keep(path):
                        yield path, content
        except UnsupportedPlan as exc:
            raise RenderError(str(exc)) from None
        except FabgenError as exc:  # a target's complaint about an intent field: file:line:col
            raise FabgenError([d if d.file else source.place(d)
                               for d in exc.diagnostics]) from None
    if progress:
        progress("done", len(items), len(items))


def render(loaded: LoadedIntent, only: Iterable[str] | None = None,
           devices: str | None = None, progress: Progress | None = None,
           jobs: int = 1) -> dict[str, str]:
    """Every file of the render in memory, manifest.json included (tests, small fabrics;
    the CLI streams with render_iter)."""
    return {path: text_of(content)
            for path, content in render_iter(loaded, only, devices, progress, jobs)}
