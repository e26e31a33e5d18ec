"""Parsers of saved `show ... | display json` outputs and the telemetry facts.

The fixtures in data/ are shaped as Junos prints `| display json` (every element a list of
objects, text in "data", XML attributes in "attributes"; element names of the RPC replies
get-bgp-summary-information, get-bfd-session-information, get-interface-information,
get-lldp-neighbors-information; cos.json: get-cos-congestion-notification-information, whose
elements are those of Juniper's 23.4R2-EVO RPC YANG, junos-rpc-class-of-service). They were
written for these tests from Juniper's documented format, not captured from a switch: how a
DSCP-based input map prints its code points (here 6-bit, `011010`) is assumed, and the parser
also reads 802.1p code points and numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fabgen.intent.loader import load
from fabgen.platforms.junos import facts, saved, telemetry
from fabgen.topology.build import build
from tests.conftest import ROOT

DATA = Path(__file__).with_name("data")


def _read(name: str) -> str:
    return (DATA / name).read_text()


def test_bgp_peers() -> None:
    peers = saved.bgp_peers(_read("bgp.json"))
    assert peers == {"10.254.0.1": {"state": "Established", "peer_as": "65000"},
                     "10.254.0.3": {"state": "Active", "peer_as": "65000"}}


def test_bfd_sessions() -> None:
    s = saved.bfd_sessions(_read("bfd.json"))["10.254.0.1"]
    assert s == {"state": "Up", "interface": "et-0/0/2:0.0", "interval_s": "0.300",
                 "multiplier": "3"}


def test_interfaces() -> None:
    i = saved.interfaces(_read("interfaces.json"))
    assert i["et-0/0/2:0"] == {"admin": "up", "oper": "up", "speed": "400Gbps", "mtu": "9114"}
    assert i["et-0/0/63:1"]["admin"] == "down"


def test_lldp() -> None:
    assert saved.lldp_neighbors(_read("lldp.json")) == {"et-0/0/2:0": [("spine-01",
                                                                        "et-0/0/0:0")]}


@pytest.mark.parametrize("parser", [saved.bgp_peers, saved.bfd_sessions, saved.interfaces,
                                    saved.lldp_neighbors])
def test_wrong_files_are_clear_errors(parser: object) -> None:
    for bad, message in (("not json", "not JSON"), ('{"x": 1}', "display json"),
                         ("[" * 100_000, "JSON|nested too deeply")):
        with pytest.raises(ValueError, match=message):
            parser(bad)  # type: ignore[operator]


def test_commands_and_telemetry_facts() -> None:
    assert [c[0] for c in saved.COMMANDS] == ["bgp.json", "bfd.json", "interfaces.json",
                                             "lldp.json", "cos.json", "cos-interfaces.json"]
    # Run from the switch's shell: one CLI command each, the JSON pipe inside it.
    assert all(c[1].startswith("cli -c 'show ") and c[1].endswith("| display json'")
               for c in saved.COMMANDS)
    # gnmic dials the port Juniper's JVD serves gRPC on, over TLS, one subscription per
    # group of paths (tests/platforms/junos/test_telemetry.py checks them against the models).
    fabric = build(load(ROOT / "inventories" / "roce-junos-sonic.yaml").intent)
    leaves = [s for s in fabric.switches if s.platform == "junos"]
    cfg = telemetry.junos_gnmic(fabric, leaves)
    target = cfg["targets"][leaves[0].name]
    assert target["address"] == f"{leaves[0].name}:{facts.GNMI_PORT}"
    assert (target["insecure"], target["skip-verify"]) == (False, False)
    assert sorted(cfg["subscriptions"]) == ["bfd", "bgp", "intf", "pfc", "queues"]
    assert cfg["outputs"]["prometheus"]["listen"] == f":{telemetry.PROMETHEUS_PORT}"


def _plan() -> Any:
    from fabgen import qos

    return qos.plan(load(ROOT / "inventories" / "roce-junos-sonic.yaml").intent)


def _switch() -> Any:
    from fabgen.topology.index import FabricIndex
    from fabgen.verify.expect import expected_switches

    fabric = build(load(ROOT / "inventories" / "roce-junos-sonic.yaml").intent)
    return expected_switches(FabricIndex(fabric), _plan(), platforms=("junos",))[0]


def test_congestion_notification_profiles() -> None:
    profiles = saved.congestion_notification(_read("cos.json"))
    assert sorted(profiles) == ["fabgen-pfc-100m", "fabgen-pfc-5m"]
    p = profiles["fabgen-pfc-5m"]
    assert p.pfc_in == {"011010"}
    assert p.pause_queues == {"011": (3,)}
    assert p.watchdog == {"enabled": "Enabled", "action": "drop", "poll-interval": "100",
                          "detection": "2", "recovery": "400"}


def _cos_findings(text: str, checks: tuple[str, ...] = ("pfc", "pfc-watchdog"),
                  ports: str | None = None) -> list[str]:
    from fabgen import underlay

    intent = load(ROOT / "inventories" / "roce-junos-sonic.yaml").intent
    files = {"cos.json": text, "cos-interfaces.json": ports or _read("cos-interfaces.json")}
    return [f.message for f in saved.findings(_switch(), files, _plan(), intent.monitoring,
                                              checks, underlay.plan(intent).bfd)]


def test_interface_profiles() -> None:
    bound = saved.interface_profiles(_read("cos-interfaces.json"))
    assert bound["et-0/0/0:0"] == "fabgen-pfc-5m"  # a host port, 5 m
    assert bound["et-0/0/16:0"] == "fabgen-pfc-100m"  # an uplink, 100 m
    assert len(bound) == len(_switch().ports)


def test_a_port_without_fabgens_profile_is_a_finding() -> None:
    import json

    data = json.loads(_read("cos-interfaces.json"))
    ports = data["cos-interface-information"][0]["interface-map"]
    del ports[0]["interface-congestion-notification-map-name"]  # et-0/0/0:0: no PFC at all
    ports[1]["interface-congestion-notification-map-name"] = [{"data": "site-pfc"}]
    assert _cos_findings(_read("cos.json"), ("pfc",), json.dumps(data)) == [
        "leaf-su1-r0 et-0/0/0:0: pfc: expected a congestion notification profile of "
        "fabgen's (fabgen-pfc-<m>m, in cos.json), got none",
        "leaf-su1-r0 et-0/0/0:1: pfc: expected a congestion notification profile of "
        "fabgen's (fabgen-pfc-<m>m, in cos.json), got site-pfc"]


def test_a_port_bound_to_a_profile_cos_json_lacks_is_a_finding() -> None:
    """The 100 m profile missing from the switch while its uplinks name it."""
    import json

    data = json.loads(_read("cos.json"))
    top = data["cos-congestion-notification-information"][0]
    top["cos-congestion-notification"] = [
        p for p in top["cos-congestion-notification"]
        if p["congestion-notification-name"][0]["data"] != "fabgen-pfc-100m"]
    found = _cos_findings(json.dumps(data), ("pfc",))
    assert len(found) == 32 and all("got fabgen-pfc-100m" in f for f in found), found[:2]


@pytest.mark.parametrize(("printed", "ok"), [
    ("011010", True),   # 6 bits: DSCP 26
    ("26", True),       # a number: DSCP 26
    ("011", False),     # 3 bits: 802.1p priority 3, untagged RoCE gets no PFC
])
def test_the_input_map_must_be_dscp(printed: str, ok: bool) -> None:
    text = _read("cos.json").replace('"011010"', f'"{printed}"')
    found = _cos_findings(text, ("pfc",))
    assert (found == []) is ok, found


def test_planned_pfc_and_watchdog_pass() -> None:
    assert _cos_findings(_read("cos.json")) == []


def _pfc_on_cnp_too(p: dict[str, Any]) -> None:  # a lossy class (the CNP's DSCP 48) paused
    items = p["congestion-notification-input"][0]["congestion-notification-map"][0]
    items["congestion-notification-map-item"][-1]["pfc-enable-state"] = [{"data": "Enabled"}]


def _pauses_queue_4(p: dict[str, Any]) -> None:
    out = p["congestion-notification-output"][0]["congestion-notification-output-map"][0]
    out["congestion-notification-output-map-item"][0]["pfc-flow-control-queue-list"] = [
        {"pfc-flow-control-queue": [{"data": "4"}]}]


def _watchdog(key: str, value: str) -> Any:
    def change(p: dict[str, Any]) -> None:
        p["congestion-notification-pfc-watchdog"][0][f"pfc-wd-{key}"] = [{"data": value}]
    return change


@pytest.mark.parametrize(("change", "says"), [
    (_pfc_on_cnp_too, "PFC enabled on DSCP 26 only, got on 011010, 110000"),
    (_pauses_queue_4, "priority 3 pauses queue 3, got queues 4"),
    (_watchdog("action", "forward"), "got watchdog forward"),
    (_watchdog("recovery", "4000"), "recovery 4000"),
    (_watchdog("enabled", "Disabled"), "got no watchdog"),
])
def test_each_difference_is_a_finding(change: Any, says: str) -> None:
    import json

    data = json.loads(_read("cos.json"))
    profile = data["cos-congestion-notification-information"][0][
        "cos-congestion-notification"][0]
    change(profile)
    found = _cos_findings(json.dumps(data))
    assert len(found) == 1 and says in found[0] and "fabgen-pfc-5m" in found[0], found


def test_detection_reads_as_polls_or_milliseconds() -> None:
    assert _cos_findings(_read("cos.json").replace('"data": "2"', '"data": "200"')) == []
    assert _cos_findings(_read("cos.json").replace('"data": "2"', '"data": "20"'), (
        "pfc-watchdog",))


def test_no_fabgen_profile_is_a_finding() -> None:
    text = _read("cos.json").replace("fabgen-pfc-", "site-pfc-")
    assert _cos_findings(text) == [
        "leaf-su1-r0: pfc: expected fabgen's congestion notification profiles "
        "(fabgen-pfc-<m>m), got none"]
    assert _cos_findings(text, ("pfc-watchdog",)) == []
