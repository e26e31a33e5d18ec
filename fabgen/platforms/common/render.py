"""What the switch platforms' renderers share and no OS owns: the plan's classes grouped per
egress queue with DWRR weights as the bandwidth percentages switches take, the ECMP width of a
switch, and descriptions that cannot break a config line."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from decimal import Decimal

from fabgen import qos
from fabgen.qos import EcnProfile, QosPlan
from fabgen.targets.base import RenderContext, UnsupportedPlan
from fabgen.topology.index import FabricPort

__all__ = ["QueueSpec", "ecmp_width", "loopback_description", "queue_specs",
           "sanitize_description"]

# What a description may contain once it reaches a CLI line: letters, digits and a few
# separators. Everything else (`!` and `#` included, which start comments in CLI configs)
# becomes `_`.
_DESCRIPTION_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ._:/,+()@=-")
_DESCRIPTION_MAX = 200


def ecmp_width(ports: tuple[FabricPort, ...]) -> int:
    """How many equal-cost BGP paths a switch can have to one prefix.

    Towards the tier above, every uplink is a path (a leaf reaches another leaf through all its
    spine links); downwards, a prefix of one lower switch is reached over the parallel links to
    that switch. The wider of the two, at least 1.
    """
    uplinks = sum(1 for p in ports if p.uplink)
    parallel = Counter(p.peer for p in ports if p.peer_switch is not None and not p.uplink)
    return max(1, uplinks, max(parallel.values(), default=0))


def sanitize_description(text: str) -> str:
    """A description that cannot add a line or a comment to a config: one line of safe
    characters, runs of spaces collapsed, at most _DESCRIPTION_MAX characters."""
    cleaned = "".join(c if c in _DESCRIPTION_CHARS else "_" for c in text)
    return " ".join(cleaned.split())[:_DESCRIPTION_MAX]


def loopback_description(ctx: RenderContext) -> str:
    """The loopback carries the fabric's name and the intent's free-text description."""
    name = ctx.intent.name
    text = f"{name}: {ctx.intent.description}" if ctx.intent.description else name
    return sanitize_description(text)


@dataclass(frozen=True, slots=True)
class QueueSpec:
    """One egress queue as the plan's classes use it."""

    queue: int
    classes: tuple[str, ...]
    strict: bool
    percent: int | None  # DWRR share of the port, percent (None for strict)
    ecn: EcnProfile | None


def queue_specs(plan: QosPlan, target: str) -> tuple[QueueSpec, ...]:
    """The plan's classes grouped by egress queue, in queue order, with DWRR weights turned into
    the bandwidth percentages switches take (a percent of the port per queue, summing to at
    most 100, on every platform that schedules DWRR by share).

    Weights become percentages by the largest-remainder method: each queue gets
    floor(100 * w / sum(w)), then the points still missing to reach 100 go one each to the
    largest remainders (ties: the larger weight, then the lower queue, so equal weights keep
    equal shares where they can). Weights already summing to 100 pass unchanged.
    """
    by_queue: dict[int, list[qos.TrafficClass]] = defaultdict(list)
    for cls in plan.classes:
        by_queue[cls.queue].append(cls)
    for queue, members in by_queue.items():
        kinds = {(c.scheduling, c.weight) for c in members}
        if len(kinds) > 1:
            names = ", ".join(c.name for c in members)
            raise UnsupportedPlan(
                f"{target}: classes {names} share egress queue {queue} with different "
                "scheduling or weights; a switch schedules per queue, so give them one weight "
                "or different priorities")
    weights = {q: m[0].weight for q, m in by_queue.items()
               if m[0].scheduling == "dwrr" and m[0].weight is not None}
    total = sum(weights.values())
    percent: dict[int, int] = {}
    if total:
        shares = {q: Decimal(100 * w) / total for q, w in weights.items()}
        percent = {q: int(s) for q, s in shares.items()}
        missing = 100 - sum(percent.values())
        order = sorted(shares, key=lambda q: (int(shares[q]) - shares[q], -weights[q], q))
        for q in order[:missing]:
            percent[q] += 1
    specs = []
    for queue in sorted(by_queue):
        members = by_queue[queue]
        strict = members[0].scheduling == "strict"
        specs.append(QueueSpec(
            queue=queue, classes=tuple(c.name for c in members), strict=strict,
            percent=None if strict else percent[queue],
            ecn=plan.ecn if any(c.ecn for c in members) else None))
    return tuple(specs)
