"""What nornir, napalm, netmiko and paramiko log during a push, as fabgen's one-line notes.

Left alone, their ERROR records reach stderr through Python's last-resort handler, nornir's
with a whole traceback (a task that fails while closing a connection to a silent device). While
a push runs, their loggers hand records to a `LibraryLog` instead: each becomes one line (the
message's first line and, for a traceback, its last: the exception), filed under the device it
names. With --debug the records also go to stderr as the libraries wrote them.
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys
import threading
from collections.abc import Iterator

LIBRARIES = ("nornir", "napalm", "netmiko", "paramiko")
_HOST = re.compile(r"^Host '([^']+)': ")


def one_line(record: logging.LogRecord) -> tuple[str | None, str]:
    """(the device the record is about, if it says; the record as one line)."""
    raw = record.getMessage().splitlines()
    first = next((x.strip() for x in raw if x.strip()), record.levelname.lower())
    host = None
    m = _HOST.match(first)
    if m:
        host, first = m.group(1), first[m.end():]
    text = first.removesuffix(" with traceback:").rstrip(":")
    starts = [i for i, x in enumerate(raw) if x.startswith("Traceback (most recent call")]
    if starts:  # keep the exception: the first unindented line after the last traceback header
        exc = next((x for x in raw[starts[-1] + 1:] if x and not x[0].isspace()), "")
        text += f": {exc.strip()}" if exc else ""
    elif record.exc_info and record.exc_info[1] is not None:
        err = record.exc_info[1]
        text += ": " + (f"{type(err).__name__}: {err}".splitlines() or [""])[0]
    return host, f"{record.name.split('.')[0]}: {text}"


class LibraryLog(logging.Handler):
    """Collects WARNING and above as one-line notes, per device where the record names one."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self._lock = threading.Lock()
        self.by_host: dict[str, list[str]] = {}
        self.general: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            host, text = one_line(record)
        except Exception:  # a log record must never break a push
            host, text = None, f"{record.name}: (unprintable log record)"
        with self._lock:
            (self.by_host.setdefault(host, []) if host else self.general).append(text)

    def take(self, host: str) -> list[str]:
        with self._lock:
            return self.by_host.pop(host, [])

    def take_general(self) -> list[str]:
        with self._lock:
            taken, self.general = self.general, []
            return taken


@contextlib.contextmanager
def captured(debug: bool = False) -> Iterator[LibraryLog]:
    """Route the libraries' logging into a LibraryLog (and, with `debug`, to stderr in full)
    for the duration; restore their loggers afterwards."""
    log = LibraryLog()
    handlers: list[logging.Handler] = [log]
    if debug:
        loud = logging.StreamHandler(sys.stderr)
        loud.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        handlers.append(loud)
    saved = []
    for name in LIBRARIES:
        logger = logging.getLogger(name)
        saved.append((logger, logger.propagate))
        logger.propagate = False  # never up to the root logger or the last-resort handler
        for handler in handlers:
            logger.addHandler(handler)
    try:
        yield log
    finally:
        for logger, propagate in saved:
            for handler in handlers:
                logger.removeHandler(handler)
            logger.propagate = propagate
