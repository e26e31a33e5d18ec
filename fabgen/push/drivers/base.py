"""What every push driver is: one device's session, its steps, the health check after a commit."""

from __future__ import annotations

import difflib
import hashlib
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from fabgen.push.results import DeviceError, Step


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def tail(text: str, lines: int = 6) -> str:
    """The last lines of a command's output: where CLIs print their `Error: ...`."""
    kept = [x.rstrip() for x in text.strip().splitlines() if x.strip()]
    return " | ".join(kept[-lines:]) or "(no output)"


@dataclass(frozen=True, slots=True)
class Render:
    """What fabgen rendered for one device: its config file, and the files its platform pushes
    with it, by name (its push face's `extra_paths`)."""

    config: str
    extras: Mapping[str, str] = field(default_factory=dict)


def refuse(lost: list[str]) -> DeviceError:
    return DeviceError("refused", "the candidate would remove or change the management access "
                       f"this session depends on ({'; '.join(lost[:5])}): refused, nothing "
                       "was applied; the render must not contain these")


def unified(old: str, new: str, old_label: str, new_label: str) -> str:
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
