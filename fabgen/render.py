"""The pipeline: intent -> Fabric -> every target's files -> manifest. No disk, no network."""

from __future__ import annotations

from collections.abc import Iterable

from fabgen import qos
from fabgen.intent.loader import LoadedIntent
from fabgen.output import with_manifest
from fabgen.targets import RenderContext, Target, resolved
from fabgen.topology.build import build


def targets() -> dict[str, Target]:
    """Every target, in the order their files are produced (an explicit list, not discovery)."""
    order: list[Target] = [resolved.TARGET]
    return {t.name: t for t in order}


class RenderError(RuntimeError):
    """Two targets claimed one path, or a target failed; the message names the target."""


def render(loaded: LoadedIntent, only: Iterable[str] | None = None) -> dict[str, str]:
    """Render every applicable target (or only those named) plus manifest.json."""
    intent = loaded.intent
    ctx = RenderContext(intent=intent, fabric=build(intent),
                        qos=qos.plan(intent) if intent.fabric.transport == "roce" else None)
    registry = targets()
    wanted = list(registry) if only is None else list(only)
    files: dict[str, str] = {}
    for name in wanted:
        target = registry[name]
        if not target.applies(ctx):
            continue
        for path, text in target.render(ctx).items():
            if path in files:
                raise RenderError(f"target {name!r} writes {path}, already written by another")
            files[path] = text
    return with_manifest(files, loaded.source.sha256, loaded.intent.name)
