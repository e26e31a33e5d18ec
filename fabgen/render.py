"""The pipeline: intent -> Fabric -> every target's files -> manifest. No disk, no network."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from fabgen import qos
from fabgen.errors import FabgenError
from fabgen.intent.loader import IntentSource, LoadedIntent
from fabgen.output import FileItem, text_of, with_streamed_manifest
from fabgen.targets import (
    RenderContext,
    Target,
    alerts,
    anta,
    cabling,
    collect,
    eos,
    ibdm,
    kubernetes,
    nccl,
    nic,
    nvue,
    opensm,
    preflight,
    rails,
    report,
    resolved,
    slurm,
    sonic,
    telemetry,
)
from fabgen.topology.build import build
from fabgen.topology.model import Fabric

Progress = Callable[[str, int, int], None]  # (target name, index, total)


def targets() -> dict[str, Target]:
    """Every target, in the order their files are produced (an explicit list, not discovery)."""
    order: list[Target] = [resolved.TARGET, cabling.TARGET, report.TARGET, sonic.TARGET,
                           eos.TARGET, nvue.TARGET, nic.TARGET, nccl.TARGET, preflight.TARGET,
                           opensm.TOPOLOGY_TARGET, opensm.TARGET, anta.TARGET, collect.TARGET,
                           telemetry.TARGET, alerts.TARGET, slurm.TARGET, kubernetes.TARGET,
                           ibdm.TARGET, rails.TARGET]
    return {t.name: t for t in order}


# `--only` accepts target names and these groups.
GROUPS: dict[str, tuple[str, ...]] = {
    "switches": ("sonic", "nvue", "eos"),
    "hosts": ("nic", "nccl", "preflight"),
    "infiniband": ("opensm", "ibtopology"),
    "daytwo": ("anta", "collect", "telemetry", "alerts"),
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
    wanted: set[str] = set()
    for name in only:
        if name in GROUPS:
            wanted.update(GROUPS[name])
        elif name in registry:
            wanted.add(name)
        else:
            choices = sorted([*registry, *GROUPS])
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


def render_iter(loaded: LoadedIntent, only: Iterable[str] | None = None,
                devices: str | None = None,
                progress: Progress | None = None) -> Iterator[FileItem]:
    """Every applicable target's files (or the selected ones) as each is produced, then
    manifest.json. Read each file's content before asking for the next (output.write and
    output.check do): a file may come as chunks, hashed for the manifest as they are read.

    The fabric is built and planned here, before the first file, so an input error is raised
    before a writer has created anything.
    """
    intent = loaded.intent
    names = select(only)
    ctx = RenderContext(intent=intent, fabric=build(intent),
                        qos=qos.plan(intent) if intent.fabric.transport == "roce" else None,
                        base_dir=Path(loaded.source.path).parent)
    keep = _device_filter(ctx.fabric, devices) if devices else None
    partial: dict[str, object] | None = None
    if only is not None or devices is not None:
        partial = {"only": names, "devices": devices}
    return with_streamed_manifest(_files(ctx, names, keep, progress, loaded.source),
                                  loaded.source.sha256,
                                  intent.name, partial=partial)


def _files(ctx: RenderContext, names: list[str], keep: Callable[[str], bool] | None,
           progress: Progress | None, source: IntentSource) -> Iterator[FileItem]:
    registry = targets()
    seen: set[str] = set()
    for i, name in enumerate(names):
        if progress:
            progress(name, i, len(names))
        target = registry[name]
        if not target.applies(ctx):
            continue
        try:
            # A streaming target gives one device's files at a time (memory stays flat as
            # the fabric grows); the others give their whole dict at once.
            stream = getattr(target, "render_iter", None)
            items: Iterable[FileItem] = (stream(ctx) if stream is not None
                                         else target.render(ctx).items())
            for path, content in items:
                if path in seen:
                    raise RenderError(f"target {name!r} writes {path}, already written by "
                                      "another")
                seen.add(path)
                if keep is None or keep(path):
                    yield path, content
        except eos.UnsupportedPlan as exc:
            raise RenderError(str(exc)) from None
        except FabgenError as exc:  # a target's complaint about an intent field: file:line:col
            raise FabgenError([d if d.file else source.place(d)
                               for d in exc.diagnostics]) from None
    if progress:
        progress("done", len(names), len(names))


def render(loaded: LoadedIntent, only: Iterable[str] | None = None,
           devices: str | None = None, progress: Progress | None = None) -> dict[str, str]:
    """Every file of the render in memory, manifest.json included (tests, small fabrics;
    the CLI streams with render_iter)."""
    return {path: text_of(content)
            for path, content in render_iter(loaded, only, devices, progress)}
