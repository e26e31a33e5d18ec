"""Rendering: deterministic bytes, the manifest, atomic writes and refusing foreign directories."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from fabgen import output
from tests.conftest import INVENTORIES


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_render_twice_gives_identical_bytes(cli, tmp_path: Path) -> None:
    for intent in INVENTORIES:
        a, b = tmp_path / f"{intent.stem}-a", tmp_path / f"{intent.stem}-b"
        assert cli("render", str(intent), "-o", str(a)).code == 0
        assert cli("render", str(intent), "-o", str(b)).code == 0
        assert _tree(a) == _tree(b)
        # and re-rendering in place changes nothing
        assert cli("render", str(intent), "-o", str(a)).code == 0
        assert _tree(a) == _tree(b)


def test_default_render_uses_the_default_example(cli, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli("render")
    assert result.code == 0, result.err
    assert (tmp_path / "out" / "roce-256" / "manifest.json").is_file()


def test_manifest_lists_every_file_with_its_hash(cli, tmp_path: Path) -> None:
    intent = INVENTORIES[0]
    out = tmp_path / "out"
    assert cli("render", str(intent), "-o", str(out)).code == 0
    manifest = json.loads((out / "manifest.json").read_text())
    files = _tree(out)
    del files["manifest.json"]
    assert manifest["files"] == {k: hashlib.sha256(v).hexdigest() for k, v in files.items()}
    assert manifest["intent"]["sha256"] == hashlib.sha256(intent.read_bytes()).hexdigest()
    text = (out / "manifest.json").read_text()
    assert "20" + "2" not in text.split('"fabgen_version"')[0]  # no timestamps before fields


def test_refuses_to_replace_a_foreign_directory(cli, tmp_path: Path) -> None:
    foreign = tmp_path / "home"
    foreign.mkdir()
    (foreign / "precious.txt").write_text("keep me\n")
    result = cli("--no-color", "render", str(INVENTORIES[0]), "-o", str(foreign))
    assert result.code == 1
    assert "was not written by fabgen" in result.err
    assert (foreign / "precious.txt").read_text() == "keep me\n"


def test_failed_write_leaves_previous_output(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    dest = tmp_path / "out"
    output.write(dest, output.with_manifest({"a.txt": "one\n"}, "0" * 64, "t"))
    before = _tree(dest)

    def boom(*_args: object, **_kw: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(output.os, "rename", boom)
    monkeypatch.setattr(output, "exchange", boom)
    with pytest.raises(OSError):
        output.write(dest, output.with_manifest({"a.txt": "two\n"}, "0" * 64, "t"))
    assert _tree(dest) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_rejects_paths_outside_the_output(tmp_path: Path) -> None:
    with pytest.raises(output.OutputError):
        output.write(tmp_path / "out", {"../evil": "x"})
    assert not (tmp_path / "evil").exists()


def test_version_and_help(cli) -> None:
    version = cli("--version")
    assert version.code == 0 and version.out.startswith("fabgen ")
    helped = cli("render", "--help")
    assert helped.code == 0 and "examples:" in helped.out and "--check" in helped.out


def test_json_output_for_scripts(cli, tmp_path: Path) -> None:
    result = cli("render", str(INVENTORIES[0]), "-o", str(tmp_path / "o"), "--json")
    data = json.loads(result.out)
    assert data["output"] == str(tmp_path / "o") and data["files"] >= 2
    quiet = cli("render", str(INVENTORIES[0]), "-o", str(tmp_path / "o"), "--quiet")
    assert (quiet.code, quiet.out) == (0, "")


def test_only_and_devices_render_a_subset(cli, tmp_path: Path) -> None:
    intent = INVENTORIES[0]
    full = tmp_path / "full"
    assert cli("render", str(intent), "-o", str(full)).code == 0
    part = tmp_path / "part"
    result = cli("render", str(intent), "-o", str(part), "--only", "resolved")
    assert result.code == 0, result.err
    manifest = json.loads((part / "manifest.json").read_text())
    assert manifest["partial"] == {"only": ["resolved"], "devices": None}
    assert set(manifest["files"]) == {"intent.resolved.yaml"}
    # a subset --check compares only what it rendered
    assert cli("render", str(intent), "-o", str(full), "--only", "resolved", "--check").code == 0


def test_partial_render_never_replaces_a_full_one(cli, tmp_path: Path) -> None:
    intent = INVENTORIES[0]
    full = tmp_path / "full"
    assert cli("render", str(intent), "-o", str(full)).code == 0
    before = _tree(full)
    result = cli("--no-color", "render", str(intent), "-o", str(full), "--only", "resolved")
    assert result.code == 1 and "holds a full render" in result.err
    assert _tree(full) == before


def test_bad_selection_is_a_clear_error(cli, tmp_path: Path) -> None:
    bad = cli("--no-color", "render", str(INVENTORIES[0]), "-o", str(tmp_path / "o"),
              "--only", "sonicc")
    assert bad.code == 1 and "unknown target 'sonicc'" in bad.err
    none = cli("--no-color", "render", str(INVENTORIES[0]), "-o", str(tmp_path / "o"),
               "--devices", "nope-*")
    assert none.code == 1 and "matches no switch or host" in none.err
    assert not (tmp_path / "o").exists()
