"""`fabgen verify` on Cumulus NVUE: the outputs verify/collect-nvue.sh saves, their parsers, and
what they say against the plan (ports, LLDP, BGP, BFD).

The files (NVUE; lldpd's lldpctl; FRR's vtysh):
  interfaces.json   nv show interface -o json
  lldp.json         lldpctl -f json
  bgp.json          vtysh -c 'show ip bgp summary json'
  bfd.json          vtysh -c 'show bfd peers json'        (only when underlay.bfd is on)

BFD runs in the FRR Cumulus hands `neighbor ... bfd` to, so FRR's parsers serve
(fabgen.verify.saved), as lldpd's does for LLDP.
"""

from __future__ import annotations

from collections.abc import Mapping

from fabgen import underlay
from fabgen.intent.models import MonitoringSpec
from fabgen.platforms.contract.outputs import SavedFile
from fabgen.qos import QosPlan
from fabgen.verify import findings as compare
from fabgen.verify import saved
from fabgen.verify.expect import ExpectedSwitch
from fabgen.verify.findings import Finding

__all__ = ["CLEAR", "SAVED", "findings", "interfaces"]

SAVED = (
    SavedFile("interfaces.json", "nv show interface -o json", "port state, speed, MTU"),
    SavedFile("lldp.json", "sudo lldpctl -f json", "LLDP neighbours"),
    SavedFile("bgp.json", "sudo vtysh -c 'show ip bgp summary json'", "BGP sessions"),
    SavedFile("bfd.json", "sudo vtysh -c 'show bfd peers json'", "BFD sessions",
              bfd_only=True),
)
# What the collect script says clears the counters verify reads.
CLEAR = "nv action clear interface counters"


def interfaces(text: str) -> dict[str, dict[str, str]]:
    """{interface: {"oper", "speed", "mtu"}} of `nv show interface -o json` (link subtree)."""
    data = saved.load_json(text, "interfaces.json")
    out: dict[str, dict[str, str]] = {}
    if not isinstance(data, dict):
        return out
    for name, details in data.items():
        link = details.get("link", {}) if isinstance(details, dict) else {}
        if not isinstance(link, dict):
            continue
        state = link.get("oper-status", link.get("state", ""))
        if isinstance(state, dict):  # older NVUE: "state": {"up": {}}
            state = next(iter(state), "")
        out[str(name)] = {"oper": str(state),
                          "speed": str(link.get("speed", "")), "mtu": str(link.get("mtu", ""))}
    return out


def findings(sw: ExpectedSwitch, texts: Mapping[str, str], plan: QosPlan,
             limits: MonitoringSpec, checks: tuple[str, ...],
             bfd: underlay.Bfd | None) -> list[Finding]:
    """Every difference between an NVUE switch's saved outputs and its plan."""
    out: list[Finding] = []
    if "interfaces" in checks and "interfaces.json" in texts:
        out += compare.interfaces(sw, interfaces(texts["interfaces.json"]))
    if "lldp" in checks and "lldp.json" in texts:
        out += compare.lldp(sw, saved.lldp_neighbors_lldpctl(texts["lldp.json"]), limits)
    if "bgp" in checks and "bgp.json" in texts:
        out += compare.bgp(sw, saved.bgp_peers(texts["bgp.json"]))
    if bfd is not None and "bfd" in checks and "bfd.json" in texts:
        out += compare.bfd(sw, saved.bfd_peers(texts["bfd.json"]), bfd)
    return out
