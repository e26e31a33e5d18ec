"""Parsers of saved `show ... | display json` outputs and the telemetry facts.

The fixtures in data/ are shaped as Junos prints `| display json` (every element a list of
objects, text in "data", XML attributes in "attributes"; element names of the RPC replies
get-bgp-summary-information, get-bfd-session-information, get-interface-information,
get-lldp-neighbors-information). They were written for these tests from Juniper's documented
format, not captured from a switch: the README says so.
"""

from __future__ import annotations

from pathlib import Path

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
                                             "lldp.json"]
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
