"""InfiniBand bring-up: the ibdm topology file, the IBNL systems it names, a node-name map.

The topology file (ibdm-topo-file(1); what `ibdiagnet -t` and ibtopodiff compare a discovered
fabric against) has one section per system: `TYPE NAME`, then one line per cabled port,
`  PORT -> REMOTE-TYPE REMOTE-NAME REMOTE-PORT`. Every type needs an IBNL definition
(ibdm-ibnl-file(1)) mapping its panel port names to device ports; they are rendered beside the
file (ibnl/). ibdiagnet (IBUtils2) reads a custom IBNL directory, `--out_ibnl_dir`, only "for any
node in the given topology file that does not have a file in ibdm/ibnl" (IBUtils2 Utility
Documentation, "Topology Comparison"): a type named like one of its built-in systems gets the
built-in definition, whose 1U switches name ports P<n>, and no `IB1/x/y` name would resolve.
ibutils' ibdm reads its own directory first and IBDM_IBNL_PATH after it, a later file of the same
type replacing the earlier (SysDef.cpp parseSysDefsFromDirs, addSysDef). So every type fabgen
defines is its own: `FABGEN_<model>`, which no vendor ships.

Each compute plane is its own subnet and gets its own file; an InfiniBand storage network is a
subnet of its own and gets its own directory (bringup/infiniband/storage/: its switches, each
node's storage ports as a system FABGEN_<node model>_STORAGE, the storage targets as
FABGEN_STORAGE_TARGET, its subnet manager's hosts); the management network is Ethernet.
Sections are the switches of the plane, each listing every cabled port (so a cabling crew can
work switch by switch); host adapters appear as remote ends.

Names:
- Switch ports by the name the switch shows for the interface (NVIDIA MLNX-OS User Manual,
  "InfiniBand Interface": `interface ib 1/<port>` on Quantum, split `1/<port>/<1|2>`; Quantum-2
  cages hold two ports, `1/<cage>/<port>`, split with `/<1|2>` appended as the manual's split rule
  adds a level; `show interfaces ib` prints them as IB1/3/1). IBNL names start with a letter, so
  the `IB` stays. Quantum-X800 (Q3400) has no public interface map: its names follow the
  Quantum-2 cage rule and say so. Custom switches: `P<port>`.
- Switch types are FABGEN_ and the model a real switch reports in its node description
  (`MF0;name:MQM9700/U1`): FABGEN_MQM8700, FABGEN_MQM9700, FABGEN_Q3400_RA; a split switch is a
  type of its own (more ports, `_X2`); hosts FABGEN_<node model>, the subnet-manager hosts
  FABGEN_<kind>_HOST. ibdm's topology matching pairs nodes by cabling, not by type
  (TopoMatch.cpp), so a discovered MQM9700 matches a planned FABGEN_MQM9700.
- A host is one system with a CA node per NIC named U<nic>: ibdm names a discovered adapter
  described "<host> HCA-<n>" (the simulated fabric's node descriptions) `<host>/U<n>`. Host
  ports are named by RDMA device (mlx5_0), or P<n> where a device name is not an IBNL name.
- The node-name-map names a switch by its name and a host adapter "<host> <RDMA device>"
  (dgx001 mlx5_3), as rdma-ndd describes it on the host (rdma-core rdma-ndd(8), default "%h %d")
  and as every other fabgen file names the port.
- Device names in NODE lines carry the PCI device id in decimal, as ibdm reads it ("MT" + id):
  pci.ids (2023.04.11) vendor 15b3: d2f0 Quantum, d2f2 Quantum-2, d2f4 Quantum-3, 101b
  ConnectX-6, 1021 ConnectX-7, 1023 ConnectX-8, a2dc BlueField-3.

Port counts are the planned logical ports (the switch radix after breakout, each adapter's used
ports), which is what the simulated fabric reports; ibdm refuses to match nodes whose counts
differ, so an IBNL whose switch firmware reports another count needs that number changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from fabgen import catalog, templating
from fabgen.targets.base import Artifacts, RenderContext
from fabgen.targets.ibnetdiscover import GuidPlan, ca_name
from fabgen.targets.opensm import real_guids
from fabgen.topology.groups import compute_hosts
from fabgen.topology.index import FabricIndex, FabricPort
from fabgen.topology.model import Fabric, Host, Switch

__all__ = ["OUT_DIR", "STORAGE_DIR", "TARGET", "TARGET_TYPE", "TYPE_PREFIX", "IbdmTarget",
           "Ibnl", "host_port_names", "host_type", "panel_name", "panel_names", "render_ibdm",
           "sm_host_type", "switch_type"]

OUT_DIR = "bringup/infiniband"
# ibnl_scanner.ll: NAME = [A-Za-z][-\[\]\\\*/A-Za-z0-9_.:%@~]+ (a letter first, two at least).
_IBNL_NAME = re.compile(r"^[A-Za-z][-\[\]\\*/A-Za-z0-9_.:%@~]+$")
# Fabric.cpp parseTopology: a system name is any run of characters but '/' and blanks.
_SYSTEM_NAME = re.compile(r"^[^/\s]+$")

# (IBNL type, device, ports per cage, interface rule) per catalog switch.
# Every type fabgen writes starts with it: no vendor's built-in IBNL does (see the docstring).
TYPE_PREFIX = "FABGEN_"
# The storage system's ports on an InfiniBand storage network (topology.storage.targets).
TARGET_TYPE = TYPE_PREFIX + "STORAGE_TARGET"
STORAGE_DIR = f"{OUT_DIR}/storage"
_SWITCHES: dict[str, tuple[str, str, str]] = {
    "qm8700": ("MQM8700", "MT54000", "port"),  # Quantum, QSFP56: 1/<port>
    "qm9700": ("MQM9700", "MT54002", "cage"),  # Quantum-2, twin-port OSFP: 1/<cage>/<port>
    "q3400": ("Q3400_RA", "MT54004", "cage"),  # Quantum-3: unverified, Quantum-2's rule
}
_UNVERIFIED = {"q3400"}
_HCAS = {"connectx-6": "MT4123", "connectx-7": "MT4129", "connectx-8": "MT4131",
         "bluefield-3": "MT41692"}


@dataclass(frozen=True, slots=True)
class Ibnl:
    """One IBNL system: its type, and per node (name, kind, ports, device) its port lines."""

    type: str
    source: str  # where its names come from, for the file's header
    nodes: tuple[tuple[str, str, int, str, tuple[str, ...]], ...]


def switch_type(sw: Switch) -> str:
    known = _SWITCHES.get(sw.model)
    base = f"{TYPE_PREFIX}{known[0]}" if known else f"{TYPE_PREFIX}SW{sw.radix}"
    return base if sw.breakout == 1 or not known else f"{base}_X{sw.breakout}"


def panel_name(sw: Switch, port: int) -> str:
    """The switch's own name for a logical port (see the module docstring)."""
    return panel_names(sw.model, sw.breakout, sw.radix)[port - 1]


@cache
def panel_names(model: str, breakout: int, radix: int) -> tuple[str, ...]:
    """Every logical port's panel name, computed once per switch kind (a 131k-GPU fabric has
    two million port ends)."""
    known = _SWITCHES.get(model)
    if known is None:
        return tuple(f"P{port}" for port in range(1, radix + 1))
    per_cage = catalog.switches()[model].ports_per_cage
    out = []
    for port in range(1, radix + 1):
        native, sub = divmod(port - 1, breakout)
        if known[2] == "port":
            name = f"IB1/{native + 1}"
        else:
            cage, slot = divmod(native, per_cage)
            name = f"IB1/{cage + 1}/{slot + 1}"
        out.append(name if breakout == 1 else f"{name}/{sub + 1}")
    return tuple(out)


def host_type(model: str) -> str:
    return TYPE_PREFIX + re.sub(r"[^A-Za-z0-9_]", "_", model).upper()


def sm_host_type(kind: str) -> str:
    return f"{TYPE_PREFIX}{kind.upper()}_HOST"


def host_port_names(host: Host) -> dict[int, str]:
    """dev -> port name: the RDMA device, or P<dev+1> where it is no IBNL name."""
    return {hp.dev: hp.rdma_device if _IBNL_NAME.match(hp.rdma_device) else f"P{hp.dev + 1}"
            for hp in host.ports}


def _switch_ibnl(sw: Switch) -> Ibnl:
    known = _SWITCHES.get(sw.model)
    device = known[1] if known else "MT0"
    if known is None:
        source = "custom switch: ports named P<n>"
    elif sw.model in _UNVERIFIED:
        source = (f"{catalog.switches()[sw.model].name}: NOT VERIFIED, no public port map: "
                  "names follow the Quantum-2 cage rule, and fabgen plans one "
                  f"{sw.radix}-port node where a real Q3400-RA may show the subnet several ASIC "
                  "nodes (descriptions ending /U2 are reported)")
    else:
        source = (f"{catalog.switches()[sw.model].name}: MLNX-OS interface names "
                  "(NVIDIA MLNX-OS User Manual, InfiniBand Interface)")
    ports = _numbered(panel_names(sw.model, sw.breakout, sw.radix))
    return Ibnl(switch_type(sw), source, (("U1", "SW", sw.radix, device, ports),))


def _numbered(names: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """IBNL connection lines, device port n to its name: `   n -> NAME`."""
    return tuple(f"   {n} -> {name}" for n, name in enumerate(names, start=1))


def render_ibdm(index: FabricIndex, guids: GuidPlan | None, node_model: str, nic_model: str,
                sm_kind: str = "opensm", out_dir: str = OUT_DIR,
                nodes: int | None = None) -> Artifacts:
    """bringup/infiniband[/plane<N>]/ibdm.topo, ibnl/<TYPE>.ibnl and, with the fabric's real
    GUIDs (infiniband.guids_file), its node-name-map: fabgen's own GUID plan numbers only the
    simulated fabric, never a file meant for the real one (as the OpenSM target does).
    `index`: the render's index of the compute fabric, whose ports each switch lists; or, with
    `out_dir` and `nodes` (how many of its hosts are the cluster's nodes, the rest being the
    storage system's targets), of an InfiniBand storage network."""
    fabric = index.fabric
    if fabric.transport != "infiniband":
        raise ValueError(f"fabric {fabric.name!r} is {fabric.transport}, not infiniband")
    storage = nodes is not None
    every = compute_hosts(fabric)
    hosts = every[:nodes] if storage else every
    targets = every[nodes:] if storage else ()
    # On the storage network a node is its storage ports only, a system of its own type.
    node_type = host_type(node_model) + ("_STORAGE" if storage else "")
    # The subnet-manager hosts on reserved leaf ports are cabled into the subnet too
    # (Fabric.sm_links): their cables are listed, or ibdiagnet would report them as extra.
    typed = {h.name: (node_type, h) for h in hosts}
    typed.update((h.name, (TARGET_TYPE, h)) for h in targets)
    sm_type = sm_host_type(sm_kind)
    typed.update((h.name, (sm_type, h)) for h in fabric.sm_hosts)
    ibnls: dict[str, Ibnl] = {}
    for sw in fabric.switches:
        kind = switch_type(sw)
        if kind not in ibnls:
            ibnls[kind] = _switch_ibnl(sw)
    if hosts:
        ibnls[node_type] = _host_ibnl(
            hosts[0], node_type, _HCAS.get(nic_model, "MT0"),
            f"a host with {len({hp.nic for hp in hosts[0].ports})} {nic_model} adapter(s), "
            "ports named by RDMA device; its adapters are U<nic>, as ibdm names "
            "'<host> HCA-<nic>'" if not storage else
            f"a {node_model}'s storage ports, one adapter U<n> each, named by RDMA device; the "
            "adapter model is the node catalog's (device MT0 where it names none)")
    if targets:
        ibnls[TARGET_TYPE] = _host_ibnl(
            targets[0], TARGET_TYPE, "MT0",
            "a storage target (topology.storage.targets): one adapter per port, its model and "
            "port layout the storage vendor's, not fabgen's (device MT0)")
    if fabric.sm_hosts:
        ibnls[sm_type] = _host_ibnl(
            fabric.sm_hosts[0], sm_type, "MT0",
            f"a {sm_kind} host (infiniband.management), one adapter U<n> per fabric port; its "
            "adapter model is not planned (device MT0)")
    for name in [sw.name for sw in fabric.switches] + list(typed):
        if not _SYSTEM_NAME.match(name):
            raise ValueError(f"{name!r} cannot be a system name of an ibdm topology file")

    host_names = {name: (kind, host_port_names(h)) for name, (kind, h) in typed.items()}

    def remote(sw: Switch, port: FabricPort) -> str:
        """What a switch port is cabled to: "REMOTE-TYPE REMOTE-NAME REMOTE-PORT"."""
        if port.peer_host_port is not None:
            h_type, h_names = host_names[port.peer]
            return f"{h_type} {port.peer} {h_names[port.peer_host_port.dev]}"
        peer = port.peer_switch
        assert peer is not None
        link = port.link
        far = link.z_port if link.a_device == sw.name else link.a_port
        return f"{switch_type(peer)} {peer.name} {panel_name(peer, far)}"

    files: Artifacts = {}
    types = [{"type": i.type, "source": i.source}
             for i in sorted(ibnls.values(), key=lambda i: i.type)]
    for plane in range(fabric.planes):
        sections = []
        for sw in fabric.switches:
            if sw.plane != plane:
                continue
            names = panel_names(sw.model, sw.breakout, sw.radix)
            cabled = sorted(index.ports(sw), key=lambda p: p.port)
            # one line per port, formatted here: a 131k-GPU plane has 300k of them
            sections.append({"type": switch_type(sw), "name": sw.name,
                             "ports": [f"   {names[p.port - 1]} -> {remote(sw, p)}"
                                       for p in cabled]})
        where = out_dir if fabric.planes == 1 else f"{out_dir}/plane{plane + 1}"
        scope = f", plane {plane + 1} of {fabric.planes}" if fabric.planes > 1 else ""
        files[f"{where}/ibdm.topo"] = templating.render(
            "ibdm/ibdm.topo.j2", fabric=fabric.name, scope=scope, sections=sections,
            network="storage network" if storage else "compute fabric",
            cables=sum(len(s["ports"]) for s in sections),
            ibnl_dir="ibnl" if fabric.planes == 1 else "../ibnl", types=types)
    for ibnl in sorted(ibnls.values(), key=lambda i: i.type):
        files[f"{out_dir}/ibnl/{ibnl.type}.ibnl"] = templating.render(
            "ibdm/system.ibnl.j2", system=ibnl)
    if guids is not None:
        node_names = [(guids.switch_guids[sw.name], sw.name) for sw in fabric.switches]
        node_names += [(guids.ca_guids[(h.name, nic)], ca_name(h, nic))
                       for _kind, h in typed.values()
                       for nic in sorted({hp.nic for hp in h.ports})]
        files[f"{out_dir}/node-name-map"] = templating.render(
            "ibdm/node-name-map.j2", fabric=fabric.name,
            lines=[f'0x{g:016x} "{n}"' for g, n in node_names])
    return files


def _host_ibnl(host: Host, kind: str, device: str, source: str) -> Ibnl:
    """A host system: one CA node per NIC, U<nic>, with as many ports as the plan uses of it."""
    names = host_port_names(host)
    nodes = []
    for nic in sorted({hp.nic for hp in host.ports}):
        used = [hp for hp in host.ports if hp.nic == nic]
        ports = [f"U{nic}_P{p + 1}" for p in range(max(hp.port for hp in used) + 1)]
        for hp in used:
            ports[hp.port] = names[hp.dev]
        nodes.append((f"U{nic}", "CA", len(ports), device, _numbered(ports)))
    return Ibnl(kind, source, tuple(nodes))


class IbdmTarget:
    name = "ibdm"
    description = ("bringup/infiniband/: the compute fabric as an ibdm topology file (ibdiagnet "
                   "-t, ibtopodiff) per plane, its IBNL systems, a node-name-map (real GUIDs); "
                   "bringup/infiniband/storage/ for an InfiniBand storage network")

    def applies(self, ctx: RenderContext) -> bool:
        return ctx.fabric.transport == "infiniband" or _ib_storage(ctx) is not None

    def render(self, ctx: RenderContext) -> Artifacts:
        node = ctx.intent.cluster.node
        files: Artifacts = {}
        if ctx.fabric.transport == "infiniband":
            files.update(render_ibdm(ctx.index, real_guids(ctx), node.model, node.nic,
                                     ctx.intent.infiniband.management.kind))
        storage = _ib_storage(ctx)
        spec = ctx.intent.topology.storage
        if storage is not None and spec is not None:
            # Its own subnet, its own file; no node-name map: fabgen reads real GUIDs for the
            # compute fabric only (infiniband.guids_file).
            sm = spec.subnet_manager
            # the storage ports' adapter model is not in the node catalog: device MT0
            files.update(render_ibdm(ctx.index.extras["storage"], None, node.model, "",
                                     sm.kind if sm else "opensm", out_dir=STORAGE_DIR,
                                     nodes=len(ctx.fabric.hosts)))
        return files


def _ib_storage(ctx: RenderContext) -> Fabric | None:
    return next((x for x in ctx.fabric.extras
                 if x.role == "storage" and x.transport == "infiniband"), None)



TARGET = IbdmTarget()
