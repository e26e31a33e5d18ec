"""Nornir orchestration: a dry run over every device, or a canary then batches with confirm.

A commit batch runs in two Nornir runs over the same open connections: first every device
prepares, commits with its confirm timer, verifies and waits for its BGP sessions (the health
check, bounded by health_timeout); then, only if every device of the batch succeeded, each is
confirmed, and otherwise every device of the batch is rolled back and the rollout stops.
Devices of later batches are never connected to. Nornir captures exceptions and marks hosts
failed instead of raising, so each task catches its own errors into the device's report, and
the runner decides from those reports, never from Nornir's failed-host set.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nornir.core import Nornir
from nornir.core.configuration import Config
from nornir.core.inventory import ConnectionOptions, Defaults, Groups, Host, Hosts, Inventory
from nornir.core.plugins.connections import ConnectionPluginRegister
from nornir.core.task import Result, Task
from nornir.plugins.runners import ThreadedRunner

from fabgen.push import hostkeys
from fabgen.push.credentials import Credentials
from fabgen.push.drivers import DRIVERS, Driver, Render, SonicDriver
from fabgen.push.inventory import Device
from fabgen.push.results import DeviceError, DeviceReport, Step


@dataclass(frozen=True, slots=True)
class RunSettings:
    """What the runner needs from PushOptions (resolved: no None left)."""

    run_id: str
    workers: int
    timeout: float
    apply_timeout: float
    confirm_timeout: int
    known_hosts: Path
    accept_new_host_keys: bool
    sonic_apply: str
    ssh_config: Path | None
    health_timeout: float = 60.0  # 0: no BGP health check before confirming
    sonic_change_hwsku: bool = False


@dataclass
class RunContext:
    settings: RunSettings
    devices: dict[str, Device]
    configs: dict[str, Render]  # rendered files per device
    reports: dict[str, DeviceReport]
    drivers: dict[str, Driver] = field(default_factory=dict)


def classify(exc: BaseException) -> DeviceError:
    """A library exception as a per-device error kind with a one-line message."""
    import paramiko
    from napalm.base import exceptions as napalm_exc  # type: ignore[import-untyped]
    from netmiko import exceptions as netmiko_exc

    if isinstance(exc, DeviceError):
        return exc
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    auth = netmiko_exc.NetmikoAuthenticationException | paramiko.AuthenticationException
    if isinstance(exc, auth):
        return DeviceError("auth", f"authentication failed: {first}")
    if isinstance(exc, paramiko.BadHostKeyException):
        return DeviceError("host-key", f"host key mismatch: {first}")
    if isinstance(exc, netmiko_exc.NetmikoTimeoutException):
        if "TCP connection" in str(exc):
            return DeviceError("unreachable", first)
        return DeviceError("timeout", first)
    if isinstance(exc, napalm_exc.ConnectionException):
        return DeviceError("unreachable", first)
    if isinstance(exc, netmiko_exc.ReadTimeout | TimeoutError | socket.timeout):
        return DeviceError("timeout", f"no prompt back in time: {first}")
    if isinstance(exc, napalm_exc.ReplaceConfigException | napalm_exc.MergeConfigException):
        return DeviceError("rejected", first)
    if isinstance(exc, ConnectionError | EOFError | OSError | paramiko.SSHException):
        return DeviceError("unreachable", f"connection lost: {type(exc).__name__}: {first}")
    return DeviceError("error", f"{type(exc).__name__}: {first}")


def _ssh_args(settings: RunSettings) -> dict[str, Any]:
    """netmiko arguments: password only, and host keys from our known_hosts file, strictly."""
    t = settings.timeout
    args: dict[str, Any] = {
        "use_keys": False, "allow_agent": False,
        "ssh_strict": True, "system_host_keys": False,
        "alt_host_keys": True, "alt_key_file": str(settings.known_hosts),
        "conn_timeout": t, "auth_timeout": t, "banner_timeout": t,
    }
    if settings.ssh_config is not None:
        args["ssh_config_file"] = str(settings.ssh_config)
    return args


def build_nornir(devices: Iterable[Device], creds: dict[str, Credentials],
                 settings: RunSettings) -> Nornir:
    """A Nornir built in code (no config files, no nornir.log) with one host per device."""
    ConnectionPluginRegister.auto_register()
    hosts = Hosts()
    for dev in devices:
        assert dev.address is not None
        driver = DRIVERS[dev.platform]
        extras: dict[str, Any]
        if driver.connection == "napalm":
            extras = {"timeout": int(settings.timeout), "optional_args": {
                "transport": "ssh", "port": dev.address.port,
                # napalm's netmiko calls take no per-command timeout: bound them all.
                "read_timeout_override": settings.timeout, **_ssh_args(settings)}}
        else:
            extras = {"timeout": settings.timeout, **_ssh_args(settings)}
        cred = creds[dev.platform]
        hosts[dev.name] = Host(
            name=dev.name, hostname=dev.address.host, port=dev.address.port,
            username=cred.username, password=cred.password,
            platform=driver.connection_platform,
            connection_options={driver.connection: ConnectionOptions(extras=extras)})
    config = Config(logging={"enabled": False})  # type: ignore[arg-type]
    return Nornir(inventory=Inventory(hosts=hosts, groups=Groups(), defaults=Defaults()),
                  config=config, runner=ThreadedRunner(num_workers=settings.workers))


def _step(rep: DeviceReport, name: str, fn: Callable[[], Step]) -> Step:
    """Run one step and record it in the device's report, failed or not."""
    try:
        step = fn()
    except Exception as exc:
        err = classify(exc)
        rep.steps.append(Step(name, failed=True, detail=f"{err.kind}: {err.message}"))
        raise err from None
    rep.steps.append(step)
    return step


def _connect(task: Task, ctx: RunContext) -> Driver:
    s = ctx.settings
    dev = ctx.devices[task.host.name]
    rep = ctx.reports[dev.name]
    assert dev.address is not None

    def hostkey() -> Step:
        done = hostkeys.check(dev.address.host, dev.address.port,  # type: ignore[union-attr]
                              s.known_hosts, s.accept_new_host_keys, s.timeout)
        return Step("host-key", detail=f"host key {done}")

    _step(rep, "host-key", hostkey)
    cls = DRIVERS[dev.platform]

    def login() -> Step:
        conn = task.host.get_connection(cls.connection, task.nornir.config)
        host = dev.address.host  # type: ignore[union-attr]
        if cls is SonicDriver:
            driver: Driver = SonicDriver(conn, s.run_id, s.timeout, s.apply_timeout,
                                         apply=s.sonic_apply, host=host,
                                         change_hwsku=s.sonic_change_hwsku)
        else:
            driver = cls(conn, s.run_id, s.timeout, s.apply_timeout, host=host)
        ctx.drivers[dev.name] = driver
        return Step("connect")

    _step(rep, "connect", login)
    return ctx.drivers[dev.name]


def _record_prepare(rep: DeviceReport, step: Step, driver: Driver) -> None:
    rep.diff, rep.changed = step.diff, step.changed
    rep.diff_added, rep.diff_removed = driver.diff_stat(step.diff)


def _fail(ctx: RunContext, name: str, err: DeviceError) -> None:
    """Record a device failure; a timeout leaves its session out of step (a late answer)."""
    ctx.reports[name].fail(err)
    driver = ctx.drivers.get(name)
    if driver is not None and err.kind == "timeout":
        driver.stalled = True


def dry_run_task(task: Task, ctx: RunContext) -> Result:
    """Connect, load the candidate, take the diff, discard: the device keeps its config."""
    name = task.host.name
    rep, config = ctx.reports[name], ctx.configs[name]
    try:
        driver = _connect(task, ctx)
        rep.before_sha256 = driver.running_sha256()
        _record_prepare(rep, _step(rep, "prepare", lambda: driver.prepare(config)), driver)
        _step(rep, "discard", driver.discard)
        rep.after_sha256 = driver.running_sha256()
        rep.status = "would-change" if rep.changed else "unchanged"
    except DeviceError as exc:
        _fail(ctx, name, exc)
    except Exception as exc:  # a bug or an unforeseen library error: still only this device
        _fail(ctx, name, classify(exc))
    return Result(host=task.host, result=rep.status, failed=rep.failed)


def apply_task(task: Task, ctx: RunContext) -> Result:
    """Phase 1 of a commit batch: prepare, and if there is a diff, commit with a confirm timer,
    verify, and wait for the BGP sessions to the rendered neighbours (unless health_timeout is
    0). Nothing is confirmed here."""
    name = task.host.name
    rep, config, s = ctx.reports[name], ctx.configs[name], ctx.settings
    try:
        driver = _connect(task, ctx)
        rep.before_sha256 = driver.running_sha256()
        _record_prepare(rep, _step(rep, "prepare", lambda: driver.prepare(config)), driver)
        if not rep.changed:
            _step(rep, "discard", driver.discard)
            rep.after_sha256 = rep.before_sha256
            rep.status = "unchanged"
        else:
            if s.health_timeout > 0:
                try:  # only for the health report's hint: what was up before
                    driver.bgp_before = driver.bgp_states()
                except Exception:
                    driver.bgp_before = None
            try:
                _step(rep, "commit", lambda: driver.commit(config, s.confirm_timeout))
            except DeviceError as exc:
                if driver.maybe_committed:  # no answer to the commit itself: say what it means
                    raise DeviceError(exc.kind, f"{exc.message} (the commit may have been "
                                      "applied)") from None
                raise
            _step(rep, "verify", lambda: driver.verify(config))
            if s.health_timeout > 0:
                _step(rep, "health", lambda: driver.health(config, s.health_timeout))
            rep.status = "pending-confirm"
    except DeviceError as exc:
        _fail(ctx, name, exc)
    except Exception as exc:
        _fail(ctx, name, classify(exc))
    return Result(host=task.host, result=rep.status, failed=rep.failed)


def confirm_task(task: Task, ctx: RunContext) -> Result:
    """Phase 2, the batch succeeded: confirm each committed device."""
    name = task.host.name
    rep, driver = ctx.reports[name], ctx.drivers.get(name)
    if driver is None or not driver.committed:
        return Result(host=task.host, result=rep.status, failed=rep.failed)
    try:
        _step(rep, "confirm", driver.confirm)
        rep.after_sha256 = driver.running_sha256()
        rep.status = "committed"
    except DeviceError as exc:
        _fail(ctx, name, exc)
    except Exception as exc:
        _fail(ctx, name, classify(exc))
    return Result(host=task.host, result=rep.status, failed=rep.failed)


def rollback_task(task: Task, ctx: RunContext) -> Result:
    """Phase 2, the batch failed: roll back every device of it that we reached.

    A rollback whose command fails is checked against the device before anything is claimed:
    the running config read back equal to the one before the push means it was rolled back
    (a late or garbled reply, not a failure); otherwise the report says what is known."""
    name = task.host.name
    rep, driver = ctx.reports[name], ctx.drivers.get(name)
    if driver is None:
        return Result(host=task.host, result=rep.status, failed=rep.failed)
    live = driver.maybe_committed
    try:
        if driver.stalled:  # the answer to the failed command may still be on its way
            driver.resync()
        step = _step(rep, "rollback", driver.rollback)
    except Exception as exc:
        err = classify(exc)
        if err.kind == "timeout":
            driver.stalled = True
        if not any(s.name == "rollback" for s in rep.steps):  # resync() failed: none sent
            rep.steps.append(Step("rollback", failed=True, detail=f"{err.kind}: {err.message}; "
                                  "no rollback command was sent"))
        restored, state = _read_back(driver, rep)
        if restored:
            rep.steps.append(Step("rollback-check", changed=True, detail=state))
            rep.rolled_back = True
            if not rep.failed:
                rep.status = "rolled-back"
            return Result(host=task.host, result=rep.status, failed=rep.failed)
        rep.rollback_failed = f"{err.kind}: {err.message}; {state}"
        if live:
            rep.rollback_failed += (f"; its confirm timer ({ctx.settings.confirm_timeout}s, run "
                                    f"by {driver.confirm_by}) reverts it unless confirmed")
        return Result(host=task.host, result=rep.status, failed=True)
    if step.changed or rep.status == "pending-confirm":
        rep.rolled_back = True
        if not rep.failed:
            rep.status = "rolled-back"
    try:
        rep.after_sha256 = driver.running_sha256()
    except Exception:  # the rollback is done; only the after-hash is missing from the audit
        rep.after_sha256 = ""
    return Result(host=task.host, result=rep.status, failed=rep.failed)


def _read_back(driver: Driver, rep: DeviceReport) -> tuple[bool, str]:
    """After a failed rollback command: is the device back to its config before the push?"""
    if driver.silent:
        return False, "no rollback command was sent, nothing can be read back"
    if not rep.before_sha256:
        return False, "its config before the push was never read, so it cannot be compared"
    try:
        if driver.stalled:
            driver.resync()
        now = driver.running_sha256()
    except Exception as exc:
        err = classify(exc)
        return False, f"its running config could not be read back ({err.kind}: {err.message})"
    rep.after_sha256 = now
    if now == rep.before_sha256:
        return True, ("the rollback command's answer failed, but the running config read back "
                      "is the one from before the push: rolled back")
    return False, "the running config read back still differs from the one before the push"


def run_tasks(nr: Nornir, names: list[str], task: Callable[..., Result], ctx: RunContext) -> None:
    """One Nornir run over `names`; results land in ctx.reports (the tasks never raise)."""
    chosen = set(names)
    subset = nr.filter(filter_func=lambda h: h.name in chosen)
    nr.data.reset_failed_hosts()
    subset.run(task=task, ctx=ctx, on_good=True, on_failed=True)


def close(nr: Nornir, names: list[str], ctx: RunContext) -> None:
    """Close the sessions; a device that stopped answering is given one more chance to, then
    abandoned, so closing does not wait for it command after command."""
    for name in names:
        driver = ctx.drivers.get(name)
        if driver is None or not driver.stalled:
            continue
        try:
            if driver.silent:  # asked already: do not wait for it once more
                raise DeviceError("timeout", "silent")
            driver.resync()
        except Exception:
            note = driver.abandon()
            if note:
                ctx.reports[name].notes.append(note)
    chosen = set(names)
    nr.filter(filter_func=lambda h: h.name in chosen).close_connections(
        on_good=True, on_failed=True)
