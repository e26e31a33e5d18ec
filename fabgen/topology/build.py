"""Lay out the fabric: switches, hosts and every cable, with names, ports and addresses.

All counts come from `sizing.shape`; this module only places things. Port plan per switch:
downlinks first (1..down), uplinks after them, consecutive uplinks to the same upper switch so a
split cable or twin-port cage lands on one peer.
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction
from ipaddress import IPv4Address

from fabgen.catalog import nodes
from fabgen.errors import Diagnostic
from fabgen.intent.models import Intent, StorageTargetsSpec
from fabgen.intent.names import expand_device
from fabgen.topology import numbering, sizing
from fabgen.topology.model import (
    Fabric,
    Host,
    HostPort,
    Link,
    LinkAddress,
    Role,
    Switch,
    TierFacts,
)


def _width(count: int) -> int:
    return max(2, len(str(count)))


class _Names:
    """Switch names: role, plane (when more than one), unit/pod/group, rail, index; and the
    tag of each anchor switch a cable id starts from (its name without the role word)."""

    def __init__(self, shape: sizing.Shape, style: str, prefix: str = "") -> None:
        self.shape = shape
        self.style = style
        self.plane_prefix = shape.planes > 1
        self.prefix = prefix  # "stor-"/"mgmt-" for the extra networks
        # Index widths of the most switches growth gives each role, so names never change.
        spines, cores = numbering.most_upper(shape)
        self.leaf_w = _width(shape.leaf_block or shape.leaves_per_unit)
        self.spine_w, self.group_w, self.core_w = _width(spines), _width(spines), _width(cores)

    def _p(self, plane: int) -> str:
        return f"-p{plane + 1}" if self.plane_prefix else ""

    def _tag_p(self, plane: int) -> str:
        return f"p{plane + 1}-" if self.plane_prefix else ""

    def leaf_tag(self, plane: int, unit: int, local: int) -> str:
        """`su1-r0`, `p2-su1-03`: the leaf's name without the role word."""
        place = f"r{local}" if self.style == "rail-optimized" else f"{local + 1:0{self.leaf_w}d}"
        return f"{self._tag_p(plane)}su{unit + 1}-{place}"

    def leaf(self, plane: int, unit: int, local: int) -> str:
        return f"{self.prefix}leaf-{self.leaf_tag(plane, unit, local)}"

    def spine_tag(self, plane: int, pod: int, index: int) -> str:
        """`pod2-s05`: a spine as a cable id names it (only 3-tier spines anchor cables)."""
        return f"{self._tag_p(plane)}pod{pod + 1}-s{index + 1:0{self.spine_w}d}"

    def spine(self, plane: int, pod: int, index: int) -> str:
        pod_part = f"-pod{pod + 1}" if self.shape.tiers == 3 else ""
        return f"{self.prefix}spine{self._p(plane)}{pod_part}-{index + 1:0{self.spine_w}d}"

    def core(self, plane: int, group: int, index: int) -> str:
        return (f"{self.prefix}core{self._p(plane)}-g{group + 1:0{self.group_w}d}"
                f"-{index + 1:0{self.core_w}d}")


EXTRA_PREFIX = {"storage": "stor-", "management": "mgmt-"}
# An MLAG pair's peer link: two cables between the pair's last two ports, bonded (NVIDIA DGX
# BasePOD Deployment Guide, "Network Deployment", SN4600C reference configuration: "nv set
# interface peerlink bond member swp63,swp64").
MLAG_PEER_PORTS = 2


def dual_homed(intent: Intent, role: str) -> bool:
    """Whether the network is an Ethernet management network of MLAG leaf pairs, each node's
    two ports (its in-band bond) on the two leaves of one pair: DGX BasePOD, "MLAG between the
    two SN4600C switches" and "each headnode / K8s node / DGX is dual homed to the SN4600C
    switches via bond interface" (Deployment Guide, "Network Deployment")."""
    spec = getattr(intent.topology, role)
    return (role == "management" and spec is not None and spec.transport == "ethernet"
            and spec.nics == 2)


def build(intent: Intent) -> Fabric:
    """Expand a validated intent into the Fabric every renderer reads."""
    fabric = _build(intent, "compute")
    extras = tuple(_build(extra_intent(intent, role), role, _extra_panels(intent, role),
                          mlag=dual_homed(intent, role),
                          targets=getattr(intent.topology, role).targets
                          if role == "storage" else None)
                   for role in ("storage", "management")
                   if getattr(intent.topology, role) is not None)
    if extras:
        fabric = replace(fabric, extras=extras)
        fabric.by_name.update((s.name, s) for s in fabric.switches)
    return fabric


def target_ports(intent: Intent, role: str) -> int:
    """Ports of the storage network's targets (0 for any other network, or without targets)."""
    spec = getattr(intent.topology, role)
    targets = spec.targets if role == "storage" and spec is not None else None
    return targets.count * targets.ports if targets is not None else 0


def extra_intent(intent: Intent, role: str) -> Intent:
    """The storage/management network as an intent of its own, one port per NIC, no
    addressing (fabgen plans its cabling, bill of materials and, for an InfiniBand storage
    network, its subnet manager; not its switch configs).

    Storage is laid out rail-optimized: a node's storage port k goes to leaf k of its group, so
    the two storage ports of a DGX reach two leaves ("each pair of storage ports provides
    parallel pathways", DGX SuperPOD H100 RA, storage fabric) and one leaf lost leaves every
    node its other port. Management stays a classic fat-tree (each node's ports on one leaf)."""
    spec = getattr(intent.topology, role)
    ib = spec.transport == "infiniband"
    data = intent.model_dump(mode="json")
    data["name"] = f"{intent.name}-{role}"
    data["fabric"] = {"transport": "infiniband" if ib else "roce", "speed": f"{spec.speed}G",
                      "generation": spec.generation if ib else None}
    node = data["cluster"]["node"]
    # The node model's map describes its compute ports, not these: plan them as a generic node.
    node.update(model="generic", nics=spec.nics, nic_ports=1, port_cages=1)
    data["topology"] = {
        "style": "rail-optimized" if role == "storage" else "rail-unaware",
        "leaf": spec.leaf.model_dump(mode="json"),
        "spine": spec.spine.model_dump(mode="json") if spec.spine else None,
        "oversubscription": {"leaf": spec.model_dump(mode="json")["oversubscription"]},
        "scalable_unit": spec.scalable_unit,
    }
    if dual_homed(intent, role):
        # A unit is one MLAG pair, its two "rails" the two bond members: each node's port k on
        # leaf k of its pair, the same port number on both (sized with the peer link's ports
        # kept free: extra_shape).
        data["topology"]["style"] = "rail-optimized"
    short = EXTRA_PREFIX[role].rstrip("-")
    # The model's storage-card ports when it publishes them, else names that say the network.
    names = nodes.extra_ports(intent, role, spec.nics, data["fabric"]["transport"])
    rdma, netdevs = names or (f"{short}{{dev}}", f"{short}{{dev}}")
    data["hosts"] = {**data["hosts"], "rdma_devices": rdma, "netdevs": netdevs,
                     "bootstrap_interface": None}
    # The compute fabric's subnet-manager hosts, tenants, SHARP and IPoIB are not this
    # network's: an InfiniBand storage network is a subnet of its own, with its own SM hosts.
    sm = spec.subnet_manager if ib and role == "storage" else None
    # Its own IPoIB subnet (topology.storage.ipoib): its SM hosts' fabric interfaces first, then
    # every node's storage ports, as on the compute fabric.
    ipoib = spec.ipoib if ib and role == "storage" else None
    data["infiniband"].update(
        management=sm.model_dump(mode="json") if sm is not None else {"hosts": []},
        sharp=False, partitions=[], traffic_classes=[], service_level=0, sm_host=None,
        guids_file=None, ipoib=ipoib.model_dump(mode="json") if ipoib is not None else None,
        default_membership=None)
    return Intent.model_validate(data)


def extra_shape(intent: Intent, role: str) -> sizing.Shape:
    """The storage or management network sized as its own fabric: the storage targets take
    node slots, an MLAG pair's leaves keep their peer-link ports out of the down/up split."""
    return sizing.shape(extra_intent(intent, role), target_ports(intent, role),
                        leaf_reserve=MLAG_PEER_PORTS if dual_homed(intent, role) else 0)


def _extra_panels(intent: Intent, role: str) -> list[str] | None:
    """The chassis labels of the node model's storage-card ports the network uses, when the
    network is planned on them (nodes.extra_ports); None otherwise."""
    spec = getattr(intent.topology, role)
    transport = "infiniband" if spec.transport == "infiniband" else "roce"
    names = nodes.extra_ports(intent, role, spec.nics, transport)
    return nodes.extra_panels(intent, role, names[0]) if names else None


def _build(intent: Intent, role: str, panels: list[str] | None = None,
           mlag: bool = False, targets: StorageTargetsSpec | None = None) -> Fabric:
    """One network of the intent; `panels`: the chassis label of each host port (dev order)
    when the node model's table does not give them (the storage and management networks);
    `mlag`: the units are MLAG leaf pairs, joined by their peer links; `targets`: the storage
    network's storage-system ports, which take node slots after the nodes."""
    shape = sizing.shape(intent, targets.count * targets.ports if targets else 0,
                         leaf_reserve=MLAG_PEER_PORTS if mlag else 0)
    topo = intent.topology
    ethernet = intent.fabric.transport == "roce"
    roce = ethernet and role == "compute"  # addresses and ASNs: the compute fabric only
    names = _Names(shape, topo.style, EXTRA_PREFIX.get(role, ""))
    node = intent.cluster.node
    platforms = intent.platforms
    plat: dict[Role, str] = {
        "leaf": platforms.leaf if ethernet else "infiniband",
        "spine": (platforms.spine or platforms.leaf) if ethernet else "infiniband",
        "core": (platforms.core or platforms.spine or platforms.leaf) if ethernet else "infiniband",
    }
    addressing = intent.addressing
    asn = addressing.asn
    plan = numbering.plan(shape, shape.leaf.radix - (MLAG_PEER_PORTS if mlag else 0))
    # Leaves' loopbacks from the bottom of the pool (after the network address, which reads as
    # a network in a review), the spine layer's from the top down (before the last address).
    lo_base = int(addressing.loopbacks.network_address)
    lo_top = lo_base + addressing.loopbacks.num_addresses - 2
    p2p_base = int(addressing.p2p.network_address)
    p2p_31s = addressing.p2p.num_addresses // 2

    switches: list[Switch] = []
    leaf_names: dict[tuple[int, int, int], str] = {}  # (plane, unit, local) -> name
    spine_names: dict[tuple[int, int, int], str] = {}  # (plane, pod, index)
    core_names: dict[tuple[int, int, int], str] = {}  # (plane, group, index)
    leaf_number: dict[str, int] = {}
    spine_number: dict[str, int] = {}  # 3 tiers: its /31 block's number

    def add(name: str, role: Role, plane: int, group: int, index: int, rail: int | None,
            kind: sizing.SwitchKind, down: int, up: int, sw_asn: int | None,
            number: int) -> None:
        loopback = lo_base + 1 + number if role == "leaf" else lo_top - number
        switches.append(Switch(
            name=name, role=role, plane=plane, group=group, index=index, rail=rail,
            model=kind.model, radix=kind.radix, speed_gbps=shape.speed_gbps,
            breakout=kind.breakout, platform=plat[role], asn=sw_asn if roce else None,
            loopback=IPv4Address(loopback) if roce else None, down_ports=down, up_ports=up,
            number=number))

    rail_opt = topo.style == "rail-optimized"
    leaf_ports = _leaf_ports(intent, shape)
    for plane in range(shape.planes):
        for unit in range(shape.units):
            for local in range(shape.leaves_per_unit):
                if (unit, local) not in leaf_ports:
                    continue  # a classic leaf of a partial unit with no host yet
                name = names.leaf(plane, unit, local)
                leaf_names[plane, unit, local] = name
                number = leaf_number[name] = plan.leaf(plane, unit, local)
                down, up = leaf_ports[unit, local]
                add(name, "leaf", plane, unit, local, local if rail_opt else None, shape.leaf,
                    down, up, asn.leaf_start + number, number)
        for pod in range(shape.pods):
            for index in range(shape.spines_per_pod):
                name = names.spine(plane, pod, index)
                spine_names[plane, pod, index] = name
                spine_number[name] = plan.spines[plane, pod, index]
                add(name, "spine", plane, pod, index, None, shape.spine, shape.spine_down,
                    shape.spine_up, asn.spine + (pod if shape.tiers == 3 else 0),
                    plan.layer["spine", plane, pod, index])
        if shape.tiers == 3:
            for group in range(shape.core_groups):
                for index in range(shape.cores_per_group):
                    name = names.core(plane, group, index)
                    core_names[plane, group, index] = name
                    assert shape.core is not None
                    add(name, "core", plane, group, index, None, shape.core,
                        shape.pods * shape.spine_core_links, 0, asn.core,
                        plan.layer["core", plane, group, index])

    hosts_base = int(addressing.hosts.network_address)
    hosts: list[Host] = []
    host_links: list[tuple[str, int, str, int, int, LinkAddress | None,
                           LinkAddress | None]] = []
    nodes_per_leaf = shape.leaf_down // shape.ports_per_node if not rail_opt else 0
    dev_count = node.nics * node.nic_ports
    gpus_per_numa = max(1, node.gpus // node.numa_nodes)
    hosts_spec = intent.hosts
    devices = _expand(hosts_spec.rdma_devices if hosts_spec.rdma_devices is not None
                      else nodes.PLACEHOLDER_RDMA, dev_count, node.nic_ports, topo.planes)
    netdevs = _expand(hosts_spec.netdevs if hosts_spec.netdevs is not None
                      else nodes.PLACEHOLDER_NETDEV, dev_count, node.nic_ports, topo.planes)
    mapped = nodes.mapped_ports(intent)  # the node model's published port table, if it applies
    # IPoIB (an InfiniBand compute or storage fabric): the SM hosts' fabric interfaces take the
    # subnet's first addresses, then each node port, host by host in port (= rail, one plane)
    # order. The storage targets' ports are their vendor's to address.
    ipoib = intent.infiniband.ipoib if role in ("compute", "storage") and not ethernet else None
    ipoib_len = ipoib.prefix.prefixlen if ipoib is not None else 32
    ipoib_base = (int(ipoib.prefix.network_address) + 1
                  + len(intent.infiniband.management.hosts)) if ipoib is not None else 0
    reserved_at = sizing.reserved_start(shape)
    for i in range(shape.nodes):
        # The node slots reserved for subnet-manager hosts and storage targets are skipped.
        unit, pos = divmod(i + (shape.reserved_slots if i >= reserved_at else 0), shape.su_size)
        name = intent.hosts.name.format(index=i + 1, su=unit + 1)
        ports: list[HostPort] = []
        plane_seen = [0] * shape.planes
        for dev in range(dev_count):
            nic, port = divmod(dev, node.nic_ports)
            plane = port % topo.planes
            rail = nic * (node.nic_ports // topo.planes) + port // topo.planes
            k = plane_seen[plane]  # this node's k-th port on the plane
            plane_seen[plane] += 1
            if rail_opt:
                leaf, leaf_port = leaf_names[plane, unit, rail], pos + 1
            else:
                local, slot = divmod(pos, nodes_per_leaf)
                leaf = leaf_names[plane, unit, local]
                leaf_port = slot * shape.ports_per_node + k + 1
            gpu = nic * node.gpus // node.nics
            numa = min(gpu // gpus_per_numa, node.numa_nodes - 1)
            rdma_device, netdev = devices[dev], netdevs[dev]
            panel = panels[dev] if panels is not None else ""
            if mapped is not None:
                facts = mapped[dev]
                rdma_device, netdev, gpu, numa = facts.rdma, facts.netdev, facts.gpu, facts.numa
                panel = facts.panel
            leaf_end = host_end = None
            if roce:
                # Node i's n-th port: /31 number i * ports + n of the hosts pool.
                lo = hosts_base + 2 * (i * dev_count + dev)
                leaf_end, host_end = LinkAddress(lo), LinkAddress(lo + 1)
            ports.append(HostPort(nic=nic, port=port, dev=dev, rail=rail, plane=plane,
                                  rdma_device=rdma_device, netdev=netdev, gpu=gpu, numa=numa,
                                  address=host_end, panel=panel,
                                  ipoib=LinkAddress(ipoib_base + i * dev_count + dev, ipoib_len)
                                  if ipoib is not None else None))
            host_links.append((name, dev, leaf, leaf_port, plane, host_end, leaf_end))
        hosts.append(Host(name=name, index=i + 1, su=unit, ports=tuple(ports)))

    if targets is not None:
        target_hosts, target_links = _targets(targets, shape, leaf_names, rail_opt)
        hosts += target_hosts
        host_links += target_links
    sm_hosts, sm_host_links = (_sm_hosts(intent, shape, leaf_names, rail_opt)
                               if role in ("compute", "storage") else ([], []))

    links: list[Link] = []
    media = _media(intent, shape)
    # A cable's id is the switch port it is anchored at (numbering): its leaf's port for a
    # host, subnet-manager host, uplink or peer-link cable, its spine's for a spine-core one.
    prefix = numbering.CABLE_PREFIX[role]
    tag = {leaf_names[key]: names.leaf_tag(*key) for key in leaf_names}
    if shape.tiers == 3:
        tag.update((spine_names[key], names.spine_tag(*key)) for key in spine_names)
    leaf_w = numbering.port_width(shape.leaf.radix)
    spine_w = numbering.port_width(shape.spine.radix)

    def cable(kind: str, a: str, ap: int, z: str, zp: int, plane: int,
              a_addr: LinkAddress | None = None, z_addr: LinkAddress | None = None) -> None:
        width = spine_w if kind == "spine-core" else leaf_w
        links.append(Link(id=f"{prefix}-{tag[a]}-{ap:0{width}d}",
                          kind=kind,  # type: ignore[arg-type]
                          a_device=a, a_port=ap, z_device=z, z_port=zp,
                          speed_gbps=shape.speed_gbps, plane=plane, media=media[kind],
                          a_address=a_addr, z_address=z_addr))

    for host, dev, leaf, leaf_port, plane, host_end, leaf_end in host_links:
        links.append(Link(id=f"{prefix}-{tag[leaf]}-{leaf_port:0{leaf_w}d}", kind="node-leaf",
                          a_device=host, a_port=dev, z_device=leaf, z_port=leaf_port,
                          speed_gbps=shape.speed_gbps, plane=plane, media=media["node-leaf"],
                          a_address=host_end, z_address=leaf_end))

    links_ls = shape.leaf_spine_links
    for plane in range(shape.planes):
        for unit in range(shape.units):
            pod, unit_in_pod = divmod(unit, shape.units_per_pod)
            for local in range(shape.leaves_per_unit):
                if (unit, local) not in leaf_ports:
                    continue
                leaf = leaf_names[plane, unit, local]
                number = leaf_number[leaf]
                leaf_in_pod = unit_in_pod * shape.leaves_per_unit + local
                # A trimmed leaf (full_units: false) has fewer links per spine; its cables keep
                # the ports a full leaf would use, so growing it only adds cables.
                links_here = leaf_ports[unit, local][1] // shape.spines_per_pod
                for index in range(shape.spines_per_pod):
                    spine = spine_names[plane, pod, index]
                    for k in range(links_here):
                        spine_port = leaf_in_pod * links_ls + k + 1
                        leaf_port = shape.leaf_up_offset + index * links_ls + k + 1
                        a_addr = z_addr = None
                        if roce:
                            lo = p2p_base + 2 * plan.leaf_uplink(number, leaf_port)
                            z_addr, a_addr = LinkAddress(lo), LinkAddress(lo + 1)
                        cable("leaf-spine", leaf, leaf_port, spine, spine_port, plane, a_addr,
                              z_addr)
        if shape.tiers == 3:
            links_sc = shape.spine_core_links
            for pod in range(shape.pods):
                for index in range(shape.spines_per_pod):
                    spine = spine_names[plane, pod, index]
                    for up in range(shape.spine_up):
                        core_index, k = divmod(up, links_sc)
                        core = core_names[plane, index, core_index]
                        spine_port = shape.spine_up_offset + up + 1
                        a_addr = z_addr = None
                        if roce:
                            lo = p2p_base + 2 * plan.spine_uplink(spine_number[spine],
                                                                  spine_port, p2p_31s)
                            z_addr, a_addr = LinkAddress(lo), LinkAddress(lo + 1)
                        cable("spine-core", spine, spine_port, core, pod * links_sc + k + 1,
                              plane, a_addr, z_addr)

    if mlag:
        # Each pair's peer link on the leaves' last ports, after every other cable.
        for unit in range(shape.units):
            first, second = leaf_names[0, unit, 0], leaf_names[0, unit, 1]
            radix = shape.leaf.radix
            for port in range(radix - MLAG_PEER_PORTS + 1, radix + 1):
                cable("peer-link", first, port, second, port, 0)

    sm_links = tuple(
        Link(id=f"{prefix}-{tag[leaf]}-{leaf_port:0{leaf_w}d}", kind="sm-leaf", a_device=host,
             a_port=dev, z_device=leaf, z_port=leaf_port, speed_gbps=shape.speed_gbps,
             plane=plane, media=media["sm-leaf"])
        for host, dev, leaf, leaf_port, plane in sm_host_links)

    fabric = Fabric(
        name=intent.name,
        transport=intent.fabric.transport,
        speed_gbps=shape.speed_gbps,
        tiers=shape.tiers,
        planes=shape.planes,
        rails=shape.rails if rail_opt else 0,
        su_size=shape.su_size,
        units=shape.units,
        switches=tuple(switches),
        hosts=tuple(hosts),
        links=tuple(links),
        tier_facts=_tier_facts(shape),
        bisection_gbps=bisection_gbps(links, shape.planes, shape.tiers, shape.speed_gbps),
        role=role,
        sm_hosts=tuple(sm_hosts),
        sm_links=sm_links,
    )
    fabric.by_name.update((s.name, s) for s in switches)
    return fabric


def _leaf_ports(intent: Intent, shape: sizing.Shape) -> dict[tuple[int, int], tuple[int, int]]:
    """(unit, leaf) -> (down ports, up ports) of every leaf to build.

    Full units: the sized split everywhere. With `full_units: false` the leaves of a partial last
    unit get only the uplinks their installed hosts need (rounded up so each spine still gets an
    equal share), and a classic unit's empty leaves are not built.
    """
    full = {(u, local): (shape.leaf_down, shape.leaf_up)
            for u in range(shape.units) for local in range(shape.leaves_per_unit)}
    # Slots in use in the last unit. Only a RoCE compute fabric cuts a unit (InfiniBand and
    # the storage and management networks build every unit in full), and it reserves no
    # slots, so they fill from the unit's first slot.
    installed = shape.nodes + shape.reserved_slots - (shape.units - 1) * shape.su_size
    if intent.topology.full_units or installed == shape.su_size:
        return full
    last = shape.units - 1
    ratio = intent.topology.oversubscription.leaf
    spines = shape.spines_per_pod
    rail_opt = intent.topology.style == "rail-optimized"
    per_leaf = shape.leaf_down // shape.ports_per_node if not rail_opt else 0
    for local in range(shape.leaves_per_unit):
        if rail_opt:
            used = installed
        else:
            nodes = min(per_leaf, max(0, installed - local * per_leaf))
            used = nodes * shape.ports_per_node
        if used == 0:
            del full[last, local]
            continue
        up = spines * math.ceil(math.ceil(Fraction(used) / ratio) / spines)
        full[last, local] = (used, min(up, shape.leaf_up))
    return full


def _sm_hosts(intent: Intent, shape: sizing.Shape, leaf_names: dict[tuple[int, int, int], str],
              rail_opt: bool) -> tuple[list[Host], list[tuple[str, int, str, int, int]]]:
    """The subnet-manager hosts on the node slots reserved for them at the end of the first
    unit (sizing.reserved_start), and their cables as (host, dev, leaf, leaf port, plane).

    Port j of a host goes to plane j mod planes, onto the next free reserved leaf port of that
    plane: in a rail-optimized unit a slot is one port on every rail leaf, so consecutive hosts
    land on different leaves (UFM's HA pair wants its primary and standby "connected to
    different fabric switches", UFM-SDN Appliance User Manual v4.17, HA prerequisites); in a
    classic fat-tree a slot is consecutive ports of one leaf.
    """
    mgmt = intent.infiniband.management
    if not shape.reserved_slots:
        return [], []
    first = sizing.reserved_start(shape) + shape.target_slots
    nodes_per_leaf = shape.leaf_down // shape.ports_per_node if not rail_opt else 0
    free: list[list[tuple[str, int, int, int]]] = [[] for _ in range(shape.planes)]
    for pos in range(first, first + shape.reserved_slots - shape.target_slots):
        unit, slot_pos = divmod(pos, shape.su_size)
        for plane in range(shape.planes):
            if rail_opt:
                free[plane] += [(leaf_names[plane, unit, rail], slot_pos + 1, rail, unit)
                                for rail in range(shape.rails)]
            else:
                local, slot = divmod(slot_pos, nodes_per_leaf)
                free[plane] += [(leaf_names[plane, unit, local],
                                 slot * shape.ports_per_node + k + 1, 0, unit)
                                for k in range(shape.ports_per_node)]
    devices = _expand(mgmt.rdma_devices, mgmt.ports, 1, 1)
    netdevs = _expand(mgmt.netdevs, mgmt.ports, 1, 1)
    ipoib = intent.infiniband.ipoib
    taken = [0] * shape.planes
    hosts: list[Host] = []
    cables: list[tuple[str, int, str, int, int]] = []
    for i, spec in enumerate(mgmt.hosts):
        ports: list[HostPort] = []
        unit = 0
        for j in range(mgmt.ports):
            plane = j % shape.planes
            leaf, leaf_port, rail, unit = free[plane][taken[plane]]
            taken[plane] += 1
            # The port the SM binds (the first) is UFM's fabric_interface: its IPoIB address.
            address = (LinkAddress(int(ipoib.prefix.network_address) + 1 + i,
                                   ipoib.prefix.prefixlen)
                       if ipoib is not None and j == 0 else None)
            ports.append(HostPort(nic=j, port=0, dev=j, rail=rail, plane=plane,
                                  rdma_device=devices[j], netdev=netdevs[j], gpu=-1, numa=-1,
                                  ipoib=address))
            cables.append((spec.name, j, leaf, leaf_port, plane))
        hosts.append(Host(name=spec.name, index=i + 1, su=unit, ports=tuple(ports)))
    return hosts, cables


def _targets(spec: StorageTargetsSpec, shape: sizing.Shape,
             leaf_names: dict[tuple[int, int, int], str], rail_opt: bool
             ) -> tuple[list[Host], list[tuple[str, int, str, int, int, None, None]]]:
    """A storage network's targets on the first of the reserved slots (sizing.reserved_start),
    and their cables.

    Their ports are numbered across the targets and spread like a node's: port k on rail leaf
    k mod rails of slot k div rails, so consecutive ports of a target land on different leaves
    and a target survives the loss of one. Each port is its own adapter (`<target> port<n>`):
    the storage system's adapter layout is its vendor's, not fabgen's to guess."""
    rails = max(shape.ports_per_node, 1)
    nodes_per_leaf = shape.leaf_down // rails if not rail_opt else 0
    hosts: list[Host] = []
    cables: list[tuple[str, int, str, int, int, None, None]] = []
    k = 0
    first = sizing.reserved_start(shape)
    for t in range(spec.count):
        name = spec.name.format(index=t + 1)
        ports: list[HostPort] = []
        unit = 0
        for j in range(spec.ports):
            pos = first + k // rails
            rail = k % rails
            k += 1
            unit, slot_pos = divmod(pos, shape.su_size)
            if rail_opt:
                leaf, leaf_port = leaf_names[0, unit, rail], slot_pos + 1
            else:
                local, slot = divmod(slot_pos, nodes_per_leaf)
                leaf, leaf_port = leaf_names[0, unit, local], slot * rails + rail + 1
            ports.append(HostPort(nic=j, port=0, dev=j, rail=rail, plane=0,
                                  rdma_device=f"port{j + 1}", netdev=f"port{j + 1}", gpu=-1,
                                  numa=-1))
            cables.append((name, j, leaf, leaf_port, 0, None, None))
        hosts.append(Host(name=name, index=t + 1, su=unit, ports=tuple(ports), target=True))
    return hosts, cables


def _sm_warnings(intent: Intent, shape: sizing.Shape) -> list[Diagnostic]:
    """A leaf every subnet-manager host hangs from alone is one failure from no SM at all.

    Placed as build places them (`_sm_hosts`), naming only the leaves of the units that hold
    the reserved slots, so the check costs the slots, not the fabric."""
    mgmt = intent.infiniband.management
    if len(mgmt.hosts) < 2 or not shape.reserved_slots:
        return []
    names = _Names(shape, intent.topology.style)
    start = sizing.reserved_start(shape)
    units = range(start // shape.su_size, (start + shape.reserved_slots - 1) // shape.su_size + 1)
    leaf_names = {(plane, unit, local): names.leaf(plane, unit, local)
                  for plane in range(shape.planes) for unit in units
                  for local in range(shape.leaves_per_unit)}
    _, cables = _sm_hosts(intent, shape, leaf_names,
                          intent.topology.style == "rail-optimized")
    leaves: dict[tuple[str, int], set[str]] = {}
    for host, _dev, leaf, _port, plane in cables:
        leaves.setdefault((host, plane), set()).add(leaf)
    out = []
    for plane in sorted({plane for *_, plane in cables}):
        sets = [leaves.get((h.name, plane), set()) for h in mgmt.hosts]
        if all(len(s) == 1 for s in sets) and len(set.union(*sets)) == 1:
            out.append(Diagnostic(
                f"every subnet-manager host hangs from {next(iter(sets[0]))} only: one leaf "
                "failure leaves the subnet without an SM", ("infiniband", "management"),
                "warning", hint="give the hosts more ports, or use a rail-optimized fabric"))
    return out


def _expand(value: str | list[str], count: int, nic_ports: int, planes: int) -> list[str]:
    if isinstance(value, list):
        return list(value)
    return [expand_device(value, dev, nic_ports, planes) for dev in range(count)]


def _media(intent: Intent, shape: sizing.Shape) -> dict[str, str]:
    """Cable type per link kind, for the bill of materials."""
    tech = "IB" if intent.fabric.transport == "infiniband" else "Ethernet"
    gen = (intent.fabric.generation or "").upper()
    rate = f"{shape.speed_gbps}G {gen + ' ' if gen else ''}{tech}"
    return {
        "node-leaf": f"{rate} fiber, NIC to leaf",
        "leaf-spine": f"{rate} fiber, leaf to spine",
        "spine-core": f"{rate} fiber, spine to core",
        "sm-leaf": f"{rate} fiber, subnet manager host to leaf",
        "peer-link": f"{rate} fiber, MLAG peer link",
    }


def bisection_gbps(links: list[Link] | tuple[Link, ...], planes: int, tiers: int,
                   speed_gbps: int) -> int:
    """Bandwidth across the worst half/half cut of a folded Clos: per plane, half of the
    narrowest tier, summed over planes.

    Tiers, in links: live host ports; the leaves' usable uplinks (each leaf counts
    min(hosts, uplinks): the uplinks of a leaf with few hosts carry no more than its hosts send);
    leaf-spine links (2 tiers) or each spine's min(downlinks, uplinks) (3 tiers); spine-core
    links. whatif.py applies the same definition to what survives a failure.
    """
    hosts: dict[str, int] = {}
    up: dict[str, int] = {}
    down: dict[str, int] = {}
    plane_of: dict[str, int] = {}
    h = [0] * planes
    ls = [0] * planes
    sc = [0] * planes
    for link in links:
        if link.kind == "node-leaf":
            hosts[link.z_device] = hosts.get(link.z_device, 0) + 1
            h[link.plane] += 1
        else:
            up[link.a_device] = up.get(link.a_device, 0) + 1
            down[link.z_device] = down.get(link.z_device, 0) + 1
            if link.kind == "leaf-spine":
                ls[link.plane] += 1
            else:
                sc[link.plane] += 1
        plane_of[link.z_device] = link.plane
    leaf_cap = [0] * planes
    for leaf, n in hosts.items():
        leaf_cap[plane_of[leaf]] += min(n, up.get(leaf, 0))
    if tiers == 3:
        ls = [0] * planes
        for spine, n in down.items():
            if spine in up:  # a spine (cores have no uplinks)
                ls[plane_of[spine]] += min(n, up[spine])
    total = 0
    for p in range(planes):
        tier = [h[p], leaf_cap[p], ls[p]] + ([sc[p]] if tiers == 3 else [])
        total += min(tier)
    return total * speed_gbps // 2

def _tier_facts(shape: sizing.Shape) -> tuple[TierFacts, ...]:
    per_plane = shape.planes
    facts = [TierFacts("leaf", shape.leaves * per_plane, shape.leaf.model, shape.leaf.radix,
                       shape.leaf_down, shape.leaf_up, Fraction(shape.leaf_down, shape.leaf_up))]
    spine_ratio = Fraction(shape.spine_down, shape.spine_up) if shape.spine_up else None
    facts.append(TierFacts("spine", shape.spines * per_plane, shape.spine.model,
                           shape.spine.radix, shape.spine_down, shape.spine_up, spine_ratio))
    if shape.tiers == 3 and shape.core is not None:
        facts.append(TierFacts("core", shape.cores * per_plane, shape.core.model,
                               shape.core.radix, shape.pods * shape.spine_core_links, 0, None))
    return tuple(facts)


def plan_warnings(intent: Intent, shape: sizing.Shape) -> list[Diagnostic]:
    """The layout's legal but questionable choices, each blamed on the intent field behind
    it: the loader adds them to the intent's warnings, so `plan`, `validate` and `render`
    print the same ones and `--strict` refuses them (issue 29)."""
    out: list[Diagnostic] = []

    def warn(message: str, loc: tuple[str, ...], hint: str | None = None) -> None:
        out.append(Diagnostic(message, loc, "warning", hint=hint))

    installed_last = shape.nodes + shape.reserved_slots - (shape.units - 1) * shape.su_size
    if installed_last < shape.su_size and intent.topology.full_units:
        in_last = (shape.reserved_slots and sizing.reserved_start(shape)
                   >= (shape.units - 1) * shape.su_size)
        reserved = (f" (with {shape.reserved_slots} slot(s) of subnet-manager hosts)"
                    if in_last else "")
        warn(f"scalable unit {shape.units} has {installed_last} of {shape.su_size} "
             f"nodes{reserved}; its leaves and uplinks are built in full so it can grow "
             "without recabling", ("cluster", "nodes"))
    elif installed_last < shape.su_size:
        warn(f"scalable unit {shape.units} has {installed_last} of {shape.su_size} nodes "
             "and is cabled for them only (full_units: false): growing it adds uplinks",
             ("cluster", "nodes"))
    used = shape.spine_down + shape.spine_up
    if used * 2 <= shape.spine.radix:
        warn(f"spines use {used} of their {shape.spine.radix} ports: the fabric can grow to "
             "twice its size on these spines, or fewer/smaller spines would do",
             ("topology", "spine"))
    if shape.tiers == 2 and shape.spines_per_pod < 4:
        warn(f"{shape.spines_per_pod} spine(s) per plane: one spine failure removes "
             f"{math.floor(100 / shape.spines_per_pod)}% of the leaf-spine bandwidth",
             ("topology", "spine"))
    return out + _sm_warnings(intent, shape)
