"""Junos curly-brace text as a tree, and the candidate a push loads: the device's running
configuration with the statements fabgen owns (facts.OWNED) replaced by the render.

A statement is its words (`unit 0`, `family inet`, `address 10.0.0.1/31`, `mtu 9114`) and,
for a block, its children. Junos prints some paths flat (`family inet {`) and some nested; two
texts are compared as their flattened statement paths, which do not depend on that choice
(`interfaces et-0/0/0:0 unit 0 family inet mtu 9100` either way). All functions are pure.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

__all__ = [
    "MANAGEMENT",
    "Node",
    "bgp_neighbours",
    "build",
    "flatten",
    "management",
    "parse",
    "render",
]

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|/\*.*?\*/|#[^\n]*|[{};\[\]]|[^\s{};\[\]"]+', re.S)
# What the push session depends on and fabgen never writes: the whole `system` hierarchy but
# the host name (login, services, SSH, NETCONF), the management interfaces of Junos OS
# Evolved QFX (re0:mgmt-0, em0/em1; fxp0 on older platforms) and the management instance.
MANAGEMENT = (("system",), ("interfaces", "re0:mgmt-*"), ("interfaces", "em*"),
              ("interfaces", "fxp*"), ("routing-instances", "mgmt_junos"))


@dataclass
class Node:
    words: tuple[str, ...]
    children: list[Node] | None = None  # None: a leaf statement ending in `;`


def parse(text: str) -> list[Node]:
    """The statements of a curly-brace configuration. Comments (`/* */`, `#`) are dropped;
    `[ a b ]` stays one word group."""
    tokens = [t for t in _TOKEN.findall(text) if not t.startswith(("/*", "#"))]
    pos = 0

    def block(depth: int) -> list[Node]:
        nonlocal pos
        out: list[Node] = []
        words: list[str] = []
        while pos < len(tokens):
            tok = tokens[pos]
            pos += 1
            if tok == "[":
                end = tokens.index("]", pos)
                words.append("[ " + " ".join(tokens[pos:end]) + " ]")
                pos = end + 1
            elif tok == ";":
                if words:
                    out.append(Node(tuple(words)))
                words = []
            elif tok == "{":
                out.append(Node(tuple(words), block(depth + 1)))
                words = []
            elif tok == "}":
                if depth == 0:
                    raise ValueError("junos: unbalanced `}` in configuration text")
                return out
            else:
                words.append(tok)
        if depth:
            raise ValueError("junos: configuration text ends inside a block")
        if words:
            raise ValueError(f"junos: statement without `;` at the end: {' '.join(words)}")
        return out

    return block(0)


def _leaf_values(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    if words and words[-1].startswith("[ "):
        return [(*words[:-1], v) for v in words[-1][2:-2].split()]
    return [words]


def flatten(nodes: list[Node], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every statement as its full path of words (a leaf-list one path per value; a block
    with no children as its own path), in order."""
    out: list[tuple[str, ...]] = []
    for node in nodes:
        if node.children is None:
            out.extend((*prefix, *w) for w in _leaf_values(node.words))
        elif node.children:
            out.extend(flatten(node.children, (*prefix, *node.words)))
        else:
            out.append((*prefix, *node.words))
    return out


def render(nodes: list[Node], depth: int = 0) -> str:
    pad = "    " * depth
    lines = []
    for node in nodes:
        head = " ".join(node.words)
        if node.children is None:
            lines.append(f"{pad}{head};")
        else:
            lines.append(f"{pad}{head} {{")
            inner = render(node.children, depth + 1)
            if inner:
                lines.append(inner.rstrip("\n"))
            lines.append(f"{pad}}}")
    return "\n".join(lines) + ("\n" if lines else "")


def _matches(node: Node, pattern: str) -> bool:
    return fnmatch.fnmatchcase(" ".join(node.words), pattern) or \
        fnmatch.fnmatchcase(node.words[0] if node.words else "", pattern)


def _drop(nodes: list[Node], path: tuple[str, ...]) -> list[Node]:
    """`nodes` without the statements at `path` (one pattern per level)."""
    head, rest = path[0], path[1:]
    out = []
    for node in nodes:
        if not _matches(node, head):
            out.append(node)
        elif rest and node.children is not None:
            out.append(Node(node.words, _drop(node.children, rest)))
        # else: the owned statement itself, dropped
    return out


def _merge(base: list[Node], add: list[Node]) -> list[Node]:
    """`add`'s statements into `base`: a block with the same words is merged into, a leaf
    statement with the same words is not repeated, anything else is appended."""
    out = list(base)
    for node in add:
        same = next((i for i, b in enumerate(out) if b.words == node.words), None)
        if same is None:
            out.append(node)
        elif node.children is not None and out[same].children is not None:
            out[same] = Node(node.words, _merge(out[same].children or [], node.children))
    return out


def build(running: str, rendered: str, owned: tuple[tuple[str, ...], ...]) -> str:
    """The candidate: `running` without the statements fabgen owns, then the render's."""
    tree = parse(running)
    for path in owned:
        tree = _drop(tree, path)
    tree = [n for n in tree if n.children != []]  # a section left empty by the drop
    return render(_merge(tree, parse(rendered)))


def management(text: str) -> set[tuple[str, ...]]:
    """The flattened statements of the management part of a configuration (see MANAGEMENT),
    the host name excepted (fabgen sets it)."""
    keep: set[tuple[str, ...]] = set()
    for path in flatten(parse(text)):
        if path[:2] == ("system", "host-name"):
            continue
        for pattern in MANAGEMENT:
            if len(path) >= len(pattern) and all(
                    fnmatch.fnmatchcase(w, p) for w, p in zip(path, pattern, strict=False)):
                keep.add(path)
    return keep


def bgp_neighbours(text: str) -> list[str]:
    """The BGP neighbour addresses a configuration names (`protocols bgp group G neighbor A`)."""
    out = []
    for path in flatten(parse(text)):
        if (len(path) >= 6 and path[:2] == ("protocols", "bgp") and path[4] == "neighbor"
                and path[5] not in out):
            out.append(path[5])
    return out
