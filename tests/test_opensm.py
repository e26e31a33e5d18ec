"""The OpenSM target, pure: what each file says, for the inventory and for hand-built fabrics.

test_opensm_ibsim.py runs the same files through the real ibsim + OpenSM.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fabgen.errors import FabgenError
from fabgen.intent import load
from fabgen.intent.models import Intent, adaptive_routing_on
from fabgen.targets import nccl, opensm, opensm_plan, opensm_sms, sm_bringup
from fabgen.targets.base import RenderContext
from fabgen.targets.ibnetdiscover import (
    GuidPlan,
    compute_node_guids,
    guid_plan,
    guids_from_ibnetdiscover,
    render_topology,
    root_guids,
)
from fabgen.topology.build import build
from fabgen.topology.index import FabricIndex
from fabgen.topology.model import Fabric
from tests.conftest import require_tool

try:  # pytest puts tests/ on sys.path while it has no __init__.py, the repo root once it has
    import ibsim_harness as h
    import opensm_run as r
except ImportError:
    from tests import ibsim_harness as h  # type: ignore[no-redef]
    from tests import opensm_run as r  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent

# The files OpenSM and sharp_am read that may hold a GUID (topology.ibnet, the simulator's
# input, and check-routing.sh are not installed into OpenSM).
OPENSM_FILES = ("opensm.conf", "partitions.conf", "qos-policy.conf", "sharp_am.cfg",
                "root_guids.txt", "cn_guids.txt", "node-name-map")


@pytest.fixture(scope="module")
def inventory() -> tuple[Intent, Fabric]:
    intent = load(r.IB_INVENTORY).intent
    return intent, build(intent)


def with_ib(intent: Intent, **ib: Any) -> Intent:
    """The intent with infiniband fields replaced, validated again."""
    data = intent.model_dump(mode="json")
    data["infiniband"].update(ib)
    return Intent.model_validate(data)


def shifted_plan(fabric: Fabric, offset: int = 0x0000_1000_0000) -> GuidPlan:
    """A GUID plan as a real fabric would have it: nothing like fabgen's deterministic one."""
    plan = guid_plan(fabric)
    return GuidPlan({k: v + offset for k, v in plan.switch_guids.items()},
                    {k: v + offset for k, v in plan.ca_guids.items()}, dict(plan.ca_ports),
                    {k: v + offset for k, v in plan.port_guids.items()})


SPEED = {"hdr": "200G", "ndr": "400G", "xdr": "800G"}


def small(nodes: int = 6, generation: str = "ndr", **ib: Any) -> Intent:
    """A small fabric of custom 8-port switches: 2 leaves, 2 dedicated hosts running plain
    OpenSM (one opensm.conf each; `management: {kind: ufm}` for UFM's layout)."""
    ib["management"] = {"kind": "opensm", **ib.get("management", {})}
    return Intent.model_validate({
        "name": "small", "fabric": {"transport": "infiniband", "generation": generation},
        "cluster": {"nodes": nodes, "node": {"nics": 1, "gpus": 1}},
        "topology": {"style": "rail-unaware",
                     "leaf": {"ports": 8, "speed": SPEED[generation]}},
        "infiniband": ib})


# --------------------------------------------------------------------------- the inventory


def test_inventory_files_without_real_guids(inventory: tuple[Intent, Fabric]) -> None:
    """No infiniband.guids_file, a UFM pair: one configuration for both nodes at UFM's paths,
    no `guid`, no GUID file at all; the storage subnet's beside it."""
    intent, fabric = inventory
    files = r.render_all(intent, fabric)
    assert sorted(p for p in files if not p.startswith("infiniband/storage/")) == [
        f"infiniband/{n}" for n in (
            "check-routing.sh", "topology.ibnet", "ufm/appliance.cli", "ufm/opensm.conf",
            "ufm/qos-policy.conf", "ufm/sharp_am.cfg")]
    assert r.render_all(intent, fabric) == files, "deterministic"
    text = files["infiniband/ufm/opensm.conf"]
    conf = r.conf_options(text)
    assert conf["sm_priority"] == "15"
    assert "guid" not in conf and "# guid" not in text, "UFM binds gv.cfg's fabric_interface"
    assert "ufm01 ib0 / ufm02 ib0" in text
    # NVIDIA's OpenSM on NDR: adaptive routing by default, its ar_updn engine, updn behind it
    assert conf["routing_engine"] == "ar_updn,updn"
    assert conf["lmc"] == "0"
    assert "ftree" not in text, "no ftree words when the chain is ar_updn,updn"
    assert "root_guid_file" not in conf and "cn_guid_file" not in conf
    assert "node_name_map_name" not in conf
    assert conf["partition_config_file"] == "/opt/ufm/files/conf/opensm/partitions.conf"
    assert conf["qos_policy_file"] == "/opt/ufm/files/conf/opensm/qos-policy.conf"
    # SHARP: two operational VLs, SL 1 alone on VL 1, both VLs arbitrated
    assert conf["sharp_enabled"] == "2"
    assert (conf["max_op_vls"], conf["qos_max_vls"]) == ("2", "2")
    assert conf["qos_sl2vl"] == ",".join(["0", "1"] + ["0"] * 14)
    assert conf["qos_vlarb_low"] == "0:64,1:64" and conf["qos_vlarb_high"] == "0:0"
    am = r.conf_options(files["infiniband/ufm/sharp_am.cfg"])
    # smx_protocol 1, UCX: SHARP 3.13's default for new installs (sharp_version 3.13)
    assert (am["ib_qpc_sl"], am["ib_sat_qpc_sl"], am["smx_protocol"]) == ("1", "1", "1")
    assert "root_guids_file" not in am
    assert "/opt/ufm/files/conf/sharp/sharp_am.cfg" in files["infiniband/ufm/sharp_am.cfg"]
    # no tenants: UFM's own partitions.conf (the default partition) is all there is
    assert "infiniband/ufm/partitions.conf.user_ext" not in files
    # the appliances run no shell: check-routing.sh runs on a node, with UFM's log copied over
    check = files["infiniband/check-routing.sh"]
    assert 'log="${1:-opensm.log}"' in check and 'ca="${CA:-mlx5_0}"' in check
    assert "(/opt/ufm/files/log/opensm.log on the master) copied beside it" in check
    # NCCL: the same adaptive routing and SL story
    env = {e.key: e.value for e in nccl.entries(RenderContext(intent, fabric))}
    assert env["NCCL_IB_ADAPTIVE_ROUTING"] == "1" and env["NCCL_IB_SL"] == "0"
    assert env["NCCL_COLLNET_ENABLE"] == "1"
    assert env["NCCL_IB_PKEY"] is None  # no tenants: NCCL's index 0, the default partition


def test_no_planned_guid_reaches_an_opensm_file(inventory: tuple[Intent, Fabric]) -> None:
    intent, fabric = inventory
    files = r.render_all(intent, fabric)
    plan = guid_plan(fabric)
    planned = {f"{g:016x}" for g in (*plan.switch_guids.values(), *plan.ca_guids.values(),
                                     *plan.port_guids.values())}
    topology = files["infiniband/topology.ibnet"]
    assert any(g in topology for g in planned), "the simulator's input has the plan's GUIDs"
    assert "fabgen's plan for the simulator, not your hardware's" in topology
    for path, text in files.items():
        if path.rsplit("/", 1)[-1] in OPENSM_FILES:
            assert not re.search(r"0x[0-9a-f]{16}", text), path


def test_inventory_files_with_real_guids(inventory: tuple[Intent, Fabric],
                                         tmp_path: Path) -> None:
    """guids_file names the discovered fabric: the GUID files appear at UFM's paths, all from
    it; ar_updn reads the root list (no ftree: no compute-node list)."""
    intent, fabric = inventory
    real = shifted_plan(fabric)
    (tmp_path / "fabric.ibnd").write_text(render_topology(fabric, real, real_guids=True))
    files = r.render_all(with_ib(intent, guids_file="fabric.ibnd"), fabric, base_dir=tmp_path)
    assert {"infiniband/ufm/root_guids.txt", "infiniband/ufm/ib-node-name-map"} <= set(files)
    assert "infiniband/ufm/cn_guids.txt" not in files
    conf = r.conf_options(files["infiniband/ufm/opensm.conf"])
    assert "guid" not in conf
    assert conf["root_guid_file"] == "/opt/ufm/files/conf/opensm/root_guids.txt"
    assert "cn_guid_file" not in conf
    assert conf["node_name_map_name"] == "/opt/ufm/files/conf/opensm/ib-node-name-map"
    roots = r.guid_lines(files["infiniband/ufm/root_guids.txt"])
    assert roots == root_guids(fabric, real) and len(roots) == 16
    names = files["infiniband/ufm/ib-node-name-map"]
    assert f'0x{real.switch_guids["spine-01"]:016x} "spine-01"' in names
    assert f'0x{real.ca_guids[("ufm02", 1)]:016x} "ufm02 mlx5_1"' in names
    # every adapter as rdma-ndd names it ("<host> <RDMA device>"), none as HCA-<n>
    dgx = fabric.hosts[0]
    assert f'0x{real.ca_guids[(dgx.name, 1)]:016x} "{dgx.name} mlx5_3"' in names
    assert "HCA-" not in names
    assert len([line for line in names.splitlines() if line.startswith("0x")]) == \
        48 + 127 * 8 + 2 * 2
    am = r.conf_options(files["infiniband/ufm/sharp_am.cfg"])
    assert am["root_guids_file"] == conf["root_guid_file"]
    # check-routing.sh accepts either UFM node's port as the master's
    check = files["infiniband/check-routing.sh"]
    assert (f'master_guids=("0x{real.port_guids[("ufm01", 0)]:x}" '
            f'"0x{real.port_guids[("ufm02", 0)]:x}")') in check
    # the appliance (the default): its CLI has no command for the root GUIDs, which it says
    roots = len(r.guid_lines(files["infiniband/ufm/root_guids.txt"]))
    assert f"and {roots} root GUIDs (ufm/root_guids.txt)" in " ".join(
        files["infiniband/ufm/appliance.cli"].replace("\n# ", " ").split())
    software = r.render_all(with_ib(intent, guids_file="fabric.ibnd",
                                    management={"kind": "ufm", "ufm": "software",
                                                "hosts": [{"name": "ufm01"}, {"name": "ufm02"}],
                                                "ports": 2}), fabric, base_dir=tmp_path)
    setup = software["infiniband/ufm/ufm-setup.sh"]
    assert 'INSTALL_NAMES=("qos-policy.conf" "ib-node-name-map" "root_guids.txt")' in setup
    assert files["infiniband/topology.ibnet"] == render_topology(fabric, real, real_guids=True)
    # ftree (upstream here) reads the compute-node list too
    ftree = r.render_all(with_ib(intent, guids_file="fabric.ibnd", opensm="upstream",
                                 sharp=False), fabric, base_dir=tmp_path)
    cns = r.guid_lines(ftree["infiniband/ufm/cn_guids.txt"])
    assert cns == compute_node_guids(fabric, real) and len(cns) == 1016
    assert not {real.port_guids[("ufm01", d)] for d in (0, 1)} & set(cns)
    assert r.conf_options(ftree["infiniband/ufm/opensm.conf"])["cn_guid_file"] == \
        "/opt/ufm/files/conf/opensm/cn_guids.txt"


def test_real_guids_are_read_once_per_render(inventory: tuple[Intent, Fabric], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The OpenSM, topology, ibdm and bring-up targets share the render's one parse of
    guids_file (RenderContext.derived), and every one of them prints the real GUIDs."""
    from fabgen.targets import ibdm

    intent, fabric = inventory
    real = shifted_plan(fabric)
    (tmp_path / "fabric.ibnd").write_text(render_topology(fabric, real, real_guids=True))
    parsed: list[int] = []
    parse = opensm_sms.guids_from_ibnetdiscover

    def counting(text: str, of: Fabric) -> GuidPlan:
        parsed.append(1)
        return parse(text, of)

    monkeypatch.setattr(opensm_sms, "guids_from_ibnetdiscover", counting)
    ctx = RenderContext(intent=with_ib(intent, guids_file="fabric.ibnd"), fabric=fabric,
                        base_dir=tmp_path)
    files = {**opensm.TARGET.render(ctx), **opensm.TOPOLOGY_TARGET.render(ctx),
             **ibdm.TARGET.render(ctx)}
    bringup = sm_bringup.bringup_markdown(ctx)
    assert parsed == [1]
    spine = f"{real.switch_guids['spine-01']:016x}"
    assert spine in files["infiniband/ufm/ib-node-name-map"]
    assert spine in files["bringup/infiniband/node-name-map"]
    assert f"{real.port_guids[('ufm01', 0)]:016x}" in bringup


def test_target_applies_to_infiniband_only(inventory: tuple[Intent, Fabric]) -> None:
    intent, fabric = inventory
    roce = load(ROOT / "inventories" / "roce-256-sonic.yaml").intent
    roce_ctx = RenderContext(intent=roce, fabric=build(roce))
    assert not opensm.TARGET.applies(roce_ctx)
    assert not opensm.TOPOLOGY_TARGET.applies(roce_ctx)
    assert opensm.TARGET.applies(RenderContext(intent=intent, fabric=fabric))
    assert opensm.TARGET.name == "opensm" and opensm.TOPOLOGY_TARGET.name == "ibtopology"


# --------------------------------------------------------------------------- routing


@pytest.mark.parametrize(("build_", "engine", "ar", "generation", "fits", "want"), [
    ("upstream", "ftree", None, "ndr", True, "ftree,updn"),  # upstream: never an AR engine
    ("upstream", "updn", None, "xdr", True, "updn"),
    ("upstream", "ftree", None, "ndr", False, "updn"),
    ("nvidia", "ftree", None, "ndr", True, "ar_updn,updn"),  # NVIDIA's default on NDR/XDR
    ("nvidia", "ftree", None, "xdr", True, "ar_updn,updn"),
    ("nvidia", "ftree", None, "hdr", True, "ftree,updn"),  # no AR by default before NDR
    ("nvidia", "ftree", True, "hdr", True, "ar_updn,updn"),
    ("nvidia", "ftree", False, "ndr", True, "ftree,updn"),
    ("nvidia", "ar_ftree", None, "ndr", True, "ar_ftree,updn"),
    ("nvidia", "ar_updn", None, "hdr", True, "ar_updn,updn"),
    ("nvidia", "updn", False, "ndr", True, "updn"),
    ("nvidia", "ar_ftree", None, "ndr", False, "ar_updn,updn"),
])
def test_routing_engines(build_: str, engine: str, ar: bool | None, generation: str,
                         fits: bool, want: str) -> None:
    settings = opensm_plan.OpenSMSettings(
        routing_engine=engine, opensm=build_,  # type: ignore[arg-type]
        adaptive_routing=adaptive_routing_on(ar, engine, build_, generation),
        generation=generation)
    got = opensm_plan.routing_engines(settings, fits_ftree=fits)
    assert got == want
    for name in got.split(","):
        assert build_ in opensm_plan.ENGINE_BUILDS[name], "only engines this build knows"


@pytest.mark.parametrize(("ib", "first", "validates"), [
    ({"opensm": "upstream"}, "ftree", True),
    ({"opensm": "nvidia"}, "ar_updn", False),  # NDR: NVIDIA's adaptive-routing default
    ({"opensm": "nvidia", "routing_engine": "ar_ftree"}, "ar_ftree", True),
    ({"opensm": "upstream", "routing_engine": "updn"}, "updn", False),
])
def test_no_guid_files_note_describes_the_engine_that_runs(ib: dict[str, str], first: str,
                                                           validates: bool) -> None:
    """Without GUID files only ftree checks the fat tree (osm_ucast_ftree.c); updn and ar_updn
    pick their roots by min-hop (osm_ucast_updn.c) and route a miscabled tree silently: the
    note beside routing_engine must not promise a check the first engine never makes."""
    intent = small(**ib)
    text = r.render_all(intent, build(intent))["infiniband/ufm01/opensm.conf"]
    assert r.conf_options(text)["routing_engine"].split(",")[0] == first
    routing = text.split("# --- Routing", 1)[1].split("\nrouting_engine", 1)[0]
    flat = " ".join(line.lstrip("# ") for line in routing.splitlines())
    assert f"{first} then" in flat
    assert ("it also validates the fat tree" in flat) == validates
    assert ("It does not validate the fat tree" in flat) != validates
    # The report's bring-up step 2 tells the same story.
    report = sm_bringup.bringup_markdown(RenderContext(intent, build(intent)))
    step = report.split("2. **Discover the fabric", 1)[1].split("\n", 1)[0]
    assert ("(ftree finds its roots and compute nodes itself)" in step) == validates
    assert (f"({first} picks its roots itself by hop counts" in step) != validates
    assert ("does not check the fat tree" in step) != validates


def test_engine_builds_say_which_opensm_knows_what() -> None:
    assert opensm_plan.ENGINE_BUILDS["ar_updn"] == ("nvidia",)
    assert opensm_plan.ENGINE_BUILDS["ar_ftree"] == ("nvidia",)
    assert {"upstream", "nvidia"} == set(opensm_plan.ENGINE_BUILDS["ftree"])


@pytest.mark.parametrize(("build_", "generation", "ar"), [
    (b, g, a) for b in ("nvidia", "upstream") for g in ("hdr", "ndr", "xdr")
    for a in (None, True, False) if not (b == "upstream" and a)])
def test_nccl_adaptive_routing_matches_the_engine(build_: str, generation: str,
                                                  ar: bool | None) -> None:
    """NCCL_IB_ADAPTIVE_ROUTING=1 exactly when opensm.conf runs an AR engine."""
    intent = small(generation=generation, opensm=build_, adaptive_routing=ar)
    fabric = build(intent)
    conf = r.conf_options(r.render_all(intent, fabric)["infiniband/ufm01/opensm.conf"])
    env = {e.key: e.value for e in nccl.entries(RenderContext(intent, fabric))}
    adaptive = conf["routing_engine"].startswith("ar_")
    assert env["NCCL_IB_ADAPTIVE_ROUTING"] == ("1" if adaptive else "0")
    assert adaptive == (build_ == "nvidia" and (ar or (ar is None and generation != "hdr")))


def test_ftree_needs_two_leaves_with_hosts() -> None:
    one = build(Intent.model_validate({
        "name": "one", "fabric": {"transport": "infiniband", "generation": "hdr"},
        "cluster": {"nodes": 1, "node": {"nics": 2}},
        "topology": {"leaf": {"model": "qm8700"}, "style": "rail-unaware"},
        "infiniband": {"management": {"hosts": []}}}))
    assert not opensm_plan.ftree_fits(one)
    options = r.conf_options(r.render_all(r.fake_intent(), one)["infiniband/opensm.conf"])
    assert options["routing_engine"] == "updn"
    assert opensm_plan.ftree_fits(h.make_fat_tree(leaves=2, spines=1, hosts_per_leaf=1))


# --------------------------------------------------------------------------- SL and VL plan


def test_sl_plan_from_service_level() -> None:
    one = opensm_plan.sl_plan(opensm_plan.OpenSMSettings(service_level=0))
    assert (one.vls, one.max_op_vls, set(one.sl2vl)) == (1, 1, {0})
    two = opensm_plan.sl_plan(opensm_plan.OpenSMSettings(service_level=3))
    assert two.sl2vl[3] == 1 and set(two.sl2vl) - {1} == {0}
    assert (two.vls, two.max_op_vls, two.default_sl) == (2, 2, 0)
    assert two.vlarb_low == ((0, opensm_plan.BEST_EFFORT_WEIGHT),
                             (1, opensm_plan.COMPUTE_WEIGHT))
    assert two.vlarb_high == ((0, 0),) and two.high_limit == 0


def test_sl_plan_gives_sharp_a_vl_of_its_own() -> None:
    plan = opensm_plan.sl_plan(opensm_plan.OpenSMSettings(sharp=True, sharp_sl=1))
    assert plan.sl2vl == (0, 1, *([0] * 14))
    assert (plan.vls, plan.max_op_vls) == (2, 2)  # SHARP guide: max_op_vls 2
    assert plan.vlarb_low == ((0, opensm_plan.CREDITS_PER_4K), (1, opensm_plan.SHARP_WEIGHT))
    # another SHARP SL, with the compute traffic on SL 3: three VLs, SHARP alone on VL 2
    three = opensm_plan.sl_plan(opensm_plan.OpenSMSettings(sharp=True, sharp_sl=5,
                                                           service_level=3))
    assert (three.sl2vl[0], three.sl2vl[3], three.sl2vl[5]) == (0, 1, 2)
    assert [v for sl, v in enumerate(three.sl2vl) if v == 2] == [2]
    assert three.max_op_vls == 3  # VL0-3 covers VL2
    with pytest.raises(FabgenError, match="is the compute SL") as err:
        opensm_plan.sl_plan(opensm_plan.OpenSMSettings(sharp=True, sharp_sl=0))
    assert err.value.diagnostics[0].loc == ("infiniband", "sharp_sl")
    # a traffic class may place SHARP's SL, on a VL no other class uses
    classes = (opensm_plan.TrafficClassSpec("compute", 0, default=True),
               opensm_plan.TrafficClassSpec("sharp", 1, vl=3, weight=32))
    placed = opensm_plan.sl_plan(opensm_plan.OpenSMSettings(sharp=True, traffic_classes=classes))
    assert placed.sl2vl[1] == 3 and (3, 32) in placed.vlarb_low
    shared = (opensm_plan.TrafficClassSpec("compute", 0, default=True),
              opensm_plan.TrafficClassSpec("sharp", 1, vl=0))
    with pytest.raises(FabgenError, match="shares VL 0 with 'compute'"):
        opensm_plan.sl_plan(opensm_plan.OpenSMSettings(sharp=True, traffic_classes=shared))


def test_sharp_off_keeps_one_vl() -> None:
    fabric = h.make_fat_tree(leaves=2, spines=1, hosts_per_leaf=2)
    files = r.render_all(r.fake_intent(), fabric)
    options = r.conf_options(files["infiniband/opensm.conf"])
    assert (options["max_op_vls"], options["qos_sl2vl"]) == ("1", ",".join(["0"] * 16))
    assert "infiniband/sharp_am.cfg" not in files and "sharp_enabled" not in options


def test_sl_plan_from_traffic_classes() -> None:
    classes = (
        opensm_plan.TrafficClassSpec("bulk", 0, weight=64, default=True, ipoib=True),
        opensm_plan.TrafficClassSpec("compute", 3, weight=192, partitions=("train",)),
        opensm_plan.TrafficClassSpec("storage", 5, weight=32),
        opensm_plan.TrafficClassSpec("control", 6, vl=7, weight=16, priority="high"),
    )
    plan = opensm_plan.sl_plan(opensm_plan.OpenSMSettings(service_level=3,
                                                          traffic_classes=classes),
                               {"train": 0x0101})
    assert plan.sl2vl[:7] == (0, 0, 0, 1, 0, 2, 7)
    assert (plan.vls, plan.max_op_vls) == (8, 4)  # VL0-7
    assert plan.vlarb_high == ((7, 16),) and plan.high_limit == opensm_plan.HIGH_LIMIT
    assert plan.vlarb_low == ((0, 64), (1, 192), (2, 32))
    assert plan.classes[1].pkeys == (0x0101,)

    with pytest.raises(FabgenError, match="service_level 4 has no traffic class"):
        opensm_plan.sl_plan(opensm_plan.OpenSMSettings(service_level=4, traffic_classes=classes),
                            {"train": 0x0101})
    with pytest.raises(FabgenError, match="unknown partition 'train'"):
        opensm_plan.sl_plan(opensm_plan.OpenSMSettings(service_level=3, traffic_classes=classes))
    dup = (*classes, opensm_plan.TrafficClassSpec("again", 5))
    with pytest.raises(FabgenError, match="SL 5 is given to two"):
        opensm_plan.sl_plan(opensm_plan.OpenSMSettings(service_level=3, traffic_classes=dup),
                            {"train": 0x0101})


# --------------------------------------------------------------------------- partitions

def test_tenant_partitions_and_qos_policy() -> None:
    fabric = h.make_fat_tree(leaves=4, spines=2, hosts_per_leaf=4, links_per_pair=2)
    plan = guid_plan(fabric)  # as discovered: tenant members are port GUIDs
    files = opensm.render_opensm(FabricIndex(fabric), plan,
                                 opensm_plan.settings_from_intent(r.fake_intent(**r.TENANTS)))
    parts = r.parse_partitions(files["infiniband/partitions.conf"])
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
    options = r.conf_options(files["infiniband/opensm.conf"])
    assert options["qos_sl2vl"].split(",")[:5] == ["0", "0", "1", "0", "2"]
    assert options["qos_vlarb_low"] == "0:64,1:192,2:32"
    assert (options["max_op_vls"], options["qos_max_vls"]) == ("3", "3")  # VL0-3 covers VL2


def test_tenant_partitions_wait_for_real_guids() -> None:
    """Without real GUIDs tenant members cannot be named: the partitions wait, and nobody is
    cut off meanwhile (every host a full member of the default partition)."""
    fabric = h.make_fat_tree(leaves=4, spines=2, hosts_per_leaf=4, links_per_pair=2)
    files = r.render_all(r.fake_intent(**r.TENANTS), fabric)
    parts = r.parse_partitions(files["infiniband/partitions.conf"])
    assert parts == [(0x7FFF, [("ALL", True)])]
    assert "# tenant-a=0x0101: not written yet" in files["infiniband/partitions.conf"]


def test_standby_sms_stay_full_members_of_the_default_partition() -> None:
    intent = small(partitions=[{"name": "a", "pkey": 5, "hosts": ["gpu000[1-3]"]}])
    fabric = build(intent)
    real = shifted_plan(fabric)
    settings = opensm_plan.settings_from_intent(intent)
    text = opensm.render_opensm(FabricIndex(fabric), real, settings)["infiniband/partitions.conf"]
    default = r.parse_partitions(text)[0][1]
    standby = f"0x{real.port_guids[('ufm02', 0)]:016x}"
    assert default == [("ALL", False), ("ALL_SWITCHES", True), ("SELF", True), (standby, True)]


def test_partition_errors_name_the_field() -> None:
    fabric = h.make_fat_tree(leaves=2, spines=1, hosts_per_leaf=2)
    bad = [
        ({"name": "x", "pkey": "0x7fff"}, "reserved", ("pkey",)),
        ({"name": "x y", "pkey": 1}, "cannot be written", ("name",)),
        ({"name": "x", "pkey": 1, "hosts": ["gpu*"]}, "no host matches", ("hosts",)),
    ]
    for spec, message, field in bad:
        with pytest.raises(FabgenError, match=message) as err:
            r.render_all(r.fake_intent(partitions=[spec]), fabric)
        assert err.value.diagnostics[0].loc == ("infiniband", "partitions", 0, *field)
    with pytest.raises(FabgenError, match="used twice"):
        r.render_all(r.fake_intent(partitions=[{"name": "a", "pkey": 5},
                                               {"name": "b", "pkey": 5}]), fabric)


# --------------------------------------------------------------------------- subnet managers


def test_sm_hosts_bind_their_ports_with_priorities() -> None:
    guids = {"ufm01": ["0x0002c90300aa0001", "0x0002c90300aa0002"],
             "ufm02": ["0x0002c90300bb0001", "0x0002c90300bb0002"]}
    intent = small(management={"hosts": [{"name": n, "port_guids": g}
                                         for n, g in guids.items()]}, sm_priority=12)
    fabric = build(intent)
    sms = opensm.sm_ports(FabricIndex(fabric), None, opensm_plan.settings_from_intent(intent))
    assert [(s.host, s.priority, s.guid, s.dedicated) for s in sms] == [
        ("ufm01", 12, 0x0002C90300AA0001, True), ("ufm02", 11, 0x0002C90300BB0001, True)]
    cabled = {(x.a_device, x.a_port): (x.z_device, x.z_port) for x in fabric.sm_links}
    assert [(s.leaf, s.leaf_port) for s in sms] == [cabled["ufm01", 0], cabled["ufm02", 0]]
    files = r.render_all(intent, fabric)
    for sm in sms:
        options = r.conf_options(files[f"infiniband/{sm.host}/opensm.conf"])
        assert options["guid"] == f"0x{sm.guid:016x}" and options["sm_priority"] == str(
            sm.priority)
    check = files["infiniband/check-routing.sh"]
    assert 'master_guids=("0x2c90300aa0001")' in check  # as sminfo prints it
    assert 'ca="${CA:-mlx5_0}"' in check


def test_compute_host_as_sm_host() -> None:
    intent = small(management={"hosts": []}, sm_host="gpu0002")
    fabric = build(intent)
    assert fabric.sm_hosts == () and fabric.sm_links == ()
    files = r.render_all(intent, fabric)
    options = r.conf_options(files["infiniband/gpu0002/opensm.conf"])
    assert options["sm_priority"] == "15" and "guid" not in options
    real = shifted_plan(fabric)
    bound = opensm.render_opensm(FabricIndex(fabric), real,
                                 opensm_plan.settings_from_intent(intent))
    assert r.conf_options(bound["infiniband/gpu0002/opensm.conf"])["guid"] == \
        f"0x{real.port_guids[('gpu0002', 0)]:016x}"
    with pytest.raises(FabgenError, match="not a host"):
        opensm.sm_ports(FabricIndex(fabric), None, dataclasses.replace(
            opensm_plan.settings_from_intent(intent), sm_host="nope"))


def test_sharp_on_a_compute_sm_host_is_warned_and_said(tmp_path: Path) -> None:
    """NVIDIA SHARP: the aggregation manager runs with the master SM on "a dedicated server
    ... [that] cannot serve as a compute node". sm_host puts both on a compute node: a
    warning (an error with --strict), and sharp_am.cfg does not claim a dedicated host."""
    text = ("name: t\nfabric: {transport: infiniband, generation: ndr}\n"
            "cluster: {nodes: 8, node: {model: dgx-h100}}\n"
            "topology: {leaf: {model: qm9700}}\n"
            "infiniband: {sharp: true, sm_host: gpu0001, management: {hosts: []}}\n")
    path = tmp_path / "t.yaml"
    path.write_text(text)
    loaded = load(path)
    warned = [w.render() for w in loaded.warnings if w.loc == ("infiniband", "sm_host")]
    assert [w.loc for w in loaded.warnings if w.loc[:1] == ("infiniband",)] == [
        ("infiniband", "ipoib"), ("infiniband", "sm_host")]
    assert warned == [
        f"{path}:5:36: warning: infiniband.sm_host: SHARP's aggregation manager runs beside "
        "the master SM, here on compute host 'gpu0001'; NVIDIA's SHARP guide wants a dedicated "
        "server that is not a compute node (remove sm_host and keep "
        "infiniband.management.hosts (the default: two UFM hosts on reserved leaf ports))"]
    with pytest.raises(FabgenError):
        load(path, strict=True)
    am = r.render_all(loaded.intent, build(loaded.intent))["infiniband/sharp_am.cfg"]
    assert "(gpu0001), here a compute node" in am and "on a host that is not a compute" not in am
    # The dedicated hosts (the default) draw no warning and keep the plain header.
    path.write_text(text.replace("sm_host: gpu0001, management: {hosts: []}", "sharp_sl: 1"))
    loaded = load(path)
    assert [w.loc for w in loaded.warnings if w.loc[:1] == ("infiniband",)] == [
        ("infiniband", "ipoib")]  # SHARP wants IPoIB; no other infiniband warning
    am = r.render_all(loaded.intent, build(loaded.intent))["infiniband/ufm/sharp_am.cfg"]
    assert "(ufm01), on a host that is not a compute" in am


def test_no_sm_host_leaves_one_unbound_config() -> None:
    fabric = h.make_fat_tree(leaves=2, spines=1, hosts_per_leaf=2)
    files = r.render_all(r.fake_intent(), fabric)
    text = files["infiniband/opensm.conf"]
    assert "guid" not in r.conf_options(text)
    assert "OpenSM binds the first port that is up" in text


def test_two_planes_get_a_subnet_each() -> None:
    intent = Intent.model_validate({
        "name": "dual", "fabric": {"transport": "infiniband", "generation": "ndr"},
        "cluster": {"nodes": 4, "node": {"nics": 2, "nic_ports": 2}},
        "topology": {"leaf": {"ports": 8, "speed": "400G"}, "planes": 2},
        "infiniband": {"opensm": "upstream"}})
    fabric = build(intent)
    files = r.render_all(intent, fabric)
    assert not any(p.count("/") == 1 for p in files), "no plane-less files"
    # each UFM host has one port on each plane, and an SM (and config) per plane
    for host in fabric.sm_hosts:
        assert sorted(hp.plane for hp in host.ports) == [0, 1]
    for plane in (0, 1):
        inst = r.install(files, fabric, plane, Path("/tmp/x"))
        assert inst.host == "ufm01"
        for host in ("ufm01", "ufm02"):
            options = r.conf_options(files[f"infiniband/plane{plane + 1}/{host}/opensm.conf"])
            assert options["log_file"] == f"/var/log/opensm-plane{plane + 1}.log"
            assert options["partition_config_file"] == \
                f"/etc/opensm/plane{plane + 1}/partitions.conf"
            port = next(hp for hp in next(h_ for h_ in fabric.sm_hosts if h_.name == host).ports
                        if hp.plane == plane)
            assert f"{host} {port.rdma_device}" in files[
                f"infiniband/plane{plane + 1}/{host}/opensm.conf"]
        topology = files[f"infiniband/plane{plane + 1}/topology.ibnet"]
        assert f'"ufm01 HCA-{plane}"' in topology and f'"ufm01 HCA-{1 - plane}"' not in topology


# --------------------------------------------------------------------------- GUIDs


def test_guids_from_ibnetdiscover_by_description() -> None:
    fabric = h.make_fat_tree(leaves=4, spines=2, hosts_per_leaf=4, links_per_pair=2)
    real = shifted_plan(fabric)
    discovered = render_topology(fabric, real)  # ibnetdiscover format, real GUIDs
    assert guids_from_ibnetdiscover(discovered, fabric) == real
    # NVIDIA switch descriptions and Linux HCA names are matched too
    renamed = discovered.replace('"leaf01"', '"MF0;leaf01:MQM9700/U1"').replace(
        '"node001 HCA-0"', '"node001 mlx5_0"')
    assert renamed != discovered
    assert guids_from_ibnetdiscover(renamed, fabric) == real

    files = opensm.render_opensm(FabricIndex(fabric), real, opensm_plan.OpenSMSettings())
    assert r.guid_lines(files["infiniband/cn_guids.txt"]) == compute_node_guids(fabric, real)

    partial = render_topology(h.drop_link(fabric, "node003:0"), real)
    with pytest.raises(ValueError, match=r"lacks 1 planned .*node003 mlx5_0 port 1"):
        guids_from_ibnetdiscover(partial, fabric)
    filled = guids_from_ibnetdiscover(partial, fabric, strict=False)
    assert filled.ca_guids[("node003", 0)] == real.ca_guids[("node003", 0)]
    assert filled.port_guids[("node003", 0)] == guid_plan(fabric).port_guids[("node003", 0)]
    unknown = discovered.replace('"leaf02"', '"some-other-switch"')
    with pytest.raises(ValueError, match=r"lacks 1 planned node.*: leaf02"):
        guids_from_ibnetdiscover(unknown, fabric)


def test_guids_of_sm_hosts_are_discovered_too() -> None:
    fabric = build(small())
    real = shifted_plan(fabric)
    discovered = render_topology(fabric, real).replace('"ufm02 HCA-1"', '"ufm02 mlx5_1"')
    assert guids_from_ibnetdiscover(discovered, fabric) == real
    without = render_topology(dataclasses.replace(
        fabric, sm_hosts=fabric.sm_hosts[:1],
        sm_links=tuple(x for x in fabric.sm_links if x.a_device == "ufm01")), real)
    with pytest.raises(ValueError, match="ufm02 mlx5_0"):
        guids_from_ibnetdiscover(without, fabric)


def test_guids_file_in_intent(tmp_path: Path) -> None:
    fabric = h.make_fat_tree(leaves=2, spines=1, hosts_per_leaf=2)
    real = shifted_plan(fabric)
    (tmp_path / "fabric.ibnd").write_text(render_topology(fabric, real))
    settings = opensm_plan.settings_from_intent(r.fake_intent(guids_file="fabric.ibnd"))
    assert opensm.guid_plan_for(fabric, settings, base=tmp_path) == real
    assert opensm.guid_plan_for(fabric, opensm_plan.settings_from_intent(r.fake_intent())) \
        is None
    with pytest.raises(FabgenError, match="cannot read"):
        opensm.guid_plan_for(fabric, settings, base=tmp_path / "nowhere")


# --------------------------------------------------------------------------- check script


@pytest.mark.realtool
def test_check_routing_script_passes_shellcheck(inventory: tuple[Intent, Fabric],
                                                tmp_path: Path) -> None:
    require_tool("shellcheck")
    intent, fabric = inventory
    dual = Intent.model_validate({
        "name": "dual", "fabric": {"transport": "infiniband", "generation": "ndr"},
        "cluster": {"nodes": 4, "node": {"nics": 2, "nic_ports": 2}},
        "topology": {"leaf": {"ports": 8, "speed": "400G"}, "planes": 2}})
    scripts = [r.render_all(intent, fabric)["infiniband/check-routing.sh"],
               r.render_all(dual, build(dual))["infiniband/plane2/check-routing.sh"],
               r.render_all(r.fake_intent(), h.make_fat_tree(2, 1, 2))[
                   "infiniband/check-routing.sh"]]
    for i, text in enumerate(scripts):
        path = tmp_path / f"check{i}.sh"
        path.write_text(text)
        result = subprocess.run(["shellcheck", "-s", "bash", str(path)], capture_output=True,
                                text=True, check=False, timeout=60)
        assert result.returncode == 0, result.stdout


def test_report_speaks_of_the_engine_that_runs(inventory: tuple[Intent, Fabric]) -> None:
    """ar_updn,updn: the report's single-failure note says up/down routes a broken tree
    silently (no ftree check, no ftree fallback story); with ftree first it tells ftree's."""
    from fabgen.targets import report

    intent, fabric = inventory
    for ib, engine, says in (
            ({}, "ar_updn", "ar_updn does not check that and routes what is left"),
            ({"opensm": "upstream", "sharp": False}, "ftree",
             "by OpenSM's ftree check: without root_guid_file OpenSM refuses ftree")):
        variant = with_ib(intent, **ib)
        text = report.TARGET.render(RenderContext(variant, fabric))["report.md"]
        section = text.split("## Single failures", 1)[1].split("\n## ", 1)[0]
        assert says in section, section
        assert ("ftree" in section) == (engine == "ftree")
        conf = r.render_all(variant, fabric)["infiniband/ufm/opensm.conf"]
        assert ("ftree" in conf) == (engine == "ftree")
