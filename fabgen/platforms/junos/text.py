"""One Junos configuration dict (Juniper YANG, RFC 7951 JSON) in the three forms Junos loads.

- `json_text`: the dict itself, `{"junos-conf-root:configuration": ...}`, what libyang validates
  against Juniper's YANG (tests/platforms/junos/test_yang.py) and `load ... format json` takes.
- `curly_text`: the curly-brace text `show configuration` prints and `load override` takes;
  what the push driver sends (napalm `junos` detects the format from the text).
- `set_text`: `set` commands, one per leaf value (`load set`), for people and scripts.

How Junos spells a YANG node as text, for the statements fabgen writes (Juniper's YANG with
extensions, `junos:cli-feature`, says the same of these nodes; test_yang.py's cross-check
reads it): module prefixes are dropped; a list entry is `<list> <key> { ... }` with its key
leaves unnamed (a `name` key), or named (`drop-profile-map loss-priority any protocol any`);
the lists in HIDDEN print their entries without the list's keyword (`interfaces { et-0/0/0 {`,
`prefix-list p { 10.0.0.1/32; }`); the leaves in NOKEYWORD print their value alone
(`autonomous-system 65001;`); an `empty` leaf ([null]) or an empty presence container is
`<name>;`; a leaf-list is `<name> v;` or `<name> [ v1 v2 ];`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

__all__ = ["HIDDEN", "KEYS", "NOKEYWORD", "curly_text", "json_text", "set_text", "statements"]

# (parent container, list) whose entries print without the list keyword.
HIDDEN = frozenset({("interfaces", "interface"), ("prefix-list", "prefix-list-item")})
# (parent, leaf) printed as the value alone (`junos:cli-feature "nokeyword"`).
NOKEYWORD = frozenset({("autonomous-system", "as-number")})
# List keys other than `name` (printed with their keywords, in this order).
KEYS: dict[str, tuple[str, ...]] = {"drop-profile-map": ("loss-priority", "protocol")}
_QUOTE = frozenset(' \t;{}[]#"\'')
INDENT = "    "


def json_text(config: dict[str, Any]) -> str:
    """The YANG JSON, in the dict's own (Junos display) order."""
    return json.dumps(config, indent=4) + "\n"


def _bare(name: str) -> str:
    return name.split(":", 1)[1] if ":" in name else name


def _value(value: Any) -> str:
    text = str(value)
    if not text or any(c in _QUOTE for c in text):
        if '"' in text or "\n" in text:
            raise ValueError(f"junos: a value cannot hold a quote or a newline: {text!r}")
        return f'"{text}"'
    return text


def _entry_words(list_name: str, parent: str, entry: dict[str, Any]) -> list[str]:
    keys = KEYS.get(list_name, ("name",))
    words = [] if (parent, list_name) in HIDDEN else [list_name]
    for key in keys:
        if key != "name":
            words.append(key)
        words.append(_value(entry[key]))
    return words


def statements(node: dict[str, Any], parent: str = "") -> Iterator[tuple[list[str],
                                                                        dict[str, Any] | None]]:
    """The statements of a container, in order: (words, child container or None for a leaf
    statement). A list gives one statement per entry; an entry's child container is the
    entry without its keys."""
    for raw, value in node.items():
        name = _bare(raw)
        if isinstance(value, dict):
            only = list(value.items())
            if len(only) == 1 and (name, _bare(only[0][0])) in NOKEYWORD:
                yield [name, _value(only[0][1])], None  # `autonomous-system 65001;`
                continue
            yield [name], value
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            keys = KEYS.get(name, ("name",))
            for entry in value:
                rest = {k: v for k, v in entry.items() if k not in keys}
                yield _entry_words(name, parent, entry), rest
        elif value == [None]:
            yield [name], None
        elif isinstance(value, list):
            values = [_value(v) for v in value]
            shown = values[0] if len(values) == 1 else f"[ {' '.join(values)} ]"
            yield [shown] if (parent, name) in NOKEYWORD else [name, shown], None
        else:
            yield [_value(value)] if (parent, name) in NOKEYWORD else [name, _value(value)], None


def _root(config: dict[str, Any]) -> dict[str, Any]:
    (only,) = config.values()
    if not isinstance(only, dict):
        raise ValueError("junos: expected {configuration: {...}}")
    return only


def _curly(node: dict[str, Any], parent: str, depth: int, out: list[str]) -> None:
    pad = INDENT * depth
    for words, child in statements(node, parent):
        head = " ".join(words)
        if child:
            out.append(f"{pad}{head} {{")
            _curly(child, words[0], depth + 1, out)
            out.append(f"{pad}}}")
        else:
            out.append(f"{pad}{head};")


def curly_text(config: dict[str, Any]) -> str:
    out: list[str] = []
    _curly(_root(config), "", 0, out)
    return "\n".join(out) + "\n"


def _sets(node: dict[str, Any], parent: str, path: list[str], out: list[str]) -> None:
    for words, child in statements(node, parent):
        if child:
            _sets(child, words[0], [*path, *words], out)
        else:
            last = words[-1]
            if last.startswith("[ "):  # a leaf-list: one `set` per value
                out.extend(f"set {' '.join([*path, *words[:-1], v])}"
                           for v in last[2:-2].split())
            else:
                out.append(f"set {' '.join([*path, *words])}")


def set_text(config: dict[str, Any]) -> str:
    out: list[str] = []
    _sets(_root(config), "", [], out)
    return "\n".join(out) + "\n"
