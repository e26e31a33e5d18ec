"""The expanded fabric: frozen facts computed once from the intent, read by every renderer."""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from ipaddress import IPv4Address, IPv4Interface
from socket import inet_ntoa
from typing import Literal, NamedTuple

Role = Literal["leaf", "spine", "core"]
# sm-leaf: a cable from a dedicated subnet-manager (UFM) host to a reserved leaf port; those
# cables live in Fabric.sm_links, apart from the compute fabric's `links`.
# peer-link: the inter-switch link of an MLAG leaf pair (the Ethernet management network)
LinkKind = Literal["node-leaf", "leaf-spine", "spine-core", "sm-leaf", "peer-link"]
ROLES: tuple[Role, ...] = ("leaf", "spine", "core")
TIER_OF: dict[Role, int] = {"leaf": 1, "spine": 2, "core": 3}


class LinkAddress(NamedTuple):
    """One end of a routed point-to-point link: an IPv4 address on its /31, as an integer.

    A 131k-GPU fabric has about 800,000 of these ends; as `ipaddress.IPv4Interface` objects
    they cost seconds to build and again each time a target printed them. Here the build does
    integer arithmetic only, and the text is made when a target prints it, by one C call
    (inet_ntoa, a quarter of a microsecond): cheaper than keeping 800,000 strings made by
    the build, which runs alone before the render's workers start, and which `fabgen plan`
    never prints. A NamedTuple (immutable like the frozen dataclasses around it) because it is
    made three times faster than a frozen dataclass. `interface` gives the ipaddress object
    where one is wanted.
    """

    value: int  # the address as a 32-bit integer
    prefixlen: int = 31

    @property
    def ip(self) -> str:
        """The dotted quad, "10.0.0.1"."""
        return inet_ntoa(self.value.to_bytes(4, "big"))

    @property
    def with_prefixlen(self) -> str:
        """"10.0.0.1/31": the address on its interface."""
        return str(self)

    @property
    def network(self) -> str:
        """"10.0.0.0/31": the prefix the link's two ends share (what a leaf originates)."""
        mask = (0xFFFFFFFF << (32 - self.prefixlen)) & 0xFFFFFFFF
        return f"{dotted(self.value & mask)}/{self.prefixlen}"

    @property
    def packed(self) -> bytes:
        """The address in network byte order (as IPv4Address.packed)."""
        return self.value.to_bytes(4, "big")

    @property
    def interface(self) -> IPv4Interface:
        return IPv4Interface((self.value, self.prefixlen))

    def __str__(self) -> str:
        return f"{inet_ntoa(self.value.to_bytes(4, 'big'))}/{self.prefixlen}"


def dotted(value: int) -> str:
    """An IPv4 address from its integer, as dotted text (inet_ntoa: a C call, no objects)."""
    return inet_ntoa(value.to_bytes(4, "big"))


@dataclass(frozen=True, slots=True)
class Switch:
    """One switch. Ports are logical (after breakout), numbered 1..radix."""

    name: str
    role: Role
    plane: int  # 0-based fabric plane
    group: int  # leaf: scalable unit; spine: pod (0 in a 2-tier fabric); core: core group
    index: int  # index within (role, plane, group[, rail])
    rail: int | None  # leaf of a rail-optimized fabric: the rail it serves
    model: str  # catalog key, or "custom"
    radix: int  # logical ports after breakout
    speed_gbps: int  # logical port speed
    breakout: int  # logical ports per native port (1 = none)
    platform: str  # a registered platform's name, or infiniband
    asn: int | None = None
    loopback: IPv4Address | None = None
    down_ports: int = 0  # ports reserved for the tier below (hosts for a leaf)
    up_ports: int = 0  # ports reserved for the tier above
    # Stable under growth (topology.numbering): a leaf's number by unit, plane and position;
    # a spine's or core's in the order growth adds the spine layer. Loopback, ASN and GUID
    # follow from it.
    number: int = 0


@dataclass(frozen=True, slots=True)
class HostPort:
    """One compute-fabric port of a host: a NIC port cabled to a leaf."""

    nic: int  # 0-based NIC index
    port: int  # 0-based port on that NIC
    dev: int  # nic * nic_ports + port
    rail: int
    plane: int
    rdma_device: str
    netdev: str
    gpu: int  # GPU index that is local to this NIC (same PCIe switch / NUMA); -1: no GPU
    numa: int  # -1: not planned (a subnet-manager host's port)
    address: LinkAddress | None = None  # RoCE: the host end of its /31
    # Where the cable plugs into the chassis, from the node model's port table ("OSFP4 P2" on a
    # DGX H100, "Slot1 P2"); "" when the model publishes none.
    panel: str = ""
    # InfiniBand: the port's IPoIB address on the default partition (infiniband.ipoib), with
    # the subnet's prefix length
    ipoib: LinkAddress | None = None


@dataclass(frozen=True, slots=True)
class Host:
    name: str
    index: int  # 1-based (a storage target: among the targets)
    su: int  # 0-based scalable unit
    ports: tuple[HostPort, ...]
    target: bool = False  # a storage network's target (the storage system), not a node


@dataclass(frozen=True, slots=True)
class Link:
    """One cable. `a` is the lower tier end (host or lower switch), `z` the upper."""

    id: str
    kind: LinkKind
    a_device: str
    a_port: int  # switch: logical port 1..radix; host: dev index 0..n-1
    z_device: str
    z_port: int
    speed_gbps: int
    plane: int
    media: str  # cable/transceiver type for the bill of materials
    a_address: LinkAddress | None = None  # RoCE /31 ends
    z_address: LinkAddress | None = None


@dataclass(frozen=True, slots=True)
class TierFacts:
    """Per-tier numbers the report and plan print."""

    role: Role
    count: int
    model: str
    radix: int
    down_ports: int
    up_ports: int
    oversubscription: Fraction | None  # achieved down:up bandwidth (None at the top tier)


@dataclass(frozen=True, slots=True)
class Fabric:
    """The whole fabric. Tuples are in a stable, natural order (the order files are written in)."""

    name: str
    transport: Literal["roce", "infiniband"]
    speed_gbps: int
    tiers: int
    planes: int
    rails: int
    su_size: int  # nodes per scalable unit
    units: int  # scalable units built
    switches: tuple[Switch, ...]
    hosts: tuple[Host, ...]
    links: tuple[Link, ...]
    tier_facts: tuple[TierFacts, ...]
    bisection_gbps: int
    role: str = "compute"  # compute | storage | management
    extras: tuple[Fabric, ...] = ()  # separate storage/management networks (cabling and BoM)
    # InfiniBand: the dedicated hosts of the subnet manager (UFM, sharp_am) on reserved leaf
    # ports, master first. Kept apart from hosts/links: they carry no GPU traffic, so NCCL,
    # bisection and what-if never count them; cabling, OpenSM and verify-cabling do.
    sm_hosts: tuple[Host, ...] = ()
    sm_links: tuple[Link, ...] = ()
    by_name: dict[str, Switch] = field(default_factory=dict, compare=False, repr=False)

    def switches_of(self, role: Role) -> tuple[Switch, ...]:
        return tuple(s for s in self.switches if s.role == role)

    def links_of(self, kind: LinkKind) -> tuple[Link, ...]:
        return tuple(link for link in self.links if link.kind == kind)
