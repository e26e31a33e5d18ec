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
import ctypes
import gc
import multiprocessing
import os
import pickle
import shutil
import signal
import sys
import tempfile
import traceback
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any, TypeVar

__all__ = ["Content", "PoolUnavailable", "RemoteTraceback", "Spool", "Spooled", "WorkerError",
           "available_cores", "ordered_map", "paused_gc", "start_method"]

T = TypeVar("T")
R = TypeVar("R")


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection inside: for batch work that makes millions of objects and
    frees them by reference counting.

    A full render of a fabric makes a few hundred reference cycles at most (measured with
    gc.collect() after renders of 8k to 131k GPUs), so the collector finds next to nothing,
    but its passes traverse every live object, and they run more often the more objects are
    made: on a 528-switch fabric of CLI configs, they were 40% of the render. Collection
    resumes on the way out; an enclosing pause is left as it was.
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


class WorkerError(RuntimeError):
    """A worker failed in a way that cannot reach the parent as itself: its exception does not
    rebuild from a pickle (the message keeps its type and text), or the process died."""


class PoolUnavailable(RuntimeError):
    """No worker could be started here (no processes left to start: a ulimit, a full
    machine); the caller does the work in its own process instead."""


class RemoteTraceback(Exception):
    """The traceback of a worker's exception, as text: set as the exception's cause in the
    parent, so `--debug` shows where in the worker it was raised."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass
class _Worker:
    process: BaseProcess
    conn: Connection  # the parent's end of the worker's pipe
    busy: int | None = None  # the item it is rendering


def ordered_map(fn: Callable[[T], R], items: Iterable[T], jobs: int, *,
                initializer: Callable[..., None] | None = None,
                initargs: tuple[Any, ...] = (), window: int | None = None,
                method: str | None = None) -> Generator[R, None, None]:
    """fn(item) for every item, in item order, computed by `jobs` worker processes.

    `fn` and `initializer` must be module-level functions (a spawned worker imports them by
    name). `initializer(*initargs)` runs in every worker before its first item; with fork it
    may do nothing, the state being inherited. At most `window` items (default 4 per job) are
    in flight or finished and unread. Stopping the iteration (or an exception) ends the
    workers. Raises PoolUnavailable before the first result when no worker can be started,
    and WorkerError when a worker process dies (the kernel's out-of-memory killer, a kill).

    Each worker has its own pipe and the parent waits on the pipes and on the processes
    themselves, with no helper thread: a thread that cannot be started (a memory ulimit) or
    a worker killed mid-item ends the map with an error instead of a hang, which is what
    multiprocessing.Pool and concurrent.futures do in those cases.
    """
    method = method or start_method()
    window = max(window or 4 * jobs, jobs)
    context: Any = multiprocessing.get_context(method)  # a Fork/SpawnContext (typeshed: Base)
    if method == "fork":
        # Objects the parent built stay out of the children's garbage collection, whose
        # passes would otherwise touch (and so copy) every page that holds one.
        gc.freeze()
    workers: list[_Worker] = []
    finished = False
    try:
        for _ in range(jobs):
            try:
                ours, theirs = context.Pipe()
                process = context.Process(target=_worker_main, daemon=True,
                                          args=(theirs, fn, initializer, initargs))
                process.start()
            except (OSError, MemoryError) as exc:
                if workers:
                    break  # fewer workers than asked: still parallel
                raise PoolUnavailable(f"cannot start a worker process: {exc}") from None
            theirs.close()
            workers.append(_Worker(process, ours))
        yield from _schedule(workers, enumerate(items), window)
        finished = True
    finally:
        _stop(workers, gracefully=finished)
        if method == "fork":
            gc.unfreeze()


def _schedule(workers: list[_Worker], items: Iterator[tuple[int, T]],
              window: int) -> Generator[R, None, None]:
    done: dict[int, tuple[bool, Any]] = {}
    submitted = given = 0
    exhausted = False
    while True:
        for worker in workers:
            if worker.busy is None and not exhausted and submitted - given < window:
                entry = next(items, None)
                if entry is None:
                    exhausted = True
                    break
                worker.conn.send(entry)
                worker.busy = entry[0]
                submitted += 1
        while given in done:
            ok, value = done.pop(given)
            given += 1
            if not ok:
                raise value
            yield value
        if exhausted and given == submitted:
            return
        busy = [w for w in workers if w.busy is not None]
        if not busy:  # the reader took the whole window: hand out the next items first
            continue
        ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy])
        for worker in busy:
            if worker.conn in ready or worker.conn.poll():
                try:
                    index, ok, value = worker.conn.recv()
                except EOFError:  # its end of the pipe closed: the worker is gone
                    raise _death(worker.process) from None
                done[index] = (ok, value)
                worker.busy = None
            elif worker.process.sentinel in ready:
                raise _death(worker.process)


def _death(process: BaseProcess) -> Exception:
    """What a worker's end without a result means: the kernel's out-of-memory killer (SIGKILL),
    a MemoryError outside an item (the worker's own exit code) or a C library that could not
    allocate under an address-space ulimit (SIGSEGV/SIGBUS: seen with RLIMIT_AS in
    tests/test_limits.py) is a machine limit, raised as MemoryError as it would be in one
    process; anything else is a WorkerError."""
    process.join(timeout=5)  # the sentinel fires before the exit code is collected
    code = process.exitcode
    if code == _EXIT_OUT_OF_MEMORY:
        return MemoryError("a worker process ran out of memory")
    if code is not None and -code in _MEMORY_SIGNALS:
        return MemoryError(f"a worker process was ended by {signal.Signals(-code).name}, most "
                           "likely out of memory")
    return WorkerError(f"a worker process died before finishing its work (exit code {code}); "
                       "--jobs 1 renders in one process")


def _stop(workers: list[_Worker], *, gracefully: bool) -> None:
    """Finished: ask each worker to exit and wait for it. Stopped early, failed or
    interrupted: end them now rather than let them finish their item."""
    for worker in workers:
        if gracefully and worker.process.is_alive():
            with contextlib.suppress(OSError):
                worker.conn.send(None)
        else:
            worker.process.terminate()
        worker.conn.close()
    for worker in workers:
        worker.process.join(timeout=5)
        if worker.process.is_alive():  # pragma: no cover - a worker ignoring SIGTERM
            worker.process.kill()
            worker.process.join()


def _worker_main(conn: Connection, fn: Callable[[T], R],
                 initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    # Ctrl-C reaches the whole process group; only the parent handles it (it stops the
    # workers), so a worker does not print a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()
    try:
        _serve(conn, fn, initializer, initargs)
    except MemoryError:
        # Out of memory outside an item (receiving one, sending its result, the pickle of a
        # MemoryError): end quietly with a code the parent reads as such, rather than let
        # multiprocessing print a traceback of the worker's.
        os._exit(_EXIT_OUT_OF_MEMORY)


_EXIT_OUT_OF_MEMORY = 75  # EX_TEMPFAIL (<sysexits.h>): a resource, not a bug
_MEMORY_SIGNALS = frozenset({signal.SIGKILL, signal.SIGSEGV, signal.SIGBUS})


def _serve(conn: Connection, fn: Callable[[T], R],
           initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    failed: BaseException | None = None
    try:
        if initializer is not None:
            initializer(*initargs)
    except Exception as exc:  # reported with the first item, as that item's failure
        failed = exc
    while True:
        try:
            entry = conn.recv()
        except EOFError:  # the parent is gone
            return
        if entry is None:
            return
        index, item = entry
        try:
            if failed is not None:
                raise failed
            conn.send((index, True, fn(item)))
        except Exception as exc:
            conn.send((index, False, _sendable(exc)))


def _sendable(exc: Exception) -> Exception:
    """The exception as the parent will see it: itself when it survives a pickle (with the
    worker's traceback as its cause), else a WorkerError naming its type and text."""
    trace = RemoteTraceback("".join(traceback.format_exception(exc)))
    try:
        copy: Exception = pickle.loads(pickle.dumps(exc))
    except Exception:
        return WorkerError(f"{type(exc).__name__}: {exc}")
    copy.__cause__ = trace
    return copy


def _die_with_parent() -> None:
    """Linux: have the kernel end this worker when the parent dies (killed, out of memory), so
    no worker outlives its render. Elsewhere a worker ends when its pipe closes."""
    if sys.platform != "linux":
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # pragma: no cover - a libc without prctl
        pass


_PR_SET_PDEATHSIG = 1  # <sys/prctl.h>


# A file's content: its text, or its text as chunks (a big table, written as produced).
Content = str | Iterable[str]
# A spooled batch of files: the spool file that holds them and, per file, its name, whether it
# came whole (else as chunks) and the length in bytes of each chunk.
Spooled = tuple[str, tuple[tuple[str, bool, tuple[int, ...]], ...]]


class Spool:
    """A private directory, in memory where the system has a tmpfs at /dev/shm, through which
    workers hand files to the parent: `put` in a worker, `take` in the parent (which removes a
    batch's spool file when it takes the next one), `close` removes whatever is left (a failed
    or stopped render). Picklable: it is its directory."""

    def __init__(self, directory: str | None = None) -> None:
        if directory is None:
            memory = "/dev/shm"
            where = memory if os.path.isdir(memory) and os.access(memory, os.W_OK) else None
            directory = tempfile.mkdtemp(prefix="fabgen-spool-", dir=where)
        self.directory = directory
        self._taken: str | None = None

    def put(self, key: str, files: Iterable[tuple[str, Content]]) -> Spooled:
        """Write `files` ((name, content) pairs) into one spool file named `key`, UTF-8; a
        chunked content is written chunk by chunk, never joined."""
        path = os.path.join(self.directory, key)
        entries = []
        with open(path, "wb") as fh:
            for name, content in files:
                whole = isinstance(content, str)
                sizes = []
                for chunk in [content] if isinstance(content, str) else content:
                    data = chunk.encode("utf-8")
                    fh.write(data)
                    sizes.append(len(data))
                entries.append((name, whole, tuple(sizes)))
        return path, tuple(entries)

    def take(self, spooled: Spooled) -> Iterator[tuple[str, Content]]:
        """The files of a `put`, in order, each as it came (a text, or chunks to read before
        the next file is asked for, as a writer reads them)."""
        path, entries = spooled
        if self._taken is not None:
            os.unlink(self._taken)
        self._taken = path
        if all(whole for _name, whole, _sizes in entries):
            # The usual batch (a run of configs): one read, each text decoded from it.
            with open(path, "rb") as fh:
                data = memoryview(fh.read())
            start = 0
            for name, _whole, (size,) in entries:
                yield name, str(data[start:start + size], "utf-8")
                start += size
            return
        start = 0
        for name, whole, sizes in entries:
            chunks = _read_chunks(path, start, sizes)
            yield name, "".join(chunks) if whole else chunks
            start += sum(sizes)

    def close(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    def __reduce__(self) -> tuple[type[Spool], tuple[str]]:
        return (Spool, (self.directory,))


def _read_chunks(path: str, start: int, sizes: tuple[int, ...]) -> Iterator[str]:
    """The chunks of one spooled file, read as they are asked for (a big table stays out of
    memory, as the worker produced it)."""
    with open(path, "rb") as fh:
        fh.seek(start)
        for size in sizes:
            yield fh.read(size).decode("utf-8")
