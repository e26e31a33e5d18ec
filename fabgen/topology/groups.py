"""The fabric's tiers as job schedulers see them: leaf groups, spine sets, core sets.

A scheduler places a job well when it knows which nodes share a switch. Its "leaf switch" is not
always one switch: in a rail-optimized fabric rail r of every node of a scalable unit lands on
rail leaf r, so the nodes one leaf serves are the nodes every rail leaf of that unit serves, and
the unit (its rail group) is the smallest network domain. In a rail-unaware fabric each node's
ports share one leaf, and the leaf (the same position in every plane) is the domain.

Everything here is derived from the cabling (node-leaf, leaf-spine, spine-core links), not from
names or positions: a leaf group is a set of leaves joined by the compute hosts they share, its
spine set per plane is where those leaves' uplinks land. Only compute hosts count (see
compute_hosts): the subnet-manager hosts on reserved leaf ports run no jobs. Storage and
management networks are separate Fabrics (Fabric.extras) and never appear.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from fabgen.topology.model import Fabric, Host

__all__ = [
    "CoreSet",
    "FabricGroups",
    "LeafGroup",
    "Pod",
    "SpineSet",
    "compute_hosts",
    "fabric_groups",
]


@dataclass(frozen=True, slots=True)
class LeafGroup:
    """Level 0: the leaves that serve exactly the same compute nodes (all planes)."""

    name: str
    unit: int  # 0-based scalable unit of its leaves
    pod: int  # 0-based pod (always 0 in a 2-tier fabric)
    leaves: tuple[str, ...]  # fabric order
    hosts: tuple[str, ...]  # compute hosts, fabric order


@dataclass(frozen=True, slots=True)
class SpineSet:
    """Level 1 of one plane: the spines the uplinks of a pod's leaf groups land on."""

    name: str
    plane: int
    pod: int
    spines: tuple[str, ...]
    children: tuple[str, ...]  # leaf group names
    nodes: int


@dataclass(frozen=True, slots=True)
class CoreSet:
    """Level 2 of one plane (3-tier fabrics): the cores every spine set of the plane reaches."""

    name: str
    plane: int
    cores: tuple[str, ...]
    children: tuple[str, ...]  # spine set names
    nodes: int


@dataclass(frozen=True, slots=True)
class Pod:
    """A spine set seen across planes: the leaf groups below it are the same in every plane.

    Strict trees (Kubernetes labels, Volcano HyperNodes) take one value per tier and node, so
    they name the pod; Slurm's tree takes every plane's spine set as a parent of the group.
    """

    name: str
    index: int
    children: tuple[str, ...]  # leaf group names
    spine_sets: tuple[str, ...]  # one per plane
    nodes: int


@dataclass(frozen=True, slots=True)
class FabricGroups:
    fabric: str
    tiers: int
    planes: int
    rail_optimized: bool
    leaf_groups: tuple[LeafGroup, ...]
    spine_sets: tuple[SpineSet, ...]  # plane-major, then pod
    core_sets: tuple[CoreSet, ...]  # one per plane in a 3-tier fabric, else empty
    pods: tuple[Pod, ...]
    top: str  # the plane-agnostic top tier's name: the cores (3 tiers) or the only pod
    nodes: int

    def group_of(self) -> dict[str, LeafGroup]:
        """Each compute host's leaf group."""
        return {h: g for g in self.leaf_groups for h in g.hosts}

    def pod_of(self) -> dict[str, Pod]:
        """Each leaf group's pod, by group name."""
        return {c: p for p in self.pods for c in p.children}


class NotAFatTree(ValueError):
    """The cabling does not nest (a leaf group reaching two pods, a host on two groups)."""


def compute_hosts(fabric: Fabric) -> tuple[Host, ...]:
    """The hosts that run jobs: Fabric.hosts. The subnet-manager/UFM hosts on reserved leaf
    ports are Fabric.sm_hosts, cabled into the compute fabric but never a scheduling target."""
    return fabric.hosts


def _plane_tag(planes: int, plane: int) -> str:
    return f"-p{plane + 1}" if planes > 1 else ""


def _leaf_group_name(fabric: Fabric, leaves: list[str], rail_opt: bool) -> str:
    first = fabric.by_name[leaves[0]]
    if rail_opt:
        return f"su{first.group + 1}"
    if fabric.planes <= 1:
        return first.name
    # The same leaf position in every plane: its name without the plane tag (leaf-p1-su1-01).
    return first.name.replace(_plane_tag(fabric.planes, first.plane) + "-", "-", 1)


class _Union:
    def __init__(self, items: Iterable[str]) -> None:
        self.parent = {i: i for i in items}

    def find(self, x: str) -> str:
        root = x
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[x] != root:
            self.parent[x], x = root, self.parent[x]
        return root

    def join(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra


def fabric_groups(fabric: Fabric) -> FabricGroups:
    """The leaf groups, spine sets and core sets of the compute fabric, from its cabling.
    A render computes them once, as FabricIndex.groups, for every target that asks."""
    return _fabric_groups(fabric)


def _fabric_groups(fabric: Fabric) -> FabricGroups:
    hosts = compute_hosts(fabric)
    order = {h.name: i for i, h in enumerate(hosts)}
    leaves_of: dict[str, list[str]] = {}
    hosts_of: dict[str, set[str]] = {}
    up: dict[str, set[str]] = {}  # switch -> upper switches it is cabled to
    for link in fabric.links:
        if link.kind == "node-leaf":
            if link.a_device in order:
                leaves_of.setdefault(link.a_device, []).append(link.z_device)
                hosts_of.setdefault(link.z_device, set()).add(link.a_device)
        else:
            up.setdefault(link.a_device, set()).add(link.z_device)
    union = _Union(hosts_of)
    for leaves in leaves_of.values():
        for leaf in leaves[1:]:
            union.join(leaves[0], leaf)
    members: dict[str, list[str]] = {}
    switch_order = {sw.name: i for i, sw in enumerate(fabric.switches)}
    for leaf in sorted(hosts_of, key=switch_order.__getitem__):
        members.setdefault(union.find(leaf), []).append(leaf)

    rail_opt = fabric.rails > 0
    raw: list[tuple[int, list[str], list[str]]] = []
    for leaves in members.values():
        group_hosts = sorted({h for leaf in leaves for h in hosts_of[leaf]}, key=order.__getitem__)
        raw.append((order[group_hosts[0]], leaves, group_hosts))
    raw.sort(key=lambda r: r[0])

    # Pods: where each plane's uplinks of a group land (the spines' group is their pod).
    spine_pod = {sw.name: sw.group for sw in fabric.switches if sw.role == "spine"}
    groups: list[LeafGroup] = []
    names: set[str] = set()
    for i, (_first, leaves, group_hosts) in enumerate(raw):
        name = _leaf_group_name(fabric, leaves, rail_opt)
        if name in names:
            name = f"leafgroup{i + 1}"
        names.add(name)
        reached = {spine_pod[s] for leaf in leaves for s in up.get(leaf, ()) if s in spine_pod}
        if len(reached) > 1:
            raise NotAFatTree(f"leaf group {name} has uplinks into pods "
                              f"{', '.join(str(p + 1) for p in sorted(reached))}")
        groups.append(LeafGroup(name=name, unit=fabric.by_name[leaves[0]].group,
                                pod=reached.pop() if reached else 0, leaves=tuple(leaves),
                                hosts=tuple(group_hosts)))

    spine_sets: list[SpineSet] = []
    pods_seen = sorted({g.pod for g in groups})
    multi_pod = fabric.tiers == 3
    for plane in range(fabric.planes):
        for pod in pods_seen:
            spines = tuple(sw.name for sw in fabric.switches
                           if sw.role == "spine" and sw.plane == plane and sw.group == pod)
            children = tuple(g.name for g in groups if g.pod == pod)
            if not spines:
                continue
            pod_tag = f"-pod{pod + 1}" if multi_pod else ""
            spine_sets.append(SpineSet(
                name=f"spines{_plane_tag(fabric.planes, plane)}{pod_tag}", plane=plane, pod=pod,
                spines=spines, children=children,
                nodes=sum(len(g.hosts) for g in groups if g.pod == pod)))
    core_sets: list[CoreSet] = []
    if fabric.tiers == 3:
        for plane in range(fabric.planes):
            cores = tuple(sw.name for sw in fabric.switches
                          if sw.role == "core" and sw.plane == plane)
            children = tuple(s.name for s in spine_sets if s.plane == plane)
            core_sets.append(CoreSet(name=f"cores{_plane_tag(fabric.planes, plane)}",
                                     plane=plane, cores=cores, children=children,
                                     nodes=len(hosts)))
    pods: list[Pod] = []
    for pod in pods_seen:
        children = tuple(g.name for g in groups if g.pod == pod)
        pods.append(Pod(name=f"spines-pod{pod + 1}" if multi_pod else "spines", index=pod,
                        children=children,
                        spine_sets=tuple(s.name for s in spine_sets if s.pod == pod),
                        nodes=sum(len(g.hosts) for g in groups if g.pod == pod)))
    top = "cores" if multi_pod else (pods[0].name if pods else "spines")
    return FabricGroups(fabric=fabric.name, tiers=fabric.tiers, planes=fabric.planes,
                        rail_optimized=rail_opt, leaf_groups=tuple(groups),
                        spine_sets=tuple(spine_sets), core_sets=tuple(core_sets),
                        pods=tuple(pods), top=top, nodes=len(hosts))
