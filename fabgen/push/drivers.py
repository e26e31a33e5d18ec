"""Per-platform push drivers: what loading, diffing, committing and rolling back really are.

Each driver states its true `mode` (replace or merge), where its diff comes from (`device`:
the switch computed it; `local`: fabgen compared the fetched running config with the render)
and who runs the commit-confirm timer (`device`, or `fabgen` where the platform has none).
Every step returns a `Step` or raises `DeviceError`; nothing is reported as done that was not
checked on the device: napalm over SSH never raises on `% Invalid input`, and netmiko returns
text without an exit status, so each driver checks for itself (see reference/push-testing.md).
"""

from __future__ import annotations

import difflib
import hashlib
import io
import json
import re
import shlex
from typing import Any, ClassVar

from fabgen.push.results import DeviceError, ErrorKind, Step


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def tail(text: str, lines: int = 6) -> str:
    """The last lines of a command's output: where CLIs print their `Error: ...`."""
    kept = [x.rstrip() for x in text.strip().splitlines() if x.strip()]
    return " | ".join(kept[-lines:]) or "(no output)"


class Driver:
    """One device's push session; a new instance per device per run."""

    platform: ClassVar[str]
    mode: ClassVar[str] = "replace"
    diff_source: ClassVar[str]
    confirm_by: ClassVar[str]  # device | fabgen
    connection: ClassVar[str]  # the Nornir connection plugin: napalm | netmiko
    connection_platform: ClassVar[str]  # napalm driver or netmiko device_type
    summary: ClassVar[str]  # one line for the console: what a push to this platform does

    def __init__(self, conn: Any, run_id: str, timeout: float,
                 apply_timeout: float | None = None) -> None:
        self.conn, self.run_id, self.timeout = conn, run_id, timeout
        self.apply_timeout = apply_timeout or timeout  # the command that applies the config
        self.committed = False  # the candidate is live, waiting for confirm()

    def running(self) -> str:
        """The running config as text (hashed into the audit log)."""
        raise NotImplementedError

    def running_sha256(self) -> str:
        return sha256(self.running())

    def prepare(self, config: str) -> Step:
        """Load the candidate (when the platform has one) and compute the diff; change nothing."""
        raise NotImplementedError

    def discard(self) -> Step:
        """Drop the candidate: a dry run, or a device without changes."""
        raise NotImplementedError

    def commit(self, config: str, confirm_seconds: int) -> Step:
        """Make the candidate (`config`) live; it rolls back unless confirmed in time."""
        raise NotImplementedError

    def verify(self, config: str) -> Step:
        """Check on the device that what is live is the render."""
        raise NotImplementedError

    def confirm(self) -> Step:
        raise NotImplementedError

    def rollback(self) -> Step:
        """Undo whatever this session did (a live commit, a loaded candidate, an upload)."""
        raise NotImplementedError


# --- Arista EOS: napalm `eos` over SSH ---------------------------------------------------------

_EOS_VOLATILE = re.compile(r"^! (Command|Time|Startup-config last modified at):")


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


def missing_lines(rendered: str, device: str) -> list[str]:
    """Rendered lines (in their section) that the device's config does not have."""
    present = set(config_paths(device))
    return [" > ".join(p) for p in config_paths(rendered) if p not in present]


class EosDriver(Driver):
    """napalm `eos` over SSH: a configuration session with `rollback clean-config` (replace),
    the session's own diff, and `commit timer` (commit-confirm by the device)."""

    platform = "eos"
    diff_source = "device"
    confirm_by = "device"
    connection = "napalm"
    connection_platform = "eos"
    summary = ("replace: napalm config session + `rollback clean-config`; diff by the device "
               "(`show session-config diffs`); commit-confirm by the device (session commit "
               "timer)")

    def running(self) -> str:
        text = str(self.conn.get_config(retrieve="running")["running"])
        return "\n".join(x for x in text.splitlines() if not _EOS_VOLATILE.match(x))

    def prepare(self, config: str) -> Step:
        self.conn.load_replace_candidate(config=config)
        # Over SSH napalm neither raises on `% Invalid input` nor keeps the message: a rejected
        # line is only visible as a line missing from the session's config.
        candidate = str(self.conn.get_config(retrieve="candidate")["candidate"])
        missing = missing_lines(config, candidate)
        if missing:
            self.conn.discard_config()
            raise DeviceError("rejected", f"the device did not take {len(missing)} line(s) of "
                              f"the render: {'; '.join(missing[:5])}")
        diff = str(self.conn.compare_config())
        return Step("prepare", changed=bool(diff.strip()), diff=diff)

    def discard(self) -> Step:
        self.conn.discard_config()
        return Step("discard")

    def commit(self, config: str, confirm_seconds: int) -> Step:
        self.conn.commit_config(revert_in=confirm_seconds)
        self.committed = True
        return Step("commit", changed=True, detail=f"commit timer {confirm_seconds}s")

    def verify(self, config: str) -> Step:
        missing = missing_lines(config, self.running())
        if missing:
            raise DeviceError("verify", f"{len(missing)} line(s) of the render are not in the "
                              f"running config after commit: {'; '.join(missing[:5])}")
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
        if self.committed:
            # napalm: `configure session X abort` of the pending session, or when the timer has
            # already reverted, `configure replace flash:rollback-0` (startup before the commit).
            self.conn.rollback()
            self.committed = False
            return Step("rollback", changed=True, detail="commit aborted")
        if getattr(self.conn, "config_session", None):
            # Also covers a commit that raised midway: aborting a session with a pending
            # timer reverts it on EOS, and an unconfirmed timer reverts it anyway.
            self.conn.discard_config()
            return Step("rollback", detail="candidate discarded")
        return Step("rollback", detail="nothing to roll back")


# --- SONiC and Cumulus NVUE: netmiko to a Linux shell ------------------------------------------

_RC = re.compile(r"__rc=(\d+)\s*$")


class LinuxDriver(Driver):
    """A netmiko session to a Linux shell: commands with exit status, uploads over SFTP."""

    connection = "netmiko"
    filename: ClassVar[str]

    def __init__(self, conn: Any, run_id: str, timeout: float,
                 apply_timeout: float | None = None) -> None:
        super().__init__(conn, run_id, timeout, apply_timeout)
        # Relative to the login directory: several devices on one host never share a file.
        self.remote = f"fabgen-{run_id}-{self.filename}"
        self.uploaded = False

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

    def upload(self, config: str) -> None:
        import paramiko  # here, so `fabgen.push` imports without the push extra installed

        data = config.encode("utf-8")
        sftp = paramiko.SFTPClient.from_transport(self.conn.remote_conn.get_transport())
        if sftp is None:
            raise DeviceError("error", "the device refused an SFTP session")
        try:
            sftp.putfo(io.BytesIO(data), self.remote)
        finally:
            sftp.close()
        self.uploaded = True
        _, out = self.sh(f"sha256sum {shlex.quote(self.remote)}")
        if hashlib.sha256(data).hexdigest() not in out:
            raise DeviceError("error", f"the uploaded {self.remote} does not match the render")

    def cleanup(self) -> None:
        if self.uploaded:
            self.sh(f"rm -f {shlex.quote(self.remote)}", kind=None)
            self.uploaded = False


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


class SonicDriver(LinuxDriver):
    """netmiko `linux` to SONiC: upload config_db.json, `config checkpoint`, `config reload -y`
    (replace; restarts services) or `config replace` (GCU), read back, `config save -y`.

    SONiC has no commit-confirm. fabgen arms its own timer *on the device* before applying: a
    detached `sleep N; config rollback <checkpoint>` that fires unless confirm() defuses it, so
    a push that cuts fabgen off the device still reverts. Defusing and firing race on one
    atomic rename, so exactly one of them wins.
    """

    platform = "sonic"
    diff_source = "local"
    confirm_by = "fabgen"
    connection_platform = "linux"
    filename = "config_db.json"
    summary = ("replace: upload config_db.json, `config checkpoint`, `config {apply}`; diff "
               "LOCAL (fabgen compares `show runningconfiguration all` with the render; not "
               "the device's own); commit-confirm by fabgen (a timer on the device that runs "
               "`config rollback` unless confirmed)")

    def __init__(self, conn: Any, run_id: str, timeout: float,
                 apply_timeout: float | None = None, apply: str = "reload") -> None:
        super().__init__(conn, run_id, timeout, apply_timeout)
        self.apply = apply
        self.checkpoint = f"fabgen-{run_id}"
        self.marker = f".fabgen/pending-{run_id}"
        self.timer_pid: int | None = None
        self.checkpointed = False

    def running(self) -> str:
        _, out = self.sh("show runningconfiguration all")
        try:
            return canonical_json(json.loads(out))
        except ValueError:
            raise DeviceError("error", "`show runningconfiguration all` did not print JSON: "
                              f"{tail(out)}") from None

    @staticmethod
    def parse(config: str) -> Any:
        try:
            return json.loads(config)
        except ValueError as exc:
            raise DeviceError("config", f"the rendered config_db.json is not JSON: {exc}") \
                from None

    def prepare(self, config: str) -> Step:
        want = canonical_json(self.parse(config))
        have = self.running()
        diff = "\n".join(difflib.unified_diff(
            have.splitlines(), want.splitlines(),
            "device:running (show runningconfiguration all)", "render:config_db.json",
            lineterm=""))
        return Step("prepare", changed=have != want, diff=diff,
                    detail="local diff: computed by fabgen, not by the device")

    def discard(self) -> Step:
        self.cleanup()
        return Step("discard")

    def commit(self, config: str, confirm_seconds: int) -> Step:
        self.upload(config)
        self.sh(f"sudo -n config checkpoint {self.checkpoint}")
        self.checkpointed = True
        self.sh(f"mkdir -p .fabgen && : > {self.marker}")
        fire = (f"sleep {confirm_seconds}; mv {self.marker} .fabgen/expired-{self.run_id} "
                f"2>/dev/null && sudo -n config rollback {self.checkpoint}")
        _, out = self.sh(f"setsid nohup sh -c {shlex.quote(fire)} >/dev/null 2>&1 </dev/null "
                         "& echo __pid=$!")
        m = re.search(r"__pid=(\d+)", out)
        if m is None:
            raise DeviceError("error", f"could not start the confirm timer: {tail(out)}")
        self.timer_pid = int(m.group(1))
        command = "config reload -y" if self.apply == "reload" else "config replace"
        self.committed = True  # from here on a rollback must restore the checkpoint
        self.sh(f"sudo -n {command} {shlex.quote(self.remote)}", kind="rejected",
                timeout=self.apply_timeout)
        return Step("commit", changed=True,
                    detail=f"`config {self.apply}`; fabgen confirm timer {confirm_seconds}s")

    def verify(self, config: str) -> Step:
        want = self.parse(config)
        have = json.loads(self.running())
        differences = _differences(want, have)
        if differences:
            raise DeviceError("verify", f"{len(differences)} field(s) of the render differ in "
                              f"the running config: {'; '.join(differences[:5])}")
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
            self.committed = False
            self._tidy()
            return Step("rollback", changed=True, detail=f"`config rollback {self.checkpoint}`")
        self._tidy()
        return Step("rollback", detail="nothing was applied")

    def _tidy(self) -> None:
        if self.checkpointed:
            self.sh(f"sudo -n config delete-checkpoint {self.checkpoint}", kind=None)
            self.checkpointed = False
        self.sh(f"rm -f .fabgen/*-{self.run_id}", kind=None)
        self.cleanup()


class NvueDriver(LinuxDriver):
    """netmiko `cumulus_linux` to NVUE: upload startup.yaml, `nv config replace` (replace),
    `nv config diff` (the device's diff), `nv config apply --confirm Ns -y` then
    `--confirm-yes` (commit-confirm by the device), `nv config save`."""

    platform = "nvue"
    diff_source = "device"
    confirm_by = "device"
    connection_platform = "cumulus_linux"
    filename = "startup.yaml"
    summary = ("replace: upload startup.yaml, `nv config replace`; diff by the device "
               "(`nv config diff`); commit-confirm by the device (`nv config apply --confirm`)")

    def __init__(self, conn: Any, run_id: str, timeout: float,
                 apply_timeout: float | None = None) -> None:
        super().__init__(conn, run_id, timeout, apply_timeout)
        self.pending = False  # a pending revision exists (after `nv config replace`)

    def running(self) -> str:
        return self.sh("nv config show -o yaml")[1]

    def _replace(self, config: str) -> str:
        if not self.uploaded:
            self.upload(config)
        self.sh(f"nv config replace {shlex.quote(self.remote)}", kind="rejected")
        self.pending = True
        return self.sh("nv config diff")[1]

    def _detach(self) -> None:
        if self.pending:
            self.sh("nv config detach")
            self.pending = False

    def prepare(self, config: str) -> Step:
        diff = self._replace(config)
        return Step("prepare", changed=bool(diff.strip()), diff=diff)

    def discard(self) -> Step:
        self._detach()
        self.cleanup()
        return Step("discard")

    def commit(self, config: str, confirm_seconds: int) -> Step:
        self.sh(f"nv config apply --confirm {confirm_seconds}s -y", kind="rejected",
                timeout=self.apply_timeout)
        self.committed, self.pending = True, False
        return Step("commit", changed=True, detail=f"apply --confirm {confirm_seconds}s")

    def verify(self, config: str) -> Step:
        # The device's own check: the render again as a new pending revision must not differ
        # from what is applied now.
        diff = self._replace(config)
        self._detach()
        if diff.strip():
            raise DeviceError("verify", f"the applied config still differs from the render: "
                              f"{tail(diff)}")
        return Step("verify")

    def confirm(self) -> Step:
        self.sh("nv config apply --confirm-yes", kind="confirm")
        self.committed = False
        self.sh("nv config save")
        self.cleanup()
        return Step("confirm", changed=True, detail="confirmed, `nv config save`")

    def rollback(self) -> Step:
        self._detach()
        changed = False
        if self.committed:
            self.sh("nv config apply --confirm-no")
            self.committed, changed = False, True
        self.cleanup()
        return Step("rollback", changed=changed,
                    detail="`nv config apply --confirm-no`" if changed else "candidate detached")


DRIVERS: dict[str, type[Driver]] = {"eos": EosDriver, "sonic": SonicDriver, "nvue": NvueDriver}
