"""Cumulus NVUE's outputs: startup.yaml per switch (with its OpenTelemetry export), the OTel
collector, its alert series, `fabgen verify` of its saved outputs, and its lines in the
report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fabgen.intent.models import MonitoringSpec
from fabgen.platforms.common.gnmic import collector_yaml
from fabgen.platforms.contract.outputs import Outputs
from fabgen.platforms.nvue import alerts, headroom, telemetry, verify
from fabgen.platforms.nvue.facts import FACTS
from fabgen.platforms.nvue.target import TARGET
from fabgen.qos import QosPlan
from fabgen.targets.base import Artifacts, RenderContext
from fabgen.topology.model import Switch
from fabgen.underlay import Bfd
from fabgen.verify.expect import ExpectedSwitch
from fabgen.verify.findings import Finding

__all__ = ["OUTPUTS", "NvueOutputs"]


class NvueOutputs(Outputs):
    facts = FACTS
    target = TARGET
    prometheus_port = telemetry.PROMETHEUS_PORT
    signals = alerts.SIGNALS
    bfd_telemetry_gap = "Cumulus 5.12's OpenTelemetry export has no BFD metric"
    saved = verify.SAVED
    clear_counters = verify.CLEAR
    hash_note = "`system forwarding ecmp-hash`, every 5-tuple field written on or off"
    bfd_note = ("`neighbor <ip> bfd` with the timers on every peer (Cumulus 5.0-5.14 keys; 5.15 "
                "moves them to `router bfd profile`)")
    spare_ports_note = ("NVUE `link state down` with the PFC watchdog, the global QoS profile "
                        "covering it")

    def telemetry(self, ctx: RenderContext, switches: Sequence[Switch]) -> Artifacts:
        # The switches' own settings are in their startup.yaml (the target's `system`).
        return {telemetry.OTEL_COLLECTOR: collector_yaml(
            telemetry.otel_collector(ctx.intent.monitoring.otlp_port),
            "otelcol-contrib --config telemetry/otel-collector.yaml")}

    def collector_howto(self, ctx: RenderContext) -> str:
        # The OTLP export is part of each NVUE switch's startup.yaml (`system telemetry`).
        mon = ctx.intent.monitoring
        where = (f"to `{mon.otlp_destination}`" if mon.otlp_destination else
                 "with no collector named (monitoring.otlp_destination is not set: add it with "
                 "`nv set system telemetry export otlp grpc destination <collector>`)")
        return (f"each NVUE switch's startup.yaml exports OpenTelemetry {where}; "
                f"run an OpenTelemetry collector with `{telemetry.OTEL_COLLECTOR}` "
                f"(:{telemetry.PROMETHEUS_PORT})")

    def findings(self, sw: ExpectedSwitch, texts: Mapping[str, str], plan: QosPlan,
                 limits: MonitoringSpec, checks: tuple[str, ...],
                 bfd: Bfd | None) -> list[Finding]:
        return verify.findings(sw, texts, plan, limits, checks, bfd)

    def headroom_rows(self, ctx: RenderContext, switches: list[Switch],
                      plan: QosPlan) -> list[dict[str, str]]:
        return headroom.headroom_rows(ctx, switches, plan)


OUTPUTS = NvueOutputs()
