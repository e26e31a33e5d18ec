"""A 32,768-GPU fabric rendered whole: scale bugs (port exhaustion, address-pool overflow, name
collisions) fail here. Not timed: speed is the benchmark's job (benchmarks/render_scale.py)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml

from benchmarks.render_scale import intent_for
from fabgen.errors import FabgenError
from fabgen.intent import load
from fabgen.render import render
from fabgen.topology.build import build
from fabgen.topology.checks import check_fabric

GPUS = 32_768


@pytest.fixture(scope="module")
def roce_32k(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("scale") / "roce-32k.yaml"
    path.write_text(yaml.safe_dump(intent_for(GPUS, "roce")))
    return path


def test_32k_roce_fabric_keeps_every_invariant(roce_32k: Path) -> None:
    loaded = load(roce_32k)
    fabric = build(loaded.intent)
    assert sum(len(h.ports) for h in fabric.hosts) == GPUS
    assert fabric.tiers == 3
    assert check_fabric(fabric) == []
    names = Counter([s.name for s in fabric.switches] + [h.name for h in fabric.hosts])
    assert names.most_common(1)[0][1] == 1, "device names collide"
    addresses = Counter(str(a) for link in fabric.links
                        for a in (link.a_address, link.z_address) if a is not None)
    addresses.update(str(s.loopback) for s in fabric.switches)
    assert addresses.most_common(1)[0][1] == 1, "an address is used twice"
    assert len({s.asn for s in fabric.switches if s.role == "leaf"}) == \
        sum(1 for s in fabric.switches if s.role == "leaf")

    files = render(loaded)
    manifest = json.loads(files["manifest.json"])
    assert set(manifest["files"]) == set(files) - {"manifest.json"}
    configs = [p for p in files if p.startswith("sonic/") and p.endswith("/config_db.json")]
    assert len(configs) == len(fabric.switches)
    # every host /31 appears on exactly one switch port of the rendered configs
    host_ends = {str(link.z_address) for link in fabric.links if link.kind == "node-leaf"}
    seen: Counter[str] = Counter()
    for path in configs:
        for key in json.loads(files[path])["INTERFACE"]:
            if "|" in key:
                seen[key.split("|", 1)[1]] += 1
    assert {a for a in host_ends if seen[a] != 1} == set()


def test_pools_too_small_for_32k_name_the_pool_and_size(tmp_path: Path) -> None:
    data = intent_for(GPUS, "roce")
    data["addressing"] = {**data["addressing"], "hosts": "10.64.0.0/17"}  # type: ignore[dict-item]
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(FabgenError) as info:
        load(path)
    [diag] = info.value.diagnostics
    # 32,768 host ports, a /31 each
    assert diag.render().endswith(
        "addressing.hosts: pool 10.64.0.0/17 has 32768 addresses; this fabric needs 65536 "
        "(a /31 for each of 32768 host ports) (use a /16 or larger)")
