"""Preflight target: a read-only host check of what the fabric expects, and the validation runbook.

`hosts/preflight.sh` is one profile script, like hosts/nic-setup.sh, and reads the same per-host
data file (`hosts/<host>.env`, written by the nic target) for the one host-specific thing it
checks: the RoCE v2 GID each rail address produces. Every check prints OK or FAIL; any FAIL makes
the script exit 1. `runbook_markdown(ctx)` is the validation runbook the report includes:
perftest pairs per rail and an all_reduce_perf run with the floor its bus bandwidth must reach.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from fabgen import templating
from fabgen.catalog import nodes
from fabgen.targets import hostlist, ib_hosts, nccl, nic, sharp
from fabgen.targets.base import Artifacts, RenderContext
from fabgen.targets.opensm_partitions import tenant_of
from fabgen.targets.opensm_plan import PartitionSpec, settings_from_intent
from fabgen.topology.model import Fabric, Host

__all__ = [
    "BUSBW_EFFICIENCY",
    "TARGET",
    "PreflightTarget",
    "busbw_floor",
    "check_data",
    "pair_hosts",
    "runbook_data",
    "runbook_markdown",
]

# Share of the nodes' network bandwidth all_reduce_perf's busbw must reach: what remains after
# RoCE/IB headers and NCCL's protocol overhead on a healthy fabric (~90-95%), with a margin.
BUSBW_EFFICIENCY = Fraction(4, 5)
# ib_write_bw, one QP, 64 KiB messages: a healthy link reports at least this share of its rate.
PERFTEST_EFFICIENCY = Fraction(9, 10)
LINK_LAYER = {"roce": "Ethernet", "infiniband": "InfiniBand"}
# Seconds preflight.sh waits for sharp_am's TCP port to answer over IPoIB: a reachable UFM
# answers in well under one, a filtered port (the appliance firewall) never does.
SHARP_CONNECT_TIMEOUT_S = 3


def _bootstrap_data(ctx: RenderContext) -> dict[str, str]:
    """The interface NCCL_SOCKET_IFNAME names (empty: none), and where it comes from."""
    name = nodes.bootstrap_interface(ctx.intent)
    model = nodes.model_of(ctx.intent)
    if name is None:
        note = (f"none, the {model.name} publishes no in-band interface and "
                "hosts.bootstrap_interface is unset")
    elif ctx.intent.hosts.bootstrap_interface is not None:
        note = "hosts.bootstrap_interface"
    else:
        boot = model.bootstrap
        assert boot is not None
        note = f"the {model.name}'s in-band bond of {' and '.join(boot.members)}"
    return {"bootstrap_if": name or "", "bootstrap_note": note}


def check_data(ctx: RenderContext) -> dict[str, Any]:
    """The target-shaped data of hosts/preflight.sh: every expected value it compares."""
    fabric, intent = ctx.fabric, ctx.intent
    ports = nic.profile_ports(ctx)
    roce = fabric.transport == "roce"
    data: dict[str, Any] = {
        "fabric": fabric.name,
        "profile": nic.profile_name(ctx),
        "roce": roce,
        "rail_names": [nic.rail_label(p, fabric.planes) for p in ports],
        "netdevs": [p.netdev for p in ports],
        "rdma_devices": [p.rdma_device for p in ports],
        "ib_ports": [p.ib_port for p in ports],
        "gpus": [p.gpu for p in ports],
        "numa": [p.numa for p in ports],
        "numa_nodes": intent.cluster.node.numa_nodes,
        "link_layer": LINK_LAYER[fabric.transport],
        "speed_gbps": fabric.speed_gbps,
        "map_source": nic.map_source(ctx),
        "storage_netdevs": [],
        **_bootstrap_data(ctx),
    }
    if not roce:
        plan_ib = ib_hosts.ib_plan(ctx)
        data.update(
            host_files=plan_ib.files,
            ipoib=plan_ib.ipoib_prefix is not None,
            pkey_index=plan_ib.pkey_index if plan_ib.pkey_index is not None else "",
            sharp_addresses=list(plan_ib.sharp_addresses),
            sharp_port=plan_ib.sharp_port or "",
            sharp_timeout_s=SHARP_CONNECT_TIMEOUT_S,
            storage_netdevs=list(plan_ib.storage_netdevs),
        )
        return data
    data["host_files"] = True
    plan = ctx.qos
    if plan is None:
        raise ValueError("a RoCE fabric needs its QosPlan to render the preflight script")
    named = [c for c in plan.classes if c.name != "default"]
    data.update(
        host_mtu=plan.host_mtu,
        gid_index=intent.nccl.gid_index,
        pfc=",".join(str(v) for v in plan.pfc_vector),
        rdma_priority=plan.rdma.priority,
        class_names=[c.name for c in named for _ in c.dscp],
        class_dscps=[d for c in named for d in c.dscp],
        class_prios=[c.priority for c in named for _ in c.dscp],
        lossless_dscps=",".join(str(d) for d, p in enumerate(plan.dscp_to_priority)
                                if p == plan.rdma.priority),
        ecn_enable=[1 if any(c.ecn and c.priority == p for c in plan.classes) else 0
                    for p in range(8)],
        cnp_dscp=plan.cnp.dscp[0],
        cnp_priority=plan.cnp.priority,
    )
    return data


@dataclass(frozen=True, slots=True)
class Floor:
    node_gbps: int  # compute-port bandwidth of one node
    gbytes: Fraction  # busbw floor in GB/s (1e9 bytes, as all_reduce_perf prints)
    factor: Fraction  # oversubscription factor applied (1 = none)


def busbw_floor(ctx: RenderContext) -> Floor:
    """The all_reduce_perf bus bandwidth (GB/s) a healthy fabric reaches at large sizes.

    busbw = algbw * 2(n-1)/n is normalised so that it measures the bottleneck link of the ring
    or tree. Across nodes with NVLink inside each node, that bottleneck is the NICs: each GPU
    sends through its own rail, so busbw tends to the per-rail rate x rails (per node). When the
    job spans scalable units behind oversubscribed leaves, the leaf uplinks carry cross-unit
    traffic at 1/ratio of that, and the floor scales down with them.
    """
    fabric = ctx.fabric
    ports = len(fabric.hosts[0].ports) if fabric.hosts else 0
    node_gbps = ports * fabric.speed_gbps
    factor = Fraction(1)
    leaf = next((t for t in fabric.tier_facts if t.role == "leaf"), None)
    if fabric.units > 1 and leaf is not None and leaf.oversubscription is not None \
            and leaf.oversubscription > 1:
        factor = 1 / leaf.oversubscription
    return Floor(node_gbps, BUSBW_EFFICIENCY * factor * Fraction(node_gbps, 8), factor)


def pair_hosts(fabric: Fabric, among: tuple[Host, ...] | None = None) -> tuple[Host, Host]:
    """Two hosts to test between (of `among`, by default every host): in different scalable
    units when there are several (so the path crosses leaves and spines), else the first and
    the last host."""
    hosts = among or fabric.hosts
    first = hosts[0]
    other = next((h for h in hosts if h.su != first.su), hosts[-1])
    return first, other


def _tenant_hosts(ctx: RenderContext) -> tuple[str, tuple[Host, ...]] | None:
    """The first tenant with two hosts or more, when the tenants are written: the runbook's
    tests stay inside it (between two tenants the traffic is dropped, by design)."""
    if ib_hosts.ib_plan(ctx).pkey_index is None:
        return None
    tenants = ctx.derived(_tenant_specs)
    for spec in settings_from_intent(ctx.intent).partitions:
        members = tuple(h for h in ctx.fabric.hosts if tenants.get(h.name) == spec)
        if len(members) >= 2:
            return spec.name, members
    return None


def _tenant_specs(ctx: RenderContext) -> dict[str, PartitionSpec]:
    return tenant_of(ctx.fabric, settings_from_intent(ctx.intent))


def sharp_check_data(ctx: RenderContext) -> dict[str, Any]:
    """What check-sharp.sh greps for (fabgen.targets.sharp)."""
    return {"fabric": ctx.fabric.name, "algo": sharp.NCCL_ALGO_COLLNET,
            "required": sharp.CHECK_REQUIRED, "forbidden": sharp.CHECK_FORBIDDEN}


def _num(value: Fraction) -> str:
    text = f"{float(value):.1f}"
    return text[:-2] if text.endswith(".0") else text


def runbook_data(ctx: RenderContext) -> dict[str, Any]:
    """Everything runbook.md.j2 prints, computed here."""
    fabric, intent = ctx.fabric, ctx.intent
    roce = fabric.transport == "roce"
    tenant = _tenant_hosts(ctx) if not roce else None
    server, client = pair_hosts(fabric, tenant[1] if tenant else None)
    ports = nic.rail_ports(server)
    profile = nic.profile_name(ctx)
    efa = profile == "efa"
    if roce:
        plan = ctx.qos
        if plan is None:
            raise ValueError("a RoCE fabric needs its QosPlan for the runbook")
        qos_flags = f"-x {intent.nccl.gid_index} --tclass={plan.rdma.tos}"
    else:
        qos_flags = f"--sl={intent.infiniband.service_level}"
        index = ib_hosts.ib_plan(ctx).pkey_index
        if index is not None:
            qos_flags += f" --pkey_index={index}"

    def perftest(tool: str, p: nic.RailPort, extra: str) -> str:
        return f"{tool} -d {p.rdma_device} -i {p.ib_port} {qos_flags} -F{extra}"

    rails = []
    for p in ports:
        rails.append({
            "rail": nic.rail_label(p, fabric.planes), "device": f"{p.rdma_device}:{p.ib_port}",
            "bw_server": perftest("ib_write_bw", p, " --report_gbits"),
            "bw_client": perftest("ib_write_bw", p, " --report_gbits") + f" {server.name}",
            "lat_server": perftest("ib_send_lat", p, ""),
            "lat_client": perftest("ib_send_lat", p, "") + f" {server.name}",
        })
    cross = []
    if fabric.units == 1 and len(ports) > 1 and intent.topology.style == "rail-optimized":
        # One scalable unit: same-rail traffic never leaves its leaf; a rail r -> rail r+1
        # pair is the only way to put the spines (and their ECMP) on the path.
        for a, b in zip(ports, ports[1:] + ports[:1], strict=True):
            cross.append({
                "from": nic.rail_label(a, fabric.planes), "to": nic.rail_label(b, fabric.planes),
                "server": perftest("ib_write_bw", b, " --report_gbits"),
                "client": perftest("ib_write_bw", a, " --report_gbits") + f" {server.name}",
            })
    profile_ports = nic.profile_ports(ctx) if not efa else ()
    host_map = [{"rail": nic.rail_label(p, fabric.planes), "device": f"{p.rdma_device}:{p.ib_port}",
                 "netdev": p.netdev, "gpu": str(p.gpu), "numa": str(p.numa)}
                for p in profile_ports]
    floor = busbw_floor(ctx)
    gpus = intent.cluster.node.gpus
    nodes = len(tenant[1]) if tenant else len(fabric.hosts)
    env_keys = [e.key for e in nccl.entries(ctx)]
    leaf = next((t for t in fabric.tier_facts if t.role == "leaf"), None)
    return {
        "fabric": fabric.name,
        "roce": roce,
        "efa": efa,
        "server": server.name,
        "client": client.name,
        "server_su": server.su + 1,
        "client_su": client.su + 1,
        "same_su": server.su == client.su,
        "rails": rails,
        "cross": cross,
        "speed_gbps": fabric.speed_gbps,
        "perftest_floor": _num(PERFTEST_EFFICIENCY * fabric.speed_gbps),
        "perftest_pct": _num(PERFTEST_EFFICIENCY * 100),
        "gid_index": intent.nccl.gid_index,
        "tos": ctx.qos.rdma.tos if ctx.qos is not None else None,
        "sl": intent.infiniband.service_level,
        "profile": profile,
        "nodes": nodes,
        "gpus": gpus,
        "ranks": nodes * gpus,
        "env_keys": env_keys,
        "ports_per_node": len(ports),
        "node_gbps": floor.node_gbps,
        "node_gbytes": _num(Fraction(floor.node_gbps, 8)),
        "floor_gbytes": _num(floor.gbytes),
        "floor_pct": _num(BUSBW_EFFICIENCY * 100),
        "oversub_factor": _num(floor.factor),
        "oversubscribed": floor.factor != 1,
        "leaf_ratio": (f"{leaf.oversubscription.numerator}:{leaf.oversubscription.denominator}"
                       if leaf is not None and leaf.oversubscription is not None else "1:1"),
        "units": fabric.units,
        "host_map": host_map,
        "rail_devices": ", ".join(f"`{p.rdma_device}:{p.ib_port}`" for p in profile_ports),
        "map_source": nic.map_source(ctx),
        "tenant": tenant[0] if tenant else None,
        # srun -w: Slurm places the job on exactly the tenant's hosts, never beside them.
        "hostlist": hostlist.compress(h.name for h in tenant[1]) if tenant else None,
        "pkey_index": ib_hosts.ib_plan(ctx).pkey_index if not roce else None,
        "sharp": not roce and not efa and intent.infiniband.sharp,
        "sharp_algo": sharp.NCCL_ALGO_COLLNET,
        "sharp_sockets": settings_from_intent(intent).sharp_transport == "sockets",
        "sharp_port": sharp.SHARP_AM_TCP_PORT,
        **_bootstrap_data(ctx),
    }


def runbook_markdown(ctx: RenderContext) -> str:
    """The validation runbook (Markdown) for the report: perftest per rail, then NCCL."""
    return templating.render("preflight/runbook.md.j2", **runbook_data(ctx))


class PreflightTarget:
    name = "preflight"
    description = ("hosts/preflight.sh: read-only host checks (GPUDirect by nvidia_peermem or "
                   "DMA-BUF, bootstrap interface, rails Active at rate, MTU, PFC/trust, RoCE v2 "
                   "GID, IPoIB addresses, tenant P_Key, SHARP's TCP port, NUMA) printing "
                   "OK/FAIL; hosts/check-sharp.sh: did a job use SHARP")

    def applies(self, ctx: RenderContext) -> bool:
        return ctx.fabric.transport in ("roce", "infiniband") and ctx.intent.nccl.profile != "efa"

    def render(self, ctx: RenderContext) -> Artifacts:
        files = {"hosts/preflight.sh": templating.render("preflight/preflight.sh.j2",
                                                         **check_data(ctx))}
        if ctx.fabric.transport == "infiniband" and ctx.intent.infiniband.sharp:
            files["hosts/check-sharp.sh"] = templating.render("preflight/check-sharp.sh.j2",
                                                              **sharp_check_data(ctx))
        return files


TARGET = PreflightTarget()
