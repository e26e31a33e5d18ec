"""The Target protocol every renderer implements, and what it is given to render from."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from fabgen.intent.models import Intent
from fabgen.qos import QosPlan
from fabgen.topology.model import Fabric

Artifacts = dict[str, str]
# What a streaming target yields: (path, text), the text whole or as chunks (a big table).
Stream = Iterator[tuple[str, str | Iterable[str]]]
TextStream = Iterator[tuple[str, str]]  # one whose files are all whole texts


@dataclass(frozen=True)
class RenderContext:
    """Everything a renderer may read. Renderers never mutate it and never touch the disk."""

    intent: Intent
    fabric: Fabric
    qos: QosPlan | None = None  # RoCE fabrics only
    base_dir: Path | None = None  # the intent's directory, for files the intent names


class Target(Protocol):
    """One output family (cabling, report, sonic, ...): returns {relative path: text}."""

    name: str
    description: str

    def applies(self, ctx: RenderContext) -> bool:
        """Whether this target has anything to say about this fabric (e.g. RoCE-only)."""
        ...

    def render(self, ctx: RenderContext) -> Artifacts:
        ...


class StreamingTarget(Target, Protocol):
    """A target whose output grows with the fabric also yields it a device (or a chunk) at a
    time; fabgen.render prefers this, so memory stays flat however large the fabric."""

    def render_iter(self, ctx: RenderContext) -> Stream:
        ...
