"""A fake Arista EOS switch over SSH (paramiko): enough of the CLI for napalm's `eos` driver.

It serves what napalm 5 sends over SSH (reference/push-testing.md): `show version | json`,
`show configuration sessions [detail] | json`, `configure session NAME` with `rollback
clean-config` and config lines, `show session-config named NAME [diffs]`, `copy
startup-config flash:rollback-0`, `configure session NAME commit [timer HH:MM:SS]` (a timer that
really reverts an unconfirmed commit), `configure session NAME abort`, `configure replace
flash:rollback-0`, `write memory`, `show running-config` / `show startup-config`.

Config lines are checked against a small vocabulary; anything else prints `% Invalid input`
(which napalm swallows, as it does with a real switch). A line that is not valid in the current
sub-mode falls back to the global mode, as on EOS (napalm sends lines without indentation).
State lives in files under `state_dir`: `running-config`, `startup-config` and
`flash/rollback-0`. The switch starts with a management configuration (Management1 in vrf MGMT
with an address, a user, AAA, NTP, logging, eAPI) that a push must keep.

`show ip bgp summary | json` lists every `neighbor X remote-as` of the running `router bgp` as
Established, unless `bgp_down` is set on the state (then Active).

The prompt is the running config's hostname, as on EOS: a commit (or an abort, a timer revert)
that changes `hostname` changes the prompt the reply ends with. Failure knobs on the state:
`silent_at` (a regex: the first command matching it takes effect, or not with `silent_applies`
False, and the switch never answers again) and `late` (regex -> seconds a matching command's
reply is late; the command takes effect at once).
"""

from __future__ import annotations

import copy
import difflib
import json
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import paramiko
from paramiko.common import (
    AUTH_FAILED,
    AUTH_SUCCESSFUL,
    OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED,
    OPEN_SUCCEEDED,
)

SECTION = re.compile(
    r"^(interface|router|vlan|management|ip access-list|route-map|policy-map|class-map"
    r"|qos profile|queue-monitor|vrf instance)(?=\s|$)")
# Global-mode commands whose first word is also a sub-mode word (`ip`, `qos`): global first.
GLOBAL_ONLY = re.compile(r"^(ip routing|ip route |qos map |hostname |username |ntp |logging "
                         r"|aaa )")
TOP = re.compile(
    r"^(hostname|ip routing|ip route|ipv6 unicast-routing|service|spanning-tree|username|logging"
    r"|ntp|transceiver|dcbx|platform|qos|priority-flow-control|errdisable|aaa|dns|clock)"
    r"(?=\s|$)")
CHILD_WORDS = {
    "description", "ip", "ipv6", "mtu", "no", "shutdown", "speed", "switchport", "bandwidth",
    "priority-flow-control", "qos", "service-policy", "neighbor", "router-id", "maximum-paths",
    "network", "redistribute", "address-family", "bgp", "tx-queue", "random-detect", "trust",
    "dscp", "vrf", "channel-group", "load-interval", "default", "name", "peer",
    "exit-address-family", "class", "set", "match", "permit", "deny", "shape", "ecn", "dcbx",
}


INITIAL = """\
hostname {name}
username admin privilege 15 role network-admin secret sha512 $6$fakesalt$0123456789abcdef
aaa authorization exec default local
vrf instance MGMT
interface Management1
   description oob management
   vrf MGMT
   ip address 192.0.2.51/24
ip route vrf MGMT 0.0.0.0/0 192.0.2.1
ntp server vrf MGMT 192.0.2.123
logging host 192.0.2.124
management api http-commands
   no shutdown
"""


class Config:
    """A running-config as ordered blocks: a header line and its (indented) child lines."""

    def __init__(self, blocks: list[tuple[str, list[str]]] | None = None) -> None:
        self.blocks: list[tuple[str, list[str]]] = blocks or []

    @classmethod
    def parse(cls, text: str) -> Config:
        blocks: list[tuple[str, list[str]]] = []
        for raw in text.splitlines():
            if not raw.strip() or raw.lstrip().startswith("!") or raw.strip() == "end":
                continue
            if raw[0].isspace() and blocks:
                blocks[-1][1].append(raw.strip())
            else:
                blocks.append((raw.strip(), []))
        return cls(blocks)

    def render(self, title: str = "show running-config") -> str:
        out = [f"! Command: {title}", "! device: fake-eos (vEOS-lab, EOS-4.31.2F)", "!"]
        for header, children in self.blocks:
            out.append(header)
            out.extend(f"   {c}" for c in children)
            out.append("!")
        out.append("end")
        return "\n".join(out) + "\n"

    def block(self, header: str) -> tuple[str, list[str]] | None:
        return next((b for b in self.blocks if b[0] == header), None)


@dataclass
class Session:
    config: Config
    state: str = "pending"  # pending | pendingCommitTimer | completed
    commit_by: float = -1.0
    before: Config | None = None  # running-config before a timed commit
    timer: threading.Timer | None = field(default=None, repr=False)


class EosState:
    """The switch: running/startup config in files, configuration sessions in memory."""

    def __init__(self, state_dir: Path, hostname: str) -> None:
        self.dir = state_dir
        self.hostname = hostname
        self.lock = threading.RLock()
        self.started = time.monotonic()
        self.sessions: dict[str, Session] = {}
        (state_dir / "flash").mkdir(parents=True, exist_ok=True)
        self.bgp_down = False  # a test keeps this switch's BGP sessions down
        self.silent_at: str | None = None  # see the module docstring
        self.silent_applies = True
        self.late: dict[str, float] = {}
        if not (state_dir / "running-config").exists():
            initial = Config.parse(INITIAL.replace("{name}", hostname))
            self.save("running-config", initial)
            self.save("startup-config", initial)
        self.learn_hostname(self.load("running-config"))

    def load(self, name: str) -> Config:
        return Config.parse((self.dir / name).read_text())

    def save(self, name: str, config: Config) -> None:
        (self.dir / name).write_text(config.render())
        if name == "running-config":  # EOS renames itself (and its prompt) on commit
            self.learn_hostname(config)

    def learn_hostname(self, config: Config) -> None:
        named = next((b[0].split()[1] for b in config.blocks
                      if b[0].startswith("hostname ") and len(b[0].split()) == 2), None)
        self.hostname = named or "localhost"

    def uptime(self) -> float:
        return time.monotonic() - self.started

    def revert(self, name: str) -> None:
        """The commit timer expired: put the previous running-config back (EOS does this)."""
        with self.lock:
            sess = self.sessions.get(name)
            if sess is None or sess.state != "pendingCommitTimer" or sess.before is None:
                return
            self.save("running-config", sess.before)
            del self.sessions[name]


def apply_line(config: Config, line: str, ctx: list[str] | None) -> tuple[list[str] | None, str]:
    """Apply one config line in a session; return the new mode context and any error text."""
    if not line:
        return ctx, ""
    if line == "exit":
        return None, ""
    words = line.split()
    if words[0] == "no" and len(words) > 1:
        rest = line[3:].strip()
        if ctx is not None:  # `no shutdown`, `no switchport`: shown in the running config
            ctx[:] = [c for c in ctx if c not in (rest, line)] + [line]
            return ctx, ""
        config.blocks = [b for b in config.blocks if b[0] != rest]
        return None, ""
    if GLOBAL_ONLY.match(line):
        ctx = None
    if SECTION.match(line):
        found = config.block(line)
        if found is None:
            found = (line, [])
            config.blocks.append(found)
        return found[1], ""
    if ctx is not None and words[0] in CHILD_WORDS:
        if line not in ctx:
            ctx[:] = [c for c in ctx if c != f"no {line}"] + [line]
        return ctx, ""
    if TOP.match(line):
        if words[0] == "hostname":
            config.blocks = [b for b in config.blocks if not b[0].startswith("hostname ")]
        if config.block(line) is None:
            config.blocks.append((line, []))
        return None, ""
    return ctx, f"% Invalid input (at token 0: '{words[0]}')"


class _Server(paramiko.ServerInterface):
    def __init__(self, username: str, password: str) -> None:
        self.username, self.password = username, password
        self.shell = threading.Event()

    def get_allowed_auths(self, username: str) -> str:
        return "password"

    def check_auth_password(self, username: str, password: str) -> int:
        if (username, password) == (self.username, self.password):
            return AUTH_SUCCESSFUL
        return AUTH_FAILED

    def check_channel_request(self, kind: str, chanid: int) -> int:
        if kind == "session":
            return OPEN_SUCCEEDED
        return OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED

    def check_channel_pty_request(self, *args: object) -> bool:
        return True

    def check_channel_shell_request(self, channel: paramiko.Channel) -> bool:
        self.shell.set()
        return True


class Shell:
    """One CLI session: exec mode or inside a configuration session."""

    def __init__(self, state: EosState, chan: paramiko.Channel) -> None:
        self.state, self.chan = state, chan
        self.session: str | None = None
        self.ctx: list[str] | None = None

    def prompt(self) -> str:
        if self.session is None:
            return f"{self.state.hostname}#"
        return f"{self.state.hostname}(config-s-{self.session[:6]})#"

    def run(self) -> None:
        chan = self.chan
        chan.sendall(f"Last login: never\r\n{self.prompt()}".encode())
        buf = ""
        while True:
            data = chan.recv(65536)
            if not data:
                return
            text = data.decode(errors="replace")
            # Echo the whole chunk in one write: per-character echo makes netmiko 3.5x slower.
            chan.sendall(text.replace("\r\n", "\n").replace("\n", "\r\n").encode())
            buf += text.replace("\r\n", "\n").replace("\r", "\n")
            while "\n" in buf:
                line, buf = buf.split("\n", 1)
                st = self.state
                if st.silent_at and re.search(st.silent_at, line):
                    if st.silent_applies:
                        self.command(line.strip())
                    while chan.recv(65536):  # gone quiet: read, never answer
                        pass
                    return
                out = self.command(line.strip())
                if out is None:
                    chan.close()
                    return
                late = max((s for p, s in st.late.items() if re.search(p, line)), default=0.0)
                if late:
                    time.sleep(late)
                reply = (out.replace("\n", "\r\n") + "\r\n" if out else "") + self.prompt()
                chan.sendall(reply.encode())

    def command(self, line: str) -> str | None:
        with self.state.lock:
            return self._command(line)

    def _command(self, line: str) -> str | None:
        st = self.state
        if line in ("exit", "quit", "logout") and self.session is None:
            return None
        if line.endswith("| json"):
            return json.dumps(self.json(line[: -len("| json")].strip()), indent=2)
        m = re.fullmatch(r"configure session (\S+)"
                         r"(?: (commit|abort)(?: timer (\d+):(\d+):(\d+))?)?", line)
        if m:
            return self.session_command(m)
        if self.session is not None and not line.startswith("show "):
            if line == "end":
                self.session, self.ctx = None, None
                return ""
            sess = st.sessions[self.session]
            if line == "rollback clean-config":
                sess.config, self.ctx = Config(), None
                return ""
            self.ctx, err = apply_line(sess.config, line, self.ctx)
            return err
        if line in ("", "enable"):
            return ""
        if line == "terminal width 511":
            return "Width set to 511 columns."
        if line == "terminal length 0":
            return "Pagination disabled."
        if line in ("show running-config", "show running-config all"):
            return st.load("running-config").render().rstrip("\n")
        if line == "show startup-config":
            return st.load("startup-config").render("show startup-config").rstrip("\n")
        m = re.fullmatch(r"show session-config named (\S+)( diffs)?", line)
        if m:
            sess_ = st.sessions.get(m.group(1))
            if sess_ is None:
                return f"% Session {m.group(1)} not found"
            new = sess_.config.render(f"show session-config named {m.group(1)}")
            if not m.group(2):
                return new.rstrip("\n")
            old = st.load("running-config").render()
            diff = difflib.unified_diff(old.splitlines()[3:], new.splitlines()[3:],
                                        "system:/running-config",
                                        f"session:/{m.group(1)}-session-config", lineterm="")
            return "\n".join(diff)
        if line == "copy startup-config flash:rollback-0":
            (st.dir / "flash" / "rollback-0").write_text((st.dir / "startup-config").read_text())
            return "Copy completed successfully."
        if line == "configure replace flash:rollback-0":
            st.save("running-config", Config.parse((st.dir / "flash" / "rollback-0").read_text()))
            return ""
        if line in ("write memory", "copy running-config startup-config"):
            st.save("startup-config", st.load("running-config"))
            return "Copy completed successfully."
        return f"% Invalid input (at token 0: '{line.split()[0]}')"

    def session_command(self, m: re.Match[str]) -> str:
        st, name, action = self.state, m.group(1), m.group(2)
        if action is None:
            if name not in st.sessions:
                st.sessions[name] = Session(copy.deepcopy(st.load("running-config")))
            self.session, self.ctx = name, None
            return ""
        sess = st.sessions.get(name)
        if sess is None:
            return f"% Session {name} not found"
        if action == "abort":
            if sess.state == "pendingCommitTimer" and sess.before is not None:
                st.save("running-config", sess.before)
            if sess.timer:
                sess.timer.cancel()
            del st.sessions[name]
            return ""
        if sess.state == "pendingCommitTimer":  # a plain commit confirms a timed one
            if sess.timer:
                sess.timer.cancel()
            sess.state = "completed"
            del st.sessions[name]
            return ""
        before = st.load("running-config")
        st.save("running-config", sess.config)
        if m.group(3) is None:
            del st.sessions[name]
            return ""
        seconds = int(m.group(3)) * 3600 + int(m.group(4)) * 60 + int(m.group(5))
        sess.state, sess.before = "pendingCommitTimer", before
        sess.commit_by = st.uptime() + seconds
        sess.timer = threading.Timer(seconds, st.revert, args=(name,))
        sess.timer.daemon = True
        sess.timer.start()
        return ""

    def json(self, command: str) -> object:
        st = self.state
        if command == "show version":
            return {"modelName": "vEOS-lab", "version": "4.31.2F", "uptime": st.uptime(),
                    "hostname": st.hostname, "serialNumber": "FAKE0001"}
        if command == "show ip bgp summary":
            bgp = next((b for b in st.load("running-config").blocks
                        if b[0].startswith("router bgp ")), None)
            names = [c.split()[1] for c in (bgp[1] if bgp else [])
                     if c.startswith("neighbor ") and " remote-as " in c]
            state = "Active" if st.bgp_down else "Established"
            return {"vrfs": {"default": {"routerId": "0.0.0.0", "peers": {
                n: {"peerState": state, "asn": "0"} for n in names}}}}
        if command in ("show configuration sessions", "show configuration sessions detail"):
            return {"sessions": {n: {"state": s.state, "commitBy": s.commit_by,
                                     "description": ""} for n, s in st.sessions.items()}}
        return {"errors": [f"% Invalid input: {command}"]}


class FakeEos:
    """A fake EOS switch listening on 127.0.0.1 (ephemeral port) until `stop()`."""

    def __init__(self, state_dir: Path, hostname: str, username: str, password: str,
                 host_key: paramiko.PKey) -> None:
        state_dir.mkdir(parents=True, exist_ok=True)
        self.state = EosState(state_dir, hostname)
        self.username, self.password, self.host_key = username, password, host_key
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port: int = self.sock.getsockname()[1]
        self.connections = 0  # TCP connections accepted (a host-key check counts too)
        self._stopping = threading.Event()
        self._transports: list[paramiko.Transport] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        self.connections += 1
        transport = paramiko.Transport(conn)
        self._transports.append(transport)
        transport.add_server_key(self.host_key)
        server = _Server(self.username, self.password)
        try:
            transport.start_server(server=server)
            chan = transport.accept(20)
            if chan is None or not server.shell.wait(10):
                return
            Shell(self.state, chan).run()
        except (EOFError, OSError, paramiko.SSHException):
            return
        finally:
            transport.close()

    def files(self) -> dict[str, str]:
        """Every state file, for before/after comparisons."""
        return {str(p.relative_to(self.state.dir)): p.read_text()
                for p in sorted(self.state.dir.rglob("*")) if p.is_file()}

    def running(self) -> str:
        return (self.state.dir / "running-config").read_text()

    def stop(self) -> None:
        self._stopping.set()
        self.sock.close()
        for t in self._transports:
            t.close()
        with self.state.lock:
            for sess in self.state.sessions.values():
                if sess.timer:
                    sess.timer.cancel()
