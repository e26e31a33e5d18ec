"""GitOps diff: compare two renders, a git revision of one, or backed-up running configs.

Each side is a render directory, `git:REV:PATH` (a render committed in this repository), or a
directory of device backups as Oxidized or RANCID keep them (one file per device, named by the
device, with or without an extension). Text configs get unified diffs; JSON and YAML configs get
key-level diffs that ignore key order, so a reordered config_db.json is no change.
"""

from __future__ import annotations

import difflib
import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal

import yaml

from fabgen import user_files
from fabgen.natural import natural_key
from fabgen.output import MANIFEST

Format = Literal["json", "yaml", "text"]
Status = Literal["added", "removed", "changed", "unchanged"]


class DiffError(RuntimeError):
    """A side cannot be read (missing directory, bad git revision, unparsable JSON)."""


@dataclass(frozen=True)
class Side:
    """One side of the diff: files keyed by relative path, and what kind of source it was."""

    label: str
    files: dict[str, str]
    kind: Literal["render", "backup"]


# Per-device config files of a render: (path pattern, format); the device is the `*` part.
DEVICE_FILES: tuple[tuple[str, Format], ...] = (
    ("sonic/*/config_db.json", "json"),
    ("nvue/*/startup.yaml", "yaml"),
    ("eos/*.cfg", "text"),
)


def _fmt(path: str) -> Format:
    suffix = PurePosixPath(path).suffix
    return "json" if suffix == ".json" else "yaml" if suffix in (".yaml", ".yml") else "text"


# The largest file a side may hold: fabgen's largest rendered file is cabling/cabling.json,
# about 410 bytes a cable (golden renders), some 320 MB for the largest fabric's ~786,000
# cables (262,144 host ports, three tiers). A backup or planted file beyond this is refused
# unread rather than taken whole into memory.
MAX_FILE_BYTES = 512 * 1024 * 1024


def _read_dir(root: Path) -> dict[str, str]:
    if not root.is_dir():
        raise DiffError(f"{root}: not a directory")
    out: dict[str, str] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        # is_file(): a FIFO, socket or device in the directory is not a file to compare;
        # user_files also refuses one swapped in after this check, without blocking on it.
        if p.is_file() and not any(part.startswith(".") for part in rel.split("/")):
            out[rel] = user_files.read_text(p, what="a file to compare",
                                            limit=MAX_FILE_BYTES)
    return out


def _git(args: list[str]) -> str:
    try:
        proc = subprocess.run(["git", *args], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise DiffError("git is not installed") from None
    if proc.returncode:
        raise DiffError(f"git {' '.join(args)}: {proc.stderr.strip() or 'failed'}")
    return proc.stdout


def _read_git(spec: str) -> dict[str, str]:
    _, _, rest = spec.partition("git:")
    rev, sep, path = rest.partition(":")
    if not sep or not rev:
        raise DiffError(f"{spec}: expected git:REV:PATH, e.g. git:HEAD~1:golden/pod-a")
    prefix = path.strip("/")
    names = _git(["ls-tree", "-r", "--name-only", rev, "--", prefix or "."]).splitlines()
    if not names:
        raise DiffError(f"{spec}: no files at {prefix or '.'} in {rev}")
    out: dict[str, str] = {}
    for name in names:
        rel = name[len(prefix) + 1:] if prefix else name
        out[rel] = _git(["show", f"{rev}:{name}"])
    return out


def load_side(spec: str) -> Side:
    """Read a side; a directory without manifest.json is taken as device backups."""
    if spec.startswith("git:"):
        files = _read_git(spec)
        return Side(spec, files, "render" if MANIFEST in files else "backup")
    files = _read_dir(Path(spec))
    return Side(spec, files, "render" if MANIFEST in files else "backup")


def device_configs(side: Side) -> dict[str, tuple[str, str]]:
    """device -> (path, text). Render: the per-device config files. Backup: one file each."""
    out: dict[str, tuple[str, str]] = {}
    if side.kind == "render":
        for path, text in side.files.items():
            for pattern, _ in DEVICE_FILES:
                if PurePosixPath(path).match(pattern):
                    parts = PurePosixPath(path).parts
                    device = parts[1] if len(parts) > 2 else PurePosixPath(parts[1]).stem
                    out[device] = (path, text)
        return out
    for path, text in side.files.items():
        device = PurePosixPath(path).name
        for suffix in (".cfg", ".conf", ".json", ".yaml", ".yml", ".txt"):
            device = device.removesuffix(suffix)
        out[device] = (path, text)
    return out


# --- comparing one file -------------------------------------------------------------------

# Rendered configs nest a few levels; the structural diff recurses once per level.
MAX_DEPTH = 64


def _parse(text: str, fmt: Format, where: str) -> Any:
    try:
        data = json.loads(text) if fmt == "json" else yaml.safe_load(text)
    except RecursionError:  # the parsers recurse once per level of nesting
        raise DiffError(f"{where}: nested too deeply to compare") from None
    except (ValueError, yaml.YAMLError) as exc:
        raise DiffError(f"{where}: cannot parse as {fmt}: {exc}") from None
    _bounded(data, len(text), where)
    return data


def _bounded(data: Any, size: int, where: str) -> None:
    """Refuse a document whose YAML aliases multiply it (a "billion laughs": safe_load shares
    each alias, and the diff would walk every copy) or that nests deeper than MAX_DEPTH.
    Without aliases every value takes at least one character of the text, so more values
    than characters means aliases; the walk stops there, so it costs at most `size` steps."""
    budget = size + 1
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        budget -= 1
        if budget < 0:
            raise DiffError(f"{where}: YAML aliases expand it beyond its own size; fabgen "
                            "compares plain documents")
        if depth > MAX_DEPTH:
            raise DiffError(f"{where}: nested deeper than {MAX_DEPTH} levels; no rendered "
                            "config does")
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)


def _flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        if not value:
            yield prefix or ".", {}
        for key in sorted(value, key=str):
            yield from _flatten(value[key], f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list):
        if not value:
            yield prefix or ".", []
        for i, item in enumerate(value):
            yield from _flatten(item, f"{prefix}[{i}]")
    else:
        yield prefix or ".", value


def structured_diff(old: Any, new: Any) -> list[str]:
    """Key-level differences, key order ignored: `+ a.b: 1`, `- a.c: 2`, `~ a.d: 1 -> 2`."""
    a, b = dict(_flatten(old)), dict(_flatten(new))
    lines: list[str] = []
    for key in sorted(a.keys() | b.keys()):
        if key not in b:
            lines.append(f"- {key}: {json.dumps(a[key])}")
        elif key not in a:
            lines.append(f"+ {key}: {json.dumps(b[key])}")
        elif a[key] != b[key]:
            lines.append(f"~ {key}: {json.dumps(a[key])} -> {json.dumps(b[key])}")
    return lines


@dataclass
class FileDiff:
    key: str  # device name or relative path
    status: Status
    fmt: Format
    lines: list[str] = field(default_factory=list)
    added: int = 0
    removed: int = 0


def compare_file(key: str, old: tuple[str, str] | None, new: tuple[str, str] | None,
                 labels: tuple[str, str]) -> FileDiff:
    path = (new or old or ("", ""))[0]
    fmt = _fmt(path)
    if old is None:
        assert new is not None
        return FileDiff(key, "added", fmt, [], len(new[1].splitlines()), 0)
    if new is None:
        return FileDiff(key, "removed", fmt, [], 0, len(old[1].splitlines()))
    if old[1] == new[1]:
        return FileDiff(key, "unchanged", fmt)
    if fmt in ("json", "yaml") and _fmt(old[0]) == fmt:
        lines = structured_diff(_parse(old[1], fmt, f"{labels[0]}/{old[0]}"),
                                _parse(new[1], fmt, f"{labels[1]}/{new[0]}"))
        added = sum(1 for ln in lines if ln[0] in "+~")
        removed = sum(1 for ln in lines if ln[0] in "-~")
    else:
        lines = list(difflib.unified_diff(
            old[1].splitlines(), new[1].splitlines(), f"{labels[0]}/{old[0]}",
            f"{labels[1]}/{new[0]}", lineterm="", n=3))
        body = lines[2:]
        added = sum(1 for ln in body if ln.startswith("+"))
        removed = sum(1 for ln in body if ln.startswith("-"))
    status: Status = "changed" if lines else "unchanged"
    return FileDiff(key, status, fmt, lines, added, removed)


# --- comparing two sides ------------------------------------------------------------------

@dataclass
class DiffResult:
    old: str
    new: str
    by: Literal["path", "device"]
    files: list[FileDiff]

    def count(self, status: Status) -> int:
        return sum(1 for f in self.files if f.status == status)

    @property
    def changed(self) -> bool:
        return any(f.status != "unchanged" for f in self.files)

    def to_json(self) -> dict[str, Any]:
        return {
            "old": self.old, "new": self.new, "compared_by": self.by,
            "summary": {s: self.count(s) for s in ("added", "removed", "changed", "unchanged")}
            | {"lines_added": sum(f.added for f in self.files),
               "lines_removed": sum(f.removed for f in self.files)},
            "items": [{"name": f.key, "status": f.status, "format": f.fmt,
                       "lines_added": f.added, "lines_removed": f.removed, "diff": f.lines}
                      for f in self.files if f.status != "unchanged"],
        }


# EOS top-level sections fabgen renders; a running config's other sections (management,
# users, AAA, NTP, logging...) belong to the device and are left out of a backup diff.
EOS_OWNED = ("hostname ", "service routing", "ip routing", "interface Ethernet",
             "interface Loopback", "qos ", "priority-flow-control ", "router bgp ")


def _eos_sections(text: str) -> list[list[str]]:
    sections: list[list[str]] = []
    for line in text.splitlines():
        if line and not line.startswith((" ", "!")) and line != "end":
            sections.append([line])
        elif sections and line.startswith(" "):
            sections[-1].append(line)
    return sections


def owned_only(backup: tuple[str, str], render: tuple[str, str]
               ) -> tuple[tuple[str, str], tuple[str, str]]:
    """The part of a device backup that fabgen renders, and the render in the same form, so a
    diff against running configs shows fabgen's changes, not the tables and defaults a switch
    adds (SONiC FEATURE/CRM/MGMT_*, EOS management and users)."""
    path, text = backup
    fmt = _fmt(render[0])
    if fmt == "json":
        running = _parse(text, "json", path)
        rendered = _parse(render[1], "json", render[0])
        if isinstance(running, dict) and isinstance(rendered, dict):
            kept = {k: v for k, v in running.items() if k in rendered}
            return (path, json.dumps(kept, indent=2, sort_keys=True) + "\n"), render
        return backup, render
    if fmt == "text" and render[0].endswith(".cfg"):
        # Section by section, without EOS' `!` separators and `end`, which carry nothing.
        def norm(body: str, owned: bool) -> str:
            return "".join(line + "\n" for sec in _eos_sections(body)
                           if not owned or sec[0].startswith(EOS_OWNED) for line in sec)

        return (path, norm(text, True)), (render[0], norm(render[1], False))
    return backup, render


def diff(old_spec: str, new_spec: str, *, owned: bool = True) -> DiffResult:
    """Compare two sides; by device when either is a backup directory, else by path.

    Against backups only what fabgen owns is compared unless `owned` is False.
    """
    old, new = load_side(old_spec), load_side(new_spec)
    labels = (old.label, new.label)
    if "backup" in (old.kind, new.kind):
        a, b = device_configs(old), device_configs(new)
        if not a and not b:
            raise DiffError("no device configs found on either side")
        if owned and old.kind != new.kind:
            backup, render = (a, b) if old.kind == "backup" else (b, a)
            for device in backup.keys() & render.keys():
                backup[device], render[device] = owned_only(backup[device], render[device])
        by: Literal["path", "device"] = "device"
    else:
        a = {p: (p, t) for p, t in old.files.items() if p != MANIFEST}
        b = {p: (p, t) for p, t in new.files.items() if p != MANIFEST}
        by = "path"
    files = [compare_file(key, a.get(key), b.get(key), labels)
             for key in sorted(a.keys() | b.keys(), key=natural_key)]
    return DiffResult(old.label, new.label, by, files)


def format_text(result: DiffResult, color: bool = False) -> str:
    def paint(line: str) -> str:
        if not color:
            return line
        if line.startswith(("+++", "---")):
            return f"\033[1m{line}\033[0m"
        code = {"+": "32", "-": "31", "~": "33", "@": "36"}.get(line[:1])
        return f"\033[{code}m{line}\033[0m" if code else line

    out: list[str] = []
    for f in result.files:
        if f.status == "unchanged":
            continue
        out.append(f"== {f.key}: {f.status} (+{f.added} -{f.removed})")
        out.extend(paint(line) for line in f.lines)
    what = "devices" if result.by == "device" else "files"
    out.append(
        f"{what}: {result.count('added')} added, {result.count('removed')} removed, "
        f"{result.count('changed')} changed, {result.count('unchanged')} unchanged; "
        f"lines +{sum(f.added for f in result.files)} -{sum(f.removed for f in result.files)}")
    return "\n".join(out) + "\n"
