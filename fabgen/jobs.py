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
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import pickle
import signal
import sys
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from multiprocessing.pool import AsyncResult
from typing import Any, TypeVar

__all__ = ["WorkerError", "available_cores", "ordered_map", "paused_gc", "start_method"]

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
