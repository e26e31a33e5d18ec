"""Stable text for generated files: JSON (sorted keys, two-space indent, trailing newline) and
block-style YAML (sorted keys, no anchors).

orjson writes exactly what `json.dumps(obj, indent=2, sort_keys=True)` writes for the ASCII data
fabgen produces (every name is validated to be ASCII), about 15 times faster: at 100k GPUs the
pure-Python pretty printer was most of the render time.

YAML goes through libyaml's emitter (C, PyYAML's CSafeDumper) where it writes byte for byte
what PyYAML's own Python emitter writes, which is about ten times slower: when the document is
a mapping or a list of mappings, lists, strings, integers, booleans and None, and every string
in it (keys too) is non-empty printable ASCII. The two emitters differ on control characters
and line breaks (libyaml folds a multi-line double-quoted string elsewhere) and on empty keys;
such a document goes through the Python emitter, so the bytes never depend on which one ran.
On that path the YAML node tree is also built here, in one pass that checks the strings, as
SafeRepresenter would build it (its per-value dispatch was most of the time left), and each
distinct scalar is resolved to its implicit tag once. tests/test_serialize.py holds the fast
path to PyYAML's own output.
"""

from __future__ import annotations

import io
from typing import Any

import orjson
import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE


def json_text(obj: Any) -> str:
    return orjson.dumps(obj, option=_OPTIONS).decode("ascii")


class PythonDumper(yaml.SafeDumper):
    """yaml.safe_dump's dumper, writing a value shared by several keys out in full each time
    (no `&id001` anchors and `*id001` aliases)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


# PyYAML's wheels ship libyaml; built without it, yaml has no CSafeDumper and the Python
# emitter writes every document.
_LIBYAML: bool = yaml.__with_libyaml__
_CBase: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


# Each distinct scalar's implicit tag, as the Python resolver gives it (libyaml asks it for
# every scalar it writes). Pure for a value: no path resolvers are registered on the
# SafeDumper. Emptied when it grows past _RESOLVED_MAX entries, to bound its memory.
_RESOLVED: dict[tuple[str, tuple[bool, ...]], str] = {}
_RESOLVED_MAX = 200_000


class CDumper(_CBase):  # type: ignore[misc]
    """PythonDumper on libyaml's emitter, each scalar's tag resolved once (_RESOLVED)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True

    def resolve(self, kind: type, value: Any, implicit: Any) -> str:
        if kind is not ScalarNode:
            tag: str = super().resolve(kind, value, implicit)
            return tag
        key = (value, tuple(implicit))  # libyaml passes [plain, quoted] as a list
        cached = _RESOLVED.get(key)
        if cached is None:
            if len(_RESOLVED) >= _RESOLVED_MAX:
                _RESOLVED.clear()
            cached = _RESOLVED[key] = super().resolve(kind, value, implicit)
        return cached


def yaml_text(data: dict[str, Any] | list[Any], *, width: int = 80) -> str:
    """Block-style YAML, keys sorted, no anchors, lines folded at `width` where a string
    allows: the same bytes whichever emitter writes them (see the module docstring)."""
    if _LIBYAML:
        try:
            root = _node(data)
        except _NotPlain:
            pass
        else:
            stream = io.StringIO()
            dumper = CDumper(stream, default_flow_style=False, width=width,
                             allow_unicode=False, sort_keys=True)
            dumper.open()
            dumper.serialize(root)
            dumper.close()
            return stream.getvalue()
    text: str = yaml.dump(data, Dumper=PythonDumper, sort_keys=True, default_flow_style=False,
                          width=width, allow_unicode=False)
    return text


class _NotPlain(Exception):
    """The document holds something the fast path leaves to PyYAML's representer."""


_TAG = "tag:yaml.org,2002:"


def _node(data: Any) -> Node:
    """SafeRepresenter's node for `data` (block style, keys sorted), for the types and strings
    the fast path takes; raises _NotPlain at anything else (floats, tuples, subclasses, a
    string libyaml would write differently)."""
    kind = type(data)
    if kind is str:
        if not data or not data.isascii() or not data.isprintable():
            raise _NotPlain
        return ScalarNode(_TAG + "str", data)
    if kind is dict:
        try:
            items = sorted(data.items())
        except TypeError:  # keys of mixed types: SafeRepresenter leaves them unsorted
            raise _NotPlain from None
        return MappingNode(_TAG + "map", [(_node(k), _node(v)) for k, v in items],
                           flow_style=False)
    if kind is list:
        return SequenceNode(_TAG + "seq", [_node(item) for item in data], flow_style=False)
    if kind is int:
        return ScalarNode(_TAG + "int", str(data))
    if kind is bool:
        return ScalarNode(_TAG + "bool", "true" if data else "false")
    if data is None:
        return ScalarNode(_TAG + "null", "null")
    raise _NotPlain
