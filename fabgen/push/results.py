"""Push results: one shape per step (changed, diff, failed), per device, and for the whole run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

# Why a device failed. `config`: fabgen's own input (no address, no rendered file);
# `rejected`: the device refused the candidate; `verify`: it took it but the result differs;
# `confirm`: the confirm timer ran out first (the device rolled itself back); `refused`: fabgen
# refused the candidate (it would cut the management access off), nothing was applied;
# `health`: applied, but the BGP sessions to the rendered neighbours did not come up in time.
ErrorKind = Literal["unreachable", "auth", "timeout", "host-key", "config", "rejected",
                    "verify", "confirm", "refused", "health", "error"]

# What happened to a device, in the order a rollout moves through them.
Status = Literal[
    "not-attempted",  # a later batch, after the rollout stopped (or a refused rollout)
    "unchanged",  # the device already runs the render
    "would-change",  # dry run: the diff is not empty
    "pending-confirm",  # commit: applied and verified, its batch not decided yet
    "committed",  # commit: applied, verified, confirmed
    "rolled-back",  # commit: applied (or prepared) in a failed batch, then rolled back
    "failed",  # this device failed (see error_kind)
]


class DeviceError(Exception):
    """A per-device failure with its kind; never stops the other devices or the report."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message


@dataclass(frozen=True, slots=True)
class Step:
    """The result of one push step on one device: the one shape every driver method returns."""

    # host-key | connect | prepare | discard | commit | verify | health | confirm | rollback
    name: str
    changed: bool = False  # the device's configuration changed (or would, for prepare)
    diff: str = ""
    failed: bool = False
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "changed": self.changed, "failed": self.failed,
                "detail": self.detail}


@dataclass(slots=True)
class DeviceReport:
    """Everything about one device in one run (mutated only by that device's worker)."""

    name: str
    platform: str
    role: str
    address: str  # host:port, "" when the hosts file has none
    config_path: str  # relative to the render directory
    mode: str  # replace | merge: what the device's config operation really is
    diff_source: str  # device | local: who computed the diff
    batch: str = ""  # "canary", "1", "2", ... ("" in a dry run)
    status: Status = "not-attempted"
    changed: bool = False
    diff: str = ""
    failed: bool = False
    error_kind: ErrorKind | None = None
    error: str = ""
    config_sha256: str = ""  # the rendered file pushed
    # The rendered files pushed with the config, by name (a platform's `extra_paths`), and
    # every registered platform's names: the JSON holds `<name>_sha256` for each, null where
    # the device had none.
    extra_sha256: dict[str, str] = field(default_factory=dict)
    extra_names: tuple[str, ...] = ()
    before_sha256: str = ""  # the device's running config before and after
    after_sha256: str = ""
    rolled_back: bool = False  # fabgen rolled this device back (its batch failed)
    rollback_failed: str = ""  # a rollback that failed too: the device needs a human
    steps: list[Step] = field(default_factory=list)
    # Counted by the driver from the diff as the platform prints it (or its parsed operations).
    diff_added: int = 0
    diff_removed: int = 0
    notes: list[str] = field(default_factory=list)  # what the libraries logged, one line each

    def fail(self, exc: DeviceError) -> None:
        if not self.failed:  # keep the first cause; later errors are consequences
            self.failed, self.error_kind, self.error = True, exc.kind, exc.message
        self.status = "failed"

    def diff_stat(self) -> tuple[int, int]:
        return self.diff_added, self.diff_removed

    def redact(self, mask: Callable[[str], str]) -> None:
        """Mask secrets in every text this report carries, whatever prints it (console, JSON,
        --quiet, the audit log)."""
        self.error, self.diff = mask(self.error), mask(self.diff)
        self.rollback_failed = mask(self.rollback_failed)
        self.notes = [mask(n) for n in self.notes]
        self.steps = [Step(s.name, s.changed, mask(s.diff), s.failed, mask(s.detail))
                      for s in self.steps]

    def to_dict(self) -> dict[str, Any]:
        plus, minus = self.diff_stat()
        return {
            "device": self.name, "platform": self.platform, "role": self.role,
            "address": self.address, "config": self.config_path, "mode": self.mode,
            "diff_source": self.diff_source, "batch": self.batch, "status": self.status,
            "changed": self.changed, "failed": self.failed, "error_kind": self.error_kind,
            "error": self.error, "diff": self.diff, "diff_added": plus, "diff_removed": minus,
            "config_sha256": self.config_sha256,
            **{f"{n}_sha256": self.extra_sha256.get(n) for n in self.extra_names},
            "before_sha256": self.before_sha256,
            "after_sha256": self.after_sha256, "rolled_back": self.rolled_back,
            "rollback_failed": self.rollback_failed, "notes": self.notes,
            "steps": [s.to_dict() for s in self.steps],
        }


@dataclass(slots=True)
class PushReport:
    """The outcome of `fabgen push`: every selected device, in fabric order."""

    run_id: str
    fabric: str
    commit: bool
    devices: list[DeviceReport]
    stopped_after: str = ""  # the batch the rollout stopped at ("" when it ran to the end)
    refused: str = ""  # why a commit refused to start (nothing was touched)
    audit_path: str = ""
    notes: list[str] = field(default_factory=list)  # library log lines about no one device

    @property
    def failed(self) -> list[DeviceReport]:
        return [d for d in self.devices if d.failed]

    def redact(self, mask: Callable[[str], str]) -> None:
        self.refused, self.notes = mask(self.refused), [mask(n) for n in self.notes]
        for dev in self.devices:
            dev.redact(mask)

    @property
    def untouched(self) -> list[DeviceReport]:
        return [d for d in self.devices if d.status == "not-attempted" and not d.failed]

    @property
    def exit_code(self) -> int:
        """0 when every device ended well; 1 when any failed, or the rollout stopped/refused."""
        return 1 if self.failed or self.stopped_after or self.refused else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id, "fabric": self.fabric,
            "action": "commit" if self.commit else "dry-run",
            "stopped_after": self.stopped_after or None, "refused": self.refused or None,
            "untouched": [d.name for d in self.untouched], "audit": self.audit_path,
            "exit_code": self.exit_code, "notes": self.notes,
            "devices": [d.to_dict() for d in self.devices],
        }
