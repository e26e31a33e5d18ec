"""SHARP: where its aggregation manager's settings live, the values fabgen gives them, and the
proof that a job really reduces in the switches.

sharp_am is switched on in UFM's gv.cfg, configured in its sharp_am.cfg and reached by libsharp
over IPoIB; every value here is cited beside it. NCCL falls back to its own rings and trees
without a word when CollNet cannot be set up (nccl src/transport/coll_net.cc ncclCollNetSetup:
`fail: ... comm->config.collnetEnable = 0`), so a bandwidth floor proves nothing about SHARP:
the check restricts NCCL to the CollNet algorithms, which makes a run without SHARP fail, and
reads the log lines that name the SHARP plugin.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabgen.targets.opensm_plan import OpenSMSettings, SlPlan

__all__ = [
    "CHECK_FORBIDDEN",
    "CHECK_REQUIRED",
    "NCCL_ALGO_COLLNET",
    "PLAIN_SHARP_AM_CFG",
    "SHARP_AM_TCP_PORT",
    "SMX_PROTOCOL_SOCKETS",
    "GvSetting",
    "LogLine",
    "SharpOption",
    "gv_settings",
    "sharp_am_options",
]

# SHARP Rev 3.12.0, "NVIDIA SHARP Installation", SHARP Network Settings in UFM: "By default,
# sharp_am communicates with libsharp clients over IP over InfiniBand (IPoIB) using TCP port
# 6126"; UFM Appliance Firewall Settings: "UFM Appliance Gen 3.x includes a firewall that, by
# default, blocks the TCP port used by sharp_am".
SHARP_AM_TCP_PORT = 6126
# SHARP Rev 3.13.0, Changes and New Features, smx_protocol: "Value 1 - UCX. Value 2 - Sockets";
# new installations default to UCX from 3.13, upgrades keep what they had. fabgen pins sockets
# (the IPoIB path above), so every UFM version behaves the same and preflight.sh can prove it.
SMX_PROTOCOL_SOCKETS = 2
# SHARP "Modifying NVIDIA SHARP Aggregation Manager Configuration" (Rev 3.3.0-3.4.0): sharp_am
# run from HPC-X reads /etc/sharp/sharp_am.cfg by default.
PLAIN_SHARP_AM_CFG = "/etc/sharp/sharp_am.cfg"
# NCCL_ALGO names are matched case-insensitively against ncclAlgoStr (nccl src/init.cc
# "CollNetDirect", "CollNetChain"; src/graph/tuning.cc parseList, strcasecmp). With only these
# allowed and CollNet down, NCCL refuses the collective: "No algorithm/protocol available for
# function %s with datatype %s. NCCL_ALGO was set to %s." and ncclInvalidUsage
# (src/enqueue.cc topoGetAlgoInfo).
NCCL_ALGO_COLLNET = "CollNetDirect,CollNetChain"


@dataclass(frozen=True, slots=True)
class LogLine:
    """A piece of an NCCL_DEBUG=INFO log line (an extended regular expression, grep -E) and
    where it is printed."""

    text: str
    source: str
    why: str


# Every one must appear in the log of a SHARP run (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET).
CHECK_REQUIRED = (
    LogLine("NET/Plugin: Loaded collnet plugin SHARP",
            "nccl src/plugin/net/net_v11.cc INFO \"NET/Plugin: Loaded collnet plugin %s (v11)\" "
            "(v6-v12 alike); the name is nccl-rdma-sharp-plugins src/sharp_plugin.c "
            "ncclCollNetPlugin_v11 {\"SHARP\", ...} (2f5ac02e)",
            "the CollNet plugin of nccl-rdma-sharp-plugins was loaded"),
    LogLine("via COLLNET/SHARP/",
            "nccl src/transport/coll_net.cc sendSetup/recvSetup INFO \"CollNet %02d/%1d : %d "
            "[send] via COLLNET/%s/%d%s%s\"",
            "the CollNet channels were set up through SHARP"),
    LogLine("Connected (CollNet|Collnet Chains)",
            "nccl src/transport/coll_net.cc ncclCollNetDirectBufferSetup INFO \"rank %d "
            "Connected CollNet\", ncclCollNetChainBufferSetup INFO \"Connected Collnet Chains "
            "%s\" (whichever algorithm the job used first)",
            "the CollNet connections came up (after sharp_am gave the job its trees)"),
)
# None may appear: each is how a run without SHARP shows in the same log.
CHECK_FORBIDDEN = (
    LogLine("No algorithm/protocol available",
            "nccl src/enqueue.cc topoGetAlgoInfo WARN",
            "CollNet was not available, so the CollNet-only NCCL_ALGO left NCCL nothing to run"),
    LogLine("SHARP coll init error",
            "nccl-rdma-sharp-plugins src/sharp_plugin.c ncclSharpConnect WARN \"NET/IB : SHARP "
            "coll init error: %s(%d)\"",
            "libsharp could not reach sharp_am (IPoIB address, TCP 6126, firewall, "
            "sharp_enabled)"),
    LogLine("disabling CollNet",
            "nccl src/init.cc INFO \"Communicator has %d nodes which is less than CollNet node "
            "threshold %d, disabling CollNet\"",
            "the job had too few nodes for CollNet"),
)


@dataclass(frozen=True, slots=True)
class SharpOption:
    name: str
    value: str
    comment: str


@dataclass(frozen=True, slots=True)
class GvSetting:
    """One key of UFM's gv.cfg, and why. ufm-setup.sh sets the key where gv.cfg has it; only
    a key gv.cfg lacks is added, to `section` (None: UFM's documentation names no section, so
    the script stops instead of guessing one)."""

    section: str | None
    key: str
    value: str
    comment: str


def gv_settings(settings: OpenSMSettings, fabric_interface: str, tenants: bool
                ) -> tuple[GvSetting, ...]:
    """What fabgen sets in UFM's gv.cfg: the fabric interface and, with SHARP, the aggregation
    manager (and its tenant reservations)."""
    out = [GvSetting(
        None, "fabric_interface", fabric_interface,
        "the IPoIB interface of the port the SM binds; it must be up with an IPv4 address "
        "before UFM starts (UFM Enterprise User Manual, Initial Configuration)")]
    if settings.sharp:
        out.append(GvSetting(
            "Sharp", "sharp_enabled", "true",
            "SHARP's aggregation manager is off by default before UFM 6.23 and an upgrade keeps "
            "the old value (UFM Enterprise User Manual, Additional Configuration; SHARP Rev "
            "3.13.0, NVIDIA SHARP Installation)"))
        if tenants:
            out.append(GvSetting(
                "Sharp", "sharp_allocation_enabled", "true",
                "SHARP reservations per tenant P_Key, which UFM relays to sharp_am (SHARP Rev "
                "3.8.0, Operating NVIDIA SHARP with PKeys; the same page's SHARP Reservation "
                "section spells it enable_sharp_allocation)"))
    return tuple(out)


def sharp_am_options(settings: OpenSMSettings, plan: SlPlan, root_guids_file: str | None,
                     tenants: bool) -> tuple[SharpOption, ...]:
    """sharp_am.cfg's options, option names as SHARP's documentation spells them."""
    sl = settings.sharp_sl
    vl = plan.sl2vl[sl]
    out = [
        SharpOption("ib_port_guid", "0", "0: bind to the port OpenSM uses (SHARP, sharp_am "
                    "Network Interfaces)"),
    ]
    if root_guids_file is not None:
        out.append(SharpOption("root_guids_file", root_guids_file,
                               "the spine switches OpenSM roots at: SHARP trees grow from the "
                               "same tops"))
    out += [
        SharpOption("dynamic_tree_allocation", "TRUE",
                    "trees built per job (SHARP 3.1; the default from 3.4)"),
        SharpOption("dynamic_tree_algorithm", "0",
                    "0: the fat-tree algorithm (SHARP 3.8, dynamic_tree_algorithm)"),
        SharpOption("ib_qpc_sl", str(sl),
                    f"SHARP's QPs on their own SL {sl}, which opensm.conf maps to VL {vl}, a VL "
                    "no other traffic uses: reductions never queue behind bulk transfers "
                    "(infiniband.sharp_sl)"),
        SharpOption("ib_sat_qpc_sl", str(sl), "the same SL for streaming aggregation"),
        SharpOption("smx_protocol", str(SMX_PROTOCOL_SOCKETS),
                    f"2: libsharp reaches sharp_am over IPoIB, TCP {SHARP_AM_TCP_PORT} (the "
                    "default before SHARP 3.13; new 3.13 installs default to 1, UCX). Pinned so "
                    "every version behaves alike and preflight.sh can test the path"),
    ]
    if tenants:
        out.append(SharpOption(
            "reservation_auto_by_pkeys", "TRUE",
            "one SHARP reservation per tenant P_Key, kept in step with partitions.conf, so a "
            "tenant's job gets trees carrying its P_Key and no other tenant's hosts (SHARP "
            "3.13, Automatic Synchronization of SHARP Reservations and PKeys)"))
    return tuple(out)
