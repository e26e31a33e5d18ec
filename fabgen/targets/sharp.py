"""SHARP: where its aggregation manager's settings live, the values fabgen gives them, and the
proof that a job really reduces in the switches.

sharp_am is switched on in UFM's gv.cfg (or the appliance's CLI), configured in its sharp_am.cfg
and reached by libsharp over UCX or, with sockets, over IPoIB; every value here is cited beside
it, and an option name NVIDIA's manuals do not print is marked `unverified` with where fabgen
read it. NCCL falls back to its own rings and trees without a word when CollNet cannot be set up
(nccl src/transport/coll_net.cc ncclCollNetSetup: `comm->config.collnetEnable = 0`), so a
bandwidth floor proves nothing about SHARP: the check restricts NCCL to the CollNet algorithms,
which makes a run without SHARP fail, and reads the log lines that name the SHARP plugin, in
the format of every NCCL release from 2.18 (tests/nccl_log_formats.py holds each release's
format strings; tests/test_upstream_ib.py reads them from the release tags).
"""

from __future__ import annotations

from dataclasses import dataclass

from fabgen.intent.models import sharp_release
from fabgen.targets.opensm_plan import OpenSMSettings, SlPlan

__all__ = [
    "CHECK_FORBIDDEN",
    "CHECK_REQUIRED",
    "NCCL_ALGO_COLLNET",
    "PLAIN_SHARP_AM_CFG",
    "RESERVATION_AUTO_FROM",
    "SHARP_AM_TCP_PORT",
    "SMX_PROTOCOL",
    "GvSetting",
    "LogLine",
    "SharpOption",
    "gv_settings",
    "reservation_auto",
    "sharp_am_options",
]

# SHARP Rev 3.12.0, "NVIDIA SHARP Installation", SHARP Network Settings in UFM: "By default,
# sharp_am communicates with libsharp clients over IP over InfiniBand (IPoIB) using TCP port
# 6126"; UFM Appliance Firewall Settings: "UFM Appliance Gen 3.x includes a firewall that, by
# default, blocks the TCP port used by sharp_am, preventing SHARP clients from connecting when
# TCP is used". With UCX there is no TCP port to open.
SHARP_AM_TCP_PORT = 6126
# SHARP Rev 3.13.0, Changes and New Features, smx_protocol: "Value 1 - UCX. Value 2 - Sockets".
SMX_PROTOCOL = {"ucx": 1, "sockets": 2}
# SHARP Rev 3.13.0, Changes and New Features: reservation_auto_by_pkeys, "New parameter ...
# whether SHARP reservations should be created automatically from the definitions of the pkeys
# in the system" (Automatic Synchronization of SHARP Reservations and PKeys). Older releases
# take one reservation per tenant through UFM's SHARP Reservation REST API.
RESERVATION_AUTO_FROM = (3, 13)
# SHARP "Modifying NVIDIA SHARP Aggregation Manager Configuration" (Rev 3.3.0-3.4.0): sharp_am
# run from HPC-X reads /etc/sharp/sharp_am.cfg by default.
PLAIN_SHARP_AM_CFG = "/etc/sharp/sharp_am.cfg"
# NCCL_ALGO names are matched case-insensitively against ncclAlgoStr (nccl src/init.cc
# "CollNetDirect", "CollNetChain"; src/graph/tuning.cc parseList, strcasecmp). With only these
# allowed and CollNet down, NCCL refuses the collective (src/enqueue.cc, see CHECK_FORBIDDEN)
# and returns an error instead of running.
NCCL_ALGO_COLLNET = "CollNetDirect,CollNetChain"
# Where sharp_am's option names not printed in NVIDIA's manuals come from: the option fields of
# sharp_am's own option parser (OptionInfo in option_manager.h, NVIDIA, (c) 2012-2023, as
# published in public code), whose config names are the field names without `m_` for every
# documented option (m_dynamic_tree_allocation, m_smx_protocol, m_ib_port_guid).
_FROM_SOURCE = ("option name read from sharp_am's option_manager.h (OptionInfo::m_{name}), "
                "not printed in NVIDIA's SHARP manual")


@dataclass(frozen=True, slots=True)
class LogLine:
    """A piece of an NCCL_DEBUG=INFO log line (an extended regular expression, grep -E), where
    NCCL prints it, what its presence shows and what its absence means."""

    pattern: str
    source: str
    found: str
    absent: str
    ignore_case: bool = False


# Every one must appear in the log of a SHARP run (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET).
CHECK_REQUIRED = (
    LogLine(r"NET/Plugin: Loaded coll(net)? plugin [^ ]+ \(v[0-9]+\)",
            "nccl src/net.cc INFO \"NET/Plugin: Loaded coll plugin %s (vN)\" (v2.18-v2.21), "
            "\"Loaded collnet plugin %s (vN)\" (v2.22-v2.25); src/plugin/net/net_vN.cc the same "
            "(v2.26 on), where v2.26-v2.27's net_v10.cc prints the net plugin's name (IBext_v10), "
            "so the name proves nothing: the next line does",
            "NCCL loaded a CollNet plugin",
            "NCCL loaded no CollNet plugin (is nccl-rdma-sharp-plugins' libnccl-net.so on the "
            "library path?)"),
    LogLine("via COLLNET/SHARP/",
            "nccl src/transport/coll_net.cc sendSetup/recvSetup INFO \"CollNet %02d/%1d : %d "
            "[send] via COLLNET/%s/%d%s\" (v2.18-v2.25, \"%d%s%s\" after), %s = collNetName(comm), "
            "the CollNet plugin's own name: \"SHARP\" (nccl-rdma-sharp-plugins src/sharp_plugin.c "
            "ncclCollNetPlugin_v6-v11, 2f5ac02e)",
            "NCCL set its CollNet channels up through the SHARP plugin",
            "no CollNet channel was set up through SHARP"),
    LogLine("Connected (CollNet|Collnet Chains)",
            "nccl src/transport/coll_net.cc INFO \"rank %d Connected CollNet\" (CollNetDirect, "
            "every release) and \"Connected Collnet Chains %s\" (CollNetChain, v2.22 on)",
            "the CollNet connections came up (sharp_am gave the job its trees)",
            "CollNet never connected (sharp_am gave the job no trees)"),
)
# None may appear: each is how a run without SHARP shows in the same log.
CHECK_FORBIDDEN = (
    LogLine("no algorithm/protocol available",
            "nccl src/enqueue.cc WARN \"Error : no algorithm/protocol available\" (v2.18-v2.23), "
            "\"Error : no algorithm/protocol available for function %s with datatype %s.%s%s\" "
            "(v2.24-v2.29), \"No algorithm/protocol available for function ...\" (v2.30): "
            "matched ignoring case",
            "",
            "CollNet was not available, so the CollNet-only NCCL_ALGO left NCCL nothing to run",
            ignore_case=True),
    LogLine("SHARP coll init error",
            "nccl-rdma-sharp-plugins src/sharp_plugin.c ncclSharpConnect WARN \"NET/IB : SHARP "
            "coll init error: %s(%d)\" (2f5ac02e)",
            "",
            "libsharp could not reach sharp_am (sharp_enabled, smx_protocol, the IPoIB address "
            "and TCP port with sockets)"),
    LogLine("disabling CollNet",
            "nccl src/init.cc INFO \"Communicator has %d nodes which is less than CollNet node "
            "threshold %d, disabling CollNet\" (every release)",
            "",
            "NCCL switched CollNet off (too few nodes for it)"),
)


@dataclass(frozen=True, slots=True)
class SharpOption:
    """One sharp_am.cfg option. `unverified`: why fabgen cannot show the option name is right
    (None: NVIDIA's manual prints it); ufm-setup.sh then sets it only where UFM's sharp_am.cfg
    already lists it."""

    name: str
    value: str
    comment: str
    unverified: str | None = None


@dataclass(frozen=True, slots=True)
class GvSetting:
    """One key of UFM's gv.cfg, and why. `section`: the section NVIDIA's manual puts it in, or
    None when the manual names none; `add_to`: where ufm-setup.sh adds it when gv.cfg lacks it
    (None: it stops instead of guessing); `unverified`: what is fabgen's assumption."""

    section: str | None
    key: str
    value: str
    comment: str
    add_to: str | None = None
    unverified: str | None = None


def reservation_auto(settings: OpenSMSettings) -> bool:
    """Whether sharp_am of this SHARP release keeps one reservation per P_Key by itself."""
    return sharp_release(settings.sharp_version) >= RESERVATION_AUTO_FROM


def gv_settings(settings: OpenSMSettings, fabric_interface: str, tenants: bool
                ) -> tuple[GvSetting, ...]:
    """What fabgen sets in UFM's gv.cfg: the fabric interface and, with SHARP, the aggregation
    manager (and its tenant reservations)."""
    out = [GvSetting(
        None, "fabric_interface", fabric_interface,
        "the IPoIB interface of the port the SM binds; it must be up before UFM starts (UFM "
        "Enterprise User Manual v6.13-v6.22, Initial Configuration) and have an IPv4 address "
        "(UFM Enterprise User Manual v6.1.0, Initial Configuration: \"must be configured with "
        "a valid IPv4 address before UFM startup\")")]
    if settings.sharp:
        out.append(GvSetting(
            "Sharp", "sharp_enabled", "true",
            "SHARP's aggregation manager is off by default before UFM 6.23 and an upgrade keeps "
            "the old value (UFM Enterprise User Manual, Additional Configuration: \"[Sharp] "
            "sharp_enabled = true\"; SHARP Rev 3.12.0, NVIDIA SHARP Installation; SHARP Rev "
            "3.13.0: true by default)", add_to="Sharp"))
        if tenants:
            out.append(GvSetting(
                None, "sharp_allocation_enabled", "true",
                "UFM relays the P_Keys to sharp_am, which then runs in reservation mode (SHARP "
                "Rev 3.5.0-3.10.3, Operating NVIDIA SHARP with PKeys: \"set the following "
                "parameter in the UFM gv.cfg file: sharp_allocation_enabled = true\")",
                add_to="Sharp",
                unverified="the manual names no gv.cfg section for it; fabgen adds it to "
                           "[Sharp], beside sharp_enabled, only when gv.cfg has it nowhere"))
    return tuple(out)


def sharp_am_options(settings: OpenSMSettings, plan: SlPlan, root_guids_file: str | None,
                     tenants: bool) -> tuple[SharpOption, ...]:
    """sharp_am.cfg's options, option names as sharp_am spells them."""
    sl = settings.sharp_sl
    vl = plan.sl2vl[sl]
    transport = settings.sharp_transport
    out = [
        SharpOption("ib_port_guid", "0", "0: bind to the port OpenSM uses (SHARP Rev 3.8.0, "
                    "sharp_am Network Interfaces)"),
    ]
    if root_guids_file is not None:
        out.append(SharpOption("root_guids_file", root_guids_file,
                               "the spine switches OpenSM roots at: SHARP trees grow from the "
                               "same tops", _FROM_SOURCE.format(name="root_guids_file")))
    out += [
        SharpOption("dynamic_tree_allocation", "TRUE",
                    "trees built per job (SHARP Rev 3.1.0, Changes and New Features; the "
                    "default from 3.4)"),
        SharpOption("dynamic_tree_algorithm", "0",
                    "0: the fat-tree algorithm (SHARP Rev 3.8.0, dynamic_tree_algorithm)"),
        SharpOption("ib_qpc_sl", str(sl),
                    f"SHARP's QPs on their own SL {sl}, which opensm.conf maps to VL {vl}, a VL "
                    "no other traffic uses: reductions never queue behind bulk transfers "
                    "(infiniband.sharp_sl)", _FROM_SOURCE.format(name="ib_qpc_sl")),
        SharpOption("ib_sat_qpc_sl", str(sl), "the same SL for streaming aggregation",
                    _FROM_SOURCE.format(name="ib_sat_qpc_sl")),
        SharpOption("smx_protocol", str(SMX_PROTOCOL[transport]),
                    f"{SMX_PROTOCOL['ucx']}: UCX over InfiniBand, SHARP 3.13's default for new "
                    "installs, which it advises upgraded ones to switch to (SHARP Rev 3.13.0, "
                    "Changes and New Features)" if transport == "ucx" else
                    f"{SMX_PROTOCOL['sockets']}: sockets, libsharp reaching sharp_am over IPoIB "
                    f"on TCP {SHARP_AM_TCP_PORT} (infiniband.sharp_protocol; SHARP Rev 3.13.0: "
                    "Value 2 - Sockets)"),
    ]
    if tenants:
        out.append(SharpOption(
            "enable_job_pkey_on_tree", "TRUE",
            "the job's P_Key set on the aggregation tree sharp_am allocates for it, so a "
            "tenant's reductions carry its own key (the appliance's `ib sharp job-pkey-on-tree "
            "enable`, \"Enable setting job PKEY on the aggregation tree allocated for the job\", "
            "default Disabled: UFM-SDN Appliance Command Reference Guide 4.5.0-4.18.3, SHARP "
            "Aggregation Manager)", _FROM_SOURCE.format(name="enable_job_pkey_on_tree")))
        if reservation_auto(settings):
            out.append(SharpOption(
                "reservation_auto_by_pkeys", "TRUE",
                "one SHARP reservation per tenant P_Key, kept in step with the partitions, so "
                "a tenant's jobs get trees only among its own hosts (SHARP Rev 3.13.0, "
                "Automatic Synchronization of SHARP Reservations and PKeys)"))
    return tuple(out)
