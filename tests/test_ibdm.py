"""InfiniBand bring-up files: panel names, and the ibdm topology file against a simulated fabric.

ibdm's own parsers (through ibdmsh, Debian's ibutils) read the rendered topology file with its
IBNL systems, and the subnet.lst OpenSM dumps for the same fabric in ibsim; the two link sets
must be equal, and a cable swapped in the simulated fabric must show up as exactly that
difference. ibtopodiff is run too, but Debian 12's build crashes before it reports anything (on
its own shipped example as well: TopoMatchSpecNodesByAdjacentNode falls off its end without a
return, fixed upstream in ibutils 4a41ef9 after Debian's snapshot bd7e502, and guid2str writes 19
bytes into an 18-byte buffer, which _FORTIFY_SOURCE aborts). When it does not crash, its verdict
must be the same.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from fabgen.intent import load
from fabgen.intent.models import Intent
from fabgen.render import render
from fabgen.targets.base import RenderContext
from fabgen.targets.ibdm import TARGET, panel_name, render_ibdm
from fabgen.targets.ibnetdiscover import guid_plan, render_topology, switch_node_id
from fabgen.topology.build import build
from fabgen.topology.index import FabricIndex
from fabgen.topology.model import Fabric, Switch
from tests.conftest import INVENTORIES, require_tool

try:  # pytest puts tests/ on sys.path while it has no __init__.py, the repo root once it has
    import ibsim_harness as h
except ImportError:
    from tests import ibsim_harness as h  # type: ignore[no-redef]

IB_INVENTORIES = [p for p in INVENTORIES if load(p).intent.fabric.transport == "infiniband"]
OUT = "bringup/infiniband"


def _switch(model: str, breakout: int = 1, radix: int = 64) -> Switch:
    return Switch(name="s", role="leaf", plane=0, group=0, index=0, rail=None, model=model,
                  radix=radix, speed_gbps=400, breakout=breakout, platform="infiniband")


def test_panel_names_follow_the_switch_interface_names() -> None:
    # MLNX-OS "InfiniBand Interface": Quantum 1/<port> (split 1/<port>/<1|2>); Quantum-2 cages
    # hold two ports, 1/<cage>/<port>. fabgen numbers a cage's ports consecutively.
    qm9700 = _switch("qm9700")
    assert [panel_name(qm9700, p) for p in (1, 2, 5, 6, 64)] == [
        "IB1/1/1", "IB1/1/2", "IB1/3/1", "IB1/3/2", "IB1/32/2"]
    split = _switch("qm9700", breakout=2, radix=128)
    assert [panel_name(split, p) for p in (1, 2, 3, 128)] == [
        "IB1/1/1/1", "IB1/1/1/2", "IB1/1/2/1", "IB1/32/2/2"]
    qm8700 = _switch("qm8700", radix=40)
    assert [panel_name(qm8700, p) for p in (1, 40)] == ["IB1/1", "IB1/40"]
    assert panel_name(_switch("qm8700", 2, 80), 80) == "IB1/40/2"
    assert panel_name(_switch("custom", radix=8), 7) == "P7"


def small_planes_intent(planes: int = 2, breakout: bool = False) -> Intent:
    leaf: dict[str, str] = {"model": "qm9700"}
    fabric = {"transport": "infiniband", "generation": "ndr"}
    if breakout:
        leaf["breakout"] = "2x200G"
        fabric["speed"] = "200G"
    return Intent.model_validate({
        "name": f"ib-p{planes}{'-split' if breakout else ''}", "fabric": fabric,
        "cluster": {"nodes": 6, "node": {"model": "hgx-h100", "gpus": 8, "nics": 2,
                                         "nic": "connectx-7", "nic_ports": planes}},
        "topology": {"style": "rail-optimized", "planes": planes, "scalable_unit": 3,
                     "leaf": leaf},
    })


def bringup_cases() -> list[tuple[str, Intent]]:
    out = [(p.stem, load(p).intent) for p in IB_INVENTORIES]
    return [*out, ("two-planes", small_planes_intent()),
            ("split-ports", small_planes_intent(1, breakout=True))]


def bringup_files(intent: Intent) -> dict[str, str]:
    return TARGET.render(RenderContext(intent=intent, fabric=build(intent)))


# --- ibdm reads the files -------------------------------------------------------------------

_DUMP_TCL = r"""
set f [new_IBFabric]
if {[lindex $argv 0] == "topo"} {
  set rc [IBFabric_parseTopology $f [lindex $argv 1]]
} else {
  set rc [IBFabric_parseSubnetLinks $f [lindex $argv 1]]
}
puts "RC $rc"
foreach nameNode [IBFabric_NodeByName_get $f] {
  set node [lindex $nameNode 1]
  set name [lindex $nameNode 0]
  set np [IBNode_numPorts_get $node]
  puts "NODE $name [IBNode_guid_get $node] $np"
  for {set pn 1} {$pn <= $np} {incr pn} {
    set port [IBNode_getPort $node $pn]
    if {$port == ""} continue
    set rem [IBPort_p_remotePort_get $port]
    if {$rem == ""} continue
    puts "LINK $name $pn [IBNode_name_get [IBPort_p_node_get $rem]] [IBPort_num_get $rem]"
  }
}
exit
"""

Port = tuple[str, int]
Cable = frozenset[Port]


@dataclasses.dataclass
class IbdmFabric:
    nodes: dict[str, tuple[int, int]]  # name -> (node GUID, ports)
    cables: set[Cable]
    log: str


def ibdm_run(kind: str, path: Path, ibnl: Path | str | None = None) -> str:
    """ibdmsh's output for a topology file ("topo") or subnet.lst ("lst"); `ibnl`: the
    IBDM_IBNL_PATH, directories separated by ':' (read after ibdm's own, the later winning)."""
    env = dict(os.environ)
    if ibnl is not None:
        env["IBDM_IBNL_PATH"] = str(ibnl)
    script = f"set argv {{{kind} {path}}}\n{_DUMP_TCL}"
    out = subprocess.run(["ibdmsh"], input=script, capture_output=True, text=True, env=env,
                         timeout=300, cwd=path.parent)
    return out.stdout + out.stderr


def ibdm_read(kind: str, path: Path, ibnl: Path | str | None = None) -> IbdmFabric:
    """A topology file ("topo") or subnet.lst ("lst") as ibdm's own parser reads it."""
    text = ibdm_run(kind, path, ibnl)
    assert "RC 0" in text, text[-3000:]
    assert not re.search(r"^-E-", text, re.MULTILINE), text[-3000:]
    nodes: dict[str, tuple[int, int]] = {}
    cables: set[Cable] = set()
    for line in text.splitlines():
        parts = line.split()
        if parts[:1] == ["NODE"]:
            nodes[parts[1]] = (int(parts[2], 16), int(parts[3]))
        elif parts[:1] == ["LINK"]:
            cables.add(frozenset({(parts[1], int(parts[2])), (parts[3], int(parts[4]))}))
    return IbdmFabric(nodes, cables, text)


def plan_cables(fabric: Fabric, plane: int) -> set[Cable]:
    """The plan's cables of a plane, named as ibdm names nodes (<system>/<node>)."""
    hosts = {h.name: h for h in (*fabric.hosts, *fabric.sm_hosts)}
    out: set[Cable] = set()
    for link in (*fabric.links, *fabric.sm_links):
        if link.plane != plane:
            continue
        if link.kind in ("node-leaf", "sm-leaf"):
            hp = next(p for p in hosts[link.a_device].ports if p.dev == link.a_port)
            a = (f"{link.a_device}/U{hp.nic}", hp.port + 1)
        else:
            a = (f"{link.a_device}/U1", link.a_port)
        out.add(frozenset({a, (f"{link.z_device}/U1", link.z_port)}))
    return out


def _plane_dir(fabric: Fabric, plane: int) -> str:
    return OUT if fabric.planes == 1 else f"{OUT}/plane{plane + 1}"


def write(files: dict[str, str], root: Path) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.mark.realtool
@pytest.mark.parametrize(("name", "intent"), bringup_cases(), ids=[c[0] for c in bringup_cases()])
def test_ibdm_reads_every_planned_cable(name: str, intent: Intent, tmp_path: Path) -> None:
    require_tool("ibdmsh")
    fabric = build(intent)
    root = write(bringup_files(intent), tmp_path)
    for plane in range(fabric.planes):
        topo = root / _plane_dir(fabric, plane) / "ibdm.topo"
        spec = ibdm_read("topo", topo, root / OUT / "ibnl")
        assert spec.cables == plan_cables(fabric, plane)


def test_every_type_is_fabgens_own() -> None:
    """IBNL types no vendor ships: ibdiagnet reads a custom IBNL only for a type without a
    built-in one (IBUtils2 "Topology Comparison", --out_ibnl_dir), and its built-in MQM9700
    names ports P<n>, so a topology typed MQM9700 with IB1/x/y names would not resolve."""
    types: set[str] = set()
    for _name, intent in bringup_cases():
        files = bringup_files(intent)
        for path, text in files.items():
            if path.endswith(".ibnl"):
                kind = text.splitlines()[0].split()[1]
                assert path.endswith(f"/ibnl/{kind}.ibnl")
                types.add(kind)
            elif path.endswith("ibdm.topo"):
                sections = [line.split()[0] for line in text.splitlines()
                            if line and not line.startswith((" ", "#"))]
                remotes = [line.split()[2] for line in text.splitlines()
                           if line.startswith("   ")]
                assert set(sections) | set(remotes) <= types | {
                    p.rsplit("/", 1)[1][:-5] for p in files if p.endswith(".ibnl")}
    assert types >= {"FABGEN_MQM9700", "FABGEN_MQM9700_X2", "FABGEN_DGX_H100",
                     "FABGEN_UFM_HOST", "FABGEN_HGX_H100"}, types
    assert all(t.startswith("FABGEN_") for t in types), types
    # none is a system ibdm ships either (Debian's ibutils: its ibnl/ directory)
    shipped = Path("/usr/lib/x86_64-linux-gnu/ibdm1.5.7/ibnl")
    if shipped.is_dir():
        names = {f.read_text(errors="replace").split("TOPSYSTEM", 1)[1].split()[0].rstrip(",")
                 for f in shipped.glob("*.ibnl") if "TOPSYSTEM" in f.read_text(errors="replace")}
        assert names and not names & types


def _vendor_ibnl(kind: str, ports: int, device: str) -> str:
    """A built-in 1U switch as ibdiagnet defines one: front-panel ports P1..Pn (the IBUtils2
    "Topology Comparison" example cables "MSB7700 dingo-200 P1")."""
    lines = [f"TOPSYSTEM {kind}", "", f"NODE SW {ports} {device} U1"]
    lines += [f"   {n} -> P{n}" for n in range(1, ports + 1)]
    return "\n".join(lines) + "\n"


@pytest.mark.realtool
def test_a_built_in_ibnl_of_the_same_model_cannot_take_the_types_over(tmp_path: Path) -> None:
    """ibdm reads IBDM_IBNL_PATH in order, a later definition of a type replacing an earlier one
    (SysDef.cpp), as ibdiagnet prefers its built-in one: with a vendor MQM9700 (ports P<n>) read
    after fabgen's files, the topology still resolves every cable, and the same file typed
    MQM9700, as fabgen once wrote it, does not."""
    require_tool("ibdmsh")
    intent = small_planes_intent(1)
    fabric = build(intent)
    files = bringup_files(intent)
    root = write(files, tmp_path / "files")
    vendor = tmp_path / "vendor"
    vendor.mkdir()
    (vendor / "MQM9700.ibnl").write_text(_vendor_ibnl("MQM9700", 64, "MT54002"))
    ibnl = f"{root / OUT / 'ibnl'}:{vendor}"
    spec = ibdm_read("topo", root / OUT / "ibdm.topo", ibnl)
    assert spec.cables == plan_cables(fabric, 0)
    old = {path.replace("FABGEN_MQM9700", "MQM9700"): text.replace("FABGEN_MQM9700 ", "MQM9700 ")
           .replace("TOPSYSTEM FABGEN_MQM9700", "TOPSYSTEM MQM9700")
           for path, text in files.items()}
    clash = write(old, tmp_path / "clash")
    alone = ibdm_read("topo", clash / OUT / "ibdm.topo", clash / OUT / "ibnl")
    assert alone.cables == spec.cables  # the old names were fine without a built-in
    text = ibdm_run("topo", clash / OUT / "ibdm.topo", f"{clash / OUT / 'ibnl'}:{vendor}")
    assert "RC 0" not in text and "-E- Fail to make cable" in text, text[-2000:]


# --- against the simulated fabric -----------------------------------------------------------


def swap_host_ports(fabric: Fabric) -> tuple[Fabric, tuple[str, str, str]]:
    """The fabric with the leaf ends of the first two host cables on one leaf exchanged (two
    hosts plugged into each other's leaf ports), and those two hosts and the leaf."""
    host_links = [link for link in fabric.links if link.kind == "node-leaf"]
    # The first leaf with two hosts (unit 1 may hold one beside the subnet-manager slots).
    first, second = next((a, b) for a in host_links for b in host_links
                         if a.z_device == b.z_device and a.a_device != b.a_device)
    links = tuple(dataclasses.replace(link, z_port=second.z_port) if link.id == first.id else
                  dataclasses.replace(link, z_port=first.z_port) if link.id == second.id else
                  link for link in fabric.links)
    return dataclasses.replace(fabric, links=links), (first.a_device, second.a_device,
                                                       first.z_device)


def discovered(fabric: Fabric, plane: int, tmp: Path) -> Path:
    """OpenSM's subnet.lst of the plane, simulated in ibsim (the harness runs both)."""
    guids = guid_plan(fabric)
    text = render_topology(fabric, guids, plane=plane if fabric.planes > 1 else None)
    # OpenSM on the plane's first switch (port 0, as on a managed switch): ibsim attaches a
    # client to a CA's first port only, and a second plane is cabled to the second ports.
    first = next(sw for sw in fabric.switches if sw.plane == plane)
    result = h.run_opensm(text, tmp, routing_engine="updn", timeout=240,
                          sm_node=switch_node_id(guids.switch_guids[first.name]))
    assert result.subnet_up, result.log[-2000:]
    lst = tmp / "dump" / "opensm-subnet.lst"
    assert lst.is_file()
    return lst


def named(found: IbdmFabric, names: dict[int, str]) -> set[Cable]:
    """Discovered cables with switches named through their GUIDs (ibdm names a switch after its
    system GUID); adapters are already <host>/U<nic> from their "HCA-<nic>" names."""
    rename = {node: f"{names[guid]}/U1" for node, (guid, _ports) in found.nodes.items()
              if node.startswith("S") and guid in names}
    return {frozenset((rename.get(n, n), p) for n, p in cable) for cable in found.cables}


def found_guid(node: str) -> int | None:
    """ibdm names a discovered switch S<system GUID>/U1 (fabgen switches: system = node GUID)."""
    m = re.match(r"^S([0-9a-f]{16})/U1$", node)
    return int(m.group(1), 16) if m else None


FIRST_PHASE = "Topology Matching First Phase Found Mismatches"
_MATCHED = re.compile(r"^-V- Matched Node:(\S+) and:(\S+)$", re.MULTILINE)


@dataclasses.dataclass
class Verdict:
    differ: bool  # the first phase reported mismatches
    matched: dict[str, str]  # discovered node -> the planned node ibtopodiff paired it with
    nodes: int  # nodes of the discovered fabric, as ibtopodiff counted them
    text: str


def ibtopodiff(topo: Path, lst: Path, ibnl: Path, anchor: tuple[str, int, int],
               tmp: Path) -> Verdict:
    """ibtopodiff -v anchored at a host port (node, port, port GUID), read from its first phase.

    The first phase walks the fabric breadth-first from the anchor, pairing each discovered node
    with a planned one (-v prints "Matched Node:<discovered> and:<planned>") and printing
    "-W- Topology Matching First Phase Found Mismatches" with each mismatch. Debian 12's build
    then crashes (nothing found) or loops (something found) in its second phase (see the module
    docstring), so that is all it can tell; a run still going once its output has settled is
    stopped by PID.
    """
    env = dict(os.environ, IBDM_IBNL_PATH=str(ibnl))
    log = tmp / "ibtopodiff.out"
    with log.open("wb") as out:
        # stdbuf: stdout unbuffered, or the crash would take what was printed before it along
        proc = subprocess.Popen(["stdbuf", "-o0", "-e0", "ibtopodiff", "-v", "-t", str(topo),
                                 "-d", str(lst), "-s", anchor[0], "-p", str(anchor[1]),
                                 "-g", f"0x{anchor[2]:016x}"],
                                stdout=out, stderr=subprocess.STDOUT, env=env, cwd=tmp,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 300
    seen, quiet_since = -1, time.monotonic()
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            size = log.stat().st_size
            if size != seen:
                seen, quiet_since = size, time.monotonic()
            elif time.monotonic() - quiet_since > 10:
                break  # the second phase's loop prints nothing
            time.sleep(0.2)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    text = log.read_text()
    assert "Fail to" not in text, text[-3000:]
    counts = re.findall(r"Defined (\d+)/(\d+) systems/nodes", text)
    # both files read (the plan's file has more nodes when a host's adapter is on another plane)
    assert len(counts) == 2, text[-3000:]
    return Verdict(FIRST_PHASE in text, dict(_MATCHED.findall(text)), int(counts[1][1]), text)


@pytest.mark.realtool
@pytest.mark.parametrize(("name", "intent"), bringup_cases(), ids=[c[0] for c in bringup_cases()])
def test_topology_file_matches_the_simulated_fabric(name: str, intent: Intent,
                                                   tmp_path: Path) -> None:
    h.require_tools()
    require_tool("ibdmsh", "ibtopodiff")
    fabric = build(intent)
    files = bringup_files(intent)
    root = write(files, tmp_path / "files")
    guids = guid_plan(fabric)  # the simulated fabric's GUIDs (topology.ibnet numbers it so)
    names = {g: name for name, g in guids.switch_guids.items()}
    swapped, hosts = swap_host_ports(fabric)
    for plane in range(fabric.planes):
        topo = root / _plane_dir(fabric, plane) / "ibdm.topo"
        spec = ibdm_read("topo", topo, root / OUT / "ibnl")
        lst = discovered(fabric, plane, tmp_path / f"sim{plane}")
        found = named(ibdm_read("lst", lst), names)
        assert found == spec.cables, (sorted(found ^ spec.cables)[:6])
        host = fabric.hosts[-1]
        hp = next(p for p in host.ports if p.plane == plane)
        anchor = (f"{host.name}/U{hp.nic}", hp.port + 1, guids.port_guids[(host.name, hp.dev)])
        verdict = ibtopodiff(topo, lst, root / OUT / "ibnl", anchor, lst.parent)
        assert not verdict.differ, verdict.text[-3000:]
        # every node paired, each switch with the planned switch of its GUID
        assert len(verdict.matched) == verdict.nodes == len(ibdm_read("lst", lst).nodes)
        for disc, plan in verdict.matched.items():
            guid = found_guid(disc)
            assert plan == (f"{names[guid]}/U1" if guid is not None else disc)
        if plane == 0:
            bad = named(ibdm_read("lst", discovered(swapped, 0, tmp_path / "swapped")), names)
            diff = bad ^ spec.cables
            # exactly the two host cables, each seen in the plan and in the fabric
            assert len(diff) == 4, sorted(diff)
            assert {n.split("/")[0] for cable in diff for n, _p in cable} == {
                *hosts}, sorted(diff)
            # Anchored at a swapped host: Debian's ibtopodiff reports mismatches of its first
            # phase only, which checks the anchor's own cable against the plan (the nodes it
            # pairs by name elsewhere are compared in the second phase, which crashes).
            swapped_host = next(x for x in fabric.hosts if x.name == hosts[0])
            port = next(p for p in swapped_host.ports if p.plane == 0)
            verdict = ibtopodiff(topo, tmp_path / "swapped" / "dump" / "opensm-subnet.lst",
                                 root / OUT / "ibnl", (f"{hosts[0]}/U{port.nic}", port.port + 1,
                                                       guids.port_guids[(hosts[0], port.dev)]),
                                 tmp_path / "swapped")
            assert verdict.differ, verdict.text[-3000:]
            report = verdict.text.split(FIRST_PHASE)[1]
            assert f"cable from:{hosts[0]}/{port.rdma_device}" in report, report[:2000]


def test_only_compute_hosts_and_switches_are_in_the_files() -> None:
    intent = load(IB_INVENTORIES[0]).intent
    fabric = build(intent)
    text = "".join(t for p, t in bringup_files(intent).items()
                   if not p.startswith(f"{OUT}/storage/"))
    for extra in fabric.extras:
        for sw in extra.switches:
            assert f" {sw.name}\n" not in text and f" {sw.name} " not in text


@pytest.mark.realtool
def test_ibdm_reads_every_cable_of_the_storage_subnet(tmp_path: Path) -> None:
    """The storage network, a subnet of its own, gets its own topology file and IBNLs
    (bringup/infiniband/storage/): ibdm's parser reads every planned storage cable from it,
    nodes' storage ports, targets and its subnet manager's hosts included."""
    require_tool("ibdmsh")
    intent = load(IB_INVENTORIES[0]).intent
    fabric = build(intent)
    storage = next(x for x in fabric.extras if x.role == "storage")
    root = write(bringup_files(intent), tmp_path)
    spec = ibdm_read("topo", root / OUT / "storage" / "ibdm.topo", root / OUT / "storage" / "ibnl")
    assert spec.cables == plan_cables(storage, 0)
    assert {n.split("/")[0] for n in spec.nodes} >= {"stor01", "ufm-stor01", "dgx001"}
    assert spec.nodes["dgx001/U0"][1] == 1, "a storage port is an adapter of its own"


def test_render_selects_bringup_as_a_group() -> None:
    files = render(load(IB_INVENTORIES[0]), only=["bringup"])
    assert f"{OUT}/ibdm.topo" in files
    assert "bringup/rails.csv" in files


@pytest.mark.parametrize("intent_path", INVENTORIES, ids=lambda p: p.stem)
def test_rails_table_agrees_with_the_cabling_and_the_topology_file(intent_path: Path) -> None:
    loaded = load(intent_path)
    files = render(loaded, only=["cabling", "bringup"])
    rows = list(csv.DictReader(io.StringIO(files["bringup/rails.csv"])))
    fabric = build(loaded.intent)
    assert [(r["host"], r["rdma_device"]) for r in rows] == [
        (x.name, hp.rdma_device) for x in fabric.hosts for hp in x.ports]
    cables = {(c["a_device"], c["a_port"]): (c["z_device"], c["z_port"])
              for c in csv.DictReader(io.StringIO(files["cabling/cabling.csv"]))
              if c["kind"] == "node-leaf"}
    leaf_of_rail: dict[tuple[str, str, str], set[str]] = {}
    for r in rows:
        assert cables[r["host"], r["rdma_device"]] == (r["leaf"], r["leaf_port"])
        leaf_of_rail.setdefault((r["leaf_group"], r["plane"], r["rail"]), set()).add(r["leaf"])
    if fabric.rails:  # rail-optimized: one leaf per rail, plane and unit
        assert all(len(v) == 1 for v in leaf_of_rail.values())
    if fabric.transport == "infiniband":
        topo = files[f"{OUT}/ibdm.topo"]
        for r in rows[:64]:
            assert f"{r['leaf_panel']} -> " in topo
            section = topo.split(f" {r['leaf']}\n", 1)[1].split("\n\n", 1)[0]
            assert f"   {r['leaf_panel']} -> " + "" in section
            assert f"{r['host']} {r['rdma_device']}" in section.split(
                f"   {r['leaf_panel']} -> ", 1)[1].split("\n", 1)[0]


def test_node_name_map_only_with_the_real_guids() -> None:
    """fabgen's GUID plan numbers the simulated fabric only; with real GUIDs (guids_file) the
    map names every switch and adapter of the compute subnet, the SM hosts' included."""
    intent = load(IB_INVENTORIES[0]).intent
    fabric = build(intent)
    model, nic = intent.cluster.node.model, intent.cluster.node.nic
    index = FabricIndex(fabric)
    assert f"{OUT}/node-name-map" not in render_ibdm(index, None, model, nic)
    guids = guid_plan(fabric)  # standing in for an ibnetdiscover of the real fabric
    text = render_ibdm(index, guids, model, nic)[f"{OUT}/node-name-map"]
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    cas = {(h.name, hp.nic) for h in (*fabric.hosts, *fabric.sm_hosts) for hp in h.ports}
    assert len(lines) == len(fabric.switches) + len(cas)
    sm = fabric.sm_hosts[0]
    assert f'0x{guids.ca_guids[(sm.name, 0)]:016x} "{sm.name} {sm.ports[0].rdma_device}"' \
        in lines
    # adapters as rdma-ndd names them on the host: "<host> <RDMA device>", never HCA-<n>
    dgx = fabric.hosts[0]
    for hp in dgx.ports:
        assert f'0x{guids.ca_guids[(dgx.name, hp.nic)]:016x} "{dgx.name} {hp.rdma_device}"' \
            in lines
    assert not any("HCA-" in line for line in lines)


def test_sm_hosts_are_in_the_topology_file_but_not_in_scheduler_files() -> None:
    loaded = load(IB_INVENTORIES[0])
    fabric = build(loaded.intent)
    assert fabric.sm_hosts
    files = render(loaded, only=["bringup", "scheduler"])
    sm = fabric.sm_hosts[0].name
    assert f" {sm} " in files[f"{OUT}/ibdm.topo"]
    for path, text in files.items():
        if path.startswith("scheduler/") or path == "bringup/rails.csv":
            assert sm not in text, path
