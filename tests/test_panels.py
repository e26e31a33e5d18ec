"""Panel columns: where a crew plugs each cable end in, the same in every file that carries it.

Host ports by the chassis labels of the vendor's table (typed here from the DGX H100/H200 User
Guide, not read from the catalog), switch ports by cage, port in the cage and split, checked
against the switch's own interface names (MLNX-OS IB1/<cage>/<port>[/<split>], Cumulus
swp<cage>[s<split-1>]), computed independently.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from fabgen.catalog.ports import port_name, switch_panel, switch_panels
from fabgen.intent import load
from fabgen.render import render
from fabgen.targets.ibdm import panel_names
from fabgen.topology.build import build
from fabgen.topology.model import Switch
from tests.conftest import INVENTORIES


def _switch(model: str, radix: int, breakout: int = 1, platform: str = "infiniband") -> Switch:
    return Switch(name="s", role="leaf", plane=0, group=0, index=0, rail=None, model=model,
                  radix=radix, speed_gbps=400, breakout=breakout, platform=platform)


def test_switch_panels_follow_the_cages_of_the_catalog() -> None:
    # QM9700: 64 NDR ports in 32 twin-port OSFP cages (datasheet); split 2x200G: 128 ports
    qm9700 = _switch("qm9700", 64)
    assert [switch_panel(qm9700, p) for p in (1, 2, 33, 34, 64)] == [
        "cage 1 port 1", "cage 1 port 2", "cage 17 port 1", "cage 17 port 2", "cage 32 port 2"]
    split = _switch("qm9700", 128, 2)
    assert [switch_panel(split, p) for p in (1, 2, 67, 68, 128)] == [
        "cage 1 port 1 split 1", "cage 1 port 1 split 2", "cage 17 port 2 split 1",
        "cage 17 port 2 split 2", "cage 32 port 2 split 2"]
    # SN5600: 64 OSFP cages, one port each; 2x400G makes two ports of each cage
    sn5600 = _switch("sn5600", 128, 2, "sonic")
    assert [switch_panel(sn5600, p) for p in (1, 2, 33, 34)] == [
        "cage 1 split 1", "cage 1 split 2", "cage 17 split 1", "cage 17 split 2"]
    assert switch_panel(_switch("qm8700", 40), 40) == "cage 40"
    assert switch_panel(_switch("sn4600c", 64, 1, "nvue"), 17) == "cage 17"
    assert switch_panel(_switch("custom", 8), 3) == ""  # no catalog entry: not known
    with pytest.raises(ValueError, match=r"ports 1\.\.64"):
        switch_panel(qm9700, 65)


@pytest.mark.parametrize(("model", "radix", "breakout"),
                         [("qm9700", 64, 1), ("qm9700", 128, 2), ("qm8700", 40, 1),
                          ("qm8700", 80, 2), ("q3400", 144, 1)])
def test_infiniband_panels_agree_with_the_interface_names(model: str, radix: int,
                                                          breakout: int) -> None:
    """MLNX-OS names a Quantum-2 port IB1/<cage>/<port>[/<split>], a Quantum one
    IB1/<port>[/<split>] (one port per cage): the same numbers as the panel."""
    for name, panel in zip(panel_names(model, breakout, radix),
                           switch_panels(model, breakout, radix), strict=True):
        numbers = [int(x) for x in name.removeprefix("IB1/").split("/")]
        cage = [int(x) for x in re.findall(r"\d+", panel)]
        assert numbers == cage, (name, panel)


@pytest.mark.parametrize(("model", "breakout"), [("sn5600", 2), ("sn4600c", 4), ("sn5600", 1)])
def test_ethernet_panels_agree_with_the_cumulus_names(model: str, breakout: int) -> None:
    """Cumulus names a port swp<cage>, split swp<cage>s<k> from 0 (one port per cage)."""
    radix = 64 * breakout
    for port, panel in enumerate(switch_panels(model, breakout, radix), start=1):
        m = re.fullmatch(r"swp(\d+)(?:s(\d+))?", port_name("nvue", port, breakout))
        assert m is not None
        want = f"cage {m.group(1)}" + (f" split {int(m.group(2)) + 1}" if m.group(2) else "")
        assert panel == want


# DGX H100/H200 User Guide, Table 6 "Network Modules" (port, RDMA device) and Table 5 (the
# storage and in-band cards), typed from the guide: the label a crew reads on the chassis.
DGX_H100_PANELS = {
    "mlx5_0": "OSFP4 P2", "mlx5_3": "OSFP3 P2", "mlx5_4": "OSFP3 P1", "mlx5_5": "OSFP4 P1",
    "mlx5_6": "OSFP1 P2", "mlx5_9": "OSFP2 P2", "mlx5_10": "OSFP2 P1", "mlx5_11": "OSFP1 P1",
    "mlx5_7": "Slot1 P1", "mlx5_8": "Slot1 P2", "mlx5_1": "Slot2 P1", "mlx5_2": "Slot2 P2",
}
IB = next(p for p in INVENTORIES if p.stem == "ib-ndr-1024")


def test_dgx_h100_ports_carry_the_user_guide_labels() -> None:
    fabric = build(load(IB).intent)
    nodes = {h.name for h in fabric.hosts}  # not the storage network's targets
    seen = {hp.rdma_device: hp.panel for net in (fabric, *fabric.extras)
            for h in net.hosts if h.name in nodes for hp in h.ports}
    assert seen == DGX_H100_PANELS
    # the subnet-manager hosts are no catalog model: their panels are not known
    assert {hp.panel for h in fabric.sm_hosts for hp in h.ports} == {""}


def _csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.parametrize("path", INVENTORIES, ids=lambda p: p.stem)
def test_every_cabling_file_carries_the_same_panels(path: Path) -> None:
    loaded = load(path)
    files = render(loaded, only=["cabling", "bringup"])
    fabric = build(loaded.intent)
    switches = {sw.name: sw for net in (fabric, *fabric.extras) for sw in net.switches}
    nodes = {h.name for h in fabric.hosts}  # a storage target is no catalog node model
    sheets = [f for f in files if f.startswith("cabling/") and f.endswith(".csv")]
    assert sheets
    for sheet in sheets:
        rows = _csv(files[sheet])
        cables = json.loads(files[sheet[:-4] + ".json"])["cables"]
        assert [(r["id"], r["a_panel"], r["z_panel"]) for r in rows] == [
            (c["id"], c["a_panel"] or "", c["z_panel"] or "") for c in cables]
        for r in rows:
            z = switches[r["z_device"]]
            assert r["z_panel"] and r["z_panel"].startswith("cage "), r
            if r["kind"] not in ("node-leaf", "sm-leaf"):
                assert r["a_panel"].startswith("cage "), r
            elif (loaded.intent.cluster.node.model == "dgx-h100" and r["kind"] == "node-leaf"
                  and r["a_device"] in nodes):
                assert r["a_panel"] == DGX_H100_PANELS[r["a_port"]], r
            assert z.model in ("qm9700", "qm8700", "sn5600", "sn4600c", "7060x6-64pe",
                               "sn4700", "q3400", "qfx5240-64od")
    # the rails table says the same as the sheet for every compute port
    cabled = {(r["a_device"], r["a_port"]): (r["a_panel"], r["z_panel"])
              for r in _csv(files["cabling/cabling.csv"]) if r["kind"] == "node-leaf"}
    rails = _csv(files["bringup/rails.csv"])
    assert rails and all(cabled[r["host"], r["rdma_device"]] == (r["host_panel"], r["leaf_cage"])
                         for r in rails)
