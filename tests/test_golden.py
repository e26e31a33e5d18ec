"""golden/ holds the full render of every inventory; a fresh render must match it byte for byte.

To update after an intended change: `fabgen render inventories/X.yaml -o golden/X`, then review
the diff like code. Never regenerate to make this test pass without reading the diff.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import GOLDEN, INVENTORIES


@pytest.mark.parametrize("intent", INVENTORIES, ids=lambda p: p.stem)
def test_golden_is_fresh(intent: Path, cli) -> None:
    result = cli("--no-color", "render", str(intent), "-o", str(GOLDEN / intent.stem), "--check")
    assert result.code == 0, result.err


def test_every_inventory_has_golden() -> None:
    assert {p.name for p in GOLDEN.iterdir() if p.is_dir()} == {p.stem for p in INVENTORIES}


def test_check_fails_after_hand_edit(cli, tmp_path: Path) -> None:
    intent = INVENTORIES[0]
    copy = tmp_path / "golden"
    shutil.copytree(GOLDEN / intent.stem, copy)
    assert cli("render", str(intent), "-o", str(copy), "--check").code == 0
    victim = sorted(p for p in copy.rglob("*") if p.is_file() and p.name != "manifest.json")[0]
    victim.write_text(victim.read_text() + "# hand edit\n")
    (copy / "stray.txt").write_text("x\n")
    result = cli("--no-color", "render", str(intent), "-o", str(copy), "--check")
    assert result.code == 1
    rel = victim.relative_to(copy).as_posix()
    assert f"{copy / rel}: differs" in result.err
    assert f"{copy / 'stray.txt'}: not rendered" in result.err


def test_check_reports_missing_output(cli, tmp_path: Path) -> None:
    result = cli("--no-color", "render", str(INVENTORIES[0]), "-o", str(tmp_path / "none"),
                 "--check")
    assert result.code == 1
    assert "manifest.json: missing" in result.err
