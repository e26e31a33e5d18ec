"""NCCL target: the environment of the host profile, as a shell env file and as /etc/nccl.conf.

Only variables NCCL (or its net plugin, or libfabric for EFA) actually reads, each checked in
its source (see SOURCES), with values in their documented forms and a comment saying why.
Values come from the QosPlan (NCCL_IB_TC = the RDMA class's ToS byte), the cabling (NCCL_IB_HCA:
the compute ports in rail order) and the intent's nccl and infiniband sections.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from fabgen import templating, underlay
from fabgen.targets import nic
from fabgen.targets.base import Artifacts, RenderContext

__all__ = ["SOURCES", "TARGET", "Entry", "NcclTarget", "entries", "hca_list"]

# Where each variable is read, checked in NVIDIA/nccl v2.30.7 (5067397c), aws/aws-ofi-nccl
# (2daf7d30) and ofiwg/libfabric; a new variable needs an entry here (tests enforce it).
SOURCES: dict[str, str] = {
    "NCCL_IB_HCA": "nccl src/transport/net_ib/init.cc:317 ncclGetEnv(\"NCCL_IB_HCA\"), "
                   "parsed by src/misc/utils.cc:189 parseStringList (dev[:port])",
    "NCCL_IB_GID_INDEX": "nccl src/transport/net_ib/connect.cc:12 "
                         "NCCL_PARAM(IbGidIndex, \"IB_GID_INDEX\", -1)",
    "NCCL_IB_TC": "nccl src/transport/net_ib/connect.cc:20 NCCL_PARAM(IbTc, \"IB_TC\", -1)",
    "NCCL_IB_SL": "nccl src/transport/net_ib/connect.cc:19 NCCL_PARAM(IbSl, \"IB_SL\", -1)",
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
    key: str
    value: str
    why: str


def hca_list(ctx: RenderContext) -> str:
    """NCCL_IB_HCA: the compute ports cabled to the fabric, in rail order, exact names."""
    ports = nic.profile_ports(ctx.fabric)
    return "=" + ",".join(f"{p.rdma_device}:{p.ib_port}" for p in ports)


def _seconds(value: Fraction) -> str:
    text = f"{float(value):.1f}"
    return text[:-2] if text.endswith(".0") else text


def entries(ctx: RenderContext) -> list[Entry]:
    """The profile's variables in file order, each with the reason for its value."""
    intent, fabric = ctx.intent, ctx.fabric
    n = intent.nccl
    bootstrap = Entry("NCCL_SOCKET_IFNAME", "=" + intent.hosts.bootstrap_interface,
                      "bootstrap and connection setup over the management interface "
                      "(hosts.bootstrap_interface); '=' selects exactly that name")
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
    ports = nic.profile_ports(fabric)
    out = [Entry("NCCL_IB_HCA", hca_list(ctx),
                 f"the {len(ports)} compute ports cabled to the fabric, in rail order, as "
                 "device:port; '=' matches names exactly (mlx5_1 would also match mlx5_10)")]
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
                  f"ToS byte of RDMA traffic = DSCP {rdma.dscp[0]} << 2{ecn} = {rdma.tos}; "
                  f"the switches and NICs map DSCP {rdma.dscp[0]} to lossless priority "
                  f"{rdma.priority}"),
        ]
    else:
        ib = intent.infiniband
        ar = ", an SL the subnet manager routes adaptively" if ib.adaptive_routing else ""
        out.append(Entry("NCCL_IB_SL", str(ib.service_level),
                         f"service level of the compute traffic (infiniband.service_level)"
                         f"{ar}; the subnet manager maps it to a VL"))
    out += [
        bootstrap,
        Entry("NCCL_NET_GDR_LEVEL", n.gdr_level,
              "GPUDirect RDMA up to this GPU-NIC distance (nccl.gdr_level); each rail NIC "
              "sits next to its GPU"),
    ]
    if fabric.transport == "roce":
        out.append(_roce_adaptive_routing(ctx))
    elif intent.infiniband.adaptive_routing:
        out.append(Entry("NCCL_IB_ADAPTIVE_ROUTING", "1",
                         "the subnet manager runs adaptive routing "
                         "(infiniband.adaptive_routing), so packets may arrive out of order"))
    else:
        out.append(Entry("NCCL_IB_ADAPTIVE_ROUTING", "0",
                         "adaptive routing is off in this fabric (infiniband.adaptive_routing)"
                         ", so NCCL's IB default (on) is turned off"))
    spread = ("UDP source ports for ECMP to hash over" if fabric.transport == "roce"
              else "paths per connection")
    timeout = _ACK_TIMEOUT_UNIT_S * 2**n.timeout
    out += [
        Entry("NCCL_IB_QPS_PER_CONNECTION", str(n.qps_per_connection),
              f"{n.qps_per_connection} queue pairs per connection = {n.qps_per_connection} "
              f"{spread} (nccl.qps_per_connection)"),
    ]
    if fabric.transport == "roce" and n.qps_per_connection > 1:
        # Which QP a message takes decides which ECMP path it takes: pinned to NCCL's current
        # default so every NCCL release spreads the same way (it was 1 before 2.20.3).
        out.append(Entry("NCCL_IB_SPLIT_DATA_ON_QPS", "0",
                         "each message goes whole on one QP, messages round-robin over the "
                         f"{n.qps_per_connection} QPs, so each ECMP path carries whole "
                         "messages (NCCL's default since 2.20.3, pinned)"))
    out += [
        Entry("NCCL_IB_TIMEOUT", str(n.timeout),
              f"ACK timeout 4.096 us x 2^{n.timeout} = {_seconds(timeout)} s, for a fabric of "
              f"{fabric.tiers} switch tiers (nccl.timeout)"),
        Entry("NCCL_IB_RETRY_CNT", str(n.retry_cnt),
              f"{n.retry_cnt} retries before NCCL reports a network error, about "
              f"{_seconds(timeout * max(n.retry_cnt, 1))} s in all (nccl.retry_cnt)"),
    ]
    if fabric.transport == "infiniband" and intent.infiniband.sharp:
        out.append(Entry("NCCL_COLLNET_ENABLE", "1",
                         "SHARP in-network reductions (infiniband.sharp) through the CollNet "
                         "plugin (nccl-rdma-sharp-plugins' libnccl-net.so must be installed)"))
    return out


def _roce_adaptive_routing(ctx: RenderContext) -> Entry:
    """NCCL_IB_ADAPTIVE_ROUTING for RoCE, from the fabric's load balancing (underlay plan).

    Per-packet adaptive routing (Cumulus) can deliver a message's packets out of order; with
    the variable set NCCL sends the data as an RDMA write and signals it with a separate write
    with immediate (nccl src/transport/net_ib/p2p.cc:132). EOS dynamic load balancing moves
    flowlets, whose packets stay in order, and hashing never reorders: NCCL's RoCE default.
    """
    lb = underlay.plan(ctx.intent).load_balancing
    per_packet = lb.mode == "adaptive" and any(
        s.platform == "nvue" for s in ctx.fabric.switches)
    if per_packet:
        return Entry("NCCL_IB_ADAPTIVE_ROUTING", "1",
                     "the Cumulus switches route adaptively per packet (load_balancing.mode), "
                     "so a message's packets may arrive out of order")
    how = ("moves flowlets, which keep their order" if lb.mode == "adaptive"
           else "spreads flows by ECMP hashing")
    return Entry("NCCL_IB_ADAPTIVE_ROUTING", "0",
                 f"the fabric {how}; no per-packet adaptive routing (NCCL's RoCE default, "
                 "pinned)")


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
            f"nccl/{profile}.conf": templating.render("nccl/profile.j2", shell=False, **data),
        }


TARGET = NcclTarget()
