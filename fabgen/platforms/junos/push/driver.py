"""Junos OS Evolved push: napalm's `junos` driver (PyEZ over NETCONF), `commit confirmed`.

What each step sends (napalm 5.2 napalm/junos/junos.py, junos-eznc 2.8 jnpr/junos/utils/
config.py), all over one NETCONF session:

- prepare: the running configuration (`<get-configuration database="committed"
  format="text">`), the candidate built from it (candidate.build: fabgen's statements replaced,
  the rest carried over) checked against the management guard, then `load_replace_candidate`
  (`<lock-configuration>`, `<load-configuration action="override" format="text">`), the
  device's own candidate read back (`database="candidate"`) and checked to hold every
  statement, and the device's diff (`<get-configuration compare="rollback" rollback="0"
  format="text">`, what `show | compare` prints).
- discard (a dry run): `<load-configuration rollback="0">` and `<unlock-configuration>`.
- commit: refused while another commit confirmed is pending (`<get-commit-revision-information>`
  detail and `<get-system-uptime-information>`), then `<commit-configuration><confirmed/>
  <confirm-timeout>M</confirm-timeout>`: the device rolls back by itself unless confirmed
  within M whole minutes (napalm takes seconds in multiples of 60; fabgen rounds up).
- confirm: a plain `<commit-configuration/>`.
- rollback: `<load-configuration rollback="1">` and a commit (napalm `rollback()`), which
  restores the previous configuration and ends a pending confirm; before a commit, the
  candidate is discarded.
"""

from __future__ import annotations

import math
from typing import Any

from fabgen.platforms.junos import facts
from fabgen.platforms.junos.push import candidate as cand
from fabgen.push.drivers.base import Driver, Render, refuse
from fabgen.push.results import DeviceError, Step

__all__ = ["JunosDriver", "confirm_minutes", "missing_statements"]


def confirm_minutes(seconds: int) -> int:
    """Junos confirms in whole minutes (`commit confirmed 1..65535`): round up, at least 1."""
    return max(1, math.ceil(seconds / 60))


def missing_statements(wanted: str, device: str) -> list[str]:
    """Statements of `wanted` the device's configuration does not hold, as `set`-style paths
    (compared flattened, so Junos's own display of the same statements matches)."""
    have = set(cand.flatten(cand.parse(device)))
    return [" ".join(p) for p in cand.flatten(cand.parse(wanted)) if p not in have]


def _text(element: Any) -> str:
    return "".join(element.itertext()) if element is not None else ""


class JunosDriver(Driver):
    """napalm `junos`: `load override` of a candidate built from the running configuration,
    the device's diff, `commit confirmed` by the device, then `commit`."""

    platform = facts.PLATFORM
    diff_source = "device"
    confirm_by = "device"
    connection = "napalm"
    connection_platform = "junos"
    summary = ("replace: napalm `load override` of the running configuration with the "
               "statements fabgen owns replaced by the render; diff by the device (`show | "
               "compare`); commit-confirm by the device (`commit confirmed <minutes>`)")

    def __init__(self, conn: Any, run_id: str, timeout: float,
                 apply_timeout: float | None = None, host: str | None = None) -> None:
        super().__init__(conn, run_id, timeout, apply_timeout, host)
        self.candidate = ""

    def running(self) -> str:
        self._fresh = str(self.conn.get_config(retrieve="running")["running"])
        return str(self._fresh)

    def build(self, render: Render) -> str:
        running = self._take_fresh() or self.running()
        candidate = cand.build(running, render.config, facts.OWNED)
        before, after = cand.management(running), cand.management(candidate)
        # Any difference counts: a statement removed, changed or added (a `disable` merged
        # in) under the management interface, the management instance or `system`.
        lost = sorted(" ".join(p) for p in before ^ after)
        if lost:
            raise refuse(lost)
        self.candidate = candidate
        return candidate

    def prepare(self, render: Render) -> Step:
        candidate = self.build(render)
        try:
            self.conn.load_replace_candidate(config=candidate)
        except Exception as exc:  # napalm ReplaceConfigException: the device refused a line
            raise DeviceError("rejected", f"the device refused the candidate: {exc}") from None
        loaded = str(self.conn.get_config(retrieve="candidate")["candidate"])
        missing = missing_statements(candidate, loaded)
        if missing:
            self.conn.discard_config()
            raise DeviceError("rejected", f"the device did not take {len(missing)} statement(s)"
                              f" of the candidate: {'; '.join(missing[:5])}")
        diff = str(self.conn.compare_config())
        return Step("prepare", changed=bool(diff.strip()), diff=diff)

    def discard(self) -> Step:
        self.conn.discard_config()
        return Step("discard")

    def resync(self) -> None:
        """NETCONF frames every answer: a late one cannot be read as the next command's."""
        self.stalled = self.silent = False

    def commit(self, render: Render, confirm_seconds: int) -> Step:
        self._fresh = None
        if self.conn.has_pending_commit():
            raise DeviceError("error", "another commit confirmed is pending on the device (a "
                              "push or an operator waiting to confirm): not committing")
        minutes = confirm_minutes(confirm_seconds)
        self.commit_sent = True
        self.conn.commit_config(message=f"fabgen {self.run_id}", revert_in=minutes * 60)
        self.committed = True
        return Step("commit", changed=True, detail=f"commit confirmed {minutes} min")

    def verify(self, render: Render) -> Step:
        missing = missing_statements(self.candidate or render.config, self.running())
        if missing:
            raise DeviceError("verify", f"{len(missing)} statement(s) of the candidate are not "
                              f"in the running configuration: {'; '.join(missing[:5])}")
        return Step("verify")

    def confirm(self) -> Step:
        try:
            self.conn.confirm_commit()
        except Exception as exc:
            raise DeviceError("confirm", f"cannot confirm the commit: {exc}") from None
        self.committed = self.commit_sent = False
        return Step("confirm", changed=True, detail="confirmed (`commit`)")

    def rollback(self) -> Step:
        if self.maybe_committed:
            self.conn.rollback()  # rollback 1 + commit: the previous configuration is live
            self.committed = self.commit_sent = False
            return Step("rollback", changed=True, detail="rollback 1 committed")
        self.conn.discard_config()
        return Step("rollback", detail="candidate discarded")

    def neighbours(self, render: Render) -> list[str]:
        return cand.bgp_neighbours(render.config)

    def bgp_states(self) -> dict[str, str]:
        """`<get-bgp-summary-information/>` (`show bgp summary`): peer-state by address."""
        reply: Any = self.conn.device.rpc.get_bgp_summary_information()  # an lxml element
        out: dict[str, str] = {}
        for peer in reply.iter():
            if str(peer.tag).rsplit("}", 1)[-1] != "bgp-peer":
                continue
            fields = {str(c.tag).rsplit("}", 1)[-1]: _text(c).strip() for c in peer}
            address = fields.get("peer-address", "").split("+")[0]
            if address:
                out[address] = fields.get("peer-state", "")
        return out
