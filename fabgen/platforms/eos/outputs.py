"""Arista EOS's outputs: the running-config per switch, the ANTA catalog and inventory its
switches are checked with after the push, the gnmic collector, its alert series, and its lines
in the report."""

from __future__ import annotations

from collections.abc import Sequence

from fabgen.platforms.common.gnmic import collector_yaml
from fabgen.platforms.contract.outputs import Outputs
from fabgen.platforms.eos import alerts, anta, headroom, telemetry
from fabgen.platforms.eos.facts import FACTS
from fabgen.platforms.eos.target import TARGET
from fabgen.qos import QosPlan
from fabgen.targets.base import Artifacts, RenderContext
from fabgen.topology.model import Switch

__all__ = ["OUTPUTS", "EosOutputs"]


class EosOutputs(Outputs):
    facts = FACTS
    target = TARGET
    day_two = (anta.TARGET,)
    prometheus_port = telemetry.PROMETHEUS_PORT
    signals = alerts.SIGNALS
    verified_by = "run verify/anta-catalog.yaml with ANTA"
    hash_note = ("the routed 5-tuple EOS hashes by default; `roce-dest-qp` adds the BTH "
                 "destination QP as UDF bytes (`port-channel load-balance trident udf`)")
    bfd_note = "`router bfd` default timers, `neighbor <ip> bfd` on every peer"
    spare_ports_note = "EOS `shutdown` with the same per-port QoS"

    def telemetry(self, ctx: RenderContext, switches: Sequence[Switch]) -> Artifacts:
        mon = ctx.intent.monitoring
        return {telemetry.GNMIC_EOS: collector_yaml(
            telemetry.eos_gnmic(ctx.fabric, list(switches), mon.eos_gnmi_port,
                                mon.eos_gnmi_ssl_profile),
            "gnmic --config telemetry/gnmic-eos.yaml subscribe",
            telemetry.EOS_ENV if mon.eos_gnmi_ssl_profile else telemetry.EOS_ENV_CLEAR)}

    def collector_howto(self, ctx: RenderContext) -> str:
        return f"`gnmic --config {telemetry.GNMIC_EOS} subscribe` (:{telemetry.PROMETHEUS_PORT})"

    def telemetry_setup(self, ctx: RenderContext) -> list[str]:
        """How the switch's gNMI server is reached by the collector, with or without TLS."""
        mon = ctx.intent.monitoring
        tls = (f"TLS from SSL profile `{mon.eos_gnmi_ssl_profile}` (create it under "
               "`management security` with the switch's certificate; `fabgen push` keeps "
               "that section); in gnmic's environment GNMIC_TLS_CA"
               if mon.eos_gnmi_ssl_profile else
               "no TLS (monitoring.eos_gnmi_ssl_profile is not set: the password crosses the "
               "network in clear text)")
        return [
            f"- EOS gNMI: the config enables `management api gnmi` / `transport grpc` on port "
            f"{mon.eos_gnmi_port}" + (f" in VRF {mon.eos_gnmi_vrf}" if mon.eos_gnmi_vrf else "")
            + f", {tls}; gnmic logs in with GNMIC_USERNAME / GNMIC_PASSWORD in its environment "
            "(an EOS account)."]

    def post_deploy_howto(self, ctx: RenderContext, bfd: bool) -> str:
        mon = ctx.intent.monitoring
        return ("- EOS: `FABGEN_INTENT=INTENT bash verify/anta-check.sh "
                "verify/anta-inventory.yaml [traffic command]` (each switch reached at its "
                "name: resolve it or put its management address in the inventory): "
                "snapshots the PFC and queue-drop counters (`anta exec snapshot`), runs "
                f"your RoCE traffic test or waits {mon.verify_window_s} s, snapshots "
                "again and compares the two (`fabgen verify-counters`: PFC frames within "
                "the `PfcPauseRate` alert's rate times the elapsed time, no drop on the "
                "lossless queue"
                + (", ECN marks within monitoring.verify_ecn_marks_max"
                   if mon.verify_ecn_marks_max is not None else "")
                + "; no counter is cleared, any window length holds), then runs "
                "`verify/anta-catalog.yaml`: status, speed, MTU, LLDP, BGP"
                + (", BFD" if bfd else "") + ", the watchdog and ECN-counting settings, "
                "and ECN configured on no queue but the RoCE one.")

    def underlay_caveats(self, ctx: RenderContext) -> list[str]:
        return ["- EOS installs at most its ASIC's ECMP group size, which `show bgp "
                "instance` prints as Maximum ECMP; Arista publishes no number for the "
                "7060X6, so compare it with the table above after the push."]

    def headroom_rows(self, ctx: RenderContext, switches: list[Switch],
                      plan: QosPlan) -> list[dict[str, str]]:
        return headroom.headroom_rows(ctx, switches, plan)


OUTPUTS = EosOutputs()
