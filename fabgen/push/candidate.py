"""Candidates: replace what fabgen owns, keep what the device owns.

A render has no management section (management interface and VRF, users, AAA, NTP, syslog...):
pushing it as a whole-config replace would delete those and cut the session off. So every push
builds its candidate from the device's running config, with the parts fabgen owns replaced by
the render and every other part carried over unchanged. Each platform's candidate module
(fabgen/platforms/<os>/push/candidate.py) says what fabgen owns of its config; here are the
pieces they share: CLI configs as top-level sections (an indented config's header line and the
lines under it, as switch CLIs and FRR write them), the sections of a running config fabgen does not
own, the BGP neighbours of a `router bgp` section, and the guard.

Each platform's `management()` extracts what the session depends on (the management
interface, or the interface carrying the address fabgen connected to, its VRF and routes,
SSH); a candidate that would remove or change any of it is refused before anything is applied
(`lost_management`), as a last guard. All functions here are pure: text or parsed data in, text
or data out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# --- CLI configs: a header line and the indented lines under it (FRR's section syntax too) ------

_CLOSERS = ("exit", "exit-vrf", "exit-address-family")  # FRR writes `exit` at column 0


def cli_sections(text: str) -> list[list[str]]:
    """Top-level sections of an indented CLI config (FRR's too): a header line (not indented)
    and the indented lines under it. Column-0 `!` comments, `end` and blank lines are dropped; FRR's
    column-0 `exit` closing a block stays with that block."""
    sections: list[list[str]] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        if line[0] in " \t" or (line in _CLOSERS and sections):
            if sections:
                sections[-1].append(line)
            continue
        if line.startswith("!") or line == "end":
            continue
        sections.append([line])
    return sections


def _plain(header: str) -> str:
    """`no ip routing` and `ip routing` are the same section."""
    return header[3:] if header.startswith("no ") else header


def _kind(header: str, kinds: Iterable[str]) -> str | None:
    plain = _plain(header)
    return next((k for k in kinds if plain == k or plain.startswith(k + " ")), None)


def carried_sections(running: str, render: str, kinds: tuple[str, ...],
                     always: tuple[str, ...] = ()) -> list[list[str]]:
    """The running config's sections that fabgen does not own, in running order."""
    rendered = cli_sections(render)
    headers = {_plain(s[0]) for s in rendered}
    owned_kinds = {k for s in rendered if (k := _kind(s[0], kinds)) is not None}
    return [s for s in cli_sections(running)
            if _plain(s[0]) not in headers and _kind(s[0], kinds) not in owned_kinds
            and _kind(s[0], always) is None]


def render_body(render: str) -> list[str]:
    lines = render.splitlines()
    while lines and lines[-1].strip() in ("", "end"):
        lines.pop()
    return lines


def bgp_neighbours(text: str) -> list[str]:
    """The peers of the (first) `router bgp` section of a CLI config (FRR's too), in order: names
    with `remote-as`, `interface` or a peer-group membership; peer-group definitions are not
    peers. Only the section's first level (not `vrf X` or address-family sub-blocks)."""
    for section in cli_sections(text):
        if not section[0].startswith("router bgp "):
            continue
        children = [x for x in section[1:] if x[:1] in (" ", "\t")]  # not FRR's `exit`
        depth = min((len(x) - len(x.lstrip()) for x in children), default=0)
        groups: set[str] = set()
        peers: list[str] = []
        for raw in children:
            if len(raw) - len(raw.lstrip()) != depth:
                continue
            w = raw.split()
            if len(w) < 3 or w[0] != "neighbor":
                continue
            if w[2:] in (["peer-group"], ["peer", "group"]):
                groups.add(w[1])
            elif w[2] in ("remote-as", "interface", "peer-group") or w[2:4] == ["peer", "group"]:
                peers.append(w[1])
        return [p for p in dict.fromkeys(peers) if p not in groups]
    return []


# --- the guard ----------------------------------------------------------------------------------

def lost_management(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """Management facts of the running config that the candidate removes or changes, by name
    (a `username` line shows only the user, never its secret)."""
    lost = [key for key, value in before.items() if after.get(key) != value]
    return [" ".join(k.split()[:2]) if k.startswith("username ") else k for k in lost]
