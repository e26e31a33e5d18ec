"""The fabric index: the lookups every target shares, built once per render beside the Fabric.

A Fabric lists switches, hosts and cables; the targets ask it questions by device: which cables
end on this switch, in port order, and what is at the other end; what each port is called on
its platform; what class each port is (host-facing, leaf-spine, spine-core: the cable class its
buffers and headroom are sized for, spare ports included); which host port a cable lands on.
Answered by scanning `Fabric.links`, each question costs the whole fabric, per switch and per
target. `FabricIndex` answers them from maps built once; `RenderContext` builds the one index of
a render and every target reads it (docs/architecture.md, "The fabric index").

What is cached and where: the maps by device are built in __init__; port names are computed
once per distinct port layout (platform, split, model, radix), not per switch; the NIC layout
every host shares is checked once, on first use. A switch's `ports()` are derived on each call
(a few dozen objects) rather than kept for all switches, so memory stays that of the maps.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

from fabgen.catalog import ports
from fabgen.topology.groups import FabricGroups, fabric_groups
from fabgen.topology.model import (
    Fabric,
    Host,
    HostPort,
    Link,
    LinkAddress,
    LinkKind,
    Role,
    Switch,
)

__all__ = ["FabricIndex", "FabricPort"]

# A spare port's class is the one its number has in the port plan: the tier it faces.
_ABOVE: dict[Role, LinkKind] = {"leaf": "leaf-spine", "spine": "spine-core", "core": "spine-core"}
_BELOW: dict[Role, LinkKind] = {"leaf": "node-leaf", "spine": "leaf-spine", "core": "spine-core"}


@dataclass(frozen=True, slots=True)
class FabricPort:
    """One cabled port of a switch, seen from that switch."""

    port: int  # logical port 1..radix
    name: str  # interface name on this switch's platform
    kind: LinkKind
    link: Link
    peer: str  # device at the other end
    peer_port: str  # the peer switch's interface name, or the host port's netdev
    peer_switch: Switch | None  # None for a host
    peer_host_port: HostPort | None  # None for a switch
    address: LinkAddress | None  # this end of the /31 (RoCE)
    peer_address: LinkAddress | None
    uplink: bool  # towards the tier above (leaf->spine, spine->core)

    @property
    def interface_address(self) -> str:
        """This end's address on its /31, "10.0.0.1/31": what the interface is configured with."""
        if self.address is None:
            raise ValueError(f"{self.link.id}: no /31 addresses (a RoCE fabric addresses every "
                             "switch link)")
        return self.address.with_prefixlen

    @property
    def peer_ip(self) -> str:
        """The peer's address on this cable: the BGP neighbour of a routed port."""
        if self.peer_address is None:
            raise ValueError(f"{self.link.id}: no /31 addresses (a RoCE fabric addresses every "
                             "switch link)")
        return self.peer_address.ip

    @property
    def subnet(self) -> str:
        """The cable's /31 as a prefix (what a leaf originates for a host port)."""
        if self.address is None:
            raise ValueError(f"{self.link.id}: no /31 addresses (a RoCE fabric addresses every "
                             "switch link)")
        return self.address.network


class FabricIndex:
    """Lookups over one Fabric: by device, by host port, port names and classes per switch."""

    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        self.switches: dict[str, Switch] = fabric.by_name or {s.name: s for s in fabric.switches}
        # Compute hosts and the subnet-manager hosts on reserved leaf ports, and all their
        # cables: a leaf's ports are every cable that ends on it.
        self.hosts: dict[str, Host] = {h.name: h for h in (*fabric.hosts, *fabric.sm_hosts)}
        self._links: dict[str, list[Link]] = {}
        for link in (*fabric.links, *fabric.sm_links):
            self._links.setdefault(link.a_device, []).append(link)
            self._links.setdefault(link.z_device, []).append(link)
        self._names: dict[tuple[str, int, str, int], tuple[str, ...]] = {}

    # --- by device ----------------------------------------------------------------------------

    def links(self, device: str) -> tuple[Link, ...]:
        """The cables ending on a switch or host, in Fabric.links order."""
        return tuple(self._links.get(device, ()))

    def host_port(self, host: str, dev: int) -> HostPort:
        """Port `dev` (HostPort.dev, a node-leaf cable's a_port) of a host."""
        for hp in self.hosts[host].ports:
            if hp.dev == dev:
                return hp
        raise KeyError(f"{host} has no port dev {dev}")

    # --- switch ports -------------------------------------------------------------------------

    def port_names(self, switch: Switch) -> tuple[str, ...]:
        """Interface names of the switch's logical ports 1..radix (index 0 is port 1), computed
        once per port layout: every switch of a model and split shares one tuple."""
        key = (switch.platform, switch.breakout, switch.model, switch.radix)
        names = self._names.get(key)
        if names is None:
            lanes = ports.native_lanes(switch.model)
            # Through the catalog module, where a platform teaches fabgen its names (the
            # architecture recipe's step 3).
            names = tuple(ports.port_name(switch.platform, n, switch.breakout, lanes=lanes)
                          for n in range(1, switch.radix + 1))
            self._names[key] = names
        return names

    def port_name(self, switch: Switch, port: int) -> str:
        if not 1 <= port <= switch.radix:
            raise ValueError(f"{switch.name} has ports 1..{switch.radix}, not {port}")
        return self.port_names(switch)[port - 1]

    def ports(self, switch: Switch) -> tuple[FabricPort, ...]:
        """The switch's cabled ports in port order (Ethernet1/1 before Ethernet2/1, swp2 before
        swp10): the order every platform lists interfaces in."""
        names = self.port_names(switch)
        out: list[FabricPort] = []
        for link in self._links.get(switch.name, ()):
            here_a = link.a_device == switch.name
            port, peer_number = (link.a_port, link.z_port) if here_a else (link.z_port, link.a_port)
            peer = link.z_device if here_a else link.a_device
            peer_switch = self.switches.get(peer)
            peer_host_port = None
            if peer_switch is not None:
                peer_port = self.port_names(peer_switch)[peer_number - 1]
            else:
                peer_host_port = self.host_port(peer, peer_number)
                peer_port = peer_host_port.netdev
            out.append(FabricPort(
                port=port, name=names[port - 1], kind=link.kind, link=link, peer=peer,
                peer_port=peer_port, peer_switch=peer_switch, peer_host_port=peer_host_port,
                address=link.a_address if here_a else link.z_address,
                peer_address=link.z_address if here_a else link.a_address,
                uplink=here_a and link.kind != "node-leaf"))
        out.sort(key=lambda p: p.port)
        return tuple(out)

    def port_classes(self, switch: Switch) -> tuple[LinkKind, ...]:
        """The class of each logical port 1..radix (index 0 is port 1): its cable's kind, or for
        a spare port the kind its number has in the port plan (a leaf's first down_ports face
        hosts; a top-tier switch's spares face the tier below), so a port sized now is right
        when it is cabled later. Buffers, headroom and cable lengths follow the class."""
        cabled = {lk.a_port if lk.a_device == switch.name else lk.z_port: lk.kind
                  for lk in self._links.get(switch.name, ())}
        top = switch.up_ports == 0
        return tuple(
            cabled.get(n) or (_BELOW[switch.role] if top or n <= switch.down_ports
                              else _ABOVE[switch.role])
            for n in range(1, switch.radix + 1))

    @cached_property
    def extras(self) -> dict[str, FabricIndex]:
        """The index of each separate network (storage, management) by its role, built on
        first use: they have their own devices and cables (the cabling plan reads them)."""
        return {extra.role: FabricIndex(extra) for extra in self.fabric.extras}

    # --- structure ----------------------------------------------------------------------------

    @cached_property
    def groups(self) -> FabricGroups:
        """Leaf groups, spine sets, core sets and pods (fabgen.topology.groups), computed on
        first use: the Slurm, Kubernetes, rails and report targets all read them."""
        return fabric_groups(self.fabric)

    # --- hosts --------------------------------------------------------------------------------

    @cached_property
    def host_layout(self) -> tuple[HostPort, ...]:
        """The compute ports every host has, addresses stripped, in dev order; raises if two
        hosts differ (the intent has one node spec, so they cannot today: the check keeps a
        future mixed fabric from silently getting the first host's layout everywhere)."""
        if not self.fabric.hosts:
            return ()
        first = self.fabric.hosts[0]
        layout = tuple(replace(hp, address=None) for hp in first.ports)
        want = [_shape(hp) for hp in first.ports]
        for host in self.fabric.hosts[1:]:
            if [_shape(hp) for hp in host.ports] != want:
                raise ValueError(f"host {host.name} has a different NIC layout from "
                                 f"{first.name}; one host profile cannot describe both")
        return layout


def _shape(hp: HostPort) -> tuple[object, ...]:
    return (hp.nic, hp.port, hp.dev, hp.rail, hp.plane, hp.rdma_device, hp.netdev, hp.gpu,
            hp.numa)
