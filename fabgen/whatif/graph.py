"""The intact fabric as counts, built once: adjacency, cable bundles, host ports and tier sums.

Every what-if measure starts from these numbers and subtracts what a scenario kills, so a
scenario costs what it touches, not the size of the fabric.
"""

from __future__ import annotations

import math

from fabgen.natural import natural_key
from fabgen.topology.model import ROLES, Fabric, Link, Role, Switch

__all__ = ["TIER_NAMES", "Graph", "ratio"]

# Ties name the earlier tier: "leaf uplinks" only when a leaf's uplinks outnumber its hosts'
# need (a nearly empty leaf) and are the binding limit.
TIER_NAMES = ("hosts", "leaf-spine", "leaf uplinks", "spine-core")


class Graph:
    """Switches, links and host ports of the intact fabric by name and index, with the per-plane
    tier capacities that `bisection` subtracts a failure's losses from."""

    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        self.tiers = fabric.tiers
        self.speed = fabric.speed_gbps
        self.switch: dict[str, Switch] = {s.name: s for s in fabric.switches}
        # Natural order of switch names, precomputed: ties and lists sort by it per scenario.
        self.rank = {name: i for i, name in enumerate(sorted(self.switch, key=natural_key))}
        self.by_key = {natural_key(name): name for name in self.switch}
        self.by_role: dict[Role, list[str]] = {r: [] for r in ROLES}
        self.by_plane: list[list[str]] = [[] for _ in range(fabric.planes)]
        for s in fabric.switches:
            self.by_role[s.role].append(s.name)
            self.by_plane[s.plane].append(s.name)
        self.up: dict[str, dict[str, int]] = {s: {} for s in self.switch}
        self.down: dict[str, dict[str, int]] = {s: {} for s in self.switch}
        self.bundle: dict[tuple[str, str], list[str]] = {}
        self.links: dict[str, Link] = {}
        self.host_index = {h.name: i for i, h in enumerate(fabric.hosts)}
        self.link_port: dict[str, tuple[int, int]] = {}
        self.leaf_ports: dict[str, list[tuple[int, int]]] = {}
        self.hosts_on: dict[str, int] = {}  # leaf -> host ports cabled
        planes = fabric.planes
        self.h0 = [0] * planes
        self.l0 = [0] * planes
        self.s0 = [0] * planes
        for link in fabric.links:
            self.links[link.id] = link
            self.bundle.setdefault((link.a_device, link.z_device), []).append(link.id)
            if link.kind == "node-leaf":
                port = (self.host_index[link.a_device], link.a_port)
                self.link_port[link.id] = port
                self.leaf_ports.setdefault(link.z_device, []).append(port)
                self.hosts_on[link.z_device] = self.hosts_on.get(link.z_device, 0) + 1
                self.h0[link.plane] += 1
                continue
            up = self.up[link.a_device]
            up[link.z_device] = up.get(link.z_device, 0) + 1
            down = self.down[link.z_device]
            down[link.a_device] = down.get(link.a_device, 0) + 1
            if link.kind == "spine-core":
                self.s0[link.plane] += 1
            elif self.tiers == 2:
                self.l0[link.plane] += 1  # 3 tiers: per-spine min(down, up), below
        self.up_total = {s: sum(d.values()) for s, d in self.up.items()}
        self.down_total = {s: sum(d.values()) for s, d in self.down.items()}
        if self.tiers == 3:
            for spine in self.by_role["spine"]:
                p = self.switch[spine].plane
                self.l0[p] += min(self.down_total[spine], self.up_total[spine])
        # Leaf uplinks usable: min(hosts, uplinks) per leaf (build.bisection_gbps).
        self.c0 = [0] * planes
        for leaf, n in self.hosts_on.items():
            self.c0[self.switch[leaf].plane] += min(n, self.up_total.get(leaf, 0))
        self.cable_ids = sorted(self.links, key=natural_key)
        self._init_ports()
        self.intact = self.bisection(*([0] * planes for _ in range(4)))[0]

    def _init_ports(self) -> None:
        """Host ports by leaf, rail and plane: what a dead leaf or host cable takes with it."""
        leaves = self.by_role["leaf"]
        self.leaf_hosts: dict[str, frozenset[int]] = {
            leaf: frozenset(h for h, _ in self.leaf_ports.get(leaf, ())) for leaf in leaves}
        host_rails: dict[tuple[int, int], int] = {}
        for i, host in enumerate(self.fabric.hosts):
            for hp in host.ports:
                host_rails[i, hp.dev] = hp.rail
        self.port_rail = host_rails
        self.leaf_rails: dict[str, frozenset[int]] = {
            leaf: frozenset(host_rails[p] for p in self.leaf_ports.get(leaf, ()))
            for leaf in leaves}
        self.port_plane: dict[tuple[int, int], int] = {}
        self.port_leaf: dict[tuple[int, int], str] = {}
        for cid, (h, dev) in self.link_port.items():
            link = self.links[cid]
            self.port_plane[h, dev] = link.plane
            self.port_leaf[h, dev] = link.z_device

    def bisection(self, dh: list[int], dc: list[int], dl: list[int],
                  ds: list[int]) -> tuple[float, str]:
        """Bisection (Gb/s) with per-plane losses of host ports (dh), usable leaf uplinks (dc),
        leaf-spine capacity (dl) and spine-core links (ds); and the narrowest tier's name."""
        total = 0
        narrowest, least = "hosts", math.inf
        for p in range(self.fabric.planes):
            tiers = [self.h0[p] - dh[p], self.l0[p] - dl[p], self.c0[p] - dc[p]]
            if self.tiers == 3:
                tiers.append(self.s0[p] - ds[p])
            low = min(tiers)
            total += low
            if low < least:
                least, narrowest = low, TIER_NAMES[tiers.index(low)]
        return total * self.speed / 2, narrowest


def ratio(below: int, up: int) -> float:
    """Oversubscription down:up; infinite when downlinks are left but no uplink."""
    if up <= 0:
        return math.inf if below > 0 else 0.0
    return below / up
