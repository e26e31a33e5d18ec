"""Collect target: `verify/collect-sonic.sh` and `verify/collect-nvue.sh`, which save on a
switch exactly the `show` outputs `fabgen verify` reads (fabgen/verify/saved.py COMMANDS, the
one list both use), in the directory layout it expects."""

from __future__ import annotations

from fabgen import templating, underlay
from fabgen.targets.base import Artifacts, RenderContext
from fabgen.verify import saved

__all__ = ["TARGET", "CollectTarget"]

_TITLE = {"sonic": "SONiC", "nvue": "Cumulus NVUE"}
_CLEAR = {"sonic": "sonic-clear pfccounters; sonic-clear queuecounters; sonic-clear pfcwd",
          "nvue": "nv action clear interface counters"}


class CollectTarget:
    name = "collect"
    description = "scripts saving each SONiC/NVUE switch's show outputs for fabgen verify"

    def applies(self, ctx: RenderContext) -> bool:
        return ctx.qos is not None and any(s.platform in saved.COMMANDS
                                           for s in ctx.fabric.switches)

    def render(self, ctx: RenderContext) -> Artifacts:
        platforms = sorted({s.platform for s in ctx.fabric.switches} & set(saved.COMMANDS))
        bfd = underlay.plan(ctx.intent).bfd is not None
        return {f"verify/collect-{p}.sh": templating.render(
            "collect/collect.sh.j2", platform=p, platform_title=_TITLE[p],
            intent_name=ctx.intent.name, clear_hint=_CLEAR[p], files=saved.commands(p, bfd))
            for p in platforms}


TARGET = CollectTarget()
