"""The report's "How to check it" section: which day-two files this render has and how to run
them (the verification pack, the telemetry collectors and the alerting rules)."""

from __future__ import annotations

from fabgen import underlay
from fabgen.targets import sonic_snmp
from fabgen.targets.alerts import RULES, continuous_pause_pps
from fabgen.targets.base import RenderContext
from fabgen.targets.telemetry import GNMIC_EOS, GNMIC_SONIC, OTEL_COLLECTOR, PROMETHEUS_PORTS

__all__ = ["howto_markdown"]

# Where the SONiC runbook puts the gNMI server's certificate, key and CA (any path works; these
# are the file names sonic-mgmt's telemetry tests use, /etc/sonic/telemetry/).
SONIC_CERT_DIR = "/etc/sonic/telemetry"


def _gnmi_setup(ctx: RenderContext) -> list[str]:
    """How to make each switch's gNMI server reachable by the collector, with TLS."""
    mon = ctx.intent.monitoring
    platforms = {s.platform for s in ctx.fabric.switches}
    out = []
    if "sonic" in platforms:
        d = SONIC_CERT_DIR
        out.append(
            "- SONiC gNMI: without certificates sonic-gnmi listens on 127.0.0.1 only "
            "(`--noTLS --bind_address 127.0.0.1`, sonic-buildimage "
            "dockers/docker-sonic-gnmi/gnmi-native.sh), so gnmic cannot reach it. On each "
            f"switch put its certificate, key and the CA in `{d}/` and run "
            f"`sonic-db-cli CONFIG_DB hset 'GNMI|certs' server_crt {d}/server.crt server_key "
            f"{d}/server.key ca_crt {d}/ca.crt`, `sonic-db-cli CONFIG_DB hset 'GNMI|gnmi' "
            f"port {mon.gnmi_port} client_auth true user_auth cert`, `sonic-db-cli CONFIG_DB "
            "hset 'GNMI_CLIENT_CERT|<collector CN>' role@ gnmi_readonly`, `config save -y`, "
            "`systemctl restart gnmi` (releases with the older `telemetry` container: the "
            "`TELEMETRY|certs` / `TELEMETRY|gnmi` keys and `systemctl restart telemetry`). "
            "`fabgen push` keeps these tables. On the collector, in gnmic's environment (its "
            "global flags, which every target inherits): GNMIC_TLS_CA, GNMIC_TLS_CERT, "
            "GNMIC_TLS_KEY (the client certificate whose CN you listed).")
    if "eos" in platforms:
        tls = (f"TLS from SSL profile `{mon.eos_gnmi_ssl_profile}` (create it under "
               "`management security` with the switch's certificate; `fabgen push` keeps "
               "that section); in gnmic's environment GNMIC_TLS_CA"
               if mon.eos_gnmi_ssl_profile else
               "no TLS (monitoring.eos_gnmi_ssl_profile is not set: the password crosses the "
               "network in clear text)")
        out.append(
            f"- EOS gNMI: the config enables `management api gnmi` / `transport grpc` on port "
            f"{mon.eos_gnmi_port}" + (f" in VRF {mon.eos_gnmi_vrf}" if mon.eos_gnmi_vrf else "")
            + f", {tls}; gnmic logs in with GNMIC_USERNAME / GNMIC_PASSWORD in its environment "
            "(an EOS account).")
    return out


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
            "switches and HCAs carry their names from OpenSM's node-name map"
            + (" (UFM's ib-node-name-map: run it on a UFM node)" if ctx.fabric.sm_hosts and
               ctx.intent.infiniband.management.kind == "ufm" and fabric.planes <= 1 else "")
            + ".",
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
        lines.append("- EOS: `FABGEN_INTENT=INTENT bash verify/anta-check.sh "
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
    lines += ["", "While jobs run:", ""]
    collectors = []
    if "sonic" in platforms:
        collectors.append(f"`gnmic --config {GNMIC_SONIC} subscribe` (Prometheus on "
                          f":{PROMETHEUS_PORTS['sonic']})")
        collectors.append(f"for SONiC's BGP state `snmp_exporter --config.file="
                          f"{sonic_snmp.SNMP_EXPORTER} --config.expand-environment-variables` "
                          f"(0.26 or later) with `{sonic_snmp.SCRAPE}` in Prometheus's "
                          "scrape_config_files: FRR's BGP4-MIB through each switch's snmpd, "
                          "which needs an SNMPv3 user on every switch (`sudo config snmp user "
                          "add <user> priv ro sha <auth password> aes <priv password>`; the "
                          "exporter reads FABGEN_SNMP_USERNAME, FABGEN_SNMP_AUTH_PASSWORD, "
                          "FABGEN_SNMP_PRIV_PASSWORD)")
    if "eos" in platforms:
        collectors.append(f"`gnmic --config {GNMIC_EOS} subscribe` (:{PROMETHEUS_PORTS['eos']})")
    gnmi_setup = _gnmi_setup(ctx) if platforms & {"sonic", "eos"} else []
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
    lines += gnmi_setup
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
    if "sonic" in platforms:
        lines += ["", "Maintenance:", "", SONIC_DRAIN]
    return "\n".join(lines)


# sonic-buildimage dockers/docker-fpm-frr/base_image_files/TS writes BGP_DEVICE_GLOBAL|STATE
# tsa_enabled, which only bgpcfgd reads (sonic-bgpcfgd managers_device_global.py); frrcfgd has no
# handler. sonic-utilities config/main.py (691b1bbc) `config bgp shutdown all|neighbor` writes
# BGP_NEIGHBOR admin_status, which frrcfgd applies (`neighbor <ip> shutdown`, frrcfgd.py:1869);
# `neighbor` finds rows by the bare address (the rows are `default|<ip>`) or by exact `name`.
SONIC_DRAIN = (
    "- SONiC drain: `sudo TSA` drains nothing on these switches (it sets BGP_DEVICE_GLOBAL "
    "tsa_enabled, which only bgpcfgd applies; they run frrcfgd) and `fabgen verify` reports "
    "such a request. Drain a switch with `sudo config bgp shutdown all`, bring it back with "
    "`sudo config bgp startup all`; every session to one peer switch with `sudo config bgp "
    "shutdown neighbor <peer switch name>` (the BGP_NEIGHBOR name is the peer's hostname). One "
    "session of several parallel links: `sudo sonic-db-cli CONFIG_DB hset "
    "'BGP_NEIGHBOR|default|<peer address>' admin_status down` (`config bgp shutdown neighbor "
    "<address>` looks the address up without its VRF and finds nothing). `sudo TSB` clears a "
    "stray TSA request.")
