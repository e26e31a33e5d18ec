"""SONiC target: config_db.json checked by the SONiC YANG models, read back against the QosPlan.

Cases are every RoCE inventory with SONiC switches plus two in-test intents that reach what the
inventories do not (three tiers, two planes, an extra class, a core role; ECN and the watchdog
off on an Arista SKU). yanglint runs on one switch per role per case; the read-back checks run
on every switch.
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from fabgen import qos
from fabgen.catalog.ports import switch_port_name
from fabgen.errors import FabgenError
from fabgen.intent import load
from fabgen.intent.loader import LoadedIntent
from fabgen.platforms.sonic import target as sonic
from fabgen.targets.base import RenderContext
from fabgen.topology.build import build
from fabgen.topology.model import Switch
from tests import sonic_yang
from tests.conftest import INVENTORIES, require_tool

FIXTURES = Path(__file__).parent / "fixtures" / "sonic"

# Three tiers, two planes, an extra traffic class, non-default QoS. SN4700 split 4x100G
# (Mellanox-SN4700-C128) is the one NVIDIA SKU whose buffer templates include the t2 set a
# core switch (BackEndSpineRouter) needs.
THREE_TIER_TWO_PLANE = """\
name: roce-3tier-2plane
description: "3-tier dual-plane SONiC test fabric"
fabric: {transport: roce, speed: 100G}
cluster:
  nodes: 16
  node: {model: generic, gpus: 8, nics: 4, nic: connectx-7, nic_ports: 2}
topology:
  style: rail-optimized
  planes: 2
  tiers: 3
  leaf: {model: sn4700, breakout: 4x100G}
qos:
  classes: [{name: storage, dscp: [10, 12], priority: 2, weight: 20}]
  ecn: {min: 100KB, max: 1MB, probability: 20}
  pfc_watchdog: {detection_ms: 300, restoration_ms: 600, action: drop}
  mtu: 9216
  cable_length_m: 40
platforms: {leaf: sonic, spine: sonic, core: sonic}
"""
# ECN and the PFC watchdog off (legal, warned): no WRED_PROFILE, no PFC_WD, and still valid.
NO_ECN_NO_WATCHDOG = """\
name: roce-arista-plain
fabric: {transport: roce, speed: 400G}
cluster:
  nodes: 8
  node: {model: dgx-h100, gpus: 8, nics: 8, nic: connectx-7, nic_ports: 1}
topology:
  leaf: {model: 7060x6-64pe, breakout: 2x400G}
qos:
  ecn: {enabled: false}
  pfc_watchdog: {enabled: false}
  mtu: 9100
platforms: {leaf: sonic, spine: sonic}
"""
EXTRA_INTENTS = {"3tier-2plane": THREE_TIER_TWO_PLANE, "no-ecn-no-watchdog": NO_ECN_NO_WATCHDOG}


def _sonic_inventories() -> list[Path]:
    out = []
    for path in INVENTORIES:
        intent = load(path).intent
        p = intent.platforms
        if intent.fabric.transport == "roce" and "sonic" in (p.leaf, p.spine, p.core):
            out.append(path)
    return out


SONIC_INVENTORIES = _sonic_inventories()
CASES = [p.stem for p in SONIC_INVENTORIES] + list(EXTRA_INTENTS)


@dataclass(frozen=True)
class Case:
    ctx: RenderContext
    files: dict[str, str]

    @property
    def plan(self) -> qos.QosPlan:
        assert self.ctx.qos is not None
        return self.ctx.qos

    def sonic_switches(self) -> list[Switch]:
        return [s for s in self.ctx.fabric.switches if s.platform == "sonic"]

    def config(self, switch: Switch) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.files[f"sonic/{switch.name}/config_db.json"])
        return data

    def host_names(self) -> set[str]:
        return {h.name for h in self.ctx.fabric.hosts}

    def frr(self, switch: Switch) -> str:
        return self.files[f"sonic/{switch.name}/frr.expected.conf"]


def _loaded(name: str, tmp: Path) -> LoadedIntent:
    if name in EXTRA_INTENTS:
        path = tmp / f"{name}.yaml"
        path.write_text(EXTRA_INTENTS[name], encoding="utf-8")
        return load(path)
    return load(next(p for p in SONIC_INVENTORIES if p.stem == name))


def _context(loaded: LoadedIntent) -> RenderContext:
    intent = loaded.intent
    return RenderContext(intent=intent, fabric=build(intent), qos=qos.plan(intent))


@cache
def _case(name: str, tmp: Path) -> Case:
    ctx = _context(_loaded(name, tmp))
    assert sonic.TARGET.applies(ctx)
    return Case(ctx, sonic.TARGET.render(ctx))


@pytest.fixture(scope="module")
def case_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sonic-intents")


def _one_per_role(case: Case) -> list[Switch]:
    seen: dict[str, Switch] = {}
    for s in case.sonic_switches():
        seen.setdefault(s.role, s)
    return list(seen.values())


def test_sonic_inventory_exists() -> None:
    assert "roce-256-sonic" in [p.stem for p in SONIC_INVENTORIES]


# --- (a) yanglint accepts what fabgen writes ------------------------------------------------

@pytest.mark.realtool
@pytest.mark.parametrize("name", CASES)
def test_config_db_validates_with_yanglint(name: str, case_dir: Path) -> None:
    sonic_yang.yang_root()  # yanglint and the models, or a skip saying which is missing
    case = _case(name, case_dir)
    switches = _one_per_role(case)
    # Every role SONiC runs in this fabric (a mixed fabric's other roles are another OS's).
    assert switches and {s.role for s in switches} == {s.role for s in case.sonic_switches()}
    for switch in switches:
        result = sonic_yang.validate(case.config(switch))
        assert result.ok, f"{name}/{switch.name} ({switch.role}):\n{result.stderr}"


@pytest.mark.realtool
@pytest.mark.parametrize("name", CASES)
def test_golden_config_validates_and_matches_device_metadata(name: str, case_dir: Path) -> None:
    """golden_config_db.json holds the switch's whole DEVICE_METADATA (what db_migrator and
    `config load_minigraph --override_config` take from it), valid for the YANG models too."""
    sonic_yang.yang_root()
    case = _case(name, case_dir)
    for switch in _one_per_role(case):
        golden = json.loads(case.files[f"sonic/{switch.name}/golden_config_db.json"])
        assert golden == {"DEVICE_METADATA": case.config(switch)["DEVICE_METADATA"]}
        result = sonic_yang.validate(golden)
        assert result.ok, f"{name}/{switch.name}:\n{result.stderr}"


@pytest.mark.realtool
def test_three_tier_case_covers_core(case_dir: Path) -> None:
    sonic_yang.yang_root()  # yanglint and the models, or a skip saying which is missing
    roles = {s.role for s in _one_per_role(_case("3tier-2plane", case_dir))}
    assert roles == {"leaf", "spine", "core"}


def test_every_table_has_a_model(case_dir: Path) -> None:
    for name in CASES:
        case = _case(name, case_dir)
        for switch in _one_per_role(case):
            unmodelled = set(case.config(switch)) - set(sonic_yang.TABLE_MODULES)
            assert not unmodelled, f"{name}/{switch.name}: tables without a YANG model"


# --- (b) yanglint rejects broken configs, for the reason the fixture names -------------------

def _fixtures() -> list[Path]:
    return sorted(FIXTURES.glob("*.json"))


@pytest.mark.realtool
@pytest.mark.parametrize("fixture", _fixtures(), ids=lambda p: p.stem)
def test_broken_config_is_rejected(fixture: Path, case_dir: Path) -> None:
    sonic_yang.yang_root()  # yanglint and the models, or a skip saying which is missing
    spec = json.loads(fixture.read_text(encoding="utf-8"))
    case = _case("roce-256-sonic", case_dir)
    leaf = case.ctx.fabric.switches_of("leaf")[0]
    config = copy.deepcopy(case.config(leaf))
    for table, key, fld, value in spec["set"]:
        assert key in config[table], f"{fixture.name}: {table}|{key} is not in the base config"
        config[table][key][fld] = value
    result = sonic_yang.validate(config)
    assert not result.ok, f"{fixture.name}: yanglint accepted it ({spec['about']})"
    assert spec["expect"] in result.stderr, result.stderr


@pytest.mark.realtool
def test_unmodelled_table_is_a_failure(case_dir: Path) -> None:
    sonic_yang.yang_root()  # yanglint and the models, or a skip saying which is missing
    case = _case("roce-256-sonic", case_dir)
    config = case.config(case.ctx.fabric.switches_of("leaf")[0])
    config["SITE_NOTES"] = {"rack": {"row": "7"}}
    result = sonic_yang.validate(config)
    assert not result.ok
    assert "SITE_NOTES has no YANG model" in result.stderr


# --- (c) read back every switch against the plan --------------------------------------------

@pytest.mark.parametrize("name", CASES)
def test_qos_reads_back_as_planned(name: str, case_dir: Path) -> None:
    case = _case(name, case_dir)
    plan = case.plan
    pfc = {str(p) for p in plan.pfc_priorities}
    for switch in case.sonic_switches():
        cfg = case.config(switch)
        where = f"{name}/{switch.name}"
        ports = cfg["PORT"]
        assert ports, where
        for port, entry in ports.items():
            assert entry["mtu"] == str(plan.mtu), f"{where} {port} mtu"
        for port in ports:
            qmap = cfg["PORT_QOS_MAP"][port]
            assert set(qmap["pfc_enable"].split(",")) == pfc, f"{where} {port} pfc_enable"
            if plan.watchdog.enabled:
                assert set(qmap["pfcwd_sw_enable"].split(",")) == pfc, f"{where} {port} pfcwd"
            else:
                assert "pfcwd_sw_enable" not in qmap, f"{where} {port} pfcwd"
            dscp_map = cfg["DSCP_TO_TC_MAP"][qmap["dscp_to_tc_map"]]
            assert set(dscp_map) == {str(d) for d in range(64)}, f"{where} every DSCP mapped"
            assert dscp_map[str(plan.rdma.dscp[0])] == str(plan.rdma.priority), f"{where} RDMA"
            assert dscp_map[str(plan.cnp.dscp[0])] == str(plan.cnp.priority), f"{where} CNP"
            for dscp, prio in enumerate(plan.dscp_to_priority):
                assert dscp_map[str(dscp)] == str(prio), f"{where} DSCP {dscp}"
            pg_map = cfg["TC_TO_PRIORITY_GROUP_MAP"][qmap["tc_to_pg_map"]]
            for tc, pg in enumerate(plan.priority_to_pg):
                assert pg_map[str(tc)] == str(pg), f"{where} TC {tc} -> PG"
            rdma_queue = cfg["QUEUE"][f"{port}|{plan.rdma.queue}"]
            if plan.ecn is None:
                assert "wred_profile" not in rdma_queue, where
                continue
            wred = cfg["WRED_PROFILE"][rdma_queue["wred_profile"]]
            assert wred["ecn"] == "ecn_all", where
            for colour in ("green", "yellow", "red"):
                assert wred[f"{colour}_min_threshold"] == str(plan.ecn.min_bytes), where
                assert wred[f"{colour}_max_threshold"] == str(plan.ecn.max_bytes), where
                assert wred[f"{colour}_drop_probability"] == str(plan.ecn.probability), where


@pytest.mark.parametrize("name", CASES)
def test_watchdog_and_buffers_read_back(name: str, case_dir: Path) -> None:
    case = _case(name, case_dir)
    plan = case.plan
    wd = plan.watchdog
    for switch in case.sonic_switches():
        cfg = case.config(switch)
        where = f"{name}/{switch.name}"
        if not wd.enabled:
            assert "PFC_WD" not in cfg, where
            assert cfg["DEVICE_METADATA"]["localhost"]["default_pfcwd_status"] == "disable"
        else:
            assert cfg["PFC_WD"]["GLOBAL"] == {"POLL_INTERVAL": str(wd.poll_ms)}, where
            for port in cfg["PORT"]:
                entry = cfg["PFC_WD"][port]
                assert entry["action"] == wd.action, f"{where} {port}"
                assert entry["detection_time"] == str(wd.detection_ms), f"{where} {port}"
                assert entry["restoration_time"] == str(wd.restoration_ms), f"{where} {port}"
        numbers = {switch_port_name(switch, n): n for n in range(1, switch.radix + 1)}
        buffers = sonic.switch_buffers(case.ctx, switch)
        heads = {h.port.name: h for h in buffers.ports}
        host_ports = {p for p, entry in cfg["PORT"].items()
                      if entry.get("description", "").split(":")[0] in case.host_names()}
        for port, entry in cfg["PORT"].items():
            # host links are short, switch-to-switch runs long; a spare port takes its role's
            metres = (plan.cable_length_m if port in host_ports else plan.fabric_cable_length_m)
            if "description" not in entry:
                number = numbers[port]
                metres = (plan.cable_length_m if switch.role == "leaf"
                          and number <= switch.down_ports else plan.fabric_cable_length_m)
                if switch.role == "spine" and number > switch.down_ports:
                    metres = plan.cable_m("spine-core")
            head = heads[port]
            assert head.port.cable_m == metres, f"{where} {port} cable class"
            assert cfg["CABLE_LENGTH"][sonic.MAP_NAME][port] == f"{head.cable_key_m}m"
            for prio in plan.pfc_priorities:
                pg = cfg["BUFFER_PG"].get(f"{port}|{prio}") if "BUFFER_PG" in cfg else None
                if buffers.model is None or buffers.model.layout is None:
                    assert pg is None, f"{where} {port}: no vendor model, no fabgen headroom"
                elif buffers.mode == "dynamic":
                    assert pg == {"profile": "NULL"}, f"{where} {port}"
                elif pg is None:  # spare Mellanox port: buffermgrd adds it when it comes up
                    assert entry["admin_status"] == "down" and head.rebuilt_by_buffermgrd
                else:
                    assert head.profile is not None
                    profile = cfg["BUFFER_PROFILE"][pg["profile"]]
                    assert profile["xoff"] == str(head.profile.xoff), f"{where} {port} xoff"
                    assert profile["xon"] == str(head.profile.xon), f"{where} {port} xon"
                    assert profile["size"] == str(head.profile.size), f"{where} {port} size"
        assert host_ports or switch.role != "leaf", where


_NEIGHBOR = re.compile(r"^ neighbor (\S+) remote-as (\d+)$", re.M)


@pytest.mark.parametrize("name", CASES)
def test_frr_has_one_neighbor_per_fabric_link(name: str, case_dir: Path) -> None:
    case = _case(name, case_dir)
    fabric = case.ctx.fabric
    by_name = fabric.by_name
    for switch in case.sonic_switches():
        text = case.frr(switch)
        where = f"{name}/{switch.name}"
        expected: dict[str, str] = {}
        uplinks = 0
        down_to: Counter[str] = Counter()
        for link in fabric.links:
            if link.kind == "node-leaf" or switch.name not in (link.a_device, link.z_device):
                continue
            mine = link.a_device == switch.name
            peer = by_name[link.z_device if mine else link.a_device]
            address = link.z_address if mine else link.a_address
            assert address is not None
            expected[str(address.ip)] = str(peer.asn)
            uplinks += mine
            down_to[peer.name] += not mine
        found = _NEIGHBOR.findall(text)
        assert len(found) == len(expected), where
        assert dict(found) == expected, where
        assert f"router bgp {switch.asn}\n" in text, where
        assert f" bgp router-id {switch.loopback}\n" in text, where
        # frrcfgd's templates end these two lines with a space (sonic_frr).
        assert f"  network {switch.loopback}/32 \n" in text, where
        assert " bgp bestpath as-path multipath-relax \n" in text, where
        # ECMP as wide as the uplinks (a route to another leaf) or the parallel links to one
        # lower switch (a route to a prefix behind it), whichever is wider.
        width = max(uplinks, max(down_to.values(), default=0))
        assert re.findall(r"^  maximum-paths (\d+)$", text, re.M) == [str(width)], where
        bgp = case.config(switch)["BGP_NEIGHBOR"]
        assert {k.removeprefix("default|"): v["asn"] for k, v in bgp.items()} == expected, \
            f"{where} config_db vs FRR"


def test_leaf_announces_its_host_subnets(case_dir: Path) -> None:
    case = _case("roce-256-sonic", case_dir)
    leaf = case.ctx.fabric.switches_of("leaf")[0]
    text = case.frr(leaf)
    for link in case.ctx.fabric.links_of("node-leaf"):
        if link.z_device == leaf.name:
            assert link.z_address is not None
            assert f"  network {link.z_address.network} \n" in text


def test_render_is_deterministic(case_dir: Path, tmp_path: Path) -> None:
    ctx = _context(_loaded("roce-256-sonic", case_dir))
    assert sonic.TARGET.render(ctx) == sonic.TARGET.render(ctx)
    leaf = ctx.fabric.switches_of("leaf")[0]
    assert sonic.config_db_text(sonic.device_config(ctx, leaf)) == \
        _case("roce-256-sonic", case_dir).files[f"sonic/{leaf.name}/config_db.json"]


def test_applies_only_to_roce_fabrics_with_sonic() -> None:
    for path in INVENTORIES:
        loaded = load(path)
        intent = loaded.intent
        plan = qos.plan(intent) if intent.fabric.transport == "roce" else None
        ctx = RenderContext(intent=intent, fabric=build(intent), qos=plan)
        has_sonic = any(s.platform == "sonic" for s in ctx.fabric.switches)
        assert sonic.TARGET.applies(ctx) == (plan is not None and has_sonic), path.name


# --- (d) text from the intent cannot add a line or a key ------------------------------------

def _key_paths(value: Any, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    if not isinstance(value, dict):
        return set()
    out: set[tuple[str, ...]] = set()
    for key, sub in value.items():
        out.add((*prefix, key))
        out |= _key_paths(sub, (*prefix, key))
    return out


# Every character the intent's SAFE_TEXT allows that means something to a CLI, JSON or FRR.
HOSTILE = 'x", "y": "z ,}{ #! router bgp 1 = (a) /b @c +d : neighbor 1.2.3.4 remote-as 6'
HOSTILE_SAFE = "x:, y= z, # router bgp 1 = (a) /b @c +d : neighbor 1.2.3.4 remote-as 6"


def test_description_cannot_add_lines_or_keys(tmp_path: Path) -> None:
    def render(description: str) -> dict[str, str]:
        text = THREE_TIER_TWO_PLANE.replace('"3-tier dual-plane SONiC test fabric"',
                                            json.dumps(description))
        path = tmp_path / "intent.yaml"
        path.write_text(text, encoding="utf-8")
        ctx = _context(load(path))
        return sonic.TARGET.render(ctx)

    with pytest.raises(FabgenError):
        render(HOSTILE)  # quotes and braces do not even pass the intent's validation
    with pytest.raises(FabgenError):
        render("ok\nrouter bgp 666")
    plain = render("plain")
    hostile = render(HOSTILE_SAFE)
    assert plain.keys() == hostile.keys()
    for path, text in plain.items():
        if path.endswith(".json"):
            assert _key_paths(json.loads(hostile[path])) == _key_paths(json.loads(text)), path
        else:
            assert len(hostile[path].splitlines()) == len(text.splitlines()), path
            assert _NEIGHBOR.findall(hostile[path]) == _NEIGHBOR.findall(text), path


def test_port_description_is_sanitised() -> None:
    unsafe = 'gpu0001:mlx5_0"; rm -rf'
    assert sonic._UNSAFE_DESCRIPTION.sub("_", unsafe) == "gpu0001:mlx5_0___rm_-rf"


# --- FRR: the underlay config parsed by FRR's own vtysh ------------------------------------

FRR_CONFIGS = sorted((Path(__file__).resolve().parent.parent / "golden").glob(
    "*/sonic/*/frr.expected.conf"))


@pytest.mark.realtool
@pytest.mark.parametrize("path", FRR_CONFIGS, ids=lambda p: f"{p.parts[-4]}/{p.parts[-2]}")
def test_frr_config_parses_in_vtysh(path: Path) -> None:
    require_tool("vtysh")
    proc = subprocess.run(["vtysh", "--dryrun", "-f", str(path)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.realtool
def test_vtysh_rejects_a_broken_frr_config(tmp_path: Path) -> None:
    require_tool("vtysh")
    text = FRR_CONFIGS[0].read_text().replace(" bgp bestpath as-path multipath-relax",
                                              " bgp bestpath as-path multipath-relaxx")
    broken = tmp_path / "frr.conf"
    broken.write_text(text)
    proc = subprocess.run(["vtysh", "--dryrun", "-f", str(broken)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode != 0
    assert "multipath-relaxx" in proc.stdout + proc.stderr


# --- what the telemetry reads ------------------------------------------------------------------

# SONiC's default flex counter groups, as sonic-buildimage files/build_templates/init_cfg.json.j2
# (commit 086b03bd) enables them on a non-DPU switch: ACL with a 10 s poll, the others at the
# orchagent's own interval.
INIT_CFG_FLEX_COUNTERS = {
    "ACL": {"FLEX_COUNTER_STATUS": "enable", "POLL_INTERVAL": "10000"},
    **{g: {"FLEX_COUNTER_STATUS": "enable"} for g in (
        "PORT", "PORT_PHY_ATTR", "RIF", "QUEUE", "PFCWD", "PG_WATERMARK", "PG_DROP",
        "QUEUE_WATERMARK", "BUFFER_POOL_WATERMARK", "PORT_BUFFER_DROP")},
}


@pytest.mark.parametrize("name", CASES)
def test_flex_counters_keep_sonic_defaults_and_add_wred_ecn(name: str, case_dir: Path) -> None:
    case = _case(name, case_dir)
    for switch in case.sonic_switches():
        table = case.config(switch)["FLEX_COUNTER_TABLE"]
        assert table == {**INIT_CFG_FLEX_COUNTERS,
                         "WRED_ECN_QUEUE": {"FLEX_COUNTER_STATUS": "enable"}}, switch.name


def test_flex_counter_defaults_are_sonic_buildimage_init_cfg() -> None:
    """Cross-check against the real template (FABGEN_UPSTREAM=<dir with owner+name checkouts>)."""
    import os

    root = os.environ.get("FABGEN_UPSTREAM")
    if not root:
        pytest.skip("FABGEN_UPSTREAM (a directory holding owner+name checkouts) is not set")
    text = (Path(root) / "sonic-net+sonic-buildimage" / "files" / "build_templates"
            / "init_cfg.json.j2").read_text()
    start = text.index("{", text.index('"FLEX_COUNTER_TABLE"')) + 1
    block = text[start:text.index("{%- if sonic_asic_platform", start)]
    groups = dict(re.findall(r'"([A-Z_]+)": \{\s*([^}]*)\}', block))
    parsed = {g: dict(re.findall(r'"(\w+)": "(\w+)"', body)) for g, body in groups.items()}
    assert parsed == INIT_CFG_FLEX_COUNTERS == sonic.FLEX_COUNTER_DEFAULTS


@pytest.mark.parametrize("name", CASES)
def test_pfc_queue_map_has_the_name_sonic_gnmi_reads(name: str, case_dir: Path) -> None:
    """sonic-gnmi finds the PFC watchdog's queues through MAP_PFC_PRIORITY_TO_QUEUE|AZURE
    (virtual_db.go GetPfcwdMap); every port's PORT_QOS_MAP points at that map."""
    case = _case(name, case_dir)
    for switch in case.sonic_switches():
        cfg = case.config(switch)
        assert list(cfg["MAP_PFC_PRIORITY_TO_QUEUE"]) == ["AZURE"]
        assert {e["pfc_to_queue_map"] for e in cfg["PORT_QOS_MAP"].values()} == {"AZURE"}
        lossless_queue = cfg["MAP_PFC_PRIORITY_TO_QUEUE"]["AZURE"][
            str(case.plan.rdma.priority)]
        assert lossless_queue == str(case.plan.rdma.queue)
