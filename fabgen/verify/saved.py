"""Saved `show` outputs of a switch: which command goes into which file, and their parsers.

`fabgen verify` reads a directory with one sub-directory per switch, named like the switch,
holding the files below (the collect scripts of the `collect` target write exactly these):

SONiC (sonic-utilities show commands; FRR's vtysh):
  lldp.txt          show lldp table
  interfaces.txt    show interfaces status
  bgp.json          vtysh -c 'show ip bgp summary json'
  pfc.txt           show pfc counters
  pfcwd.txt         show pfcwd stats
  pfcwd-config.txt  show pfcwd config
  bfd.json          vtysh -c 'show bfd peers json'        (only when underlay.bfd is on)
  device-metadata.json  sonic-cfggen -d --var-json DEVICE_METADATA
  golden.json       sudo cat /etc/sonic/golden_config_db.json
  bgp-device-global.json  sonic-cfggen -d --var-json BGP_DEVICE_GLOBAL
Cumulus NVUE (NVUE; lldpd's lldpctl; FRR's vtysh):
  interfaces.json   nv show interface -o json
  lldp.json         lldpctl -f json
  bgp.json          vtysh -c 'show ip bgp summary json'
  bfd.json          vtysh -c 'show bfd peers json'        (only when underlay.bfd is on)

BFD runs in FRR's bfdd on both (SONiC's `neighbor FABRIC bfd` from CONFIG_DB through frrcfgd,
which also makes supervisord start bfdd; NVUE's `neighbor ... bfd`, which Cumulus hands to the
same FRR), so one command and one parser serve both. Without BFD in the plan bfdd has no
sessions and may not run at all, so the file is neither collected nor read. The two SONiC JSON
files show the routing design (frr_mgmt_framework_config, docker_routing_config_mode, type) and
whether golden_config_db.json keeps it through db_migrator; DEVICE_METADATA also holds the
running HwSKU. bgp-device-global.json shows a `TSA` that frrcfgd will never apply.

The text outputs are tabulate tables (a header line, a line of dashes per column, rows); the
parser cuts columns at the dash runs, so an empty cell or a cell with spaces stays in place.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "COMMANDS",
    "SavedFile",
    "bfd_peers",
    "bgp_peers",
    "commands",
    "device_metadata",
    "lldp_neighbors_lldpctl",
    "nvue_interfaces",
    "parse_number",
    "parse_tables",
]


@dataclass(frozen=True, slots=True)
class SavedFile:
    name: str
    command: str  # run on the switch (as admin / cumulus; sudo where it needs root)
    what: str
    bfd_only: bool = False  # saved and read only when the plan runs BFD


COMMANDS: dict[str, tuple[SavedFile, ...]] = {
    "sonic": (
        SavedFile("lldp.txt", "show lldp table", "LLDP neighbours"),
        SavedFile("interfaces.txt", "show interfaces status", "port state, speed, MTU"),
        SavedFile("bgp.json", "vtysh -c 'show ip bgp summary json'", "BGP sessions"),
        SavedFile("pfc.txt", "show pfc counters", "PFC frames per priority"),
        SavedFile("pfcwd.txt", "show pfcwd stats", "PFC watchdog storms"),
        SavedFile("pfcwd-config.txt", "show pfcwd config", "PFC watchdog settings"),
        SavedFile("bfd.json", "vtysh -c 'show bfd peers json'", "BFD sessions", bfd_only=True),
        SavedFile("device-metadata.json", "sonic-cfggen -d --var-json DEVICE_METADATA",
                  "routing mode and role (DEVICE_METADATA)"),
        SavedFile("golden.json", "sudo cat /etc/sonic/golden_config_db.json",
                  "the routing mode db_migrator keeps (golden_config_db.json)"),
        SavedFile("bgp-device-global.json", "sonic-cfggen -d --var-json BGP_DEVICE_GLOBAL",
                  "a TSA drain request (BGP_DEVICE_GLOBAL|STATE tsa_enabled)"),
    ),
    "nvue": (
        SavedFile("interfaces.json", "nv show interface -o json", "port state, speed, MTU"),
        SavedFile("lldp.json", "sudo lldpctl -f json", "LLDP neighbours"),
        SavedFile("bgp.json", "sudo vtysh -c 'show ip bgp summary json'", "BGP sessions"),
        SavedFile("bfd.json", "sudo vtysh -c 'show bfd peers json'", "BFD sessions",
                  bfd_only=True),
    ),
}


def commands(platform: str, bfd: bool) -> tuple[SavedFile, ...]:
    """The files saved and read for a platform's switch; BFD's only when the plan runs it."""
    return tuple(f for f in COMMANDS[platform] if bfd or not f.bfd_only)

_DASHES = re.compile(r"-+")
_RULE = re.compile(r"^\s*-+(\s+-+)*\s*$")


def parse_tables(text: str) -> list[list[dict[str, str]]]:
    """Every tabulate table of a `show` output, as rows of {header: cell}.

    A table starts at a line of dash runs under its header and ends at a blank line or a line
    of dashes alone (SONiC's "Total entries" footer).
    """
    lines = text.splitlines()
    tables: list[list[dict[str, str]]] = []
    i = 1
    while i < len(lines):
        rule = lines[i]
        if not _RULE.match(rule) or not lines[i - 1].strip():
            i += 1
            continue
        starts = [m.start() for m in _DASHES.finditer(rule)]
        if len(starts) < 2:
            i += 1
            continue
        bounds = list(zip(starts, [*starts[1:], None], strict=True))
        header = [lines[i - 1][a:b].strip() for a, b in bounds]
        rows = []
        i += 1
        while i < len(lines) and lines[i].strip() and not _RULE.match(lines[i]):
            rows.append({h: lines[i][a:b].strip() for h, (a, b) in zip(header, bounds,
                                                                       strict=True)})
            i += 1
        tables.append(rows)
    return tables


def parse_number(text: str) -> int | None:
    """A counter cell: "1,200" -> 1200; "N/A" or empty -> None."""
    cleaned = text.replace(",", "").strip()
    return int(cleaned) if cleaned.isdigit() else None


def _load_json(text: str, what: str) -> Any:
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
    data = _load_json(text, "bgp.json")
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
    data = _load_json(text, "bfd.json")
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
    data = _load_json(text, "lldp.json")
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


def nvue_interfaces(text: str) -> dict[str, dict[str, str]]:
    """{interface: {"oper", "speed", "mtu"}} of `nv show interface -o json` (link subtree)."""
    data = _load_json(text, "interfaces.json")
    out: dict[str, dict[str, str]] = {}
    if not isinstance(data, dict):
        return out
    for name, details in data.items():
        link = details.get("link", {}) if isinstance(details, dict) else {}
        if not isinstance(link, dict):
            continue
        state = link.get("oper-status", link.get("state", ""))
        if isinstance(state, dict):  # older NVUE: "state": {"up": {}}
            state = next(iter(state), "")
        out[str(name)] = {"oper": str(state),
                          "speed": str(link.get("speed", "")), "mtu": str(link.get("mtu", ""))}
    return out


def device_metadata(text: str, what: str, key: str = "localhost") -> dict[str, Any]:
    """DEVICE_METADATA|localhost from `sonic-cfggen -d --var-json DEVICE_METADATA` ({"localhost":
    {...}}) or from a golden_config_db.json ({"DEVICE_METADATA": {"localhost": {...}}}); {} for
    an empty file (no golden file on the switch). Another table's row the same way (`key`:
    BGP_DEVICE_GLOBAL's STATE)."""
    if not text.strip():
        return {}
    data = _load_json(text, what)
    if isinstance(data, dict) and isinstance(data.get("DEVICE_METADATA"), dict):
        data = data["DEVICE_METADATA"]
    local = data.get(key) if isinstance(data, dict) else None
    return local if isinstance(local, dict) else {}
