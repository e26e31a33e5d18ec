"""Checks that field types cannot express: cross-field rules, fit, pools, dangerous choices."""

from __future__ import annotations

import math

from fabgen import catalog, qos, underlay
from fabgen.catalog import nodes
from fabgen.errors import Diagnostics
from fabgen.intent import names, switch_checks
from fabgen.intent.models import IB_GENERATION_SPEED, MAX_HOST_PORTS, Intent, sharp_release
from fabgen.intent.names import expand_device
from fabgen.intent.units import format_ratio
from fabgen.platforms.registry import checks as platform_checks
from fabgen.suggest import closest
from fabgen.topology import numbering, sizing
from fabgen.topology.build import dual_homed, extra_shape, plan_warnings

PRIVATE_ASN_RANGES = ((64512, 65534), (4200000000, 4294967294))


def check(intent: Intent, diags: Diagnostics) -> None:
    """Append every semantic error and warning of `intent` to `diags`."""
    _fabric(intent, diags)
    switch_checks.catalog_names(intent, diags)
    _qos(intent, diags)
    _hosts(intent, diags)
    switch_checks.breakout_lanes(intent, diags)
    if intent.fabric.transport == "infiniband":
        _infiniband(intent, diags)
    qos.check(intent, diags)  # independent of the checks above: report all at once
    underlay.check(intent, diags)
    platform_checks.check(intent, diags)  # each platform's own rules
    _size(intent, diags)
    if not diags.errors:
        _fit(intent, diags)


def _fabric(intent: Intent, diags: Diagnostics) -> None:
    fab = intent.fabric
    ib = fab.transport == "infiniband"
    if ib and fab.generation is None:
        diags.error("InfiniBand needs a generation: hdr, ndr or xdr", ("fabric", "transport"))
    if not ib and fab.generation is not None:
        diags.error("generation applies to InfiniBand only; RoCE takes a speed like 400G",
                    ("fabric", "generation"))
    if ib and fab.generation and fab.speed and fab.speed > IB_GENERATION_SPEED[fab.generation]:
        diags.error(f"{fab.generation.upper()} links run at most "
                    f"{IB_GENERATION_SPEED[fab.generation]}G", ("fabric", "speed"))
    fields = intent.model_fields_set
    if ib and "qos" in fields:
        diags.warn("the qos section applies to RoCE only and is ignored for InfiniBand "
                   "(traffic classes are service levels: see infiniband.service_level)", ("qos",))
    if ib and "platforms" in fields:
        diags.warn("InfiniBand switches are configured by the subnet manager; platforms is "
                   "ignored", ("platforms",))
    if not ib and "infiniband" in fields:
        if intent.infiniband.sharp:
            diags.error("SHARP is an InfiniBand feature; this fabric is RoCE",
                        ("infiniband", "sharp"))
        diags.warn("the infiniband section is ignored for a RoCE fabric", ("infiniband",))
    if ib and intent.infiniband.sharp and fab.generation == "hdr":
        pass  # SHARPv2 exists on HDR Quantum switches, nothing to flag
    topo, node = intent.topology, intent.cluster.node
    if node.nic_ports % topo.planes:
        diags.error(
            f"{topo.planes} planes need each NIC's ports split evenly over them, but nodes "
            f"have {node.nic_ports} port(s) per NIC", ("topology", "planes"),
            f"set cluster.node.nic_ports to a multiple of {topo.planes}")


def _qos(intent: Intent, diags: Diagnostics) -> None:
    if intent.fabric.transport != "roce":
        return
    qos = intent.qos
    if qos.rdma.priority == qos.cnp.priority:
        diags.error(f"CNP shares priority {qos.rdma.priority} with RDMA; CNPs must not be paused "
                    "by PFC with the traffic they throttle", ("qos", "cnp", "priority"),
                    "the usual plan is RDMA 3, CNP 6")
    # Priority 0 is the default class's: every DSCP no class names lands there. RDMA on it
    # would make all that traffic lossless (PFC on priority 0); CNP on it would share one
    # egress queue, strict and round-robin at once, which no switch schedules (validate said
    # ok, then two platforms' renders refused: found by the fuzz test).
    for name in ("rdma", "cnp"):
        if getattr(qos, name).priority == 0:
            diags.error(f"priority 0 carries the default class (every DSCP no class names); "
                        f"{name.upper()} needs a priority of its own", ("qos", name, "priority"),
                        "the usual plan is RDMA 3, CNP 6")
    owners: dict[int, str] = {qos.rdma.dscp: "the RDMA class"}
    if qos.cnp.dscp in owners:
        diags.error(f"DSCP {qos.cnp.dscp} is already the RDMA class's", ("qos", "cnp", "dscp"))
    owners.setdefault(qos.cnp.dscp, "the CNP class")
    seen_names: set[str] = set()
    for i, cls in enumerate(qos.classes):
        loc = ("qos", "classes", i)
        if cls.name in seen_names or cls.name in ("rdma", "cnp", "default"):
            diags.error(f"class name {cls.name!r} is used twice or reserved", (*loc, "name"))
        seen_names.add(cls.name)
        if cls.priority == qos.rdma.priority:
            diags.error(f"class {cls.name!r} is on the RDMA priority {cls.priority}; only RDMA "
                        "may be lossless", (*loc, "priority"))
        elif cls.priority == qos.cnp.priority:
            diags.error(f"class {cls.name!r} is on the CNP priority {cls.priority}",
                        (*loc, "priority"))
        for j, dscp in enumerate(cls.dscp):
            if dscp in owners:
                diags.error(f"DSCP {dscp} is already used by {owners[dscp]}", (*loc, "dscp", j))
            else:
                owners[dscp] = f"class {cls.name!r}"
    # host_mtu against mtu: qos.check, which knows the MTU defaults of the fabric's platforms.
    if not qos.pfc_watchdog.enabled:
        diags.warn("PFC watchdog is off: one stuck receiver can pause the whole fabric "
                   "(PFC storm)", ("qos", "pfc_watchdog", "enabled"))
    if not qos.ecn.enabled:
        diags.warn("ECN is off: with no DCQCN, congestion is handled by PFC pauses alone",
                   ("qos", "ecn", "enabled"))


def _hosts(intent: Intent, diags: Diagnostics) -> None:
    node = intent.cluster.node
    known = nodes.models()
    if node.model not in known:
        guess = closest(node.model, list(known))
        diags.error(f"unknown node model {node.model!r}", ("cluster", "node", "model"),
                    f"did you mean {guess!r}?" if guess
                    else "known: " + ", ".join(known) + " (generic for any other server)")
    count = node.nics * node.nic_ports
    for field in ("rdma_devices", "netdevs"):
        value = getattr(intent.hosts, field)
        loc = ("hosts", field)
        if value is None:
            continue
        if isinstance(value, list):
            if len(value) != count:
                diags.error(f"lists {len(value)} names, but a node has {count} compute ports "
                            "(nics x nic_ports)", loc)
                continue
            expanded = value
        else:
            expanded = [expand_device(value, dev, node.nic_ports, intent.topology.planes)
                        for dev in range(count)]
        dupes = sorted({n for n in expanded if expanded.count(n) > 1})
        if dupes:
            diags.error(f"gives the same name {dupes[0]!r} to two ports", loc,
                        "use {dev} in the template")
    for problem in nodes.problems(intent):
        if problem.severity == "error":
            diags.error(problem.message, problem.loc, problem.hint)
        else:
            diags.warn(problem.message, problem.loc, problem.hint)
    host = intent.hosts.name
    if "{index" not in host:
        diags.error("host name template must contain {index} so names are unique",
                    ("hosts", "name"))
    _ = names  # names' validators already ran in the models


def host_names(intent: Intent) -> list[str]:
    """Every host name the template gives, in order (what partitions and sm_host refer to)."""
    try:
        su = sizing.shape(intent).su_size  # the unit size build() uses, not only the intent's
    except sizing.SizingError:
        su = intent.topology.scalable_unit or intent.cluster.nodes
    return [intent.hosts.name.format(index=i + 1, su=i // su + 1)
            for i in range(intent.cluster.nodes)]


def _infiniband(intent: Intent, diags: Diagnostics) -> None:
    """Partitions, service levels and the SM host: names that must exist and keys that must not
    repeat, blamed on the field (OpenSM would otherwise drop a partition with one log line)."""
    import fnmatch

    ib = intent.infiniband
    hosts = host_names(intent)
    names_seen: dict[str, int] = {}
    pkeys_seen: dict[int, int] = {}
    for i, part in enumerate(ib.partitions):
        loc = ("infiniband", "partitions", i)
        if part.name in names_seen or part.name == "Default":
            diags.error(f"partition name {part.name!r} is used twice or reserved", (*loc, "name"))
        names_seen.setdefault(part.name, i)
        if part.pkey in pkeys_seen:
            diags.error(f"P_Key {part.pkey:#06x} is already partition "
                        f"{ib.partitions[pkeys_seen[part.pkey]].name!r}'s", (*loc, "pkey"))
        pkeys_seen.setdefault(part.pkey, i)
        for j, pattern in enumerate(part.hosts):
            if not any(fnmatch.fnmatchcase(h, pattern) for h in hosts):
                diags.error(f"host pattern {pattern!r} matches no host (hosts are named like "
                            f"{hosts[0]!r})", (*loc, "hosts", j))
    sls: dict[int, int] = {}
    for i, cls in enumerate(ib.traffic_classes):
        loc = ("infiniband", "traffic_classes", i)
        if cls.sl in sls:
            diags.error(f"SL {cls.sl} is already class {ib.traffic_classes[sls[cls.sl]].name!r}'s",
                        (*loc, "sl"))
        sls.setdefault(cls.sl, i)
        for j, name in enumerate(cls.partitions):
            if name not in names_seen:
                diags.error(f"no partition named {name!r}", (*loc, "partitions", j))
    if ib.traffic_classes and ib.service_level not in sls:
        diags.error(f"service level {ib.service_level} is not the SL of any traffic class",
                    ("infiniband", "service_level"))
    if ib.sm_host is not None and ib.sm_host not in hosts:
        guess = closest(ib.sm_host, hosts)
        diags.error(f"no host named {ib.sm_host!r}", ("infiniband", "sm_host"),
                    f"did you mean {guess!r}?" if guess else None)
    files = ib.guids_file if isinstance(ib.guids_file, list) else (
        [] if ib.guids_file is None else [ib.guids_file])
    for i, name in enumerate(files):
        # Read from the intent's directory: an intent from a pull request must not make CI
        # read (and quote in its errors) /proc/self/environ or a file outside the repository.
        parts = name.replace("\\", "/").split("/")
        if not name or name.startswith(("/", "~")) or ":" in parts[0] or ".." in parts:
            loc = ("infiniband", "guids_file", *((i,) if isinstance(ib.guids_file, list) else ()))
            diags.error(f"{name!r} is not a path inside the intent's directory", loc,
                        "put the ibnetdiscover output beside the intent and name it relative "
                        "to it, without '..'")
    tenants_of: dict[str, list[int]] = {}
    for i, part in enumerate(ib.partitions):
        for h in hosts:
            if any(fnmatch.fnmatchcase(h, pat) for pat in part.hosts):
                tenants_of.setdefault(h, []).append(i)
    for h, member_of in tenants_of.items():
        if len(member_of) > 1:
            # NCCL_IB_PKEY is one P_Key index for every job of the profile, and OpenSM places a
            # port's second tenant key at whichever index its pending list reaches first
            # (osm_pkey_mgr.c): a host in two tenants has no index NCCL could be told.
            names_ = " and ".join(repr(ib.partitions[k].name) for k in member_of[:2])
            diags.error(f"host {h!r} is in partitions {names_}: a host belongs to one tenant, "
                        "whose P_Key NCCL is told (NCCL_IB_PKEY)",
                        ("infiniband", "partitions", member_of[1], "hosts"))
            break
    _ipoib(intent, diags)
    if ib.sharp and ib.routing_engine == "updn":
        diags.warn("SHARP aggregation trees are built on a fat-tree; updn routing may place "
                   "them poorly", ("infiniband", "routing_engine"))
    _opensm_build(intent, diags)
    _management(intent, hosts, diags)
    _ufm_tenants(intent, diags)


def _ipoib(intent: Intent, diags: Diagnostics) -> None:
    """The IPoIB subnet holds every compute port and each SM host's fabric interface; without
    one, SHARP (libsharp to sharp_am over IPoIB) and UFM (an IPv4 address on fabric_interface)
    cannot start."""
    ib = intent.infiniband
    mgmt = ib.management
    planes = intent.topology.planes
    if ib.ipoib is None:
        # Without SHARP only UFM's own fabric interface needs an address, which the report's
        # bring-up steps say; SHARP needs one on every compute port too.
        if ib.sharp and ib.opensm == "nvidia":  # upstream + SHARP is an error of its own
            why = ("libsharp reaches sharp_am over IPoIB (TCP 6126, sharp_protocol sockets)"
                   if ib.sharp_transport() == "sockets" else
                   "SHARP wants IPoIB on the compute servers (Setting up NVIDIA SHARP "
                   "Environment)")
            diags.warn(f"SHARP is on but no IPoIB addresses are planned: {why}, and UFM's "
                       "fabric_interface needs an IPv4 address", ("infiniband", "ipoib"),
                       "set infiniband.ipoib.prefix, e.g. 10.224.0.0/20")
        return
    node = intent.cluster.node
    need = (intent.cluster.nodes * node.nics * node.nic_ports
            + len(mgmt.hosts) * min(planes, mgmt.ports) + 2)
    pool = ib.ipoib.prefix
    if planes > 1:
        diags.error("IPoIB addressing covers one subnet; each plane is a subnet of its own",
                    ("infiniband", "ipoib"), "remove infiniband.ipoib for a multi-plane fabric")
    elif pool.num_addresses < need:
        prefix = 32 - max(need - 1, 1).bit_length()
        diags.error(f"IPoIB subnet {pool} has {pool.num_addresses} addresses; the compute ports "
                    f"and subnet-manager hosts need {need} (with network and broadcast)",
                    ("infiniband", "ipoib", "prefix"), f"use a /{prefix} or larger")


def _opensm_build(intent: Intent, diags: Diagnostics) -> None:
    """What the chosen OpenSM build can do: upstream has no adaptive routing and no SHARP, and
    would silently route with another engine when given one it does not know."""
    ib = intent.infiniband
    base = ("infiniband",)
    ar_engine = ib.routing_engine.startswith("ar_")
    if ib.opensm == "upstream":
        if ib.adaptive_routing:
            diags.error("upstream OpenSM has no adaptive routing (the ar_ engines are NVIDIA "
                        "OpenSM's)", (*base, "adaptive_routing"),
                        "set infiniband.opensm: nvidia, or adaptive_routing: false")
        if ar_engine:
            diags.error(f"upstream OpenSM does not know {ib.routing_engine}: it would route "
                        "with its default engine instead", (*base, "routing_engine"),
                        "use ftree or updn, or infiniband.opensm: nvidia")
        if ib.sharp:
            diags.error("SHARP needs NVIDIA's OpenSM (sharp_enabled) and sharp_am",
                        (*base, "sharp"), "set infiniband.opensm: nvidia")
    if ar_engine and ib.adaptive_routing is False:
        diags.error(f"{ib.routing_engine} is an adaptive routing engine but adaptive_routing "
                    "is false", (*base, "routing_engine"), "use ftree or updn")
    if ib.routing_engine == "ar_ftree" and intent.fabric.generation == "xdr":
        diags.error("NVIDIA supports ar_updn, not ar_ftree, on XDR (UFM Enterprise User "
                    "Manual, Appendix - Adaptive Routing)", (*base, "routing_engine"),
                    "use ftree: with adaptive routing that runs ar_updn")
    _sharp_release(intent, diags)
    if ib.sharp and ib.sharp_sl == ib.service_level:
        diags.error(f"SHARP's SL {ib.sharp_sl} is the compute SL: give SHARP an SL (and so a "
                    "VL) of its own", (*base, "sharp_sl"))
    if ib.sharp and ib.sm_host is not None and not ib.management.hosts:
        # NVIDIA SHARP, "Setting up NVIDIA SHARP Environment": the aggregation manager "is a
        # central entity running on a dedicated server with a master Subnet Manager. This
        # dedicated server cannot serve as a compute node."
        diags.warn(f"SHARP's aggregation manager runs beside the master SM, here on compute "
                   f"host {ib.sm_host!r}; NVIDIA's SHARP guide wants a dedicated server that "
                   "is not a compute node", (*base, "sm_host"),
                   "remove sm_host and keep infiniband.management.hosts (the default: two "
                   "UFM hosts on reserved leaf ports)")


def _ufm_tenants(intent: Intent, diags: Diagnostics) -> None:
    """UFM Enterprise software writes the default partition itself, its HCA ports full members
    (UFM Enterprise User Manual v6.19.3-v6.22.1, Appendix - Partitioning), and documents no
    setting to make them limited; the appliance's CLI has one."""
    ib = intent.infiniband
    mgmt = ib.management
    if (mgmt.kind != "ufm" or mgmt.ufm != "software" or not mgmt.hosts or not ib.partitions
            or intent.topology.planes > 1 or (ib.default_membership or "limited") != "limited"):
        return
    diags.warn("UFM Enterprise software documents no setting that makes the hosts limited "
               "members of the default partition (its HCA ports are full members): the "
               "tenants' hosts can still reach each other on P_Key 0x7fff (IPoIB, anything at "
               "P_Key index 0); NCCL keeps to the tenant key (NCCL_IB_PKEY)",
               ("infiniband", "management", "ufm"),
               "use UFM Enterprise Appliances (management.ufm: appliance), whose CLI has "
               "`ib partition management defmember limited`, or set "
               "infiniband.default_membership: full to say you accept it")


def _sharp_release(intent: Intent, diags: Diagnostics) -> None:
    """What the SHARP release can do: UCX between libsharp and sharp_am is chosen by
    smx_protocol alone only from SHARP 3.10.3 (its release notes: smx_enabled_protocols removed;
    before it UCX also had to be enabled there, off by default since 2.6.1), which fabgen does
    not set."""
    ib = intent.infiniband
    if not ib.sharp:
        return
    if ib.sharp_protocol == "ucx" and sharp_release(ib.sharp_version) < (3, 10, 3):
        diags.error(f"sharp_protocol ucx with SHARP {ib.sharp_version}: before 3.10.3 UCX must "
                    "also be enabled in sharp_am's smx_enabled_protocols, which fabgen does not "
                    "set", ("infiniband", "sharp_protocol"),
                    "use sockets, or set sharp_version to the release UFM runs")


def _management(intent: Intent, hosts: list[str], diags: Diagnostics) -> None:
    """The dedicated subnet-manager hosts: unique names, one GUID and device per port, ports
    that split evenly over the planes, priorities that rank master above every standby."""
    ib = intent.infiniband
    mgmt = ib.management
    base = ("infiniband", "management")
    if not mgmt.hosts:
        return
    if ib.sm_host is not None:
        diags.error("sm_host runs the SM on a compute node; the management hosts already run "
                    "it", ("infiniband", "sm_host"), "remove sm_host, or set management.hosts: []")
    planes = intent.topology.planes
    if mgmt.ports % planes:
        diags.error(f"{mgmt.ports} port(s) per host do not split evenly over {planes} planes",
                    (*base, "ports"), f"use a multiple of {planes}: each plane needs its SM")
    seen: set[str] = set()
    taken = set(hosts)
    for i, host in enumerate(mgmt.hosts):
        loc = (*base, "hosts", i)
        if host.name in seen:
            diags.error(f"management host {host.name!r} is named twice", (*loc, "name"))
        elif host.name in taken:
            diags.error(f"{host.name!r} is already a compute host's name", (*loc, "name"))
        seen.add(host.name)
        if host.port_guids and len(host.port_guids) != mgmt.ports:
            diags.error(f"{len(host.port_guids)} port GUID(s) for {mgmt.ports} ports",
                        (*loc, "port_guids"), "one per fabric port, in port order")
    for field in ("rdma_devices", "netdevs"):
        value = getattr(mgmt, field)
        if isinstance(value, list) and len(value) != mgmt.ports:
            diags.error(f"{len(value)} name(s) for {mgmt.ports} ports", (*base, field))
    if ib.sm_priority < len(mgmt.hosts) - 1:
        diags.error(f"sm_priority {ib.sm_priority} leaves no lower priority for each of the "
                    f"{len(mgmt.hosts) - 1} standby SMs", ("infiniband", "sm_priority"),
                    f"use at least {len(mgmt.hosts) - 1}")


def _size(intent: Intent, diags: Diagnostics) -> None:
    """Beyond MAX_HOST_PORTS fabgen would not build within its memory goal: refused here, in
    a moment, rather than after minutes of planning (issue 18: 65,536 nodes x 8 NICs)."""
    node, topo = intent.cluster.node, intent.topology
    per_node = node.nics * node.nic_ports + sum(
        extra.nics for extra in (topo.storage, topo.management) if extra is not None)
    ports = intent.cluster.nodes * per_node
    if ports > MAX_HOST_PORTS:
        diags.error(f"{intent.cluster.nodes:,} nodes x {per_node} ports (compute, storage and "
                    f"management) are {ports:,} host ports; fabgen builds fabrics of up to "
                    f"{MAX_HOST_PORTS:,}", ("cluster", "nodes"),
                    f"at most {MAX_HOST_PORTS // per_node:,} nodes like these; a larger "
                    "cluster is several fabrics, one intent each")


def _fit(intent: Intent, diags: Diagnostics) -> None:
    try:
        shape = sizing.shape(intent)
    except sizing.SizingError as exc:
        diags.error(str(exc), exc.loc, exc.hint)
        return
    topo = intent.topology
    if topo.oversubscription.leaf > 2:
        diags.warn(f"leaf oversubscription {format_ratio(topo.oversubscription.leaf)} is above "
                   "2:1 on the compute fabric: all-reduce bandwidth drops with it",
                   ("topology", "oversubscription"))
    if shape.tiers == 3 and topo.oversubscription.spine > 2:
        diags.warn(f"spine oversubscription {format_ratio(topo.oversubscription.spine)} is "
                   "above 2:1", ("topology", "oversubscription", "spine"))
    for role in ("storage", "management"):
        if getattr(topo, role) is not None:
            _extra(intent, role, diags)
    if not topo.full_units and intent.fabric.transport == "infiniband":
        diags.error("OpenSM's ftree needs equal port groups on every leaf; an InfiniBand "
                    "fabric builds partial units in full", ("topology", "full_units"))
    if shape.reserved_slots and math.ceil(shape.nodes / shape.su_size) < shape.units:
        mgmt = intent.infiniband.management
        fits = (shape.units - 1) * shape.su_size - shape.reserved_slots
        last = shape.nodes + shape.reserved_slots - (shape.units - 1) * shape.su_size
        diags.warn(f"the {len(mgmt.hosts)} subnet-manager host(s) take {shape.reserved_slots} "
                   f"node slot(s) of unit 1, so {shape.nodes} nodes need {shape.units} scalable "
                   f"units, the last built for {last} node(s). NVIDIA's SuperPOD gives up a DGX "
                   "slot instead (127 DGX in 4 SUs, SuperPOD H100 RA Table 4)",
                   ("cluster", "nodes"),
                   f"set cluster.nodes: {fits}, or infiniband.management.hosts: [] with the SM "
                   "elsewhere")
    if topo.min_spines > shape.spines_per_pod:
        diags.warn(f"min_spines {topo.min_spines} cannot be met: each leaf has "
                   f"{shape.leaf_up} uplinks, so at most {shape.spines_per_pod} spines per "
                   f"{'pod' if shape.tiers == 3 else 'plane'} get equal links",
                   ("topology", "min_spines"))
    if topo.tiers == 3 and shape.pods == 1:
        diags.warn("3 tiers forced, but the fabric fits in one pod: every core links to a single "
                   "spine and adds cost without paths", ("topology", "tiers"),
                   "use tiers: auto")
    _pools(intent, shape, diags)
    if intent.fabric.transport == "infiniband":
        _lids(intent, shape, diags)
    if not diags.errors:  # what the plan warns about, once the fabric can be built
        diags.extend(plan_warnings(intent, shape))


# Unicast LIDs of one InfiniBand subnet: 0x0001-0xBFFF (IBA spec vol. 1, 4.1.3 "Local
# identifiers"; OpenSM's ib_types.h IB_LID_UCAST_START_HO / IB_LID_UCAST_END_HO). With LMC 0,
# which fabgen's opensm.conf sets (ftree needs it), each CA port and each switch (its port 0)
# takes one; OpenSM leaves the rest of a larger subnet without a LID, unreachable.
IB_UNICAST_LIDS = 0xBFFF


def _lids(intent: Intent, shape: sizing.Shape, diags: Diagnostics) -> None:
    """Each plane is a subnet of its own (its own OpenSM): its CA ports and switches must fit
    the unicast LID space, or OpenSM cannot address the whole fabric."""
    mgmt = intent.infiniband.management
    ca_ports = shape.nodes * shape.ports_per_node + len(mgmt.hosts) * math.ceil(
        mgmt.ports / shape.planes)
    switches = (shape.units * shape.leaves_per_unit + shape.pods * shape.spines_per_pod
                + (shape.core_groups * shape.cores_per_group if shape.tiers == 3 else 0))
    if ca_ports + switches > IB_UNICAST_LIDS:
        per_node = max(shape.ports_per_node, 1)
        fits = (IB_UNICAST_LIDS - switches - (ca_ports - shape.nodes * per_node)) // per_node
        plane = " per plane" if shape.planes > 1 else ""
        diags.error(f"{ca_ports:,} HCA ports and {switches:,} switches{plane} need "
                    f"{ca_ports + switches:,} LIDs, but an InfiniBand subnet has "
                    f"{IB_UNICAST_LIDS:,} unicast LIDs (0x0001-0xBFFF, LMC 0): OpenSM would "
                    "leave the rest unreachable", ("cluster", "nodes"),
                    f"at most about {max(fits, 0):,} nodes like these per subnet; a larger "
                    "cluster is several subnets (fabrics), one intent each")


def _extra(intent: Intent, role: str, diags: Diagnostics) -> None:
    """A storage/management network is sized like a fabric of its own; blame its own fields."""
    spec = getattr(intent.topology, role)
    base = ("topology", role)
    if spec.transport == "infiniband" and spec.generation is None:
        diags.error("an InfiniBand network needs a generation: hdr, ndr or xdr",
                    (*base, "transport"))
        return
    known = catalog.switches()
    kind = "infiniband" if spec.transport == "infiniband" else "ethernet"
    for tier in ("leaf", "spine"):
        sw = getattr(spec, tier)
        if sw is None or sw.model is None:
            continue
        model = known.get(sw.model)
        if model is None:
            guess = closest(sw.model, list(known))
            diags.error(f"unknown switch model {sw.model!r}", (*base, tier, "model"),
                        f"did you mean {guess!r}?" if guess else None)
            return
        if model.transport != kind:
            diags.error(f"{model.name} is an {model.transport} switch; this network is {kind}",
                        (*base, tier, "model"))
            return
    if spec.targets is not None and role != "storage":
        diags.error("only the storage network has storage targets", (*base, "targets"))
        return
    if spec.subnet_manager is not None and (role != "storage" or spec.transport != "infiniband"):
        diags.error("a subnet manager belongs to an InfiniBand storage network only",
                    (*base, "subnet_manager"))
        return
    if spec.ipoib is not None and (role != "storage" or spec.transport != "infiniband"):
        diags.error("IPoIB addressing belongs to an InfiniBand storage network only",
                    (*base, "ipoib"))
        return
    if spec.ipoib is not None and intent.fabric.transport != "infiniband":
        diags.error("storage IPoIB addresses are written to the hosts' InfiniBand files, which "
                    "a RoCE compute fabric's hosts do not have", (*base, "ipoib"),
                    "address the storage ports outside fabgen")
        return
    if spec.ipoib is not None:
        sm_hosts = spec.subnet_manager.hosts if spec.subnet_manager is not None else []
        need = intent.cluster.nodes * spec.nics + len(sm_hosts) + 2
        if spec.ipoib.prefix.num_addresses < need:
            prefix = 32 - max(need - 1, 1).bit_length()
            diags.error(f"IPoIB subnet {spec.ipoib.prefix} has {spec.ipoib.prefix.num_addresses} "
                        f"addresses; the nodes' storage ports and the storage subnet manager "
                        f"need {need} (with network and broadcast)", (*base, "ipoib", "prefix"),
                        f"use a /{prefix} or larger")
    if not _extra_names(intent, role, diags):
        return
    try:
        extra_shape(intent, role)
    except sizing.SizingError as exc:
        loc = exc.loc[1:] if exc.loc[:1] == ("topology",) else exc.loc
        diags.error(f"{role} network: {exc}", (*base, *loc), exc.hint)
        return
    if role == "management" and spec.transport == "ethernet" and not dual_homed(intent, role):
        # DGX BasePOD: the in-band bond's two ports on an MLAG pair (build.dual_homed).
        if spec.nics == 1:
            diags.warn("management network: each node has one port, on one switch: that "
                       "switch's failure or upgrade cuts its nodes off. DGX BasePOD dual-homes "
                       "the in-band bond (two ports) on an MLAG pair of switches",
                       (*base, "nics"), "set nics: 2 for a bond on an MLAG pair")
        else:
            diags.warn(f"management network: {spec.nics} ports per node are planned on one "
                       "switch per node; fabgen dual-homes a two-port bond on an MLAG pair "
                       "(DGX BasePOD) only", (*base, "nics"), "set nics: 2")


def _extra_names(intent: Intent, role: str, diags: Diagnostics) -> bool:
    """Storage targets and storage SM hosts are devices of their own: no name may be another
    device's (a node's, a compute SM host's, each other's), or the cabling sheet and the
    storage subnet's node names would mix two machines up."""
    spec = getattr(intent.topology, role)
    base = ("topology", role)
    taken = {h: "a compute host" for h in host_names(intent)}
    taken.update((h.name, "a compute subnet-manager host")
                 for h in intent.infiniband.management.hosts)
    ok = True
    if spec.targets is not None:
        for i in range(spec.targets.count):
            name = spec.targets.name.format(index=i + 1)
            if name in taken:
                diags.error(f"storage target {name!r} is already {taken[name]}'s name",
                            (*base, "targets", "name"))
                return False
            taken[name] = "a storage target"
    sm = spec.subnet_manager
    if sm is not None:
        for i, host in enumerate(sm.hosts):
            if host.name in taken:
                diags.error(f"{host.name!r} is already {taken[host.name]}'s name",
                            (*base, "subnet_manager", "hosts", i, "name"))
                ok = False
            taken[host.name] = "a storage subnet-manager host"
            if host.port_guids and len(host.port_guids) != sm.ports:
                diags.error(f"{len(host.port_guids)} port GUID(s) for {sm.ports} ports",
                            (*base, "subnet_manager", "hosts", i, "port_guids"))
                ok = False
    return ok


def _pools(intent: Intent, shape: sizing.Shape, diags: Diagnostics) -> None:
    if intent.fabric.transport != "roce":
        return
    planes = shape.planes
    plan = numbering.plan(shape, shape.leaf.radix)
    host_links = planes * shape.nodes * shape.ports_per_node
    addr = intent.addressing
    # The plan (topology.numbering): leaves from the bottom of the loopback and p2p pools, the
    # spine layer from the top, each /31 block the power of two above a switch's uplink ports;
    # loopbacks skip the pool's first and last address (a /32 on .0 or .255 reads as a network
    # or a broadcast in reviews).
    lo_need = plan.leaves + plan.layer_count + 2
    p2p_need = 2 * plan.p2p_31s
    why = {
        "loopbacks": f"{plan.leaves} numbered by unit for the leaves, {plan.layer_count} for "
                     "the spines and cores, the first and last address unused",
        "p2p": f"a block of {plan.leaf_p2p_block} /31s for each of {plan.leaves} leaf numbers"
               + (f" and of {plan.spine_p2p_block} for each of {plan.spine_count} spines"
                  if plan.spine_count and plan.spine_p2p_block else ""),
        "hosts": f"a /31 for each of {host_links} host ports",
    }
    for field, need in (("loopbacks", lo_need), ("p2p", p2p_need), ("hosts", 2 * host_links)):
        pool = getattr(addr, field)
        if pool.num_addresses < need:
            prefix = 32 - max(need - 1, 1).bit_length()
            diags.error(f"pool {pool} has {pool.num_addresses} addresses; this fabric needs "
                        f"{need} ({why[field]})", ("addressing", field),
                        f"use a /{prefix} or larger")
    # Leaf ASNs are leaf_start + the leaf's number, by unit (numbering): every number up to the
    # last unit's is taken or held for a leaf of a unit still filling up.
    leaves = plan.leaves
    start = addr.asn.leaf_start
    end = start + leaves - 1
    spine_asns = range(addr.asn.spine, addr.asn.spine + (shape.pods if shape.tiers == 3 else 1))
    for name, asns in (("spine", spine_asns), ("core", range(addr.asn.core, addr.asn.core + 1))):
        if name == "core" and shape.tiers != 3:
            continue
        clash = [a for a in asns if start <= a <= end]
        if clash:
            diags.error(f"leaf ASNs {start}-{end} include the {name} ASN {clash[0]}; eBGP loop "
                        "detection would drop routes between them", ("addressing", "asn",
                                                                     "leaf_start"),
                        f"start the leaves above {max(asns)}")
    if shape.tiers == 3 and addr.asn.core in spine_asns:
        diags.error(f"core ASN {addr.asn.core} is one of the spine ASNs {spine_asns.start}-"
                    f"{spine_asns.stop - 1} (one per pod)", ("addressing", "asn", "core"))
    for lo, hi in PRIVATE_ASN_RANGES:
        if lo <= start <= hi:
            if end > hi:
                diags.error(f"{leaves} leaves need ASNs {start}-{end}, past the private range "
                            f"end {hi}", ("addressing", "asn", "leaf_start"),
                            "use a 4-byte private ASN such as 4200000000")
            break
    else:
        diags.warn(f"leaf ASNs from {start} are not in a private range (RFC 6996)",
                   ("addressing", "asn", "leaf_start"))
