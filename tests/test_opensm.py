"""The OpenSM target: pure checks of the files, then proof with the real ibsim + OpenSM.

The real-tool tests install the rendered files (deployment paths moved into a temp dir), load
the rendered topology in ibsim, run OpenSM with the rendered opensm.conf and read back over SMP
what it programmed: every host port's P_Key table, SL-to-VL map and VL arbitration.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from fabgen.errors import FabgenError
from fabgen.intent import load
from fabgen.intent.models import Intent
from fabgen.targets import opensm
from fabgen.targets.base import RenderContext
from fabgen.targets.ibnetdiscover import (
    GuidPlan,
    compute_node_guids,
    guid_plan,
    render_topology,
    root_guids,
)
from fabgen.topology.build import build
from fabgen.topology.model import Fabric
from fabgen.verify_cabling import parse_ibnetdiscover

try:  # pytest puts tests/ on sys.path while it has no __init__.py, the repo root once it has
    import ibsim_harness as h
except ImportError:
    from tests import ibsim_harness as h  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
IB_INVENTORY = ROOT / "inventories" / "ib-ndr-1024.yaml"


@pytest.fixture(scope="module")
def inventory() -> tuple[Intent, Fabric]:
    intent = load(IB_INVENTORY).intent
    return intent, build(intent)


def render_all(intent: Any, fabric: Fabric) -> dict[str, str]:
    ctx = RenderContext(intent=intent, fabric=fabric)
    files = opensm.TARGET.render(ctx)
    files.update(opensm.TOPOLOGY_TARGET.render(ctx))
    return files


def fake_intent(**ib: Any) -> SimpleNamespace:
    """An intent-shaped object: lets tests give the proposed infiniband fields (not in the
    pydantic model yet) the way settings_from_intent reads them."""
    generation = ib.pop("generation", "ndr")
    base = {"routing_engine": "ftree", "adaptive_routing": False, "sharp": False,
            "service_level": 0, "sm_priority": 15}
    return SimpleNamespace(infiniband=SimpleNamespace(**{**base, **ib}),
                           fabric=SimpleNamespace(generation=generation))


def conf_options(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, value = line.partition(" ")
            out[key] = value.strip()
    return out


def guid_lines(text: str) -> list[int]:
    return [int(line, 16) for line in text.splitlines() if line.startswith("0x")]


# --------------------------------------------------------------------------- partitions.conf


def parse_partitions(text: str) -> list[tuple[int, list[tuple[str, bool]]]]:
    """(P_Key, [(member, full)]) per definition; member is ALL, ALL_SWITCHES, SELF or a GUID."""
    body = re.sub(r"#[^\n]*", "", text)
    out = []
    for stmt in body.split(";"):
        if ":" not in stmt:
            continue
        head, members = stmt.split(":", 1)
        pkey = int(head.split(",")[0].split("=")[1], 16)
        entries = []
        for m in members.split(","):
            if m.strip():
                who, _, how = m.strip().partition("=")
                entries.append((who.strip(), how.strip() == "full"))
        out.append((pkey, entries))
    return out


def expected_pkeys(text: str, port: int, sm_port: int) -> tuple[int, ...]:
    """The P_Keys partitions.conf gives a CA port (0x8000 = full member), sorted."""
    keys = []
    for pkey, entries in parse_partitions(text):
        matched = [full for who, full in entries
                   if who in ("ALL", "ALL_CAS") or (who == "SELF" and port == sm_port)
                   or (who.startswith("0x") and int(who, 16) == port)]
        if matched:
            keys.append(pkey | (0x8000 if any(matched) else 0))
    return tuple(sorted(keys))


def vlarb_pairs(value: str) -> tuple[tuple[int, int], ...]:
    pairs = (p.split(":") for p in value.split(","))
    return tuple((int(vl), int(w)) for vl, w in pairs if int(w))


# --------------------------------------------------------------------------- running


@dataclasses.dataclass
class Installed:
    config: str
    files: dict[str, str]
    topology: str
    cns: list[int]
    roots: list[int]


def install(files: dict[str, str], fabric: Fabric, plane: int, tmp: Path) -> Installed:
    """One plane's rendered files with their deployment paths moved into tmp."""
    plane_files = opensm.plane_files(files, fabric, plane)
    where = opensm.deploy_dir(fabric, plane)
    config = plane_files.pop("opensm.conf").replace(where + "/", f"{tmp}/")
    assert where not in config, "every deployment path was moved"
    topology = plane_files.pop("topology.ibnet")
    return Installed(config, plane_files, topology, guid_lines(plane_files["cn_guids.txt"]),
                     guid_lines(plane_files["root_guids.txt"]))


def readback(cns: list[int], qos: bool) -> Any:
    def query(env: dict[str, str], tmp: Path) -> Any:
        pkeys = h.smp_pkeys(env, tmp, cns)
        if not qos:
            return pkeys, None, None
        return pkeys, h.smp_sl2vl(env, tmp, cns), h.smp_vlarb(env, tmp, cns)
    return query


def sm_location(topology: str) -> tuple[str, int]:
    """(node id, port GUID) where OpenSM runs in the simulator: the first CA when its port 1
    is cabled, else the first switch (port 0, as on a managed switch). ibsim attaches a client
    to a CA's first port only (sim_ctl_new_client: node_get_port(node, 0)), and the second
    plane of a dual-plane fabric is cabled to every adapter's second port."""
    disc = parse_ibnetdiscover(topology)
    first = h.first_ca(topology)
    if first is not None and 1 in disc.nodes[first].port_guids:
        return first, disc.nodes[first].port_guids[1]
    switch = next(n for n in disc.nodes.values() if n.kind == "switch")
    assert switch.guid is not None
    return switch.node_id, switch.guid


def leaves_all_have_hosts(fabric: Fabric, plane: int) -> bool:
    hosts_on = {link.z_device for link in fabric.links if link.kind == "node-leaf"}
    return all(sw.name in hosts_on for sw in fabric.switches
               if sw.role == "leaf" and (fabric.planes <= 1 or sw.plane == plane))


def run_plane(files: dict[str, str], fabric: Fabric, plane: int, tmp: Path, *,
              with_roots: bool = True) -> h.OpenSMResult:
    """Run OpenSM on one plane and check everything it programmed against the files.

    with_roots=False is the cabling proof: no root/cn GUID files, so ftree validates the fat
    tree itself. It runs without QoS: programming every switch's per-port-pair SL-to-VL tables
    costs the simulator seconds on the big inventory, and the deployment run checks QoS.
    """
    inst = install(files, fabric, plane, tmp)
    options = conf_options(inst.config)
    overrides = {}
    node, port = sm_location(inst.topology)
    if "guid" not in options:  # the deployment names the SM host's port; here, the simulator's
        overrides["guid"] = f"0x{port:016x}"
    if not with_roots:
        overrides.update({"root_guid_file": "(null)", "cn_guid_file": "(null)", "qos": "FALSE"})
    config = h.merge_config(inst.config, overrides)
    result = h.run_opensm(inst.topology, tmp, config=config, files=inst.files, sm_node=node,
                          on_up=readback(inst.cns, qos=with_roots), timeout=30)
    tail = result.log[-3000:]
    assert result.subnet_up, tail
    engine = options["routing_engine"].split(",")[-1]
    if engine == "ftree":
        assert result.ftree_ok and not result.fell_back, tail
        if with_roots or leaves_all_have_hosts(fabric, plane):
            # ftree left to guess the roots takes a leaf without hosts for one
            assert f"{len(inst.roots)} switches at rank 0 (roots)" in result.log, tail
    else:
        assert f"{engine} tables configured on all switches" in result.log, tail
    assert result.ftree_errors == ()
    assert "PARSE ERROR" not in result.log
    assert not re.findall(r"ERR [0-9A-F]{4}", result.log), tail
    if with_roots:
        assert "Loading QoS policy file" in result.log
        if engine == "ftree":
            assert f"{len(inst.cns)} of them CNs" in result.log, tail

    bound = int(re.findall(r"Setting IS_SM on port (0x[0-9a-fA-F]+)", result.log)[0], 16)
    pkeys, sl2vl, vlarb = result.on_up  # type: ignore[misc]
    want_sl2vl = tuple(int(v) for v in options["qos_sl2vl"].split(","))
    want_vlarb = (vlarb_pairs(options["qos_vlarb_low"]), vlarb_pairs(options["qos_vlarb_high"]))
    assert len(pkeys) == len(inst.cns)
    for port in inst.cns:
        want = expected_pkeys(inst.files["partitions.conf"], port, bound)
        assert tuple(sorted(pkeys[port])) == want, f"port {port:#x}"
        if with_roots:
            assert sl2vl[port] == want_sl2vl, f"port {port:#x}"
            assert vlarb[port] == want_vlarb, f"port {port:#x}"
    return result


# --------------------------------------------------------------------------- pure


def test_inventory_files(inventory: tuple[Intent, Fabric]) -> None:
    intent, fabric = inventory
    files = render_all(intent, fabric)
    assert sorted(files) == sorted(
        f"infiniband/{n}" for n in ("opensm.conf", "root_guids.txt", "cn_guids.txt",
                                    "partitions.conf", "qos-policy.conf", "node-name-map",
                                    "topology.ibnet"))
    assert render_all(intent, fabric) == files, "deterministic"
    options = conf_options(files["infiniband/opensm.conf"])
    assert options["routing_engine"] == "ftree"
    assert options["lmc"] == "0"
    assert options["sm_priority"] == "15"
    assert options["root_guid_file"] == "/etc/opensm/root_guids.txt"
    assert options["cn_guid_file"] == "/etc/opensm/cn_guids.txt"
    assert options["partition_config_file"] == "/etc/opensm/partitions.conf"
    assert options["qos"] == "TRUE"
    assert options["qos_sl2vl"] == ",".join(["0"] * 16)
    assert options["max_op_vls"] == "1"  # SL 0 only: one data VL
    assert "sharp_enabled" not in options
    assert ("Default=0x7fff, ipoib, mtu=5 : ALL=full ;"
            in files["infiniband/partitions.conf"].splitlines())

    plan = guid_plan(fabric)
    roots = guid_lines(files["infiniband/root_guids.txt"])
    cns = guid_lines(files["infiniband/cn_guids.txt"])
    assert roots == root_guids(fabric, plan) and len(roots) == 16
    assert cns == compute_node_guids(fabric, plan) and len(cns) == 1024
    assert set(cns) == set(plan.port_guids.values()), "cn_guid_file holds port GUIDs"
    names = files["infiniband/node-name-map"]
    assert f'0x{plan.switch_guids["spine-01"]:016x} "spine-01"' in names
    assert f'0x{plan.ca_guids[("dgx001", 7)]:016x} "dgx001 HCA-7"' in names
    assert len([line for line in names.splitlines() if line.startswith("0x")]) == 48 + 1024


def test_target_applies_to_infiniband_only(inventory: tuple[Intent, Fabric]) -> None:
    intent, fabric = inventory
    roce = load(ROOT / "inventories" / "roce-256-sonic.yaml").intent
    roce_ctx = RenderContext(intent=roce, fabric=build(roce))
    assert not opensm.TARGET.applies(roce_ctx)
    assert not opensm.TOPOLOGY_TARGET.applies(roce_ctx)
    assert opensm.TARGET.applies(RenderContext(intent=intent, fabric=fabric))
    assert opensm.TARGET.name == "opensm" and opensm.TOPOLOGY_TARGET.name == "ibtopology"


@pytest.mark.parametrize(("engine", "adaptive", "generation", "want"), [
    ("ftree", False, "ndr", "ftree"),
    ("ftree", True, "ndr", "ar_ftree,ftree"),
    ("ar_ftree", False, "hdr", "ar_ftree,ftree"),
    ("ftree", True, "xdr", "ar_updn,ftree"),  # NVIDIA: no ar_ftree on XDR
    ("updn", False, "ndr", "updn"),
    ("updn", True, "ndr", "ar_updn,updn"),
])
def test_routing_engines(engine: str, adaptive: bool, generation: str, want: str) -> None:
    got = opensm.routing_engines(opensm.OpenSMSettings(
        routing_engine=engine, adaptive_routing=adaptive, generation=generation))
    assert got == want


def test_ftree_needs_two_leaves_with_hosts() -> None:
    one = build(Intent.model_validate({
        "name": "one", "fabric": {"transport": "infiniband", "generation": "hdr"},
        "cluster": {"nodes": 1, "node": {"nics": 2}},
        "topology": {"leaf": {"model": "qm8700"}, "style": "rail-unaware"}}))
    assert not opensm.ftree_fits(one)
    options = conf_options(render_all(fake_intent(adaptive_routing=True), one)[
        "infiniband/opensm.conf"])
    assert options["routing_engine"] == "ar_updn,updn"
    assert opensm.ftree_fits(h.make_fat_tree(leaves=2, spines=1, hosts_per_leaf=1))


def test_sl_plan_from_service_level() -> None:
    one = opensm.sl_plan(opensm.OpenSMSettings(service_level=0))
    assert (one.vls, one.max_op_vls, set(one.sl2vl)) == (1, 1, {0})
    two = opensm.sl_plan(opensm.OpenSMSettings(service_level=3))
    assert two.sl2vl[3] == 1 and set(two.sl2vl) - {1} == {0}
    assert (two.vls, two.max_op_vls, two.default_sl) == (2, 2, 0)
    assert two.vlarb_low == ((0, opensm.BEST_EFFORT_WEIGHT), (1, opensm.COMPUTE_WEIGHT))
    assert two.vlarb_high == ((0, 0),) and two.high_limit == 0


def test_sl_plan_from_traffic_classes() -> None:
    classes = (
        opensm.TrafficClassSpec("bulk", 0, weight=64, default=True, ipoib=True),
        opensm.TrafficClassSpec("compute", 3, weight=192, partitions=("train",)),
        opensm.TrafficClassSpec("storage", 5, weight=32),
        opensm.TrafficClassSpec("control", 6, vl=7, weight=16, priority="high"),
    )
    plan = opensm.sl_plan(opensm.OpenSMSettings(service_level=3, traffic_classes=classes),
                          {"train": 0x0101})
    assert plan.sl2vl[:7] == (0, 0, 0, 1, 0, 2, 7)
    assert (plan.vls, plan.max_op_vls) == (8, 4)  # VL0-7
    assert plan.vlarb_high == ((7, 16),) and plan.high_limit == opensm.HIGH_LIMIT
    assert plan.vlarb_low == ((0, 64), (1, 192), (2, 32))
    assert plan.classes[1].pkeys == (0x0101,)

    with pytest.raises(FabgenError, match="service_level 4 has no traffic class"):
        opensm.sl_plan(opensm.OpenSMSettings(service_level=4, traffic_classes=classes),
                       {"train": 0x0101})
    with pytest.raises(FabgenError, match="unknown partition 'train'"):
        opensm.sl_plan(opensm.OpenSMSettings(service_level=3, traffic_classes=classes))
    dup = (*classes, opensm.TrafficClassSpec("again", 5))
    with pytest.raises(FabgenError, match="SL 5 is given to two"):
        opensm.sl_plan(opensm.OpenSMSettings(service_level=3, traffic_classes=dup),
                       {"train": 0x0101})


TENANTS: dict[str, Any] = {
    "partitions": [
        {"name": "tenant-a", "pkey": "0x0101", "hosts": ["node00[1-6]"]},
        {"name": "tenant-b", "pkey": 0x8102, "hosts": ["node007", "node01*"],
         "membership": "limited", "ipoib": False},
    ],
    "traffic_classes": [
        {"name": "best-effort", "sl": 0, "default": True, "ipoib": True},
        {"name": "compute", "sl": 2, "weight": 192, "partitions": ["tenant-a"]},
        {"name": "storage", "sl": 4, "vl": 2, "weight": 32, "partitions": ["tenant-b"]},
    ],
    "service_level": 2,
}


def test_tenant_partitions_and_qos_policy() -> None:
    fabric = h.make_fat_tree(leaves=4, spines=2, hosts_per_leaf=4, links_per_pair=2)
    files = render_all(fake_intent(**TENANTS), fabric)
    plan = guid_plan(fabric)
    parts = parse_partitions(files["infiniband/partitions.conf"])
    assert [p for p, _ in parts] == [0x7FFF, 0x0101, 0x0102]
    assert parts[0][1] == [("ALL", False), ("ALL_SWITCHES", True), ("SELF", True)]
    a = {int(g, 16) for g, full in parts[1][1] if full}
    assert a == {plan.port_guids[(f"node00{i}", 0)] for i in range(1, 7)}
    b = parts[2][1]
    assert {int(g, 16) for g, _ in b} == {plan.port_guids[(n, 0)] for n in (
        "node007", "node010", "node011", "node012", "node013", "node014", "node015", "node016")}
    assert not any(full for _, full in b)
    text = files["infiniband/partitions.conf"]
    assert "tenant-a=0x0101, ipoib, mtu=5 :" in text and "tenant-b=0x0102, mtu=5 :" in text
    assert "# node001 mlx5_0" in text

    policy = files["infiniband/qos-policy.conf"]
    rules = re.findall(r"^\s+(.+?) : (\d+)", policy, re.MULTILINE)
    assert rules == [("default", "0"), ("any, pkey 0x0101", "2"), ("any, pkey 0x0102", "4")]
    options = conf_options(files["infiniband/opensm.conf"])
    assert options["qos_sl2vl"].split(",")[:5] == ["0", "0", "1", "0", "2"]
    assert options["qos_vlarb_low"] == "0:64,1:192,2:32"
    assert (options["max_op_vls"], options["qos_max_vls"]) == ("3", "3")  # VL0-3 covers VL2


def test_partition_errors_name_the_field() -> None:
    fabric = h.make_fat_tree(leaves=2, spines=1, hosts_per_leaf=2)
    bad = [
        ({"name": "x", "pkey": "0x7fff"}, "reserved", ("pkey",)),
        ({"name": "x y", "pkey": 1}, "cannot be written", ("name",)),
        ({"name": "x", "pkey": 1, "hosts": ["gpu*"]}, "no host matches", ("hosts",)),
    ]
    for spec, message, field in bad:
        with pytest.raises(FabgenError, match=message) as err:
            render_all(fake_intent(partitions=[spec]), fabric)
        assert err.value.diagnostics[0].loc == ("infiniband", "partitions", 0, *field)
    with pytest.raises(FabgenError, match="used twice"):
        render_all(fake_intent(partitions=[{"name": "a", "pkey": 5}, {"name": "b", "pkey": 5}]),
                   fabric)


def test_sharp_and_adaptive_routing_settings() -> None:
    fabric = h.make_fat_tree(leaves=2, spines=1, hosts_per_leaf=2)
    files = render_all(fake_intent(sharp=True, adaptive_routing=True, service_level=1), fabric)
    options = conf_options(files["infiniband/opensm.conf"])
    assert options["sharp_enabled"] == "2"
    assert options["routing_engine"] == "ar_ftree,ftree"
    am = conf_options(files["infiniband/sharp_am.cfg"])
    assert am["root_guids_file"] == options["root_guid_file"]
    assert (am["ib_qpc_sl"], am["ib_sat_qpc_sl"]) == ("1", "1")
    assert am["dynamic_tree_allocation"] == "TRUE"


def test_two_planes_get_a_subnet_each() -> None:
    intent = Intent.model_validate({
        "name": "dual", "fabric": {"transport": "infiniband", "generation": "ndr"},
        "cluster": {"nodes": 4, "node": {"nics": 2, "nic_ports": 2}},
        "topology": {"leaf": {"ports": 8, "speed": "400G"}, "planes": 2}})
    fabric = build(intent)
    files = render_all(intent, fabric)
    assert not any(p.count("/") == 1 for p in files), "no plane-less files"
    for plane in (0, 1):
        inst = install(files, fabric, plane, Path("/tmp/x"))
        options = conf_options(files[f"infiniband/plane{plane + 1}/opensm.conf"])
        assert options["root_guid_file"] == f"/etc/opensm/plane{plane + 1}/root_guids.txt"
        assert options["log_file"] == f"/var/log/opensm-plane{plane + 1}.log"
        plan = guid_plan(fabric)
        assert inst.cns == compute_node_guids(fabric, plan, plane=plane)
        assert inst.roots == root_guids(fabric, plan, plane=plane)
        names = [n for n, sw in plan.switch_guids.items() if f'"{n}"' in
                 inst.files["node-name-map"]]
        assert names and all(f"-p{plane + 1}-" in n for n in names)


def shifted_plan(fabric: Fabric, offset: int = 0x0000_1000_0000) -> GuidPlan:
    """A GUID plan as a real fabric would have it: nothing like fabgen's deterministic one."""
    plan = guid_plan(fabric)
    return GuidPlan({k: v + offset for k, v in plan.switch_guids.items()},
                    {k: v + offset for k, v in plan.ca_guids.items()}, dict(plan.ca_ports),
                    {k: v + offset for k, v in plan.port_guids.items()})


def test_guids_from_ibnetdiscover_by_description() -> None:
    fabric = h.make_fat_tree(leaves=4, spines=2, hosts_per_leaf=4, links_per_pair=2)
    real = shifted_plan(fabric)
    discovered = render_topology(fabric, real)  # ibnetdiscover format, real GUIDs
    assert opensm.guids_from_ibnetdiscover(discovered, fabric) == real
    # NVIDIA switch descriptions and Linux HCA names are matched too
    renamed = discovered.replace('"leaf01"', '"MF0;leaf01:MQM9700/U1"').replace(
        '"node001 HCA-0"', '"node001 mlx5_0"')
    assert renamed != discovered
    assert opensm.guids_from_ibnetdiscover(renamed, fabric) == real

    files = opensm.render_opensm(fabric, real, opensm.OpenSMSettings())
    assert guid_lines(files["infiniband/cn_guids.txt"]) == compute_node_guids(fabric, real)

    partial = render_topology(h.drop_link(fabric, "node003:0"), real)
    with pytest.raises(ValueError, match=r"lacks 1 planned .*node003 HCA-0 port 1 \(mlx5_0\)"):
        opensm.guids_from_ibnetdiscover(partial, fabric)
    filled = opensm.guids_from_ibnetdiscover(partial, fabric, strict=False)
    assert filled.ca_guids[("node003", 0)] == real.ca_guids[("node003", 0)]
    assert filled.port_guids[("node003", 0)] == guid_plan(fabric).port_guids[("node003", 0)]
    unknown = discovered.replace('"leaf02"', '"some-other-switch"')
    with pytest.raises(ValueError, match=r"lacks 1 planned node.*: leaf02"):
        opensm.guids_from_ibnetdiscover(unknown, fabric)


def test_guids_file_in_intent(tmp_path: Path) -> None:
    fabric = h.make_fat_tree(leaves=2, spines=1, hosts_per_leaf=2)
    real = shifted_plan(fabric)
    (tmp_path / "fabric.ibnd").write_text(render_topology(fabric, real))
    settings = opensm.settings_from_intent(fake_intent(guids_file="fabric.ibnd"))
    assert opensm.guid_plan_for(fabric, settings, base=tmp_path) == real
    with pytest.raises(FabgenError, match="cannot read"):
        opensm.guid_plan_for(fabric, settings, base=tmp_path / "nowhere")


# --------------------------------------------------------------------------- real tools


@pytest.mark.realtool
def test_option_names_known_to_opensm(inventory: tuple[Intent, Fabric],
                                      tmp_path: Path) -> None:
    """Every option fabgen writes is one `opensm -c` dumps, except NVIDIA's sharp_enabled."""
    h.require_tools()
    dump = tmp_path / "defaults.conf"
    subprocess.run(["opensm", "-c", str(dump)], capture_output=True, timeout=30, check=False)
    known = {line.split()[0] for line in dump.read_text().splitlines()
             if line.strip() and not line.startswith("#")}
    assert {"routing_engine", "root_guid_file", "qos_sl2vl", "max_op_vls"} <= known
    intent, fabric = inventory
    written: set[str] = set(conf_options(render_all(intent, fabric)["infiniband/opensm.conf"]))
    small = h.make_fat_tree(leaves=4, spines=2, hosts_per_leaf=4, links_per_pair=2)
    for ib in ({"sharp": True, "adaptive_routing": True, "service_level": 2,
                "sm_host": "node002"}, TENANTS):
        written |= set(conf_options(render_all(fake_intent(**ib), small)
                                    ["infiniband/opensm.conf"]))
    dual = Intent.model_validate({
        "name": "dual", "fabric": {"transport": "infiniband", "generation": "ndr"},
        "cluster": {"nodes": 2, "node": {"nics": 1, "nic_ports": 2}},
        "topology": {"leaf": {"ports": 8, "speed": "400G"}, "planes": 2}})
    written |= set(conf_options(render_all(dual, build(dual))["infiniband/plane1/opensm.conf"]))
    assert written - known == {"sharp_enabled"}


@pytest.mark.realtool
def test_inventory_runs_in_opensm(inventory: tuple[Intent, Fabric], tmp_path: Path) -> None:
    """The 1024-GPU inventory: deployment run with the root file, then the cabling proof."""
    h.require_tools()
    intent, fabric = inventory
    files = render_all(intent, fabric)
    deployed = run_plane(files, fabric, 0, tmp_path / "deploy")
    assert "1024 of them CNs" in deployed.log
    proof = run_plane(files, fabric, 0, tmp_path / "proof", with_roots=False)
    assert "Fabric has 16 switches at rank 0 (roots)" in proof.log


@pytest.mark.realtool
def test_tenant_partitions_run_in_opensm(tmp_path: Path) -> None:
    """Tenant partitions, limited default membership and a 3-VL plan, read back over SMP."""
    h.require_tools()
    fabric = h.make_fat_tree(leaves=4, spines=2, hosts_per_leaf=4, links_per_pair=2)
    files = render_all(fake_intent(**TENANTS), fabric)
    result = run_plane(files, fabric, 0, tmp_path)
    pkeys = result.on_up[0]  # type: ignore[index]
    plan = guid_plan(fabric)
    assert pkeys[plan.port_guids[("node001", 0)]] in ((0xFFFF, 0x8101), (0x8101, 0xFFFF))
    assert pkeys[plan.port_guids[("node002", 0)]] in ((0x7FFF, 0x8101), (0x8101, 0x7FFF))
    assert sorted(pkeys[plan.port_guids[("node012", 0)]]) == [0x0102, 0x7FFF]
    assert pkeys[plan.port_guids[("node008", 0)]] == (0x7FFF,)


@pytest.mark.realtool
def test_real_guids_from_discovery_drive_opensm(tmp_path: Path) -> None:
    """GUIDs read from a discovery of the (simulated) real fabric name the ports OpenSM sees."""
    h.require_tools()
    fabric = h.make_fat_tree(leaves=2, spines=2, hosts_per_leaf=3)
    real = shifted_plan(fabric)
    seen = h.run_opensm(render_topology(fabric, real), tmp_path / "discover", discover=True)
    assert seen.ibnetdiscover is not None
    plan = opensm.guids_from_ibnetdiscover(seen.ibnetdiscover, fabric)
    assert plan == dataclasses.replace(real, ca_ports=plan.ca_ports)
    files = opensm.render_opensm(fabric, plan, opensm.OpenSMSettings())
    files["infiniband/topology.ibnet"] = render_topology(fabric, real)
    result = run_plane(files, fabric, 0, tmp_path / "deploy")
    assert f"{len(fabric.hosts)} of them CNs" in result.log


IB_CHOICES: dict[str, list[dict[str, Any]]] = {
    "ndr": [{"model": "qm9700"}, *({"ports": p, "speed": "400G"} for p in range(8, 17, 2))],
    "hdr": [{"model": "qm8700"}, {"model": "qm9700"}],
}


@st.composite
def small_ib_intents(draw: st.DrawFn) -> dict[str, Any]:
    generation = draw(st.sampled_from(sorted(IB_CHOICES)))
    leaf = draw(st.sampled_from(IB_CHOICES[generation]))
    planes = draw(st.sampled_from((1, 1, 2)))
    return {
        "name": "hyp",
        "fabric": {"transport": "infiniband", "generation": generation},
        "cluster": {"nodes": draw(st.integers(1, 10)),
                    "node": {"nics": draw(st.integers(1, 2)), "nic_ports": planes}},
        "topology": {"leaf": leaf, "planes": planes,
                     "style": draw(st.sampled_from(("rail-optimized", "rail-unaware"))),
                     "min_spines": draw(st.integers(1, 3))},
        "infiniband": {"service_level": draw(st.sampled_from((0, 3))),
                       "adaptive_routing": draw(st.booleans()),
                       "sharp": draw(st.booleans())},
    }


@pytest.mark.realtool
# No shrinking: each example runs the simulator, and a failure is reported as found.
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(small_ib_intents())
@example({  # one leaf with hosts: too small for ftree, routed with updn
    "name": "one", "fabric": {"transport": "infiniband", "generation": "hdr"},
    "cluster": {"nodes": 1, "node": {"nics": 2, "nic_ports": 1}},
    "topology": {"leaf": {"model": "qm8700"}, "style": "rail-unaware"}})
@example({  # two planes: the second is cabled to every adapter's second port
    "name": "dual", "fabric": {"transport": "infiniband", "generation": "ndr"},
    "cluster": {"nodes": 6, "node": {"nics": 1, "nic_ports": 2}},
    "topology": {"leaf": {"ports": 8, "speed": "400G"}, "planes": 2},
    "infiniband": {"service_level": 3, "sharp": True, "adaptive_routing": True}})
def test_small_fabrics_run_in_opensm(data: dict[str, Any]) -> None:
    h.require_tools()
    intent = Intent.model_validate(data)
    fabric = build(intent)
    files = render_all(intent, fabric)
    with tempfile.TemporaryDirectory(prefix="fabgen-osm-") as tmp:
        for plane in range(fabric.planes):
            run_plane(files, fabric, plane, Path(tmp) / f"p{plane}-deploy")
            run_plane(files, fabric, plane, Path(tmp) / f"p{plane}-proof", with_roots=False)
