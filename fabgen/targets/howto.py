"""The report's "How to check it" section: which day-two files this render has and how to run
them (the verification pack, the telemetry collectors and the alerting rules)."""

from __future__ import annotations

from fabgen import underlay
from fabgen.targets.alerts import RULES, continuous_pause_pps
from fabgen.targets.base import RenderContext
from fabgen.targets.telemetry import GNMIC_EOS, GNMIC_SONIC, OTEL_COLLECTOR, PROMETHEUS_PORTS

__all__ = ["howto_markdown"]


def howto_markdown(ctx: RenderContext) -> str:
    fabric = ctx.fabric
    mon = ctx.intent.monitoring
    lines = ["## How to check it", ""]
    if fabric.transport == "infiniband":
        where = "telemetry/infiniband_exporter.sysconfig" if fabric.planes <= 1 else \
            "telemetry/plane<N>/infiniband_exporter.sysconfig"
        lines += [
            "- Cabling: `ibnetdiscover > fabric.txt && fabgen verify-cabling INTENT "
            "--ibnetdiscover fabric.txt` lists missing, swapped and slow links.",
            f"- Telemetry: run treydock/infiniband_exporter with the options in `{where}`; "
            "switches and HCAs carry their names from OpenSM's node-name-map.",
            f"- Alerts: `{RULES}` (link down, retraining, symbol errors above "
            f"{mon.ib_symbol_errors}/h, link-integrity errors, PortXmitWait above "
            f"{mon.ib_xmit_wait_per_s:,} ticks/s). Check with `promtool check rules {RULES}`.",
        ]
        return "\n".join(lines)
    platforms = {s.platform for s in fabric.switches}
    bfd = underlay.plan(ctx.intent).bfd is not None
    lines.append("After the push, before the first job:")
    lines.append("")
    if platforms & {"sonic", "nvue"}:
        names = " and ".join(f"`verify/collect-{p}.sh`" for p in ("sonic", "nvue")
                             if p in platforms)
        title = " / ".join(t for p, t in (("sonic", "SONiC"), ("nvue", "Cumulus"))
                           if p in platforms)
        lines.append(f"- {title}: run {names} on each switch, gather the `saved/<switch>/`"
                     " directories and run `fabgen verify INTENT saved/`: every port up at its "
                     "planned speed and MTU, every LLDP neighbour as cabled, every BGP session "
                     "Established" + (", every BFD session up with the planned timers"
                                      if bfd else "")
                     + (", PFC counters and the PFC watchdog as planned"
                        if "sonic" in platforms else "")
                     + "; exit 1 with one line per mismatch (`--json` for CI).")
    if "eos" in platforms:
        lines.append("- EOS: `anta nrfu --catalog verify/anta-catalog.yaml --inventory "
                     "verify/anta-inventory.yaml table` (each switch reached at its name: "
                     "resolve it or put its management address in the inventory): status, "
                     "speed, MTU, LLDP, BGP" + (", BFD" if bfd else "") + ", PFC/ECN counters, "
                     "lossless-queue drops, watchdog settings.")
    lines += ["", "While jobs run:", ""]
    collectors = []
    if "sonic" in platforms:
        collectors.append(f"`gnmic --config {GNMIC_SONIC} subscribe` (Prometheus on "
                          f":{PROMETHEUS_PORTS['sonic']})")
    if "eos" in platforms:
        collectors.append(f"`gnmic --config {GNMIC_EOS} subscribe` (:{PROMETHEUS_PORTS['eos']})")
    if "nvue" in platforms:
        # The OTLP export is part of each NVUE switch's startup.yaml (`system telemetry`).
        where = (f"to `{mon.otlp_destination}`" if mon.otlp_destination else
                 "with no collector named (monitoring.otlp_destination is not set: add it with "
                 "`nv set system telemetry export otlp grpc destination <collector>`)")
        collectors.append(f"each NVUE switch's startup.yaml exports OpenTelemetry {where}; "
                          f"run an OpenTelemetry collector with `{OTEL_COLLECTOR}` "
                          f"(:{PROMETHEUS_PORTS['nvue']})")
    lines.append("- Telemetry: " + "; ".join(collectors) + ". PFC pause frames per priority, "
                 "ECN marks and drops per queue, buffer watermarks, PFC watchdog events, "
                 "link state and speed, BGP state.")
    slowest = min(link.speed_gbps for link in fabric.links)
    storm = mon.pfc_storm_pps or continuous_pause_pps(slowest)
    lines.append(f"- Alerts: load `{RULES}` into Prometheus. A PFC storm is more than "
                 f"{storm:,} pause frames/s for {mon.pfc_storm_for_s} s"
                 + ("" if mon.pfc_storm_pps else
                    f" (the rate that keeps a {slowest}G link paused)")
                 + f"; a BGP session down for {mon.bgp_down_for_s} s"
                 + (" (on EOS also a BFD session down as long)"
                    if bfd and "eos" in platforms else "")
                 + ", a port up at the wrong "
                 f"speed or flapping more than {mon.link_flaps} times in "
                 f"{mon.link_flap_window_s} s also alert. Thresholds: the intent's "
                 "`monitoring` section."
                 + (" SONiC and Cumulus stream no BFD session state (FRR's bfdd sessions are "
                    "in no SONiC database; Cumulus 5.12's OpenTelemetry export has no BFD "
                    "metric): `fabgen verify` checks their BFD sessions."
                    if bfd and platforms & {"sonic", "nvue"} else ""))
    return "\n".join(lines)
