"""`fabgen diff` on small hand-made sides: each input kind (render dir, git revision, backups),
each comparison rule, natural order, and the text and JSON it prints."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import jsonschema
import pytest

from fabgen.diff import structured_diff
from fabgen.diff.sections import diff_sections, parse_config
from fabgen.diff.tables import CABLES, csv_rows, diff_rows, json_cables
from tests.conftest import ROOT

CONFIG_DB = {"PORT": {"Ethernet0": {"mtu": "9100", "speed": "400000"},
                      "Ethernet8": {"mtu": "9100", "speed": "400000"}},
             "DEVICE_METADATA": {"localhost": {"hostname": "leaf1"}}}
EOS = "hostname leaf2\n!\ninterface Ethernet1/1\n   mtu 9214\n   no switchport\n!\nend\n"
SCHEMA = json.loads((ROOT / "schemas" / "fabgen-diff.schema.json").read_text())


def _render(root: Path, config_db: dict[str, object], eos: str = EOS) -> Path:
    (root / "sonic" / "leaf1").mkdir(parents=True)
    (root / "sonic" / "leaf1" / "config_db.json").write_text(json.dumps(config_db, indent=2))
    (root / "eos").mkdir()
    (root / "eos" / "leaf2.cfg").write_text(eos)
    (root / "report.md").write_text("# report\n")
    (root / "manifest.json").write_text('{"fabgen_version": "x"}\n')
    return root


def _json(result) -> dict[str, object]:  # type: ignore[no-untyped-def]
    data = json.loads(result.out)
    jsonschema.validate(data, SCHEMA)
    return data


def test_identical_renders_exit_0(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a = _render(tmp_path / "a", CONFIG_DB)
    b = _render(tmp_path / "b", CONFIG_DB)
    result = cli("diff", str(a), str(b))
    assert result.code == 0
    assert result.out == ("files: 0 added, 0 removed, 0 changed, 3 unchanged; cables: none "
                          "changed; 0 changes\n")


def test_reordered_json_keys_are_no_change(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a = _render(tmp_path / "a", CONFIG_DB)
    reordered = {"DEVICE_METADATA": CONFIG_DB["DEVICE_METADATA"],
                 "PORT": {"Ethernet8": {"speed": "400000", "mtu": "9100"},
                          "Ethernet0": {"speed": "400000", "mtu": "9100"}}}
    b = _render(tmp_path / "b", reordered)
    assert (a / "sonic/leaf1/config_db.json").read_text() != \
        (b / "sonic/leaf1/config_db.json").read_text()
    result = cli("diff", "--format", "json", str(a), str(b))
    assert result.code == 0
    assert _json(result)["summary"]["files"]["changed"] == 0  # type: ignore[index]


def test_changes_exit_2_with_key_and_section_changes(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a = _render(tmp_path / "a", CONFIG_DB)
    changed = json.loads(json.dumps(CONFIG_DB))
    changed["PORT"]["Ethernet0"]["mtu"] = "9216"
    del changed["PORT"]["Ethernet8"]
    b = _render(tmp_path / "b", changed, EOS.replace("mtu 9214", "mtu 9000"))
    (b / "new.txt").write_text("x\n")
    result = cli("diff", "--format", "json", str(a), str(b))
    assert result.code == 2
    data = _json(result)
    assert data["summary"]["files"] == {"added": 1, "removed": 0, "changed": 2,  # type: ignore[index]
                                        "unchanged": 1}
    files = {f["name"]: f for f in data["files"]}  # type: ignore[attr-defined]
    assert [(c["op"], c["where"], c["old"], c["new"])
            for c in files["sonic/leaf1/config_db.json"]["changes"]] == [
        ("~", "PORT|Ethernet0.mtu", "9100", "9216"),
        ("-", "PORT|Ethernet8.mtu", "9100", None),
        ("-", "PORT|Ethernet8.speed", "400000", None),
    ]
    assert [(c["op"], c["at"], c["old"], c["new"]) for c in files["eos/leaf2.cfg"]["changes"]] \
        == [("~", ["interface Ethernet1/1"], "mtu 9214", "mtu 9000")]
    assert files["new.txt"]["status"] == "added" and files["new.txt"]["size"] == 1
    text = cli("diff", str(a), str(b))
    assert text.code == 2
    assert text.out.splitlines()[0].startswith("files: 1 added, 0 removed, 2 changed")
    assert ("== eos/leaf2.cfg [leaf2: eos]: changed, 1 change\n  interface Ethernet1/1\n"
            "  - mtu 9214\n  + mtu 9000\n") in text.out


def test_backups_are_compared_by_device(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    render = _render(tmp_path / "render", CONFIG_DB)
    backups = tmp_path / "oxidized"
    backups.mkdir()
    (backups / "leaf2").write_text(EOS.replace("mtu 9214", "mtu 1500"))
    (backups / "leaf1.json").write_text(json.dumps(CONFIG_DB))
    (backups / "old-leaf9").write_text("hostname old-leaf9\n")
    result = cli("diff", str(backups), str(render), "--format", "json")
    assert result.code == 2
    data = _json(result)
    assert data["compared_by"] == "device"
    assert {f["name"]: f["status"] for f in data["files"]} == {  # type: ignore[attr-defined]
        "leaf2": "changed", "old-leaf9": "removed"}
    assert data["summary"]["files"]["unchanged"] == 1  # type: ignore[index]


def test_a_directory_of_no_backups_of_the_fabric_is_an_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An empty directory or a wrong path (docs, another fabric's backups) would read as every
    switch added and gate a pipeline as "changes": it is an error instead; notes beside real
    backups are not switches."""
    render = _render(tmp_path / "render", CONFIG_DB)
    for name, files in (("empty", {}), ("docs", {"architecture.md": "# x\n", "x.png": "x"}),
                        ("other", {"spine9.cfg": "hostname spine9\n"})):
        side = tmp_path / name
        side.mkdir()
        for file, text in files.items():
            (side / file).write_text(text)
        result = cli("diff", str(side), str(render))
        assert result.code == 1 and result.out == "", name
        assert "holds no config of any switch of the render (leaf1, leaf2, ...)" in result.err
    notes = tmp_path / "with-notes"
    notes.mkdir()
    (notes / "leaf2").write_text(EOS)
    (notes / "README.md").write_text("hostname leaf2\n")
    result = cli("diff", str(notes), str(render), "--format", "json")
    assert {f["name"]: f["status"] for f in _json(result)["files"]} == {"leaf1": "added"}  # type: ignore[attr-defined]


def test_git_revision_side(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
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
    assert changed.out == ("files: 0 added, 0 removed, 1 changed, 2 unchanged; devices: 1 "
                           "changed (1 device (eos)); cables: none changed; 1 change\n")
    # PATH is from the repository's top, as in git's REV:PATH, wherever fabgen runs.
    monkeypatch.chdir(repo / "configs" / "eos")
    assert cli("diff", "git:HEAD:configs", "git:HEAD:configs").code == 0
    assert cli("diff", "git:HEAD:./", "../").code == 2


@pytest.mark.parametrize("args,message", [
    (("git:NOREV:configs", "."), "git ls-tree"),
    (("/nonexistent/a", "/nonexistent/b"), "/nonexistent/a: not a directory"),
    (("git:HEAD", "."), "expected git:REV:PATH"),
])
def test_errors_exit_1(cli, args: tuple[str, str], message: str, tmp_path: Path,  # type: ignore[no-untyped-def]
                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli("--no-color", "diff", *args)
    assert result.code == 1
    assert message in result.err and len(result.err.splitlines()) == 1


def test_unparsable_json_is_an_error(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a = _render(tmp_path / "a", CONFIG_DB)
    b = _render(tmp_path / "b", CONFIG_DB)
    (b / "sonic/leaf1/config_db.json").write_text("{broken")
    result = cli("--no-color", "diff", str(a), str(b))
    assert result.code == 1 and "cannot parse as json" in result.err


def test_structured_diff_ignores_key_order_and_matches_named_items() -> None:
    assert structured_diff({"a": 1, "b": 2}, {"b": 2, "a": 1}) == []
    # Unnamed items are aligned: one inserted is one addition, not a change of each after it.
    assert [(c.op, c.at, c.new) for c in structured_diff({"l": [1, 2, 3]}, {"l": [1, 9, 2, 3]})] \
        == [("+", ("l", "[1]"), 9)]
    # Named items (Kubernetes, Prometheus rules, NVUE) are matched by name.
    old = {"rules": [{"alert": "A", "for": "1m"}, {"alert": "B", "for": "1m"}]}
    new = {"rules": [{"alert": "B", "for": "2m"}, {"alert": "A", "for": "1m"}]}
    assert [(c.op, c.at, c.old, c.new) for c in structured_diff(old, new)] == [
        ("~", ("rules", "[alert=B]", "for"), "1m", "2m")]


def test_key_paths_come_in_natural_order() -> None:
    """swp1s0, swp2, swp10s1, swp19s1: digit runs as numbers, as NVUE and EOS list ports."""
    names = ["swp19s1", "swp1s0", "swp10s1", "swp2"]
    old = {"interface": {n: {"mtu": 9000} for n in names}}
    new = {"interface": {n: {"mtu": 9216} for n in names}}
    assert [c.at[1] for c in structured_diff(old, new)] == ["swp1s0", "swp2", "swp10s1",
                                                            "swp19s1"]
    sections = "".join(f"interface Ethernet{n}/1\n   mtu 9000\n" for n in (19, 1, 10, 2))
    changes = diff_sections(parse_config(sections), parse_config(sections.replace("9000",
                                                                                 "9216")))
    assert [c.at[0] for c in changes] == [f"interface Ethernet{n}/1" for n in (1, 2, 10, 19)]


def test_several_yaml_documents_are_matched_by_kind_and_name(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """On main a YAML stream of several documents (volcano-hypernodes.yaml) was a parse error."""
    def hypernodes(units: int) -> str:
        return "# comment\n" + "".join(
            f"---\nkind: HyperNode\nmetadata:\n  name: su{u}\nspec:\n  members:\n"
            + "".join(f"  - name: gpu{u}{n}\n" for n in range(2)) for u in range(1, units + 1))

    for side, units in (("a", 2), ("b", 3)):
        (tmp_path / side / "scheduler").mkdir(parents=True)
        (tmp_path / side / "scheduler" / "volcano.yaml").write_text(hypernodes(units))
        (tmp_path / side / "manifest.json").write_text("{}\n")
    result = cli("diff", "--json", str(tmp_path / "a"), str(tmp_path / "b"))
    assert result.code == 2, result.err
    changes = _json(result)["files"][0]["changes"]  # type: ignore[index]
    assert {c["where"] for c in changes} == {
        "HyperNode su3: kind", "HyperNode su3: metadata.name",
        "HyperNode su3: spec.members[name=gpu30].name",
        "HyperNode su3: spec.members[name=gpu31].name"}


CABLE_HEADER = "id,kind,a_device,a_port,z_device,z_port,speed\n"


def _cables(rows: list[str]) -> list[dict[str, str]]:
    return list(csv_rows((CABLE_HEADER + "".join(r + "\n" for r in rows)).splitlines(), "x"))


def test_cables_are_matched_by_their_ends() -> None:
    old = _cables(["c1,node-leaf,gpu1,mlx5_0,leaf1,Ethernet0,400G",
                   "c2,node-leaf,gpu1,mlx5_1,leaf1,Ethernet4,400G",
                   "c3,node-leaf,gpu2,mlx5_0,leaf1,Ethernet8,400G",
                   "c4,leaf-spine,leaf1,Ethernet64,spine1,Ethernet0,400G",
                   "c5,leaf-spine,leaf1,Ethernet68,spine1,Ethernet4,400G"])
    new = _cables(["c1,node-leaf,gpu1,mlx5_0,leaf1,Ethernet0,400G",  # kept
                   "c2,node-leaf,gpu1,mlx5_1,leaf1,Ethernet12,400G",  # moved on the leaf
                   "c3,node-leaf,gpu3,mlx5_0,leaf2,Ethernet0,400G",  # a new cable, id reused
                   "c4,leaf-spine,leaf1,Ethernet68,spine1,Ethernet4,200G",  # speed changed
                   "c9,leaf-spine,leaf1,Ethernet64,spine1,Ethernet0,400G"])  # renumbered
    changes, count = diff_rows(lambda: iter(old), lambda: iter(new), CABLES)
    from fabgen.diff.tables import describe

    assert [(c.op, c.at[0], c.note, describe(c, CABLES)) for c in changes] == [
        ("~", "c2", "moved", "gpu1:mlx5_1 ↔ leaf1:Ethernet4 → gpu1:mlx5_1 ↔ leaf1:Ethernet12"),
        ("-", "c3", "removed", "gpu2:mlx5_0 ↔ leaf1:Ethernet8"),
        ("+", "c3", "added", "gpu3:mlx5_0 ↔ leaf2:Ethernet0"),
        ("~", "c4", "changed", "leaf1:Ethernet68 ↔ spine1:Ethernet4 (id c5 → c4, speed 400G → "
                               "200G)"),
        ("~", "c9", "renumbered", "leaf1:Ethernet64 ↔ spine1:Ethernet0: id c4 → c9"),
    ]
    assert count.as_dict() == {"added": 1, "removed": 1, "moved": 1, "changed": 1,
                               "renumbered": 1, "renamed": 0}


def test_a_cable_in_the_same_cages_under_new_port_names_is_renamed_not_moved() -> None:
    header = "id,a_device,a_port,a_panel,z_device,z_port,z_panel\n"

    def rows(*lines: str) -> list[dict[str, str]]:
        return list(csv_rows((header + "".join(r + "\n" for r in lines)).splitlines(), "x"))

    old = rows("c1,leaf1,Ethernet64,cage 17 split 1,spine1,Ethernet0,cage 1 split 1",
               "c2,leaf1,Ethernet68,cage 18 split 1,spine1,Ethernet4,cage 1 split 2",
               "c3,leaf1,Ethernet72,,spine1,Ethernet8,")
    new = rows("c1,leaf1,Ethernet64,cage 17 split 1,spine1,swp1s0,cage 1 split 1",  # renamed
               "c2,leaf1,Ethernet68,cage 18 split 1,spine1,swp2s0,cage 2 split 1",  # moved
               "c3,leaf1,Ethernet72,,spine1,swp3s0,")  # no panel labels: cannot say, moved
    changes, count = diff_rows(lambda: iter(old), lambda: iter(new), CABLES)
    assert [(c.at[0], c.note) for c in changes] == [("c1", "renamed"), ("c2", "moved"),
                                                    ("c3", "moved")]
    assert (count.renamed, count.moved) == (1, 2)


def test_cabling_json_streams_to_the_same_rows() -> None:
    """The JSON cable table, fed a character at a time (every value cut by a chunk boundary),
    gives the CSV's rows; its other keys come back whole."""
    doc = {"cables": [{"id": "c1", "a_device": "gpu1", "a_port": "mlx5_0", "z_device": "leaf1",
                       "z_port": "Ethernet0", "length_m": 5, "a_address": None}],
           "name": "pod", "switches": [{"name": "leaf1", "role": "leaf", "asn": 65101}]}
    text = json.dumps(doc, indent=2)
    rest: dict[str, object] = {}
    rows = list(json_cables(iter(text), "x", rest))
    assert rows == [{"id": "c1", "a_device": "gpu1", "a_port": "mlx5_0", "z_device": "leaf1",
                     "z_port": "Ethernet0", "length_m": "5", "a_address": ""}]
    assert rest == {"name": "pod", "switches": doc["switches"]}


def test_text_prints_the_summary_first_and_quiet_only_it(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a = _render(tmp_path / "a", CONFIG_DB)
    b = _render(tmp_path / "b", CONFIG_DB, EOS.replace("mtu 9214", "mtu 9000"))
    full = cli("diff", str(a), str(b))
    quiet = cli("diff", "-q", str(a), str(b))
    assert full.out.splitlines()[0] == quiet.out.rstrip("\n")
    assert quiet.out.count("\n") == 1 and quiet.code == full.code == 2
    for fmt in (["--json"], ["--format", "markdown"]):  # a script parsing JSON gets no text
        mixed = cli("diff", "-q", *fmt, str(a), str(b))
        assert (mixed.code, mixed.out) == (1, ""), fmt
        assert "does not go with --format" in mixed.err


def test_a_link_out_of_a_side_is_refused(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """In CI a side may come from a pull request: a link to a runner's secret must not be
    printed into a comment. A link within the side is read."""
    secret = tmp_path / "secret"
    secret.write_text("token=hunter2\n")
    a = _render(tmp_path / "a", CONFIG_DB)
    b = _render(tmp_path / "b", CONFIG_DB)
    (a / "notes.txt").write_text("x\n")
    (b / "notes.txt").symlink_to(b / "report.md")
    assert cli("diff", str(a), str(b)).code == 2  # inside: compared
    (b / "notes.txt").unlink()
    (b / "notes.txt").symlink_to(secret)
    result = cli("--no-color", "diff", "--format", "markdown", str(a), str(b))
    assert result.code == 1 and "hunter2" not in result.out + result.err
    assert result.err == (f"{b}/notes.txt: leads outside the directory compared (a "
                          "symbolic link)\n")


def test_spooled_changes_print_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past SPOOL_AT changes a comparison keeps them on disk: every format prints the same."""
    from fabgen.diff import compare, diff, format_text
    from fabgen.diff.jsonout import chunks
    from fabgen.diff.markdown import format_markdown
    from tests.conftest import GOLDEN

    old, new = str(GOLDEN / "roce-256-sonic"), str(GOLDEN / "roce-eos-nvue-2to1")
    whole = diff(old, new)
    monkeypatch.setattr(compare, "SPOOL_AT", 10)
    spooled = diff(old, new)
    assert spooled.spool is not None and whole.spool is None
    assert sum(f.spooled is not None for f in spooled.files) > 10
    assert format_text(spooled) == format_text(whole)
    assert "".join(chunks(spooled)) == "".join(chunks(whole))
    assert format_markdown(spooled) == format_markdown(whole)
    spooled.close()
