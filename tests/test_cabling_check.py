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


def test_one_moved_cable_is_reported_as_asymmetric(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rows = _rows(SHEET)
    # Cross two uplinks at the spine end, as a field engineer might in a crowded rack:
    # leaf-su1-r0 then has one link too few to spine-01 and one too many to spine-02.
    one = next(r for r in rows if r["a_device"] == "leaf-su1-r0" and r["z_device"] == "spine-01")
    two = next(r for r in rows if r["a_device"] == "leaf-su1-r1" and r["z_device"] == "spine-02")
    (one["z_device"], one["z_port"]), (two["z_device"], two["z_port"]) = (
        (two["z_device"], two["z_port"]), (one["z_device"], one["z_port"]))
    sheet = tmp_path / "cabling.csv"
    _write(sheet, rows)
    result = cli("check-cabling", str(INTENT), str(sheet), "--json")
    assert result.code == 1
    codes = [f["code"] for f in json.loads(result.out)]
    assert "asymmetric" in codes
    messages = [f["message"] for f in json.loads(result.out) if f["code"] == "asymmetric"]
    assert any(m.startswith("leaf-su1-r0 has unequal links to the spines") for m in messages)
    assert codes.count("missing") == 2 and codes.count("unplanned") == 2


def test_the_json_sheet_is_read_too(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sheet = tmp_path / "cabling.json"
    shutil.copy(SHEET.with_suffix(".json"), sheet)
    data = json.loads(sheet.read_text())
    del data["cables"][5]
    sheet.write_text(json.dumps(data))
    result = cli("check-cabling", str(INTENT), str(sheet))
    assert result.code == 1
    assert "nic-port-uncabled" in result.out and "missing: planned cable c000006" in result.out


def test_an_unknown_port_is_a_clear_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rows = _rows(SHEET)
    rows[3]["z_port"] = "99"
    sheet = tmp_path / "cabling.csv"
    _write(sheet, rows)
    result = cli("--no-color", "check-cabling", str(INTENT), str(sheet))
    assert result.code == 1
    assert result.err == f"error: {sheet}: line 5: leaf-su1-r3 has no port '99' in the plan\n"


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
        f"{sheet}: line 2: a_panel 'OSFP4 P1' is not where dgx001 mlx5_0 is (OSFP4 P2)",
        f"{sheet}: line 4: z_panel 'cage 1 port 1' is not where leaf-su1-r2 port 2 is "
        "(cage 1 port 2)"]
