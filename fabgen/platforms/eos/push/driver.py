"""Arista EOS: napalm `eos` over SSH, a configuration session replaced from the running config."""

from __future__ import annotations

import re
import time
from typing import Any

from fabgen.platforms.eos.push.candidate import eos_candidate, eos_management
from fabgen.push import candidate as cand
from fabgen.push.drivers.base import Driver, Render, refuse
from fabgen.push.results import DeviceError, Step

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
        candidate = eos_candidate(running, render.config)
        lost = cand.lost_management(eos_management(running, self.host),
                                    eos_management(candidate, self.host))
        if lost:
            raise refuse(lost)
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
