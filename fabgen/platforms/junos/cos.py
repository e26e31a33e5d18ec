"""The RoCE QoS plan as Junos `class-of-service`, in the shape of Juniper's YANG (RFC 7951 JSON).

DSCP classifier -> forwarding classes (one per plan class, on the plan's queue; the RDMA class
`no-loss` with its `pfc-priority`) -> congestion notification profiles (PFC on the RDMA DSCP at
ingress, pause honoured on the RDMA queue at egress, PFC watchdog) -> schedulers (strict-high
for CNP, transmit-rate shares for the others, ECN drop profile on the RDMA queue) -> one
scheduler map, applied with the classifier and a profile on every front-panel port.

Sources (see facts.py for the full references): [JVD] Juniper's QFX5240-64OD AI JVD
class-of-service, [DSCP-PFC] Juniper "Configuring DSCP-based PFC for Layer 3 Untagged
Traffic", [PFCWD] Juniper "PFC Watchdog", [YANG] junos-conf-class-of-service 23.4R2-EVO.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from fabgen.platforms.junos import facts
from fabgen.qos import QosPlan, TrafficClass

__all__ = [
    "CLASSIFIER",
    "PFC_PROFILE_PREFIX",
    "QUEUE_BUFFER_BYTES",
    "SCHEDULER_MAP",
    "UnsupportedPlan",
    "class_of_service",
    "ecn_fill_levels",
    "forwarding_class",
    "interface_cos",
    "pfc_profile",
    "transmit_percents",
]

CLASSIFIER = "fabgen-dscp"
SCHEDULER_MAP = "fabgen-sm"
ECN_PROFILE = "fabgen-ecn"
EMPTY = [None]  # an `empty` leaf in RFC 7951 JSON

# ECN marking thresholds: the plan's bytes (qos.ecn.min/max) as Junos drop-profile fill
# levels. A fill level is "a percentage of the memory used to store packets in relation to the
# total amount of memory allocated to the queue" [Juniper "Configuring CoS WRED Drop
# Profiles", traffic-mgmt-qfx/topics/task/cos-drop-profiles-qfx-series-cli.html], a whole
# percent [YANG drop-profiles interpolate fill-level, uint32 0..100]. Juniper publishes no
# QFX5240 per-queue allocation; the most a queue can be allocated is the switch's whole packet
# buffer, 165.2 MB [COS] (read as 10^6 bytes). Taking that as the base and rounding down makes
# each level's byte point no later than the plan's on any real allocation (a smaller queue
# reaches the same percentage at fewer bytes): Junos then marks no later than the plan says,
# at most earlier. A whole percent of 165.2 MB is 1.65 MB, so the plan's usual 150 KB..1.5 MB
# becomes 0..1 %: marking ramps from an empty queue to the plan's probability at 1.65 MB.
# NOTES.txt says so; no Juniper document or switch confirmed these levels.
QUEUE_BUFFER_BYTES = 165_200_000


def ecn_fill_levels(min_bytes: int, max_bytes: int) -> tuple[int, int]:
    """(start, end) fill levels in percent for the plan's ECN thresholds in bytes: rounded
    down, the end at least one above the start (Junos needs low < high) and below 100 (Juniper:
    "Do not configure the last fill level as 100 percent")."""
    low = min(min_bytes * 100 // QUEUE_BUFFER_BYTES, 98)
    high = min(max(max_bytes * 100 // QUEUE_BUFFER_BYTES, low + 1), 99)
    return low, high

# The strict-high CNP scheduler's transmit rate: Juniper gives the CNP queue
# `transmit-rate percent 5; priority strict-high` [JVD s2-cnp]; the round-robin classes share
# the rest, as Junos requires the transmit rates of a port to sum to at most 100 percent.
STRICT_PERCENT = 5

# Shared buffer partitions are NOT written. Juniper's QFX5240 AI JVD sets them (ingress
# lossless 66 / lossless-headroom 24 / lossy 10 percent, egress lossless 66 / lossy 10,
# dedicated-buffer ingress 15 / egress 30) on Junos OS Evolved 23.4X100-D31, but the 23.4R2-EVO
# YANG fabgen validates against has only `class-of-service shared-buffer percent` (no
# ingress/egress partitions, no dedicated-buffer): the switch keeps its default partitions,
# and NOTES says so. SHARED_BUFFER_JVD keeps Juniper's numbers for the release that takes them.
SHARED_BUFFER_JVD = {"ingress": {"lossless": 66, "lossless-headroom": 24, "lossy": 10},
                     "egress": {"lossless": 66, "lossy": 10},
                     "dedicated": {"ingress": 15, "egress": 30}}


class UnsupportedPlan(ValueError):
    """The plan asks for something Junos on the QFX5240 cannot express."""


def forwarding_class(cls: TrafficClass) -> str:
    return f"fabgen-{cls.name}"


def _bits(value: int, width: int) -> str:
    return format(value, f"0{width}b")


@dataclass(frozen=True, slots=True)
class _Queue:
    queue: int
    classes: tuple[TrafficClass, ...]
    strict: bool
    weight: int | None
    ecn: bool


def _queues(plan: QosPlan) -> list[_Queue]:
    by_queue: dict[int, list[TrafficClass]] = defaultdict(list)
    for cls in plan.classes:
        by_queue[cls.queue].append(cls)
    out = []
    for queue in sorted(by_queue):
        members = by_queue[queue]
        kinds = {(c.scheduling, c.weight) for c in members}
        if len(kinds) > 1:
            raise UnsupportedPlan(
                f"junos: classes {', '.join(c.name for c in members)} share queue {queue} with "
                "different scheduling; a queue has one scheduler")
        first = members[0]
        out.append(_Queue(queue, tuple(members), first.scheduling == "strict", first.weight,
                          any(c.ecn for c in members)))
    return out


def transmit_percents(weights: dict[int, int], total: int) -> dict[int, int]:
    """DWRR weights as whole transmit-rate percentages summing to `total`, by the largest
    remainder (ties: the larger weight, then the lower queue)."""
    whole = sum(weights.values())
    if not whole:
        return {}
    shares = {q: Decimal(total * w) / whole for q, w in weights.items()}
    out = {q: int(s) for q, s in shares.items()}
    order = sorted(shares, key=lambda q: (int(shares[q]) - shares[q], -weights[q], q))
    for q in order[:total - sum(out.values())]:
        out[q] += 1
    return out


PFC_PROFILE_PREFIX = "fabgen-pfc-"


def pfc_profile(length_m: int) -> str:
    """The congestion notification profile of ports whose cable is `length_m` long."""
    return f"{PFC_PROFILE_PREFIX}{length_m}m"


def _watchdog(plan: QosPlan) -> dict[str, Any] | None:
    """`pfc-watchdog { poll-interval; detection; recovery; watchdog-action; }` [PFCWD, YANG]:
    the plan's detection time as a whole number of the plan's polls."""
    wd = plan.watchdog
    if not wd.enabled:
        return None
    if wd.action not in facts.WATCHDOG_ACTIONS:
        raise UnsupportedPlan(f"junos: PFC watchdog action {wd.action!r} is not one of "
                              f"{', '.join(facts.WATCHDOG_ACTIONS)} [Juniper PFC Watchdog]")
    if wd.detection_ms % wd.poll_ms:
        raise UnsupportedPlan(f"junos: PFC watchdog detection {wd.detection_ms} ms is not a "
                              f"whole number of {wd.poll_ms} ms polls (`detection` counts polls)")
    for what, ms in (("poll", wd.poll_ms), ("recovery", wd.restoration_ms)):
        if ms > facts.WATCHDOG_MAX_MS:
            raise UnsupportedPlan(f"junos: PFC watchdog {what} {ms} ms is above "
                                  f"{facts.WATCHDOG_MAX_MS} ms (uint16 in Juniper's YANG)")
    return {"poll-interval": wd.poll_ms, "detection": wd.detection_ms // wd.poll_ms,
            "recovery": wd.restoration_ms, "watchdog-action": wd.action}


def class_of_service(plan: QosPlan, lengths: list[int]) -> dict[str, Any]:
    """Everything under `class-of-service` except the per-interface part (interface_cos)."""
    if not plan.pfc_priorities:
        raise UnsupportedPlan("junos: the plan has no lossless priority")
    rdma = plan.rdma
    queues = _queues(plan)
    strict = [q for q in queues if q.strict]
    dwrr = {q.queue: q.weight or 0 for q in queues if not q.strict}
    percents = transmit_percents(dwrr, 100 - STRICT_PERCENT * len(strict))
    classifier = {
        "name": CLASSIFIER,
        "forwarding-class": [
            {"name": forwarding_class(c),
             "loss-priority": [{"name": "low",
                                "code-points": [_bits(d, 6) for d in sorted(c.dscp)]}]}
            for c in plan.classes if c.dscp],
    }
    classes = []
    for c in sorted(plan.classes, key=lambda c: (c.queue, c.name)):
        entry: dict[str, Any] = {"name": forwarding_class(c), "queue-num": c.queue}
        if c.lossless:
            # [DSCP-PFC]: `no-loss` and the priority the pause frames carry.
            entry["no-loss"] = EMPTY
            entry["pfc-priority"] = c.priority
        classes.append(entry)
    watchdog = _watchdog(plan)
    profiles = []
    for length in sorted(set(lengths)):
        profile: dict[str, Any] = {"name": pfc_profile(length)}
        if watchdog is not None:
            profile["pfc-watchdog"] = watchdog
        profile["input"] = {
            # PFC headroom is sized by the switch from the attached cable's length
            # [Juniper "Configure CoS PFC with Congestion Notification Profiles": input
            # cable-length; YANG: a string, metres].
            "cable-length": str(length),
            "dscp": {"code-point": [{"name": _bits(d, 6), "pfc": EMPTY}
                                    for d in sorted(rdma.dscp)]},
        }
        # The RDMA queue pauses when the peer sends PFC on the RDMA priority [JVD: output
        # ieee-802.1 code-point 011 flow-control-queue 4].
        profile["output"] = {"ieee-802.1": {"code-point": [
            {"name": _bits(p, 3), "flow-control-queue": [rdma.queue]}
            for p in plan.pfc_priorities]}}
        profiles.append(profile)
    schedulers = []
    scheduler_map = []
    for q in queues:
        name = f"fabgen-q{q.queue}"
        sched: dict[str, Any] = {"name": name}
        if q.strict:
            sched["transmit-rate"] = {"percent": STRICT_PERCENT}
            sched["priority"] = "strict-high"
        else:
            sched["transmit-rate"] = {"percent": percents[q.queue]}
        if q.ecn and plan.ecn is not None:
            sched["drop-profile-map"] = [{"loss-priority": "any", "protocol": "any",
                                          "drop-profile": ECN_PROFILE}]
            sched["explicit-congestion-notification"] = EMPTY
        schedulers.append(sched)
        for c in q.classes:
            scheduler_map.append({"name": forwarding_class(c), "scheduler": name})
    out: dict[str, Any] = {"classifiers": {"dscp": [classifier]}}
    if plan.ecn is not None:
        out["drop-profiles"] = [{"name": ECN_PROFILE, "interpolate": {
            "fill-level": list(ecn_fill_levels(plan.ecn.min_bytes, plan.ecn.max_bytes)),
            "drop-probability": [0, plan.ecn.probability]}}]
    out["forwarding-classes"] = {"class": classes}
    out["congestion-notification-profile"] = profiles
    out["scheduler-maps"] = [{"name": SCHEDULER_MAP,
                              "forwarding-class": sorted(scheduler_map,
                                                         key=lambda e: str(e["name"]))}]
    out["schedulers"] = schedulers
    return out


def interface_cos(name: str, length_m: int) -> dict[str, Any]:
    """`class-of-service interfaces <port>`: PFC profile, scheduler map, DSCP classifier."""
    return {"name": name, "congestion-notification-profile": pfc_profile(length_m),
            "scheduler-map": SCHEDULER_MAP,
            "unit": [{"name": 0, "classifiers": {"dscp": [{"name": CLASSIFIER}]}}]}
