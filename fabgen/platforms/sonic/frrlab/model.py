"""What an FRR lab is made of, and what it must show: pure functions of a render and its fabric.

A lab is one network namespace per SONiC switch. Each switch gets the interfaces its
config_db.json addresses (INTERFACE, LOOPBACK_INTERFACE) under their SONiC names: a cable
between two SONiC switches becomes a veth pair across their namespaces, per the cabling plan;
a port cabled to a host (or to a switch outside the lab) becomes a veth whose other end stays in
the switch's namespace, so its /31 is a connected route as on the switch; Loopback0 likewise.

The expectations are computed from the same data: every configured BGP session to a switch in
the lab Established (and its BFD session up when the config asks for BFD), and every prefix a
switch announces (BGP_GLOBALS_AF_NETWORK) installed in every other switch's kernel with as many
next hops as eBGP's rules give: a route carries the AS path of the best path; a switch rejects
a path holding its own AS (RFC 4271 9.1.2); of the rest the shortest win, and every link to a
neighbour offering one of them is a next hop (maximum-paths is the ECMP width, multipath-relax
on). In a Clos that is every uplink towards a remote leaf, the parallel links towards a leaf
below.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from ipaddress import IPv4Interface
from typing import Any, Literal

__all__ = ["Expectations", "Lab", "LabInterface", "LabSwitch", "expectations", "plan"]

Kind = Literal["fabric", "stub", "loopback"]
ConfigDb = dict[str, dict[str, dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class LabInterface:
    name: str  # the SONiC interface name (Ethernet0, Loopback0)
    address: str  # "10.254.0.0/31"
    kind: Kind
    mtu: int | None = None
    peer_switch: str | None = None  # fabric: the other end's switch
    peer_port: str | None = None


@dataclass(frozen=True, slots=True)
class LabSwitch:
    name: str
    role: str
    asn: int
    config: ConfigDb
    frr_conf: str
    interfaces: tuple[LabInterface, ...]

    @property
    def announced(self) -> tuple[str, ...]:
        """Prefixes this switch originates (BGP_GLOBALS_AF_NETWORK|default|ipv4_unicast|P)."""
        rows = self.config.get("BGP_GLOBALS_AF_NETWORK", {})
        return tuple(sorted(k.split("|", 2)[2] for k in rows if k.startswith("default|")))

    @property
    def neighbors(self) -> dict[str, int]:
        """Configured BGP neighbours: address -> ASN."""
        rows = self.config.get("BGP_NEIGHBOR", {})
        return {k.split("|", 1)[1]: int(v["asn"]) for k, v in rows.items() if "|" in k}

    @property
    def bfd(self) -> bool:
        groups = self.config.get("BGP_PEER_GROUP", {})
        return any(v.get("bfd") == "true" for v in groups.values())


@dataclass(frozen=True, slots=True)
class Lab:
    switches: tuple[LabSwitch, ...]
    # Cables between two lab switches: ((switch, port), (switch, port)), a lower-tier end first.
    cables: tuple[tuple[tuple[str, str], tuple[str, str]], ...]
    outside: tuple[str, ...] = ()  # BGP peers of lab switches that are not in the lab

    def switch(self, name: str) -> LabSwitch:
        return next(s for s in self.switches if s.name == name)


@dataclass(frozen=True, slots=True)
class Expectations:
    # switch -> peer address -> (peer switch, peer ASN)
    sessions: dict[str, dict[str, tuple[str, int]]]
    # switch -> prefix -> next hops the kernel must hold
    routes: dict[str, dict[str, int]]
    # switch -> prefix -> the switch announcing it
    origin: dict[str, str] = field(default_factory=dict)


def _interfaces(config: ConfigDb, cabled: dict[str, tuple[str, str]]) -> list[LabInterface]:
    ports = config.get("PORT", {})
    out = []
    for key in config.get("INTERFACE", {}):
        if "|" not in key:
            continue
        name, address = key.split("|", 1)
        mtu = ports.get(name, {}).get("mtu")
        peer = cabled.get(name)
        out.append(LabInterface(name, address, "fabric" if peer else "stub",
                                int(mtu) if mtu else None,
                                peer[0] if peer else None, peer[1] if peer else None))
    for key in config.get("LOOPBACK_INTERFACE", {}):
        if "|" in key:
            name, address = key.split("|", 1)
            out.append(LabInterface(name, address, "loopback"))
    return sorted(out, key=lambda i: (i.kind, i.name))


def plan(switches: Sequence[tuple[str, str, int, ConfigDb, str]],
         cables: Sequence[tuple[tuple[str, str], tuple[str, str]]]) -> Lab:
    """A lab of `switches` ((name, role, asn, config_db, frr.conf) each) wired by `cables`
    (the cabling plan's switch-to-switch cables as (switch, port) ends); a cable with an end
    outside the lab is left out."""
    names = {s[0] for s in switches}
    inside = [c for c in cables if c[0][0] in names and c[1][0] in names]
    cabled: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)
    for (a_sw, a_port), (z_sw, z_port) in inside:
        cabled[a_sw][a_port] = (z_sw, z_port)
        cabled[z_sw][z_port] = (a_sw, a_port)
    lab_switches = []
    addresses: dict[str, str] = {}
    for name, role, asn, config, frr in switches:
        interfaces = _interfaces(config, cabled[name])
        for i in interfaces:
            addresses[str(IPv4Interface(i.address).ip)] = name
        lab_switches.append(LabSwitch(name, role, asn, config, frr, tuple(interfaces)))
    outside = sorted({ip for s in lab_switches for ip in s.neighbors if ip not in addresses})
    return Lab(tuple(lab_switches), tuple(inside), tuple(outside))


def _owner(lab: Lab) -> dict[str, str]:
    """Interface address (no length) -> switch."""
    return {str(IPv4Interface(i.address).ip): s.name for s in lab.switches for i in s.interfaces}


def expectations(lab: Lab) -> Expectations:
    """Sessions and routes the lab must show once converged (see the module docstring)."""
    owner = _owner(lab)
    asn = {s.name: s.asn for s in lab.switches}
    sessions = {s.name: {ip: (owner[ip], peer_asn) for ip, peer_asn in s.neighbors.items()
                         if ip in owner} for s in lab.switches}
    links: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for (a_sw, _), (z_sw, _) in lab.cables:
        links[a_sw][z_sw] += 1
        links[z_sw][a_sw] += 1
    routes: dict[str, dict[str, int]] = {s.name: {} for s in lab.switches}
    origin: dict[str, str] = {}
    for source in lab.switches:
        paths = _best_paths(source.name, asn, links)
        for sw, (_path, width) in paths.items():
            if sw == source.name:
                continue
            for prefix in source.announced:
                routes[sw][prefix] = width
        for prefix in source.announced:
            origin[prefix] = source.name
    return Expectations(sessions, routes, origin)


def _best_paths(origin: str, asn: dict[str, int],
                links: dict[str, dict[str, int]]) -> dict[str, tuple[tuple[int, ...], int]]:
    """switch -> (AS path of its best route to `origin`'s prefixes, next-hop links)."""
    best: dict[str, tuple[tuple[int, ...], int]] = {origin: ((), 0)}
    frontier = [origin]
    while frontier:
        offers: dict[str, list[tuple[tuple[int, ...], int]]] = defaultdict(list)
        for sender in frontier:
            path = (asn[sender], *best[sender][0])
            for receiver, count in links[sender].items():
                if receiver in best or asn[receiver] in path:
                    continue  # already settled on a shorter path, or an AS loop
                offers[receiver].append((path, count))
        frontier = []
        for receiver, offered in sorted(offers.items()):
            # All offers of this round are equally long: every one is a next hop (multipath);
            # the advertised path is the best path's (the lowest, as FRR breaks ties by router
            # ID and the Clos gives equal AS sequences anyway).
            best[receiver] = (min(p for p, _ in offered), sum(c for _, c in offered))
            frontier.append(receiver)
    return best
