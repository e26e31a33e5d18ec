"""Saved `show ... | display json` outputs of a Junos switch, parsed for `fabgen verify`.

Junos prints operational output as JSON by mapping its XML reply element for element: every
element becomes a key whose value is a list of objects, an element's text is that object's
`"data"`, its XML attributes are `"attributes"` (Juniper "JSON data format for operational
output": `{"bgp-information": [{"bgp-peer": [{"peer-address": [{"data": "10.0.0.1"}], ...}]}]}`).
The element names are those of the RPC replies (get-bgp-summary-information,
get-bfd-session-information, get-interface-information, get-lldp-neighbors-information).

Files, one directory per switch (SAVED: what verify/collect-junos.sh saves):
  bgp.json         show bgp summary | display json
  bfd.json         show bfd session | display json      (only when underlay.bfd is on)
  interfaces.json  show interfaces et-* | display json
  lldp.json        show lldp neighbors | display json
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fabgen import underlay
from fabgen.intent.models import MonitoringSpec
from fabgen.platforms.contract.outputs import SavedFile
from fabgen.platforms.junos import facts
from fabgen.qos import QosPlan
from fabgen.verify import findings as compare
from fabgen.verify.expect import ExpectedSwitch
from fabgen.verify.findings import Finding

__all__ = ["CLEAR", "COMMANDS", "SAVED", "bfd_sessions", "bgp_peers", "findings", "interfaces",
           "lldp_neighbors"]

# The collect script runs in the switch's Linux shell (`start shell` on Junos OS Evolved), where
# the Junos CLI takes one command with `cli -c` (Juniper "cli" shell command); `| display json`
# is the CLI's pipe, so it stays inside the quoted command.
COMMANDS: tuple[tuple[str, str, str, bool], ...] = (
    # (file, command, what, saved only when the plan runs BFD)
    ("bgp.json", "cli -c 'show bgp summary | display json'", "BGP sessions", False),
    ("bfd.json", "cli -c 'show bfd session | display json'", "BFD sessions", True),
    ("interfaces.json", "cli -c 'show interfaces et-* | display json'",
     "port state, speed, MTU", False),
    ("lldp.json", "cli -c 'show lldp neighbors | display json'", "LLDP neighbours", False),
)


def _load(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what}: not JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise ValueError(f"{what}: nested too deeply to be a saved output") from None


def _items(node: Any, key: str) -> list[dict[str, Any]]:
    """The objects under `key` (Junos writes every element as a list of objects)."""
    value = node.get(key, []) if isinstance(node, dict) else []
    if isinstance(value, dict):
        value = [value]
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _data(node: dict[str, Any], key: str) -> str:
    items = _items(node, key)
    return str(items[0].get("data", "")).strip() if items else ""


def _records(text: str, what: str, top: str, record: str) -> list[dict[str, Any]]:
    data = _load(text, what)
    if not isinstance(data, dict) or top not in data:
        raise ValueError(f"{what}: no {top!r} (is it `| display json` output?)")
    return [r for t in _items(data, top) for r in _items(t, record)]


def bgp_peers(text: str) -> dict[str, dict[str, str]]:
    """{peer address: {"state", "peer_as"}} of `show bgp summary | display json`; the address
    without Junos's `+port` suffix."""
    out = {}
    for peer in _records(text, "bgp.json", "bgp-information", "bgp-peer"):
        address = _data(peer, "peer-address").split("+")[0]
        if address:
            out[address] = {"state": _data(peer, "peer-state"),
                            "peer_as": _data(peer, "peer-as")}
    return out


def bfd_sessions(text: str) -> dict[str, dict[str, str]]:
    """{neighbour: {"state", "interface", "interval_s", "multiplier"}} of `show bfd session`."""
    out = {}
    for s in _records(text, "bfd.json", "bfd-session-information", "bfd-session"):
        neighbor = _data(s, "session-neighbor")
        if neighbor:
            out[neighbor] = {"state": _data(s, "session-state"),
                             "interface": _data(s, "session-interface"),
                             "interval_s": _data(s, "session-transmission-interval"),
                             "multiplier": _data(s, "session-adaptive-multiplier")}
    return out


def interfaces(text: str) -> dict[str, dict[str, str]]:
    """{interface: {"admin", "oper", "speed", "mtu"}} of `show interfaces ... | display json`."""
    out = {}
    for i in _records(text, "interfaces.json", "interface-information", "physical-interface"):
        name = _data(i, "name")
        if name:
            out[name] = {"admin": _data(i, "admin-status"), "oper": _data(i, "oper-status"),
                         "speed": _data(i, "speed"), "mtu": _data(i, "mtu")}
    return out


def lldp_neighbors(text: str) -> dict[str, list[tuple[str, str]]]:
    """{local port: [(system name, port id)]} of `show lldp neighbors | display json` (the
    local port is `lldp-local-port-id`, or `lldp-local-interface` on releases that print it)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for n in _records(text, "lldp.json", "lldp-neighbors-information",
                      "lldp-neighbor-information"):
        local = _data(n, "lldp-local-port-id") or _data(n, "lldp-local-interface")
        if local:
            out.setdefault(local, []).append((_data(n, "lldp-remote-system-name"),
                                              _data(n, "lldp-remote-port-id")))
    return out


# --- `fabgen verify`: the files as SavedFiles, and what they say against the plan ----------

SAVED = tuple(SavedFile(name, command, what, bfd_only=bfd) for name, command, what, bfd in COMMANDS)
# What the collect script says clears the counters verify reads.
CLEAR = "cli -c 'clear interfaces statistics all'"


def _ip_mtu(media: str) -> str:
    """Junos prints the media MTU, which counts the 14-byte Ethernet header [MTU]; the plan's
    MTU is the IP MTU."""
    return str(int(media) - facts.ETHERNET_OVERHEAD) if media.isdigit() else media


def _gbps(speed: str) -> str:
    """`400Gbps` as the plan says it (`400G`)."""
    return speed[:-3] if speed.lower().endswith("gbps") else speed


def _ms(seconds: str) -> int | str:
    try:
        return round(float(seconds) * 1000)
    except ValueError:
        return seconds


def findings(sw: ExpectedSwitch, texts: Mapping[str, str], plan: QosPlan,
             limits: MonitoringSpec, checks: tuple[str, ...],
             bfd: underlay.Bfd | None) -> list[Finding]:
    """Every difference between a Junos switch's saved outputs and its plan, through the
    shared comparers (verify.findings) in their shapes."""
    out: list[Finding] = []
    if "interfaces" in checks and "interfaces.json" in texts:
        state = {name: {"oper": row["oper"], "speed": _gbps(row["speed"]),
                        "mtu": _ip_mtu(row["mtu"])}
                 for name, row in interfaces(texts["interfaces.json"]).items()}
        out += compare.interfaces(sw, state)
    if "lldp" in checks and "lldp.json" in texts:
        out += compare.lldp(sw, lldp_neighbors(texts["lldp.json"]), limits)
    if "bgp" in checks and "bgp.json" in texts:
        peers = {ip: {"state": p["state"], "remoteAs": p["peer_as"] or None}
                 for ip, p in bgp_peers(texts["bgp.json"]).items()}
        out += compare.bgp(sw, peers)  # type: ignore[arg-type]
    if bfd is not None and "bfd" in checks and "bfd.json" in texts:
        # Junos prints its own transmit interval and the multiplier; the receive interval
        # it asks for is the same configured minimum-interval.
        sessions: dict[str, dict[str, object]] = {}
        for ip, s in bfd_sessions(texts["bfd.json"]).items():
            interval = _ms(s["interval_s"])
            multiplier = int(s["multiplier"]) if s["multiplier"].isdigit() else s["multiplier"]
            sessions[ip] = {"status": s["state"].lower(), "transmit-interval": interval,
                            "receive-interval": interval, "detect-multiplier": multiplier}
        out += compare.bfd(sw, sessions, bfd)
    return out
