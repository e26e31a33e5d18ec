"""`fabgen diff`: two renders by path, or device backups against a render by device.

Renders are compared file by file, one pair in memory at a time; equal files are recognised
by their bytes (or git blob ids) without being parsed. A device that appears under another
platform's directory is one platform change (`spine-01: <old> → <new>`), not its files
removed and added.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

from fabgen.diff.backup import by_lines, by_sections
from fabgen.diff.backup import sections as _sections
from fabgen.diff.kind import Kind
from fabgen.diff.kinds import BY_NAME, fmt_of, kind_of
from fabgen.diff.model import (
    SPOOL_AT,
    CableCount,
    Change,
    Device,
    DeviceStatus,
    DiffError,
    DiffResult,
    FileDiff,
    Spool,
    Status,
)
from fabgen.diff.sections import diff_lines, diff_sections
from fabgen.diff.sources import CABLING_JSON, DirSide, Side, cut_to, open_side, same
from fabgen.diff.structured import diff_values, parse_json, parse_yaml
from fabgen.diff.tables import Row, csv_rows, diff_rows, json_cables
from fabgen.natural import natural_key
from fabgen.output import MANIFEST
from fabgen.platforms.registry import push as platforms


def diff(old_spec: str, new_spec: str, *, owned: bool = True) -> DiffResult:
    """Compare two sides; by device when either is a directory of backups, else by path.

    Against backups only what fabgen owns is compared (each platform's rules), unless `owned`
    is False.
    """
    old = open_side(old_spec)
    try:
        new = open_side(new_spec)
    except BaseException:
        old.close()
        raise
    try:
        # One side given as a render's folder: the other render is cut to the same folder, so
        # the platforms the change does not touch are not "removed".
        cut = old.cut or new.cut
        for side in (old, new):
            if cut and side.kind == "render" and not side.cut:
                cut_to(side, cut)
        if "backup" in (old.kind, new.kind):
            return _by_device(old, new, owned)
        return _by_path(old, new)
    finally:
        old.close()
        new.close()


# --- one file -----------------------------------------------------------------------------

def _docs(kind: Kind, text: str, where: str) -> Any:
    """A structured file's data: JSON's value, a YAML file's document (its list of documents
    when it holds several)."""
    if kind.fmt == "json":
        return parse_json(text, where)
    docs = parse_yaml(text, where)
    return docs


def compare_texts(kind: Kind, old: str, new: str, where: tuple[str, str]) -> list[Change]:
    if kind.style == "sections":
        return diff_sections(_sections(kind, old), _sections(kind, new))
    if kind.style == "keys":
        a, b = _docs(kind, old, where[0]), _docs(kind, new, where[1])
        if kind.fmt == "yaml":
            if len(a) <= 1 and len(b) <= 1:
                return diff_values(a[0] if a else None, b[0] if b else None, where=where[1])
            return diff_values(a, b, documents=True, where=where[1])
        return diff_values(a, b, where=where[1])
    return diff_lines(old.splitlines(), new.splitlines(), kind.locate)


def _rows(side: Side, path: str, kind: Kind, rest: dict[str, Any]) -> Iterator[Row]:
    if kind.fmt == "json":
        return json_cables(side.chunks(path), side.shown(path), rest)
    return csv_rows(side.lines(path), side.shown(path))


def compare_table(kind: Kind, old: Side, old_path: str, new: Side, new_path: str
                  ) -> tuple[list[Change], CableCount]:
    assert kind.table is not None
    rest_a: dict[str, Any] = {}
    rest_b: dict[str, Any] = {}
    changes, count = diff_rows(lambda: _rows(old, old_path, kind, rest_a),
                               lambda: _rows(new, new_path, kind, rest_b), kind.table)
    if rest_a or rest_b:  # cabling.json: its switch list and name, key by key
        changes.extend(diff_values(rest_a, rest_b))
    return changes, count


def _size(side: Side, path: str, kind: Kind) -> int:
    """Lines of a file (rows of a table), counted as it streams."""
    if kind.style == "table":
        return sum(1 for _ in _rows(side, path, kind, {}))
    return side.count_lines(path)


# --- renders, by path ---------------------------------------------------------------------

class _Held:
    """Spools the changes found so far once they pass SPOOL_AT (model.Spool)."""

    def __init__(self) -> None:
        self.count = 0
        self.spool: Spool | None = None

    def add(self, files: list[FileDiff]) -> None:
        self.count += files[-1].count
        if self.count <= SPOOL_AT:
            return
        if self.spool is None:
            self.spool = Spool()
        for f in reversed(files):
            if f.spooled is not None:
                break
            if f.count:
                f.spool_to(self.spool)
        self.count = 0


def _by_path(old: Side, new: Side) -> DiffResult:
    files: list[FileDiff] = []
    held = _Held()
    unchanged = 0
    cables = CableCount()
    # device -> (its platforms in old, in new), from every file of the device on each side
    platforms: dict[str, tuple[set[str], set[str]]] = {}
    roles: dict[str, str] = {}
    for path in sorted((old.entries.keys() | new.entries.keys()) - {MANIFEST},
                       key=natural_key):
        kind = kind_of(path)
        device = kind.device_of(path)
        in_old, in_new = path in old.entries, path in new.entries
        if device is not None:
            before, after = platforms.setdefault(device, (set(), set()))
            for present, where in ((in_old, before), (in_new, after)):
                if present:
                    where.add(kind.os or "")
            if kind.role:
                roles[device] = kind.role
        if in_old and in_new:
            if same(old, path, new, path):
                unchanged += 1
                continue
            if kind.style == "table":
                changes, count = compare_table(kind, old, path, new, path)
                if kind.name == "cables":
                    _add(cables, count)
            else:
                changes = compare_texts(kind, old.read(path), new.read(path),
                                        (old.shown(path), new.shown(path)))
            if not changes:  # the same content written another way (key order)
                unchanged += 1
                continue
            files.append(FileDiff(path, kind.name, kind.style, "changed", changes, device))
            held.add(files)
            continue
        side = new if in_new else old
        size = _size(side, path, kind)
        status: Status = "added" if in_new else "removed"
        files.append(FileDiff(path, kind.name, kind.style, status, [], device, size))
        if kind.name == "cables":
            if in_new:
                cables.added += size
            else:
                cables.removed += size
    changed = {f.device for f in files if f.device is not None}
    old_sw, new_sw = (_switches(old), _switches(new)) if files else ({}, {})
    roles = {**{n: r for n, (r, _) in old_sw.items()},
             **{n: r for n, (r, _) in new_sw.items()}, **roles}
    # Switches with no file of their own (InfiniBand's, managed by the subnet manager) are
    # known from the cabling plan's switch list: one added or removed is a device to rack.
    for name in (old_sw.keys() ^ new_sw.keys()) - changed:
        platforms[name] = ({old_sw[name][1]} if name in old_sw else set(),
                           {new_sw[name][1]} if name in new_sw else set())
        changed.add(name)
    devices = []
    for name in sorted(changed, key=natural_key):
        before, after = platforms[name]
        devices.append(_device(name, roles.get(name, ""), before, after,
                               [f.name for f in files if f.device == name]))
    return DiffResult(old.title, new.title, "path", files, unchanged, devices, cables,
                      _notes(old, new), held.spool)


def _add(total: CableCount, count: CableCount) -> None:
    for k, v in count.as_dict().items():
        setattr(total, k, getattr(total, k) + v)


def _device(name: str, role: str, before: set[str], after: set[str],
            files: list[str]) -> Device:
    old_os = ", ".join(sorted(before)) if before else None
    new_os = ", ".join(sorted(after)) if after else None
    status: DeviceStatus
    if not before:
        status = "added"
    elif not after:
        status = "removed"
    elif old_os != new_os and "" not in before | after:
        status = "replatformed"
    else:
        status = "changed"
    return Device(name, role, old_os or None, new_os or None, status, files)


def _switch_roles(side: Side) -> dict[str, str]:
    """switch -> role, from the switch list at the end of cabling/cabling.json."""
    return {name: role for name, (role, _) in _switches(side).items()}


def _switches(side: Side) -> dict[str, tuple[str, str]]:
    """switch -> (role, platform), from the switch list at the end of cabling/cabling.json."""
    if CABLING_JSON not in side.entries and CABLING_JSON not in side.context:
        return {}
    switches: Any = None
    if isinstance(side, DirSide):
        switches = _tail_switches(side)
    if switches is None:
        rest: dict[str, Any] = {}
        for _ in json_cables(side.chunks(CABLING_JSON), side.shown(CABLING_JSON), rest):
            pass
        switches = rest.get("switches")
    if not isinstance(switches, list):
        return {}
    return {str(s["name"]): (str(s.get("role", "")), str(s.get("platform") or ""))
            for s in switches if isinstance(s, dict) and "name" in s}


def _tail_switches(side: DirSide) -> Any:
    """The switch list, read from the end of fabgen's cabling.json (it is the last key),
    without reading the cables before it. None when the file is not laid out that way."""
    marker = '\n  "switches": '
    path = side.root / CABLING_JSON
    size = side.entry(CABLING_JSON).size
    for tail in (1 << 22, 1 << 25):
        with open(path, "rb") as fh:
            fh.seek(max(0, size - tail))
            text = fh.read().decode("utf-8", "replace")
        at = text.rfind(marker)
        if at >= 0:
            try:
                value, _ = json.JSONDecoder().raw_decode(text, at + len(marker))
            except ValueError:
                return None
            return value
        if tail >= size:
            return None
    return None


def _manifest(side: Side) -> dict[str, Any]:
    """A render's manifest; {} when the side has none or it cannot be read."""
    if MANIFEST not in side.entries or side.entries[MANIFEST].size > 1 << 26:
        return {}
    try:
        data = json.loads(side.read(MANIFEST))
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _notes(old: Side, new: Side) -> list[str]:
    """fabgen's version and the intent of each render, from their manifests, when they
    differ."""
    a, b = _manifest(old), _manifest(new)
    notes = []
    va, vb = a.get("fabgen_version"), b.get("fabgen_version")
    if va and vb and va != vb:
        notes.append(f"fabgen {va} → {vb}")
    ia, ib = a.get("intent"), b.get("intent")
    if isinstance(ia, dict) and isinstance(ib, dict):
        if ia.get("name") != ib.get("name"):
            notes.append(f"fabric {ia.get('name')} → {ib.get('name')}")
        if ia.get("sha256") != ib.get("sha256"):
            notes.append(f"intent sha256 {str(ia.get('sha256'))[:12]} → "
                         f"{str(ib.get('sha256'))[:12]}")
    return notes


# --- backups, by device -------------------------------------------------------------------

# File names a backup may give a device's config, by the kind of config they hold; how a
# device's config of each kind is named when the device has several; the config each format
# stands for when the render does not say (a device only one side has): each platform's.
KNOWN_NAMES = platforms.backup_names()
SUFFIXES = (".cfg", ".conf", ".json", ".yaml", ".yml", ".txt")
CONFIG_NAMES = platforms.config_names()
DEFAULT_KIND: dict[str, str] = dict(platforms.default_kinds().items())


def _render_configs(side: Side) -> dict[str, dict[str, str]]:
    """device -> {kind: path} of a render's switch configs."""
    out: dict[str, dict[str, str]] = {}
    for path in side.entries:
        kind = kind_of(path)
        device = kind.device_of(path)
        if device is not None and kind.os is not None:
            out.setdefault(device, {})[kind.name] = path
    return out


def _devices_elsewhere(side: Side) -> set[str]:
    """The switches a render cut to one folder configures in its other folders (its manifest
    lists every file)."""
    files = _manifest(side).get("files")
    out = set()
    for path in files if isinstance(files, dict) else ():
        kind = kind_of(str(path))
        if kind.os is not None and (device := kind.device_of(str(path))) is not None:
            out.add(device)
    return out


def _sniff(side: Side, path: str) -> str:
    fmt = fmt_of(path)
    if fmt != "text" or PurePosixPath(path).suffix in (".cfg", ".conf"):
        return fmt
    head = side.read(path).lstrip()[:64]
    if head.startswith("{"):
        return "json"
    if head.startswith(("- set:", "- header:", "set:", "---")):
        return "yaml"
    return "text"


# Files a render writes in its folders under fixed names (`<platform>/NOTES.txt`): in a copy of
# such a folder taken as backups they are the render's own files, not switches.
_FOLDER_FILES = frozenset(
    parts[-1] for k in BY_NAME.values() if not k.device and not k.generic
    for p in k.patterns if len(parts := p.split("/")) == 2 and "*" not in parts[-1])


def _backup_configs(side: Side, render: dict[str, dict[str, str]]
                    ) -> dict[str, dict[str, str]]:
    """device -> {kind: path} of a directory of backups: `<device>[.ext]`, `<device>/<file>`
    with a known file name (a copy of a render's platform directory), `<group>/<device>`
    (Oxidized's groups), or the layout of a render."""
    out: dict[str, dict[str, str]] = {}
    for path in side.entries:
        kind = kind_of(path)
        parts = path.split("/")
        name: str | None
        if kind.device and kind.os is not None:
            device, name = str(kind.device_of(path)), kind.name
        elif len(parts) >= 2 and parts[-1] in KNOWN_NAMES:
            device, name = parts[-2], KNOWN_NAMES[parts[-1]]
        else:
            suffix = PurePosixPath(parts[-1]).suffix
            if parts[-1] in _FOLDER_FILES and parts[-1] not in render:
                continue
            if suffix and suffix not in SUFFIXES and parts[-1] not in render:
                # a README.md or a picture beside the backups is not a switch (but a switch
                # named `leaf.pod1` is one)
                continue
            device = parts[-1].removesuffix(suffix) if suffix in SUFFIXES else parts[-1]
            name = None
        if name is None:
            fmt = _sniff(side, path)
            rendered = [k for k in render.get(device, {}) if BY_NAME[k].fmt == fmt]
            name = rendered[0] if rendered else DEFAULT_KIND[fmt]
        out.setdefault(device, {})[name] = path
    return out


def _owned(kind: Kind, backup: str, render: str, where: tuple[str, str], owned: bool,
           backup_is_old: bool) -> list[Change]:
    """Compare a backup with a render file (or another backup) on what fabgen owns: the
    platform's rule for the kind, else section by section or line by line."""
    if kind.backup is not None:
        return kind.backup(backup, render, where, owned, backup_is_old)
    if kind.style == "sections":
        return by_sections(kind, backup, render, None, backup_is_old)
    return by_lines(backup, render, backup_is_old)


def _by_device(old: Side, new: Side, owned: bool) -> DiffResult:
    render_side = new if new.kind == "render" else old if old.kind == "render" else None
    rendered = _render_configs(render_side) if render_side is not None else {}
    a = rendered if old is render_side else _backup_configs(old, rendered)
    b = rendered if new is render_side else _backup_configs(new, rendered)
    if render_side is not None and render_side.cut:
        # Backups of the render's switches outside the folder compared are not in question.
        elsewhere = _devices_elsewhere(render_side) - rendered.keys()
        for backups in (a, b):
            if backups is not rendered:
                for device in elsewhere:
                    backups.pop(device, None)
    if render_side is not None and old.kind != new.kind:
        # A rendered file backups do not hold is compared only where the backup has it.
        backups = b if old is render_side else a
        for device, kinds in rendered.items():
            for name in [k for k in kinds if not BY_NAME[k].backed_up]:
                if name not in backups.get(device, {}):
                    del kinds[name]
    if not a and not b:
        raise DiffError("no device configs found on either side")
    if render_side is not None and old.kind != new.kind:
        backups, side = (b, new) if old is render_side else (a, old)
        if not backups.keys() & rendered.keys():
            # A wrong path (an empty directory, another fabric's backups) would otherwise
            # read as every switch added: a CI gate must not take that for a change.
            some = ", ".join(sorted(rendered, key=natural_key)[:3])
            raise DiffError(f"{side.title}: holds no config of any switch of the render "
                            f"({some}, ...): not a directory of this fabric's backups")
    keys = sorted({(d, k) for side in (a, b) for d, ks in side.items() for k in ks},
                  key=lambda x: (natural_key(x[0]), x[1]))
    several = {d for d, _ in keys if len(a.get(d, {}) | b.get(d, {})) > 1}
    files: list[FileDiff] = []
    held = _Held()
    unchanged = 0
    for device, name in keys:
        kind = BY_NAME[name]
        pa, pb = a.get(device, {}).get(name), b.get(device, {}).get(name)
        label = f"{device} {CONFIG_NAMES[name]}" if device in several else device
        if pa is not None and pb is not None:
            if same(old, pa, new, pb):
                unchanged += 1
                continue
            backup_is_old = old is not render_side
            texts = (old.read(pa), new.read(pb))
            changes = _owned(kind, texts[0] if backup_is_old else texts[1],
                             texts[1] if backup_is_old else texts[0],
                             (old.shown(pa), new.shown(pb)),
                             owned and render_side is not None, backup_is_old)
            if not changes:
                unchanged += 1
                continue
            files.append(FileDiff(label, kind.name, kind.style, "changed", changes, device))
            held.add(files)
        elif pb is not None:
            files.append(FileDiff(label, kind.name, kind.style, "added", [], device,
                                  new.count_lines(pb)))
        elif pa is not None:
            files.append(FileDiff(label, kind.name, kind.style, "removed", [], device,
                                  old.count_lines(pa)))
    roles = _switch_roles(render_side) if render_side is not None and files else {}
    devices: list[Device] = []
    for device in sorted({f.device for f in files if f.device}, key=natural_key):
        kinds_a = {BY_NAME[k].os or "" for k in a.get(device, {})}
        kinds_b = {BY_NAME[k].os or "" for k in b.get(device, {})}
        devices.append(_device(device, roles.get(device, ""), kinds_a, kinds_b,
                               [f.name for f in files if f.device == device]))
    return DiffResult(old.title, new.title, "device", files, unchanged, devices,
                      CableCount(), [], held.spool)
