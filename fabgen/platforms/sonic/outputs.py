"""SONiC's outputs: config_db.json (and the frr.conf the switch renders from it) per switch,
the gnmic collector, its alert series, `fabgen verify` of its saved outputs, and its lines in
the report."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fabgen.intent.models import MonitoringSpec
from fabgen.platforms.common.gnmic import SAMPLE_INTERVAL, collector_yaml
from fabgen.platforms.contract.outputs import Outputs
from fabgen.platforms.sonic import alerts, headroom, snmp, telemetry, verify
from fabgen.platforms.sonic.facts import FACTS
from fabgen.platforms.sonic.target import TARGET, report_notes
from fabgen.qos import QosPlan
from fabgen.targets.base import Artifacts, RenderContext
from fabgen.topology.model import Switch
from fabgen.underlay import Bfd
from fabgen.verify.expect import ExpectedSwitch
from fabgen.verify.findings import Finding

__all__ = ["OUTPUTS", "SonicOutputs"]

# Where the SONiC runbook puts the gNMI server's certificate, key and CA (any path works; these
# are the file names sonic-mgmt's telemetry tests use, /etc/sonic/telemetry/).
SONIC_CERT_DIR = "/etc/sonic/telemetry"

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


class SonicOutputs(Outputs):
    facts = FACTS
    target = TARGET
    prometheus_port = telemetry.PROMETHEUS_PORT
    signals = alerts.SIGNALS
    bfd_telemetry_gap = "FRR's bfdd sessions are in no SONiC database"
    saved = verify.SAVED
    clear_counters = verify.CLEAR
    verify_extra = ", PFC counters and the PFC watchdog as planned"
    hash_note = ("config_db `SWITCH_HASH|GLOBAL` `ecmp_hash` (applied where the ASIC's SAI "
                 "takes a native field list: `show switch-hash capabilities`)")
    bfd_note = ("`neighbor FABRIC bfd` on the underlay peer group (config_db `BGP_PEER_GROUP` "
                "`bfd`) at bfdd's defaults, 300 ms x 3 (SONiC's BGP schema has no timer "
                "fields; other timers are refused at load). bfdd runs because DEVICE_METADATA "
                "sets `frr_mgmt_framework_config` (SONiC's supervisord starts bfdd only then); "
                "`fabgen verify` reads `show bfd peers json` and the routing mode, `fabgen "
                "frr-lab` runs the same config in real FRR")
    spare_ports_note = ("SONiC `admin_status down` with every QoS, buffer and watchdog table")

    def telemetry(self, ctx: RenderContext, switches: Sequence[Switch]) -> Artifacts:
        return {
            telemetry.GNMIC_SONIC: collector_yaml(
                telemetry.sonic_gnmic(ctx.fabric, list(switches),
                                      ctx.intent.monitoring.gnmi_port),
                "gnmic --config telemetry/gnmic-sonic.yaml subscribe", telemetry.SONIC_ENV),
            snmp.SNMP_EXPORTER: collector_yaml(
                snmp.exporter_config(),
                f"snmp_exporter --config.file={snmp.SNMP_EXPORTER} "
                "--config.expand-environment-variables (snmp_exporter 0.26 or later)",
                telemetry.SNMP_ENV),
            snmp.SCRAPE: collector_yaml(
                snmp.scrape_config(ctx.fabric, list(switches), SAMPLE_INTERVAL),
                f"Prometheus scrape_config_files: [{snmp.SCRAPE}] (SONiC BGP state "
                "through snmp_exporter)"),
        }

    def collector_howto(self, ctx: RenderContext) -> str:
        # Two collectors, in the report's list of them: gnmic, and snmp_exporter for BGP.
        return (f"`gnmic --config {telemetry.GNMIC_SONIC} subscribe` (Prometheus on "
                f":{telemetry.PROMETHEUS_PORT}); for SONiC's BGP state `snmp_exporter "
                f"--config.file={snmp.SNMP_EXPORTER} --config.expand-environment-variables` "
                f"(0.26 or later) with `{snmp.SCRAPE}` in Prometheus's "
                "scrape_config_files: FRR's BGP4-MIB through each switch's snmpd, "
                "which needs an SNMPv3 user on every switch (`sudo config snmp user "
                "add <user> priv ro sha <auth password> aes <priv password>`; the "
                "exporter reads FABGEN_SNMP_USERNAME, FABGEN_SNMP_AUTH_PASSWORD, "
                "FABGEN_SNMP_PRIV_PASSWORD)")

    def telemetry_setup(self, ctx: RenderContext) -> list[str]:
        """How to make each switch's gNMI server reachable by the collector, with TLS."""
        mon = ctx.intent.monitoring
        d = SONIC_CERT_DIR
        return [
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
            "GNMIC_TLS_KEY (the client certificate whose CN you listed)."]

    def maintenance_howto(self, ctx: RenderContext) -> list[str]:
        return [SONIC_DRAIN]

    def findings(self, sw: ExpectedSwitch, texts: Mapping[str, str], plan: QosPlan,
                 limits: MonitoringSpec, checks: tuple[str, ...],
                 bfd: Bfd | None) -> list[Finding]:
        return verify.findings(sw, texts, plan, limits, checks, bfd)

    def routing_notes(self, ctx: RenderContext) -> list[str]:
        return [
            "- SONiC routing: BGP lives in config_db.json (frrcfgd's tables: `BGP_GLOBALS`, "
            "`BGP_PEER_GROUP`, `BGP_NEIGHBOR`, policy `ROUTE_MAP`/`PREFIX`), DEVICE_METADATA "
            "`docker_routing_config_mode: unified` + `frr_mgmt_framework_config: true`: the "
            "bgp container renders FRR's config from CONFIG_DB (`sonic/<switch>/"
            "frr.expected.conf` shows it; never upload it), so `config reload`, `config load`, "
            "checkpoints and image upgrades carry BGP with the rest. Install "
            "`golden_config_db.json` with it (`fabgen push` does): db_migrator resets the mode "
            "where `/etc/sonic/minigraph.xml` exists unless the golden file keeps it."]

    def headroom_rows(self, ctx: RenderContext, switches: list[Switch],
                      plan: QosPlan) -> list[dict[str, str]]:
        return headroom.headroom_rows(ctx, switches, plan)

    def headroom_footnotes(self, rows: list[dict[str, str]]) -> list[str]:
        return headroom.footnotes(rows)

    def report_notes(self, ctx: RenderContext) -> list[str]:
        return report_notes(ctx)


OUTPUTS = SonicOutputs()
