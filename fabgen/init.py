"""`fabgen init`: a starter intent from a packaged example, with its JSON Schema beside it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from fabgen import resources, user_files
from fabgen.errors import FabgenError

MODELINE = "# yaml-language-server: $schema="


class InitError(RuntimeError):
    """A file is in the way (or cannot be written); nothing was written."""


def starter_text(example: str) -> str:
    """The example with its modeline pointed at a schema file beside it (the packaged
    examples point at ../schemas/, which exists only in the package and the repository)."""
    lines = resources.examples()[example].read_text(encoding="utf-8").splitlines(keepends=True)
    body = [x for x in lines if not x.startswith(MODELINE)]
    return f"{MODELINE}{resources.SCHEMA_FILE}\n" + "".join(body)


def starter(example: str, intent: Path, force: bool = False) -> list[Path]:
    """Write the example to `intent` and the schema beside it; return the paths written.

    An existing intent is never replaced without `force`; an existing schema only when it
    differs (another fabgen version wrote it) and `force` is given. Raises InitError before
    writing anything when a file is in the way.
    """
    schema_path = intent.parent / resources.SCHEMA_FILE
    texts = {intent: starter_text(example),
             schema_path: resources.schema().read_text(encoding="utf-8")}
    todo: dict[Path, str] = {}
    for path, text in texts.items():
        if path.is_dir():
            raise InitError(f"{path} is a directory; name a file with -o")
        if path.exists() and not force:
            if path == schema_path and _holds(path, text):
                continue  # the same schema: another intent in this directory uses it
            raise InitError(f"{path} exists; --force replaces it (nothing was written)")
        todo[path] = text
    for path, text in todo.items():
        _write(path, text)
    return list(todo)


def _holds(path: Path, text: str) -> bool:
    """Whether the file holds exactly `text`: read only that many bytes and one more, and a
    FIFO, device or undecodable file is simply a different file (never waited on)."""
    data = text.encode("utf-8")
    try:
        return user_files.read_bytes(path, what="fabgen's intent schema", limit=len(data)) == data
    except FabgenError:
        return False


def _write(path: Path, text: str) -> None:
    """Write through a temporary file and a rename: an interrupted init leaves no half file."""
    mask = os.umask(0)
    os.umask(mask)
    tmp = ""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o666 & ~mask)  # as a plain open() would (mkstemp makes it 0600)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp:
            Path(tmp).unlink(missing_ok=True)
        raise InitError(f"cannot write {path}: {exc.strerror or exc}") from None
