"""NIC target: host-side setup of the compute rails (RoCE QoS, MTU, addresses; IB basics).

Layout, and why: one profile script `hosts/nic-setup.sh` for every host, plus a small per-host data
file `hosts/<host>.env` with what differs between hosts: the rail addresses, their
leaf gateways and the RoCE v2 GIDs they produce. All hosts of a fabric share one NIC layout (the
intent has one node spec), so the logic and the QoS values are written once and reviewed once; a
1,024-host RoCE fabric then costs 1,024 four-line data files instead of 1,024 copies of the
script, and an address change shows up in golden/ as a one-line diff of one host. InfiniBand
hosts get a data file when the plan gives them something of their own, IPoIB addresses
(infiniband.ipoib) or a tenant's P_Key (fabgen.targets.ib_hosts); LIDs are the subnet
manager's.

Every number comes from the QosPlan or the Fabric; the templates only lay the values out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from ipaddress import IPv4Address
from typing import Any

from fabgen import templating
from fabgen.catalog import nodes
from fabgen.qos import QosPlan
from fabgen.targets import ib_hosts
from fabgen.targets.base import Artifacts, RenderContext, by_unit
from fabgen.targets.cable_lengths import cable_lengths
from fabgen.topology.model import Host, HostPort, LinkAddress

__all__ = [
    "FW_LINK_TYPE",
    "ROCE_MODE_V2",
    "ROUTE_TABLE_BASE",
    "RULE_PREF_BASE",
    "TARGET",
    "NicTarget",
    "RailPort",
    "host_file_path",
    "ipv4_gid",
    "map_source",
    "profile_name",
    "profile_ports",
    "rail_label",
    "rail_ports",
    "roce_host_data",
    "setup_data",
]

# Policy routing: rail i's routes live in table ROUTE_TABLE_BASE + i, selected by a rule at
# priority RULE_PREF_BASE + i for traffic sourced from that rail's address. Without it every
# rail would share the main table, where only one of eight "hosts pool via leaf" routes can win,
# and the kernel would resolve a RoCE v2 peer through the wrong rail (or through eth0).
ROUTE_TABLE_BASE = 100
RULE_PREF_BASE = 100
# cma_roce_mode -m: 1 = RoCE v1 / IB, 2 = RoCE v2 (mlnx-tools sbin/cma_roce_mode usage text).
ROCE_MODE_V2 = 2
# mlxconfig LINK_TYPE_P<n>: 1 = InfiniBand, 2 = Ethernet (VPI adapters boot in either).
FW_LINK_TYPE = {"infiniband": 1, "roce": 2}


@dataclass(frozen=True, slots=True)
class RailPort:
    """One compute port of a host, named the way the host tools and NCCL name it."""

    rail: int
    plane: int
    dev: int  # HostPort.dev: index in the intent's rdma_devices/netdevs lists
    rdma_device: str
    ib_port: int  # 1-based port number of rdma_device (NCCL_IB_HCA dev:port, ibstat, sysfs)
    fw_port: int  # 1-based physical port of the adapter (mlxconfig *_P<n> parameters)
    netdev: str
    gpu: int
    numa: int
    address: LinkAddress | None


def rail_ports(host: Host) -> tuple[RailPort, ...]:
    """The host's compute ports in rail order (rail, then plane).

    Each compute port is its own RDMA device (the intent rejects a name given to two ports, and
    ConnectX exposes one PCI function per port), so ib_port is 1; it is still counted per device
    rather than assumed, so a shared device would get ports 1, 2 in port order as the kernel
    numbers them. fw_port is the adapter's physical port, which mlxconfig's *_P<n> names.
    """
    return _rail_ports(host.ports)


def _rail_ports(host_ports: Sequence[HostPort]) -> tuple[RailPort, ...]:
    seen: dict[str, int] = {}
    ports: list[RailPort] = []
    for hp in host_ports:  # dev order: each device's ports in port order
        seen[hp.rdma_device] = seen.get(hp.rdma_device, 0) + 1
        ports.append(RailPort(rail=hp.rail, plane=hp.plane, dev=hp.dev,
                              rdma_device=hp.rdma_device, ib_port=seen[hp.rdma_device],
                              fw_port=hp.port + 1, netdev=hp.netdev, gpu=hp.gpu, numa=hp.numa,
                              address=hp.address))
    return tuple(sorted(ports, key=lambda p: (p.rail, p.plane)))


def profile_ports(ctx: RenderContext) -> tuple[RailPort, ...]:
    """The rail layout every host shares (addresses stripped): the index checks once per
    render that every host has it (FabricIndex.host_layout) and raises if two differ."""
    return _rail_ports(ctx.index.host_layout)


def map_source(ctx: RenderContext) -> str:
    """Where the compute ports' device names come from, as the scripts and report say it."""
    model = nodes.model_of(ctx.intent)
    if model.has_map:
        return f"the {model.name} port table ({model.cite})"
    hosts = ctx.intent.hosts
    given = [f"hosts.{f}" for f in ("rdma_devices", "netdevs") if getattr(hosts, f) is not None]
    origin = " and ".join(given) if given else "placeholders"
    missing = "" if len(given) == 2 else (
        f"; placeholders {nodes.PLACEHOLDER_RDMA}/{nodes.PLACEHOLDER_NETDEV} where unset")
    return (f"{origin}, unverified: the {model.name} has no published NIC map in "
            f"fabgen's node catalog{missing}")


def profile_name(ctx: RenderContext) -> str:
    """The host profile's name: the NCCL flavour its hosts use (roce, infiniband or efa)."""
    if ctx.intent.nccl.profile == "efa":
        return "efa"
    return ctx.fabric.transport


def ipv4_gid(address: IPv4Address | LinkAddress) -> str:
    """The RoCE v2 IPv4 GID as /sys/class/infiniband/<dev>/ports/<p>/gids/<i> prints it."""
    mapped = b"\x00" * 10 + b"\xff\xff" + address.packed
    return ":".join(mapped[i:i + 2].hex() for i in range(0, 16, 2))


def rail_label(port: RailPort, planes: int) -> str:
    """How scripts and the runbook name a rail: `rail3`, or `rail3-plane1` with planes."""
    return f"rail{port.rail}" + (f"-plane{port.plane}" if planes > 1 else "")


def host_file_path(host: str) -> str:
    return f"hosts/{host}.env"


def roce_host_data(ctx: RenderContext, host: Host) -> dict[str, Any]:
    """Per-host values of a RoCE host, one entry per rail in rail order."""
    # Each port's next hop is the leaf end of its /31, on the host's own cables.
    cables = {link.a_port: link for link in ctx.index.links(host.name)
              if link.kind == "node-leaf" and link.a_device == host.name}
    gateways = {dev: link.z_address for dev, link in cables.items()}
    lengths = ctx.derived(cable_lengths)
    ports = rail_ports(host)
    addresses: list[str] = []
    gids: list[str] = []
    leaf_ends: list[str] = []
    for p in ports:
        gateway = gateways.get(p.dev)
        if p.address is None or gateway is None:
            raise ValueError(f"{host.name} {p.netdev}: a RoCE port without an address")
        addresses.append(p.address.with_prefixlen)
        gids.append(ipv4_gid(p.address))
        leaf_ends.append(gateway.ip)
    return {
        "name": host.name,
        "netdevs": [p.netdev for p in ports],
        "addresses": addresses,
        "gateways": leaf_ends,
        "gids": gids,
        # Each rail's cable, metres: its measured length or qos.cable_length_m.
        "cable_lens": [lengths.link_m(cables[p.dev]) for p in ports],
    }


def _ecn_vector(plan: QosPlan) -> list[int]:
    """ECN (DCQCN NP and RP) per priority 0..7: on where the plan marks ECN, off elsewhere."""
    return [1 if any(c.ecn and c.priority == p for c in plan.classes) else 0 for p in range(8)]


def setup_data(ctx: RenderContext) -> dict[str, Any]:
    """The target-shaped data of hosts/nic-setup.sh: everything the template prints."""
    fabric, intent = ctx.fabric, ctx.intent
    ports = profile_ports(ctx)
    roce = fabric.transport == "roce"
    data: dict[str, Any] = {
        "fabric": fabric.name,
        "profile": profile_name(ctx),
        "transport": fabric.transport,
        "roce": roce,
        "rail_names": [rail_label(p, fabric.planes) for p in ports],
        "netdevs": [p.netdev for p in ports],
        "rdma_devices": [p.rdma_device for p in ports],
        "ib_ports": [p.ib_port for p in ports],
        "fw_ports": [p.fw_port for p in ports],
        "fw_link_type": FW_LINK_TYPE[fabric.transport],
        "map_source": map_source(ctx),
        "storage_prefix": "",  # an InfiniBand compute fabric's storage IPoIB only
    }
    if not roce:
        ib = intent.infiniband
        hosts = ib_hosts.ib_plan(ctx)
        data.update(
            service_level=ib.service_level,
            host_files=hosts.files,
            ipoib_prefix=hosts.ipoib_prefix or "",
            ipoib_tables=[ib_hosts.IPOIB_TABLE_BASE + i for i in range(len(ports))],
            ipoib_prefs=[ib_hosts.IPOIB_RULE_PREF_BASE + i for i in range(len(ports))],
            arp_ignore=ib_hosts.ARP_IGNORE,
            arp_announce=ib_hosts.ARP_ANNOUNCE,
            storage_prefix=hosts.storage_prefix or "",
            storage_netdevs=list(hosts.storage_netdevs),
            storage_tables=[ib_hosts.STORAGE_TABLE_BASE + i
                            for i in range(len(hosts.storage_netdevs))],
            storage_prefs=[ib_hosts.STORAGE_RULE_PREF_BASE + i
                           for i in range(len(hosts.storage_netdevs))],
        )
        return data
    data["host_files"] = True
    plan = ctx.qos
    if plan is None:
        raise ValueError("a RoCE fabric needs its QosPlan to render NIC scripts")
    ecn = _ecn_vector(plan)
    data.update(
        host_mtu=plan.host_mtu,
        switch_mtu=plan.mtu,
        dscp2prio=[f"set,{dscp},{prio}" for dscp, prio in enumerate(plan.dscp_to_priority)],
        pfc=",".join(str(v) for v in plan.pfc_vector),
        cable_len_m=plan.cable_length_m,
        rdma_dscp=plan.rdma.dscp[0],
        rdma_priority=plan.rdma.priority,
        rdma_tos=plan.rdma.tos,
        cnp_dscp=plan.cnp.dscp[0],
        cnp_priority=plan.cnp.priority,
        ecn_enable=ecn,
        cc_prio_mask=sum(1 << p for p, on in enumerate(ecn) if on),
        roce_mode=ROCE_MODE_V2,
        hosts_prefix=str(intent.addressing.hosts),
        route_tables=[ROUTE_TABLE_BASE + i for i in range(len(ports))],
        rule_prefs=[RULE_PREF_BASE + i for i in range(len(ports))],
        ecn_on=plan.ecn is not None,
    )
    return data


# Where the unit expects hosts/ to be installed on each host (the unit file says so).
INSTALL_DIR = "/etc/fabgen/hosts"
PROFILE_UNIT = ""  # the unit of the files every host shares


class NicTarget:
    name = "nic"
    description = ("hosts/nic-setup.sh: NIC setup of the compute rails (RoCE: mlnx_qos, "
                   "cma_roce_*, ECN, MTU, addresses; IB: GPUDirect, link type, IPoIB addresses "
                   "of the rails and storage ports), hosts/<host>.env: per-host addresses")

    def applies(self, ctx: RenderContext) -> bool:
        # EFA hosts are EC2 instances: AWS owns the fabric and the NIC settings.
        return ctx.fabric.transport in ("roce", "infiniband") and ctx.intent.nccl.profile != "efa"

    def units(self, ctx: RenderContext) -> Sequence[str]:
        """The profile (the empty name, which no device has), then each host's data file."""
        with_files = ctx.fabric.transport == "roce" or ib_hosts.host_files(ctx)
        hosts = [h.name for h in ctx.fabric.hosts] if with_files else []
        return [PROFILE_UNIT, *hosts]

    def render_unit(self, ctx: RenderContext, unit: str) -> Artifacts:
        if unit == PROFILE_UNIT:
            return {
                "hosts/nic-setup.sh": templating.render("nic/setup.sh.j2", **setup_data(ctx)),
                "hosts/fabgen-nic-setup.service": templating.render(
                    "nic/nic-setup.service.j2", fabric=ctx.fabric.name,
                    transport=ctx.fabric.transport, install_dir=INSTALL_DIR,
                    ipoib=ctx.fabric.transport == "infiniband" and (
                        ib_hosts.ib_plan(ctx).ipoib_prefix is not None
                        or ib_hosts.ib_plan(ctx).storage_prefix is not None)),
            }
        host = ctx.index.hosts[unit]
        if ctx.fabric.transport == "infiniband":
            return {host_file_path(unit): templating.render(
                "nic/host-ib.env.j2", fabric=ctx.fabric.name, pkey_index=ib_hosts.ib_plan(
                    ctx).pkey_index, **ib_hosts.host_data(ctx, host, list(rail_ports(host))))}
        return {host_file_path(unit): templating.render(
            "nic/host.env.j2", fabric=ctx.fabric.name, **roce_host_data(ctx, host))}

    def render(self, ctx: RenderContext) -> Artifacts:
        return by_unit(self, ctx)


TARGET = NicTarget()
