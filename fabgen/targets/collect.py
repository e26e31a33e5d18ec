"""Collect target: `verify/collect-<platform>.sh` for each platform whose switches `fabgen
verify` checks, which saves on a switch exactly the `show` outputs verify reads (the
platform's `saved`, the one list both use), in the directory layout it expects."""

from __future__ import annotations

from fabgen import templating, underlay
from fabgen.platforms.contract.outputs import Outputs
from fabgen.platforms.registry import outputs as platforms
from fabgen.targets.base import Artifacts, RenderContext

__all__ = ["TARGET", "CollectTarget"]


class CollectTarget:
    name = "collect"
    description = "scripts saving each switch's show outputs for fabgen verify"

    def applies(self, ctx: RenderContext) -> bool:
        return ctx.qos is not None and bool(_verified(ctx))

    def render(self, ctx: RenderContext) -> Artifacts:
        bfd = underlay.plan(ctx.intent).bfd is not None
        return {f"verify/collect-{p}.sh": templating.render(
            "collect/collect.sh.j2", platform=p, platform_title=o.facts.title,
            intent_name=ctx.intent.name, clear_hint=o.clear_counters,
            files=tuple(f for f in o.saved if bfd or not f.bfd_only))
            for p, o in _verified(ctx)}


def _verified(ctx: RenderContext) -> list[tuple[str, Outputs]]:
    """The fabric's platforms whose saved outputs `fabgen verify` reads, by name."""
    used = {s.platform for s in ctx.fabric.switches}
    return sorted(((o.facts.name, o) for o in platforms.all()
                   if o.facts.name in used and o.saved), key=lambda named: named[0])


TARGET = CollectTarget()
