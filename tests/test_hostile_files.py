"""Hostile files fabgen reads on a user's behalf other than the intent (issue 18, item 3 of
its follow-up): a push hosts file, `infiniband.guids_file`, `verify-cabling`'s ibnetdiscover
output, `check-cabling`'s sheet, `diff`'s files and `verify`'s saved outputs.

Each hostile file (a FIFO with no writer, a directory, a device, a huge or sparse file,
binary garbage, an alias bomb, deep nesting, a symbolic link out of the intent's directory)
must end in one `file:line:col` or `file:` line on stderr, exit 1, nothing written, and never
block: a FIFO opened the ordinary way waits for a writer forever. A SIGALRM turns such a
hang into a failure here instead of a stuck CI job. The subprocess cases also hold the
child's own peak memory under 100 MiB (as tests/test_limits.py does for intents).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabgen import user_files
from fabgen.errors import FabgenError
from fabgen.push.inventory import hosts_limits
from tests.conftest import ROOT
from tests.hostile import ALIAS_BOMB, hang_guard

HANG_SECONDS = 20  # a guard against blocking on a FIFO, not a measure of speed
MAX_RSS_MIB = 100
ROCE = (ROOT / "inventories" / "roce-256-sonic.yaml").read_text(encoding="utf-8")
IB = (ROOT / "inventories" / "ib-ndr-1024.yaml").read_text(encoding="utf-8")

@pytest.fixture(autouse=True)
def no_hang() -> Iterator[None]:
    with hang_guard(HANG_SECONDS, f"blocked for {HANG_SECONDS} s (a FIFO opened without "
                                  "O_NONBLOCK?)"):
        yield


def _one(exc: pytest.ExceptionInfo[FabgenError]) -> str:
    lines = [d.render() for d in exc.value.diagnostics]
    assert len(lines) == 1, lines
    return lines[0]


# --------------------------------------------------------------------------- the helper

def test_a_fifo_without_a_writer_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(FabgenError) as exc:
        user_files.read_text(fifo, what="a thing", limit=1024)
    assert _one(exc) == f"{fifo}: is a FIFO (named pipe), not a file; expected a thing"


def test_a_directory_and_a_device_are_refused(tmp_path: Path) -> None:
    with pytest.raises(FabgenError) as exc:
        user_files.read_text(tmp_path, what="a thing", limit=1024)
    assert _one(exc) == f"{tmp_path}: is a directory, not a file; expected a thing"
    if Path("/dev/zero").exists():
        with pytest.raises(FabgenError) as exc:
            user_files.read_text(Path("/dev/zero"), what="a thing", limit=1024)
        assert _one(exc) == "/dev/zero: is a character device, not a file; expected a thing"


def test_a_sparse_huge_file_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big"
    with big.open("wb") as fh:
        fh.truncate(8 * 1024 * 1024 * 1024)  # 8 GiB of holes: reading it would take minutes
    with pytest.raises(FabgenError) as exc:
        user_files.read_text(big, what="a thing", limit=3 * 1024 * 1024 // 2)
    assert _one(exc) == f"{big}:1:1: the file is larger than 1.5 MiB, fabgen's limit for " \
                        "a thing"


def test_binary_garbage_is_placed_at_its_first_bad_byte(tmp_path: Path) -> None:
    path = tmp_path / "garbage"
    path.write_bytes(b"line one\nab\xff\xfe")
    with pytest.raises(FabgenError) as exc:
        user_files.read_text(path, what="a thing", limit=1024)
    assert _one(exc) == f"{path}:2:3: not valid UTF-8 (byte 0xff); save the file as UTF-8"
    path.write_bytes(b"ok\n\n1234\x00\x00")  # valid UTF-8, still not text
    with pytest.raises(FabgenError) as exc:
        user_files.read_text(path, what="a thing", limit=1024)
    assert _one(exc) == f"{path}:3:5: a NUL byte: this is binary data, not a text file"


def test_text_reads_with_its_byte_order_mark_dropped(tmp_path: Path) -> None:
    path = tmp_path / "ok.csv"
    path.write_bytes(b"\xef\xbb\xbfid,length_m\n")
    assert user_files.read_text(path, what="a thing", limit=1024) == "id,length_m\n"


def test_a_link_out_of_the_directory_is_refused_and_one_inside_followed(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (tmp_path / "secret").write_text("s\n")
    (repo / "data").write_text("d\n")
    (repo / "out").symlink_to(tmp_path / "secret")
    (repo / "in").symlink_to(repo / "data")
    with pytest.raises(FabgenError) as exc:
        user_files.read_text(repo / "out", what="a thing", limit=64, inside=repo,
                             loc=("infiniband", "guids_file"))
    assert _one(exc) == (f"infiniband.guids_file: {repo / 'out'}: leads outside the intent's "
                         "directory (a symbolic link)")
    assert user_files.read_text(repo / "in", what="a thing", limit=64, inside=repo) == "d\n"


def test_hosts_limits_follow_the_fabric() -> None:
    small, large = hosts_limits(12), hosts_limits(30_000)
    assert small.max_bytes < 128 * 1024 and small.max_nodes < 200
    # A 30,000-switch fabric's file, each entry in its longest form, fits.
    entry = "leaf-su1000-r7: {host: " + "h" * 200 + ".example, port: 22}  # rack 12\n"
    assert len(entry) * 30_000 < large.max_bytes and large.max_nodes > 6 * 30_000


# --------------------------------------------------------------------------- through the CLI

# The child reports its own high-water mark (VmHWM): see tests/test_limits.py.
CHILD = ("import re, sys\n"
         "from fabgen.cli import main\n"
         "code = main(sys.argv[1:])\n"
         "print(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())[1])\n"
         "sys.exit(code)\n")


def _fabgen(args: list[str], cwd: Path) -> tuple[int, float, str]:
    proc = subprocess.run([sys.executable, "-c", CHILD, "--no-color", *args],
                          capture_output=True, text=True, cwd=cwd,
                          timeout=HANG_SECONDS * 3)  # a hang guard, not a speed test
    return proc.returncode, int(proc.stdout.split()[-1]) / 1024, proc.stderr


def _plant(path: Path, kind: str) -> None:
    """A hostile file of `kind` at `path`."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "huge":
        with path.open("wb") as fh:
            fh.truncate(4 * 1024 * 1024 * 1024)
    elif kind == "garbage":
        path.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4)
    elif kind == "link-out":
        outside = path.parent.parent / "outside"
        outside.write_text("x\n")
        path.symlink_to(outside)
    elif kind == "alias-bomb":
        path.write_text(ALIAS_BOMB)
    elif kind == "deep":
        path.write_text("leaf-su1-r0: " + "[" * 5000 + "]" * 5000 + "\n")
    elif kind == "python-tag":
        path.write_text("leaf-su1-r0: !!python/object/apply:os.system ['id']\n")
    else:
        raise AssertionError(kind)


def _workdir(tmp_path: Path) -> Path:
    work = tmp_path / "repo"
    work.mkdir()
    return work


def _check(code: int, rss: float, err: str, where: str | re.Pattern[str]) -> None:
    assert code == 1, err
    assert len(err.splitlines()) == 1, err
    if isinstance(where, str):
        assert err.startswith(where), err
    else:
        assert where.match(err), err
    assert "internal error" not in err and "Traceback" not in err
    assert rss < MAX_RSS_MIB, f"peak RSS {rss:.0f} MiB"


needs_proc = pytest.mark.skipif(not Path("/proc/self/status").exists(),
                                reason="needs Linux /proc")


@needs_proc
@pytest.mark.parametrize("kind", ["fifo", "directory", "huge", "garbage", "alias-bomb", "deep",
                                  "python-tag"])
def test_push_hosts_file(kind: str, tmp_path: Path) -> None:
    work = _workdir(tmp_path)
    (work / "pod.yaml").write_text(ROCE, encoding="utf-8")
    _plant(work / "hosts.yaml", kind)
    code, rss, err = _fabgen(["push", "pod.yaml", "--hosts", "hosts.yaml",
                              "--render-dir", "rendered"], work)
    where = "hosts.yaml: " if kind in ("fifo", "directory") else re.compile(
        r"^hosts\.yaml:\d+:\d+: ")
    _check(code, rss, err, where)
    assert not (work / "rendered").exists()  # no audit log, nothing else


@needs_proc
@pytest.mark.parametrize("kind", ["fifo", "directory", "huge", "garbage", "link-out"])
def test_guids_file_on_render(kind: str, tmp_path: Path) -> None:
    work = _workdir(tmp_path)
    intent = IB.replace("\ninfiniband:\n", "\ninfiniband:\n  guids_file: fabric.ibnd\n", 1)
    assert intent != IB
    (work / "ib.yaml").write_text(intent, encoding="utf-8")
    _plant(work / "fabric.ibnd", kind)
    code, rss, err = _fabgen(["render", "ib.yaml", "-o", "out"], work)
    # The path's own faults are blamed on the intent's field, the content's on the file.
    path_fault = kind in ("fifo", "directory", "link-out")
    where = re.compile(r"^ib\.yaml:\d+:\d+: infiniband\.guids_file" if path_fault
                       else r"^fabric\.ibnd:\d+:\d+: ")
    _check(code, rss, err, where)
    assert sorted(p.name for p in work.iterdir()) == ["fabric.ibnd", "ib.yaml"]


@needs_proc
@pytest.mark.parametrize("kind", ["fifo", "huge", "garbage"])
def test_verify_cabling_ibnetdiscover(kind: str, tmp_path: Path) -> None:
    work = _workdir(tmp_path)
    (work / "ib.yaml").write_text(IB, encoding="utf-8")
    _plant(work / "ibnd.out", kind)
    code, rss, err = _fabgen(["verify-cabling", "ib.yaml", "--ibnetdiscover", "ibnd.out"],
                             work)
    _check(code, rss, err, "ibnd.out:" if kind != "fifo" else "ibnd.out: is a FIFO")


@needs_proc
@pytest.mark.parametrize("kind", ["fifo", "huge", "garbage"])
def test_check_cabling_sheet(kind: str, tmp_path: Path) -> None:
    work = _workdir(tmp_path)
    (work / "pod.yaml").write_text(ROCE, encoding="utf-8")
    _plant(work / "sheet.csv", kind)
    code, rss, err = _fabgen(["check-cabling", "pod.yaml", "sheet.csv"], work)
    _check(code, rss, err, "sheet.csv:" if kind != "fifo" else "sheet.csv: is a FIFO")


@needs_proc
@pytest.mark.parametrize("kind", ["fifo", "directory", "huge", "garbage"])
def test_verify_saved_outputs(kind: str, tmp_path: Path) -> None:
    work = _workdir(tmp_path)
    (work / "pod.yaml").write_text(ROCE, encoding="utf-8")
    (work / "saved" / "leaf-su1-r0").mkdir(parents=True)
    _plant(work / "saved" / "leaf-su1-r0" / "lldp.txt", kind)
    code, rss, err = _fabgen(["verify", "pod.yaml", "saved"], work)
    _check(code, rss, err, "saved/leaf-su1-r0/lldp.txt:")


@needs_proc
@pytest.mark.parametrize("kind", ["huge", "garbage"])
def test_diff_sides(kind: str, tmp_path: Path) -> None:
    work = _workdir(tmp_path)
    for side in ("a", "b"):
        (work / side).mkdir()
        (work / side / "leaf1.cfg").write_text("hostname leaf1\n")
    _plant(work / "b" / "leaf2.cfg", kind)
    os.mkfifo(work / "a" / "leaf2.cfg")  # not a file to compare: skipped, never opened
    code, rss, err = _fabgen(["diff", "a", "b"], work)
    _check(code, rss, err, re.compile(r"^b/leaf2\.cfg:\d+:\d+: "))


@needs_proc
@pytest.mark.parametrize(("name", "text", "message"), [
    ("x.json", "[" * 100_000 + "]" * 100_000, "nested too deeply to compare"),
    ("x.yaml", "x: " + "[" * 100 + "]" * 100 + "\n", "nested deeper than 64 levels"),
    ("x.yaml", ALIAS_BOMB, "YAML aliases expand it beyond its own size"),
])
def test_diff_documents_that_would_crash_or_hang_the_structural_diff(
        name: str, text: str, message: str, tmp_path: Path) -> None:
    """On main: a RecursionError (exit 3) and a billion-laughs walk that never ends."""
    work = _workdir(tmp_path)
    for side, body in (("a", "{}\n"), ("b", text)):
        (work / side).mkdir()
        (work / side / name).write_text(body)
    code, rss, err = _fabgen(["diff", "a", "b"], work)
    _check(code, rss, err, f"error: b/{name}: {message}")


def test_cable_length_sheet_bound_grows_with_the_fabric() -> None:
    """64 MiB holds fabgen's own sheet up to 300,000 cables; the largest fabric (262,144
    host ports over three tiers, about 800,000 cables) may hand in a sheet three times that."""
    from types import SimpleNamespace

    from fabgen.targets import cable_lengths

    def limit(cables: int) -> int:
        fabric = SimpleNamespace(links=[None] * cables, extras=())
        return cable_lengths._limit(SimpleNamespace(fabric=fabric))  # type: ignore[arg-type]

    mib = 1024 * 1024
    assert (limit(512), limit(300_000), limit(300_001), limit(800_000)) == (
        64 * mib, 64 * mib, 128 * mib, 192 * mib)
    assert limit(800_000) > 800_000 * 150  # about 150 bytes a cable, measured


@needs_proc
@pytest.mark.parametrize("flag", ["--known-hosts", "--ssh-config", "--audit"])
def test_push_refuses_a_fifo_it_would_hand_to_ssh_or_append_to(flag: str,
                                                               tmp_path: Path) -> None:
    """paramiko opens known_hosts and the ssh config by name, and the audit log is opened
    for appending: each would block on a FIFO, the audit log after devices were changed."""
    work = _workdir(tmp_path)
    (work / "pod.yaml").write_text(ROCE, encoding="utf-8")
    (work / "hosts.yaml").write_text("leaf-su1-r0: 127.0.0.1:9\n")
    os.mkfifo(work / "fifo")
    code, rss, err = _fabgen(["push", "pod.yaml", "--hosts", "hosts.yaml", "--render-dir",
                              "rendered", flag, "fifo"], work)
    _check(code, rss, err, "fifo: is a FIFO (named pipe), not a file; expected ")
    assert sorted(p.name for p in work.iterdir()) == ["fifo", "hosts.yaml", "pod.yaml"]


@pytest.mark.parametrize("kind", ["fifo", "garbage", "huge"])
def test_init_beside_a_hostile_schema_file(kind: str, cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """init compares an existing schema file with its own: a FIFO hung it, binary garbage
    was an internal error (UnicodeDecodeError). Now each is a schema that differs."""
    from fabgen import resources

    _plant(tmp_path / resources.SCHEMA_FILE, kind)
    result = cli("--no-color", "init", "-o", str(tmp_path / "pod.yaml"))
    assert result.code == 1, result.err
    assert f"{resources.SCHEMA_FILE} exists; --force replaces it" in result.err
    assert not (tmp_path / "pod.yaml").exists()


@needs_proc
def test_render_into_a_directory_whose_manifest_is_a_fifo(tmp_path: Path) -> None:
    """The writer reads the output's manifest to know what fabgen owns there: a FIFO at
    manifest.json hung render (on main); now it is no manifest, so not fabgen's directory."""
    work = _workdir(tmp_path)
    (work / "pod.yaml").write_text(ROCE, encoding="utf-8")
    (work / "out").mkdir()
    os.mkfifo(work / "out" / "manifest.json")
    code, rss, err = _fabgen(["render", "-q", "pod.yaml", "-o", "out"], work)
    _check(code, rss, err, "error: ")
    assert "was not written by fabgen" in err
    assert [p.name for p in (work / "out").iterdir()] == ["manifest.json"]
    assert sorted(p.name for p in work.iterdir()) == ["out", "pod.yaml"]


DEEP_JSON = "[" * 100_000 + "]" * 100_000


def test_deeply_nested_json_sheet_and_saved_output(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """json.loads recurses per level: 100,000 nested lists were a RecursionError (exit 3) in
    check-cabling and verify on main."""
    intent = tmp_path / "pod.yaml"
    intent.write_text(ROCE, encoding="utf-8")
    (tmp_path / "deep.json").write_text(DEEP_JSON)
    sheet = cli("--no-color", "check-cabling", str(intent), str(tmp_path / "deep.json"))
    assert (sheet.code, sheet.err) == (
        1, f"error: {tmp_path / 'deep.json'}: not a cabling sheet: nested too deeply\n")
    saved = tmp_path / "saved" / "leaf-su1-r0"
    saved.mkdir(parents=True)
    (saved / "bgp.json").write_text(DEEP_JSON)
    verified = cli("--no-color", "verify", str(intent), str(tmp_path / "saved"))
    assert verified.code == 1 and "internal error" not in verified.err, verified.err
    assert "leaf-su1-r0: outputs: expected readable saved outputs, got bgp.json: nested too " \
           "deeply to be a saved output" in verified.out


def test_require_file_bounds_what_a_library_reads_whole(tmp_path: Path) -> None:
    big = tmp_path / "known_hosts"
    with big.open("wb") as fh:
        fh.truncate(65 * 1024 * 1024)
    with pytest.raises(FabgenError) as exc:
        user_files.require_file(big, what="an OpenSSH known_hosts file", limit=64 * 1024 * 1024)
    assert _one(exc) == (f"{big}:1:1: the file is larger than 64 MiB, fabgen's limit for an "
                         "OpenSSH known_hosts file")
    user_files.require_file(big, what="an audit log")  # no limit: appended to, never read
    user_files.require_file(tmp_path / "missing", what="an audit log")  # push creates it


def test_an_intent_that_is_a_fifo_is_refused_without_blocking(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    fifo = tmp_path / "pod.yaml"
    os.mkfifo(fifo)
    result = cli("--no-color", "validate", str(fifo))
    assert (result.code, result.err) == (
        1, f"{fifo}: is a FIFO (named pipe), not a file; expected an intent\n")
