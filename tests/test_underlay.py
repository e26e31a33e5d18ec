"""The underlay on every platform: one set of BGP timers, BFD, ECMP as wide as the uplinks (a
120-uplink HPN-style leaf on SONiC, Cumulus and EOS), the hash and adaptive load balancing, and
NCCL's flows, read back from the rendered SONiC, EOS and NVUE files; what a platform cannot
express is refused at load time, blamed on the intent's field."""

from __future__ import annotations

import json
import re
import subprocess
import typing
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabgen import underlay
from fabgen.errors import FabgenError
from fabgen.intent import load
from fabgen.intent.loader import LoadedIntent
from fabgen.intent.models import Platform
from fabgen.platforms.eos.push import candidate as eos_cand
from fabgen.platforms.nvue import target as nvue
from fabgen.platforms.nvue.push import candidate as nvue_cand
from fabgen.platforms.sonic import frr as sonic_frr
from fabgen.platforms.sonic import target as sonic
from fabgen.render import render
from fabgen.topology import sizing
from fabgen.topology.build import build
from fabgen.topology.model import Fabric, Switch
from tests import sonic_yang
from tests.conftest import INVENTORIES, require_tool

# An Alibaba HPN-style segment: 128 x 200G down and 120 x 200G up per leaf (16:15) on a
# 51.2T switch split 4x200G; the platform is filled in per test.
HPN = """\
name: hpn-{platform}
fabric: {{transport: roce, speed: 200G}}
cluster:
  nodes: 128
  node: {{model: dgx-h100, gpus: 8, nics: 8, nic: connectx-7, nic_ports: 1}}
topology:
  style: rail-unaware
  oversubscription: "16:15"
  leaf: {{model: {model}, breakout: 4x200G}}
platforms: {{leaf: {platform}, spine: {platform}}}
"""
HPN_MODEL = {"sonic": "sn5600", "nvue": "sn5600", "eos": "7060x6-64pe"}

# All three platforms in one fabric (SONiC leaves, EOS spines, Cumulus cores), non-default
# BGP timers, BFD (SONiC runs bfdd's default timers only: sonic checks FRR_BFD_DEFAULTS), adaptive
# mode off. Small 3-tier fabric: 16 nodes; each OS on hardware it runs on: SONiC and Cumulus
# on SN5600s split 2x400G (Mellanox-SN5600-O128), EOS on Arista 7060X6s split 2x400G.
MIXED3 = """\
name: mixed3
fabric: {transport: roce, speed: 400G}
cluster:
  nodes: 16
  node: {model: generic, gpus: 8, nics: 4, nic: connectx-7, nic_ports: 1}
topology:
  tiers: 3
  leaf: {model: sn5600, breakout: 2x400G}
  spine: {model: 7060x6-64pe, breakout: 2x400G}
  core: {model: sn5600, breakout: 2x400G}
platforms: {leaf: sonic, spine: eos, core: nvue}
underlay:
  bgp: {keepalive_s: 5, hold_s: 15}
  bfd: {interval_ms: 300, multiplier: 3}
"""
# EOS and Cumulus take any BFD timers: the same fabric without SONiC, BFD at 100 ms x 5.
MIXED_BFD = MIXED3.replace("platforms: {leaf: sonic, spine: eos, core: nvue}",
                           "platforms: {leaf: eos, spine: eos, core: nvue}").replace(
    "leaf: {model: sn5600,", "leaf: {model: 7060x6-64pe,").replace(
    "bfd: {interval_ms: 300, multiplier: 3}", "bfd: {interval_ms: 100, multiplier: 5}")


def _write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _load(tmp: Path, text: str, name: str = "intent") -> LoadedIntent:
    return load(_write(tmp, name, text))


def _errors(tmp: Path, text: str) -> list[str]:
    with pytest.raises(FabgenError) as exc:
        load(_write(tmp, "bad", text))
    return [d.render() for d in exc.value.diagnostics]


def _switch_links(fabric: Fabric, sw: Switch) -> tuple[int, Counter[str]]:
    """(uplinks, parallel links down to each lower switch) counted from the cabling."""
    up = 0
    down: Counter[str] = Counter()
    for link in fabric.links:
        if link.kind == "node-leaf" or sw.name not in (link.a_device, link.z_device):
            continue
        if link.a_device == sw.name:
            up += 1
        else:
            down[link.a_device] += 1
    return up, down


def _width(fabric: Fabric, sw: Switch) -> int:
    up, down = _switch_links(fabric, sw)
    return max(up, max(down.values(), default=0))


def _nvue(files: dict[str, str], name: str) -> dict[str, Any]:
    tree: dict[str, Any] = yaml.safe_load(files[f"nvue/{name}/startup.yaml"])[0]["set"]
    return tree


def _frr_paths(text: str) -> list[int]:
    return [int(m) for m in re.findall(r"^  maximum-paths (\d+)$", text, re.M)]


def _eos_paths(text: str) -> list[tuple[int, int]]:
    return [(int(a), int(b))
            for a, b in re.findall(r"^   maximum-paths (\d+) ecmp (\d+)$", text, re.M)]


# --- ECMP width: a 120-uplink leaf on every platform -------------------------------------------

@pytest.fixture(scope="module")
def hpn(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[LoadedIntent, dict[str, str]]]:
    tmp = tmp_path_factory.mktemp("hpn")
    out = {}
    for platform, model in HPN_MODEL.items():
        loaded = _load(tmp, HPN.format(platform=platform, model=model), platform)
        out[platform] = (loaded, render(loaded, only=[platform]))
    return out


@pytest.mark.parametrize("platform", sorted(HPN_MODEL))
def test_hpn_leaf_gets_all_120_uplinks_as_paths(
        platform: str, hpn: dict[str, tuple[LoadedIntent, dict[str, str]]]) -> None:
    loaded, files = hpn[platform]
    fabric = build(loaded.intent)
    leaves = fabric.switches_of("leaf")
    assert leaves
    for leaf in leaves:
        up, _ = _switch_links(fabric, leaf)
        assert up == 120, leaf.name  # 128 x 200G down at 16:15
        if platform == "sonic":
            text = files[f"sonic/{leaf.name}/frr.expected.conf"]
            assert len(re.findall(r"^ neighbor \S+ remote-as \d+$", text, re.M)) == 120
            assert _frr_paths(text) == [120], leaf.name
            config = json.loads(files[f"sonic/{leaf.name}/config_db.json"])
            assert len(config["BGP_NEIGHBOR"]) == 120
        elif platform == "eos":
            text = files[f"eos/{leaf.name}.cfg"]
            assert len(re.findall(r"^   neighbor \S+ remote-as \d+$", text, re.M)) == 120
            assert _eos_paths(text) == [(120, 120)], leaf.name
        else:
            bgp = _nvue(files, leaf.name)["vrf"]["default"]["router"]["bgp"]
            assert len(bgp["neighbor"]) == 120
            assert bgp["address-family"]["ipv4-unicast"]["multipaths"]["ebgp"] == 120


@pytest.mark.realtool
def test_hpn_sonic_leaf_passes_frr_and_yang(
        hpn: dict[str, tuple[LoadedIntent, dict[str, str]]], tmp_path: Path) -> None:
    require_tool("vtysh")
    loaded, files = hpn["sonic"]
    leaf = build(loaded.intent).switches_of("leaf")[0]
    path = tmp_path / "frr.conf"
    path.write_text(files[f"sonic/{leaf.name}/frr.expected.conf"])
    proc = subprocess.run(["vtysh", "--dryrun", "-f", str(path)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    sonic_yang.yang_root()
    result = sonic_yang.validate(json.loads(files[f"sonic/{leaf.name}/config_db.json"]))
    assert result.ok, result.stderr


def test_every_rendered_switch_has_its_full_ecmp_width(tmp_path: Path) -> None:
    """Every inventory and the three-platform fabric: each SONiC, EOS and NVUE switch installs
    as many paths as its uplinks or its widest bundle down, and underlay.ecmp_widths (what the
    intent check compares with the platform limit) says the same per tier."""
    loads = [load(p) for p in INVENTORIES] + [_load(tmp_path, MIXED3, "mixed3")]
    for loaded in loads:
        if loaded.intent.fabric.transport != "roce":
            continue
        fabric = build(loaded.intent)
        files = render(loaded, only=["switches"])
        widths = underlay.ecmp_widths(sizing.shape(loaded.intent))
        for sw in fabric.switches:
            width = _width(fabric, sw)
            assert width == widths[sw.role], sw.name
            if sw.platform == "sonic":
                assert _frr_paths(files[f"sonic/{sw.name}/frr.expected.conf"]) == [width], \
                    sw.name
            elif sw.platform == "eos":
                assert _eos_paths(files[f"eos/{sw.name}.cfg"]) == [(width, width)], sw.name
            elif sw.platform == "nvue":  # another platform's own tests read its configs
                af = _nvue(files, sw.name)["vrf"]["default"]["router"]["bgp"]["address-family"]
                assert af["ipv4-unicast"]["multipaths"]["ebgp"] == width, sw.name


def test_nvue_refuses_a_leaf_wider_than_128_paths(tmp_path: Path) -> None:
    text = HPN.format(platform="nvue", model="sn5600").replace(
        "leaf: {model: sn5600, breakout: 4x200G}", "leaf: {ports: 512, speed: 200G}").replace(
        '"16:15"', '"1:1"')
    errors = _errors(tmp_path, text)
    assert len(errors) == 1, errors
    assert re.fullmatch(
        r".*bad\.yaml:\d+:\d+: platforms\.leaf: each leaf has 256 equal-cost paths, but nvue "
        r"installs at most 128: routes would use only part of the uplinks \(nvue's limit: "
        r"NVUE .*multipaths ebgp 1-128.*\)", errors[0], re.S), errors[0]
    # the same fabric on EOS (600) loads; on SONiC (256, FRR's MULTIPATH_NUM) only the custom
    # switch is refused (no HwSKU), not the width
    load(_write(tmp_path, "eos", text.replace("nvue", "eos")))
    (sonic_error,) = _errors(tmp_path, text.replace("nvue", "sonic"))
    assert "SONiC has no published HwSKU for a custom switch" in sonic_error


def test_ecmp_paths_refuses_above_the_platform_limit() -> None:
    assert underlay.ecmp_paths("sonic", "leaf-1", 256) == 256
    assert underlay.ecmp_paths("sonic", "leaf-1", 0) == 1  # FRR takes 1..MULTIPATH_NUM
    with pytest.raises(ValueError, match=r"sonic: leaf-1 needs 257 equal-cost paths; the "
                                         r"platform installs at most 256"):
        underlay.ecmp_paths("sonic", "leaf-1", 257)
    with pytest.raises(ValueError, match="at most 600"):
        underlay.ecmp_paths("eos", "spine-1", 601)


def test_platform_limits_are_the_published_ranges() -> None:
    # The platforms this module reads the configs of; a newer one pins its own (its tests).
    assert {p: underlay.MAX_ECMP[p].paths for p in ("sonic", "nvue", "eos")} == \
        {"sonic": 256, "nvue": 128, "eos": 600}
    platforms = set(typing.get_args(Platform))
    assert set(underlay.MAX_ECMP) == set(underlay.HASH_FIELDS) == set(underlay.ADAPTIVE) == \
        platforms
    assert all(lim.source for lim in underlay.MAX_ECMP.values())
    # every hash field a platform takes has a name in that platform's config
    assert underlay.HASH_FIELDS["sonic"] <= set(sonic.HASH_FIELD)
    assert underlay.HASH_FIELDS["nvue"] <= set(nvue.HASH_FIELD)


# --- BGP timers and BFD: one value on every platform ------------------------------------------

@pytest.fixture(scope="module")
def mixed3(tmp_path_factory: pytest.TempPathFactory) -> tuple[Fabric, dict[str, str]]:
    loaded = _load(tmp_path_factory.mktemp("mixed3"), MIXED3, "mixed3")
    return build(loaded.intent), render(loaded, only=["switches"])


def test_bgp_timers_and_bfd_are_the_same_on_every_platform(
        mixed3: tuple[Fabric, dict[str, str]]) -> None:
    fabric, files = mixed3
    assert {s.platform for s in fabric.switches} == {"sonic", "eos", "nvue"}
    for sw in fabric.switches:
        peers = sum(_switch_links(fabric, sw)[1].values()) + _switch_links(fabric, sw)[0]
        if sw.platform == "sonic":
            frr = files[f"sonic/{sw.name}/frr.expected.conf"]
            assert " neighbor FABRIC timers 5 15\n" in frr, sw.name
            assert " neighbor FABRIC bfd\n" in frr, sw.name
            assert len(re.findall(r"^ neighbor \S+ peer-group FABRIC$", frr, re.M)) == peers
            db = json.loads(files[f"sonic/{sw.name}/config_db.json"])
            assert db["BGP_PEER_GROUP"] == {"default|FABRIC": {
                "bfd": "true", "keepalive": "5", "holdtime": "15"}}, sw.name
            assert len(db["BGP_NEIGHBOR"]) == peers, sw.name
        elif sw.platform == "eos":
            cfg = files[f"eos/{sw.name}.cfg"]
            assert "\n   timers bgp 5 15\n" in cfg, sw.name
            assert "\nrouter bfd\n   interval 300 min-rx 300 multiplier 3 default\n" in cfg
            assert len(re.findall(r"^   neighbor \S+ bfd$", cfg, re.M)) == peers, sw.name
        else:
            bgp = _nvue(files, sw.name)["vrf"]["default"]["router"]["bgp"]
            assert len(bgp["neighbor"]) == peers
            for n in bgp["neighbor"].values():
                assert n["timers"] == {"keepalive": 5, "hold": 15}, sw.name
                assert n["bfd"] == {"enable": "on", "detect-multiplier": 3,
                                    "min-rx-interval": 300, "min-tx-interval": 300}, sw.name


def test_eos_and_cumulus_take_other_bfd_timers_sonic_refuses_them(tmp_path: Path) -> None:
    """100 ms x 5 reaches EOS and Cumulus; on SONiC it is refused at the field (no YANG model
    for the table that would carry it)."""
    loaded = _load(tmp_path, MIXED_BFD, "mixed-bfd")
    fabric, files = build(loaded.intent), render(loaded, only=["switches"])
    for sw in fabric.switches:
        if sw.platform == "eos":
            assert "\nrouter bfd\n   interval 100 min-rx 100 multiplier 5 default\n" in \
                files[f"eos/{sw.name}.cfg"], sw.name
        else:
            for n in _nvue(files, sw.name)["vrf"]["default"]["router"]["bgp"]["neighbor"].values():
                assert n["bfd"] == {"enable": "on", "detect-multiplier": 5,
                                    "min-rx-interval": 100, "min-tx-interval": 100}, sw.name
    errors = _errors(tmp_path, MIXED3.replace("bfd: {interval_ms: 300, multiplier: 3}",
                                              "bfd: {interval_ms: 100, multiplier: 5}"))
    assert len(errors) == 1 and "underlay.bfd.interval_ms: SONiC runs BFD at bfdd's " \
        "defaults (300 ms x 3)" in errors[0], errors


def test_defaults_are_the_platforms_own_datacenter_values(tmp_path: Path) -> None:
    """Unset, the timers are FRR's datacenter profile and Cumulus' defaults (3/9 s) and BFD is
    300 ms x 3, the default of FRR bfdd, Cumulus and EOS, now written out on EOS as well."""
    plan = underlay.plan(_load(tmp_path, MIXED3.split("underlay:")[0]).intent)
    assert (plan.keepalive_s, plan.hold_s) == (3, 9)
    assert plan.bfd == underlay.Bfd(interval_ms=300, multiplier=3)
    assert plan.load_balancing == underlay.LoadBalancing(
        "hash", ("src-ip", "dst-ip", "ip-protocol", "src-port", "dst-port"))


def test_bfd_off_leaves_no_bfd_anywhere(tmp_path: Path) -> None:
    text = MIXED3.replace("bfd: {interval_ms: 300, multiplier: 3}", "bfd: {enabled: false}")
    files = render(_load(tmp_path, text), only=["switches"])
    for path, body in files.items():
        if path.endswith("frr.expected.conf"):  # commands only: a template comment says bfd
            body = "\n".join(sonic_frr.command_lines(body))
        if path.endswith((".cfg", "frr.expected.conf", "config_db.json", "startup.yaml")):
            assert "bfd" not in body, path


@pytest.mark.parametrize(("field", "value", "message"), [
    ("bgp: {keepalive_s: 5, hold_s: 10}", None, "hold_s (10) must be at least 3 x keepalive_s"),
    ("bfd: {interval_ms: 10}", None, "underlay.bfd.interval_ms: expected at least 50, got 10"),
    ("bfd: {multiplier: 2}", None, "underlay.bfd.multiplier: expected at least 3, got 2"),
])
def test_timer_values_no_platform_takes_are_refused(field: str, value: None, message: str,
                                                    tmp_path: Path) -> None:
    del value
    text = MIXED3.split("underlay:")[0] + f"underlay:\n  {field}\n"
    errors = _errors(tmp_path, text)
    assert any(message in e for e in errors), errors


@pytest.mark.realtool
def test_vtysh_checks_the_bfd_lines(mixed3: tuple[Fabric, dict[str, str]],
                                    tmp_path: Path) -> None:
    """FRR's own parser reads the SONiC leaf's frr.expected.conf: it passes, and the BFD line
    made something bgpd does not take fails, so the dry run is a real check of it."""
    require_tool("vtysh")
    fabric, files = mixed3
    leaf = fabric.switches_of("leaf")[0]
    good = files[f"sonic/{leaf.name}/frr.expected.conf"]
    assert " neighbor FABRIC bfd\n" in good
    for text, ok in ((good, True), (good.replace(" neighbor FABRIC bfd\n",
                                                 " neighbor FABRIC bfd 1 2 3 4\n"), False)):
        path = tmp_path / "frr.conf"
        path.write_text(text)
        proc = subprocess.run(["vtysh", "--dryrun", "-f", str(path)], capture_output=True,
                              text=True, timeout=60, check=False)
        assert (proc.returncode == 0) == ok, proc.stdout + proc.stderr


# --- load balancing ---------------------------------------------------------------------------

def test_hash_fields_reach_sonic_and_nvue(tmp_path: Path) -> None:
    text = MIXED3.replace("platforms: {leaf: sonic, spine: eos, core: nvue}",
                          "platforms: {leaf: sonic, spine: nvue, core: nvue}").replace(
        "spine: {model: 7060x6-64pe,", "spine: {model: sn5600,") + \
        "load_balancing: {hash_fields: [dst-ip, src-ip, src-port]}\n"
    loaded = _load(tmp_path, text)
    files = render(loaded, only=["switches"])
    fabric = build(loaded.intent)
    for sw in fabric.switches:
        if sw.platform == "sonic":
            db = json.loads(files[f"sonic/{sw.name}/config_db.json"])
            assert db["SWITCH_HASH"] == {"GLOBAL": {"ecmp_hash": ["DST_IP", "SRC_IP",
                                                                  "L4_SRC_PORT"]}}
        else:
            assert _nvue(files, sw.name)["system"]["forwarding"]["ecmp-hash"] == {
                "destination-ip": "on", "source-ip": "on", "source-port": "on",
                "ip-protocol": "off", "destination-port": "off"}


def test_eos_adds_the_roce_dest_qp_bytes(tmp_path: Path) -> None:
    text = (HPN.format(platform="eos", model="7060x6-64pe")
            + "load_balancing:\n  hash_fields: [src-ip, dst-ip, ip-protocol, src-port, "
              "dst-port, roce-dest-qp]\n")
    loaded = _load(tmp_path, text)
    files = render(loaded, only=["eos"])
    cfg = next(iter(v for k, v in files.items() if k.startswith("eos/")))
    udf = re.findall(r"^port-channel load-balance trident udf .*$", cfg, re.M)
    assert udf == [f"port-channel load-balance trident udf eth-type ipv4 header outer l4 "
                   f"offset {o} mask 0xff" for o in (13, 14, 15)]
    # 8 bytes of UDP header + the BTH's destination QP at bytes 5..7
    assert [o - 8 for o in (13, 14, 15)] == [5, 6, 7]
    plain = render(load(_write(tmp_path, "plain", HPN.format(platform="eos",
                                                             model="7060x6-64pe"))),
                   only=["eos"])
    assert not any("load-balance" in v for v in plain.values())


@pytest.mark.parametrize(("platform", "fields", "message"), [
    ("sonic", "[src-ip, dst-ip, src-port, roce-dest-qp]", "sonic cannot hash on roce-dest-qp"),
    ("nvue", "[src-ip, dst-ip, src-port, roce-dest-qp]", "nvue cannot hash on roce-dest-qp"),
    ("eos", "[src-ip, dst-ip, src-port]", "no verified EOS command to drop fields"),
    ("sonic", "[src-ip, src-ip]", "hash field 'src-ip' is listed twice"),
])
def test_hash_fields_a_platform_cannot_take_are_refused(platform: str, fields: str,
                                                        message: str, tmp_path: Path) -> None:
    text = HPN.format(platform=platform, model=HPN_MODEL[platform]) + \
        f"load_balancing: {{hash_fields: {fields}}}\n"
    errors = _errors(tmp_path, text)
    assert any(re.search(r":\d+:\d+: load_balancing\.hash_fields", e) and message in e
               for e in errors), errors


def test_adaptive_on_cumulus_spectrum4(tmp_path: Path) -> None:
    text = (HPN.format(platform="nvue", model="sn5600").replace("connectx-7", "bluefield-3")
            .replace("model: dgx-h100", "model: generic")
            + "load_balancing: {mode: adaptive}\n")
    loaded = _load(tmp_path, text)
    assert not [w for w in loaded.warnings if "out of order" in w.message]
    files = render(loaded, only=["nvue", "nccl"])
    fabric = build(loaded.intent)
    for sw in fabric.switches:
        tree = _nvue(files, sw.name)
        assert tree["router"]["adaptive-routing"] == {"enable": "on"}, sw.name
        for port, entry in tree["interface"].items():
            to_switch = (port.startswith("swp") and "ip" in entry
                         and not entry["description"].startswith("gpu"))
            assert ("router" in entry) == to_switch, f"{sw.name} {port}"
    assert 'export NCCL_IB_ADAPTIVE_ROUTING="1"' in files["nccl/roce.env"]


def test_adaptive_warns_about_nics_that_do_not_reorder(tmp_path: Path) -> None:
    loaded = _load(tmp_path, HPN.format(platform="nvue", model="sn5600")
                   + "load_balancing: {mode: adaptive}\n")
    assert any("out of order" in w.message and "ConnectX-7" in w.message
               for w in loaded.warnings), loaded.warnings


def test_adaptive_on_eos_is_flowlet_dlb_and_keeps_nccl_in_order(tmp_path: Path) -> None:
    loaded = _load(tmp_path, HPN.format(platform="eos", model="7060x6-64pe")
                   + "load_balancing: {mode: adaptive}\n")
    files = render(loaded, only=["eos", "nccl"])
    for path, cfg in files.items():
        if path.startswith("eos/"):
            assert "\nip hardware fib load-balance distribution dynamic\n" in cfg, path
    assert 'export NCCL_IB_ADAPTIVE_ROUTING="0"' in files["nccl/roce.env"]


@pytest.mark.parametrize(("text", "message"), [
    (HPN.format(platform="sonic", model="sn5600"), "SONiC has no adaptive routing"),
    (HPN.format(platform="nvue", model="sn5600").replace(", breakout: 4x200G", "").replace(
        "200G", "800G").replace("connectx-7", "connectx-8").replace("dgx-h100", "generic"),
     "needs Spectrum-4 switches at 200G or 400G"),
])
def test_adaptive_where_the_platform_has_none_is_refused(text: str, message: str,
                                                         tmp_path: Path) -> None:
    errors = _errors(tmp_path, text + "load_balancing: {mode: adaptive}\n")
    assert any(re.search(r":\d+:\d+: load_balancing\.mode: ", e) and message in e
               for e in errors), errors


# --- NCCL: the flows the hash gets ------------------------------------------------------------

def test_nccl_splits_no_message_and_warns_about_one_qp(tmp_path: Path) -> None:
    base = MIXED3.split("underlay:")[0]
    env = render(_load(tmp_path, base), only=["nccl"])["nccl/roce.env"]
    assert 'export NCCL_IB_QPS_PER_CONNECTION="4"' in env
    assert 'export NCCL_IB_SPLIT_DATA_ON_QPS="0"' in env
    one = _load(tmp_path, base + "nccl: {qps_per_connection: 1}\n", "one")
    assert any(w.loc == ("nccl", "qps_per_connection") for w in one.warnings), one.warnings
    assert "SPLIT_DATA" not in render(one, only=["nccl"])["nccl/roce.env"]
    sonic = base.replace("spine: eos, core: nvue", "spine: sonic, core: sonic")
    blind = _load(tmp_path, sonic + "load_balancing: {hash_fields: [src-ip, dst-ip]}\n",
                  "blind")
    assert any(w.loc == ("load_balancing", "hash_fields") for w in blind.warnings)


# --- push: turning a feature off removes it from the device --------------------------------------

def test_push_candidates_remove_bfd_and_dlb_the_render_no_longer_has() -> None:
    running = ("hostname leaf1\n!\nip hardware fib load-balance distribution dynamic\n!\n"
               "router bfd\n   interval 300 min-rx 300 multiplier 3 default\n!\n"
               "interface Management1\n   ip address 192.0.2.1/24\n!\nend\n")
    render_text = "hostname leaf1\n!\nrouter bgp 65101\n   router-id 10.0.0.1\n!\nend\n"
    out = eos_cand.eos_candidate(running, render_text)
    assert "router bfd" not in out and "load-balance" not in out
    assert "interface Management1" in out
    nv = nvue_cand.nvue_candidate(
        [{"set": {"router": {"adaptive-routing": {"enable": "on"}, "ptp": {"enable": "on"}}}}],
        [{"set": {"router": {"bgp": {"enable": "on"}}}}])
    assert nv == [{"set": {"router": {"bgp": {"enable": "on"}, "ptp": {"enable": "on"}}}}]


# --- spare ports: down, with the lossless QoS, on every platform ----------------------------------

def _eos_ports(cfg: str) -> dict[str, list[str]]:
    """interface name -> its lines (the block under `interface Ethernet...`)."""
    out: dict[str, list[str]] = {}
    name = None
    for line in cfg.splitlines():
        if line.startswith("interface Ethernet"):
            name = line.split()[1]
            out[name] = []
        elif name is not None and line.startswith("   "):
            out[name].append(line)
        elif not line.startswith("   "):
            name = None
    return out


def _qos_part(lines: list[str]) -> list[str]:
    return lines[lines.index("   qos trust dscp"):]


def test_spare_ports_are_down_with_the_lossless_qos_everywhere(tmp_path: Path) -> None:
    loads = [load(p) for p in INVENTORIES] + [_load(tmp_path, MIXED3, "mixed3")]
    spares = Counter[str]()
    for loaded in loads:
        if loaded.intent.fabric.transport != "roce":
            continue
        fabric = build(loaded.intent)
        files = render(loaded, only=["switches"])
        for sw in fabric.switches:
            cabled = {link.a_port if link.a_device == sw.name else link.z_port
                      for link in fabric.links if sw.name in (link.a_device, link.z_device)}
            where = f"{loaded.intent.name}/{sw.name}"
            if sw.platform == "sonic":
                db = json.loads(files[f"sonic/{sw.name}/config_db.json"])
                ports = db["PORT"]
                assert len(ports) == sw.radix, where
                down = {n for n, v in ports.items() if v["admin_status"] == "down"}
                assert len(down) == sw.radix - len(cabled), where
                assert set(db["PORT_QOS_MAP"]) == set(ports), where
                if "BUFFER_PG" in db:  # a custom switch has no buffer model, so no buffers
                    assert {k.split("|")[0] for k in db["BUFFER_PG"]} == set(ports), where
                assert {k.split("|")[0] for k in db["QUEUE"]} == set(ports), where
                if "PFC_WD" in db:
                    assert set(db["PFC_WD"]) - {"GLOBAL"} == set(ports), where
                spares["sonic"] += len(down)
            elif sw.platform == "eos":
                ports = _eos_ports(files[f"eos/{sw.name}.cfg"])
                assert len(ports) == sw.radix, where
                down = [n for n, lines in ports.items() if "   shutdown" in lines]
                assert len(down) == sw.radix - len(cabled), where
                assert len({tuple(_qos_part(lines)) for lines in ports.values()}) == 1, where
                for name in down:
                    assert not any(x.startswith("   ip address") for x in ports[name]), name
                spares["eos"] += len(down)
            elif sw.platform == "nvue":  # another platform's own tests read its configs
                intf = _nvue(files, sw.name)["interface"]
                ports = {k: v for k, v in intf.items() if k.startswith("swp")
                         and "breakout" not in v.get("link", {})}
                assert len(ports) == sw.radix, where
                down = [k for k, v in ports.items() if v["link"].get("state") == "down"]
                assert len(down) == sw.radix - len(cabled), where
                assert len({yaml.safe_dump(v.get("qos")) for v in ports.values()}) == 1, where
                assert len({(v["link"]["mtu"], v["link"].get("speed"))
                            for v in ports.values()}) == 1, where
                spares["nvue"] += len(down)
    assert set(spares) == {"sonic", "eos", "nvue"} and all(spares.values()), spares
