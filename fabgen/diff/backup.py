"""Comparing a device's backup with the render: the building blocks each platform's device
configs use (fabgen/platforms/<os>/push/backup.py), on what fabgen owns in a running config,
cut the same way on both sides.

A switch's running config holds much that fabgen never renders: management interfaces,
users, AAA, NTP, the platform's own tables. Against a backup, `fabgen diff` keeps of each side
only the sections, tables or paths fabgen owns: those a platform lists (so a section fabgen
stops rendering still shows as a removal) and any the render holds. The same cut applies to
both sides, so a backup identical to the render shows no drift (tests/test_diff_backups.py
holds every platform to it, and every section a golden render holds to its lists).
"""

from __future__ import annotations

from typing import Any

from fabgen.diff.kind import Kind
from fabgen.diff.model import Change
from fabgen.diff.sections import (
    Node,
    diff_lines,
    diff_sections,
    parse_blocks,
    parse_config,
    parse_frr,
)

__all__ = ["by_lines", "by_sections", "owned_sections", "sections"]


def sections(kind: Kind, text: str) -> list[Any]:
    """A sectioned file's top-level sections, parsed as its kind says."""
    if kind.parser == "blocks":
        return parse_blocks(text)
    if kind.parser == "frr":
        return parse_frr(text)
    return parse_config(text, kind.parser)


_ROUTES = ("ip route ", "ipv6 route ")


def owned_sections(backup: list[Node], render: list[Node], static: tuple[str, ...]
                   ) -> tuple[list[Node], list[Node]]:
    """Top-level sections: those starting with one of `static` and any the render has, both
    sides."""
    rendered = {n.line for n in render}

    def keep(node: Node) -> bool:
        if node.line.startswith(_ROUTES) and " vrf " in node.line:
            return node.line in rendered  # a management VRF's routes are the device's
        return node.line.startswith(static) or node.line.rstrip() in static \
            or node.line in rendered

    return [n for n in backup if keep(n)], [n for n in render if keep(n)]


def by_sections(kind: Kind, backup: str, render: str, owned: tuple[str, ...] | None,
                backup_is_old: bool) -> list[Change]:
    """Section by section; with `owned`, only the sections fabgen owns (owned_sections)."""
    b, r = sections(kind, backup), sections(kind, render)
    if owned is not None:
        b, r = owned_sections(b, r, owned)
    return diff_sections(b, r) if backup_is_old else diff_sections(r, b)


def by_lines(backup: str, render: str, backup_is_old: bool) -> list[Change]:
    """Line by line."""
    old, new = (backup, render) if backup_is_old else (render, backup)
    return diff_lines(old.splitlines(), new.splitlines())
