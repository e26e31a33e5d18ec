"""Test helper: run a fabgen InfiniBand topology through the real ibsim + OpenSM, locally.

ibsim simulates the fabric behind abstract unix sockets named after IBSIM_SOCKNAME; OpenSM and
the diags reach it through LD_PRELOAD=libumad2sim.so. Each run gets its own socket name and temp
dir, so tests can run in parallel (xdist) without talking to each other's simulator.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from fabgen.targets.ibnetdiscover import (
    GuidPlan,
    compute_node_guids,
    guid_plan,
    render_topology,
    root_guids,
)
from fabgen.topology.model import Fabric, Host, HostPort, Link, Switch

TOOLS = ("ibsim", "opensm", "ibnetdiscover")
REQUIRE_ENV = "FABGEN_REQUIRE_TOOLS"

# The OpenSM log lines that carry ftree's verdict (ibsim.md, measured with OpenSM 3.3.23).
FTREE_OK = "ftree tables configured on all switches"
SUBNET_UP = "SUBNET UP"
FELL_BACK = ("Fabric topology hasn't been identified as FatTree", "minhop tables configured")
# ftree error codes are AB01..AB3x; other modules' codes (e.g. 3F.., 4A..) are not verdicts.
_FTREE_ERR = re.compile(r"ERR (AB[0-9A-F]{2})")
DEFAULT_PARTITIONS = "Default=0x7fff, ipoib : ALL=full ;\n"
_HEADER = re.compile(r'^(Switch|Ca|Hca)\s+(\d+)\s+"([^"]+)"', re.MULTILINE)


# --------------------------------------------------------------------------- tools


def _multiarch() -> str:
    try:
        out = subprocess.run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"], capture_output=True,
                             text=True, check=True, timeout=10)
        return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return f"{os.uname().machine}-linux-gnu"


def umad2sim_path() -> Path | None:
    """libumad2sim.so as installed by Debian's libumad2sim0 (dpkg -L), or None."""
    try:
        out = subprocess.run(["dpkg", "-L", "libumad2sim0"], capture_output=True, text=True,
                             timeout=10)
        for line in out.stdout.splitlines():
            if line.endswith("/libumad2sim.so") and Path(line).is_file():
                return Path(line)
    except (OSError, subprocess.SubprocessError):
        pass
    guess = Path("/usr/lib") / _multiarch() / "umad2sim" / "libumad2sim.so"
    return guess if guess.is_file() else None


def missing_tools() -> list[str]:
    missing = [t for t in TOOLS if shutil.which(t) is None]
    if umad2sim_path() is None:
        missing.append("libumad2sim.so")
    return missing


def require_tools() -> None:
    """Skip the calling test when ibsim/OpenSM are absent; fail instead if they are required."""
    missing = missing_tools()
    if not missing:
        return
    msg = "missing: " + ", ".join(missing) + " (apt-get install ibsim-utils libumad2sim0 " \
        "opensm infiniband-diags)"
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 but {msg}")
    pytest.skip(msg)


# --------------------------------------------------------------------------- fabrics


def make_fat_tree(
    leaves: int,
    spines: int,
    hosts_per_leaf: int,
    links_per_pair: int = 1,
    *,
    name: str = "simft",
    speed_gbps: int = 400,
) -> Fabric:
    """A hand-built 2-tier InfiniBand fat tree (one plane, one single-port NIC per host).

    Leaf ports 1..hosts_per_leaf go down to hosts, the next ones up to the spines in spine order
    (links_per_pair cables per leaf-spine pair); spine port = leaf index block.
    """
    up = spines * links_per_pair
    leaf_radix = hosts_per_leaf + up
    spine_radix = leaves * links_per_pair
    switches: list[Switch] = []
    for i in range(leaves):
        switches.append(Switch(
            name=f"leaf{i + 1:02d}", role="leaf", plane=0, group=0, index=i, rail=None,
            model="custom", radix=leaf_radix, speed_gbps=speed_gbps, breakout=1,
            platform="infiniband", down_ports=hosts_per_leaf, up_ports=up, number=i,
        ))
    for j in range(spines):
        switches.append(Switch(
            name=f"spine{j + 1:02d}", role="spine", plane=0, group=0, index=j, rail=None,
            model="custom", radix=spine_radix, speed_gbps=speed_gbps, breakout=1,
            platform="infiniband", down_ports=spine_radix, number=j,
        ))
    hosts: list[Host] = []
    links: list[Link] = []
    n = 0
    for i in range(leaves):
        for k in range(hosts_per_leaf):
            n += 1
            hname = f"node{n:03d}"
            port = HostPort(nic=0, port=0, dev=0, rail=0, plane=0, rdma_device="mlx5_0",
                            netdev="ib0", gpu=0, numa=0)
            hosts.append(Host(name=hname, index=n, su=0, ports=(port,)))
            links.append(Link(id=f"{hname}:0", kind="node-leaf", a_device=hname, a_port=0,
                              z_device=f"leaf{i + 1:02d}", z_port=k + 1, speed_gbps=speed_gbps,
                              plane=0, media="DAC"))
    for i in range(leaves):
        for j in range(spines):
            for c in range(links_per_pair):
                a_port = hosts_per_leaf + j * links_per_pair + c + 1
                z_port = i * links_per_pair + c + 1
                links.append(Link(id=f"leaf{i + 1:02d}:{a_port}", kind="leaf-spine",
                                  a_device=f"leaf{i + 1:02d}", a_port=a_port,
                                  z_device=f"spine{j + 1:02d}", z_port=z_port,
                                  speed_gbps=speed_gbps, plane=0, media="AOC"))
    return Fabric(
        name=name, transport="infiniband", speed_gbps=speed_gbps, tiers=2, planes=1, rails=1,
        su_size=leaves * hosts_per_leaf, units=1, switches=tuple(switches), hosts=tuple(hosts),
        links=tuple(links), tier_facts=(), bisection_gbps=0,
        by_name={s.name: s for s in switches},
    )


def drop_link(fabric: Fabric, link_id: str) -> Fabric:
    """A copy of the fabric with one cable missing (a dead or forgotten cable)."""
    links = tuple(link for link in fabric.links if link.id != link_id)
    if len(links) == len(fabric.links):
        raise KeyError(link_id)
    return dataclasses.replace(fabric, links=links)


def move_link(fabric: Fabric, link_id: str, to_switch: str) -> Fabric:
    """A copy with one cable's upper end moved to another switch (a crossed cable).

    The cable lands on a new port after the target's last port, so nothing else is disturbed.
    """
    target = next(s for s in fabric.switches if s.name == to_switch)
    new_port = target.radix + 1
    switches = tuple(dataclasses.replace(s, radix=new_port) if s.name == to_switch else s
                     for s in fabric.switches)
    links = tuple(dataclasses.replace(link, z_device=to_switch, z_port=new_port)
                  if link.id == link_id else link for link in fabric.links)
    if links == fabric.links:
        raise KeyError(link_id)
    return dataclasses.replace(fabric, switches=switches, links=links,
                               by_name={s.name: s for s in switches})


# --------------------------------------------------------------------------- parsing

# "[3]" or "[3](2c9...)" (a CA's own port GUID), then the far end "node id"[port]
_PORT_LINE = re.compile(r'^\[(\d+)\](?:\([0-9a-fA-F]+\))?\s+"([^"]+)"\[(\d+)\]')

Cable = tuple[str, int, str, int]  # (node id, port, far node id, far port)


def port_lines(topology_text: str) -> list[Cable]:
    """Every port line of an ibnetdiscover-format text, as seen from the record it is in."""
    out: list[Cable] = []
    current: str | None = None
    for line in topology_text.splitlines():
        header = _HEADER.match(line)
        if header:
            current = header.group(3)
            continue
        port = _PORT_LINE.match(line)
        if port and current is not None:
            out.append((current, int(port.group(1)), port.group(2), int(port.group(3))))
    return out


def cables(topology_text: str) -> set[frozenset[tuple[str, int]]]:
    """The undirected cables of a topology text, comparable between plan and discovery."""
    return {frozenset({(a, ap), (z, zp)}) for a, ap, z, zp in port_lines(topology_text)}


# --------------------------------------------------------------------------- running


class IbsimError(RuntimeError):
    """ibsim refused the topology (parse or cabling error) or never opened its socket."""

    def __init__(self, output: str) -> None:
        super().__init__(f"ibsim did not start:\n{output[-3000:]}")
        self.output = output


@dataclass(frozen=True)
class OpenSMResult:
    subnet_up: bool
    ftree_ok: bool  # ftree accepted the fabric and programmed every switch
    fell_back: bool  # ftree refused the fabric; OpenSM routed it with minhop instead
    ftree_errors: tuple[str, ...]  # distinct "ERR ABxx" codes, in order of appearance
    log: str
    seconds: float
    ibsim_output: str = ""
    ibnetdiscover: str | None = None  # what the simulator shows a discoverer, if asked
    files: dict[str, Path] = field(default_factory=dict)
    on_up: object = None  # what run_opensm's on_up callback returned, if one was given


@dataclass(frozen=True)
class SimSize:
    nodes: int
    switches: int
    ports: int
    lids: int


def topology_size(topology_text: str) -> SimSize:
    """The node/switch/port counts ibsim must preallocate (-N/-S/-P), read from the headers."""
    nodes = switches = ports = 0
    for header in _HEADER.finditer(topology_text):
        nodes += 1
        if header.group(1) == "Switch":
            switches += 1
            ports += int(header.group(2)) + 1  # port 0 (the switch's own management port)
        else:
            ports += int(header.group(2))
    lids = switches + ports
    return SimSize(nodes, switches, ports, lids)


def first_ca(topology_text: str) -> str | None:
    """The node id of the first CA record: where OpenSM attaches unless told otherwise."""
    for header in _HEADER.finditer(topology_text):
        if header.group(1) != "Switch":
            return header.group(3)
    return None


def _sockets_listening(basename: str) -> bool:
    # ibsim binds abstract sockets (no file to wait for); /proc/net/unix lists them as "@name".
    try:
        text = Path("/proc/net/unix").read_text(errors="replace")
    except OSError:
        return False
    return f"@{basename}:ctl" in text


def _stop(proc: subprocess.Popen[bytes] | None, grace: float = 3.0) -> None:
    """Stop a process we started and its whole group (it was started in its own session)."""
    if proc is None or proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _write_guids(path: Path, guids: Iterable[int]) -> Path:
    path.write_text("".join(f"0x{g:016x}\n" for g in guids))
    return path


def _opensm_conf(tmp: Path, routing_engine: str, root_file: Path | None,
                 cn_file: Path | None, log: Path) -> str:
    # Every path OpenSM writes to points into tmp; the ones it only reads are left at /etc
    # defaults or pointed at empty files so the host's configuration cannot leak in.
    lines = {
        "routing_engine": routing_engine,
        "lmc": "0",  # ftree does not support LMC > 0
        "log_file": str(log),
        "log_flags": "0x03",
        "force_log_flush": "TRUE",
        "accum_log_file": "FALSE",
        "dump_files_dir": str(tmp / "dump"),
        "partition_config_file": str(tmp / "partitions.conf"),
        "per_module_logging_file": str(tmp / "per-module-logging.conf"),
        "prefix_routes_file": str(tmp / "prefix-routes.conf"),
        "qos_policy_file": str(tmp / "qos-policy.conf"),
        "torus_config": str(tmp / "torus-2QoS.conf"),
        "console": "off",
        "daemon": "FALSE",
        "sweep_interval": "0",  # one sweep is enough; later sweeps only add log noise
        "fsync_high_avail_files": "FALSE",
    }
    if root_file is not None:
        lines["root_guid_file"] = str(root_file)
    if cn_file is not None:
        lines["cn_guid_file"] = str(cn_file)
    return "".join(f"{k} {v}\n" for k, v in lines.items())


def run_config_overrides(tmp: Path, log: Path) -> dict[str, str]:
    """Options a run must own whatever config it is given: logging, dumps, one sweep, no daemon."""
    return {
        "log_file": str(log),
        "log_flags": "0x03",
        "force_log_flush": "TRUE",
        "accum_log_file": "FALSE",
        "dump_files_dir": str(tmp / "dump"),
        "per_module_logging_file": str(tmp / "per-module-logging.conf"),
        "prefix_routes_file": str(tmp / "prefix-routes.conf"),
        "torus_config": str(tmp / "torus-2QoS.conf"),
        "console": "off",
        "daemon": "FALSE",
        "sweep_interval": "0",
        "fsync_high_avail_files": "FALSE",
    }


def merge_config(config: str, overrides: Mapping[str, str]) -> str:
    """An opensm.conf with the given options' values replaced (or appended when absent)."""
    out: list[str] = []
    seen: set[str] = set()
    for line in config.splitlines():
        key = line.split(None, 1)[0] if line.strip() and not line.lstrip().startswith("#") else ""
        if key in overrides:
            if key not in seen:
                out.append(f"{key} {overrides[key]}")
            seen.add(key)
        else:
            out.append(line)
    out.extend(f"{k} {v}" for k, v in overrides.items() if k not in seen)
    return "\n".join(out) + "\n"


# One client process sends every SMP: starting a umad2sim client costs ~0.1 s (it attaches to
# the simulator), a query through an attached one well under a millisecond. libibmad is driven
# through ctypes; ib_portid_t is treated as an opaque, generously sized buffer so its layout
# does not matter. A GUID is resolved to a LID with one SA PathRecord (a single record).
_SMP_CLIENT = r"""
import ctypes, sys
mad = ctypes.CDLL("libibmad.so.5")
mad.mad_rpc_open_port.restype = ctypes.c_void_p
mad.mad_rpc_open_port.argtypes = [ctypes.c_char_p, ctypes.c_int,
                                  ctypes.POINTER(ctypes.c_int), ctypes.c_int]
mad.ib_resolve_portid_str_via.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                          ctypes.c_void_p, ctypes.c_void_p]
mad.smp_query_via.restype = ctypes.c_void_p
mad.smp_query_via.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint, ctypes.c_uint,
                              ctypes.c_uint, ctypes.c_void_p]
classes = (ctypes.c_int * 3)(0x01, 0x81, 0x03)  # SMI, directed-route SMI, SA
port = mad.mad_rpc_open_port(None, 0, classes, 3)
if not port:
    sys.exit("mad_rpc_open_port failed")
portids = {}
for line in sys.stdin:
    guid, attr, mod = line.split()
    if guid not in portids:
        pid = ctypes.create_string_buffer(1024)
        # 2 = IB_DEST_GUID
        portids[guid] = pid if mad.ib_resolve_portid_str_via(pid, guid.encode(), 2, None,
                                                              port) >= 0 else None
    pid = portids[guid]
    buf = ctypes.create_string_buffer(1024)
    if pid is None:
        print("ERR-resolve", flush=True)
    elif not mad.smp_query_via(buf, pid, int(attr, 0), int(mod, 0), 0, port):
        print("ERR-query", flush=True)
    else:
        print(buf.raw[:64].hex(), flush=True)
"""

SMP_PKEY_TABLE = 0x16  # attribute ids (IBA 14.2.5): P_KeyTable, SLtoVLMappingTable, VLArbitration
SMP_SL2VL_TABLE = 0x17
SMP_VLARB_TABLE = 0x18


def smp_get(client_env: dict[str, str], tmp: Path,
            requests: Sequence[tuple[int, int, int]], *, node: str | None = None,
            timeout: float = 60.0) -> list[bytes]:
    """SMP Get of (port GUID, attribute id, modifier) each; the 64-byte SMP data of every reply.

    SMP, not SA: through umad2sim an SA multi-record reply carries only its first record.
    node: the node id the querying client attaches to: a CA (its first port) or a switch (port
      0); default: client_env's SIM_HOST.
    """
    env = dict(client_env)
    env.pop("SIM_SET_ISSM", None)
    if node is not None:
        env["SIM_HOST"] = node
    lines = "".join(f"0x{guid:016x} {attr:#x} {mod:#x}\n" for guid, attr, mod in requests)
    proc = subprocess.Popen([sys.executable, "-c", _SMP_CLIENT], cwd=tmp, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(lines.encode(), timeout=timeout)
    except subprocess.TimeoutExpired:
        _stop(proc)
        raise RuntimeError("SMP client timed out") from None
    replies = out.decode().split()
    if proc.returncode != 0 or len(replies) != len(requests):
        raise RuntimeError(f"SMP client failed ({proc.returncode}): {err.decode()[-1000:]}")
    failed = [f"0x{r[0]:016x} attr {r[1]:#x} ({x[4:]})"
              for r, x in zip(requests, replies, strict=True) if x.startswith("ERR")]
    if failed:
        raise RuntimeError(f"SMP Get failed for {len(failed)} ports: {', '.join(failed[:5])}")
    return [bytes.fromhex(x) for x in replies]


def smp_pkeys(client_env: dict[str, str], tmp: Path,
              port_guids: Iterable[int]) -> dict[int, tuple[int, ...]]:
    """Each port's P_Key table as OpenSM programmed it: its non-empty entries, in table order.

    Blocks 0 and 1 (64 entries, what a ConnectX and ibsim's CA ports hold); 0x8000 = full member.
    """
    guids = list(port_guids)
    replies = smp_get(client_env, tmp, [(g, SMP_PKEY_TABLE, b) for g in guids for b in (0, 1)])
    out: dict[int, tuple[int, ...]] = {}
    for i, guid in enumerate(guids):
        raw = replies[2 * i] + replies[2 * i + 1]
        keys = (int.from_bytes(raw[j:j + 2], "big") for j in range(0, len(raw), 2))
        out[guid] = tuple(k for k in keys if k & 0x7FFF)
    return out


def smp_sl2vl(client_env: dict[str, str], tmp: Path,
              port_guids: Iterable[int]) -> dict[int, tuple[int, ...]]:
    """Each CA port's SL-to-VL table (16 VLs, SL 0 first) as OpenSM programmed it."""
    guids = list(port_guids)
    replies = smp_get(client_env, tmp, [(g, SMP_SL2VL_TABLE, 0) for g in guids])
    return {g: tuple(v for byte in raw[:8] for v in (byte >> 4, byte & 0xF))
            for g, raw in zip(guids, replies, strict=True)}


def smp_vlarb(client_env: dict[str, str], tmp: Path, port_guids: Iterable[int]
              ) -> dict[int, tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]]:
    """Each CA port's VL arbitration (low table, high table) as (VL, weight) entries with a
    weight, in table order. The block number rides in the modifier's upper half (as smpquery
    sends it): 1 = low entries 0-31, 3 = high entries 0-31."""
    guids = list(port_guids)
    replies = smp_get(client_env, tmp,
                      [(g, SMP_VLARB_TABLE, block << 16) for g in guids for block in (1, 3)])

    def entries(raw: bytes) -> tuple[tuple[int, int], ...]:
        return tuple((raw[i] & 0xF, raw[i + 1]) for i in range(0, len(raw), 2) if raw[i + 1])

    return {g: (entries(replies[2 * i]), entries(replies[2 * i + 1]))
            for i, g in enumerate(guids)}


def smp_switch_sl2vl(client_env: dict[str, str], tmp: Path,
                     ports: Iterable[tuple[int, int, int]]) -> dict[tuple[int, int, int],
                                                                    tuple[int, ...]]:
    """The SL-to-VL table of switch port pairs (switch node GUID, in port, out port): what
    OpenSM programmed for traffic entering `in` and leaving `out` (IBA 14.2.5.8: the attribute
    modifier carries the input port in bits 15:8 and the output port in bits 7:0)."""
    keys = list(ports)
    replies = smp_get(client_env, tmp, [(g, SMP_SL2VL_TABLE, (i << 8) | o) for g, i, o in keys])
    return {k: tuple(v for byte in raw[:8] for v in (byte >> 4, byte & 0xF))
            for k, raw in zip(keys, replies, strict=True)}


def smp_switch_vlarb(client_env: dict[str, str], tmp: Path, ports: Iterable[tuple[int, int]]
                     ) -> dict[tuple[int, int], tuple[tuple[tuple[int, int], ...],
                                                      tuple[tuple[int, int], ...]]]:
    """The VL arbitration (low table, high table) of switch ports (switch node GUID, port):
    the modifier holds the block in its upper half and the port in its lower (as smpquery)."""
    keys = list(ports)
    replies = smp_get(client_env, tmp, [(g, SMP_VLARB_TABLE, (block << 16) | p)
                                        for g, p in keys for block in (1, 3)])

    def entries(raw: bytes) -> tuple[tuple[int, int], ...]:
        return tuple((raw[i] & 0xF, raw[i + 1]) for i in range(0, len(raw), 2) if raw[i + 1])

    return {k: (entries(replies[2 * i]), entries(replies[2 * i + 1]))
            for i, k in enumerate(keys)}


def run_tool(client_env: dict[str, str], tmp: Path, args: Sequence[str], *,
             timeout: float = 60.0, env: Mapping[str, str] | None = None
             ) -> subprocess.CompletedProcess[str]:
    """Run an infiniband-diags tool (or a script calling them) through the simulator."""
    run_env = dict(client_env)
    run_env.pop("SIM_SET_ISSM", None)
    run_env.update(env or {})
    return subprocess.run(list(args), cwd=tmp, env=run_env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def _wait_for(pred: Callable[[], bool], timeout: float,
              procs: Sequence[subprocess.Popen[bytes]]) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        if any(p.poll() is not None for p in procs):
            return pred()
        time.sleep(0.1)
    return pred()


def _start_ibsim(topo: Path, tmp: Path, env: dict[str, str],
                 size: SimSize) -> subprocess.Popen[bytes]:
    cmd = ["ibsim", "-s", "-n",
           "-N", str(size.nodes + 8), "-S", str(size.switches + 2), "-P", str(size.ports + 16)]
    if size.lids > 30000:
        cmd += ["-L", "49152"]  # default LFT cap 30720 would starve OpenSM of LIDs
    cmd.append(str(topo))
    out = (tmp / "ibsim.out").open("wb")
    try:
        return subprocess.Popen(cmd, cwd=tmp, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    finally:
        out.close()


def run_opensm(
    topology_text: str,
    tmpdir: Path | str,
    *,
    root_guids: Iterable[int] | None = None,
    cn_guids: Iterable[int] | None = None,
    routing_engine: str = "ftree",
    timeout: float = 60.0,
    sm_node: str | None = None,
    discover: bool = False,
    config: str | None = None,
    files: Mapping[str, str] | None = None,
    on_up: Callable[[dict[str, str], Path], object] | None = None,
) -> OpenSMResult:
    """Load the topology in ibsim, run OpenSM once against it, and report ftree's verdict.

    Waits for SUBNET UP (or timeout, or OpenSM exiting); both processes are always stopped.
    sm_node: node id OpenSM attaches to (default: the first CA, like a real host-based SM).
    discover: also run ibnetdiscover through the simulator after SUBNET UP.
    config: an opensm.conf to run instead of the harness's own (e.g. a rendered one with its
      paths moved into tmpdir); the run-local options of run_config_overrides() replace its own.
    files: more files written into tmpdir before the start ({name: text}), after the defaults.
    on_up: called with (client env, tmpdir) while the subnet is up; its return is result.on_up.
    """
    lib = umad2sim_path()
    if lib is None:
        raise RuntimeError("libumad2sim.so not found (package libumad2sim0)")
    tmp = Path(tmpdir)
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "dump").mkdir(exist_ok=True)
    (tmp / "cache").mkdir(exist_ok=True)
    for empty in ("per-module-logging.conf", "prefix-routes.conf", "qos-policy.conf",
                  "torus-2QoS.conf"):
        (tmp / empty).touch()
    # An empty partitions file counts as "in error" (OpenSM logs it and falls back to default).
    (tmp / "partitions.conf").write_text(DEFAULT_PARTITIONS)
    topo = tmp / "topology.ibnd"
    topo.write_text(topology_text)
    log = tmp / "opensm.log"
    log.unlink(missing_ok=True)  # a reused tmpdir's old "SUBNET UP" must not count for this run
    root_file = _write_guids(tmp / "root_guids.txt", root_guids) if root_guids is not None else None
    cn_file = _write_guids(tmp / "cn_guids.txt", cn_guids) if cn_guids is not None else None
    for name, content in (files or {}).items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(content)
    conf = tmp / "opensm.conf"
    if config is None:
        conf.write_text(_opensm_conf(tmp, routing_engine, root_file, cn_file, log))
    else:
        conf.write_text(merge_config(config, run_config_overrides(tmp, log)))

    # The socket name is the only thing simulators share machine-wide: make it unique per run.
    sockname = f"fabgen-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    node = sm_node or first_ca(topology_text)
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    env.update(IBSIM_SOCKNAME=sockname, OSM_TMP_DIR=str(tmp), OSM_CACHE_DIR=str(tmp / "cache"))
    env.pop("IBSIM_SERVER_NAME", None)  # set, it would send the clients to a remote simulator
    client_env = dict(env, LD_PRELOAD=str(lib))
    if node:
        client_env["SIM_HOST"] = node

    paths = {"topology": topo, "conf": conf, "log": log, "ibsim": tmp / "ibsim.out"}
    ibsim: subprocess.Popen[bytes] | None = None
    osm: subprocess.Popen[bytes] | None = None
    discovered: str | None = None
    up_result: object = None
    start = time.monotonic()
    try:
        ibsim = _start_ibsim(topo, tmp, env, topology_size(topology_text))
        # umad2sim retries a refused connect forever, so never start a client before the socket.
        if not _wait_for(lambda: _sockets_listening(sockname), min(timeout, 30.0), [ibsim]):
            raise IbsimError(_read(tmp / "ibsim.out"))
        osm_out = (tmp / "opensm.out").open("wb")
        try:
            osm = subprocess.Popen(
                ["opensm", "-F", str(conf), "-f", str(log)],
                cwd=tmp, env=client_env, stdin=subprocess.DEVNULL, stdout=osm_out,
                stderr=subprocess.STDOUT, start_new_session=True,
            )
        finally:
            osm_out.close()
        paths["opensm_out"] = tmp / "opensm.out"
        _wait_for(lambda: SUBNET_UP in _read(log), timeout - (time.monotonic() - start),
                  [ibsim, osm])
        if discover and SUBNET_UP in _read(log):
            discovered = run_ibnetdiscover(client_env, tmp, timeout=30.0)
        if on_up is not None and SUBNET_UP in _read(log):
            up_result = on_up(client_env, tmp)
    finally:
        _stop(osm)
        _stop(ibsim)
    text = _read(log)
    return OpenSMResult(
        subnet_up=SUBNET_UP in text,
        ftree_ok=FTREE_OK in text,
        fell_back=any(s in text for s in FELL_BACK),
        ftree_errors=tuple(dict.fromkeys(_FTREE_ERR.findall(text))),
        log=text,
        seconds=time.monotonic() - start,
        ibsim_output=_read(tmp / "ibsim.out"),
        ibnetdiscover=discovered,
        files=paths,
        on_up=up_result,
    )


def run_ibnetdiscover(client_env: dict[str, str], tmp: Path, *, timeout: float = 30.0) -> str:
    """ibnetdiscover through an already running simulator (client_env carries LD_PRELOAD etc.)."""
    env = dict(client_env)
    env.pop("SIM_SET_ISSM", None)
    out = tmp / "ibnetdiscover.out"
    with out.open("wb") as fh:
        proc = subprocess.Popen(["ibnetdiscover"], cwd=tmp, env=env, stdin=subprocess.DEVNULL,
                                stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        finally:
            _stop(proc)
    return _read(out)


def run_fabric(
    fabric: Fabric,
    tmpdir: Path | str,
    *,
    with_roots: bool = False,
    plane: int | None = None,
    **kwargs: object,
) -> tuple[OpenSMResult, GuidPlan, str]:
    """Render any Fabric (hand-built or from fabgen.topology.build) and run it through OpenSM.

    with_roots=False is the cabling proof (ftree validates the fat-tree shape); True is the
    deployment run with root and compute-node GUID files, as production OpenSM would use.
    """
    guids = guid_plan(fabric)
    text = render_topology(fabric, guids, plane=plane)
    if with_roots:
        kwargs.setdefault("root_guids", root_guids(fabric, guids, plane=plane))
        kwargs.setdefault("cn_guids", compute_node_guids(fabric, guids, plane=plane))
    result = run_opensm(text, tmpdir, **kwargs)  # type: ignore[arg-type]
    return result, guids, text
