"""The underlay plan: BGP timers, BFD, ECMP width and load balancing of a RoCE fabric.

One plan for every switch platform, resolved from the intent's `underlay` and `load_balancing`
sections, the way qos.py resolves the QoS plan: the SONiC, EOS and NVUE targets print these
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
from fabgen.platforms.nvue import facts as nvue
from fabgen.platforms.registry import facts as registry
from fabgen.qos import used_platforms
from fabgen.topology import sizing

__all__ = [
    "ADAPTIVE",
    "BFD_PROFILE",
    "DEFAULT_HASH_FIELDS",
    "FRR_BFD_DEFAULTS",
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
]

Mode = Literal["hash", "adaptive"]

# Name of the BFD profile FRR (SONiC) and later Cumulus releases attach to the BGP peers.
BFD_PROFILE = "fabgen"
# FRR bfdd's session defaults (FRR user guide, "BFD": detect-multiplier 3, receive-interval and
# transmit-interval 300 ms; bfdd/bfd.h BFD_DEFDETECTMULT, BFD_DEF_REQ_MIN_RX,
# BFD_DEF_DES_MIN_TX). SONiC's BGP schema turns BFD on per peer (`neighbor ... bfd`) and has no
# timer fields; other timers need BFD_PEER_SINGLE_HOP, which no SONiC YANG model covers
# (sonic-buildimage src/sonic-yang-models at 086b03bd70f9), so SONiC runs these.
FRR_BFD_DEFAULTS = (300, 3)  # (interval ms, multiplier)

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
    bfd = intent.underlay.bfd
    if "sonic" in used and bfd.enabled and (bfd.interval_ms, bfd.multiplier) != FRR_BFD_DEFAULTS:
        field = "interval_ms" if bfd.interval_ms != FRR_BFD_DEFAULTS[0] else "multiplier"
        diags.error(f"SONiC runs BFD at bfdd's defaults ({FRR_BFD_DEFAULTS[0]} ms x "
                    f"{FRR_BFD_DEFAULTS[1]}): its BGP schema has no BFD timers, and the table "
                    "that has (BFD_PEER_SINGLE_HOP) has no SONiC YANG model, so fabgen does not "
                    "write it", ("underlay", "bfd", field),
                    f"use interval_ms {FRR_BFD_DEFAULTS[0]} and multiplier "
                    f"{FRR_BFD_DEFAULTS[1]} with SONiC switches, or another platform")
    for platform in sorted(used):
        missing = [f for f in lb.hash_fields if f not in HASH_FIELDS[platform]]
        if missing:
            diags.error(f"{platform} cannot hash on {', '.join(missing)}",
                        ("load_balancing", "hash_fields"),
                        f"{platform} takes: {', '.join(sorted(HASH_FIELDS[platform]))}")
        if platform == "eos" and not set(DEFAULT_HASH_FIELDS) <= set(lb.hash_fields):
            diags.error("EOS hashes the routed 5-tuple and fabgen has no verified EOS command to "
                        "drop fields from it", ("load_balancing", "hash_fields"),
                        "keep src-ip, dst-ip, ip-protocol, src-port and dst-port")
    if lb.mode == "adaptive":
        _adaptive(intent, roles, used, shape, diags)
    elif not {"src-port", "roce-dest-qp"} & set(lb.hash_fields):
        diags.warn("the hash reads neither src-port nor roce-dest-qp: all queue pairs between "
                   "two NICs take one path, whatever nccl.qps_per_connection is",
                   ("load_balancing", "hash_fields"), "add src-port (the RoCEv2 per-QP port)")
    elif intent.nccl.qps_per_connection == 1 and max(ecmp_widths(shape).values()) > 1:
        diags.warn("one queue pair per NCCL connection: each connection is a single flow the "
                   "ECMP hash pins to one uplink", ("nccl", "qps_per_connection"),
                   "use 4 or more so a connection's traffic spreads over several paths")


def _adaptive(intent: Intent, roles: dict[str, str], used: set[str], shape: sizing.Shape,
              diags: Diagnostics) -> None:
    loc = ("load_balancing", "mode")
    if "sonic" in used:
        diags.error("SONiC has no adaptive routing or dynamic load balancing setting: the "
                    "SONiC YANG models have no such table", loc, "use mode: hash on SONiC switches")
    if "nvue" in used:
        for role in sorted(r for r in ecmp_widths(shape) if roles[r] == "nvue"):
            kind = shape.leaf if role == "leaf" else shape.spine if role == "spine" else \
                shape.core
            model = kind.model if kind is not None else None
            if model not in nvue.ADAPTIVE_MODELS or shape.speed_gbps not in nvue.ADAPTIVE_SPEEDS:
                diags.error(f"Cumulus adaptive routing needs Spectrum-4 switches at 200G or 400G; "
                            f"the {role}s are {model or 'custom'} at {shape.speed_gbps}G",
                            loc, "use mode: hash")
        nic = intent.cluster.node.nic
        if nic not in REORDERING_NICS:
            known = catalog.nics().get(nic)
            diags.warn(f"per-packet adaptive routing delivers a QP's packets out of order; "
                       f"{known.name if known else nic} is not a Spectrum-X SuperNIC that puts "
                       "them back in order (BlueField-3, ConnectX-8)", loc)
    if "eos" in used:
        diags.warn("EOS dynamic load balancing (`ip hardware fib load-balance distribution "
                   "dynamic`, EOS 4.24.2F and later) depends on the switch model, and Arista "
                   "publishes no list fabgen could check; confirm the model supports it", loc)
