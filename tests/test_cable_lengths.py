"""Measured cable lengths (qos.cable_lengths, qos.cable_lengths_file): one cable's length
changes exactly what is sized for that cable, on both its ends, on every platform and in the
cabling sheet and report; nothing else moves. Bad sheets are in tests/errors (cable-lengths-*).
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabgen.catalog.buffers import model_for
from fabgen.errors import FabgenError
from fabgen.intent import load
from fabgen.platforms.sonic import target as sonic
from fabgen.qos import plan as qos_plan
from fabgen.render import render
from fabgen.targets import cable_lengths
from fabgen.targets.base import RenderContext
from fabgen.topology.build import build
from tests import test_sonic_buffers
from tests.buffermgrd import BufferMgr

INTENT = """\
name: t
fabric: {{transport: roce, speed: 400G}}
cluster:
  nodes: 8
topology:
  leaf: {{model: {leaf_model}, breakout: 2x400G}}
  spine: {{model: {spine_model}, breakout: 2x400G}}
qos:
  cable_length_m: 5
  fabric_cable_length_m: 100
  buffer_model: {mode}
{extra}platforms: {{leaf: {leaf}, spine: {spine}}}
"""
HOST_CABLE = "c-su1-r0-001"  # gpu0001 mlx5_0 - leaf-su1-r0 Ethernet0 (its port 1)
HOST, HOST_RAIL0, LEAF, LEAF_PORT = "gpu0001", 0, "leaf-su1-r0", "Ethernet0"


def _files(tmp: Path, *, mode: str = "traditional", extra: str = "", leaf: str = "sonic",
           spine: str = "sonic", sheet: str | None = None) -> dict[str, str]:
    if sheet is not None:
        (tmp / "measured.csv").write_text(sheet, encoding="utf-8")
    path = tmp / "pod.yaml"
    # Each OS on a switch it runs on: EOS on Arista's 7060X6, SONiC and NVUE on the SN5600.
    models = {p: "7060x6-64pe" if p == "eos" else "sn5600" for p in (leaf, spine)}
    path.write_text(INTENT.format(mode=mode, extra=extra, leaf=leaf, spine=spine,
                                  leaf_model=models[leaf], spine_model=models[spine]),
                    encoding="utf-8")
    return render(load(path))


def _inline(*entries: str) -> str:
    return "  cable_lengths:\n" + "".join(f"    - {e}\n" for e in entries)


def _config(files: dict[str, str], switch: str) -> dict[str, dict[str, dict[str, str]]]:
    config: dict[str, dict[str, dict[str, str]]] = json.loads(
        files[f"sonic/{switch}/config_db.json"])
    return config


def _env_lens(files: dict[str, str], host: str) -> list[int]:
    match = re.search(r"^HOST_CABLE_LENS=\(([^)]*)\)$", files[f"hosts/{host}.env"], re.M)
    assert match is not None
    return [int(v) for v in match.group(1).split()]


def _changed(before: dict[str, object], after: dict[str, object]) -> set[str]:
    return {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}


def test_an_override_changes_exactly_that_ports_profile_and_the_nics_cable_len(
        tmp_path: Path) -> None:
    base = _files(tmp_path)
    measured = _files(tmp_path, extra=_inline(f"{{cable: {HOST_CABLE}, length_m: 30}}"))
    # The switch end: only the leaf port's CABLE_LENGTH and lossless PG move, to NVIDIA's
    # 40 m row (the shortest row covering 30 m), under the name buffermgrd rebuilds it with.
    old, new = _config(base, LEAF), _config(measured, LEAF)
    assert _changed(old["CABLE_LENGTH"]["ROCE"], new["CABLE_LENGTH"]["ROCE"]) == {LEAF_PORT}
    assert new["CABLE_LENGTH"]["ROCE"][LEAF_PORT] == "40m"
    assert _changed(old["BUFFER_PG"], new["BUFFER_PG"]) == {f"{LEAF_PORT}|3"}
    profile = new["BUFFER_PG"][f"{LEAF_PORT}|3"]["profile"]
    assert profile == "pg_lossless_400000_40m_profile"
    # NVIDIA's published ACS-SN5600 400G 40 m row (O128 links to it): xoff 283648.
    assert new["BUFFER_PROFILE"][profile]["xoff"] == "283648"
    # The rest of the switch is the same, pools aside (one PG's larger headroom comes out of
    # them), and so is every other switch.
    same = {t for t in old if t not in ("CABLE_LENGTH", "BUFFER_PG", "BUFFER_PROFILE",
                                        "BUFFER_POOL")}
    assert all(old[t] == new[t] for t in same)
    assert int(new["BUFFER_POOL"]["ingress_lossless_pool"]["size"]) < int(
        old["BUFFER_POOL"]["ingress_lossless_pool"]["size"])
    changed = {p for p in base if p != "manifest.json" and base[p] != measured.get(p)}
    assert changed == {f"sonic/{LEAF}/config_db.json", f"hosts/{HOST}.env",
                       "cabling/cabling.csv", "cabling/cabling.json", "report.md",
                       "intent.resolved.yaml"}
    # The NIC end: that rail's mlnx_qos --cable_len, the host's other rails unchanged.
    assert _env_lens(base, HOST) == [5] * 8
    assert _env_lens(measured, HOST) == [30] + [5] * 7


def test_the_dynamic_model_gets_the_real_length_and_no_profile(tmp_path: Path) -> None:
    base = _files(tmp_path, mode="dynamic")
    measured = _files(tmp_path, mode="dynamic",
                      extra=_inline(f"{{device: {LEAF}, port: {LEAF_PORT}, length_m: 2.5}}"))
    old, new = _config(base, LEAF), _config(measured, LEAF)
    # buffermgrd computes the headroom from CABLE_LENGTH: the length is written as measured,
    # rounded up to whole metres, and nothing else changes.
    assert new["CABLE_LENGTH"]["ROCE"][LEAF_PORT] == "3m"
    assert _changed(old["CABLE_LENGTH"]["ROCE"], new["CABLE_LENGTH"]["ROCE"]) == {LEAF_PORT}
    assert {t: v for t, v in old.items() if t != "CABLE_LENGTH"} == {
        t: v for t, v in new.items() if t != "CABLE_LENGTH"}
    assert new["BUFFER_PG"][f"{LEAF_PORT}|3"] == {"profile": "NULL"}
    assert _env_lens(measured, HOST)[HOST_RAIL0] == 3


def test_both_ends_of_a_fabric_cable_and_past_the_table(tmp_path: Path) -> None:
    """A 350 m uplink (past NVIDIA's 300 m row): both switch ends get the same computed
    profile under a name buffermgrd never deletes, and survive its admin down/up rule."""
    files = _files(tmp_path, extra=_inline("{cable: c-su1-r0-009, length_m: 350}"))
    rows = {r["id"]: r for r in csv.DictReader(io.StringIO(files["cabling/cabling.csv"]))}
    row = rows["c-su1-r0-009"]
    assert row["length_m"] == "350"
    assert {r["length_m"] for i, r in rows.items() if i != "c-su1-r0-009"} == {"5", "100"}
    for device, port in ((row["a_device"], row["a_port"]), (row["z_device"], row["z_port"])):
        config = _config(files, device)
        assert config["CABLE_LENGTH"]["ROCE"][port] == "350m"
        name = config["BUFFER_PG"][f"{port}|3"]["profile"]
        assert name == "lossless_400000_350m"
        assert int(config["BUFFER_PROFILE"][name]["xoff"]) > 677888  # the 300 m row's xoff
        model = model_for("sn5600", 2)
        assert model is not None
        mgr = BufferMgr(config, test_sonic_buffers._vendor_table(model.sku), model.vendor)
        mgr.boot()
        for p in config["PORT"]:
            mgr.set_admin(p, "down")
            mgr.set_admin(p, "up")
            assert set(mgr.lossless(p)) == {"3"}, f"{device} {p} lost its lossless PG"
        assert mgr.lossless(port)["3"]["xoff"] == config["BUFFER_PROFILE"][name]["xoff"]


def test_fabgens_own_sheet_with_a_length_filled_in_is_a_lengths_file(tmp_path: Path) -> None:
    base = _files(tmp_path)
    sheet = list(csv.DictReader(io.StringIO(base["cabling/cabling.csv"])))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(sheet[0]), lineterminator="\n")
    writer.writeheader()
    for row in sheet:
        # Measured: one cable; unmeasured: the rest left empty.
        row["length_m"] = "30" if row["id"] == HOST_CABLE else ""
        writer.writerow(row)
    from_sheet = _files(tmp_path, extra="  cable_lengths_file: measured.csv\n",
                        sheet="\ufeff" + out.getvalue())  # as a spreadsheet saves it
    inline = _files(tmp_path, extra=_inline(f"{{cable: {HOST_CABLE}, length_m: 30}}"))
    assert from_sheet[f"sonic/{LEAF}/config_db.json"] == inline[f"sonic/{LEAF}/config_db.json"]
    assert from_sheet[f"hosts/{HOST}.env"] == inline[f"hosts/{HOST}.env"]
    assert from_sheet["cabling/cabling.csv"] == inline["cabling/cabling.csv"]
    # The sheet given back unchanged (every length filled in) changes nothing.
    (tmp_path / "measured.csv").write_text(base["cabling/cabling.csv"], encoding="utf-8")
    again = _files(tmp_path, extra="  cable_lengths_file: measured.csv\n")
    assert all(again[p] == base[p] for p in base
               if p not in ("manifest.json", "intent.resolved.yaml", "report.md"))


def _legacy_sheet(files: dict[str, str], measured: dict[str, str]) -> str:
    """fabgen's sheet as fabgen wrote it before ids named ports: each row's id its position
    (c000001, ...), both ends as today; `measured`: today's id -> the length filled in."""
    rows = list(csv.DictReader(io.StringIO(files["cabling/cabling.csv"])))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for n, row in enumerate(rows, 1):
        row["length_m"] = measured.get(row["id"], "")
        row["id"] = f"c{n:06d}"
        writer.writerow(row)
    return out.getvalue()


def test_an_old_sheet_with_positional_ids_is_read_by_its_ends(tmp_path: Path) -> None:
    """A sheet filled in before the ids changed stays valid: each row also names both ends,
    and they decide. Even after the fabric grew, when the old ids would name other cables."""
    base = _files(tmp_path)
    sheet = _legacy_sheet(base, {"c-su1-r0-009": "150", HOST_CABLE: "30"})
    assert "\nc000065," in sheet  # c-su1-r0-009 was the 65th cable: the first uplink
    inline = _files(tmp_path, extra=_inline("{cable: c-su1-r0-009, length_m: 150}",
                                            f"{{cable: {HOST_CABLE}, length_m: 30}}"))
    old = _files(tmp_path, extra="  cable_lengths_file: measured.csv\n", sheet=sheet)
    assert {p: old[p] for p in old if p != "intent.resolved.yaml"} == {
        p: inline[p] for p in inline if p != "intent.resolved.yaml"} | {
        "report.md": old["report.md"], "manifest.json": old["manifest.json"]}
    # The fabric grows by a unit; the old sheet still puts its lengths on the same cables.
    (tmp_path / "pod.yaml").write_text((tmp_path / "pod.yaml").read_text().replace(
        "  nodes: 8\n", "  nodes: 16\n  node: {scalable_unit: 8}\n").replace(
        "  node: {scalable_unit: 8}\n", "").replace(
        "topology:\n", "topology:\n  scalable_unit: 8\n"), encoding="utf-8")
    grown = render(load(tmp_path / "pod.yaml"))
    rows = {r["id"]: r for r in csv.DictReader(io.StringIO(grown["cabling/cabling.csv"]))}
    assert rows["c-su1-r0-009"]["length_m"] == "150" and rows[HOST_CABLE]["length_m"] == "30"
    assert rows["c-su2-r0-009"]["length_m"] == "100"


def test_a_positional_id_alone_is_an_error_that_says_why(tmp_path: Path) -> None:
    with pytest.raises(FabgenError) as err:
        _files(tmp_path, extra="  cable_lengths_file: measured.csv\n",
               sheet="id,length_m\nc000065,150\n")
    (diag,) = err.value.diagnostics
    assert (diag.line, diag.col) == (2, 1)
    assert "'c000065' is a cable id of fabgen's old numbering" in diag.message
    assert "give the id from cabling/cabling.csv, or the cable's ends" in diag.message
    # A row with an id of today that disagrees with its ends is still refused.
    with pytest.raises(FabgenError, match="the row names two different cables"):
        _files(tmp_path, extra="  cable_lengths_file: measured.csv\n",
               sheet="id,a_device,a_port,length_m\nc-su1-r0-009,gpu0001,mlx5_0,150\n")


def test_nvue_gives_a_measured_port_its_own_pfc_profile_and_eos_lists_it(
        tmp_path: Path) -> None:
    """NVUE: the measured port is bound to a PFC profile with its cable's length (Cumulus
    "Port Groups"), the rest keep the global profile; EOS's headroom comment names the
    lengths."""
    extra = _inline("{cable: c-su1-r0-009, length_m: 150}")
    base = _files(tmp_path, mode="auto", leaf="eos", spine="nvue")
    files = _files(tmp_path, mode="auto", leaf="eos", spine="nvue", extra=extra)
    rows = {r["id"]: r for r in csv.DictReader(io.StringIO(files["cabling/cabling.csv"]))}
    leaf, spine, port = (rows["c-su1-r0-009"][k] for k in ("a_device", "z_device", "z_port"))

    def tree(out: dict[str, str]) -> dict[str, Any]:
        value: dict[str, Any] = yaml.safe_load(out[f"nvue/{spine}/startup.yaml"])[0]["set"]
        return value

    old, new = tree(base), tree(files)
    assert old["qos"]["pfc"]["default-global"]["cable-length"] == 100
    assert new["qos"]["pfc"]["default-global"] == old["qos"]["pfc"]["default-global"]
    assert new["qos"]["pfc"]["cable-150m"] == {
        **old["qos"]["pfc"]["default-global"], "cable-length": 150}
    assert set(new["qos"]["pfc"]) == {"default-global", "cable-150m"}
    assert new["interface"][port]["qos"]["pfc"] == {"profile": "cable-150m"}
    changed = {name for name in old["interface"]
               if old["interface"][name] != new["interface"][name]}
    assert changed == {port}
    assert "cables planned: leaf-spine 100 / 150 m, node-leaf 5 m" in files[f"eos/{leaf}.cfg"]
    assert "cables planned: leaf-spine 100 m, node-leaf 5 m" in base[f"eos/{leaf}.cfg"]
    report = files["report.md"]
    assert ("| 150 m (measured) | Cumulus (qos pfc cable-length) | cable-length 150 m (PFC "
            "profile cable-150m of its own) |") in report


def test_the_report_has_a_row_per_measured_length(tmp_path: Path) -> None:
    files = _files(tmp_path, extra=_inline(f"{{cable: {HOST_CABLE}, length_m: 30}}",
                                           "{cable: c-su1-r1-001, length_m: 2}"))
    section = files["report.md"].split("### PFC headroom", 1)[1].split("\n## ", 1)[0]
    cables = [ln.split(" | ")[4] for ln in section.splitlines()
              if ln.startswith("| SONiC | leaf sn5600 | host ports")]
    assert cables == ["2 m (measured)", "5 m", "30 m (measured)"]
    row30 = next(ln for ln in section.splitlines() if "| 30 m (measured) |" in ln)
    assert "table row 40 m" in row30 and "= published row" in row30
    assert "Measured cable lengths: 2 cables (qos.cable_lengths)" in files["report.md"]


def test_a_sheet_outside_the_directory_through_a_link_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.csv"
    outside.write_text("id,length_m\nc-su1-r0-001,30\n", encoding="utf-8")
    pod = tmp_path / "pod"
    pod.mkdir()
    (pod / "measured.csv").symlink_to(outside)
    (pod / "pod.yaml").write_text(INTENT.format(leaf_model="sn5600", spine_model="sn5600",
        mode="auto", extra="  cable_lengths_file: measured.csv\n", leaf="sonic",
        spine="sonic"), encoding="utf-8")
    with pytest.raises(FabgenError, match="leads outside the intent's directory"):
        render(load(pod / "pod.yaml"))


def test_a_sheet_larger_than_the_limit_is_not_read(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cable_lengths, "MAX_BYTES", 64)
    sheet = "id,length_m\n" + "".join(f"c{i:06d},5\n" for i in range(1, 20))
    with pytest.raises(FabgenError) as err:
        _files(tmp_path, extra="  cable_lengths_file: measured.csv\n", sheet=sheet)
    assert [d.render() for d in err.value.diagnostics] == [
        f"{tmp_path / 'measured.csv'}:1:1: the file is larger than 64 bytes, fabgen's limit "
        "for a cable-length sheet"]


def test_lengths_parse_rounding_up() -> None:
    assert [cable_lengths.parse_length(t) for t in ("3", "2.5", " 30 m", "0.5", "1.0")] == [
        3, 3, 30, 1, 1]
    assert [cable_lengths.parse_length(t) for t in ("", "-3", "3 ft", "ten")] == [None] * 4


def test_no_lengths_given_means_every_cable_has_its_class_length(tmp_path: Path) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(INTENT.format(leaf_model="sn5600", spine_model="sn5600", mode="auto",
                                  extra="", leaf="sonic", spine="sonic"), encoding="utf-8")
    intent = load(path).intent
    ctx = RenderContext(intent=intent, fabric=build(intent), qos=qos_plan(intent))
    lengths = ctx.derived(cable_lengths.cable_lengths)
    assert lengths.by_link == {}
    assert {lengths.link_m(link) for link in ctx.fabric.links_of("node-leaf")} == {5}
    assert {lengths.link_m(link) for link in ctx.fabric.links_of("leaf-spine")} == {100}
    leaf = ctx.fabric.switches_of("leaf")[0]
    assert {h.port.cable_m for h in sonic.switch_buffers(ctx, leaf).ports} == {5, 100}


@pytest.mark.realtool
def test_measured_lengths_validate_with_yanglint(tmp_path: Path) -> None:
    from tests import sonic_yang

    sonic_yang.yang_root()  # yanglint and the models, or a skip saying which is missing
    files = _files(tmp_path, extra=_inline("{cable: c-su1-r0-009, length_m: 350}",
                                           f"{{cable: {HOST_CABLE}, length_m: 2.5}}"))
    for switch in (LEAF, "spine-01"):
        result = sonic_yang.validate(_config(files, switch))
        assert result.ok, f"{switch}:\n{result.stderr}"


def test_a_sonic_switch_without_a_vendor_table_says_not_sized(tmp_path: Path) -> None:
    """An unsplit Arista 7060X6 on SONiC (Arista-7060X6-64PE: Arista publishes no lossless
    table for its 800G ports): fabgen writes CABLE_LENGTH (the measured length too) and no
    headroom of its own, and the report says NOT SIZED with the reason; config_db.json is JSON,
    so the report is where it is said. (A switch without a published SONiC SKU at all is
    refused at load: tests/test_sonic_skus.py.)"""
    path = tmp_path / "pod.yaml"
    # 64 ports: two-digit port numbers in the cable ids
    path.write_text(INTENT.format(leaf_model="sn5600", spine_model="sn5600", mode="auto",
                                  extra=_inline(
        "{cable: c-su1-r0-01, length_m: 30}"), leaf="sonic", spine="sonic").replace(
        "fabric: {transport: roce, speed: 400G}", "fabric: {transport: roce, speed: 800G}").replace(
        "  nodes: 8\n", "  nodes: 8\n  node: {model: generic, gpus: 8, nics: 8, nic: connectx-8, "
        "nic_ports: 1}\n").replace(
        "leaf: {model: sn5600, breakout: 2x400G}\n  spine: {model: sn5600, breakout: 2x400G}",
        "leaf: {model: 7060x6-64pe}"),
        encoding="utf-8")
    files = render(load(path))
    leaf = _config(files, LEAF)
    assert leaf["DEVICE_METADATA"]["localhost"]["hwsku"] == "Arista-7060X6-64PE"
    assert leaf["CABLE_LENGTH"]["ROCE"][LEAF_PORT] == "30m"
    assert not {"BUFFER_PROFILE", "BUFFER_PG", "BUFFER_POOL"} & set(leaf)
    section = files["report.md"].split("### PFC headroom", 1)[1].split("\n## ", 1)[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("| SONiC")]
    assert rows and all(ln.endswith("| NOT SIZED |") for ln in rows)
    assert any("| leaf 7060x6-64pe | host ports | 800G | 30 m (measured) |" in ln
               for ln in rows), rows
