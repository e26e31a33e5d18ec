"""The underlay plan: BGP timers, BFD, ECMP width and load balancing of a RoCE fabric.

One plan for every switch platform, resolved from the intent's `underlay` and `load_balancing`
sections, the way qos.py resolves the QoS plan: every platform's switch target prints these
values and invent none. `check` refuses, at load time and blamed on the intent's fields, what a
platform cannot express: more equal-cost paths than it installs, a hash field it cannot read,
adaptive load balancing where it has none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fabgen import catalog
from fabgen.errors import Diagnostics
from fabgen.intent.models import Intent
from fabgen.platforms.contract.facts import FIVE_TUPLE, EcmpLimit
from fabgen.platforms.registry import facts as registry
from fabgen.qos import used_platforms
from fabgen.topology import sizing

__all__ = [
    "ADAPTIVE",
    "BFD_PROFILE",
    "DEFAULT_HASH_FIELDS",
    "HASH_FIELDS",
    "MAX_ECMP",
    "Bfd",
    "EcmpLimit",
    "LoadBalancing",
    "UnderlayPlan",
    "check",
    "ecmp_paths",
    "ecmp_widths",
    "plan",
    "tiers_in_use",
]

Mode = Literal["hash", "adaptive"]

# Name of the BFD profile the platforms' FRR-based BGP configs attach to the BGP peers.
BFD_PROFILE = "fabgen"

# The ECMP hash's default input: the RoCEv2 5-tuple, which every registered platform's hash
# reads (each platform's facts cite its own document).
DEFAULT_HASH_FIELDS = FIVE_TUPLE

# Each platform's limits, from its facts (fabgen/platforms/<os>/facts.py, with sources): the
# most equal-cost paths it installs, the hash fields it can be told to use (intent names; the
# targets map them to theirs), and its adaptive load balancing or None.
MAX_ECMP: dict[str, EcmpLimit] = {f.name: f.ecmp for f in registry.all()}
HASH_FIELDS: dict[str, frozenset[str]] = {f.name: f.hash_fields for f in registry.all()}
ADAPTIVE: dict[str, str | None] = {f.name: f.adaptive for f in registry.all()}
# NICs that put RoCE packets of one QP back in order when a per-packet adaptive fabric
# delivers them out of order: NVIDIA's Spectrum-X SuperNICs (BlueField-3 SuperNIC; ConnectX-8
# SuperNIC) (NVIDIA Spectrum-X platform documentation, "adaptive routing ... the SuperNIC
# reorders").
REORDERING_NICS = frozenset({"bluefield-3", "connectx-8"})


@dataclass(frozen=True, slots=True)
class Bfd:
    interval_ms: int  # transmit and minimum receive interval
    multiplier: int

    @property
    def detection_ms(self) -> int:
        return self.interval_ms * self.multiplier


@dataclass(frozen=True, slots=True)
class LoadBalancing:
    mode: Mode
    hash_fields: tuple[str, ...]  # intent names, in the intent's order


@dataclass(frozen=True, slots=True)
class UnderlayPlan:
    """What every switch target prints for the underlay; none invents a number."""

    keepalive_s: int
    hold_s: int
    bfd: Bfd | None  # None: BFD off
    load_balancing: LoadBalancing


def plan(intent: Intent) -> UnderlayPlan:
    u, lb = intent.underlay, intent.load_balancing
    bfd = Bfd(u.bfd.interval_ms, u.bfd.multiplier) if u.bfd.enabled else None
    return UnderlayPlan(u.bgp.keepalive_s, u.bgp.hold_s, bfd,
                        LoadBalancing(lb.mode, tuple(lb.hash_fields)))


def ecmp_widths(shape: sizing.Shape) -> dict[str, int]:
    """Equal-cost paths one switch of each role has to a prefix of the fabric.

    Upwards every uplink is a path (a leaf reaches another leaf over all its spine links);
    downwards a prefix behind one lower switch is reached over the parallel links to it.
    """
    widths = {"leaf": shape.leaf_up, "spine": max(shape.spine_up, shape.leaf_spine_links)}
    if shape.tiers == 3:
        widths["core"] = shape.spine_core_links
    return widths


def ecmp_paths(platform: str, switch: str, width: int) -> int:
    """The `maximum-paths` a switch gets: its ECMP width, refused above the platform's limit
    (check() refuses such an intent first; this guards a target called on its own)."""
    limit = MAX_ECMP[platform]
    if width > limit.paths:
        raise ValueError(f"{platform}: {switch} needs {width} equal-cost paths; the platform "
                         f"installs at most {limit.paths} ({limit.source})")
    return max(1, width)


def tiers_in_use(intent: Intent) -> dict[str, str] | None:
    """Platform by role of the tiers the fabric has (the ECMP widths' roles); None when the
    fabric does not size (the sizing check reports it)."""
    try:
        shape = sizing.shape(intent)
    except sizing.SizingError:
        return None
    roles = used_platforms(intent)
    return {role: roles[role] for role in ecmp_widths(shape)}


def check(intent: Intent, diags: Diagnostics) -> None:
    """What the fabric's platforms cannot express, blamed on the intent's fields."""
    if intent.fabric.transport != "roce":
        for section in ("underlay", "load_balancing"):
            if section in intent.model_fields_set:
                diags.warn(f"the {section} section applies to RoCE only and is ignored for "
                           "InfiniBand (the subnet manager routes it)", (section,))
        return
    roles = used_platforms(intent)
    try:
        shape = sizing.shape(intent)
    except sizing.SizingError:
        return  # semantic._fit reports it
    for role, width in ecmp_widths(shape).items():
        platform = roles[role]
        limit = MAX_ECMP[platform]
        if width > limit.paths:
            diags.error(
                f"each {role} has {width} equal-cost paths, but {platform} installs at most "
                f"{limit.paths}: routes would use only part of the uplinks",
                ("platforms", role),
                f"{platform}'s limit: {limit.source}; use a platform that takes {width} paths, "
                f"or give each {role} fewer uplinks with more oversubscription or a smaller "
                "radix")
    lb = intent.load_balancing
    used = {roles[r] for r in ecmp_widths(shape)}
    for platform in sorted(used):
        missing = [f for f in lb.hash_fields if f not in HASH_FIELDS[platform]]
        if missing:
            diags.error(f"{platform} cannot hash on {', '.join(missing)}",
                        ("load_balancing", "hash_fields"),
                        f"{platform} takes: {', '.join(sorted(HASH_FIELDS[platform]))}")
    if lb.mode == "adaptive":
        # What each platform's adaptive mode needs is its own check (platforms/<os>/checks.py);
        # a per-packet one needs NICs that reorder.
        nic = intent.cluster.node.nic
        if nic not in REORDERING_NICS and any(registry.get(p).adaptive_reorders for p in used):
            known = catalog.nics().get(nic)
            diags.warn(f"per-packet adaptive routing delivers a QP's packets out of order; "
                       f"{known.name if known else nic} is not a Spectrum-X SuperNIC that puts "
                       "them back in order (BlueField-3, ConnectX-8)", ("load_balancing", "mode"))
    elif not {"src-port", "roce-dest-qp"} & set(lb.hash_fields):
        diags.warn("the hash reads neither src-port nor roce-dest-qp: all queue pairs between "
                   "two NICs take one path, whatever nccl.qps_per_connection is",
                   ("load_balancing", "hash_fields"), "add src-port (the RoCEv2 per-QP port)")
    elif intent.nccl.qps_per_connection == 1 and max(ecmp_widths(shape).values()) > 1:
        diags.warn("one queue pair per NCCL connection: each connection is a single flow the "
                   "ECMP hash pins to one uplink", ("nccl", "qps_per_connection"),
                   "use 4 or more so a connection's traffic spreads over several paths")
