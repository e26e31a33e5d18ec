"""Switch OS x switch model (issue 29): each OS only on the hardware it runs on, from each
platform's facts (`runs_on`) and the catalog's vendors; a located error with a did-you-mean."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest

from fabgen import catalog
from fabgen.errors import FabgenError
from fabgen.intent import load
from fabgen.intent.models.network import Platform
from fabgen.platforms.registry import facts as registry
from fabgen.platforms.sonic.data import skus as sonic_skus
from tests.conftest import INVENTORIES

ETHERNET = {k: m for k, m in catalog.switches().items() if m.transport == "ethernet"}
RUNS_ON = {f.name: f.runs_on for f in registry.all()}


def runs_on(platform: str, vendor: str) -> bool:
    return vendor in RUNS_ON[platform].vendors


def platforms_for(vendor: str) -> list[str]:
    return [name for name, entry in RUNS_ON.items() if vendor in entry.vendors]


def test_the_table_says_what_the_vendors_publish() -> None:
    """EOS is Arista's OS; Cumulus Linux 5.x carries only NVIDIA's Spectrum SDK; SONiC has
    platforms for both vendors (sonic-buildimage device/mellanox, device/arista) and white
    boxes. Every OS has a line with its source."""
    assert {name: RUNS_ON[name].vendors for name in ("sonic", "nvue", "eos")} == {
        "sonic": ("NVIDIA", "Arista", "generic"), "nvue": ("NVIDIA",), "eos": ("Arista",)}
    assert set(RUNS_ON) == set(typing.get_args(Platform))
    assert all(entry.source and entry.what for entry in RUNS_ON.values())
    # Every Ethernet switch of the catalog runs some OS fabgen renders.
    assert all(platforms_for(m.vendor) for m in ETHERNET.values())
    assert [k for k, m in ETHERNET.items() if runs_on("eos", m.vendor)] == ["7060x6-64pe"]
    assert [k for k, m in ETHERNET.items() if runs_on("nvue", m.vendor)] == [
        "sn4600c", "sn4700", "sn5600"]


def test_the_examples_run_on_their_hardware() -> None:
    for path in INVENTORIES:
        load(path)  # raises on a clash


def _intent(tmp_path: Path, topology: str, platforms: str | None, speed: int = 400) -> Path:
    path = tmp_path / "pod.yaml"
    path.write_text(f"name: pod\nfabric: {{transport: roce, speed: {speed}G}}\n"
                    "cluster: {nodes: 64}\n"
                    f"topology:\n{topology}"
                    "qos: {cable_length_m: 5, fabric_cable_length_m: 100}\n"
                    + (f"platforms: {platforms}\n" if platforms else ""), encoding="utf-8")
    return path


LEAF_SPINE = ("  leaf: {model: LEAF, breakout: 2x400G}\n"
              "  spine: {model: SPINE, breakout: 2x400G}\n")


@pytest.mark.parametrize(("leaf", "spine", "platforms", "expected"), [
    ("sn5600", "sn5600", "{leaf: eos}",
     "pod.yaml:8:19: platforms.leaf: eos does not run on sn5600 (leaf, spine), the NVIDIA "
     "Spectrum-4 SN5600: eos runs on Arista switches (did you mean 'sonic' or 'nvue'? eos runs "
     "on 7060x6-64pe)"),
    ("7060x6-64pe", "7060x6-64pe", "{leaf: nvue, spine: eos}",
     "pod.yaml:8:19: platforms.leaf: nvue does not run on 7060x6-64pe (leaf), the Arista "
     "7060X6-64PE: nvue runs on NVIDIA Spectrum switches (did you mean 'sonic' or 'eos'? nvue "
     "runs on sn4600c, sn4700, sn5600)"),
    # The spines' own model, the leaves' OS by default: blamed on the OS that was chosen.
    ("7060x6-64pe", "sn5600", "{leaf: eos}",
     "pod.yaml:8:19: platforms.leaf: eos does not run on sn5600 (spine), the NVIDIA Spectrum-4 "
     "SN5600: eos runs on Arista switches (did you mean 'sonic' or 'nvue'? eos runs on "
     "7060x6-64pe)"),
    # A white box runs SONiC only (fabgen renders SONiC on it once sonic-buildimage publishes
    # its SKU: catalog.sonic_skus; tests/test_sonic_skus.py has that error).
    ("sn5600", "th5-51t", "{leaf: sonic, spine: nvue}",
     "pod.yaml:8:33: platforms.spine: nvue does not run on th5-51t (spine), the Generic Broadcom "
     "Tomahawk 5 51.2T: nvue runs on NVIDIA Spectrum switches (did you mean 'sonic'? nvue runs "
     "on sn4600c, sn4700, sn5600)"),
])
def test_os_on_foreign_hardware_is_a_located_error(tmp_path: Path, leaf: str, spine: str,
                                                   platforms: str, expected: str) -> None:
    path = _intent(tmp_path, LEAF_SPINE.replace("LEAF", leaf).replace("SPINE", spine),
                   platforms)
    with pytest.raises(FabgenError) as exc:
        load(path)
    assert [d.render().replace(f"{tmp_path}/", "") for d in exc.value.diagnostics] == [expected]


@pytest.mark.parametrize("model", sorted(ETHERNET))
def test_every_os_that_runs_on_a_model_is_accepted(tmp_path: Path, model: str) -> None:
    native = ETHERNET[model].speed_gbps
    breakout = ", breakout: 2x400G" if native == 800 else ""
    topology = f"  leaf: {{model: {model}{breakout}}}\n"
    for platform in platforms_for(ETHERNET[model].vendor):
        path = _intent(tmp_path, topology, f"{{leaf: {platform}}}", speed=min(native, 400))
        if platform == "sonic" and model not in sonic_skus.models():
            # runs_on lets SONiC on any white box; the SKU table then asks for a published
            # HwSKU, which a generic model has not
            with pytest.raises(FabgenError, match="SONiC has no published HwSKU"):
                load(path)
            continue
        load(path)


def test_custom_switches_have_no_vendor_to_check(tmp_path: Path) -> None:
    load(_intent(tmp_path, "  leaf: {ports: 64, speed: 400G}\n", "{leaf: eos}"))
