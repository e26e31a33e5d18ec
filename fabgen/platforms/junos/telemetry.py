"""What a QFX5240 streams for the fabric's alerts: gNMI (dial-in) subscription paths and port.

The port is the one Juniper's AI JVD serves gRPC on (facts.GNMI_PORT, 32767; no documented
default was found). The paths are OpenConfig paths (github.com/openconfig/public) for the
signals the alerts target reads (its `Signals` fields). Which of them Junos OS Evolved 23.4R2
serves on a QFX5240 is what Juniper's Telemetry Explorer lists; no public Juniper document
found here confirms them per platform, so `VERIFIED` is False and each path names its source.
Two signals have no source at all: per-priority PFC pause frames and PFC watchdog storms
(OpenConfig has no leaf for either; Juniper exports them through native JTI sensors whose
paths were not found in a public document). The README says what the wiring must check.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabgen.platforms.junos import facts

__all__ = ["PATHS", "VERIFIED", "Path", "gnmic_targets"]

VERIFIED = False  # no path below was checked against a QFX5240 or Juniper's sensor list


@dataclass(frozen=True, slots=True)
class Path:
    signal: str  # what the alerts read (the alerts target's Signals field)
    path: str
    source: str


PATHS: tuple[Path, ...] = (
    Path("oper_up", "/interfaces/interface/state/oper-status",
         "openconfig-interfaces; Juniper lists /interfaces/ among its OpenConfig sensors"),
    Path("carrier", "/interfaces/interface/state/counters/carrier-transitions",
         "openconfig-interfaces"),
    Path("speed", "/interfaces/interface/ethernet/state/port-speed", "openconfig-if-ethernet"),
    Path("bgp_up", "/network-instances/network-instance/protocols/protocol/bgp/neighbors/"
                   "neighbor/state/session-state", "openconfig-bgp"),
    Path("bfd_up", "/bfd/interfaces/interface/peers/peer/state/session-state",
         "openconfig-bfd"),
    Path("ecn_other", "/qos/interfaces/interface/output/queues/queue/state/"
                      "transmit-pkts", "openconfig-qos (ECN marks: no OpenConfig leaf; "
         "NOT SOURCED for Junos)"),
    Path("lossless_drops", "/qos/interfaces/interface/output/queues/queue/state/dropped-pkts",
         "openconfig-qos"),
    Path("pfc_rx", "/junos/system/linecard/interface/", "Junos native JTI interface sensor "
         "(per-priority PFC: NOT SOURCED; verify with Juniper Telemetry Explorer)"),
    Path("watchdog", "", "no Junos PFC watchdog counter path found (NOT SOURCED); `show "
         "class-of-service congestion-notification` reports storms"),
)


def gnmic_targets(addresses: dict[str, str]) -> dict[str, dict[str, str]]:
    """gnmic `targets:` entries for switches by name -> management address."""
    return {name: {"address": f"{addr}:{facts.GNMI_PORT}"} for name, addr in
            sorted(addresses.items())}
