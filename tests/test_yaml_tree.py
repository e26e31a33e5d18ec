"""The bounded YAML reader: same values and positions as ruamel.yaml on real intents, and every
limit an error at its place (issues 15 and 18: alias bombs, deep nesting, huge integers)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from fabgen.errors import FabgenError
from fabgen.intent import load, yaml_tree
from fabgen.intent.loader import _plain, read_source
from fabgen.intent.yaml_tree import Limits, Map, Seq, YamlInputError, parse
from tests.conftest import INVENTORIES, ROOT

SMALL = Limits(max_bytes=1000, max_depth=4, max_nodes=50, max_scalar=10, max_int_digits=3)


def _ruamel_plain(node: Any) -> Any:
    if isinstance(node, CommentedMap):
        return {str(k): _ruamel_plain(v) for k, v in node.items()}
    if isinstance(node, CommentedSeq):
        return [_ruamel_plain(v) for v in node]
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    return str(node)


def _positions(ours: Any, theirs: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """Every key/value/item position in both trees (1-based), to compare."""
    out: list[tuple[str, Any, Any]] = []
    if isinstance(ours, Map):
        for key in ours:
            kl, kc, vl, vc = theirs.lc.data[key]
            out.append((f"{path}.{key}:key", ours.key_pos[key], (kl + 1, kc + 1)))
            out.append((f"{path}.{key}", ours.value_pos[key], (vl + 1, vc + 1)))
            out += _positions(ours[key], theirs[key], f"{path}.{key}")
    elif isinstance(ours, Seq):
        for i, item in enumerate(ours):
            line, col = theirs.lc.item(i)
            out.append((f"{path}[{i}]", ours.item_pos[i], (line + 1, col + 1)))
            out += _positions(item, theirs[i], f"{path}[{i}]")
    return out


def _ruamel_reads(path: Path) -> bool:
    try:
        YAML(typ="rt").load(path.read_text(encoding="utf-8"))
    except Exception:  # RecursionError, ValueError, YAML errors alike
        return False
    return True


# The examples and every error case that ruamel.yaml reads (the rest are syntax errors,
# not UTF-8, or the crashes of issue 18).
READABLE = [p for p in [*INVENTORIES, *sorted((ROOT / "tests" / "errors").glob("*.yaml"))]
            if _ruamel_reads(p)]


@pytest.mark.parametrize("path", READABLE, ids=lambda p: p.name)
def test_same_values_and_positions_as_ruamel(path: Path) -> None:
    """Where ruamel.yaml's round-trip loader reads a file without error, the tree holds the
    same values at the same line and column, so every existing intent reads as before."""
    text = path.read_text(encoding="utf-8")
    theirs = YAML(typ="rt").load(text)
    try:
        ours = parse(text)
    except YamlInputError as exc:
        # Ours refuses more: only for the limits and unsupported features it names.
        assert any(word in exc.message for word in (
            "limit", "tag", "%YAML", "duplicate")), exc.message
        return
    assert _plain(ours) == _ruamel_plain(theirs)
    pairs = _positions(ours, theirs)
    assert pairs or not theirs, "the comparison must cover some positions"
    assert [(p, a) for p, a, _ in pairs] == [(p, b) for p, _, b in pairs]


# Plain scalars made of the characters numbers, booleans and nulls are spelled with.
SCALARS = st.text(alphabet="0123456789+-._eExXoObBaAfFinNltTrRuUsS~", min_size=1, max_size=8)


@settings(max_examples=400, deadline=None)
@given(SCALARS)
def test_plain_scalars_resolve_as_ruamel_does(value: str) -> None:
    try:
        theirs = YAML(typ="rt").load(f"a: {value}\n")
    except Exception:  # not a plain scalar, or one ruamel fails on
        return
    if not isinstance(theirs, CommentedMap):
        return
    expected = _ruamel_plain(theirs)["a"]
    got = parse(f"a: {value}\n")["a"]
    if isinstance(expected, float) and math.isnan(expected):
        assert isinstance(got, float) and math.isnan(got)
    else:
        assert (type(got), got) == (type(expected), expected)


@pytest.mark.parametrize(("text", "message", "pos"), [
    ("a: [[[[[1]]]]]\n", "nested deeper than 4 levels", (1, 7)),
    ("a: &x [[1]]\nb: [[*x]]\n", "nested deeper than 4 levels", (2, 6)),
    ("a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\nb: [*a, *a, *a, *a, *a]\n",
     "more than 50 values once aliases are expanded", (2, 17)),
    ("a: abcdefghijk\n", "a value of 11 characters", (1, 4)),
    ("a: 1234\n", "an integer of 4 digits, beyond fabgen's limit of 3", (1, 4)),
    ("a: 0x1234\n", "an integer of 4 digits", (1, 4)),
    ("a: 1_2_3\n", None, None),
])
def test_limits(text: str, message: str | None, pos: tuple[int, int] | None) -> None:
    if message is None:
        assert parse(text, SMALL) == {"a": 123}
        return
    with pytest.raises(YamlInputError) as info:
        parse(text, SMALL)
    assert message in info.value.message
    assert (info.value.line, info.value.col) == pos


@pytest.mark.parametrize(("text", "message", "pos"), [
    ("%YAML 1.1\n---\na: 1\n", "%YAML directive: fabgen reads YAML 1.2 only", (1, 1)),
    ("%YAML 1.9\n---\na: 1\n", "%YAML directive: fabgen reads YAML 1.2 only", (1, 1)),
    ("a: 1\n%YAML 9.9\nb: 2\n", "%YAML directive: fabgen reads YAML 1.2 only", (2, 1)),
    ("%TAG !e! tag:example.com,2000:\n---\na: 1\n", "%TAG directives are not supported",
     (2, 1)),
    ("a: !!binary aGk=\n", "tag !!binary is not supported", (1, 4)),
    ("a: !!set {x}\n", "tag !!set is not supported", (1, 4)),
    ("a: !!int x\n", "'x' is not a valid !!int", (1, 4)),
    ("a: *nowhere\n", "alias *nowhere names no anchor", (1, 4)),
    ("a: &x [*x]\n", "alias *x names no anchor", (1, 8)),
    ("? [a]\n: 1\n", "a mapping key must be a plain value", (1, 3)),
    ("a: 1\n'a': 2\n", "duplicate key 'a' (first defined at line 1)", (2, 1)),
    ("1: x\n'1': y\n", "duplicate key '1' (first defined at line 1)", (2, 1)),
    ("a: 1\n---\nb: 2\n", "a second YAML document", (2, 1)),
    ("<<: 5\n", "`<<` merges a mapping or a list of mappings", (1, 1)),
    ("a: [1\n", "YAML syntax error", (2, 1)),
])
def test_refused_with_position(text: str, message: str, pos: tuple[int, int]) -> None:
    with pytest.raises(YamlInputError) as info:
        parse(text)
    assert message in info.value.message
    assert (info.value.line, info.value.col) == pos


def test_core_schema_values() -> None:
    tree = parse("a: 2024-01-01\nb: yes\nc: 0o17\nd: 0x1F\ne: -.inf\nf: ~\ng: !!str 12\n"
                 "h: !!float 3\ni: 010\n")
    # Timestamps are not in YAML 1.2's core schema, nor yes/no booleans: both are strings.
    assert tree == {"a": "2024-01-01", "b": "yes", "c": 15, "d": 31, "e": -math.inf,
                    "f": None, "g": "12", "h": 3.0, "i": 10}


def test_merge_keys_own_keys_win_and_positions_follow_the_source() -> None:
    tree = parse("base: &b {x: 1, y: 2}\nother: &o {y: 9, z: 3}\n"
                 "m:\n  <<: [*b, *o]\n  x: 5\n")
    assert tree["m"] == {"x": 5, "y": 2, "z": 3}
    assert tree["m"].value_pos["x"] == (5, 6)  # its own key
    assert tree["m"].value_pos["y"] == (1, 20)  # where the first merged map wrote it


def test_aliases_share_one_value_and_count_every_copy() -> None:
    tree = parse("a: &a [1, 2]\nb: *a\n")
    assert tree["b"] is tree["a"]
    assert tree.value_pos["b"] == (2, 4)
    # root, a, [1, 2] (3), b, [[1, 2], [1, 2]] (7): 13 values once expanded
    with pytest.raises(YamlInputError):
        parse("a: &a [1, 2]\nb: [*a, *a]\n", Limits(max_nodes=12))
    parse("a: &a [1, 2]\nb: [*a, *a]\n", Limits(max_nodes=13))


def test_file_size_limit(tmp_path: Path) -> None:
    limit = yaml_tree.LIMITS.max_bytes
    path = tmp_path / "big.yaml"
    path.write_text("name: t\n" + "# padding\n" * (limit // 10))
    with pytest.raises(FabgenError) as info:
        read_source(path)
    assert str(info.value) == f"{path}:1:1: the file is larger than {limit // 1024} KiB, " \
                              "fabgen's limit for an intent"


def test_a_device_is_not_read() -> None:
    """`fabgen validate /dev/zero` must not read forever: a device is refused unread."""
    zero = Path("/dev/zero")
    if not zero.exists():
        pytest.skip("no /dev/zero on this system")
    with pytest.raises(FabgenError, match="is a character device, not a file"):
        load(zero)
