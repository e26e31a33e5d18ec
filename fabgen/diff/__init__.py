"""`fabgen diff`: what a change does to every file fabgen writes.

Each side is a render directory, `git:REV:PATH` (a render committed in a repository), or a
directory of device backups as Oxidized or RANCID keep them. Renders are compared file by
file, each by its kind (kinds.py): JSON and YAML key by key, EOS and FRR configs section by
section, NVUE by `nv set` path, SONiC by table, cable tables cable by cable, scripts and env
files line by line. Backups are compared with the render device by device, on what fabgen
owns (owned.py). Formats: text, JSON (jsonout.py) and Markdown for pull requests
(markdown.py).
"""

from __future__ import annotations

from fabgen.diff.compare import diff
from fabgen.diff.model import Change, DiffError, DiffResult, FileDiff
from fabgen.diff.structured import diff_values as structured_diff
from fabgen.diff.text import format_text, summary_line, text_lines

__all__ = ["Change", "DiffError", "DiffResult", "FileDiff", "diff", "format_text",
           "structured_diff", "summary_line", "text_lines"]
