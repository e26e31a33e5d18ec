"""ECMP path counts between leaves: leaves with identical uplinks form one class, the intact
counts between classes are computed once, and a failure changes them by sparse differences."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from fabgen.natural import natural_key
from fabgen.whatif.graph import Graph

__all__ = ["Ecmp", "Item", "LeafClasses"]

_EMPTY: dict[str, int] = {}  # shared by unchanged classes; never written to


@dataclass(slots=True)
class Item:
    """Live leaves of one plane with identical live uplinks: one ECMP computation serves all."""

    base: int  # baseline class id (for the intact path count)
    plane: int
    pod: int
    n: int  # live leaves
    da: dict[str, int]  # live minus intact links per spine (sparse)
    dv: dict[str, int]  # 3 tiers: live minus intact paths per core (sparse)
    smask: int  # bitmask of spines still reached
    rc: int  # bitmask of reachable cores
    changed: bool
    members: Sequence[str]


@dataclass(slots=True)
class Ecmp:
    """A scenario's ECMP figures (see fabgen.whatif's docstring), and which class each live leaf
    is in when some leaf pairs lost every path (for the GPU-level check)."""

    imbalance: float
    min_ratio: float
    worst_pair: tuple[str, str] | None
    sampled: bool
    cut_pairs: int
    cut_examples: list[tuple[str, str]]
    leaf_item: dict[str, Item]


class LeafClasses:
    """The intact leaf classes of every plane, their uplinks and path counts between them."""

    def __init__(self, g: Graph) -> None:
        self.g = g
        leaves = g.by_role["leaf"]
        self.spine_bit = {s: 1 << i for i, s in enumerate(g.by_role["spine"])}
        self.core_bit = {c: 1 << i for i, c in enumerate(g.by_role["core"])}
        self.core_mask = {s: sum(self.core_bit[c] for c in g.up[s])
                          for s in g.by_role["spine"]}
        classes: dict[tuple[int, frozenset[tuple[str, int]]], int] = {}
        self.leaf_class: dict[str, int] = {}
        self.cls_members: list[list[str]] = []
        self.cls_plane: list[int] = []
        self.cls_pod: list[int] = []
        self.cls_a: list[dict[str, int]] = []
        for leaf in leaves:
            sw = g.switch[leaf]
            key = (sw.plane, frozenset(g.up[leaf].items()))
            cid = classes.get(key)
            if cid is None:
                cid = classes[key] = len(self.cls_members)
                self.cls_members.append([])
                self.cls_plane.append(sw.plane)
                first = min(g.up[leaf], key=natural_key, default=None)
                # A leaf without uplinks (never built so) would share no pod with anyone.
                self.cls_pod.append(g.switch[first].group if first else -1 - cid)
                self.cls_a.append(dict(g.up[leaf]))
            self.leaf_class[leaf] = cid
            self.cls_members[cid].append(leaf)
        self.spine_classes: dict[str, list[int]] = {}
        for cid, a in enumerate(self.cls_a):
            for s in a:
                self.spine_classes.setdefault(s, []).append(cid)
        # Per class: paths to each core (3 tiers), the spines and cores it reaches as bitmasks.
        self.cls_v: list[dict[str, int]] = []
        self.cls_items: list[Item] = []
        for cid, a in enumerate(self.cls_a):
            v: dict[str, int] = {}
            smask = rc = 0
            for s, k in a.items():
                smask |= self.spine_bit[s]
                rc |= self.core_mask[s]
                for c, m in g.up[s].items():
                    v[c] = v.get(c, 0) + k * m
            self.cls_v.append(v)
            self.cls_items.append(Item(cid, self.cls_plane[cid], self.cls_pod[cid],
                                       len(self.cls_members[cid]), _EMPTY, _EMPTY, smask, rc,
                                       False, self.cls_members[cid]))
        # Intact path counts between classes: through a common spine, and through the cores.
        self.base_two: dict[tuple[int, int], int] = {}
        self.base_core: dict[tuple[int, int], int] = {}
        self.base_paths: dict[tuple[int, int], int] = {}
        for x in self.cls_items:
            for y in self.cls_items:
                if x.plane != y.plane or x.base > y.base:
                    continue
                pair = (x.base, y.base)
                two = _dot(self.cls_a[x.base], self.cls_a[y.base]) if x.pod == y.pod else 0
                core = _dot(self.cls_v[x.base], self.cls_v[y.base])
                self.base_two[pair], self.base_core[pair] = two, core
                self.base_paths[pair] = two if two or g.tiers == 2 else core

    def _item(self, cid: int, a1: dict[str, int] | None, dead: frozenset[str],
              u_changed: dict[str, dict[str, int]], n: int, members: Sequence[str]) -> Item:
        """Class `cid` with live uplinks `a1` (None: the intact ones minus dead spines), kept as
        sparse differences from the intact class so a pair costs only what changed."""
        up, tiers = self.g.up, self.g.tiers
        a0 = self.cls_a[cid]
        da: dict[str, int] = {}
        dv: dict[str, int] = {}
        smask, rc = self.cls_items[cid].smask, self.cls_items[cid].rc
        for s, k in a0.items():
            new = 0 if s in dead else k if a1 is None else a1.get(s, 0)
            if new != k:
                da[s] = new - k
                if not new:
                    smask &= ~self.spine_bit[s]
            if tiers == 3:
                u1 = u_changed.get(s)
                if new == k and u1 is None:
                    continue
                for c, m in up[s].items():
                    dv[c] = dv.get(c, 0) - k * m
                for c, m in (up[s] if u1 is None else u1).items():
                    dv[c] = dv.get(c, 0) + new * m
        if dv:
            v0 = self.cls_v[cid]
            for c in [c for c, d in dv.items() if not d]:
                del dv[c]
            for c, d in dv.items():
                if v0.get(c, 0) + d == 0:
                    rc &= ~self.core_bit[c]
        return Item(cid, self.cls_plane[cid], self.cls_pod[cid], n, da, dv, smask, rc, True,
                    members)

    def _paths(self, x: Item, y: Item) -> int:
        """Live shortest valley-free paths between a leaf of x and a leaf of y: the intact
        count plus the cross terms of what changed (x.da, x.dv are sparse)."""
        key = (x.base, y.base) if x.base <= y.base else (y.base, x.base)
        if x.pod == y.pod:
            two = self.base_two[key]
            if x.da or y.da:
                ax, ay = self.cls_a[x.base], self.cls_a[y.base]
                two += _dot(x.da, ay) + _dot(y.da, ax) + _dot(x.da, y.da)
            if two or self.g.tiers == 2:
                return two
        if self.g.tiers == 2:
            return 0
        core = self.base_core[key]
        if x.dv or y.dv:
            vx, vy = self.cls_v[x.base], self.cls_v[y.base]
            core += _dot(x.dv, vy) + _dot(y.dv, vx) + _dot(x.dv, y.dv)
        return core

    @staticmethod
    def connected(x: Item, y: Item) -> bool:
        """Some live path: a spine both still reach in one pod, or a core both still reach."""
        return bool(x.smask & y.smask and x.pod == y.pod) or bool(x.rc & y.rc)

    def ecmp(self, dead: frozenset[str], lost: dict[tuple[str, str], int],
             lost_up: dict[str, int], full: bool, pair_limit: int) -> Ecmp:
        """Path ratios between leaf classes touched by the failure; also which leaves are cut.
        Past `pair_limit` changed class pairs the ratios are sampled (connectivity never is)."""
        sw, up = self.g.switch, self.g.up
        moved: dict[str, dict[str, int]] = {}
        for lower, upper in lost:
            if lower in dead or upper in dead or lower in moved or sw[lower].role != "leaf":
                continue
            moved[lower] = {s: c - lost.get((lower, s), 0) for s, c in up[lower].items()
                            if s not in dead and c - lost.get((lower, s), 0) > 0}
        u_changed: dict[str, dict[str, int]] = {}
        if self.g.tiers == 3:
            for s in lost_up:
                if sw[s].role == "spine" and s not in dead:
                    u_changed[s] = {c: k - lost.get((s, c), 0) for c, k in up[s].items()
                                    if c not in dead and k - lost.get((s, c), 0) > 0}
        hit: set[int] = set()
        for s in itertools.chain((x for x in dead if sw[x].role == "spine"), u_changed):
            hit.update(self.spine_classes.get(s, ()))
        gone: Counter[int] = Counter()
        excluded = {x for x in dead if sw[x].role == "leaf"} | set(moved)
        for leaf in excluded:
            gone[self.leaf_class[leaf]] += 1
        if not hit and not moved and not gone:
            return Ecmp(1.0, 1.0, None, False, 0, [], {})
        items: list[Item] = []
        for cid, base in enumerate(self.cls_items):
            n = base.n - gone[cid]
            if n <= 0:
                continue
            members = base.members if not gone[cid] else _Live(base.members, excluded)
            if cid in hit:
                items.append(self._item(cid, None, dead, u_changed, n, members))
            elif gone[cid]:
                items.append(Item(cid, base.plane, base.pod, n, _EMPTY, _EMPTY, base.smask,
                                  base.rc, False, members))
            else:
                items.append(base)
        for leaf, a1 in moved.items():
            items.append(self._item(self.leaf_class[leaf], a1, dead, u_changed, 1, (leaf,)))
        by_plane: dict[int, list[Item]] = {}
        for it in items:
            by_plane.setdefault(it.plane, []).append(it)
        pairs: list[tuple[Item, Item]] = []
        ratios_one = False
        for plane_items in by_plane.values():
            if sum(it.n for it in plane_items if not it.changed) >= 2:
                ratios_one = True
            changed_items = [it for it in plane_items if it.changed]
            order = {id(it): i for i, it in enumerate(changed_items)}
            for i, x in enumerate(changed_items):
                if x.n >= 2:
                    pairs.append((x, x))
                for y in plane_items:
                    if y is x or (y.changed and order[id(y)] < i):
                        continue
                    pairs.append((x, y))
        sampled = len(pairs) > pair_limit
        step = math.ceil(len(pairs) / pair_limit) if sampled else 1
        lo, hi = math.inf, 1.0 if ratios_one else -math.inf
        worst: tuple[Item, Item] | None = None
        cut = 0
        examples: list[tuple[str, str]] = []
        for k, (x, y) in enumerate(pairs):
            if sampled and k % step:
                if self.connected(x, y):
                    continue
                paths = 0
            else:
                paths = self._paths(x, y)
            if paths == 0:
                cut += x.n * (x.n - 1) // 2 if x is y else x.n * y.n
                if full and len(examples) < 5:
                    examples.append(_pair_names(x, y))
                continue
            b0, b1 = (x.base, y.base) if x.base <= y.base else (y.base, x.base)
            ratio = paths / self.base_paths[b0, b1]
            if ratio < lo:
                lo, worst = ratio, (x, y)
            hi = max(hi, ratio)
        if ratios_one:
            lo = min(lo, 1.0)
        # Which class each live leaf is in, for the GPU-level check when some pairs are cut.
        leaf_item: dict[str, Item] = {}
        if cut:
            for it in items:
                for leaf in it.members:
                    leaf_item[leaf] = it
        if lo is math.inf or hi <= 0:
            return Ecmp(1.0, 1.0, None, sampled, cut, examples, leaf_item)
        pair = _pair_names(*worst) if worst is not None and lo < 1.0 else None
        return Ecmp(hi / lo, lo, pair, sampled, cut, examples, leaf_item)


class _Live(Sequence[str]):
    """Members of a class minus the excluded leaves, computed only when someone looks."""

    def __init__(self, members: Sequence[str], excluded: set[str]) -> None:
        self._members = members
        self._excluded = excluded
        self._cache: list[str] | None = None

    def _list(self) -> list[str]:
        if self._cache is None:
            self._cache = [m for m in self._members if m not in self._excluded]
        return self._cache

    def __getitem__(self, i: Any) -> Any:
        return self._list()[i]

    def __len__(self) -> int:
        return len(self._list())

    def __iter__(self) -> Any:
        return iter(self._list())


def _dot(x: dict[str, int], y: dict[str, int]) -> int:
    if len(x) > len(y):
        x, y = y, x
    return sum(k * y.get(key, 0) for key, k in x.items())


def _pair_names(x: Item, y: Item) -> tuple[str, str]:
    a = x.members[0]
    b = next((m for m in y.members if m != a), a)
    return (a, b) if natural_key(a) <= natural_key(b) else (b, a)
