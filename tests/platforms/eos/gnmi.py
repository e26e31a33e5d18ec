"""What EOS's gNMI server answers during the contract's alert
timelines: leaf-by-leaf updates of the paths its gnmic config subscribes
(tests/fixtures/gnmi/eos-openconfig-updates.json)."""

from __future__ import annotations

from fabgen.platforms.eos import telemetry
from tests import telemetry_timeline as tl
from tests.platforms.contract import GOLDEN, AlertTimeline

INVENTORY = "roce-eos-nvue-2to1"


def eos_updates(step: int, storm: bool) -> list[dict[str, str]]:
    """EOS's updates at `step`. Healthy as SONiC's; storm: Ethernet1/1 receives 20,000
    pauses/s, its watchdog counts a stuck queue at step 20 and its lossless queue drops, UC1
    of Ethernet1/5 marks ECN, the BGP session to 10.254.0.0 and the BFD session of
    Ethernet1/1 go down at step 20, Ethernet1/1 runs at 200G, Ethernet1/5 flaps four times."""
    out = []
    for update in tl.fixture("eos-openconfig-updates.json"):
        path, val = update["path"], update["val"]
        first = "Ethernet1/1" in path
        if "priority[index=3]/state/" in path:
            val = str(int(val) + 100 * step + (200_000 * step if storm and first and
                                                   path.endswith("in-frames") else 0))
        elif storm and "priority[index=0]/state/in-frames" in path and not first:
            val = str(200_000 * step)
        elif path.endswith("ecn-marked-pkts"):
            if "queue[name=UC3]" in path:
                val = str(5000 * step)
            elif storm and "queue[name=UC1]" in path and not first:
                val = str(100 * step)
        elif storm and step >= 20 and first and (
                path.endswith("stuck-count") or ("queue[name=UC3]" in path
                                                 and path.endswith("dropped-pkts"))):
            val = str(int(val) + 1)
        else:
            val = tl.openconfig_faults(path, val, step, storm, first) or val
        out.append({"path": path, "val": val})
    return out


# {series: value per step} from the example's rendered gnmic config
timeline = tl.openconfig_timeline(GOLDEN / INVENTORY / telemetry.GNMIC_EOS, eos_updates)


ALERTS = AlertTimeline(INVENTORY, timeline, {
    "PfcStorm": ("eos_pfc_in_frames", {"interface_name": "Ethernet1/1", "priority_index": "3"},
                 {}, "3m"),
    "PfcPauseRate": ("eos_pfc_in_frames", {"interface_name": "Ethernet1/1",
                                           "priority_index": "3"}, {"direction": "received"},
                     "7m"),
    "PfcWatchdogTriggered": ("eos_pfcwd_stuck_count", {"interface_name": "Ethernet1/1"}, {},
                             "4m"),
    "LosslessQueueDrops": ("eos_queues_dropped_pkts",
                           {"interface_name": "Ethernet1/1", "queue_name": "UC3"}, {}, "4m"),
    "BgpSessionDown": ("eos_bgp_session_state", {"neighbor": "10.254.0.0"}, {}, "5m"),
    "BfdSessionDown": ("eos_bfd_session_state", {"interface_name": "Ethernet1/1"}, {}, "5m"),
    "LinkWrongSpeed": ("eos_intf_port_speed", {"interface_name": "Ethernet1/1"}, {}, "7m"),
    "LinkFlapping": ("eos_intf_carrier_transitions", {"interface_name": "Ethernet1/5"}, {},
                     "5m"),
})
