"""A fake Junos OS Evolved switch: a real NETCONF-over-SSH server on 127.0.0.1.

asyncssh serves the `netconf` SSH subsystem (RFC 6242) on an ephemeral port, with NETCONF 1.0
end-of-message framing (`]]>]]>`: the hello offers base:1.0 only, so ncclient uses it). It
answers the RPCs napalm's `junos` driver and PyEZ really send, listed from their sources
(napalm 5.2 napalm/junos/junos.py; junos-eznc 2.8 jnpr/junos/device.py, utils/config.py,
facts/*.py) and recorded in `Switch.rpcs` so a test can show which ones ran:

  get-software-information, get-route-engine-information, get-chassis-inventory,
  get-virtual-chassis-information, get-system-uptime-information ... (PyEZ facts: the ones
      not answered get an rpc-error, which PyEZ's fact gathering tolerates, as on devices
      without that feature)
  lock-configuration / unlock-configuration (a second lock is refused)
  load-configuration action="override"|"replace"|"merge" format="text" (configuration-text),
      and rollback="N" (discard = 0, napalm rollback = 1)
  get-configuration database="committed"|"candidate" format="text";
      compare="rollback" rollback="0" format="text" (the diff)
  commit-configuration [confirmed, confirm-timeout minutes, log]: a confirmed commit is
      rolled back by a timer unless a plain commit confirms it in time; `minute` sets how
      long a minute is, so a test can let one expire
  get-commit-revision-information detail (napalm has_pending_commit)
  get-bgp-summary-information (BGP peers of the running configuration, Established unless
      `bgp_down`)
  close-session

The configuration is kept as parsed curly-brace text (statements by their words, no schema:
a statement the fake's `refuse` list names is rejected as a syntax error, as Junos rejects an
unknown statement). The diff lists removed and added statements under `[edit ...]` headers
per parent path, a flatter form of Junos's `show | compare` (which prints a new block whole).
This module does not import fabgen: it parses and prints configurations on its own.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from typing import Any
from xml.sax.saxutils import escape

import asyncssh
from lxml import etree

from tests.fakes.loop_fleet import LoopFleet

EOM = b"]]>]]>"
JUNOS_NS = "http://xml.juniper.net/junos/23.4R2/junos"
HELLO = ('<?xml version="1.0" encoding="UTF-8"?><hello xmlns="urn:ietf:params:xml:ns:netconf:'
         'base:1.0"><capabilities><capability>urn:ietf:params:netconf:base:1.0</capability>'
         '<capability>urn:ietf:params:netconf:capability:candidate:1.0</capability>'
         '<capability>urn:ietf:params:netconf:capability:confirmed-commit:1.0</capability>'
         '<capability>http://xml.juniper.net/netconf/junos/1.0</capability>'
         '</capabilities><session-id>{sid}</session-id></hello>')
INITIAL = """system {
    host-name {name};
    root-authentication {
        encrypted-password "$6$fake$hash";
    }
    services {
        ssh;
        netconf {
            ssh;
        }
    }
    management-instance;
}
interfaces {
    re0:mgmt-0 {
        unit 0 {
            family inet {
                address 192.0.2.51/24;
            }
        }
    }
}
routing-instances {
    mgmt_junos {
        routing-options {
            static {
                route 0.0.0.0/0 next-hop 192.0.2.1;
            }
        }
    }
}
"""
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|/\*.*?\*/|[{};\[\]]|[^\s{};\[\]"]+', re.S)
Tree = list[tuple[tuple[str, ...], Any]]  # (words, children | None)


def parse(text: str) -> Tree:
    tokens = [t for t in _TOKEN.findall(text) if not t.startswith("/*")]
    stack: list[Tree] = [[]]
    words: list[str] = []
    i = 0
    while i < len(tokens):
        t = tokens[i]
        i += 1
        if t == "[":
            j = tokens.index("]", i)
            words.append("[ " + " ".join(tokens[i:j]) + " ]")
            i = j + 1
        elif t == ";":
            if words:
                stack[-1].append((tuple(words), None))
            words = []
        elif t == "{":
            child: Tree = []
            stack[-1].append((tuple(words), child))
            stack.append(child)
            words = []
        elif t == "}":
            if len(stack) == 1:
                raise SyntaxError("unbalanced }")
            stack.pop()
            words = []
        else:
            words.append(t)
    if len(stack) != 1 or words:
        raise SyntaxError("missing } or ;")
    return stack[0]


def show(tree: Tree, depth: int = 0) -> str:
    out = []
    for words, children in tree:
        pad = "    " * depth
        if children is None:
            out.append(f"{pad}{' '.join(words)};")
        else:
            out.append(f"{pad}{' '.join(words)} {{")
            if children:
                out.append(show(children, depth + 1).rstrip("\n"))
            out.append(f"{pad}}}")
    return "\n".join(out) + "\n"


def paths(tree: Tree, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    for words, children in tree:
        if children:
            out.extend(paths(children, (*prefix, *words)))
        else:
            out.append((*prefix, *words))
    return out


def merge(base: Tree, add: Tree) -> Tree:
    out = list(base)
    for words, children in add:
        same = next((i for i, (w, _) in enumerate(out) if w == words), None)
        if same is None:
            out.append((words, children))
        elif children is not None and out[same][1] is not None:
            out[same] = (words, merge(out[same][1], children))
    return out


def compare(old: Tree, new: Tree) -> str:
    """Removed and added statements grouped under `[edit <parent>]`, Junos style."""
    before, after = paths(old), paths(new)
    gone, came = [p for p in before if p not in set(after)], [p for p in after
                                                                if p not in set(before)]
    groups: dict[tuple[str, ...], list[str]] = {}
    for sign, items in (("-", gone), ("+", came)):
        for p in items:
            groups.setdefault(p[:-1], []).append(f"{sign}   {p[-1]};")
    lines = []
    for parent in sorted(groups):
        lines.append(f"[edit {' '.join(parent)}]" if parent else "[edit]")
        lines.extend(groups[parent])
    return "\n" + "\n".join(lines) + "\n" if lines else "\n"


class RpcError(Exception):
    def __init__(self, message: str, tag: str = "operation-failed") -> None:
        super().__init__(message)
        self.tag = tag


class Switch:
    """One fake Junos switch: its configurations, history and the RPCs it answered."""

    def __init__(self, name: str, minute: float = 60.0) -> None:
        self.name = name
        self.minute = minute  # seconds in a `confirm-timeout` minute
        self.running: Tree = parse(INITIAL.replace("{name}", name))
        self.candidate: Tree = list(self.running)
        self.history: list[Tree] = [self.running]  # rollback 0 = running, 1 = before, ...
        self.locked = False
        self.rpcs: list[str] = []
        self.commits: list[str] = []  # log of commit kinds: commit, confirmed, confirm, revert
        self.refuse: set[str] = set()  # statement words the "schema" rejects
        self.bgp_down = False
        self.port = 0
        self.server: asyncssh.SSHAcceptor | None = None
        self._timer: threading.Timer | None = None
        self._pending_at: float | None = None
        self._pending_minutes = 0
        self._lock = threading.Lock()

    # --- configuration ----------------------------------------------------------------------

    def running_text(self) -> str:
        return show(self.running)

    def _commit(self, kind: str) -> None:
        self.running = list(self.candidate)
        self.history.insert(0, self.running)
        self.commits.append(kind)

    def _revert(self) -> None:
        with self._lock:
            if self._pending_at is None:
                return
            self.candidate = list(self.history[1])
            self._commit("revert")
            self._pending_at = None

    def _check(self, tree: Tree) -> None:
        for p in paths(tree):
            bad = next((w for w in p if w in self.refuse), None)
            if bad is not None:
                raise RpcError(f"syntax error: {bad}", "invalid-value")

    # --- RPCs -------------------------------------------------------------------------------

    def call(self, rpc: Any) -> str:
        tag = etree.QName(rpc).localname
        self.rpcs.append(tag)
        handler: Callable[[Any], str] | None = getattr(self, "rpc_" + tag.replace("-", "_"),
                                                        None)
        if handler is None:
            raise RpcError(f"syntax error, expecting <rpc> or a known command: {tag}",
                           "operation-not-supported")
        with self._lock if tag != "commit-configuration" else _Null():
            return handler(rpc)

    def rpc_get_software_information(self, rpc: Any) -> str:
        return (f"<software-information><host-name>{self.name}</host-name><product-model>"
                "qfx5240-64od</product-model><product-name>qfx5240-64od</product-name>"
                "<junos-version>23.4R2-S2.1-EVO</junos-version></software-information>")

    def rpc_get_system_uptime_information(self, rpc: Any) -> str:
        now = int(time.time())
        return (f"<system-uptime-information><current-time><date-time seconds=\"{now}\">now"
                "</date-time></current-time></system-uptime-information>")

    def rpc_lock_configuration(self, rpc: Any) -> str:
        if self.locked:
            raise RpcError("configuration database locked by another session", "lock-denied")
        self.locked = True
        return "<ok/>"

    def rpc_unlock_configuration(self, rpc: Any) -> str:
        self.locked = False
        return "<ok/>"

    def rpc_load_configuration(self, rpc: Any) -> str:
        if rpc.get("rollback") is not None:
            n = int(rpc.get("rollback"))
            if n >= len(self.history):
                raise RpcError(f"rollback {n} does not exist")
            self.candidate = list(self.history[n])
            return "<load-configuration-results><ok/></load-configuration-results>"
        action = rpc.get("action", "merge")
        if rpc.get("format") != "text" or action == "set":
            raise RpcError(f"this fake loads curly text only, not {rpc.get('format')}/{action}")
        body = rpc.find("{*}configuration-text")
        if body is None:
            raise RpcError("load-configuration without configuration-text")
        try:
            tree = parse(body.text or "")
        except SyntaxError as exc:
            raise RpcError(f"syntax error: {exc}", "invalid-value") from None
        self._check(tree)
        self.candidate = tree if action == "override" else merge(self.candidate, tree)
        return "<load-configuration-results><ok/></load-configuration-results>"

    def rpc_get_configuration(self, rpc: Any) -> str:
        if rpc.get("compare") == "rollback":
            old = self.history[int(rpc.get("rollback", "0"))]
            diff = escape(compare(old, self.candidate))
            return ("<configuration-information><configuration-output>"
                    f"{diff}</configuration-output></configuration-information>")
        tree = self.candidate if rpc.get("database", "candidate") == "candidate" \
            else self.running
        return f"<configuration-text>{escape(show(tree))}</configuration-text>"

    def rpc_commit_configuration(self, rpc: Any) -> str:
        confirmed = rpc.find("{*}confirmed") is not None
        with self._lock:
            self._check(self.candidate)
            if confirmed:
                minutes = int(rpc.findtext("{*}confirm-timeout") or "10")
                self._commit("confirmed")
                self._pending_at, self._pending_minutes = time.time(), minutes
                if self._timer is not None:
                    self._timer.cancel()
                self._timer = threading.Timer(minutes * self.minute, self._revert)
                self._timer.daemon = True
                self._timer.start()
            else:
                kind = "confirm" if self._pending_at is not None else "commit"
                if self._timer is not None:
                    self._timer.cancel()
                self._pending_at = None
                self._commit(kind)
        return ("<commit-results><routing-engine><name>re0</name><commit-success/>"
                "</routing-engine></commit-results>")

    def rpc_get_commit_revision_information(self, rpc: Any) -> str:
        at = self._pending_at or time.time()
        comment = (f"commit confirmed, rollback in {self._pending_minutes}mins"
                   if self._pending_at is not None else "fabgen")
        return (f"<commit-revision-information><date-time seconds=\"{int(at)}\">then"
                f"</date-time><revision>re0-{len(self.history)}</revision><comment>{comment}"
                "</comment></commit-revision-information>")

    def rpc_get_bgp_summary_information(self, rpc: Any) -> str:
        peers = []
        for p in paths(self.running):
            if (len(p) >= 6 and p[:2] == ("protocols", "bgp") and p[4] == "neighbor"
                    and p[5] not in peers):
                peers.append(p[5])
        state = "Active" if self.bgp_down else "Established"
        body = "".join(f"<bgp-peer><peer-address>{a}</peer-address><peer-state>{state}"
                       "</peer-state></bgp-peer>" for a in peers)
        return f"<bgp-information>{body}</bgp-information>"


class _Null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *args: object) -> None:
        return None


def _reply(message_id: str, body: str) -> bytes:
    return (f'<rpc-reply xmlns="urn:ietf:params:xml:ns:netconf:base:1.0" '
            f'xmlns:junos="{JUNOS_NS}" message-id="{message_id}">{body}</rpc-reply>'
            ).encode() + EOM


def _error(message_id: str, err: RpcError) -> bytes:
    return _reply(message_id, f"<rpc-error><error-type>protocol</error-type><error-tag>"
                              f"{err.tag}</error-tag><error-severity>error</error-severity>"
                              f"<error-message>{escape(str(err))}</error-message></rpc-error>")


class _Server(asyncssh.SSHServer):
    def __init__(self, username: str, password: str) -> None:
        self.username, self.password = username, password

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        return (username, password) == (self.username, self.password)


class JunosFleet(LoopFleet):
    """Fake Junos switches served from one event-loop thread; `close()` stops them all."""

    def __init__(self, username: str, password: str) -> None:
        self.username, self.password = username, password
        self.host_key = asyncssh.generate_private_key("ssh-ed25519")
        self.switches: dict[str, Switch] = {}
        self.sessions = 0
        super().__init__()

    def add(self, name: str, minute: float = 60.0) -> Switch:
        switch = Switch(name, minute)
        self.switches[name] = switch

        async def start() -> asyncssh.SSHAcceptor:
            return await asyncssh.create_server(
                lambda: _Server(self.username, self.password), "127.0.0.1", 0,
                server_host_keys=[self.host_key], encoding=None,
                process_factory=lambda proc: self._session(switch, proc))

        switch.server = self._call(start)
        switch.port = switch.server.get_port()
        return switch

    async def _session(self, switch: Switch, proc: asyncssh.SSHServerProcess[bytes]) -> None:
        if proc.subsystem != "netconf":
            proc.stderr.write(b"only the netconf subsystem is served\n")
            proc.exit(1)
            return
        self.sessions += 1
        proc.stdout.write(HELLO.format(sid=self.sessions).encode() + EOM)
        buf = b""
        try:
            while True:
                data = await proc.stdin.read(65536)
                if not data:
                    break
                buf += data
                while EOM in buf:
                    message, buf = buf.split(EOM, 1)
                    text = message.strip()
                    if not text:
                        continue
                    root = etree.fromstring(text)
                    if etree.QName(root).localname == "hello":
                        continue
                    mid = root.get("message-id", "")
                    op = next((c for c in root if isinstance(c.tag, str)), None)
                    if op is None:
                        proc.stdout.write(_error(mid, RpcError("empty rpc")))
                        continue
                    if etree.QName(op).localname == "close-session":
                        switch.rpcs.append("close-session")
                        switch.locked = False
                        proc.stdout.write(_reply(mid, "<ok/>"))
                        proc.exit(0)
                        return
                    try:
                        body = switch.call(op)
                    except RpcError as err:
                        proc.stdout.write(_error(mid, err))
                        continue
                    proc.stdout.write(_reply(mid, body))
        except (asyncssh.BreakReceived, BrokenPipeError, ConnectionError):
            pass
        switch.locked = False
        proc.exit(0)

    def _stopping(self, switch: Switch) -> None:
        if switch._timer is not None:
            switch._timer.cancel()
