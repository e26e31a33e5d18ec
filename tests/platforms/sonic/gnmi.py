"""What SONiC's collectors are answered during the contract's alert timelines: sonic-gnmi's
COUNTERS_DB / APPL_DB / STATE_DB answers (tests/fixtures/gnmi/sonic-*.json, shaped as
sonic-gnmi's testdata) and snmpd's walk of FRR's BGP4-MIB (tests/fixtures/snmp)."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from fabgen.platforms.sonic import snmp as sonic_snmp
from fabgen.platforms.sonic import telemetry as sonic_telemetry
from tests import gnmic_model
from tests import telemetry_timeline as tl
from tests.conftest import ROOT
from tests.platforms.contract import GOLDEN, AlertTimeline

INVENTORY = "roce-256-sonic"

SONIC_FILES = {
    "sonic-port-counters": "sonic-COUNTERS_Ethernet_wildcard_alias.json",
    "sonic-queue-counters": "sonic-COUNTERS_Ethernet_wildcard_Queues_alias.json",
    "sonic-pg-watermarks": "sonic-PERIODIC_WATERMARKS_Ethernet_wildcard_PriorityGroups_alias.json",
    "sonic-port-state": "sonic-APPL_DB_PORT_TABLE.json",
    "sonic-port-oper": "sonic-STATE_DB_PORT_TABLE.json",
}
SNMP_WALK = ROOT / "tests" / "fixtures" / "snmp" / "leaf-su1-r0-bgpPeerState.walk"


def sonic_answers(step: int, storm: bool) -> dict[str, dict[str, Any]]:
    """What sonic-gnmi answers each subscription at `step`. Healthy: every port pauses 10
    frames/s on priority 3 both ways and marks 500 packets/s on the RoCE queue. Storm: etp1a
    (Ethernet0) receives 20,000 pauses/s, its watchdog fires and its lossless queue drops at
    step 20, etp1b marks ECN on queue 0, Ethernet0 came up at 200G, Ethernet8 flaps four times in
    its first 80 s. (BGP: sonic_snmp_walks.)"""
    answers = {name: copy.deepcopy(tl.fixture(f)) for name, f in SONIC_FILES.items()}
    ports, queues = answers["sonic-port-counters"], answers["sonic-queue-counters"]
    for alias in ports:
        tl.add(ports[alias], "SAI_PORT_STAT_PFC_3_RX_PKTS", 100 * step)
        tl.add(ports[alias], "SAI_PORT_STAT_PFC_3_TX_PKTS", 100 * step)
        tl.add(queues[f"{alias}:3"], "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS", 5000 * step)
    if storm:
        tl.add(ports["etp1a"], "SAI_PORT_STAT_PFC_3_RX_PKTS", 200_000 * step)
        # Priority 0 is not lossless: pauses there are no storm of the plan's priority.
        tl.add(ports["etp1b"], "SAI_PORT_STAT_PFC_0_RX_PKTS", 200_000 * step)
        if step >= 20:
            q3 = queues["etp1a:3"]
            q3["PFC_WD_STATUS"] = "stormed"
            tl.add(q3, "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED", 1)
            tl.add(q3, "SAI_QUEUE_STAT_DROPPED_PACKETS", 5)
        tl.add(queues["etp1b:0"], "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS", 100 * step)
        answers["sonic-port-oper"]["Ethernet0"]["speed"] = "200000"
        flapping = answers["sonic-port-state"]["Ethernet8"]
        if step < 8:
            flapping["oper_status"] = "down" if step % 2 else "up"
        tl.add(flapping, "flap_count", min(step, 8))
    return answers


def sonic_events(config: dict[str, Any], step: int, storm: bool) -> list[dict[str, Any]]:
    answers = sonic_answers(step, storm)
    out = []
    for target, spec in config["targets"].items():
        if target != "leaf-su1-r0":
            continue
        for name, sub in config["subscriptions"].items():
            out.append(gnmic_model.event(name, sub["target"], sub["paths"][0], answers[name],
                                         source=target, timestamp=step * tl.STEP_S * 10**9,
                                         event_tags=spec["event-tags"]))
    return out


def sonic_snmp_walks(step: int, storm: bool) -> dict[str, str | None]:
    """switch -> what its snmpd answers snmp_exporter's walk of bgpPeerState at `step` (None:
    no answer). Healthy: leaf-su1-r0's 32 sessions established. Storm: its session to
    10.254.0.2 is Active (3) from step 20, and leaf-su1-r1's snmpd answers with no BGP peer at
    all (bgpd not connected to its AgentX master)."""
    walk = SNMP_WALK.read_text()
    if storm and step >= 20:
        walk = walk.replace(".10.254.0.2 6\n", ".10.254.0.2 3\n")
    walks: dict[str, str | None] = {"leaf-su1-r0": walk}
    if storm:
        walks["leaf-su1-r1"] = ""
    return walks


@cache
def timeline(storm: bool) -> dict[str, list[float]]:
    """{series: value per step} from the example's rendered gnmic config and, for BGP state,
    its snmp_exporter module and scrape job."""
    golden = GOLDEN / INVENTORY
    out = tl.run((golden / sonic_telemetry.GNMIC_SONIC).read_text(), sonic_events,
                             storm)
    out.update(tl.run_snmp((golden / sonic_snmp.SNMP_EXPORTER).read_text(),
                                       (golden / sonic_snmp.SCRAPE).read_text(),
                                       sonic_snmp_walks, storm))
    return out


ALERTS = AlertTimeline(INVENTORY, timeline, {
    "PfcStorm": ("sonic_port_SAI_PORT_STAT_PFC_3_RX_PKTS", {"interface": "Ethernet0"}, {}, "3m"),
    "PfcPauseRate": ("sonic_port_SAI_PORT_STAT_PFC_3_RX_PKTS", {"interface": "Ethernet0"},
                     {"direction": "received"}, "7m"),
    "PfcWatchdogTriggered": ("sonic_queue_PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED",
                             {"interface": "Ethernet0", "queue": "3"}, {}, "4m"),
    "EcnMarksOnNonRoceQueue": ("sonic_queue_SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS",
                               {"interface": "Ethernet4", "queue": "0"}, {}, "4m"),
    "LosslessQueueDrops": ("sonic_queue_SAI_QUEUE_STAT_DROPPED_PACKETS",
                           {"interface": "Ethernet0", "queue": "3"}, {}, "4m"),
    "BgpSessionDown": ("sonic_bgp_peer_state", {"neighbor": "10.254.0.2"}, {}, "5m"),
    "BgpStateUnknown": ("up", {"source": "leaf-su1-r1"}, {}, "5m"),
    "LinkWrongSpeed": ("sonic_port_oper_speed", {"interface": "Ethernet0"}, {}, "7m"),
    "LinkFlapping": ("sonic_port_state_flap_count", {"interface": "Ethernet8"}, {}, "5m"),
})
