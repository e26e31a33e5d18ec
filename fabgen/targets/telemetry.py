"""Telemetry target: what each platform streams for a lossless fabric, and to whom.

- `telemetry/gnmic-sonic.yaml`: gnmic (openconfig/gnmic) subscribing to SONiC's gNMI server
  (sonic-gnmi): COUNTERS_DB port counters (PFC frames per priority), queue counters (ECN marks,
  drops, watermarks, the PFC watchdog of the watched queues) and priority-group watermarks;
  APPL_DB PORT_TABLE (oper status) and STATE_DB PORT_TABLE (operational speed). Paths and
  answers: sonic-gnmi sonic_data_client/virtual_db.go and its testdata (commit 5ec1c20b);
  COUNTERS_DB answers are keyed by port alias, which the processor maps back to SONiC names.
  BGP state is not there: STATE_DB NEIGH_STATE_TABLE is bgpmon's, which the bgp container does
  not run under fabgen's routing design (frrcfgd).
- `telemetry/snmp-exporter-sonic.yml` and `telemetry/prometheus-scrape-sonic-snmp.yml`: SONiC's
  BGP session state from FRR bgpd's BGP4-MIB through the switch's snmpd, for snmp_exporter
  (sonic_snmp says why and how).
- `telemetry/gnmic-eos.yaml`: gnmic subscribing to EOS's OpenConfig paths, each one listed as
  supported in Arista's EOS 4.36.1F image profile (aristanetworks/yang
  EOS-4.36.1F/arista-nosimageprofile.textproto): PFC frames and buffer maximum per priority, the
  PFC watchdog per transmit queue, ECN marks and drops per queue, oper status, carrier
  transitions, port speed, BGP session state, BFD session state per routed interface
  (/bfd/interfaces/interface/peers/peer/state/session-state: UP, DOWN, ADMIN_DOWN, INIT).
- NVUE: the `system telemetry` settings (OpenTelemetry export, Cumulus Linux 5.12 "Open
  Telemetry Export") are part of each switch's `nvue/<switch>/startup.yaml`: the NVUE target
  writes the tree `nvue_telemetry` builds here, so one `nv config replace` + `nv config apply`
  configures the switch and its telemetry together (a separate fragment could be forgotten, and
  a later `nv config replace` of startup.yaml alone would drop it).
  `telemetry/otel-collector.yaml` receives the export and serves it to Prometheus.
- InfiniBand: `telemetry/infiniband_exporter.sysconfig` per plane, the options of
  treydock/infiniband_exporter naming switches from OpenSM's node-name-map.

Both gnmic configs serve Prometheus (gnmic's prometheus output); the metric names they produce
are spelled out in alerts.py, which renders the alerting rules over them. Both shape the
answers with an event-starlark processor (templates/telemetry/*.star.j2). Credentials and
certificate paths are never written: gnmic reads them from its own environment variables
(GNMIC_USERNAME, GNMIC_PASSWORD, GNMIC_TLS_CA, GNMIC_TLS_CERT, GNMIC_TLS_KEY: its global flags),
which every target inherits.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

import yaml

from fabgen import templating
from fabgen.natural import natural_key
from fabgen.targets import opensm, opensm_plan, sonic, sonic_snmp
from fabgen.targets.base import Artifacts, RenderContext
from fabgen.targets.ufm import UFM_NODE_NAME_MAP
from fabgen.topology.model import Fabric, Switch

__all__ = [
    "GNMIC_EOS",
    "GNMIC_SONIC",
    "PROMETHEUS_PORTS",
    "TARGET",
    "TelemetryTarget",
    "eos_gnmic",
    "eos_names_source",
    "nvue_telemetry",
    "sonic_gnmic",
    "sonic_split_program",
    "sonic_split_source",
]

GNMIC_SONIC = "telemetry/gnmic-sonic.yaml"
GNMIC_EOS = "telemetry/gnmic-eos.yaml"
OTEL_COLLECTOR = "telemetry/otel-collector.yaml"
# Where each exporter serves Prometheus. gnmic's prometheus output defaults to :9804; the EOS
# instance takes the next port so both can run on one host. The OTel collector's Prometheus
# exporter has no default port; 9464 is the one OpenTelemetry's Prometheus exporters use.
PROMETHEUS_PORTS = {"sonic": 9804, "eos": 9805, "nvue": 9464}
# Counters are sampled every 10 s: SONiC polls queue, PG-drop and WRED/ECN counters every 10 s
# by default (port counters every 1 s; sonic-utilities counterpoll/main.py `show` defaults),
# so a faster sample repeats queue values; rates over 1 m then have 6 points.
SAMPLE_INTERVAL = "10s"
OTLP_SAMPLE_INTERVAL_S = 10


class TelemetryTarget:
    name = "telemetry"
    description = ("gnmic configs (SONiC, EOS), the OpenTelemetry collector of the NVUE "
                   "switches, InfiniBand exporter options")

    def applies(self, ctx: RenderContext) -> bool:
        return True

    def render(self, ctx: RenderContext) -> Artifacts:
        fabric = ctx.fabric
        if fabric.transport == "infiniband":
            # OpenSM's node-name-map exists only once the real GUIDs are known (guids_file)
            ufm = opensm.ufm_layout(fabric, opensm_plan.settings_from_intent(ctx.intent))
            return _infiniband(fabric, named=bool(ctx.intent.infiniband.guids_file), ufm=ufm)
        out: Artifacts = {}
        sonic = [s for s in fabric.switches if s.platform == "sonic"]
        eos = [s for s in fabric.switches if s.platform == "eos"]
        nvue = [s for s in fabric.switches if s.platform == "nvue"]
        mon = ctx.intent.monitoring
        if sonic:
            out[GNMIC_SONIC] = _yaml(sonic_gnmic(fabric, sonic, mon.gnmi_port),
                                     "gnmic --config telemetry/gnmic-sonic.yaml subscribe",
                                     SONIC_ENV)
            out[sonic_snmp.SNMP_EXPORTER] = _yaml(
                sonic_snmp.exporter_config(),
                f"snmp_exporter --config.file={sonic_snmp.SNMP_EXPORTER} "
                "--config.expand-environment-variables (snmp_exporter 0.26 or later)",
                SNMP_ENV)
            out[sonic_snmp.SCRAPE] = _yaml(
                sonic_snmp.scrape_config(fabric, sonic, SAMPLE_INTERVAL),
                f"Prometheus scrape_config_files: [{sonic_snmp.SCRAPE}] (SONiC BGP state "
                "through snmp_exporter)")
        if eos:
            out[GNMIC_EOS] = _yaml(eos_gnmic(fabric, eos, mon.eos_gnmi_port,
                                             mon.eos_gnmi_ssl_profile),
                                   "gnmic --config telemetry/gnmic-eos.yaml subscribe",
                                   EOS_ENV if mon.eos_gnmi_ssl_profile else EOS_ENV_CLEAR)
        if nvue and ctx.qos is not None:
            # The switches' own settings are in their startup.yaml (nvue target).
            out[OTEL_COLLECTOR] = _yaml(otel_collector(ctx.intent.monitoring.otlp_port),
                                        "otelcol-contrib --config telemetry/otel-collector.yaml")
        return out


TARGET = TelemetryTarget()


SONIC_ENV = ("Environment (gnmic's global flags, which every target inherits): GNMIC_TLS_CA "
             "(CA of the switches' gNMI certificates), GNMIC_TLS_CERT and GNMIC_TLS_KEY (this "
             "collector's client certificate, its common name in each switch's "
             "GNMI_CLIENT_CERT table).")
SNMP_ENV = ("Environment: FABGEN_SNMP_USERNAME, FABGEN_SNMP_AUTH_PASSWORD and "
            "FABGEN_SNMP_PRIV_PASSWORD, the SNMPv3 user each SONiC switch has (`sudo config "
            "snmp user add <user> priv ro sha <auth password> aes <priv password>`).")
EOS_ENV = ("Environment (gnmic's global flags, which every target inherits): GNMIC_USERNAME "
           "and GNMIC_PASSWORD (an EOS account allowed gNMI), GNMIC_TLS_CA (CA of the "
           "switches' certificates).")
EOS_ENV_CLEAR = ("Environment (gnmic's global flags, which every target inherits): "
                 "GNMIC_USERNAME and GNMIC_PASSWORD (an EOS account allowed gNMI). No TLS: "
                 "monitoring.eos_gnmi_ssl_profile is not set, so the password crosses the "
                 "network in clear text.")


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (the processors' Starlark programs) as literal blocks, readable and
    diffable as the program text."""


def _str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _str)


def _yaml(data: Any, usage: str, env: str = "") -> str:
    head = f"# fabgen: {usage}\n"
    if env:
        head += "".join(f"# {line}\n" for line in textwrap.wrap(env, 96))
    return head + yaml.dump(data, Dumper=_Dumper, sort_keys=True, default_flow_style=False,
                            width=100)


def _target(fabric: Fabric, sw: Switch, port: int, tls: dict[str, Any]) -> dict[str, Any]:
    # The target's key is its name: gnmic labels every metric with it (`source`), and the
    # alert rules name the switch by that label.
    return {"address": f"{sw.name}:{port}", **tls,
            "event-tags": {"fabric": fabric.name, "role": sw.role, "platform": sw.platform}}


# TLS and credentials: none in the file. gnmic loads a target's tls-ca/tls-cert/tls-key as
# paths *before* it expands environment variables in them (openconfig/gnmic 597750387b51
# pkg/config/targets.go GetTargets: expandCertPaths at :99, expandTargetEnv at :111;
# expandOSPath, config.go:1147-1172, joins a relative path to the working directory and stats
# it), so a target key `tls-ca: ${GNMIC_TLS_CA}` makes the whole config fail to load. The
# collector's environment sets gnmic's global flags instead (GNMIC_TLS_CA, GNMIC_TLS_CERT,
# GNMIC_TLS_KEY, GNMIC_USERNAME, GNMIC_PASSWORD: docs/user_guide/configuration_env.md), and
# every target without its own value inherits them (setTargetConfigDefaultsFromGlobalFlags:
# username and password always, the TLS files when the target is not insecure).
# `skip-verify: false`: the switch's certificate is checked against GNMIC_TLS_CA.


def sonic_tls() -> dict[str, Any]:
    """sonic-gnmi without certificates runs with --noTLS bound to 127.0.0.1 (sonic-buildimage
    dockers/docker-sonic-gnmi/gnmi-native.sh), so a remote collector always dials TLS. The
    client authenticates with its certificate (GNMI|gnmi user_auth cert, the default; its
    common name listed in GNMI_CLIENT_CERT with role gnmi_readonly): GNMIC_TLS_CERT and
    GNMIC_TLS_KEY, inherited from the global flags."""
    return {"insecure": False, "skip-verify": False}


def eos_tls(ssl_profile: str | None) -> dict[str, Any]:
    """EOS authenticates gNMI with the switch's AAA (username and password, from GNMIC_USERNAME
    and GNMIC_PASSWORD); it serves TLS only with an SSL profile on `transport grpc`
    (monitoring.eos_gnmi_ssl_profile)."""
    if ssl_profile is None:
        return {"insecure": True}
    return {"insecure": False, "skip-verify": False}


# Every subscription samples, states too: gnmic's Prometheus output deletes a series that has
# not been updated for 60 s (its `expiration` default), so an on-change state that stays put
# (a BGP session down for an hour) would vanish and its alert resolve on its own.
# SONiC subscriptions: name -> (gNMI target database, path, stream mode, event name, index tag).
# The event name is the middle of the metric name (sonic_<event>_<field>); the index tag names
# what follows the ':' of a key (Ethernet0:3 is queue 3).
SONIC_SUBSCRIPTIONS: dict[str, tuple[str, str, str, str, str]] = {
    # SAI_PORT_STAT_PFC_<p>_RX_PKTS / _TX_PKTS per priority, errors, octets (flex group PORT).
    "sonic-port-counters": ("COUNTERS_DB", "COUNTERS/Ethernet*", "sample", "port", ""),
    # Per queue: SAI_QUEUE_STAT_PACKETS, _DROPPED_PACKETS (QUEUE), _WRED_ECN_MARKED_PACKETS
    # (WRED_ECN_QUEUE), and on the queues the PFC watchdog watches its own fields
    # PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED / _RESTORED and PFC_WD_STATUS, which pfcwdorch
    # writes into the same COUNTERS:<queue oid> hash (sonic-gnmi testdata
    # COUNTERS:Ethernet_wildcard_Queues_alias_expected.txt). Read here rather than from the
    # COUNTERS/Ethernet*/Pfcwd path, which finds those queues through
    # MAP_PFC_PRIORITY_TO_QUEUE|AZURE only.
    "sonic-queue-counters": ("COUNTERS_DB", "COUNTERS/Ethernet*/Queues", "sample", "queue",
                             "queue"),
    # SAI_INGRESS_PRIORITY_GROUP_STAT_SHARED_WATERMARK_BYTES, _XOFF_ROOM_WATERMARK_BYTES.
    "sonic-pg-watermarks": ("COUNTERS_DB", "PERIODIC_WATERMARKS/Ethernet*/PriorityGroups",
                            "sample", "pg", "pg"),
    # oper_status as the ASIC reports it and flap_count (portsorch writes both to APPL_DB
    # PORT_TABLE; flap_count since sonic-swss #3052, 2024-03), so no flap is lost between two
    # samples where the release counts them.
    "sonic-port-state": ("APPL_DB", "PORT_TABLE", "sample", "port_state", ""),
    # speed as the link came up (portsorch updateDbPortOperSpeed writes STATE_DB PORT_TABLE
    # speed in Mb/s, N/A when unknown); APPL_DB's speed is only the configured one.
    "sonic-port-oper": ("STATE_DB", "PORT_TABLE", "sample", "port_oper", ""),
}


def sonic_layouts(switches: list[Switch]) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """({layout: {alias or name: SONiC name}}, {switch: layout}): the port names the processor
    maps sonic-gnmi's keys with. Switches of one model and split share one layout."""
    layouts: dict[str, dict[str, str]] = {}
    by_switch: dict[str, str] = {}
    for sw in switches:
        key = f"{sw.model}-{sw.breakout}x{sw.radix}"
        if key not in layouts:
            aliases = sonic.port_aliases(sw)
            layouts[key] = {**{name: name for name in aliases.values()}, **aliases}
        by_switch[sw.name] = key
    return layouts, by_switch


def _starlark(value: Any) -> str:
    """A Starlark literal of strings, dicts and lists (JSON's spelling is Starlark's), keys in
    natural order, one entry a line."""
    def ordered(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: ordered(v[k]) for k in sorted(v, key=natural_key)}
        return v
    return json.dumps(ordered(value), indent=4)


def sonic_split_source(switches: list[Switch] | None = None) -> str:
    """The starlark program that splits SONiC's keyed JSON answers into tagged events."""
    return sonic_split_program(*sonic_layouts(switches or []))


def sonic_split_program(layouts: dict[str, dict[str, str]], by_switch: dict[str, str]) -> str:
    """sonic_split_source with the port tables given: ({layout: {alias or name: SONiC name}},
    {switch: layout})."""
    subs = SONIC_SUBSCRIPTIONS.values()
    sources = {f"{db}|/{path}": event for db, path, _, event, _ in subs}
    index_tags = {f"{db}|/{path}": index for db, path, _, _, index in subs if index}
    return templating.render("telemetry/sonic-split.star.j2", sources=_starlark(sources),
                             index_tags=_starlark(index_tags), layouts=_starlark(layouts),
                             switches=_starlark(by_switch))


def eos_names_source() -> str:
    """The starlark program that names EOS's OpenConfig events (interface, neighbour, leaf)."""
    return templating.render("telemetry/eos-names.star.j2")


def sonic_gnmic(fabric: Fabric, switches: list[Switch], port: int) -> dict[str, Any]:
    """gnmic config for the SONiC switches.

    Resulting metrics (gnmic prometheus output: prefix, event name, value name joined by `_`):
    sonic_port_<SAI_PORT_STAT_...>{source, interface}, sonic_queue_<SAI_QUEUE_STAT_... |
    PFC_WD_...>{source, interface, queue}, sonic_pg_<SAI_INGRESS_PRIORITY_GROUP_STAT_...>{source,
    interface, pg}, sonic_port_state_oper_up{source, interface}, sonic_port_oper_speed (Mb/s)
    {source, interface}. `interface` is the SONiC name (Ethernet0) whatever alias sonic-gnmi
    keyed the answer by. (BGP: sonic_snmp, sonic_bgp_peer_state{source, neighbor}.)
    """
    def subscription(db: str, path: str, mode: str) -> dict[str, Any]:
        sub: dict[str, Any] = {"target": db, "paths": [path], "mode": "stream",
                               "stream-mode": mode, "encoding": "json_ietf"}
        if mode == "sample":
            sub["sample-interval"] = SAMPLE_INTERVAL
        return sub

    tls = sonic_tls()
    return {
        "targets": {sw.name: _target(fabric, sw, port, tls) for sw in switches},
        "subscriptions": {name: subscription(db, path, mode)
                          for name, (db, path, mode, _, _) in SONIC_SUBSCRIPTIONS.items()},
        "processors": {"fabgen-sonic-split": {"event-starlark": {
            "source": sonic_split_source(switches)}}},
        "outputs": {"prometheus": {
            "type": "prometheus", "listen": f":{PROMETHEUS_PORTS['sonic']}",
            "metric-prefix": "sonic", "append-subscription-name": True,
            "event-processors": ["fabgen-sonic-split"]}},
    }


def eos_gnmic(fabric: Fabric, switches: list[Switch], port: int,
              ssl_profile: str | None = None) -> dict[str, Any]:
    """gnmic config for the EOS switches.

    Resulting metrics: eos_pfc_{in_frames, out_frames, all_buffers_octets_max_last_poll}
    {source, interface_name, priority_index}, eos_pfcwd_{stuck_count, recovery_count}
    {source, interface_name, tx_queue_index}, eos_queues_{ecn_marked_pkts, dropped_pkts,
    transmit_pkts}{source, interface_name, queue_name}, eos_intf_{oper_status (1 up),
    carrier_transitions, port_speed (Mb/s)}{source, interface_name}, eos_bgp_session_state
    (1 established){source, neighbor}, eos_bfd_session_state (1 up){source, interface_name and
    the peer's local discriminator}: openconfig-bfd keys a peer by its local discriminator, not
    its address, so the routed interface (one BGP peer per /31) names the session.
    """
    def sample(*paths: str) -> dict[str, Any]:
        return {"paths": list(paths), "mode": "stream", "stream-mode": "sample",
                "sample-interval": SAMPLE_INTERVAL, "encoding": "json_ietf"}

    tls = eos_tls(ssl_profile)
    return {
        "targets": {sw.name: _target(fabric, sw, port, tls) for sw in switches},
        "subscriptions": {
            "pfc": sample("/interfaces/interface/ethernet/pfc/priorities/priority/state"),
            "pfcwd": sample("/interfaces/interface/ethernet/pfc/watchdog/tx-queues/tx-queue/state"),
            "queues": sample("/qos/interfaces/interface/output/queues/queue/state"),
            # carrier-transitions counts every flap, so sampling the state loses none.
            "intf": sample("/interfaces/interface/state/oper-status",
                           "/interfaces/interface/state/counters/carrier-transitions",
                           "/interfaces/interface/ethernet/state/port-speed"),
            "bgp": sample("/network-instances/network-instance/protocols/protocol/bgp/"
                          "neighbors/neighbor/state/session-state"),
            # BFD session per routed interface (openconfig-bfd; in the 4.36.1F profile).
            "bfd": sample("/bfd/interfaces/interface/peers/peer/state/session-state"),
        },
        "processors": {"fabgen-eos-names": {"event-starlark": {"source": eos_names_source()}}},
        "outputs": {"prometheus": {
            "type": "prometheus", "listen": f":{PROMETHEUS_PORTS['eos']}",
            "metric-prefix": "eos", "append-subscription-name": True,
            "event-processors": ["fabgen-eos-names"]}},
    }


def nvue_telemetry(sw: Switch, rdma_priority: int, rdma_pg: int, queues: list[int],
                   destination: str | None, port: int) -> dict[str, Any]:
    """The `system telemetry` tree of one NVUE switch (Cumulus Linux 5.12, "Open Telemetry
    Export"), as the NVUE target writes it under `system` in startup.yaml.

    Keys, each from that page's commands: `export otlp state enabled`, `export otlp grpc
    destination <host> port <port>` and `grpc insecure enabled` (no certificate: the default
    secure mode needs a cert-id), `interface-stats export state enabled`, `interface-stats
    sample-interval` (1-86400 s), `interface-stats switch-priority <sp>`, `interface-stats
    ingress-buffer priority-group <pg>`, `interface-stats egress-buffer traffic-class <tc>`,
    `buffer-stats export state`, `router bgp export state`, `label <name> description <text>`.
    The page spells one value `state enable` (buffer-stats) where every other export key says
    `enabled`; `enabled` is written, as `nv show system telemetry` reports it.

    Interface statistics with the per-switch-priority counters of the lossless priority (PFC
    pause frames: nvswitch_interface_sp_rx_pause / sp_tx_pause), per-traffic-class counters of
    every queue the plan uses (ECN marks, no-buffer discards), the lossless PG's counters,
    buffer occupancy and watermarks, and BGP peer state. A static device label carries the
    switch name into every exported series (`device`). Numbered keys are strings, as in the
    rest of startup.yaml (the qos tree's switch priorities and traffic classes).
    """
    grpc: dict[str, Any] = {"port": port, "insecure": "enabled"}
    if destination is not None:
        grpc["destination"] = {destination: {"port": port}}
    return {
        "export": {"otlp": {"state": "enabled", "grpc": grpc}},
        "interface-stats": {
            "export": {"state": "enabled"},
            "sample-interval": OTLP_SAMPLE_INTERVAL_S,
            "switch-priority": {str(rdma_priority): {}},
            "egress-buffer": {"traffic-class": {str(q): {} for q in queues}},
            "ingress-buffer": {"priority-group": {str(rdma_pg): {}}},
        },
        "buffer-stats": {"export": {"state": "enabled"}},
        "router": {"bgp": {"export": {"state": "enabled"}}},
        "label": {"device": {"description": sw.name}},
    }


def otel_collector(port: int) -> dict[str, Any]:
    """An OpenTelemetry collector (contrib) that receives the switches' OTLP and serves it to
    Prometheus with the documented metric names (no unit or _total suffixes added) and the
    resource attributes (the switch's `device` label) as labels."""
    return {
        "receivers": {"otlp": {"protocols": {"grpc": {"endpoint": f"0.0.0.0:{port}"}}}},
        "exporters": {"prometheus": {
            "endpoint": f"0.0.0.0:{PROMETHEUS_PORTS['nvue']}",
            "add_metric_suffixes": False,
            "resource_to_telemetry_conversion": {"enabled": True}}},
        "service": {"pipelines": {"metrics": {"receivers": ["otlp"],
                                              "exporters": ["prometheus"]}}},
    }


def _infiniband(fabric: Fabric, named: bool = True, ufm: bool = False) -> Artifacts:
    """infiniband_exporter options per plane: switch and HCA port counters, with switch and
    HCA names from the plane's node-name-map as installed by the OpenSM files (UFM's
    ib-node-name-map with a UFM pair). `named`: the OpenSM target writes a node-name-map (it
    does once infiniband.guids_file names the real GUIDs); without one the exporter names
    nodes by their node description."""
    out: Artifacts = {}
    for plane in range(max(fabric.planes, 1)):
        names = UFM_NODE_NAME_MAP if ufm else f"{opensm.deploy_dir(fabric, plane)}/node-name-map"
        directory = "telemetry" if fabric.planes <= 1 else f"telemetry/plane{plane + 1}"
        head = ("# fabgen: /etc/sysconfig/infiniband_exporter for treydock/infiniband_exporter "
                "(systemd/infiniband_exporter@.service\n"
                f"# reads OPTIONS), on a host with a port in {fabric.name}"
                + (" (a UFM node: the map is UFM's)" if ufm else "")
                + (f" plane {plane + 1}" if fabric.planes > 1 else "") + ". ")
        if named:
            out[f"{directory}/infiniband_exporter.sysconfig"] = (
                head + "The node-name-map names switches\n# (infiniband_switch_info{switch=...}) "
                "and HCAs (infiniband_hca_info{hca=...}) as in the plan.\n"
                f'OPTIONS="--collector.switch --collector.hca '
                f'--ibnetdiscover.node-name-map={names}"\n')
        else:
            out[f"{directory}/infiniband_exporter.sysconfig"] = (
                head + "No node-name-map yet: OpenSM's is\n# written once "
                "infiniband.guids_file names the real GUIDs (add --ibnetdiscover.node-name-map="
                f"{names}\n# then); until then nodes carry their node "
                "descriptions.\n"
                'OPTIONS="--collector.switch --collector.hca"\n')
    return out
