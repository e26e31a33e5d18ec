"""The push audit log: JSON lines of what was pushed where, appended and flushed one by one.

One `run` record when a push starts, one `device` record per device when its outcome is known
(including devices a stopped rollout never touched), one `end` record. Records carry hashes
(sha256 of the rendered file and of the device's running config before and after), never
configs, diffs or credentials: every record goes through the run's Redactor before it is
written.
"""

from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fabgen.push.credentials import Redactor


def default_path(render_dir: Path) -> Path:
    """`out/pod-a.push-audit.jsonl` next to the render `out/pod-a`: outside the render, so
    `fabgen render --check` never sees it, and one log per fabric."""
    render_dir = render_dir.resolve()
    return render_dir.parent / f"{render_dir.name}.push-audit.jsonl"


class AuditLog:
    """Append-only JSON lines; each record is flushed and fsynced before push goes on."""

    def __init__(self, path: Path, redact: Redactor, run_id: str) -> None:
        self.path, self.redact, self.run_id = path, redact, run_id
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, event: str, **fields: Any) -> None:
        record = {"ts": datetime.now(UTC).isoformat(timespec="milliseconds"),
                  "run_id": self.run_id, "event": event, **fields}
        line = json.dumps(self.redact.record(record), sort_keys=False) + "\n"
        with self._lock:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
            try:
                os.write(fd, line.encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)
