"""docs/architecture.md's "add a switch platform" recipe, followed on a toy platform, and the
facts the recipe relies on held for every real platform.

The toy is a folder's worth of code written here: facts (step 1) and outputs with a split
target (step 5), registered by adding them to the registries' tuples (step 2, patched in as a
maintainer would append a line). Nothing else of fabgen is touched: the render, the cabling
plan and the report find the toy through the registries alone.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from pathlib import Path

import pytest

from fabgen import render
from fabgen.catalog import ports
from fabgen.intent import load
from fabgen.intent.models import Intent, Platform
from fabgen.platforms.contract.facts import Capabilities, EcmpLimit, Facts, RunsOn, split_port
from fabgen.platforms.contract.outputs import Outputs
from fabgen.platforms.registry import checks as registry_checks
from fabgen.platforms.registry import facts as registry_facts
from fabgen.platforms.registry import outputs as registry_outputs
from fabgen.serialize import json_text
from fabgen.targets.base import Artifacts, RenderContext, by_unit
from fabgen.topology.build import build as build_fabric
from fabgen.topology.model import Fabric
from tests.conftest import ROOT

INTENT = ROOT / "inventories" / "roce-256-sonic.yaml"


def test_every_platform_is_registered_in_every_face() -> None:
    """Steps 1, 2 and 5 for the real platforms: one name in the facts, the intent's enum and
    the outputs (and the checks where a platform has rules), the switches group and the
    render's targets."""
    names = registry_facts.names()
    assert set(typing.get_args(Platform)) == set(names) == set(registry_facts.INTENT_NAMES)
    assert registry_facts.DEFAULT in names
    assert registry_outputs.names() == names
    assert set(registry_checks.CHECKS) <= set(names)
    assert set(ports.PLATFORMS) == {*names, "infiniband"}
    assert render.groups()["switches"] == names
    targets = render.targets()
    for facts in registry_facts.all():
        outputs = registry_outputs.get(facts.name)
        assert outputs.facts is facts and outputs.target.name == facts.name
        assert targets[facts.name] is outputs.target
        assert facts.capabilities.platform == facts.name and facts.capabilities.source
        assert facts.ecmp.source and facts.runs_on.source and facts.runs_on.vendors
        assert facts.name in facts.words
        assert ports.port_name(facts.name, 1)


class ToyFacts(Facts):
    """Step 1: the toy calls its ports `tp<native>` or `tp<native>.<k>` when split."""

    name = "toy"
    title = short = "Toy"
    words = ("toy",)
    runs_on = RunsOn(("NVIDIA", "Arista", "generic"), "any switch", "the recipe's example")
    capabilities = Capabilities("toy", 9216, ("drop",), 100, 1, False, True, True, "example")
    ecmp = EcmpLimit(64, "example")
    hash_fields = frozenset({"src-ip", "dst-ip", "ip-protocol", "src-port", "dst-port"})
    adaptive = None

    def port_name(self, port: int, breakout: int, lanes: int) -> str:
        native, k, _ = split_port(port, breakout, lanes)
        return f"tp{native}" if breakout == 1 else f"tp{native}.{k}"


class ToyTarget:
    """Step 5: a target for the platform `toy`, one JSON file per switch on it, split per
    switch so `--jobs` renders switches in parallel."""

    name = "toy"
    description = "toy/<switch>/config.json: the architecture recipe's example platform"

    def applies(self, ctx: RenderContext) -> bool:
        return ctx.qos is not None and any(s.platform == "toy" for s in ctx.fabric.switches)

    def units(self, ctx: RenderContext) -> list[str]:
        return [s.name for s in ctx.fabric.switches if s.platform == "toy"]

    def render_unit(self, ctx: RenderContext, unit: str) -> Artifacts:
        assert ctx.qos is not None
        switch = ctx.index.switches[unit]
        config = {"hostname": switch.name, "asn": switch.asn, "mtu": ctx.qos.mtu,
                  "pfc_priorities": list(ctx.qos.pfc_priorities),  # values from the plan
                  "ports": [p.name for p in ctx.index.ports(switch)]}
        return {f"toy/{switch.name}/config.json": json_text(config)}

    def render(self, ctx: RenderContext) -> Artifacts:
        return by_unit(self, ctx)


class ToyOutputs(Outputs):
    """Step 5: only the target; every other output says "nothing of that kind"."""

    facts = ToyFacts()
    target = ToyTarget()


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Step 2 as patches: the toy appended to the registries. A name in the intent's enum
    cannot be patched into pydantic at run time: the spines are given the toy platform after
    build() instead, as the intent would."""
    outputs = ToyOutputs()

    def build(intent: Intent) -> Fabric:
        fabric = build_fabric(intent)
        switches = tuple(dataclasses.replace(s, platform="toy") if s.role == "spine" else s
                         for s in fabric.switches)
        return dataclasses.replace(fabric, switches=switches,
                                   by_name={s.name: s for s in switches})

    monkeypatch.setattr(registry_facts, "PLATFORMS", (*registry_facts.PLATFORMS, outputs.facts))
    monkeypatch.setattr(registry_outputs, "PLATFORMS", (*registry_outputs.PLATFORMS, outputs))
    monkeypatch.setattr(render, "build", build)


@pytest.mark.usefixtures("toy")
def test_a_registered_toy_platform_renders_with_everything_else(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    result = cli("render", str(INTENT), "-o", str(out), "-q")
    assert result.code == 0, result.err
    toy_files = sorted(p.relative_to(out).as_posix() for p in (out / "toy").rglob("*.json"))
    spines = [s.name for s in build_fabric(load(INTENT).intent).switches_of("spine")]
    assert len(spines) > 1
    assert toy_files == [f"toy/{name}/config.json" for name in spines]
    config = json.loads((out / "toy/spine-01/config.json").read_text())
    assert config["hostname"] == "spine-01" and config["pfc_priorities"] == [3]
    assert config["ports"][:3] == ["tp1.0", "tp1.1", "tp2.0"]  # spines split 2x400G
    # The cabling plan names the toy's ports through the same catalog function.
    assert ",spine-01,tp1.0,cage 1 split 1,400G," in (out / "cabling" / "cabling.csv").read_text()
    # The other targets now leave the spines to the toy platform: SONiC renders leaves only.
    assert not list((out / "sonic").glob("spine-*"))
    assert (out / "sonic" / "leaf-su1-r0").is_dir()
    manifest = json.loads((out / "manifest.json").read_text())
    assert "toy/spine-01/config.json" in manifest["files"]
    # Without a headroom model of its own, the report says so rather than implying sizing.
    report = (out / "report.md").read_text()
    assert "fabgen has no headroom model for toy" in report


@pytest.mark.usefixtures("toy")
def test_the_toy_target_is_selectable_like_any_other(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "only"
    result = cli("render", str(INTENT), "-o", str(out), "--only", "switches",
                 "--devices", "spine-0[12]", "-q")
    assert result.code == 0, result.err
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == ["manifest.json", "toy/spine-01/config.json", "toy/spine-02/config.json"]
