"""The ibnetdiscover format, both ways: write the plan as one, read the real fabric's back.

Writing: the planned fabric as an ibnetdiscover-format topology with a GUID plan, what
`ibsim -s FILE` loads so the real OpenSM can accept or refuse the cabling before any hardware
exists. Reading: `parse_ibnetdiscover` takes an `ibnetdiscover` output (or an ibsim topology),
`discovered_node` recognises the planned nodes in it (by GUID, else node description), and
`guids_from_ibnetdiscover` turns it into the GUID plan of the real fabric. The OpenSM target and
`verify-cabling` both import this module; it imports neither. Pure: no I/O, deterministic.

Host adapters: a real host's rdma-ndd describes each "<host> <RDMA device>" (`ca_name`, the name
every fabgen file uses); the simulated fabric describes them "<host> HCA-<nic>", the form ibdm
groups into one host system (ibutils Fabric.cpp, subnet.lst parsing), which the bring-up tests
compare against. Discovered nodes are recognised by either.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from fabgen.topology.model import Fabric, Host, Link, Role, Switch

__all__ = [
    "CA_GUID_BASE",
    "MAX_BYTES",
    "MAX_LINE",
    "MAX_SWITCH_PORTS",
    "SWITCH_GUID_BASE",
    "DiscoveredNode",
    "DiscoveredPort",
    "Discovery",
    "GuidPlan",
    "NodeIndex",
    "PlanKey",
    "ca_name",
    "ca_node_id",
    "compute_node_guids",
    "discovered_node",
    "guid_plan",
    "guids_from_ibnetdiscover",
    "node_index",
    "parse_ibnetdiscover",
    "render_topology",
    "root_guids",
    "switch_node_id",
]

# 0x0002c9 is the Mellanox/NVIDIA OUI that real HCAs and switches carry, so the GUIDs look
# familiar in OpenSM logs; switches and CAs get disjoint ranges so a GUID alone says which it is.
SWITCH_GUID_BASE = 0x0002_C901_0000_0000
CA_GUID_BASE = 0x0002_C902_0000_0000
# Spines and cores (numbered apart from the leaves) start this far above SWITCH_GUID_BASE;
# subnet-manager hosts' and storage targets' adapters after this many node adapters.
_UPPER_OFFSET = 0x0100_0000
_SPECIAL_ORDINAL = 0x0010_0000
# ibsim reserves nports + 1 GUIDs per CA (node GUID, then port N = node + N); a round stride
# keeps every CA's range disjoint and its GUIDs readable in hex.
_MIN_CA_STRIDE = 0x10

# ibsim reads lines into a 256-byte buffer; a longer line would be split and misparsed.
MAX_LINE = 254
# The largest ibnetdiscover output fabgen reads. One output describes one subnet, and a subnet
# has at most 49,151 unicast LIDs, one per CA port and one per switch (0x0001-0xBFFF:
# IB_LID_UCAST_END_HO in linux-rdma/opensm include/iba/ib_types.h). fabgen's own rendering of
# ib-ndr-1024 in this format is 345 KB for 1,068 nodes (323 bytes a node); a real output also
# prints lids, widths and vendid/devid/sysimgguid lines, so allow 4x that, 1,300 bytes a node:
# 49,151 x 1,300 = 64 MB. A larger file is no ibnetdiscover output and is not read.
MAX_BYTES = 64 * 1024 * 1024
# Measured: 254 ports per switch reach SUBNET UP, 255 never does (ibsim.md).
MAX_SWITCH_PORTS = 254

# Debian 12's ibsim 0.10 and OpenSM 3.3.23 have no NDR/XDR speed codes; HDR is the fastest rate
# both understand, and ftree only cares about the graph, not the rate.
_SIM_RATE = "4xHDR"
_GENERATION = {10: "SDR", 20: "DDR", 40: "QDR", 56: "FDR", 100: "EDR", 200: "HDR",
               400: "NDR", 800: "XDR", 1600: "GDR"}
_TOP_ROLE_ORDER: tuple[Role, ...] = ("core", "spine", "leaf")


@dataclass(frozen=True, slots=True)
class GuidPlan:
    """Node and port GUIDs of every simulated IB node, in fabric order."""

    switch_guids: dict[str, int]  # switch name -> node GUID (also its only port GUID)
    ca_guids: dict[tuple[str, int], int]  # (host, nic) -> CA node GUID
    ca_ports: dict[tuple[str, int], int]  # (host, nic) -> number of ports on that CA
    port_guids: dict[tuple[str, int], int]  # (host, dev) -> CA port GUID


def ca_name(host: Host, nic: int) -> str:
    """A host adapter's name, "<host> <RDMA device>" (dgx001 mlx5_3): what rdma-ndd writes into
    its node description on the host (rdma-ndd(8): "%h %d", host name and device) and what the
    node-name-map, verify-cabling and every host file call it. An adapter whose planned ports
    are several RDMA devices lists them, comma-separated."""
    devices = list(dict.fromkeys(hp.rdma_device for hp in host.ports if hp.nic == nic))
    if not devices:
        raise ValueError(f"{host.name} has no port on NIC {nic}")
    return f"{host.name} {','.join(devices)}"


def switch_node_id(guid: int) -> str:
    """The node id ibnetdiscover prints for a switch ("S-" + 16 hex digits)."""
    return f"S-{guid:016x}"


def ca_node_id(guid: int) -> str:
    """The node id ibnetdiscover prints for a channel adapter ("H-" + 16 hex digits)."""
    return f"H-{guid:016x}"


def _ca_stride(hosts: Iterable[Host]) -> int:
    widest = max((hp.port + 1 for h in hosts for hp in h.ports), default=1)
    stride = _MIN_CA_STRIDE
    while stride <= widest:
        stride *= 2
    return stride


def guid_plan(fabric: Fabric) -> GuidPlan:
    """Deterministic GUIDs that stay put when the fabric grows: a switch's from its stable
    number (topology.numbering; leaves and the spine layer in ranges of their own), a node's
    adapters from the node's index, the subnet-manager hosts' and storage targets' in a range
    of their own after them."""
    switch_guids = {sw.name: SWITCH_GUID_BASE + (0 if sw.role == "leaf" else _UPPER_OFFSET)
                    + sw.number + 1 for sw in fabric.switches}
    if len(set(switch_guids.values())) < len(switch_guids):
        raise ValueError("two switches share a number: a Fabric made by hand must number them "
                         "(Switch.number), as topology.build does")
    stride = _ca_stride((*fabric.hosts, *fabric.sm_hosts))
    ca_guids: dict[tuple[str, int], int] = {}
    ca_ports: dict[tuple[str, int], int] = {}
    port_guids: dict[tuple[str, int], int] = {}
    nodes = [h for h in fabric.hosts if not h.target]
    per_node = max((len({hp.nic for hp in h.ports}) for h in nodes), default=1)
    others = (*fabric.sm_hosts, *(h for h in fabric.hosts if h.target))
    special = _SPECIAL_ORDINAL
    for is_node, host in ((*((True, h) for h in nodes), *((False, h) for h in others))):
        for rank, nic in enumerate(sorted({hp.nic for hp in host.ports})):
            if is_node:
                ordinal = (host.index - 1) * per_node + rank + 1
            else:
                special += 1
                ordinal = special
            node = CA_GUID_BASE + ordinal * stride
            ca_guids[(host.name, nic)] = node
            nic_ports = [hp for hp in host.ports if hp.nic == nic]
            ca_ports[(host.name, nic)] = max(hp.port for hp in nic_ports) + 1
            for hp in nic_ports:
                port_guids[(host.name, hp.dev)] = node + hp.port + 1
    return GuidPlan(switch_guids, ca_guids, ca_ports, port_guids)


@dataclass(frozen=True, slots=True)
class _End:
    """One side of a cable as the peer's port line names it."""

    node_id: str
    port: int
    desc: str
    port_guid: int | None  # CA ends only: ibnetdiscover prints their port GUID


def _check_name(name: str) -> str:
    # A quote or '#' would end the description early, '=' would be read as a port option.
    if any(c in name for c in '"#=\n'):
        raise ValueError(f"device name {name!r} cannot be written to an ibnetdiscover file")
    return name


def _one_line(text: str) -> str:
    # Only a comment carries the fabric name; a newline is all that could break out of it.
    return " ".join(text.splitlines())


def _in_plane(plane: int | None, value: int) -> bool:
    return plane is None or plane == value


def _link_ends(
    link: Link,
    fabric: Fabric,
    guids: GuidPlan,
    hosts: dict[str, Host],
) -> tuple[tuple[str, int, _End], tuple[str, int, _End]]:
    """Both ends of a cable as (record key, local port, far end seen from that port)."""
    z_sw = fabric.by_name.get(link.z_device) or _find_switch(fabric, link.z_device)
    z_guid = guids.switch_guids[z_sw.name]
    z_end = _End(switch_node_id(z_guid), link.z_port, z_sw.name, None)
    if link.kind in ("node-leaf", "sm-leaf"):
        host = hosts.get(link.a_device)
        hp = next((p for p in host.ports if p.dev == link.a_port), None) if host else None
        if host is None or hp is None:
            raise ValueError(f"link {link.id}: no host port {link.a_device} dev {link.a_port}")
        ca_guid = guids.ca_guids[(host.name, hp.nic)]
        a_key = ca_node_id(ca_guid)
        a_end = _End(a_key, hp.port + 1, f"{host.name} HCA-{hp.nic}",
                     guids.port_guids[(host.name, hp.dev)])
    else:
        a_sw = fabric.by_name.get(link.a_device) or _find_switch(fabric, link.a_device)
        a_key = switch_node_id(guids.switch_guids[a_sw.name])
        a_end = _End(a_key, link.a_port, a_sw.name, None)
    return (a_key, a_end.port, z_end), (z_end.node_id, link.z_port, a_end)


def _find_switch(fabric: Fabric, name: str) -> Switch:
    # by_name is optional (hand-built fabrics leave it empty), so fall back to a scan.
    for sw in fabric.switches:
        if sw.name == name:
            return sw
    raise ValueError(f"link names unknown switch {name!r}")


def _port_line(local: int, far: _End, local_guid: int | None) -> str:
    local_part = f"[{local}]" if local_guid is None else f"[{local}]({local_guid:x})"
    far_guid = "" if far.port_guid is None else f"({far.port_guid:x})"
    # "lid 0 4xHDR" is how ibnetdiscover ends a port line; ibsim takes the port's enabled width
    # and speed from it (lid 0: OpenSM assigns the real LIDs).
    far_part = f'"{far.node_id}"[{far.port}]{far_guid}'
    return f'{local_part}\t{far_part}\t\t# "{far.desc}" lid 0 {_SIM_RATE}'


def _speed_words(gbps: int) -> str:
    gen = _GENERATION.get(gbps)
    return f"{gbps} Gb/s ({gen})" if gen else f"{gbps} Gb/s"


def render_topology(fabric: Fabric, guids: GuidPlan, *, plane: int | None = None,
                    real_guids: bool = False) -> str:
    """The fabric (or one plane of it: each IB plane is its own subnet) in ibnetdiscover format.

    Every cable is declared on both ends, as ibsim refuses one-sided cables. Switch records come
    first, then one CA record per NIC; a blank line ends every record because ibsim consumes the
    first non-port line after a record.
    """
    if fabric.transport != "infiniband":
        raise ValueError(f"fabric {fabric.name!r} is {fabric.transport}, not infiniband")
    switches = [sw for sw in fabric.switches if _in_plane(plane, sw.plane)]
    hosts = {h.name: h for h in (*fabric.hosts, *fabric.sm_hosts)}
    links = [link for link in (*fabric.links, *fabric.sm_links) if _in_plane(plane, link.plane)]

    ports: dict[str, dict[int, _End]] = {}
    for link in links:
        for key, local, far in _link_ends(link, fabric, guids, hosts):
            used = ports.setdefault(key, {})
            if local in used:
                raise ValueError(f"link {link.id}: port {local} of {key} is cabled twice")
            used[local] = far

    speeds = sorted({link.speed_gbps for link in links} or {fabric.speed_gbps})
    scope = "" if plane is None else f", plane {plane}"
    lines = [
        f'# fabgen: InfiniBand fabric "{_one_line(fabric.name)}"{scope}, ibnetdiscover format',
        "# Planned link speed: " + ", ".join(_speed_words(s) for s in speeds) + ".",
        "# Simulated at 4x HDR on every link: Debian's ibsim 0.10 and OpenSM 3.3.23 know no",
        "# NDR/XDR speed codes. This file proves the cabling and routing, not the link rate.",
        "# Node ids are node GUIDs; switchguid=/caguid= lines pin each GUID: "
        + ("the real fabric's (infiniband.guids_file)." if real_guids else
           "fabgen's plan for the simulator, not your hardware's."),
        "",
    ]
    emitted: set[str] = set()
    for sw in switches:
        if sw.radix > MAX_SWITCH_PORTS:
            raise ValueError(f"switch {sw.name}: {sw.radix} ports, ibsim models at most "
                             f"{MAX_SWITCH_PORTS}")
        guid = guids.switch_guids[sw.name]
        node_id = switch_node_id(guid)
        cabled = ports.get(node_id, {})
        emitted.add(node_id)
        if cabled and max(cabled) > sw.radix:
            raise ValueError(f"switch {sw.name}: port {max(cabled)} beyond radix {sw.radix}")
        lines.append(f"switchguid=0x{guid:016x}")
        lines.append(f'Switch\t{sw.radix} "{node_id}"\t\t# "{_check_name(sw.name)}" '
                     "enhanced port 0 lid 0 lmc 0")
        lines.extend(_port_line(p, cabled[p], None) for p in sorted(cabled))
        lines.append("")

    for host in (*fabric.hosts, *fabric.sm_hosts):
        for nic in sorted({hp.nic for hp in host.ports if _in_plane(plane, hp.plane)}):
            guid = guids.ca_guids[(host.name, nic)]
            node_id = ca_node_id(guid)
            cabled = ports.get(node_id, {})
            emitted.add(node_id)
            lines.append(f"caguid=0x{guid:016x}")
            lines.append(f'Ca\t{guids.ca_ports[(host.name, nic)]} "{node_id}"\t\t'
                         f'# "{_check_name(host.name)} HCA-{nic}"')
            lines.extend(_port_line(p, cabled[p], guid + p) for p in sorted(cabled))
            lines.append("")

    # A cable whose end has no record (e.g. it leaves the selected plane) would be one-sided.
    orphans = sorted(set(ports) - emitted)
    if orphans:
        raise ValueError(f"cables reach nodes outside the rendered fabric: {', '.join(orphans)}")
    too_long = next((line for line in lines if len(line) > MAX_LINE), None)
    if too_long is not None:
        raise ValueError(f"line longer than {MAX_LINE} characters: {too_long[:60]}...")
    return "\n".join(lines)


def root_guids(fabric: Fabric, guids: GuidPlan, *, plane: int | None = None) -> list[int]:
    """Node GUIDs of the top-tier switches, for OpenSM's root_guid_file (ftree roots)."""
    switches = [sw for sw in fabric.switches if _in_plane(plane, sw.plane)]
    present = {sw.role for sw in switches}
    top = next((role for role in _TOP_ROLE_ORDER if role in present), None)
    return [guids.switch_guids[sw.name] for sw in switches if sw.role == top]


def compute_node_guids(fabric: Fabric, guids: GuidPlan, *, plane: int | None = None) -> list[int]:
    """Port GUIDs of the host ports, for cn_guid_file (ftree wants ports, not nodes)."""
    return [
        guids.port_guids[(host.name, hp.dev)]
        for host in fabric.hosts
        for hp in host.ports
        if _in_plane(plane, hp.plane)
    ]


# --------------------------------------------------------------------------- parsing


@dataclass(frozen=True, slots=True)
class DiscoveredNode:
    """One node record of an ibnetdiscover output."""

    node_id: str  # the quoted id: "S-<guid>" / "H-<guid>" (or a name in hand-written files)
    kind: Literal["switch", "ca", "router"]
    nports: int
    desc: str  # node description ("" when the record has none)
    guid: int | None  # node GUID (from switchguid=/caguid= or the id), None if unknown
    port_guids: dict[int, int] = field(default_factory=dict)  # CA port -> port GUID


@dataclass(frozen=True, slots=True)
class DiscoveredPort:
    """One port line: a cable as seen from `node_id`'s side, with the rate it trained at."""

    node_id: str
    port: int
    far_id: str
    far_port: int
    width: int | None  # lanes (4 for "4xHDR"); None when the line gives no rate
    speed: str | None  # "HDR", "NDR", ...


@dataclass(frozen=True, slots=True)
class Discovery:
    nodes: dict[str, DiscoveredNode]
    ports: tuple[DiscoveredPort, ...]


_GUID_LINE = re.compile(r"^(switch|ca|router|rt)guid=0x([0-9a-fA-F]+)(?:\(([0-9a-fA-F]+)\))?",
                        re.IGNORECASE)
_HEADER = re.compile(r'^(Switch|Ca|Hca|Rt)\s+(\d+)\s+"([^"]+)"(?:\s*#\s*"(.*)")?')
_PORT = re.compile(r'^\[(\d+)\](?:\(([0-9a-fA-F]+)\))?\s+"([^"]+)"\[(\d+)\](?:\(([0-9a-fA-F]+)\))?'
                   r"(.*)$")
_RATE = re.compile(r"\b(\d+)x([A-Z]+[0-9]*)\s*$")
_ID_GUID = re.compile(r"^[SHR]-([0-9a-fA-F]{1,16})$")
_KINDS: dict[str, Literal["switch", "ca", "router"]] = {
    "Switch": "switch", "Ca": "ca", "Hca": "ca", "Rt": "router"}


def parse_ibnetdiscover(text: str) -> Discovery:
    """Node records and port lines of an ibnetdiscover output (or an ibsim topology file)."""
    nodes: dict[str, DiscoveredNode] = {}
    ports: list[DiscoveredPort] = []
    pending_guid: int | None = None
    current: DiscoveredNode | None = None
    for raw in text.splitlines():
        line = raw.strip()
        guid_line = _GUID_LINE.match(line)
        if guid_line:
            pending_guid = int(guid_line.group(2), 16)
            continue
        header = _HEADER.match(line)
        if header:
            node_id = header.group(3)
            guid = pending_guid
            if guid is None and (m := _ID_GUID.match(node_id)):
                guid = int(m.group(1), 16)
            current = DiscoveredNode(node_id, _KINDS[header.group(1)], int(header.group(2)),
                                     header.group(4) or "", guid)
            nodes[node_id] = current
            pending_guid = None
            continue
        port = _PORT.match(line)
        if port and current is not None:
            local = int(port.group(1))
            if port.group(2):
                current.port_guids[local] = int(port.group(2), 16)
            rate = _RATE.search(port.group(6))
            ports.append(DiscoveredPort(
                current.node_id, local, port.group(3), int(port.group(4)),
                int(rate.group(1)) if rate else None, rate.group(2) if rate else None))
            continue
        if line and not line.startswith("#") and "=" not in line:
            current = None  # anything else ends the record, as in ibsim's reader
    return Discovery(nodes, tuple(ports))


# --------------------------------------------------------------------------- matching

PlanKey = tuple[Literal["switch"], str] | tuple[Literal["ca"], tuple[str, int]]


@dataclass(frozen=True, slots=True)
class NodeIndex:
    """How discovered nodes are recognised: by node GUID first, then by description."""

    by_guid: dict[int, PlanKey]
    by_desc: dict[str, PlanKey]


# NVIDIA switches describe themselves as "MF0;<hostname>:<model>/U1" once a hostname is set.
_MLNX_DESC = re.compile(r"^[^;]*;([^:]+):")


def node_index(fabric: Fabric, guids: GuidPlan | None = None) -> NodeIndex:
    """Names under which each planned node may be discovered, and its planned node GUIDs."""
    by_desc: dict[str, PlanKey] = {}
    for sw in fabric.switches:
        by_desc[sw.name] = ("switch", sw.name)
    for host in (*fabric.hosts, *fabric.sm_hosts):
        for hp in host.ports:
            key: PlanKey = ("ca", (host.name, hp.nic))
            by_desc.setdefault(f"{host.name} HCA-{hp.nic}", key)
            # Linux names a ConnectX "<hostname> mlx5_<n>"; each port may be its own device.
            by_desc.setdefault(f"{host.name} {hp.rdma_device}", key)
    by_guid: dict[int, PlanKey] = {}
    if guids is not None:
        for name, guid in guids.switch_guids.items():
            by_guid[guid] = ("switch", name)
        for hn, guid in guids.ca_guids.items():
            by_guid[guid] = ("ca", hn)
    return NodeIndex(by_guid, by_desc)


def discovered_node(node: DiscoveredNode, index: NodeIndex) -> PlanKey | None:
    """The planned node a discovered one is, or None (by GUID, then by description)."""
    if node.guid is not None and node.guid in index.by_guid:
        key = index.by_guid[node.guid]
        if (key[0] == "switch") == (node.kind == "switch"):
            return key
    desc = node.desc.strip()
    key2 = index.by_desc.get(desc)
    if key2 is None and (m := _MLNX_DESC.match(desc)):
        key2 = index.by_desc.get(m.group(1))
    if key2 is not None and (key2[0] == "switch") == (node.kind == "switch"):
        return key2
    return None


# --------------------------------------------------------------------------- GUIDs of a discovery


def guids_from_ibnetdiscover(text: str, fabric: Fabric, *, strict: bool = True) -> GuidPlan:
    """The GUID plan of the real fabric, from an `ibnetdiscover` output (or several, joined).

    Nodes are matched by node description: a switch by its name (or "MF0;<name>:<model>"), a
    host adapter by "<host> HCA-<nic>" or "<host> <rdma device>". Port GUIDs are the ones
    ibnetdiscover prints for each cabled adapter port. strict: every planned switch, adapter and
    host port must be found (else ValueError naming them); otherwise the deterministic plan
    fills the gaps.
    """
    disc = parse_ibnetdiscover(text)
    index = node_index(fabric, None)
    hosts = {h.name: h for h in (*fabric.hosts, *fabric.sm_hosts)}
    found_sw: dict[str, int] = {}
    found_ca: dict[tuple[str, int], tuple[int, int, dict[int, int]]] = {}
    for node in disc.nodes.values():
        key = discovered_node(node, index)
        if key is None or node.guid is None:
            continue
        if key[0] == "switch":
            if key[1] in found_sw and found_sw[key[1]] != node.guid:
                raise ValueError(f"two switches describe themselves as {key[1]!r}: "
                                 f"{found_sw[key[1]]:#018x} and {node.guid:#018x}")
            found_sw[key[1]] = node.guid
        else:
            hn = key[1]
            if hn in found_ca and found_ca[hn][0] != node.guid:
                raise ValueError(f"two adapters describe themselves as "
                                 f"'{ca_name(hosts[hn[0]], hn[1])}': {found_ca[hn][0]:#018x} "
                                 f"and {node.guid:#018x}")
            ports = dict(found_ca.get(hn, (0, 0, {}))[2])
            ports.update(node.port_guids)
            found_ca[hn] = (node.guid, node.nports, ports)

    fallback = guid_plan(fabric)
    missing: list[str] = []
    switch_guids: dict[str, int] = {}
    for sw in fabric.switches:
        if sw.name in found_sw:
            switch_guids[sw.name] = found_sw[sw.name]
        else:
            missing.append(sw.name)
            switch_guids[sw.name] = fallback.switch_guids[sw.name]
    ca_guids: dict[tuple[str, int], int] = {}
    ca_ports: dict[tuple[str, int], int] = {}
    port_guids: dict[tuple[str, int], int] = {}
    for host in (*fabric.hosts, *fabric.sm_hosts):
        for hp in host.ports:
            hn = (host.name, hp.nic)
            got = found_ca.get(hn)
            if got is None:
                if hn not in ca_guids:
                    missing.append(ca_name(host, hp.nic))
                ca_guids[hn] = fallback.ca_guids[hn]
                ca_ports[hn] = fallback.ca_ports[hn]
                port_guids[(host.name, hp.dev)] = fallback.port_guids[(host.name, hp.dev)]
                continue
            ca_guids[hn] = got[0]
            ca_ports[hn] = max(got[1], fallback.ca_ports[hn])
            if hp.port + 1 in got[2]:
                port_guids[(host.name, hp.dev)] = got[2][hp.port + 1]
            else:
                missing.append(f"{ca_name(host, hp.nic)} port {hp.port + 1}")
                port_guids[(host.name, hp.dev)] = fallback.port_guids[(host.name, hp.dev)]
    if strict and missing:
        shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8
                                          else "")
        raise ValueError(f"the ibnetdiscover output lacks {len(missing)} planned node(s) or "
                         f"port(s): {shown} (matched by node description)")
    return GuidPlan(switch_guids, ca_guids, ca_ports, port_guids)
