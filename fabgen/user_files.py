"""Reading a file a user named: bounded in size, never blocking, every failure one line.

fabgen reads files on a user's behalf (the intent, a push hosts file, an ibnetdiscover output,
a cable-length or cabling sheet, saved switch outputs, render directories to diff), and in CI
those may come from an untrusted pull request. Each is read here, so that whatever the path
holds ends in a `file:line:col` error rather than a hang or a memory blow-up:

- a FIFO, socket or device is refused before a byte is read (opened with O_NONBLOCK, so even
  the open cannot wait for a writer), and so is a directory;
- at most `limit` bytes are read (the caller's bound for that kind of file, checked against
  st_size first and against what the read returns, as a file may grow);
- the text must be UTF-8 without NUL bytes (binary garbage), with the byte's line and column;
- with `inside`, a path that resolves outside that directory (a symbolic link out of the
  intent's repository) is refused.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from fabgen.errors import Diagnostic, FabgenError, Loc

MiB = 1024 * 1024

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"))


def _limit_text(limit: int) -> str:
    for unit, size in (("MiB", MiB), ("KiB", 1024)):
        if limit >= size:
            return f"{limit // size} {unit}" if limit % size == 0 else f"{limit / size:.1f} {unit}"
    return f"{limit} bytes"


def read_bytes(path: Path, *, what: str, limit: int, shown: str | None = None,
               inside: Path | None = None, loc: Loc = ()) -> bytes:
    """The bytes of a regular file of at most `limit` bytes, or FabgenError.

    `what` names the kind of file in messages ("an intent", "an ibnetdiscover output");
    `loc`, when given, blames errors about the path itself (missing, unreadable, not a file,
    outside `inside`) on the intent field that named it rather than on the file.
    """
    name = shown if shown is not None else str(path)

    def about_path(message: str) -> FabgenError:
        if loc:
            return FabgenError.single(f"{name}: {message}", loc=loc)
        return FabgenError.single(message, file=name)

    def unreadable(exc: OSError) -> FabgenError:
        if loc:
            return FabgenError.single(f"cannot read {name}: {exc.strerror or exc}", loc=loc)
        if isinstance(exc, FileNotFoundError):
            return FabgenError.single("no such file", file=name)
        return FabgenError.single(f"cannot read: {exc.strerror or exc}", file=name)

    if inside is not None:
        try:
            outside = not path.resolve().is_relative_to(inside.resolve())
        except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python < 3.13)
            outside = False  # the open below says what is wrong
        if outside:
            raise about_path("leads outside the intent's directory (a symbolic link)")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise unreadable(exc) from None
    try:
        # fstat before fdopen: io refuses a directory's descriptor with its own OSError.
        st = os.fstat(fd)
        for test, kind in _KINDS:
            if test(st.st_mode):
                raise about_path(f"is {kind}, not a file; expected {what}")
        if st.st_size > limit:
            raise FabgenError.single(f"the file is larger than {_limit_text(limit)}, fabgen's "
                                     f"limit for {what}", name, 1, 1)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read(limit + 1)
    except OSError as exc:
        raise unreadable(exc) from None
    finally:
        os.close(fd)
    if len(raw) > limit:
        raise FabgenError.single(f"the file is larger than {_limit_text(limit)}, fabgen's "
                                 f"limit for {what}", name, 1, 1)
    return raw


def require_file(path: Path, *, what: str, shown: str | None = None,
                 limit: int | None = None) -> None:
    """FabgenError unless `path` is a regular file (or missing: the caller creates it) of at
    most `limit` bytes. For a file fabgen hands to a library by name or appends to, where an
    open would block on a FIFO: checked without blocking, nothing read."""
    name = shown if shown is not None else str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise FabgenError.single(f"cannot read: {exc.strerror or exc}", file=name) from None
    try:
        st = os.fstat(fd)
    finally:
        os.close(fd)
    for test, kind in _KINDS:
        if test(st.st_mode):
            raise FabgenError.single(f"is {kind}, not a file; expected {what}", file=name)
    if limit is not None and st.st_size > limit:
        raise FabgenError.single(f"the file is larger than {_limit_text(limit)}, fabgen's "
                                 f"limit for {what}", name, 1, 1)


def _line_col(raw: bytes, offset: int) -> tuple[int, int]:
    before = raw[:offset]
    return before.count(b"\n") + 1, offset - (before.rfind(b"\n") + 1) + 1


def decode(raw: bytes, name: str, *, save_as: str = "UTF-8") -> str:
    """UTF-8 text without NUL bytes and without a leading byte-order mark, or FabgenError
    at the first offending byte."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _line_col(raw, exc.start)
        raise FabgenError([Diagnostic(f"not valid UTF-8 (byte 0x{raw[exc.start]:02x}); save "
                                      f"the file as {save_as}", file=name, line=line,
                                      col=col)]) from None
    nul = raw.find(b"\0")
    if nul >= 0:
        line, col = _line_col(raw, nul)
        raise FabgenError([Diagnostic("a NUL byte: this is binary data, not a text file",
                                      file=name, line=line, col=col)])
    return text.removeprefix("\ufeff")  # editors and spreadsheet exports may start with one


def read_text(path: Path, *, what: str, limit: int, shown: str | None = None,
              inside: Path | None = None, loc: Loc = (), save_as: str = "UTF-8") -> str:
    """read_bytes, then decode: the text of a bounded regular UTF-8 file, or FabgenError."""
    name = shown if shown is not None else str(path)
    raw = read_bytes(path, what=what, limit=limit, shown=name, inside=inside, loc=loc)
    return decode(raw, name, save_as=save_as)
