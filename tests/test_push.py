"""`fabgen push` against real SSH servers on 127.0.0.1: fake EOS (napalm), SONiC and NVUE
(netmiko), each started by the test on an ephemeral port and stopped after it."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncssh
import paramiko
import pytest

from fabgen.errors import FabgenError
from fabgen.intent import load
from fabgen.output import with_manifest, write
from fabgen.push import PushOptions, PushReport, run
from fabgen.push.credentials import Redactor, resolve
from fabgen.push.inventory import Address, parse_address
from fabgen.topology.build import build
from tests.fakes.fake_eos import FakeEos
from tests.fakes.fake_linux import FakeLinuxSwitch, LinuxFleet

USER = "admin"
PASSWORD = "pw-Zq8vK!fabgen-7731"  # must never appear in anything fabgen writes or prints

INTENT = """\
name: tiny
fabric: {transport: roce, speed: 400G}
cluster:
  nodes: 2
  node: {model: dgx-h100, gpus: 4, nics: 4, nic: connectx-7, nic_ports: 1}
topology:
  style: rail-optimized
  leaf: {model: sn5600, breakout: 2x400G}
  spine: {model: sn5600, breakout: 2x400G}
qos: {mtu: 9100, host_mtu: 9000}
platforms: {leaf: LEAF, spine: eos}
"""
LEAVES = [f"leaf-su1-r{i}" for i in range(4)]
SPINE = "spine-01"


def sonic_config(name: str, loopback: str, bad: bool = False) -> str:
    data: dict[str, Any] = {
        "DEVICE_METADATA": {"localhost": {"hostname": name, "hwsku": "fake", "bgp_asn": "65101"}},
        "LOOPBACK_INTERFACE": {"Loopback0": {}, f"Loopback0|{loopback}/32": {}},
        "PORT": {f"Ethernet{i * 8}": {"admin_status": "up", "mtu": "9100", "speed": "400000"}
                 for i in range(3)},
    }
    if bad:
        data["bogus_table"] = {"x": {"y": "z"}}
    return json.dumps(data, indent=4, sort_keys=True) + "\n"


def eos_config(name: str, loopback: str, bad: bool = False) -> str:
    lines = [f"hostname {name}", "ip routing", "!", "interface Loopback0",
             f"   ip address {loopback}/32", "!"]
    for i in (1, 2):
        lines += [f"interface Ethernet{i}/1", f"   description leaf-su1-r{i - 1}", "   mtu 9100",
                  "   priority-flow-control on", "!"]
    lines += ["router bgp 65000", f"   router-id {loopback}", "!"]
    if bad:
        lines += ["frobnicate everything", "!"]
    return "\n".join([*lines, "end"]) + "\n"


def nvue_config(name: str, loopback: str, bad: bool = False) -> str:
    text = (f"- set:\n    system:\n      hostname: {name}\n    interface:\n      lo:\n"
            f"        ip:\n          address:\n            {loopback}/32: {{}}\n"
            "      swp1:\n        type: swp\n        link: {mtu: 9100}\n")
    return text + ("    frobnicate: {all: true}\n" if bad else "")


RENDER = {"sonic": ("sonic/{}/config_db.json", sonic_config),
          "eos": ("eos/{}.cfg", eos_config),
          "nvue": ("nvue/{}/startup.yaml", nvue_config)}


class Lab:
    """A tiny fabric on disk (intent, render, hosts file) and its fake switches on 127.0.0.1."""

    def __init__(self, tmp: Path, eos_key: paramiko.PKey, leaf: str = "sonic") -> None:
        self.tmp, self.eos_key = tmp, eos_key
        self.intent = tmp / "tiny.yaml"
        self.intent.write_text(INTENT.replace("LEAF", leaf))
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

    def render(self, bad: tuple[str, ...] = ()) -> None:
        files = {}
        for s in self.fabric.switches:
            path, fn = RENDER[s.platform]
            files[path.format(s.name)] = fn(s.name, str(s.loopback), s.name in bad)
        write(self.render_dir, with_manifest(files, self.loaded.source.sha256, "tiny"))

    def config(self, name: str) -> str:
        s = next(x for x in self.fabric.switches if x.name == name)
        path, _ = RENDER[s.platform]
        return (self.render_dir / path.format(name)).read_text()

    def start(self, *names: str, password: str | None = None) -> None:
        for name in names:
            platform = next(s.platform for s in self.fabric.switches if s.name == name)
            if platform == "eos":
                self.eos[name] = FakeEos(self.tmp / "eos" / name, name, USER,
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


def test_eos_dry_run_changes_nothing_commit_changes(lab: Lab) -> None:
    lab.start(SPINE)
    before = lab.state(SPINE)

    report = lab.push(devices=SPINE)
    dev = by_name(report)[SPINE]
    assert (dev.status, dev.failed, dev.diff_source, dev.mode) == \
        ("would-change", False, "device", "replace")
    assert "+interface Ethernet1/1" in dev.diff and "+router bgp 65000" in dev.diff
    assert lab.state(SPINE) == before  # running, startup and flash untouched
    assert dev.before_sha256 == dev.after_sha256
    assert report.exit_code == 0
    assert any("diff by the device" in line for line in lab.output)

    report = lab.push(devices=SPINE, commit=True, confirm_timeout=60)
    dev = by_name(report)[SPINE]
    assert (dev.status, dev.batch, dev.failed) == ("committed", "canary", False), dev.error
    running = lab.eos[SPINE].running()
    for line in ("interface Ethernet1/1", "   mtu 9100", "router bgp 65000",
                 "   router-id 10.255.0.5"):
        assert line in running.splitlines()
    assert lab.eos[SPINE].files()["startup-config"] == running  # confirmed: written
    assert not lab.eos[SPINE].state.sessions  # no timer left pending
    assert dev.before_sha256 != dev.after_sha256
    assert [s.name for s in dev.steps] == \
        ["host-key", "connect", "prepare", "commit", "verify", "confirm"]

    again = by_name(lab.push(devices=SPINE))[SPINE]  # idempotent: nothing left to change
    assert (again.status, again.diff) == ("unchanged", "")

    records = lab.audit_records()
    committed = [r for r in records if r["event"] == "device" and r["status"] == "committed"]
    assert committed[0]["device"] == SPINE and committed[0]["mode"] == "replace"
    assert committed[0]["before_sha256"] != committed[0]["after_sha256"]
    assert {r["event"] for r in records} == {"run", "device", "end"}


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


def test_sonic_dry_run_changes_nothing_commit_changes(lab: Lab) -> None:
    leaf = LEAVES[0]
    lab.start(leaf)
    before = lab.state(leaf)

    report = lab.push(devices=leaf)
    dev = by_name(report)[leaf]
    assert (dev.status, dev.diff_source) == ("would-change", "local")
    assert '+    "PORT": {' in dev.diff
    assert any("LOCAL diff" in line for line in lab.output)
    assert lab.state(leaf) == before and lab.linux(leaf).leftovers() == []

    report = lab.push(devices=leaf, commit=True, confirm_timeout=60)
    dev = by_name(report)[leaf]
    assert dev.status == "committed", dev.error
    assert lab.linux(leaf).running() == json.loads(lab.config(leaf))
    saved = json.loads((lab.linux(leaf).home / "etc/sonic/config_db.json").read_text())
    assert saved == json.loads(lab.config(leaf))  # `config save -y` after confirming
    # Checkpoint deleted, timer defused, upload removed.
    assert not list((lab.linux(leaf).home / ".fake" / "checkpoints").glob("*"))
    assert not list((lab.linux(leaf).home / ".fabgen").glob("*"))
    assert lab.linux(leaf).leftovers() == [".fabgen"]
    assert by_name(lab.push(devices=leaf))[leaf].status == "unchanged"


def test_sonic_confirm_timer_rolls_back_without_confirmation(lab: Lab) -> None:
    """fabgen's on-device timer for SONiC: nobody confirms (fabgen lost), the device reverts."""
    from netmiko import ConnectHandler

    from fabgen.push.drivers import SonicDriver

    leaf = LEAVES[0]
    lab.start(leaf)
    initial = lab.linux(leaf).running()
    port = int(lab.addresses[leaf].rsplit(":", 1)[1])
    conn = ConnectHandler(device_type="linux", host="127.0.0.1", port=port, username=USER,
                          password=PASSWORD)
    try:
        driver = SonicDriver(conn, "t1", timeout=10)
        driver.commit(lab.config(leaf), confirm_seconds=1)
        assert lab.linux(leaf).running() == json.loads(lab.config(leaf))
    finally:
        conn.disconnect()
    deadline = time.monotonic() + 10
    while lab.linux(leaf).running() != initial and time.monotonic() < deadline:
        time.sleep(0.2)
    assert lab.linux(leaf).running() == initial


def test_batch_failure_rolls_back_batch_and_leaves_later_batches_untouched(lab: Lab) -> None:
    """Canary r0, batch 1 = r1 + r2 (r2 rejects its config), batch 2 = r3."""
    lab.render(bad=(LEAVES[2],))
    lab.start(*LEAVES)
    before = {n: lab.state(n) for n in LEAVES}

    report = lab.push(devices="leaf-*", commit=True, batch_size=2, confirm_timeout=60)
    devs = by_name(report)
    assert [devs[n].batch for n in LEAVES] == ["canary", "1", "1", ""]
    assert devs[LEAVES[0]].status == "committed"
    assert lab.linux(LEAVES[0]).running() == json.loads(lab.config(LEAVES[0]))
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


def test_nvue_dry_run_changes_nothing_commit_changes(nvue_lab: Lab) -> None:
    lab, leaf = nvue_lab, LEAVES[1]
    lab.start(leaf)
    before = lab.state(leaf)

    dev = by_name(lab.push(devices=leaf))[leaf]
    assert (dev.status, dev.diff_source) == ("would-change", "device")
    assert "+      swp1:" in dev.diff
    assert lab.state(leaf) == before and lab.linux(leaf).leftovers() == []

    dev = by_name(lab.push(devices=leaf, commit=True, confirm_timeout=60))[leaf]
    assert dev.status == "committed", dev.error
    assert lab.linux(leaf).running() == lab.config(leaf)
    state = lab.linux(leaf).files()
    assert state["etc/nvue.d/startup.yaml"] == lab.config(leaf)  # `nv config save`
    assert ".fake/confirm.json" not in state and ".fake/pending.yaml" not in state
    assert lab.linux(leaf).leftovers() == []


def test_nvue_rejected_config_changes_nothing(nvue_lab: Lab) -> None:
    lab, leaf = nvue_lab, LEAVES[0]
    lab.render(bad=(leaf,))
    lab.start(leaf)
    before = lab.state(leaf)
    dev = by_name(lab.push(devices=leaf, commit=True, confirm_timeout=60))[leaf]
    assert (dev.status, dev.error_kind) == ("failed", "rejected")
    assert "frobnicate" in dev.error
    assert lab.state(leaf) == before and lab.linux(leaf).leftovers() == []


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
    assert main([*common, "--rail", "x"]) == 2
