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
from fabgen.catalog import nodes
from fabgen.errors import FabgenError
from fabgen.intent import load
from fabgen.intent.models import Intent
from fabgen.qos import QosPlan
from fabgen.targets import ib_hosts, nccl, nic, preflight
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
  node: {model: generic, gpus: 8, nics: 4, nic: connectx-7, nic_ports: 2}
topology:
  style: rail-optimized
  planes: 2
  leaf: {model: sn5600, breakout: 2x400G}
qos:
  ecn: {enabled: false}
platforms: {leaf: sonic, spine: sonic}
hosts: {netdevs: "ens{nic}f{port}np{port}", bootstrap_interface: bond0}
"""
# A generic InfiniBand server with no names and no bootstrap interface: placeholders, and
# NCCL_SOCKET_IFNAME left to NCCL (the scripts' empty-bootstrap branch).
IB_GENERIC = """\
name: ib-generic
fabric: {transport: infiniband, generation: ndr}
cluster: {nodes: 8}
topology: {leaf: {model: qm9700}}
"""
EXTRA_INTENTS = {"roce-dualplane-no-ecn": DUAL_PLANE_NO_ECN, "ib-generic": IB_GENERIC}
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


# /proc/driver/nvidia/version first lines (NVIDIA driver: the open and the proprietary module).
OPEN_DRIVER = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.124.06  Release Build"
PROPRIETARY_DRIVER = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.216.03  Thu Apr  3 2025"


def fake_proc(root: Path, *, kernel: str, driver: str | None) -> None:
    """The two /proc files the GPUDirect check reads: kernel release and NVIDIA driver."""
    _put(root / "proc" / "sys" / "kernel" / "osrelease", kernel)
    if driver is not None:
        _put(root / "proc" / "driver" / "nvidia" / "version", driver)


def fake_sysfs(root: Path, ctx: RenderContext, host: Host, *, configured: bool,
               peermem: bool = True, bootstrap: str | None = "up") -> Path:
    """A /sys under root for host: rails present and ACTIVE; `configured` = as nic-setup.sh
    leaves it (MTU, ECN, CNP), else as a fresh boot (MTU 1500, ECN on everywhere). The
    bootstrap interface (NCCL_SOCKET_IFNAME) exists with operstate `bootstrap` (None: absent).
    No /proc: without fake_proc the host has no DMA-BUF path."""
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
        if not roce:  # every netdev's IPv4 settings, as Linux lists them under /proc
            conf = root / "proc/sys/net/ipv4/conf" / hp.netdev
            _put(conf / "arp_ignore", 1 if configured else 0)
            _put(conf / "arp_announce", 2 if configured else 0)
        if roce and plan is not None and hp.address is not None:
            gid = ctx.intent.nccl.gid_index
            _put(port / "gids" / str(gid), _gid(hp.address.interface.ip))
            _put(port / "gid_attrs" / "types" / str(gid), "RoCE v2")
            _put(port / "gid_attrs" / "ndevs" / str(gid), hp.netdev)
            ecn = net / "ecn"
            for role in ("roce_np", "roce_rp"):
                for p in range(8):
                    on = _ecn_expected(plan, p) if configured else 1
                    _put(ecn / role / "enable" / str(p), on)
            _put(ecn / "roce_np" / "cnp_dscp", plan.cnp.dscp[0] if configured else 0)
            _put(ecn / "roce_np" / "cnp_802p_prio", plan.cnp.priority if configured else 0)
    if not roce:  # the storage ports' IPoIB netdevs (topology.storage.ipoib)
        for hp in storage_ports(ctx, host):
            conf = root / "proc/sys/net/ipv4/conf" / hp.netdev
            _put(conf / "arp_ignore", 1 if configured else 0)
            _put(conf / "arp_announce", 2 if configured else 0)
    if peermem:
        (sys / "module" / "nvidia_peermem").mkdir(parents=True)
    boot = nodes.bootstrap_interface(ctx.intent)
    if boot is not None and bootstrap is not None:
        _put(sys / "class" / "net" / boot / "operstate", bootstrap)
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


def _host_args(name: str, host: Host) -> list[str]:
    """--host for a profile with per-host files (RoCE; InfiniBand with IPoIB or tenants)."""
    ctx = _ctx(name)
    return ["--host", host.name] if _roce(name) or ib_hosts.host_files(ctx) else []


def storage_ports(ctx: RenderContext, host: Host) -> tuple[HostPort, ...]:
    """The host's ports on an InfiniBand storage network with IPoIB planned, else none."""
    spec = ctx.intent.topology.storage
    if spec is None or spec.ipoib is None or ctx.fabric.transport != "infiniband":
        return ()
    storage = next(x for x in ctx.fabric.extras if x.role == "storage")
    return next(h for h in storage.hosts if h.name == host.name).ports


def ib_outputs(root: Path, host: Host, ctx: RenderContext | None = None) -> Path:
    """Canned `ip -4 -o addr show` output listing the host's IPoIB addresses as planned (with
    `ctx`, its storage ports' too)."""
    root.mkdir(parents=True, exist_ok=True)
    ports = (*host.ports, *(storage_ports(ctx, host) if ctx is not None else ()))
    lines = [f"{i + 4}: {hp.netdev}    inet {hp.ipoib.with_prefixlen} scope global "
             f"{hp.netdev}\\       valid_lft forever preferred_lft forever"
             for i, hp in enumerate(ports) if hp.ipoib is not None]
    (root / "ip.out").write_text("".join(line + "\n" for line in lines))
    return root


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


def expected_ipoib_calls(ctx: RenderContext, host: Host) -> list[list[str]]:
    """What nic-setup.sh runs for each rail's IPoIB address (ib_hosts: a table per rail)."""
    prefix = ctx.intent.infiniband.ipoib
    out: list[list[str]] = []
    for i, hp in enumerate(_rail_order(host)):
        if hp.ipoib is None or prefix is None:
            continue
        ip, table, pref = hp.ipoib.ip, str(ib_hosts.IPOIB_TABLE_BASE + i), \
            str(ib_hosts.IPOIB_RULE_PREF_BASE + i)
        out += [
            ["ip", "link", "set", "dev", hp.netdev, "up"],
            ["ip", "-4", "addr", "replace", hp.ipoib.with_prefixlen, "dev", hp.netdev],
            ["ip", "-4", "route", "replace", str(prefix.prefix), "dev", hp.netdev, "src", ip,
             "table", table],
            ["ip", "-4", "rule", "list", "pref", pref, "from", ip, "table", table],
            ["ip", "-4", "rule", "del", "pref", pref],
            ["ip", "-4", "rule", "add", "pref", pref, "from", ip, "table", table],
        ]
    spec = ctx.intent.topology.storage
    for i, hp in enumerate(storage_ports(ctx, host)):
        assert hp.ipoib is not None and spec is not None and spec.ipoib is not None
        ip, table, pref = hp.ipoib.ip, str(ib_hosts.STORAGE_TABLE_BASE + i), \
            str(ib_hosts.STORAGE_RULE_PREF_BASE + i)
        out += [
            ["ip", "link", "set", "dev", hp.netdev, "up"],
            ["ip", "-4", "addr", "replace", hp.ipoib.with_prefixlen, "dev", hp.netdev],
            ["ip", "-4", "route", "replace", str(spec.ipoib.prefix), "dev", hp.netdev, "src",
             ip, "table", table],
            ["ip", "-4", "rule", "list", "pref", pref, "from", ip, "table", table],
            ["ip", "-4", "rule", "del", "pref", pref],
            ["ip", "-4", "rule", "add", "pref", pref, "from", ip, "table", table],
        ]
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
    host_args = _host_args(name, host)
    for script, extra in (("nic-setup.sh", ["--firmware"]), ("preflight.sh", [])):
        result = run(rendered[name] / "hosts" / script, "--dry-run", *host_args, *extra,
                     sysroot=sysroot, log=log, stub_bin=stub_bin)
        assert result.returncode == 0, f"{script}: {result.stderr}"
        assert "dry run" in result.stdout
    assert not log.exists(), calls(log)
    assert _snapshot(sysroot) == before


def _gateway(hp: Any) -> Any:
    """The leaf end of a host port's /31."""
    iface = hp.address.interface
    net = iface.network
    return net.network_address if iface.ip != net.network_address else net[1]


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


@pytest.mark.parametrize("name", ROCE_NAMES)
def test_roce_preflight_catches_a_nic_on_the_drivers_cable_length(
        name: str, rendered: dict[str, Path], stub_bin: Path, tmp_path: Path) -> None:
    """A NIC whose cable length was never set (mlx5's default, 7 m, as `mlnx_qos -i` prints
    it on a fresh port) sizes its headroom for a shorter cable than the plan's: every rail
    fails, naming the host file's length."""
    ctx = _ctx(name)
    plan = ctx.qos
    assert plan is not None
    host = ctx.fabric.hosts[0]
    sysroot = fake_sysfs(tmp_path / "root", ctx, host, configured=True)
    outputs = tmp_path / "out"
    good = mlnx_qos_output(plan)
    assert f"Cable len: {plan.cable_length_m}\n" in good
    _put(outputs / "mlnx_qos.out", good.replace(f"Cable len: {plan.cable_length_m}\n",
                                                "Cable len: 7\n"))
    result = run(rendered[name] / "hosts" / "preflight.sh", "--host", host.name,
                 sysroot=sysroot, log=tmp_path / "log", stub_bin=stub_bin, outputs=outputs)
    assert result.returncode == 1
    fails = [line for line in result.stdout.splitlines() if line.startswith("FAIL")]
    assert fails == [f"FAIL {_label(ctx, hp)}: {hp.netdev} cable length (m, sizes PFC "
                     f"headroom): 7 (want {plan.cable_length_m})"
                     for hp in _rail_order(host)], result.stdout


@pytest.mark.parametrize("name", IB_NAMES)
def test_infiniband_scripts_run(name: str, rendered: dict[str, Path], stub_bin: Path,
                                tmp_path: Path) -> None:
    ctx = _ctx(name)
    host = ctx.fabric.hosts[0]
    sysroot = fake_sysfs(tmp_path / "root", ctx, host, configured=True, peermem=False)
    log = tmp_path / "calls.log"
    args = _host_args(name, host)
    setup = run(rendered[name] / "hosts" / "nic-setup.sh", "--firmware", *args,
                sysroot=sysroot, log=log, stub_bin=stub_bin)
    assert setup.returncode == 0, setup.stderr
    assert calls(log) == [["modprobe", "nvidia_peermem"]] + expected_ipoib_calls(ctx, host) + [
        ["mlxconfig", "-y", "-d", _pci(hp), "set", f"LINK_TYPE_P{hp.port + 1}=1"]
        for hp in _rail_order(host)]
    # IPoIB (the inventory plans it) is host-specific; the generic IB fabric has none.
    assert bool(list((rendered[name] / "hosts").glob("*.env"))) == ib_hosts.host_files(ctx)
    for hp in _rail_order(host):
        if hp.ipoib is not None:
            conf = sysroot / "proc/sys/net/ipv4/conf" / hp.netdev
            assert (conf / "arp_ignore").read_text() == "1\n"
            assert (conf / "arp_announce").read_text() == "2\n"
    outputs = ib_outputs(tmp_path / "out", host, ctx)

    check = run(rendered[name] / "hosts" / "preflight.sh", *args, sysroot=sysroot, log=log,
                stub_bin=stub_bin, outputs=outputs)
    assert check.returncode == 1  # nvidia_peermem is missing in this fake, and no /proc
    assert [x for x in check.stdout.splitlines() if x.startswith("FAIL")] == [
        "FAIL GPUDirect RDMA: no nvidia_peermem and no DMA-BUF (Linux unknown (DMA-BUF needs "
        f"5.12 or later), no NVIDIA GPU driver loaded ({sysroot}/proc/driver/nvidia/version "
        "missing)): NCCL would stage through host memory"]
    (sysroot / "sys" / "module" / "nvidia_peermem").mkdir(parents=True)
    ok = run(rendered[name] / "hosts" / "preflight.sh", *args, sysroot=sysroot, log=log,
             stub_bin=stub_bin, outputs=outputs)
    assert ok.returncode == 0, ok.stdout
    # the storage subnet's addresses (topology.storage.ipoib): set and checked like the rails'
    for hp in storage_ports(ctx, host):
        assert hp.ipoib is not None
        conf = sysroot / "proc/sys/net/ipv4/conf" / hp.netdev
        assert (conf / "arp_ignore").read_text() == "1\n"
        assert f"OK   storage: {hp.netdev} IPoIB address: {hp.ipoib.with_prefixlen}" in ok.stdout
    wrong = _rail_order(host)[0]
    _put(sysroot / "sys/class/infiniband" / wrong.rdma_device / "ports/1/state", "1: DOWN")
    down = run(rendered[name] / "hosts" / "preflight.sh", *args, sysroot=sysroot, log=log,
               stub_bin=stub_bin, outputs=outputs)
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
            if not path.endswith("/config_db.json"):
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
    assert conf == {e.key: e.value for e in entries if e.value is not None}
    for line in files[f"nccl/{profile}.conf"].splitlines():
        assert line == "" or line.startswith("#") or re.fullmatch(r"[A-Z_]+=[^\s\"']+", line)
    text = files[f"nccl/{profile}.env"]
    for e in entries:  # a comment line saying why, then the export (or only the comment)
        if e.value is None:
            assert f"# {e.key} is not set: " in text and f"export {e.key}=" not in text
            continue
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


# Words for the other transport's host mechanisms: a host file that uses them is not about its
# own fabric (the boot unit of an InfiniBand profile once spoke of RoCE mode and ToS).
_OTHER_TRANSPORT = {
    "infiniband": re.compile(r"\bRoCE\b|mlnx_qos|\bToS\b|\bDSCP\b|cma_roce|\bPFC watchdog"),
    "roce": re.compile(r"subnet manager|\bLIDs?\b|SL-to-VL|\bopensm\b|\bUFM\b|IPoIB",
                       re.IGNORECASE),
}


@pytest.mark.parametrize("name", NAMES)
def test_host_files_speak_of_their_own_transport(name: str, rendered: dict[str, Path]) -> None:
    transport = _ctx(name).fabric.transport
    other = _OTHER_TRANSPORT[transport]
    files = [*sorted((rendered[name] / "hosts").glob("*")),
             *sorted((rendered[name] / "nccl").glob("*"))]
    assert files
    for path in files:
        found = other.findall(path.read_text())
        assert not found, f"{path.name} ({transport}) mentions {sorted(set(found))}"
    unit = (rendered[name] / "hosts" / "fabgen-nic-setup.service").read_text()
    description = next(x for x in unit.splitlines() if x.startswith("Description="))
    assert {"roce": "RoCE", "infiniband": "InfiniBand"}[transport] in description


# --- node catalog: device maps in every host artifact -------------------------------------------

# DGX H100/H200 User Guide, "Introduction to NVIDIA DGX H100/H200 Systems": Table 5 "Network
# Port Mapping" and Table 6 "Network Modules", typed from the guide (not read from the catalog):
# (port, PCI bus, RDMA device, InfiniBand netdev, Ethernet netdev, GPU, CPU).
DGX_H100_COMPUTE = (
    ("OSFP4P2", "18:00.0", "mlx5_0", "ibp24s0", "enp24s0np0", 0, 0),
    ("OSFP3P2", "40:00.0", "mlx5_3", "ibp64s0", "enp64s0np0", 1, 0),
    ("OSFP3P1", "4f:00.0", "mlx5_4", "ibp79s0", "enp79s0np0", 2, 0),
    ("OSFP4P1", "5e:00.0", "mlx5_5", "ibp94s0", "enp94s0np0", 3, 0),
    ("OSFP1P2", "9a:00.0", "mlx5_6", "ibp154s0", "enp154s0np0", 4, 1),
    ("OSFP2P2", "c0:00.0", "mlx5_9", "ibp192s0", "enp192s0np0", 5, 1),
    ("OSFP2P1", "ce:00.0", "mlx5_10", "ibp206s0", "enp206s0np0", 6, 1),
    ("OSFP1P1", "dc:00.0", "mlx5_11", "ibp220s0", "enp220s0np0", 7, 1),
)
# Table 5: the two dual-port ConnectX-7 storage / in-band cards.
DGX_H100_STORAGE = (
    ("Slot1 P1", "aa:00.0", "mlx5_7", "ibp170s0f0", "enp170s0f0np0"),
    ("Slot1 P2", "aa:00.1", "mlx5_8", "ibp170s0f1", "enp170s0f1np1"),
    ("Slot2 P1", "29:00.0", "mlx5_1", "ibp41s0f0", "enp41s0f0np0"),
    ("Slot2 P2", "29:00.1", "mlx5_2", "ibp41s0f1", "enp41s0f1np1"),
)
DGX_H100_HCA = "=mlx5_0:1,mlx5_3:1,mlx5_4:1,mlx5_5:1,mlx5_6:1,mlx5_9:1,mlx5_10:1,mlx5_11:1"


def test_catalog_holds_the_dgx_h100_user_guide_tables() -> None:
    for key in ("dgx-h100", "dgx-h200"):  # one chassis, one guide
        model = nodes.models()[key]
        assert model.verified and "DGX H100/H200 User Guide" in model.source
        assert tuple((p.port, p.pci, p.rdma, p.infiniband, p.ethernet, p.gpu, p.numa)
                     for p in model.compute) == DGX_H100_COMPUTE
        assert tuple((p.port, p.pci, p.rdma, p.infiniband, p.ethernet)
                     for p in model.storage) == DGX_H100_STORAGE
        # In-band management: the bond of port 2 of both cards (DGX BasePOD deployment guide).
        assert model.bootstrap is not None and model.bootstrap.interface == "bond0"
        assert model.bootstrap.members == ("enp170s0f1np1", "enp41s0f1np1")


def test_catalog_says_where_each_map_comes_from() -> None:
    for key, model in nodes.models().items():
        assert model.source, key
        if model.verified:
            assert model.compute and model.cite, key
            rdma = [p.rdma for p in (*model.compute, *model.storage)]
            assert len(rdma) == len(set(rdma)), key
            assert [p.gpu for p in model.compute] == list(range(len(model.compute))), key
        else:
            assert not model.compute and model.source.startswith("generic"), key


@pytest.mark.parametrize("name", ["ib-ndr-1024", "roce-256-sonic"])
def test_dgx_h100_inventories_use_the_compute_nics(name: str) -> None:
    """The inventories name a DGX H100: NCCL, nic-setup.sh and preflight.sh get GPU0..7's
    NICs, never the storage/in-band mlx5_1, 2, 7, 8, and the DGX OS netdev names."""
    ctx = _ctx(name)
    assert ctx.intent.cluster.node.model == "dgx-h100"
    files = _files(name)
    profile = nic.profile_name(ctx)
    assert _conf(files[f"nccl/{profile}.conf"])["NCCL_IB_HCA"] == DGX_H100_HCA
    assert _conf(files[f"nccl/{profile}.conf"])["NCCL_SOCKET_IFNAME"] == "=bond0"
    column = 3 if profile == "infiniband" else 4
    for script in ("hosts/nic-setup.sh", "hosts/preflight.sh"):
        arrays = _arrays(files[script])
        assert arrays["RAIL_RDMA_DEVICES"] == [row[2] for row in DGX_H100_COMPUTE], script
        assert arrays["RAIL_NETDEVS"] == [row[column] for row in DGX_H100_COMPUTE], script
    arrays = _arrays(files["hosts/preflight.sh"])
    assert arrays["RAIL_GPUS"] == [str(row[5]) for row in DGX_H100_COMPUTE]
    assert arrays["RAIL_NUMA"] == [str(row[6]) for row in DGX_H100_COMPUTE]
    for host in ctx.fabric.hosts:
        assert not {p.rdma_device for p in host.ports} & {"mlx5_1", "mlx5_2", "mlx5_7", "mlx5_8"}
    # The runbook says what NCCL's own log must show: these devices, bootstrap over bond0.
    runbook = preflight.runbook_markdown(ctx)
    devices = ", ".join(f"`{d}`" for d in DGX_H100_HCA.lstrip("=").split(","))
    assert f"`NET/IB : Using [0]...` line must list exactly {devices} and end in " \
           "`OOB bond0:<address>`" in runbook


def _arrays(script: str) -> dict[str, list[str]]:
    """The RAIL_* bash arrays of a rendered script (values are validated, never quoted inside)."""
    return {m[1]: [v.strip('"') for v in m[2].split()]
            for m in re.finditer(r"^(RAIL_\w+)=\((.*)\)$", script, re.MULTILINE)}


def _model_intent(key: str, transport: str, style: str = "rail-optimized") -> str:
    """A small fabric of `key` nodes. Models without a published map get this site's device
    names (distinct from the placeholders, to prove they flow through); generic gets none."""
    model = nodes.models()[key]
    fabric = ("{transport: infiniband, generation: ndr}" if transport == "infiniband"
              else "{transport: roce, speed: 400G}")
    leaf = "{model: qm9700}" if transport == "infiniband" else "{model: sn5600, breakout: 2x400G}"
    hosts = ""
    if not model.has_map and key != "generic":
        hosts = 'hosts: {rdma_devices: "site_mlx{dev}", netdevs: "site{dev}"}\n'
    return (f"name: {key}-{transport}\nfabric: {fabric}\ncluster:\n  nodes: 4\n"
            f"  node: {{model: {key}}}\ntopology: {{style: {style}, leaf: {leaf}}}\n{hosts}")


def _expected_map(key: str, transport: str) -> list[tuple[str, str, int, int]]:
    """(RDMA device, netdev, GPU, NUMA node) per rail, from the catalog entry."""
    model = nodes.models()[key]
    if model.has_map:
        return [(p.rdma, p.netdev(transport), int(p.gpu), int(p.numa))  # type: ignore[arg-type]
                for p in model.compute]
    if key == "generic":
        return [(f"mlx5_{i}", f"rdma{i}", i, i // 4) for i in range(8)]
    return [(f"site_mlx{i}", f"site{i}", i, i // 4) for i in range(8)]


def _map_sysfs(root: Path, ports: list[tuple[str, str, int, int]], speed: int,
               bootstrap: str | None) -> Path:
    """An InfiniBand host's /sys built from a device map alone (not from the fabric)."""
    sys = root / "sys"
    for i, (rdma, netdev, _gpu, numa) in enumerate(ports):
        pci = sys / "devices" / "pci0000:00" / f"0000:{0x20 + i:02x}:00.0"
        (pci / "net" / netdev).mkdir(parents=True)
        _put(pci / "numa_node", numa)
        (sys / "class" / "net" / netdev).mkdir(parents=True)
        (sys / "class" / "net" / netdev / "device").symlink_to(pci)
        ib = sys / "class" / "infiniband" / rdma
        ib.mkdir(parents=True)
        (ib / "device").symlink_to(pci)
        _put(ib / "ports" / "1" / "state", "4: ACTIVE")
        _put(ib / "ports" / "1" / "rate", _rate(speed))
        _put(ib / "ports" / "1" / "link_layer", "InfiniBand")
    if bootstrap is not None:
        _put(sys / "class" / "net" / bootstrap / "operstate", "up")
    (sys / "module" / "nvidia_peermem").mkdir(parents=True)
    return root


def _load_text(text: str, tmp_path: Path, name: str = "intent.yaml") -> Any:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return load(path)


@pytest.mark.parametrize("transport", ["infiniband", "roce"])
@pytest.mark.parametrize("key", sorted(nodes.models()))
def test_each_catalog_model_reaches_nccl_nic_setup_and_preflight(
        key: str, transport: str, stub_bin: Path, tmp_path: Path) -> None:
    loaded = _load_text(_model_intent(key, transport), tmp_path)
    # The catalog and the intent agree (other warnings, e.g. unmeasured cables, are not ours).
    assert not [w for w in loaded.warnings if w.loc[:1] == ("hosts",)
                or w.loc[:2] == ("cluster", "node")]
    intent = loaded.intent
    ctx = RenderContext(intent, build(intent), qos.plan(intent) if transport == "roce" else None)
    files: dict[str, str] = {}
    for target in (nic.TARGET, nccl.TARGET, preflight.TARGET):
        files.update(target.render(ctx))
    want = _expected_map(key, transport)
    conf = _conf(files[f"nccl/{transport}.conf"])
    assert conf["NCCL_IB_HCA"] == "=" + ",".join(f"{rdma}:1" for rdma, *_ in want)
    boot = nodes.models()[key].bootstrap
    assert conf.get("NCCL_SOCKET_IFNAME") == (f"={boot.interface}" if boot else None)
    for script in ("hosts/nic-setup.sh", "hosts/preflight.sh"):
        arrays = _arrays(files[script])
        assert arrays["RAIL_RDMA_DEVICES"] == [w[0] for w in want], script
        assert arrays["RAIL_NETDEVS"] == [w[1] for w in want], script
    arrays = _arrays(files["hosts/preflight.sh"])
    assert arrays["RAIL_GPUS"] == [str(w[2]) for w in want]
    assert arrays["RAIL_NUMA"] == [str(w[3]) for w in want]
    # Each script says where its device names come from, and whether they are verified.
    for script in ("hosts/nic-setup.sh", "hosts/preflight.sh"):
        said = " ".join(line.lstrip("# ") for line in files[script].splitlines()
                        if line.startswith("# "))
        assert f"Device names: {nic.map_source(ctx)}." in said, script
        assert ("unverified" in said) != nodes.models()[key].has_map, script
    if transport != "infiniband":
        return
    # preflight.sh on a host built from the catalog's map passes every check, naming each pair.
    root = _write(files, tmp_path / "render")
    sysroot = _map_sysfs(tmp_path / "root", want, ctx.fabric.speed_gbps,
                         boot.interface if boot else None)
    result = run(root / "hosts" / "preflight.sh", sysroot=sysroot, log=tmp_path / "log",
                 stub_bin=stub_bin)
    assert result.returncode == 0, result.stdout
    for i, (rdma, netdev, gpu, numa) in enumerate(want):
        assert f"OK   rail{i}: {rdma} drives {netdev}" in result.stdout
        assert f"OK   rail{i}: {netdev} NUMA node (that of GPU {gpu}): {numa}" in result.stdout


def test_dgx_h100_subset_of_rails_keeps_each_nic_with_its_gpu(tmp_path: Path) -> None:
    text = _model_intent("dgx-h100", "infiniband").replace(
        "node: {model: dgx-h100}", "node: {model: dgx-h100, nics: 4}"
    ) + "hosts: {rdma_devices: [mlx5_0, mlx5_3, mlx5_4, mlx5_5]}\n"  # GPU0-3's NICs only
    intent = _load_text(text, tmp_path).intent
    ports = build(intent).hosts[0].ports
    assert [(p.rdma_device, p.netdev, p.gpu, p.numa) for p in ports] == [
        (row[2], row[3], row[5], row[6]) for row in DGX_H100_COMPUTE[:4]]


@pytest.mark.parametrize(("name", "warned"), [
    ("eth0", True), ("eno1", True), ("bond0", False), ("bond1", False), ("bond0.1417", False),
    ("ens6f0", False), ("eno3", False), ("enp170s0f1np1", False), ("ibp24s0", False)])
def test_bootstrap_interface_the_dgx_h100_lacks_is_a_warning(name: str, warned: bool,
                                                             tmp_path: Path) -> None:
    text = _model_intent("dgx-h100", "infiniband") + f"hosts: {{bootstrap_interface: {name}}}\n"
    loaded = _load_text(text, tmp_path)
    messages = [w.render() for w in loaded.warnings if w.loc[:1] == ("hosts",)]
    if warned:
        assert messages == [
            f"{tmp_path}/intent.yaml:7:30: warning: hosts.bootstrap_interface: the NVIDIA DGX "
            f"H100 has no interface {name!r}; its in-band management is bond0 (enp170s0f1np1 + "
            "enp41s0f1np1); NCCL fails at init when NCCL_SOCKET_IFNAME names an interface the "
            "host lacks (leave hosts.bootstrap_interface unset to use the model's in-band "
            "interface)"]
        with pytest.raises(FabgenError):
            load(tmp_path / "intent.yaml", strict=True)
    else:
        assert messages == []
    conf = _conf(nccl.TARGET.render(RenderContext(loaded.intent, build(loaded.intent), None))
                 ["nccl/infiniband.conf"])
    assert conf["NCCL_SOCKET_IFNAME"] == f"={name}"  # the intent's choice stands
    # A generic server has no interface list: any name is taken as given.
    generic = _load_text(_model_intent("generic", "infiniband")
                         + f"hosts: {{bootstrap_interface: {name}}}\n", tmp_path, "g.yaml")
    assert not [w for w in generic.warnings if w.loc[:1] == ("hosts",)]


def test_no_bootstrap_interface_leaves_nccl_to_pick_one(tmp_path: Path) -> None:
    intent = _load_text(_model_intent("generic", "infiniband"), tmp_path).intent
    ctx = RenderContext(intent, build(intent), None)
    text = nccl.TARGET.render(ctx)["nccl/infiniband.env"]
    assert "NCCL_SOCKET_IFNAME" not in _conf(nccl.TARGET.render(ctx)["nccl/infiniband.conf"])
    assert "# NCCL_SOCKET_IFNAME is not set: the generic GPU server publishes no in-band" in text
    assert "export NCCL_SOCKET_IFNAME" not in text
    script = preflight.TARGET.render(ctx)["hosts/preflight.sh"]
    assert 'BOOTSTRAP_IF=""' in script


@pytest.mark.parametrize(("state", "line"), [
    ("up", "OK   bootstrap interface bond0 (NCCL_SOCKET_IFNAME) state: up"),
    ("down", "FAIL bootstrap interface bond0 (NCCL_SOCKET_IFNAME) state: down (want up)"),
    (None, "FAIL bootstrap interface bond0 (NCCL_SOCKET_IFNAME) missing: NCCL fails at init "
           "without it")])
def test_preflight_checks_the_bootstrap_interface(state: str | None, line: str,
                                                  rendered: dict[str, Path], stub_bin: Path,
                                                  tmp_path: Path) -> None:
    name = "ib-ndr-1024"
    ctx = _ctx(name)
    host = ctx.fabric.hosts[0]
    sysroot = fake_sysfs(tmp_path / "root", ctx, host, configured=True, bootstrap=state)
    result = run(rendered[name] / "hosts" / "preflight.sh", *_host_args(name, host),
                 sysroot=sysroot, log=tmp_path / "log", stub_bin=stub_bin,
                 outputs=ib_outputs(tmp_path / "out", host, ctx))
    assert line in result.stdout.splitlines()
    fails = [x for x in result.stdout.splitlines() if x.startswith("FAIL")]
    assert fails == ([] if state == "up" else [line])
    assert result.returncode == (0 if state == "up" else 1)


@pytest.mark.parametrize(("kernel", "driver", "verdict"), [
    ("6.8.0-45-generic", OPEN_DRIVER,
     "OK   GPUDirect RDMA: DMA-BUF (Linux 6.8.0-45-generic, NVIDIA open GPU kernel module); "
     "NCCL 2.13 and later need no nvidia_peermem"),
    ("5.12.0", OPEN_DRIVER,
     "OK   GPUDirect RDMA: DMA-BUF (Linux 5.12.0, NVIDIA open GPU kernel module); "
     "NCCL 2.13 and later need no nvidia_peermem"),
    ("5.11.22", OPEN_DRIVER,
     "FAIL GPUDirect RDMA: no nvidia_peermem and no DMA-BUF (Linux 5.11.22 (DMA-BUF needs 5.12 "
     "or later), NVIDIA open GPU kernel module): NCCL would stage through host memory"),
    ("6.8.0-45-generic", PROPRIETARY_DRIVER,
     "FAIL GPUDirect RDMA: no nvidia_peermem and no DMA-BUF (Linux 6.8.0-45-generic, NVIDIA "
     "proprietary GPU kernel module (DMA-BUF needs the open one)): NCCL would stage through "
     "host memory"),
])
def test_gpudirect_accepts_dma_buf_without_nvidia_peermem(
        kernel: str, driver: str, verdict: str, rendered: dict[str, Path], stub_bin: Path,
        tmp_path: Path) -> None:
    """NCCL >= 2.13 does GPUDirect RDMA through DMA-BUF (Linux 5.12+, open GPU kernel module):
    preflight.sh passes without nvidia_peermem, and nic-setup.sh loads it only without DMA-BUF."""
    name = "ib-ndr-1024"
    ctx = _ctx(name)
    host = ctx.fabric.hosts[0]
    sysroot = fake_sysfs(tmp_path / "root", ctx, host, configured=True, peermem=False)
    fake_proc(sysroot, kernel=kernel, driver=driver)
    log = tmp_path / "calls.log"
    args = _host_args(name, host)
    check = run(rendered[name] / "hosts" / "preflight.sh", *args, sysroot=sysroot, log=log,
                stub_bin=stub_bin, outputs=ib_outputs(tmp_path / "out", host, ctx))
    assert verdict in check.stdout.splitlines()
    dmabuf = verdict.startswith("OK")
    assert check.returncode == (0 if dmabuf else 1), check.stdout
    setup = run(rendered[name] / "hosts" / "nic-setup.sh", *args, sysroot=sysroot, log=log,
                stub_bin=stub_bin)
    assert setup.returncode == 0, setup.stderr
    assert (["modprobe", "nvidia_peermem"] in calls(log)) != dmabuf
    if dmabuf:
        assert "nvidia_peermem is not needed" in setup.stdout


def test_nccl_timeout_and_queue_pairs_follow_nccl_and_the_transport(tmp_path: Path) -> None:
    ib = _load_text(_model_intent("dgx-h100", "infiniband"), tmp_path, "ib.yaml").intent
    roce = _load_text(_model_intent("dgx-h100", "roce"), tmp_path, "roce.yaml").intent
    ib_entries = {e.key: e for e in nccl.entries(RenderContext(ib, build(ib), None))}
    roce_entries = {e.key: e for e in nccl.entries(
        RenderContext(roce, build(roce), qos.plan(roce)))}
    # NCCL's own defaults (src/transport/net_ib/connect.cc): IB_TIMEOUT 20, QPS_PER_CONNECTION 1.
    for entries in (ib_entries, roce_entries):
        assert entries["NCCL_IB_TIMEOUT"].value == "20"
        assert "4.3 s per retry (NCCL's own default" in entries["NCCL_IB_TIMEOUT"].why
    assert ib_entries["NCCL_IB_QPS_PER_CONNECTION"].value == "1"
    assert "follow the same route" in ib_entries["NCCL_IB_QPS_PER_CONNECTION"].why
    assert "ECMP" not in ib_entries["NCCL_IB_QPS_PER_CONNECTION"].why
    assert roce_entries["NCCL_IB_QPS_PER_CONNECTION"].value == "4"
    assert "ECMP" in roce_entries["NCCL_IB_QPS_PER_CONNECTION"].why
    # An intent's own values stand, and the comment says NCCL's default is different.
    tuned = ib.model_copy(update={"nccl": ib.nccl.model_copy(
        update={"timeout": 22, "qps_per_connection": 2})})
    entries = {e.key: e for e in nccl.entries(RenderContext(tuned, build(tuned), None))}
    assert entries["NCCL_IB_TIMEOUT"].value == "22"
    assert "17.2 s per retry (nccl.timeout; NCCL's default is 20)" in \
        entries["NCCL_IB_TIMEOUT"].why
    assert entries["NCCL_IB_QPS_PER_CONNECTION"].value == "2"
    assert "add NIC parallelism, not paths" in entries["NCCL_IB_QPS_PER_CONNECTION"].why


def test_cross_nic_only_where_every_port_shares_a_leaf(tmp_path: Path) -> None:
    for style, want in (("rail-optimized", None), ("rail-unaware", "1")):
        intent = _load_text(_model_intent("dgx-h100", "infiniband", style), tmp_path,
                            f"{style}.yaml").intent
        fabric = build(intent)
        if style == "rail-unaware":  # the premise: each node's ports on one leaf
            leaves = {h.name: {link.z_device for link in fabric.links_of("node-leaf")
                               if link.a_device == h.name} for h in fabric.hosts}
            assert all(len(v) == 1 for v in leaves.values())
        conf = _conf(nccl.TARGET.render(RenderContext(intent, fabric, None))
                     ["nccl/infiniband.conf"])
        assert conf.get("NCCL_CROSS_NIC") == want


def test_storage_and_management_cables_name_the_dgx_storage_card_ports() -> None:
    """SuperPOD cabling of a DGX H100: storage on port 1 of both storage cards (InfiniBand),
    in-band management on port 2 (Ethernet, the bond members); Table 5's names."""
    ctx = _ctx("ib-ndr-1024")
    by_role = {extra.role: extra for extra in ctx.fabric.extras}
    want = {"storage": [(row[2], row[3]) for row in DGX_H100_STORAGE if row[0].endswith("P1")],
            "management": [(row[2], row[4]) for row in DGX_H100_STORAGE
                           if row[0].endswith("P2")]}
    nodes_ = {h.name for h in ctx.fabric.hosts}
    for role, pairs in want.items():
        for host in by_role[role].hosts:
            if host.name not in nodes_:
                continue  # the storage system's targets
            assert [(p.rdma_device, p.netdev) for p in host.ports] == pairs, role
    boot = nodes.models()["dgx-h100"].bootstrap
    assert boot is not None and [n for _, n in want["management"]] == list(boot.members)


def test_preflight_reads_the_tenant_pkey_where_nccl_looks(tmp_path: Path, stub_bin: Path
                                                         ) -> None:
    """With tenants written (guids_file), each host file carries its tenant's P_Key and
    preflight.sh compares it with pkeys/<NCCL_IB_PKEY> of every rail port."""
    from fabgen.targets.ibnetdiscover import guid_plan, render_topology

    base = load(next(p for p in INVENTORIES if p.stem == "ib-ndr-1024")).intent
    fabric = build(base)
    (tmp_path / "fabric.ibnd").write_text(render_topology(fabric, guid_plan(fabric),
                                                          real_guids=True))
    data = base.model_dump(mode="json")
    # libsharp over sockets (not SHARP 3.13's UCX default): preflight.sh tests sharp_am's port
    data["infiniband"].update(guids_file="fabric.ibnd", sharp_protocol="sockets", partitions=[
        {"name": "tenant-a", "pkey": "0x0101", "hosts": ["dgx00*"]}])
    intent = Intent.model_validate(data)
    ctx = RenderContext(intent, fabric, base_dir=tmp_path)
    files: dict[str, str] = {}
    for target in (nic.TARGET, nccl.TARGET, preflight.TARGET):
        files.update(target.render(ctx))
    assert _conf(files["nccl/infiniband.conf"])["NCCL_IB_PKEY"] == "1"
    assert 'HOST_PKEY="0x8101"' in files["hosts/dgx001.env"]
    assert 'HOST_PKEY=""' in files["hosts/dgx010.env"]  # in no tenant
    root = _write(files, tmp_path / "render")
    host = fabric.hosts[0]
    sysroot = fake_sysfs(tmp_path / "root", ctx, host, configured=True)
    for hp in host.ports:
        _put(sysroot / "sys/class/infiniband" / hp.rdma_device / "ports/1/pkeys/1", "0x8101")
    outputs = ib_outputs(tmp_path / "out", host, ctx)
    ok = run(root / "hosts" / "preflight.sh", "--host", host.name, sysroot=sysroot,
             log=tmp_path / "log", stub_bin=stub_bin, outputs=outputs)
    assert ok.returncode == 0, ok.stdout
    first = _rail_order(host)[0]
    assert f"OK   rail0: {first.rdma_device} port 1 P_Key index 1 (NCCL_IB_PKEY): 0x8101" in \
        ok.stdout.splitlines()
    # an older tenant's key left at index 1: NCCL would use the wrong partition
    _put(sysroot / "sys/class/infiniband" / first.rdma_device / "ports/1/pkeys/1", "0x8102")
    bad = run(root / "hosts" / "preflight.sh", "--host", host.name, sysroot=sysroot,
              log=tmp_path / "log", stub_bin=stub_bin, outputs=outputs)
    assert bad.returncode == 1
    assert [x for x in bad.stdout.splitlines() if x.startswith("FAIL")] == [
        f"FAIL rail0: {first.rdma_device} port 1 P_Key index 1 (NCCL_IB_PKEY): 0x8102 "
        "(want 0x8101)"]
    # sharp_am unreachable (firewall closed): the TCP test fails
    (outputs / "timeout.rc").write_text("124")
    closed = run(root / "hosts" / "preflight.sh", "--host", host.name, sysroot=sysroot,
                 log=tmp_path / "log", stub_bin=stub_bin, outputs=outputs)
    assert "FAIL SHARP: no sharp_am on TCP 6126 of 10.224.0.1 10.224.0.2" in closed.stdout
