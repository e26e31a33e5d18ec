"""NCCL target: the environment of the host profile, as a shell env file and as /etc/nccl.conf.

Only variables NCCL (or its net plugin, or libfabric for EFA) actually reads, each checked in
its source (see SOURCES), with values in their documented forms and a comment saying why.
Values come from the QosPlan (NCCL_IB_TC = the RDMA class's ToS byte), the cabling (NCCL_IB_HCA:
the compute ports in rail order) and the intent's nccl and infiniband sections.

The comments of the .conf hold no '=': NCCL before 2.26.2 loads every line with one as a
variable, comment lines included (see `check_conf`).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from fabgen import templating, underlay
from fabgen.catalog import nodes
from fabgen.platforms.registry import facts as registry
from fabgen.targets import ib_hosts, nic
from fabgen.targets.base import Artifacts, RenderContext

__all__ = ["NCCL_DEFAULT_IB_TIMEOUT", "NCCL_DEFAULT_QPS_PER_CONNECTION", "ROCE_QPS_PER_CONNECTION",
           "SOURCES", "TARGET", "Entry", "NcclTarget", "check_conf", "entries", "hca_list",
           "qps_per_connection"]

# Where each variable is read, checked in NVIDIA/nccl v2.30.7 (5067397c), aws/aws-ofi-nccl
# (2daf7d30) and ofiwg/libfabric; a new variable needs an entry here (tests enforce it).
SOURCES: dict[str, str] = {
    "NCCL_IB_HCA": "nccl src/transport/net_ib/init.cc:317 ncclGetEnv(\"NCCL_IB_HCA\"), "
                   "parsed by src/misc/utils.cc:189 parseStringList (dev[:port])",
    "NCCL_IB_GID_INDEX": "nccl src/transport/net_ib/connect.cc:12 "
                         "NCCL_PARAM(IbGidIndex, \"IB_GID_INDEX\", -1)",
    "NCCL_IB_TC": "nccl src/transport/net_ib/connect.cc:20 NCCL_PARAM(IbTc, \"IB_TC\", -1)",
    "NCCL_IB_SL": "nccl src/transport/net_ib/connect.cc:19 NCCL_PARAM(IbSl, \"IB_SL\", -1)",
    "NCCL_IB_PKEY": "nccl src/transport/net_ib/connect.cc:17 NCCL_PARAM(IbPkey, \"IB_PKEY\", 0), "
                    "the QP's pkey_index (connect.cc:341 qpAttr.pkey_index = "
                    "initAttr->pkeyIndex)",
    "NCCL_IB_TIMEOUT": "nccl src/transport/net_ib/connect.cc:15 "
                       "NCCL_PARAM(IbTimeout, \"IB_TIMEOUT\", 20)",
    "NCCL_IB_RETRY_CNT": "nccl src/transport/net_ib/connect.cc:16 "
                         "NCCL_PARAM(IbRetryCnt, \"IB_RETRY_CNT\", 7)",
    "NCCL_IB_QPS_PER_CONNECTION": "nccl src/transport/net_ib/connect.cc:60 "
                                  "NCCL_PARAM(IbQpsPerConn, \"IB_QPS_PER_CONNECTION\", 1)",
    "NCCL_IB_SPLIT_DATA_ON_QPS": "nccl src/transport/net_ib/common.cc:22 "
                                 "NCCL_PARAM(IbSplitDataOnQps, \"IB_SPLIT_DATA_ON_QPS\", 0); "
                                 "1 before 2.20.3 (b6475625)",
    "NCCL_IB_ADAPTIVE_ROUTING": "nccl src/transport/net_ib/init.cc:12 "
                                "NCCL_PARAM(IbAdaptiveRouting, \"IB_ADAPTIVE_ROUTING\", -2); "
                                "default on for IB, off for RoCE (init.cc:441)",
    "NCCL_SOCKET_IFNAME": "nccl src/misc/socket.cc:196 ncclGetEnv(\"NCCL_SOCKET_IFNAME\")",
    "NCCL_NET_GDR_LEVEL": "nccl src/graph/paths.cc:512 ncclGetLevel(..., "
                          "\"NCCL_NET_GDR_LEVEL\"); names from src/graph/topo.cc:34",
    "NCCL_CROSS_NIC": "nccl src/graph/search.cc:16 NCCL_PARAM(CrossNic, \"CROSS_NIC\", 2)",
    "NCCL_COLLNET_ENABLE": "nccl src/init.cc:63 NCCL_PARAM(CollnetEnable, \"COLLNET_ENABLE\") "
                           "and init.cc:2148 ncclGetEnv(\"NCCL_COLLNET_ENABLE\")",
    "FI_PROVIDER": "libfabric provider filter; aws-ofi-nccl src/platform-aws.cpp:667 "
                   "getenv(\"FI_PROVIDER\")",
    "FI_EFA_USE_DEVICE_RDMA": "libfabric prov/efa efa_env.c fi_param_get_bool(&efa_prov, "
                              "\"use_device_rdma\"); aws-ofi-nccl doc/efa-env-var.md",
    "OFI_NCCL_DISABLE_GDR_REQUIRED_CHECK": "aws-ofi-nccl include/nccl_ofi_param.h:137 "
                                           "OFI_NCCL_PARAM(bool, disable_gdr_required_check, "
                                           "\"DISABLE_GDR_REQUIRED_CHECK\", false)",
}

# Local ACK timeout unit of the InfiniBand spec (12.7.34): 4.096 us * 2^timeout.
_ACK_TIMEOUT_UNIT_S = Fraction(4096, 10**9)


@dataclass(frozen=True, slots=True)
class Entry:
    """One variable; `value` None writes only the comment (the variable is left to NCCL)."""

    key: str
    value: str | None
    why: str


# NCCL's own defaults of what the profile sets, from the NCCL_PARAM lines cited in SOURCES.
NCCL_DEFAULT_IB_TIMEOUT = 20
NCCL_DEFAULT_QPS_PER_CONNECTION = 1
# RoCE: queue pairs per connection when the intent names none. Each QP is its own RoCE v2 UDP
# flow (the source port derives from the QP numbers), so 4 flows per connection give the
# switches' ECMP hash 4 chances to spread a connection over the spines.
ROCE_QPS_PER_CONNECTION = 4


def hca_list(ctx: RenderContext) -> str:
    """NCCL_IB_HCA: the compute ports cabled to the fabric, in rail order, exact names."""
    ports = nic.profile_ports(ctx)
    return "=" + ",".join(f"{p.rdma_device}:{p.ib_port}" for p in ports)


def _hca_why(ctx: RenderContext) -> str:
    """Why these devices: the node model's map (and its source) or the intent's names."""
    ports = nic.profile_ports(ctx)
    pairs = ", ".join(f"{p.rdma_device} by GPU{p.gpu}" for p in ports)
    assumed = "" if nodes.model_of(ctx.intent).has_map else "; NIC n assumed beside GPU n"
    return (f"the {len(ports)} compute ports cabled to the fabric, in rail order, as "
            f"device:port ({pairs}{assumed}; names from {nic.map_source(ctx)}). NCCL pairs each "
            "GPU with its nearest NIC from the PCIe topology it reads itself (no variable sets "
            "that); preflight.sh checks each NIC's NUMA node against its GPU's. The leading "
            "equals sign matches names exactly (without it mlx5_1 would also match mlx5_10)")


def _bootstrap(ctx: RenderContext) -> Entry:
    name = nodes.bootstrap_interface(ctx.intent)
    model = nodes.model_of(ctx.intent)
    if name is None:
        return Entry("NCCL_SOCKET_IFNAME", None,
                     f"NCCL_SOCKET_IFNAME is not set: the {model.name} publishes no in-band "
                     "interface and hosts.bootstrap_interface is unset, so NCCL picks one (ib* "
                     "first, then any but docker, lo and virbr: src/misc/socket.cc). Set "
                     "hosts.bootstrap_interface to pin it")
    if ctx.intent.hosts.bootstrap_interface is not None:
        origin = "hosts.bootstrap_interface"
    else:
        boot = model.bootstrap
        assert boot is not None
        origin = (f"the {model.name}'s in-band management, a bond of "
                  f"{' and '.join(boot.members)}")
    return Entry("NCCL_SOCKET_IFNAME", "=" + name,
                 f"bootstrap and connection setup over {name} ({origin}); the leading equals "
                 "sign selects exactly that name. NCCL fails at init if no interface has it; "
                 "preflight.sh checks it is up")


def _pkey(ctx: RenderContext) -> Entry:
    """NCCL_IB_PKEY: an index into each port's P_Key table, where OpenSM put the host's tenant
    key (fabgen.targets.opensm_partitions); without tenants NCCL's index 0, the default
    partition, is the right one."""
    plan = ib_hosts.ib_plan(ctx)
    if plan.pkey_index is not None:
        return Entry("NCCL_IB_PKEY", str(plan.pkey_index),
                     f"P_Key table index {plan.pkey_index}, where each host holds its tenant's "
                     "P_Key: hosts are limited members of the default partition at index 0, "
                     "which would drop the traffic between two hosts of a tenant (OpenSM "
                     "osm_pkey_mgr.c keeps the default key at 0 and the tenant's at 1; "
                     "preflight.sh checks it). An index, not a key: NCCL puts it in the QP's "
                     "pkey_index as it is, so a key such as 0x8101 there names no entry and "
                     "ibv_modify_qp fails")
    if ctx.intent.infiniband.partitions:
        return Entry("NCCL_IB_PKEY", None,
                     "NCCL_IB_PKEY is not set yet: the tenant partitions are written once the "
                     "port GUIDs are known (infiniband.guids_file); until then every host is a "
                     "full member of the default partition at index 0, NCCL's default")
    return Entry("NCCL_IB_PKEY", None,
                 "NCCL_IB_PKEY is not set: no tenant partitions, every port is a full member "
                 "of the default partition at P_Key index 0, NCCL's default")


def qps_per_connection(ctx: RenderContext) -> int:
    """NCCL_IB_QPS_PER_CONNECTION: the intent's, else 4 on RoCE and NCCL's 1 on InfiniBand."""
    n = ctx.intent.nccl.qps_per_connection
    if n is not None:
        return n
    return ROCE_QPS_PER_CONNECTION if ctx.fabric.transport == "roce" else \
        NCCL_DEFAULT_QPS_PER_CONNECTION


def _qps(ctx: RenderContext) -> Entry:
    n = ctx.intent.nccl.qps_per_connection
    if ctx.fabric.transport == "roce":
        qps = qps_per_connection(ctx)
        origin = "nccl.qps_per_connection" if n else "fabgen's RoCE default"
        return Entry("NCCL_IB_QPS_PER_CONNECTION", str(qps),
                     f"{qps} queue pairs per connection ({origin}): each QP is its own RoCE v2 "
                     f"UDP flow, so the switches' ECMP hash has {qps} flows to spread over the "
                     "spines")
    qps = qps_per_connection(ctx)
    origin = "nccl.qps_per_connection" if n else "NCCL's default"
    route = ("more QPs would follow the same route and add no paths" if qps == 1 else
             "these QPs follow one route: they add NIC parallelism, not paths")
    spread = ("; adaptive routing spreads packets in the switches instead"
              if ctx.intent.infiniband.adaptive_routing else "")
    return Entry("NCCL_IB_QPS_PER_CONNECTION", str(qps),
                 f"{qps} queue pair{'s' if qps > 1 else ''} per connection ({origin}): on "
                 "InfiniBand with LMC 0 each port has one LID and the switches forward on the "
                 f"destination LID, so {route}{spread}")


def _timeout(ctx: RenderContext) -> Entry:
    n = ctx.intent.nccl
    timeout = _ACK_TIMEOUT_UNIT_S * 2**n.timeout
    if n.timeout == NCCL_DEFAULT_IB_TIMEOUT:
        origin = ("NCCL's own default, src/transport/net_ib/connect.cc; raise it only if "
                  "NCCL reports timeouts on a healthy fabric: each step doubles how long a dead "
                  "link takes to be reported")
    else:
        origin = f"nccl.timeout; NCCL's default is {NCCL_DEFAULT_IB_TIMEOUT}"
    return Entry("NCCL_IB_TIMEOUT", str(n.timeout),
                 f"ACK timeout 4.096 us x 2^{n.timeout}, {_seconds(timeout)} s per retry "
                 f"({origin})")


def _seconds(value: Fraction) -> str:
    text = f"{float(value):.1f}"
    return text[:-2] if text.endswith(".0") else text


def entries(ctx: RenderContext) -> list[Entry]:
    """The profile's variables in file order, each with the reason for its value."""
    intent, fabric = ctx.intent, ctx.fabric
    n = intent.nccl
    bootstrap = _bootstrap(ctx)
    if n.profile == "efa":
        return [
            Entry("FI_PROVIDER", "efa", "libfabric provider: the EFA devices (aws-ofi-nccl "
                  "picks efa itself on EC2, this makes it explicit and refuses tcp)"),
            Entry("FI_EFA_USE_DEVICE_RDMA", "1", "use the EFA device's RDMA read/write "
                  "(p4d/p5 and later); needed by libfabric < 1.18, harmless after"),
            Entry("OFI_NCCL_DISABLE_GDR_REQUIRED_CHECK", "0", "keep the plugin's check: "
                  "fail at start rather than silently run without GPUDirect RDMA"),
            bootstrap,
        ]
    out = [Entry("NCCL_IB_HCA", hca_list(ctx), _hca_why(ctx))]
    if fabric.transport == "roce":
        plan = ctx.qos
        if plan is None:
            raise ValueError("a RoCE fabric needs its QosPlan to render the NCCL profile")
        rdma = plan.rdma
        ecn = " | ECT(0)" if rdma.ecn else " (no ECN bits: ECN is off)"
        out += [
            Entry("NCCL_IB_GID_INDEX", str(n.gid_index),
                  "the RoCE v2 GID of each rail's IPv4 address (nccl.gid_index); "
                  "preflight.sh checks its type and address"),
            Entry("NCCL_IB_TC", str(rdma.tos),
                  f"ToS byte of RDMA traffic: DSCP {rdma.dscp[0]} << 2{ecn}, {rdma.tos}; "
                  f"the switches and NICs map DSCP {rdma.dscp[0]} to lossless priority "
                  f"{rdma.priority}"),
        ]
    else:
        ib = intent.infiniband
        ar = (", an SL the subnet manager routes adaptively"
              if ib.adaptive_routing_on(intent.fabric.generation) else "")
        out.append(Entry("NCCL_IB_SL", str(ib.service_level),
                         f"service level of the compute traffic (infiniband.service_level)"
                         f"{ar}; the subnet manager maps it to a VL"))
        out.append(_pkey(ctx))
    out += [
        bootstrap,
        Entry("NCCL_NET_GDR_LEVEL", n.gdr_level,
              "GPUDirect RDMA up to this GPU-NIC distance (nccl.gdr_level); each rail NIC "
              "sits next to its GPU. NCCL registers GPU memory through nvidia_peermem or, from "
              "NCCL 2.13, DMA-BUF; preflight.sh checks that one of them is available"),
    ]
    if intent.topology.style == "rail-unaware":
        out.append(Entry("NCCL_CROSS_NIC", "1",
                         "every compute port of a node is cabled to the same leaf (rail-unaware "
                         "fabric), so a ring may leave a node on one NIC and enter the next on "
                         "another at no cost (NCCL's default 2 would try to keep NIC indices "
                         "aligned for rails this fabric does not have)"))
    if fabric.transport == "roce":
        out.append(_roce_adaptive_routing(ctx))
    elif intent.infiniband.adaptive_routing_on(intent.fabric.generation):
        out.append(Entry("NCCL_IB_ADAPTIVE_ROUTING", "1",
                         "the subnet manager runs adaptive routing "
                         "(infiniband.adaptive_routing), so packets may arrive out of order"))
    else:
        out.append(Entry("NCCL_IB_ADAPTIVE_ROUTING", "0",
                         "adaptive routing is off in this fabric (infiniband.adaptive_routing)"
                         ", so NCCL's IB default (on) is turned off"))
    timeout = _ACK_TIMEOUT_UNIT_S * 2**n.timeout
    out += [
        _qps(ctx),
    ]
    qps = qps_per_connection(ctx)
    if fabric.transport == "roce" and qps > 1:
        # Which QP a message takes decides which ECMP path it takes: pinned to NCCL's current
        # default so every NCCL release spreads the same way (it was 1 before 2.20.3).
        out.append(Entry("NCCL_IB_SPLIT_DATA_ON_QPS", "0",
                         f"each message goes whole on one QP, messages round-robin over the {qps} "
                         "QPs, so each ECMP path carries whole messages (NCCL's default since "
                         "2.20.3, pinned)"))
    out += [
        _timeout(ctx),
        Entry("NCCL_IB_RETRY_CNT", str(n.retry_cnt),
              f"{n.retry_cnt} retries before NCCL reports a network error, about "
              f"{_seconds(timeout * max(n.retry_cnt, 1))} s in all (nccl.retry_cnt)"),
    ]
    if fabric.transport == "infiniband" and intent.infiniband.sharp:
        out.append(Entry("NCCL_COLLNET_ENABLE", "1",
                         "SHARP in-network reductions (infiniband.sharp) through the CollNet "
                         "plugin (nccl-rdma-sharp-plugins' libnccl-net.so must be installed); "
                         "SHARP's own QPs get their SL "
                         f"{intent.infiniband.sharp_sl} (a VL of its own) from sharp_am, not "
                         "from NCCL_IB_SL"))
    return out


def _roce_adaptive_routing(ctx: RenderContext) -> Entry:
    """NCCL_IB_ADAPTIVE_ROUTING for RoCE, from the fabric's load balancing (underlay plan).

    Per-packet adaptive routing (a platform whose facts say `adaptive_reorders`) can deliver a
    message's packets out of order; with the variable set NCCL sends the data as an RDMA write
    and signals it with a separate write with immediate (nccl
    src/transport/net_ib/p2p.cc:132). Flowlet load balancing keeps a flow's packets in order,
    and hashing never reorders: NCCL's RoCE default.
    """
    lb = underlay.plan(ctx.intent).load_balancing
    used = {s.platform for s in ctx.fabric.switches}
    per_packet = [f.short for f in registry.all() if f.name in used and f.adaptive_reorders]
    if lb.mode == "adaptive" and per_packet:
        return Entry("NCCL_IB_ADAPTIVE_ROUTING", "1",
                     f"the {' and '.join(per_packet)} switches route adaptively per packet "
                     "(load_balancing.mode), so a message's packets may arrive out of order")
    how = ("moves flowlets, which keep their order" if lb.mode == "adaptive"
           else "spreads flows by ECMP hashing")
    return Entry("NCCL_IB_ADAPTIVE_ROUTING", "0",
                 f"the fabric {how}; no per-packet adaptive routing (NCCL's RoCE default, "
                 "pinned)")


def check_conf(text: str) -> str:
    """The .conf text, refused if a comment line holds '=': NCCL before 2.26.2 reads every line
    with an '=' as a variable, comments included (setEnvFile, src/misc/param.cc; 2.26.2 added
    `if (line[0] == '#') continue;`, NVIDIA/nccl f44ac759)."""
    for line in text.splitlines():
        if line.startswith("#") and "=" in line:
            raise ValueError(f"nccl.conf comment would be read as a variable by NCCL < 2.26.2: "
                             f"{line!r}")
    return text


class NcclTarget:
    name = "nccl"
    description = ("nccl/<profile>.env (export KEY=VALUE, for a shell) and nccl/<profile>.conf "
                   "(KEY=VALUE, for /etc/nccl.conf): RoCE, InfiniBand or AWS EFA")

    def applies(self, ctx: RenderContext) -> bool:
        return True

    def render(self, ctx: RenderContext) -> Artifacts:
        profile = nic.profile_name(ctx)
        data = {"fabric": ctx.fabric.name, "profile": profile, "entries": entries(ctx)}
        return {
            f"nccl/{profile}.env": templating.render("nccl/profile.j2", shell=True, **data),
            f"nccl/{profile}.conf": check_conf(
                templating.render("nccl/profile.j2", shell=False, **data)),
        }


TARGET = NcclTarget()
