"""One scenario's numbers: bisection, oversubscription, ECMP, GPU pairs and the ftree verdict.

The Model holds everything precomputed about the intact fabric; `measure` turns a set of dead
switches and cables into a Measure touching only the switches and ports they affect.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from fabgen.natural import natural_key
from fabgen.topology.model import Fabric
from fabgen.whatif.ecmp import LeafClasses
from fabgen.whatif.ftree import FtreeCheck
from fabgen.whatif.gpus import Gpus
from fabgen.whatif.graph import Graph, ratio
from fabgen.whatif.results import Ftree, UplinkLoss

__all__ = ["Measure", "Model", "severity"]


@dataclass(slots=True)
class Measure:
    """One scenario's numbers, before names and labels are attached (kept cheap for searches)."""

    bisection: float
    narrowest: str
    worst_os: float
    worst_os_name: str | None
    imbalance: float
    min_ratio: float
    worst_pair: tuple[str, str] | None
    sampled: bool
    cut_pairs: int
    cut_examples: list[tuple[str, str]]
    cut_off: list[int]
    lost_pairs: int
    lost_same: int
    min_gpu_bw: float
    ftree: Ftree | None
    failed_cables: int
    uplink_loss: list[UplinkLoss]
    rails: set[int]
    units: set[int]
    nodes: set[int]


def severity(m: Measure) -> tuple[float, ...]:
    """Larger is worse, in the order of `results.worst_first`."""
    broken = 1.0 if m.ftree is not None and not m.ftree.ok else 0.0
    return (float(m.lost_pairs), float(m.cut_pairs), -m.bisection, m.worst_os, m.imbalance,
            broken)


class Model:
    """Adjacency counts, tier sums, ECMP classes and GPU groups of the intact fabric, built once;
    each scenario then touches only the switches and ports it affects."""

    def __init__(self, fabric: Fabric) -> None:
        self.g = g = Graph(fabric)
        self.classes = LeafClasses(g)
        self.gpus = Gpus(g, self.classes)
        self.ftree = FtreeCheck(g)
        ranked: list[tuple[float, str]] = []
        for leaf in g.by_role["leaf"]:
            ranked.append((ratio(g.hosts_on.get(leaf, 0), g.up_total[leaf]), leaf))
        if g.tiers == 3:
            for s in g.by_role["spine"]:
                ranked.append((ratio(g.down_total[s], g.up_total[s]), s))
        ranked.sort(key=lambda t: (-t[0], natural_key(t[1])))
        self.os_ranked = ranked

    def measure(self, dead: frozenset[str], cables: frozenset[str], *, full: bool,
                ecmp_pair_limit: int) -> Measure:
        """What failing `dead` switches and `cables` does; `full` adds what only a reported
        result needs (examples, uplink losses, affected rails, units and nodes)."""
        g = self.g
        sw = g.switch
        lost: dict[tuple[str, str], int] = {}
        dead_ports: set[tuple[int, int]] = set()
        for name in dead:
            for u, c in g.up[name].items():
                lost[name, u] = c
            for d, c in g.down[name].items():
                lost[d, name] = c
            if sw[name].role == "leaf":
                dead_ports.update(g.leaf_ports.get(name, ()))
        for cid in cables:
            link = g.links[cid]
            if link.kind == "node-leaf":
                dead_ports.add(g.link_port[cid])
                continue
            key = (link.a_device, link.z_device)
            n = lost.get(key, 0)
            if n < g.up[key[0]][key[1]]:
                lost[key] = n + 1
        lost_up: dict[str, int] = {}
        lost_down: dict[str, int] = {}
        planes = g.fabric.planes
        dh, dl, ds = [0] * planes, [0] * planes, [0] * planes
        for (a, z), n in lost.items():
            lost_up[a] = lost_up.get(a, 0) + n
            lost_down[z] = lost_down.get(z, 0) + n
            if g.tiers == 2:
                dl[sw[a].plane] += n
            elif sw[a].role == "spine":
                ds[sw[a].plane] += n
        for port in dead_ports:
            dh[g.port_plane[port]] += 1
        # A leaf's host ports that died with it are not "lost hosts" of a live leaf.
        host_loss: dict[str, int] = {}
        for port in dead_ports:
            leaf = g.port_leaf[port]
            if leaf not in dead:
                host_loss[leaf] = host_loss.get(leaf, 0) + 1
        degraded_spines: list[str] = []
        if g.tiers == 3:
            for s in set(lost_up) | set(lost_down):
                if sw[s].role != "spine":
                    continue
                d0, u0 = g.down_total[s], g.up_total[s]
                if s in dead:
                    dl[sw[s].plane] += min(d0, u0)
                    continue
                d1, u1 = d0 - lost_down.get(s, 0), u0 - lost_up.get(s, 0)
                dl[sw[s].plane] += min(d0, u0) - min(d1, u1)
                if d1 and Fraction(u1, d1) < min(Fraction(1), Fraction(u0, d0 or 1)):
                    degraded_spines.append(s)
        dc = [0] * planes
        for leaf in {a for a, _ in lost if sw[a].role == "leaf"} | set(host_loss) | {
                d for d in dead if sw[d].role == "leaf"}:
            h0, u0 = g.hosts_on.get(leaf, 0), g.up_total.get(leaf, 0)
            if leaf in dead:
                h1 = u1 = 0
            else:
                h1, u1 = h0 - host_loss.get(leaf, 0), u0 - lost_up.get(leaf, 0)
            dc[sw[leaf].plane] += min(h0, u0) - min(h1, u1)
        bisection, narrowest = g.bisection(dh, dc, dl, ds)

        changed = {x for pair in lost for x in pair if x not in dead}
        worst_os, worst_os_name, uplink_loss = self._oversubscription(
            dead, changed | set(host_loss), lost_up, lost_down, host_loss, full)
        ecmp = self.classes.ecmp(dead, lost, lost_up, full, ecmp_pair_limit)
        gpus = self.gpus.count(dead_ports, ecmp.leaf_item, ecmp.cut_pairs > 0)
        ftree = self.ftree.check(dead, lost, changed) if self.ftree.active else None

        rails: set[int] = set()
        units: set[int] = set()
        nodes: set[int] = set()
        if full:
            degraded = {x for x in dead if sw[x].role == "leaf"}
            degraded |= {x for x in changed if sw[x].role == "leaf" and lost_up.get(x)}
            for s in degraded_spines:
                degraded.update(x for x in g.down[s] if x not in dead)
            for leaf in degraded:
                rails |= g.leaf_rails[leaf]
                nodes |= g.leaf_hosts[leaf]
                if g.leaf_hosts[leaf]:
                    units.add(sw[leaf].group + 1)
            for port in dead_ports:
                rails.add(g.port_rail[port])
                nodes.add(port[0])
                units.add(g.fabric.hosts[port[0]].su + 1)
        failed_cables = sum(lost.values()) + len(dead_ports)
        return Measure(bisection, narrowest, worst_os, worst_os_name, ecmp.imbalance,
                       ecmp.min_ratio, ecmp.worst_pair, ecmp.sampled, ecmp.cut_pairs,
                       ecmp.cut_examples, gpus.cut_off, gpus.lost_pairs, gpus.lost_same_rail,
                       gpus.min_bandwidth_pct, ftree, failed_cables, uplink_loss, rails, units,
                       nodes)

    def _oversubscription(self, dead: frozenset[str], touched: set[str], lost_up: dict[str, int],
                          lost_down: dict[str, int], host_loss: dict[str, int], full: bool
                          ) -> tuple[float, str | None, list[UplinkLoss]]:
        g = self.g
        rank = g.rank
        worst, worst_name = -1.0, None
        losses: list[UplinkLoss] = []
        for name in touched:
            role = g.switch[name].role
            if role == "core" or (role == "spine" and g.tiers == 2):
                continue
            up0 = g.up_total[name]
            up1 = up0 - lost_up.get(name, 0)
            if role == "leaf":
                below = g.hosts_on.get(name, 0) - host_loss.get(name, 0)
            else:
                below = g.down_total[name] - lost_down.get(name, 0)
            value = ratio(below, up1)
            if value > worst or (value == worst and worst_name is not None
                                 and rank[name] < rank[worst_name]):
                worst, worst_name = value, name
            if full and up1 < up0:
                losses.append(UplinkLoss(name, role, up0, up1, (up0 - up1) * g.speed, value))
        # The worst untouched switch is the first of the intact ranking not touched.
        skip = touched | dead
        for value, name in self.os_ranked:
            if name in skip:
                continue
            if value > worst or (value == worst and worst_name is not None
                                 and rank[name] < rank[worst_name]):
                worst, worst_name = value, name
            break
        losses.sort(key=lambda x: (x.live_links / x.intact_links, rank[x.switch]))
        return max(worst, 0.0), worst_name, losses
