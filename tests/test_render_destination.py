"""A render never lands in the wrong place (issue 29): no built-in example into a directory the
user named, no fabric over another fabric's render without --force, and the intent that was
read is always said when it was not named; `plan` and `validate` read ./fabgen.yaml too."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fabgen import resources
from tests.conftest import ROOT

ROCE = ROOT / "inventories" / "roce-256-sonic.yaml"  # fabric roce-256, the built-in example
MIXED = ROOT / "inventories" / "roce-eos-nvue-2to1.yaml"  # fabric roce-mixed-2to1


def _tree(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes()
            for p in sorted(path.rglob("*")) if p.is_file()}


def _fabric(path: Path) -> str:
    name: str = json.loads((path / "manifest.json").read_text())["intent"]["name"]
    return name


@pytest.fixture
def pod_a(cli, tmp_path: Path) -> Path:
    """configs/pod-a holding the render of fabric roce-mixed-2to1."""
    dest = tmp_path / "configs" / "pod-a"
    assert cli("render", "-q", str(MIXED), "-o", str(dest)).code == 0
    return dest


def test_no_builtin_example_into_a_named_directory(cli, tmp_path: Path, pod_a: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no ./fabgen.yaml here
    before = _tree(pod_a)
    result = cli("--no-color", "render", "-q", "-o", str(pod_a))
    assert result.code == 1, result.err  # a usage error: exit 1 (2 is only "changes")
    assert result.err.splitlines() == [
        f"error: no INTENT given and no ./fabgen.yaml: name the intent to render into {pod_a} "
        f"(fabgen render INTENT -o {pod_a}); the built-in example renders only to its default "
        "out/NAME"]
    assert _tree(pod_a) == before, "nothing written"
    fresh = tmp_path / "fresh"
    assert cli("render", "-q", "-o", str(fresh)).code == 1
    assert not fresh.exists()
    assert not (tmp_path / "out").exists()


def test_another_fabric_replaces_a_render_only_with_force(cli, tmp_path: Path,
                                                          pod_a: Path) -> None:
    before = _tree(pod_a)
    result = cli("--no-color", "render", "-q", str(ROCE), "-o", str(pod_a))
    assert result.code == 1
    assert result.err == (f"error: {pod_a} holds the render of fabric 'roce-mixed-2to1', not "
                          f"'roce-256' ({ROCE}); --force replaces it, or choose another -o "
                          "DIR\n")
    assert _tree(pod_a) == before, "nothing written"
    assert [p.name for p in pod_a.parent.iterdir()] == ["pod-a"], "no temporary left"
    # The same fabric, changed, replaces its own render as always (the everyday loop).
    assert cli("render", "-q", str(MIXED), "-o", str(pod_a), "--jobs", "1").code == 0
    forced = cli("render", "-q", str(ROCE), "-o", str(pod_a), "--force")
    assert forced.code == 0, forced.err
    assert _fabric(pod_a) == "roce-256"
    # --check writes nothing, so it compares whatever the directory holds.
    checked = cli("render", "-q", str(MIXED), "-o", str(pod_a), "--check")
    assert checked.code == 1 and "differ from a fresh render" in checked.err


def test_builtin_example_replaces_only_its_own_render(cli, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's edited roce-256 (the example's name kept) is not replaced by a stray
    `fabgen render` where ./fabgen.yaml is missing."""
    monkeypatch.chdir(tmp_path)
    edited = tmp_path / "edited.yaml"
    edited.write_text(ROCE.read_text(encoding="utf-8").replace(
        "description:", "description: edited", 1), encoding="utf-8")
    out = tmp_path / "out" / "roce-256"
    assert cli("render", "-q", str(edited), "-o", str(out)).code == 0
    before = _tree(out)
    result = cli("--no-color", "render", "-q")
    assert result.code == 1
    assert "holds a render of a 'roce-256' intent that is not the built-in example" in result.err
    assert _tree(out) == before
    assert cli("render", "-q", "--force").code == 0
    assert cli("render", "-q").code == 0  # now it holds the example's own render


def test_quiet_render_says_which_intent_it_read(cli, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    builtin = cli("render", "-q")
    assert builtin.code == 0 and builtin.out == ""
    assert builtin.err.splitlines() == [
        f"note: no INTENT given and no ./fabgen.yaml: rendering the built-in example "
        f"{resources.DEFAULT_EXAMPLE}; `fabgen init` writes a starter intent to edit"]
    assert cli("init", "-q").code == 0
    # Edited and rendered again where the example's render is: the everyday loop.
    local = tmp_path / "fabgen.yaml"
    local.write_text(local.read_text(encoding="utf-8").replace(
        "description:", "description: edited", 1), encoding="utf-8")
    read = cli("render", "-q")
    assert (read.code, read.out) == (0, "")
    assert read.err.splitlines() == ["note: no INTENT given: reading ./fabgen.yaml"]
    named = cli("render", "-q", "fabgen.yaml")
    assert (named.code, named.out, named.err) == (0, "", "")


def test_plan_and_validate_read_the_local_intent(cli, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for command in ("plan", "validate"):
        missing = cli("--no-color", command)
        assert missing.code == 1, command
        assert missing.err == ("error: no INTENT given and no ./fabgen.yaml: name the intent, "
                               "or `fabgen init` writes a starter intent here\n")
    shutil.copy(MIXED, tmp_path / "fabgen.yaml")
    plan = cli("--no-color", "plan", "-q")
    assert plan.code == 0 and plan.out == ""
    assert plan.err.splitlines()[0] == "note: no INTENT given: reading ./fabgen.yaml"
    loud = cli("--no-color", "plan")
    assert loud.out.startswith("roce-mixed-2to1: 64 nodes, 512 GPUs")
    validate = cli("--no-color", "validate")
    assert validate.code == 0
    assert validate.out == "fabgen.yaml: ok\n"
    assert validate.err.splitlines()[0] == "note: no INTENT given: reading ./fabgen.yaml"
