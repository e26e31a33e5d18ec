"""`fabgen diff`: each input kind (render dir, git revision, backups) and each exit code."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fabgen.diff import structured_diff

CONFIG_DB = {"PORT": {"Ethernet0": {"mtu": "9100", "speed": "400000"},
                      "Ethernet8": {"mtu": "9100", "speed": "400000"}},
             "DEVICE_METADATA": {"localhost": {"hostname": "leaf1"}}}
EOS = "hostname leaf2\n!\ninterface Ethernet1/1\n   mtu 9214\n   no switchport\n!\nend\n"


def _render(root: Path, config_db: dict[str, object], eos: str = EOS) -> Path:
    (root / "sonic" / "leaf1").mkdir(parents=True)
    (root / "sonic" / "leaf1" / "config_db.json").write_text(json.dumps(config_db, indent=2))
    (root / "eos").mkdir()
    (root / "eos" / "leaf2.cfg").write_text(eos)
    (root / "report.md").write_text("# report\n")
    (root / "manifest.json").write_text('{"fabgen_version": "x"}\n')
    return root


def test_identical_renders_exit_0(cli, tmp_path: Path) -> None:
    a = _render(tmp_path / "a", CONFIG_DB)
    b = _render(tmp_path / "b", CONFIG_DB)
    result = cli("diff", str(a), str(b))
    assert result.code == 0
    assert result.out.splitlines()[-1] == ("files: 0 added, 0 removed, 0 changed, 3 unchanged; "
                                           "lines +0 -0")


def test_reordered_json_keys_are_no_change(cli, tmp_path: Path) -> None:
    a = _render(tmp_path / "a", CONFIG_DB)
    reordered = {"DEVICE_METADATA": CONFIG_DB["DEVICE_METADATA"],
                 "PORT": {"Ethernet8": {"speed": "400000", "mtu": "9100"},
                          "Ethernet0": {"speed": "400000", "mtu": "9100"}}}
    b = _render(tmp_path / "b", reordered)
    assert (a / "sonic/leaf1/config_db.json").read_text() != \
        (b / "sonic/leaf1/config_db.json").read_text()
    result = cli("diff", str(a), str(b), "--format", "json")
    assert result.code == 0
    assert json.loads(result.out)["summary"]["changed"] == 0


def test_changes_exit_2_with_key_and_line_diffs(cli, tmp_path: Path) -> None:
    a = _render(tmp_path / "a", CONFIG_DB)
    changed = json.loads(json.dumps(CONFIG_DB))
    changed["PORT"]["Ethernet0"]["mtu"] = "9216"
    del changed["PORT"]["Ethernet8"]
    b = _render(tmp_path / "b", changed, EOS.replace("mtu 9214", "mtu 9000"))
    (b / "new.txt").write_text("x\n")
    result = cli("diff", str(a), str(b), "--format", "json")
    assert result.code == 2
    data = json.loads(result.out)
    assert data["summary"] == {"added": 1, "removed": 0, "changed": 2, "unchanged": 1,
                               "lines_added": 3, "lines_removed": 4}
    items = {i["name"]: i for i in data["items"]}
    assert items["sonic/leaf1/config_db.json"]["diff"] == [
        '~ PORT.Ethernet0.mtu: "9100" -> "9216"',
        '- PORT.Ethernet8.mtu: "9100"',
        '- PORT.Ethernet8.speed: "400000"',
    ]
    eos = items["eos/leaf2.cfg"]["diff"]
    assert "-   mtu 9214" in eos and "+   mtu 9000" in eos
    text = cli("diff", str(a), str(b))
    assert text.code == 2 and "== eos/leaf2.cfg: changed (+1 -1)" in text.out


def test_backups_are_compared_by_device(cli, tmp_path: Path) -> None:
    render = _render(tmp_path / "render", CONFIG_DB)
    backups = tmp_path / "oxidized"
    backups.mkdir()
    (backups / "leaf2").write_text(EOS.replace("mtu 9214", "mtu 1500"))
    (backups / "leaf1.json").write_text(json.dumps(CONFIG_DB))
    (backups / "old-leaf9").write_text("hostname old-leaf9\n")
    result = cli("diff", str(backups), str(render), "--format", "json")
    assert result.code == 2
    data = json.loads(result.out)
    assert data["compared_by"] == "device"
    assert {i["name"]: i["status"] for i in data["items"]} == {"leaf2": "changed",
                                                               "old-leaf9": "removed"}
    assert data["summary"]["unchanged"] == 1


def test_git_revision_side(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    _render(repo / "configs", CONFIG_DB)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    (repo / "configs" / "eos" / "leaf2.cfg").write_text(EOS.replace("leaf2\n", "leaf2\nx\n"))
    monkeypatch.chdir(repo)
    same = cli("diff", "git:HEAD:configs", "git:HEAD:configs/")
    assert same.code == 0
    changed = cli("diff", "git:HEAD:configs", "configs", "--quiet")
    assert changed.code == 2
    assert changed.out == "files: 0 added, 0 removed, 1 changed, 2 unchanged; lines +1 -0\n"


@pytest.mark.parametrize("args,message", [
    (("git:NOREV:configs", "."), "git ls-tree"),
    (("/nonexistent/a", "/nonexistent/b"), "/nonexistent/a: not a directory"),
    (("git:HEAD", "."), "expected git:REV:PATH"),
])
def test_errors_exit_1(cli, args: tuple[str, str], message: str, tmp_path: Path,
                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli("--no-color", "diff", *args)
    assert result.code == 1
    assert message in result.err


def test_unparsable_json_is_an_error(cli, tmp_path: Path) -> None:
    a = _render(tmp_path / "a", CONFIG_DB)
    b = _render(tmp_path / "b", CONFIG_DB)
    (b / "sonic/leaf1/config_db.json").write_text("{broken")
    result = cli("--no-color", "diff", str(a), str(b))
    assert result.code == 1 and "cannot parse as json" in result.err


def test_structured_diff_ignores_order_but_not_list_order() -> None:
    assert structured_diff({"a": 1, "b": 2}, {"b": 2, "a": 1}) == []
    assert structured_diff({"l": [1, 2]}, {"l": [2, 1]}) == ["~ l[0]: 1 -> 2", "~ l[1]: 2 -> 1"]


def test_backups_compare_only_what_fabgen_owns(cli, tmp_path: Path) -> None:
    render = _render(tmp_path / "render", CONFIG_DB)
    backups = tmp_path / "oxidized"
    backups.mkdir()
    # a real switch carries tables and sections fabgen never writes
    running = {**CONFIG_DB, "MGMT_INTERFACE": {"eth0|10.0.0.5/24": {"gwaddr": "10.0.0.1"}},
               "FEATURE": {"bgp": {"state": "enabled"}}}
    (backups / "leaf1.json").write_text(json.dumps(running))
    (backups / "leaf2").write_text("interface Management1\n   ip address 10.0.0.6/24\n!\n"
                                   "username admin privilege 15 secret sha512 x\n!\n" + EOS)
    result = cli("diff", str(backups), str(render), "--format", "json")
    assert result.code == 0, result.out
    full = cli("diff", str(backups), str(render), "--format", "json", "--all")
    assert full.code == 2
    assert {i["name"] for i in json.loads(full.out)["items"]} == {"leaf1", "leaf2"}
