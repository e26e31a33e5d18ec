"""EOS candidates: a list of top-level CLI sections. fabgen owns each section it renders, by its
header line, and for the kinds in EOS_KINDS every section of that kind (a running `router bgp
65000` goes when the render has `router bgp 65101`), and the kinds in EOS_ALWAYS (BFD, load
balancing) even when the render has none; every other running section (`interface
Management1`, `username`, `aaa`, `vrf instance MGMT`, ...) is carried into the candidate.
"""

from __future__ import annotations

from typing import Any

from fabgen.push.candidate import carried_sections, cli_sections, render_body

__all__ = ["EOS_ALWAYS", "EOS_KINDS", "eos_candidate", "eos_management"]

# Kinds of top-level sections fabgen owns as a class when it renders one of that kind.
EOS_KINDS = ("hostname", "service routing protocols model", "router bgp", "qos map",
             "priority-flow-control")
# Kinds fabgen owns even when the render has none: the underlay's optional settings (BFD off,
# hash instead of dynamic load balancing must remove what an earlier push set).
EOS_ALWAYS = ("router bfd", "ip hardware fib load-balance distribution",
              "port-channel load-balance trident udf")

def eos_candidate(running: str, render: str) -> str:
    """The render verbatim (without its `end`), then every running section fabgen does not
    own, then `end`."""
    out = render_body(render)
    for section in carried_sections(running, render, EOS_KINDS, EOS_ALWAYS):
        out += [*section, "!"]
    return "\n".join([*out, "end"]) + "\n"


def eos_management(text: str, host: str | None = None) -> dict[str, Any]:
    """What an EOS session depends on: `interface Management*` and any interface with the
    address fabgen connected to (addresses, VRF, shutdown), the VRFs they are in and those
    VRFs' static routes, `management ssh`, and the local users."""
    sections = cli_sections(text)
    facts: dict[str, Any] = {}
    vrfs: set[str] = set()
    for s in sections:
        body = [x.strip() for x in s[1:]]
        header = s[0]
        if not header.startswith("interface "):
            continue
        uses_host = host is not None and any(x.startswith(f"ip address {host}/") for x in body)
        if header.startswith("interface Management") or uses_host:
            facts[header] = tuple(x for x in body if x.split()[0] in ("ip", "ipv6", "vrf")
                                  or x in ("shutdown", "no shutdown"))
            vrfs |= {x.split()[1] for x in body if x.startswith("vrf ") and len(x.split()) > 1}
    for s in sections:
        header = s[0]
        if (header in {f"vrf instance {v}" for v in vrfs}
                or any(header.startswith(f"ip route vrf {v} ") for v in vrfs)
                or header.startswith(("management ssh", "username "))):
            facts[header] = tuple(x.strip() for x in s[1:])
    return facts
