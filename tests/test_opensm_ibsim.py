"""The OpenSM files in the real OpenSM (Debian's upstream build) on the real ibsim.

Each test installs the rendered files (deployment paths moved into a temp dir), loads the
rendered topology in ibsim, runs OpenSM as the master SM host would, and reads back over SMP
(and with infiniband-diags' own smpquery/sminfo) what it programmed: the engine that routed,
the port it bound, P_Keys, SL2VL and VL arbitration of host and switch ports.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from fabgen.intent import load
from fabgen.intent.models import Intent
from fabgen.targets import opensm, opensm_plan
from fabgen.targets.ibnetdiscover import (
    GuidPlan,
    ca_name,
    compute_node_guids,
    guid_plan,
    parse_ibnetdiscover,
    render_topology,
    root_guids,
)
from fabgen.topology.build import build
from fabgen.topology.index import FabricIndex
from fabgen.topology.model import Fabric

try:  # pytest puts tests/ on sys.path while it has no __init__.py, the repo root once it has
    import ibsim_harness as h
    import opensm_run as r
except ImportError:
    from tests import ibsim_harness as h  # type: ignore[no-redef]
    from tests import opensm_run as r  # type: ignore[no-redef]

pytestmark = pytest.mark.realtool


def with_ib(intent: Intent, **ib: Any) -> Intent:
    data = intent.model_dump(mode="json")
    data["infiniband"].update(ib)
    return Intent.model_validate(data)


def shifted(plan: GuidPlan, offset: int = 0x0000_1000_0000) -> GuidPlan:
    """GUIDs as a real fabric would have them: nothing like fabgen's deterministic plan."""
    return GuidPlan({k: v + offset for k, v in plan.switch_guids.items()},
                    {k: v + offset for k, v in plan.ca_guids.items()}, dict(plan.ca_ports),
                    {k: v + offset for k, v in plan.port_guids.items()})


def small(**ib: Any) -> Intent:
    """Two 8-port leaves with 3 nodes each under 2 spines, and 2 dedicated hosts running plain
    OpenSM (one opensm.conf each; `management: {kind: ufm}` for UFM's layout)."""
    ib["management"] = {"kind": "opensm", **ib.get("management", {})}
    return Intent.model_validate({
        "name": "small", "fabric": {"transport": "infiniband", "generation": "ndr"},
        "cluster": {"nodes": 6, "node": {"nics": 1, "gpus": 1}},
        "topology": {"style": "rail-unaware", "leaf": {"ports": 8, "speed": "400G"},
                     "scalable_unit": 8},
        "infiniband": {"opensm": "upstream", **ib}})


# --------------------------------------------------------------------------- option names


def test_option_names_known_to_opensm(tmp_path: Path) -> None:
    """Every option fabgen writes is one `opensm -c` dumps, except NVIDIA's sharp_enabled."""
    h.require_tools()
    dump = tmp_path / "defaults.conf"
    subprocess.run(["opensm", "-c", str(dump)], capture_output=True, timeout=30, check=False)
    known = {line.split()[0] for line in dump.read_text().splitlines()
             if line.strip() and not line.startswith("#")}
    assert {"routing_engine", "root_guid_file", "qos_sl2vl", "max_op_vls", "guid"} <= known
    intent = load(r.IB_INVENTORY).intent
    fabric = build(intent)
    real = shifted(guid_plan(fabric))
    (tmp_path / "fabric.ibnd").write_text(render_topology(fabric, real))
    written: set[str] = set()
    plain = {**intent.infiniband.management.model_dump(mode="json"), "kind": "opensm"}
    for variant in (intent, with_ib(intent, guids_file="fabric.ibnd"),
                    with_ib(intent, opensm="upstream", sharp=False, service_level=2),
                    with_ib(intent, guids_file="fabric.ibnd", opensm="upstream", sharp=False,
                            management=plain)):
        files = r.render_all(variant, fabric, base_dir=tmp_path)
        for path, text in files.items():
            if path.endswith("opensm.conf"):
                written |= set(r.conf_options(text))
    dual = Intent.model_validate({
        "name": "dual", "fabric": {"transport": "infiniband", "generation": "ndr"},
        "cluster": {"nodes": 2, "node": {"nics": 1, "nic_ports": 2}},
        "topology": {"leaf": {"ports": 8, "speed": "400G"}, "planes": 2}})
    written |= set(r.conf_options(r.render_all(dual, build(dual))[
        "infiniband/plane1/ufm01/opensm.conf"]))
    assert {"guid", "root_guid_file", "cn_guid_file", "log_file"} <= written
    assert written - known == {"sharp_enabled"}


# --------------------------------------------------------------------------- the inventory


def test_inventory_routes_with_ftree_in_upstream_opensm(tmp_path: Path) -> None:
    """The 4-SU example, as the upstream OpenSM build would run it: no adaptive routing, no
    SHARP, and no GUID files (none known): ftree finds its 16 roots and the 1,020 CA ports
    (1,016 DGX ports and the 4 of the UFM hosts) itself. The SM runs on ufm01's port."""
    h.require_tools()
    intent = with_ib(load(r.IB_INVENTORY).intent, opensm="upstream", sharp=False)
    fabric = build(intent)
    files = r.render_all(intent, fabric)
    assert "infiniband/root_guids.txt" not in files
    result = r.run_plane(files, fabric, 0, tmp_path / "deploy", timeout=60)
    assert "Fabric has 16 switches at rank 0 (roots)" in result.log
    assert "(1020 of them CNs)" in result.log
    ufm01 = guid_plan(fabric).port_guids[("ufm01", 0)]
    assert f"Setting IS_SM on port 0x{ufm01:016x}" in result.log


def test_inventory_with_its_own_discovery_as_guids_file(tmp_path: Path) -> None:
    """The fabric built with GUIDs nothing like fabgen's, discovered with ibnetdiscover
    through ibsim: that output as guids_file gives GUID files that name exactly what was
    discovered, and OpenSM binds ufm01's port by its `guid` and routes with ftree."""
    h.require_tools()
    intent = with_ib(load(r.IB_INVENTORY).intent, opensm="upstream", sharp=False)
    fabric = build(intent)
    real = shifted(guid_plan(fabric))
    seen = h.run_opensm(render_topology(fabric, real), tmp_path / "discover", discover=True,
                        timeout=60)
    assert seen.subnet_up and seen.ibnetdiscover is not None
    (tmp_path / "fabric.ibnd").write_text(seen.ibnetdiscover)
    files = r.render_all(with_ib(intent, guids_file="fabric.ibnd"), fabric, base_dir=tmp_path)

    disc = parse_ibnetdiscover(seen.ibnetdiscover)
    by_desc = {n.desc: n for n in disc.nodes.values()}
    spines = [by_desc[sw.name].guid for sw in fabric.switches if sw.role == "spine"]
    assert r.guid_lines(files["infiniband/ufm/root_guids.txt"]) == spines
    dgx_ports = [by_desc[f"{host.name} HCA-{hp.nic}"].port_guids[1]
                 for host in fabric.hosts for hp in host.ports]
    assert r.guid_lines(files["infiniband/ufm/cn_guids.txt"]) == dgx_ports
    # one configuration for the UFM pair: no guid (UFM binds gv.cfg's fabric_interface);
    # check-routing.sh accepts either node's port
    assert "guid" not in r.conf_options(files["infiniband/ufm/opensm.conf"])
    for host in ("ufm01", "ufm02"):
        assert f"0x{by_desc[f'{host} HCA-0'].port_guids[1]:x}" in \
            files["infiniband/check-routing.sh"]
    names = dict(re.findall(r'^(0x[0-9a-f]{16}) "([^"]+)"$',
                            files["infiniband/ufm/ib-node-name-map"], re.MULTILINE))
    # every discovered node by its GUID: switches by name, adapters as rdma-ndd names them
    hosts = {x.name: x for x in (*fabric.hosts, *fabric.sm_hosts)}

    def planned(desc: str) -> str:
        host, _, nic = desc.partition(" HCA-")  # the simulator's adapter descriptions
        return ca_name(hosts[host], int(nic)) if nic else desc

    assert all(names[f"0x{n.guid:016x}"] == planned(n.desc) for n in disc.nodes.values())
    assert names[f"0x{by_desc['dgx001 HCA-1'].guid:016x}"] == "dgx001 mlx5_3"

    result = r.run_plane(files, fabric, 0, tmp_path / "deploy", timeout=60)
    assert "(1016 of them CNs)" in result.log  # the UFM hosts are no compute nodes
    active = f"0x{by_desc['ufm01 HCA-0'].port_guids[1]:016x}"
    assert f"Setting IS_SM on port {active}" in result.log


# --------------------------------------------------------------------------- SHARP's VL


def _switch_tables(fabric: Fabric) -> Any:
    """Every switch's SL2VL for every (in, out) pair of its cabled ports, and every cabled
    port's VL arbitration, read over SMP while the subnet is up."""
    plan = guid_plan(fabric)
    cabled: dict[str, set[int]] = {}
    for link in (*fabric.links, *fabric.sm_links):
        cabled.setdefault(link.z_device, set()).add(link.z_port)
        if link.kind in ("leaf-spine", "spine-core"):
            cabled.setdefault(link.a_device, set()).add(link.a_port)
    pairs = [(plan.switch_guids[sw], i, o) for sw, ports in cabled.items()
             for i in sorted(ports) for o in sorted(ports) if i != o]
    ports = [(plan.switch_guids[sw], p) for sw, ps in cabled.items() for p in sorted(ps)]
    leaf = next(sw for sw in fabric.switches if sw.role == "leaf")
    leaf_port = min(cabled[leaf.name])

    def query(env: dict[str, str], tmp: Path) -> Any:
        sl2vl = h.smp_switch_sl2vl(env, tmp, pairs)
        vlarb = h.smp_switch_vlarb(env, tmp, ports)
        # infiniband-diags' own view of one leaf port
        guid = f"0x{plan.switch_guids[leaf.name]:x}"
        cli = (h.run_tool(env, tmp, ["smpquery", "sl2vl", "-G", guid, str(leaf_port)]).stdout,
               h.run_tool(env, tmp, ["smpquery", "vlarb", "-G", guid, str(leaf_port)]).stdout)
        return sl2vl, vlarb, cli

    return query


def _run_with_tables(intent: Intent, tmp: Path) -> tuple[dict[str, str], Any]:
    fabric = build(intent)
    files = r.render_all(intent, fabric)
    inst = r.install(files, fabric, 0, tmp)
    node, port = r.sm_location(inst, fabric, 0)
    config = h.merge_config(inst.config, {"guid": f"0x{port:016x}"})
    result = h.run_opensm(inst.topology, tmp, config=config, files=inst.files, sm_node=node,
                          on_up=_switch_tables(fabric), timeout=30)
    assert result.subnet_up and result.ftree_ok, result.log[-3000:]
    return r.conf_options(inst.config), result.on_up


def test_sharp_sl_has_its_own_vl_in_every_switch(tmp_path: Path) -> None:
    """sharp: true (NVIDIA's OpenSM, adaptive routing off so the upstream build can run the
    same file; it ignores sharp_enabled only): OpenSM programs SL 1 -> VL 1 and everything
    else -> VL 0 on every switch port pair, and both VLs into every port's VL arbitration."""
    h.require_tools()
    intent = small(opensm="nvidia", adaptive_routing=False, sharp=True, sharp_sl=1)
    options, (sl2vl, vlarb, (cli_sl2vl, cli_vlarb)) = _run_with_tables(intent, tmp_path)
    assert options["routing_engine"] == "ftree,updn" and options["max_op_vls"] == "2"
    want = (0, 1, *([0] * 14))
    assert sl2vl and all(table == want for table in sl2vl.values())
    assert vlarb and all(low == ((0, 64), (1, 64)) for low, _high in vlarb.values())
    rows = [line for line in cli_sl2vl.splitlines() if line.startswith("ports:")]
    assert rows and all(line.endswith("| 0| 1| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0| 0|")
                        for line in rows)
    low = cli_vlarb.split("# High")[0]
    assert re.search(r"^VL    : \|0x0 \|0x1 \|", low, re.MULTILINE), cli_vlarb
    assert re.search(r"^WEIGHT: \|0x40\|0x40\|0x0 ", low, re.MULTILINE), cli_vlarb


def test_without_sharp_one_vl(tmp_path: Path) -> None:
    h.require_tools()
    options, (sl2vl, vlarb, _cli) = _run_with_tables(small(), tmp_path)
    assert options["max_op_vls"] == "1"
    assert all(set(table) == {0} for table in sl2vl.values())
    assert all(low == ((0, 64),) for low, _high in vlarb.values())


# --------------------------------------------------------------------------- check-routing.sh


def _check(files: dict[str, str], fabric: Fabric, tmp: Path, topology: str | None = None
           ) -> tuple[h.OpenSMResult, Any]:
    """Run OpenSM with the rendered files (optionally on another topology: a miscabled
    fabric), then the rendered check-routing.sh on the SM host, through the simulator."""
    inst = r.install(files, fabric, 0, tmp)
    node, port = r.sm_location(inst, fabric, 0)
    config = h.merge_config(inst.config, {"guid": f"0x{port:016x}"})
    script = tmp / "check-routing.sh"
    script.write_text(files["infiniband/check-routing.sh"])

    def check(env: dict[str, str], run_tmp: Path) -> Any:
        return h.run_tool(env, run_tmp, ["bash", str(script), str(run_tmp / "opensm.log")],
                          env={"CA": "ibsim0"})  # the simulator's name for every CA

    result = h.run_opensm(topology or inst.topology, tmp, config=config, files=inst.files,
                          sm_node=node, on_up=check, timeout=30)
    assert result.subnet_up, result.log[-3000:]
    return result, result.on_up


def test_check_routing_passes_on_the_planned_fabric(tmp_path: Path) -> None:
    h.require_tools()
    intent = small(sharp=False)
    fabric = build(intent)
    _, out = _check(r.render_all(intent, fabric), fabric, tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    for line in ("OK    routed with ftree", "OK    master SM: sm lid",
                 "OK    SL2VL of this host's port as planned",
                 "OK    VL arbitration of this host's port as planned",
                 "all checks passed"):
        assert line in out.stdout, out.stdout
    leaf = next(x for x in fabric.sm_links if x.a_device == "ufm01")
    assert f"OK    SL2VL of {leaf.z_device} port {leaf.z_port} as planned" in out.stdout


def test_check_routing_catches_the_fallback_engine(tmp_path: Path) -> None:
    """A leaf-spine cable missing: without root_guid_file ftree validates the tree, refuses
    it, and updn routes; the subnet is up, and only the check tells."""
    h.require_tools()
    intent = small()
    fabric = build(intent)
    files = r.render_all(intent, fabric)
    cut = next(x for x in fabric.links if x.kind == "leaf-spine")
    bad = render_topology(h.drop_link(fabric, cut.id), guid_plan(fabric))
    result, out = _check(files, fabric, tmp_path, topology=bad)
    assert "updn tables configured on all switches" in result.log
    assert out.returncode == 1
    assert "FAIL  routed with updn, not ftree (routing_engine ftree,updn)" in out.stdout
    assert "FAIL  ftree refused the fabric as a fat tree" in out.stdout


def test_upstream_opensm_does_not_know_ar_updn(tmp_path: Path) -> None:
    """What ENGINE_BUILDS says: the upstream build skips NVIDIA's ar_updn with one log line
    and routes with the next engine, adaptive routing off; check-routing.sh fails."""
    h.require_tools()
    intent = small(opensm="nvidia")  # NDR, NVIDIA: adaptive routing by default
    fabric = build(intent)
    files = r.render_all(intent, fabric)
    assert r.conf_options(files["infiniband/ufm01/opensm.conf"])["routing_engine"] == \
        "ar_updn,updn"
    result, out = _check(files, fabric, tmp_path)
    assert "cannot find or setup routing engine 'ar_updn'" in result.log
    assert "updn tables configured on all switches" in result.log
    assert out.returncode == 1
    assert "FAIL  routed with updn, not ar_updn" in out.stdout
    assert "FAIL  this OpenSM does not know an engine it was given" in out.stdout


# --------------------------------------------------------------------------- partitions


def test_tenant_partitions_run_in_opensm(tmp_path: Path) -> None:
    """Tenant partitions, limited default membership and a 3-VL plan, read back over SMP."""
    h.require_tools()
    fabric = h.make_fat_tree(leaves=4, spines=2, hosts_per_leaf=4, links_per_pair=2)
    plan = guid_plan(fabric)
    files = opensm.render_opensm(FabricIndex(fabric), plan,
                                 opensm_plan.settings_from_intent(r.fake_intent(**r.TENANTS)))
    files["infiniband/topology.ibnet"] = render_topology(fabric, plan)
    result = r.run_plane(files, fabric, 0, tmp_path)
    pkeys = result.on_up[0]  # type: ignore[index]
    assert pkeys[plan.port_guids[("node001", 0)]] in ((0xFFFF, 0x8101), (0x8101, 0xFFFF))
    assert pkeys[plan.port_guids[("node002", 0)]] in ((0x7FFF, 0x8101), (0x8101, 0x7FFF))
    assert sorted(pkeys[plan.port_guids[("node012", 0)]]) == [0x0102, 0x7FFF]
    assert pkeys[plan.port_guids[("node008", 0)]] == (0x7FFF,)
    assert f"{len(compute_node_guids(fabric, plan))} of them CNs" in result.log
    assert f"{len(root_guids(fabric, plan))} switches at rank 0 (roots)" in result.log


# --------------------------------------------------------------------------- any small fabric

IB_CHOICES: dict[str, list[dict[str, Any]]] = {
    "ndr": [{"model": "qm9700"}, *({"ports": p, "speed": "400G"} for p in range(8, 17, 2))],
    "hdr": [{"model": "qm8700"}, {"model": "qm9700"}],
}


@st.composite
def small_ib_intents(draw: st.DrawFn) -> dict[str, Any]:
    generation = draw(st.sampled_from(sorted(IB_CHOICES)))
    leaf = draw(st.sampled_from(IB_CHOICES[generation]))
    planes = draw(st.sampled_from((1, 1, 2)))
    # What the OpenSM in CI can run: upstream, or NVIDIA's files with adaptive routing off
    # (SHARP's VL plan then runs too; upstream ignores sharp_enabled only).
    build_ = draw(st.sampled_from(("upstream", "nvidia")))
    ib: dict[str, Any] = {"opensm": build_, "service_level": draw(st.sampled_from((0, 3)))}
    if build_ == "nvidia":
        ib.update(adaptive_routing=False, sharp=draw(st.booleans()))
    if draw(st.booleans()):
        ib["management"] = {"hosts": []}
    return {
        "name": "hyp",
        "fabric": {"transport": "infiniband", "generation": generation},
        "cluster": {"nodes": draw(st.integers(1, 10)),
                    "node": {"nics": draw(st.integers(1, 2)), "nic_ports": planes}},
        "topology": {"leaf": leaf, "planes": planes,
                     "style": draw(st.sampled_from(("rail-optimized", "rail-unaware"))),
                     "min_spines": draw(st.integers(1, 3))},
        "infiniband": ib,
    }


# No shrinking: each example runs the simulator, and a failure is reported as found.
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(small_ib_intents())
@example({  # one leaf with hosts: too small for ftree, routed with updn
    "name": "one", "fabric": {"transport": "infiniband", "generation": "hdr"},
    "cluster": {"nodes": 1, "node": {"nics": 2, "nic_ports": 1}},
    "topology": {"leaf": {"model": "qm8700"}, "style": "rail-unaware"},
    "infiniband": {"opensm": "upstream", "management": {"hosts": []}}})
@example({  # two planes: each UFM host's second port is on plane 2
    "name": "dual", "fabric": {"transport": "infiniband", "generation": "ndr"},
    "cluster": {"nodes": 6, "node": {"nics": 1, "nic_ports": 2}},
    "topology": {"leaf": {"ports": 8, "speed": "400G"}, "planes": 2},
    "infiniband": {"opensm": "nvidia", "adaptive_routing": False, "service_level": 3,
                   "sharp": True}})
def test_small_fabrics_run_in_opensm(data: dict[str, Any]) -> None:
    h.require_tools()
    intent = Intent.model_validate(data)
    fabric = build(intent)
    files = r.render_all(intent, fabric)
    with tempfile.TemporaryDirectory(prefix="fabgen-osm-") as tmp:
        for plane in range(fabric.planes):
            r.run_plane(files, fabric, plane, Path(tmp) / f"p{plane}-deploy")
            r.run_plane(files, fabric, plane, Path(tmp) / f"p{plane}-proof", with_roots=False)
