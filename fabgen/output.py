"""Artifacts on disk: the manifest, a crash-safe streaming write, and the --check comparison.

The writer's promises (issue 18), for an operator who renders into a GitOps repository:
- At every instant the output path holds either the previous render or the new one, whole:
  the new tree is built beside it and swapped in with one `renameat2(RENAME_EXCHANGE)` where
  the kernel and file system have it (Linux 3.15+). Elsewhere two renames are used, and a
  render killed between them is restored by the next run (the previous render waits, whole,
  under a name only fabgen uses).
- Leftovers of killed runs are removed by the next run: only directories named like fabgen's
  temporaries beside this output that fabgen can prove are its own (a manifest, its
  in-progress marker, or nothing at all), and never one a running fabgen still holds.
- A symbolic link at the output path is refused unless the caller asks to follow it: fabgen
  writes into the directory it is given, not wherever a link in a pull request points.
- Files in the output directory that fabgen did not write (not in its manifest: a README.md, a
  .gitkeep) are carried into the new render; where the render needs their path, it refuses and
  lists them. A directory with no manifest at all is never replaced (`-o ~`).
- Files stream: a renderer may give a file as chunks, so a million-row cabling table is
  written and hashed as it is produced, never held whole.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from fabgen import __version__, user_files
from fabgen.errors import FabgenError
from fabgen.serialize import json_text

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks, runs are not serialised
    fcntl = None  # type: ignore[assignment]

MANIFEST = "manifest.json"
# In a directory while fabgen is still writing it; flock()ed by the writer for its lifetime,
# so another run can tell a live render from a dead one. Never in a finished render.
MARKER = ".fabgen-incomplete"

Content = str | Iterable[str]  # a file's text, whole or as chunks
FileItem = tuple[str, Content]


class OutputError(RuntimeError):
    """The output directory cannot be written (the message says why and what to do)."""


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def text_of(content: Content) -> str:
    return content if isinstance(content, str) else "".join(content)


# --- the manifest ---------------------------------------------------------------------------

def manifest_text(hashes: Mapping[str, str], intent_sha256: str, intent_name: str,
                  partial: dict[str, object] | None = None) -> str:
    """manifest.json: every file's sha256, the intent's hash and fabgen's version.

    No timestamps and no paths outside the output, so two renders of one intent are identical.
    """
    manifest: dict[str, object] = {
        "fabgen_version": __version__,
        "intent": {"name": intent_name, "sha256": intent_sha256},
        "files": dict(sorted(hashes.items())),
    }
    if partial is not None:
        # A subset render (--only/--devices) says so, so it is never mistaken for the whole.
        manifest["partial"] = partial
    return json_text(manifest)


def with_manifest(files: dict[str, str], intent_sha256: str, intent_name: str,
                  partial: dict[str, object] | None = None) -> dict[str, str]:
    """`files` plus manifest.json (for callers holding every file in memory)."""
    if MANIFEST in files:
        raise OutputError(f"a renderer produced {MANIFEST}, which is reserved")
    out = dict(sorted(files.items()))
    out[MANIFEST] = manifest_text({p: sha256(t) for p, t in out.items()}, intent_sha256,
                                  intent_name, partial)
    return out


class _Hashed:
    """Chunks passed through unchanged, hashed on the way; `done` once read to the end."""

    def __init__(self, chunks: Iterable[str]) -> None:
        self.chunks, self.hash, self.done = chunks, hashlib.sha256(), False

    def __iter__(self) -> Iterator[str]:
        for chunk in self.chunks:
            self.hash.update(chunk.encode("utf-8"))
            yield chunk
        self.done = True


def with_streamed_manifest(files: Iterable[FileItem], intent_sha256: str, intent_name: str,
                           partial: dict[str, object] | None = None) -> Iterator[FileItem]:
    """`files` as they come, then manifest.json of their hashes.

    The consumer must read each file's chunks before it asks for the next file (a writer and
    a dict comprehension both do), since a chunked file is hashed while it is read.
    """
    hashes: dict[str, str] = {}
    streamed: dict[str, _Hashed] = {}
    for path, content in files:
        if path == MANIFEST:
            raise OutputError(f"a renderer produced {MANIFEST}, which is reserved")
        if isinstance(content, str):
            hashes[path] = sha256(content)
            yield path, content
        else:
            wrapped = streamed[path] = _Hashed(content)
            yield path, wrapped
    for path, wrapped in streamed.items():
        if not wrapped.done:
            raise RuntimeError(f"{path} was not read to its end before the manifest")
        hashes[path] = wrapped.hash.hexdigest()
    yield MANIFEST, manifest_text(hashes, intent_sha256, intent_name, partial)


# --- reading what is on disk ----------------------------------------------------------------

# A manifest is about 100 bytes a file: 5.3 MB for the largest render's 53,271 files.
MANIFEST_MAX_BYTES = 64 * 1024 * 1024


def _manifest_of(directory: Path) -> dict[str, Any] | None:
    try:
        # Bounded, and a FIFO or device at manifest.json is no manifest (never waited on).
        data = json.loads(user_files.read_bytes(directory / MANIFEST, what="a manifest",
                                                limit=MANIFEST_MAX_BYTES))
    except (FabgenError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) and "fabgen_version" in data else None


def rendered_intent(dest: Path) -> tuple[str, str] | None:
    """(name, sha256) of the intent whose render `dest` holds, from its manifest; None when
    `dest` holds no render (or a manifest that does not say)."""
    manifest = _manifest_of(dest)
    intent = manifest.get("intent") if manifest is not None else None
    if not isinstance(intent, dict):
        return None
    name, digest = intent.get("name"), intent.get("sha256")
    return (name, digest) if isinstance(name, str) and isinstance(digest, str) else None


def holds_full_render(dest: Path) -> bool:
    manifest = _manifest_of(dest)
    return manifest is not None and "partial" not in manifest


def _owned_files(manifest: dict[str, Any] | None) -> set[str] | None:
    """The files a render's manifest says fabgen wrote (None: no usable manifest)."""
    if manifest is None or not isinstance(manifest.get("files"), dict):
        return None
    return {*manifest["files"], MANIFEST}


def _foreign(dest: Path, owned: set[str]) -> list[str]:
    """Files, links and empty directories under `dest` that fabgen did not write."""
    found: list[str] = []
    for root, dirs, names in os.walk(dest):
        base = Path(root).relative_to(dest)
        for name in [*names, *(d for d in dirs if (Path(root) / d).is_symlink())]:
            rel = (base / name).as_posix()
            if rel not in owned:
                found.append(rel)
        if not dirs and not names and base != Path("."):
            found.append(base.as_posix() + "/")
    return sorted(found)


def _safe_relpath(path: str) -> Path:
    rel = Path(path)
    if (rel.is_absolute() or ".." in rel.parts or not rel.parts or path.endswith("/")
            or rel.parts[0] == MARKER):
        raise OutputError(f"refusing to write outside the output directory: {path!r}")
    return rel


# --- the swap -------------------------------------------------------------------------------

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _libc_renameat2() -> Any:
    try:
        return ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # not glibc 2.28+ (musl before 1.2.5, macOS)
        return None


_renameat2 = _libc_renameat2()


def exchange(a: Path, b: Path) -> bool:
    """Swap two directories in one step (renameat2 RENAME_EXCHANGE). False where the kernel,
    the C library or the file system cannot; then nothing has changed."""
    if _renameat2 is None:
        return False
    rc = _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise OSError(err, f"cannot swap {b} into place: {os.strerror(err)}")


# Fault injection for the kill-at-every-step test: called with each step's name.
STEP: Callable[[str], None] | None = None


def _step(name: str) -> None:
    if STEP is not None:
        STEP(name)


def _remove(directory: Path) -> None:
    """Delete a directory fabgen owns, its manifest and marker last: until the very end it is
    still recognisably fabgen's, so a run killed halfway leaves something the next run may
    remove."""
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(directory):
            if entry.name in (MANIFEST, MARKER):
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
        for last in (MANIFEST, MARKER):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(directory / last)
        os.rmdir(directory)


@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Serialise fabgen runs that swap, restore or clean up beside one another (an advisory
    flock on the parent directory: nothing is created there)."""
    if fcntl is None:  # pragma: no cover
        yield
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _held_by_a_live_writer(candidate: Path) -> bool:
    """Whether a running fabgen still flock()s this directory's in-progress marker."""
    if fcntl is None:  # pragma: no cover - no locks: trust only the age of the marker
        return True
    try:
        fd = os.open(candidate / MARKER, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


# Names of fabgen's temporaries beside an output directory `name` (this writer's, and the
# .tmp-/.old- ones of fabgen before it, which a killed run could leave).
def _siblings(dest: Path) -> list[Path]:
    prefixes = tuple(f".{dest.name}.{kind}" for kind in ("fabgen-", "tmp-", "old-"))
    try:
        return sorted(p for p in dest.parent.iterdir()
                      if p.name.startswith(prefixes) and p.is_dir() and not p.is_symlink())
    except FileNotFoundError:
        return []


def _provably_ours(candidate: Path) -> bool:
    if _manifest_of(candidate) is not None or (candidate / MARKER).exists():
        return True
    try:
        return not any(candidate.iterdir())
    except OSError:
        return False


@dataclass
class WriteReport:
    """What a write did besides writing: for the user to read."""

    files: int = 0
    kept: list[str] = field(default_factory=list)  # files fabgen did not write, carried over
    restored: Path | None = None  # a previous render put back after an interrupted run
    removed: list[Path] = field(default_factory=list)  # temporaries of earlier, dead runs


def output_path(dest: Path, *, follow_symlinks: bool = False) -> Path:
    """The absolute output directory, refusing a symbolic link unless asked to follow it."""
    dest = Path(os.path.abspath(dest))
    if dest.is_symlink():
        if not follow_symlinks:
            raise OutputError(
                f"{dest} is a symbolic link (to {os.readlink(dest)}); fabgen writes only into "
                "the directory it is given: name the real directory, or pass "
                "--follow-symlinks to write at the link's target")
        dest = dest.resolve()
    if dest.parent == dest:
        raise OutputError(f"{dest} cannot be an output directory")
    if dest.exists() and not dest.is_dir():
        raise OutputError(f"{dest} exists and is not a directory")
    return dest


class Writer:
    """One render's files into a fresh directory beside `dest`, then swapped in whole.

    `add` writes each file as it comes; `commit` restores or cleans up after earlier runs,
    carries over files fabgen did not write, and swaps; `abort` (or an exception inside a
    `with` block) removes the unfinished directory and leaves `dest` as it was.
    """

    def __init__(self, dest: Path, *, follow_symlinks: bool = False) -> None:
        self.dest = output_path(dest, follow_symlinks=follow_symlinks)
        self._refuse_foreign_directory()
        self.dest.parent.mkdir(parents=True, exist_ok=True)
        self.report = WriteReport()
        self.paths: set[str] = set()
        self._dirs: set[Path] = set()  # directories of the new tree made so far
        # Under the lock, so another run's clean-up never sees this directory without its
        # marker held.
        with _locked(self.dest.parent):
            self.tmp = Path(tempfile.mkdtemp(prefix=f".{self.dest.name}.fabgen-new-",
                                             dir=self.dest.parent))
            self._marker: int | None = os.open(self.tmp / MARKER, os.O_RDWR | os.O_CREAT,
                                               0o600)
            if fcntl is not None:
                fcntl.flock(self._marker, fcntl.LOCK_EX)
        _step("started")

    def _refuse_foreign_directory(self) -> None:
        dest = self.dest
        if dest.is_dir() and _manifest_of(dest) is None and any(dest.iterdir()):
            raise OutputError(f"{dest} exists and was not written by fabgen (no {MANIFEST}); "
                              "choose an empty or new directory")

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        if kind is not None:
            self.abort()

    def add(self, path: str, content: Content) -> None:
        rel = _safe_relpath(path)
        if path in self.paths:
            raise OutputError(f"{path} is written twice")
        self.paths.add(path)
        target = self.tmp / rel
        if target.parent not in self._dirs:
            # Once per directory, not per file: at 131k GPUs 26,000 mkdir calls on directories
            # that exist cost the parent seconds of file-system locking (cProfile).
            target.parent.mkdir(parents=True, exist_ok=True)
            self._dirs.add(target.parent)
        # newline="" keeps "\n" on every OS so hashes match the manifest.
        with open(target, "x", encoding="utf-8", newline="") as fh:
            _write_chunks(fh, content)
        self.report.files += 1
        _step("file")

    def abort(self) -> None:
        self._unlock()
        if self.tmp.exists():
            _remove(self.tmp)

    def _unlock(self) -> None:
        if self._marker is not None:
            os.close(self._marker)
            self._marker = None

    def commit(self) -> WriteReport:
        dest, tmp = self.dest, self.tmp
        if MANIFEST not in self.paths:
            raise OutputError(f"a render without {MANIFEST} cannot be written")
        os.chmod(tmp, 0o755)
        with _locked(dest.parent):
            _step("locked")
            self._recover_and_clean()
            self._refuse_foreign_directory()  # a restored render, or one written meanwhile
            if dest.exists():
                self._carry_over_foreign_files()
            os.unlink(tmp / MARKER)
            self._unlock()
            _step("sealed")
            if not dest.exists():
                os.rename(tmp, dest)
                old = None
            elif exchange(tmp, dest):
                old = tmp  # the swap left the previous render under the temporary's name
            else:
                # No atomic swap here: for an instant dest is missing, and a run killed in
                # that instant leaves the previous render whole as `old`, which the next
                # run restores (_recover_and_clean) before anything else.
                old = Path(tempfile.mkdtemp(prefix=f".{dest.name}.fabgen-old-",
                                            dir=dest.parent))
                os.rmdir(old)
                os.rename(dest, old)
                _step("half-swapped")
                os.rename(tmp, dest)
            _step("swapped")
        if old is not None:
            _remove(old)
            _step("discarded")
        return self.report

    def _recover_and_clean(self) -> None:
        """Under the lock: put back a previous render an interrupted run left aside, then
        remove what dead runs left beside `dest` (only what is provably fabgen's)."""
        dest = self.dest
        siblings = [p for p in _siblings(dest) if p != self.tmp]
        if not dest.exists():
            kept = [p for p in siblings if "old-" in p.name and _manifest_of(p) is not None]
            if kept:
                newest = max(kept, key=lambda p: p.stat().st_mtime)
                os.rename(newest, dest)
                self.report.restored = newest
                siblings.remove(newest)
                _step("recovered")
        for stale in siblings:
            if _provably_ours(stale) and not _held_by_a_live_writer(stale):
                _remove(stale)
                self.report.removed.append(stale)
        _step("cleaned")

    def _carry_over_foreign_files(self) -> None:
        owned = _owned_files(_manifest_of(self.dest))
        if owned is None:  # an empty directory: nothing to carry
            return
        foreign = _foreign(self.dest, owned)
        if not foreign:
            return
        new_dirs = set().union(*(_parents(p) for p in self.paths))

        def clashes(entry: str) -> bool:
            name = entry.rstrip("/")
            return (name in self.paths  # the render writes a file there
                    or bool(_parents(name) & self.paths)  # ... where this needs a directory
                    or (not entry.endswith("/") and name in new_dirs))  # ... or needs one here

        clash = [f for f in foreign if clashes(f)]
        if clash:
            shown = ", ".join(clash[:10]) + (f" and {len(clash) - 10} more" if len(clash) > 10
                                             else "")
            raise OutputError(f"{self.dest} holds files fabgen did not write where this render "
                              f"puts its own: {shown}; move them away and render again")
        for rel in foreign:
            _copy_into(self.dest, self.tmp, rel)
        self.report.kept = foreign
        _step("kept")


def _parents(rel: str) -> set[str]:
    parts = rel.rstrip("/").split("/")
    return {"/".join(parts[:i]) for i in range(1, len(parts))}


def _copy_into(src_root: Path, dst_root: Path, rel: str) -> None:
    """Carry one foreign entry into the new tree: a hard link where possible (no copy of a
    large file), else a copy; links stay links; an empty directory stays one."""
    src, dst = src_root / rel.rstrip("/"), dst_root / rel.rstrip("/")
    dst.parent.mkdir(parents=True, exist_ok=True)
    if rel.endswith("/"):
        dst.mkdir(exist_ok=True)
    elif src.is_symlink():
        os.symlink(os.readlink(src), dst)
    elif stat.S_ISREG(src.lstat().st_mode):
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)
    # sockets, FIFOs and devices are not carried: a render directory has no business with them


def _write_chunks(fh: IO[str], content: Content) -> None:
    if isinstance(content, str):
        fh.write(content)
    else:
        for chunk in content:
            fh.write(chunk)


def write(dest: Path, files: Mapping[str, Content] | Iterable[FileItem], *,
          follow_symlinks: bool = False) -> WriteReport:
    """Write `files` (with manifest.json among them) as the whole content of `dest`."""
    items = files.items() if isinstance(files, Mapping) else files
    with Writer(dest, follow_symlinks=follow_symlinks) as writer:
        for path, content in items:
            writer.add(path, content)
        return writer.commit()


# --- --check ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class CheckResult:
    changed: list[str]
    missing: list[str]
    extra: list[str]
    files: int = 0

    @property
    def ok(self) -> bool:
        return not (self.changed or self.missing or self.extra)


def _same(target: Path, content: Content) -> bool:
    """Whether the file on disk holds exactly `content`, compared a chunk at a time. Every
    chunk is read even after a difference: the manifest hashes them on the way."""
    try:
        # Not followed, not waited on: a link or a FIFO at a rendered path is a difference.
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        _drain(content)
        return False
    fh = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        fh.close()
        _drain(content)
        return False
    same = True
    with fh:
        for chunk in ([content] if isinstance(content, str) else content):
            if same:
                data = chunk.encode("utf-8")
                same = fh.read(len(data)) == data
        return same and fh.read(1) == b""


def _drain(content: Content) -> None:
    if not isinstance(content, str):
        for _ in content:
            pass


def check(dest: Path, files: Mapping[str, Content] | Iterable[FileItem], *,
          subset: bool = False) -> CheckResult:
    """Compare `files` with what is on disk under `dest` (for CI on a GitOps repo).

    Every file on disk that the render does not produce is reported, those fabgen did not
    write included: the writer keeps a user's files, but a gate on pull requests must see a
    file slipped into a render directory. Only regular files are read (a link or a FIFO at a
    rendered path is a difference, never followed or waited on). With `subset` (a
    --only/--devices render) only the rendered files are compared, and the manifest, which
    describes the whole render, is skipped.
    """
    items = files.items() if isinstance(files, Mapping) else files
    on_disk: set[str] = set()
    if dest.is_dir():
        on_disk = {Path(root, name).relative_to(dest).as_posix()
                   for root, dirs, names in os.walk(dest)
                   for name in [*names, *(d for d in dirs if Path(root, d).is_symlink())]}
    changed, missing, seen = [], [], set()
    for path, content in items:
        if subset and path == MANIFEST:
            continue
        seen.add(path)
        if path not in on_disk:
            missing.append(path)
            _drain(content)
        elif not _same(dest / path, content):
            changed.append(path)
    extra = [] if subset else sorted(on_disk - seen)
    return CheckResult(sorted(changed), sorted(missing), extra, len(seen))
