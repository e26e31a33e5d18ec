"""EOS telemetry: `telemetry/gnmic-eos.yaml`, gnmic subscribing to EOS's OpenConfig paths, each
one listed as supported in Arista's EOS 4.36.1F image profile (aristanetworks/yang
EOS-4.36.1F/arista-nosimageprofile.textproto): PFC frames and buffer maximum per priority, the
PFC watchdog per transmit queue, ECN marks and drops per queue, oper status, carrier
transitions, port speed, BGP session state, BFD session state per routed interface
(/bfd/interfaces/interface/peers/peer/state/session-state: UP, DOWN, ADMIN_DOWN, INIT). The
answers are named by an event-starlark processor (templates/eos-names.star.j2).
"""

from __future__ import annotations

from typing import Any

from fabgen import templating
from fabgen.platforms.common.gnmic import SAMPLE_INTERVAL, gnmic_target
from fabgen.topology.model import Fabric, Switch

__all__ = ["EOS_ENV", "EOS_ENV_CLEAR", "GNMIC_EOS", "PROMETHEUS_PORT", "eos_gnmic",
           "eos_names_source", "eos_tls"]

GNMIC_EOS = "telemetry/gnmic-eos.yaml"
# gnmic's prometheus output defaults to :9804, which the SONiC collector takes; the EOS instance
# takes the next port so both can run on one host.
PROMETHEUS_PORT = 9805

EOS_ENV = ("Environment (gnmic's global flags, which every target inherits): GNMIC_USERNAME "
           "and GNMIC_PASSWORD (an EOS account allowed gNMI), GNMIC_TLS_CA (CA of the "
           "switches' certificates).")
EOS_ENV_CLEAR = ("Environment (gnmic's global flags, which every target inherits): "
                 "GNMIC_USERNAME and GNMIC_PASSWORD (an EOS account allowed gNMI). No TLS: "
                 "monitoring.eos_gnmi_ssl_profile is not set, so the password crosses the "
                 "network in clear text.")


def eos_tls(ssl_profile: str | None) -> dict[str, Any]:
    """EOS authenticates gNMI with the switch's AAA (username and password, from GNMIC_USERNAME
    and GNMIC_PASSWORD); it serves TLS only with an SSL profile on `transport grpc`
    (monitoring.eos_gnmi_ssl_profile)."""
    if ssl_profile is None:
        return {"insecure": True}
    return {"insecure": False, "skip-verify": False}


def eos_names_source() -> str:
    """The starlark program that names EOS's OpenConfig events (interface, neighbour, leaf)."""
    return templating.render("eos/eos-names.star.j2")


def eos_gnmic(fabric: Fabric, switches: list[Switch], port: int,
              ssl_profile: str | None = None) -> dict[str, Any]:
    """gnmic config for the EOS switches.

    Resulting metrics: eos_pfc_{in_frames, out_frames, all_buffers_octets_max_last_poll}
    {source, interface_name, priority_index}, eos_pfcwd_{stuck_count, recovery_count}
    {source, interface_name, tx_queue_index}, eos_queues_{ecn_marked_pkts, dropped_pkts,
    transmit_pkts}{source, interface_name, queue_name}, eos_intf_{oper_status (1 up),
    carrier_transitions, port_speed (Mb/s)}{source, interface_name}, eos_bgp_session_state
    (1 established){source, neighbor}, eos_bfd_session_state (1 up){source, interface_name}:
    openconfig-bfd keys a peer by its local discriminator, not its address, so the routed
    interface (one BGP peer per /31) names the session and the discriminator is dropped.
    """
    def sample(*paths: str) -> dict[str, Any]:
        return {"paths": list(paths), "mode": "stream", "stream-mode": "sample",
                "sample-interval": SAMPLE_INTERVAL, "encoding": "json_ietf"}

    tls = eos_tls(ssl_profile)
    return {
        "targets": {sw.name: gnmic_target(fabric, sw, port, tls) for sw in switches},
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
            "type": "prometheus", "listen": f":{PROMETHEUS_PORT}",
            "metric-prefix": "eos", "append-subscription-name": True,
            "event-processors": ["fabgen-eos-names"]}},
    }
