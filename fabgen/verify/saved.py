"""Parsers of saved `show` outputs that several platforms share: the tools they run, not the
OS (FRR's vtysh JSON, lldpd's `lldpctl -f json`). Each platform's own files, commands and
parsers are in its verify module (fabgen/platforms/<os>/verify.py).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["bfd_peers", "bgp_peers", "lldp_neighbors_lldpctl", "load_json"]


def load_json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what}: not JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:  # json recurses once per level: a hostile file nests 100,000
        raise ValueError(f"{what}: nested too deeply to be a saved output") from None


def bgp_peers(text: str) -> dict[str, dict[str, Any]]:
    """Peers of FRR's `show ip bgp summary json`: {address: {"state", "remoteAs", ...}}.

    FRR nests them under ipv4Unicast (and under a VRF name for `vrf all`); whichever object
    holds a "peers" map is taken.
    """
    data = load_json(text, "bgp.json")
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            peers = node.get("peers")
            if isinstance(peers, dict):
                return {str(k): v for k, v in peers.items() if isinstance(v, dict)}
            stack.extend(node.values())
    return {}


def bfd_peers(text: str) -> dict[str, dict[str, Any]]:
    """Sessions of FRR's `show bfd peers json`, by peer address.

    bfdd prints a JSON array with one object per session (bfdd/bfdd_vty.c __display_peer_json):
    "peer", "interface", "status" (up, down, init, shutdown), "diagnostic", and the local
    timers "receive-interval" / "transmit-interval" in ms; current releases add
    "detect-multiplier" (FRR's 2019 bfdd_vty.c did not print it, so it is read when present).
    """
    data = load_json(text, "bfd.json")
    if not isinstance(data, list):
        raise ValueError("bfd.json: not the JSON array `show bfd peers json` prints")
    return {str(p["peer"]): p for p in data if isinstance(p, dict) and "peer" in p}


def _name(value: Any) -> str:
    if isinstance(value, dict):
        value = value.get("value", "")
    if isinstance(value, list) and value:
        return _name(value[0])
    return str(value)


def lldp_neighbors_lldpctl(text: str) -> dict[str, list[tuple[str, str]]]:
    """{local port: [(neighbour system name, neighbour port ID)]} of `lldpctl -f json`.

    lldpd writes "interface" as a list of {port: details}, or as one object when there is a
    single neighbour; the chassis is keyed by the system name (or carries "name").
    """
    data = load_json(text, "lldp.json")
    lldp = data.get("lldp", {}) if isinstance(data, dict) else {}
    interfaces = lldp.get("interface", []) if isinstance(lldp, dict) else []
    if isinstance(interfaces, dict):
        interfaces = [interfaces]
    out: dict[str, list[tuple[str, str]]] = {}
    for entry in interfaces:
        if not isinstance(entry, dict):
            continue
        for port, details in entry.items():
            if not isinstance(details, dict):
                continue
            chassis = details.get("chassis", {})
            system = ""
            if isinstance(chassis, dict):
                if "name" in chassis:
                    system = _name(chassis["name"])
                else:
                    system = next((k for k in chassis if k != "id"), "")
            port_info = details.get("port", {})
            port_id = _name(port_info.get("id", "")) if isinstance(port_info, dict) else ""
            out.setdefault(str(port), []).append((system, port_id))
    return out


