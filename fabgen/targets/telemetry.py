"""Telemetry target: what each platform streams for a lossless fabric, and to whom.

- `telemetry/gnmic-sonic.yaml`: gnmic (openconfig/gnmic) subscribing to SONiC's gNMI server
  (sonic-gnmi): COUNTERS_DB port counters (PFC frames per priority), queue counters (ECN marks,
  drops, watermarks), the PFC watchdog per queue and priority-group watermarks; APPL_DB PORT_TABLE
  (oper status, speed) and STATE_DB NEIGH_STATE_TABLE (BGP state, written by bgpmon), on change.
  Paths and answers: sonic-gnmi sonic_data_client/virtual_db.go and its testdata.
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
are spelled out in alerts.py, which renders the alerting rules over them. Credentials are never
written: gnmic reads them from its flags or GNMIC_USERNAME / GNMIC_PASSWORD.
"""

from __future__ import annotations

from typing import Any

import yaml

from fabgen import templating
from fabgen.targets import opensm, opensm_plan
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
    "nvue_telemetry",
    "sonic_gnmic",
    "sonic_split_source",
]

GNMIC_SONIC = "telemetry/gnmic-sonic.yaml"
GNMIC_EOS = "telemetry/gnmic-eos.yaml"
OTEL_COLLECTOR = "telemetry/otel-collector.yaml"
# Where each exporter serves Prometheus. gnmic's prometheus output defaults to :9804; the EOS
# instance takes the next port so both can run on one host. The OTel collector's Prometheus
# exporter has no default port; 9464 is the one OpenTelemetry's Prometheus exporters use.
PROMETHEUS_PORTS = {"sonic": 9804, "eos": 9805, "nvue": 9464}
# Counters are sampled every 10 s: SONiC's flex counters poll ports and queues every 10 s
# (FLEX_COUNTER_TABLE PORT/QUEUE POLL_INTERVAL 10000 ms, see sonic-swss flexcounterorch), so a
# faster sample repeats values; rates over 1 m then have 6 points.
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
        port = ctx.intent.monitoring.gnmi_port
        if sonic:
            out[GNMIC_SONIC] = _yaml(sonic_gnmic(fabric, sonic, port),
                                     "gnmic --config telemetry/gnmic-sonic.yaml subscribe")
        if eos:
            rdma = ctx.qos.rdma.priority if ctx.qos is not None else 3
            out[GNMIC_EOS] = _yaml(eos_gnmic(fabric, eos, port, rdma),
                                   "gnmic --config telemetry/gnmic-eos.yaml subscribe")
        if nvue and ctx.qos is not None:
            # The switches' own settings are in their startup.yaml (nvue target).
            out[OTEL_COLLECTOR] = _yaml(otel_collector(ctx.intent.monitoring.otlp_port),
                                        "otelcol-contrib --config telemetry/otel-collector.yaml")
        return out


TARGET = TelemetryTarget()


def _yaml(data: Any, usage: str) -> str:
    return (f"# fabgen: {usage}\n"
            + yaml.safe_dump(data, sort_keys=True, default_flow_style=False, width=100))


def _target(fabric: Fabric, sw: Switch, port: int) -> dict[str, Any]:
    # The target's key is its name: gnmic labels every metric with it (`source`), and the
    # alert rules name the switch by that label.
    return {"address": f"{sw.name}:{port}",
            "event-tags": {"fabric": fabric.name, "role": sw.role, "platform": sw.platform}}


def sonic_split_source() -> str:
    """The starlark program that splits SONiC's keyed JSON answers into tagged events."""
    return templating.render("telemetry/sonic-split.star.j2")


def sonic_gnmic(fabric: Fabric, switches: list[Switch], port: int) -> dict[str, Any]:
    """gnmic config for the SONiC switches.

    Resulting metrics (gnmic prometheus output: prefix, event name, value name joined by `_`):
    sonic_port_<SAI_PORT_STAT_...>{source, interface}, sonic_queue_<SAI_QUEUE_STAT_...>{source,
    interface, queue}, sonic_pfcwd_<PFC_WD_...>{source, interface, queue},
    sonic_pg_<SAI_INGRESS_PRIORITY_GROUP_STAT_...>{source, interface, pg},
    sonic_port_state_{oper_up, speed, mtu}{source, interface}, sonic_bgp_established{source,
    neighbor}.
    """
    def sample(db: str, path: str) -> dict[str, Any]:
        return {"target": db, "paths": [path], "mode": "stream", "stream-mode": "sample",
                "sample-interval": SAMPLE_INTERVAL, "encoding": "json_ietf"}

    def on_change(db: str, path: str) -> dict[str, Any]:
        return {"target": db, "paths": [path], "mode": "stream", "stream-mode": "on-change",
                "encoding": "json_ietf"}

    return {
        "targets": {sw.name: _target(fabric, sw, port) for sw in switches},
        "subscriptions": {
            # SAI_PORT_STAT_PFC_<p>_RX_PKTS / _TX_PKTS per priority, errors, octets.
            "sonic-port-counters": sample("COUNTERS_DB", "COUNTERS/Ethernet*"),
            # SAI_QUEUE_STAT_PACKETS, _DROPPED_PACKETS, _SHARED_WATERMARK_BYTES and, where the
            # ASIC supports it, _WRED_ECN_MARKED_PACKETS (flex counter group WRED_ECN_QUEUE:
            # `counterpoll wredqueue enable`).
            "sonic-queue-counters": sample("COUNTERS_DB", "COUNTERS/Ethernet*/Queues"),
            # PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED / _RESTORED, PFC_WD_STATUS per queue.
            "sonic-pfcwd": sample("COUNTERS_DB", "COUNTERS/Ethernet*/Pfcwd"),
            # SAI_INGRESS_PRIORITY_GROUP_STAT_SHARED_WATERMARK_BYTES, _XOFF_ROOM_WATERMARK_BYTES.
            "sonic-pg-watermarks": sample("COUNTERS_DB",
                                          "PERIODIC_WATERMARKS/Ethernet*/PriorityGroups"),
            # oper_status, speed (Mb/s), mtu: on change, so no flap falls between two samples.
            "sonic-port-state": on_change("APPL_DB", "PORT_TABLE"),
            # state per neighbour address, written by bgpmon (absent in unified FRR mode).
            "sonic-bgp-state": on_change("STATE_DB", "NEIGH_STATE_TABLE"),
        },
        "processors": {"fabgen-sonic-split": {"event-starlark": {"source": sonic_split_source()}}},
        "outputs": {"prometheus": {
            "type": "prometheus", "listen": f":{PROMETHEUS_PORTS['sonic']}",
            "metric-prefix": "sonic", "append-subscription-name": True,
            "event-processors": ["fabgen-sonic-split"]}},
    }


def eos_gnmic(fabric: Fabric, switches: list[Switch], port: int, rdma: int) -> dict[str, Any]:
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

    def on_change(*paths: str) -> dict[str, Any]:
        return {"paths": list(paths), "mode": "stream", "stream-mode": "on-change",
                "encoding": "json_ietf"}

    del rdma  # every priority is streamed; the rules pick the lossless one
    return {
        "targets": {sw.name: _target(fabric, sw, port) for sw in switches},
        "subscriptions": {
            "pfc": sample("/interfaces/interface/ethernet/pfc/priorities/priority/state"),
            "pfcwd": sample("/interfaces/interface/ethernet/pfc/watchdog/tx-queues/tx-queue/state"),
            "queues": sample("/qos/interfaces/interface/output/queues/queue/state"),
            "intf": on_change("/interfaces/interface/state/oper-status",
                              "/interfaces/interface/state/counters/carrier-transitions",
                              "/interfaces/interface/ethernet/state/port-speed"),
            "bgp": on_change("/network-instances/network-instance/protocols/protocol/bgp/"
                             "neighbors/neighbor/state/session-state"),
            # BFD session per routed interface (openconfig-bfd; in the 4.36.1F profile).
            "bfd": on_change("/bfd/interfaces/interface/peers/peer/state/session-state"),
        },
        "processors": {
            # States the rules compare as numbers: OpenConfig enumerations to 1/0, port-speed
            # identities (openconfig-if-ethernet:SPEED_400GB) to Mb/s.
            "fabgen-eos-states": {"event-strings": {
                "value-names": ["oper-status$", "session-state$", "port-speed$"],
                "transforms": [
                    {"replace": {"apply-on": "value", "old": "^(?:.*:)?(UP|ESTABLISHED)$",
                                 "new": "1"}},
                    {"replace": {"apply-on": "value",
                                 "old": "^(?:.*:)?(DOWN|TESTING|UNKNOWN|DORMANT|NOT_PRESENT|"
                                        "LOWER_LAYER_DOWN|IDLE|CONNECT|ACTIVE|OPENSENT|"
                                        "OPENCONFIRM|ADMIN_DOWN|INIT)$",
                                 "new": "0"}},
                    {"replace": {"apply-on": "value", "old": "^(?:.*:)?SPEED_([0-9]+)GB$",
                                 "new": "${1}000"}},
                ]}},
            # One interface label for every path (the qos tree keys interfaces by
            # interface-id, the bfd tree by id), one neighbour label, and value names cut to
            # their leaf.
            "fabgen-eos-names": {"event-strings": {
                "tag-names": ["^interface_interface-id$", "^interface_id$",
                              "^neighbor_neighbor-address$"],
                "value-names": [".*"],
                "transforms": [
                    {"replace": {"apply-on": "name", "old": "^interface_(interface-)?id$",
                                 "new": "interface_name"}},
                    {"replace": {"apply-on": "name", "old": "^neighbor_neighbor-address$",
                                 "new": "neighbor"}},
                    {"path-base": {"apply-on": "name"}},
                ]}},
        },
        "outputs": {"prometheus": {
            "type": "prometheus", "listen": f":{PROMETHEUS_PORTS['eos']}",
            "metric-prefix": "eos", "append-subscription-name": True,
            "event-processors": ["fabgen-eos-states", "fabgen-eos-names"]}},
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
