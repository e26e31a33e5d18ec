"""`fabgen verify-cabling` on the command line: exit codes CI can gate on."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import GOLDEN, ROOT

INTENT = str(ROOT / "inventories" / "ib-ndr-1024.yaml")
TOPOLOGY = GOLDEN / "ib-ndr-1024" / "infiniband" / "topology.ibnet"


def test_planned_topology_matches(cli) -> None:  # type: ignore[no-untyped-def]
    # topology.ibnet is in ibnetdiscover's format and simulated at HDR (see the README)
    result = cli("verify-cabling", INTENT, "--ibnetdiscover", str(TOPOLOGY), "--expect-speed",
                 "HDR")
    assert (result.code, result.out) == (
        0, "cabling matches the plan: no missing, extra, swapped or slow links\n")


def test_speed_below_plan_is_a_finding(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("verify-cabling", INTENT, "--ibnetdiscover", str(TOPOLOGY), "--json")
    assert result.code == 1
    kinds = {f["kind"] for f in json.loads(result.out)}
    assert kinds == {"degraded"}


def test_missing_file_is_an_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("--no-color", "verify-cabling", INTENT, "--ibnetdiscover",
                 str(tmp_path / "none.txt"))
    assert result.code == 1 and "none.txt" in result.err
