"""NVUE candidates: startup.yaml, a deep merge of the rendered `set` tree into the running one,
replacing whole subtrees only at the keys in NVUE_OWNED (each rendered interface, `qos`,
`router bgp`, `vrf <name> router bgp`, `system hostname`); other rendered leaves are set,
nothing else is removed (eth0, vrf mgmt, system aaa/ntp/ssh, service ... stay). NVUE_ALWAYS
removes owned paths the render lacks.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ["NVUE_ALWAYS", "NVUE_OWNED", "nvue_candidate", "nvue_management", "nvue_neighbours",
           "nvue_set"]

# Paths (in the `set` tree) whose whole subtree fabgen replaces when it renders them.
NVUE_OWNED: tuple[tuple[str, ...], ...] = (
    ("interface", "*"), ("qos",), ("router", "bgp"), ("vrf", "*", "router", "bgp"),
    ("system", "hostname"), ("router", "adaptive-routing"), ("system", "forwarding", "ecmp-hash"))
# Owned paths removed from the running tree when the render lacks them (adaptive routing that
# an earlier push turned on goes when the fabric is back to hash load balancing).
NVUE_ALWAYS: tuple[tuple[str, ...], ...] = (("router", "adaptive-routing"),)


def _owned_path(path: tuple[str, ...]) -> bool:
    return any(len(p) == len(path) and all(a in ("*", b) for a, b in zip(p, path, strict=True))
               for p in NVUE_OWNED)


def _merge(have: Any, want: Mapping[Any, Any], path: tuple[str, ...]) -> dict[Any, Any]:
    out: dict[Any, Any] = copy.deepcopy(dict(have)) if isinstance(have, Mapping) else {}
    for key, value in want.items():
        where = (*path, str(key))
        if _owned_path(where) or not isinstance(value, Mapping):
            out[key] = copy.deepcopy(value)
        else:
            out[key] = _merge(out.get(key), value, where)
    return out


def nvue_set(ops: Any) -> dict[Any, Any]:
    """The `set` tree of an NVUE config (a list of operations), several `set`s merged."""
    merged: dict[Any, Any] = {}
    for op in ops if isinstance(ops, list) else []:
        if isinstance(op, Mapping) and isinstance(op.get("set"), Mapping):
            merged = _merge(merged, op["set"], ())
    return merged


def nvue_candidate(running: Any, render: Any) -> list[dict[str, Any]]:
    """The running config's `header` (if any) and its `set` tree with the render merged in
    (see NVUE_OWNED). Raises ValueError for a render that is not a list of `set` operations."""
    if not isinstance(render, list) or not all(
            isinstance(op, Mapping) and set(op) <= {"set", "header"} for op in render):
        raise ValueError("the rendered startup.yaml is not a list of `set` operations")
    headers = [dict(op) for op in (running if isinstance(running, list) else [])
               if isinstance(op, Mapping) and "header" in op]
    want = nvue_set(render)
    merged = _merge(nvue_set(running), want, ())
    for path in NVUE_ALWAYS:
        *parents, leaf = path
        have: Any = merged
        wanted: Any = want
        for key in parents:
            have = have.get(key) if isinstance(have, Mapping) else None
            wanted = wanted.get(key) if isinstance(wanted, Mapping) else None
        if isinstance(have, dict) and leaf in have and not (
                isinstance(wanted, Mapping) and leaf in wanted):
            del have[leaf]
    return [*headers, {"set": merged}]


def nvue_neighbours(render: Any) -> list[str]:
    """The BGP neighbours the render configures in VRF default."""
    tree = nvue_set(render)
    bgp = (((tree.get("vrf") or {}).get("default") or {}).get("router") or {}).get("bgp") or {}
    return [str(n) for n in (bgp.get("neighbor") or {})]


def nvue_management(config: Any, host: str | None = None) -> dict[str, Any]:
    """What an NVUE session depends on: eth0 (and any interface with the address fabgen
    connected to): its `ip` subtree (addresses, VRF, gateway) and that VRF; `system ssh*`."""
    tree = nvue_set(config)
    facts: dict[str, Any] = {}
    for name, cfg in (tree.get("interface") or {}).items():
        ip = (cfg.get("ip") or {}) if isinstance(cfg, Mapping) else {}
        addresses = [str(a) for a in (ip.get("address") or {})]
        if str(name) == "eth0" or (host is not None
                                   and any(a.startswith(f"{host}/") for a in addresses)):
            facts[f"interface {name} ip"] = ip
            vrf = ip.get("vrf")
            if vrf:
                facts[f"vrf {vrf}"] = (tree.get("vrf") or {}).get(vrf)
    for key, value in (tree.get("system") or {}).items():
        if str(key).startswith("ssh"):
            facts[f"system {key}"] = value
    return facts
