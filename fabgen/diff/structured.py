"""JSON and YAML compared key by key: key order ignored, keys in natural order, list items
matched by their name where they have one, so an item inserted in a list is one addition and
not a change of every item after it.

A YAML file may hold several documents (`---`): each is matched with its counterpart by kind
and name (`HyperNode roce-256-su1`), as Kubernetes objects are, else by position.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterator
from typing import Any

import yaml

from fabgen.diff.model import Change, DiffError
from fabgen.natural import natural_key

# Rendered configs nest a few levels; the comparison recurses once per level.
MAX_DEPTH = 64

# Fields that name a list item, in order of preference: Kubernetes and config names, Prometheus
# rule groups and alerts, Kueue levels. An item is matched by the first field every item of
# both lists has, with values unique in each list.
NAME_FIELDS = ("name", "id", "alert", "record", "nodeLabel", "key")
Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_json(text: str, where: str) -> Any:
    """JSON has no aliases: only its depth is bounded (by the parser's recursion, and by
    diff_values' own)."""
    try:
        return json.loads(text)
    except RecursionError:  # the parser recurses once per level of nesting
        raise DiffError(f"{where}: nested too deeply to compare") from None
    except ValueError as exc:
        raise DiffError(f"{where}: cannot parse as json: {exc}") from None


def parse_yaml(text: str, where: str) -> list[Any]:
    """Every document of a YAML stream (an empty file is no document)."""
    try:
        docs = [d for d in yaml.load_all(text, Loader=Loader) if d is not None]
    except RecursionError:
        raise DiffError(f"{where}: nested too deeply to compare") from None
    except yaml.YAMLError as exc:
        raise DiffError(f"{where}: cannot parse as yaml: {' '.join(str(exc).split())}") \
            from None
    bounded(docs, len(text) + 1, where)
    return docs


def bounded(data: Any, size: int, where: str) -> None:
    """Refuse a document whose YAML aliases multiply it (a "billion laughs": safe_load shares
    each alias, and the diff would walk every copy) or that nests deeper than MAX_DEPTH.
    Without aliases every value takes at least one character of the text, so more values
    than characters means aliases; the walk stops there, so it costs at most `size` steps
    (a step per mapping or list: scalars are only counted)."""
    if not isinstance(data, dict | list):
        return
    budget = size + 1
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise DiffError(f"{where}: nested deeper than {MAX_DEPTH} levels; no rendered "
                            "config does")
        values = node.values() if isinstance(node, dict) else node
        budget -= len(values) + 1
        if budget < 0:
            raise DiffError(f"{where}: YAML aliases expand it beyond its own size; fabgen "
                            "compares plain documents")
        stack.extend((v, depth + 1) for v in values if isinstance(v, dict | list) and v)


def _key(value: Any) -> tuple[tuple[int, int | str], ...]:
    return natural_key(str(value))


def leaves(value: Any, at: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    """The scalar leaves of a value (an empty mapping or list is a leaf of its own)."""
    if isinstance(value, dict) and value:
        for k in sorted(value, key=_key):
            yield from leaves(value[k], (*at, str(k)))
    elif isinstance(value, list) and value:
        for label, item in _labelled(value):
            yield from leaves(item, (*at, label))
    else:
        yield at, value


def _doc_label(doc: Any) -> str | None:
    """`Kind name` of a Kubernetes object, else None."""
    if isinstance(doc, dict) and isinstance(doc.get("metadata"), dict):
        name = doc["metadata"].get("name")
        if isinstance(name, str):
            return f"{doc.get('kind', '')} {name}".strip()
    return None


Namer = Callable[[Any], str]


def _by_document(item: Any) -> str:
    return f"{{{_doc_label(item)}}}"


def _by_single_key(item: Any) -> str:
    return f"[{next(iter(item))}]"


def _by_field(name: str) -> Namer:
    return lambda item: f"[{name}={item[name]}]"


def _names(items: list[Any], namer: Namer, valid: Callable[[Any], bool]) -> bool:
    """Every item named by `namer`, each name once."""
    if not all(isinstance(i, dict) and valid(i) for i in items):
        return False
    return len({namer(i) for i in items}) == len(items)


def _namer(lists: tuple[list[Any], ...], documents: bool) -> Namer | None:
    """How to name the items of each of `lists` alike, or None when they have no unique
    names: Kubernetes objects by kind and name, items by a NAME_FIELDS field, one-key
    mappings (a `- set: {...}` list, a test catalog) by their key."""
    def ok(namer: Namer, valid: Callable[[Any], bool]) -> bool:
        return all(_names(items, namer, valid) for items in lists)

    if documents and ok(_by_document, lambda i: _doc_label(i) is not None):
        return _by_document
    for name in NAME_FIELDS:
        def named(item: Any, name: str = name) -> bool:
            value = item.get(name)
            return isinstance(value, str | int) and not isinstance(value, bool)

        if ok(_by_field(name), named):
            return _by_field(name)
    if ok(_by_single_key, lambda i: len(i) == 1):
        return _by_single_key
    return None


def _labelled(items: list[Any], documents: bool = False) -> list[tuple[str, Any]]:
    namer = _namer((items,), documents) if items else None
    if namer is None:
        return [(f"[{i}]", item) for i, item in enumerate(items)]
    return [(namer(item), item) for item in items]


def diff_values(old: Any, new: Any, at: tuple[str, ...] = (),
                documents: bool = False, where: str = "") -> list[Change]:
    """Key-level changes from `old` to `new`, in natural order of their paths.

    `documents`: `old` and `new` are the documents of YAML streams (matched by kind and name).
    """
    out: list[Change] = []
    try:
        _diff(old, new, at, out, documents)
    except RecursionError:  # JSON (unlike YAML, whose depth parse_yaml bounds) nested deep
        raise DiffError(f"{where or 'a document'}: nested too deeply to compare") from None
    return out


def _diff(a: Any, b: Any, at: tuple[str, ...], out: list[Change], documents: bool = False
          ) -> None:
    if type(a) is type(b) and a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict) and a and b:
        for k in sorted(a.keys() | b.keys(), key=_key):
            if k not in b:
                out.extend(Change("-", p, v) for p, v in leaves(a[k], (*at, str(k))))
            elif k not in a:
                out.extend(Change("+", p, None, v) for p, v in leaves(b[k], (*at, str(k))))
            else:
                _diff(a[k], b[k], (*at, str(k)), out)
        return
    if isinstance(a, list) and isinstance(b, list) and a and b:
        _diff_lists(a, b, at, out, documents)
        return
    if a in ({}, []) and isinstance(b, dict | list) and b:  # filled in: only additions
        out.extend(Change("+", p, None, v) for p, v in leaves(b, at))
        return
    if b in ({}, []) and isinstance(a, dict | list) and a:  # emptied: only removals
        out.extend(Change("-", p, v) for p, v in leaves(a, at))
        return
    old, new = dict(leaves(a, at)), dict(leaves(b, at))
    if len(old) == len(new) == 1 and at in old and at in new:
        out.append(Change("~", at, a, b))
        return
    out.extend(Change("-", p, v) for p, v in old.items())
    out.extend(Change("+", p, None, v) for p, v in new.items())


def _diff_lists(a: list[Any], b: list[Any], at: tuple[str, ...], out: list[Change],
                documents: bool) -> None:
    namer = _namer((a, b), documents)
    if namer is not None:
        old = {namer(i): i for i in a}
        new = {namer(i): i for i in b}
        for label in sorted(old.keys() | new.keys(), key=_key):
            if label not in new:
                out.extend(Change("-", p, v) for p, v in leaves(old[label], (*at, label)))
            elif label not in old:
                out.extend(Change("+", p, None, v) for p, v in leaves(new[label], (*at, label)))
            else:
                _diff(old[label], new[label], (*at, label), out)
        return
    # No names: align the two lists (an inserted item is one addition), each item by its text.
    text_a = [json.dumps(i, sort_keys=True, default=str) for i in a]
    text_b = [json.dumps(i, sort_keys=True, default=str) for i in b]
    matcher = difflib.SequenceMatcher(None, text_a, text_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag == "replace" and i2 - i1 == j2 - j1:
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                _diff(a[i], b[j], (*at, f"[{j}]"), out)
            continue
        for i in range(i1, i2):
            out.extend(Change("-", p, v) for p, v in leaves(a[i], (*at, f"[{i}]")))
        for j in range(j1, j2):
            out.extend(Change("+", p, None, v) for p, v in leaves(b[j], (*at, f"[{j}]")))
