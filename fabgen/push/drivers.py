"""Per-platform push drivers: what loading, diffing, committing and rolling back really are.

Each driver states its true `mode` (replace or merge), where its diff comes from (`device`:
the switch computed it; `local`: fabgen compared the fetched running config with the render)
and who runs the commit-confirm timer (`device`, or `fabgen` where the platform has none).
Every step returns a `Step` or raises `DeviceError`; nothing is reported as done that was not
checked on the device: napalm over SSH never raises on `% Invalid input`, and netmiko returns
text without an exit status, so each driver checks for itself (see reference/push-testing.md).

What is replaced is never the render alone: each driver builds its candidate from the device's
running config with the parts fabgen owns replaced by the render (candidate.py), and refuses a
candidate that would remove or change the management access the session depends on.
"""

from __future__ import annotations

import difflib
import hashlib
import io
import json
import re
import secrets
import shlex
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import yaml

from fabgen.push import candidate as cand
from fabgen.push.results import DeviceError, ErrorKind, Step


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def tail(text: str, lines: int = 6) -> str:
    """The last lines of a command's output: where CLIs print their `Error: ...`."""
    kept = [x.rstrip() for x in text.strip().splitlines() if x.strip()]
    return " | ".join(kept[-lines:]) or "(no output)"


@dataclass(frozen=True, slots=True)
class Render:
    """What fabgen rendered for one device: its config file and, for SONiC, its frr.conf."""

    config: str
    frr: str | None = None


def _refuse(lost: list[str]) -> DeviceError:
    return DeviceError("refused", "the candidate would remove or change the management access "
                       f"this session depends on ({'; '.join(lost[:5])}): refused, nothing "
                       "was applied; the render must not contain these")


def _unified(old: str, new: str, old_label: str, new_label: str) -> str:
    return "\n".join(difflib.unified_diff(old.splitlines(), new.splitlines(), old_label,
                                          new_label, lineterm=""))


class Driver:
    """One device's push session; a new instance per device per run."""

    platform: ClassVar[str]
    mode: ClassVar[str] = "replace"
    diff_source: ClassVar[str]
    confirm_by: ClassVar[str]  # device | fabgen
    connection: ClassVar[str]  # the Nornir connection plugin: napalm | netmiko
    connection_platform: ClassVar[str]  # napalm driver or netmiko device_type
    summary: ClassVar[str]  # one line for the console: what a push to this platform does
    health_poll: ClassVar[float] = 2.0  # seconds between two BGP state reads

    def __init__(self, conn: Any, run_id: str, timeout: float,
                 apply_timeout: float | None = None, host: str | None = None) -> None:
        self.conn, self.run_id, self.timeout = conn, run_id, timeout
        self.apply_timeout = apply_timeout or timeout  # the command that applies the config
        self.host = host  # the address fabgen connected to (the management guard keeps it)
        self.committed = False  # the candidate is live, waiting for confirm()
        # The applying command was sent but its answer did not come back (a timeout, a lost
        # session): the candidate may be live. A rollback treats it as committed.
        self.commit_sent = False
        # A command's answer did not come back in time: it may still be on its way, and would
        # be read as the next command's. resync() before sending anything else.
        self.stalled = False
        self.silent = False  # resync() got nothing back: the device stopped answering
        self.bgp_before: dict[str, str] | None = None  # session states before the commit
        # The last running config read, kept for the prepare() that follows the audit's
        # before-hash (one read less per device); dropped once used and by commit().
        self._fresh: Any = None

    def _take_fresh(self) -> Any:
        fresh, self._fresh = self._fresh, None
        return fresh

    def running(self) -> str:
        """The running config as text (hashed into the audit log)."""
        raise NotImplementedError

    def running_sha256(self) -> str:
        return sha256(self.running())

    def prepare(self, render: Render) -> Step:
        """Build the candidate (running config, fabgen's parts replaced by the render), check
        the management guard, load it where the platform has a candidate, and take the diff;
        change nothing."""
        raise NotImplementedError

    def discard(self) -> Step:
        """Drop the candidate: a dry run, or a device without changes."""
        raise NotImplementedError

    def commit(self, render: Render, confirm_seconds: int) -> Step:
        """Make the candidate live; it rolls back unless confirmed in time."""
        raise NotImplementedError

    def verify(self, render: Render) -> Step:
        """Check on the device that what is live is the candidate."""
        raise NotImplementedError

    def confirm(self) -> Step:
        raise NotImplementedError

    def rollback(self) -> Step:
        """Undo whatever this session did (a live commit, a loaded candidate, an upload)."""
        raise NotImplementedError

    comment: ClassVar[str] = "#"  # what the device's CLI ignores as a comment

    def netmiko(self) -> Any:
        """The netmiko session under this driver."""
        return self.conn

    def resync(self) -> None:
        """Wait (at most `timeout`) until the device answers again, past whatever late answer
        is still in flight: a marker comment is sent and read back with the prompt after it.
        DeviceError `timeout` when nothing comes: the device stopped answering."""
        device = self.netmiko()
        marker = f"fabgen-sync-{secrets.token_hex(4)}"
        try:
            device.write_channel(f"{self.comment} {marker}{device.RETURN}")
            device.read_until_pattern(pattern=rf"{marker}[\s\S]*[#>$]\s*$",
                                      read_timeout=self.timeout)
        except Exception:
            self.silent = True
            raise DeviceError("timeout", f"the device stopped answering (nothing back in "
                              f"{self.timeout:g}s)") from None
        self.stalled = self.silent = False

    def abandon(self) -> str:
        """The device does not answer: make closing the session send nothing that waits for
        an answer. Returns what may be left behind on the device ("" if nothing)."""
        return ""

    @property
    def maybe_committed(self) -> bool:
        """The candidate is live, or may be (its commit command got no answer)."""
        return self.committed or self.commit_sent

    @staticmethod
    def diff_stat(diff: str) -> tuple[int, int]:
        """Lines added and removed in a unified diff."""
        lines = diff.splitlines()
        plus = sum(1 for x in lines if x.startswith("+") and not x.startswith("+++"))
        minus = sum(1 for x in lines if x.startswith("-") and not x.startswith("---"))
        return plus, minus

    def neighbours(self, render: Render) -> list[str]:
        """The BGP neighbours the render configures (addresses or interface names)."""
        raise NotImplementedError

    def bgp_states(self) -> dict[str, str]:
        """BGP session state by neighbour, as the device reports it (VRF default)."""
        raise NotImplementedError

    def health(self, render: Render, timeout: float) -> Step:
        """Wait up to `timeout` seconds for the BGP session to every rendered neighbour to be
        Established; DeviceError `health` if one is not."""
        want = self.neighbours(render)
        if not want:
            return Step("health", detail="no BGP neighbour rendered: nothing to check")
        deadline = time.monotonic() + timeout
        problem = ""
        while True:
            try:
                states = self.bgp_states()
            except Exception as exc:  # bgpd restarting, a CLI not ready yet: ask again
                states, problem = {}, f"; last read failed: {exc}"
            down = [n for n in want if states.get(n, "").lower() != "established"]
            if not down:
                return Step("health", detail=f"{len(want)} BGP session(s) Established")
            left = deadline - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(self.health_poll, left))
        shown = ", ".join(f"{n} ({states.get(n) or 'absent'})" for n in down[:5])
        more = f" and {len(down) - 5} more" if len(down) > 5 else ""
        hint = ""
        if self.bgp_before is not None and all(
                self.bgp_before.get(n, "").lower() != "established" for n in down):
            hint = ("; none of them was Established before the push either (a first rollout "
                    "whose peers are not configured yet? --health-timeout 0 skips this check)")
        raise DeviceError("health", f"{len(down)} of {len(want)} BGP session(s) to rendered "
                          f"neighbours not Established after {timeout:g}s: {shown}{more}"
                          f"{hint}{problem}")


# --- Arista EOS: napalm `eos` over SSH ---------------------------------------------------------

_EOS_VOLATILE = re.compile(r"^! (Command|Time|Startup-config last modified at):")
_EOS_HOSTNAME = re.compile(r"^hostname (\S+)\s*$", re.M)
_SECRET = re.compile(r"\b(secret|password|key)(\s+(?:sha512|[0-9]))?\s+\S+")


def config_paths(text: str) -> list[tuple[str, ...]]:
    """Each significant line of an EOS CLI config with the section lines above it, by
    indentation: ("interface Ethernet1/1", "mtu 9100"). `!` comments, `end`, `exit` skipped."""
    out: list[tuple[str, ...]] = []
    stack: list[tuple[int, str]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or (line.startswith("!") and not line.startswith("!!")):
            continue
        if line in ("end", "exit"):
            continue
        indent = len(raw) - len(raw.lstrip())
        while stack and stack[-1][0] >= indent:
            stack.pop()
        out.append((*(parent for _, parent in stack), line))
        stack.append((indent, line))
    return out


def missing_lines(wanted: str, device: str) -> list[str]:
    """Lines of `wanted` (in their section) that the device's config does not have; secrets
    (a `username ... secret` hash) masked."""
    present = set(config_paths(device))
    return [_SECRET.sub(r"\1 ********", " > ".join(p))
            for p in config_paths(wanted) if p not in present]


class EosDriver(Driver):
    """napalm `eos` over SSH: a configuration session with `rollback clean-config` (replace)
    of a candidate built from the running config, the session's own diff, and `commit timer`
    (commit-confirm by the device)."""

    platform = "eos"
    diff_source = "device"
    confirm_by = "device"
    connection = "napalm"
    connection_platform = "eos"
    summary = ("replace: napalm config session + `rollback clean-config` of the running config "
               "with the sections fabgen owns replaced by the render; diff by the device "
               "(`show session-config diffs`); commit-confirm by the device (session commit "
               "timer)")

    def __init__(self, conn: Any, run_id: str, timeout: float,
                 apply_timeout: float | None = None, host: str | None = None) -> None:
        super().__init__(conn, run_id, timeout, apply_timeout, host)
        self.candidate = ""
        self.hostnames: set[str] = set()  # the device's name before the push and the render's

    def running(self) -> str:
        text = str(self.conn.get_config(retrieve="running")["running"])
        self._fresh = "\n".join(x for x in text.splitlines() if not _EOS_VOLATILE.match(x))
        return str(self._fresh)

    def build(self, render: Render) -> str:
        """The candidate: the render, then every running section fabgen does not own."""
        running = self._take_fresh() or self.running()
        candidate = cand.eos_candidate(running, render.config)
        lost = cand.lost_management(cand.eos_management(running, self.host),
                                    cand.eos_management(candidate, self.host))
        if lost:
            raise _refuse(lost)
        self.candidate = candidate
        self.hostnames = {m.group(1) for text in (running, candidate)
                          for m in _EOS_HOSTNAME.finditer(text)}
        return candidate

    def prepare(self, render: Render) -> Step:
        candidate = self.build(render)
        self.conn.load_replace_candidate(config=candidate)
        # Over SSH napalm neither raises on `% Invalid input` nor keeps the message: a rejected
        # line is only visible as a line missing from the session's config. The device's own
        # carried sections are checked too: one dropped would be deleted by the commit.
        session = str(self.conn.get_config(retrieve="candidate")["candidate"])
        missing = missing_lines(candidate, session)
        if missing:
            self.conn.discard_config()
            raise DeviceError("rejected", f"the device did not take {len(missing)} line(s) of "
                              f"the candidate: {'; '.join(missing[:5])}")
        diff = str(self.conn.compare_config())
        return Step("prepare", changed=bool(diff.strip()), diff=diff)

    def discard(self) -> Step:
        self.conn.discard_config()
        return Step("discard")

    comment = "!"

    def netmiko(self) -> Any:
        return self.conn.device  # napalm's netmiko session (transport ssh)

    def resync(self) -> None:
        super().resync()
        self.netmiko().set_base_prompt()  # an abort or a timer may have renamed the switch

    def abandon(self) -> str:
        # napalm's close() aborts the open session first, waiting for a prompt that will not
        # come. A pending commit timer reverts a commit by itself; an uncommitted session
        # stays pending on EOS and must be aborted by hand (napalm's next lock waits for it).
        session, self.conn.config_session = self.conn.config_session, None
        if not session:
            return ""
        return (f"configuration session {session} may be left on the device (the device "
                f"stopped answering): `configure session {session} abort` removes it")

    def _send_renaming(self, command: str) -> str:
        """Send a command that may rename the switch: a commit or abort of a session whose
        `hostname` differs from the running one. EOS's prompt is its hostname, and netmiko waits
        for the prompt it saw before sending (napalm gives it no other pattern), so such a
        command always timed out. Wait for the prompt under either name, then let netmiko learn
        the one the switch now has."""
        device = self.netmiko()
        names = {n for n in (*self.hostnames, str(device.base_prompt)) if n}
        # A prompt shows the hostname up to its first dot when it is a domain name.
        shown = sorted({re.escape(x) for n in names for x in (n, n.split(".")[0])})
        pattern = rf"(?:{'|'.join(shown)})(?:\([^()\r\n]*\))?[#>]"
        try:
            out = str(device.send_command(command, expect_string=pattern,
                                          read_timeout=self.apply_timeout))
        except Exception as exc:
            if type(exc).__name__ != "ReadTimeout":  # netmiko's; imported only with push
                raise
            raise DeviceError("timeout", f"no answer to `{command}` in time") from None
        device.set_base_prompt()
        return out

    def commit(self, render: Render, confirm_seconds: int) -> Step:
        """napalm's commit_config(revert_in=...), with the commit sent by _send_renaming."""
        self._fresh = None
        if self.conn.has_pending_commit():
            raise DeviceError("error", "another commit-confirm is pending on the device (a "
                              "push or an operator waiting to confirm): not committing")
        session = self.conn.config_session
        # The config `configure replace` restores if the session's timer cannot (napalm).
        self.netmiko().send_command("copy startup-config flash:rollback-0")
        hms = time.strftime("%H:%M:%S", time.gmtime(confirm_seconds))
        self.commit_sent = True
        self._send_renaming(f"configure session {session} commit timer {hms}")
        self.committed = True
        return Step("commit", changed=True, detail=f"commit timer {confirm_seconds}s")

    def verify(self, render: Render) -> Step:
        missing = missing_lines(self.candidate or render.config, self.running())
        if missing:
            raise DeviceError("verify", f"{len(missing)} line(s) of the candidate are not in "
                              f"the running config after commit: {'; '.join(missing[:5])}")
        return Step("verify")

    def confirm(self) -> Step:
        try:
            self.conn.confirm_commit()  # raises when no timer is pending (it expired)
        except Exception as exc:
            raise DeviceError("confirm", f"cannot confirm the commit (did its timer expire and "
                              f"revert it?): {exc}") from None
        self.committed = False
        return Step("confirm", changed=True, detail="confirmed, written to startup-config")

    def rollback(self) -> Step:
        session = getattr(self.conn, "config_session", None)
        if self.maybe_committed and session:
            # Aborting a session with a pending commit timer reverts its commit on EOS (what
            # napalm's rollback() sends, without its pattern-bound prompt: the abort renames
            # the switch back when the commit renamed it). An uncommitted session is dropped.
            out = self._send_renaming(f"configure session {session} abort")
            self.conn.config_session = None
            self.committed = self.commit_sent = False
            gone = "not found" in out.lower()
            return Step("rollback", changed=True,
                        detail="session already gone: its timer had reverted the commit" if gone
                        else "commit aborted")
        if session:
            # Also covers a commit that raised midway: aborting a session with a pending
            # timer reverts it on EOS, and an unconfirmed timer reverts it anyway.
            self.conn.discard_config()
            return Step("rollback", detail="candidate discarded")
        return Step("rollback", detail="nothing to roll back")

    def neighbours(self, render: Render) -> list[str]:
        return cand.bgp_neighbours(render.config)

    def bgp_states(self) -> dict[str, str]:
        # napalm's cli() over SSH appends `| json` and parses the answer ({} when it cannot).
        out = self.conn.cli(["show ip bgp summary"], encoding="json")
        data: Any = next(iter(out.values()), {}) if isinstance(out, dict) else {}
        peers = (((data or {}).get("vrfs") or {}).get("default") or {}).get("peers") or {}
        return {str(n): str((p or {}).get("peerState", "")) for n, p in peers.items()}


# --- SONiC and Cumulus NVUE: netmiko to a Linux shell ------------------------------------------

_RC = re.compile(r"__rc=(\d+)\s*$")


class LinuxDriver(Driver):
    """A netmiko session to a Linux shell: commands with exit status, uploads over SFTP."""

    connection = "netmiko"
    filename: ClassVar[str]

    def __init__(self, conn: Any, run_id: str, timeout: float,
                 apply_timeout: float | None = None, host: str | None = None) -> None:
        super().__init__(conn, run_id, timeout, apply_timeout, host)
        # Relative to the login directory: several devices on one host never share a file.
        self.remote = f"fabgen-{run_id}-{self.filename}"
        self.uploads: set[str] = set()

    @property
    def uploaded(self) -> bool:
        return bool(self.uploads)

    def sh(self, command: str, kind: ErrorKind | None = "error",
           timeout: float | None = None) -> tuple[int, str]:
        """Run a command; its exit status comes from `echo __rc=$?` (netmiko has none).

        With `kind`, a non-zero status raises DeviceError of that kind with the output's tail.
        """
        out = str(self.conn.send_command(f"{command}; echo __rc=$?",
                                         read_timeout=timeout or self.timeout))
        m = _RC.search(out)
        if m is None:
            raise DeviceError("error", f"`{command}`: no exit status in the output: {tail(out)}")
        rc, text = int(m.group(1)), out[: m.start()].rstrip()
        if rc and kind is not None:
            raise DeviceError(kind, f"`{command}` failed (exit {rc}): {tail(text)}")
        return rc, text

    def upload(self, files: dict[str, str]) -> None:
        """Put each text at its remote path (SFTP), then check every file's sha256 at once."""
        import paramiko  # here, so `fabgen.push` imports without the push extra installed

        data = {remote: text.encode("utf-8") for remote, text in files.items()}
        sftp = paramiko.SFTPClient.from_transport(self.conn.remote_conn.get_transport())
        if sftp is None:
            raise DeviceError("error", "the device refused an SFTP session")
        try:
            for remote, content in data.items():
                sftp.putfo(io.BytesIO(content), remote)
                self.uploads.add(remote)
        finally:
            sftp.close()
        _, out = self.sh("sha256sum " + " ".join(shlex.quote(r) for r in data))
        for remote, content in data.items():
            if hashlib.sha256(content).hexdigest() not in out:
                raise DeviceError("error", f"the uploaded {remote} does not match the candidate")

    def cleanup(self, also: str = "") -> None:
        """Remove the uploads (and `also`, more shell words for `rm -f`)."""
        if self.uploads or also:
            self.sh("rm -f " + " ".join([*(shlex.quote(r) for r in sorted(self.uploads)),
                                         also]).rstrip(), kind=None)
            self.uploads.clear()


def canonical_json(data: Any) -> str:
    return json.dumps(data, indent=4, sort_keys=True) + "\n"


def _differences(want: Any, have: Any, where: str = "") -> list[str]:
    """Where `have` lacks or differs from `want` (fields only `have` has are not reported)."""
    if isinstance(want, dict) and isinstance(have, dict):
        out = []
        for key, value in want.items():
            if key not in have:
                out.append(f"{where}{key}: missing")
            else:
                out += _differences(value, have[key], f"{where}{key}|")
        return out
    return [] if want == have else [f"{where.rstrip('|')}: {have!r} instead of {want!r}"]


def frr_peer_states(data: Any) -> dict[str, str]:
    """Peer states from FRR's `show ip bgp summary json`: `{"ipv4Unicast": {"peers": ...}}`
    (FRR 8+) or the address family's object itself (older FRR)."""
    if not isinstance(data, dict):
        return {}
    families = [data] if "peers" in data else [v for v in data.values() if isinstance(v, dict)]
    out: dict[str, str] = {}
    for family in families:
        for peer, info in (family.get("peers") or {}).items():
            out.setdefault(str(peer), str((info or {}).get("state", "")))
    return out


SONIC_FRR = "/etc/sonic/frr/frr.conf"


class SonicDriver(LinuxDriver):
    """netmiko `linux` to SONiC: upload config_db.json and frr.conf (candidates built from the
    device's own), `config checkpoint`, `config reload -y` (replace; restarts services) or
    `config replace` (GCU), read back, `config save -y`.

    frr.conf: the render sets `docker_routing_config_mode: split-unified`, so bgpd ignores
    CONFIG_DB's BGP tables and reads /etc/sonic/frr/frr.conf (bind-mounted as /etc/frr in the
    bgp container), which SONiC never regenerates in the split modes; the container loads it
    when it starts (sonic-buildimage dockers/docker-fpm-frr/docker_init.sh, `split-unified`
    branch; docs: SONiC FRR "split" configuration modes). So fabgen copies the candidate there
    before applying: `config reload` restarts every service, bgp included (sonic-utilities
    config/main.py `reload` -> `_restart_services`), and with `config replace`, which restarts
    nothing, fabgen runs `systemctl restart bgp`. The previous file is kept on the device and
    restored with the checkpoint on rollback. The diff is LOCAL: fabgen compares the tables it
    owns in `show runningconfiguration all` and the file /etc/sonic/frr/frr.conf (not FRR's
    `show running-config`, which FRR normalises) with the candidates.

    SONiC has no commit-confirm. fabgen arms its own timer *on the device* before applying: a
    detached `sleep N; config rollback <checkpoint>` (and frr.conf restore) that fires unless
    confirm() defuses it, so a push that cuts fabgen off the device still reverts. Defusing and
    firing race on one atomic rename, so exactly one of them wins.
    """

    platform = "sonic"
    diff_source = "local"
    confirm_by = "fabgen"
    connection_platform = "linux"
    filename = "config_db.json"
    summary = ("replace: upload config_db.json (the running tables fabgen does not own kept) "
               "and frr.conf (to /etc/sonic/frr, split-unified), `config checkpoint`, `config "
               "{apply}`; diff LOCAL (fabgen compares the tables it owns in `show "
               "runningconfiguration all` and the switch's frr.conf file with the candidates; "
               "not the device's own); commit-confirm by fabgen (a timer on the device that runs "
               "`config rollback` and restores frr.conf unless confirmed)")

    def __init__(self, conn: Any, run_id: str, timeout: float,
                 apply_timeout: float | None = None, apply: str = "reload",
                 host: str | None = None) -> None:
        super().__init__(conn, run_id, timeout, apply_timeout, host)
        self.apply = apply
        self.checkpoint = f"fabgen-{run_id}"
        self.marker = f".fabgen/pending-{run_id}"
        self.frr_backup = f".fabgen/frr-before-{run_id}"
        self.remote_frr = f"fabgen-{run_id}-frr.conf"
        self.timer_pid: int | None = None
        self.checkpointed = False
        self.frr_changed = False
        self.candidate_db: dict[str, Any] | None = None
        self.candidate_frr = ""

    def running_db(self) -> dict[str, Any]:
        _, out = self.sh("show runningconfiguration all")
        try:
            data = json.loads(out)
        except ValueError:
            raise DeviceError("error", "`show runningconfiguration all` did not print JSON: "
                              f"{tail(out)}") from None
        if not isinstance(data, dict):
            raise DeviceError("error", "`show runningconfiguration all` is not a JSON object")
        return data

    def running_frr(self) -> str:
        rc, out = self.sh(f"sudo -n cat {SONIC_FRR}", kind=None)
        if rc:
            raise DeviceError("error", f"cannot read {SONIC_FRR} (is the bgp container in "
                              f"split-unified mode?): {tail(out)}")
        return out + "\n" if out else ""

    def running(self) -> str:
        db, frr = self.running_db(), self.running_frr()
        self._fresh = (db, frr)
        return canonical_json(db) + f"--- {SONIC_FRR}\n" + frr

    @staticmethod
    def parse(config: str) -> dict[str, Any]:
        try:
            data = json.loads(config)
        except ValueError as exc:
            raise DeviceError("config", f"the rendered config_db.json is not JSON: {exc}") \
                from None
        if not isinstance(data, dict):
            raise DeviceError("config", "the rendered config_db.json is not a JSON object")
        return data

    def prepare(self, render: Render) -> Step:
        if render.frr is None:
            raise DeviceError("config", "no rendered frr.conf: bgpd (split-unified) would keep "
                              "its old configuration")
        want = self.parse(render.config)
        have, have_frr = self._take_fresh() or (self.running_db(), self.running_frr())
        candidate = cand.sonic_candidate(have, want)
        lost = cand.lost_management(cand.sonic_management(have, self.host),
                                    cand.sonic_management(candidate, self.host))
        if lost:
            raise _refuse(lost)
        frr = cand.frr_candidate(have_frr, render.frr)
        self.candidate_db, self.candidate_frr = candidate, frr
        self.frr_changed = frr != have_frr
        owned_have = canonical_json(cand.sonic_owned(have, want))
        owned_want = canonical_json(cand.sonic_owned(candidate, want))
        diff = "\n".join(x for x in (
            _unified(owned_have, owned_want, "device:running (show runningconfiguration all: "
                     "the tables fabgen owns)", "candidate:config_db.json (the render)"),
            _unified(have_frr, frr, f"device:{SONIC_FRR} (the file bgpd loads)",
                     "candidate:frr.conf (the render + the device's own sections)"),
        ) if x)
        return Step("prepare", changed=owned_have != owned_want or self.frr_changed, diff=diff,
                    detail="local diff: computed by fabgen, not by the device")

    def discard(self) -> Step:
        self.cleanup()
        return Step("discard")

    def _restore_frr(self) -> str:
        return (f"sudo -n cp {self.frr_backup} {SONIC_FRR} && "
                "sudo -n systemctl restart bgp")

    def commit(self, render: Render, confirm_seconds: int) -> Step:
        self._fresh = None
        if self.candidate_db is None:
            self.prepare(render)
        assert self.candidate_db is not None
        self.upload({self.remote: canonical_json(self.candidate_db),
                     self.remote_frr: self.candidate_frr})
        self.sh(f"sudo -n config checkpoint {self.checkpoint}")
        self.checkpointed = True
        # The frr.conf restored on rollback, and the marker the confirm timer races for.
        self.sh(f"mkdir -p .fabgen && sudo -n cp {SONIC_FRR} {self.frr_backup} && "
                f": > {self.marker}")
        fire = (f"sleep {confirm_seconds}; mv {self.marker} .fabgen/expired-{self.run_id} "
                f"2>/dev/null && {{ sudo -n config rollback {self.checkpoint}; "
                f"{self._restore_frr()}; }}")
        _, out = self.sh(f"setsid nohup sh -c {shlex.quote(fire)} >/dev/null 2>&1 </dev/null "
                         "& echo __pid=$!")
        m = re.search(r"__pid=(\d+)", out)
        if m is None:
            raise DeviceError("error", f"could not start the confirm timer: {tail(out)}")
        self.timer_pid = int(m.group(1))
        self.committed = True  # from here on a rollback must restore the checkpoint
        self.sh(f"sudo -n cp {shlex.quote(self.remote_frr)} {SONIC_FRR}", kind="rejected")
        command = "config reload -y" if self.apply == "reload" else "config replace"
        self.sh(f"sudo -n {command} {shlex.quote(self.remote)}", kind="rejected",
                timeout=self.apply_timeout)
        if self.apply == "replace" and self.frr_changed:  # GCU restarts nothing
            self.sh("sudo -n systemctl restart bgp", kind="rejected", timeout=self.apply_timeout)
        return Step("commit", changed=True,
                    detail=f"`config {self.apply}` + frr.conf; fabgen confirm timer "
                           f"{confirm_seconds}s")

    def verify(self, render: Render) -> Step:
        want = self.parse(render.config)
        have = self.running_db()
        differences = _differences(cand.sonic_owned(want, want), cand.sonic_owned(have, want))
        if self.candidate_db is not None:
            kept = {t: r for t, r in self.candidate_db.items() if t not in want}
            differences += _differences(kept, have)
        if differences:
            raise DeviceError("verify", f"{len(differences)} field(s) of the candidate differ "
                              f"in the running config: {'; '.join(differences[:5])}")
        if self.candidate_frr and self.running_frr() != self.candidate_frr:
            raise DeviceError("verify", f"{SONIC_FRR} is not the candidate after the commit")
        # bgpd really loaded it: its running config has the rendered router and neighbours.
        _, frr_running = self.sh('sudo -n vtysh -c "show running-config"')
        wanted: list[str] = []
        for section in cand.cli_sections(render.frr or ""):
            if section[0].startswith("router bgp "):
                wanted += [section[0], *(x.strip() for x in section[1:] if " remote-as " in x)]
        missing = [x for x in wanted if x not in {y.strip() for y in frr_running.splitlines()}]
        if missing:
            raise DeviceError("verify", f"bgpd does not run the rendered frr.conf: "
                              f"{len(missing)} line(s) missing from `show running-config`: "
                              f"{'; '.join(missing[:5])}")
        return Step("verify")

    def _stop_timer(self) -> None:
        if self.timer_pid is not None:
            self.sh(f"kill -- -{self.timer_pid} 2>/dev/null || kill {self.timer_pid} "
                    "2>/dev/null; true", kind=None)
            self.timer_pid = None

    def confirm(self) -> Step:
        rc, _ = self.sh(f"mv {self.marker} .fabgen/confirmed-{self.run_id}", kind=None)
        if rc:
            raise DeviceError("confirm", "the confirm timer fired before confirmation: the "
                              f"device rolled back to checkpoint {self.checkpoint}")
        self._stop_timer()
        self.committed = False
        self.sh("sudo -n config save -y")
        self._tidy()
        return Step("confirm", changed=True, detail="confirmed, `config save -y`")

    def rollback(self) -> Step:
        if self.timer_pid is not None:
            # Take the marker first, so the timer cannot roll back a second time later.
            self.sh(f"mv {self.marker} .fabgen/rolled-back-{self.run_id} 2>/dev/null; true",
                    kind=None)
            self._stop_timer()
        if self.committed and self.checkpointed:
            self.sh(f"sudo -n config rollback {self.checkpoint}")
            self.sh(self._restore_frr(), timeout=self.apply_timeout)
            self.committed = False
            self._tidy()
            return Step("rollback", changed=True,
                        detail=f"`config rollback {self.checkpoint}`, frr.conf restored")
        self._tidy()
        return Step("rollback", detail="nothing was applied")

    def _tidy(self) -> None:
        if self.checkpointed:
            self.sh(f"sudo -n config delete-checkpoint {self.checkpoint}", kind=None)
            self.checkpointed = False
        self.cleanup(also=f".fabgen/*-{self.run_id}")

    def neighbours(self, render: Render) -> list[str]:
        return cand.bgp_neighbours(render.frr or "")

    def bgp_states(self) -> dict[str, str]:
        rc, out = self.sh('sudo -n vtysh -c "show ip bgp summary json"', kind=None)
        if rc:
            raise DeviceError("error", f"vtysh: {tail(out)}")
        try:
            return frr_peer_states(json.loads(out))
        except ValueError:
            return {}


class NvueDriver(LinuxDriver):
    """netmiko `cumulus_linux` to NVUE: upload a startup.yaml built from `nv config show` with
    the render merged in, `nv config replace` (replace), `nv config diff` (the device's diff),
    `nv config apply --confirm Ns -y` then `--confirm-yes` (commit-confirm by the device),
    `nv config save`."""

    platform = "nvue"
    diff_source = "device"
    confirm_by = "device"
    connection_platform = "cumulus_linux"
    filename = "startup.yaml"
    summary = ("replace: upload `nv config show` with the render merged in (fabgen's interfaces, "
               "qos, router bgp, hostname replaced; the rest kept), `nv config replace`; diff by "
               "the device (`nv config diff`); commit-confirm by the device (`nv config apply "
               "--confirm`)")

    def __init__(self, conn: Any, run_id: str, timeout: float,
                 apply_timeout: float | None = None, host: str | None = None) -> None:
        super().__init__(conn, run_id, timeout, apply_timeout, host)
        self.pending = False  # a pending revision exists (after `nv config replace`)

    def running(self) -> str:
        self._fresh = self.sh("nv config show -o yaml")[1]
        return str(self._fresh)

    def build(self, render: Render) -> str:
        try:
            want = yaml.safe_load(render.config)
        except yaml.YAMLError as exc:
            raise DeviceError("config", f"the rendered startup.yaml is not YAML: {exc}") \
                from None
        text = self._take_fresh() or self.running()
        try:
            have = yaml.safe_load(text) or []
        except yaml.YAMLError as exc:
            raise DeviceError("error", f"`nv config show -o yaml` is not YAML: {exc}") from None
        try:
            candidate = cand.nvue_candidate(have, want)
        except ValueError as exc:
            raise DeviceError("config", str(exc)) from None
        lost = cand.lost_management(cand.nvue_management(have, self.host),
                                    cand.nvue_management(candidate, self.host))
        if lost:
            raise _refuse(lost)
        return yaml.safe_dump(candidate, sort_keys=False, default_flow_style=False)

    def _replace(self, candidate: str) -> str:
        self.upload({self.remote: candidate})
        self.sh(f"nv config replace {shlex.quote(self.remote)}", kind="rejected")
        self.pending = True
        return self.sh("nv config diff")[1]

    def _detach(self) -> None:
        if self.pending:
            self.sh("nv config detach")
            self.pending = False

    def prepare(self, render: Render) -> Step:
        diff = self._replace(self.build(render))
        return Step("prepare", changed=bool(diff.strip()), diff=diff)

    def discard(self) -> Step:
        self._detach()
        self.cleanup()
        return Step("discard")

    def commit(self, render: Render, confirm_seconds: int) -> Step:
        self._fresh = None
        self.commit_sent = True
        try:
            self.sh(f"nv config apply --confirm {confirm_seconds}s -y", kind="rejected",
                    timeout=self.apply_timeout)
        except DeviceError:  # NVUE answered with an error: nothing was applied
            self.commit_sent = False
            raise
        self.committed, self.pending = True, False
        return Step("commit", changed=True, detail=f"apply --confirm {confirm_seconds}s")

    def verify(self, render: Render) -> Step:
        # The device's own check: a candidate built again from what is applied now must not
        # differ from it.
        diff = self._replace(self.build(render))
        self._detach()
        if diff.strip():
            raise DeviceError("verify", f"the applied config still differs from the candidate: "
                              f"{tail(diff)}")
        return Step("verify")

    def confirm(self) -> Step:
        self.sh("nv config apply --confirm-yes", kind="confirm")
        self.committed = False
        self.sh("nv config save")
        self.cleanup()
        return Step("confirm", changed=True, detail="confirmed, `nv config save`")

    def rollback(self) -> Step:
        changed = False
        if self.maybe_committed:
            # Only a commit whose apply got no answer may have nothing to refuse: then NVUE's
            # "no pending apply" means it was never applied (or its timer ran out).
            rc, _ = self.sh("nv config apply --confirm-no",
                            kind="error" if self.committed else None)
            changed = rc == 0
            self.committed = self.commit_sent = False
        self._detach()
        self.cleanup()
        return Step("rollback", changed=changed,
                    detail="`nv config apply --confirm-no`" if changed else "candidate detached")

    @staticmethod
    def diff_stat(diff: str) -> tuple[int, int]:
        """Values set and unset by `nv config diff`, which prints NVUE operations as YAML
        (`- set: {...}`, `- unset: {...}`): counted from the parsed documents, not from line
        prefixes (a YAML list item starts with "-" too)."""
        try:
            ops = yaml.safe_load(diff) if diff.strip() else []
        except yaml.YAMLError:
            return Driver.diff_stat(diff)
        if not isinstance(ops, list) or not all(isinstance(op, dict) for op in ops):
            return Driver.diff_stat(diff)
        counts = {"set": 0, "unset": 0}
        for op in ops:
            for kind in counts:
                if op.get(kind) is not None:
                    counts[kind] += _leaves(op[kind])
        return counts["set"], counts["unset"]

    def neighbours(self, render: Render) -> list[str]:
        try:
            return cand.nvue_neighbours(yaml.safe_load(render.config))
        except yaml.YAMLError:
            return []

    def bgp_states(self) -> dict[str, str]:
        rc, out = self.sh("nv show vrf default router bgp neighbor -o json", kind=None)
        if rc:
            raise DeviceError("error", f"nv show: {tail(out)}")
        try:
            data = json.loads(out) if out.strip() else {}
        except ValueError:
            return {}
        if isinstance(data, dict) and isinstance(data.get("neighbor"), dict):
            data = data["neighbor"]
        if not isinstance(data, dict):
            return {}
        return {str(n): str((v or {}).get("state", "")) if isinstance(v, dict) else ""
                for n, v in data.items()}


def _leaves(tree: Any) -> int:
    """Values in an NVUE tree: a scalar, an unset key (null) or an empty object (`10.0.0.1/32:
    {}`) counts one."""
    if isinstance(tree, dict) and tree:
        return sum(_leaves(v) for v in tree.values())
    return 1


DRIVERS: dict[str, type[Driver]] = {"eos": EosDriver, "sonic": SonicDriver, "nvue": NvueDriver}
