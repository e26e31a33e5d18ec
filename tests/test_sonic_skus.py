"""SONiC HwSKUs and roles: only what sonic-buildimage publishes, with its port tables.

fabgen/platforms/sonic/data/skus.yaml pins, per catalog model and split, the HwSKU NVIDIA (and
Arista) publish in sonic-buildimage, its port table's lanes and aliases, and the buffer
templates that decide which DEVICE_METADATA types the image can render buffers for. CI checks
fabgen's port layout against the pinned rows and the intent errors; with FABGEN_UPSTREAM the
whole port table and directory of every SKU are read from the sonic-buildimage checkout.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fabgen import catalog
from fabgen.catalog.buffers import spectrum
from fabgen.errors import FabgenError
from fabgen.intent import load
from fabgen.platforms.sonic.data import skus as sonic_skus
from tests import sonic_upstream

INTENT = """\
name: sku-test
fabric: {{transport: roce, speed: {speed}}}
cluster:
  nodes: 8
  node: {{model: generic, gpus: 8, nics: 2, nic: connectx-7, nic_ports: 1}}
topology:
  leaf: {{model: {model}{breakout}}}
{extra}platforms: {{leaf: sonic, spine: sonic{core}}}
"""


def _load(tmp: Path, model: str, speed: str, breakout: str = "", extra: str = "",
          core: str = "") -> None:
    path = tmp / "intent.yaml"
    path.write_text(INTENT.format(model=model, speed=speed, breakout=breakout, extra=extra,
                                  core=core), encoding="utf-8")
    load(path)


def test_every_sku_reproduces_its_published_rows() -> None:
    for model, known in sonic_skus.models().items():
        assert model in catalog.switches(), model
        for sku in known.skus:
            layout = sonic_skus.port_layout(model, sku.split)
            assert len(layout) == sku.ports == catalog.switches()[model].ports * sku.split
            for name, lanes, alias, index in sku.published:
                # Ethernet<N> counts lanes of the port's width (SN4600C: 4-lane names on an
                # 8-lane SerDes stride, which only the lanes column shows).
                number = int(name.removeprefix("Ethernet")) // sku.lanes_per_port
                assert layout[number] == (index, lanes, alias), (sku.hwsku, name)


def test_the_issue_skus() -> None:
    """NVIDIA publishes Mellanox-SN4700-V64 and -C128 for the split SN4700, nothing for a split
    SN4600C; the invented names of the old table are gone."""
    assert sonic_skus.sku_for("sn4700", 2).hwsku == "Mellanox-SN4700-V64"  # type: ignore[union-attr]
    assert sonic_skus.sku_for("sn4700", 4).hwsku == "Mellanox-SN4700-C128"  # type: ignore[union-attr]
    assert sonic_skus.sku_for("sn4600c", 2) is None and sonic_skus.sku_for("sn4600c", 4) is None
    names = {s.hwsku for m in sonic_skus.models().values() for s in m.skus}
    assert not {n for n in names if re.search(r"\d+x\d+G$", n) and not n.startswith("Arista")}
    # Spectrum generations: the SN4000 series is Spectrum-3.
    assert catalog.switches()["sn4600c"].name == "Spectrum-3 SN4600C"
    assert spectrum.SWITCH_ASIC["sn4600c"] == spectrum.SWITCH_ASIC["sn4700"] == "spectrum-3"


def test_roles_map_to_buffer_templates() -> None:
    """buffers_config.j2's if-chain: torrouter -> t0, leafrouter -> t1, spinerouter -> t2
    (lowerspinerouter -> lt2, fabricspinerouter -> ft2), "mgmt" roles to the default."""
    assert {r: sonic_skus.buffer_template(t) for r, t in sonic_skus.ROLE_TYPE.items()} == {
        "leaf": "t0", "spine": "t1", "core": "t2"}
    assert sonic_skus.buffer_template("SpineRouter") == "t2"
    assert sonic_skus.buffer_template("LowerSpineRouter") == "lt2"
    assert sonic_skus.buffer_template("FabricSpineRouter") == "ft2"
    assert sonic_skus.buffer_template("MgmtToRRouter") is None
    # Every SKU serves the leaf and spine roles.
    for known in sonic_skus.models().values():
        for sku in known.skus:
            assert {"t0", "t1"} <= set(sku.buffer_templates), sku.hwsku


def test_split_without_a_sku_is_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(FabgenError) as err:
        _load(tmp_path, "sn4600c", "50G", ", breakout: 2x50G")
    text = str(err.value)
    assert "topology.leaf.breakout: SONiC has no published HwSKU for sn4600c split 2 way(s)" \
        in text
    assert "ACS-MSN4600C (64 ports, split 1)" in text and ":7:" in text


def test_custom_switch_on_sonic_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "intent.yaml"
    path.write_text(INTENT.format(model="x", speed="400G", breakout="", extra="", core="")
                    .replace("{model: x}", "{ports: 32, speed: 400G}"), encoding="utf-8")
    with pytest.raises(FabgenError) as err:
        load(path)
    assert "topology.leaf.model: SONiC has no published HwSKU for a custom switch" in \
        str(err.value)


def test_core_type_follows_the_templates_the_sku_ships() -> None:
    """A third tier is BackEndSpineRouter (buffers_defaults_t2.j2) where the SKU ships the
    template (Mellanox-SN4700-C128), else the tier below's type, whose t1 template every SKU
    here has (Mellanox-SN5600-O128)."""
    c128 = sonic_skus.sku_for("sn4700", 4)
    o128 = sonic_skus.sku_for("sn5600", 2)
    assert c128 is not None and o128 is not None
    assert sonic_skus.device_type("core", c128) == "BackEndSpineRouter"
    assert sonic_skus.device_type("core", o128) == sonic_skus.CORE_FALLBACK == "BackEndLeafRouter"
    assert sonic_skus.buffer_template(sonic_skus.device_type("core", o128)) in \
        o128.buffer_templates
    for role in ("leaf", "spine"):
        assert sonic_skus.device_type(role, o128) == sonic_skus.ROLE_TYPE[role]


# --- the published directories themselves (FABGEN_UPSTREAM) ----------------------------------

def _port_config(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines()
            if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize("model", sorted(sonic_skus.models()))
def test_skus_match_sonic_buildimage(model: str) -> None:
    device = sonic_upstream.buildimage() / "device"
    known = sonic_skus.models()[model]
    (platform,) = device.glob(f"*/{known.platform}")
    for sku in known.skus:
        directory = platform / sku.hwsku
        assert directory.is_dir(), directory
        files = {p.name for p in directory.iterdir()}
        templates = sorted(f[len("buffers_defaults_"):-3] for f in files
                           if f.startswith("buffers_defaults_t") or
                           f in ("buffers_defaults_lt2.j2", "buffers_defaults_ft2.j2"))
        assert templates == sorted(sku.buffer_templates), sku.hwsku
        assert ("buffers_dynamic.json.j2" in files) == ("dynamic" in sku.buffer_models)
        rows = _port_config(directory / "port_config.ini")
        cages = catalog.switches()[model].cages
        front = [r for r in rows if int(r[3]) <= cages]
        assert [r[0] for r in rows if int(r[3]) > cages] == list(sku.extra_ports)
        layout = sonic_skus.port_layout(model, sku.split)
        assert [(int(r[3]), r[1], r[2]) for r in front] == list(layout), sku.hwsku


def test_buffers_config_picks_templates_as_modelled() -> None:
    """The if-chain of files/build_templates/buffers_config.j2, in its order."""
    text = (sonic_upstream.buildimage() / "files" / "build_templates" /
            "buffers_config.j2").read_text()
    chain = re.findall(r"'(\w+)' (?:in|==) switch_role\.lower\(\).*?\n.*?filename_postfix = "
                       r"'(\w+)'", text)
    assert ("torrouter", "t0") in chain and ("leafrouter", "t1") in chain
    assert ("lowerspinerouter", "lt2") in chain and ("fabricspinerouter", "ft2") in chain
    assert "set filename_postfix = 't2'" in text
