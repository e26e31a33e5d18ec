"""Folded-Clos arithmetic: how many switches per tier, port splits and links per switch pair.

Pure numbers from the intent, no names or addresses: the validator uses them to say whether a
cluster fits, the builder to lay out the cabling.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

from fabgen import catalog
from fabgen.intent.models import IB_GENERATION_SPEED, Intent, SwitchSpec
from fabgen.intent.units import format_ratio


class SizingError(ValueError):
    """The cluster does not fit; `loc` is the intent field to change, `hint` what would fit."""

    def __init__(self, message: str, loc: tuple[str | int, ...], hint: str | None = None):
        super().__init__(message)
        self.loc = loc
        self.hint = hint

    def __reduce__(self) -> tuple[type[SizingError], tuple[str, tuple[str | int, ...], str | None]]:
        return (type(self), (str(self), self.loc, self.hint))  # pickles whole (--jobs)


@dataclass(frozen=True, slots=True)
class SwitchKind:
    """A switch model resolved to the fabric's link speed."""

    model: str  # catalog key or "custom"
    name: str
    radix: int  # logical ports at the link speed
    native_ports: int
    native_speed_gbps: int
    breakout: int  # logical ports per native port
    cage: str
    ports_per_cage: int

    @property
    def cage_ports(self) -> int:
        """Logical ports one cage carries (twin-port cages and breakouts carry several)."""
        return self.ports_per_cage * self.breakout


@dataclass(frozen=True, slots=True)
class Shape:
    """Every count of one plane of the fabric (all planes are identical copies)."""

    speed_gbps: int
    tiers: int
    planes: int
    rails: int  # leaf rails per plane (rail-optimized), or leaves per SU (rail-unaware)
    ports_per_node: int  # compute ports of one node on one plane
    su_size: int  # nodes per scalable unit
    units: int  # scalable units built (the last may be partly filled)
    nodes: int
    leaf: SwitchKind
    spine: SwitchKind
    core: SwitchKind | None
    leaf_down: int  # host ports per leaf (capacity)
    leaf_up: int
    leaf_up_offset: int  # uplinks are ports offset+1.., starting on a cage boundary
    leaves_per_unit: int
    units_per_pod: int  # all units in a 2-tier fabric
    pods: int
    spines_per_pod: int
    leaf_spine_links: int  # parallel links per leaf-spine pair
    spine_down: int
    spine_up: int  # 0 in a 2-tier fabric
    spine_up_offset: int  # spine uplinks start at offset+1 (a cage boundary)
    core_groups: int  # = spines_per_pod in a 3-tier fabric
    cores_per_group: int
    spine_core_links: int  # parallel links per spine-core pair
    # Node slots at the end of the first unit given to the subnet-manager hosts (InfiniBand;
    # reserved_start): units are sized for nodes + reserved_slots, as NVIDIA's SuperPOD gives
    # a DGX slot to UFM. Unit 1 is in every size of the fabric, so growth never moves them.
    reserved_slots: int = 0
    # Of those, the first ones, right after the nodes, hold a storage network's targets (the
    # storage system's own ports); the subnet-manager hosts take the slots after them.
    target_slots: int = 0
    # Leaves numbered per unit and plane (a full unit's; a unit sized to fewer nodes builds
    # fewer): the stride of the leaves' loopbacks, ASNs and /31 blocks (topology.numbering).
    leaf_block: int = 0
    # The parameters that size the layers above the leaves at any unit count.
    upper: Upper | None = None

    @property
    def leaves(self) -> int:
        return self.units * self.leaves_per_unit

    @property
    def spines(self) -> int:
        return self.pods * self.spines_per_pod

    @property
    def cores(self) -> int:
        return self.core_groups * self.cores_per_group if self.tiers == 3 else 0

    @property
    def leaves_per_pod(self) -> int:
        return self.units_per_pod * self.leaves_per_unit

    def host_ports(self) -> int:
        return self.nodes * self.ports_per_node

    def leaf_uplinks(self) -> int:
        return self.leaves * self.leaf_up

    def spine_uplinks(self) -> int:
        return self.spines * self.spine_up


def reserved_start(shape: Shape) -> int:
    """The first node slot (0-based, across units) reserved for subnet-manager hosts and
    storage targets: the last slots of the first unit (of as many units as they fill), storage
    targets first. They stay there as the fabric grows; the nodes take every other slot in
    order. NVIDIA's SuperPOD gives up a DGX slot to UFM (31 DGX in one SU, 63 in two, 127 in
    four: SuperPOD H100 RA Table 4), which never moves as SUs are added."""
    if not shape.reserved_slots:
        return shape.units * shape.su_size
    first_units = -(-shape.reserved_slots // shape.su_size)
    return first_units * shape.su_size - shape.reserved_slots


def link_speed(intent: Intent) -> int:
    """Speed of every compute link: the intent's, else the IB generation's, else the NIC's."""
    if intent.fabric.speed is not None:
        return intent.fabric.speed
    if intent.fabric.generation is not None:
        return IB_GENERATION_SPEED[intent.fabric.generation]
    nic = catalog.nics().get(intent.cluster.node.nic)
    return nic.speed_gbps if nic else 400


def resolve_switch(spec: SwitchSpec, speed: int, loc: tuple[str | int, ...]) -> SwitchKind:
    """Radix at the link speed: native ports, or a breakout that yields that speed."""
    if spec.model is not None:
        model = catalog.switches().get(spec.model)
        if model is None:
            raise SizingError(f"unknown switch model {spec.model!r}", (*loc, "model"))
        native, nspeed, cage, per_cage = (model.ports, model.speed_gbps, model.cage,
                                          model.ports_per_cage)
        options = list(model.breakouts)
        name, key = model.name, model.key
    else:
        assert spec.ports is not None and spec.speed is not None
        native, nspeed, cage, per_cage = spec.ports, spec.speed, "custom", 1
        options = []
        name, key = f"custom {spec.ports}x{spec.speed}G", "custom"
    if spec.breakout is not None:
        try:
            wanted = catalog.Breakout.parse(spec.breakout)
        except ValueError as exc:
            raise SizingError(str(exc), (*loc, "breakout")) from None
        chosen = [b for b in options if b == wanted]
        if spec.model is None:
            chosen = [wanted]
        if not chosen:
            raise SizingError(
                f"{key} has no breakout {spec.breakout!r}", (*loc, "breakout"),
                "available: " + (", ".join(map(str, options)) or "none"))
        split = chosen[0]
        if split.speed_gbps * split.count > nspeed:
            raise SizingError(f"breakout {spec.breakout} exceeds the {nspeed}G native port",
                              (*loc, "breakout"))
        if split.speed_gbps != speed:
            raise SizingError(
                f"breakout {split} gives {split.speed_gbps}G ports but the fabric runs at "
                f"{speed}G", (*loc, "breakout"))
        return SwitchKind(key, name, native * split.count, native, nspeed, split.count, cage,
                          per_cage)
    if nspeed == speed:
        return SwitchKind(key, name, native, native, nspeed, 1, cage, per_cage)
    for split in options:
        if split.speed_gbps == speed:
            return SwitchKind(key, name, native * split.count, native, nspeed, split.count,
                              cage, per_cage)
    speeds = [f"{nspeed}G"] + [f"{b.speed_gbps}G ({b})" for b in options]
    raise SizingError(
        f"{key} has no {speed}G ports (it offers {', '.join(speeds)})", (*loc, "model"),
        "set fabric.speed to one of those, or choose another switch")


def align(ports: int, cage: int) -> int:
    """Round a port count up to whole cages."""
    return -(-ports // cage) * cage


def split_ports(radix: int, down: int | None, ratio: Fraction,
                cage: int = 1) -> tuple[int, int]:
    """Down/up ports of a switch: `down` fixed (or the most that fit), up = ceil(down / ratio).

    Uplinks start on a cage boundary: one twin-port cage or split cable never serves a host and
    a spine at once, so transceivers and cable types stay uniform per cage.
    """
    if down is None:
        down = radix
        while down > 0 and align(down, cage) + math.ceil(down / ratio) > radix:
            down -= 1
    return down, math.ceil(Fraction(down) / ratio)


def _upper_count(lower: int, up_min: int, up_max: int, upper_down: int,
                 at_least: int = 1) -> tuple[int, int, int] | None:
    """(uplinks, upper switches N, links per pair): the fewest N such that every lower switch
    has the same number of links to every upper switch and the uppers' ports suffice.

    Symmetry comes first: ECMP and adaptive routing assume every lower switch has the same
    number of links to every upper switch, so N may be larger than a plain division. The lower
    switch may use more uplinks than the ratio needs (spare ports, better oversubscription) when
    that lets the uplinks divide evenly: 31 uplinks would otherwise need 31 spines.
    """
    for n in range(1, max(up_max, 1) + 1):
        if n < min(at_least, up_max):
            continue
        ups = align(up_min, n)
        if ups > up_max:
            continue
        links = ups // n
        if lower * links <= upper_down:
            return ups, n, links
    return None


def management_slots(intent: Intent, ports_per_node: int) -> int:
    """Node slots the dedicated subnet-manager hosts take (InfiniBand only).

    A slot is what one node uses on each plane: `ports_per_node` leaf ports (one per rail leaf,
    or consecutive ports of one leaf in a classic fat-tree). Each host's ports are spread over
    the planes, so the hosts need hosts x ports / planes of them per plane.
    """
    if intent.fabric.transport != "infiniband":
        return 0
    mgmt = intent.infiniband.management
    per_plane = len(mgmt.hosts) * math.ceil(mgmt.ports / intent.topology.planes)
    return math.ceil(per_plane / max(ports_per_node, 1))


def shape(intent: Intent, target_ports: int = 0, leaf_reserve: int = 0) -> Shape:
    """Size the fabric, or raise SizingError saying what does not fit and what would.

    `target_ports`: ports of a storage network's targets (the storage system), which take node
    slots after the nodes: one port on each rail leaf per slot.
    `leaf_reserve`: ports at the top of every leaf kept off the down/up split (an MLAG pair's
    peer link on the management network).
    """
    topo = intent.topology
    node = intent.cluster.node
    speed = link_speed(intent)
    leaf = resolve_switch(topo.leaf, speed, ("topology", "leaf"))
    spine = resolve_switch(topo.spine or topo.leaf, speed,
                           ("topology", "spine" if topo.spine else "leaf"))
    core_spec = topo.core or topo.spine or topo.leaf
    core_loc = "core" if topo.core else ("spine" if topo.spine else "leaf")
    core = resolve_switch(core_spec, speed, ("topology", core_loc))

    ports_per_node = node.nics * node.nic_ports // topo.planes
    nodes = intent.cluster.nodes
    targets = math.ceil(target_ports / max(ports_per_node, 1))
    reserved = management_slots(intent, ports_per_node) + targets
    slots = nodes + reserved  # what the units are sized for
    what = f"{nodes} nodes" + (
        f" and {reserved} slot(s) of storage targets and subnet-manager hosts" if targets else
        f" and {reserved} subnet-manager host slot(s)" if reserved else "")
    ratio_leaf, ratio_spine = topo.oversubscription.leaf, topo.oversubscription.spine

    # Leaf capacity in host ports at the requested oversubscription.
    leaf_ports = leaf.radix - leaf_reserve  # what hosts and uplinks may use
    max_down, _ = split_ports(leaf_ports, None, ratio_leaf, leaf.cage_ports)
    if topo.style == "rail-optimized":
        rails = ports_per_node
        su_cap = max_down  # one port per node per rail leaf
        su = topo.scalable_unit or min(su_cap, slots)
        if su > su_cap:
            raise SizingError(
                f"a scalable unit of {su} nodes needs {su} host ports per rail leaf, but a "
                f"{leaf.model} leaf at {format_ratio(ratio_leaf)} has {max_down}",
                ("topology", "scalable_unit"), f"use at most {su_cap} nodes per unit")
        leaves_per_unit = rails
        leaf_down = su
    else:
        # Classic fat-tree: a unit is `ports_per_node` leaves filled node by node (each node's
        # ports on one leaf, like a top-of-rack), the same switch count as a rail-optimized unit.
        if ports_per_node > max_down:
            raise SizingError(
                f"a node has {ports_per_node} ports per plane but a leaf has only {max_down} "
                "host ports", ("topology", "leaf"))
        nodes_per_leaf = max_down // ports_per_node
        default_su = nodes_per_leaf * ports_per_node
        su = topo.scalable_unit or min(default_su, max(slots, 1))
        leaves_per_unit = math.ceil(su / nodes_per_leaf)
        su = min(su, leaves_per_unit * nodes_per_leaf)
        rails = leaves_per_unit
        leaf_down = min(nodes_per_leaf, su) * ports_per_node
    leaf_down, leaf_up = split_ports(leaf_ports, leaf_down, ratio_leaf, leaf.cage_ports)
    leaf_up_offset = align(leaf_down, leaf.cage_ports)
    up_max = leaf_ports - leaf_up_offset
    units = math.ceil(slots / su)
    # Leaves are numbered as a full unit's: a classic unit sized to its nodes (no
    # scalable_unit) builds fewer leaves while it fills up, the numbers of the rest held for them.
    leaf_block = (leaves_per_unit if topo.style == "rail-optimized" or topo.scalable_unit
                  else ports_per_node)
    upper = Upper(leaves_per_unit, leaf_up, up_max, spine, core, ratio_spine, topo.min_spines)
    # Two tiers: every leaf of a plane reaches every spine.
    two = layers(upper, units, 2)
    if topo.tiers == 2 or (topo.tiers == "auto" and two is not None):
        if two is None:
            max_units = max(1, spine.radix // leaves_per_unit)
            raise SizingError(
                f"{what} need {units} scalable units ({units * leaves_per_unit} leaves "
                f"per plane), but a 2-tier fabric of {spine.model} spines ({spine.radix} ports) "
                f"reaches at most {spine.radix} leaves with equal links to every spine",
                ("topology", "tiers"),
                f"2 tiers fit up to {max_units * su - reserved} nodes; use tiers: 3 or auto, or "
                "a larger-radix spine")
        return Shape(speed, 2, topo.planes, rails, ports_per_node, su, units, nodes, leaf,
                     spine, None, leaf_down, two.leaf_up, leaf_up_offset, leaves_per_unit, units,
                     1, two.spines_per_pod, two.leaf_spine_links, two.spine_down, 0, 0, 0, 0, 0,
                     reserved, targets, leaf_block, upper)

    # Three tiers: pods of units under their own spines; spine j of every pod to core group j.
    if upper.full_pod_units() < 1:
        spine_down, _ = split_ports(spine.radix, None, ratio_spine, spine.cage_ports)
        raise SizingError(
            f"a {spine.model} spine has {spine_down} downlinks, fewer than the "
            f"{leaves_per_unit} leaves of one scalable unit need",
            ("topology", "spine"), "use a larger-radix spine or smaller units")
    three = layers(upper, units, 3)
    if three is None:
        upp = upper.full_pod_units()
        pods = math.ceil(units / upp)
        max_pods = core.radix
        raise SizingError(
            f"{what} need {pods} pods, but {core.model} core switches ({core.radix} "
            f"ports) reach at most {max_pods} pods with equal links to every pod",
            ("cluster", "nodes"),
            f"3 tiers of these switches fit up to {max_pods * upp * su - reserved} "
            "nodes; "
            "use larger-radix switches or more planes")
    return Shape(speed, 3, topo.planes, rails, ports_per_node, su, units, nodes, leaf, spine,
                 core, leaf_down, three.leaf_up, leaf_up_offset, leaves_per_unit,
                 three.units_per_pod, three.pods, three.spines_per_pod, three.leaf_spine_links,
                 three.spine_down, three.spine_up, three.spine_up_offset, three.spines_per_pod,
                 three.cores_per_group, three.spine_core_links, reserved, targets, leaf_block,
                 upper)


@dataclass(frozen=True, slots=True)
class Upper:
    """What decides the switches above the leaves, apart from how many units there are: with
    `layers` it sizes the spine and core layers of the same fabric at any unit count, which is
    how the numbering knows the order growth adds spines and cores in (topology.numbering)."""

    leaves_per_unit: int
    leaf_up: int  # uplinks the leaf ratio asks for (before they are spread evenly)
    up_max: int  # ports a leaf may give to uplinks
    spine: SwitchKind
    core: SwitchKind
    ratio_spine: Fraction
    min_spines: int

    def full_pod_units(self) -> int:
        """Units of a full pod (3 tiers): as many as one spine's downlinks reach."""
        spine_down, _ = split_ports(self.spine.radix, None, self.ratio_spine,
                                    self.spine.cage_ports)
        return spine_down // self.leaves_per_unit


@dataclass(frozen=True, slots=True)
class Layers:
    """The spine (and core) layer of a fabric of some number of units."""

    leaf_up: int  # uplinks per leaf, spread evenly over the spines
    spines_per_pod: int
    leaf_spine_links: int
    units_per_pod: int
    pods: int
    spine_down: int
    spine_up: int  # 0 in 2 tiers
    spine_up_offset: int
    cores_per_group: int  # 0 in 2 tiers; groups = spines_per_pod
    spine_core_links: int


@functools.lru_cache(maxsize=8192)
def layers(upper: Upper, units: int, tiers: int) -> Layers | None:
    """The spine and core layers `units` units get at `tiers` tiers, or None when they do not
    fit (2 tiers: the spines cannot reach every leaf with equal links; 3: the cores cannot
    reach every pod). A pure function of its arguments: growth is sized by calling it with
    fewer units."""
    lpu, leaf_up, up_max, spine = (upper.leaves_per_unit, upper.leaf_up, upper.up_max,
                                   upper.spine)
    if tiers == 2:
        two = _upper_count(units * lpu, leaf_up, up_max, spine.radix, upper.min_spines)
        if two is None:
            return None
        ups, spines, links = two
        return Layers(ups, spines, links, units, 1, units * lpu * links, 0, 0, 0, 0)
    spine_down, _ = split_ports(spine.radix, None, upper.ratio_spine, spine.cage_ports)
    # A full pod has one link from each of its leaves to each of `leaf_up` pod spines.
    units_per_pod = spine_down // lpu
    if units_per_pod < 1:
        return None
    # min_spines holds for full pods too: were it met only while a pod is alone, the second
    # pod would take spines away from the first.
    pod = _upper_count(units_per_pod * lpu, leaf_up, up_max, spine_down, upper.min_spines)
    assert pod is not None
    leaf_up, spines_per_pod, links = pod
    pods = math.ceil(units / units_per_pod)
    if pods == 1 and units < units_per_pod:
        units_per_pod = units
        pod = _upper_count(units * lpu, leaf_up, up_max, spine_down, upper.min_spines)
        assert pod is not None
        leaf_up, spines_per_pod, links = pod
    spine_down = units_per_pod * lpu * links
    spine_down, spine_up = split_ports(spine.radix, spine_down, upper.ratio_spine,
                                       spine.cage_ports)
    spine_up_offset = align(spine_down, spine.cage_ports)
    cores = _upper_count(pods, spine_up, spine.radix - spine_up_offset, upper.core.radix)
    if cores is None:
        return None
    spine_up, cores_per_group, core_links = cores
    return Layers(leaf_up, spines_per_pod, links, units_per_pod, pods, spine_down, spine_up,
                  spine_up_offset, cores_per_group, core_links)
