"""EOS and NVUE configs read back: every QoS value equals the QosPlan, BGP and interfaces match the
fabric, the QoS text is the same on every switch of a platform, and intent text cannot inject."""

from __future__ import annotations

import copy
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabgen import qos, underlay
from fabgen.catalog.ports import native_lanes
from fabgen.errors import FabgenError
from fabgen.intent import load
from fabgen.intent.models import Intent
from fabgen.platforms.common import render as render_common
from fabgen.platforms.eos import target as eos
from fabgen.platforms.nvue import target as nvue
from fabgen.qos import QosPlan
from fabgen.targets.base import RenderContext, UnsupportedPlan
from fabgen.templating import PLATFORMS as PLATFORM_DIRS
from fabgen.topology.build import build
from fabgen.topology.model import Fabric, Switch
from tests.conftest import INVENTORIES

MIXED = next(p for p in INVENTORIES if p.name == "roce-eos-nvue-2to1.yaml")


# --- cases: every inventory that uses eos or nvue, plus crafted variants -----------------------

def _uses_switch_targets(path: Path) -> bool:
    intent = load(path).intent
    p = intent.platforms
    return intent.fabric.transport == "roce" and bool({p.leaf, p.spine, p.core} & {"eos", "nvue"})


def _variant_swapped(data: dict[str, Any]) -> dict[str, Any]:
    """NVUE leaves, EOS spines, two extra classes, CNP on 7, other ECN and watchdog numbers."""
    data["topology"]["leaf"] = {"model": "sn5600", "breakout": "2x400G"}
    data["topology"]["spine"] = {"model": "7060x6-64pe", "breakout": "2x400G"}
    data["platforms"] = {"leaf": "nvue", "spine": "eos"}
    data["qos"].update({
        "cnp": {"dscp": 46, "priority": 7},
        "classes": [{"name": "storage", "dscp": [10, 12], "priority": 1, "weight": 20},
                    {"name": "control", "dscp": [16], "priority": 2, "weight": 10}],
        "ecn": {"min": "100KB", "max": "2MB", "probability": 20},
        "pfc_watchdog": {"detection_ms": 300, "restoration_ms": 600, "action": "drop"},
        "mtu": 9100,
    })
    return data


def _variant_bare(data: dict[str, Any]) -> dict[str, Any]:
    """ECN and the PFC watchdog off, no extra class."""
    data["qos"].update({"classes": [], "ecn": {"enabled": False},
                        "pfc_watchdog": {"enabled": False}})
    return data


VARIANTS = {"swapped": _variant_swapped, "bare": _variant_bare}


@dataclass
class Case:
    name: str
    ctx: RenderContext
    plan: QosPlan
    eos: dict[str, str] = field(default_factory=dict)  # switch -> config text
    nvue: dict[str, str] = field(default_factory=dict)  # switch -> startup.yaml text

    @property
    def fabric(self) -> Fabric:
        return self.ctx.fabric


def _write_variant(tmp: Path, name: str, data: dict[str, Any]) -> Path:
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _case(name: str, path: Path) -> Case:
    intent = load(path).intent
    plan = qos.plan(intent)
    ctx = RenderContext(intent=intent, fabric=build(intent), qos=plan)
    case = Case(name, ctx, plan)
    for target in (eos.TARGET, nvue.TARGET):
        if target.applies(ctx):
            for rel, text in target.render(ctx).items():
                parts = rel.split("/")
                if parts[0] == "eos":
                    case.eos[parts[1].removesuffix(".cfg")] = text
                else:
                    case.nvue[parts[1]] = text
    return case


CASE_NAMES = [p.stem for p in INVENTORIES if _uses_switch_targets(p)] + list(VARIANTS)


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Case]:
    out = {p.stem: _case(p.stem, p) for p in INVENTORIES if _uses_switch_targets(p)}
    tmp = tmp_path_factory.mktemp("variants")
    base = yaml.safe_load(MIXED.read_text())
    for name, change in VARIANTS.items():
        out[name] = _case(name, _write_variant(tmp, name, change(copy.deepcopy(base))))
    return out


@pytest.fixture(params=CASE_NAMES)
def case(request: pytest.FixtureRequest, cases: dict[str, Case]) -> Case:
    return cases[request.param]


def test_every_switch_is_rendered(case: Case) -> None:
    for sw in case.fabric.switches:
        rendered = case.eos if sw.platform == "eos" else case.nvue
        assert sw.name in rendered, f"{case.name}: {sw.name} ({sw.platform}) not rendered"


# --- a small EOS CLI parser: sections by indentation ------------------------------------------

@dataclass
class Node:
    text: str
    children: list[Node] = field(default_factory=list)

    def child(self, prefix: str) -> list[Node]:
        return [c for c in self.children if c.text.startswith(prefix)]

    def walk(self) -> Iterator[Node]:
        for c in self.children:
            yield c
            yield from c.walk()


def parse_eos(text: str) -> Node:
    """The config as a tree: a line is the child of the nearest line above it with a smaller
    indent. `!` lines are separators and are dropped, as EOS and napalm drop them."""
    root = Node("")
    stack: list[tuple[int, Node]] = [(-1, root)]
    for raw in text.splitlines():
        assert "\t" not in raw and raw == raw.rstrip(), f"bad whitespace: {raw!r}"
        if not raw.strip() or raw.strip().startswith("!"):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        assert indent % 3 == 0, f"EOS indents by 3: {raw!r}"
        node = Node(raw.strip())
        while stack[-1][0] >= indent:
            stack.pop()
        stack[-1][1].children.append(node)
        stack.append((indent, node))
    return root


def _fabric_links(fabric: Fabric, sw: Switch) -> int:
    return sum(1 for link in fabric.links if link.kind != "node-leaf"
               and sw.name in (link.a_device, link.z_device))


def _ecn_line(line: str) -> tuple[int, int, int]:
    m = re.fullmatch(r"random-detect ecn minimum-threshold (\d+) bytes maximum-threshold (\d+) "
                     r"bytes max-mark-probability (\d+)", line)
    assert m, line
    return int(m[1]), int(m[2]), int(m[3])


def _ms(seconds: str) -> Decimal:
    return Decimal(seconds) * 1000


def _eos_dscp_map(root: Node) -> dict[int, int]:
    out: dict[int, int] = {}
    for node in root.child("qos map dscp "):
        m = re.fullmatch(r"qos map dscp ([\d ]+) to traffic-class (\d)", node.text)
        assert m, node.text
        for dscp in m[1].split():
            assert int(dscp) not in out, f"DSCP {dscp} mapped twice"
            out[int(dscp)] = int(m[2])
    return out


def test_eos_qos_values_equal_the_plan(case: Case) -> None:
    plan = case.plan
    extras = [c for c in plan.classes if c.name not in ("rdma", "cnp", "default")]
    specs = {s.queue: s for s in render_common.queue_specs(plan, "eos")}
    for name, text in case.eos.items():
        root = parse_eos(text)
        where = f"{case.name}/{name}"
        dscp_map = _eos_dscp_map(root)
        assert dscp_map[plan.rdma.dscp[0]] == plan.rdma.priority, where
        assert dscp_map[plan.cnp.dscp[0]] == plan.cnp.priority, where
        for cls in extras:
            assert {dscp_map[d] for d in cls.dscp} == {cls.priority}, f"{where}: {cls.name}"
        assert [dscp_map[d] for d in range(64)] == list(plan.dscp_to_priority), where

        wd = {n.text.rsplit(" ", 1)[0]: n.text.rsplit(" ", 1)[1]
              for n in root.child("priority-flow-control pause watchdog")}
        if plan.watchdog.enabled:
            prefix = "priority-flow-control pause watchdog default"
            assert _ms(wd[f"{prefix} timeout"]) == plan.watchdog.detection_ms, where
            assert _ms(wd[f"{prefix} recovery-time"]) == plan.watchdog.restoration_ms, where
            assert _ms(wd[f"{prefix} polling-interval"]) == plan.watchdog.poll_ms, where
            assert wd["priority-flow-control pause watchdog action"] == plan.watchdog.action
        else:
            assert wd == {}, where

        interfaces = root.child("interface Ethernet")
        assert interfaces, where
        for intf in interfaces:
            at = f"{where} {intf.text}"
            assert [c.text for c in intf.child("mtu ")] == [f"mtu {plan.mtu}"], at
            no_drop = {int(c.text.split()[2]) for c in
                       intf.child("priority-flow-control priority ") if c.text.endswith("no-drop")}
            assert no_drop == set(plan.pfc_priorities), at
            assert len(intf.child("priority-flow-control pause watchdog")) == \
                int(plan.watchdog.enabled), at
            assert [c.text for c in intf.child("qos trust")] == ["qos trust dscp"], at
            queues = {int(q.text.split()[1]): q for q in intf.child(eos.QUEUE_COMMAND + " ")}
            assert set(queues) == set(specs), at
            rdma_q = queues[plan.rdma.queue]
            ecn_lines = [c.text for c in rdma_q.child("random-detect ecn minimum-threshold")]
            if plan.ecn is None:
                assert not [n for n in intf.walk() if n.text.startswith("random-detect")], at
            else:
                assert len(ecn_lines) == 1, at
                # marks counted where they are made, nowhere else (AVD uc_tx_queues
                # random_detect.ecn.count): ANTA and the ecn-marked-pkts leaf read them
                counted = [q for q, node in queues.items()
                           if node.child("random-detect ecn count")]
                assert counted == [plan.rdma.queue], at
                minimum, maximum, probability = _ecn_line(ecn_lines[0])
                assert minimum == plan.ecn.min_bytes, at
                assert maximum == plan.ecn.max_bytes, at
                assert probability == plan.ecn.probability, at
            cnp_q = queues[plan.cnp.queue]
            assert [c.text for c in cnp_q.children] == ["priority strict"], at
            percents = {}
            for q, node in queues.items():
                bw = node.child("bandwidth percent ")
                if specs[q].strict:
                    assert not bw, at
                else:
                    assert node.child("no priority"), at
                    percents[q] = int(bw[0].text.split()[2])
            assert sum(percents.values()) == 100, at
            assert percents == {q: s.percent for q, s in specs.items() if not s.strict}, at


def test_eos_interfaces_and_bgp_match_the_fabric(case: Case) -> None:
    for name, text in case.eos.items():
        sw = case.fabric.by_name[name]
        root = parse_eos(text)
        where = f"{case.name}/{name}"
        assert [n.text for n in root.child("hostname")] == [f"hostname {name}"], where
        names = [n.text.split()[1] for n in root.child("interface ")]
        assert len(names) == len(set(names)), f"{where}: an interface appears twice"
        cabled = sum(1 for link in case.fabric.links if name in (link.a_device, link.z_device))
        ethernet = [n for n in root.child("interface Ethernet")]
        assert len(ethernet) == sw.radix, f"{where}: every front-panel port is configured"
        addressed = [n for n in ethernet if n.child("ip address ")]
        assert len(addressed) == cabled, where
        spare = [n for n in ethernet if n.child("shutdown")]
        assert len(spare) == sw.radix - cabled and not set(map(id, spare)) & \
            set(map(id, addressed)), where
        addresses = [c.text for n in root.child("interface ") for c in n.child("ip address ")]
        assert len(addresses) == len(set(addresses)), where
        (bgp,) = root.child("router bgp ")
        assert bgp.text == f"router bgp {sw.asn}", where
        assert bgp.child("router-id")[0].text == f"router-id {sw.loopback}", where
        neighbors = [n for n in bgp.child("neighbor ") if " remote-as " in n.text]
        assert len(neighbors) == _fabric_links(case.fabric, sw), where
        peers = {str(n.text.split()[1]) for n in neighbors}
        assert len(peers) == len(neighbors), where
        (af,) = bgp.child("address-family ipv4")
        assert f"network {sw.loopback}/32" in [c.text for c in af.children], where


def test_eos_speed_on_every_split_port(case: Case) -> None:
    for name, text in case.eos.items():
        sw = case.fabric.by_name[name]
        for intf in parse_eos(text).child("interface Ethernet"):
            speeds = [c.text for c in intf.child("speed ")]
            lanes = native_lanes(sw.model) // sw.breakout
            expected = [] if sw.breakout == 1 else [f"speed {sw.speed_gbps}g-{lanes}"]
            assert speeds == expected, name


# --- NVUE: yaml.safe_load, refusing duplicate keys ---------------------------------------------

class _UniqueKeyLoader(yaml.SafeLoader):
    """safe_load that fails on a key given twice (PyYAML would keep the last silently)."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    keys = [loader.construct_object(k) for k, _ in node.value]
    dup = [k for k, n in Counter(keys).items() if n > 1]
    assert not dup, f"duplicate keys {dup}"
    return loader.construct_mapping(node)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
                                 _construct_mapping)


def load_nvue(text: str) -> dict[str, Any]:
    docs = yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader subclass
    assert isinstance(docs, list) and len(docs) == 1 and list(docs[0]) == ["set"]
    result: dict[str, Any] = docs[0]["set"]
    return result


def _addressed(tree: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in tree["interface"].items() if k.startswith("swp") and "ip" in v}


def test_nvue_qos_values_equal_the_plan(case: Case) -> None:
    plan = case.plan
    extras = [c for c in plan.classes if c.name not in ("rdma", "cnp", "default")]
    for name, text in case.nvue.items():
        tree = load_nvue(text)
        where = f"{case.name}/{name}"
        q = tree["qos"]
        assert q["roce"] == {"enable": "on", "mode": "lossless"}, where
        mapping = q["mapping"]["default-global"]
        assert mapping["trust"] == "l3", where
        sp = {int(d): v["switch-priority"] for d, v in mapping["dscp"].items()}
        assert sp[plan.rdma.dscp[0]] == plan.rdma.priority, where
        assert sp[plan.cnp.dscp[0]] == plan.cnp.priority, where
        for cls in extras:
            assert {sp[d] for d in cls.dscp} == {cls.priority}, f"{where}: {cls.name}"
        assert [sp[d] for d in range(64)] == list(plan.dscp_to_priority), where
        tc_of = {int(p): v["traffic-class"]
                 for p, v in q["egress-queue-mapping"]["default-global"]["switch-priority"].items()}
        for cls in plan.classes:
            assert tc_of[cls.priority] == cls.queue, f"{where}: {cls.name}"

        pfc = q["pfc"]["default-global"]
        assert {int(p) for p in pfc["switch-priority"]} == set(plan.pfc_priorities), where
        # one PFC profile for every port: the longest cable class this switch's ports use
        switch = case.ctx.fabric.by_name[name]
        kinds = {lk.kind for lk in case.ctx.fabric.links
                 if switch.name in (lk.a_device, lk.z_device)}
        assert pfc["cable-length"] == max(plan.cable_m(k) for k in kinds), where
        # Cumulus derives xoff/xon/port-buffer from cable-length and RoCE mode owns the pools
        # (Cumulus 5.12 QoS guide): fabgen writes none of them.
        assert set(pfc) == {"switch-priority", "tx", "rx", "cable-length"}, where
        assert not {"traffic-pool", "advance-buffer-config"} & set(q), where

        ecn = q["congestion-control"]["default-global"]["traffic-class"]
        rdma = ecn[str(plan.rdma.queue)]
        if plan.ecn is None:
            assert {v["ecn"] for v in ecn.values()} == {"disable"}, where
        else:
            assert rdma["ecn"] == "enable", where
            assert rdma["min-threshold"] == plan.ecn.min_bytes, where
            assert rdma["max-threshold"] == plan.ecn.max_bytes, where
            assert rdma["probability"] == plan.ecn.probability, where
            assert [k for k, v in ecn.items() if v["ecn"] == "enable"] == \
                [str(c.queue) for c in plan.classes if c.ecn], where

        sched = q["egress-scheduler"]["default-global"]["traffic-class"]
        assert sched[str(plan.cnp.queue)] == {"mode": "strict"}, where
        dwrr = {int(tc): v["bw-percent"] for tc, v in sched.items() if v["mode"] == "dwrr"}
        assert sum(dwrr.values()) == 100, where
        assert dwrr == {s.queue: s.percent for s in render_common.queue_specs(plan, "nvue")
                        if not s.strict}, where

        if plan.watchdog.enabled:
            wd = q["pfc-watchdog"]
            assert wd["polling-interval"] == plan.watchdog.poll_ms, where
            detection = plan.watchdog.detection_ms
            assert (wd["robustness"] - 1) * wd["polling-interval"] < detection, where
            assert wd["robustness"] * wd["polling-interval"] >= detection, where
        else:
            assert "pfc-watchdog" not in q, where

        for port, entry in _addressed(tree).items():
            assert entry["link"]["mtu"] == plan.mtu, f"{where} {port}"
            expected = {"pfc-watchdog": {"state": "enable"}} if plan.watchdog.enabled else None
            assert entry.get("qos") == expected, f"{where} {port}"


def test_nvue_interfaces_and_bgp_match_the_fabric(case: Case) -> None:
    for name, text in case.nvue.items():
        sw = case.fabric.by_name[name]
        tree = load_nvue(text)
        where = f"{case.name}/{name}"
        assert tree["system"]["hostname"] == name, where
        cabled = sum(1 for link in case.fabric.links if name in (link.a_device, link.z_device))
        addressed = _addressed(tree)
        assert len(addressed) == cabled, where
        addresses = [a for v in addressed.values() for a in v["ip"]["address"]]
        assert len(addresses) == len(set(addresses)), where
        for port, entry in tree["interface"].items():
            if "breakout" in entry.get("link", {}):
                assert "ip" not in entry, f"{where}: {port} is split and addressed"
                lanes = native_lanes(sw.model) // sw.breakout
                assert entry["link"]["breakout"] == {f"{sw.breakout}x": {"lanes-per-port": lanes}}
        assert tree["interface"]["lo"]["ip"]["address"] == {f"{sw.loopback}/32": {}}, where
        assert tree["router"]["bgp"] == {"autonomous-system": sw.asn, "enable": "on",
                                         "router-id": str(sw.loopback)}, where
        bgp = tree["vrf"]["default"]["router"]["bgp"]
        assert len(bgp["neighbor"]) == _fabric_links(case.fabric, sw), where
        assert {v["type"] for v in bgp["neighbor"].values()} == {"numbered"}, where
        af = bgp["address-family"]["ipv4-unicast"]
        assert f"{sw.loopback}/32" in af["network"], where
        assert 1 <= af["multipaths"]["ebgp"] <= underlay.MAX_ECMP["nvue"].paths, where


# Every `nv set system telemetry ...` path fabgen writes, as the Cumulus Linux 5.12 user guide
# "Open Telemetry Export" spells it (<n>, <host>, <label>: a value of the user's). `grpc port`
# is the port `nv show system telemetry export` lists under grpc (default 8443).
NVUE_TELEMETRY_PATHS = {
    "export otlp state", "export otlp grpc insecure", "export otlp grpc port",
    "export otlp grpc destination <host> port",
    "interface-stats export state", "interface-stats sample-interval",
    "interface-stats switch-priority <n>", "interface-stats ingress-buffer priority-group <n>",
    "interface-stats egress-buffer traffic-class <n>",
    "buffer-stats export state", "router bgp export state", "label <label> description",
}
_USER_VALUE = {("destination",): "<host>", ("switch-priority",): "<n>",
               ("priority-group",): "<n>", ("traffic-class",): "<n>", ("label",): "<label>"}


def _nvue_paths(tree: dict[str, Any], prefix: tuple[str, ...] = ()) -> set[str]:
    """`nv set` paths of a startup.yaml subtree: keys down to each leaf value (an empty map is
    a leaf too), a user's value (a priority, a host name) written as its placeholder."""
    out: set[str] = set()
    for key, value in tree.items():
        placeholder = _USER_VALUE.get(prefix[-1:])
        path = (*prefix, placeholder or str(key))
        if isinstance(value, dict) and value:
            out |= _nvue_paths(value, path)
        else:
            out.add(" ".join(path))
    return out


def test_nvue_telemetry_keys_are_documented(case: Case) -> None:
    for name, text in case.nvue.items():
        telemetry = load_nvue(text)["system"]["telemetry"]
        paths = _nvue_paths(telemetry)
        assert paths <= NVUE_TELEMETRY_PATHS, f"{case.name}/{name}: {paths - NVUE_TELEMETRY_PATHS}"
        assert telemetry["label"] == {"device": {"description": name}}
        assert list(telemetry["interface-stats"]["switch-priority"]) == [
            str(case.plan.rdma.priority)]


def test_bgp_peers_agree_across_platforms(case: Case) -> None:
    """Each /31 session is configured on both ends with the other end's address and ASN."""
    sessions: set[tuple[str, str, int]] = set()  # (switch, neighbor ip, remote-as)
    own: dict[str, tuple[set[str], int]] = {}
    for name, text in case.eos.items():
        root = parse_eos(text)
        (bgp,) = root.child("router bgp ")
        ips = {c.text.split()[2] for n in root.child("interface Ethernet")
               for c in n.child("ip address ")}
        own[name] = ({ip.split("/")[0] for ip in ips}, int(bgp.text.split()[2]))
        for n in bgp.child("neighbor "):
            if " remote-as " in n.text:
                sessions.add((name, n.text.split()[1], int(n.text.split()[3])))
    for name, text in case.nvue.items():
        tree = load_nvue(text)
        ips = {a.split("/")[0] for v in _addressed(tree).values() for a in v["ip"]["address"]}
        own[name] = (ips, tree["router"]["bgp"]["autonomous-system"])
        for ip, v in tree["vrf"]["default"]["router"]["bgp"]["neighbor"].items():
            sessions.add((name, ip, v["remote-as"]))
    owner = {ip: (name, asn) for name, (ips, asn) in own.items() for ip in ips}
    for name, ip, remote_as in sessions:
        peer, asn = owner[ip]
        assert asn == remote_as, f"{case.name}: {name} -> {ip} expects AS {remote_as}"
        assert any(s[0] == peer and s[2] == own[name][1] for s in sessions), (name, ip)


# --- the QoS text is the same on every switch of a platform -----------------------------------

def test_qos_section_is_identical_fabric_wide(case: Case) -> None:
    eos_global: set[str] = set()
    eos_port: set[str] = set()
    for text in case.eos.values():
        lines = text.splitlines()
        eos_global.add("\n".join(ln for ln in lines
                                 if ln.startswith(("qos map", "priority-flow-control"))))
        for intf in parse_eos(text).child("interface Ethernet"):
            texts = [c.text for c in intf.children]
            qos_part = intf.children[texts.index("qos trust dscp"):]
            eos_port.add(repr([(n.text, [c.text for c in n.children]) for n in qos_part]))
    if case.eos:
        assert len(eos_global) == 1, "EOS global QoS differs between switches"
        assert len(eos_port) == 1, "EOS per-port QoS differs between ports"
    nvue_global: set[str] = set()
    nvue_port: set[str] = set()
    for text in case.nvue.values():
        tree = load_nvue(text)
        nvue_global.add(yaml.safe_dump(tree["qos"], sort_keys=True))
        nvue_port.update(yaml.safe_dump(v.get("qos"), sort_keys=True)
                         for v in _addressed(tree).values())
    if case.nvue:
        assert len(nvue_global) == 1, "NVUE qos differs between switches"
        assert len(nvue_port) == 1, "NVUE per-port qos differs between ports"


def test_both_platforms_schedule_the_same_percentages() -> None:
    plan = qos.plan(load(MIXED).intent)
    assert render_common.queue_specs(plan, "eos") == render_common.queue_specs(plan, "nvue")
    # 50/20/50 weights: 41.67/16.67/41.67 %, the two spare points to the larger weights
    assert {s.queue: s.percent for s in render_common.queue_specs(plan, "eos")} == \
        {0: 42, 1: 16, 3: 42, 6: None}


# --- templates: section = dict key = template, in one explicit order ---------------------------

def test_eos_sections_are_included_in_order(cases: dict[str, Case]) -> None:
    device = (PLATFORM_DIRS / "eos" / "templates" / "device.j2").read_text()
    included = re.findall(r'\{%\s*include\s+"eos/(\w+)\.j2"\s*%\}', device)
    assert tuple(included) == eos.SECTIONS
    for section in eos.SECTIONS:
        assert (PLATFORM_DIRS / "eos" / "templates" / f"{section}.j2").is_file()
    case = cases["roce-eos-nvue-2to1"]
    sw = next(s for s in case.fabric.switches if s.platform == "eos")
    config = eos.device_config(case.ctx, sw)
    assert tuple(config) == eos.SECTIONS
    assert eos.config_text(config) == case.eos[sw.name]


def test_device_config_holds_plain_values(cases: dict[str, Case]) -> None:
    case = cases["roce-eos-nvue-2to1"]
    plain = (str, int, bool, type(None))

    def check(value: Any, path: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                assert isinstance(k, str), path
                check(v, f"{path}.{k}")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                check(v, f"{path}[{i}]")
        else:
            assert isinstance(value, plain), f"{path}: {type(value).__name__}"

    for sw in case.fabric.switches:
        target = eos if sw.platform == "eos" else nvue
        check(target.device_config(case.ctx, sw), sw.name)


# --- injection: intent text cannot add a line or a key; unsafe names are refused ----------------

PLAIN = "plain words"
CRAFTED = ["a = b # c", "x: y", "- a", "#c", "(a) @b /c,", "a: b # c: d", "k=v, x: - y",
           "desc + / 100 @x"]


def _render_with(tmp: Path, description: str) -> tuple[str, str, str]:
    data = yaml.safe_load(MIXED.read_text())
    data["description"] = description
    path = tmp / "crafted.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    intent = load(path).intent  # survives validation
    ctx = RenderContext(intent=intent, fabric=build(intent), qos=qos.plan(intent))
    leaf = next(s for s in ctx.fabric.switches if s.platform == "eos")
    spine = next(s for s in ctx.fabric.switches if s.platform == "nvue")
    return (eos.config_text(eos.device_config(ctx, leaf)),
            nvue.startup_yaml(nvue.device_config(ctx, spine)),
            render_common.sanitize_description(f"{intent.name}: {description}"))


def _key_paths(value: Any, prefix: str = "") -> set[str]:
    if isinstance(value, dict):
        out = {f"{prefix}/{k}" for k in value}
        for k, v in value.items():
            out |= _key_paths(v, f"{prefix}/{k}")
        return out
    if isinstance(value, list):
        return set().union(*(_key_paths(v, f"{prefix}[{i}]") for i, v in enumerate(value)))
    return set()


@pytest.mark.parametrize("description", CRAFTED)
def test_crafted_description_adds_no_line_or_key(description: str, tmp_path: Path) -> None:
    plain_eos, plain_nvue, _ = _render_with(tmp_path, PLAIN)
    crafted_eos, crafted_nvue, expected = _render_with(tmp_path, description)
    assert len(crafted_eos.splitlines()) == len(plain_eos.splitlines())
    (loopback,) = parse_eos(crafted_eos).child("interface Loopback0")
    assert [c.text for c in loopback.child("description")] == [f"description {expected}"]
    plain_tree, crafted_tree = load_nvue(plain_nvue), load_nvue(crafted_nvue)
    assert _key_paths(crafted_tree) == _key_paths(plain_tree)
    assert crafted_tree["interface"]["lo"]["description"] == expected


@pytest.mark.parametrize(("key", "value"), [
    (("hosts", "name"), "node\n{index:03d}"),
    (("hosts", "name"), "node{index:03d}\nhostname evil"),
    (("name",), "fabric\nhostname evil"),
    (("description",), "a\n!\nhostname evil"),
])
def test_newlines_in_names_are_refused_at_validation(key: tuple[str, ...], value: str,
                                                     tmp_path: Path) -> None:
    data = yaml.safe_load(MIXED.read_text())
    target = data
    for part in key[:-1]:
        target = target[part]
    target[key[-1]] = value
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(FabgenError):
        load(path)


def test_sanitize_description_keeps_one_safe_line() -> None:
    assert render_common.sanitize_description("a\nb!c#d\te") == "a_b_c_d_e"
    assert render_common.sanitize_description("x" * 500) == "x" * 200


# --- plans a platform cannot express are refused, naming the target ----------------------------

def _changed(tmp: Path, change: dict[str, Any]) -> Path:
    data = yaml.safe_load(MIXED.read_text())
    data["qos"].update(change)
    path = tmp / "plan.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _ctx_unchecked(path: Path) -> RenderContext:
    """Skip semantic validation, to prove the targets' own guards still refuse the plan."""
    intent = Intent.model_validate(yaml.safe_load(path.read_text()))
    return RenderContext(intent=intent, fabric=build(intent), qos=qos.plan(intent))


def _validation_errors(path: Path) -> list[str]:
    with pytest.raises(FabgenError) as info:
        load(path)
    return [d.render().split(": ", 1)[1] for d in info.value.diagnostics]


def test_eos_refuses_a_watchdog_time_it_cannot_write(tmp_path: Path) -> None:
    path = _changed(tmp_path, {"pfc_watchdog": {"detection_ms": 205, "restoration_ms": 400}})
    assert _validation_errors(path) == [
        "qos.pfc_watchdog.detection_ms: eos sets PFC watchdog timers in 10 ms steps; 205 ms "
        "is not one"]
    with pytest.raises(UnsupportedPlan, match=r"^eos: PFC watchdog detection 205 ms"):
        eos.TARGET.render(_ctx_unchecked(path))


def test_eos_refuses_strict_below_round_robin(tmp_path: Path) -> None:
    path = _changed(tmp_path, {"cnp": {"dscp": 48, "priority": 2},
                               "classes": [{"name": "bulk", "dscp": [8], "priority": 4}]})
    assert _validation_errors(path) == [
        "qos.cnp.priority: eos puts strict-priority queues above round-robin ones; CNP priority "
        "2 is below DWRR priority 4 (give CNP the highest priority (6 or 7))"]
    with pytest.raises(UnsupportedPlan, match=r"^eos: strict-priority queue 2"):
        eos.TARGET.render(_ctx_unchecked(path))


def test_classes_sharing_a_queue_with_different_weights_are_refused(tmp_path: Path) -> None:
    path = _changed(tmp_path, {"classes": [{"name": "bulk", "dscp": [8], "priority": 0,
                                            "weight": 10}]})
    assert _validation_errors(path) == [
        "qos.classes[0].priority: class 'bulk' shares priority 0 (one egress queue) with "
        "'default' but asks weight 10, not 50 (give it its own priority, or the same weight)"]
    with pytest.raises(UnsupportedPlan,
                       match=r"^nvue: classes bulk, default share egress queue 0"):
        nvue.TARGET.render(_ctx_unchecked(path))


def test_eos_structured_layer_snapshot(snapshot: Any) -> None:
    """The data layer of one EOS leaf, goldened beside its text (DESIGN §7, as AVD keeps
    structured config and CLI both): a logic change shows here, a template change in golden/."""
    loaded = load(MIXED)
    ctx = RenderContext(intent=loaded.intent, fabric=build(loaded.intent),
                        qos=qos.plan(loaded.intent))
    leaf = next(s for s in ctx.fabric.switches if s.platform == "eos")
    config = eos.device_config(ctx, leaf)
    # two cabled ports and the last (spare) one tell the shape
    config["ethernet_interfaces"] = config["ethernet_interfaces"][:2] + \
        config["ethernet_interfaces"][-1:]
    assert config == snapshot


def test_eos_watchdog_needs_a_round_robin_lossless_queue() -> None:
    """The watchdog's queue has a guaranteed share: the rendered lossless queue is round-robin
    with `bandwidth percent`; a plan that made it strict priority is refused, not rendered with
    a watchdog some EOS releases would not apply."""
    import dataclasses

    ctx = _ctx_unchecked(MIXED)
    assert ctx.qos is not None
    config = eos.TARGET.render(ctx)["eos/leaf-su1-r0.cfg"]
    assert (f"   uc-tx-queue {ctx.qos.rdma.queue}\n      no priority\n      bandwidth percent "
            in config)
    strict = tuple(dataclasses.replace(c, scheduling="strict", weight=None)
                   if c.name == "rdma" else c for c in ctx.qos.classes)
    bad = dataclasses.replace(ctx, qos=dataclasses.replace(ctx.qos, classes=strict))
    with pytest.raises(UnsupportedPlan, match=r"^eos: the lossless queue is strict"):
        eos.TARGET.render(bad)
