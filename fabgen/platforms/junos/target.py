"""The files fabgen writes per Junos switch, and the notes that say what is not sourced.

`junos/<switch>.json` (Juniper YANG JSON, what libyang validates), `junos/<switch>.conf`
(curly text, what the push loads), `junos/<switch>.set` (`set` commands), and `junos/NOTES.txt`
once per render.
"""

from __future__ import annotations

from fabgen import underlay
from fabgen.platforms.common.switch_target import SwitchTarget
from fabgen.platforms.junos import config, cos, facts, text
from fabgen.targets.base import Artifacts, RenderContext

__all__ = ["TARGET", "JunosTarget", "notes"]


def notes(ctx: RenderContext) -> list[str]:
    """What the Junos configs carry that no public source fixes, or that the plan could not
    set, in words an engineer acts on."""
    out = [
        *_ecn(ctx),
        "Shared buffer: NOT written. Juniper's JVD partitions (ingress lossless 66 / headroom "
        "24 / lossy 10, egress 66 / 10, dedicated 15 / 30) need 23.4X100; the 23.4R2-EVO "
        "schema has only `shared-buffer percent` (as have the published 24.2R1-EVO and "
        "24.4R1-EVO schemas). The switch keeps its default partitions.",
        f"MTU: media MTU = IP MTU + {facts.ETHERNET_OVERHEAD}; {facts.MAX_MEDIA_MTU} is the "
        "largest Juniper configures on the QFX5240 (JVD), not a published hardware maximum.",
        f"ECMP: `maximum-ecmp` up to {facts.MAX_ECMP} is the 23.4R2-EVO schema's ceiling; "
        "Juniper publishes no QFX5240 ECMP group limit.",
        "Telemetry: telemetry/gnmic-junos.yaml subscribes to paths of Juniper's 23.4R2-EVO "
        "models (OpenConfig and Juniper's augments: PFC frames per priority, queue tail and WRED "
        "drops, link, BGP and BFD state); which of them a QFX5240 streams is NOT verified on "
        "a switch, nor that it answers json_ietf for them. Those models have no PFC watchdog "
        "or ECN-mark counter, so neither is alerted on. The config streams zero counters too "
        "(`services analytics zero-suppression no-zero-suppression`): suppressed zeros would "
        "hide a queue's first drops from the alert.",
        "Verify: `show class-of-service congestion-notification` prints the watchdog's "
        "detection as pfc-wd-detection, which Juniper's RPC schema calls milliseconds while "
        "the configuration counts polls; verify takes either reading of the plan's value. How "
        "a DSCP input map prints its code points is not verified either (6 bits or a number "
        "are read as DSCP, 3 bits as 802.1p).",
    ]
    under = underlay.plan(ctx.intent)
    if under.keepalive_s * 3 != under.hold_s:
        out.append(f"BGP: Junos sets only the hold time ({under.hold_s} s) and sends "
                   f"keepalives every third of it, not every {under.keepalive_s} s.")
    return out


def _ecn(ctx: RenderContext) -> list[str]:
    plan = ctx.qos
    if plan is None or plan.ecn is None:
        return []
    low, high = cos.ecn_fill_levels(plan.ecn.min_bytes, plan.ecn.max_bytes)
    mb = cos.QUEUE_BUFFER_BYTES / 1e6
    return [f"ECN: the plan's {plan.ecn.min_bytes:,}..{plan.ecn.max_bytes:,} B are fill levels "
            f"{low}..{high} % of the queue, taking the QFX5240's whole {mb:.1f} MB buffer as "
            "the queue's allocation (rounded down: marking starts no later than planned, "
            "maybe earlier). Juniper publishes no per-queue allocation; NOT verified on a "
            "switch."]


class JunosTarget(SwitchTarget):
    name = facts.PLATFORM
    description = "Junos OS Evolved configuration per QFX5240 switch (JSON, text, set)"

    def __init__(self, platform: str = facts.PLATFORM) -> None:
        self.platform = platform  # which switches it renders (tests: another platform's)

    def render_unit(self, ctx: RenderContext, unit: str) -> Artifacts:
        cfg = config.device_config(ctx, ctx.index.switches[unit])
        out = {f"junos/{unit}.json": text.json_text(cfg),
               f"junos/{unit}.conf": text.curly_text(cfg),
               f"junos/{unit}.set": text.set_text(cfg)}
        if unit == self.first_unit(ctx):
            out["junos/NOTES.txt"] = "".join(f"- {line}\n" for line in notes(ctx))
        return out


TARGET = JunosTarget()
