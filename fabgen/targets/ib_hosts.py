"""What an InfiniBand host needs from the plan: its IPoIB addresses, its tenant's P_Key and the
index NCCL finds it at, and where SHARP's aggregation manager listens.

IPoIB, one address per compute port: SHARP needs "an IPoIB interface in compute servers in
order to enable using UD multicast for result distribution" and its daemons and aggregation
manager "communicate over TCP/IP" (SHARP "Setting up NVIDIA SHARP Environment", v2.6.1-3.3.0),
and NCCL's SHARP plugin opens one SHARP context per rail device (nccl-rdma-sharp-plugins
src/sharp_plugin.c ncclSharpConnect: `init_spec.config.ib_dev_list = devName`), so every rail's
port carries IPoIB, not one port per host. The default partition is one broadcast domain, so all
of them share one subnet; a host then has eight interfaces in it, and nic-setup.sh keeps each
answering for its own address (arp_ignore=1, arp_announce=2) and sending from it through its own
port (a routing table per rail), as for RoCE.

An InfiniBand storage network with `topology.storage.ipoib` is a subnet of its own: each node's
storage ports get an address in it (HOST_STORAGE_IPOIB_ADDRESSES), with the same ARP and policy
routing treatment in tables of their own (STORAGE_TABLE_BASE).

The files: hosts/<host>.env (HOST_IPOIB_ADDRESSES, HOST_PKEY) beside the profile scripts, read by
nic-setup.sh (addresses) and preflight.sh (addresses, the P_Key at NCCL_IB_PKEY's index, and
with libsharp over sockets TCP to sharp_am). An InfiniBand profile with neither IPoIB nor
written tenants has no host files.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fabgen.targets.base import RenderContext
from fabgen.targets.opensm_partitions import (
    FULL_MEMBER,
    TENANT_PKEY_INDEX,
    tenant_of,
    tenants_written,
)
from fabgen.targets.opensm_plan import settings_from_intent
from fabgen.targets.opensm_sms import real_guids
from fabgen.targets.sharp import SHARP_AM_TCP_PORT
from fabgen.topology.model import Host

__all__ = [
    "ARP_ANNOUNCE",
    "ARP_IGNORE",
    "IPOIB_RULE_PREF_BASE",
    "IPOIB_TABLE_BASE",
    "STORAGE_RULE_PREF_BASE",
    "STORAGE_TABLE_BASE",
    "IbHostPlan",
    "host_data",
    "host_files",
    "ib_plan",
]

# Linux ip-sysctl.rst: arp_ignore 1 "reply only if the target IP address is local address
# configured on the incoming interface"; arp_announce 2 "Always use the best local address for
# this target" (the sending interface's own). With several interfaces in one subnet, the
# defaults (0, 0) let any of them answer for all: ARP flux.
ARP_IGNORE = 1
ARP_ANNOUNCE = 2
# IPoIB policy routing: rail i's subnet route in table IPOIB_TABLE_BASE + i, selected by a rule
# at priority IPOIB_RULE_PREF_BASE + i for traffic from that rail's address. Apart from RoCE's
# tables (nic.ROUTE_TABLE_BASE, 100+), so the two never share a number.
IPOIB_TABLE_BASE = 200
IPOIB_RULE_PREF_BASE = 200
# The storage subnet's ports: tables and rule priorities after the rails' 200-263 (a node has at
# most 32 NICs of 2 ports: cluster.node), before nothing else of fabgen's.
STORAGE_TABLE_BASE = 300
STORAGE_RULE_PREF_BASE = 300


@dataclass(frozen=True, slots=True)
class IbHostPlan:
    """The profile-wide IPoIB / tenant / SHARP facts of an InfiniBand fabric."""

    ipoib_prefix: str | None  # "10.224.0.0/20"
    tenants: bool  # partitions.conf holds the tenants (NCCL_IB_PKEY is rendered)
    pkey_index: int | None  # where each host's tenant key sits (None: no tenants written)
    sharp_addresses: tuple[str, ...]  # sharp_am's IPoIB addresses (either UFM node), sockets
    sharp_port: int | None  # sharp_am's TCP port when libsharp uses sockets, else None
    storage_prefix: str | None = None  # the storage subnet's IPoIB (topology.storage.ipoib)
    storage_netdevs: tuple[str, ...] = ()  # the nodes' storage ports, in port order

    @property
    def files(self) -> bool:
        return self.ipoib_prefix is not None or self.tenants or self.storage_prefix is not None


def ib_plan(ctx: RenderContext) -> IbHostPlan:
    """The InfiniBand host facts of this render (computed once per render)."""
    return ctx.derived(_ib_plan)


def _ib_plan(ctx: RenderContext) -> IbHostPlan:
    ib = ctx.intent.infiniband
    settings = settings_from_intent(ctx.intent)
    tenants = ctx.fabric.transport == "infiniband" and tenants_written(settings, real_guids(ctx))
    # Only libsharp over sockets has a TCP port to test; over UCX it needs none.
    sockets = ib.sharp and settings.sharp_transport == "sockets"
    sharp = tuple(hp.ipoib.ip for h in ctx.fabric.sm_hosts for hp in h.ports
                  if hp.ipoib is not None) if sockets else ()
    storage = _storage_ipoib(ctx)
    return IbHostPlan(
        ipoib_prefix=str(ib.ipoib.prefix) if ib.ipoib is not None and
        ctx.fabric.transport == "infiniband" else None,
        tenants=tenants,
        pkey_index=TENANT_PKEY_INDEX if tenants else None,
        sharp_addresses=sharp,
        sharp_port=SHARP_AM_TCP_PORT if sockets else None,
        storage_prefix=storage[0] if storage else None,
        storage_netdevs=storage[1] if storage else (),
    )


def _storage_ipoib(ctx: RenderContext) -> tuple[str, tuple[str, ...]] | None:
    """The storage subnet's IPoIB prefix and the nodes' storage netdevs (every node has the
    same storage ports), when topology.storage.ipoib plans it."""
    spec = ctx.intent.topology.storage
    if spec is None or spec.ipoib is None or ctx.fabric.transport != "infiniband":
        return None
    storage = next((x for x in ctx.fabric.extras if x.role == "storage"), None)
    if storage is None or not storage.hosts:
        return None
    return str(spec.ipoib.prefix), tuple(hp.netdev for hp in storage.hosts[0].ports)


def host_files(ctx: RenderContext) -> bool:
    """Whether InfiniBand hosts get hosts/<host>.env."""
    return ctx.fabric.transport == "infiniband" and ib_plan(ctx).files


def _tenants(ctx: RenderContext) -> dict[str, Any]:
    return ctx.derived(_tenant_map)


def _tenant_map(ctx: RenderContext) -> dict[str, Any]:
    return tenant_of(ctx.fabric, settings_from_intent(ctx.intent))


def host_data(ctx: RenderContext, host: Host, ports: list[Any]) -> dict[str, Any]:
    """Per-host values of an InfiniBand host, one entry per rail in rail order (`ports`: the
    host's nic.RailPort list)."""
    plan = ib_plan(ctx)
    by_dev = {hp.dev: hp for hp in host.ports}
    addresses = []
    for p in ports:
        address = by_dev[p.dev].ipoib
        addresses.append(address.with_prefixlen if address is not None else "")
    pkey = ""
    tenant = ""
    if plan.tenants:
        spec = _tenants(ctx).get(host.name)
        if spec is not None:
            tenant = spec.name
            pkey = f"0x{spec.pkey | (FULL_MEMBER if spec.membership == 'full' else 0):04x}"
    storage: list[str] = []
    if plan.storage_prefix is not None:
        node = ctx.index.extras["storage"].hosts[host.name]
        storage = [hp.ipoib.with_prefixlen if hp.ipoib is not None else "" for hp in node.ports]
    return {"name": host.name, "netdevs": [p.netdev for p in ports], "addresses": addresses,
            "pkey": pkey, "tenant": tenant, "storage_netdevs": list(plan.storage_netdevs),
            "storage_addresses": storage}
