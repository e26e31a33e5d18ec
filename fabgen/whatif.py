"""What-if failure analysis: what losing switches, cables or a plane does to a built fabric.

Every number is recounted from the Fabric's switches, hosts and cabling plan with the failed
elements removed; nothing is estimated. Definitions (the same in the table, JSON and report):

Bisection after failures
    Per plane, the capacity of each tier in links, then half of the narrowest tier, summed over
    the planes -- `build.bisection_gbps` applied to what is still alive:
      hosts       live host ports (cable up, leaf alive);
      leaf-spine  2 tiers: live leaf-spine links between live switches. 3 tiers: the sum over
                  spines of min(live downlinks, live uplinks) -- a leaf's uplink to spine s is
                  only usable as far as s can still carry it up, so each leaf's usable uplink
                  capacity is min(its live uplinks, what its spines carry up); summed over leaves
                  that is the max flow from the leaf tier through the spines to the cores;
      spine-core  3 tiers: live spine-core links between live switches.
    With nothing failed this equals `Fabric.bisection_gbps` (it can be lower in a 3-tier fabric
    whose last pod is too small to fill its spines' uplinks: then it is the true bound).

Oversubscription (per switch, worst reported)
    Leaf: live host ports / live uplinks. Spine of a 3-tier fabric: live downlinks / live
    uplinks. A switch that still has downlinks but no uplink is infinitely oversubscribed.

ECMP imbalance
    For every pair of live leaves of a plane, the number of live shortest valley-free paths
    (through a common spine; or leaf-spine-core-spine-leaf between pods, and within a pod that
    lost every common spine), counted over parallel links, divided by the same count in the
    intact fabric. Imbalance = max / min of that ratio over the pairs still connected (1.0: every
    pair lost the same share of its paths). Leaves with identical live uplinks form one class
    and one computation serves all its pairs; when more than ECMP_PAIR_LIMIT class pairs change
    they are sampled deterministically (every k-th) and the result says so. Connectivity is
    always exact.

GPU pairs
    A GPU is an endpoint with the NIC ports local to it (HostPort.gpu). Two GPUs on different
    nodes are connected when some live port of one and some live port of the other sit on the
    same plane and on the same leaf or on leaves with a valley-free path -- the paths ECMP over
    eBGP (one spine ASN) and OpenSM's up/down engines use. Traffic relayed through another GPU or
    NIC (NCCL's PXN over NVLink) is not counted. A GPU's rail is the rail of its first port.

OpenSM ftree
    InfiniBand only: whether OpenSM's fabric_validate_topology() would accept the remaining
    cabling of each plane (its own subnet) as a pure fat-tree: per rank, every switch has the
    same number of up-port groups (a group = the ports to one neighbour) and, above the leaves,
    of down-port groups, and every group of a rank has the same number of ports. OpenSM runs
    this check only when no root GUID file is configured: then a failed check makes it try the
    next engine of `routing_engine` (updn if listed), else minhop. With a root GUID file (fabgen's
    opensm.conf sets one) ftree skips the check and routes the lopsided tree anyway, unevenly --
    the verdict then says where ECMP-like balance is lost, not that routing stops.
"""

from __future__ import annotations

import difflib
import itertools
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from fabgen.topology.model import ROLES, Fabric, Link, Role, Switch
from fabgen.topology.summary import natural_key

__all__ = [
    "ECMP_PAIR_LIMIT",
    "EXACT_LIMIT",
    "Ftree",
    "Result",
    "Scenario",
    "UplinkLoss",
    "WhatifError",
    "evaluate",
    "format_table",
    "gate",
    "parse_specs",
    "report_section",
    "to_json",
    "worst_first",
]

# `role:N` is solved exactly while the combinations to try stay at most this many; past it a
# greedy worst-first search keeps `spine:4` on a 512-spine fabric to seconds.
EXACT_LIMIT = 5000
# Class pairs whose ECMP path counts are computed per scenario before sampling kicks in.
ECMP_PAIR_LIMIT = 4096
# Greedy steps after the first try only this many candidates (most shared neighbours first).
GREEDY_CANDIDATES = 64
# OpenSM's construct_fabric() runs fabric_validate_topology() only when no root GUID file is
# configured; osm_ucast_mgr_process() then tries the next listed engine, else minhop.
FTREE_FALLBACK = ("without root_guid_file OpenSM refuses ftree and tries the next engine in "
                  "routing_engine (updn if listed), else its default minhop; with root_guid_file "
                  "(fabgen's opensm.conf sets one) it skips this check and ftree still routes, "
                  "unevenly")

ScenarioKind = Literal["none", "switch", "link", "cable", "plane", "role", "combined"]
# Ties name the earlier tier: "leaf uplinks" only when a leaf's uplinks outnumber its hosts'
# need (a nearly empty leaf) and are the binding limit.
_TIER_NAMES = ("hosts", "leaf-spine", "leaf uplinks", "spine-core")


class WhatifError(ValueError):
    """A failure spec that does not name anything in the fabric; the message says what would."""


@dataclass(frozen=True, slots=True)
class Scenario:
    """One failure case: switches and cables that fail together, plus worst-case role picks."""

    label: str
    kind: ScenarioKind
    switches: tuple[str, ...] = ()
    cables: tuple[str, ...] = ()
    picks: tuple[tuple[Role, int], ...] = ()  # (role, n): the worst n switches of that role
    detail: str = ""


@dataclass(frozen=True, slots=True)
class UplinkLoss:
    """A live switch that lost uplinks: links before and after, and its oversubscription."""

    switch: str
    role: Role
    intact_links: int
    live_links: int
    lost_gbps: int
    oversubscription: float  # math.inf: downlinks left but no uplink


@dataclass(frozen=True, slots=True)
class Ftree:
    """Is the remaining cabling a pure fat-tree by OpenSM's fabric_validate_topology() rule."""

    ok: bool
    reason: str | None = None  # the first rule broken, with OpenSM's error code
    fallback: str | None = None  # what OpenSM does then, with and without root_guid_file


@dataclass(frozen=True, slots=True)
class Result:
    """Everything one scenario does to the fabric (see the module docstring for definitions)."""

    scenario: Scenario
    failed_switches: tuple[str, ...]
    failed_cables: int  # cables down, including every cable of a failed switch
    method: str  # how `role:N` picks were chosen; "" when there were none
    bisection_gbps: float
    intact_bisection_gbps: float
    bisection_pct: float
    narrowest_tier: str  # "hosts" | "leaf-spine" | "spine-core", in the most reduced plane
    uplink_loss: tuple[UplinkLoss, ...]
    worst_oversubscription: float
    worst_oversubscribed: str | None
    ecmp_imbalance: float
    ecmp_min_pct: float  # the lowest live/intact path ratio of a connected leaf pair
    ecmp_worst_pair: tuple[str, str] | None
    ecmp_sampled: bool
    cut_leaf_pairs: int  # live leaf pairs of a plane with no path left
    cut_leaf_examples: tuple[tuple[str, str], ...]
    cut_off_gpus: tuple[str, ...]  # "node/gpuN" with no live port at all
    lost_gpu_pairs: int  # GPU pairs on different nodes with no path left
    lost_pairs_same_rail: int
    lost_pairs_cross_rail: int
    min_gpu_bandwidth_pct: float  # the worst GPU's live port bandwidth, % of intact
    affected_rails: tuple[int, ...]
    affected_units: tuple[int, ...]  # 1-based, as in the switch names (su1, su2, ...)
    affected_nodes: int
    affected_node_ranges: tuple[str, ...]
    ftree: Ftree | None  # None on RoCE

    @property
    def same_rail_pair_lost(self) -> bool:
        return self.lost_pairs_same_rail > 0

    @property
    def cross_rail_pair_lost(self) -> bool:
        return self.lost_pairs_cross_rail > 0


def _severity(r: Result) -> tuple[float, ...]:
    """Larger is worse: lost GPU pairs, then bisection, oversubscription, ECMP, ftree."""
    ftree_broken = 1.0 if r.ftree is not None and not r.ftree.ok else 0.0
    return (float(r.lost_gpu_pairs), float(r.cut_leaf_pairs), -r.bisection_gbps,
            r.worst_oversubscription, r.ecmp_imbalance, ftree_broken)


def worst_first(results: Iterable[Result]) -> list[Result]:
    """Results ordered worst scenario first; ties keep their given order."""
    return sorted(results, key=_severity, reverse=True)


# --------------------------------------------------------------------------------------------
# The precomputed model


@dataclass(slots=True)
class _Item:
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
class _Measure:
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


_FtreeSig = tuple[int, tuple[int, ...], int, tuple[int, ...]]


class _Model:
    """Adjacency counts, tier sums, ECMP classes and GPU groups of the intact fabric, built once;
    each scenario then touches only the switches and ports it affects."""

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
        self._init_leaves()
        self._init_gpus()
        self._init_ftree()
        self._init_oversubscription()
        self.intact = self._bisection(*([0] * planes for _ in range(4)))[0]

    # ---- baseline structures

    def _init_leaves(self) -> None:
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
        self.spine_bit = {s: 1 << i for i, s in enumerate(self.by_role["spine"])}
        self.core_bit = {c: 1 << i for i, c in enumerate(self.by_role["core"])}
        self.core_mask = {s: sum(self.core_bit[c] for c in self.up[s])
                          for s in self.by_role["spine"]}
        classes: dict[tuple[int, frozenset[tuple[str, int]]], int] = {}
        self.leaf_class: dict[str, int] = {}
        self.cls_members: list[list[str]] = []
        self.cls_plane: list[int] = []
        self.cls_pod: list[int] = []
        self.cls_a: list[dict[str, int]] = []
        for leaf in leaves:
            sw = self.switch[leaf]
            key = (sw.plane, frozenset(self.up[leaf].items()))
            cid = classes.get(key)
            if cid is None:
                cid = classes[key] = len(self.cls_members)
                self.cls_members.append([])
                self.cls_plane.append(sw.plane)
                first = min(self.up[leaf], key=natural_key, default=None)
                # A leaf without uplinks (never built so) would share no pod with anyone.
                self.cls_pod.append(self.switch[first].group if first else -1 - cid)
                self.cls_a.append(dict(self.up[leaf]))
            self.leaf_class[leaf] = cid
            self.cls_members[cid].append(leaf)
        self.spine_classes: dict[str, list[int]] = {}
        for cid, a in enumerate(self.cls_a):
            for s in a:
                self.spine_classes.setdefault(s, []).append(cid)
        # Per class: paths to each core (3 tiers), the spines and cores it reaches as bitmasks.
        self.cls_v: list[dict[str, int]] = []
        self.cls_items: list[_Item] = []
        for cid, a in enumerate(self.cls_a):
            v: dict[str, int] = {}
            smask = rc = 0
            for s, k in a.items():
                smask |= self.spine_bit[s]
                rc |= self.core_mask[s]
                for c, m in self.up[s].items():
                    v[c] = v.get(c, 0) + k * m
            self.cls_v.append(v)
            self.cls_items.append(_Item(cid, self.cls_plane[cid], self.cls_pod[cid],
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
                self.base_paths[pair] = two if two or self.tiers == 2 else core

    def _item(self, cid: int, a1: dict[str, int] | None, dead: frozenset[str],
              u_changed: dict[str, dict[str, int]], n: int, members: Sequence[str]) -> _Item:
        """Class `cid` with live uplinks `a1` (None: the intact ones minus dead spines), kept as
        sparse differences from the intact class so a pair costs only what changed."""
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
            if self.tiers == 3:
                u1 = u_changed.get(s)
                if new == k and u1 is None:
                    continue
                for c, m in self.up[s].items():
                    dv[c] = dv.get(c, 0) - k * m
                for c, m in (self.up[s] if u1 is None else u1).items():
                    dv[c] = dv.get(c, 0) + new * m
        if dv:
            v0 = self.cls_v[cid]
            for c in [c for c, d in dv.items() if not d]:
                del dv[c]
            for c, d in dv.items():
                if v0.get(c, 0) + d == 0:
                    rc &= ~self.core_bit[c]
        return _Item(cid, self.cls_plane[cid], self.cls_pod[cid], n, da, dv, smask, rc, True,
                     members)

    def _paths(self, x: _Item, y: _Item) -> int:
        """Live shortest valley-free paths between a leaf of x and a leaf of y: the intact
        count plus the cross terms of what changed (x.da, x.dv are sparse)."""
        key = (x.base, y.base) if x.base <= y.base else (y.base, x.base)
        if x.pod == y.pod:
            two = self.base_two[key]
            if x.da or y.da:
                ax, ay = self.cls_a[x.base], self.cls_a[y.base]
                two += _dot(x.da, ay) + _dot(y.da, ax) + _dot(x.da, y.da)
            if two or self.tiers == 2:
                return two
        if self.tiers == 2:
            return 0
        core = self.base_core[key]
        if x.dv or y.dv:
            vx, vy = self.cls_v[x.base], self.cls_v[y.base]
            core += _dot(x.dv, vy) + _dot(y.dv, vx) + _dot(x.dv, y.dv)
        return core

    @staticmethod
    def _connected(x: _Item, y: _Item) -> bool:
        return bool(x.smask & y.smask and x.pod == y.pod) or bool(x.rc & y.rc)

    def _init_gpus(self) -> None:
        ports: dict[tuple[int, int], list[tuple[int, int]]] = {}
        rail: dict[tuple[int, int], int] = {}
        for i, host in enumerate(self.fabric.hosts):
            for hp in sorted(host.ports, key=lambda p: p.dev):
                ports.setdefault((i, hp.gpu), []).append((i, hp.dev))
                rail.setdefault((i, hp.gpu), hp.rail)
        keys = sorted(ports)
        self.gpu_key = keys
        self.gpu_ports = [tuple(ports[k]) for k in keys]
        self.gpu_rail = [rail[k] for k in keys]
        self.gpu_of_port = {p: g for g, ps in enumerate(self.gpu_ports) for p in ps}
        self.port_plane: dict[tuple[int, int], int] = {}
        self.port_leaf: dict[tuple[int, int], str] = {}
        for cid, (h, dev) in self.link_port.items():
            link = self.links[cid]
            self.port_plane[h, dev] = link.plane
            self.port_leaf[h, dev] = link.z_device
        self.total_gpus = len(keys)
        self.host_gpus: Counter[int] = Counter(h for h, _ in keys)
        self.rail_gpus: Counter[int] = Counter(self.gpu_rail)
        # GPUs by the set of planes their ports reach: with no leaf pair cut, two GPUs lose
        # each other exactly when these sets no longer intersect.
        self.gpu_planes = [frozenset(self.port_plane[p] for p in ps) for ps in self.gpu_ports]
        self.plane_groups: dict[frozenset[int], _Group] = {}
        for g, planes in enumerate(self.gpu_planes):
            self.plane_groups.setdefault(planes, _Group()).add(self.gpu_key[g][0],
                                                                self.gpu_rail[g])
        sets = list(self.plane_groups)
        self.planesets_meet = all(a & b for a in sets for b in sets)

    def _init_ftree(self) -> None:
        self.ft_sig: dict[str, _FtreeSig] = {}
        # Keyed by (plane, role): every plane of an InfiniBand fabric is its own subnet with its
        # own subnet manager, so OpenSM only ever compares switches of one plane.
        self.ft_base: dict[tuple[int, Role], Counter[_FtreeSig]] = {}
        self.ft_names: dict[tuple[int, Role, _FtreeSig], list[str]] = {}
        self.ft_up: dict[str, Counter[int]] = {}  # port-group size -> groups, up and down
        self.ft_down: dict[str, Counter[int]] = {}
        if self.fabric.transport != "infiniband":
            return
        for name, sw in self.switch.items():
            self.ft_up[name] = Counter(self.up[name].values())
            self.ft_down[name] = Counter(self.down[name].values())
            sig = self._sig(sw.role, self.up[name], self.down[name])
            self.ft_sig[name] = sig
            self.ft_base.setdefault((sw.plane, sw.role), Counter())[sig] += 1
            self.ft_names.setdefault((sw.plane, sw.role, sig), []).append(name)

    @staticmethod
    def _sig(role: Role, up: dict[str, int], down: dict[str, int]) -> _FtreeSig:
        # Leaves' down groups are HCAs, which OpenSM allows to be missing: not compared.
        downs = () if role == "leaf" else tuple(sorted(set(down.values())))
        return (len(up), tuple(sorted(set(up.values()))),
                0 if role == "leaf" else len(down), downs)

    def _init_oversubscription(self) -> None:
        ranked: list[tuple[float, str]] = []
        for leaf in self.by_role["leaf"]:
            ranked.append((_ratio(self.hosts_on.get(leaf, 0), self.up_total[leaf]), leaf))
        if self.tiers == 3:
            for s in self.by_role["spine"]:
                ranked.append((_ratio(self.down_total[s], self.up_total[s]), s))
        ranked.sort(key=lambda t: (-t[0], natural_key(t[1])))
        self.os_ranked = ranked
        self.os_base = {name: value for value, name in ranked}

    # ---- spec parsing

    def parse(self, spec: str) -> list[Scenario]:
        text = spec.strip()
        if not text:
            raise WhatifError("empty failure spec")
        if text == "all-single":
            return self.all_single()
        if text == "none":
            return [Scenario("none", "none", detail="nothing failed")]
        parts = [p.strip() for p in text.split("+")]
        if len(parts) == 1:
            return [self._element(text, text)]
        switches: list[str] = []
        cables: list[str] = []
        picks: list[tuple[Role, int]] = []
        for part in parts:
            if not part:
                raise WhatifError(f"empty element in {text!r} (join elements with '+')")
            one = self._element(part, text)
            switches += [s for s in one.switches if s not in switches]
            cables += [c for c in one.cables if c not in cables]
            picks += one.picks
        return [Scenario(text, "combined", tuple(switches), tuple(cables), tuple(picks))]

    def _element(self, part: str, whole: str) -> Scenario:
        where = "" if part == whole else f" in {whole!r}"
        if part in self.switch:
            return Scenario(part, "switch", (part,))
        if part in self.links:
            return Scenario(part, "cable", cables=(part,), detail=self._cable_text(part))
        left, sep, right = part.partition(":")
        if sep and left == "plane":
            if not right.isdigit() or not 1 <= int(right) <= self.fabric.planes:
                n = self.fabric.planes
                raise WhatifError(
                    f"plane {right!r} does not exist{where}: the fabric has {n} plane"
                    f"{'s' if n > 1 else ''} (plane:1{f'..plane:{n}' if n > 1 else ''})")
            plane = int(right) - 1
            names = tuple(s.name for s in self.fabric.switches if s.plane == plane)
            return Scenario(part, "plane", names, detail=f"every switch of plane {plane + 1}")
        if sep and right.isdigit() and left not in self.switch and left not in self.host_index:
            if left not in ROLES:
                guess = _suggest(left, list(ROLES))
                hint = f"did you mean '{guess}:{right}'?" if guess else "roles: leaf, spine, core"
                raise WhatifError(f"unknown role {left!r} in {part!r}{where} ({hint})")
            role: Role = left
            count = len(self.by_role[role])
            if count == 0:
                raise WhatifError(f"{part!r}{where}: the fabric has no {role} switches "
                                  f"({self.tiers} tiers)")
            n = int(right)
            if not 1 <= n <= count:
                raise WhatifError(f"{part!r}{where}: can fail 1 to {count} {role} switches, "
                                  f"not {n}")
            return Scenario(part, "role", picks=((role, n),),
                            detail=f"the worst {n} of {count} {role} switches")
        if sep:
            a, z = self._device(left, part, where), self._device(right, part, where)
            ids = self.bundle.get((a, z)) or self.bundle.get((z, a))
            if not ids:
                raise WhatifError(self._no_cable(a, z, where))
            lower, upper = (a, z) if (a, z) in self.bundle else (z, a)
            return Scenario(f"{lower}:{upper}", "link", cables=tuple(ids),
                            detail=f"{len(ids)} cable{'s' if len(ids) > 1 else ''}")
        if part.lower().startswith("c") and part[1:].isdigit():
            width = len(self.cable_ids[0]) - 1 if self.cable_ids else 6
            padded = f"c{int(part[1:]):0{width}d}"
            hint = (f"did you mean {padded!r}?" if padded in self.links else
                    f"cable ids run {self.cable_ids[0]}..{self.cable_ids[-1]}"
                    if self.cable_ids else "the plan has no cables")
            raise WhatifError(f"no cable {part!r} in the cabling plan{where} ({hint})")
        if part in self.host_index:
            raise WhatifError(f"{part!r}{where} is a node, not a switch; fail one of its links "
                              f"with {part}:LEAF or a cable id")
        raise WhatifError(self._unknown(part, where))

    def _device(self, name: str, part: str, where: str) -> str:
        if name in self.switch or name in self.host_index:
            return name
        raise WhatifError(self._unknown(name, where or f" in {part!r}"))

    def _unknown(self, name: str, where: str) -> str:
        # `spine-5` for `spine-05` is the common slip: same words and numbers, other padding.
        guess = self.by_key.get(natural_key(name)) or _suggest(name, [*self.switch, "all-single"])
        if guess:
            hint = f"did you mean {guess!r}?"
        else:
            examples = [self.by_role[r][0] for r in ROLES if self.by_role[r]]
            hint = "switches are named like " + ", ".join(repr(e) for e in examples)
        return f"unknown switch {name!r}{where} ({hint})"

    def _no_cable(self, a: str, z: str, where: str) -> str:
        if a in self.switch:
            near = [*self.up[a], *self.down[a]]
            near += [h for (h, leaf) in self.bundle if leaf == a and h in self.host_index]
        else:
            near = [leaf for (h, leaf) in self.bundle if h == a]
        guess = _suggest(z, near)
        if guess:
            hint = f"did you mean '{a}:{guess}'?"
        else:
            shown = sorted((n for n in near if n in self.switch), key=natural_key)
            more = f", ... ({len(shown)} in all)" if len(shown) > 6 else ""
            hint = f"{a} is cabled to {', '.join(shown[:6])}{more}" if shown else \
                f"{a} has no cables"
        return f"no cable between {a!r} and {z!r} in the cabling plan{where} ({hint})"

    def _cable_text(self, cid: str) -> str:
        link = self.links[cid]
        return f"{link.a_device} port {link.a_port} - {link.z_device} port {link.z_port}"

    def all_single(self) -> list[Scenario]:
        """Every switch, every switch pair's bundle, one cable of each multi-cable bundle (all
        cables of a bundle give the same numbers), and every host cable."""
        out = [Scenario(s.name, "switch", (s.name,)) for s in self.fabric.switches]
        singles: list[Scenario] = []
        for (a, z), ids in self.bundle.items():
            if a not in self.switch:
                continue
            out.append(Scenario(f"{a}:{z}", "link", cables=tuple(ids),
                                detail=f"{len(ids)} cable{'s' if len(ids) > 1 else ''}"))
            if len(ids) > 1:
                singles.append(Scenario(ids[0], "cable", cables=(ids[0],),
                                        detail=f"any 1 of the {len(ids)} cables {a}:{z}"))
        out += singles
        for link in self.fabric.links:
            if link.kind == "node-leaf":
                out.append(Scenario(link.id, "cable", cables=(link.id,),
                                    detail=self._cable_text(link.id)))
        return out

    # ---- evaluation

    def result(self, scenario: Scenario) -> Result:
        dead = set(scenario.switches)
        method = ""
        if scenario.picks:
            chosen, method = self._pick(dead, scenario.picks, set(scenario.cables))
            dead |= chosen
        m = self._measure(frozenset(dead), frozenset(scenario.cables), full=True)
        return self._result(scenario, dead, method, m)

    def _result(self, scenario: Scenario, dead: set[str], method: str, m: _Measure) -> Result:
        hosts = self.fabric.hosts
        pct = 100.0 * m.bisection / self.intact if self.intact else 0.0
        return Result(
            scenario=scenario,
            failed_switches=tuple(sorted(dead, key=self.rank.__getitem__)),
            failed_cables=m.failed_cables,
            method=method,
            bisection_gbps=m.bisection,
            intact_bisection_gbps=self.intact,
            bisection_pct=pct,
            narrowest_tier=m.narrowest,
            uplink_loss=tuple(m.uplink_loss),
            worst_oversubscription=m.worst_os,
            worst_oversubscribed=m.worst_os_name,
            ecmp_imbalance=m.imbalance,
            ecmp_min_pct=100.0 * m.min_ratio,
            ecmp_worst_pair=m.worst_pair,
            ecmp_sampled=m.sampled,
            cut_leaf_pairs=m.cut_pairs,
            cut_leaf_examples=tuple(m.cut_examples),
            cut_off_gpus=tuple(f"{hosts[self.gpu_key[g][0]].name}/gpu{self.gpu_key[g][1]}"
                               for g in sorted(m.cut_off)),
            lost_gpu_pairs=m.lost_pairs,
            lost_pairs_same_rail=m.lost_same,
            lost_pairs_cross_rail=m.lost_pairs - m.lost_same,
            min_gpu_bandwidth_pct=m.min_gpu_bw,
            affected_rails=tuple(sorted(m.rails)),
            affected_units=tuple(sorted(m.units)),
            affected_nodes=len(m.nodes),
            affected_node_ranges=tuple(self._ranges(m.nodes)),
            ftree=m.ftree,
        )

    def _ranges(self, nodes: set[int]) -> list[str]:
        hosts = self.fabric.hosts
        out: list[str] = []
        for _, run in itertools.groupby(enumerate(sorted(nodes)), lambda t: t[1] - t[0]):
            ids = [i for _, i in run]
            first, last = hosts[ids[0]].name, hosts[ids[-1]].name
            out.append(first if len(ids) == 1 else f"{first}..{last}")
        return out

    def _bisection(self, dh: list[int], dc: list[int], dl: list[int],
                   ds: list[int]) -> tuple[float, str]:
        total = 0
        narrowest, least = "hosts", math.inf
        for p in range(self.fabric.planes):
            tiers = [self.h0[p] - dh[p], self.l0[p] - dl[p], self.c0[p] - dc[p]]
            if self.tiers == 3:
                tiers.append(self.s0[p] - ds[p])
            low = min(tiers)
            total += low
            if low < least:
                least, narrowest = low, _TIER_NAMES[tiers.index(low)]
        return total * self.speed / 2, narrowest

    def _measure(self, dead: frozenset[str], cables: frozenset[str], *, full: bool) -> _Measure:
        sw = self.switch
        lost: dict[tuple[str, str], int] = {}
        dead_ports: set[tuple[int, int]] = set()
        for name in dead:
            for u, c in self.up[name].items():
                lost[name, u] = c
            for d, c in self.down[name].items():
                lost[d, name] = c
            if sw[name].role == "leaf":
                dead_ports.update(self.leaf_ports.get(name, ()))
        for cid in cables:
            link = self.links[cid]
            if link.kind == "node-leaf":
                dead_ports.add(self.link_port[cid])
                continue
            key = (link.a_device, link.z_device)
            n = lost.get(key, 0)
            if n < self.up[key[0]][key[1]]:
                lost[key] = n + 1
        lost_up: dict[str, int] = {}
        lost_down: dict[str, int] = {}
        planes = self.fabric.planes
        dh, dl, ds = [0] * planes, [0] * planes, [0] * planes
        for (a, z), n in lost.items():
            lost_up[a] = lost_up.get(a, 0) + n
            lost_down[z] = lost_down.get(z, 0) + n
            if self.tiers == 2:
                dl[sw[a].plane] += n
            elif sw[a].role == "spine":
                ds[sw[a].plane] += n
        for port in dead_ports:
            dh[self.port_plane[port]] += 1
        # A leaf's host ports that died with it are not "lost hosts" of a live leaf.
        host_loss: dict[str, int] = {}
        for port in dead_ports:
            leaf = self.port_leaf[port]
            if leaf not in dead:
                host_loss[leaf] = host_loss.get(leaf, 0) + 1
        degraded_spines: list[str] = []
        if self.tiers == 3:
            for s in set(lost_up) | set(lost_down):
                if sw[s].role != "spine":
                    continue
                d0, u0 = self.down_total[s], self.up_total[s]
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
            h0, u0 = self.hosts_on.get(leaf, 0), self.up_total.get(leaf, 0)
            if leaf in dead:
                h1 = u1 = 0
            else:
                h1, u1 = h0 - host_loss.get(leaf, 0), u0 - lost_up.get(leaf, 0)
            dc[sw[leaf].plane] += min(h0, u0) - min(h1, u1)
        bisection, narrowest = self._bisection(dh, dc, dl, ds)

        changed = {x for pair in lost for x in pair if x not in dead}
        worst_os, worst_os_name, uplink_loss = self._oversubscription(
            dead, changed | set(host_loss), lost_up, lost_down, host_loss, full)
        (imbalance, min_ratio, worst_pair, sampled, cut_pairs, cut_examples,
         conn) = self._ecmp(dead, lost, lost_up, full)
        cut_off, lost_pairs, lost_same, min_bw = self._gpus(dead_ports, conn, cut_pairs > 0)
        ftree = self._ftree(dead, lost, changed) if self.ft_sig else None

        rails: set[int] = set()
        units: set[int] = set()
        nodes: set[int] = set()
        if full:
            degraded = {x for x in dead if sw[x].role == "leaf"}
            degraded |= {x for x in changed if sw[x].role == "leaf" and lost_up.get(x)}
            for s in degraded_spines:
                degraded.update(x for x in self.down[s] if x not in dead)
            for leaf in degraded:
                rails |= self.leaf_rails[leaf]
                nodes |= self.leaf_hosts[leaf]
                if self.leaf_hosts[leaf]:
                    units.add(sw[leaf].group + 1)
            for port in dead_ports:
                rails.add(self.port_rail[port])
                nodes.add(port[0])
                units.add(self.fabric.hosts[port[0]].su + 1)
        failed_cables = sum(lost.values()) + len(dead_ports)
        return _Measure(bisection, narrowest, worst_os, worst_os_name, imbalance, min_ratio,
                        worst_pair, sampled, cut_pairs, cut_examples, cut_off, lost_pairs,
                        lost_same, min_bw, ftree, failed_cables, uplink_loss, rails, units, nodes)

    def _oversubscription(self, dead: frozenset[str], touched: set[str], lost_up: dict[str, int],
                          lost_down: dict[str, int], host_loss: dict[str, int], full: bool
                          ) -> tuple[float, str | None, list[UplinkLoss]]:
        worst, worst_name = -1.0, None
        losses: list[UplinkLoss] = []
        for name in touched:
            role = self.switch[name].role
            if role == "core" or (role == "spine" and self.tiers == 2):
                continue
            up0 = self.up_total[name]
            up1 = up0 - lost_up.get(name, 0)
            if role == "leaf":
                below = self.hosts_on.get(name, 0) - host_loss.get(name, 0)
            else:
                below = self.down_total[name] - lost_down.get(name, 0)
            value = _ratio(below, up1)
            if value > worst or (value == worst and worst_name is not None
                                 and self.rank[name] < self.rank[worst_name]):
                worst, worst_name = value, name
            if full and up1 < up0:
                losses.append(UplinkLoss(name, role, up0, up1, (up0 - up1) * self.speed, value))
        skip = touched | dead
        for value, name in self.os_ranked:
            if name in skip:
                continue
            if value > worst or (value == worst and worst_name is not None
                                 and self.rank[name] < self.rank[worst_name]):
                worst, worst_name = value, name
            break
        losses.sort(key=lambda x: (x.live_links / x.intact_links, self.rank[x.switch]))
        return max(worst, 0.0), worst_name, losses

    def _ecmp(self, dead: frozenset[str], lost: dict[tuple[str, str], int],
              lost_up: dict[str, int], full: bool
              ) -> tuple[float, float, tuple[str, str] | None, bool, int,
                         list[tuple[str, str]], dict[str, _Item]]:
        """Path ratios between leaf classes touched by the failure; also which leaves are cut."""
        sw = self.switch
        moved: dict[str, dict[str, int]] = {}
        for lower, upper in lost:
            if lower in dead or upper in dead or lower in moved or sw[lower].role != "leaf":
                continue
            moved[lower] = {s: c - lost.get((lower, s), 0) for s, c in self.up[lower].items()
                            if s not in dead and c - lost.get((lower, s), 0) > 0}
        u_changed: dict[str, dict[str, int]] = {}
        if self.tiers == 3:
            for s in lost_up:
                if sw[s].role == "spine" and s not in dead:
                    u_changed[s] = {c: k - lost.get((s, c), 0) for c, k in self.up[s].items()
                                    if c not in dead and k - lost.get((s, c), 0) > 0}
        hit: set[int] = set()
        for s in itertools.chain((x for x in dead if sw[x].role == "spine"), u_changed):
            hit.update(self.spine_classes.get(s, ()))
        gone: Counter[int] = Counter()
        excluded = {x for x in dead if sw[x].role == "leaf"} | set(moved)
        for leaf in excluded:
            gone[self.leaf_class[leaf]] += 1
        if not hit and not moved and not gone:
            return 1.0, 1.0, None, False, 0, [], {}
        items: list[_Item] = []
        for cid, base in enumerate(self.cls_items):
            n = base.n - gone[cid]
            if n <= 0:
                continue
            members = base.members if not gone[cid] else _Live(base.members, excluded)
            if cid in hit:
                items.append(self._item(cid, None, dead, u_changed, n, members))
            elif gone[cid]:
                items.append(_Item(cid, base.plane, base.pod, n, _EMPTY, _EMPTY, base.smask,
                                   base.rc, False, members))
            else:
                items.append(base)
        for leaf, a1 in moved.items():
            items.append(self._item(self.leaf_class[leaf], a1, dead, u_changed, 1, (leaf,)))
        by_plane: dict[int, list[_Item]] = {}
        for it in items:
            by_plane.setdefault(it.plane, []).append(it)
        pairs: list[tuple[_Item, _Item]] = []
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
        sampled = len(pairs) > ECMP_PAIR_LIMIT
        step = math.ceil(len(pairs) / ECMP_PAIR_LIMIT) if sampled else 1
        lo, hi = math.inf, 1.0 if ratios_one else -math.inf
        worst: tuple[_Item, _Item] | None = None
        cut = 0
        examples: list[tuple[str, str]] = []
        for k, (x, y) in enumerate(pairs):
            if sampled and k % step:
                if self._connected(x, y):
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
        leaf_item: dict[str, _Item] = {}
        if cut:
            for it in items:
                for leaf in it.members:
                    leaf_item[leaf] = it
        if lo is math.inf or hi <= 0:
            return 1.0, 1.0, None, sampled, cut, examples, leaf_item
        pair = _pair_names(*worst) if worst is not None and lo < 1.0 else None
        return hi / lo, lo, pair, sampled, cut, examples, leaf_item

    def _gpus(self, dead_ports: set[tuple[int, int]], leaf_item: dict[str, _Item],
              any_cut: bool) -> tuple[list[int], int, int, float]:
        """GPUs cut off, GPU pairs on different nodes without a path (all, same rail), and the
        worst GPU's remaining port bandwidth (%)."""
        touched: dict[int, list[tuple[int, int]]] = {}
        for port in dead_ports:
            g = self.gpu_of_port.get(port)
            if g is not None and g not in touched:
                touched[g] = [p for p in self.gpu_ports[g] if p not in dead_ports]
        cut_off = [g for g, live in touched.items() if not live]
        min_bw = min((100.0 * len(live) / len(self.gpu_ports[g]) for g, live in touched.items()),
                      default=100.0)
        lost, same = self._cut_off_pairs(cut_off)
        if any_cut or not self.planesets_meet:
            l2, s2 = self._split_general(dead_ports, set(cut_off), leaf_item)
        else:
            l2, s2 = self._split_by_planes(touched)
        return cut_off, lost + l2, same + s2, min_bw

    def _cut_off_pairs(self, cut_off: list[int]) -> tuple[int, int]:
        """Pairs on different nodes with at least one GPU that has no live port."""
        if not cut_off:
            return 0, 0
        g_total = self.total_gpus
        per_host: Counter[int] = Counter()
        per_rail: Counter[int] = Counter()
        lost = same = 0
        for g in cut_off:
            host, rail = self.gpu_key[g][0], self.gpu_rail[g]
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
        for g, live in touched.items():
            if not live:
                continue
            planes = frozenset(self.port_plane[p] for p in live)
            if planes == self.gpu_planes[g]:
                continue
            host, rail = self.gpu_key[g][0], self.gpu_rail[g]
            moved.setdefault(planes, _Group()).add(host, rail)
            moved_from.setdefault(self.gpu_planes[g], _Group()).add(host, rail)
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
                       leaf_item: dict[str, _Item]) -> tuple[int, int]:
        """Some leaf pairs are cut: group live GPUs by their live (plane, leaf) ports."""
        groups: dict[tuple[tuple[int, str], ...], _Group] = {}
        for g, ports in enumerate(self.gpu_ports):
            if g in cut_off:
                continue
            key = tuple(sorted({(self.port_plane[p], self.port_leaf[p]) for p in ports
                                if p not in dead_ports}))
            groups.setdefault(key, _Group()).add(self.gpu_key[g][0], self.gpu_rail[g])
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
                        leaf_item: dict[str, _Item]) -> bool:
        for pa, la in ka:
            for pb, lb in kb:
                if pa != pb:
                    continue
                if la == lb:
                    return True
                xa, xb = leaf_item.get(la), leaf_item.get(lb)
                if xa is None or xb is None:
                    # A leaf outside every changed class keeps its intact paths.
                    base_a = xa or self.cls_items[self.leaf_class[la]]
                    base_b = xb or self.cls_items[self.leaf_class[lb]]
                    if self._connected(base_a, base_b):
                        return True
                    continue
                # Same class is not enough: a class with no uplink left reaches no one.
                if self._connected(xa, xb):
                    return True
        return False

    def _ftree(self, dead: frozenset[str], lost: dict[tuple[str, str], int],
               changed: set[str]) -> Ftree:
        # Port-group sizes per changed switch, from its intact histogram and its lost pairs.
        hist: dict[str, tuple[Counter[int], Counter[int]]] = {}
        for (a, z), gone in lost.items():
            size = self.up[a][z]
            for name, side in ((a, 0), (z, 1)):
                if name in dead:
                    continue
                h = hist.get(name)
                if h is None:
                    h = hist[name] = (Counter(self.ft_up[name]), Counter(self.ft_down[name]))
                h[side][size] -= 1
                if size - gone:
                    h[side][size - gone] += 1
        new: dict[str, _FtreeSig | None] = {}
        for name, (up, down) in hist.items():
            role = self.switch[name].role
            n_up, n_down = sum(up.values()), sum(down.values())
            # A switch with no switch link left is not discovered by the SM at all.
            new[name] = None if not n_up and not n_down else (
                n_up, tuple(sorted(k for k, v in up.items() if v > 0)),
                0 if role == "leaf" else n_down,
                () if role == "leaf" else tuple(sorted(k for k, v in down.items() if v > 0)))
        rank = self.rank
        planes_left = 0
        for plane in range(self.fabric.planes):
            if all(n in dead or new.get(n, 0) is None for n in self.by_plane[plane]):
                continue  # nothing left for this plane's subnet manager to route
            planes_left += 1
            for role in ROLES:
                reason = self._ftree_rank(plane, role, dead, new, rank)
                if reason:
                    return Ftree(False, reason, FTREE_FALLBACK)
        if not planes_left:
            return Ftree(False, "no switch is left to route", None)
        return Ftree(True)

    def _ftree_rank(self, plane: int, role: Role, dead: frozenset[str],
                    new: dict[str, _FtreeSig | None], rank: dict[str, int]) -> str | None:
        counter = self.ft_base.get((plane, role))
        if counter is None:
            return None
        touched = [n for n in itertools.chain(dead, new)
                   if self.switch[n].role == role and self.switch[n].plane == plane]
        if touched:
            counter = Counter(counter)
            for n in touched:
                counter[self.ft_sig[n]] -= 1
            for n in touched:
                sig = new.get(n)
                if sig is not None:
                    counter[sig] += 1
        sigs = [sig for sig, k in counter.items() if k > 0]
        if len(sigs) <= 1 and all(len(sig[1]) <= 1 and len(sig[3]) <= 1 for sig in sigs):
            return None
        skip = dead | new.keys()
        examples: dict[_FtreeSig, str] = {}
        for n in touched:
            sig = new.get(n)
            if sig is not None and (sig not in examples or rank[n] < rank[examples[sig]]):
                examples[sig] = n
        for sig in sigs:
            if sig not in examples:
                examples[sig] = next(n for n in self.ft_names[plane, role, sig] if n not in skip)
        ref = max(sigs, key=lambda sig: (counter[sig], -rank[examples[sig]]))
        return _ftree_reason(role, ref, sorted(sigs, key=lambda g: rank[examples[g]]), examples)

    # ---- worst-case picks

    def _pick(self, fixed: set[str], picks: tuple[tuple[Role, int], ...], cables: set[str]
              ) -> tuple[set[str], str]:
        pools = [[n for n in self.by_role[role] if n not in fixed] for role, _ in picks]
        combos = 1
        for pool, (_, k) in zip(pools, picks, strict=True):
            if k > len(pool):
                raise WhatifError(f"cannot fail {k} more {picks[0][0]} switches: only "
                                  f"{len(pool)} are left")
            combos *= math.comb(len(pool), k)
        frozen_cables = frozenset(cables)

        def score(extra: Iterable[str]) -> tuple[float, ...]:
            m = self._measure(frozenset(fixed | set(extra)), frozen_cables, full=False)
            return _measure_severity(m)

        if combos <= EXACT_LIMIT:
            best: tuple[str, ...] = ()
            best_score: tuple[float, ...] | None = None
            per_role = [itertools.combinations(pool, k) for pool, (_, k) in zip(pools, picks,
                                                                                 strict=True)]
            for combo in itertools.product(*per_role):
                chosen = tuple(itertools.chain.from_iterable(combo))
                s = score(chosen)
                if best_score is None or s > best_score:
                    best, best_score = chosen, s
            return set(best), f"exact: worst of {combos:,} combinations"
        chosen_list: list[str] = []
        for pool, (_, k) in zip(pools, picks, strict=True):
            for step in range(k):
                left = [n for n in pool if n not in chosen_list]
                if step and len(left) > GREEDY_CANDIDATES:
                    left.sort(key=lambda n: -self._shared(n, chosen_list))
                    left = left[:GREEDY_CANDIDATES]
                best_n, best_s = left[0], score([*chosen_list, left[0]])
                for n in left[1:]:
                    s = score([*chosen_list, n])
                    if s > best_s or (s == best_s and self._shared(n, chosen_list)
                                      > self._shared(best_n, chosen_list)):
                        best_n, best_s = n, s
                chosen_list.append(best_n)
        return set(chosen_list), (
            f"greedy worst-first ({combos:,} combinations exceed {EXACT_LIMIT:,}): each step "
            "adds the switch that hurts most, ties to the one sharing most neighbours with "
            "those already picked; a lower bound on the true worst case")

    def _shared(self, name: str, chosen: list[str]) -> int:
        mine = set(self.up[name]) | set(self.down[name])
        return sum(len(mine & (set(self.up[c]) | set(self.down[c]))) for c in chosen)


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


_EMPTY: dict[str, int] = {}  # shared by unchanged classes; never written to


def _dot(x: dict[str, int], y: dict[str, int]) -> int:
    if len(x) > len(y):
        x, y = y, x
    return sum(k * y.get(key, 0) for key, k in x.items())


def _pair_names(x: _Item, y: _Item) -> tuple[str, str]:
    a = x.members[0]
    b = next((m for m in y.members if m != a), a)
    return (a, b) if natural_key(a) <= natural_key(b) else (b, a)


def _ratio(below: int, up: int) -> float:
    if up <= 0:
        return math.inf if below > 0 else 0.0
    return below / up


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


def _measure_severity(m: _Measure) -> tuple[float, ...]:
    broken = 1.0 if m.ftree is not None and not m.ftree.ok else 0.0
    return (float(m.lost_pairs), float(m.cut_pairs), -m.bisection, m.worst_os, m.imbalance,
            broken)


def _suggest(word: str, choices: Iterable[str]) -> str | None:
    """The closest choice, like `intent.loader.suggest` (difflib, cutoff 0.6), but equally close
    names resolve to the first in natural order: difflib's own tie-break picks the
    alphabetically last, and 'did you mean spine-04' for 'spine-5' reads like a wrong guess."""
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(word)
    best: tuple[float, tuple[tuple[int, int | str], ...]] | None = None
    found: str | None = None
    for choice in choices:
        matcher.set_seq1(choice)
        if matcher.real_quick_ratio() < 0.6 or matcher.quick_ratio() < 0.6:
            continue
        score = matcher.ratio()
        if score < 0.6:
            continue
        key = (-score, natural_key(choice))
        if best is None or key < best:
            best, found = key, choice
    return found


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _ftree_reason(role: Role, ref: _FtreeSig, sigs: list[_FtreeSig],
                  examples: dict[_FtreeSig, str]) -> str | None:
    """The first of OpenSM's fabric_validate_topology() rules the rank breaks, or None."""
    name = examples[ref]
    for sig in sigs:
        if sig[0] != ref[0]:
            return (f"{examples[sig]} has {_n(sig[0], 'up-port group')} but {name} has "
                    f"{ref[0]} (OpenSM ERR AB09: different number of upward port groups)")
    if role != "leaf":
        for sig in sigs:
            if sig[2] != ref[2]:
                return (f"{examples[sig]} has {_n(sig[2], 'down-port group')} but {name} has "
                        f"{ref[2]} (OpenSM ERR AB0A: different number of downward port groups)")
    ref_up = ref[1][0] if ref[1] else None
    for sig in sigs:
        for size in sig[1]:
            if size != ref_up:
                return (f"{examples[sig]} has an up-port group of {_n(size, 'port')} where "
                        f"{name} has {ref_up} (OpenSM ERR AB0B: different number of ports in an "
                        "upward port group)")
    if role != "leaf":
        ref_down = ref[3][0] if ref[3] else None
        for sig in sigs:
            for size in sig[3]:
                if size != ref_down:
                    return (f"{examples[sig]} has a down-port group of {_n(size, 'port')} "
                            f"where {name} has {ref_down} (OpenSM ERR AB0C: different number "
                            "of ports in a downward port group)")
    return None


_CACHE: list[tuple[Fabric, _Model]] = []


def _model(fabric: Fabric) -> _Model:
    """The model of the last fabric asked about (the CLI and report ask twice in a row)."""
    if _CACHE and _CACHE[0][0] is fabric:
        return _CACHE[0][1]
    model = _Model(fabric)
    _CACHE[:] = [(fabric, model)]
    return model


# --------------------------------------------------------------------------------------------
# Public API


def parse_specs(fabric: Fabric, specs: list[str]) -> list[Scenario]:
    """Failure specs to scenarios; every bad spec is reported at once in one WhatifError.

    A spec is a switch (`spine-03`), a link (`leaf-su1-r2:spine-03`: every cable between the
    two; a node may stand on one side), a cable id from the cabling plan (`c000123`), a role
    count (`spine:2`: the worst 2 spines), a plane (`plane:1`, 1-based), `none` (the intact
    fabric) or `all-single`. Elements joined by `+` fail together (`spine-01+leaf-su2-r0`).
    """
    model = _model(fabric)
    out: list[Scenario] = []
    errors: list[str] = []
    for spec in specs:
        try:
            out.extend(model.parse(spec))
        except WhatifError as exc:
            errors.append(str(exc))
    if errors:
        raise WhatifError("\n".join(errors))
    return out


def evaluate(fabric: Fabric, scenarios: Sequence[Scenario]) -> list[Result]:
    """One Result per scenario, in the given order (see `worst_first`)."""
    model = _model(fabric)
    return [model.result(s) for s in scenarios]


def gate(results: Sequence[Result], min_bisection: float | None,
         max_oversubscription: float | None) -> list[str]:
    """Violations of the thresholds, worst scenario first; the CLI exits 1 when any.

    `min_bisection` is a percentage of the intact fabric's bisection (75 = 75%);
    `max_oversubscription` a down:up ratio (2 = 2:1).
    """
    if min_bisection is not None and not 0 <= min_bisection <= 100:
        raise WhatifError(f"min_bisection is a percentage of the intact bisection (0 to 100), "
                          f"got {min_bisection:g}")
    if max_oversubscription is not None and max_oversubscription < 1:
        raise WhatifError(f"max_oversubscription is a down:up ratio of at least 1, "
                          f"got {max_oversubscription:g}")
    out: list[str] = []
    for r in worst_first(results):
        label = r.scenario.label
        if min_bisection is not None and r.bisection_pct < min_bisection:
            out.append(f"{label}: bisection {_pct(r.bisection_pct)} of intact "
                       f"({_gbps(r.bisection_gbps)}) is below the minimum {min_bisection:g}%")
        if max_oversubscription is not None and r.worst_oversubscription > max_oversubscription:
            how = ("has downlinks but no live uplink" if math.isinf(r.worst_oversubscription)
                   else f"is oversubscribed {_os_text(r.worst_oversubscription)}")
            out.append(f"{label}: {r.worst_oversubscribed} {how}, above the maximum "
                       f"{max_oversubscription:g}:1")
    return out


def _pct(value: float) -> str:
    return f"{value:.1f}%"


def _gbps(value: float) -> str:
    if value >= 1000:
        return f"{value / 1000:,.1f} Tb/s"
    return f"{value:,.0f} Gb/s"


def _os_text(value: float) -> str:
    if math.isinf(value):
        return "no uplink"
    return f"{value:.2f}:1".replace(".00:", ":")


def _gpu_text(r: Result) -> str:
    if not r.lost_gpu_pairs:
        return "-" if r.min_gpu_bandwidth_pct >= 100 else f"{r.min_gpu_bandwidth_pct:.0f}% bw"
    parts = [f"{len(r.cut_off_gpus):,} cut off"] if r.cut_off_gpus else []
    rails = ("same+cross rail" if r.same_rail_pair_lost and r.cross_rail_pair_lost
             else "same rail" if r.same_rail_pair_lost else "cross rail")
    parts.append(f"{r.lost_gpu_pairs:,} pairs ({rails})")
    return ", ".join(parts)


def _affected_text(r: Result) -> str:
    if not r.affected_nodes:
        return "-"
    return ", ".join([f"{r.affected_nodes:,} node{'s' if r.affected_nodes != 1 else ''}",
                      _few("rail", r.affected_rails), _few("SU", r.affected_units)])


def _few(word: str, values: tuple[int, ...]) -> str:
    """`rail 2`, `rails 0,1,2`, or `8 rails` when the list would not fit a table cell."""
    if not values:
        return f"no {word}"
    text = ",".join(str(v) for v in values)
    if len(text) > 12:
        return f"{len(values)} {word}s"
    return f"{word}{'s' if len(values) > 1 else ''} {text}"


def format_table(results: Sequence[Result], limit: int | None = 50) -> str:
    """A terminal table, worst scenario first; at most `limit` rows (None: all)."""
    if not results:
        return "no scenarios\n"
    ordered = worst_first(results)
    shown = ordered if limit is None else ordered[:limit]
    head = ("scenario", "bisection left", "worst oversub", "GPUs without a path", "ECMP",
            "affected", "ftree")
    rows: list[tuple[str, ...]] = []
    for r in shown:
        label = r.scenario.label if len(r.scenario.label) <= 40 else r.scenario.label[:39] + "…"
        if r.scenario.kind == "role":
            label += " = " + "+".join(r.failed_switches)
            label = label if len(label) <= 40 else label[:39] + "…"
        ecmp = "1.00" if r.ecmp_imbalance == 1 else f"{r.ecmp_imbalance:.2f}"
        if r.ecmp_sampled:
            ecmp += "~"
        ftree = "-" if r.ftree is None else "yes" if r.ftree.ok else "no"
        worst = (f"{_os_text(r.worst_oversubscription)} {r.worst_oversubscribed}"
                 if r.worst_oversubscribed else "-")
        rows.append((label, f"{_pct(r.bisection_pct)} {_gbps(r.bisection_gbps)}", worst,
                     _gpu_text(r), ecmp, _affected_text(r), ftree))
    widths = [max(len(row[i]) for row in (head, *rows)) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip()
             for row in (head, tuple("-" * w for w in widths), *rows)]
    first = ordered[0]
    lines.insert(0, f"{len(results):,} scenario{'s' if len(results) != 1 else ''}, worst first; "
                    f"intact bisection {_gbps(first.intact_bisection_gbps)}")
    if len(shown) < len(ordered):
        lines.append(f"... {len(ordered) - len(shown):,} more (--format json lists all)")
    notes = sorted({r.method for r in shown if r.method})
    lines += [f"note: {n}" for n in notes]
    if any(r.ecmp_sampled for r in shown):
        lines.append("~ ECMP imbalance from a deterministic sample of leaf-class pairs")
    return "\n".join(lines) + "\n"


def _finite(value: float) -> float | None:
    return None if math.isinf(value) else round(value, 4)


def to_json(results: Sequence[Result]) -> dict[str, Any]:
    """Plain JSON values, worst scenario first; an infinite oversubscription is null."""
    out: list[dict[str, Any]] = []
    for r in worst_first(results):
        s = r.scenario
        out.append({
            "scenario": {"label": s.label, "kind": s.kind, "switches": list(s.switches),
                         "cables": list(s.cables),
                         "picks": [{"role": role, "count": n} for role, n in s.picks],
                         "detail": s.detail},
            "failed_switches": list(r.failed_switches),
            "failed_cables": r.failed_cables,
            "method": r.method or None,
            "bisection": {"gbps": r.bisection_gbps, "intact_gbps": r.intact_bisection_gbps,
                          "pct": round(r.bisection_pct, 4), "narrowest_tier": r.narrowest_tier},
            "oversubscription": {"worst": _finite(r.worst_oversubscription),
                                 "switch": r.worst_oversubscribed},
            "uplink_loss": [{"switch": u.switch, "role": u.role, "intact_links": u.intact_links,
                             "live_links": u.live_links, "lost_gbps": u.lost_gbps,
                             "oversubscription": _finite(u.oversubscription)}
                            for u in r.uplink_loss],
            "ecmp": {"imbalance": round(r.ecmp_imbalance, 4),
                     "min_pct": round(r.ecmp_min_pct, 4),
                     "worst_pair": list(r.ecmp_worst_pair) if r.ecmp_worst_pair else None,
                     "sampled": r.ecmp_sampled},
            "connectivity": {"cut_leaf_pairs": r.cut_leaf_pairs,
                             "cut_leaf_examples": [list(p) for p in r.cut_leaf_examples],
                             "cut_off_gpus": list(r.cut_off_gpus),
                             "lost_gpu_pairs": r.lost_gpu_pairs,
                             "lost_pairs_same_rail": r.lost_pairs_same_rail,
                             "lost_pairs_cross_rail": r.lost_pairs_cross_rail,
                             "same_rail_pair_lost": r.same_rail_pair_lost,
                             "cross_rail_pair_lost": r.cross_rail_pair_lost,
                             "min_gpu_bandwidth_pct": round(r.min_gpu_bandwidth_pct, 4)},
            "affected": {"rails": list(r.affected_rails), "scalable_units": list(r.affected_units),
                         "nodes": r.affected_nodes, "node_ranges": list(r.affected_node_ranges)},
            "ftree": None if r.ftree is None else {"ok": r.ftree.ok, "reason": r.ftree.reason,
                                                   "fallback": r.ftree.fallback},
        })
    return {"format": "fabgen-whatif/1", "count": len(out), "results": out}


def report_section(fabric: Fabric) -> str:
    """Markdown for the render report: the worst single switch, link and cable failure."""
    model = _model(fabric)
    scenarios = model.all_single()
    results = [model.result(s) for s in scenarios]
    kinds = (("switch", "any one switch"), ("link", "any one switch-to-switch link bundle"),
             ("cable", "any one cable"))
    lines = [
        "## Single failures",
        "",
        f"Every switch, every switch-pair bundle, one cable of each bundle and every node cable "
        f"failed one at a time ({len(results):,} scenarios, `fabgen whatif --fail all-single`). "
        f"Bisection is against the intact {_gbps(model.intact)}.",
        "",
        "| failure | worst case | bisection left | worst oversubscription | GPU pairs without a "
        "path | ECMP imbalance | ftree |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind, title in kinds:
        group = [r for r in results if r.scenario.kind == kind]
        if not group:
            continue
        r = worst_first(group)[0]
        worst = (f"{_os_text(r.worst_oversubscription)} ({r.worst_oversubscribed})"
                 if r.worst_oversubscribed else "-")
        ftree = "-" if r.ftree is None else "pure" if r.ftree.ok else "not pure"
        what = f"`{r.scenario.label}`" + (f" ({r.scenario.detail})" if kind == "cable" else "")
        lines.append(f"| {title} | {what} | {_pct(r.bisection_pct)} "
                     f"({_gbps(r.bisection_gbps)}) | {worst} | {_gpu_text(r)} | "
                     f"{r.ecmp_imbalance:.2f} | {ftree} |")
    cutting = [r for r in results if r.lost_gpu_pairs]
    lines.append("")
    if cutting:
        lines.append(f"{len(cutting):,} of {len(results):,} single failures leave some GPU pair "
                     "without a network path; dual-plane NICs or a second rail port avoid it.")
    else:
        lines.append("No single failure leaves a GPU pair without a network path.")
    broken = [r for r in results if r.ftree is not None and not r.ftree.ok]
    if broken:
        lines.append(f"{len(broken):,} single failures leave a tree that is no longer a pure "
                     f"fat-tree by OpenSM's ftree check: {FTREE_FALLBACK}.")
    return "\n".join(lines) + "\n"
