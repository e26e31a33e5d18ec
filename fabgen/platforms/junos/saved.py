"""Saved `show ... | display json` outputs of a Junos switch, parsed for `fabgen verify`.

Junos prints operational output as JSON by mapping its XML reply element for element: every
element becomes a key whose value is a list of objects, an element's text is that object's
`"data"`, its XML attributes are `"attributes"` (Juniper "JSON data format for operational
output": `{"bgp-information": [{"bgp-peer": [{"peer-address": [{"data": "10.0.0.1"}], ...}]}]}`).
The element names are those of the RPC replies (get-bgp-summary-information,
get-bfd-session-information, get-interface-information, get-lldp-neighbors-information,
get-cos-congestion-notification-information and get-cos-interface-map-information:
Juniper/yang 23.4R2-EVO junos-rpc-class-of-service, groupings
cos-congestion-notification-information-block and cos-interface-information-block).

Files, one directory per switch (SAVED: what verify/collect-junos.sh saves):
  bgp.json         show bgp summary | display json
  bfd.json         show bfd session | display json      (only when underlay.bfd is on)
  interfaces.json  show interfaces et-* | display json
  lldp.json        show lldp neighbors | display json
  cos.json         show class-of-service congestion-notification | display json
  cos-interfaces.json  show class-of-service interface | display json
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fabgen import underlay
from fabgen.intent.models import MonitoringSpec
from fabgen.platforms.contract.outputs import SavedFile
from fabgen.platforms.junos import cos, facts
from fabgen.qos import QosPlan
from fabgen.verify import findings as compare
from fabgen.verify.expect import ExpectedSwitch
from fabgen.verify.findings import Finding

__all__ = ["CLEAR", "COMMANDS", "SAVED", "Profile", "bfd_sessions", "bgp_peers",
           "congestion_notification", "findings", "interface_profiles", "interfaces",
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
    ("cos.json", "cli -c 'show class-of-service congestion-notification | display json'",
     "PFC and the PFC watchdog of each congestion notification profile", False),
    ("cos-interfaces.json", "cli -c 'show class-of-service interface | display json'",
     "the congestion notification profile of each port", False),
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


@dataclass(frozen=True, slots=True)
class Profile:
    """One congestion notification profile as `show class-of-service congestion-notification`
    prints it."""

    pfc_in: frozenset[str]  # code points the input map has PFC enabled on, as printed
    pause_queues: dict[str, tuple[int, ...]]  # output: 802.1p code point -> queues it pauses
    watchdog: dict[str, str] | None = field(default=None)  # pfc-wd-* without the prefix


def congestion_notification(text: str) -> dict[str, Profile]:
    """{profile name: Profile} of `show class-of-service congestion-notification`."""
    out = {}
    for p in _records(text, "cos.json", "cos-congestion-notification-information",
                      "cos-congestion-notification"):
        name = _data(p, "congestion-notification-name")
        if not name:
            continue
        enabled = frozenset(
            _data(item, "pfc-priority") for i in _items(p, "congestion-notification-input")
            for m in _items(i, "congestion-notification-map")
            for item in _items(m, "congestion-notification-map-item")
            if _data(item, "pfc-enable-state").lower() == "enabled")
        pauses = {
            _data(item, "pfc-priority"): tuple(
                int(q) for entry in _items(item, "pfc-flow-control-queue-list")
                if (q := _data(entry, "pfc-flow-control-queue")).isdigit())
            for o in _items(p, "congestion-notification-output")
            for m in _items(o, "congestion-notification-output-map")
            for item in _items(m, "congestion-notification-output-map-item")}
        wd = _items(p, "congestion-notification-pfc-watchdog")
        watchdog = ({k: _data(wd[0], f"pfc-wd-{k}") for k in
                     ("enabled", "action", "poll-interval", "detection", "recovery")}
                    if wd else None)
        out[name] = Profile(enabled, pauses, watchdog)
    return out


def _code_point(text: str, bits: int) -> int | None:
    """A code point as Junos prints it (`011`, `011010`); None otherwise."""
    if len(text) == bits and set(text) <= {"0", "1"}:
        return int(text, 2)
    return None


def _dscp(text: str) -> int | None:
    """An input map's DSCP: 6 bits (`011010`) or a number up to 63. Three bits (`011`) are an
    IEEE 802.1p code point, which a DSCP plan does not take: untagged RoCE would get no PFC."""
    if (value := _code_point(text, 6)) is not None:
        return value
    if text.isdigit() and _code_point(text, 3) is None and int(text) < 64:
        return int(text)
    return None


def _pfc(sw: ExpectedSwitch, ours: Mapping[str, Profile], plan: QosPlan,
         bound: Mapping[str, str] | None) -> list[Finding]:
    """fabgen's profiles (`ours`): PFC on the RDMA DSCPs only at input (DSCP-based PFC [DSCP-PFC]:
    RoCE is untagged), the RDMA queue paused by each lossless priority at output; and, from
    `show class-of-service interface` (`bound`: interface -> profile), every planned port bound
    to one of them. How a DSCP input map prints its code points is not verified on a switch:
    6 bits or a number are read as DSCP."""
    if not ours:
        return [Finding(sw.name, "", "pfc", "fabgen's congestion notification profiles "
                        f"({cos.PFC_PROFILE_PREFIX}<m>m)", "none")]
    out = []
    for name, prof in sorted(ours.items()):
        seen = {_dscp(c) for c in prof.pfc_in}
        if seen != set(plan.rdma.dscp):
            out.append(Finding(sw.name, "", "pfc", f"{name}: PFC enabled on DSCP "
                               f"{', '.join(map(str, sorted(plan.rdma.dscp)))} only",
                               "on " + (", ".join(sorted(prof.pfc_in)) or "none")))
        printed = {_code_point(c, 3): q for c, q in prof.pause_queues.items()}
        for prio in plan.pfc_priorities:
            if printed.get(prio) != (plan.rdma.queue,):
                got = printed.get(prio)
                out.append(Finding(sw.name, "", "pfc", f"{name}: priority {prio} pauses queue "
                                   f"{plan.rdma.queue}", "queues " + ", ".join(map(str, got))
                                   if got else "no output map entry"))
    if bound is not None:
        for p in sw.ports:
            profile = bound.get(p.name, "")
            if profile not in ours:
                out.append(Finding(sw.name, p.name, "pfc", "a congestion notification profile "
                                   f"of fabgen's ({cos.PFC_PROFILE_PREFIX}<m>m, in cos.json)",
                                   profile or "none"))
    return out


def interface_profiles(text: str) -> dict[str, str]:
    """{interface: congestion notification profile} of `show class-of-service interface`."""
    out = {}
    for i in _records(text, "cos-interfaces.json", "cos-interface-information",
                      "interface-map"):
        name = _data(i, "interface-name")
        if name:
            out[name] = _data(i, "interface-congestion-notification-map-name")
    return out


def _watchdog(sw: ExpectedSwitch, ours: Mapping[str, Profile],
              plan: QosPlan) -> list[Finding]:
    """The watchdog of fabgen's profiles (`ours`) against the plan. Junos configures
    `detection` as a number of polls, while the RPC reply describes pfc-wd-detection as
    milliseconds: either reading of the planned value is taken."""
    wd = plan.watchdog
    if not wd.enabled:
        return []
    want = (f"watchdog {wd.action}, poll {wd.poll_ms} ms, detection {wd.detection_ms} ms, "
            f"recovery {wd.restoration_ms} ms")
    out = []
    for name, prof in sorted(ours.items()):
        got = prof.watchdog
        if got is None or got["enabled"].lower() in ("", "disabled", "no"):
            out.append(Finding(sw.name, "", "pfc-watchdog", f"{name}: {want}", "no watchdog"))
            continue
        detection = {str(wd.detection_ms // wd.poll_ms), str(wd.detection_ms)}
        if (got["action"].lower() != wd.action or got["poll-interval"] != str(wd.poll_ms)
                or got["detection"] not in detection
                or got["recovery"] != str(wd.restoration_ms)):
            out.append(Finding(sw.name, "", "pfc-watchdog", f"{name}: {want}",
                               f"watchdog {got['action']}, poll {got['poll-interval']}, "
                               f"detection {got['detection']}, recovery {got['recovery']}"))
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
    if "cos.json" in texts and ("pfc" in checks or "pfc-watchdog" in checks):
        ours = {name: p for name, p in congestion_notification(texts["cos.json"]).items()
                if name.startswith(cos.PFC_PROFILE_PREFIX)}
        if "pfc" in checks:
            bound = (interface_profiles(texts["cos-interfaces.json"])
                     if "cos-interfaces.json" in texts else None)
            out += _pfc(sw, ours, plan, bound)
        if "pfc-watchdog" in checks:
            out += _watchdog(sw, ours, plan)
    return out
