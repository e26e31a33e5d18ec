"""A bounded YAML 1.2 reader for intents: plain values with positions, and hard limits.

An intent repository may take pull requests from anyone, and CI runs fabgen on them, so reading
a file must end quickly, in little memory, with a `file:line:col` error whatever the bytes are.
ruamel.yaml's scanner and parser turn the text into events (they are iterative and report
their own errors with a position); the tree is built here from those events rather than by
ruamel's composer and constructor, which recurse once per nesting level (RecursionError),
convert 5,000-digit integers (ValueError), build timestamps, sets and arbitrary tagged objects,
and copy nothing but share every alias, so an alias bomb of a few hundred bytes only explodes
later, in whoever walks the tree.

Here every limit is checked while the events arrive: the file's size, the nesting depth (also
through aliases), the number of values the document holds once aliases are expanded (a billion
laughs stops at the limit, not at the billionth copy), the length of a scalar and the digits of
an integer. Scalars resolve by the YAML 1.2 core schema (null, bool, int, float, str; ruamel's
spelling of numbers, underscores included, so existing intents read as before); anything else
that is not a plain string (timestamps, `!!binary`, `!foo`, `%TAG`) is an error at its position.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.events import (
    AliasEvent,
    CollectionStartEvent,
    DocumentStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
)
from ruamel.yaml.reader import ReaderError

Pos = tuple[int, int]  # 1-based line and column


@dataclass(frozen=True)
class Limits:
    """What an intent may be. Each is far above what the largest real intent needs (the
    examples are about 2 KiB, 150 values and 4 levels deep) and low enough that ruamel's
    pure-Python scanner reaches any of them in a few tenths of a second
    (benchmarks/hostile_intents.py measures it)."""

    max_bytes: int = 128 * 1024
    max_depth: int = 32
    max_nodes: int = 5_000  # values (scalars, mappings, sequences) once aliases are expanded
    max_scalar: int = 4096  # characters; PATH_MAX, and no field takes more
    max_int_digits: int = 20  # 2**64 has 20 digits; the largest field (an ASN) has 10
    what: str = "an intent"  # the kind of file, as the limit errors name it


LIMITS = Limits()


class YamlInputError(Exception):
    """The text is not an intent-shaped YAML document; `line`/`col` are 1-based (0: unknown)."""

    def __init__(self, message: str, line: int = 0, col: int = 0) -> None:
        super().__init__(message)
        self.message, self.line, self.col = message, line, col


class Map(dict[str, Any]):
    """A YAML mapping with string keys (as the intent sees them) and where each came from."""

    __slots__ = ("key_pos", "merged", "pos", "value_pos")

    def __init__(self, pos: Pos) -> None:
        super().__init__()
        self.pos = pos
        self.key_pos: dict[str, Pos] = {}
        self.value_pos: dict[str, Pos] = {}
        self.merged: list[Map] = []  # `<<` sources, applied when the mapping ends

    def apply_merges(self) -> None:
        """YAML merge keys: the map's own keys win, then earlier merged maps over later ones.
        A merged key keeps the position where its source mapping wrote it."""
        for source in self.merged:
            for key, value in source.items():
                if key not in self:
                    self[key] = value
                    self.key_pos[key] = source.key_pos[key]
                    self.value_pos[key] = source.value_pos[key]
        self.merged = []


class Seq(list[Any]):
    """A YAML sequence and the position of each item."""

    __slots__ = ("item_pos", "pos")

    def __init__(self, pos: Pos) -> None:
        super().__init__()
        self.pos = pos
        self.item_pos: list[Pos] = []


# The YAML 1.2 core schema as ruamel.yaml spells it (its resolver's 1.2 patterns, underscores
# in numbers included), so a file means what it meant when ruamel built the tree. Timestamps
# are not in the core schema: `2024-01-01` is a string.
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_INT = re.compile(r"^(?:[-+]?0b[0-1_]+|[-+]?0o?[0-7_]+|[-+]?[0-9_]+|[-+]?0x[0-9a-fA-F_]+)$")
_FLOAT = re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
                          |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
                          |[-+]?\.[0-9_]+(?:[eE][-+][0-9]+)?
                          |[-+]?\.(?:inf|Inf|INF)
                          |\.(?:nan|NaN|NAN))$""", re.X)

_NUMBER_START = frozenset("-+0123456789.")
_CORE = "tag:yaml.org,2002:"
_SCALAR_TAGS = {f"{_CORE}{t}" for t in ("str", "int", "float", "bool", "null")}


def _short(tag: str) -> str:
    return "!!" + tag.removeprefix(_CORE) if tag.startswith(_CORE) else tag


def _pos(event: Event) -> Pos:
    mark = event.start_mark
    return (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)


class _Reader:
    """Events in, one bounded tree out (an explicit stack: no recursion, whatever the depth)."""

    def __init__(self, limits: Limits, text: str) -> None:
        self.limits, self.text = limits, text
        self.nodes = 0
        # anchor -> (node, values it stands for, its height in levels)
        self.anchors: dict[str, tuple[Any, int, int]] = {}
        # Open collections: [node, start event, size so far, height of the tallest child,
        # pending key (maps), key position, key is a plain `<<`].
        self.stack: list[list[Any]] = []
        self.root: Any = None
        self.root_seen = False

    def count(self, n: int, pos: Pos) -> None:
        self.nodes += n
        if self.nodes > self.limits.max_nodes:
            raise YamlInputError(
                f"more than {self.limits.max_nodes:,} values once aliases are expanded "
                f"(fabgen's limit for {self.limits.what}; aliases may not multiply a "
                "document)", *pos)

    def depth_check(self, height: int, pos: Pos) -> None:
        if len(self.stack) + height > self.limits.max_depth:
            raise YamlInputError(f"nested deeper than {self.limits.max_depth} levels (fabgen's "
                                 f"limit for {self.limits.what})", *pos)

    def event(self, ev: Event) -> None:
        if isinstance(ev, DocumentStartEvent):
            self.document(ev)
        elif isinstance(ev, ScalarEvent):
            self.count(1, _pos(ev))
            self.add(self.scalar(ev), 1, 0, ev, ev.anchor)
        elif isinstance(ev, AliasEvent):
            anchor = ev.anchor
            if anchor not in self.anchors:
                raise YamlInputError(f"alias *{anchor} names no anchor &{anchor} completed "
                                     "before it (a value cannot contain itself)", *_pos(ev))
            node, size, height = self.anchors[anchor]
            self.depth_check(height, _pos(ev))
            self.count(size, _pos(ev))
            self.add(node, size, height, ev, None)
        elif isinstance(ev, CollectionStartEvent):
            pos = _pos(ev)
            self.depth_check(1, pos)
            self.count(1, pos)
            tag = ev.tag
            want = f"{_CORE}map" if isinstance(ev, MappingStartEvent) else f"{_CORE}seq"
            if tag is not None and tag not in ("!", want):
                raise YamlInputError(f"tag {_short(tag)} is not supported: {self.limits.what} "
                                     "holds plain YAML mappings, lists and values", *pos)
            node = Map(pos) if isinstance(ev, MappingStartEvent) else Seq(pos)
            self.stack.append([node, ev, 1, 0, None, None, False])
        elif isinstance(ev, MappingEndEvent | SequenceEndEvent):
            node, start, size, height, *_ = self.stack.pop()
            if isinstance(node, Map):
                node.apply_merges()
            self.add(node, size, height + 1, start, start.anchor)

    def document(self, ev: DocumentStartEvent) -> None:
        pos = _pos(ev)
        if self.root_seen:
            raise YamlInputError("a second YAML document (after `---`); an intent file holds "
                                 "one", *pos)
        version = ev.version
        if version is not None and tuple(version) != (1, 2):
            raise YamlInputError(_VERSION_ONLY, *(_directive_line(self.text) or pos))
        if ev.tags:
            raise YamlInputError("%TAG directives are not supported in an intent", *pos)

    def scalar(self, ev: ScalarEvent) -> Any:
        value: str = ev.value
        pos = _pos(ev)
        if len(value) > self.limits.max_scalar:
            raise YamlInputError(f"a value of {len(value):,} characters (fabgen's limit is "
                                 f"{self.limits.max_scalar:,})", *pos)
        tag = ev.tag
        if tag is not None and tag != "!" and tag not in _SCALAR_TAGS:
            raise YamlInputError(f"tag {_short(tag)} is not supported: {self.limits.what} "
                                 "holds plain YAML values (strings, numbers, true/false, "
                                 "null)", *pos)
        if tag is None and ev.style is None and ev.implicit[0]:
            return self.resolve(value, pos)
        if tag is None or tag in ("!", f"{_CORE}str"):
            return value
        kind = tag.removeprefix(_CORE)
        matcher = {"int": _INT, "float": _FLOAT, "bool": _BOOL, "null": _NULL}[kind]
        if matcher.match(value) or (kind == "float" and _INT.match(value)):
            resolved = self.resolve(value, pos, kind)
            if kind != "float" or not isinstance(resolved, str):
                return float(resolved) if kind == "float" else resolved
        raise YamlInputError(f"{value!r} is not a valid {_short(tag)}", *pos)

    def resolve(self, value: str, pos: Pos, kind: str | None = None) -> Any:
        """A plain scalar by the core schema (or as `kind` when an explicit tag asks)."""
        if kind in (None, "null") and _NULL.match(value):
            return None
        if kind in (None, "bool") and _BOOL.match(value):
            return value[0] in "tT"
        # ruamel.yaml tries the number patterns only on what starts like a number (`_0` is a
        # string); an explicit !!int or !!float tag asks for the pattern in any case.
        numeric = kind is not None or value[:1] in _NUMBER_START
        if numeric and kind in (None, "int", "float") and _INT.match(value):
            digits = value.lstrip("+-").replace("_", "")
            base = {"0b": 2, "0x": 16, "0o": 8}.get(digits[:2], 10)
            body = digits[2:] if base != 10 else digits
            if len(body) > self.limits.max_int_digits:
                raise YamlInputError(
                    f"an integer of {len(body):,} digits, beyond fabgen's limit of "
                    f"{self.limits.max_int_digits} (no intent field needs more)", *pos)
            sign = -1 if value.startswith("-") else 1
            try:
                return sign * int(body, base)
            except ValueError:
                return value  # `+_`: the pattern's underscores leave no digit; a string
        if numeric and kind in (None, "float") and _FLOAT.match(value):
            text = value.replace("_", "").lower()
            if text.lstrip("+-") == ".inf":
                return -math.inf if text.startswith("-") else math.inf
            if text == ".nan":
                return math.nan
            return float(text)
        return value

    def add(self, node: Any, size: int, height: int, ev: Event, anchor: str | None) -> None:
        """Attach a finished node to its parent (or make it the root); remember its anchor."""
        if anchor is not None:
            self.anchors[anchor] = (node, size, height)
        pos = _pos(ev)
        if not self.stack:
            self.root, self.root_seen = node, True
            return
        top = self.stack[-1]
        top[2] += size
        top[3] = max(top[3], height)
        parent = top[0]
        if isinstance(parent, Seq):
            parent.append(node)
            parent.item_pos.append(pos)
            return
        if top[4] is None:  # a key
            if isinstance(node, Map | Seq):
                raise YamlInputError("a mapping key must be a plain value, not a mapping or "
                                     "a list", *pos)
            merge = (isinstance(ev, ScalarEvent) and node == "<<" and ev.style is None
                     and ev.tag is None)
            key = _key_text(node)
            top[4], top[5], top[6] = key, pos, merge
            return
        key, key_pos, merge = top[4], top[5], top[6]
        top[4] = None
        if merge:
            parent.merged.extend(_merge_sources(node, key_pos))
            return
        if key in parent.key_pos:
            line = parent.key_pos[key][0]
            raise YamlInputError(f"duplicate key {key!r} (first defined at line {line})",
                                 *key_pos)
        parent[key] = node
        parent.key_pos[key] = key_pos
        parent.value_pos[key] = pos


def _key_text(value: Any) -> str:
    """A key as the intent's fields see it: `1:` and `"1":` are the same key."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


def _merge_sources(node: Any, pos: Pos) -> list[Map]:
    if isinstance(node, Map):
        return [node]
    if isinstance(node, Seq) and all(isinstance(m, Map) for m in node):
        return list(node)
    raise YamlInputError("`<<` merges a mapping or a list of mappings", *pos)


_VERSION_ONLY = ("%YAML directive: fabgen reads YAML 1.2 only (remove the directive; in 1.2 "
                 "yes/no/on/off are strings)")


def _directive_line(text: str) -> Pos | None:
    """Where the first `%YAML` directive is (the parser reports some without a position)."""
    for i, line in enumerate(text.splitlines()):
        if line.startswith("%YAML"):
            return i + 1, 1
    return None


def _flow_depth(text: str, limits: Limits) -> None:
    """Refuse `[[[[...` before ruamel's scanner sees it: for every open bracket it keeps a
    possible simple key, and re-checks them all at each token, so a line of thousands of
    brackets costs over a second before the first event arrives. A linear pass over the text
    (quotes and comments skipped) finds the depth first. A bracket inside a plain or block
    scalar counts too: a value with 33 nested brackets is no intent's."""
    depth, quote, comment, prev = 0, "", False, "\n"
    line, col = 1, 0
    for ch in text:
        col += 1
        if ch == "\n":
            line, col, comment = line + 1, 0, False
        elif comment:
            pass
        elif quote:
            if ch == quote and not (quote == '"' and prev == "\\"):
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and prev in " \t\n":
            comment = True
        elif ch in "[{":
            depth += 1
            if depth >= limits.max_depth:  # the document's own mapping is one level more
                raise YamlInputError(f"nested deeper than {limits.max_depth} levels (fabgen's "
                                     f"limit for {limits.what})", line, col)
        elif ch in "]}":
            depth = max(depth - 1, 0)
        prev = "" if prev == "\\" and ch == "\\" else ch


def parse(text: str, limits: Limits = LIMITS) -> Any:
    """The document's tree (Map, Seq or a scalar; None when empty), or YamlInputError."""
    _flow_depth(text, limits)
    reader = _Reader(limits, text)
    # The plain pure-Python parser: the round-trip one keeps comments, at 15 times the cost
    # on a file of comments; libyaml's would word its errors differently by platform.
    yaml = YAML(typ="safe", pure=True)
    last: Pos = (1, 1)  # where to blame an error the parser gives no position for
    try:
        for ev in yaml.parse(text):
            last = _pos(ev)
            reader.event(ev)
    except YamlInputError:
        raise
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        if "incompatible YAML document" in problem:
            raise YamlInputError(_VERSION_ONLY, *(_directive_line(text) or last)) from None
        raise YamlInputError(f"YAML syntax error: {problem}",
                             *((mark.line + 1, mark.column + 1) if mark else last)) from None
    except ReaderError as exc:  # a control character: the reader knows only its offset
        before = text[: exc.position]
        line, col = before.count("\n") + 1, exc.position - (before.rfind("\n") + 1) + 1
        char = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1])
        raise YamlInputError(f"character U+{char:04X} is not allowed in YAML (control "
                             "characters must be escaped in a double-quoted string)", line,
                             col) from None
    except YAMLError as exc:
        raise YamlInputError(f"YAML error: {' '.join(str(exc).split())[:200]}", *last) from None
    except (RecursionError, MemoryError) as exc:
        raise YamlInputError(f"the YAML parser gave up ({type(exc).__name__}); the file is too "
                             "large or too deeply nested", *last) from None
    except AssertionError as exc:
        if "version" not in str(exc):
            raise YamlInputError(f"the YAML parser cannot read this ({str(exc)[:200]})",
                                 *last) from None
        raise YamlInputError(_VERSION_ONLY, *(_directive_line(text) or last)) from None
    except Exception as exc:  # the parser's own crash on odd input: still one line, placed
        raise YamlInputError(f"the YAML parser cannot read this ({type(exc).__name__}: "
                             f"{str(exc)[:200]})", *last) from None
    return reader.root
