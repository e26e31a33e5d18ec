"""SONiC's collector on sonic-gnmi's answers: the rendered processor names ports by their SONiC
name, and the fixtures and the processor agree with sonic-gnmi's own testdata (FABGEN_UPSTREAM).
Its alerts firing on those answers: the platform contract (test_contract.py, gnmi.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from fabgen.platforms.sonic import telemetry as sonic_telemetry
from tests import gnmic_model, telemetry_timeline
from tests.platforms.sonic import gnmi


def test_sonic_processor_names_ports_by_sonic_name() -> None:
    """sonic-gnmi keys COUNTERS_DB by alias; every series names the SONiC port, the periodic
    watermark copies and the non-port keys of PORT_TABLE are left out."""
    timeline = gnmi.timeline(False)
    interfaces = {telemetry_timeline.labels(k).get("interface") for k in timeline}
    assert interfaces == {"Ethernet0", "Ethernet4", "Ethernet8", None}
    queues = {telemetry_timeline.labels(k)["queue"] for k in timeline if "sonic_queue_" in k}
    assert queues == {str(q) for q in range(8)}
    assert not [k for k in timeline if "periodic" in k or "PortConfigDone" in k]
    assert [k for k in timeline if k.startswith("sonic_port_oper_speed{")]


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
