"""`fabgen render --jobs N`: the same bytes for every N, forked or spawned workers, errors
reported as in one process, progress counted to the end."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabgen import jobs
from fabgen.intent import load
from fabgen.platforms.eos import target as eos
from fabgen.render import render
from fabgen.targets.base import UnsupportedPlan
from tests.conftest import GOLDEN, INVENTORIES


def _inventory(stem: str) -> Path:
    return next(p for p in INVENTORIES if p.stem == stem)


@pytest.mark.parametrize("intent", INVENTORIES, ids=lambda p: p.stem)
def test_every_job_count_renders_the_same_bytes(intent: Path) -> None:
    loaded = load(intent)
    one = render(loaded, jobs=1)
    assert render(loaded, jobs=2) == one
    assert render(loaded, jobs=3) == one
    assert list(render(loaded, jobs=2)) == list(one)  # same files in the same order


def test_a_subset_render_is_the_same_with_jobs() -> None:
    loaded = load(_inventory("roce-eos-nvue-2to1"))
    one = render(loaded, only=["switches", "hosts"], devices="leaf-su1-r[2-4]", jobs=1)
    assert render(loaded, only=["switches", "hosts"], devices="leaf-su1-r[2-4]", jobs=3) == one
    assert sorted(p for p in one if p.startswith("eos/")) == [
        "eos/leaf-su1-r2.cfg", "eos/leaf-su1-r3.cfg", "eos/leaf-su1-r4.cfg"]
    assert not any(p.startswith("nvue/") for p in one)
    assert "hosts/nic-setup.sh" in one  # fabric-wide files are kept


def test_cli_jobs_matches_golden(cli) -> None:  # type: ignore[no-untyped-def]
    for intent in INVENTORIES:
        for n in ("1", "3"):
            result = cli("--no-color", "render", str(intent), "-o", str(GOLDEN / intent.stem),
                         "--check", "--jobs", n)
            assert result.code == 0, (n, result.err)


def test_spawned_workers_render_the_same_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fallback where fork is unavailable: each worker builds the context from the
    intent."""
    monkeypatch.setattr(jobs, "start_method", lambda: "spawn")
    loaded = load(_inventory("roce-256-sonic"))
    assert render(loaded, jobs=2) == render(loaded, jobs=1)


def test_progress_counts_every_item_to_the_end() -> None:
    loaded = load(_inventory("roce-eos-nvue-2to1"))
    seen: dict[int, list[tuple[str, int, int]]] = {1: [], 2: []}
    for n, steps in seen.items():
        render(loaded, jobs=n, progress=lambda name, done, total, steps=steps: steps.append(
            (name, done, total)))
    steps = seen[2]
    total = steps[-1][2]
    assert steps[-1] == ("done", total, total)
    assert [done for _, done, _ in steps] == list(range(total + 1))
    assert {name for name, _, _ in steps} >= {"eos", "nvue", "nic", "report", "done"}
    assert seen[1][-1][0] == "done"


def _fail_on(monkeypatch: pytest.MonkeyPatch, switch: str, exc: Exception) -> None:
    real = eos.EosTarget.render_unit

    def render_unit(self: eos.EosTarget, ctx: object, unit: str) -> dict[str, str]:
        if unit == switch:
            raise exc
        return real(self, ctx, unit)  # type: ignore[arg-type]

    monkeypatch.setattr(eos.EosTarget, "render_unit", render_unit)


@pytest.mark.parametrize("n", ["1", "2"])
def test_a_plan_error_in_a_worker_reads_as_in_one_process(
        n: str, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    _fail_on(monkeypatch, "leaf-su1-r5", UnsupportedPlan("eos: leaf-su1-r5 cannot do it"))
    result = cli("--no-color", "render", "-q", str(_inventory("roce-eos-nvue-2to1")),
                 "-o", str(tmp_path / "out"), "--jobs", n)
    assert (result.code, result.err) == (1, "error: eos: leaf-su1-r5 cannot do it\n")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("n", ["1", "2"])
def test_a_bug_in_a_worker_reads_as_in_one_process(
        n: str, cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    _fail_on(monkeypatch, "leaf-su1-r5", KeyError("Ethernet99/1"))
    result = cli("--no-color", "render", "-q", str(_inventory("roce-eos-nvue-2to1")),
                 "-o", str(tmp_path / "out"), "--jobs", n)
    assert result.code == 3
    assert result.err == ("error: internal error: KeyError: 'Ethernet99/1' (rerun with "
                          "--debug and report it)\n")
    assert "Traceback" not in result.err


def test_jobs_must_be_a_positive_whole_number(cli) -> None:  # type: ignore[no-untyped-def]
    for bad in ("0", "-1", "two"):
        result = cli("render", str(INVENTORIES[0]), "--jobs", bad)
        assert result.code == 1
        assert "--jobs" in result.err


def test_ordered_map_keeps_order_and_raises_the_first_error() -> None:
    assert list(jobs.ordered_map(_square_slowly, range(20), 3, window=4)) == [
        i * i for i in range(20)]
    with pytest.raises(ValueError, match=r"^7 is odd and large$"):
        list(jobs.ordered_map(_refuse_large_odd, range(20), 2))


def test_a_full_window_behind_one_slow_item_does_not_stall() -> None:
    # Item 0 is slow; the other worker finishes items until the window is full and waits.
    # When item 0 arrives the reader takes the whole window at once, every worker is idle,
    # and the scheduler must hand out the next items instead of waiting for a busy worker.
    import threading

    got: list[int] = []
    runner = threading.Thread(target=lambda: got.extend(
        jobs.ordered_map(_slow_first, range(12), 2, window=3)), daemon=True)
    runner.start()
    runner.join(timeout=60)
    assert not runner.is_alive(), "ordered_map stalled with idle workers and items left"
    assert got == list(range(12))


def _slow_first(i: int) -> int:
    import time

    time.sleep(0.5 if i == 0 else 0.0)
    return i


def _square_slowly(i: int) -> int:
    import time

    time.sleep(0.001 * (i % 3))  # finish out of order
    return i * i


def _refuse_large_odd(i: int) -> int:
    if i > 5 and i % 2:
        raise ValueError(f"{i} is odd and large")
    return i


def test_an_intent_error_from_a_worker_is_placed_like_in_one_process(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """A target's complaint about an intent field crosses the process boundary whole: the
    render places it at the field's file:line:col as it does in one process."""
    from fabgen.errors import FabgenError

    _fail_on(monkeypatch, "leaf-su1-r5",
             FabgenError.single("no such thing on this switch", loc=("topology", "leaf")))
    errs = []
    for n in ("1", "2"):
        result = cli("--no-color", "render", "-q", str(_inventory("roce-eos-nvue-2to1")),
                     "-o", str(tmp_path / n), "--jobs", n)
        assert result.code == 1
        errs.append(result.err)
    assert errs[0] == errs[1]
    assert "roce-eos-nvue-2to1.yaml:" in errs[0]
    assert "topology.leaf: no such thing on this switch" in errs[0]


class _Stubborn(Exception):
    def __init__(self, a: int, b: int) -> None:
        super().__init__(f"{a}+{b}")


def _refuse_stubbornly(i: int) -> int:
    raise _Stubborn(i, 1)


def test_an_exception_that_does_not_pickle_still_reaches_the_parent() -> None:
    with pytest.raises(jobs.WorkerError, match=r"^_Stubborn: 0\+1$"):
        list(jobs.ordered_map(_refuse_stubbornly, range(3), 2))


def test_the_spool_hands_files_back_as_they_came_and_cleans_up() -> None:
    import os
    import pickle

    spool = jobs.Spool()
    texts = [("a.txt", "plain\n"), ("b.md", "caf\u00e9 \u2014 \U0001f600\n"), ("empty", "")]
    chunked = [("big.csv", iter(["h\n", "r\u00e9\n", "", "last\n"])), ("c.txt", "tail\n")]
    try:
        worker = pickle.loads(pickle.dumps(spool))  # as a worker has it
        first = worker.put("7", texts)
        second = worker.put("8", chunked)
        assert list(spool.take(first)) == texts
        assert os.path.exists(first[0])  # until the next batch is taken
        got = []
        for name, content in spool.take(second):
            assert isinstance(content, str) == (name == "c.txt")  # chunks stay chunks
            got.append((name, content if isinstance(content, str) else list(content)))
        assert got == [("big.csv", ["h\n", "r\u00e9\n", "", "last\n"]), ("c.txt", "tail\n")]
        assert not os.path.exists(first[0])
        worker.put("9", texts)  # left behind by a stopped render
    finally:
        spool.close()
    assert not os.path.exists(spool.directory)


def test_a_killed_worker_is_out_of_memory_and_another_death_a_worker_error() -> None:
    # SIGKILL is what the kernel's out-of-memory killer sends: reported as the MemoryError
    # one process would have raised (the CLI's clean "out of memory" line, exit 1).
    with pytest.raises(MemoryError, match="SIGKILL, most likely out of memory"):
        list(jobs.ordered_map(_killed, range(4), 2))
    with pytest.raises(jobs.WorkerError, match=r"exit code 3\)"):
        list(jobs.ordered_map(_exits, range(4), 2))


def _killed(i: int) -> int:
    import os
    import signal

    if i == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    return i


def _exits(i: int) -> int:
    import os

    if i == 1:
        os._exit(3)
    return i
