"""The writer under hostile paths and unlucky timing (issue 18): a kill at every step, links at
the output path, a user's files in a render, leftovers of killed runs, renders side by side."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabgen import output
from fabgen.output import MANIFEST, MARKER, Writer, with_manifest, with_streamed_manifest
from tests.conftest import INVENTORIES

fcntl = pytest.importorskip("fcntl")

OLD = with_manifest({"a.txt": "one\n", "sub/b.txt": "bee\n", "gone.txt": "stale\n"}, "0" * 64,
                    "t")
NEW = with_manifest({"a.txt": "two\n", "sub/b.txt": "bee\n", "sub/c.txt": "sea\n"}, "1" * 64,
                    "t")


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file()}


def _as_bytes(files: dict[str, str]) -> dict[str, bytes]:
    return {k: v.encode() for k, v in files.items()}


def _leftovers(parent: Path, keep: str = "out") -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name != keep)


@pytest.fixture(params=["exchange", "two renames"])
def swap_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways to swap: renameat2(RENAME_EXCHANGE), and the fallback where it is missing."""
    if request.param == "exchange":
        probe_a, probe_b = Path(os.getcwd()), Path(os.getcwd())
        if output._renameat2 is None or not output.exchange(probe_a, probe_b):
            pytest.skip("renameat2(RENAME_EXCHANGE) not available here")
    else:
        monkeypatch.setattr(output, "exchange", lambda a, b: False)
    return str(request.param)


# --- a kill between any two steps -----------------------------------------------------------

README = {"README.md": b"# ours\n"}  # a user's file in the render: carried over each time


def _steps(tmp_path: Path) -> list[str]:
    """The writer's steps for a re-render, recorded from one run."""
    seen: list[str] = []
    dest = tmp_path / "probe" / "out"
    output.write(dest, OLD)
    (dest / "README.md").write_bytes(README["README.md"])
    output.STEP = seen.append
    try:
        output.write(dest, NEW)
    finally:
        output.STEP = None
    return seen


def _killed_at(dest: Path, files: dict[str, str], step: int) -> None:
    """Fork a writer and kill it (no clean-up runs: os._exit) at its `step`th step."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns
        count = [0]

        def die(_name: str) -> None:
            count[0] += 1
            if count[0] == step:
                os._exit(137)

        output.STEP = die
        try:
            output.write(dest, files)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status)


def test_a_render_killed_at_any_step_leaves_a_whole_render(tmp_path: Path,
                                                          swap_mode: str) -> None:
    steps = _steps(tmp_path)
    assert steps.count("file") == len(NEW) and {"kept", "swapped"} <= set(steps)
    old, new = _as_bytes(OLD) | README, _as_bytes(NEW) | README
    for k in range(1, len(steps) + 1):
        parent = tmp_path / f"kill{k}"
        dest = parent / "out"
        output.write(dest, OLD)
        (dest / "README.md").write_bytes(README["README.md"])
        _killed_at(dest, NEW, k)
        after = _tree(dest) if dest.exists() else None
        if swap_mode == "exchange" or steps[k - 1] != "half-swapped":
            assert after in (old, new), f"killed at {steps[k - 1]}"
        else:
            # The one instant two renames cannot cover: the previous render waits whole
            # beside the output, and the next run puts it back before anything else.
            assert after is None
        # The next render finds whatever the killed one left, and ends whole and clean.
        report = output.write(dest, NEW)
        assert _tree(dest) == new
        assert _leftovers(parent) == [], f"killed at {steps[k - 1]}"
        if after is None:
            assert report.restored is not None


def test_a_first_render_killed_at_any_step(tmp_path: Path, swap_mode: str) -> None:
    for k in range(1, len(NEW) + 6):
        parent = tmp_path / f"kill{k}"
        parent.mkdir()
        dest = parent / "out"
        _killed_at(dest, NEW, k)
        assert not dest.exists() or _tree(dest) == _as_bytes(NEW)
        output.write(dest, NEW)
        assert _leftovers(parent) == []


def test_an_interrupted_swap_of_the_old_writer_is_restored(tmp_path: Path) -> None:
    """Issue 18's case: fabgen before this writer, killed between its two renames, left the
    previous render as `.out.old-*` beside a complete `.out.tmp-*` and no `out` at all."""
    parent = tmp_path
    old = parent / ".out.old-k2j3"
    output.write(old, OLD)
    output.write(parent / ".out.tmp-9x8y", NEW)
    dest = parent / "out"
    report = output.write(dest, NEW)
    assert report.restored == old
    assert _tree(dest) == _as_bytes(NEW)
    assert _leftovers(parent) == []


# --- leftovers: only fabgen's, never a live run's -------------------------------------------

def test_stale_temporaries_are_removed_and_nothing_else(tmp_path: Path) -> None:
    dest = tmp_path / "out"
    output.write(dest, OLD)
    dead = tmp_path / ".out.fabgen-new-dead"
    dead.mkdir()
    (dead / MARKER).touch()
    (dead / "half.txt").write_text("half a render\n")
    empty = tmp_path / ".out.fabgen-new-empty"
    empty.mkdir()
    finished = tmp_path / ".out.tmp-finished"  # the old writer's, complete
    output.write(finished, OLD)
    users = tmp_path / ".out.tmp-notes"  # named like one, but no manifest, no marker: kept
    users.mkdir()
    (users / "mine.txt").write_text("mine\n")
    other = tmp_path / ".other.fabgen-new-x"  # another output's: not this run's business
    other.mkdir()
    live = tmp_path / ".out.fabgen-new-live"  # a render still running (its marker locked)
    live.mkdir()
    fd = os.open(live / MARKER, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        report = output.write(dest, NEW)
    finally:
        os.close(fd)
    assert sorted(p.name for p in report.removed) == sorted(
        [dead.name, empty.name, finished.name])
    assert _leftovers(tmp_path) == sorted([users.name, other.name, live.name])
    assert (users / "mine.txt").read_text() == "mine\n"


def test_concurrent_renders_end_whole(tmp_path: Path) -> None:
    dest = tmp_path / "out"
    output.write(dest, OLD)
    pids = []
    for i in range(6):
        pid = os.fork()
        if pid == 0:  # pragma: no cover
            try:
                output.write(dest, NEW if i % 2 else OLD)
            finally:
                os._exit(0)
        pids.append(pid)
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert _tree(dest) in (_as_bytes(OLD), _as_bytes(NEW))
    assert _leftovers(tmp_path) == []


# --- links at the output path ---------------------------------------------------------------

@pytest.mark.parametrize("target_exists", [True, False])
def test_a_symlinked_output_is_refused(cli, tmp_path: Path, target_exists: bool) -> None:
    elsewhere = tmp_path / "elsewhere"
    if target_exists:
        elsewhere.mkdir()
    link = tmp_path / "out"
    link.symlink_to(elsewhere)
    result = cli("--no-color", "render", str(INVENTORIES[0]), "-o", str(link))
    assert result.code == 1
    assert result.err == (f"error: {link} is a symbolic link (to {elsewhere}); fabgen writes "
                          "only into the directory it is given: name the real directory, or "
                          "pass --follow-symlinks to write at the link's target\n")
    assert not elsewhere.exists() or list(elsewhere.iterdir()) == []
    assert link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["out", *(["elsewhere"] if target_exists else [])])


def test_follow_symlinks_writes_at_the_target_and_keeps_the_link(cli, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    link = tmp_path / "out"
    link.symlink_to(elsewhere)
    result = cli("render", str(INVENTORIES[0]), "-o", str(link), "--follow-symlinks")
    assert result.code == 0, result.err
    assert link.is_symlink() and (elsewhere / MANIFEST).is_file()


def test_no_file_of_a_render_is_written_through_a_link(tmp_path: Path) -> None:
    with pytest.raises(output.OutputError):
        output.write(tmp_path / "out", {"../evil": "x", MANIFEST: "{}\n"})
    with pytest.raises(output.OutputError):
        output.write(tmp_path / "out", {MARKER: "x", MANIFEST: "{}\n"})
    assert list(tmp_path.iterdir()) == []


# --- files fabgen did not write -------------------------------------------------------------

def test_a_users_files_survive_a_re_render(cli, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert cli("render", str(INVENTORIES[0]), "-o", str(out)).code == 0
    (out / "README.md").write_text("# our pod\n")
    (out / "cabling" / "notes").mkdir()
    (out / "cabling" / "notes" / "site.txt").write_text("row 4\n")
    (out / "empty").mkdir()
    (out / "latest").symlink_to("report.md")
    result = cli("--no-color", "render", str(INVENTORIES[0]), "-o", str(out))
    assert result.code == 0, result.err
    assert ("note: " + str(out) + ": kept 4 file(s) fabgen did not write: README.md, "
            "cabling/notes/site.txt, empty/, latest") in result.err
    assert (out / "README.md").read_text() == "# our pod\n"
    assert (out / "cabling" / "notes" / "site.txt").read_text() == "row 4\n"
    assert (out / "empty").is_dir() and os.readlink(out / "latest") == "report.md"
    # not listed in the manifest: still not fabgen's
    manifest = json.loads((out / MANIFEST).read_text())
    assert "README.md" not in manifest["files"]
    # --check reports them: a gate must see a file slipped into a render directory
    check = cli("--no-color", "render", str(INVENTORIES[0]), "-o", str(out), "--check")
    assert check.code == 1 and f"{out / 'README.md'}: not rendered" in check.err


def test_a_users_file_where_the_render_writes_is_refused(tmp_path: Path) -> None:
    dest = tmp_path / "out"
    output.write(dest, OLD)
    (dest / "sub" / "c.txt").write_text("my own c\n")  # NEW renders sub/c.txt
    (dest / "a.txt.d").mkdir()
    before = _tree(dest)
    with pytest.raises(output.OutputError) as info:
        output.write(dest, NEW)
    assert str(info.value) == (f"{dest} holds files fabgen did not write where this render "
                               "puts its own: sub/c.txt; move them away and render again")
    assert _tree(dest) == before
    assert _leftovers(tmp_path) == []


def test_a_directory_without_manifest_is_never_replaced(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "precious").write_text("x")
    with pytest.raises(output.OutputError, match="was not written by fabgen"):
        output.write(home, NEW)
    assert _tree(home) == {"precious": b"x"} and _leftovers(tmp_path, "home") == []


# --- streaming ------------------------------------------------------------------------------

def _chunks(n: int) -> Iterator[str]:
    for i in range(n):
        yield f"row {i}\n"


def test_chunked_files_are_written_and_hashed_as_they_stream(tmp_path: Path) -> None:
    items = with_streamed_manifest(iter([("big.csv", _chunks(1000)), ("small", "s\n")]),
                                   "2" * 64, "t")
    dest = tmp_path / "out"
    report = output.write(dest, items)
    assert report.files == 3
    whole = "".join(_chunks(1000))
    assert (dest / "big.csv").read_text() == whole
    assert json.loads((dest / MANIFEST).read_text())["files"] == {
        "big.csv": output.sha256(whole), "small": output.sha256("s\n")}
    again = with_streamed_manifest(iter([("big.csv", _chunks(1000)), ("small", "s\n")]),
                                   "2" * 64, "t")
    assert output.check(dest, again).ok
    differs = with_streamed_manifest(iter([("big.csv", _chunks(999)), ("small", "s\n")]),
                                     "2" * 64, "t")
    result = output.check(dest, differs)
    # the shorter table differs, and so does the manifest that hashes it
    assert (result.changed, result.missing, result.extra) == (["big.csv", MANIFEST], [], [])


def test_a_manifest_is_never_written_for_a_file_not_read_to_its_end() -> None:
    items = with_streamed_manifest(iter([("big.csv", _chunks(10))]), "2" * 64, "t")
    path, content = next(items)
    assert path == "big.csv" and next(iter(content)) == "row 0\n"
    with pytest.raises(RuntimeError, match="not read to its end"):
        next(items)


def test_check_never_waits_on_a_fifo(tmp_path: Path) -> None:
    dest = tmp_path / "out"
    output.write(dest, NEW)
    os.unlink(dest / "a.txt")
    os.mkfifo(dest / "a.txt")
    start = time.monotonic()
    result = output.check(dest, NEW)
    assert result.changed == ["a.txt"]
    assert time.monotonic() - start < 60  # a hang guard, not a speed test


def test_an_aborted_writer_leaves_nothing(tmp_path: Path) -> None:
    dest = tmp_path / "out"
    output.write(dest, OLD)
    with pytest.raises(ZeroDivisionError), Writer(dest) as writer:
        writer.add("a.txt", "half\n")
        raise ZeroDivisionError
    assert _tree(dest) == _as_bytes(OLD) and _leftovers(tmp_path) == []
