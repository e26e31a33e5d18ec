"""How `fabgen diff` reads NVUE's startup.yaml: by `nv set` path; against a backup only the
paths fabgen owns, a running config's `nv config show -o yaml` merged the same way."""

from __future__ import annotations

import fnmatch
from typing import Any

from fabgen.diff.kind import Kind, kind
from fabgen.diff.model import Change
from fabgen.diff.structured import diff_values, parse_yaml

__all__ = ["KINDS", "NVUE_PATHS", "nvue_set", "owned_nvue"]

# NVUE paths (two levels under `set`) fabgen renders (target.py); a glob per level.
# `interface eth0` (management), `system aaa`, `service`... are the device's.
NVUE_PATHS = (("interface", "swp*"), ("interface", "lo"), ("qos", "*"), ("router", "bgp"),
              ("vrf", "default"), ("system", "hostname"), ("system", "telemetry"),
              ("system", "forwarding"))



def nvue_set(docs: list[Any]) -> dict[str, Any]:
    """What an NVUE config sets: startup.yaml's and `nv config show -o yaml`'s list of
    `- set: {...}` (and `- header: {...}`, the revision's metadata, left out), or a bare
    mapping of what is set."""
    merged: dict[str, Any] = {}
    for doc in docs:
        items = doc if isinstance(doc, list) else [doc]
        for item in items:
            if not isinstance(item, dict):
                continue
            # A revision's items (`set`, `header`, `unset`), or a bare mapping of what is set.
            revision = "set" in item or "header" in item or "unset" in item
            part = item.get("set") if revision else item
            if isinstance(part, dict):
                _merge(merged, part)
    return merged


def _merge(into: dict[str, Any], part: dict[str, Any]) -> None:
    for k, v in part.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            _merge(into[k], v)
        else:
            into[k] = v


def owned_nvue(backup: dict[str, Any], render: dict[str, Any]
               ) -> tuple[dict[str, Any], dict[str, Any]]:
    """NVUE: the paths of NVUE_PATHS and any the render sets (two levels deep), both sides."""
    rendered = {(a, b) for a, sub in render.items() if isinstance(sub, dict) for b in sub}

    def owned(a: str, b: str) -> bool:
        return (a, b) in rendered or any(
            fnmatch.fnmatchcase(a, x) and fnmatch.fnmatchcase(b, y) for x, y in NVUE_PATHS)

    def cut(tree: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for a, sub in tree.items():
            if not isinstance(sub, dict):
                if any(a == x for x, _ in NVUE_PATHS) or a in render:
                    out[a] = sub
                continue
            kept = {b: v for b, v in sub.items() if owned(str(a), str(b))}
            if kept:
                out[a] = kept
        return out

    return cut(backup), cut(render)


def _startup(backup: str, render: str, where: tuple[str, str], owned: bool,
             backup_is_old: bool) -> list[Change]:
    bw, rw = where if backup_is_old else (where[1], where[0])
    bs, rs = nvue_set(parse_yaml(backup, bw)), nvue_set(parse_yaml(render, rw))
    if owned:
        bs, rs = owned_nvue(bs, rs)
    a, z = ([{"set": bs}], [{"set": rs}]) if backup_is_old else ([{"set": rs}], [{"set": bs}])
    return diff_values(a, z)


KINDS: tuple[Kind, ...] = (
    kind("nvue", "nvue/*/startup.yaml", "keys", "yaml",
         "NVUE startup.yaml by `nv set` path (`set interface swp1s0 link mtu`)",
         at="set-path", os="nvue", device=True, backup=_startup),
)
