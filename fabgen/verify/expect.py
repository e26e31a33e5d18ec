"""The state each RoCE switch should report after the push: ports up at their planned speed and
MTU, LLDP neighbours equal to the cabling plan, BGP sessions Established.

Computed once from the Fabric and the QosPlan, read by the platforms' day-two checks, `fabgen
verify` and the alerting rules, so the three check the same plan.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from fabgen.platforms.registry import facts as registry
from fabgen.qos import QosPlan
from fabgen.topology.index import FabricIndex
from fabgen.topology.model import Switch

__all__ = ["ExpectedPort", "ExpectedSession", "ExpectedSwitch", "expected_switches",
           "lldp_port_ids"]


@dataclass(frozen=True, slots=True)
class ExpectedPort:
    """One cabled port as the switch itself should report it."""

    name: str  # the platform's interface name (Ethernet8, Ethernet1/1, swp1s0)
    speed_gbps: int
    peer: str  # device at the other end (switch or host name)
    peer_port: str  # the peer's interface name (switch) or netdev (host)
    peer_port_ids: tuple[str, ...]  # LLDP port IDs the right peer port may send
    peer_is_switch: bool


@dataclass(frozen=True, slots=True)
class ExpectedSession:
    """One planned eBGP session of the underlay."""

    peer_ip: str
    peer_asn: int
    peer: str
    port: str  # local interface the session runs over


@dataclass(frozen=True, slots=True)
class ExpectedSwitch:
    name: str
    platform: str  # a registered platform's name
    role: str
    mtu: int
    ports: tuple[ExpectedPort, ...]  # in port order
    sessions: tuple[ExpectedSession, ...]
    hwsku: str | None = None  # the hardware SKU its config declares (facts' device_sku)


def lldp_port_ids(switch: Switch, port: int, name: str) -> tuple[str, ...]:
    """What `switch` sends as its LLDP port ID on a port: the interface name, and whatever
    else its platform sends (its facts' `lldp_port_ids`)."""
    return registry.get(switch.platform).lldp_port_ids(switch.model, switch.breakout, port,
                                                        name)


def expected_switches(index: FabricIndex, plan: QosPlan,
                      platforms: Collection[str] | None = None,
                      ) -> tuple[ExpectedSwitch, ...]:
    """Every RoCE switch of the fabric (or of the platforms named) with its expected ports and
    sessions, in fabric order."""
    wanted = registry.names() if platforms is None else platforms
    out = []
    for switch in index.fabric.switches:
        if switch.platform not in wanted:
            continue
        ports = []
        sessions = []
        for p in index.ports(switch):
            peer = p.peer_switch
            link = p.link
            if peer is not None:
                far = link.z_port if link.a_device == switch.name else link.a_port
                ids = lldp_port_ids(peer, far, p.peer_port)
            else:
                ids = (p.peer_port,)
            ports.append(ExpectedPort(
                name=p.name, speed_gbps=link.speed_gbps, peer=p.peer,
                peer_port=p.peer_port, peer_port_ids=ids, peer_is_switch=peer is not None))
            if peer is not None and peer.asn is not None:
                sessions.append(ExpectedSession(p.peer_ip, peer.asn, p.peer, p.name))
        facts = registry.get(switch.platform) if switch.platform in registry.names() else None
        hwsku = facts.device_sku(switch.model, switch.breakout) if facts is not None else None
        out.append(ExpectedSwitch(switch.name, switch.platform, switch.role, plan.mtu,
                                  tuple(ports), tuple(sessions), hwsku))
    return tuple(out)
