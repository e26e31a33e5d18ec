"""Host scripts and NCCL profiles: shellcheck, real runs against stub tools on a fake sysfs, and
cross-checks of NIC, NCCL, QosPlan and switch configs.

The scripts run for real under bash with tests/fixtures/hoststubs first on PATH (each stub
appends its argv to $FABGEN_STUB_LOG) and FABGEN_SYSFS_ROOT pointing at a fake /sys built here.
Expected values are derived from the QosPlan and the Fabric (links, addresses), not from the
renderers' own data, so a renderer bug cannot hide behind itself.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from functools import cache
from ipaddress import IPv4Address
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabgen import qos
from fabgen.intent import load
from fabgen.intent.models import Intent
from fabgen.qos import QosPlan
from fabgen.targets import nccl, nic, preflight
from fabgen.targets.base import RenderContext
from fabgen.topology.build import build
from fabgen.topology.model import Host, HostPort
from tests.conftest import INVENTORIES, require_tool

STUBS = Path(__file__).parent / "fixtures" / "hoststubs"
# What the inventories do not reach: two planes (a NIC's second port is the adapter's port 2 for
# mlxconfig, rail names carry the plane) and ECN off (no ECN bits in the ToS, DCQCN off).
DUAL_PLANE_NO_ECN = """\
name: roce-dualplane
fabric: {transport: roce, speed: 400G}
cluster:
  nodes: 16
  node: {model: dgx-h100, gpus: 8, nics: 4, nic: connectx-7, nic_ports: 2}
topology:
  style: rail-optimized
  planes: 2
  leaf: {model: sn5600, breakout: 2x400G}
qos:
  ecn: {enabled: false}
platforms: {leaf: sonic, spine: sonic}
hosts: {netdevs: "ens{nic}f{port}np{port}", bootstrap_interface: bond0}
"""
EXTRA_INTENTS = {"roce-dualplane-no-ecn": DUAL_PLANE_NO_ECN}
NAMES = [p.stem for p in INVENTORIES] + sorted(EXTRA_INTENTS)


@cache
def _intent(name: str) -> Intent:
    if name in EXTRA_INTENTS:
        folder = Path(tempfile.mkdtemp(prefix="fabgen-hosts-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        path = folder / f"{name}.yaml"
        path.write_text(EXTRA_INTENTS[name], encoding="utf-8")
        return load(path).intent
    return load(next(p for p in INVENTORIES if p.stem == name)).intent


@cache
def _ctx(name: str) -> RenderContext:
    intent = _intent(name)
    roce = intent.fabric.transport == "roce"
    return RenderContext(intent, build(intent), qos.plan(intent) if roce else None)


def _roce(name: str) -> bool:
    return _ctx(name).fabric.transport == "roce"


ROCE_NAMES = [n for n in NAMES if _roce(n)]
IB_NAMES = [n for n in NAMES if not _roce(n)]


@cache
def _files(name: str) -> dict[str, str]:
    ctx = _ctx(name)
    out: dict[str, str] = {}
    for target in (nic.TARGET, nccl.TARGET, preflight.TARGET):
        if target.applies(ctx):
            out.update(target.render(ctx))
    return out


def _write(files: dict[str, str], dest: Path) -> Path:
    for rel, text in files.items():
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return dest


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return {n: _write(_files(n), tmp_path_factory.mktemp(n)) for n in NAMES}


@pytest.fixture(scope="module")
def stub_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the stubs with the executable bit set (a checkout may not keep it)."""
    dest = tmp_path_factory.mktemp("bin")
    for src in STUBS.iterdir():
        shutil.copy(src, dest / src.name)
        (dest / src.name).chmod(0o755)
    return dest


# --- fake sysfs ------------------------------------------------------------------------------

def _put(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{value}\n", encoding="utf-8")


def _gid(address: IPv4Address) -> str:
    a, b, c, d = address.packed
    return f"0000:0000:0000:0000:0000:ffff:{a << 8 | b:04x}:{c << 8 | d:04x}"


def _pci(hp: HostPort) -> str:
    """The PCI function of hp's RDMA device (one per port: rdma_devices are unique per port)."""
    return f"0000:{0x10 + hp.dev:02x}:00.0"


def _label(ctx: RenderContext, hp: HostPort) -> str:
    return f"rail{hp.rail}" + (f"-plane{hp.plane}" if ctx.fabric.planes > 1 else "")


def _rate(speed: int) -> str:
    return f"{speed} Gb/sec (4X NDR)"


def _ib_port(host: Host, hp: HostPort) -> int:
    """The port number of hp on its RDMA device: 1 + earlier ports sharing the device."""
    return 1 + sum(1 for p in host.ports if p.rdma_device == hp.rdma_device and p.dev < hp.dev)


def _ecn_expected(plan: QosPlan, prio: int) -> int:
    return 1 if plan.ecn is not None and prio == plan.rdma.priority else 0


def fake_sysfs(root: Path, ctx: RenderContext, host: Host, *, configured: bool,
               peermem: bool = True) -> Path:
    """A /sys under root for host: rails present and ACTIVE; `configured` = as nic-setup.sh
    leaves it (MTU, ECN, CNP), else as a fresh boot (MTU 1500, ECN on everywhere)."""
    plan = ctx.qos
    roce = ctx.fabric.transport == "roce"
    sys = root / "sys"
    for hp in host.ports:
        pci = sys / "devices" / "pci0000:00" / _pci(hp)
        (pci / "net" / hp.netdev).mkdir(parents=True, exist_ok=True)
        _put(pci / "numa_node", hp.numa)
        net = sys / "class" / "net" / hp.netdev
        net.mkdir(parents=True)
        (net / "device").symlink_to(pci)
        _put(net / "mtu", (plan.host_mtu if configured and plan else 1500) if roce else 4092)
        ib = sys / "class" / "infiniband" / hp.rdma_device
        if not (ib / "device").exists():
            ib.mkdir(parents=True)
            (ib / "device").symlink_to(pci)
        port = ib / "ports" / str(_ib_port(host, hp))
        _put(port / "state", "4: ACTIVE")
        _put(port / "rate", _rate(ctx.fabric.speed_gbps))
        _put(port / "link_layer", "Ethernet" if roce else "InfiniBand")
        if roce and plan is not None and hp.address is not None:
            gid = ctx.intent.nccl.gid_index
            _put(port / "gids" / str(gid), _gid(hp.address.ip))
            _put(port / "gid_attrs" / "types" / str(gid), "RoCE v2")
            _put(port / "gid_attrs" / "ndevs" / str(gid), hp.netdev)
            ecn = net / "ecn"
            for role in ("roce_np", "roce_rp"):
                for p in range(8):
                    on = _ecn_expected(plan, p) if configured else 1
                    _put(ecn / role / "enable" / str(p), on)
            _put(ecn / "roce_np" / "cnp_dscp", plan.cnp.dscp[0] if configured else 0)
            _put(ecn / "roce_np" / "cnp_802p_prio", plan.cnp.priority if configured else 0)
    if peermem:
        (sys / "module" / "nvidia_peermem").mkdir(parents=True)
    return root


def mlnx_qos_output(plan: QosPlan) -> str:
    """What `mlnx_qos -i <netdev>` prints once the plan is applied (mlnx-tools python/mlnx_qos
    pretty_print and print_dscp2prio_sysfs: 8 DSCPs per line, two digits each)."""
    lines = ["DCBX mode: OS controlled", "Priority trust state: dscp", "dscp2prio mapping:"]
    for prio in range(8):
        dscps = "".join(f"{d:02d}," for d in range(63, -1, -1)
                        if plan.dscp_to_priority[d] == prio)
        while dscps:
            lines.append(f"\tprio:{prio} dscp:{dscps[:24]}")
            dscps = dscps[24:]
    lines += ["Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,max_buffer_size=1048576",
              f"Cable len: {plan.cable_length_m}", "PFC configuration:",
              "\tpriority    0   1   2   3   4   5   6   7",
              "\tenabled     " + "".join(f"{v}   " for v in plan.pfc_vector)
              + "\n\tbuffer      " + "".join(f"{v}   " for v in plan.pfc_vector),
              "tc: 0 ratelimit: unlimited, tsa: vendor", "\t priority:  0"]
    return "\n".join(lines) + "\n"


def _snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


def run(script: Path, *args: str, sysroot: Path, log: Path, stub_bin: Path,
        outputs: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": f"{stub_bin}:{os.environ.get('PATH', '/usr/bin:/bin')}",
           "FABGEN_SYSFS_ROOT": str(sysroot), "FABGEN_STUB_LOG": str(log), "LC_ALL": "C"}
    if outputs is not None:
        env["FABGEN_STUB_OUTPUT"] = str(outputs)
    return subprocess.run(["bash", str(script), *args], env=env, capture_output=True,
                          text=True, timeout=60, check=False)


def calls(log: Path) -> list[list[str]]:
    if not log.exists():
        return []
    return [line.split("\t") for line in log.read_text().splitlines()]


def _gateways(ctx: RenderContext, host: Host) -> dict[int, str]:
    return {link.a_port: str(link.z_address.ip) for link in ctx.fabric.links_of("node-leaf")
            if link.a_device == host.name and link.z_address is not None}


def _rail_order(host: Host) -> list[HostPort]:
    return sorted(host.ports, key=lambda p: (p.rail, p.plane))


def expected_roce_calls(ctx: RenderContext, host: Host, *, firmware: bool,
                        peermem: bool) -> list[list[str]]:
    plan = ctx.qos
    assert plan is not None
    pool = str(ctx.intent.addressing.hosts)
    gateways = _gateways(ctx, host)
    out: list[list[str]] = [] if peermem else [["modprobe", "nvidia_peermem"]]
    for i, hp in enumerate(_rail_order(host)):
        assert hp.address is not None
        ip, table, pref = str(hp.address.ip), str(nic.ROUTE_TABLE_BASE + i), \
            str(nic.RULE_PREF_BASE + i)
        port = str(_ib_port(host, hp))
        dscp_args = [a for d, p in enumerate(plan.dscp_to_priority)
                     for a in ("--dscp2prio", f"set,{d},{p}")]
        out += [
            ["ip", "link", "set", "dev", hp.netdev, "mtu", str(plan.host_mtu), "up"],
            ["ip", "-4", "addr", "replace", hp.address.with_prefixlen, "dev", hp.netdev],
            ["ip", "-4", "route", "replace", pool, "via", gateways[hp.dev], "dev", hp.netdev,
             "table", table],
            ["ip", "-4", "rule", "list", "pref", pref, "from", ip, "table", table],
            ["ip", "-4", "rule", "del", "pref", pref],
            ["ip", "-4", "rule", "add", "pref", pref, "from", ip, "table", table],
            ["mlnx_qos", "-i", hp.netdev, "--trust", "dscp"],
            ["mlnx_qos", "-i", hp.netdev, *dscp_args],
            ["mlnx_qos", "-i", hp.netdev, "--pfc", ",".join(map(str, plan.pfc_vector)),
             "--cable_len", str(plan.cable_length_m)],
            ["cma_roce_mode", "-d", hp.rdma_device, "-p", port, "-m", "2"],
            ["cma_roce_tos", "-d", hp.rdma_device, "-p", port, "-t", str(plan.rdma.tos)],
        ]
    if firmware:
        mask = sum(1 << p for p in range(8) if _ecn_expected(plan, p))
        for hp in _rail_order(host):
            n = hp.port + 1
            out.append(["mlxconfig", "-y", "-d", _pci(hp), "set", f"LINK_TYPE_P{n}=2",
                        f"CNP_DSCP_P{n}={plan.cnp.dscp[0]}",
                        f"CNP_802P_PRIO_P{n}={plan.cnp.priority}",
                        f"ROCE_CC_PRIO_MASK_P{n}={mask}"])
    return out


# --- (a) shellcheck --------------------------------------------------------------------------

@pytest.mark.realtool
@pytest.mark.parametrize("name", NAMES)
def test_shellcheck_passes(name: str, rendered: dict[str, Path]) -> None:
    require_tool("shellcheck")
    root = rendered[name]
    scripts = sorted(str(p) for p in root.rglob("*") if p.suffix in (".sh", ".env"))
    assert any(s.endswith("nic-setup.sh") for s in scripts)
    assert any(s.endswith("preflight.sh") for s in scripts)
    result = subprocess.run(["shellcheck", "--norc", *scripts], capture_output=True, text=True,
                            check=False, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


# --- (b) real runs against stubs -------------------------------------------------------------

@pytest.mark.parametrize("name", ROCE_NAMES)
@pytest.mark.parametrize("firmware", [False, True], ids=["runtime", "firmware"])
def test_roce_nic_setup_runs(name: str, firmware: bool, rendered: dict[str, Path],
                             stub_bin: Path, tmp_path: Path) -> None:
    ctx = _ctx(name)
    plan = ctx.qos
    assert plan is not None
    host = ctx.fabric.hosts[1]  # not the first: the per-host data must be this host's
    sysroot = fake_sysfs(tmp_path / "root", ctx, host, configured=False, peermem=False)
    log = tmp_path / "calls.log"
    args = ["--host", host.name] + (["--firmware"] if firmware else [])
    result = run(rendered[name] / "hosts" / "nic-setup.sh", *args, sysroot=sysroot, log=log,
                 stub_bin=stub_bin)
    assert result.returncode == 0, result.stderr
    assert calls(log) == expected_roce_calls(ctx, host, firmware=firmware, peermem=False)
    net = sysroot / "sys" / "class" / "net"
    for hp in host.ports:
        for role in ("roce_np", "roce_rp"):
            enabled = {p: (net / hp.netdev / "ecn" / role / "enable" / str(p)).read_text()
                       for p in range(8)}
            assert enabled == {p: f"{_ecn_expected(plan, p)}\n" for p in range(8)}, role
        assert (net / hp.netdev / "ecn/roce_np/cnp_dscp").read_text() == f"{plan.cnp.dscp[0]}\n"
        assert (net / hp.netdev / "ecn/roce_np/cnp_802p_prio").read_text() == \
            f"{plan.cnp.priority}\n"
    if not firmware:
        assert "not run (pass --firmware): mlxconfig" in result.stdout


def test_roce_nic_setup_stops_before_any_change_without_the_ecn_driver(
        rendered: dict[str, Path], stub_bin: Path, tmp_path: Path) -> None:
    """The inbox mlx5 driver has no ecn/ directory: the script must refuse up front, not after
    configuring some rails."""
    import shutil

    name = ROCE_NAMES[0]
    ctx = _ctx(name)
    host = ctx.fabric.hosts[0]
    sysroot = fake_sysfs(tmp_path / "root", ctx, host, configured=False, peermem=False)
    last = host.ports[-1].netdev
    shutil.rmtree(sysroot / "sys" / "class" / "net" / last / "ecn")
    before = _snapshot(sysroot)
    log = tmp_path / "calls.log"
    result = run(rendered[name] / "hosts" / "nic-setup.sh", "--host", host.name,
                 sysroot=sysroot, log=log, stub_bin=stub_bin)
    assert result.returncode == 1
    assert f"{last}/ecn missing" in result.stderr
    assert not log.exists(), calls(log)
    assert _snapshot(sysroot) == before


@pytest.mark.parametrize("name", NAMES)
def test_dry_run_runs_nothing_and_writes_nothing(name: str, rendered: dict[str, Path],
                                                 stub_bin: Path, tmp_path: Path) -> None:
    ctx = _ctx(name)
    host = ctx.fabric.hosts[0]
    sysroot = fake_sysfs(tmp_path / "root", ctx, host, configured=False, peermem=False)
    before = _snapshot(sysroot)
    log = tmp_path / "calls.log"
    host_args = ["--host", host.name] if _roce(name) else []
    for script, extra in (("nic-setup.sh", ["--firmware"]), ("preflight.sh", [])):
        result = run(rendered[name] / "hosts" / script, "--dry-run", *host_args, *extra,
                     sysroot=sysroot, log=log, stub_bin=stub_bin)
        assert result.returncode == 0, f"{script}: {result.stderr}"
        assert "dry run" in result.stdout
    assert not log.exists(), calls(log)
    assert _snapshot(sysroot) == before


def _gateway(hp: Any) -> Any:
    """The leaf end of a host port's /31."""
    net = hp.address.network
    return net.network_address if hp.address.ip != net.network_address else net[1]


@pytest.mark.parametrize("name", ROCE_NAMES)
def test_roce_preflight_passes_then_fails_on_wrong_mtu(name: str, rendered: dict[str, Path],
                                                       stub_bin: Path, tmp_path: Path) -> None:
    ctx = _ctx(name)
    plan = ctx.qos
    assert plan is not None
    host = ctx.fabric.hosts[-1]
    sysroot = fake_sysfs(tmp_path / "root", ctx, host, configured=True)
    outputs = tmp_path / "out"
    _put(outputs / "mlnx_qos.out", mlnx_qos_output(plan).rstrip("\n"))
    log = tmp_path / "calls.log"
    script = rendered[name] / "hosts" / "preflight.sh"
    good = run(script, "--host", host.name, sysroot=sysroot, log=log, stub_bin=stub_bin,
               outputs=outputs)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "FAIL" not in good.stdout
    qos_calls = [c for c in calls(log) if c[0] == "mlnx_qos"]
    assert all(c[1:] == ["-i", c[2]] for c in qos_calls)
    assert sorted(c[2] for c in qos_calls) == sorted(hp.netdev for hp in host.ports)
    # one don't-fragment, full-MTU ping per rail to its leaf end of the /31 (a stub: the tests
    # never send a packet)
    pings = sorted(c for c in calls(log) if c[0] == "ping")
    assert pings == sorted(
        ["ping", "-M", "do", "-c", "1", "-W", "2", "-s", str(plan.host_mtu - 28), "-I",
         hp.netdev, str(_gateway(hp))] for hp in host.ports)
    assert {c[0] for c in calls(log)} == {"mlnx_qos", "ping"}

    _put(outputs / "ping.rc", 1)  # a leaf port with a smaller MTU drops the jumbo frame
    dropped = run(script, "--host", host.name, sysroot=sysroot, log=log, stub_bin=stub_bin,
                  outputs=outputs)
    assert dropped.returncode == 1
    frames = [line for line in dropped.stdout.splitlines()
              if line.startswith("FAIL") and "unfragmented" not in line]
    assert len(frames) == len(host.ports)
    assert all(f"{plan.host_mtu}-byte frames do not reach leaf" in line for line in frames)
    (outputs / "ping.rc").unlink()

    victim = _rail_order(host)[3]
    _put(sysroot / "sys" / "class" / "net" / victim.netdev / "mtu", 1500)
    bad = run(script, "--host", host.name, sysroot=sysroot, log=log, stub_bin=stub_bin,
              outputs=outputs)
    assert bad.returncode == 1
    fails = [line for line in bad.stdout.splitlines() if line.startswith("FAIL")]
    assert fails == [f"FAIL {_label(ctx, victim)}: {victim.netdev} MTU: 1500 "
                     f"(want {plan.host_mtu})"], bad.stdout


@pytest.mark.parametrize("name", ROCE_NAMES)
def test_roce_preflight_catches_qos_drift(name: str, rendered: dict[str, Path],
                                          stub_bin: Path, tmp_path: Path) -> None:
    """A NIC left on its default DSCP map (24-31 -> 3) and PFC off fails the QoS checks."""
    ctx = _ctx(name)
    plan = ctx.qos
    assert plan is not None
    host = ctx.fabric.hosts[0]
    sysroot = fake_sysfs(tmp_path / "root", ctx, host, configured=True)
    default_map = QosPlan(plan.classes, tuple(d // 8 for d in range(64)), (), plan.ecn,
                          plan.watchdog, plan.mtu, plan.host_mtu, plan.cable_length_m,
                          plan.fabric_cable_length_m,
                          plan.speed_gbps)
    outputs = tmp_path / "out"
    _put(outputs / "mlnx_qos.out", mlnx_qos_output(default_map))
    result = run(rendered[name] / "hosts" / "preflight.sh", "--host", host.name,
                 sysroot=sysroot, log=tmp_path / "log", stub_bin=stub_bin, outputs=outputs)
    assert result.returncode == 1
    text = result.stdout
    pfc = ",".join(map(str, plan.pfc_vector))
    first = _rail_order(host)[0]
    assert f"FAIL {_label(ctx, first)}: {first.netdev} PFC enabled (priority 0..7): " \
           f"0,0,0,0,0,0,0,0 (want {pfc})" in text
    assert f"DSCPs on lossless priority {plan.rdma.priority}: 24,25,26,27,28,29,30,31 " \
           f"(want {plan.rdma.dscp[0]})" in text


@pytest.mark.parametrize("name", IB_NAMES)
def test_infiniband_scripts_run(name: str, rendered: dict[str, Path], stub_bin: Path,
                                tmp_path: Path) -> None:
    ctx = _ctx(name)
    host = ctx.fabric.hosts[0]
    sysroot = fake_sysfs(tmp_path / "root", ctx, host, configured=True, peermem=False)
    log = tmp_path / "calls.log"
    setup = run(rendered[name] / "hosts" / "nic-setup.sh", "--firmware", sysroot=sysroot,
                log=log, stub_bin=stub_bin)
    assert setup.returncode == 0, setup.stderr
    assert calls(log) == [["modprobe", "nvidia_peermem"]] + [
        ["mlxconfig", "-y", "-d", _pci(hp), "set", f"LINK_TYPE_P{hp.port + 1}=1"]
        for hp in _rail_order(host)]
    assert not list((rendered[name] / "hosts").glob("*.env"))  # nothing host-specific on IB

    check = run(rendered[name] / "hosts" / "preflight.sh", sysroot=sysroot, log=log,
                stub_bin=stub_bin)
    assert check.returncode == 1  # nvidia_peermem is missing in this fake
    assert [x for x in check.stdout.splitlines() if x.startswith("FAIL")] == [
        "FAIL nvidia_peermem not loaded: no GPUDirect RDMA, NCCL would stage through host memory"]
    (sysroot / "sys" / "module" / "nvidia_peermem").mkdir(parents=True)
    ok = run(rendered[name] / "hosts" / "preflight.sh", sysroot=sysroot, log=log,
             stub_bin=stub_bin)
    assert ok.returncode == 0, ok.stdout
    wrong = _rail_order(host)[0]
    _put(sysroot / "sys/class/infiniband" / wrong.rdma_device / "ports/1/state", "1: DOWN")
    down = run(rendered[name] / "hosts" / "preflight.sh", sysroot=sysroot, log=log,
               stub_bin=stub_bin)
    assert down.returncode == 1
    assert f"FAIL rail0: {wrong.rdma_device} port 1 state: DOWN (want ACTIVE)" in down.stdout


# --- (c) NIC script, NCCL env, QosPlan and switch configs agree -------------------------------

def _dry_run_lines(name: str, root: Path, stub_bin: Path, tmp_path: Path) -> list[list[str]]:
    """The commands and writes nic-setup.sh --dry-run prints, split into words."""
    host = _ctx(name).fabric.hosts[0]
    result = run(root / "hosts" / "nic-setup.sh", "--dry-run", "--host", host.name,
                 sysroot=tmp_path / "empty", log=tmp_path / "log", stub_bin=stub_bin)
    assert result.returncode == 0, result.stderr
    return [line.split()[1:] for line in result.stdout.splitlines()
            if line.lstrip().startswith("+ ")]


def _env(path: Path) -> dict[str, str]:
    """Variables a shell gets from sourcing the env file (bash does the parsing)."""
    script = f'set -eu; source "{path}"; env -0'
    out = subprocess.run(["env", "-i", "bash", "-c", script], capture_output=True, check=True,
                         timeout=30).stdout.decode()
    pairs = (item.split("=", 1) for item in out.split("\0") if "=" in item)
    return {k: v for k, v in pairs if k.startswith(("NCCL_", "FI_", "OFI_NCCL_"))}


def _conf(text: str) -> dict[str, str]:
    """KEY=VALUE lines the way NCCL's setEnvFile reads /etc/nccl.conf (src/misc/param.cc)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        out[key] = value
    return out


@pytest.mark.parametrize("name", ROCE_NAMES)
def test_nic_nccl_and_plan_agree(name: str, rendered: dict[str, Path], stub_bin: Path,
                                 tmp_path: Path) -> None:
    ctx = _ctx(name)
    plan = ctx.qos
    assert plan is not None
    lines = _dry_run_lines(name, rendered[name], stub_bin, tmp_path)
    tos = {w[-1] for w in lines if w[0] == "cma_roce_tos"}
    mtus = {w[w.index("mtu") + 1] for w in lines if w[:3] == ["ip", "link", "set"]}
    pfcs = {w[w.index("--pfc") + 1] for w in lines if "--pfc" in w}
    maps = [w for w in lines if "--dscp2prio" in w]
    ecn = {(w[-1].split("/ecn/")[1]): w[1] for w in lines if w[0] == "echo" and "/ecn/" in w[-1]}
    env = _env(rendered[name] / "nccl" / "roce.env")

    # ToS: cma_roce_tos = NCCL_IB_TC = the plan's RDMA ToS, whose DSCP is the RDMA DSCP.
    assert tos == {env["NCCL_IB_TC"]} == {str(plan.rdma.tos)}
    assert int(env["NCCL_IB_TC"]) >> 2 == plan.rdma.dscp[0]
    assert int(env["NCCL_IB_TC"]) & 0b11 == (0b10 if plan.ecn else 0)
    # DSCP -> priority on the NIC is the plan's full map, on every rail.
    assert len(maps) == len(ctx.fabric.hosts[0].ports)
    for words in maps:
        nic_map: dict[int, int] = {}
        for arg in (a for a in words if a.startswith("set,")):
            _, dscp, prio = arg.split(",")
            nic_map[int(dscp)] = int(prio)
        assert nic_map == dict(enumerate(plan.dscp_to_priority))
        assert nic_map[plan.rdma.dscp[0]] == plan.rdma.priority
        assert nic_map[plan.cnp.dscp[0]] == plan.cnp.priority != plan.rdma.priority
    # PFC on the RDMA priority only; ECN (NP and RP) on it only; CNP marking = the plan's.
    assert pfcs == {",".join("1" if p == plan.rdma.priority else "0" for p in range(8))}
    assert plan.pfc_priorities == (plan.rdma.priority,)
    for p in range(8):
        want = "1" if p == plan.rdma.priority and plan.ecn else "0"
        assert ecn[f"roce_np/enable/{p}"] == ecn[f"roce_rp/enable/{p}"] == want
    assert ecn["roce_np/cnp_dscp"] == str(plan.cnp.dscp[0])
    assert ecn["roce_np/cnp_802p_prio"] == str(plan.cnp.priority)
    # MTU: the host's fits inside the switch ports'.
    assert mtus == {str(plan.host_mtu)}
    assert plan.host_mtu <= plan.mtu
    # The .conf for /etc/nccl.conf says the same as the .env.
    assert _conf((rendered[name] / "nccl" / "roce.conf").read_text()) == env


def _switch_files(name: str, platform: str) -> dict[str, str]:
    try:
        module = importlib.import_module(f"fabgen.targets.{platform}")
    except ModuleNotFoundError:
        pytest.skip(f"TODO: fabgen.targets.{platform} does not exist yet; cross-check it "
                    "against the NIC and NCCL values once it does")
    ctx = _ctx(name)
    target = module.TARGET
    if not target.applies(ctx):
        pytest.skip(f"{platform} does not apply to {name}")
    files: dict[str, str] = target.render(ctx)
    return files


def _platforms(name: str) -> list[str]:
    p = _intent(name).platforms
    return sorted({p.leaf, p.spine or p.leaf} | ({p.core} if p.core else set()))


def _switch_cases() -> Iterator[Any]:
    """Each RoCE case with each platform its switches run (only those: a skip proves nothing)."""
    for name in ROCE_NAMES:
        for platform in _platforms(name):
            yield pytest.param(name, platform, id=f"{name}-{platform}")


def _host_side(name: str) -> tuple[dict[str, str], dict[str, str]]:
    """What the host scripts say: {host:rdma_dev or host:netdev -> leaf gateway}."""
    ctx = _ctx(name)
    gateways: dict[str, str] = {}
    for host in ctx.fabric.hosts:
        text = _files(name)[f"hosts/{host.name}.env"]
        values = {m[1]: m[2].split('" "') for m in
                  re.finditer(r'^(HOST_\w+)=\("(.*)"\)$', text, re.MULTILINE)}
        for netdev, gw in zip(values["HOST_NETDEVS"], values["HOST_GATEWAYS"], strict=True):
            hp = next(p for p in host.ports if p.netdev == netdev)
            gateways[f"{host.name}:{netdev}"] = gw
            gateways[f"{host.name}:{hp.rdma_device}"] = gw
    env = _conf(_files(name)["nccl/roce.conf"])
    return gateways, env


@pytest.mark.parametrize(("name", "platform"), list(_switch_cases()))
def test_switch_configs_agree_with_nic_and_nccl(name: str, platform: str) -> None:
    """Every switch maps the NIC's RDMA DSCP (from NCCL_IB_TC) to the priority the NIC runs
    PFC on, the CNP DSCP to the CNP priority, runs PFC on that priority only, has an MTU above
    the hosts', and addresses each host-facing port as the host's gateway."""
    ctx = _ctx(name)
    plan = ctx.qos
    assert plan is not None
    files = _switch_files(name, platform)
    gateways, env = _host_side(name)
    rdma_dscp = int(env["NCCL_IB_TC"]) >> 2
    want_map = dict(enumerate(plan.dscp_to_priority))
    host_mtu = plan.host_mtu
    checked_gateways = 0
    for path, text in sorted(files.items()):
        maps: list[dict[int, int]] = []
        pfc: set[tuple[int, ...]] = set()
        mtus: set[int] = set()
        facing: dict[str, str] = {}  # description -> switch address
        if platform == "sonic":
            if not path.endswith("config_db.json"):
                continue
            db = json.loads(text)
            maps = [{int(k): int(v) for k, v in m.items()}
                    for m in db["DSCP_TO_TC_MAP"].values()]
            pfc = {tuple(sorted(int(x) for x in e["pfc_enable"].split(",")))
                   for e in db["PORT_QOS_MAP"].values() if "pfc_enable" in e}
            mtus = {int(e["mtu"]) for e in db["PORT"].values() if "mtu" in e}
            for key in db.get("INTERFACE", {}):
                if "|" in key:
                    port, addr = key.split("|")
                    desc = db["PORT"].get(port, {}).get("description", "")
                    facing[desc] = addr.split("/")[0]
        elif platform == "eos":
            eos_map: dict[int, int] = {}
            for m in re.finditer(r"^qos map dscp ([\d ]+) to traffic-class (\d)$", text,
                                 re.MULTILINE):
                eos_map.update({int(d): int(m[2]) for d in m[1].split()})
            maps = [eos_map]
            for block in text.split("\n!\n"):
                if not block.startswith("interface Ethernet"):
                    continue
                nodrop = tuple(sorted(int(p) for p in re.findall(
                    r"priority-flow-control priority (\d) no-drop", block)))
                pfc.add(nodrop)
                mtus.update(int(x) for x in re.findall(r"^   mtu (\d+)$", block, re.MULTILINE))
                desc = re.search(r"^   description (\S+)$", block, re.MULTILINE)
                addr = re.search(r"^   ip address ([\d.]+)/31$", block, re.MULTILINE)
                if desc and addr:
                    facing[desc[1]] = addr[1]
        else:
            data = yaml.safe_load(text)[0]["set"]
            q = data["qos"]
            maps = [{int(d): v["switch-priority"]
                     for d, v in q["mapping"]["default-global"]["dscp"].items()}]
            pfc = {tuple(sorted(int(p) for p in
                                q["pfc"]["default-global"]["switch-priority"]))}
            for ifname, iface in data["interface"].items():
                mtu = iface.get("link", {}).get("mtu")
                if mtu is not None:
                    mtus.add(int(mtu))
                addrs = list(iface.get("ip", {}).get("address", {}))
                if "description" in iface and addrs and ifname != "lo":
                    facing[iface["description"]] = addrs[0].split("/")[0]
        assert maps, path
        for dscp_map in maps:
            assert dscp_map[rdma_dscp] == plan.rdma.priority, path
            assert dscp_map[plan.cnp.dscp[0]] == plan.cnp.priority, path
            assert dscp_map == want_map, path
        assert pfc == {(plan.rdma.priority,)}, path
        assert mtus and min(mtus) == max(mtus) == plan.mtu > host_mtu, path
        for desc, addr in facing.items():
            if desc in gateways:
                assert addr == gateways[desc], f"{path}: {desc}"
                checked_gateways += 1
    leaves_here = _intent(name).platforms.leaf == platform
    if leaves_here:
        assert checked_gateways == sum(len(h.ports) for h in ctx.fabric.hosts)


# --- (d) NCCL_IB_HCA is the cabled NICs in rail order ----------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_nccl_hca_lists_the_cabled_nics_in_rail_order(name: str,
                                                      rendered: dict[str, Path]) -> None:
    ctx = _ctx(name)
    fabric = ctx.fabric
    profile = nic.profile_name(ctx)
    env = _env(rendered[name] / "nccl" / f"{profile}.env")
    switches = {s.name: s for s in fabric.switches}
    for host in fabric.hosts:
        cabled = [link for link in fabric.links_of("node-leaf") if link.a_device == host.name]
        ports = {hp.dev: hp for hp in host.ports}
        leaf_rail = [(switches[link.z_device].rail, ports[link.a_port].plane, ports[link.a_port])
                     for link in cabled]
        assert all(rail is not None for rail, _, _ in leaf_rail)
        ordered = [hp for _, _, hp in sorted(leaf_rail, key=lambda t: (t[0], t[1]))]
        want = "=" + ",".join(f"{hp.rdma_device}:{_ib_port(host, hp)}" for hp in ordered)
        assert env["NCCL_IB_HCA"] == want, host.name
    assert len(env["NCCL_IB_HCA"].split(",")) == len(fabric.hosts[0].ports)


# --- NCCL profiles: only variables NCCL or its plugin reads, in their documented forms --------

def _variants() -> Iterator[Any]:
    for name in NAMES:
        yield pytest.param(name, {}, id=name)
    ib = IB_NAMES[0]
    yield pytest.param(ib, {"infiniband": {"sharp": True, "adaptive_routing": True}},
                       id=f"{ib}-sharp-ar")
    yield pytest.param(ROCE_NAMES[0], {"nccl": {"profile": "efa"}}, id="efa")


def _variant_ctx(name: str, update: dict[str, dict[str, Any]]) -> RenderContext:
    ctx = _ctx(name)
    intent = ctx.intent
    for section, fields in update.items():
        intent = intent.model_copy(update={section: getattr(intent, section).model_copy(
            update=fields)})
    return RenderContext(intent, ctx.fabric, ctx.qos)


@pytest.mark.parametrize(("name", "update"), list(_variants()))
def test_nccl_profile_variables(name: str, update: dict[str, dict[str, Any]]) -> None:
    ctx = _variant_ctx(name, update)
    files = nccl.TARGET.render(ctx)
    profile = nic.profile_name(ctx)
    assert sorted(files) == [f"nccl/{profile}.conf", f"nccl/{profile}.env"]
    entries = nccl.entries(ctx)
    keys = [e.key for e in entries]
    assert len(keys) == len(set(keys))
    assert set(keys) <= set(nccl.SOURCES), set(keys) - set(nccl.SOURCES)
    conf = _conf(files[f"nccl/{profile}.conf"])
    assert conf == {e.key: e.value for e in entries}
    for line in files[f"nccl/{profile}.conf"].splitlines():
        assert line == "" or line.startswith("#") or re.fullmatch(r"[A-Z_]+=[^\s\"']+", line)
    text = files[f"nccl/{profile}.env"]
    for e in entries:  # a comment line saying why, then the export
        assert re.search(rf"^# .+\n(# .+\n)*export {e.key}=\"{re.escape(e.value)}\"$", text,
                         re.MULTILINE), e.key
    if profile == "efa":
        assert conf["FI_PROVIDER"] == "efa" and conf["FI_EFA_USE_DEVICE_RDMA"] == "1"
        assert not any(k.startswith("NCCL_IB_") for k in conf)
        return
    assert re.fullmatch(r"=(\w+:\d+)(,\w+:\d+)*", conf["NCCL_IB_HCA"])
    assert conf["NCCL_NET_GDR_LEVEL"] in ("LOC", "PIX", "PXB", "PHB", "SYS")
    assert 1 <= int(conf["NCCL_IB_QPS_PER_CONNECTION"]) <= 128
    assert 0 <= int(conf["NCCL_IB_RETRY_CNT"]) <= 7
    if profile == "roce":
        assert "NCCL_IB_SL" not in conf and conf["NCCL_IB_ADAPTIVE_ROUTING"] == "0"
        assert conf["NCCL_IB_GID_INDEX"] == str(ctx.intent.nccl.gid_index)
    else:
        ib = ctx.intent.infiniband
        assert "NCCL_IB_TC" not in conf and "NCCL_IB_GID_INDEX" not in conf
        assert conf["NCCL_IB_SL"] == str(ib.service_level)
        ar = ib.adaptive_routing_on(ctx.intent.fabric.generation)  # what the SM runs
        assert conf["NCCL_IB_ADAPTIVE_ROUTING"] == ("1" if ar else "0")
        assert ("NCCL_COLLNET_ENABLE" in conf) == ib.sharp


def test_efa_profile_has_no_nic_scripts() -> None:
    ctx = _variant_ctx(ROCE_NAMES[0], {"nccl": {"profile": "efa"}})
    assert not nic.TARGET.applies(ctx) and not preflight.TARGET.applies(ctx)
    assert nccl.TARGET.applies(ctx)


# --- runbook -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_runbook(name: str) -> None:
    ctx = _ctx(name)
    text = preflight.runbook_markdown(ctx)
    server, client = preflight.pair_hosts(ctx.fabric)
    if ctx.fabric.units > 1:
        assert server.su != client.su
    for hp in server.ports:
        if ctx.qos is not None:
            flags = f"-x {ctx.intent.nccl.gid_index} --tclass={ctx.qos.rdma.tos}"
        else:
            flags = f"--sl={ctx.intent.infiniband.service_level}"
        assert f"`ib_write_bw -d {hp.rdma_device} -i 1 {flags} -F --report_gbits " \
               f"{server.name}`" in text
        assert f"`ib_send_lat -d {hp.rdma_device} -i 1 {flags} -F {server.name}`" in text
    assert "all_reduce_perf -b 8 -e 16G -f 2 -g 1" in text
    nodes = len(ctx.fabric.hosts)
    assert f"srun -N {nodes} --ntasks-per-node=8" in text
    # 8 rails x 400 Gb/s = 400 GB/s per node; 80% of it.
    assert "at least **320 GB/s**" in text


@pytest.mark.realtool
@pytest.mark.parametrize("name", NAMES)
def test_boot_unit_verifies_and_runs_the_setup_script(name: str, rendered: dict[str, Path],
                                                      tmp_path: Path) -> None:
    """The settings do not survive a reboot: the rendered unit re-applies them, and systemd's
    own checker accepts it (an unknown key or a bad ExecStart would be reported)."""
    require_tool("systemd-analyze")
    unit = rendered[name] / "hosts" / "fabgen-nic-setup.service"
    text = unit.read_text()
    copy = tmp_path / unit.name
    copy.write_text(text)
    proc = subprocess.run(["systemd-analyze", "verify", str(copy)], capture_output=True,
                          text=True, timeout=60, check=False)
    complaints = [line for line in (proc.stdout + proc.stderr).splitlines()
                  if unit.name in line]
    assert proc.returncode == 0 and complaints == [], proc.stdout + proc.stderr
    assert "ExecStart=/bin/bash /etc/fabgen/hosts/nic-setup.sh" in text.splitlines()
    assert "Type=oneshot" in text.splitlines() and "WantedBy=multi-user.target" in text
