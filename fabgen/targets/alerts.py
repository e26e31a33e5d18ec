"""Alerts target: `telemetry/prometheus-rules.yaml`, Prometheus alerting rules for a lossless
fabric, over the series the telemetry target's collectors produce.

One rule group per platform the fabric uses (its `Signals`, in output order). Every threshold
comes from the intent's `monitoring` section or from the plan (the lossless priority and queue,
the planned link speeds); every metric name is one a real exporter produces, cited in each
platform's alerts module (fabgen/platforms/<os>/alerts.py) beside the series it names.
  InfiniBand  treydock/infiniband_exporter 0.10 (collectors/switch.go, hca.go): counters are
         labelled by GUID and port; the switch and HCA names of the node-name-map come from
         infiniband_switch_info / infiniband_hca_info and are joined onto every alert.
The rules are checked with `promtool check rules` and unit-tested with `promtool test rules`
(tests/test_alerts.py) on synthetic series of a PFC storm and of a healthy fabric.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import yaml

from fabgen import underlay
from fabgen.intent.models import MonitoringSpec
from fabgen.platforms.contract.outputs import Signals
from fabgen.platforms.registry import outputs as platforms
from fabgen.qos import QosPlan
from fabgen.targets.base import Artifacts, RenderContext
from fabgen.targets.pfc_rates import (
    PAUSE_QUANTUM_BITS,
    PFC_MAX_QUANTA,
    PlannedSpeeds,
    continuous_pause_pps,
    pfc_thresholds,
    planned_speeds,
    thresholds,
)

__all__ = [
    "PAUSE_QUANTUM_BITS",
    "PFC_MAX_QUANTA",
    "RULES",
    "TARGET",
    "AlertsTarget",
    "Signals",
    "continuous_pause_pps",
    "pfc_thresholds",
    "rules_data",
]

RULES = "telemetry/prometheus-rules.yaml"


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


def rules_data(ctx: RenderContext) -> dict[str, Any]:
    mon = ctx.intent.monitoring
    if ctx.fabric.transport == "infiniband":
        return {"groups": [_infiniband_group(ctx.fabric.name, mon)]}
    if ctx.qos is None:
        raise ValueError("the alerts target needs the QoS plan of a RoCE fabric")
    planned = {platform: speeds for platform in platforms.names()
               if (speeds := planned_speeds(ctx, platform))}
    limits = thresholds(planned, mon)
    bfd = underlay.plan(ctx.intent).bfd is not None
    groups = [_switch_group(ctx.fabric.name, signals, speeds, ctx.qos, mon, limits, bfd)
              for platform, speeds in planned.items()
              if (signals := platforms.get(platform).signals) is not None]
    groups.append(_host_group(ctx.fabric.name))
    return {"groups": groups}


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
    # A collector that tags its series with the fabric (gnmic's target event-tags) narrows
    # them to this fabric; one that carries only a device label is not narrowed.
    f = f'fabric="{fabric}"' if sig.fabric_label else ""

    def sel(template: str, index: str = q) -> str:
        text = template.replace("{q}", index)
        text = text.replace("{f, ", "{" + f + ", " if f else "{").replace("{f}", "{" + f + "}"
                                                                          if f else "")
        return text

    dev, port = sig.device, sig.port

    def link(template: str) -> str:
        """A link series (state, carrier, speed) of the front-panel ports only."""
        if sig.fabric_ports is not None:
            only = f'{port}=~"{sig.fabric_ports}"'
            template = (template.replace("{f}", "{f, " + only + "}") if "{f}" in template
                        else template.replace("{f, ", "{f, " + only + ", "))
        return sel(template)

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
            f"{{{{ $labels.{sig.queue_label} }}}})",
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
            f"For {mon.bgp_down_for_s} s the switch's BGP sessions could not be read "
            f"({sig.bgp_unknown_why}), so BgpSessionDown cannot fire for it. "
            f"{sig.bgp_unknown_check}"))
    if sig.bgp_flaps is not None:
        rules.append(_rule(
            "BgpSessionFlapped", f"increase({sel(sig.bgp_flaps)}[10m]) > 0", 0, "warning",
            fabric,
            f"BGP session re-established on {{{{ $labels.{dev} }}}} to "
            f"{{{{ $labels.{sig.bgp_peer} }}}}",
            "The session went down and came back in the last 10 minutes (its count of "
            f"transitions to Established rose). {sig.bgp_flaps_why}, so a session that stays "
            "down is caught by `fabgen verify` and ECMP loss, not by this rule."))
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
        "LinkWrongSpeed", _speed_expr(sig, speeds, link), 300, "warning", fabric,
        f"{where} runs at the wrong speed",
        f"The port is up at a speed other than the cabling plan's "
        f"({_planned(speeds)}): a wrong optic or cable, a failed lane or auto-negotiation fell "
        "back. The link carries less than the fabric was sized for and its ECMP share "
        "congests first."))
    window = mon.link_flap_window_s
    flaps = f"changes({link(sig.oper_up)}[{window}s]) > {mon.link_flaps}"
    if sig.carrier is not None:
        counted = f"increase({link(sig.carrier)}[{window}s]) > {mon.link_flaps}"
        # A counter some releases lack: where it exists it decides, elsewhere the state.
        flaps = counted if not sig.carrier_optional else (
            f"{counted} or ({flaps} unless on({sig.device}, {sig.port}) "
            f"{link(sig.carrier)})")
    rules.append(_rule(
        "LinkFlapping", flaps, 0, "warning", fabric, f"{where} is flapping",
        f"The port changed state more than {mon.link_flaps} times in {window} s. Each flap "
        "withdraws and re-adds BGP paths and retrains the link; NCCL jobs see stalls. Check "
        "the optic, the cable and the port's error counters."))
    return {"name": f"fabgen-{fabric}-{sig.platform}", "rules": rules}


def _planned(speeds: PlannedSpeeds) -> str:
    return " or ".join(f"{s}G" for s in sorted(speeds))


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
