"""The rendered Prometheus rules pass `promtool check rules`, and `promtool test rules` sees the
right alerts fire on synthetic series of a PFC storm (and other faults) and stay silent on a
healthy fabric (synthetic series here; the platform contract feeds each platform's rules from
its server's answers through its rendered collector: tests/platforms/contract.py)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabgen.intent.loader import load
from fabgen.render import render
from fabgen.targets import alerts
from tests.conftest import ROOT, require_tool

STEP = "10s"  # sample interval of the synthetic series


def _rules(inventory: str, tmp_path: Path) -> Path:
    files = render(load(ROOT / "inventories" / f"{inventory}.yaml"), only=["alerts"])
    path = tmp_path / "rules.yaml"
    path.write_text(files[alerts.RULES])
    return path


def _promtool(*args: str) -> subprocess.CompletedProcess[str]:
    require_tool("promtool")
    return subprocess.run(["promtool", *args], capture_output=True, text=True, check=False)


def _annotated(rules: Path, tests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Add each expected alert's annotations: promtool compares them too. They are the rule's
    templates with the alert's labels filled in (`{{ $labels.x }}` is all the rules use)."""
    groups = yaml.safe_load(rules.read_text())["groups"]
    by_key = {(r["alert"], r["labels"]["platform"]): r["annotations"]
              for g in groups for r in g["rules"] if "alert" in r}
    for test in tests:
        for check in test["alert_rule_test"]:
            for exp in check["exp_alerts"]:
                labels = exp["exp_labels"]
                templates = by_key[check["alertname"], labels["platform"]]
                exp["exp_annotations"] = {k: _fill(v, labels) for k, v in templates.items()}
    return tests


def _fill(template: str, labels: dict[str, str]) -> str:
    return re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels[m.group(1)], template)


def _run_tests(rules: Path, tests: list[dict[str, Any]]) -> None:
    tests = _annotated(rules, tests)
    spec = rules.parent / "tests.yaml"
    spec.write_text(yaml.safe_dump({"rule_files": [rules.name], "evaluation_interval": "10s",
                                    "tests": tests}, sort_keys=False))
    run = _promtool("test", "rules", str(spec))
    assert run.returncode == 0, run.stdout + run.stderr


def _series(name: str, labels: dict[str, str], values: str) -> dict[str, str]:
    inner = ", ".join(f'{k}="{v}"' for k, v in labels.items())
    return {"series": f"{name}{{{inner}}}", "values": values}


def _alert(alertname: str, eval_time: str, *expected: dict[str, str]) -> dict[str, Any]:
    return {"eval_time": eval_time, "alertname": alertname,
            "exp_alerts": [{"exp_labels": labels} for labels in expected]}


@pytest.mark.realtool
@pytest.mark.parametrize("inventory", ["roce-256-sonic", "roce-eos-nvue-2to1", "roce-junos-sonic",
                                       "ib-ndr-1024"])
def test_rules_pass_promtool_check(inventory: str, tmp_path: Path) -> None:
    run = _promtool("check", "rules", str(_rules(inventory, tmp_path)))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "SUCCESS" in run.stdout


# --- SONiC ------------------------------------------------------------------------------------

SONIC = {"fabric": "roce-256", "source": "leaf-su1-r0"}
SONIC_RULE = {"fabric": "roce-256", "platform": "sonic"}
# The snmp_exporter scrape job's labels (telemetry/prometheus-scrape-sonic-snmp.yml).
SNMP_JOB = {"job": "fabgen-roce-256-sonic-snmp", "fabric": "roce-256", "role": "leaf",
            "platform": "sonic"}


def _sonic_port(port: str) -> dict[str, str]:
    return {**SONIC, "interface": port}


@pytest.mark.realtool
def test_sonic_storm_and_faults_fire(tmp_path: Path) -> None:
    # 400G: 11,921 pause frames/s hold a link paused (65535 quanta x 512 bit times). Ethernet0
    # receives 20,000/s (a storm), Ethernet8 10/s (a busy, healthy port).
    storm = _sonic_port("Ethernet0")
    calm = _sonic_port("Ethernet8")
    flappy = _sonic_port("Ethernet16")
    series = [
        _series("sonic_port_SAI_PORT_STAT_PFC_3_RX_PKTS", storm, "0+200000x60"),
        _series("sonic_port_SAI_PORT_STAT_PFC_3_RX_PKTS", calm, "0+100x60"),
        _series("sonic_port_SAI_PORT_STAT_PFC_3_TX_PKTS", calm, "0+100x60"),
        # Priority 0 is not lossless: a high count there is not a PFC storm on the plan's queue.
        _series("sonic_port_SAI_PORT_STAT_PFC_0_RX_PKTS", calm, "0+200000x60"),
        _series("sonic_queue_PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED", {**storm, "queue": "3"},
                "0x20 1x40"),
        _series("sonic_queue_SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS", {**calm, "queue": "0"},
                "0+10x60"),
        _series("sonic_queue_SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS", {**calm, "queue": "3"},
                "0+1000x60"),
        _series("sonic_queue_SAI_QUEUE_STAT_DROPPED_PACKETS", {**storm, "queue": "3"},
                "0x20 5x40"),
        # BGP4-MIB bgpPeerState through snmp_exporter: 6 established, 3 active.
        _series("sonic_bgp_peer_state", {**SONIC, "neighbor": "10.254.0.1"}, "6x20 3x40"),
        _series("sonic_bgp_peer_state", {**SONIC, "neighbor": "10.254.0.3"}, "6x60"),
        _series("up", {**SNMP_JOB, "source": "leaf-su1-r0"}, "1x60"),
        # leaf-su1-r1's snmpd answers, but with no BGP4-MIB peer (bgpd not on AgentX).
        _series("up", {**SNMP_JOB, "source": "leaf-su1-r1"}, "1x60"),
        _series("sonic_port_oper_speed", storm, "200000x60"),
        _series("sonic_port_oper_speed", calm, "400000x60"),
        _series("sonic_port_state_oper_up", storm, "1x60"),
        _series("sonic_port_state_oper_up", calm, "1x60"),
        _series("sonic_port_state_oper_up", flappy, "1 0 1 0 1 0 1 0 1x52"),
    ]
    crit = {**SONIC_RULE, "severity": "critical"}
    warn = {**SONIC_RULE, "severity": "warning"}
    tests = [{"interval": STEP, "input_series": series, "alert_rule_test": [
        _alert("PfcStorm", "3m", {**storm, **crit}),
        _alert("PfcPauseRate", "7m", {**storm, **warn, "direction": "received"}),
        _alert("PfcWatchdogTriggered", "4m", {**storm, **crit, "queue": "3"}),
        _alert("EcnMarksOnNonRoceQueue", "4m", {**calm, **warn, "queue": "0"}),
        _alert("LosslessQueueDrops", "4m", {**storm, **crit, "queue": "3"}),
        _alert("BgpSessionDown", "5m", {**SONIC, **crit, "neighbor": "10.254.0.1"}),
        _alert("BgpStateUnknown", "5m", {**SNMP_JOB, "source": "leaf-su1-r1", **warn}),
        _alert("LinkWrongSpeed", "7m", {**storm, **warn}),
        _alert("LinkFlapping", "5m", {**flappy, **warn}),
    ]}]
    _run_tests(_rules("roce-256-sonic", tmp_path), tests)


@pytest.mark.realtool
def test_sonic_healthy_fabric_is_silent(tmp_path: Path) -> None:
    ports = [_sonic_port(f"Ethernet{n}") for n in (0, 8, 16)]
    series = []
    for port in ports:
        series += [
            _series("sonic_port_SAI_PORT_STAT_PFC_3_RX_PKTS", port, "0+100x90"),
            _series("sonic_port_SAI_PORT_STAT_PFC_3_TX_PKTS", port, "0+100x90"),
            _series("sonic_queue_PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED", {**port, "queue": "3"},
                    "0x90"),
            _series("sonic_queue_SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS", {**port, "queue": "3"},
                    "0+5000x90"),
            _series("sonic_queue_SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS", {**port, "queue": "0"},
                    "0x90"),
            _series("sonic_queue_SAI_QUEUE_STAT_DROPPED_PACKETS", {**port, "queue": "3"}, "0x90"),
            _series("sonic_port_oper_speed", port, "400000x90"),
            _series("sonic_port_state_oper_up", port, "1x90"),
        ]
    series.append(_series("sonic_bgp_peer_state", {**SONIC, "neighbor": "10.254.0.1"}, "6x90"))
    series.append(_series("up", {**SNMP_JOB, "source": "leaf-su1-r0"}, "1x90"))
    checks = [_alert(name, at) for name in ("PfcStorm", "PfcPauseRate", "PfcWatchdogTriggered",
                                            "EcnMarksOnNonRoceQueue", "LosslessQueueDrops",
                                            "BgpSessionDown", "BgpStateUnknown",
                                            "LinkWrongSpeed", "LinkFlapping")
              for at in ("3m", "8m", "14m")]
    _run_tests(_rules("roce-256-sonic", tmp_path),
               [{"interval": STEP, "input_series": series, "alert_rule_test": checks}])


# --- EOS and NVUE -----------------------------------------------------------------------------

MIXED = "roce-mixed-2to1"


@pytest.mark.realtool
def test_eos_and_nvue_storms_fire_and_other_priorities_stay_silent(tmp_path: Path) -> None:
    eos_storm = {"fabric": MIXED, "source": "leaf-su1-r0", "interface_name": "Ethernet33/1"}
    eos_calm = {"fabric": MIXED, "source": "leaf-su1-r0", "interface_name": "Ethernet34/1"}
    nvue_storm = {"device": "spine-01", "interface": "swp1s0"}
    series = [
        _series("eos_pfc_in_frames", {**eos_storm, "priority_index": "3"}, "0+200000x60"),
        _series("eos_pfc_in_frames", {**eos_calm, "priority_index": "0"}, "0+200000x60"),
        _series("eos_pfc_in_frames", {**eos_calm, "priority_index": "3"}, "0+100x60"),
        _series("eos_pfcwd_stuck_count", {**eos_storm, "tx_queue_index": "3"}, "0x20 1x40"),
        _series("eos_queues_ecn_marked_pkts", {**eos_calm, "queue_name": "UC3"}, "0+1000x60"),
        _series("eos_queues_ecn_marked_pkts", {**eos_calm, "queue_name": "UC1"}, "0+10x60"),
        _series("eos_bgp_session_state", {"fabric": MIXED, "source": "leaf-su1-r0",
                                          "neighbor": "10.254.0.0"}, "0x60"),
        _series("eos_intf_carrier_transitions", eos_calm, "0+1x60"),
        # BFD on the stormed link is down from the start, the calm link's stays up; a session
        # that recovers within bgp_down_for_s (30 s here) does not fire either.
        _series("eos_bfd_session_state", {**eos_storm, "peer_local_discriminator": "7"},
                "0x60"),
        _series("eos_bfd_session_state", {**eos_calm, "peer_local_discriminator": "8"},
                "1x60"),
        _series("eos_bfd_session_state", {"fabric": MIXED, "source": "leaf-su1-r0",
                                          "interface_name": "Ethernet35/1",
                                          "peer_local_discriminator": "9"}, "1x20 0 0 1x40"),
        _series("nvswitch_interface_sp_rx_pause", nvue_storm, "0+200000x60"),
        _series("nvswitch_interface_oper_state", nvue_storm, "1x60"),
        _series("nvswitch_interface_oper_aggregate_speed", nvue_storm, "400000000000x60"),
    ]
    eos = {"fabric": MIXED, "platform": "eos"}
    nvue = {"fabric": MIXED, "platform": "nvue"}
    tests = [{"interval": STEP, "input_series": series, "alert_rule_test": [
        _alert("PfcStorm", "3m", {**eos_storm, "priority_index": "3", **eos,
                                  "severity": "critical"},
               {**nvue_storm, **nvue, "severity": "critical"}),
        _alert("PfcWatchdogTriggered", "4m", {**eos_storm, "tx_queue_index": "3", **eos,
                                              "severity": "critical"}),
        # EOS counts no ECN marks on a queue without `random-detect ecn count` (the RoCE queue
        # only): no such alert; the ANTA catalog checks ECN is configured nowhere else.
        _alert("EcnMarksOnNonRoceQueue", "4m"),
        _alert("BgpSessionDown", "2m", {"fabric": MIXED, "source": "leaf-su1-r0",
                                        "neighbor": "10.254.0.0", **eos,
                                        "severity": "critical"}),
        _alert("BfdSessionDown", "2m", {**eos_storm, "peer_local_discriminator": "7", **eos,
                                        "severity": "critical"}),
        _alert("BfdSessionDown", "20s"),  # not yet down for 30 s
        # Ethernet35/1's 20 s dip (3m30s-3m40s) is shorter than bgp_down_for_s: silent.
        _alert("BfdSessionDown", "3m40s", {**eos_storm, "peer_local_discriminator": "7", **eos,
                                           "severity": "critical"}),
        _alert("LinkFlapping", "9m", {**eos_calm, **eos, "severity": "warning"}),
        _alert("LinkWrongSpeed", "9m"),  # NVUE port at its planned 400G
    ]}]
    _run_tests(_rules("roce-eos-nvue-2to1", tmp_path), tests)


def test_bfd_alert_only_where_the_platform_exports_bfd(tmp_path: Path) -> None:
    """EOS streams openconfig-bfd session-state, so its group has BfdSessionDown; SONiC (FRR
    bfdd sessions are in no SONiC database) and NVUE (no BFD metric in Cumulus 5.12's OTLP
    export) have none. With BFD off in the intent there is no BFD rule at all."""
    def bfd_rules(path: Path) -> dict[str, list[str]]:
        groups = yaml.safe_load(
            render(load(path), only=["alerts"])[alerts.RULES])["groups"]
        return {g["name"].rsplit("-", 1)[1]: [r["expr"] for r in g["rules"]
                                             if r.get("alert") == "BfdSessionDown"]
                for g in groups}

    mixed = ROOT / "inventories" / "roce-eos-nvue-2to1.yaml"
    assert bfd_rules(mixed) == {"eos": ['eos_bfd_session_state{fabric="roce-mixed-2to1"} == 0'],
                                "nvue": [], "hosts": []}
    assert bfd_rules(ROOT / "inventories" / "roce-256-sonic.yaml") == {"sonic": [], "hosts": []}
    off = tmp_path / "no-bfd.yaml"
    off.write_text(mixed.read_text() + "underlay:\n  bfd:\n    enabled: false\n")
    assert bfd_rules(off)["eos"] == []


# --- InfiniBand -------------------------------------------------------------------------------

@pytest.mark.realtool
def test_infiniband_alerts_carry_the_node_name_map(tmp_path: Path) -> None:
    guid = "0x0002c90100000001"
    info = {"guid": guid, "switch": "leaf-su1-r0", "lid": "1"}
    bad = {"guid": guid, "port": "33"}
    good = {"guid": guid, "port": "34"}
    series = [
        _series("infiniband_switch_info", info, "1x80"),
        _series("infiniband_switch_port_link_downed_total", bad, "0x20 1x60"),
        _series("infiniband_switch_port_link_downed_total", good, "0x80"),
        _series("infiniband_switch_port_link_error_recovery_total", bad, "0x20 2x60"),
        _series("infiniband_switch_port_symbol_error_total", bad, "0+100x80"),
        _series("infiniband_switch_port_symbol_error_total", good, "0x80"),
        _series("infiniband_switch_port_local_link_integrity_errors_total", good, "0x80"),
        _series("infiniband_switch_port_transmit_wait_total", bad, "0+50000000x80"),
        _series("infiniband_switch_port_transmit_wait_total", good, "0+1000x80"),
    ]
    rule = {"fabric": "ib-ndr-1024", "platform": "infiniband"}
    named = {**bad, "switch": "leaf-su1-r0"}
    tests = [{"interval": STEP, "input_series": series, "alert_rule_test": [
        _alert("IbSwitchLinkDowned", "5m", {**named, **rule, "severity": "critical"}),
        _alert("IbSwitchLinkRetraining", "5m", {**named, **rule, "severity": "warning"}),
        _alert("IbSwitchSymbolErrors", "5m", {**named, **rule, "severity": "warning"}),
        _alert("IbSwitchLinkIntegrityErrors", "5m"),
        _alert("IbSwitchCongestion", "12m", {**named, **rule, "severity": "warning"}),
    ]}]
    _run_tests(_rules("ib-ndr-1024", tmp_path), tests)


def test_storm_rate_is_the_continuous_pause_rate() -> None:
    # 802.1Qbb: one frame pauses up to 65535 x 512 bit times = 83.9 us at 400 Gb/s.
    assert alerts.continuous_pause_pps(400) == 11921
    assert alerts.continuous_pause_pps(800) == 23842
    assert alerts.continuous_pause_pps(100) == 2980
