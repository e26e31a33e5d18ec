"""The two sides of a diff, read file by file: a directory, or `git:REV:PATH`.

A side is listed first (paths, sizes, git blob ids); files are read one at a time when they
are compared, never a whole side at once. Two files are equal when their bytes are: sizes and
then bytes in chunks between directories, blob ids between git revisions, and a directory
file's git blob id (hashed as it is read) against a revision. Only files that differ are read
whole, or streamed (the cable tables).

Every file goes through the bounded, non-blocking reading of `user_files`: a FIFO is never
opened for reading, a file larger than MAX_FILE_BYTES is refused unread, binary data is an
error with its line and column.
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import json
import os
import posixpath
import stat
import subprocess
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import IO, Literal

from fabgen import user_files
from fabgen.diff.model import DiffError
from fabgen.errors import FabgenError
from fabgen.output import MANIFEST

# The largest file a side may hold: fabgen's largest rendered file is cabling/cabling.json,
# about 410 bytes a cable (golden renders), some 320 MB for the largest fabric's ~786,000
# cables (262,144 host ports, three tiers). A backup or planted file beyond this is refused
# unread rather than taken whole into memory.
MAX_FILE_BYTES = 512 * 1024 * 1024
CHUNK = 1 << 20
CABLING_JSON = "cabling/cabling.json"  # the cabling plan, whose switch list names each role
WHAT = "a file to compare"


@dataclass(frozen=True, slots=True)
class Entry:
    size: int
    blob: str | None = None  # git's blob id, when the side is a git revision


class Side:
    """Files of one side by relative path (POSIX separators), read on demand."""

    label: str  # where its files are (paths are shown under it)
    entries: dict[str, Entry]
    named: str = ""  # what the user named, when not `label` (a render's folder given alone)
    cut: str = ""  # the one top-level folder of a render this side holds ("" all of it)
    # Files read for context but not compared (a cut render's cabling plan: the switches'
    # roles); set per instance when a render is cut.
    context: Mapping[str, Entry] = MappingProxyType({})

    def entry(self, path: str) -> Entry:
        return self.entries[path] if path in self.entries else self.context[path]

    @property
    def title(self) -> str:
        """The side as the user named it."""
        return self.named or self.label

    @property
    def kind(self) -> Literal["render", "backup"]:
        """A render has fabgen's manifest; anything else is a directory of device backups."""
        return "render" if MANIFEST in self.entries else "backup"

    def shown(self, path: str) -> str:
        return f"{self.label}/{path}"

    def read(self, path: str) -> str:
        raise NotImplementedError

    def chunks(self, path: str) -> Iterator[str]:
        """The file's text in chunks of about CHUNK characters."""
        raise NotImplementedError

    def blob_id(self, path: str) -> str:
        """git's id of the file's content (`git hash-object`)."""
        raise NotImplementedError

    def close(self) -> None:
        return None

    def count_lines(self, path: str) -> int:
        """Lines of the file (a last line without a line end counts), read as it streams."""
        count, last = 0, "\n"
        for chunk in self.chunks(path):
            count += chunk.count("\n")
            last = chunk[-1:] or last
        return count + (last != "\n")

    def lines(self, path: str) -> Iterator[str]:
        """The file's lines, streamed, without line ends."""
        rest = ""
        for chunk in self.chunks(path):
            rest += chunk
            parts = rest.split("\n")
            rest = parts.pop()
            yield from (p.removesuffix("\r") for p in parts)
        if rest:
            yield rest.removesuffix("\r")


def _visible(rel: str) -> bool:
    return not any(part.startswith(".") for part in rel.split("/"))


def _decoded(raw: Iterator[bytes], shown: str) -> Iterator[str]:
    """UTF-8 text of byte chunks; a bad byte or a NUL is an error at its line and column."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    line = 1
    for block in raw:
        try:
            text = decoder.decode(block)
        except UnicodeDecodeError as exc:
            where = max(0, exc.start)
            raise FabgenError.single(
                f"not valid UTF-8 (byte 0x{block[where]:02x}); save the file as UTF-8", shown,
                line + block[:where].count(b"\n"),
                where - (block.rfind(b"\n", 0, where) + 1) + 1) from None
        nul = text.find("\0")
        if nul >= 0:
            raise FabgenError.single("a NUL byte: this is binary data, not a text file", shown,
                                     line + text.count("\n", 0, nul),
                                     nul - (text.rfind("\n", 0, nul) + 1) + 1)
        line += text.count("\n")
        yield text
    try:
        tail = decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise FabgenError.single("not valid UTF-8 (a multi-byte character cut at the end)",
                                 shown, line, 1) from None
    if tail:
        yield tail


def _inside(root: Path, path: str, shown: str) -> None:
    """A symbolic link out of the side's directory is refused: in CI the directory may come
    from a pull request, and the diff would print the file it points at (a secret of the
    runner) into a comment."""
    try:
        outside = not (root / path).resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        outside = False  # the open says what is wrong
    if outside:
        raise FabgenError.single("leads outside the directory compared (a symbolic link)",
                                 file=shown)


class DirSide(Side):
    def __init__(self, spec: str) -> None:
        root = Path(spec)
        if not root.is_dir():
            raise DiffError(f"{spec}: not a directory")
        self.root = root
        self.label = spec.rstrip("/") or spec
        self.entries = {}
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                path = Path(dirpath, name)
                rel = path.relative_to(root).as_posix()
                # is_file(): a FIFO, socket or device in the directory is not a file to
                # compare; reading refuses one swapped in after this, without blocking on it.
                if _visible(rel) and path.is_file():
                    self.entries[rel] = Entry(path.stat().st_size)

    def read(self, path: str) -> str:
        _inside(self.root, path, self.shown(path))
        return user_files.read_text(self.root / path, what=WHAT, limit=MAX_FILE_BYTES,
                                    shown=self.shown(path))

    @contextlib.contextmanager
    def _open(self, path: str) -> Iterator[IO[bytes]]:
        shown = self.shown(path)
        user_files.require_file(self.root / path, what=WHAT, shown=shown, limit=MAX_FILE_BYTES)
        _inside(self.root, path, shown)
        try:
            fd = os.open(self.root / path, os.O_RDONLY | os.O_NONBLOCK
                         | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise FabgenError.single(f"cannot read: {exc.strerror or exc}", file=shown) \
                from None
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped since require_file looked
            os.close(fd)
            raise FabgenError.single(f"not a file; expected {WHAT}", file=shown)
        with os.fdopen(fd, "rb") as fh:
            yield fh

    def _raw(self, path: str) -> Iterator[bytes]:
        read = 0
        with self._open(path) as fh:
            while block := fh.read(CHUNK):
                read += len(block)
                if read > MAX_FILE_BYTES:
                    raise FabgenError.single("the file grew past fabgen's limit while being "
                                             "read", self.shown(path), 1, 1)
                yield block

    def chunks(self, path: str) -> Iterator[str]:
        return _decoded(self._raw(path), self.shown(path))

    def blob_id(self, path: str) -> str:
        digest = hashlib.sha1(f"blob {self.entry(path).size}\0".encode(),
                              usedforsecurity=False)
        for block in self._raw(path):
            digest.update(block)
        return digest.hexdigest()

    def same_bytes(self, path: str, other: DirSide, other_path: str) -> bool:
        if self.entry(path).size != other.entry(other_path).size:
            return False
        with self._open(path) as a, other._open(other_path) as b:
            while True:
                x, y = a.read(CHUNK), b.read(CHUNK)
                if x != y:
                    return False
                if not x:
                    return True


def _git(args: list[str]) -> bytes:
    try:
        proc = subprocess.run(["git", *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise DiffError("git is not installed") from None
    if proc.returncode:
        message = proc.stderr.decode("utf-8", "replace").strip() or "failed"
        raise DiffError(f"git {' '.join(args)}: {' '.join(message.split())}")
    return proc.stdout


class GitSide(Side):
    """`git:REV:PATH`: the tree at PATH of revision REV, PATH from the repository's top as in
    git's own `REV:PATH` (`./PATH` from the current directory)."""

    def __init__(self, spec: str) -> None:
        rest = spec.removeprefix("git:")
        rev, sep, path = rest.partition(":")
        if not sep or not rev:
            raise DiffError(f"{spec}: expected git:REV:PATH, e.g. git:HEAD~1:golden/pod-a")
        # `configs/` is `configs`; `./` and `../` stay (git reads `.`/`..` without the slash
        # from the top, with it from the current directory).
        if path.rstrip("/") not in ("", ".", ".."):
            path = path.rstrip("/")
        self.label = spec.rstrip("/") if spec.rstrip("/").count(":") >= 2 else spec
        self.treeish = f"{rev}:{path}"
        listing = _git(["ls-tree", "-r", "-z", "-l", "--full-tree", self.treeish])
        self.entries = {}
        for record in listing.split(b"\0"):
            if not record:
                continue
            meta, _, name = record.partition(b"\t")
            mode, kind, blob, size = meta.split()
            rel = name.decode("utf-8", "surrogateescape")
            # Regular files only: a symbolic link (120000) or a submodule is not a config.
            if kind == b"blob" and mode in (b"100644", b"100755") and _visible(rel):
                self.entries[rel] = Entry(int(size), blob.decode())
        if not self.entries:
            raise DiffError(f"{spec}: no files at {path or '.'} in {rev}")
        self._batch: subprocess.Popen[bytes] | None = None

    def _cat(self) -> subprocess.Popen[bytes]:
        if self._batch is None:
            self._batch = subprocess.Popen(["git", "cat-file", "--batch"],
                                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        return self._batch

    def _bytes(self, path: str) -> bytes:
        entry = self.entry(path)
        if entry.size > MAX_FILE_BYTES:
            raise FabgenError.single(f"the file is larger than {MAX_FILE_BYTES >> 20} MiB, "
                                     f"fabgen's limit for {WHAT}", self.shown(path), 1, 1)
        proc = self._cat()
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(f"{entry.blob}\n".encode())
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) != 3 or header[1] != b"blob":
            raise DiffError(f"{self.shown(path)}: git cat-file: {b' '.join(header).decode()}")
        raw = proc.stdout.read(int(header[2]) + 1)[:-1]  # the content, then a newline
        return raw

    def read(self, path: str) -> str:
        return user_files.decode(self._bytes(path), self.shown(path))

    def chunks(self, path: str) -> Iterator[str]:
        entry = self.entry(path)
        if entry.size > MAX_FILE_BYTES:
            self._bytes(path)  # raises the size error
        proc = subprocess.Popen(["git", "cat-file", "blob", str(entry.blob)],
                                stdout=subprocess.PIPE)
        assert proc.stdout is not None
        try:
            yield from _decoded(iter(lambda: proc.stdout.read(CHUNK), b""),  # type: ignore[union-attr]
                                self.shown(path))
        finally:
            proc.stdout.close()
            proc.wait()

    def blob_id(self, path: str) -> str:
        return str(self.entry(path).blob)

    def close(self) -> None:
        if self._batch is not None:
            assert self._batch.stdin is not None
            self._batch.stdin.close()
            self._batch.wait()
            if self._batch.stdout is not None:
                self._batch.stdout.close()
            self._batch = None


def open_side(spec: str) -> Side:
    """The side `spec` names. A folder of a render given alone (`out/pod-a/<platform>`, as a
    reviewer points at the one platform a change touches) is that render cut to the folder
    (`cut`): without its manifest the folder would read as a directory of backups, its files'
    platform guessed from their suffixes."""
    side = GitSide(spec) if spec.startswith("git:") else DirSide(spec)
    if side.kind != "backup" or (found := _render_folder(spec)) is None:
        return side
    parent_spec, folder = found
    render = GitSide(parent_spec) if spec.startswith("git:") else DirSide(parent_spec)
    if MANIFEST not in render.entries or not any(
            rel.startswith(f"{folder}/") for rel in render.entries):
        # A folder the walk of its parent does not enter (a symbolic link) is read as given.
        render.close()
        return side
    cut_to(render, folder)
    render.named = side.label
    side.close()
    return render


def cut_to(side: Side, folder: str) -> None:
    """Keep only a render's files under `folder` (the other side was given as that folder)."""
    side.context = {p: e for p, e in side.entries.items() if p == CABLING_JSON}
    side.entries = {rel: e for rel, e in side.entries.items()
                    if rel == MANIFEST or rel.startswith(f"{folder}/")}
    side.cut = folder


def _render_folder(spec: str) -> tuple[str, str] | None:
    """(the enclosing render's spec, the folder's name) when `spec` names a top-level folder of
    a render: its parent holds fabgen's manifest, which lists files under the folder. The
    manifest is read before the parent is walked, so a stray manifest.json in a large
    directory costs one small read."""
    if spec.startswith("git:"):
        rev, _, path = spec.removeprefix("git:").partition(":")
        if path.startswith("./") or path.rstrip("/") in (".", ".."):
            # `./PATH` is from the current directory, as git reads it
            prefix = _git(["rev-parse", "--show-prefix"]).decode().strip()
            path = prefix + path
        path = posixpath.normpath(path) if path else "."
        if path in (".", "..") or path.startswith("../"):
            return None
        parent, folder = posixpath.split(path)
        try:
            text = _git(["show", f"{rev}:{parent + '/' if parent else ''}{MANIFEST}"])
        except DiffError:
            return None
        parent_spec = f"git:{rev}:{parent}"
    else:
        full = os.path.normpath(os.path.abspath(spec))
        parent, folder = os.path.split(full)
        manifest = Path(parent, MANIFEST)
        if not folder or not manifest.is_file() or manifest.stat().st_size > 1 << 26:
            return None
        text = manifest.read_bytes()
        parent_spec = parent if os.path.isabs(spec) else os.path.relpath(parent)
    try:
        files = json.loads(text).get("files")
    except (ValueError, AttributeError):
        return None
    if not isinstance(files, dict) or not any(str(f).startswith(f"{folder}/") for f in files):
        return None
    return parent_spec, folder


def same(a: Side, path_a: str, b: Side, path_b: str) -> bool:
    """The two files hold the same bytes."""
    if a.entries[path_a].size != b.entries[path_b].size:
        return False
    if isinstance(a, DirSide) and isinstance(b, DirSide):
        return a.same_bytes(path_a, b, path_b)
    return a.blob_id(path_a) == b.blob_id(path_b)
