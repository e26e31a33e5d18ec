"""Work spread over processes: an ordered, bounded parallel map (what `fabgen render --jobs`
runs on).

Workers are forked where the platform forks (Linux): a child starts with the parent's memory,
so whatever the parent built before the pool (the fabric, its index) is shared copy-on-write,
never serialised. Where fork is unavailable or unsafe (Windows; macOS, whose system libraries
are not fork-safe), workers are spawned instead and `initializer` rebuilds that state in each
worker once: slower to start, same results.

Results come back in the order of the items whatever order the workers finish in, and at most
`window` of them wait in the parent, so memory stays bounded when the consumer (a writer) is
slower than the workers. A worker's exception is raised in the parent, as the item's result.

Big texts travel through a `Spool` rather than the pool's pipe: a worker writes them into a
file in memory (tmpfs) and sends its name, the parent reads it back in one call. Through the
pipe, 1.4 GB of configs (a 131k-GPU render) cost the parent 3.3 s of CPU in reads, buffer
copies and unpickling; through the spool 0.85 s.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import pickle
import shutil
import signal
import sys
import tempfile
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from multiprocessing.pool import AsyncResult
from typing import Any, TypeVar

__all__ = ["Spool", "Spooled", "WorkerError", "available_cores", "ordered_map", "paused_gc",
           "start_method"]

T = TypeVar("T")
R = TypeVar("R")


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection inside: for batch work that makes millions of objects and
    frees them by reference counting.

    A full render of a fabric makes a few hundred reference cycles at most (measured with
    gc.collect() after renders of 8k to 131k GPUs), so the collector finds next to nothing,
    but its passes traverse every live object, and they run more often the more objects are
    made: on a 528-switch EOS fabric they were 40% of the render. Collection resumes on the
    way out; an enclosing pause is left as it was.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def available_cores() -> int:
    """The processors this process may run on (its affinity mask, as `taskset` or a container's
    cpuset leaves it), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def start_method() -> str:
    """fork on Linux; spawn elsewhere (Windows has no fork; macOS's system frameworks are not
    fork-safe, which is why Python spawns there by default)."""
    return "fork" if sys.platform == "linux" else "spawn"


def _ignore_interrupts(initializer: Callable[..., None] | None, args: tuple[Any, ...]) -> None:
    # Ctrl-C reaches the whole process group; only the parent handles it (it stops the pool),
    # so a worker does not print a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if initializer is not None:
        initializer(*args)


class WorkerError(RuntimeError):
    """A worker's exception that cannot be sent to the parent as itself (its class does not
    rebuild from a pickle); the message keeps its type and text."""


def _call(fn: Callable[[T], R], item: T) -> R:
    try:
        return fn(item)
    except Exception as exc:
        try:
            pickle.loads(pickle.dumps(exc))
        except Exception:
            raise WorkerError(f"{type(exc).__name__}: {exc}") from None
        raise


def ordered_map(fn: Callable[[T], R], items: Iterable[T], jobs: int, *,
                initializer: Callable[..., None] | None = None,
                initargs: tuple[Any, ...] = (), window: int | None = None,
                method: str | None = None) -> Generator[R, None, None]:
    """fn(item) for every item, in item order, computed by `jobs` worker processes.

    `fn` and `initializer` must be module-level functions (a spawned worker imports them by
    name). `initializer(*initargs)` runs in every worker before its first item; with fork it
    may do nothing, the state being inherited. At most `window` items (default 4 per job) are
    in flight or finished and unread. Stopping the iteration (or an exception) stops the pool.
    """
    method = method or start_method()
    window = window or 4 * jobs
    context = multiprocessing.get_context(method)
    if method == "fork":
        # Objects the parent built stay out of the children's garbage collection, whose
        # passes would otherwise touch (and so copy) every page that holds one.
        gc.freeze()
    pool = context.Pool(jobs, initializer=_ignore_interrupts, initargs=(initializer, initargs))
    try:
        pending: deque[AsyncResult[R]] = deque()
        for item in items:
            pending.append(pool.apply_async(_call, (fn, item)))
            if len(pending) >= window:
                yield pending.popleft().get()
        while pending:
            yield pending.popleft().get()
        pool.close()
    finally:
        pool.terminate()
        pool.join()
        if method == "fork":
            gc.unfreeze()


# A spooled batch of texts: the file that holds them and each one's (name, length in bytes).
Spooled = tuple[str, tuple[tuple[str, int], ...]]


class Spool:
    """A private directory, in memory where the system has a tmpfs at /dev/shm, through which
    workers hand texts to the parent: `put` in a worker, `take` (once) in the parent, `close`
    removes whatever is left (a failed or stopped render). Picklable: it is its directory."""

    def __init__(self, directory: str | None = None) -> None:
        if directory is None:
            memory = "/dev/shm"
            where = memory if os.path.isdir(memory) and os.access(memory, os.W_OK) else None
            directory = tempfile.mkdtemp(prefix="fabgen-spool-", dir=where)
        self.directory = directory

    def put(self, key: str, texts: Iterable[tuple[str, str]]) -> Spooled:
        """Write `texts` ((name, text) pairs) as one file named `key`, UTF-8."""
        path = os.path.join(self.directory, key)
        sizes = []
        with open(path, "wb") as fh:
            for name, text in texts:
                data = text.encode("utf-8")
                fh.write(data)
                sizes.append((name, len(data)))
        return path, tuple(sizes)

    def take(self, spooled: Spooled) -> list[tuple[str, str]]:
        """The texts of a `put`, in order; the file is removed."""
        path, sizes = spooled
        with open(path, "rb") as fh:
            data = memoryview(fh.read())
        os.unlink(path)
        out = []
        start = 0
        for name, size in sizes:
            out.append((name, str(data[start:start + size], "utf-8")))
            start += size
        return out

    def close(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    def __reduce__(self) -> tuple[type[Spool], tuple[str]]:
        return (Spool, (self.directory,))
