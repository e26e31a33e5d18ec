"""The Target protocol every renderer implements, and what it is given to render from."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from fabgen.intent.models import Intent
from fabgen.qos import QosPlan
from fabgen.topology.index import FabricIndex
from fabgen.topology.model import Fabric

Artifacts = dict[str, str]
T = TypeVar("T")
# What a streaming target yields: (path, text), the text whole or as chunks (a big table).
Stream = Iterator[tuple[str, str | Iterable[str]]]
TextStream = Iterator[tuple[str, str]]  # one whose files are all whole texts


@dataclass(frozen=True)
class RenderContext:
    """Everything a renderer may read. Renderers never mutate it and never touch the disk.

    `index` is the render's one FabricIndex (docs/architecture.md, "The fabric index"), built
    here with the context: targets look devices, ports and hosts up in it and never rebuild it.
    """

    intent: Intent
    fabric: Fabric
    qos: QosPlan | None = None  # RoCE fabrics only
    base_dir: Path | None = None  # the intent's directory, for files the intent names
    # The loader's warnings as the render prints them (file shown by name), for the report.
    warnings: tuple[str, ...] = ()
    # The intent's sha256 as manifest.json records it (the report's provenance line).
    intent_sha256: str = ""
    index: FabricIndex = field(init=False, repr=False, compare=False)
    _derived: dict[Callable[..., Any], Any] = field(init=False, repr=False, compare=False,
                                                    default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", FabricIndex(self.fabric))
        # The storage/management networks' indexes too, before any --jobs worker is forked:
        # the cabling and OpenSM targets both read them, maybe in two workers.
        _ = self.index.extras

    def derived(self, make: Callable[[RenderContext], T]) -> T:
        """`make(self)`, computed once per context: a per-render cache of what a target
        derives from the context for many devices (a platform's tables per port-list shape), kept
        no longer than the render. `make` must be a pure function of the context."""
        if make not in self._derived:
            self._derived[make] = make(self)
        value: T = self._derived[make]
        return value


class UnsupportedPlan(ValueError):
    """The plan asks for something a platform cannot express; the message names the target."""


class Target(Protocol):
    """One output family (cabling, report, a platform's configs...): {relative path: text}."""

    name: str
    description: str

    def applies(self, ctx: RenderContext) -> bool:
        """Whether this target has anything to say about this fabric (e.g. RoCE-only)."""
        ...

    def render(self, ctx: RenderContext) -> Artifacts:
        ...


class SplitTarget(Target, Protocol):
    """A target whose files fall into independent units (one per switch, per host), which
    fabgen.render renders one at a time (so memory stays flat however large the fabric) and
    spreads over processes (`--jobs`). `render(ctx)` must equal the units' files merged in
    `units(ctx)` order; `by_unit` implements it that way."""

    def units(self, ctx: RenderContext) -> Sequence[str]:
        """The units of this render, in output order (device names, usually)."""
        ...

    def render_unit(self, ctx: RenderContext, unit: str) -> Artifacts:
        ...


def by_unit(target: SplitTarget, ctx: RenderContext) -> Artifacts:
    """`render` of a SplitTarget: every unit's files, in unit order."""
    out: Artifacts = {}
    for unit in target.units(ctx):
        out.update(target.render_unit(ctx, unit))
    return out


class StreamingTarget(Target, Protocol):
    """A target whose output grows with the fabric also yields it a file (or a chunk of one)
    at a time; fabgen.render prefers this, so memory stays flat however large the fabric."""

    def render_iter(self, ctx: RenderContext) -> Stream:
        ...
