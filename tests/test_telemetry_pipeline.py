"""Every rendered alert fires on gNMI answers shaped as the real servers send them, and none
fires on a healthy fabric, through the real interpreters: each answer of a timeline
(tests/telemetry_timeline.py, from the fixtures in tests/fixtures/gnmi) becomes gnmic's event,
the rendered event-starlark processor runs on it in starlark-go, and the resulting series are
evaluated against the rendered Prometheus rules by `promtool test rules`."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabgen.intent.loader import load
from fabgen.platforms.eos import telemetry as eos_telemetry
from fabgen.platforms.junos import telemetry as junos_telemetry
from fabgen.platforms.sonic import snmp as sonic_snmp
from fabgen.platforms.sonic import telemetry as sonic_telemetry
from fabgen.render import render
from fabgen.targets import alerts
from tests import gnmic_model, telemetry_timeline
from tests.conftest import ROOT
from tests.test_alerts import _alert, _run_tests

INVENTORY = {"sonic": "roce-256-sonic", "eos": "roce-eos-nvue-2to1",
             "junos": "roce-junos-sonic"}
CONFIG = {"sonic": sonic_telemetry.GNMIC_SONIC, "eos": eos_telemetry.GNMIC_EOS,
          "junos": junos_telemetry.GNMIC_JUNOS}
EVENTS = {"sonic": telemetry_timeline.sonic_events, "eos": telemetry_timeline.eos_events,
          "junos": telemetry_timeline.junos_events}

# alert -> (metric, labels that pick the faulted series, extra alert labels, when it fires)
FIRES: dict[str, dict[str, tuple[str, dict[str, str], dict[str, str], str]]] = {
    "sonic": {
        "PfcStorm": ("sonic_port_SAI_PORT_STAT_PFC_3_RX_PKTS", {"interface": "Ethernet0"},
                     {}, "3m"),
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
    },
    "eos": {
        "PfcStorm": ("eos_pfc_in_frames", {"interface_name": "Ethernet1/1",
                                           "priority_index": "3"}, {}, "3m"),
        "PfcPauseRate": ("eos_pfc_in_frames", {"interface_name": "Ethernet1/1",
                                               "priority_index": "3"},
                         {"direction": "received"}, "7m"),
        "PfcWatchdogTriggered": ("eos_pfcwd_stuck_count", {"interface_name": "Ethernet1/1"},
                                 {}, "4m"),
        "LosslessQueueDrops": ("eos_queues_dropped_pkts",
                               {"interface_name": "Ethernet1/1", "queue_name": "UC3"}, {}, "4m"),
        "BgpSessionDown": ("eos_bgp_session_state", {"neighbor": "10.254.0.0"}, {}, "5m"),
        "BfdSessionDown": ("eos_bfd_session_state", {"interface_name": "Ethernet1/1"}, {}, "5m"),
        "LinkWrongSpeed": ("eos_intf_port_speed", {"interface_name": "Ethernet1/1"}, {}, "7m"),
        "LinkFlapping": ("eos_intf_carrier_transitions", {"interface_name": "Ethernet1/5"}, {},
                         "5m"),
    },
    "junos": {
        "PfcStorm": ("junos_pfc_in_mac_pause_frames", {"interface_name": "et-0/0/16:0",
                                                       "priority": "3"}, {}, "3m"),
        "PfcPauseRate": ("junos_pfc_in_mac_pause_frames", {"interface_name": "et-0/0/16:0",
                                                           "priority": "3"},
                         {"direction": "received"}, "7m"),
        "LosslessQueueDrops": ("junos_queues_tail_drop_pkts",
                               {"interface_name": "et-0/0/16:0", "queue": "3"}, {}, "4m"),
        "BgpSessionDown": ("junos_bgp_session_state", {"neighbor": "10.254.0.0"}, {}, "5m"),
        "BfdSessionDown": ("junos_bfd_session_state", {"interface_name": "et-0/0/16:0.0"}, {},
                           "5m"),
        "LinkWrongSpeed": ("junos_intf_port_speed", {"interface_name": "et-0/0/16:0"}, {}, "7m"),
        "LinkFlapping": ("junos_intf_carrier_transitions", {"interface_name": "et-0/0/16:1"},
                         {}, "5m"),
    },
}


@functools.cache
def _files(platform: str) -> dict[str, str]:
    return render(load(ROOT / "inventories" / f"{INVENTORY[platform]}.yaml"),
                  only=["telemetry", "alerts"])


def _rendered(platform: str) -> tuple[str, str]:
    files = _files(platform)
    return files[CONFIG[platform]], files[alerts.RULES]


@functools.cache
def _timeline(platform: str, storm: bool) -> dict[str, list[float]]:
    timeline = telemetry_timeline.run(_rendered(platform)[0], EVENTS[platform], storm)
    if platform == "sonic":  # BGP state: snmp_exporter on FRR's BGP4-MIB (sonic_snmp)
        files = _files(platform)
        timeline.update(telemetry_timeline.run_snmp(files[sonic_snmp.SNMP_EXPORTER],
                                                    files[sonic_snmp.SCRAPE], storm))
    return timeline


def _rules(platform: str, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    text = _rendered(platform)[1]
    path = tmp_path / "rules.yaml"
    path.write_text(text)
    group = next(g for g in yaml.safe_load(text)["groups"] if g["name"].endswith(platform))
    return path, group


def _rendered_alerts(platform: str) -> list[str]:
    group = next(g for g in yaml.safe_load(_rendered(platform)[1])["groups"]
                 if g["name"].endswith(platform))
    return [r["alert"] for r in group["rules"]]


def test_every_rendered_alert_has_a_firing_case() -> None:
    for platform in FIRES:
        assert sorted(_rendered_alerts(platform)) == sorted(FIRES[platform]), platform


@pytest.mark.realtool
@pytest.mark.parametrize(("platform", "alertname"),
                         [(p, a) for p, cases in FIRES.items() for a in cases])
def test_alert_fires_on_the_storm(platform: str, alertname: str, tmp_path: Path) -> None:
    rules, group = _rules(platform, tmp_path)
    rule = next(r for r in group["rules"] if r["alert"] == alertname)
    metric, pick, extra, at = FIRES[platform][alertname]
    timeline = _timeline(platform, True)
    matches = [telemetry_timeline.labels(k) for k in timeline
               if k.startswith(metric + "{") and pick.items() <= telemetry_timeline.labels(
                   k).items()]
    assert len(matches) == 1, (metric, pick, matches)
    expected = {**matches[0], **extra, **rule["labels"]}
    series = telemetry_timeline.promtool_series(timeline)
    _run_tests(rules, [{"interval": f"{telemetry_timeline.STEP_S}s", "input_series": series,
                        "alert_rule_test": [_alert(alertname, at, expected)]}])


@pytest.mark.realtool
@pytest.mark.parametrize("platform", list(FIRES))
def test_healthy_fabric_is_silent(platform: str, tmp_path: Path) -> None:
    rules, _ = _rules(platform, tmp_path)
    series = telemetry_timeline.promtool_series(_timeline(platform, False))
    checks = [_alert(name, at) for name in _rendered_alerts(platform)
              for at in ("3m", "7m", "10m")]
    _run_tests(rules, [{"interval": f"{telemetry_timeline.STEP_S}s", "input_series": series,
                        "alert_rule_test": checks}])


def test_sonic_processor_names_ports_by_sonic_name() -> None:
    """sonic-gnmi keys COUNTERS_DB by alias; every series names the SONiC port, the periodic
    watermark copies and the non-port keys of PORT_TABLE are left out."""
    timeline = _timeline("sonic", False)
    interfaces = {telemetry_timeline.labels(k).get("interface") for k in timeline}
    assert interfaces == {"Ethernet0", "Ethernet4", "Ethernet8", None}
    queues = {telemetry_timeline.labels(k)["queue"] for k in timeline if "sonic_queue_" in k}
    assert queues == {str(q) for q in range(8)}
    assert not [k for k in timeline if "periodic" in k or "PortConfigDone" in k]
    assert [k for k in timeline if k.startswith("sonic_port_oper_speed{")]


def test_attribute_rewrite_touches_only_event_attributes() -> None:
    source = 'x = e.values.items()\ny = d.values()\ne.tags["a"] = t.name\nz = s.strip()\n'
    assert gnmic_model.rewrite_attributes(source) == (
        'x = e["values"].items()\ny = d.values()\ne["tags"]["a"] = t["name"]\n'
        'z = s.strip()\n')


# --- cross-check against sonic-gnmi's own testdata (FABGEN_UPSTREAM) ---------------------------

def _upstream(repo: str) -> Path:
    root = os.environ.get("FABGEN_UPSTREAM")
    if not root:
        pytest.skip("FABGEN_UPSTREAM (a directory holding owner+name checkouts) is not set")
    path = Path(root) / repo
    if not path.is_dir():
        pytest.fail(f"FABGEN_UPSTREAM has no {repo} checkout")
    return path


def _keys(data: dict[str, Any]) -> set[str]:
    """Key shapes: `<port>`, `<port>:<n>`, `<port>:<n>:periodic`."""
    return {":".join(["P", *["N" if p.isdigit() else p for p in k.split(":")[1:]]])
            for k in data}


def test_fixtures_are_shaped_as_sonic_gnmi_testdata() -> None:
    gnmi = _upstream("sonic-net+sonic-gnmi") / "testdata"
    pairs = {
        "COUNTERS:Ethernet_wildcard_alias_expected.txt":
            "sonic-COUNTERS_Ethernet_wildcard_alias.json",
        "COUNTERS:Ethernet_wildcard_Queues_alias_expected.txt":
            "sonic-COUNTERS_Ethernet_wildcard_Queues_alias.json",
        "PERIODIC_WATERMARKS:Ethernet_wildcard:PriorityGroups_alias_expected.txt":
            "sonic-PERIODIC_WATERMARKS_Ethernet_wildcard_PriorityGroups_alias.json",
    }
    for theirs, ours in pairs.items():
        real = json.loads((gnmi / theirs).read_text())
        mine = telemetry_timeline.fixture(ours)
        assert _keys(mine) == _keys(real), theirs
        real_fields = {f for v in real.values() for f in v}
        mine_fields = {f for v in mine.values() for f in v}
        # WRED_ECN_MARKED_PACKETS: the WRED_ECN_QUEUE group's counter, which their test
        # database does not enable
        assert mine_fields <= real_fields | {"SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS"}, (
            theirs, sorted(mine_fields - real_fields))
        assert all(isinstance(v, str) for fields in real.values() for v in fields.values())


def test_processor_maps_sonic_gnmi_testdata_to_sonic_names() -> None:
    """sonic-gnmi's own alias-keyed answer (its test server's ports alias Ethernet68 as
    Ethernet68/1, which gnmic splits at the /) through the rendered processor: every event
    names Ethernet68 and the queue."""
    gnmi = _upstream("sonic-net+sonic-gnmi") / "testdata"
    aliases = {v["alias"]: k.split("|", 1)[1] for k, v in json.loads(
        (gnmi / "COUNTERS_PORT_ALIAS_MAP.txt").read_text()).items()}
    layout = {**{n: n for n in aliases.values()}, **aliases}
    processor = gnmic_model.Processor(
        sonic_telemetry.sonic_split_program({"test": layout}, {"sonic-gnmi-test": "test"}))
    answer = json.loads((gnmi / "COUNTERS:Ethernet_wildcard_Queues_alias_expected.txt")
                        .read_text())
    event = gnmic_model.event("sonic-queue-counters", "COUNTERS_DB",
                              "COUNTERS/Ethernet*/Queues", answer, source="sonic-gnmi-test",
                              timestamp=0)
    out = processor.apply([event])
    expected = {(aliases[k.split(":")[0]], k.split(":")[1]) for k in answer
                if not k.endswith(":periodic")}
    assert {(e["tags"]["interface"], e["tags"]["queue"]) for e in out} == expected
    assert all(e["name"] == "queue" for e in out)
    watched = [e for e in out if "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED" in e["values"]]
    assert watched and all(e["values"]["PFC_WD_STORMED"] == 0 for e in watched)
