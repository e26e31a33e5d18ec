"""Indented configs (a switch CLI's, FRR's) compared section by section, and any other text line by
line.

A config is a tree: each line is a command, and the lines indented under it are its section
(`interface Ethernet1/1` > `uc-tx-queue 3` > `random-detect ecn ...`). Two configs are
compared per section path, ignoring line order within a section, the `!` comments and the
`exit`/`end` lines that only close sections (what a switch CLI and FRR print in running configs
and what fabgen renders differ only there). A removed and an added line of the same section
and the same command are one change (`~`), so `mtu 9214` → `mtu 9000` reads as one.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from fabgen.diff.model import Change
from fabgen.natural import natural_key

# Lines that only close a section or the config (FRR: exit, exit-address-family, exit-vrf,
# exit-vni; switch CLIs and FRR: end).
_CLOSERS = re.compile(r"^(exit(-[a-z-]+)?|end)$")
@dataclass(slots=True)
class Node:
    line: str
    children: list[Node] = field(default_factory=list)


def parse_config(text: str, comment: str = "!") -> list[Node]:
    """The top-level sections of an indented config, comments and closers left out."""
    root: list[Node] = []
    stack: list[tuple[int, list[Node]]] = [(-1, root)]
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith(comment) or _CLOSERS.match(stripped):
            continue
        indent = len(raw) - len(raw.lstrip(" \t"))
        while len(stack) > 1 and stack[-1][0] >= indent:
            stack.pop()
        node = Node(stripped)
        stack[-1][1].append(node)
        stack.append((indent, node.children))
    return root


# FRR commands that open a block running to the next `!` or `exit` line; frrcfgd's
# templates write their lines unindented (`interface Ethernet0` / `link-detect` / `!`).
_FRR_OPENERS = re.compile(r"^(interface|router|vrf|route-map|line|key chain|bfd|pbr-map)\b")


def parse_frr(text: str) -> list[Node]:
    """FRR's config: as parse_config, with a block's unindented lines read as its own (a
    block opens at `interface`, `router`, `vrf`... and closes at `!` or `exit`)."""
    lines: list[str] = []
    inside = False
    for raw in text.splitlines():
        stripped = raw.strip()
        at_left = bool(stripped) and raw[0] not in " \t"
        if at_left and (stripped.startswith("!") or _CLOSERS.match(stripped)):
            inside = False
        elif at_left and _FRR_OPENERS.match(stripped):
            inside = True
        elif at_left and inside:
            raw = " " + raw
        lines.append(raw)
    return parse_config("\n".join(lines))


_BLOCK_HEAD = re.compile(r"^(Switch|Ca|Rt)\s")


def parse_blocks(text: str) -> list[Node]:
    """ibnetdiscover's format: a node per paragraph, headed by its `Switch`/`Ca` line, its
    ports (and the `switchguid=` line before it) as the section's lines; `#` lines alone are
    comments."""
    root: list[Node] = []
    for paragraph in re.split(r"\n[ \t]*\n", text):
        lines = [ln.strip() for ln in paragraph.splitlines()
                 if ln.strip() and not ln.lstrip().startswith("#")]
        if not lines:
            continue
        head = next((ln for ln in lines if _BLOCK_HEAD.match(ln)), lines[0])
        root.append(Node(head, [Node(ln) for ln in lines if ln is not head]))
    return root


def render_config(nodes: Iterable[Node], indent: str = "") -> Iterable[str]:
    for node in nodes:
        yield indent + node.line
        yield from render_config(node.children, indent + "   ")


def _flatten(node: Node, at: tuple[str, ...]) -> Iterable[Change]:
    """A whole section as changes of one side: its own line, then its lines, depth first."""
    yield Change("+", at, None, node.line)
    for child in node.children:
        yield from _flatten(child, (*at, node.line))


def _flip(changes: Iterable[Change]) -> Iterable[Change]:
    return (Change("-", c.at, c.new) for c in changes)


def diff_sections(old: list[Node], new: list[Node], at: tuple[str, ...] = ()) -> list[Change]:
    """Changes from `old` to `new` (the lines of one section), nested sections recursed."""
    out: list[Change] = []
    a: dict[str, list[Node]] = {}
    b: dict[str, list[Node]] = {}
    for nodes, index in ((old, a), (new, b)):
        for node in nodes:
            index.setdefault(node.line, []).append(node)
    removed: list[Node] = []
    added: list[Node] = []
    for line in sorted(a.keys() | b.keys(), key=natural_key):
        olds, news = a.get(line, []), b.get(line, [])
        for x, y in zip(olds, news, strict=False):
            if x.children or y.children:
                out.extend(diff_sections(x.children, y.children, (*at, line)))
        removed.extend(olds[len(news):])
        added.extend(news[len(olds):])
    out.extend(_pair(removed, added, at, old, new))
    out.sort(key=lambda c: [natural_key(p) for p in c.at])
    return out


def _identities(lines: Iterable[str]) -> dict[str, str]:
    """Each line's command: its shortest run of leading words no other line of the section
    starts with (`mtu` of `mtu 9214`; `neighbor 10.0.0.1 remote-as` of `neighbor 10.0.0.1
    remote-as 65101`, where several lines start `neighbor 10.0.0.1`)."""
    words = {line: line.split() for line in lines}
    counts: dict[tuple[str, ...], int] = {}
    for tokens in words.values():
        for k in range(1, len(tokens) + 1):
            counts[tuple(tokens[:k])] = counts.get(tuple(tokens[:k]), 0) + 1
    out = {}
    for line, tokens in words.items():
        k = next((k for k in range(1, len(tokens)) if counts[tuple(tokens[:k])] == 1),
                 len(tokens))
        out[line] = " ".join(tokens[:k])
    return out


def _pair(removed: list[Node], added: list[Node], at: tuple[str, ...],
          old: list[Node], new: list[Node]) -> list[Change]:
    """Removed and added lines of one section; a removed and an added line of the same
    command (their identities, among their own side's lines, are equal) are one change:
    `mtu 9214` → `mtu 9000`, but never one neighbour's line for another's."""
    out: list[Change] = []
    paired_old: set[int] = set()
    paired_new: set[int] = set()
    if removed and added:
        before = _identities(n.line for n in old)
        after = _identities(n.line for n in new)
        wanted: dict[str, int] = {}
        for j, a in enumerate(added):
            if not a.children:
                wanted.setdefault(after[a.line], j)
        for i, r in enumerate(removed):
            j = wanted.pop(before[r.line], -1) if not r.children else -1
            if j >= 0:
                paired_old.add(i)
                paired_new.add(j)
                out.append(Change("~", at, r.line, added[j].line))
    for i, r in enumerate(removed):
        if i not in paired_old:
            out.extend(_flip(_flatten(r, at)))
    for j, a in enumerate(added):
        if j not in paired_new:
            out.extend(_flatten(a, at))
    return out


# --- any text, line by line --------------------------------------------------------------

Locator = Callable[[list[str], int], str]


def line_locator(lines: list[str], index: int) -> str:
    return f"line {index + 1}"


def heading_locator(lines: list[str], index: int) -> str:
    """Markdown: the nearest heading above the line, and the line."""
    for i in range(index, -1, -1):
        if lines[i].startswith("#"):
            return f"{lines[i].lstrip('#').strip()}, line {index + 1}"
    return f"line {index + 1}"


def diff_lines(old: list[str], new: list[str], locate: Locator = line_locator) -> list[Change]:
    """Hunks of changed lines, each one change: `~` (lines replaced), `+` or `-`, located by
    the new side's line (the old side's for a removal), its value the block of lines."""
    start = 0
    while start < len(old) and start < len(new) and old[start] == new[start]:
        start += 1
    end = 0
    while end < len(old) - start and end < len(new) - start and \
            old[len(old) - 1 - end] == new[len(new) - 1 - end]:
        end += 1
    a, b = old[start:len(old) - end], new[start:len(new) - end]
    out: list[Change] = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        before = "\n".join(a[i1:i2]) if i2 > i1 else None
        after = "\n".join(b[j1:j2]) if j2 > j1 else None
        if after is None:
            out.append(Change("-", (locate(old, start + i1),), before))
        elif before is None:
            out.append(Change("+", (locate(new, start + j1),), None, after))
        else:
            out.append(Change("~", (locate(new, start + j1),), before, after))
    return out
