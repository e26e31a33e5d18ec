"""What a platform adds to a render: its switch configs, its day-two files (post-deploy checks,
telemetry collectors, the series alerts read, saved outputs `fabgen verify` compares) and its
lines in the report.

The core's orchestrating targets (render, telemetry, alerts, collect, the report's sections)
ask every platform the fabric uses through registry/outputs.py, in output order. A platform
module never imports those orchestrators (they import the registry, which imports the
platforms): what the platforms share sits in `fabgen.platforms.common` or here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from fabgen.intent.models import MonitoringSpec
from fabgen.platforms.contract.facts import Facts
from fabgen.qos import QosPlan
from fabgen.targets.base import Artifacts, RenderContext, SplitTarget, Target
from fabgen.topology.model import Switch
from fabgen.underlay import Bfd
from fabgen.verify.expect import ExpectedSwitch
from fabgen.verify.findings import Finding

__all__ = ["Outputs", "SavedFile", "Signals"]


@dataclass(frozen=True, slots=True)
class Signals:
    """What one platform's collector calls each thing the alerts look at (PromQL selectors,
    with `{q}` for the lossless queue / priority and `{f}` for the fabric selector)."""

    platform: str
    device: str  # label naming the switch
    port: str  # label naming the interface
    pfc_rx: str  # counter: PFC frames received on the lossless priority
    pfc_tx: str  # counter: PFC frames sent on the lossless priority
    watchdog: str | None  # counter: PFC watchdog storms detected
    ecn_other: str | None  # counter: ECN-marked packets on queues other than the lossless one
    lossless_drops: str | None  # counter: packets dropped by the lossless queue
    bgp_down: str | None  # selector of sessions not Established (returns a series each)
    bgp_flaps: str | None  # counter: transitions into Established (for a state with no number)
    bgp_peer: str  # label naming the BGP neighbour
    bfd_up: str | None  # gauge: 1 while the BFD session is up (None: not exported)
    oper_up: str  # gauge: 1 while the port is up
    carrier: str | None  # counter of carrier transitions (None: count changes of oper_up)
    speed: str  # gauge: the port's speed
    speed_per_gbps: int  # `speed` units in one Gb/s
    queue_label: str = "queue"  # label naming the queue of `ecn_other`
    # Regex of its front-panel port names: the link rules (state, flaps, speed) read those
    # only, so a management port of its own speed and state does not alert; None: every port
    # the collector names is a fabric port.
    fabric_ports: str | None = None
    fabric_label: bool = True  # the collector tags every series with fabric=<name>
    # `carrier` is missing on some releases: where it is absent, fall back to counting changes
    # of `oper_up` (`<carrier> or (<oper changes> unless on(...) <carrier>)`).
    carrier_optional: bool = False
    # Selector returning a series per switch whose BGP state is not being collected (the
    # source is down or exports no session), so BgpSessionDown cannot be trusted there; `{job}`
    # is the collector's scrape job (`fabgen-<fabric>-<platform>-snmp`).
    bgp_unknown: str | None = None
    bgp_unknown_why: str = ""  # BgpStateUnknown's text: why the state may not be read
    bgp_unknown_check: str = ""  # and what to check on the switch
    bgp_flaps_why: str = ""  # BgpSessionFlapped's text: why `bgp_down` is None


@dataclass(frozen=True, slots=True)
class SavedFile:
    """One saved `show` output `fabgen verify` reads and the collect script saves."""

    name: str
    command: str  # run on the switch (as the admin account; sudo where it needs root)
    what: str
    bfd_only: bool = False  # saved and read only when the plan runs BFD


Reader = Callable[[str], str | None]


class Outputs:
    """One platform's outputs. A platform subclasses this in its `outputs.py`; `OUTPUTS` is the
    instance the registry lists. Defaults say "nothing of that kind"."""

    facts: Facts
    """Its facts (the registry checks that the names agree)."""
    target: SplitTarget
    """Its switch configs: a target named like the platform, one unit per switch of it, files
    under `<name>/`."""
    day_two: tuple[Target, ...] = ()
    """Fabric-wide targets of its own, rendered in the `daytwo` group before the collect,
    telemetry and alerts targets (a post-deploy test catalog and its inventory)."""

    # --- telemetry and alerts ---------------------------------------------------------------
    prometheus_port: int | None = None
    """Where its collector serves Prometheus; None: no collector."""
    signals: Signals | None = None
    """Its series for the alert rules; None: no alert group."""
    bfd_telemetry_gap: str | None = None
    """Why its collector has no BFD session state (the report's sentence); None when it has."""

    def telemetry(self, ctx: RenderContext, switches: Sequence[Switch]) -> Artifacts:
        """Its collector's files for these switches of the fabric (telemetry/...)."""
        return {}

    def collector_howto(self, ctx: RenderContext) -> str | None:
        """The report's phrase saying how to run its collector."""
        return None

    def telemetry_setup(self, ctx: RenderContext) -> list[str]:
        """The report's lines on making the switches' telemetry reachable (certificates...)."""
        return []

    # --- fabgen verify and post-deploy checks -----------------------------------------------
    saved: tuple[SavedFile, ...] = ()
    """Outputs `fabgen verify` reads and verify/collect-<name>.sh saves; () when another tool
    verifies its switches (`verified_by`)."""
    clear_counters: str = ""
    """Command that clears the counters verify reads (the collect script's hint)."""
    verify_extra: str = ""
    """What its saved outputs let `fabgen verify` check beyond ports, LLDP, BGP and BFD, as the
    report says it (", PFC counters and ...")."""
    verified_by: str | None = None
    """How its switches are checked instead of `fabgen verify` (a day-two target's files)."""

    def findings(self, sw: ExpectedSwitch, texts: Mapping[str, str], plan: QosPlan,
                 limits: MonitoringSpec, checks: tuple[str, ...],
                 bfd: Bfd | None) -> list[Finding]:
        """Every difference between its saved outputs (`texts`, by file name) and the plan;
        ValueError when an output cannot be read."""
        return []

    def post_deploy_howto(self, ctx: RenderContext, bfd: bool) -> str | None:
        """The report's line on its post-deploy checks (its own test tool), or None."""
        return None

    def maintenance_howto(self, ctx: RenderContext) -> list[str]:
        """The report's lines on maintaining its switches (draining one), under Maintenance."""
        return []

    # --- the report ---------------------------------------------------------------------------
    hash_note: str = ""
    """What it is given for the plan's hash fields."""
    bfd_note: str = ""
    """How its BFD is configured."""
    spare_ports_note: str = ""
    """How a spare (uncabled) port is left."""

    def routing_notes(self, ctx: RenderContext) -> list[str]:
        """Report lines on how its switches hold their routing config (after BFD)."""
        return []

    def underlay_caveats(self, ctx: RenderContext) -> list[str]:
        """Report lines the operator must check on the switch (at the section's end)."""
        return []

    def headroom_rows(self, ctx: RenderContext, switches: list[Switch],
                      plan: QosPlan) -> list[dict[str, str]] | None:
        """The headroom table's rows for one group of its switches (same role, model and
        split), computed from the code its configs are rendered with; None: not modelled
        (the report says NOT SIZED)."""
        return None

    def headroom_footnotes(self, rows: list[dict[str, str]]) -> list[str]:
        """The formulas the table's rows cite as (n), printed under it."""
        return []

    def report_notes(self, ctx: RenderContext) -> list[str]:
        """What its configs cannot make whole in this fabric (render facts the report's
        warnings list, not intent mistakes)."""
        return []
