"""The shape every platform's config target shares: one unit per switch running the platform,
rendered only for a RoCE fabric (one with a QoS plan)."""

from __future__ import annotations

from collections.abc import Sequence

from fabgen.targets.base import Artifacts, RenderContext, by_unit

__all__ = ["SwitchTarget"]


class SwitchTarget:
    """A platform's per-switch config target; a subclass names its platform and renders one
    switch (`render_unit`)."""

    name: str
    description: str
    platform: str  # the switches it renders: those whose platform this is

    def applies(self, ctx: RenderContext) -> bool:
        return ctx.qos is not None and any(s.platform == self.platform
                                           for s in ctx.fabric.switches)

    def units(self, ctx: RenderContext) -> Sequence[str]:
        return [s.name for s in ctx.fabric.switches if s.platform == self.platform]

    def first_unit(self, ctx: RenderContext) -> str:
        """The first switch of the platform (files written once, beside its config)."""
        return next(s.name for s in ctx.fabric.switches if s.platform == self.platform)

    def render_unit(self, ctx: RenderContext, unit: str) -> Artifacts:
        raise NotImplementedError

    def render(self, ctx: RenderContext) -> Artifacts:
        return by_unit(self, ctx)
