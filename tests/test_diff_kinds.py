"""`fabgen diff` on every kind of file fabgen writes, from the example inventories' renders.

The kinds come from the rendered files themselves (golden/ and the renders below): a file no
diff rule names fails here, so a new output gets its rule in fabgen/diff/kinds.py. Each kind
is then touched by at least one intent change and compared by its own rule. The issue's
done-when: one more scalable unit and a changed ECN threshold per inventory, in text, JSON and
Markdown; a render against itself and a git revision against its own tree show no changes.
"""

from __future__ import annotations

import filecmp
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fabgen.cli import main
from fabgen.diff import diff
from fabgen.diff.jsonout import to_json
from fabgen.diff.kinds import kind_of
from fabgen.diff.markdown import format_markdown
from fabgen.diff.model import DiffResult
from fabgen.output import MANIFEST
from tests.conftest import GOLDEN, ROOT

INV = ROOT / "inventories"
# (name, inventory, [(old text, new text)], files placed beside the intent)
SCENARIOS = [
    ("sonic-su", "roce-256-sonic", [("nodes: 32\n", "nodes: 64\n")], {}),
    ("sonic-ecn", "roce-256-sonic", [("ecn: {min: 150KB", "ecn: {min: 200KB")], {}),
    ("sonic-qos", "roce-256-sonic", [("dscp: 26, priority: 3", "dscp: 24, priority: 3"),
                                     ("host_mtu: 9000", "host_mtu: 4200")], {}),
    ("sonic-platform", "roce-256-sonic", [("spine: sonic}", "spine: nvue}")], {}),
    ("mixed-su", "roce-eos-nvue-2to1", [("nodes: 64\n", "nodes: 128\n")], {}),
    ("mixed-ecn", "roce-eos-nvue-2to1", [("ecn: {min: 150KB", "ecn: {min: 200KB")], {}),
    # Junos's ECN fill levels are whole percents of 165.2 MB: 1.7..3.4 MB moves them.
    ("junos-ecn", "roce-junos-sonic", [("ecn: {min: 150KB, max: 1500KB",
                                        "ecn: {min: 1700KB, max: 3400KB")], {}),
    ("ib-su", "ib-ndr-1024", [("nodes: 127\n", "nodes: 159\n")], {}),
    # InfiniBand ignores the qos section (a warning says so): the intent and report change.
    ("ib-ecn", "ib-ndr-1024", [("\ninfiniband:\n", "\nqos:\n  ecn: {min: 200KB}\ninfiniband:\n")],
     {}),
    # The real GUIDs (here the plan's own, from topology.ibnet) bring the node-name maps and
    # GUID lists; one port per UFM host changes its IBNL system.
    ("ib-guids", "ib-ndr-1024", [("  opensm: nvidia\n", "  opensm: nvidia\n  guids_file: "
                                  "guids.ibnet\n"), ("    ports: 2\n", "    ports: 1\n")],
     {"guids.ibnet": GOLDEN / "ib-ndr-1024" / "infiniband" / "topology.ibnet"}),
]
DONE_WHEN = [s[0] for s in SCENARIOS if s[0].endswith(("-su", "-ecn"))]


@pytest.fixture(scope="module")
def renders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, Path]]:
    """scenario -> (inventory, its render)."""
    root = tmp_path_factory.mktemp("scenarios")
    out: dict[str, tuple[str, Path]] = {}
    for name, inventory, edits, extra in SCENARIOS:
        text = (INV / f"{inventory}.yaml").read_text(encoding="utf-8")
        for old, new in edits:
            assert text.count(old) == 1, (name, old)
            text = text.replace(old, new)
        (root / name).mkdir()
        intent = root / name / f"{inventory}.yaml"
        intent.write_text(text, encoding="utf-8")
        for file, source in extra.items():
            shutil.copy(source, root / name / file)
        assert main(["render", "-q", "-j", "1", str(intent), "-o", str(root / name / "out")]) == 0
        out[name] = (inventory, root / name / "out")
    return out


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def _differing(a: Path, b: Path) -> set[str]:
    """Files whose bytes differ (or that one side lacks), manifest left out: what the diff
    must show."""
    fa, fb = _files(a), _files(b)
    both = {p for p in fa & fb if not filecmp.cmp(a / p, b / p, shallow=False)}
    return (both | (fa ^ fb)) - {MANIFEST}


@pytest.fixture(scope="module")
def results(renders: dict[str, tuple[str, Path]]) -> dict[str, DiffResult]:
    return {name: diff(str(GOLDEN / inventory), str(path))
            for name, (inventory, path) in renders.items()}


def test_every_rendered_file_has_a_diff_rule(renders: dict[str, tuple[str, Path]]) -> None:
    roots = [*(p for p in GOLDEN.iterdir() if p.is_dir()), *(p for _, p in renders.values())]
    generic = sorted({f"{root.name}: {path}" for root in roots for path in _files(root)
                      if kind_of(path).generic})
    assert not generic, "no diff rule in fabgen/diff/kinds.py for: " + ", ".join(generic)


def test_every_kind_is_compared_by_its_rule_under_some_change(
        renders: dict[str, tuple[str, Path]], results: dict[str, DiffResult]) -> None:
    roots = [*(p for p in GOLDEN.iterdir() if p.is_dir()), *(p for _, p in renders.values())]
    kinds = {kind_of(path).name for root in roots for path in _files(root)} - {"manifest"}
    touched: dict[str, set[str]] = {}
    for name, result in results.items():
        inventory, path = renders[name]
        for f in result.files:
            assert f.kind == kind_of(f.name).name
            touched.setdefault(f.kind, set()).add(name)
            if f.status != "changed":
                continue
            # Changed: its changes are placed by the rule (a section's top-level lines are at
            # the top), and are fewer than its lines (a rule that falls back to replacing the
            # whole file would not be).
            assert f.changes, (name, f.name)
            assert f.style == "sections" or all(c.at for c in f.changes), (name, f.name)
            lines = max(len((GOLDEN / inventory / f.name).read_text().splitlines()),
                        len((path / f.name).read_text().splitlines()))
            assert len(f.changes) < lines, (name, f.name)
    assert not sorted(kinds - touched.keys()), "kinds no scenario changes"


@pytest.mark.parametrize("scenario", DONE_WHEN)
def test_a_change_diffs_with_the_changes_code_in_every_format(
        scenario: str, renders: dict[str, tuple[str, Path]], results: dict[str, DiffResult],
        cli) -> None:  # type: ignore[no-untyped-def]
    """Text through the CLI (its exit code); JSON and Markdown of the same comparison made by
    their formatters here (the CLI's code does not depend on the format: see test_diff_cli)."""
    inventory, path = renders[scenario]
    expected = _differing(GOLDEN / inventory, path)
    assert expected
    text = cli("diff", "--no-pager", str(GOLDEN / inventory), str(path))
    assert text.code == 2, text.err
    assert text.out.splitlines()[0].startswith("files: ")  # the summary line first
    # Each file heads its changes (`== path [device: role, os]: ...`), or is listed under its
    # device's platform change (`   removed: path`).
    shown = {m.group(1) for line in text.out.splitlines()
             if (m := re.match(r"(?:== |   (?:added|removed|changed): )(\S+?)(?: \[.*\])?(?::|$)",
                               line))}
    assert expected <= shown, sorted(expected - shown)
    result = results[scenario]
    data = json.loads(json.dumps(to_json(result)))
    assert {f["name"] for f in data["files"]} == expected and data["changed"] is True
    md = format_markdown(result)
    assert len(md) <= 65_536 and md.startswith("### fabgen diff: ")
    assert all(f"`{name}`" in md for name in expected), sorted(
        n for n in expected if f"`{n}`" not in md)


@pytest.mark.parametrize("inventory", sorted(p.name for p in GOLDEN.iterdir() if p.is_dir()))
def test_a_render_against_itself_has_no_changes(inventory: str, cli) -> None:  # type: ignore[no-untyped-def]
    render = str(GOLDEN / inventory)
    for fmt in ("text", "json", "markdown"):
        result = cli("diff", "--format", fmt, render, render)
        assert result.code == 0, (fmt, result.out[:500])
    quiet = cli("diff", "-q", render, render)
    assert quiet.out.startswith("files: 0 added, 0 removed, 0 changed, ")


def test_a_git_revision_against_its_own_tree(tmp_path: Path, cli, monkeypatch,  # type: ignore[no-untyped-def]
                                             renders: dict[str, tuple[str, Path]]) -> None:
    """Committed renders: git:REV:PATH against the same tree is no change, against another
    commit the same changes as the two directories."""
    repo = tmp_path / "repo"
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    shutil.copytree(GOLDEN / "roce-eos-nvue-2to1", repo / "configs" / "pod")
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    monkeypatch.chdir(repo)
    committed = "git:HEAD:configs/pod"
    for old, new in ((committed, "configs/pod"), ("configs/pod", committed),
                     (committed, committed + "/")):
        same = cli("diff", "-q", old, new)
        assert same.code == 0, same.out + same.err
    shutil.rmtree(repo / "configs" / "pod")
    shutil.copytree(renders["mixed-ecn"][1], repo / "configs" / "pod")
    subprocess.run([*git, "commit", "-qam", "two"], check=True)
    by_dirs = cli("diff", "--json", str(GOLDEN / "roce-eos-nvue-2to1"), "configs/pod")
    by_git = cli("diff", "--json", "git:HEAD~1:configs/pod", "git:HEAD:configs/pod")
    assert by_git.code == by_dirs.code == 2
    strip = ("old", "new", "notes")
    assert {k: v for k, v in json.loads(by_git.out).items() if k not in strip} == \
        {k: v for k, v in json.loads(by_dirs.out).items() if k not in strip}


def test_one_more_unit_reads_as_added_devices_and_cables(results: dict[str, DiffResult]) -> None:
    """A scalable unit added to roce-256: 8 leaves and 32 hosts added, the spines changed (new
    neighbours), 512 cables added; no existing cable moved or renumbered (ids name the leaf
    port a cable plugs into: topology.numbering)."""
    r = results["sonic-su"]
    status = {(d.role, d.os, d.status): 0 for d in r.devices}
    for d in r.devices:
        status[(d.role, d.os, d.status)] += 1
    assert status == {("leaf", "sonic", "added"): 8, ("host", "", "added"): 32,
                      ("spine", "sonic", "changed"): 4}
    assert r.cables.as_dict() == {"added": 512, "removed": 0, "moved": 0, "changed": 0,
                                  "renumbered": 0, "renamed": 0}


def _switch_list(render: Path) -> dict[str, str]:
    data = json.loads((render / "cabling" / "cabling.json").read_text(encoding="utf-8"))
    return {s["name"]: s["platform"] for s in data["switches"]}


def test_switches_without_files_of_their_own_are_listed_when_added(
        results: dict[str, DiffResult], renders: dict[str, tuple[str, Path]]) -> None:
    """InfiniBand switches have no config file: the switches a unit adds come from the
    cabling plan's switch list, every one of them a device added (what to buy and rack)."""
    inventory, path = renders["ib-su"]
    before, after = _switch_list(GOLDEN / inventory), _switch_list(path)
    new = set(after) - set(before)
    assert new and all(after[n] == "infiniband" for n in new)
    added = {d.name: d.os for d in results["ib-su"].devices
             if d.status == "added" and d.role != "host"}
    assert added == {n: "infiniband" for n in new}


def test_a_switch_on_another_os_renames_ports_and_moves_no_cable(
        results: dict[str, DiffResult]) -> None:
    """spines from SONiC to NVUE: every leaf-spine cable keeps its cages (panel labels) and
    only the spine's port names change: renamed, nothing for the crew to re-cable."""
    r = results["sonic-platform"]
    counts = r.cables.as_dict()
    assert counts["moved"] == 0 and counts["renamed"] == 256, counts
    table = {f.name: f for f in r.files}["cabling/cabling.csv"]
    renamed = [c for c in table.changes if c.note == "renamed"]
    assert len(renamed) == 256
    for c in renamed:
        assert (c.old["z_device"], c.old["z_panel"]) == (c.new["z_device"], c.new["z_panel"])
        assert c.old["z_port"].startswith("Ethernet") and c.new["z_port"].startswith("swp")
    from fabgen.diff.tables import CABLES, describe
    assert describe(renamed[0], CABLES).endswith(": ports renamed, same cages")


def test_ecn_is_one_change_per_platform_config(results: dict[str, DiffResult]) -> None:
    sonic = {f.name: f for f in results["sonic-ecn"].files}
    wred = sonic["sonic/leaf-su1-r0/config_db.json"].changes
    assert [(c.op, c.at, c.old, c.new) for c in wred] == [
        ("~", ("WRED_PROFILE", "ROCE_LOSSLESS", f"{colour}_min_threshold"), "150000", "200000")
        for colour in ("green", "red", "yellow")]
    mixed = {f.name: f for f in results["mixed-ecn"].files}
    eos = mixed["eos/leaf-su1-r0.cfg"].changes
    assert {(c.op, c.at[1:], c.old.split()[3], c.new.split()[3]) for c in eos} == {
        ("~", ("uc-tx-queue 3",), "150000", "200000")}
    nvue = mixed["nvue/spine-01/startup.yaml"].changes
    assert [(c.op, c.at[-4:], c.old, c.new) for c in nvue] == [
        ("~", ("default-global", "traffic-class", "3", "min-threshold"), 150000, 200000)]


def test_a_platform_change_is_one_line_per_device(results: dict[str, DiffResult]) -> None:
    from fabgen.diff import format_text

    r = results["sonic-platform"]
    moved = [(d.name, d.old_os, d.new_os, d.status) for d in r.devices if d.role == "spine"]
    assert moved == [(f"spine-0{i}", "sonic", "nvue", "replatformed") for i in range(1, 5)]
    text = format_text(r)
    assert "== spine-01: sonic → nvue (spine)\n" in text
    assert "\n== sonic/spine-01/config_db.json" not in text  # folded under the device


def test_the_readme_says_how_each_kind_is_compared() -> None:
    from fabgen.diff.kinds import table

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    between = readme.split("<!-- diff-kinds:start -->\n", 1)[1].split("<!-- diff-kinds:end -->")[0]
    assert between == table(), ("run: python -c 'from fabgen.diff.kinds import table; "
                                "print(table(), end=\"\")' and put it in README.md")
