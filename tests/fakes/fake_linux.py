"""Fake SONiC and Cumulus NVUE switches: asyncssh servers on 127.0.0.1, one port per switch.

Each switch has a home directory (its login directory and its SFTP root). The shell echoes
input, runs each line with a real `bash --noprofile --norc -c LINE` in the home directory, and
prints a Linux prompt (`admin@NAME:~$`). PATH starts with a directory of wrappers: `config`,
`show`, `vtysh`, `systemctl` and `nv` run `fake_cli.py`; `sudo` runs its command with
FAKE_ROOT=1 and maps arguments under /etc/ to the home's etc/ (a chroot of sorts, so a push
that writes /etc/sonic/golden_config_db.json writes the fake switch's file, never the
machine's). All switches of a fleet share one event loop in a background thread.

Each switch starts with the management configuration a real one has (SONiC: MGMT_INTERFACE,
MGMT_PORT, FEATURE, CRM, NTP, SYSLOG, AAA tables, DEVICE_METADATA with mac/platform/hwsku, and a
split-unified frr.conf; NVUE: eth0 with an address in vrf mgmt, the mgmt VRF's default route,
ssh-server and NTP): a push must keep it.
"""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
from pathlib import Path
from typing import Any, Literal

import asyncssh

from tests.fakes.loop_fleet import LoopFleet

CLI = Path(__file__).with_name("fake_cli.py")
Kind = Literal["sonic", "nvue"]

SONIC_INITIAL: dict[str, Any] = {
    "AAA": {"authentication": {"login": "tacacs+,local"}},
    "CRM": {"Config": {"polling_interval": "300", "ipv4_route_high_threshold": "85"}},
    "DEVICE_METADATA": {"localhost": {
        "hostname": "{name}", "hwsku": "Mellanox-SN5600-O128", "mac": "1c:34:da:5e:00:01",
        "platform": "x86_64-nvidia_sn5600-r0", "type": "LeafRouter", "timezone": "UTC",
        "docker_routing_config_mode": "split-unified"}},
    "FEATURE": {"bgp": {"state": "enabled", "auto_restart": "enabled"},
                "lldp": {"state": "enabled", "auto_restart": "enabled"}},
    "MGMT_INTERFACE": {"eth0|192.0.2.31/24": {"gwaddr": "192.0.2.1"}},
    "MGMT_PORT": {"eth0": {"admin_status": "up", "alias": "eth0", "description": "mgmt"}},
    "NTP_SERVER": {"192.0.2.123": {"association_type": "server"}},
    "SYSLOG_SERVER": {"192.0.2.124": {}},
    "TACPLUS_SERVER": {"192.0.2.125": {"priority": "1", "tcp_port": "49"}},
}
# /etc/sonic/frr/frr.conf as a split-unified switch has it: written by FRR, fpm lines appended.
FRR_INITIAL = """frr version 8.5.4
frr defaults traditional
hostname sonic
log syslog informational
service integrated-vtysh-config
!
router bgp 65100
 bgp router-id 10.1.0.32
exit
!
line vty
exit
!
no fpm use-next-hop-groups
fpm address 127.0.0.1
"""
NVUE_INITIAL = """- header:
    model: SN5600
    nvue-api-version: nvue_v1
    rev-id: 1.0
    version: Cumulus Linux 5.9.1
- set:
    interface:
      eth0:
        ip:
          address:
            192.0.2.41/24: {}
          vrf: mgmt
        type: eth
    service:
      ntp:
        mgmt:
          server:
            192.0.2.123: {}
    system:
      hostname: {name}
      ssh-server:
        vrf: mgmt
    vrf:
      mgmt:
        router:
          static:
            0.0.0.0/0:
              via:
                192.0.2.1: {}
"""


class _Server(asyncssh.SSHServer):
    def __init__(self, switch: FakeLinuxSwitch, username: str, password: str) -> None:
        self.switch, self.username, self.password = switch, username, password

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self.switch.connections += 1

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        return (username, password) == (self.username, self.password)


class FakeLinuxSwitch:
    """One fake switch: its name, kind, port and home directory."""

    def __init__(self, name: str, kind: Kind, home: Path) -> None:
        self.name, self.kind, self.home = name, kind, home
        self.port = 0
        self.connections = 0  # TCP connections accepted (a host-key check counts too)
        self.server: asyncssh.SSHAcceptor | None = None
        (home / ".fake").mkdir(parents=True, exist_ok=True)
        if kind == "sonic":
            text = json.dumps(SONIC_INITIAL, indent=4).replace("{name}", name) + "\n"
            (home / ".fake" / "running.json").write_text(text)
            (home / "etc" / "sonic" / "frr").mkdir(parents=True)
            (home / "etc" / "sonic" / "config_db.json").write_text(text)
            (home / "etc" / "sonic" / "frr" / "frr.conf").write_text(FRR_INITIAL)
            (home / ".fake" / "frr-running.conf").write_text(FRR_INITIAL)
            (home / ".fake" / "bgp-daemons").write_text("file\n")
        else:
            text = NVUE_INITIAL.replace("{name}", name)
            (home / ".fake" / "applied.yaml").write_text(text)
            (home / "etc" / "nvue.d").mkdir(parents=True)
            (home / "etc" / "nvue.d" / "startup.yaml").write_text(text)

    def files(self) -> dict[str, str]:
        """Every file of the switch's state (`.fake`, `etc`), for before/after comparisons."""
        return {str(p.relative_to(self.home)): p.read_text()
                for top in (".fake", "etc") for p in sorted((self.home / top).rglob("*"))
                if p.is_file()}

    def running(self) -> Any:
        if self.kind == "sonic":
            return json.loads((self.home / ".fake" / "running.json").read_text())
        return (self.home / ".fake" / "applied.yaml").read_text()

    def frr(self) -> tuple[str, str]:
        """SONiC: (the frr.conf file, the config bgpd runs)."""
        return ((self.home / "etc/sonic/frr/frr.conf").read_text(),
                (self.home / ".fake" / "frr-running.conf").read_text())

    def bgp_down(self, down: bool = True) -> None:
        """Keep every BGP session of this switch down (or let them come up again)."""
        flag = self.home / ".fake" / "bgp-down"
        if down:
            flag.touch()
        else:
            flag.unlink(missing_ok=True)

    def leftovers(self) -> list[str]:
        """Files in the home directory outside the switch's own state (uploads left behind)."""
        return sorted(p.name for p in self.home.iterdir() if p.name not in (".fake", "etc"))


class LinuxFleet(LoopFleet):
    """Fake SONiC/NVUE switches served from one event loop thread; `close()` stops them all."""

    def __init__(self, root: Path, username: str, password: str) -> None:
        self.root, self.username, self.password = root, username, password
        self.bin = root / "bin"
        self.bin.mkdir(parents=True, exist_ok=True)
        for prog in ("config", "show", "nv", "vtysh", "systemctl"):
            wrapper = self.bin / prog
            wrapper.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} '
                               f'{shlex.quote(str(CLI))} {prog} "$@"\n')
            wrapper.chmod(0o755)
        sudo = self.bin / "sudo"
        sudo.write_text('#!/bin/bash\nwhile [ "${1#-}" != "$1" ]; do shift; done\n'
                        'args=()\nfor a in "$@"; do\n'
                        '  case "$a" in /etc/*) args+=("$PWD$a");; *) args+=("$a");; esac\n'
                        'done\nFAKE_ROOT=1 exec "${args[@]}"\n')
        sudo.chmod(0o755)
        self.host_key = asyncssh.generate_private_key("ssh-ed25519")
        self.switches: dict[str, FakeLinuxSwitch] = {}
        super().__init__()

    def add(self, name: str, kind: Kind, password: str | None = None) -> FakeLinuxSwitch:
        """Start a switch; `password` overrides the fleet's (an auth-failure test)."""
        switch = FakeLinuxSwitch(name, kind, self.root / name)
        self.switches[name] = switch
        secret = self.password if password is None else password

        async def start() -> asyncssh.SSHAcceptor:
            return await asyncssh.create_server(
                lambda: _Server(switch, self.username, secret), "127.0.0.1", 0,
                server_host_keys=[self.host_key], line_editor=False,
                process_factory=lambda proc: self._shell(switch, proc),
                sftp_factory=lambda chan: asyncssh.SFTPServer(
                    chan, chroot=str(switch.home).encode()),
                encoding=None)

        switch.server = self._call(start)
        switch.port = switch.server.get_port()
        return switch

    async def _shell(self, switch: FakeLinuxSwitch, proc: asyncssh.SSHServerProcess[bytes]) -> None:
        if proc.command is not None:  # exec requests are not served: a shell only
            proc.stderr.write(b"exec requests are not supported by this fake\n")
            proc.exit(1)
            return
        env = {"PATH": f"{self.bin}:/usr/bin:/bin", "HOME": str(switch.home),
               "USER": self.username, "LANG": "C.UTF-8"}
        prompt = f"{self.username}@{switch.name}:~$ ".encode()
        proc.stdout.write(b"Linux " + switch.name.encode() + b" (fake)\r\n" + prompt)
        buf = b""
        try:
            while True:
                try:
                    data = await proc.stdin.read(65536)
                except asyncssh.TerminalSizeChanged:
                    continue
                if not data:
                    break
                # Echo the whole chunk in one write: per-character echo slows netmiko down.
                proc.stdout.write(data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
                buf += data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
                while b"\n" in buf:
                    raw, buf = buf.split(b"\n", 1)
                    line = raw.decode(errors="replace").strip()
                    if line in ("exit", "logout"):
                        proc.exit(0)
                        return
                    out = b""
                    if line:
                        child = await asyncio.create_subprocess_exec(
                            "bash", "--noprofile", "--norc", "-c", line, cwd=switch.home,
                            env=env, stdin=asyncio.subprocess.DEVNULL,
                            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                            start_new_session=True)
                        out, _ = await child.communicate()
                    if out:
                        out = out.replace(b"\n", b"\r\n")
                        if not out.endswith(b"\r\n"):
                            out += b"\r\n"
                    proc.stdout.write(out + prompt)
        except (asyncssh.BreakReceived, BrokenPipeError, ConnectionError):
            pass
        proc.exit(0)

    def stop(self, name: str) -> None:
        """Stop one switch's server (its port then refuses connections)."""
        server = self.switches[name].server
        if server is not None:
            server.close()
            self._call(server.wait_closed)

