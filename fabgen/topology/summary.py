"""Fabric summaries: the machine-readable plan (counts, BoM numbers) and a grouped view to draw.

Every number here is recounted from the built Fabric (switches, links, hosts), not taken from the
sizing arithmetic, so the plan shows what the cabling really is. The grouped view aggregates
devices by tier, plane and scalable unit/pod so a picture of a 100k-GPU fabric stays small.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

from fabgen import catalog
from fabgen.catalog.ports import cage_of
from fabgen.intent.models import Intent
from fabgen.intent.units import format_ratio
from fabgen.natural import natural_key
from fabgen.topology.model import ROLES, Fabric, LinkKind, Role, Switch

__all__ = [
    "ALL_LINK_KINDS",
    "LINK_KINDS",
    "SM_GROUP_ID",
    "SM_TRANSCEIVER",
    "FabricView",
    "Group",
    "GroupEdge",
    "GroupRole",
    "host_ports_per_cage",
    "natural_key",
    "ratio_text",
    "summarize",
    "switch_lookup",
    "transceivers",
    "view",
]

LINK_KINDS: tuple[LinkKind, ...] = ("node-leaf", "leaf-spine", "spine-core")
# Drawing and table order of every kind, the subnet-manager hosts' cables beside the nodes'.
ALL_LINK_KINDS: tuple[LinkKind, ...] = ("node-leaf", "sm-leaf", "leaf-spine", "spine-core")
# Group id of the subnet-manager hosts' box (drawn in the nodes' row).
SM_GROUP_ID = "sm_hosts"
# Transceiver type prefix of the management (subnet-manager) hosts' fabric ports.
SM_TRANSCEIVER = "management host"
GroupRole = Literal["hosts", "leaf", "spine", "core"]


def ratio_text(ratio: Fraction | None) -> str | None:
    """`2:1` style text of a down:up ratio, None where the tier has no uplinks."""
    return None if ratio is None else format_ratio(ratio)


def switch_lookup(fabric: Fabric) -> dict[str, Switch]:
    """Name -> switch; by_name is optional on hand-built fabrics, so fall back to the tuple."""
    return fabric.by_name or {sw.name: sw for sw in fabric.switches}


def host_ports_per_cage(intent: Intent) -> int:
    """NIC ports per host-side transceiver: the intent's `port_cages`, else the node model's."""
    node = intent.cluster.node
    return node.port_cages or catalog.NODE_PORTS_PER_CAGE.get(node.model, 1)


def _switch_transceiver(sw: Switch) -> str:
    known = catalog.switches().get(sw.model)
    cage = known.cage if known is not None else "custom"
    per_cage = (known.ports_per_cage if known is not None else 1) * sw.breakout
    return f"switch {cage} {per_cage}x{sw.speed_gbps}G"


def transceivers(fabric: Fabric, intent: Intent) -> dict[str, int]:
    """Transceivers by type: one per switch cage with a used port, and per host cage.

    A cage carries ports_per_cage x breakout logical ports (a twin-port OSFP, a 2x400G split), so
    counting cables or ports would overstate the optics; the DGX SuperPOD RA counts cages too.
    """
    switches = switch_lookup(fabric)
    used: dict[str, set[int]] = {}
    for link in (*fabric.links, *fabric.sm_links):
        ends = ((link.z_device, link.z_port),) if link.kind in ("node-leaf", "sm-leaf") else (
            (link.a_device, link.a_port), (link.z_device, link.z_port))
        for device, port in ends:
            used.setdefault(device, set()).add(cage_of(switches[device], port))
    counts: Counter[str] = Counter()
    for name in sorted(used, key=natural_key):
        counts[_switch_transceiver(switches[name])] += len(used[name])
    per_cage = host_ports_per_cage(intent)
    host_kind = f"node {per_cage}x{fabric.speed_gbps}G"
    for host in fabric.hosts:
        if host.ports:
            counts[host_kind] += math.ceil(len(host.ports) / per_cage)
    # The management (UFM / OpenSM) hosts' end of their sm-leaf cables, one transceiver per
    # cabled port: `infiniband.management.ports` are ConnectX ports, and no published cage
    # layout of a UFM appliance says two share a cage (the report says so beside the table).
    sm_ports = {(link.a_device, link.a_port) for link in fabric.sm_links}
    if sm_ports:
        counts[f"{SM_TRANSCEIVER} 1x{fabric.speed_gbps}G"] += len(sm_ports)
    switch_kinds = sorted((k for k in counts if k.startswith("switch ")), key=natural_key)
    node_kinds = sorted((k for k in counts if not k.startswith("switch ")), key=natural_key)
    return {kind: counts[kind] for kind in (*switch_kinds, *node_kinds)}


def summarize(fabric: Fabric, intent: Intent) -> dict[str, Any]:
    """The plan as plain JSON-able values, keys in a fixed order (see the report and tests)."""
    role_count = Counter(sw.role for sw in fabric.switches)
    cable_count = Counter(link.kind for link in fabric.links)
    facts = {tf.role: tf for tf in fabric.tier_facts}
    nodes = len(fabric.hosts)
    return {
        "name": fabric.name,
        "transport": fabric.transport,
        "speed_gbps": fabric.speed_gbps,
        "nodes": nodes,
        "gpus": nodes * intent.cluster.node.gpus,
        "tiers": fabric.tiers,
        "planes": fabric.planes,
        "rails": fabric.rails,
        "scalable_units": fabric.units,
        "su_size": fabric.su_size,
        "switches": {role: role_count.get(role, 0) for role in ROLES},
        "switch_models": {role: facts[role].model if role in facts else None for role in ROLES},
        # InfiniBand adds its subnet-manager hosts' cables (NVIDIA counts "Compute and UFM").
        "cables": {kind: cable_count.get(kind, 0) for kind in LINK_KINDS}
        | ({"sm-leaf": len(fabric.sm_links)} if fabric.transport == "infiniband" else {}),
        "transceivers": transceivers(fabric, intent),
        "oversubscription": {
            role: ratio_text(facts[role].oversubscription) if role in facts else None
            for role in ("leaf", "spine")
        },
        "bisection_gbps": fabric.bisection_gbps,
        "networks": {
            extra.role: {
                "transport": extra.transport,
                "speed_gbps": extra.speed_gbps,
                "switches": dict(Counter(sw.role for sw in extra.switches)),
                "switch_models": {tf.role: tf.model for tf in extra.tier_facts},
                "cables": len(extra.links),
            } for extra in fabric.extras
        },
    } | ({"sm_hosts": [host.name for host in fabric.sm_hosts]}
         if fabric.transport == "infiniband" else {})


# --- grouped view -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Group:
    """Devices of one tier drawn as one box: a plane's leaves of some SUs, a pod's spines..."""

    id: str  # stable, safe as a DOT node id or an SVG id
    role: GroupRole
    plane: int | None  # 0-based; None for hosts, which span every plane
    label: str  # what the group is ("plane 1 SU 1-4")
    detail: str  # what it holds ("32 leaves, rails 0-7")
    members: int  # devices in the group
    model: str = ""  # switch model (catalog key); empty for hosts


@dataclass(frozen=True, slots=True)
class GroupEdge:
    """All cables between two groups."""

    a: str  # Group.id of the lower end
    z: str  # Group.id of the upper end
    kind: LinkKind
    links: int


@dataclass(frozen=True, slots=True)
class FabricView:
    """Groups in drawing order (top tier first) and the cable counts between them."""

    groups: tuple[Group, ...]
    edges: tuple[GroupEdge, ...]

    def row(self, role: GroupRole) -> tuple[Group, ...]:
        return tuple(g for g in self.groups if g.role == role)


def _span(first: int, last: int) -> str:
    """1-based display of a 0-based index range, as switch names print them."""
    return f"{first + 1}" if first == last else f"{first + 1}-{last + 1}"


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"


def _plane_text(fabric: Fabric, plane: int) -> str:
    return f"plane {plane + 1} " if fabric.planes > 1 else ""


def _bucket(count: int, cap: int) -> int:
    """How many consecutive items share a group so that at most `cap` groups remain."""
    return max(1, math.ceil(count / max(cap, 1)))


def view(fabric: Fabric, max_groups: int = 16, gpus_per_node: int = 0) -> FabricView:
    """Group the fabric by tier, plane and scalable unit (leaves, hosts), pod (spines) and
    core group, merging consecutive units/pods/groups so no tier of a plane has more than
    `max_groups` boxes (a quarter of that for cores). In three tiers leaf groups follow pod
    boundaries, so each leaf group cables to exactly one spine group. `gpus_per_node` (from the
    intent) adds GPU counts to the node boxes.
    """
    switches = switch_lookup(fabric)
    units = fabric.units
    # The pod of each unit, as the cabling says (a leaf's uplinks go to its pod's spines).
    pod_of_unit: dict[int, int] = {}
    for link in fabric.links:
        if link.kind == "leaf-spine":
            pod_of_unit.setdefault(switches[link.a_device].group, switches[link.z_device].group)
    pods = max(pod_of_unit.values(), default=0) + 1
    core_groups = max((sw.group for sw in fabric.switches if sw.role == "core"), default=-1) + 1

    pod_bucket = _bucket(pods, max_groups)
    if units <= max_groups:
        unit_bucket_of = {u: u for u in range(units)}
    elif fabric.tiers == 3:
        unit_bucket_of = {u: pod_of_unit.get(u, 0) // pod_bucket for u in range(units)}
    else:
        size = _bucket(units, max_groups)
        unit_bucket_of = {u: u // size for u in range(units)}
    # Every pod's spines reach every core group, so core boxes fan out to all spine boxes;
    # fewer of them keeps that mesh of lines readable.
    core_bucket = _bucket(core_groups, max(1, max_groups // 4))

    def bucket_of(sw: Switch) -> int:
        if sw.role == "leaf":
            return unit_bucket_of[sw.group]
        return sw.group // (pod_bucket if sw.role == "spine" else core_bucket)

    def group_id(role: GroupRole, plane: int | None, bucket: int) -> str:
        return f"{role}_{bucket + 1}" if plane is None else f"{role}_p{plane + 1}_{bucket + 1}"

    members: dict[tuple[Role, int, int], list[Switch]] = {}
    for sw in fabric.switches:
        members.setdefault((sw.role, sw.plane, bucket_of(sw)), []).append(sw)
    groups: list[Group] = []
    for role in ("core", "spine", "leaf"):
        for key in sorted(k for k in members if k[0] == role):
            devs = members[key]
            groups.append(Group(
                id=group_id(role, key[1], key[2]), role=role, plane=key[1],
                label=_plane_text(fabric, key[1]) + _switch_group_label(fabric, role, devs),
                detail=_switch_group_detail(role, devs), members=len(devs),
                model=devs[0].model))

    host_units: dict[int, list[int]] = {}
    for host in fabric.hosts:
        host_units.setdefault(unit_bucket_of.get(host.su, 0), []).append(host.su)
    for bucket in sorted(host_units):
        sus = host_units[bucket]
        count = len(sus)
        gpu_text = f", {count * gpus_per_node:,} GPUs" if gpus_per_node else ""
        groups.append(Group(
            id=group_id("hosts", None, bucket), role="hosts", plane=None,
            label=f"nodes SU {_span(min(sus), max(sus))}",
            detail=_plural(count, "node") + gpu_text, members=count))

    if fabric.sm_hosts:
        ports = sum(len(host.ports) for host in fabric.sm_hosts)
        groups.append(Group(
            id=SM_GROUP_ID, role="hosts", plane=None, label="subnet manager",
            detail=f"{_plural(len(fabric.sm_hosts), 'host')}, {_plural(ports, 'port')}",
            members=len(fabric.sm_hosts)))

    host_su = {host.name: host.su for host in fabric.hosts}
    counts: Counter[tuple[str, str, LinkKind]] = Counter()
    for link in (*fabric.links, *fabric.sm_links):
        z = switches[link.z_device]
        z_id = group_id(z.role, z.plane, bucket_of(z))
        if link.kind == "sm-leaf":
            a_id = SM_GROUP_ID
        elif link.kind == "node-leaf":
            a_id = group_id("hosts", None, unit_bucket_of.get(host_su[link.a_device], 0))
        else:
            a = switches[link.a_device]
            a_id = group_id(a.role, a.plane, bucket_of(a))
        counts[a_id, z_id, link.kind] += 1
    order = {g.id: i for i, g in enumerate(groups)}
    edges = sorted(counts.items(),
                   key=lambda item: (ALL_LINK_KINDS.index(item[0][2]), order[item[0][1]],
                                     order[item[0][0]]))
    return FabricView(tuple(groups),
                      tuple(GroupEdge(a, z, kind, n) for (a, z, kind), n in edges))


def _switch_group_label(fabric: Fabric, role: Role, devs: list[Switch]) -> str:
    first, last = min(sw.group for sw in devs), max(sw.group for sw in devs)
    if role == "leaf":
        return f"leaves SU {_span(first, last)}"
    if role == "spine":
        return "spines" if fabric.tiers == 2 else f"spines pod {_span(first, last)}"
    return f"cores group {_span(first, last)}"


_NOUN: dict[Role, tuple[str, str]] = {
    "leaf": ("leaf", "leaves"), "spine": ("spine", "spines"), "core": ("core", "cores")}


def _switch_group_detail(role: Role, devs: list[Switch]) -> str:
    one, many = _NOUN[role]
    text = f"{len(devs):,} {one if len(devs) == 1 else many}"
    rails = sorted({sw.rail for sw in devs if sw.rail is not None})
    if rails:
        text += f", rails {rails[0]}-{rails[-1]}" if len(rails) > 1 else f", rail {rails[0]}"
    return text
