"""How `fabgen diff` reads EOS's configs (by section; against a backup only the sections fabgen
owns) and the ANTA files of the render."""

from __future__ import annotations

from fabgen.diff.backup import by_sections
from fabgen.diff.kind import Kind, kind
from fabgen.diff.model import Change

__all__ = ["DAY_TWO_KINDS", "EOS_SECTIONS", "KINDS"]

# EOS top-level sections fabgen renders (templates/*.j2).
EOS_SECTIONS = ("service routing protocols model ", "hostname ", "ip routing",
                "management api gnmi", "ip hardware fib ", "interface Ethernet",
                "interface Loopback",
                "port-channel load-balance ", "qos map ", "priority-flow-control ",
                "router bfd", "router bgp ",
                # fabgen renders no static route: one on a switch is drift in the routing it
                # owns (a default route that bypasses the fabric's ECMP), not the device's own
                "ip route ", "ipv6 route ")


def _eos(backup: str, render: str, where: tuple[str, str], owned: bool,
         backup_is_old: bool) -> list[Change]:
    return by_sections(_EOS, backup, render, EOS_SECTIONS if owned else None, backup_is_old)


_EOS: Kind = kind("eos", "eos/*.cfg", "sections", "text",
                  "Arista EOS config by section (`interface Ethernet1/1 > uc-tx-queue 3`)",
                  at="sections", os="eos", device=True, backup=_eos)
KINDS: tuple[Kind, ...] = (_EOS,)
DAY_TWO_KINDS: tuple[Kind, ...] = (
    kind("anta", "verify/*.yaml", "keys", "yaml", "the ANTA catalog and inventory, key by key"),
)
