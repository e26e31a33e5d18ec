"""`fabgen plan`: the summary a script reads, without writing files."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import ROOT


def test_plan_json_has_the_documented_keys(cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    result = cli("plan", str(ROOT / "inventories" / "ib-ndr-1024.yaml"), "--json")
    assert result.code == 0, result.err
    plan = json.loads(result.out)
    # DGX SuperPOD H100 RA, Table 4 (4 SU, 127 nodes: one node slot holds UFM): 32 leaf, 16
    # spine, 1,020 "Compute and UFM" cables and 1,024 spine-leaf ones; 1536 switch-side OSFP
    # transceivers (48 QM9700 x 32 twin-port cages).
    assert plan["nodes"] == 127 and plan["gpus"] == 1016
    assert plan["switches"] == {"leaf": 32, "spine": 16, "core": 0}
    assert plan["cables"] == {"node-leaf": 1016, "leaf-spine": 1024, "spine-core": 0,
                              "sm-leaf": 4}
    assert plan["sm_hosts"] == ["ufm01", "ufm02"]
    assert plan["transceivers"]["switch OSFP (twin-port) 2x400G"] == 1536
    assert plan["oversubscription"] == {"leaf": "1:1", "spine": None}
    assert plan["bisection_gbps"] == 1016 * 400 // 2
    assert set(plan["networks"]) == {"storage", "management"}
    assert list(tmp_path.iterdir()) == [], "plan writes nothing"


def test_plan_text(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("plan", str(ROOT / "inventories" / "roce-eos-nvue-2to1.yaml"))
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0] == ("roce-mixed-2to1: 64 nodes, 512 GPUs, roce 400G, 2 tiers, 1 plane(s)")
    assert "oversubscription: leaf 2:1" in result.out


def test_plan_text_names_the_sm_hosts(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("plan", str(ROOT / "inventories" / "ib-ndr-1024.yaml"))
    assert result.code == 0
    assert "cables:        node-leaf 1016, leaf-spine 1024, sm-leaf 4" in result.out
    assert "sm hosts:      ufm01, ufm02" in result.out.splitlines()
    roce = cli("plan", str(ROOT / "inventories" / "roce-eos-nvue-2to1.yaml"))
    assert "sm hosts" not in roce.out and "sm-leaf" not in roce.out
