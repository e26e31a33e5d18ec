"""Partitions: the default partition and the tenants, members resolved to port GUIDs, and where
each host's tenant P_Key lands in its port's P_Key table (what NCCL is told, NCCL_IB_PKEY).

Why index 1, read from the two sources that decide it:

- NCCL uses one P_Key *index* for every QP it makes: `NCCL_PARAM(IbPkey, "IB_PKEY", 0)` becomes
  the QP's `pkey_index` (nccl src/transport/net_ib/connect.cc, v2.30.7 5067397c). Index 0 is
  what a job gets when nothing says otherwise.
- OpenSM puts the default P_Key (0x7fff, full or limited) at index 0 of every end port unless a
  partition carries the `indx0` flag, and gives a port's first other P_Key the next free index,
  1 (linux-rdma/opensm opensm/osm_pkey_mgr.c pkey_mgr_update_port: "If index 0 is occupied by
  non-default, it should reoccupied by pkey 0x7FFF", then `block_index = 0; pkey_index = 1`
  when nothing is accumulated yet; commit fa74b98c).

So with tenant partitions, where hosts are limited members of the default partition, index 0
holds that limited key: a job on index 0 reaches the SM, SA and UFM (full members) but no other
host, and NCCL's traffic between two hosts of the same tenant is dropped. fabgen keeps the
default partition at index 0 (IPoIB's parent interface, the SA client and UFM's management
traffic stay on it, all of them talking to full members only) and tells NCCL the tenant key's
index: NCCL_IB_PKEY=1. A host belongs to one tenant (the intent checks it), so its tenant key is
the only other key of its ports and lands at index 1; hosts/preflight.sh reads
/sys/class/infiniband/<dev>/ports/<port>/pkeys/1 and fails when another key is there (a port
whose table kept an older tenant's key at 1, say). The `indx0` flag would instead move the
tenant key to index 0 and with it the IPoIB parent interface, which then could no longer reach
UFM's fabric interface (SHARP's TCP 6126, a full member of the default partition only).
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from fabgen.errors import FabgenError
from fabgen.targets.ibnetdiscover import GuidPlan
from fabgen.targets.opensm_plan import OpenSMSettings, PartitionSpec
from fabgen.topology.model import Fabric

__all__ = [
    "DEFAULT_PKEY",
    "FULL_MEMBER",
    "IPOIB_MTU_CODE",
    "TENANT_PKEY_INDEX",
    "Member",
    "Partition",
    "partitions",
    "tenant_of",
    "tenants_written",
]

DEFAULT_PKEY = 0x7FFF
FULL_MEMBER = 0x8000  # the membership bit of a P_Key table entry (IBA 10.9.1)
# IBTA MTU code 5 = 4096 bytes: the IPoIB broadcast group of each partition (and so IPoIB's
# datagram MTU) is created at 4 KB, what every HDR/NDR/XDR port supports.
IPOIB_MTU_CODE = 5
# Where a tenant's key sits in a member port's P_Key table (module docstring).
TENANT_PKEY_INDEX = 1


@dataclass(frozen=True, slots=True)
class Member:
    guid: int
    full: bool
    label: str  # "dgx001 mlx5_0", a comment for the reviewer


@dataclass(frozen=True, slots=True)
class Partition:
    """One partitions.conf definition, with its members resolved to port GUIDs."""

    name: str
    pkey: int
    ipoib: bool
    everyone: str | None  # "ALL=full", or the default partition's member rule
    members: tuple[Member, ...]
    pending: bool = False  # a tenant partition whose members need the real port GUIDs


def tenant_of(fabric: Fabric, settings: OpenSMSettings) -> dict[str, PartitionSpec]:
    """Each compute host's tenant partition (hosts in none are left out)."""
    out: dict[str, PartitionSpec] = {}
    for spec in settings.partitions:
        for host in fabric.hosts:
            if host.name not in out and any(fnmatch.fnmatchcase(host.name, pat)
                                            for pat in spec.hosts):
                out[host.name] = spec
    return out


def tenants_written(settings: OpenSMSettings, guids: GuidPlan | None) -> bool:
    """Whether partitions.conf holds the tenant partitions (their members are port GUIDs: only
    with infiniband.guids_file); until then every host is a full member of the default one."""
    return bool(settings.partitions) and guids is not None


def partitions(fabric: Fabric, guids: GuidPlan | None, settings: OpenSMSettings,
               plane: int | None = None, standby_guids: tuple[int, ...] = ()
               ) -> tuple[Partition, ...]:
    """The default partition and every tenant partition, members as port GUIDs of the plane.

    Without tenant partitions every port is a full member of the default partition. With them,
    hosts are limited members of the default partition by default (they reach the SM and SA but
    not each other there) while switches, the SM's own port (SELF) and the standby SMs' ports
    (`standby_guids`) stay full members. Tenant members are port GUIDs: without real ones
    (guids=None) the tenant partitions are `pending` and every host stays a full member of the
    default partition, so nothing is cut off before the re-render that isolates the tenants.
    """
    loc = ("infiniband", "partitions")
    tenants = tenants_written(settings, guids)
    membership = settings.default_membership or ("limited" if tenants else "full")
    everyone = "ALL=full"
    if membership == "limited":
        standby = "".join(f", 0x{g:016x}=full" for g in standby_guids)
        everyone = f"ALL=limited, ALL_SWITCHES=full, SELF=full{standby}"
    out = [Partition("Default", DEFAULT_PKEY, True, everyone, ())]
    names: set[str] = set()
    pkeys: set[int] = {DEFAULT_PKEY}
    for i, spec in enumerate(settings.partitions):
        if not spec.name or any(ch in spec.name for ch in "=,:;#\" \t\n"):
            raise FabgenError.single(f"partition name {spec.name!r} cannot be written to "
                                     "partitions.conf (no spaces or = , : ; # quotes)",
                                     loc=(*loc, i, "name"))
        if spec.name in names or spec.name == "Default":
            raise FabgenError.single(f"partition {spec.name!r} is defined twice",
                                     loc=(*loc, i, "name"))
        if spec.pkey in pkeys:
            raise FabgenError.single(f"P_Key {spec.pkey:#06x} is used twice",
                                     loc=(*loc, i, "pkey"))
        names.add(spec.name)
        pkeys.add(spec.pkey)
        hosts = [h for h in fabric.hosts if any(fnmatch.fnmatchcase(h.name, pat)
                                                for pat in spec.hosts)]
        if not hosts:
            raise FabgenError.single(f"partition {spec.name!r}: no host matches "
                                     f"{', '.join(spec.hosts)}", loc=(*loc, i, "hosts"))
        if guids is None:
            out.append(Partition(spec.name, spec.pkey, spec.ipoib, None, (), pending=True))
            continue
        members = tuple(
            Member(guids.port_guids[(h.name, hp.dev)], spec.membership == "full",
                   f"{h.name} {hp.rdma_device}")
            for h in hosts for hp in h.ports if plane is None or hp.plane == plane)
        out.append(Partition(spec.name, spec.pkey, spec.ipoib, None, members))
    return tuple(out)
