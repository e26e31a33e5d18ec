"""Junos's outputs: the configuration of each QFX5240 (JSON, curly text, `set` commands) and
the notes on what no public source fixes, `fabgen verify` of its saved `| display json`
outputs, the gnmic collector on the paths Juniper's 23.4R2-EVO models publish and its alert
series, and its lines in the report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fabgen.intent.models import MonitoringSpec
from fabgen.platforms.common.gnmic import collector_yaml
from fabgen.platforms.contract.outputs import Outputs
from fabgen.platforms.junos import alerts, facts, telemetry
from fabgen.platforms.junos import saved as junos_saved
from fabgen.platforms.junos.facts import FACTS
from fabgen.platforms.junos.target import TARGET
from fabgen.qos import QosPlan
from fabgen.targets.base import Artifacts, RenderContext
from fabgen.topology.model import Switch
from fabgen.underlay import Bfd
from fabgen.verify.expect import ExpectedSwitch
from fabgen.verify.findings import Finding

__all__ = ["OUTPUTS", "JunosOutputs"]


class JunosOutputs(Outputs):
    facts = FACTS
    target = TARGET
    saved = junos_saved.SAVED
    clear_counters = junos_saved.CLEAR
    verify_extra = (", PFC and the PFC watchdog as planned in Junos's congestion notification "
                    "profiles")
    hash_note = "`forwarding-options hash-key family inet layer-3; layer-4` (the 5-tuple)"
    bfd_note = "`bfd-liveness-detection` with the plan's interval and multiplier on the BGP group"
    spare_ports_note = "Junos `disable` on the port, its class of service applied"

    prometheus_port = telemetry.PROMETHEUS_PORT
    signals = alerts.SIGNALS

    def telemetry(self, ctx: RenderContext, switches: Sequence[Switch]) -> Artifacts:
        return {telemetry.GNMIC_JUNOS: collector_yaml(
            telemetry.junos_gnmic(ctx.fabric, list(switches)),
            f"gnmic --config {telemetry.GNMIC_JUNOS} subscribe", telemetry.JUNOS_ENV)}

    def collector_howto(self, ctx: RenderContext) -> str:
        return (f"`gnmic --config {telemetry.GNMIC_JUNOS} subscribe` "
                f"(:{telemetry.PROMETHEUS_PORT})")

    def telemetry_setup(self, ctx: RenderContext) -> list[str]:
        """The gRPC service the collector needs (the operator's `system` section, which
        `fabgen push` keeps), and what Junos does not stream."""
        return [
            "- Junos gNMI: configure the gRPC service as Juniper's AI JVD does, in the "
            "management instance: `set system services extension-service request-response "
            f"grpc ssl port {facts.GNMI_PORT}`, `... grpc ssl local-certificate <cert>` (loaded "
            "with `request security pki local-certificate load`) and `... grpc "
            "routing-instance mgmt_junos`; `fabgen push` keeps `system services`. gnmic logs "
            "in with GNMIC_USERNAME / GNMIC_PASSWORD and checks the certificate against "
            f"GNMIC_TLS_CA. {alerts.UNALERTED}. Which paths a QFX5240 streams is not verified "
            "on a switch (Juniper's Telemetry Explorer lists them per release)."]

    def findings(self, sw: ExpectedSwitch, texts: Mapping[str, str], plan: QosPlan,
                 limits: MonitoringSpec, checks: tuple[str, ...],
                 bfd: Bfd | None) -> list[Finding]:
        return junos_saved.findings(sw, texts, plan, limits, checks, bfd)


OUTPUTS = JunosOutputs()
