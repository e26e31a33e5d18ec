"""The report's PFC headroom table: a row for every platform and port class of every RoCE
inventory, and every claim in it matching what the switch configs carry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from fabgen import qos
from fabgen.intent import load
from fabgen.platforms.sonic import target as sonic
from fabgen.render import render
from fabgen.targets.base import RenderContext
from fabgen.topology.build import build
from tests.conftest import INVENTORIES

ROCE = [p for p in INVENTORIES if load(p).intent.fabric.transport == "roce"]
COLUMNS = ("platform", "switch", "class", "speed", "cable", "model", "inputs", "formula",
           "result", "vendor", "status")
PLATFORM = {"sonic": "SONiC", "nvue": "Cumulus NVUE", "eos": "Arista EOS"}


def _table(report: str) -> list[dict[str, str]]:
    section = report.split("### PFC headroom", 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in section.splitlines() if ln.startswith("| ")][1:]  # skip the header
    return [dict(zip(COLUMNS, (c.strip() for c in ln.strip("|").split(" | ")), strict=True))
            for ln in lines]


@pytest.mark.parametrize("path", ROCE, ids=lambda p: p.stem)
def test_headroom_table_matches_the_configs(path: Path) -> None:
    loaded = load(path)
    intent = loaded.intent
    plan = qos.plan(intent)
    ctx = RenderContext(intent=intent, fabric=build(intent), qos=plan)
    files = render(loaded)
    report = files["report.md"]
    assert "PFC headroom sized" not in report
    rows = _table(report)
    # A platform with no headroom model has rows under its name, all NOT SIZED.
    expected = {(PLATFORM.get(s.platform, s.platform), f"{s.role} {s.model}")
                for s in ctx.fabric.switches}
    assert {(r["platform"], r["switch"]) for r in rows} == expected
    for switch in ctx.fabric.switches:
        mine = [r for r in rows if (r["platform"], r["switch"]) ==
                (PLATFORM.get(switch.platform, switch.platform),
                 f"{switch.role} {switch.model}")]
        if switch.platform not in PLATFORM:
            assert mine and all(r["status"] == "NOT SIZED" for r in mine)
            continue
        if switch.platform == "sonic":
            config = json.loads(files[f"sonic/{switch.name}/config_db.json"])
            heads = sonic.switch_buffers(ctx, switch).ports
            for row in mine:
                head = next(h for h in heads if row["class"].startswith(h.port.kind[:4])
                            or (row["class"] == "host ports" and h.port.kind == "node-leaf"))
                assert row["cable"] == f"{head.port.cable_m} m"
                assert config["CABLE_LENGTH"]["ROCE"][head.port.name] == f"{head.cable_key_m}m"
                if head.profile is None:
                    assert row["status"] == "NOT SIZED"
                    continue
                assert row["result"].startswith(f"xon {head.profile.xon} / xoff "
                                                f"{head.profile.xoff} / size {head.profile.size}")
                pg = config["BUFFER_PG"].get(f"{head.port.name}|{plan.rdma.priority}")
                if config["DEVICE_METADATA"]["localhost"]["buffer_model"] == "dynamic":
                    assert pg == {"profile": "NULL"}
                    assert row["status"].startswith("computed on the switch")
                elif pg is not None:
                    profile = config["BUFFER_PROFILE"][pg["profile"]]
                    assert profile["xoff"] == str(head.profile.xoff)
        elif switch.platform == "eos":
            text = files[f"eos/{switch.name}.cfg"]
            assert "NOT sized by fabgen" in text
            assert all(r["status"] == "NOT SIZED" for r in mine)
        else:
            tree = yaml.safe_load(files[f"nvue/{switch.name}/startup.yaml"])[0]["set"]
            length = tree["qos"]["pfc"]["default-global"]["cable-length"]
            assert all(r["inputs"].startswith(f"cable-length {length} m") for r in mine)
            assert all(r["status"] == "computed on the switch" for r in mine)
