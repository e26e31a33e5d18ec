"""`fabgen whatif` on the command line: gates that CI can use, bad specs, JSON."""

from __future__ import annotations

import json

from tests.conftest import ROOT

INTENT = str(ROOT / "inventories" / "roce-256-sonic.yaml")


def test_gate_passes_and_fails_on_thresholds(cli) -> None:  # type: ignore[no-untyped-def]
    # 4 spines: losing one leaves 75% of the leaf-spine bisection.
    ok = cli("whatif", INTENT, "--fail", "spine-01", "--min-bisection", "0.75")
    assert ok.code == 0, ok.err
    bad = cli("whatif", INTENT, "--fail", "spine-01", "--min-bisection", "0.8")
    assert bad.code == 1
    assert bad.err.splitlines() == [
        "violation: spine-01: bisection 75.0% of intact (38.4 Tb/s) is below the minimum 80%"]


def test_json_lists_every_scenario(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("whatif", INTENT, "--fail", "spine:2", "--fail", "plane:1", "--format", "json")
    assert result.code == 0
    data = json.loads(result.out)
    assert data["count"] == 2 and data["violations"] == []
    by_label = {r["scenario"]["label"]: r for r in data["results"]}
    assert by_label["spine:2"]["bisection"]["pct"] == 50.0
    assert by_label["spine:2"]["method"] == "exact: worst of 6 combinations"


def test_bad_spec_suggests(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("--no-color", "whatif", INTENT, "--fail", "spine-1")
    assert result.code == 1
    assert "spine-1" in result.err and "did you mean" in result.err
    assert cli("whatif", INTENT, "--fail", "spine-01", "--min-bisection", "90").code == 1
