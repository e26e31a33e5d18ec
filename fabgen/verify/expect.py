"""The state each RoCE switch should report after the push: ports up at their planned speed and
MTU, LLDP neighbours equal to the cabling plan, BGP sessions Established.

Computed once from the Fabric and the QosPlan, read by the ANTA catalog, `fabgen verify` and
the alerting rules, so the three check the same plan.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from fabgen.qos import QosPlan
from fabgen.targets import sonic
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
    platform: str  # sonic | nvue | eos
    role: str
    mtu: int
    ports: tuple[ExpectedPort, ...]  # in port order
    sessions: tuple[ExpectedSession, ...]
    hwsku: str | None = None  # SONiC: DEVICE_METADATA hwsku the render is for


def lldp_port_ids(switch: Switch, port: int, name: str) -> tuple[str, ...]:
    """What `switch` sends as its LLDP port ID on a port.

    SONiC's lldpmgrd configures `lldp portidsubtype local <alias>` from CONFIG_DB PORT.alias
    (sonic-buildimage dockers/docker-lldp/lldpmgrd), so a SONiC peer shows its alias; EOS sends
    the interface name and Cumulus's lldpd the ifname. The interface name is accepted for every
    platform (an operator may have reconfigured lldpd), the alias in addition for SONiC.
    """
    if switch.platform == "sonic":
        # sonic._lanes is the one place the PORT alias of a logical port is decided.
        alias = sonic._lanes(switch, port)[2]
        return (name, alias) if alias != name else (name,)
    return (name,)


def expected_switches(index: FabricIndex, plan: QosPlan,
                      platforms: Collection[str] = ("sonic", "nvue", "eos"),
                      ) -> tuple[ExpectedSwitch, ...]:
    """Every RoCE switch of the fabric (or of the platforms named) with its expected ports and
    sessions, in fabric order."""
    out = []
    for switch in index.fabric.switches:
        if switch.platform not in platforms:
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
        hwsku = sonic.hwsku(switch) if switch.platform == "sonic" else None
        out.append(ExpectedSwitch(switch.name, switch.platform, switch.role, plan.mtu,
                                  tuple(ports), tuple(sessions), hwsku))
    return tuple(out)
