"""fabgen's model of the NCCL log lines hosts/check-sharp.sh reads, release by release.

Each Release holds the format strings an NCCL release prints where a SHARP job leaves its
traces, with the file they are in (NVIDIA/nccl at the release tag; the line numbers in the
comments are that tag's). CI cannot fetch NCCL: tests/test_check_sharp.py builds logs from these
strings and runs the rendered check-sharp.sh on them, and tests/test_upstream_ib.py checks every
string against the release's own source when FABGEN_UPSTREAM holds `NVIDIA+nccl@<tag>`
checkouts (`git archive <tag> src | tar -x`).

The releases are the last of each minor from 2.18 (the NCCL of the oldest DGX OS 6 and HPC-X
2.16 era) to 2.30, plus the first of 2.26 and 2.27, where the plugin loader moved and the
CollNet-load line started naming the net plugin.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["RELEASES", "Release", "fill", "no_sharp_log", "sharp_log"]


@dataclass(frozen=True, slots=True)
class Release:
    tag: str
    # (file, format, the name NCCL prints for nccl-rdma-sharp-plugins there)
    plugin: tuple[str, str, str]
    collnet: tuple[str, str]  # the CollNet channel set-up line (send side)
    connected: tuple[str, str]  # "rank %d Connected CollNet"
    no_algo: tuple[str, str]  # the WARN of a collective NCCL_ALGO leaves nothing to run
    disabling: tuple[str, str]  # CollNet switched off for too few nodes


# nccl-rdma-sharp-plugins (2f5ac02e) names its CollNet plugin "SHARP" (src/sharp_plugin.c
# ncclCollNetPlugin_v6-v11) and its v10 net plugin "IBext_v10" (src/ib_plugin.c).
SHARP, IBEXT_V10 = "SHARP", "IBext_v10"
_COLLNET_OLD = "CollNet %02d/%1d : %d [send] via COLLNET/%s/%d%s"
_COLLNET_NEW = "CollNet %02d/%1d : %d [send] via COLLNET/%s/%d%s%s"
_CONNECTED = "rank %d Connected CollNet"
_NO_ALGO_OLD = "Error : no algorithm/protocol available"
_NO_ALGO_MID = "Error : no algorithm/protocol available for function %s with datatype %s.%s%s"
_NO_ALGO_NEW = "No algorithm/protocol available for function %s with datatype %s.%s%s"
_DISABLING = ("Communicator has %d nodes which is less than CollNet node threshold %d, "
              "disabling CollNet")


def _old(tag: str, loaded: str, connected_in: str) -> Release:
    """v2.18-v2.23: the loader in src/net.cc, the old no-algorithm WARN."""
    return Release(tag, ("src/net.cc", f"NET/Plugin: Loaded {loaded}", SHARP),
                   ("src/transport/coll_net.cc", _COLLNET_OLD), (connected_in, _CONNECTED),
                   ("src/enqueue.cc", _NO_ALGO_OLD), ("src/init.cc", _DISABLING))


RELEASES: tuple[Release, ...] = (
    # v2.18.5-1: src/net.cc:229 "... coll plugin %s (v5)"; coll_net.cc:165; init.cc:737;
    # enqueue.cc:1182 WARN("Error : no algorithm/protocol available")
    _old("v2.18.5-1", "coll plugin %s (v5)", "src/init.cc"),
    # v2.19.4-1: net.cc:286 (v6); enqueue.cc:1211; init.cc:760
    _old("v2.19.4-1", "coll plugin %s (v6)", "src/init.cc"),
    # v2.20.5-1: net.cc:430 (v7); enqueue.cc:1492; init.cc:808
    _old("v2.20.5-1", "coll plugin %s (v7)", "src/init.cc"),
    # v2.21.5-1: net.cc:491 (v7); enqueue.cc:1528; init.cc:814
    _old("v2.21.5-1", "coll plugin %s (v7)", "src/init.cc"),
    # v2.22.3-1: net.cc:509 "... collnet plugin %s (v7)"; coll_net.cc:1234 Connected CollNet
    _old("v2.22.3-1", "collnet plugin %s (v7)", "src/transport/coll_net.cc"),
    # v2.23.4-1: net.cc:510 (v7); enqueue.cc:1848; coll_net.cc:1217
    _old("v2.23.4-1", "collnet plugin %s (v7)", "src/transport/coll_net.cc"),
    # v2.24.3-1: net.cc:819 (v9); enqueue.cc:1656 "Error : no algorithm/protocol available
    # for function %s ..."
    Release("v2.24.3-1", ("src/net.cc", "NET/Plugin: Loaded collnet plugin %s (v9)", SHARP),
            ("src/transport/coll_net.cc", _COLLNET_OLD),
            ("src/transport/coll_net.cc", _CONNECTED),
            ("src/enqueue.cc", _NO_ALGO_MID), ("src/init.cc", _DISABLING)),
    # v2.25.1-1: net.cc:819 (v9); enqueue.cc:1666
    Release("v2.25.1-1", ("src/net.cc", "NET/Plugin: Loaded collnet plugin %s (v9)", SHARP),
            ("src/transport/coll_net.cc", _COLLNET_OLD),
            ("src/transport/coll_net.cc", _CONNECTED),
            ("src/enqueue.cc", _NO_ALGO_MID), ("src/init.cc", _DISABLING)),
    # v2.26.2-1 .. v2.27.7-1: src/plugin/net/net_v10.cc:27 INFO("... collnet plugin %s (v10)",
    # ncclNet_v10->name): the net plugin's name; coll_net.cc:181-182 "%d%s%s"
    *(Release(tag, ("src/plugin/net/net_v10.cc", "NET/Plugin: Loaded collnet plugin %s (v10)",
                    IBEXT_V10),
              ("src/transport/coll_net.cc", _COLLNET_NEW),
              ("src/transport/coll_net.cc", _CONNECTED),
              ("src/enqueue.cc", _NO_ALGO_MID), ("src/init.cc", _DISABLING))
      for tag in ("v2.26.2-1", "v2.26.6-1", "v2.27.3-1", "v2.27.7-1")),
    # v2.28.9-1, v2.29.7-1: src/plugin/net/net_v11.cc:27 (ncclCollNet_v11->name)
    *(Release(tag, ("src/plugin/net/net_v11.cc", "NET/Plugin: Loaded collnet plugin %s (v11)",
                    SHARP),
              ("src/transport/coll_net.cc", _COLLNET_NEW),
              ("src/transport/coll_net.cc", _CONNECTED),
              ("src/enqueue.cc", _NO_ALGO_MID), ("src/init.cc", _DISABLING))
      for tag in ("v2.28.9-1", "v2.29.7-1")),
    # v2.30.7-1: the plugin offers v11 at most, net_v11.cc:166; enqueue.cc:2063 WARN("No
    # algorithm/protocol available ...") capitalised from 2.30
    Release("v2.30.7-1", ("src/plugin/net/net_v11.cc",
                          "NET/Plugin: Loaded collnet plugin %s (v11)", SHARP),
            ("src/transport/coll_net.cc", _COLLNET_NEW),
            ("src/transport/coll_net.cc", _CONNECTED),
            ("src/enqueue.cc", _NO_ALGO_NEW), ("src/init.cc", _DISABLING)),
)

_SPEC = re.compile(r"%(0?\d*)([ds])")


def fill(fmt: str, *strings: str) -> str:
    """A printf format filled the way NCCL's INFO/WARN print it: numbers as 0 or 1, each %s
    from `strings` in order (empty once they run out)."""
    values = iter(strings)

    def one(m: re.Match[str]) -> str:
        if m.group(2) == "s":
            return next(values, "")
        return "00" if m.group(1) == "02" else "0" if m.group(1) == "1" else "1"

    return _SPEC.sub(one, fmt)


def _info(text: str) -> str:
    return f"dgx001:4242:4242 [0] NCCL INFO {text}"


def _warn(text: str) -> str:
    return f"dgx001:4242:4242 [0] NCCL WARN {text}"


def sharp_log(release: Release) -> str:
    """The log of a SHARP run under this release (NCCL_ALGO=CollNet*, NCCL_DEBUG=INFO)."""
    lines = [
        _info(fill(release.plugin[1], release.plugin[2])),
        _info("SHARP rank 0/16 initialized on mlx5_0:1"),
        _info(fill(release.collnet[1], SHARP, "/GDRDMA", "")),
        _info(fill(release.collnet[1], SHARP, "/GDRDMA", "").replace("[send]", "[receive]")),
        _info(fill(release.connected[1])),
        "# Out of bounds values : 0 OK",
        "# Avg bus bandwidth    : 380.2",
    ]
    return "\n".join(lines) + "\n"


def no_sharp_log(release: Release) -> str:
    """The same job with sharp_am unreachable: the plugin loads, SHARP fails, NCCL refuses the
    CollNet-only algorithm list."""
    lines = [
        _info(fill(release.plugin[1], release.plugin[2])),
        _warn("NET/IB : SHARP coll init error: Cannot connect to SHARPD(-53)"),
        _warn(fill(release.no_algo[1], "AllReduce", "ncclFloat32",
                   " NCCL_ALGO was set to CollNetDirect,CollNetChain.", "")),
    ]
    return "\n".join(lines) + "\n"
