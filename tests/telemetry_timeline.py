"""Timelines of gNMI answers (a PFC storm with every fault the alerts know, and a healthy
fabric) built from the fixtures in tests/fixtures/gnmi, fed through the rendered gnmic config:
each answer becomes gnmic's event (tests/gnmic_model.py), the rendered event-starlark
processor runs on it in starlark-go, and the Prometheus output's series are collected step by
step into promtool input series."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests import gnmic_model, snmp_exporter_model

FIXTURES = Path(__file__).parent / "fixtures" / "gnmi"
STEP_S = 10  # gnmic samples every 10 s (fabgen.platforms.common.gnmic.SAMPLE_INTERVAL)
STEPS = 61  # 10 minutes

Answer = dict[str, Any]


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def _add(fields: dict[str, str], field: str, amount: int) -> None:
    fields[field] = str(int(fields[field]) + amount)


# --- SONiC ------------------------------------------------------------------------------------

SONIC_FILES = {
    "sonic-port-counters": "sonic-COUNTERS_Ethernet_wildcard_alias.json",
    "sonic-queue-counters": "sonic-COUNTERS_Ethernet_wildcard_Queues_alias.json",
    "sonic-pg-watermarks": "sonic-PERIODIC_WATERMARKS_Ethernet_wildcard_PriorityGroups_alias.json",
    "sonic-port-state": "sonic-APPL_DB_PORT_TABLE.json",
    "sonic-port-oper": "sonic-STATE_DB_PORT_TABLE.json",
}
SNMP_WALK = Path(__file__).parent / "fixtures" / "snmp" / "leaf-su1-r0-bgpPeerState.walk"


def sonic_answers(step: int, storm: bool) -> dict[str, Answer]:
    """What sonic-gnmi answers each subscription at `step`. Healthy: every port pauses 10
    frames/s on priority 3 both ways and marks 500 packets/s on the RoCE queue. Storm: etp1a
    (Ethernet0) receives 20,000 pauses/s, its watchdog fires and its lossless queue drops at
    step 20, etp1b marks ECN on queue 0, Ethernet0 came up at 200G, Ethernet8 flaps four times in
    its first 80 s. (BGP: sonic_snmp_walks.)"""
    answers = {name: copy.deepcopy(fixture(f)) for name, f in SONIC_FILES.items()}
    ports, queues = answers["sonic-port-counters"], answers["sonic-queue-counters"]
    for alias in ports:
        _add(ports[alias], "SAI_PORT_STAT_PFC_3_RX_PKTS", 100 * step)
        _add(ports[alias], "SAI_PORT_STAT_PFC_3_TX_PKTS", 100 * step)
        _add(queues[f"{alias}:3"], "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS", 5000 * step)
    if storm:
        _add(ports["etp1a"], "SAI_PORT_STAT_PFC_3_RX_PKTS", 200_000 * step)
        # Priority 0 is not lossless: pauses there are no storm of the plan's priority.
        _add(ports["etp1b"], "SAI_PORT_STAT_PFC_0_RX_PKTS", 200_000 * step)
        if step >= 20:
            q3 = queues["etp1a:3"]
            q3["PFC_WD_STATUS"] = "stormed"
            _add(q3, "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED", 1)
            _add(q3, "SAI_QUEUE_STAT_DROPPED_PACKETS", 5)
        _add(queues["etp1b:0"], "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS", 100 * step)
        answers["sonic-port-oper"]["Ethernet0"]["speed"] = "200000"
        flapping = answers["sonic-port-state"]["Ethernet8"]
        if step < 8:
            flapping["oper_status"] = "down" if step % 2 else "up"
        _add(flapping, "flap_count", min(step, 8))
    return answers


def sonic_events(config: dict[str, Any], step: int, storm: bool) -> list[dict[str, Any]]:
    answers = sonic_answers(step, storm)
    out = []
    for target, spec in config["targets"].items():
        if target != "leaf-su1-r0":
            continue
        for name, sub in config["subscriptions"].items():
            out.append(gnmic_model.event(name, sub["target"], sub["paths"][0], answers[name],
                                         source=target, timestamp=step * STEP_S * 10**9,
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


def run_snmp(exporter_text: str, scrape_text: str, storm: bool) -> dict[str, list[float]]:
    """{series: value per step} Prometheus stores from the rendered snmp_exporter module and
    scrape job (tests/snmp_exporter_model.py)."""
    (job,) = yaml.safe_load(scrape_text)["scrape_configs"]
    (module,) = yaml.safe_load(exporter_text)["modules"].values()
    timeline: dict[str, list[float]] = {}
    for step in range(STEPS):
        for target, walk in sonic_snmp_walks(step, storm).items():
            for key, value in snmp_exporter_model.scrape(job, module, target, walk).items():
                timeline.setdefault(key, [float("nan")] * step).append(value)
        for values in timeline.values():
            if len(values) < step + 1:
                values.append(float("nan"))
    return timeline


# --- EOS --------------------------------------------------------------------------------------

def eos_updates(step: int, storm: bool) -> list[dict[str, str]]:
    """EOS's updates at `step`. Healthy as SONiC's; storm: Ethernet1/1 receives 20,000
    pauses/s, its watchdog counts a stuck queue at step 20 and its lossless queue drops, UC1
    of Ethernet1/5 marks ECN, the BGP session to 10.254.0.0 and the BFD session of
    Ethernet1/1 go down at step 20, Ethernet1/1 runs at 200G, Ethernet1/5 flaps four times."""
    out = []
    for update in fixture("eos-openconfig-updates.json"):
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
        elif storm and step >= 20 and "neighbor-address=10.254.0.0" in path:
            val = "ACTIVE"
        elif storm and step >= 20 and first and path.startswith("/bfd/"):
            val = "DOWN"
        elif storm and first and path.endswith("port-speed"):
            val = "openconfig-if-ethernet:SPEED_200GB"
        elif storm and not first and path.endswith("carrier-transitions"):
            val = str(int(val) + min(step, 8))
        elif storm and not first and path.endswith("oper-status") and step < 8:
            val = "DOWN" if step % 2 else "UP"
        out.append({"path": path, "val": val})
    return out


def eos_events(config: dict[str, Any], step: int, storm: bool) -> list[dict[str, Any]]:
    return openconfig_events(config, eos_updates(step, storm), step)


# --- Junos ------------------------------------------------------------------------------------

def junos_updates(step: int, storm: bool) -> list[dict[str, str]]:
    """Junos's updates at `step`. Healthy: both uplinks pause 10 frames/s on priority 3 both
    ways. Storm: et-0/0/16:0 receives 20,000 pauses/s, its lossless queue tail-drops from step
    20 (the watchdog dropping it), its BGP session to 10.254.0.0 and its BFD session go down at
    step 20 and it runs at 200G; et-0/0/16:1 receives pauses on priority 0 (not lossless: no
    storm of the plan's priority) and flaps four times. (Junos has no ECN-mark or watchdog
    counter to fault.)"""
    out = []
    for update in fixture("junos-openconfig-updates.json"):
        path, val = update["path"], update["val"]
        first = "et-0/0/16:0" in path
        if "jnx-pfc-statistics[priority=3]/" in path:
            val = str(int(val) + 100 * step + (200_000 * step if storm and first and
                                                   path.endswith("in-mac-pause-frames") else 0))
        elif storm and "jnx-pfc-statistics[priority=0]/in-mac-pause-frames" in path and not first:
            val = str(200_000 * step)
        elif storm and step >= 20 and first and "out-queue[queue-number=3]/tail-drop-pkts" in path:
            val = str(int(val) + 5)
        elif storm and step >= 20 and "neighbor-address=10.254.0.0" in path:
            val = "ACTIVE"
        elif storm and step >= 20 and first and path.startswith("/bfd/"):
            val = "DOWN"
        elif storm and first and path.endswith("port-speed"):
            val = "openconfig-if-ethernet:SPEED_200GB"
        elif storm and not first and path.endswith("carrier-transitions"):
            val = str(int(val) + min(step, 8))
        elif storm and not first and path.endswith("oper-status") and step < 8:
            val = "DOWN" if step % 2 else "UP"
        out.append({"path": path, "val": val})
    return out


def junos_events(config: dict[str, Any], step: int, storm: bool) -> list[dict[str, Any]]:
    return openconfig_events(config, junos_updates(step, storm), step)


def openconfig_events(config: dict[str, Any], updates: list[dict[str, str]],
                      step: int) -> list[dict[str, Any]]:
    """One event per leaf-by-leaf update of leaf-su1-r0, named after the subscription whose
    path the update is under."""
    subs = {p: name for name, sub in config["subscriptions"].items() for p in sub["paths"]}
    target = "leaf-su1-r0"
    tags = config["targets"][target]["event-tags"]
    out = []
    for update in updates:
        bare, _ = gnmic_model._path_tags(update["path"])
        name = next(n for p, n in subs.items() if bare == p or bare.startswith(p + "/"))
        value = json.loads(json.dumps(update["val"]))
        out.append(gnmic_model.event(name, None, update["path"], value, source=target,
                                     timestamp=step * STEP_S * 10**9, event_tags=tags))
    return out


# --- through the processor into series -------------------------------------------------------

def run(config_text: str, events_at: Callable[[dict[str, Any], int, bool], list[dict[str, Any]]],
        storm: bool) -> dict[str, list[float]]:
    """{series: value per step} of a timeline through the rendered gnmic config."""
    config = yaml.safe_load(config_text)
    (output,) = config["outputs"].values()
    (processor_name,) = output["event-processors"]
    processor = gnmic_model.Processor(
        config["processors"][processor_name]["event-starlark"]["source"])
    timeline: dict[str, list[float]] = {}
    for step in range(STEPS):
        got = gnmic_model.series(processor.apply(events_at(config, step, storm)),
                                 output["metric-prefix"])
        for key, value in got.items():
            timeline.setdefault(key, [float("nan")] * step).append(value)
        for values in timeline.values():
            if len(values) < step + 1:
                values.append(float("nan"))
    return timeline


def promtool_series(timeline: dict[str, list[float]]) -> list[dict[str, str]]:
    """promtool input_series; a step with no sample is `_`."""
    def text(v: float) -> str:
        if v != v:
            return "_"
        return str(int(v)) if v.is_integer() else repr(v)
    return [{"series": key, "values": " ".join(text(v) for v in values)}
            for key, values in sorted(timeline.items())]


def labels(key: str) -> dict[str, str]:
    """The labels of a series key `name{a="b", ...}`."""
    inner = key[key.index("{") + 1:-1]
    out = {}
    for part in inner.split('", '):
        k, _, v = part.partition('="')
        out[k] = v.rstrip('"')
    return out
