"""What Junos OS Evolved's gNMI server answers during the contract's alert
timelines: leaf-by-leaf updates of the paths its gnmic config subscribes
(tests/fixtures/gnmi/junos-openconfig-updates.json)."""

from __future__ import annotations

from fabgen.platforms.junos import telemetry
from tests import telemetry_timeline as tl
from tests.platforms.contract import GOLDEN, AlertTimeline

INVENTORY = "roce-junos-sonic"


def junos_updates(step: int, storm: bool) -> list[dict[str, str]]:
    """Junos's updates at `step`. Healthy: both uplinks pause 10 frames/s on priority 3 both
    ways. Storm: et-0/0/16:0 receives 20,000 pauses/s, its lossless queue tail-drops from step
    20 (the watchdog dropping it), its BGP session to 10.254.0.0 and its BFD session go down at
    step 20 and it runs at 200G; et-0/0/16:1 receives pauses on priority 0 (not lossless: no
    storm of the plan's priority) and flaps four times. (Junos has no ECN-mark or watchdog
    counter to fault.)"""
    out = []
    for update in tl.fixture("junos-openconfig-updates.json"):
        path, val = update["path"], update["val"]
        first = "et-0/0/16:0" in path
        if "jnx-pfc-statistics[priority=3]/" in path:
            val = str(int(val) + 100 * step + (200_000 * step if storm and first and
                                                   path.endswith("in-mac-pause-frames") else 0))
        elif storm and "jnx-pfc-statistics[priority=0]/in-mac-pause-frames" in path and not first:
            val = str(200_000 * step)
        elif storm and step >= 20 and first and "out-queue[queue-number=3]/tail-drop-pkts" in path:
            val = str(int(val) + 5)
        else:
            val = tl.openconfig_faults(path, val, step, storm, first) or val
        out.append({"path": path, "val": val})
    return out


# {series: value per step} from the example's rendered gnmic config
timeline = tl.openconfig_timeline(GOLDEN / INVENTORY / telemetry.GNMIC_JUNOS, junos_updates)


ALERTS = AlertTimeline(INVENTORY, timeline, {
    "PfcStorm": ("junos_pfc_in_mac_pause_frames", {"interface_name": "et-0/0/16:0",
                                                   "priority": "3"}, {}, "3m"),
    "PfcPauseRate": ("junos_pfc_in_mac_pause_frames", {"interface_name": "et-0/0/16:0",
                                                       "priority": "3"},
                     {"direction": "received"}, "7m"),
    "LosslessQueueDrops": ("junos_queues_drop_pkts",
                           {"interface_name": "et-0/0/16:0", "queue": "3", "drop": "tail"}, {},
                           "4m"),
    "BgpSessionDown": ("junos_bgp_session_state", {"neighbor": "10.254.0.0"}, {}, "5m"),
    "BfdSessionDown": ("junos_bfd_session_state", {"interface_name": "et-0/0/16:0.0"}, {},
                       "5m"),
    "LinkWrongSpeed": ("junos_intf_port_speed", {"interface_name": "et-0/0/16:0"}, {}, "7m"),
    "LinkFlapping": ("junos_intf_carrier_transitions", {"interface_name": "et-0/0/16:1"}, {},
                     "5m"),
})
