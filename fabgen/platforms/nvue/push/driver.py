"""Cumulus NVUE: a startup.yaml built from `nv config show`, `nv config replace`, and NVUE's own
diff and commit-confirm (`nv config apply --confirm`)."""

from __future__ import annotations

import json
import shlex
from typing import Any

import yaml

from fabgen.platforms.nvue.push.candidate import nvue_candidate, nvue_management, nvue_neighbours
from fabgen.push import candidate as cand
from fabgen.push.drivers.base import Driver, Render, refuse, tail
from fabgen.push.drivers.linux import LinuxDriver
from fabgen.push.results import DeviceError, Step


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
            candidate = nvue_candidate(have, want)
        except ValueError as exc:
            raise DeviceError("config", str(exc)) from None
        lost = cand.lost_management(nvue_management(have, self.host),
                                    nvue_management(candidate, self.host))
        if lost:
            raise refuse(lost)
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
            return nvue_neighbours(yaml.safe_load(render.config))
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
