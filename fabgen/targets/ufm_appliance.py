"""UFM Enterprise Appliance: the CLI commands that put fabgen's plan on a pair of appliances.

The appliance is configured through its CLI, not by editing /opt/ufm/files (that is UFM
Enterprise software's way, fabgen.targets.opensm_files and ufm-setup.sh). fabgen renders
`ufm/appliance.cli`: per node the fabric interface's address, then on the master the commands
for SHARP and the tenants, between stopping and starting UFM, and the settings the CLI has no
command for (routing engine, root GUIDs, QoS tables, SHARP's SL), which stay UFM's unless set
another way. Every command's syntax is the manual's (tests/test_ufm_appliance.py holds each
syntax line with its source and checks every rendered command against it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from ipaddress import IPv4Interface

from fabgen.targets.opensm_plan import OpenSMSettings
from fabgen.targets.opensm_sms import SmPort

__all__ = ["CliBlock", "CliCommand", "appliance_blocks"]

# Where each command's syntax is printed.
_UM = "UFM Enterprise Appliance Software User Manual"
_SDN = "UFM-SDN Appliance Command Reference Guide"
SOURCES = {
    "ufm start": f"{_UM} v1.4.1-v1.13.2, UFM Commands: \"ufm start / no ufm start\"",
    "interface": f"{_UM} v1.3.1-v2.3.11, System Management: \"interface {{... | ib0 | ib1 | "
                 "ib2 | ib3}\", then \"ip address <IP address> <netmask>\" (config interface)",
    "ib sm sharp enable": f"{_SDN} v4.10.1-v4.16.0, SHARP Configuration in OpenSM (\"not "
                          f"possible to modify ... in case OpenSM is running\"); {_UM} v1.4.0 "
                          "command list",
    "ib sharp enable": f"{_SDN} v4.9.0-v4.18.3, SHARP Aggregation Manager; {_UM} v1.4.0 "
                       "command list; SHARP Rev 3.12.0, NVIDIA SHARP Installation",
    "ib sharp smx-protocol": f"{_SDN} v4.9.0-v4.18.3: \"ib sharp smx-protocol {{sockets | "
                             f"ucx}}\"; {_UM} v1.4.0 command list",
    "ib sharp allocation enable": f"{_SDN} v4.9.0-v4.18.3 (history 4.3.0)",
    "ib sharp job-pkey-on-tree enable": f"{_SDN} v4.9.0-v4.18.3 (history 4.5.0, default "
                                        "Disabled)",
    "ib partition management defmember": f"{_SDN} v4.10.0-v4.18.3, Partition: "
                                         "\"ib partition management defmember <type>\" ("
                                         "\"not possible to modify the defmember in case "
                                         f"OpenSM or UFM are running\"); {_UM} v1.4.0 "
                                         "command list",
    "show": f"{_UM} v1.4.0-v1.13.2 (show ufm status, show interfaces) and {_SDN} (show ib "
            "sharp, show ib sm sharp, show ib partition)",
}


@dataclass(frozen=True, slots=True)
class CliCommand:
    command: str
    why: str
    source: str


@dataclass(frozen=True, slots=True)
class CliBlock:
    """Commands run on one node (`node`), or notes with no command (`commands` empty)."""

    title: str
    node: str | None
    commands: tuple[CliCommand, ...] = ()
    notes: tuple[str, ...] = field(default=())


def _netmask(address: str) -> tuple[str, str]:
    iface = IPv4Interface(address)
    return str(iface.ip), str(iface.network.netmask)


def appliance_blocks(settings: OpenSMSettings, sms: tuple[SmPort, ...], engine: str,
                     tenants: bool, sharp_sl: int, sharp_vl: int, roots: int,
                     user_ext: str | None, ipoib_field: str = "infiniband.ipoib"
                     ) -> tuple[CliBlock, ...]:
    """The CLI of a UFM appliance pair, node by node. `engine`: the routing_engine list the
    plan wants; `roots`: how many root GUIDs it pins; `user_ext`: the tenants' file to import;
    `ipoib_field`: the intent field the fabric interfaces' addresses come from."""
    master = sms[0].host if sms else None
    blocks = [CliBlock(f"{master}, the master: stop UFM", master, (
        CliCommand("no ufm start", "the fabric interface, SHARP and default-partition settings "
                   "below cannot change while UFM and its OpenSM run (NVIDIA's InfiniBand "
                   "Cluster Bring-up Procedure stops UFM before addressing the interfaces)",
                   SOURCES["ufm start"]),))]
    for sm in sms:
        address = sm.port.ipoib.with_prefixlen if sm.port.ipoib is not None else None
        if address is None:
            blocks.append(CliBlock(
                f"{sm.host}: its fabric interface {sm.port.netdev}", sm.host, (),
                (f"No IPoIB address is planned for {sm.port.netdev}: give it one with "
                 f"`interface {sm.port.netdev}` and `ip address <IP> <netmask>`; UFM binds its "
                 "SM to it (gv.cfg fabric_interface).",)))
            continue
        ip, mask = _netmask(address)
        blocks.append(CliBlock(f"{sm.host}: its fabric interface {sm.port.netdev}", sm.host, (
            CliCommand(f"interface {sm.port.netdev}", "UFM binds its SM to this port's IPoIB "
                       "interface (gv.cfg fabric_interface), on either node", SOURCES["interface"]),
            CliCommand(f"ip address {ip} {mask}", f"{address}, the plan's ({ipoib_field}); "
                       "it clears the interface's default gateway and name servers, so it "
                       "comes first", SOURCES["interface"]),
        )))
    cmds: list[CliCommand] = []
    if settings.sharp:
        cmds += [
            CliCommand("ib sm sharp enable", "OpenSM enables SHARP on every switch that "
                       "supports it (opensm.conf sharp_enabled)", SOURCES["ib sm sharp enable"]),
            CliCommand("ib sharp enable", "UFM starts SHARP's aggregation manager",
                       SOURCES["ib sharp enable"]),
            CliCommand(f"ib sharp smx-protocol {settings.sharp_transport}",
                       "how libsharp reaches sharp_am (infiniband.sharp_protocol; SHARP 3.13 "
                       "defaults new installs to UCX)", SOURCES["ib sharp smx-protocol"]),
        ]
        if tenants:
            cmds += [
                CliCommand("ib sharp allocation enable", "UFM relays the tenants' P_Keys to "
                           "sharp_am (SHARP reservations)", SOURCES["ib sharp allocation enable"]),
                CliCommand("ib sharp job-pkey-on-tree enable", "a tenant's aggregation trees "
                           "carry its P_Key", SOURCES["ib sharp job-pkey-on-tree enable"]),
            ]
    if tenants and (settings.default_membership or "limited") == "limited":
        cmds.append(CliCommand("ib partition management defmember limited",
                               "the hosts limited members of the default partition: a tenant "
                               "reaches no other tenant on P_Key 0x7fff",
                               SOURCES["ib partition management defmember"]))
    cmds += [
        CliCommand("ufm start", "UFM and its SM back up with the settings above",
                   SOURCES["ufm start"]),
        CliCommand("show ufm status", "ufm-enterprise Started on this master", SOURCES["show"]),
        CliCommand(f"show interfaces {sms[0].port.netdev}" if sms else "show interfaces",
                   "the fabric interface up with its address", SOURCES["show"]),
        CliCommand("show ib partition", "Default membership: "
                   + ("limited" if tenants and (settings.default_membership or "limited")
                      == "limited" else "as UFM had it"), SOURCES["show"]),
    ]
    if settings.sharp:
        cmds.append(CliCommand("show ib sharp", "SHARP enabled, smx protocol "
                               + settings.sharp_transport, SOURCES["show"]))
    what = "SHARP" if settings.sharp else ""
    if tenants:
        what = f"{what} and tenants" if what else "tenants"
    blocks.append(CliBlock(f"{master}, the master: {what + ', then ' if what else ''}start UFM",
                           master, tuple(cmds)))
    notes = []
    if user_ext is not None:
        notes.append(f"The tenants: put infiniband/ufm/partitions.conf.user_ext where the "
                     f"appliance can fetch it and import it with `ib sm configuration import "
                     f"partition-conf-user-ext <url>` ({_UM} v1.4.1-v1.13.2, InfiniBand Commands; "
                     "its example spells the keyword partition-config-user-ext: use the one "
                     "your CLI completes); UFM merges it into " + user_ext + ".")
    notes.append(f"Routing: the plan wants routing_engine {engine}"
                 + (f" and {roots} root GUIDs (ufm/root_guids.txt)" if roots else "")
                 + f". The appliance has `ib sm routing-engines` and `ib sm root-guid` ({_UM} "
                 "v1.4.0 command list), whose syntax fabgen found in no manual: set them per "
                 "your appliance's manual, or they keep UFM's defaults.")
    notes.append("QoS: the appliance CLI documents no command for OpenSM's SL-to-VL and VL "
                 "arbitration tables (qos_sl2vl, qos_vlarb_*, max_op_vls), the QoS policy file "
                 "or the node-name map (ufm/opensm.conf, qos-policy.conf, ib-node-name-map)"
                 + (f", nor for SHARP's SL (sharp_am ib_qpc_sl {sharp_sl}): SHARP shares the "
                    f"compute VL instead of VL {sharp_vl} of its own until they are set"
                    if settings.sharp else "")
                 + ". NVIDIA support can set them on the appliance; infiniband/check-routing.sh "
                 "reads the tables back.")
    blocks.append(CliBlock("Not set by these commands", None, (), tuple(notes)))
    return tuple(blocks)
