"""The QosPlan: one resolved RoCE QoS plan that every switch, NIC and NCCL file is printed from.

DSCP -> switch priority (= 802.1p = traffic class) -> egress queue and ingress priority group.
Only the RDMA priority is lossless (PFC); CNP rides a strict-priority queue; everything the intent
does not name lands on priority 0, so no stray DSCP (24-31 on a NIC's default map) turns lossless.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from fabgen.errors import Diagnostics
from fabgen.intent.models import Intent
from fabgen.platforms.contract.facts import Capabilities
from fabgen.platforms.registry import facts as registry
from fabgen.topology import sizing

__all__ = ["CAPABILITIES", "Capabilities", "EcnProfile", "Mtus", "PfcWatchdog", "QosPlan",
           "TrafficClass", "check", "mtus", "plan", "used_platforms"]

ECT0 = 0b10  # ECN-capable transport (0) codepoint in the ToS byte's two low bits
DEFAULT_PRIORITY = 0
CABLE_FIELDS = ("cable_length_m", "fabric_cable_length_m")
Scheduling = Literal["strict", "dwrr"]


@dataclass(frozen=True, slots=True)
class TrafficClass:
    name: str  # rdma | cnp | <extra class> | default
    dscp: tuple[int, ...]  # DSCPs classified into this class (default: all unnamed ones)
    priority: int  # switch priority = PCP = traffic class
    queue: int  # egress queue
    pg: int  # ingress priority group (headroom is reserved for lossless PGs only)
    lossless: bool  # PFC on this priority
    scheduling: Scheduling
    weight: int | None  # DWRR weight (None for strict)
    ecn: bool  # WRED/ECN marking on this queue

    @property
    def tos(self) -> int:
        """The ToS byte a host sets for this class: DSCP << 2 | ECN bits."""
        return self.dscp[0] << 2 | (ECT0 if self.ecn else 0)


@dataclass(frozen=True, slots=True)
class EcnProfile:
    min_bytes: int
    max_bytes: int
    probability: int  # percent at max


@dataclass(frozen=True, slots=True)
class PfcWatchdog:
    enabled: bool
    detection_ms: int
    restoration_ms: int
    poll_ms: int
    action: Literal["drop", "forward", "alert"]


@dataclass(frozen=True, slots=True)
class QosPlan:
    """Everything a renderer needs; renderers read numbers from here and invent none."""

    classes: tuple[TrafficClass, ...]  # rdma, cnp, extras (intent order), default
    dscp_to_priority: tuple[int, ...]  # index = DSCP 0..63
    pfc_priorities: tuple[int, ...]
    ecn: EcnProfile | None
    watchdog: PfcWatchdog
    mtu: int  # switch ports
    host_mtu: int  # NIC netdevs
    cable_length_m: int  # host links
    fabric_cable_length_m: int  # switch-to-switch links
    speed_gbps: int
    mtu_note: str = ""  # why fabgen chose mtu/host_mtu (empty when the intent set both)
    core_cable_length_m: int | None = None  # spine-to-core links (None: fabric_cable_length_m)
    buffer_model: str = "auto"  # auto | a platform's buffer model (its facts' buffer_models)
    cable_defaults: tuple[str, ...] = ()  # cable-length fields the intent left to their default

    def cable_m(self, kind: str) -> int:
        """Cable length of a link class: node-leaf, leaf-spine or spine-core."""
        if kind == "node-leaf":
            return self.cable_length_m
        if kind == "spine-core" and self.core_cable_length_m is not None:
            return self.core_cable_length_m
        return self.fabric_cable_length_m

    def cls(self, name: str) -> TrafficClass:
        return next(c for c in self.classes if c.name == name)

    @property
    def rdma(self) -> TrafficClass:
        return self.cls("rdma")

    @property
    def cnp(self) -> TrafficClass:
        return self.cls("cnp")

    @property
    def priority_to_pg(self) -> tuple[int, ...]:
        """Lossless priorities get their own PG; the rest share PG 0."""
        return tuple(p if p in self.pfc_priorities else 0 for p in range(8))

    @property
    def pfc_vector(self) -> tuple[int, ...]:
        """PFC enable per priority 0..7, as mlnx_qos --pfc takes it."""
        return tuple(1 if p in self.pfc_priorities else 0 for p in range(8))


@dataclass(frozen=True, slots=True)
class Mtus:
    """The switch and host MTU of a fabric: the intent's, or defaults fitted to its platforms."""

    mtu: int
    host_mtu: int
    note: str  # the reasoning behind a default, for the report ("" when both were given)


def used_platforms(intent: Intent) -> dict[str, str]:
    """Switch platform by role, for the roles whose platform is set or inherited."""
    p = intent.platforms
    return {"leaf": p.leaf, "spine": p.spine or p.leaf, "core": p.core or p.spine or p.leaf}


def mtus(intent: Intent) -> Mtus:
    """qos.mtu when given, else the lowest maximum over the switch platforms used (one MTU on
    every hop); qos.host_mtu when given, else the model's 9000 unless the switch MTU is lower,
    then the switch MTU (a host MTU must fit inside the switch MTU)."""
    q = intent.qos
    given = q.model_fields_set
    notes = []
    mtu = q.mtu
    if "mtu" not in given:
        platforms = sorted(set(used_platforms(intent).values()))
        mtu = min(CAPABILITIES[p].max_mtu for p in platforms)
        limits = ", ".join(f"{p} {CAPABILITIES[p].max_mtu}" for p in platforms)
        sources = "; ".join(CAPABILITIES[p].source for p in platforms
                            if CAPABILITIES[p].max_mtu == mtu)
        notes.append(f"qos.mtu not set: {mtu}, the largest every switch platform of this "
                     f"fabric takes ({limits}; {sources})")
    host_mtu = q.host_mtu
    if "host_mtu" not in given:
        host_mtu = min(q.host_mtu, mtu)
        notes.append(f"qos.host_mtu not set: {host_mtu}, "
                     + ("which fits inside the switch MTU" if host_mtu == q.host_mtu else
                        f"the switch MTU, as {q.host_mtu} does not fit inside it"))
    return Mtus(mtu, host_mtu, "; ".join(notes))


def plan(intent: Intent) -> QosPlan:
    """Resolve the intent's qos section into the plan (RoCE; IB fabrics get none)."""
    q = intent.qos
    sizes = mtus(intent)
    ecn = EcnProfile(q.ecn.min, q.ecn.max, q.ecn.probability) if q.ecn.enabled else None
    rdma = TrafficClass("rdma", (q.rdma.dscp,), q.rdma.priority, q.rdma.priority,
                        q.rdma.priority, True, "dwrr", q.scheduler.rdma_weight, ecn is not None)
    cnp = TrafficClass("cnp", (q.cnp.dscp,), q.cnp.priority, q.cnp.priority, DEFAULT_PRIORITY,
                       False, "strict", None, False)
    extras = [TrafficClass(c.name, tuple(c.dscp), c.priority, c.priority, DEFAULT_PRIORITY,
                           False, "dwrr", c.weight, False) for c in q.classes]
    mapping = [DEFAULT_PRIORITY] * 64
    named: set[int] = set()
    for cls in (rdma, cnp, *extras):
        for dscp in cls.dscp:
            mapping[dscp] = cls.priority
            named.add(dscp)
    default = TrafficClass("default", tuple(d for d in range(64) if d not in named),
                           DEFAULT_PRIORITY, DEFAULT_PRIORITY, DEFAULT_PRIORITY, False, "dwrr",
                           q.scheduler.default_weight, False)
    wd = q.pfc_watchdog
    # Poll at most every 100 ms (Capabilities.min_watchdog_ms of every registered
    # platform, each cited in its facts) and at least twice
    # per detection window, so a storm is seen within the detection time.
    poll = max(100, min(wd.detection_ms // 2, 1000))
    return QosPlan(
        classes=(rdma, cnp, *extras, default),
        dscp_to_priority=tuple(mapping),
        pfc_priorities=(q.rdma.priority,),
        ecn=ecn,
        watchdog=PfcWatchdog(wd.enabled, wd.detection_ms, wd.restoration_ms, poll, wd.action),
        mtu=sizes.mtu,
        host_mtu=sizes.host_mtu,
        cable_length_m=q.cable_length_m,
        fabric_cable_length_m=q.fabric_cable_length_m,
        speed_gbps=sizing.link_speed(intent),
        mtu_note=sizes.note,
        core_cable_length_m=q.core_cable_length_m,
        buffer_model=q.buffer_model,
        cable_defaults=tuple(f for f in CABLE_FIELDS if f not in q.model_fields_set),
    )


# What each platform can express (its facts, fabgen/platforms/<os>/facts.py, with sources).
CAPABILITIES: dict[str, Capabilities] = {f.name: f.capabilities for f in registry.all()}


def check(intent: Intent, diags: Diagnostics) -> None:
    """Cross-device rules: the plan must be expressible on every platform the fabric uses."""
    if intent.fabric.transport != "roce":
        return
    q = intent.qos
    sizes = mtus(intent)
    _check_cables(intent, diags)
    if sizes.host_mtu > sizes.mtu:  # only when both are given: a default host MTU fits
        diags.error(f"host MTU {sizes.host_mtu} exceeds the switch MTU {sizes.mtu}; jumbo "
                    "frames from the NIC would be dropped", ("qos", "host_mtu"))
    for name in sorted(set(used_platforms(intent).values())):
        caps = CAPABILITIES[name]
        if sizes.mtu > caps.max_mtu:  # only when given: the default fits every platform
            diags.error(f"MTU {sizes.mtu} is above what {name} supports ({caps.max_mtu}); the "
                        "MTU must be the same on every hop", ("qos", "mtu"),
                        f"set qos.mtu to {caps.max_mtu} or less, or leave it out to get the "
                        f"largest every platform takes ({caps.source})")
        wd = q.pfc_watchdog
        if wd.enabled and wd.action not in caps.pfc_watchdog_actions:
            diags.error(f"{name} cannot take PFC watchdog action {wd.action!r}",
                        ("qos", "pfc_watchdog", "action"),
                        f"{name} supports: {', '.join(caps.pfc_watchdog_actions)}")
        for field in ("detection_ms", "restoration_ms"):
            value = getattr(wd, field)
            if wd.enabled and value % caps.watchdog_step_ms:
                diags.error(f"{name} sets PFC watchdog timers in {caps.watchdog_step_ms} ms "
                            f"steps; {value} ms is not one", ("qos", "pfc_watchdog", field))
        if wd.enabled and not caps.watchdog_restoration:
            why = f" ({caps.restoration_note})" if caps.restoration_note else ""
            diags.warn(f"{name} has no PFC watchdog restoration time; restoration_ms "
                       f"{wd.restoration_ms} applies on the other platforms only{why}",
                       ("qos", "pfc_watchdog", "restoration_ms"))
        if caps.strict_above_dwrr:
            dwrr = [q.rdma.priority, 0, *(c.priority for c in q.classes)]
            if q.cnp.priority < max(dwrr):
                diags.error(f"{name} puts strict-priority queues above round-robin ones; CNP "
                            f"priority {q.cnp.priority} is below DWRR priority {max(dwrr)}",
                            ("qos", "cnp", "priority"), "give CNP the highest priority (6 or 7)")
    # A switch schedules per queue: two classes on one queue cannot have two weights.
    seen: dict[int, tuple[str, int]] = {q.rdma.priority: ("rdma", q.scheduler.rdma_weight),
                                        0: ("default", q.scheduler.default_weight)}
    for i, cls in enumerate(q.classes):
        if cls.priority in (q.rdma.priority, q.cnp.priority):
            continue  # semantic.py already refuses a class on the RDMA or CNP priority
        other = seen.get(cls.priority)
        if other is not None and other[1] != cls.weight:
            diags.error(f"class {cls.name!r} shares priority {cls.priority} (one egress queue) "
                        f"with {other[0]!r} but asks weight {cls.weight}, not {other[1]}",
                        ("qos", "classes", i, "priority"),
                        "give it its own priority, or the same weight")
        seen.setdefault(cls.priority, (cls.name, cls.weight))


def _check_cables(intent: Intent, diags: Diagnostics) -> None:
    """PFC headroom is only as right as the cable length it is sized for: say when the intent
    left it to a default, and refuse a cable-length sheet outside the intent's directory. (A
    platform's own buffer rules are its checks: fabgen/platforms/<os>/checks.py.)"""
    q = intent.qos
    missing = [f for f in CABLE_FIELDS if f not in q.model_fields_set]
    if missing:
        assumed = ", ".join(f"{f} {getattr(q, f)} m" for f in missing)
        diags.warn(f"cable lengths not measured ({assumed} assumed): PFC headroom is sized "
                   "from them, and too short a length drops lossless traffic under incast",
                   ("qos",), "set qos." + " and qos.".join(missing) + " to the longest cable "
                   "of each class")
    name = q.cable_lengths_file
    if name is not None:
        # Read from the intent's directory, as infiniband.guids_file: an intent from a pull
        # request must not make CI read (and quote in its errors) a file outside the repository.
        parts = name.replace("\\", "/").split("/")
        if not name or name.startswith(("/", "~")) or ":" in parts[0] or ".." in parts:
            diags.error(f"{name!r} is not a path inside the intent's directory",
                        ("qos", "cable_lengths_file"), "put the sheet beside the intent and "
                        "name it relative to it, without '..'")
