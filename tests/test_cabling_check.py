"""`fabgen check-cabling`: a hand-edited cabling sheet is caught by fabgen's own check."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

from tests.conftest import GOLDEN, ROOT

INTENT = ROOT / "inventories" / "ib-ndr-1024.yaml"
SHEET = GOLDEN / "ib-ndr-1024" / "cabling" / "cabling.csv"


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


def _write(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def test_the_rendered_sheet_matches(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("check-cabling", str(INTENT), str(SHEET))
    assert (result.code, result.out.splitlines()[-1]) == (0, f"{SHEET}: matches the plan")


def test_crossed_uplinks_are_a_swap_and_asymmetric(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rows = _rows(SHEET)
    # Cross two uplinks at the spine end, as a field engineer might in a crowded rack:
    # leaf-su1-r0 then has one link too few to spine-01 and one too many to spine-02.
    i = next(i for i, r in enumerate(rows)
             if r["a_device"] == "leaf-su1-r0" and r["z_device"] == "spine-01")
    j = next(j for j, r in enumerate(rows)
             if r["a_device"] == "leaf-su1-r1" and r["z_device"] == "spine-02")
    one, two = rows[i], rows[j]
    planned = [(r["id"], r["a_device"], r["a_port"], r["z_device"], r["z_port"])
               for r in (one, two)]
    (one["z_device"], one["z_port"]), (two["z_device"], two["z_port"]) = (
        (two["z_device"], two["z_port"]), (one["z_device"], one["z_port"]))
    sheet = tmp_path / "cabling.csv"
    _write(sheet, rows)
    result = cli("check-cabling", str(INTENT), str(sheet), "--json")
    assert result.code == 1
    findings = json.loads(result.out)
    codes = [f["code"] for f in findings]
    messages = [f["message"] for f in findings if f["code"] == "asymmetric"]
    assert any(m.startswith("leaf-su1-r0 has unequal links to the spines") for m in messages)
    # One swap naming both rows (the header is row 1), not two missing and two unplanned.
    assert codes.count("swapped") == 1 and "missing" not in codes and "unplanned" not in codes
    (id1, a1, ap1, z1, zp1), (id2, a2, ap2, z2, zp2) = planned
    swap = next(f["message"] for f in findings if f["code"] == "swapped")
    assert swap == (f"row {i + 2} and row {j + 2} are swapped: {a1} {ap1} reaches {z2} {zp2} "
                    f"and {a2} {ap2} reaches {z1} {zp1}, planned the other way round ({id1} "
                    f"{a1} {ap1} - {z1} {zp1}, {id2} {a2} {ap2} - {z2} {zp2}); exchange their "
                    f"plugs at {z2} {zp2} and {z1} {zp1}")


def test_two_nic_cables_swapped_at_a_leaf(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """RoCE: the sheet's port names (Ethernet0, Ethernet4) and row numbers, and where to fix."""
    intent = ROOT / "inventories" / "roce-256-sonic.yaml"
    rows = _rows(GOLDEN / "roce-256-sonic" / "cabling" / "cabling.csv")
    leaf = [i for i, r in enumerate(rows)
            if r["kind"] == "node-leaf" and r["z_device"] == "leaf-su1-r0"]
    i, j = leaf[0], leaf[1]
    assert (rows[i]["z_port"], rows[j]["z_port"]) == ("Ethernet0", "Ethernet4")
    # as built, a port and its panel place move together (the crew records both)
    for col in ("z_port", "z_panel"):
        rows[i][col], rows[j][col] = rows[j][col], rows[i][col]
    sheet = tmp_path / "as-built.csv"
    _write(sheet, rows)
    result = cli("check-cabling", str(intent), str(sheet))
    assert result.code == 1
    assert result.out.splitlines() == [
        f"{sheet}: swapped: row {i + 2} and row {j + 2} are swapped: gpu0001 mlx5_0 reaches "
        "leaf-su1-r0 Ethernet4 and gpu0002 mlx5_0 reaches leaf-su1-r0 Ethernet0, planned the "
        f"other way round ({rows[i]['id']} gpu0001 mlx5_0 - leaf-su1-r0 Ethernet0, "
        f"{rows[j]['id']} gpu0002 mlx5_0 - leaf-su1-r0 Ethernet4); exchange them at "
        "leaf-su1-r0",
        f"{sheet}: 1 finding(s)"]
    # The same sheet as JSON numbers its cables from 1.
    data = {"cables": rows}
    as_json = tmp_path / "as-built.json"
    as_json.write_text(json.dumps(data))
    result = cli("check-cabling", str(intent), str(as_json), "--json")
    assert [f["message"].split(" are swapped")[0] for f in json.loads(result.out)] == [
        f"cable {i + 1} and cable {j + 1}"]


def test_a_moved_cable_and_a_rotation_are_no_swap(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    intent = ROOT / "inventories" / "roce-256-sonic.yaml"
    rows = _rows(GOLDEN / "roce-256-sonic" / "cabling" / "cabling.csv")
    leaf = [i for i, r in enumerate(rows)
            if r["kind"] == "node-leaf" and r["z_device"] == "leaf-su1-r0"]
    # Three cables rotated at the leaf: no two exchanged ends, so no swap is claimed.
    i, j, k = leaf[:3]
    ports = [rows[n]["z_port"] for n in (i, j, k)]
    for col in ("z_port", "z_panel"):
        was = [rows[n][col] for n in (i, j, k)]
        rows[i][col], rows[j][col], rows[k][col] = was[1], was[2], was[0]
    sheet = tmp_path / "as-built.csv"
    _write(sheet, rows)
    result = cli("check-cabling", str(intent), str(sheet), "--json")
    codes = sorted(f["code"] for f in json.loads(result.out))
    assert codes == ["missing"] * 3 + ["unplanned"] * 3
    unplanned = [f["message"] for f in json.loads(result.out) if f["code"] == "unplanned"]
    assert unplanned[0] == (f"row {i + 2}: cable {rows[i]['id']} gpu0001 mlx5_0 - leaf-su1-r0 "
                            f"{ports[1]} is not in the plan")
    missing = [f["message"] for f in json.loads(result.out) if f["code"] == "missing"]
    assert missing[0] == (f"planned cable {rows[i]['id']} gpu0001 mlx5_0 - leaf-su1-r0 "
                          f"{ports[0]} is not in the sheet")


def test_the_json_sheet_is_read_too(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sheet = tmp_path / "cabling.json"
    shutil.copy(SHEET.with_suffix(".json"), sheet)
    data = json.loads(sheet.read_text())
    gone = data["cables"].pop(5)
    assert gone["kind"] == "node-leaf"
    sheet.write_text(json.dumps(data))
    result = cli("check-cabling", str(INTENT), str(sheet))
    assert result.code == 1
    assert "nic-port-uncabled" in result.out
    assert f"missing: planned cable {gone['id']} {gone['a_device']} " in result.out


def test_an_unknown_port_is_a_clear_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rows = _rows(SHEET)
    rows[3]["z_port"] = "99"
    sheet = tmp_path / "cabling.csv"
    _write(sheet, rows)
    result = cli("--no-color", "check-cabling", str(INTENT), str(sheet))
    assert result.code == 1
    assert result.err == f"error: {sheet}: row 5: leaf-su1-r3 has no port '99' in the plan\n"


def test_the_panel_columns_are_checked_against_the_ports(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A crew cables by the panel columns: a row whose panel no longer says where its port is
    (edited in one column, not the other) is reported; empty panels are not checked."""
    rows = _rows(SHEET)
    first = rows[0]
    assert (first["a_device"], first["a_port"], first["a_panel"]) == ("dgx001", "mlx5_0",
                                                                      "OSFP4 P2")
    assert (first["z_port"], first["z_panel"]) == ("1", "cage 1 port 1")
    first["a_panel"] = "OSFP4 P1"  # mlx5_5's cage and port
    rows[1]["z_panel"] = ""  # not filled in: nothing to compare
    rows[2]["z_port"] = "2"  # moved in the port column only: still says cage 1 port 1
    sheet = tmp_path / "cabling.csv"
    _write(sheet, rows)
    result = cli("check-cabling", str(INTENT), str(sheet), "--json")
    assert result.code == 1
    panel = [f["message"] for f in json.loads(result.out) if f["code"] == "panel-mismatch"]
    assert panel == [
        "row 2: a_panel 'OSFP4 P1' is not where dgx001 mlx5_0 is (OSFP4 P2)",
        "row 4: z_panel 'cage 1 port 1' is not where leaf-su1-r2 port 2 is "
        "(cage 1 port 2)"]
