"""Fuzz: the example intents, mutated as a careless editor or a hostile pull request would,
through `fabgen render` (issues 15 and 18).

Every mutation must end as a complete render (exit 0) or as errors on stderr (exit 1) that
each name the file, line and column, with nothing written and no temporary left behind. Never
exit 3 (fabgen's own bug), never a traceback, never a hang.

CI runs a fixed, derandomised set of examples so a run is reproducible and bounded; set
FABGEN_FUZZ_EXAMPLES=5000 for a longer, random hunt (a failure prints the intent to
reproduce it).
"""

from __future__ import annotations

import copy
import os
import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import INVENTORIES

EXAMPLES = int(os.environ.get("FABGEN_FUZZ_EXAMPLES", "0"))
FUZZ = settings(max_examples=EXAMPLES or 150, derandomize=not EXAMPLES, deadline=None,
                suppress_health_check=list(HealthCheck), database=None)
# A mutated fabric larger than this is checked and planned but not rendered: rendering a
# 100k-GPU fabric is legitimate work (minutes), not what this test hunts.
RENDER_MAX_HOST_PORTS = 4096
HANG_SECONDS = 120  # a guard against an endless loop, not a measure of speed

TEXTS = {p.stem: p.read_text(encoding="utf-8") for p in INVENTORIES}
DATA = {name: yaml.safe_load(text) for name, text in TEXTS.items()}
# file:line:col: at the start of every error line (a warning line too).
POSITIONED = re.compile(r"^[^:\n]+\.yaml:\d+:\d+: ")

# Values that broke parsers and validators before: huge and negative numbers, NaN, text where
# numbers go, format templates, injections, deep and wide structures.
NASTY: list[Any] = [
    0, -1, 1, 7, 64, 65535, 65536, 2**31, 2**63, 10**19, -(10**19), 0.5, 1e308, float("inf"),
    float("nan"), True, False, None, "", " ", "0", "1e9", "400G", "1200G", "0G", "-400G",
    "3x400G", "9x100G", "1:0", "0:1", "1:1", "999999:1", "10.0.0.0/8", "10.0.0.0/33",
    "0.0.0.0/0", "255.255.255.255/32", "gpu{index:0999999999d}", "gpu{index:x}{index}",
    "{index!r}", "{0}", "{index.__class__}", "{index:{su}}", "gpu{", "a;reboot", "$(id)",
    "`id`", "x" * 300, "é", "\t", "\n", "--", "*", "0x7fff", "0x0001", "sonic", "eos", "nvue",
    "infiniband", "roce", "ndr", "xdr", "hdr", "auto", 3, "drop", "forward", "alert",
    [], {}, [1, 2, 3], [[[[[[]]]]]], {"a": {"b": {"c": {}}}}, ["*"], [None], {"": 1},
    list(range(100)),
]
# Keys added where they may or may not belong (a field of another section, or no field).
ADDED_KEYS = ["extra", "speed", "model", "ports", "breakout", "nodes", "planes", "mtu", "tiers",
              "name", "guids_file", "sm_host", "partitions", "traffic_classes", "classes",
              "storage", "management", "core", "spine", "scalable_unit", "oversubscription",
              "generation", "host_mtu", "rdma_devices", "netdevs", "numa_nodes", "gpus",
              "port_cages", "min_spines", "full_units", "profile", "sharp", "pkey", "hosts"]
YAML_BITS = ["&a ", "*a", "!!int ", "!!binary ", "!foo ", "%YAML 1.1\n", "---\n", "...\n",
             "<<: ", "? ", "- ", ": ", "[", "]", "{", "}", ",", "#", "|\n", ">\n", "'", '"',
             "\t", "\ufeff", "\x00", "\\", "~", "0x", "1_000", ".inf", ".nan"]


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _leaves(value, (*path, i))


def _get(node: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        node = node[part]
    return node


@st.composite
def data_mutation(draw: st.DrawFn) -> str:
    """An example, parsed, with a few values replaced, keys dropped or added, then dumped."""
    name = draw(st.sampled_from(sorted(DATA)))
    data = yaml.safe_load(TEXTS[name])
    for _ in range(draw(st.integers(1, 4))):
        paths = [p for p in _leaves(data) if p]
        path = draw(st.sampled_from(paths))
        parent = _get(data, path[:-1])
        action = draw(st.sampled_from(["value", "value", "value", "drop", "add", "copy"]))
        if action == "value":
            parent[path[-1]] = copy.deepcopy(draw(st.sampled_from(NASTY)))
        elif action == "drop":
            del parent[path[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(ADDED_KEYS))] = (
                copy.deepcopy(draw(st.sampled_from(NASTY))))
        elif action == "copy":
            # a subtree where another belongs: types and shapes that do not fit
            pristine = yaml.safe_load(TEXTS[name])
            other = draw(st.sampled_from([p for p in _leaves(pristine) if p]))
            parent[path[-1]] = _get(pristine, other)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


@st.composite
def text_mutation(draw: st.DrawFn) -> str:
    """An example's text with characters, YAML syntax or whole lines changed."""
    text = TEXTS[draw(st.sampled_from(sorted(TEXTS)))]
    for _ in range(draw(st.integers(1, 5))):
        lines = text.splitlines(keepends=True)
        i = draw(st.integers(0, max(len(lines) - 1, 0)))
        kind = draw(st.sampled_from(["insert", "delete", "line", "dup", "indent", "cut"]))
        if kind == "insert":
            at = draw(st.integers(0, len(text)))
            bit = draw(st.one_of(st.sampled_from(YAML_BITS), st.text(max_size=3)))
            text = text[:at] + bit + text[at:]
        elif kind == "delete" and text:
            at = draw(st.integers(0, len(text) - 1))
            text = text[:at] + text[at + draw(st.integers(1, 8)):]
        elif kind == "line" and lines:
            del lines[i]
            text = "".join(lines)
        elif kind == "dup" and lines:
            lines.insert(i, lines[draw(st.integers(0, len(lines) - 1))])
            text = "".join(lines)
        elif kind == "indent" and lines:
            lines[i] = " " * draw(st.integers(1, 4)) + lines[i]
            text = "".join(lines)
        elif kind == "cut":
            text = text[: draw(st.integers(0, len(text)))]
    return text


def _host_ports(text: str) -> int:
    try:
        data = yaml.safe_load(text)
        node = data["cluster"].get("node") or {}
        return int(data["cluster"]["nodes"]) * int(node.get("nics", 8)) * int(
            node.get("nic_ports", 1))
    except Exception:  # not even shaped like an intent: fabgen will say so
        return 0


@contextmanager
def _hang_guard(seconds: int) -> Iterator[None]:
    def hung(*_: object) -> None:
        raise TimeoutError(f"no answer within {seconds} s: a hang")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _run(cli, tmp_path: Path, text: str) -> None:  # type: ignore[no-untyped-def]
    work = tmp_path / f"case{len(list(tmp_path.iterdir()))}"
    work.mkdir()
    intent = work / "intent.yaml"
    intent.write_text(text, encoding="utf-8")
    out = work / "out"
    large = _host_ports(text) > RENDER_MAX_HOST_PORTS
    args = ("validate", str(intent)) if large else ("render", str(intent), "-o", str(out))
    with _hang_guard(HANG_SECONDS):
        result = cli("--no-color", *args)
    where = f"\n--- intent ---\n{text}\n--- stderr ---\n{result.err}"
    assert result.code in (0, 1), f"exit {result.code}{where}"
    assert "Traceback" not in result.err and "internal error" not in result.err, where
    if result.code == 0:
        if not large:
            assert (out / "manifest.json").is_file(), where
        return
    lines = result.err.splitlines()
    assert lines, f"exit 1 without a word{where}"
    for line in lines:
        assert POSITIONED.match(line), f"an error without file:line:col: {line!r}{where}"
    assert not out.exists(), f"a failed render wrote its output{where}"
    assert sorted(p.name for p in work.iterdir()) == ["intent.yaml"], where


@FUZZ
@given(text=data_mutation())
def test_mutated_values_never_crash(cli, tmp_path_factory: pytest.TempPathFactory,
                                    text: str) -> None:
    _run(cli, tmp_path_factory.mktemp("fuzz"), text)


@FUZZ
@given(text=text_mutation())
def test_mutated_text_never_crashes(cli, tmp_path_factory: pytest.TempPathFactory,
                                    text: str) -> None:
    _run(cli, tmp_path_factory.mktemp("fuzz"), text)
