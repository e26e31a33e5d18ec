"""PFC frame rates the day-two checks share: the rate that holds a link paused without a gap,
and the storm and pause-rate thresholds of a RoCE fabric (the alerting rules' and the post-
deploy checks' PFC budget over a window)."""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

from fabgen.intent.models import MonitoringSpec
from fabgen.platforms.registry import facts as registry
from fabgen.targets.base import RenderContext

__all__ = ["PAUSE_QUANTUM_BITS", "PFC_MAX_QUANTA", "PlannedSpeeds", "continuous_pause_pps",
           "pfc_thresholds", "planned_speeds", "thresholds"]

# IEEE 802.1Qbb: a PFC frame pauses a priority for up to 0xFFFF quanta of 512 bit times, so a
# link held paused without a gap needs at least speed / (65535 x 512) frames per second.
PFC_MAX_QUANTA = 0xFFFF
PAUSE_QUANTUM_BITS = 512


def continuous_pause_pps(speed_gbps: int) -> int:
    """PFC frames per second that keep a link of this speed paused without a gap (rounded
    down): speed / (65535 quanta x 512 bit times). 11,921/s at 400G."""
    return int(Fraction(speed_gbps * 10**9, PFC_MAX_QUANTA * PAUSE_QUANTUM_BITS))


def pfc_thresholds(ctx: RenderContext) -> tuple[int, int]:
    """(storm, pause-rate) frames per second the rules of this RoCE fabric use: the day-two
    counter checks' PFC budget is the pause rate over the elapsed window."""
    planned = {platform: speeds for platform in registry.names()
               if (speeds := planned_speeds(ctx, platform))}
    return thresholds(planned, ctx.intent.monitoring)


# Planned port speed (Gb/s) -> switch -> its ports at that speed, in port order; where one
# speed covers every port (the usual fabric) the ports are not listed.
PlannedSpeeds = dict[int, dict[str, list[str]]]


def planned_speeds(ctx: RenderContext, platform: str) -> PlannedSpeeds:
    """The cabled ports of the platform's switches by planned speed (empty: no such switch).
    A pass over their cables; the ports are named only when there is more than one speed."""
    switches = [s for s in ctx.fabric.switches if s.platform == platform]
    speeds = {link.speed_gbps for s in switches for link in ctx.index.links(s.name)}
    if len(speeds) <= 1:
        return {speed: {} for speed in speeds}
    by_speed: PlannedSpeeds = defaultdict(lambda: defaultdict(list))
    for sw in switches:
        for p in ctx.index.ports(sw):
            by_speed[p.link.speed_gbps][sw.name].append(p.name)
    return by_speed


def thresholds(planned: dict[str, PlannedSpeeds], mon: MonitoringSpec) -> tuple[int, int]:
    """(storm, pause-rate) frames per second: the intent's, or derived from the fabric's slowest
    planned link (the lowest rate that holds a link paused, so no link's storm goes unseen)."""
    slowest = min(speed for speeds in planned.values() for speed in speeds)
    storm = mon.pfc_storm_pps or continuous_pause_pps(slowest)
    pause = mon.pause_rate_pps or max(1, storm // 10)
    return storm, pause
