"""Alerts target: `telemetry/prometheus-rules.yaml`, Prometheus alerting rules for a lossless
fabric, over the series the telemetry target's collectors produce.

One rule group per platform the fabric uses. Every threshold comes from the intent's
`monitoring` section or from the plan (the lossless priority and queue, the planned link
speeds); every metric name is one a real exporter produces, cited in `SIGNALS` below:
  SONiC  gnmic + sonic-gnmi COUNTERS_DB/APPL_DB/STATE_DB (telemetry.sonic_gnmic): the SAI
         counter names of sonic-swss (SAI_PORT_STAT_PFC_3_RX_PKTS, SAI_QUEUE_STAT_...); BGP
         state from FRR's BGP4-MIB by snmp_exporter (sonic_snmp).
  EOS    gnmic + EOS OpenConfig paths (telemetry.eos_gnmic), BFD session state included.
  NVUE   Cumulus Linux 5.12 OpenTelemetry export through an OTel collector (metric names from
         the "Open Telemetry Export" page's tables; `device` is the static label each NVUE
         switch's startup.yaml sets).
  InfiniBand  treydock/infiniband_exporter 0.10 (collectors/switch.go, hca.go): counters are
         labelled by GUID and port; the switch and HCA names of the node-name-map come from
         infiniband_switch_info / infiniband_hca_info and are joined onto every alert.
The rules are checked with `promtool check rules` and unit-tested with `promtool test rules`
(tests/test_alerts.py) on synthetic series of a PFC storm and of a healthy fabric.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from typing import Any

import yaml

from fabgen import underlay
from fabgen.intent.models import MonitoringSpec
from fabgen.qos import QosPlan
from fabgen.targets import sonic_snmp
from fabgen.targets.base import Artifacts, RenderContext

__all__ = [
    "PAUSE_QUANTUM_BITS",
    "PFC_MAX_QUANTA",
    "RULES",
    "SIGNALS",
    "TARGET",
    "AlertsTarget",
    "Signals",
    "continuous_pause_pps",
    "pfc_thresholds",
    "rules_data",
]

RULES = "telemetry/prometheus-rules.yaml"
# IEEE 802.1Qbb: a PFC frame pauses a priority for up to 0xFFFF quanta of 512 bit times, so a
# link held paused without a gap needs at least speed / (65535 x 512) frames per second.
PFC_MAX_QUANTA = 0xFFFF
PAUSE_QUANTUM_BITS = 512


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
    bgp_flaps: str | None  # counter: transitions into Established (NVUE has no state number)
    bgp_peer: str  # label naming the BGP neighbour
    bfd_up: str | None  # gauge: 1 while the BFD session is up (None: not exported)
    oper_up: str  # gauge: 1 while the port is up
    carrier: str | None  # counter of carrier transitions (None: count changes of oper_up)
    speed: str  # gauge: the port's speed
    speed_per_gbps: int  # `speed` units in one Gb/s
    # Selector returning a series per switch whose BGP state is not being collected (the
    # source is down or exports no session), so BgpSessionDown cannot be trusted there.
    bgp_unknown: str | None = None


SIGNALS: dict[str, Signals] = {
    "sonic": Signals(
        platform="sonic", device="source", port="interface",
        pfc_rx="sonic_port_SAI_PORT_STAT_PFC_{q}_RX_PKTS{f}",
        pfc_tx="sonic_port_SAI_PORT_STAT_PFC_{q}_TX_PKTS{f}",
        # pfcwdorch's own counters in the watched queue's COUNTERS hash (the queue path).
        watchdog="sonic_queue_PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED{f}",
        ecn_other='sonic_queue_SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS{f, queue!="{q}"}',
        lossless_drops='sonic_queue_SAI_QUEUE_STAT_DROPPED_PACKETS{f, queue="{q}"}',
        # BGP4-MIB bgpPeerState from FRR bgpd's AgentX subagent through the switch's snmpd, by
        # snmp_exporter (sonic_snmp: bgpmon, STATE_DB NEIGH_STATE_TABLE's writer, does not run
        # under frrcfgd). 6 is established.
        bgp_down=f"sonic_bgp_peer_state{{f}} != {sonic_snmp.ESTABLISHED}", bgp_flaps=None,
        bgp_peer=sonic_snmp.PEER_LABEL,
        # FRR bfdd's sessions are in no SONiC database: bfdorch's STATE_DB BFD_SESSION_TABLE
        # holds only sessions created through APPL_DB for hardware offload (sonic-swss
        # orchagent/bfdorch.cpp; SONiC "BFD HW offload for BGP" HLD, bfdsyncd), which fabgen's
        # BGP config does not ask for, and bfdd has no SNMP module. A BFD failure takes the BGP
        # session down (BgpSessionDown); `fabgen verify` reads `show bfd peers json`.
        bfd_up=None,
        bgp_unknown=("(up{job} == 0) or (up{job} == 1 unless on(source) "
                     "group by (source) (sonic_bgp_peer_state{f}))"),
        # APPL_DB flap_count (sonic-swss #3052, 2024-03); older releases have none and the rule
        # falls back to counting changes of the sampled oper state.
        oper_up="sonic_port_state_oper_up{f}", carrier="sonic_port_state_flap_count{f}",
        # STATE_DB PORT_TABLE speed: the speed the link came up at, Mb/s (APPL_DB's is the
        # configured speed, which cannot differ from the plan's).
        speed="sonic_port_oper_speed{f}", speed_per_gbps=1000),
    "eos": Signals(
        platform="eos", device="source", port="interface_name",
        pfc_rx='eos_pfc_in_frames{f, priority_index="{q}"}',
        pfc_tx='eos_pfc_out_frames{f, priority_index="{q}"}',
        watchdog="eos_pfcwd_stuck_count{f}",
        # EOS counts ECN marks only on a queue with `random-detect ecn count`, which the plan
        # puts on the RoCE queue alone (the one with ECN thresholds), so marks elsewhere never
        # show in ecn-marked-pkts: the ANTA catalog checks the cause (ECN configured on another
        # queue, VerifyRunningConfig) instead of an alert that cannot fire.
        ecn_other=None,
        lossless_drops='eos_queues_dropped_pkts{f, queue_name=~"\\\\D*{q}"}',
        bgp_down="eos_bgp_session_state{f} == 0", bgp_flaps=None, bgp_peer="neighbor",
        bfd_up="eos_bfd_session_state{f}",  # openconfig-bfd session-state, UP = 1
        oper_up="eos_intf_oper_status{f}", carrier="eos_intf_carrier_transitions{f}",
        speed="eos_intf_port_speed{f}", speed_per_gbps=1000),
    "nvue": Signals(
        platform="nvue", device="device", port="interface",
        # Only the lossless priority's switch-priority counters are enabled (nvue_telemetry).
        pfc_rx="nvswitch_interface_sp_rx_pause{f}",
        pfc_tx="nvswitch_interface_sp_tx_pause{f}",
        watchdog=None,  # Cumulus 5.12 exports no PFC watchdog counter over OTLP
        # The traffic-class attribute is `tc` in the documented histogram samples; the
        # interface_tc tables document no attribute name, so this assumes the same one.
        ecn_other='nvswitch_interface_tc_tx_ecn_marked_tc{f, tc!="{q}"}',
        lossless_drops='nvswitch_interface_tc_tx_no_buffer_discard_uc{f, tc="{q}"}',
        bgp_down=None,  # nvswitch_routing_bgp_peer_state's value encoding is not documented
        bgp_flaps="nvswitch_routing_bgp_peer_fsm_established_transitions{f}", bgp_peer="peer",
        # Cumulus 5.12's OTLP router statistics are BGP peer and RIB metrics only ("Router
        # Statistic Format"): no BFD session state is exported.
        bfd_up=None,
        oper_up="nvswitch_interface_oper_state{f}",  # bitmap: Up = 1
        carrier="nvswitch_interface_carrier_changes_total{f}",
        speed="nvswitch_interface_oper_aggregate_speed{f}", speed_per_gbps=1_000_000_000),
}


class AlertsTarget:
    name = "alerts"
    description = "Prometheus alerting rules for PFC, ECN, watchdog, BGP, BFD and links"

    def applies(self, ctx: RenderContext) -> bool:
        return ctx.qos is not None or ctx.fabric.transport == "infiniband"

    def render(self, ctx: RenderContext) -> Artifacts:
        data = rules_data(ctx)
        header = (f"# fabgen: Prometheus alerting rules for {ctx.fabric.name}. Check with\n"
                  "#   promtool check rules telemetry/prometheus-rules.yaml\n"
                  "# and load through rule_files: in prometheus.yml. Thresholds: the intent's "
                  "monitoring section.\n")
        return {RULES: header + yaml.safe_dump(data, sort_keys=True, default_flow_style=False,
                                               width=100)}


TARGET = AlertsTarget()


def continuous_pause_pps(speed_gbps: int) -> int:
    """PFC frames per second that keep a link of this speed paused without a gap (rounded
    down): speed / (65535 quanta x 512 bit times). 11,921/s at 400G."""
    return int(Fraction(speed_gbps * 10**9, PFC_MAX_QUANTA * PAUSE_QUANTUM_BITS))


def pfc_thresholds(ctx: RenderContext) -> tuple[int, int]:
    """(storm, pause-rate) frames per second the rules of this RoCE fabric use: the ANTA
    catalog's PFC budget is the pause rate over monitoring.verify_window_s."""
    planned = {platform: speeds for platform in ("sonic", "eos", "nvue")
               if (speeds := _planned_speeds(ctx, platform))}
    return _thresholds(planned, ctx.intent.monitoring)


def rules_data(ctx: RenderContext) -> dict[str, Any]:
    mon = ctx.intent.monitoring
    if ctx.fabric.transport == "infiniband":
        return {"groups": [_infiniband_group(ctx.fabric.name, mon)]}
    if ctx.qos is None:
        raise ValueError("the alerts target needs the QoS plan of a RoCE fabric")
    planned = {platform: speeds for platform in ("sonic", "eos", "nvue")
               if (speeds := _planned_speeds(ctx, platform))}
    thresholds = _thresholds(planned, mon)
    bfd = underlay.plan(ctx.intent).bfd is not None
    groups = [_switch_group(ctx.fabric.name, SIGNALS[platform], speeds, ctx.qos, mon,
                            thresholds, bfd) for platform, speeds in planned.items()]
    groups.append(_host_group(ctx.fabric.name))
    return {"groups": groups}


# Planned port speed (Gb/s) -> switch -> its ports at that speed, in port order; where one
# speed covers every port (the usual fabric) the ports are not listed.
PlannedSpeeds = dict[int, dict[str, list[str]]]


def _planned_speeds(ctx: RenderContext, platform: str) -> PlannedSpeeds:
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


def _thresholds(planned: dict[str, PlannedSpeeds], mon: MonitoringSpec) -> tuple[int, int]:
    """(storm, pause-rate) frames per second: the intent's, or derived from the fabric's slowest
    planned link (the lowest rate that holds a link paused, so no link's storm goes unseen)."""
    slowest = min(speed for speeds in planned.values() for speed in speeds)
    storm = mon.pfc_storm_pps or continuous_pause_pps(slowest)
    pause = mon.pause_rate_pps or max(1, storm // 10)
    return storm, pause


def _make_rule(alert: str, expr: str, for_s: int, severity: str, fabric: str, summary: str,
          description: str, *, platform: str) -> dict[str, Any]:
    rule: dict[str, Any] = {
        "alert": alert, "expr": expr,
        # `platform` keeps one alert name per platform group distinct (promtool's lint).
        "labels": {"severity": severity, "fabric": fabric, "platform": platform},
        "annotations": {"summary": summary, "description": description},
    }
    if for_s:
        rule["for"] = f"{for_s}s"
    return rule


def _switch_group(fabric: str, sig: Signals, speeds: PlannedSpeeds, plan: QosPlan,
                  mon: MonitoringSpec, thresholds: tuple[int, int],
                  bfd: bool = True) -> dict[str, Any]:
    q = str(plan.rdma.queue)
    prio = str(plan.rdma.priority)
    # gnmic labels its series with the fabric (target event-tags); NVUE's OTLP carries only the
    # device label, so its series are not narrowed.
    f = f'fabric="{fabric}"' if sig.platform in ("sonic", "eos") else ""

    def sel(template: str, index: str = q) -> str:
        text = template.replace("{q}", index)
        text = text.replace("{f, ", "{" + f + ", " if f else "{").replace("{f}", "{" + f + "}"
                                                                          if f else "")
        return text

    dev, port = sig.device, sig.port

    _rule = partial(_make_rule, platform=sig.platform)

    where = f"{{{{ $labels.{dev} }}}} {{{{ $labels.{port} }}}}"
    storm, pause = thresholds
    rules = [
        _rule("PfcStorm", f"rate({sel(sig.pfc_rx, prio)}[1m]) > {storm}",
              mon.pfc_storm_for_s, "critical", fabric,
              f"PFC storm on {where} (priority {prio})",
              f"The port has received more than {storm} PFC pause frames per second on the "
              f"lossless priority {prio} for {mon.pfc_storm_for_s} s: at that rate the link is "
              "held paused, so the peer behind it (usually a stuck NIC) stops RoCE traffic and "
              "the pause spreads upstream. The PFC watchdog should have dropped the queue; find "
              "the peer from the LLDP table and reset or isolate it."),
        _rule("PfcPauseRate",
              f'label_replace(rate({sel(sig.pfc_rx, prio)}[5m]) > {pause}, "direction", '
              f'"received", "", "") or label_replace(rate({sel(sig.pfc_tx, prio)}[5m]) > '
              f'{pause}, "direction", "sent", "", "")',
              mon.pause_rate_for_s, "warning", fabric,
              f"PFC pause rate high on {where} ({{{{ $labels.direction }}}})",
              f"More than {pause} PFC pause frames per second {{{{ $labels.direction }}}} on "
              f"priority {prio} for {mon.pause_rate_for_s} s: the link spends a noticeable share "
              "of its time paused. Received pauses mean the far side is congested, sent pauses "
              "that this switch's buffer for the lossless queue fills. Sustained pauses with "
              "little ECN marking point at ECN thresholds set too high or at incast the "
              "oversubscription cannot carry."),
    ]
    if sig.watchdog is not None:
        rules.append(_rule(
            "PfcWatchdogTriggered", f"increase({sel(sig.watchdog)}[5m]) > 0", 0, "critical",
            fabric, f"PFC watchdog fired on {where}",
            f"The PFC watchdog found a queue paused for longer than its detection time "
            f"({plan.watchdog.detection_ms} ms) and applied its action "
            f"({plan.watchdog.action}): lossless traffic on that queue was dropped to break a "
            "PFC storm or deadlock. Find which peer sends the pauses."))
    if sig.ecn_other is not None:
        rules.append(_rule(
            "EcnMarksOnNonRoceQueue", f"increase({sel(sig.ecn_other)}[5m]) > 0", 0, "warning",
            fabric, f"ECN marks outside the RoCE queue on {where} (queue "
            f"{{{{ $labels.{_queue_label(sig)} }}}})",
            f"Packets were ECN-marked on a queue other than the lossless RoCE queue {q}. The "
            "plan enables ECN on that queue only, so a switch marking elsewhere runs a QoS "
            "config that differs from the plan (fabgen diff against the render shows how)."))
    if sig.lossless_drops is not None:
        rules.append(_rule(
            "LosslessQueueDrops", f"increase({sel(sig.lossless_drops)}[5m]) > 0", 0, "critical",
            fabric, f"Drops on the lossless queue of {where}",
            f"Queue {q} carries RoCE and must never drop: PFC should pause the sender first. "
            "Drops here mean PFC is off or misconfigured on this port or its peer, the "
            "headroom is too small for the cable, or the PFC watchdog dropped a stormed queue."))
    if sig.bgp_down is not None:
        rules.append(_rule(
            "BgpSessionDown", sel(sig.bgp_down), mon.bgp_down_for_s, "critical", fabric,
            f"BGP session down on {{{{ $labels.{dev} }}}} to {{{{ $labels.{sig.bgp_peer} }}}}",
            f"A planned underlay eBGP session has not been Established for {mon.bgp_down_for_s}"
            " s: the switch lost one ECMP path (and its hosts' routes through it). Check the "
            "link, the peer's BGP process and `fabgen verify` of both ends."))
    if sig.bgp_unknown is not None:
        job = f'{{job="fabgen-{fabric}-{sig.platform}-snmp"}}'
        rules.append(_rule(
            "BgpStateUnknown", sel(sig.bgp_unknown).replace("{job}", job),
            mon.bgp_down_for_s, "warning", fabric,
            f"BGP state of {{{{ $labels.{dev} }}}} is not collected",
            f"For {mon.bgp_down_for_s} s the switch's BGP sessions could not be read (its "
            "snmpd does not answer snmp_exporter, or answers without a BGP4-MIB peer: bgpd "
            "not running, not loaded with -M snmp, or not connected to snmpd's AgentX "
            "socket), so BgpSessionDown cannot fire for it. Check `show snmpagentaddress`, "
            "the SNMP user and `docker exec bgp vtysh -c 'show running-config' | grep "
            "agentx`."))
    if sig.bgp_flaps is not None:
        rules.append(_rule(
            "BgpSessionFlapped", f"increase({sel(sig.bgp_flaps)}[10m]) > 0", 0, "warning",
            fabric,
            f"BGP session re-established on {{{{ $labels.{dev} }}}} to "
            f"{{{{ $labels.{sig.bgp_peer} }}}}",
            "The session went down and came back in the last 10 minutes (its count of "
            "transitions to Established rose). Cumulus exports the peer state as a number "
            "with no documented encoding, so a session that stays down is caught by "
            "`fabgen verify` and ECMP loss, not by this rule."))
    if bfd and sig.bfd_up is not None:
        rules.append(_rule(
            "BfdSessionDown", f"{sel(sig.bfd_up)} == 0", mon.bgp_down_for_s, "critical",
            fabric, f"BFD session down on {where}",
            f"The BFD session on this underlay link has not been up for {mon.bgp_down_for_s} s "
            "(monitoring.bgp_down_for_s). With BGP down too the link is gone (BgpSessionDown "
            "fires as well); with BGP still Established, BFD itself is broken (timers or "
            "profile differ from the peer's, BFD packets filtered) and a dead link will be "
            "noticed only at the BGP hold time. The interface names the peer: check it with "
            "`show bfd peers` on both ends."))
    rules.append(_rule(
        "LinkWrongSpeed", _speed_expr(sig, speeds, sel), 300, "warning", fabric,
        f"{where} runs at the wrong speed",
        f"The port is up at a speed other than the cabling plan's "
        f"({_planned(speeds)}): a wrong optic or cable, a failed lane or auto-negotiation fell "
        "back. The link carries less than the fabric was sized for and its ECMP share "
        "congests first."))
    window = mon.link_flap_window_s
    flaps = f"changes({sel(sig.oper_up)}[{window}s]) > {mon.link_flaps}"
    if sig.carrier is not None:
        counted = f"increase({sel(sig.carrier)}[{window}s]) > {mon.link_flaps}"
        # SONiC's counter exists from 202405 on: where it does it decides, elsewhere the state.
        flaps = counted if sig.platform != "sonic" else (
            f"{counted} or ({flaps} unless on({sig.device}, {sig.port}) "
            f"{sel(sig.carrier)})")
    rules.append(_rule(
        "LinkFlapping", flaps, 0, "warning", fabric, f"{where} is flapping",
        f"The port changed state more than {mon.link_flaps} times in {window} s. Each flap "
        "withdraws and re-adds BGP paths and retrains the link; NCCL jobs see stalls. Check "
        "the optic, the cable and the port's error counters."))
    return {"name": f"fabgen-{fabric}-{sig.platform}", "rules": rules}


def _planned(speeds: PlannedSpeeds) -> str:
    return " or ".join(f"{s}G" for s in sorted(speeds))


def _queue_label(sig: Signals) -> str:
    return {"sonic": "queue", "eos": "queue_name", "nvue": "tc"}[sig.platform]


def _speed_expr(sig: Signals, by_speed: PlannedSpeeds, sel: Any) -> str:
    """Up ports whose speed differs from the plan. One planned speed (the usual case): one
    comparison; several: one per speed, each narrowed to the ports planned at it."""
    up = f"on({sig.device}, {sig.port}) ({sel(sig.oper_up)} == 1)"
    if len(by_speed) == 1:
        (speed,) = by_speed
        return f"({sel(sig.speed)} != {speed * sig.speed_per_gbps}) and {up}"
    clauses = []
    for speed in sorted(by_speed):
        for device, names in sorted(by_speed[speed].items()):
            narrowed = sel(sig.speed).rstrip("}")
            narrowed += ("" if narrowed.endswith("{") else ", ")
            narrowed += (f'{sig.device}="{device}", {sig.port}=~"{"|".join(names)}"}}')
            clauses.append(f"({narrowed} != {speed * sig.speed_per_gbps})")
    return f"({' or '.join(clauses)}) and {up}"


def _host_group(fabric: str) -> dict[str, Any]:
    """Recording rules over the hosts' node_exporter infiniband collector (RDMA hardware
    counters of mlx5 devices, node_exporter collector/infiniband_linux.go): the CNPs each NIC
    sends as DCQCN notification point and the ECN-marked RoCE packets it receives, the two
    numbers that show congestion control working end to end."""
    return {"name": f"fabgen-{fabric}-hosts", "rules": [
        {"record": "fabgen:roce_cnp_sent:rate5m",
         "expr": "rate(node_infiniband_np_cnp_packets_sent_total[5m])"},
        {"record": "fabgen:roce_ecn_marked_received:rate5m",
         "expr": "rate(node_infiniband_np_ecn_marked_roce_packets_received_total[5m])"},
    ]}


def _infiniband_group(fabric: str, mon: MonitoringSpec) -> dict[str, Any]:
    rules = []

    _rule = partial(_make_rule, platform="infiniband")

    for kind, name_label in (("switch", "switch"), ("hca", "hca")):
        info = f"on(guid) group_left({name_label}) infiniband_{kind}_info"
        where = f"{{{{ $labels.{name_label} }}}} port {{{{ $labels.port }}}}"
        title = kind.upper() if kind == "hca" else "Switch"

        def metric(name: str, kind: str = kind) -> str:
            return f"infiniband_{kind}_port_{name}"

        rules += [
            _rule(f"Ib{title}LinkDowned",
                  f"(increase({metric('link_downed_total')}[10m]) > 0) * {info}", 0,
                  "critical", fabric, f"InfiniBand link went down on {where}",
                  "LinkDownedCounter rose: the link failed its training and went down in the "
                  "last 10 minutes. OpenSM reroutes around it; the fabric lost bandwidth and "
                  "jobs on it may have failed."),
            _rule(f"Ib{title}LinkRetraining",
                  f"(increase({metric('link_error_recovery_total')}[10m]) > 0) * {info}", 0,
                  "warning", fabric, f"InfiniBand link retrained on {where}",
                  "LinkErrorRecoveryCounter rose: the link retrained after errors without going "
                  "down. Repeated retraining precedes a link failure; check the cable."),
            _rule(f"Ib{title}SymbolErrors",
                  f"(increase({metric('symbol_error_total')}[1h]) > {mon.ib_symbol_errors}) "
                  f"* {info}", 0, "warning", fabric, f"InfiniBand symbol errors on {where}",
                  f"More than {mon.ib_symbol_errors} symbol errors in an hour: the physical "
                  "link is marginal (dirty connector, bent cable, failing transceiver)."),
            _rule(f"Ib{title}LinkIntegrityErrors",
                  f"(increase({metric('local_link_integrity_errors_total')}[10m]) > 0) * "
                  f"{info}", 0, "warning", fabric,
                  f"InfiniBand link integrity errors on {where}",
                  "LocalLinkIntegrityErrors rose: the local physical errors crossed the port's "
                  "threshold; the link is about to retrain or go down."),
            _rule(f"Ib{title}Congestion",
                  f"(rate({metric('transmit_wait_total')}[5m]) > {mon.ib_xmit_wait_per_s}) * "
                  f"{info}", 300, "warning", fabric, f"InfiniBand congestion on {where}",
                  f"PortXmitWait grew by more than {mon.ib_xmit_wait_per_s} ticks per second "
                  "for 5 minutes: the port had data to send and no credits. Sustained on "
                  "uplinks it means oversubscription or an unbalanced route; on a host port a "
                  "slow receiver."),
        ]
    return {"name": f"fabgen-{fabric}-infiniband", "rules": rules}
