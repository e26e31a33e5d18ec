"""SONiC's BGP session state, from FRR's own BGP4-MIB, for the BgpSessionDown alert.

Why SNMP and not gNMI: with fabgen's routing design (frr_mgmt_framework_config "true",
docs/sonic-routing.md) the bgp container runs frrcfgd instead of bgpcfgd and does not start
bgpmon (sonic-buildimage 086b03bd70f9 dockers/docker-fpm-frr/frr/supervisord/
supervisord.conf.common.j2:183-213 start bgpmon only when frr_mgmt_framework_config is not
"true"), and bgpmon is what writes STATE_DB NEIGH_STATE_TABLE, the table sonic-gnmi would
serve. Nothing else in SONiC writes BGP state to a database in that mode, and community
sonic-gnmi serves no OpenConfig BGP (sonic-mgmt-common has no BGP transformer). What does run:

- bgpd with FRR's snmp module: supervisord.conf.common.j2 starts `bgpd ... -M snmp` whenever
  the image is built with ENABLE_FRR_SNMP_AGENT (rules/config: `?= y`, the default), and
  frrcfgd's frr.conf template (src/sonic-frr-mgmt-framework/templates/frr/frr.conf.j2) says
  `agentx`, so bgpd registers RFC 4273's BGP4-MIB as an AgentX subagent;
- the snmp container's snmpd, an AgentX master on tcp:localhost:3161 (dockers/docker-snmp/
  snmpd.conf.j2), which the bgp container's /etc/snmp/frr.conf points FRR at
  (dockers/docker-fpm-frr/snmp.conf), serving every registered MIB to the users of its
  SNMP_USER table (`config snmp user add`).

So the collector is Prometheus's snmp_exporter: `telemetry/snmp-exporter-sonic.yml` walks
bgpPeerState (1.3.6.1.2.1.15.3.1.2: idle 1, connect 2, active 3, opensent 4, openconfirm 5,
established 6), indexed by bgpPeerRemoteAddr (an IpAddress: 4 sub-identifiers, the
exporter's InetAddressIPv4 index type), as `sonic_bgp_peer_state{neighbor}`;
`telemetry/prometheus-scrape-sonic-snmp.yml` is the scrape job (snmp_exporter's multi-target
pattern) that labels each series with the switch (`source`), its role and the fabric, as the
gnmic targets label theirs.

SNMPv3 with authentication and privacy: the user's name and passwords are never written;
snmp_exporter substitutes ${VAR} in an auth's username, password and priv_password when run
with --config.expand-environment-variables (prometheus/snmp_exporter config/config.go
LoadFile, since v0.26.0; a v2c community is not substituted, so it would have to be written
here, which fabgen does not do). The config format (`auths` beside `modules`) is snmp_exporter's
since v0.23.0.

BFD: FRR's bfdd has no SNMP module and no SONiC database holds its sessions (bfdorch's STATE_DB
BFD_SESSION_TABLE holds only hardware-offloaded sessions created through APPL_DB). With `bfd`
on every session a BFD failure takes the BGP session down, which this alert sees; a BFD session
that is down while BGP stays up is `fabgen verify`'s (`show bfd peers json`).
"""

from __future__ import annotations

from typing import Any

from fabgen.topology.model import Fabric, Switch

__all__ = ["AUTH", "BGP_PEER_STATE_OID", "ESTABLISHED", "EXPORTER_PORT", "METRIC", "MODULE",
           "PEER_LABEL", "SCRAPE", "SNMP_EXPORTER", "STATES", "exporter_config",
           "scrape_config"]

SNMP_EXPORTER = "telemetry/snmp-exporter-sonic.yml"
SCRAPE = "telemetry/prometheus-scrape-sonic-snmp.yml"
MODULE = "fabgen_sonic_bgp"
AUTH = "fabgen_sonic"
# RFC 4273 BGP4-MIB: bgpPeerTable.bgpPeerEntry.bgpPeerState, INDEX { bgpPeerRemoteAddr }.
BGP_PEER_STATE_OID = "1.3.6.1.2.1.15.3.1.2"
STATES = {1: "idle", 2: "connect", 3: "active", 4: "opensent", 5: "openconfirm",
          6: "established"}
ESTABLISHED = 6
METRIC = "sonic_bgp_peer_state"
PEER_LABEL = "neighbor"
# snmp_exporter's default listen port (main.go --web.listen-address :9116).
EXPORTER_PORT = 9116
# The environment variables snmp_exporter reads the SNMPv3 user from.
ENV = {"username": "FABGEN_SNMP_USERNAME", "password": "FABGEN_SNMP_AUTH_PASSWORD",
       "priv_password": "FABGEN_SNMP_PRIV_PASSWORD"}


def exporter_config() -> dict[str, Any]:
    """snmp_exporter's config: one SNMPv3 auth (authPriv, SHA and AES, the protocols
    `config snmp user add <user> priv ro sha <pass> aes <pass>` sets on SONiC) and one module
    walking bgpPeerState."""
    return {
        "auths": {AUTH: {
            "version": 3, "security_level": "authPriv",
            "username": f"${{{ENV['username']}}}", "password": f"${{{ENV['password']}}}",
            "auth_protocol": "SHA", "priv_protocol": "AES",
            "priv_password": f"${{{ENV['priv_password']}}}"}},
        "modules": {MODULE: {
            "walk": [BGP_PEER_STATE_OID],
            "metrics": [{
                "name": METRIC, "oid": BGP_PEER_STATE_OID, "type": "gauge",
                "help": "BGP4-MIB bgpPeerState of the peer (6 = established), from FRR bgpd's "
                        "AgentX subagent through the switch's snmpd",
                "indexes": [{"labelname": PEER_LABEL, "type": "InetAddressIPv4"}],
                "enum_values": dict(STATES)}]}},
    }


def scrape_config(fabric: Fabric, switches: list[Switch], interval: str) -> dict[str, Any]:
    """A `scrape_configs` file (Prometheus's scrape_config_files) for the SONiC switches:
    snmp_exporter on this host asks each switch (its name: the intent has no management
    addresses, as for gnmic's targets); `source` and `instance` name the switch."""
    by_role: dict[str, list[str]] = {}
    for sw in switches:
        by_role.setdefault(sw.role, []).append(sw.name)
    return {"scrape_configs": [{
        "job_name": f"fabgen-{fabric.name}-sonic-snmp",
        "metrics_path": "/snmp",
        "params": {"module": [MODULE], "auth": [AUTH]},
        "scrape_interval": interval,
        "static_configs": [{"targets": names, "labels": {"fabric": fabric.name, "role": role,
                                                          "platform": "sonic"}}
                           for role, names in by_role.items()],
        "relabel_configs": [
            {"source_labels": ["__address__"], "target_label": "__param_target"},
            {"source_labels": ["__param_target"], "target_label": "source"},
            {"source_labels": ["__param_target"], "target_label": "instance"},
            {"target_label": "__address__", "replacement": f"127.0.0.1:{EXPORTER_PORT}"},
        ],
    }]}
