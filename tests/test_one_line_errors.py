"""One error is one line (issue 29): a value echoed in an error line is escaped, so a line
separator (U+2028), a paragraph separator, NEL or any control character in it cannot split the
line and leave its second half without the file name."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabgen.errors import Diagnostic, one_line
from fabgen.verify import check as verify_check
from fabgen.verify_cabling import Finding, format_findings
from tests.conftest import ROOT

# Every character str.splitlines() breaks on, the other controls, and a bidi override (a format
# character that makes a line read as something else).
BREAKS = {
    "LF": "\n", "CR": "\r", "VT": "\x0b", "FF": "\x0c", "FS": "\x1c", "GS": "\x1d",
    "RS": "\x1e", "NEL": "\x85", "LS": "\u2028", "PS": "\u2029", "NUL": "\x00", "ESC": "\x1b",
    "DEL": "\x7f", "TAB": "\t", "RLO": "\u202e",
}
# The same characters as YAML double-quoted escapes (YAML 1.2, 5.7 "Escaped Characters").
YAML_ESCAPE = {
    "LF": "\\n", "CR": "\\r", "VT": "\\v", "FF": "\\f", "FS": "\\x1c", "GS": "\\x1d",
    "RS": "\\x1e", "NEL": "\\N", "LS": "\\L", "PS": "\\P", "NUL": "\\0", "ESC": "\\e",
    "DEL": "\\x7f", "TAB": "\\t", "RLO": "\\u202e",
}

BASE = """\
name: t
fabric: {transport: roce, speed: 400G}
cluster:
  nodes: 64
  node: {model: dgx-h100, nic: NIC}
topology:
  leaf: {model: MODEL, breakout: 2x400G}
  KEY: 1
"""
# Each places the character in a value or key an error message echoes.
MUTATIONS = {
    "node-nic": {"NIC": '"connectx-7{c}x"', "MODEL": "sn5600", "KEY": "min_spines"},
    "switch-model": {"NIC": "connectx-7", "MODEL": '"sn5600{c}x"', "KEY": "min_spines"},
    "unknown-key": {"NIC": "connectx-7", "MODEL": "sn5600", "KEY": '"spine{c}x"'},
}


def test_one_line_escapes_every_break_and_control() -> None:
    for name, char in BREAKS.items():
        shown = one_line(f"a{char}b")
        assert shown.splitlines() == [shown] and len(shown.split()) == 1, name
        assert shown == "a" + repr(char)[1:-1] + "b", name
    plain = "pod.yaml:3:5: topology.leaf.model: unknown switch model 'sn560' (did you mean?)"
    assert one_line(plain) is plain
    assert one_line("café \u2192 naïve") == "café \u2192 naïve"  # printable: left alone


@pytest.mark.parametrize("char", list(BREAKS))
@pytest.mark.parametrize("where", list(MUTATIONS))
def test_intent_errors_stay_one_line(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     where: str, char: str) -> None:
    text = BASE
    for field, value in MUTATIONS[where].items():
        text = text.replace(field, value.format(c=YAML_ESCAPE[char]))
    (tmp_path / "m.yaml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = cli("--no-color", "validate", "m.yaml")
    assert result.code == 1
    lines = result.err.splitlines()
    assert lines, result.err
    assert all(line.startswith("m.yaml:") for line in lines), lines
    assert repr(BREAKS[char])[1:-1] + "x" in result.err  # the value is shown, escaped


def test_a_diagnostic_renders_as_one_line() -> None:
    diag = Diagnostic("unknown key 'a\u2028b'", ("topology",), file="p\x85.yaml", line=1, col=2,
                      hint="did you mean\n'ab'?")
    assert diag.render() == ("p\\x85.yaml:1:2: topology: unknown key 'a\\u2028b' (did you "
                             "mean\\n'ab'?)")


def test_cabling_sheet_errors_and_findings_stay_one_line(cli, tmp_path: Path) -> None:
    intent = ROOT / "inventories" / "roce-256-sonic.yaml"
    sheet = tmp_path / "as\u2028built.csv"
    sheet.write_text("id,kind,a_device,a_port,z_device,z_port\n"
                     "c1,node-leaf,gpu\u20280001,mlx5_0,leaf-su1-r0,Ethernet0\n", encoding="utf-8")
    result = cli("--no-color", "check-cabling", str(intent), str(sheet))
    assert result.code == 1
    assert result.err.splitlines() == [result.err.rstrip("\n")]
    assert result.err.startswith("error: ") and "gpu\\u20280001" in result.err
    # A sheet that reads: every finding line starts with the sheet's (escaped) name.
    good = tmp_path / "ok\u2028sheet.csv"
    plan = tmp_path / "render"
    assert cli("render", "-q", str(intent), "-o", str(plan), "--only", "cabling").code == 0
    rows = (plan / "cabling" / "cabling.csv").read_text(encoding="utf-8").splitlines()
    good.write_text("\n".join(rows[:-1]) + "\n", encoding="utf-8")  # one cable missing
    found = cli("--no-color", "check-cabling", str(intent), str(good))
    assert found.code == 1
    shown = str(good).replace("\u2028", "\\u2028")
    assert found.out.splitlines() and all(line.startswith(f"{shown}: ")
                                          for line in found.out.splitlines()), found.out


def test_verify_findings_stay_one_line() -> None:
    ib = Finding("extra", None, None, "extra cable to node 'ufm\u202801'")
    assert format_findings([ib]).splitlines()[1] == "  extra cable to node 'ufm\\u202801'"
    saved = verify_check.Finding("leaf\x85-1", "Ethernet0", "lldp", "spine-01", "evil\nname")
    report = verify_check.Report(findings=[saved], checked=["leaf\x85-1"], skipped=[])
    text = verify_check.format_report(report)
    assert len(text.splitlines()) == 2 and "evil\\nname" in text


def test_check_lists_foreign_file_names_one_per_line(cli, tmp_path: Path) -> None:
    intent = ROOT / "inventories" / "roce-256-sonic.yaml"
    out = tmp_path / "out"
    assert cli("render", "-q", str(intent), "-o", str(out)).code == 0
    (out / "notes\nREADME.md").write_text("mine\n")
    result = cli("--no-color", "render", "-q", str(intent), "-o", str(out), "--check")
    assert result.code == 1
    assert f"{out}/notes\\nREADME.md: not rendered" in result.err.splitlines()
