"""The operating-system side of an FRR lab: namespaces, veths, FRR daemons, vtysh, tc.

Everything runs as root through `ip`, `tc` and FRR's own binaries (Debian's `frr` and
`frr-snmp`); nothing here knows SONiC. Each switch's daemons get their own directory for vty
sockets, the zebra API socket, bfdd's control socket, pid and log files, so labs and the
machine's own FRR never share one. Only processes this module started (by the pid files it
named) are stopped.

The daemons run with the options SONiC's supervisord gives them (sonic-buildimage
dockers/docker-fpm-frr/frr/supervisord/supervisord.conf.common.j2 at 086b03bd70f9: zebra
`-A 127.0.0.1 -s 90000000 -M dplane_fpm_sonic -M snmp`, bgpd `-A 127.0.0.1 -P 0 -M snmp`,
staticd and bfdd `-A 127.0.0.1 -P 0`) and the config is applied as its `vtysh -b` does. SONiC's
dplane_fpm_sonic module is SONiC's fork of FRR's dplane_fpm_nl, which Debian ships: the lab loads
that one, which takes the same `fpm address` and `fpm use-next-hop-groups` commands.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["DAEMONS", "FRR_DIR", "SNMP_USER", "LabError", "Namespaces", "available",
           "snmp_available"]

FRR_DIR = Path("/usr/lib/frr")
# zebra first: the others connect to its API socket.
DAEMONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("zebra", ("-A", "127.0.0.1", "-s", "90000000", "-M", "dplane_fpm_nl", "-M", "snmp")),
    ("staticd", ("-A", "127.0.0.1", "-P", "0")),
    ("bfdd", ("-A", "127.0.0.1", "-P", "0")),
    ("bgpd", ("-A", "127.0.0.1", "-P", "0", "-M", "snmp")),
)
_TIMEOUT = 30.0
SNMPD = Path("/usr/sbin/snmpd")
SNMPWALK = "snmpwalk"
# The lab's SNMPv3 user (authPriv, SHA/AES, as `config snmp user add ... priv ro sha .. aes ..`
# makes on SONiC); it exists only inside the lab's namespaces, on 127.0.0.1.
SNMP_USER = ("fabgenlab", "fabgenlab-auth", "fabgenlab-priv")
# SONiC's snmpd (sonic-buildimage dockers/docker-snmp/snmpd.conf.j2 at 086b03bd70f9): an AgentX
# master on tcp:localhost:3161, with its SNMP_USER lines; and what the bgp container gives FRR
# (dockers/docker-fpm-frr/snmp.conf, installed as /etc/snmp/frr.conf): the same socket.
_SNMPD_CONF = """agentAddress udp:127.0.0.1:161
master          agentx
agentXTimeout   5
agentXRetries   4
agentxsocket    tcp:localhost:3161
createUser {0} SHA {1} AES {2}
rouser {0} priv
"""
_FRR_SNMP_CONF = "agentXSocket    tcp:localhost:3161\n"


class LabError(RuntimeError):
    """The lab could not be built or run (a missing tool, a refused command, a daemon down)."""


def available() -> str | None:
    """None when this machine can run a lab, else why not."""
    if os.geteuid() != 0:
        return "the FRR lab needs root (network namespaces)"
    for tool in ("ip", "tc", "vtysh"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    for daemon, _ in DAEMONS:
        if not (FRR_DIR / daemon).exists():
            return f"{FRR_DIR / daemon} is missing (Debian package frr)"
    modules = Path("/usr/lib/x86_64-linux-gnu/frr/modules")
    if modules.is_dir() and not (modules / "bgpd_snmp.so").exists():
        return "FRR's snmp module is missing (Debian package frr-snmp)"
    try:
        pwd.getpwnam("frr")
    except KeyError:
        return "there is no frr user (Debian package frr creates it)"
    return None


def snmp_available() -> bool:
    """Whether the lab can run SONiC's snmpd beside FRR (Debian packages snmpd and snmp)."""
    return SNMPD.exists() and shutil.which(SNMPWALK) is not None


def _run(args: Sequence[str], *, stdin: str | None = None, check: bool = True,
         timeout: float = _TIMEOUT,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(list(args), input=stdin, capture_output=True, text=True,
                          timeout=timeout, check=False,
                          env=None if env is None else {**os.environ, **env})
    if check and proc.returncode != 0:
        raise LabError(f"`{' '.join(args)}` failed ({proc.returncode}): "
                       f"{(proc.stderr or proc.stdout).strip()[:2000]}")
    return proc


class Namespaces:
    """One lab's namespaces and daemons. Use as a context manager: leaving it stops every
    daemon it started and deletes every namespace it created, whatever happened inside."""

    def __init__(self, run_id: str, base: Path | None = None) -> None:
        self.run_id = run_id
        self.base = base or Path("/run") / f"fabgen-frrlab-{run_id}"
        self.namespaces: dict[str, str] = {}  # switch -> namespace
        self._pidfiles: list[Path] = []

    def __enter__(self) -> Namespaces:
        self.base.mkdir(parents=True, exist_ok=False)
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # --- namespaces and links --------------------------------------------------------------

    def add(self, switch: str) -> str:
        ns = f"fl{self.run_id}-{len(self.namespaces)}"
        _run(["ip", "netns", "add", ns])
        self.namespaces[switch] = ns
        directory = self.dir(switch)
        directory.mkdir()
        frr = pwd.getpwnam("frr")
        os.chown(directory, frr.pw_uid, frr.pw_gid)
        return ns

    def dir(self, switch: str) -> Path:
        return self.base / self.namespaces[switch]

    def batch(self, commands: list[str], switch: str | None = None) -> None:
        """`ip -batch` in the root namespace or in a switch's."""
        if not commands:
            return
        args = ["ip", "-force", "-batch", "-"]
        if switch is not None:
            args[1:1] = ["-n", self.namespaces[switch]]
        _run(args, stdin="\n".join(commands) + "\n", timeout=120)

    def exec(self, switch: str, args: Sequence[str], *, check: bool = True,
             timeout: float = _TIMEOUT,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return _run(["ip", "netns", "exec", self.namespaces[switch], *args], check=check,
                    timeout=timeout, env=env)

    # --- FRR -------------------------------------------------------------------------------

    def write(self, switch: str, name: str, text: str) -> Path:
        path = self.dir(switch) / name
        path.write_text(text, encoding="utf-8")
        frr = pwd.getpwnam("frr")
        os.chown(path, frr.pw_uid, frr.pw_gid)
        return path

    def start(self, switch: str, snmp: bool = False) -> None:
        """Start the switch's daemons (daemonised) inside its namespace; with `snmp`, SONiC's
        snmpd first, so bgpd's `agentx` finds its master when frr.conf is booted."""
        d = self.dir(switch)
        env = None
        if snmp:
            conf = d / "snmp"
            conf.mkdir()
            (conf / "snmpd.conf").write_text(_SNMPD_CONF.format(*SNMP_USER))
            # net-snmp reads <SNMPCONFPATH>/frr.conf for FRR's subagent (FRR's snmp name).
            (conf / "frr.conf").write_text(_FRR_SNMP_CONF)
            pidfile = d / "snmpd.pid"
            self._pidfiles.append(pidfile)
            env = {"SNMPCONFPATH": str(conf), "SNMP_PERSISTENT_DIR": str(conf)}
            self.exec(switch, [str(SNMPD), "-C", "-c", str(conf / "snmpd.conf"), "-p",
                               str(pidfile), "-Lf", str(d / "snmpd.log")], env=env)
        for daemon, options in DAEMONS:
            pidfile = d / f"{daemon}.pid"
            args = [str(FRR_DIR / daemon), "-d", "-u", "frr", "-g", "frr", *options,
                    "--vty_socket", str(d), "-i", str(pidfile), "--log",
                    f"file:{d / daemon}.log"]
            args += ["-z", str(d / "zserv.api")]
            if daemon == "bfdd":
                args += ["--bfdctl", str(d / "bfdd.sock")]
            self._pidfiles.append(pidfile)
            self.exec(switch, args, env=env)

    def boot(self, switch: str) -> list[str]:
        """`vtysh -b` on the switch's frr.conf, as SONiC's supervisord does; every line FRR
        refused (vtysh names each), empty when all were taken."""
        d = self.dir(switch)
        proc = self.exec(switch, ["vtysh", "--vty_socket", str(d), "--config_dir", str(d),
                                  "-b"], check=False)
        refused = [line for line in (proc.stdout + proc.stderr).splitlines()
                   if line.startswith("line ") or "Unknown command" in line
                   or "% " in line]
        if proc.returncode != 0 and not refused:
            refused = [f"vtysh -b exited {proc.returncode}"]
        return refused

    def vtysh(self, switch: str, command: str) -> str:
        d = self.dir(switch)
        return _run(["vtysh", "--vty_socket", str(d), "-c", command]).stdout

    def vtysh_json(self, switch: str, command: str) -> Any:
        text = self.vtysh(switch, command)
        try:
            return json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as exc:
            raise LabError(f"{switch}: `{command}` did not print JSON: {exc}") from None

    def configure(self, switch: str, lines: Sequence[str]) -> None:
        d = self.dir(switch)
        args = ["vtysh", "--vty_socket", str(d), "-c", "configure terminal"]
        for line in lines:
            args += ["-c", line]
        _run(args)

    def snmp_walk(self, switch: str, oid: str) -> str:
        """`snmpwalk` of an OID on the switch's snmpd as the lab's SNMPv3 user, numeric OIDs
        and values (-On -Oe -Oq: `.1.3.6.1.2.1.15.3.1.2.10.0.0.1 6`)."""
        user, auth, priv = SNMP_USER
        return self.exec(switch, [SNMPWALK, "-v3", "-l", "authPriv", "-u", user, "-a", "SHA",
                                  "-A", auth, "-x", "AES", "-X", priv, "-On", "-Oe", "-Oq",
                                  "127.0.0.1", oid]).stdout

    def kernel_routes(self, switch: str) -> list[dict[str, Any]]:
        out = _run(["ip", "-n", self.namespaces[switch], "-j", "route", "show", "proto",
                    "bgp"]).stdout
        data = json.loads(out) if out.strip() else []
        return data if isinstance(data, list) else []

    # --- failures ----------------------------------------------------------------------------

    def drop(self, switch: str, interface: str) -> None:
        """Drop every packet the interface sends; the link stays up (tc's blackhole qdisc)."""
        _run(["tc", "-n", self.namespaces[switch], "qdisc", "replace", "dev", interface,
              "root", "blackhole"])

    def undrop(self, switch: str, interface: str) -> None:
        _run(["tc", "-n", self.namespaces[switch], "qdisc", "del", "dev", interface, "root"],
             check=False)

    # --- teardown ------------------------------------------------------------------------------

    def close(self) -> None:
        pids = []
        for pidfile in self._pidfiles:
            try:
                pids.append(int(pidfile.read_text().strip()))
            except (OSError, ValueError):
                continue
        for pid in pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        deadline = time.monotonic() + 5
        for pid in pids:
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.05)
            else:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        self._pidfiles.clear()
        for ns in self.namespaces.values():
            _run(["ip", "netns", "del", ns], check=False)
        self.namespaces.clear()
        shutil.rmtree(self.base, ignore_errors=True)
