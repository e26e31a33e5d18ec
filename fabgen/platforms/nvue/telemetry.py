"""Cumulus NVUE telemetry: the `system telemetry` settings (OpenTelemetry export, Cumulus Linux
5.12 "Open Telemetry Export") are part of each switch's `nvue/<switch>/startup.yaml`: the NVUE
target writes the tree `nvue_telemetry` builds here, so one `nv config replace` + `nv config
apply` configures the switch and its telemetry together (a separate fragment could be
forgotten, and a later `nv config replace` of startup.yaml alone would drop it).
`telemetry/otel-collector.yaml` receives the export and serves it to Prometheus.
"""

from __future__ import annotations

from typing import Any

from fabgen.topology.model import Switch

__all__ = ["OTEL_COLLECTOR", "OTLP_SAMPLE_INTERVAL_S", "PROMETHEUS_PORT", "nvue_telemetry",
           "otel_collector"]

OTEL_COLLECTOR = "telemetry/otel-collector.yaml"
# The OTel collector's Prometheus exporter has no default port; 9464 is the one OpenTelemetry's
# Prometheus exporters use.
PROMETHEUS_PORT = 9464
OTLP_SAMPLE_INTERVAL_S = 10


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
            "endpoint": f"0.0.0.0:{PROMETHEUS_PORT}",
            "add_metric_suffixes": False,
            "resource_to_telemetry_conversion": {"enabled": True}}},
        "service": {"pipelines": {"metrics": {"receivers": ["otlp"],
                                              "exporters": ["prometheus"]}}},
    }
