"""`fabgen push` against real SSH servers on 127.0.0.1: fake EOS (napalm), SONiC and NVUE
(netmiko), each started by the test on an ephemeral port and stopped after it."""

from __future__ import annotations

import dataclasses
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncssh
import paramiko
import pytest
import yaml

from fabgen.errors import FabgenError
from fabgen.intent import load
from fabgen.output import with_manifest, write
from fabgen.platforms.eos.push import candidate as eos_cand
from fabgen.platforms.nvue.push import candidate as nvue_cand
from fabgen.platforms.nvue.push.driver import NvueDriver
from fabgen.platforms.sonic.push import candidate as sonic_cand
from fabgen.push import PushOptions, PushReport, run
from fabgen.push.credentials import Redactor, resolve
from fabgen.push.inventory import Address, parse_address
from fabgen.push.results import DeviceError
from fabgen.topology.build import build
from tests.fakes.fake_eos import Config, FakeEos
from tests.fakes.fake_linux import FakeLinuxSwitch, LinuxFleet

USER = "admin"
PASSWORD = "pw-Zq8vK!fabgen-7731"  # must never appear in anything fabgen writes or prints

INTENT = """\
name: tiny
fabric: {transport: roce, speed: 400G}
cluster:
  nodes: 2
  node: {model: generic, gpus: 4, nics: 4, nic: connectx-7, nic_ports: 1}
topology:
  style: rail-optimized
  leaf: {model: LEAFMODEL, breakout: 2x400G}
  spine: {model: 7060x6-64pe, breakout: 2x400G}
qos: {mtu: 9100, host_mtu: 9000}
platforms: {leaf: LEAF, spine: eos}
"""
LEAVES = [f"leaf-su1-r{i}" for i in range(4)]
SPINE = "spine-01"


# Each render has what fabgen owns only; the fakes start with a management configuration that
# a push must keep (tests/fakes). Neighbours are the fakes' BGP sessions for the health check.
def sonic_config(name: str, loopback: str, bad: bool = False, extra: Any = None) -> str:
    data: dict[str, Any] = {
        "DEVICE_METADATA": {"localhost": {
            "hostname": name, "bgp_asn": "65101", "type": "BackEndToRRouter",
            "docker_routing_config_mode": "unified", "frr_mgmt_framework_config": "true",
            # The SKU of an SN5600 split 2x400G (what the sonic target renders); mac and
            # platform are the render's guesses, the device's own values must win.
            "hwsku": "Mellanox-SN5600-O128", "mac": "fa:b8:00:00:00:01",
            "platform": "render-platform"}},
        "LOOPBACK_INTERFACE": {"Loopback0": {}, f"Loopback0|{loopback}/32": {}},
        "PORT": {f"Ethernet{i * 8}": {"admin_status": "up", "mtu": "9100", "speed": "400000"}
                 for i in range(3)},
        # BGP as fabgen.platforms.sonic.bgp writes it (frrcfgd's schema).
        "BGP_GLOBALS": {"default": {"local_asn": "65101", "router_id": loopback}},
        "BGP_PEER_GROUP": {"default|FABRIC": {"bfd": "true", "holdtime": "9",
                                              "keepalive": "3"}},
        "BGP_NEIGHBOR": {f"default|10.254.0.{i}": {"asn": "65000", "name": "spine-01",
                                                   "peer_group_name": "FABRIC"}
                         for i in (0, 2)},
        "BGP_GLOBALS_AF_NETWORK": {f"default|ipv4_unicast|{loopback}/32": {}},
    }
    if bad:
        data["bogus_table"] = {"x": {"y": "z"}}
    data.update(extra or {})
    return json.dumps(data, indent=4, sort_keys=True) + "\n"


def sonic_golden(config: str) -> str:
    """golden_config_db.json as the sonic target renders it: the whole DEVICE_METADATA."""
    meta = json.loads(config)["DEVICE_METADATA"]
    return json.dumps({"DEVICE_METADATA": meta}, indent=4, sort_keys=True) + "\n"


def eos_config(name: str, loopback: str, bad: bool = False, extra: Any = None) -> str:
    lines = [f"hostname {name}", "ip routing", "!", "interface Loopback0",
             f"   ip address {loopback}/32", "!"]
    for i in (1, 2):
        lines += [f"interface Ethernet{i}/1", f"   description leaf-su1-r{i - 1}", "   mtu 9100",
                  "   no switchport", "   priority-flow-control on", "!"]
    lines += ["router bgp 65000", f"   router-id {loopback}",
              "   neighbor 10.254.0.1 remote-as 65101", "   neighbor 10.254.0.3 remote-as 65101",
              "!"]
    if bad:
        lines += ["frobnicate everything", "!"]
    lines += list(extra or [])
    return "\n".join([*lines, "end"]) + "\n"


def nvue_config(name: str, loopback: str, bad: bool = False, extra: Any = None) -> str:
    text = (f"- set:\n    system:\n      hostname: {name}\n    interface:\n      lo:\n"
            f"        ip:\n          address:\n            {loopback}/32: {{}}\n"
            "      swp1:\n        type: swp\n        link: {mtu: 9100}\n"
            f"{extra or ''}"
            "    vrf:\n      default:\n        router:\n          bgp:\n            neighbor:\n"
            "              10.254.0.4: {remote-as: 65000, type: numbered}\n")
    return text + ("    frobnicate: {all: true}\n" if bad else "")


RENDER = {"sonic": ("sonic/{}/config_db.json", sonic_config),
          "eos": ("eos/{}.cfg", eos_config),
          "nvue": ("nvue/{}/startup.yaml", nvue_config)}


class Lab:
    """A tiny fabric on disk (intent, render, hosts file) and its fake switches on 127.0.0.1."""

    def __init__(self, tmp: Path, eos_key: paramiko.PKey, leaf: str = "sonic") -> None:
        self.tmp, self.eos_key = tmp, eos_key
        self.intent = tmp / "tiny.yaml"
        # The OS runs on its own vendor's switch: EOS on Arista, SONiC/NVUE on Spectrum.
        model = "7060x6-64pe" if leaf == "eos" else "sn5600"
        self.intent.write_text(INTENT.replace("LEAFMODEL", model).replace("LEAF", leaf))
        self.loaded = load(self.intent)
        self.fabric = build(self.loaded.intent)
        self.render_dir = tmp / "out" / "tiny"
        self.hosts_file = tmp / "hosts.yaml"
        self.known_hosts = tmp / "known_hosts"
        self.audit = tmp / "out" / "tiny.push-audit.jsonl"
        self.fleet = LinuxFleet(tmp / "linux", USER, PASSWORD)
        self.eos: dict[str, FakeEos] = {}
        self.addresses: dict[str, str] = {}
        self.output: list[str] = []
        self.render()

    def render(self, bad: tuple[str, ...] = (), extra: dict[str, Any] | None = None) -> None:
        """Render every switch; `bad` ones get a line the device rejects, `extra` adds
        platform-shaped content to a switch's render (tables, sections, YAML)."""
        files = {}
        for s in self.fabric.switches:
            path, fn = RENDER[s.platform]
            files[path.format(s.name)] = fn(s.name, str(s.loopback), s.name in bad,
                                            (extra or {}).get(s.name))
            if s.platform == "sonic":
                files[f"sonic/{s.name}/golden_config_db.json"] = sonic_golden(
                    files[path.format(s.name)])
        write(self.render_dir, with_manifest(files, self.loaded.source.sha256, "tiny"))

    def config(self, name: str) -> str:
        s = next(x for x in self.fabric.switches if x.name == name)
        path, _ = RENDER[s.platform]
        return (self.render_dir / path.format(name)).read_text()

    def golden(self, name: str) -> str:
        return (self.render_dir / f"sonic/{name}/golden_config_db.json").read_text()

    def start(self, *names: str, password: str | None = None,
              hostname: str | None = None) -> None:
        """Start fake switches; `hostname`: what an EOS switch calls itself before the push
        (a new switch is `localhost`)."""
        for name in names:
            platform = next(s.platform for s in self.fabric.switches if s.name == name)
            if platform == "eos":
                self.eos[name] = FakeEos(self.tmp / "eos" / name, hostname or name, USER,
                                         password or PASSWORD, self.eos_key)
                port = self.eos[name].port
            else:
                port = self.fleet.add(name, platform, password=password).port  # type: ignore[arg-type]
            self.addresses[name] = f"127.0.0.1:{port}"
        self.write_hosts()

    def write_hosts(self) -> None:
        self.hosts_file.write_text("".join(f"{n}: {a}\n" for n, a in self.addresses.items()))

    def linux(self, name: str) -> FakeLinuxSwitch:
        return self.fleet.switches[name]

    def state(self, name: str) -> dict[str, str]:
        return self.eos[name].files() if name in self.eos else self.linux(name).files()

    def push(self, **kw: Any) -> PushReport:
        kw.setdefault("accept_new_host_keys", True)
        kw.setdefault("timeout", 20)
        kw.setdefault("health_timeout", 10)
        options = PushOptions(intent=self.intent, hosts=self.hosts_file,
                              render_dir=self.render_dir, known_hosts=self.known_hosts,
                              workers=4, **kw)
        return run(options, self.output.append)

    def audit_records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.audit.read_text().splitlines()]

    def close(self) -> None:
        self.fleet.close()
        for server in self.eos.values():
            server.stop()


@pytest.fixture(scope="module")
def eos_key() -> paramiko.PKey:
    return paramiko.RSAKey.generate(2048)


@pytest.fixture
def creds(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("FABGEN_SONIC_PASSWORD", "FABGEN_EOS_PASSWORD", "FABGEN_NVUE_PASSWORD",
                "FABGEN_SONIC_USERNAME", "FABGEN_EOS_USERNAME", "FABGEN_NVUE_USERNAME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("FABGEN_USERNAME", USER)
    monkeypatch.setenv("FABGEN_PASSWORD", PASSWORD)


@pytest.fixture
def lab(tmp_path: Path, eos_key: paramiko.PKey, creds: None, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> Iterator[Lab]:
    monkeypatch.chdir(tmp_path)  # anything written to the working directory is checked too
    the_lab = Lab(tmp_path, eos_key)
    yield the_lab
    the_lab.close()
    assert_no_secret(the_lab, capsys)


@pytest.fixture
def nvue_lab(tmp_path: Path, eos_key: paramiko.PKey, creds: None,
             monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Iterator[Lab]:
    monkeypatch.chdir(tmp_path)
    the_lab = Lab(tmp_path, eos_key, leaf="nvue")
    yield the_lab
    the_lab.close()
    assert_no_secret(the_lab, capsys)


def assert_no_secret(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    """The password is in no file under the test's directory (audit log, render, hosts file,
    known_hosts, the working directory, the fakes' state) and in no output."""
    captured = capsys.readouterr()
    assert PASSWORD not in captured.out + captured.err
    assert PASSWORD not in "\n".join(lab.output)
    for path in lab.tmp.rglob("*"):
        if path.is_file():
            assert PASSWORD.encode() not in path.read_bytes(), path
    assert not (lab.tmp / "nornir.log").exists()


def by_name(report: PushReport) -> dict[str, Any]:
    return {d.name: d for d in report.devices}


# --- EOS: napalm over SSH -------------------------------------------------------------------


EOS_MGMT = ["username admin privilege 15 role network-admin secret sha512 "
            "$6$fakesalt$0123456789abcdef", "aaa authorization exec default local",
            "vrf instance MGMT", "interface Management1", "   description oob management",
            "   vrf MGMT", "   ip address 192.0.2.51/24", "ip route vrf MGMT 0.0.0.0/0 192.0.2.1",
            "ntp server vrf MGMT 192.0.2.123", "logging host 192.0.2.124",
            "management api http-commands", "   no shutdown"]


def test_eos_dry_run_changes_nothing_commit_keeps_management(lab: Lab) -> None:
    lab.start(SPINE)
    before = lab.state(SPINE)

    report = lab.push(devices=SPINE)
    dev = by_name(report)[SPINE]
    assert (dev.status, dev.failed, dev.diff_source, dev.mode) == \
        ("would-change", False, "device", "replace")
    assert "+interface Ethernet1/1" in dev.diff and "+router bgp 65000" in dev.diff
    # The device's own sections are in the candidate: the device's diff does not delete them.
    assert not [x for x in dev.diff.splitlines() if x.startswith("-") and "Management" in x]
    assert "-username admin" not in dev.diff
    assert lab.state(SPINE) == before  # running, startup and flash untouched
    assert dev.before_sha256 == dev.after_sha256
    assert report.exit_code == 0
    assert any("diff by the device" in line for line in lab.output)

    report = lab.push(devices=SPINE, commit=True, confirm_timeout=60)
    dev = by_name(report)[SPINE]
    assert (dev.status, dev.batch, dev.failed) == ("committed", "canary", False), dev.error
    running = lab.eos[SPINE].running().splitlines()
    loopback = next(s.loopback for s in lab.fabric.switches if s.name == SPINE)
    for line in ("interface Ethernet1/1", "   mtu 9100", "router bgp 65000",
                 f"   router-id {loopback}", *EOS_MGMT):
        assert line in running, line
    # Management1 keeps its address and VRF, in its own section.
    mgmt = running.index("interface Management1")
    assert running[mgmt + 1:mgmt + 4] == EOS_MGMT[4:7]
    assert lab.eos[SPINE].files()["startup-config"] == lab.eos[SPINE].running()  # written
    assert not lab.eos[SPINE].state.sessions  # no timer left pending
    assert dev.before_sha256 != dev.after_sha256
    assert [s.name for s in dev.steps] == \
        ["host-key", "connect", "prepare", "commit", "verify", "health", "confirm"]
    assert "2 BGP session(s) Established" in dev.steps[-2].detail

    again = by_name(lab.push(devices=SPINE))[SPINE]  # idempotent: nothing left to change
    assert (again.status, again.diff) == ("unchanged", "")

    records = lab.audit_records()
    committed = [r for r in records if r["event"] == "device" and r["status"] == "committed"]
    assert committed[0]["device"] == SPINE and committed[0]["mode"] == "replace"
    assert committed[0]["before_sha256"] != committed[0]["after_sha256"]
    assert {r["event"] for r in records} == {"run", "device", "end"}


def test_eos_commit_that_renames_the_switch_survives_the_new_prompt(lab: Lab) -> None:
    """A first push to a switch still called `localhost`: the commit changes the hostname, so
    the prompt the commit's reply ends with is `spine-01#`, not the `localhost#` netmiko saw.
    Then a rename back by a rollback (its batch failed): the prompt changes again."""
    lab.start(SPINE, hostname="localhost")
    eos = lab.eos[SPINE]
    assert eos.state.hostname == "localhost"
    report = lab.push(devices=SPINE, commit=True, confirm_timeout=60, timeout=5)
    dev = by_name(report)[SPINE]
    assert (dev.status, dev.failed, dev.rollback_failed) == ("committed", False, ""), dev.error
    assert "-hostname localhost" in dev.diff and "+hostname spine-01" in dev.diff
    assert eos.state.hostname == "spine-01"  # the fake's prompt really changed
    assert "hostname spine-01" in eos.running().splitlines()
    assert not eos.state.sessions

    # Renamed by hand since; the push renames it back, its BGP check fails, and the abort
    # renames it to what it was once more.
    eos.state.save("running-config", Config.parse(eos.running().replace(
        "hostname spine-01\n", "hostname spare-7\n")))
    eos.state.bgp_down = True
    before = eos.running()
    report = lab.push(devices=SPINE, commit=True, confirm_timeout=60, timeout=5,
                      health_timeout=1)
    dev = by_name(report)[SPINE]
    assert (dev.status, dev.error_kind, dev.rolled_back, dev.rollback_failed) == \
        ("failed", "health", True, ""), dev.error
    assert [s.name for s in dev.steps][-2:] == ["health", "rollback"]
    assert eos.state.hostname == "spare-7" and not eos.state.sessions
    assert eos.running() == before
    assert not any("ROLLBACK FAILED" in line for line in lab.output)


def test_eos_rollback_whose_answer_is_late_says_rolled_back(lab: Lab) -> None:
    """The abort goes through but its answer comes after the timeout: fabgen reads the running
    config back before claiming anything, and it is the one from before the push. (It used to
    print "ROLLBACK FAILED ... check this device by hand".)"""
    lab.start(SPINE)
    eos = lab.eos[SPINE]
    eos.state.bgp_down = True  # the health check fails: the batch rolls back
    eos.state.late = {r"configure session \S+ abort": 3.0}
    before = eos.running()
    report = lab.push(devices=SPINE, commit=True, confirm_timeout=60, timeout=2,
                      health_timeout=1)
    dev = by_name(report)[SPINE]
    assert (dev.status, dev.error_kind, dev.rolled_back, dev.rollback_failed) == \
        ("failed", "health", True, "")
    assert [(s.name, s.failed) for s in dev.steps][-2:] == [("rollback", True),
                                                             ("rollback-check", False)]
    assert "running config read back is the one from before the push" in dev.steps[-1].detail
    assert eos.running() == before and not eos.state.sessions
    assert dev.after_sha256 == dev.before_sha256
    line = next(x for x in lab.output if x.strip().startswith(f"{SPINE}: FAILED"))
    assert line.endswith("; rolled back") and "ROLLBACK FAILED" not in line


def test_eos_silent_mid_commit_gives_one_line_errors_no_traceback(
        lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    """The switch stops answering at the commit command (it never applies it): the command
    line tool prints fabgen's one-line report, and nothing from nornir/napalm/netmiko (whose
    failed close used to print a ~40-line nornir traceback on stderr)."""
    from fabgen.cli import main

    lab.start(SPINE)
    eos = lab.eos[SPINE]
    eos.state.silent_at, eos.state.silent_applies = r"commit timer", False
    before = eos.running()
    code = main(["push", str(lab.intent), "--hosts", str(lab.hosts_file), "-r",
                 str(lab.render_dir), "--known-hosts", str(lab.known_hosts),
                 "--accept-new-host-keys", "--devices", SPINE, "--timeout", "2", "--commit",
                 "--confirm-timeout", "60", "--health-timeout", "1"])
    out, err = capsys.readouterr()
    assert code == 1
    assert err == "", err  # no traceback, no library log line
    status = [x for x in out.splitlines() if x.strip().startswith(f"{SPINE}: FAILED")]
    assert len(status) == 1, out
    assert "FAILED (timeout)" in status[0] and "may have been applied" in status[0]
    assert "ROLLBACK FAILED" in status[0] and "stopped answering" in status[0]
    # What the libraries logged is kept, one line each, as notes under the device.
    notes = [x.strip() for x in out.splitlines() if x.strip().startswith("note: ")]
    assert all("Traceback" not in n and len(n) < 400 for n in notes), notes
    assert eos.running() == before  # it never applied the commit


def test_eos_commit_without_answer_is_possibly_committed(lab: Lab) -> None:
    """The commit takes effect (with its timer) and then the switch goes silent: the commit
    command timed out, so the device must be treated as committed: the report says the commit
    may be live and that the device's confirm timer reverts it."""
    lab.start(SPINE)
    eos = lab.eos[SPINE]
    eos.state.silent_at = r"commit timer"  # applied, then silence
    report = lab.push(devices=SPINE, commit=True, confirm_timeout=45, timeout=2,
                      health_timeout=1)
    dev = by_name(report)[SPINE]
    assert (dev.status, dev.error_kind) == ("failed", "timeout")
    assert dev.error.endswith("commit timer 00:00:45` in time (the commit may have been "
                              "applied)"), dev.error
    assert "its confirm timer (45s, run by device) reverts it unless confirmed" in \
        dev.rollback_failed
    line = next(x for x in lab.output if x.strip().startswith(f"{SPINE}: FAILED"))
    assert "reverts it unless confirmed" in line
    # True: the commit is live on the device, under its timer.
    [session] = eos.state.sessions.values()
    assert session.state == "pendingCommitTimer"
    assert "router bgp 65000" in eos.running()


def test_eos_rejected_line_is_caught_although_napalm_swallows_it(lab: Lab) -> None:
    lab.render(bad=(SPINE,))
    lab.start(SPINE)
    before = lab.state(SPINE)
    report = lab.push(devices=SPINE, commit=True, confirm_timeout=60)
    dev = by_name(report)[SPINE]
    assert (dev.status, dev.error_kind) == ("failed", "rejected")
    assert "frobnicate everything" in dev.error
    assert lab.state(SPINE) == before
    assert not lab.eos[SPINE].state.sessions
    assert report.exit_code == 1 and report.stopped_after == "canary"


# --- SONiC: netmiko, local diff, fabgen's own confirm timer ---------------------------------


SONIC_DEVICE_TABLES = ("AAA", "CRM", "FEATURE", "MGMT_INTERFACE", "MGMT_PORT", "NTP_SERVER",
                       "SYSLOG_SERVER", "TACPLUS_SERVER")


def test_sonic_dry_run_changes_nothing_commit_keeps_management_and_switches_to_frrcfgd(
        lab: Lab) -> None:
    """The fake switch starts as a split-unified one (a hand-kept frr.conf, no bfdd): the push
    moves its BGP into CONFIG_DB, the bgp container restarts into frrcfgd and bfdd, and
    golden_config_db.json keeps the mode for db_migrator."""
    leaf = LEAVES[0]
    lab.start(leaf)
    before = lab.state(leaf)
    initial = lab.linux(leaf).running()
    assert set(SONIC_DEVICE_TABLES) <= set(initial)  # a switch has tables fabgen never writes

    report = lab.push(devices=leaf)
    dev = by_name(report)[leaf]
    assert (dev.status, dev.diff_source) == ("would-change", "local")
    assert '+    "PORT": {' in dev.diff and '+    "BGP_NEIGHBOR": {' in dev.diff
    # Only what fabgen owns is compared: the device's tables and fields are not in the diff.
    for table in SONIC_DEVICE_TABLES:
        assert table not in dev.diff
    assert '"mac"' not in dev.diff.split("--- device:/etc/sonic/golden")[0]
    # The golden file is diffed too: none yet, then the DEVICE_METADATA as it will run.
    assert "--- device:/etc/sonic/golden_config_db.json" in dev.diff
    golden_diff = dev.diff.split("--- device:/etc/sonic/golden_config_db.json")[1]
    assert '+            "docker_routing_config_mode": "unified",' in golden_diff
    assert any("LOCAL diff" in line for line in lab.output)
    assert lab.state(leaf) == before and lab.linux(leaf).leftovers() == []

    report = lab.push(devices=leaf, commit=True, confirm_timeout=60)
    dev = by_name(report)[leaf]
    assert dev.status == "committed", dev.error
    assert dev.extra_sha256["golden"] and [s.name for s in dev.steps][-3:] == [
        "verify", "health", "confirm"]
    assert dev.steps[-2].detail == "2 BGP session(s) Established"
    running = lab.linux(leaf).running()
    render = json.loads(lab.config(leaf))
    for table in ("LOOPBACK_INTERFACE", "PORT", "BGP_NEIGHBOR", "BGP_PEER_GROUP"):
        assert running[table] == render[table]
    for table in SONIC_DEVICE_TABLES:  # carried unchanged: management survives
        assert running[table] == initial[table], table
    meta = running["DEVICE_METADATA"]["localhost"]
    assert (meta["hostname"], meta["bgp_asn"]) == (leaf, "65101")
    # mac, platform, hwsku are the device's; fields fabgen does not render stay.
    for key in ("mac", "platform", "hwsku", "timezone"):
        assert meta[key] == initial["DEVICE_METADATA"]["localhost"][key]
    saved = json.loads((lab.linux(leaf).home / "etc/sonic/config_db.json").read_text())
    assert saved == running  # `config save -y` after confirming
    # The golden file holds the DEVICE_METADATA the switch runs (the device's mac included).
    golden = json.loads((lab.linux(leaf).home / "etc/sonic/golden_config_db.json").read_text())
    assert golden == {"DEVICE_METADATA": running["DEVICE_METADATA"]}
    # The container runs frrcfgd: FRR's config is CONFIG_DB's BGP, the old file is gone.
    frr_file, frr_running = lab.linux(leaf).frr()
    assert frr_file == frr_running
    assert "router bgp 65101" in frr_running and "router bgp 65100" not in frr_running
    assert " neighbor 10.254.0.2 remote-as 65000" in frr_running
    assert (lab.linux(leaf).home / ".fake" / "bgp-daemons").read_text() == "frrcfgd\n"
    # Checkpoint deleted, timer defused, uploads and the backups removed.
    assert not list((lab.linux(leaf).home / ".fake" / "checkpoints").glob("*"))
    assert not list((lab.linux(leaf).home / ".fabgen").glob("*"))
    assert lab.linux(leaf).leftovers() == [".fabgen"]
    again = by_name(lab.push(devices=leaf))[leaf]  # a real switch's extra tables: unchanged
    assert (again.status, again.diff) == ("unchanged", ""), again.diff


def _factory_sku(lab: Lab, name: str) -> dict[str, Any]:
    """Make the fake switch a factory SN5600: ACS-SN5600 (sonic-buildimage
    device/mellanox/x86_64-nvidia_sn5600-r0/default_sku)."""
    home = lab.linux(name).home
    running = json.loads((home / ".fake" / "running.json").read_text())
    running["DEVICE_METADATA"]["localhost"]["hwsku"] = "ACS-SN5600"
    for path in (home / ".fake" / "running.json", home / "etc" / "sonic" / "config_db.json"):
        path.write_text(json.dumps(running, indent=4) + "\n")
    return running


def test_sonic_push_refuses_another_hwsku_unless_told(lab: Lab) -> None:
    """A factory SN5600 runs ACS-SN5600; the render is Mellanox-SN5600-O128's (2x400G): its
    PORT and buffer tables would land on the other SKU's port layout. Dry run and commit are
    refused with SONiC's ways to change the SKU, nothing applied; with --sonic-change-hwsku
    the push writes the render's hwsku through `config reload`."""
    leaf = LEAVES[0]
    lab.start(leaf)
    _factory_sku(lab, leaf)
    before = lab.state(leaf)
    for commit in (False, True):
        dev = by_name(lab.push(devices=leaf, commit=commit, confirm_timeout=60))[leaf]
        assert (dev.status, dev.error_kind) == ("failed", "refused"), dev.error
        assert "runs HwSKU ACS-SN5600, the render is for Mellanox-SN5600-O128" in dev.error
        assert "sonic-cfggen -H -k Mellanox-SN5600-O128 --preset t1" in dev.error
        assert "--sonic-change-hwsku" in dev.error
        assert lab.state(leaf) == before
    with pytest.raises(FabgenError, match="--sonic-change-hwsku needs --sonic-apply reload"):
        lab.push(devices=leaf, commit=True, platform_options={
            "sonic": {"change-hwsku": "yes", "apply": "replace"}})
    dev = by_name(lab.push(devices=leaf, commit=True, confirm_timeout=60,
                           platform_options={"sonic": {"change-hwsku": "yes"}}))[leaf]
    assert dev.status == "committed", dev.error
    assert "HwSKU ACS-SN5600 -> Mellanox-SN5600-O128" in dev.steps[
        [s.name for s in dev.steps].index("prepare")].detail
    assert lab.linux(leaf).running()["DEVICE_METADATA"]["localhost"]["hwsku"] == (
        "Mellanox-SN5600-O128")


def test_sonic_verify_fails_when_bgp_does_not_come_from_config_db(lab: Lab) -> None:
    """A render that leaves the switch on its old daemons (no frr_mgmt_framework_config):
    bgpd keeps the old frr.conf and bfdd does not run; the verify step says so and the commit
    rolls back."""
    leaf = LEAVES[0]
    meta = json.loads(lab.config(leaf))["DEVICE_METADATA"]
    del meta["localhost"]["frr_mgmt_framework_config"]
    meta["localhost"]["docker_routing_config_mode"] = "split-unified"
    lab.render(extra={leaf: {"DEVICE_METADATA": meta}})
    lab.start(leaf)
    before = lab.state(leaf)
    dev = by_name(lab.push(devices=leaf, commit=True, confirm_timeout=60))[leaf]
    assert (dev.status, dev.error_kind, dev.rolled_back) == ("failed", "verify", True), dev.error
    assert "bgpd does not run config_db.json's BGP" in dev.error
    assert "router bgp 65101" in dev.error
    assert lab.state(leaf) == before


def test_sonic_confirm_timer_rolls_back_without_confirmation(lab: Lab) -> None:
    """fabgen's on-device timer for SONiC: nobody confirms (fabgen lost), the device reverts
    config_db, the golden file (there was none) and frr.conf, and the bgp container goes back to
    its old daemons."""
    from netmiko import ConnectHandler

    from fabgen.platforms.sonic.push.driver import SonicDriver
    from fabgen.push.drivers.base import Render

    leaf = LEAVES[0]
    lab.start(leaf)
    before = lab.state(leaf)
    port = int(lab.addresses[leaf].rsplit(":", 1)[1])
    conn = ConnectHandler(device_type="linux", host="127.0.0.1", port=port, username=USER,
                          password=PASSWORD)
    try:
        driver = SonicDriver(conn, "t1", timeout=10)
        driver.commit(Render(lab.config(leaf), {"golden": lab.golden(leaf)}), confirm_seconds=1)
        assert lab.linux(leaf).running()["PORT"] == json.loads(lab.config(leaf))["PORT"]
        assert "router bgp 65101" in lab.linux(leaf).frr()[1]
    finally:
        conn.disconnect()
    def state() -> dict[str, str]:  # the checkpoint stays: the timer cannot know it is unused
        return {k: v for k, v in lab.state(leaf).items()
                if not k.startswith(".fake/checkpoints/")}

    deadline = time.monotonic() + 10
    while state() != before and time.monotonic() < deadline:
        time.sleep(0.2)
    after = state()
    assert after == before, sorted(k for k in set(after) | set(before)
                                   if after.get(k) != before.get(k))


def test_batch_failure_rolls_back_batch_and_leaves_later_batches_untouched(lab: Lab) -> None:
    """Canary r0, batch 1 = r1 + r2 (r2 rejects its config), batch 2 = r3 (4 leaves of one
    unit, --max-tier-fraction 0.5: two at once)."""
    lab.render(bad=(LEAVES[2],))
    lab.start(*LEAVES)
    before = {n: lab.state(n) for n in LEAVES}

    report = lab.push(devices="leaf-*", commit=True, batch_size=2, confirm_timeout=60,
                     max_tier_fraction=0.5)
    devs = by_name(report)
    assert [devs[n].batch for n in LEAVES] == ["canary", "1", "1", ""]
    assert devs[LEAVES[0]].status == "committed"
    assert lab.linux(LEAVES[0]).running()["PORT"] == json.loads(lab.config(LEAVES[0]))["PORT"]
    # r1 succeeded, but its batch failed: rolled back to its checkpoint.
    assert (devs[LEAVES[1]].status, devs[LEAVES[1]].rolled_back) == ("rolled-back", True)
    assert lab.linux(LEAVES[1]).running() == json.loads(before[LEAVES[1]][".fake/running.json"])
    assert devs[LEAVES[1]].after_sha256 == devs[LEAVES[1]].before_sha256
    # r2 rejected its config and was rolled back.
    assert (devs[LEAVES[2]].status, devs[LEAVES[2]].error_kind) == ("failed", "rejected")
    assert "bogus_table" in devs[LEAVES[2]].error and devs[LEAVES[2]].rolled_back
    assert lab.state(LEAVES[2]) == before[LEAVES[2]]
    # r3: never connected to, nothing changed, listed as not touched.
    assert lab.linux(LEAVES[3]).connections == 0
    assert lab.state(LEAVES[3]) == before[LEAVES[3]]
    assert [d.name for d in report.untouched] == [LEAVES[3]]
    assert report.stopped_after == "batch 1/2" and report.exit_code == 1
    assert any("not touched: leaf-su1-r3" in line for line in lab.output)
    statuses = {r["device"]: r["status"] for r in lab.audit_records() if r["event"] == "device"}
    assert statuses == {LEAVES[0]: "committed", LEAVES[1]: "rolled-back",
                        LEAVES[2]: "failed", LEAVES[3]: "not-attempted"}


# --- Cumulus NVUE: netmiko, the device's diff and commit-confirm --------------------------


def test_nvue_dry_run_changes_nothing_commit_keeps_management(nvue_lab: Lab) -> None:
    lab, leaf = nvue_lab, LEAVES[1]
    lab.start(leaf)
    before = lab.state(leaf)
    initial = yaml.safe_load(lab.linux(leaf).running())

    dev = by_name(lab.push(devices=leaf))[leaf]
    assert (dev.status, dev.diff_source) == ("would-change", "device")
    # NVUE's own diff format: the operations from the applied config to the candidate.
    ops = yaml.safe_load(dev.diff)
    assert [list(op) for op in ops] == [["set"]]  # nothing of the device's is unset
    assert ops[0]["set"]["interface"]["swp1"] == {"type": "swp", "link": {"mtu": 9100}}
    # Counted from those operations, not from line prefixes: every "- set:" item line starts
    # with "-", which read as a removal gave "(+0 -1)".
    assert dev.diff_stat() == (5, 0)  # lo address, swp1 type and mtu, neighbour remote-as, type
    assert any(line == f"{leaf}: would change (+5 -0)" for line in lab.output), lab.output
    assert lab.state(leaf) == before and lab.linux(leaf).leftovers() == []

    dev = by_name(lab.push(devices=leaf, commit=True, confirm_timeout=60))[leaf]
    assert dev.status == "committed", dev.error
    assert [s.name for s in dev.steps][-3:] == ["verify", "health", "confirm"]
    assert dev.steps[-2].detail == "1 BGP session(s) Established"
    applied = yaml.safe_load(lab.linux(leaf).running())
    render = yaml.safe_load(lab.config(leaf))[0]["set"]
    header, tree = applied[0], applied[1]["set"]
    assert header == initial[0]
    for key in ("lo", "swp1"):
        assert tree["interface"][key] == render["interface"][key]
    assert tree["vrf"]["default"] == render["vrf"]["default"]
    assert tree["system"]["hostname"] == leaf
    # The device's own: eth0 with its address in vrf mgmt, the mgmt VRF, ssh, NTP.
    was = initial[1]["set"]
    assert tree["interface"]["eth0"] == was["interface"]["eth0"]
    assert tree["vrf"]["mgmt"] == was["vrf"]["mgmt"]
    assert tree["system"]["ssh-server"] == was["system"]["ssh-server"]
    assert tree["service"] == was["service"]
    state = lab.linux(leaf).files()
    assert state["etc/nvue.d/startup.yaml"] == lab.linux(leaf).running()  # `nv config save`
    assert ".fake/confirm.json" not in state and ".fake/pending.yaml" not in state
    assert lab.linux(leaf).leftovers() == []
    assert by_name(lab.push(devices=leaf))[leaf].status == "unchanged"


def test_nvue_diff_counts_values_set_and_unset() -> None:
    """`nv config diff` prints operations; each `- set:`/`- unset:` item line starts with "-",
    which a line count took for removals ("(+0 -2)" for a diff that only adds)."""
    diff = ("- set:\n    interface:\n      swp1:\n        link:\n          mtu: 9100\n"
            "      lo:\n        ip:\n          address:\n            10.255.0.1/32: {}\n"
            "- unset:\n    interface:\n      swp9:\n    system:\n      ntp:\n")
    assert NvueDriver.diff_stat(diff) == (2, 2)
    assert NvueDriver.diff_stat("") == (0, 0)
    assert NvueDriver.diff_stat("--- a\n+++ b\n+x\n-y\n-z\n") == (1, 2)  # not NVUE's: lines


def test_nvue_rejected_config_changes_nothing(nvue_lab: Lab) -> None:
    lab, leaf = nvue_lab, LEAVES[0]
    lab.render(bad=(leaf,))
    lab.start(leaf)
    before = lab.state(leaf)
    dev = by_name(lab.push(devices=leaf, commit=True, confirm_timeout=60))[leaf]
    assert (dev.status, dev.error_kind) == ("failed", "rejected")
    assert "frobnicate" in dev.error
    assert lab.state(leaf) == before and lab.linux(leaf).leftovers() == []


# --- management guard and health check ----------------------------------------------------


def test_candidate_that_would_cut_management_off_is_refused(lab: Lab) -> None:
    """A render that owns the management parts (a table, a section) would take them away: the
    candidate is refused before anything is applied."""
    leaf = LEAVES[0]
    lab.render(extra={leaf: {"MGMT_INTERFACE": {}, "MGMT_PORT": {"eth0": {"admin_status": "down"}}},
                      SPINE: ["interface Management1", "   shutdown", "!"]})
    lab.start(leaf, SPINE)
    before = {n: lab.state(n) for n in (leaf, SPINE)}
    report = lab.push(devices=f"{leaf},{SPINE}", commit=True, confirm_timeout=60)
    devs = by_name(report)
    assert (devs[leaf].status, devs[leaf].error_kind) == ("failed", "refused")
    assert "MGMT_INTERFACE|eth0|192.0.2.31/24" in devs[leaf].error
    assert "MGMT_PORT|eth0" in devs[leaf].error and "nothing was applied" in devs[leaf].error
    assert devs[SPINE].status == "not-attempted" and report.exit_code == 1
    dev = by_name(lab.push(devices=SPINE, commit=True, confirm_timeout=60))[SPINE]
    assert (dev.status, dev.error_kind) == ("failed", "refused")
    assert "interface Management1" in dev.error
    for name in (leaf, SPINE):
        assert lab.state(name) == before[name]
    assert lab.linux(leaf).leftovers() == [] and not lab.eos[SPINE].state.sessions


def test_nvue_candidate_without_eth0_address_is_refused(nvue_lab: Lab) -> None:
    lab, leaf = nvue_lab, LEAVES[0]
    lab.render(extra={leaf: "      eth0:\n        type: eth\n"})
    lab.start(leaf)
    before = lab.state(leaf)
    dev = by_name(lab.push(devices=leaf))[leaf]
    assert (dev.status, dev.error_kind) == ("failed", "refused")
    assert "interface eth0 ip" in dev.error
    assert lab.state(leaf) == before and lab.linux(leaf).leftovers() == []


def test_bgp_sessions_down_after_commit_roll_the_batch_back(lab: Lab) -> None:
    lab.start(LEAVES[0], LEAVES[1])
    lab.linux(LEAVES[0]).bgp_down()
    before = {n: lab.state(n) for n in LEAVES[:2]}
    report = lab.push(devices="leaf-su1-r[01]", commit=True, confirm_timeout=60,
                      health_timeout=1)
    dev = by_name(report)[LEAVES[0]]
    assert (dev.status, dev.error_kind, dev.rolled_back) == ("failed", "health", True)
    assert "2 of 2 BGP session(s)" in dev.error and "10.254.0.0 (Active)" in dev.error
    assert "--health-timeout 0" in dev.error  # none was up before: the hint says so
    assert [s.name for s in dev.steps][-2:] == ["health", "rollback"]
    assert lab.state(LEAVES[0]) == before[LEAVES[0]]  # config_db, golden, frr.conf restored
    assert lab.linux(LEAVES[1]).connections == 0 and report.stopped_after == "canary"


# --- ownership rules and rollout order (no device) ------------------------------------------


def test_sonic_candidate_merges_flex_counters_instead_of_replacing_them() -> None:
    """FLEX_COUNTER_TABLE is merged row by row: a group the image or the operator enabled
    stays, a POLL_INTERVAL tuned on the switch stays, the rendered fields win."""
    running = {"FLEX_COUNTER_TABLE": {
        "PG_DROP": {"FLEX_COUNTER_STATUS": "enable"},
        "TUNNEL": {"FLEX_COUNTER_STATUS": "enable", "POLL_INTERVAL": "10000"},
        "QUEUE": {"FLEX_COUNTER_STATUS": "disable", "POLL_INTERVAL": "5000"}},
        "PORT": {"Ethernet0": {"mtu": "1500"}}}
    render = {"FLEX_COUNTER_TABLE": {"QUEUE": {"FLEX_COUNTER_STATUS": "enable"},
                                     "WRED_ECN_QUEUE": {"FLEX_COUNTER_STATUS": "enable"}},
              "PORT": {"Ethernet0": {"mtu": "9100"}, "Ethernet8": {"mtu": "9100"}}}
    got = sonic_cand.sonic_candidate(running, render)
    assert got["FLEX_COUNTER_TABLE"] == {
        "PG_DROP": {"FLEX_COUNTER_STATUS": "enable"},
        "TUNNEL": {"FLEX_COUNTER_STATUS": "enable", "POLL_INTERVAL": "10000"},
        "QUEUE": {"FLEX_COUNTER_STATUS": "enable", "POLL_INTERVAL": "5000"},
        "WRED_ECN_QUEUE": {"FLEX_COUNTER_STATUS": "enable"}}
    assert got["PORT"] == render["PORT"]  # other tables are still replaced whole
    # The diff and the read-back compare only what fabgen rendered.
    assert sonic_cand.sonic_owned(got, render)["FLEX_COUNTER_TABLE"] == {
        "QUEUE": {"FLEX_COUNTER_STATUS": "enable"},
        "WRED_ECN_QUEUE": {"FLEX_COUNTER_STATUS": "enable"}}


def test_candidates_replace_what_fabgen_owns_and_keep_the_rest() -> None:
    from fabgen.push import candidate as cand

    running = ("! Command: show running-config\nhostname old\nusername admin secret sha512 x\n"
               "interface Ethernet1/1\n   mtu 1500\n   shutdown\ninterface Ethernet9/1\n"
               "   mtu 1500\ninterface Management1\n   ip address 192.0.2.5/24\n"
               "qos map dscp 0 to traffic-class 1\nrouter bgp 65000\n   neighbor 10.0.0.9 "
               "remote-as 1\nend\n")
    render = ("hostname new\n!\ninterface Ethernet1/1\n   mtu 9100\n!\n"
              "qos map dscp 26 to traffic-class 3\n!\nrouter bgp 65101\n"
              "   neighbor SPINE peer group\n   neighbor 10.0.0.1 peer group SPINE\n"
              "   neighbor 10.0.0.3 remote-as 65000\nend\n")
    got = eos_cand.eos_candidate(running, render)
    headers = [s[0] for s in cand.cli_sections(got)]
    assert headers == ["hostname new", "interface Ethernet1/1",
                       "qos map dscp 26 to traffic-class 3", "router bgp 65101",
                       "username admin secret sha512 x", "interface Ethernet9/1",
                       "interface Management1"]
    assert "   shutdown" not in got and got.endswith("end\n")
    assert cand.bgp_neighbours(render) == ["10.0.0.1", "10.0.0.3"]
    assert cand.lost_management(eos_cand.eos_management(running),
                                eos_cand.eos_management(got)) == []

    have = [{"header": {"rev-id": 1}}, {"set": {
        "interface": {"swp1": {"link": {"mtu": 1500}, "description": "old"},
                      "swp2": {"type": "swp"}, "eth0": {"ip": {"vrf": "mgmt"}}},
        "router": {"bgp": {"autonomous-system": 1}, "ospf": {"enable": "on"}},
        "system": {"hostname": "old", "aaa": {"user": {"admin": {}}}}}}]
    want = [{"set": {"interface": {"swp1": {"link": {"mtu": 9100}}},
                     "router": {"bgp": {"autonomous-system": 65101}},
                     "system": {"hostname": "new"}, "qos": {"roce": {"enable": "on"}}}}]
    assert nvue_cand.nvue_candidate(have, want) == [{"header": {"rev-id": 1}}, {"set": {
        "interface": {"swp1": {"link": {"mtu": 9100}}, "swp2": {"type": "swp"},
                      "eth0": {"ip": {"vrf": "mgmt"}}},
        "router": {"bgp": {"autonomous-system": 65101}, "ospf": {"enable": "on"}},
        "system": {"hostname": "new", "aaa": {"user": {"admin": {}}}},
        "qos": {"roce": {"enable": "on"}}}}]


def test_batches_never_take_too_much_of_a_tier() -> None:
    """4 spines and the 8 rail leaves of one scalable unit (roce-256-sonic): at --batch-size 4
    the old plan took 3 of 4 spines at once, at 8 it took 7 of 8 rail leaves."""
    import dataclasses

    from fabgen.push.batches import plan
    from fabgen.push.inventory import devices_for

    fabric = build(load(Path(__file__).parents[1] / "inventories" / "roce-256-sonic.yaml").intent)
    devices = devices_for(fabric.switches, {})
    leaves = [f"leaf-su1-r{i}" for i in range(8)]
    spines = [f"spine-0{i}" for i in range(1, 5)]
    for size in (4, 8):
        batches = plan(devices, fabric.switches, None, size, 0.25)
        assert batches == [("canary", leaves[:1]), ("1", leaves[1:3]), ("2", leaves[3:5]),
                           ("3", leaves[5:7]), ("4", leaves[7:]),
                           *((str(i + 5), [s]) for i, s in enumerate(spines))]
    assert plan(devices, fabric.switches, None, 8, 0.5)[1:3] == [("1", leaves[1:5]),
                                                                 ("2", leaves[5:])]
    # Two scalable units: a batch fills up from the other unit, two leaves of each at most.
    su2 = [dataclasses.replace(s, name=s.name.replace("su1", "su2"), group=1)
           for s in fabric.switches if s.role == "leaf"]
    switches = [*fabric.switches, *su2]
    two = plan(devices_for(switches, {}), switches, None, 8, 0.25)
    assert two[1] == ("1", ["leaf-su1-r1", "leaf-su1-r2", "leaf-su2-r0", "leaf-su2-r1"])
    with pytest.raises(FabgenError, match="takes 4 spines of plane 0 pod 0 at once; at most 1"):
        plan(devices, fabric.switches, "spine-*", 4, 0.25)
    with pytest.raises(FabgenError, match="mixes roles"):
        plan(devices, fabric.switches, "spine-01,leaf-su1-r0", 4, 0.25)


# --- failures are per device, never fatal ----------------------------------------------------


def closed_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    sock.close()
    return port


def test_unreachable_auth_failure_and_timeout_are_reported_not_fatal(lab: Lab) -> None:
    lab.start(LEAVES[0])
    lab.start(LEAVES[1], password="not-the-password")
    lab.addresses[LEAVES[2]] = f"127.0.0.1:{closed_port()}"
    silent = socket.socket()  # accepts TCP (the kernel does) but never says a word of SSH
    silent.bind(("127.0.0.1", 0))
    silent.listen(4)
    lab.addresses[LEAVES[3]] = f"127.0.0.1:{silent.getsockname()[1]}"
    lab.write_hosts()
    try:
        report = lab.push(devices="leaf-*", timeout=1)
    finally:
        silent.close()
    devs = by_name(report)
    assert devs[LEAVES[0]].status == "would-change"
    assert (devs[LEAVES[1]].status, devs[LEAVES[1]].error_kind) == ("failed", "auth")
    assert (devs[LEAVES[2]].status, devs[LEAVES[2]].error_kind) == ("failed", "unreachable")
    assert (devs[LEAVES[3]].status, devs[LEAVES[3]].error_kind) == ("failed", "timeout")
    assert report.exit_code == 1
    assert any(line.startswith(f"{LEAVES[2]}: FAILED (unreachable)") for line in lab.output)
    assert len([r for r in lab.audit_records() if r["event"] == "device"]) == 4


def test_host_keys_unknown_refused_changed_refused(lab: Lab) -> None:
    leaf = LEAVES[0]
    lab.start(leaf)
    dev = by_name(lab.push(devices=leaf, accept_new_host_keys=False))[leaf]
    assert (dev.error_kind, lab.linux(leaf).connections) == ("host-key", 1)  # no login tried
    assert "--accept-new-host-keys" in dev.error
    assert by_name(lab.push(devices=leaf))[leaf].status == "would-change"  # key now recorded
    assert by_name(lab.push(devices=leaf, accept_new_host_keys=False))[leaf].status == \
        "would-change"
    # Another key under the same name: refused even with --accept-new-host-keys.
    name, kind, _ = lab.known_hosts.read_text().split()
    fake = asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode().split()[1]
    lab.known_hosts.write_text(f"{name} {kind} {fake}\n")
    dev = by_name(lab.push(devices=leaf))[leaf]
    assert dev.error_kind == "host-key" and "HOST KEY CHANGED" in dev.error


# --- input checks, before any device is contacted ------------------------------------------


def test_commit_refuses_a_render_edited_after_rendering(lab: Lab) -> None:
    leaf = LEAVES[0]
    lab.start(leaf)
    path = lab.render_dir / f"sonic/{leaf}/config_db.json"
    path.write_text(path.read_text().replace("9100", "1500"))
    report = lab.push(devices=leaf, commit=True)
    assert report.refused and "changed after rendering" in report.refused
    assert lab.linux(leaf).connections == 0 and report.exit_code == 1


def test_hosts_file_names_must_be_switches(lab: Lab) -> None:
    lab.hosts_file.write_text("leaf-su1-r0: 127.0.0.1:22\nleaf-su9-r0: 10.0.0.1\n"
                              "spine-01: {host: 10.0.0.2, port: 99999}\n")
    with pytest.raises(FabgenError) as exc:
        lab.push()
    rendered = [d.render() for d in exc.value.diagnostics]
    assert rendered[0].endswith("hosts.yaml:2:1: leaf-su9-r0: no switch of tiny "
                                "has this name (did you mean leaf-su1-r0, leaf-su1-r1, "
                                "leaf-su1-r2?)")
    assert "port 99999 is out of range" in rendered[1]


@pytest.mark.parametrize(("value", "expected"), [
    ("10.0.0.1", Address("10.0.0.1", 22)),
    ("10.0.0.1:2222", Address("10.0.0.1", 2222)),
    ("sw1.mgmt.example", Address("sw1.mgmt.example", 22)),
    ("2001:db8::1", Address("2001:db8::1", 22)),
    ("[2001:db8::1]:830", Address("2001:db8::1", 830)),
    ({"host": "10.0.0.2", "port": 22}, Address("10.0.0.2", 22)),
])
def test_parse_address(value: Any, expected: Address) -> None:
    assert parse_address(value) == expected


@pytest.mark.parametrize("value", ["10.0.0.1:x", "10.0.0.1:0", "", 7, {"port": 22},
                                   {"host": "h", "user": "admin"}, "2001:db8::zz"])
def test_parse_address_rejects(value: Any) -> None:
    with pytest.raises(ValueError):
        parse_address(value)


def test_credentials_from_env_or_refused_without_terminal() -> None:
    env = {"FABGEN_USERNAME": "u", "FABGEN_PASSWORD": "p", "FABGEN_EOS_PASSWORD": "e"}
    got = resolve(["eos", "sonic"], env=env, interactive=False)
    assert (got["eos"].password, got["sonic"].password, got["sonic"].username) == ("e", "p", "u")
    assert "p" not in repr(got["sonic"]).replace("password", "")
    with pytest.raises(FabgenError, match="FABGEN_PASSWORD"):
        resolve(["sonic"], env={"FABGEN_USERNAME": "u"}, interactive=False)
    prompted = resolve(["sonic"], env={}, interactive=True, ask_password=lambda _: "typed",
                       ask_username=lambda _: "me")
    assert prompted["sonic"] == type(prompted["sonic"])("me", "typed")
    assert Redactor(["typed"])("x typed y") == "x ******** y"


def test_cli_push_dry_run_then_commit(lab: Lab, capsys: pytest.CaptureFixture[str]) -> None:
    """The `fabgen push` command itself: dry run by default, --commit applies, exit codes."""
    from fabgen.cli import main

    leaf = LEAVES[0]
    lab.start(leaf)
    before = lab.state(leaf)
    common = ["push", str(lab.intent), "--hosts", str(lab.hosts_file), "-r", str(lab.render_dir),
              "--known-hosts", str(lab.known_hosts), "--accept-new-host-keys",
              "--devices", leaf, "--timeout", "20"]
    assert main(common) == 0
    assert f"{leaf}" in capsys.readouterr().out
    assert lab.state(leaf) == before, "a dry run changes nothing"
    assert main([*common, "--commit", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    [device] = [d for d in report["devices"] if d["device"] == leaf]
    assert (device["status"], device["changed"], device["failed"]) == ("committed", True, False)
    assert lab.state(leaf) != before, "a commit changes the device"
    assert main([*common, "--rail", "x"]) == 1  # a usage error


def test_library_log_records_become_one_line_notes() -> None:
    """nornir logs a failed task with its whole traceback; fabgen keeps the first line and the
    exception, under the device it names, and nothing reaches the root logger or stderr."""
    import logging
    import traceback

    from fabgen.push import liblog

    try:
        raise TimeoutError("Pattern not detected: 'spine\\-01\\#' in output.\nsecond line")
    except TimeoutError:
        tb = traceback.format_exc()
    with liblog.captured() as log:
        logging.getLogger("nornir.core.task").error(
            "Host %r: task %r failed with traceback:\n%s", "spine-01", "close_connections_task",
            tb)
        logging.getLogger("paramiko.transport").error("Socket exception: reset (104)")
        assert not logging.getLogger("nornir").propagate
    assert log.take("spine-01") == ["nornir: task 'close_connections_task' failed: "
                                    "TimeoutError: Pattern not detected: 'spine\\-01\\#' in "
                                    "output."]
    assert log.take_general() == ["paramiko: Socket exception: reset (104)"]
    assert logging.getLogger("nornir").propagate  # restored


def test_secrets_are_masked_in_every_output_mode(lab: Lab, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A device whose error and diff carry the password (a CLI echoing a rejected line, a
    library message): masked on the console, in --json, in --quiet and in the audit log.
    (--json and --quiet printed the report unmasked.)"""
    from fabgen.cli import main
    from fabgen.platforms.sonic.push.driver import SonicDriver
    from fabgen.push.drivers.base import Render
    from fabgen.push.results import Step

    def prepare(self: SonicDriver, render: Render) -> Step:
        if "leaf-su1-r1" in render.config:
            raise DeviceError("rejected", f"Error: snmp community {PASSWORD} is not valid")
        return Step("prepare", changed=True, diff=f"+snmp community {PASSWORD}\n")

    monkeypatch.setattr(SonicDriver, "prepare", prepare)
    lab.start(LEAVES[0], LEAVES[1])
    common = ["push", str(lab.intent), "--hosts", str(lab.hosts_file), "-r", str(lab.render_dir),
              "--known-hosts", str(lab.known_hosts), "--accept-new-host-keys",
              "--devices", "leaf-su1-r[01]", "--timeout", "20"]
    for mode in ([], ["--json"], ["--quiet"]):
        assert main([*common, *mode]) == 1
        out, err = capsys.readouterr()
        assert PASSWORD not in out + err, mode
        assert "********" in out + err, mode
        if mode == ["--json"]:
            devices = {d["device"]: d for d in json.loads(out)["devices"]}
            assert devices[LEAVES[0]]["diff"] == "+snmp community ********\n"
            assert devices[LEAVES[1]]["error"] == "Error: snmp community ******** is not valid"
        if mode == ["--quiet"]:
            assert out == "" and err.strip() == \
                f"error: {LEAVES[1]}: rejected: Error: snmp community ******** is not valid"
    audit = lab.audit.read_text()
    assert PASSWORD not in audit and "snmp community ******** is not valid" in audit


def test_progress_counts_devices_in_dry_run_and_commit(lab: Lab) -> None:
    """The CLI's progress bar is fed (done, total) as devices finish: per chunk in a dry run,
    per batch in a commit."""
    lab.start(LEAVES[0], LEAVES[1])
    seen: list[tuple[int, int]] = []
    options = PushOptions(intent=lab.intent, hosts=lab.hosts_file, render_dir=lab.render_dir,
                          known_hosts=lab.known_hosts, accept_new_host_keys=True, timeout=20,
                          workers=4, devices=f"{LEAVES[0]},{LEAVES[1]}")
    run(options, lab.output.append, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(2, 2)]
    seen.clear()
    commit = dataclasses.replace(options, commit=True, health_timeout=0)
    report = run(commit, lab.output.append, progress=lambda d, t: seen.append((d, t)))
    assert report.exit_code == 0, lab.output
    assert seen[-1] == (2, 2) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert len(seen) >= 2  # the canary, then the next batch
