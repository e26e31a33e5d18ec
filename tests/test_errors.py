"""Bad input: each case file gets its exact message with line and column, and nothing is written.

Cases are file pairs, `tests/errors/<case>.yaml` and `<case>.err` (the expected stderr); a new
case needs no code. Regenerate a .err only after reading the new message.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ERRORS = Path(__file__).parent / "errors"
CASES = sorted(p.stem for p in ERRORS.glob("*.yaml"))
# Cases run with --strict, so a warning shows as an error. A case about a file the intent names
# (a cable-length sheet) needs a fabric with spare ports, which the plan warns about, so under
# --strict it would stop before reading the file: such a case says so with this line and runs
# without --strict (its .err then holds the warnings, then the errors).
NOT_STRICT = "# test: not --strict"


@pytest.mark.parametrize("case", CASES)
def test_error_case(case: str, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ERRORS)
    out = tmp_path / "out"
    strict = [] if NOT_STRICT.encode() in (ERRORS / f"{case}.yaml").read_bytes() \
        else ["--strict"]
    result = cli("--no-color", "render", *strict, f"{case}.yaml", "-o", str(out))
    expected = (ERRORS / f"{case}.err").read_text(encoding="utf-8")
    assert result.err == expected
    assert result.code == 1
    assert "Traceback" not in result.err
    assert not out.exists(), "an invalid intent must not create the output directory"
    assert list(tmp_path.iterdir()) == [], "no temporary directory may be left behind"


@pytest.mark.parametrize("case", ["out-of-range", "yaml-syntax"])
def test_error_leaves_previous_output_untouched(case: str, cli, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    good = Path(__file__).resolve().parent.parent / "inventories" / "roce-256-sonic.yaml"
    out = tmp_path / "out"
    assert cli("render", str(good), "-o", str(out)).code == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    monkeypatch.chdir(ERRORS)
    assert cli("render", f"{case}.yaml", "-o", str(out)).code == 1
    after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before


def test_missing_file(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli("--no-color", "validate", "nope.yaml")
    assert (result.code, result.err) == (1, "nope.yaml: no such file\n")


def test_directory_instead_of_file(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "intents").mkdir()
    result = cli("--no-color", "render", "intents", "-o", "out")
    assert (result.code, result.err) == (1, "intents: is a directory; expected an intent YAML "
                                            "file\n")
    assert not (tmp_path / "out").exists()


def test_validate_reports_every_file(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ERRORS)
    result = cli("--no-color", "validate", "empty.yaml", "not-utf8.yaml")
    assert result.code == 1
    assert result.err.splitlines() == [
        "empty.yaml:1:1: the file is empty; an intent needs at least name, fabric, cluster "
        "and topology",
        "not-utf8.yaml:2:1: not valid UTF-8 (byte 0xff); save the file as UTF-8",
    ]


def test_warnings_are_not_errors_without_strict(cli, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ERRORS)
    result = cli("--no-color", "validate", "warnings-strict.yaml")
    assert result.code == 0
    printed = result.err.splitlines()
    # The intent's own warning, and the plan's (as `fabgen plan` prints it).
    assert ("warnings-strict.yaml:7:21: warning: topology.oversubscription: leaf "
            "oversubscription 3:1 is above 2:1 on the compute fabric: all-reduce bandwidth drops "
            "with it") in printed
    assert ("warnings-strict.yaml:6:3: warning: topology.spine: 1 spine(s) per plane: one spine "
            "failure removes 100% of the leaf-spine bandwidth") in printed


def test_usage_error_exits_1(cli) -> None:
    """A usage error is an error (1): 2 is `fabgen diff`'s "changes" (tests/test_diff_cli.py)."""
    assert cli("render", "--no-such-flag").code == 1
    assert cli().code == 1
