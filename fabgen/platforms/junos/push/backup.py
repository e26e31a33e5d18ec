"""How `fabgen diff` reads Junos's files: the pushed curly-brace configuration statement by
statement (its flattened paths, so `family inet {` printed flat or nested compares the same);
against a backup (Oxidized's `show configuration`, or /config/juniper.conf) only the statements
fabgen owns (facts.OWNED), on both sides. The JSON and `set` renderings are compared as two
renders are; no device holds them."""

from __future__ import annotations

import fnmatch

from fabgen.diff.kind import Kind, kind
from fabgen.diff.model import Change
from fabgen.diff.sections import diff_lines
from fabgen.platforms.junos import facts
from fabgen.platforms.junos.push.candidate import flatten, parse

__all__ = ["KINDS", "owned_statements"]


def _owned(path: tuple[str, ...]) -> bool:
    for pattern in facts.OWNED:
        if len(path) >= len(pattern) and all(
                fnmatch.fnmatchcase(w, p) or fnmatch.fnmatchcase(w.split()[0], p)
                for w, p in zip(path, pattern, strict=False)):
            return True
    return False


def owned_statements(text: str, owned: bool) -> list[str]:
    """The configuration's statements as flattened paths, one a line, in order; with `owned`
    only those fabgen owns."""
    return [" ".join(p) for p in flatten(parse(text)) if not owned or _owned(p)]


def _conf(backup: str, render: str, where: tuple[str, str], owned: bool,
          backup_is_old: bool) -> list[Change]:
    b, r = owned_statements(backup, owned), owned_statements(render, owned)
    return diff_lines(b, r) if backup_is_old else diff_lines(r, b)


KINDS: tuple[Kind, ...] = (
    kind("junos", "junos/*.conf", "lines", "text",
         "Junos configuration (what the push loads), statement by statement", at="lines",
         os="junos", device=True, backup=_conf),
    kind("junos-json", "junos/*.json", "keys", "json",
         "Junos configuration as Juniper YANG JSON (what libyang validates), key by key",
         os="junos", device=True, backed_up=False),
    kind("junos-set", "junos/*.set", "lines", "text",
         "Junos configuration as `set` commands, line by line", at="lines", os="junos",
         device=True, backed_up=False),
    kind("junos-notes", "junos/NOTES.txt", "lines", "text",
         "what the Junos configurations take from no public source, line by line", at="lines"),
)
