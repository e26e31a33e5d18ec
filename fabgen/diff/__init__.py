"""`fabgen diff`: what a change does to every file fabgen writes.

Each side is a render directory, `git:REV:PATH` (a render committed in a repository), or a
directory of device backups as Oxidized or RANCID keep them. Renders are compared file by
file, each by its kind (kinds.py; a platform's device configs by its own rules: JSON and YAML
key by key, CLI configs section by section, `set` trees by path, table-keyed JSON files by
table), cable tables cable by cable, scripts and env files line by line. Backups are compared
with the render device by device, on what fabgen owns (backup.py and each platform's rules).
Formats: text, JSON (jsonout.py) and Markdown for pull requests (markdown.py).

This `__init__` hands its names out on first use (PEP 562) and imports nothing itself: the
platforms' diff rules import diff.kind, which runs this file first, and the kinds import the
platforms.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fabgen.diff.compare import diff
    from fabgen.diff.model import Change, DiffError, DiffResult, FileDiff
    from fabgen.diff.structured import diff_values as structured_diff
    from fabgen.diff.text import format_text, summary_line, text_lines

__all__ = ["Change", "DiffError", "DiffResult", "FileDiff", "diff", "format_text",
           "structured_diff", "summary_line", "text_lines"]

_WHERE = {"diff": ("compare", "diff"), "Change": ("model", "Change"),
          "DiffError": ("model", "DiffError"), "DiffResult": ("model", "DiffResult"),
          "FileDiff": ("model", "FileDiff"), "structured_diff": ("structured", "diff_values"),
          "format_text": ("text", "format_text"), "summary_line": ("text", "summary_line"),
          "text_lines": ("text", "text_lines")}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    module, attr = _WHERE[name]
    return getattr(importlib.import_module(f"fabgen.diff.{module}"), attr)
