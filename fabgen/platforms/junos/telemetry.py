"""Junos telemetry: `telemetry/gnmic-junos.yaml`, gnmic subscribing (gNMI dial-in) to the paths
Juniper publishes for Junos OS Evolved 23.4R2, and the processor naming its answers.

Every path is in Juniper's own models for that release (Juniper/yang 2a696d62,
`23.4/23.4R2-EVO/openconfig/models`): OpenConfig modules plus Juniper's augments, none of them
marked `deviate not-supported` by Juniper's deviation module `jnx-openconfig-dev.yang`
(tests/platforms/junos/test_telemetry.py checks both with libyang when the models are here):
  - per-priority PFC frames: Juniper's augment of openconfig-if-ethernet counters,
    `jnx-pfc-statistics[priority]` with `in-mac-pause-frames` / `out-mac-pause-frames`
    (jnx-aug-openconfig-interfaces.yang, grouping jnx-pfc-stats-data);
  - queue drops: Juniper's augment of the interface counters, `out-queue[queue-number]` with
    `tail-drop-pkts` and `red-drop-pkts` (same module, jnx-interface-counters), subscribed leaf
    by leaf as Juniper's "Leaf-Level Support for PFE Sensors" allows (facts.py [PFE-LEAF]), so
    the other 14 queue leaves are not streamed for every queue of every port;
  - oper status, carrier transitions, port speed, BGP and BFD session state: OpenConfig.
What has no path in any 23.4R2-EVO model (OpenConfig, Juniper augments or native JTI
`native/jti/models`): a PFC watchdog counter and an ECN-marked-packets counter. The alerts
say so (alerts.py) instead of alerting on a series nothing sends.

Not verified on a QFX5240: which of these paths its gNMI server streams (Juniper's Telemetry
Explorer is the per-platform list, not public data), that it answers `json_ietf` for its PFE
sensors (the processor also reads module-prefixed leaf names), and that jnx-pfc-statistics's
key `priority` ("Egress queue priority value") is the PFC priority and not a queue number
(fabgen's plans keep both equal). The port is the one Juniper's AI JVD serves gRPC on
(facts.GNMI_PORT).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fabgen import templating
from fabgen.platforms.common.gnmic import SAMPLE_INTERVAL, gnmic_target
from fabgen.platforms.junos import facts
from fabgen.topology.model import Fabric, Switch

__all__ = ["GNMIC_JUNOS", "JUNOS_ENV", "PATHS", "PROMETHEUS_PORT", "SUBSCRIPTIONS", "Path",
           "junos_gnmic", "junos_names_source"]

GNMIC_JUNOS = "telemetry/gnmic-junos.yaml"
# gnmic's prometheus output: SONiC's collector takes :9804, EOS's :9805; Junos's the next so
# all three run on one host.
PROMETHEUS_PORT = 9806

JUNOS_ENV = ("Environment (gnmic's global flags, which every target inherits): GNMIC_USERNAME "
             "and GNMIC_PASSWORD (a Junos login class allowed gRPC), GNMIC_TLS_CA (CA of the "
             "switches' gRPC certificates).")

_OC = "Juniper/yang 23.4R2-EVO openconfig"
_JNX = "Juniper/yang 23.4R2-EVO jnx-aug-openconfig-interfaces"


@dataclass(frozen=True, slots=True)
class Path:
    subscription: str
    path: str
    source: str


PATHS: tuple[Path, ...] = (
    Path("pfc", "/interfaces/interface/ethernet/state/counters/jnx-pfc-statistics",
         f"{_JNX} (jnx-pfc-stats-data: in-mac-pause-frames, out-mac-pause-frames per priority)"),
    Path("queues", "/interfaces/interface/state/counters/out-queue/tail-drop-pkts",
         f"{_JNX} (jnx-interface-counters out-queue, keyed by queue-number)"),
    Path("queues", "/interfaces/interface/state/counters/out-queue/red-drop-pkts",
         f"{_JNX} (jnx-interface-counters out-queue, keyed by queue-number)"),
    Path("intf", "/interfaces/interface/state/oper-status", f"{_OC}-interfaces"),
    # carrier-transitions counts every flap, so sampling the state loses none.
    Path("intf", "/interfaces/interface/state/counters/carrier-transitions",
         f"{_OC}-interfaces"),
    Path("intf", "/interfaces/interface/ethernet/state/port-speed", f"{_OC}-if-ethernet"),
    Path("bgp", "/network-instances/network-instance/protocols/protocol/bgp/neighbors/"
                "neighbor/state/session-state", f"{_OC}-bgp"),
    Path("bfd", "/bfd/interfaces/interface/peers/peer/state/session-state", f"{_OC}-bfd"),
)

SUBSCRIPTIONS: dict[str, tuple[str, ...]] = {}
for _p in PATHS:
    SUBSCRIPTIONS[_p.subscription] = (*SUBSCRIPTIONS.get(_p.subscription, ()), _p.path)


def junos_names_source() -> str:
    """The Starlark program that names Junos's OpenConfig events (interface, priority, queue,
    neighbour, leaf)."""
    return templating.render("junos/junos-names.star.j2")


def junos_gnmic(fabric: Fabric, switches: list[Switch]) -> dict[str, Any]:
    """gnmic config for the Junos switches.

    Resulting metrics: junos_pfc_{in,out}_mac_pause_frames{source, interface_name, priority},
    junos_queues_drop_pkts{source, interface_name, queue, drop=tail|red},
    junos_intf_{oper_status (1 up), carrier_transitions, port_speed (Mb/s)}{source,
    interface_name}, junos_bgp_session_state (1 established){source, neighbor},
    junos_bfd_session_state (1 up){source, interface_name}.
    TLS is always on: the JVD's gRPC service is `ssl` with a local certificate, and Junos
    sends the password of the gNMI login with every call.
    """
    def sample(*paths: str) -> dict[str, Any]:
        return {"paths": list(paths), "mode": "stream", "stream-mode": "sample",
                "sample-interval": SAMPLE_INTERVAL, "encoding": "json_ietf"}

    tls = {"insecure": False, "skip-verify": False}
    return {
        "targets": {sw.name: gnmic_target(fabric, sw, facts.GNMI_PORT, tls) for sw in switches},
        "subscriptions": {name: sample(*paths) for name, paths in SUBSCRIPTIONS.items()},
        "processors": {"fabgen-junos-names": {"event-starlark": {
            "source": junos_names_source()}}},
        "outputs": {"prometheus": {
            "type": "prometheus", "listen": f":{PROMETHEUS_PORT}",
            "metric-prefix": "junos", "append-subscription-name": True,
            "event-processors": ["fabgen-junos-names"]}},
    }
