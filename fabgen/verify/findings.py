"""The neutral comparison of one switch's state with its plan: the state each platform parses
from its own saved outputs (ports, LLDP neighbours, BGP and BFD sessions) against what the
fabric says the switch should show, as Findings. Pure functions; the platforms' verify modules
parse, these compare."""

from __future__ import annotations

from dataclasses import dataclass

from fabgen import underlay
from fabgen.intent.models import MonitoringSpec
from fabgen.verify.expect import ExpectedSwitch

__all__ = ["Finding", "bfd", "bgp", "interfaces", "lldp"]


@dataclass(frozen=True, slots=True)
class Finding:
    device: str
    port: str  # interface, BGP neighbour address or "" for the whole switch
    check: str
    expected: str
    actual: str

    @property
    def message(self) -> str:
        where = f"{self.device} {self.port}" if self.port else self.device
        return f"{where}: {self.check}: expected {self.expected}, got {self.actual}"


def _speed(gbps: int) -> str:
    return f"{gbps}G"


def interfaces(sw: ExpectedSwitch, state: dict[str, dict[str, str]]) -> list[Finding]:
    out = []
    for p in sw.ports:
        row = state.get(p.name)
        if row is None:
            out.append(Finding(sw.name, p.name, "interfaces", f"a port to {p.peer}",
                               "not in the output"))
            continue
        if row["oper"].lower() != "up":
            out.append(Finding(sw.name, p.name, "interfaces", f"up (cabled to {p.peer} "
                               f"{p.peer_port})", row["oper"] or "no state"))
        if row["speed"].upper() != _speed(p.speed_gbps):
            out.append(Finding(sw.name, p.name, "interfaces", f"speed {_speed(p.speed_gbps)}",
                               row["speed"] or "none"))
        if row["mtu"] != str(sw.mtu):
            out.append(Finding(sw.name, p.name, "interfaces", f"MTU {sw.mtu}",
                               row["mtu"] or "none"))
    return out


def lldp(sw: ExpectedSwitch, neighbors: dict[str, list[tuple[str, str]]],
          limits: MonitoringSpec) -> list[Finding]:
    out = []
    for p in sw.ports:
        if not (p.peer_is_switch or limits.host_lldp):
            continue
        want = f"{p.peer} {'|'.join(p.peer_port_ids)}"
        seen = neighbors.get(p.name, [])
        if not seen:
            out.append(Finding(sw.name, p.name, "lldp", want, "no LLDP neighbour"))
            continue
        if not any((name == p.peer or name.startswith(p.peer + ".")) and port in p.peer_port_ids
                   for name, port in seen):
            got = ", ".join(f"{name} {port}" for name, port in seen)
            out.append(Finding(sw.name, p.name, "lldp", want, got))
    return out


def bgp(sw: ExpectedSwitch, peers: dict[str, dict[str, object]]) -> list[Finding]:
    out = []
    for s in sw.sessions:
        peer = peers.get(s.peer_ip)
        want = f"Established with {s.peer} AS{s.peer_asn} via {s.port}"
        if peer is None:
            out.append(Finding(sw.name, s.peer_ip, "bgp", want, "no such neighbour"))
            continue
        state = str(peer.get("state", ""))
        if state != "Established":
            out.append(Finding(sw.name, s.peer_ip, "bgp", want, state or "no state"))
        remote = peer.get("remoteAs")
        if remote is not None and str(remote) != str(s.peer_asn):
            out.append(Finding(sw.name, s.peer_ip, "bgp", f"remote AS {s.peer_asn}",
                               f"AS{remote}"))
    return out


def bfd(sw: ExpectedSwitch, peers: dict[str, dict[str, object]],
         bfd: underlay.Bfd) -> list[Finding]:
    """Every BGP peer has a BFD session that is up and runs the plan's timers (`peers` by
    address, as FRR's `show bfd peers json` keys them: "status", "diagnostic",
    "transmit-interval", "receive-interval", "detect-multiplier"). A session's local intervals
    are the configured ones, whatever the peer asks for, so a drifted profile shows even while
    the session is up."""
    out = []
    timers = (f"transmit {bfd.interval_ms} ms, receive {bfd.interval_ms} ms, "
              f"multiplier {bfd.multiplier}")
    for s in sw.sessions:
        peer = peers.get(s.peer_ip)
        want = f"BFD up with {s.peer} via {s.port}"
        if peer is None:
            out.append(Finding(sw.name, s.peer_ip, "bfd", want, "no BFD session"))
            continue
        status = str(peer.get("status", ""))
        if status != "up":
            diagnostic = str(peer.get("diagnostic", ""))
            got = status or "no status"
            if diagnostic and diagnostic != "ok":
                got += f" ({diagnostic})"
            out.append(Finding(sw.name, s.peer_ip, "bfd", want, got))
        multiplier = peer.get("detect-multiplier", bfd.multiplier)
        got_timers = (peer.get("transmit-interval"), peer.get("receive-interval"), multiplier)
        if got_timers != (bfd.interval_ms, bfd.interval_ms, bfd.multiplier):
            out.append(Finding(sw.name, s.peer_ip, "bfd", timers,
                               f"transmit {got_timers[0]} ms, receive {got_timers[1]} ms, "
                               f"multiplier {got_timers[2]}"))
    return out
