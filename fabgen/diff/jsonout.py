"""`fabgen diff --format json`: the result for scripts, in a stable documented shape.

Version 1 (README, "fabgen diff --format json"; schemas/fabgen-diff.schema.json):

    {"fabgen_diff": 1, "old": ..., "new": ..., "compared_by": "path" | "device",
     "changed": bool, "notes": [...],
     "summary": {"files": {added, removed, changed, unchanged},
                 "devices": {added, removed, changed, replatformed},
                 "cables": {added, removed, moved, changed, renumbered, renamed}, "changes": n},
     "devices": [{name, role, old_os, new_os, status, files}],
     "files": [{name, kind, device, status, size, changes: [{op, at, where, old, new, note}]}]}

Files and devices come in natural order; unchanged files are only counted. A change's `at` is
its place as a list (keys, sections, a line, a row id), `where` the same as the text format
prints it; `old`/`new` are the JSON value, the config line, the lines or the row (a table's
row as column -> text), absent (null) on the side that does not have it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from fabgen.diff.model import Change, DiffResult, FileDiff
from fabgen.diff.text import format_at

VERSION = 1


def _change(f: FileDiff, c: Change) -> dict[str, Any]:
    return {"op": c.op, "at": list(c.at), "where": format_at(f.kind, c.at), "old": c.old,
            "new": c.new, "note": c.note}


def _file(f: FileDiff) -> dict[str, Any]:
    return {"name": f.name, "kind": f.kind, "device": f.device, "status": f.status,
            "size": f.size, "changes": [_change(f, c) for c in f.changes]}


def _dumps(value: Any, indent: str) -> str:
    """json.dumps(indent=2) of a value placed `indent` deep in a larger document."""
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + indent)


def chunks(result: DiffResult) -> Iterator[str]:
    """`json.dumps(to_json(result), indent=2)` a change at a time: the document of a large
    change is never whole in memory."""
    head = _dumps(to_json(result, files=False), "")
    yield head[:head.rindex('"files": []')] + '"files": ['
    for i, f in enumerate(result.files):
        shell = _dumps(_file(FileDiff(f.name, f.kind, f.style, f.status, [], f.device, f.size)),
                       "    ")
        cut = shell.rindex('"changes": []')
        yield ("," if i else "") + "\n    " + shell[:cut] + '"changes": ['
        changes = f.changes
        for j, c in enumerate(changes):
            yield ("," if j else "") + "\n        " + _dumps(_change(f, c), "        ")
        yield ("\n      ]" if changes else "]") + shell[cut + len('"changes": []'):]
    yield ("\n  ]" if result.files else "]") + "\n}\n"


def to_json(result: DiffResult, files: bool = True) -> dict[str, Any]:
    devices = {s: 0 for s in ("added", "removed", "changed", "replatformed")}
    for d in result.devices:
        devices[d.status] += 1
    return {
        "fabgen_diff": VERSION,
        "old": result.old,
        "new": result.new,
        "compared_by": result.by,
        "changed": result.changed,
        "notes": result.notes,
        "summary": {
            "files": {s: result.count(s) for s in ("added", "removed", "changed", "unchanged")},
            "devices": devices,
            "cables": result.cables.as_dict(),
            "changes": result.change_count,
        },
        "devices": [{"name": d.name, "role": d.role, "old_os": d.old_os, "new_os": d.new_os,
                     "status": d.status, "files": d.files} for d in result.devices],
        "files": [_file(f) for f in result.files] if files else [],
    }
