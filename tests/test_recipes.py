"""docs/architecture.md's "add a switch platform" recipe, followed on a toy platform, and the
facts the recipe relies on held for every real platform."""

from __future__ import annotations

import dataclasses
import importlib
import json
import typing
from pathlib import Path

import pytest

from fabgen import qos, render
from fabgen.catalog import ports
from fabgen.intent import load
from fabgen.intent.models import Intent, Platform
from fabgen.serialize import json_text
from fabgen.targets.base import Artifacts, RenderContext, Target, by_unit
from fabgen.topology.build import build as build_fabric
from fabgen.topology.model import Fabric
from tests.conftest import ROOT

INTENT = ROOT / "inventories" / "roce-256-sonic.yaml"


def test_every_platform_has_capabilities_a_target_and_a_group() -> None:
    """Steps 1, 2, 3 and 5: a name in Platform without the rest (or the reverse) fails here."""
    platforms = set(typing.get_args(Platform))
    assert platforms == {"sonic", "nvue", "eos"}
    assert set(qos.CAPABILITIES) == platforms
    assert set(ports.PLATFORMS) == platforms | {"infiniband"}
    assert all(ports.port_name(p, 1) for p in platforms)
    assert all(qos.CAPABILITIES[p].platform == p and qos.CAPABILITIES[p].source
               for p in platforms)
    assert set(render.GROUPS["switches"]) == platforms
    registry = render.targets()
    for name in platforms:
        target = importlib.import_module(f"fabgen.targets.{name}").TARGET
        assert registry[name] is target


def toy_port_name(platform: str, port: int, breakout: int = 1, *,
                  lanes: int = ports.DEFAULT_LANES) -> str:
    """Step 3: the toy platform calls its ports `tp<native>` or `tp<native>.<k>` when split."""
    if platform != "toy":
        return REAL_PORT_NAME(platform, port, breakout, lanes=lanes)
    native, k = divmod(port - 1, breakout)
    return f"tp{native + 1}" if breakout == 1 else f"tp{native + 1}.{k}"


REAL_PORT_NAME = ports.port_name


class ToyTarget:
    """Step 4: a target for the platform `toy`, one JSON file per switch on it, split per
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


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Steps 3 and 5 as patches: the toy's port names, and the toy in the order list and the
    switches group. Step 1 (a name in the Platform literal) cannot be patched into pydantic at
    run time: the spines are given the toy platform after build() instead, as the intent would."""
    real_targets = render.targets

    def targets() -> dict[str, Target]:
        return {**real_targets(), "toy": ToyTarget()}

    def build(intent: Intent) -> Fabric:
        fabric = build_fabric(intent)
        switches = tuple(dataclasses.replace(s, platform="toy") if s.role == "spine" else s
                         for s in fabric.switches)
        return dataclasses.replace(fabric, switches=switches,
                                   by_name={s.name: s for s in switches})

    monkeypatch.setattr(ports, "port_name", toy_port_name)
    monkeypatch.setattr(ports, "PLATFORMS", (*ports.PLATFORMS, "toy"))
    monkeypatch.setattr(render, "targets", targets)
    monkeypatch.setattr(render, "build", build)
    monkeypatch.setitem(render.GROUPS, "switches", (*render.GROUPS["switches"], "toy"))


@pytest.mark.usefixtures("toy")
def test_a_registered_toy_target_renders_with_everything_else(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
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


@pytest.mark.usefixtures("toy")
def test_the_toy_target_is_selectable_like_any_other(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "only"
    result = cli("render", str(INTENT), "-o", str(out), "--only", "switches",
                 "--devices", "spine-0[12]", "-q")
    assert result.code == 0, result.err
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == ["manifest.json", "toy/spine-01/config.json", "toy/spine-02/config.json"]
