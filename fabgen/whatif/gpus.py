"""GPU pairs: which GPUs a failure cuts off, and which pairs on different nodes lose every path.

Pairs are counted by groups (GPUs by node and by rail), never one by one: 8,192 GPUs are 33
million pairs, and a scenario only changes the few groups it touches.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from fabgen.whatif.ecmp import Item, LeafClasses
from fabgen.whatif.graph import Graph

__all__ = ["GpuCount", "Gpus"]


@dataclass(slots=True)
class _Group:
    """GPUs counted by node and by rail, for counting pairs on different nodes."""

    n: int = 0
    hosts: Counter[int] | None = None
    rails: Counter[int] | None = None

    def add(self, host: int, rail: int) -> None:
        if self.hosts is None or self.rails is None:
            self.hosts, self.rails = Counter(), Counter()
        self.n += 1
        self.hosts[host] += 1
        self.rails[rail] += 1


@dataclass(slots=True)
class GpuCount:
    """GPUs with no live port, GPU pairs on different nodes without a path (all, same rail), and
    the worst GPU's remaining port bandwidth (%)."""

    cut_off: list[int]
    lost_pairs: int
    lost_same_rail: int
    min_bandwidth_pct: float


class Gpus:
    """GPUs of the intact fabric: a GPU is its node's NIC ports local to it (HostPort.gpu)."""

    def __init__(self, g: Graph, classes: LeafClasses) -> None:
        self.g = g
        self.classes = classes
        ports: dict[tuple[int, int], list[tuple[int, int]]] = {}
        rail: dict[tuple[int, int], int] = {}
        for i, host in enumerate(g.fabric.hosts):
            for hp in sorted(host.ports, key=lambda p: p.dev):
                ports.setdefault((i, hp.gpu), []).append((i, hp.dev))
                rail.setdefault((i, hp.gpu), hp.rail)
        keys = sorted(ports)
        self.gpu_key = keys
        self.gpu_ports = [tuple(ports[k]) for k in keys]
        self.gpu_rail = [rail[k] for k in keys]
        self.gpu_of_port = {p: gpu for gpu, ps in enumerate(self.gpu_ports) for p in ps}
        self.total_gpus = len(keys)
        self.host_gpus: Counter[int] = Counter(h for h, _ in keys)
        self.rail_gpus: Counter[int] = Counter(self.gpu_rail)
        # GPUs by the set of planes their ports reach: with no leaf pair cut, two GPUs lose
        # each other exactly when these sets no longer intersect.
        self.gpu_planes = [frozenset(g.port_plane[p] for p in ps) for ps in self.gpu_ports]
        self.plane_groups: dict[frozenset[int], _Group] = {}
        for gpu, planes in enumerate(self.gpu_planes):
            self.plane_groups.setdefault(planes, _Group()).add(self.gpu_key[gpu][0],
                                                                self.gpu_rail[gpu])
        sets = list(self.plane_groups)
        self.planesets_meet = all(a & b for a in sets for b in sets)

    def name(self, gpu: int) -> str:
        """`node/gpuN`, as results list cut-off GPUs."""
        host, index = self.gpu_key[gpu]
        return f"{self.g.fabric.hosts[host].name}/gpu{index}"

    def count(self, dead_ports: set[tuple[int, int]], leaf_item: dict[str, Item],
              any_cut: bool) -> GpuCount:
        """What dead host ports and cut leaf pairs (`leaf_item`: the live leaves' classes when
        `any_cut`) do to the GPUs."""
        touched: dict[int, list[tuple[int, int]]] = {}
        for port in dead_ports:
            gpu = self.gpu_of_port.get(port)
            if gpu is not None and gpu not in touched:
                touched[gpu] = [p for p in self.gpu_ports[gpu] if p not in dead_ports]
        cut_off = [gpu for gpu, live in touched.items() if not live]
        min_bw = min((100.0 * len(live) / len(self.gpu_ports[gpu])
                      for gpu, live in touched.items()), default=100.0)
        lost, same = self._cut_off_pairs(cut_off)
        if any_cut or not self.planesets_meet:
            l2, s2 = self._split_general(dead_ports, set(cut_off), leaf_item)
        else:
            l2, s2 = self._split_by_planes(touched)
        return GpuCount(cut_off, lost + l2, same + s2, min_bw)

    def _cut_off_pairs(self, cut_off: list[int]) -> tuple[int, int]:
        """Pairs on different nodes with at least one GPU that has no live port."""
        if not cut_off:
            return 0, 0
        g_total = self.total_gpus
        per_host: Counter[int] = Counter()
        per_rail: Counter[int] = Counter()
        lost = same = 0
        for gpu in cut_off:
            host, rail = self.gpu_key[gpu][0], self.gpu_rail[gpu]
            per_host[host] += 1
            per_rail[rail] += 1
            lost += g_total - self.host_gpus[host]
            same += self.rail_gpus[rail] - 1
        c = len(cut_off)
        lost -= (c * c - sum(n * n for n in per_host.values())) // 2
        same -= sum(n * (n - 1) for n in per_rail.values()) // 2
        return lost, same

    def _split_by_planes(self, touched: dict[int, list[tuple[int, int]]]) -> tuple[int, int]:
        """No leaf pair is cut: live GPUs lose each other only when their live planes differ."""
        moved: dict[frozenset[int], _Group] = {}
        moved_from: dict[frozenset[int], _Group] = {}
        for gpu, live in touched.items():
            if not live:
                continue
            planes = frozenset(self.g.port_plane[p] for p in live)
            if planes == self.gpu_planes[gpu]:
                continue
            host, rail = self.gpu_key[gpu][0], self.gpu_rail[gpu]
            moved.setdefault(planes, _Group()).add(host, rail)
            moved_from.setdefault(self.gpu_planes[gpu], _Group()).add(host, rail)
        lost = same = 0
        sets = list(moved)
        for i, p in enumerate(sets):
            for q in sets[i + 1:]:
                if not p & q:
                    x, y = _pairs(moved[p], moved[q])
                    lost, same = lost + x, same + y
            for q, base in self.plane_groups.items():
                if p & q:
                    continue
                rest = _minus(base, moved_from.get(q))
                x, y = _pairs(moved[p], rest)
                lost, same = lost + x, same + y
        return lost, same

    def _split_general(self, dead_ports: set[tuple[int, int]], cut_off: set[int],
                       leaf_item: dict[str, Item]) -> tuple[int, int]:
        """Some leaf pairs are cut: group live GPUs by their live (plane, leaf) ports."""
        port_plane, port_leaf = self.g.port_plane, self.g.port_leaf
        groups: dict[tuple[tuple[int, str], ...], _Group] = {}
        for gpu, ports in enumerate(self.gpu_ports):
            if gpu in cut_off:
                continue
            key = tuple(sorted({(port_plane[p], port_leaf[p]) for p in ports
                                if p not in dead_ports}))
            groups.setdefault(key, _Group()).add(self.gpu_key[gpu][0], self.gpu_rail[gpu])
        keys = list(groups)
        lost = same = 0
        for i, ka in enumerate(keys):
            for kb in keys[i + 1:]:
                if self._gpus_connected(ka, kb, leaf_item):
                    continue
                x, y = _pairs(groups[ka], groups[kb])
                lost, same = lost + x, same + y
        return lost, same

    def _gpus_connected(self, ka: tuple[tuple[int, str], ...], kb: tuple[tuple[int, str], ...],
                        leaf_item: dict[str, Item]) -> bool:
        classes = self.classes
        for pa, la in ka:
            for pb, lb in kb:
                if pa != pb:
                    continue
                if la == lb:
                    return True
                xa, xb = leaf_item.get(la), leaf_item.get(lb)
                if xa is None or xb is None:
                    # A leaf outside every changed class keeps its intact paths.
                    base_a = xa or classes.cls_items[classes.leaf_class[la]]
                    base_b = xb or classes.cls_items[classes.leaf_class[lb]]
                    if classes.connected(base_a, base_b):
                        return True
                    continue
                # Same class is not enough: a class with no uplink left reaches no one.
                if classes.connected(xa, xb):
                    return True
        return False


def _pairs(x: _Group, y: _Group) -> tuple[int, int]:
    """Pairs (one GPU of x, one of y) on different nodes, and how many share a rail."""
    if not x.n or not y.n or x.hosts is None or y.hosts is None or x.rails is None \
            or y.rails is None:
        return 0, 0
    small, big = (x, y) if len(x.hosts) <= len(y.hosts) else (y, x)
    assert small.hosts is not None and big.hosts is not None
    same_host = sum(n * big.hosts.get(h, 0) for h, n in small.hosts.items())
    same_rail = sum(n * y.rails.get(r, 0) for r, n in x.rails.items())
    # GPUs of one node sit on distinct rails, so a same-rail pair is always across nodes.
    return x.n * y.n - same_host, same_rail


def _minus(base: _Group, gone: _Group | None) -> _Group:
    if gone is None or gone.hosts is None or gone.rails is None:
        return base
    assert base.hosts is not None and base.rails is not None
    return _Group(base.n - gone.n, base.hosts - gone.hosts, base.rails - gone.rails)
