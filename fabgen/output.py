"""Artifacts on disk: manifest, atomic write (temp dir then rename), and --check comparison."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fabgen import __version__
from fabgen.serialize import json_text

MANIFEST = "manifest.json"


class OutputError(RuntimeError):
    """The output directory cannot be written (the message says why and what to do)."""


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def with_manifest(files: dict[str, str], intent_sha256: str, intent_name: str,
                  partial: dict[str, object] | None = None) -> dict[str, str]:
    """Add manifest.json: every file's sha256, the intent's hash and fabgen's version.

    No timestamps and no paths outside the output, so two renders of one intent are identical.
    """
    if MANIFEST in files:
        raise OutputError(f"a renderer produced {MANIFEST}, which is reserved")
    manifest: dict[str, object] = {
        "fabgen_version": __version__,
        "intent": {"name": intent_name, "sha256": intent_sha256},
        "files": {path: sha256(text) for path, text in sorted(files.items())},
    }
    if partial is not None:
        # A subset render (--only/--devices) says so, so it is never mistaken for the whole.
        manifest["partial"] = partial
    out = dict(sorted(files.items()))
    out[MANIFEST] = json_text(manifest)
    return out


def _safe_relpath(path: str) -> Path:
    rel = Path(path)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise OutputError(f"refusing to write outside the output directory: {path!r}")
    return rel


def _is_ours(dest: Path) -> bool:
    """A directory fabgen may replace: absent, empty, or holding a fabgen manifest."""
    if not dest.exists():
        return True
    if not dest.is_dir():
        return False
    if not any(dest.iterdir()):
        return True
    try:
        manifest = json.loads((dest / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and "fabgen_version" in manifest


def holds_full_render(dest: Path) -> bool:
    try:
        manifest = json.loads((dest / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and "partial" not in manifest


def write(dest: Path, files: dict[str, str]) -> None:
    """Write `files` as the whole content of `dest`, atomically.

    The tree is built in a temporary directory beside `dest`, then swapped in with renames; if
    anything fails the previous output is left as it was. A non-empty directory that fabgen did
    not write (no manifest.json) is never replaced, so `-o ~` cannot wipe a home directory.
    """
    dest = dest.resolve()
    if not _is_ours(dest):
        raise OutputError(f"{dest} exists and was not written by fabgen (no {MANIFEST}); "
                          "choose an empty or new directory")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp-", dir=dest.parent))
    old: Path | None = None
    try:
        for path, text in files.items():
            target = tmp / _safe_relpath(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            # newline="" keeps "\n" on every OS so hashes match the manifest.
            with open(target, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
        os.chmod(tmp, 0o755)
        if dest.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{dest.name}.old-", dir=dest.parent))
            os.rmdir(old)
            os.rename(dest, old)
        try:
            os.rename(tmp, dest)
        except OSError:
            if old is not None:
                os.rename(old, dest)
                old = None
            raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


@dataclass(frozen=True)
class CheckResult:
    changed: list[str]
    missing: list[str]
    extra: list[str]

    @property
    def ok(self) -> bool:
        return not (self.changed or self.missing or self.extra)


def check(dest: Path, files: dict[str, str], *, subset: bool = False) -> CheckResult:
    """Compare `files` with what is on disk under `dest` (for CI on a GitOps repo).

    With `subset` (a --only/--devices render) only the rendered files are compared, and the
    manifest, which describes the whole render, is skipped.
    """
    if subset:
        files = {k: v for k, v in files.items() if k != MANIFEST}
    on_disk: set[str] = set()
    if dest.is_dir():
        on_disk = {p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()}
    changed, missing = [], []
    for path, text in sorted(files.items()):
        target = dest / path
        if path not in on_disk:
            missing.append(path)
        elif target.read_bytes() != text.encode("utf-8"):
            changed.append(path)
    extra = [] if subset else sorted(on_disk - set(files))
    return CheckResult(changed, missing, extra)
