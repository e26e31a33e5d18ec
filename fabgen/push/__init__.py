"""`fabgen push`: send rendered switch configs to the devices, dry run by default.

    report = push.run(PushOptions(intent=..., hosts=...), print)
    sys.exit(report.exit_code)

A candidate is never the render alone: it is the device's running config with the parts
fabgen owns replaced by the render (candidate.py), so management, users, AAA, NTP... stay, and a
candidate that would still remove the management access is refused. A dry run connects, builds
and loads each candidate, prints the diff (the device's own where the platform has one, a
clearly labelled local one for SONiC) and changes nothing. `commit=True` pushes a canary set,
then topology-aware batches (batches.py), each under a confirm timer and, before confirming, a
BGP health check; it stops at the first failed batch and rolls that batch back; devices of
later batches are listed as not touched. Failures are per device (unreachable, auth, timeout,
host key, rejected, refused, verify, health) and never stop the report.
"""

from __future__ import annotations

import getpass
import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from fabgen import user_files
from fabgen.errors import FabgenError
from fabgen.push.audit import AuditLog, default_path
from fabgen.push.batches import plan
from fabgen.push.credentials import Credentials, Redactor, resolve
from fabgen.push.drivers import DRIVERS, Render
from fabgen.push.inventory import (
    check_render,
    devices_for,
    load_hosts,
    read_rendered,
    select,
)
from fabgen.push.results import DeviceError, DeviceReport, PushReport
from fabgen.user_files import MiB

if TYPE_CHECKING:
    from nornir.core import Nornir

    from fabgen.push.liblog import LibraryLog
    from fabgen.push.runner import RunContext

__all__ = ["Credentials", "DeviceReport", "PushOptions", "PushReport", "run"]

ConsolePrint = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class PushOptions:
    """Everything `fabgen push` takes; the defaults are the CLI's."""

    intent: Path
    hosts: Path  # YAML: switch name -> host[:port]
    render_dir: Path | None = None  # default out/<intent name>, as `fabgen render`
    commit: bool = False  # False: dry run
    devices: str | None = None  # glob(s) on switch names, comma-separated
    roles: tuple[str, ...] = ()
    rails: tuple[int, ...] = ()
    workers: int = 8  # devices worked on at once
    timeout: float = 60.0  # seconds: connecting, logging in, each command
    apply_timeout: float = 300.0  # seconds: the command that applies (`config reload`, ...)
    canary: str | None = None  # glob(s); default: the first selected leaf
    batch_size: int = 4
    # At most max(1, floor(n * this)) of the n switches of one failure domain (a scalable
    # unit's leaves, a pod's spines, a core group) in one batch; roles never mixed.
    max_tier_fraction: float = 0.25
    confirm_timeout: int = 600  # seconds before an unconfirmed commit rolls back
    # Seconds to wait, after a commit and before confirming, for the BGP sessions to the
    # rendered neighbours to be Established (else the batch rolls back); 0: no check.
    health_timeout: float = 60.0
    known_hosts: Path | None = None  # default ~/.ssh/known_hosts
    accept_new_host_keys: bool = False
    audit: Path | None = None  # default <render dir>.push-audit.jsonl beside the render dir
    sonic_apply: Literal["reload", "replace"] = "reload"
    # Push a render whose DEVICE_METADATA hwsku differs from the switch's (refused otherwise).
    sonic_change_hwsku: bool = False
    username: str | None = None  # overrides FABGEN_USERNAME
    ssh_config: Path | None = None  # an OpenSSH client config (ProxyJump...); none by default
    show_diff: bool = True
    strict: bool = False  # intent warnings are errors
    debug: bool = False  # the libraries' log records in full on stderr (else one-line notes)

    def check(self) -> None:
        problems = []
        if self.workers < 1:
            problems.append("--workers must be at least 1")
        if self.batch_size < 1:
            problems.append("--batch-size must be at least 1")
        if self.timeout <= 0 or self.apply_timeout <= 0:
            problems.append("--timeout and --apply-timeout must be positive")
        if not 10 <= self.confirm_timeout < 86400:
            problems.append("--confirm-timeout must be between 10 seconds and 24 hours")
        if not 0 < self.max_tier_fraction <= 1:
            problems.append("--max-tier-fraction must be above 0 and at most 1")
        if self.health_timeout < 0:
            problems.append("--health-timeout must be 0 (no check) or positive")
        elif self.health_timeout >= self.confirm_timeout:
            problems.append("--health-timeout must be shorter than --confirm-timeout (the "
                            "confirm timer would revert the commit during the health check)")
        if self.sonic_apply not in ("reload", "replace"):
            problems.append("--sonic-apply must be reload or replace")
        if self.sonic_change_hwsku and self.sonic_apply != "reload":
            problems.append("--sonic-change-hwsku needs --sonic-apply reload: the containers "
                            "read the SKU's files when they start, and `config replace` "
                            "restarts none")
        if problems:
            raise FabgenError.single("push: " + "; ".join(problems))


def _new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def _status_line(rep: DeviceReport) -> str:
    plus, minus = rep.diff_stat()
    stat = f" (+{plus} -{minus})" if rep.changed else ""
    if rep.failed:
        text = f"{rep.name}: FAILED ({rep.error_kind}): {rep.error}"
        if rep.rolled_back:
            text += "; rolled back"
    else:
        text = {"unchanged": f"{rep.name}: unchanged",
                "would-change": f"{rep.name}: would change{stat}",
                "committed": f"{rep.name}: committed{stat}",
                "rolled-back": f"{rep.name}: rolled back{stat} (its batch failed)",
                "pending-confirm": f"{rep.name}: applied, not confirmed",
                "not-attempted": f"{rep.name}: not touched"}[rep.status]
    if rep.rollback_failed:
        text += f"; ROLLBACK FAILED ({rep.rollback_failed}): check this device by hand"
    return text


def _show(rep: DeviceReport, say: ConsolePrint, show_diff: bool, indent: str = "") -> None:
    if show_diff and rep.changed and rep.diff.strip():
        source = ("LOCAL diff: fabgen's comparison of the parts it owns of the fetched running "
                  "config (and config files) with the render, not the device's own"
                  if rep.diff_source == "local"
                  else "diff by the device")
        say(f"{indent}--- {rep.name} ({rep.platform} at {rep.address}, {rep.mode}; {source})")
        for line in rep.diff.splitlines():
            say(f"{indent}{line}")
    say(indent + _status_line(rep))
    for note in rep.notes:
        say(f"{indent}  note: {note}")


def run(options: PushOptions, console_print: ConsolePrint,
        credentials: dict[str, Credentials] | None = None,
        progress: Callable[[int, int], None] | None = None) -> PushReport:
    """Run `fabgen push`; return the report (its `exit_code` is the command's).

    Raises FabgenError for problems with the input (intent, hosts file, filters, credentials)
    before any device is contacted. Device failures never raise: they are in the report, and
    what nornir/napalm/netmiko/paramiko log becomes one-line notes in it (liblog.py), never a
    traceback on stderr unless `options.debug`. Every text of the report is masked.
    """
    from fabgen.push import liblog

    with liblog.captured(options.debug) as libs:
        return _run(options, console_print, credentials, progress, libs)


def _run(options: PushOptions, console_print: ConsolePrint,
         credentials: dict[str, Credentials] | None,
         progress: Callable[[int, int], None] | None, libs: LibraryLog) -> PushReport:
    from fabgen.intent import load
    from fabgen.topology.build import build

    try:
        from fabgen.push import runner
    except ImportError as exc:  # napalm/netmiko/nornir live in the optional `push` extra
        # pipx: inject into fabgen's own venv installs the extra's dependencies beside the
        # installed fabgen, a wheel or a checkout's included (checked with pipx 1.18.4).
        missing = (exc.name or "its dependencies").split(".")[0]  # the package, not a module
        raise FabgenError.single(f"push needs {missing}: install "
                                 "fabgen with the push extra: pip install 'fabgen[push]', or "
                                 "for a pipx install: pipx inject fabgen 'fabgen[push]'") \
            from None

    options.check()
    loaded = load(options.intent, strict=options.strict)
    fabric = build(loaded.intent)
    render_dir = options.render_dir or Path("out") / loaded.intent.name
    switches = select(fabric, options.devices, options.roles, options.rails)
    hosts = load_hosts(options.hosts, fabric)
    known_hosts = options.known_hosts or Path.home() / ".ssh" / "known_hosts"
    audit_path = options.audit or default_path(render_dir)
    # Files handed to paramiko/netmiko by name or appended to: a FIFO there would block push
    # (after some devices were changed, for the audit log), so refuse one before anything.
    # paramiko reads the first two whole (known_hosts once per device): a known_hosts line is
    # at most about 750 bytes (an RSA-4096 key), so 64 MiB is some 90,000 hosts.
    for path, what, limit in ((known_hosts, "an OpenSSH known_hosts file", 64 * MiB),
                              (options.ssh_config, "an OpenSSH client config", 16 * MiB),
                              (audit_path, "push's audit log (JSON lines)", None)):
        if path is not None:
            user_files.require_file(path, what=what, limit=limit)
    devices = devices_for(switches, hosts)
    reachable = [d for d in devices if d.address is not None]
    creds = credentials if credentials is not None else resolve(
        {d.platform for d in reachable}, options.username)
    redact = Redactor(c.password for c in creds.values())

    def say(text: str) -> None:
        console_print(redact(text))

    run_id = _new_run_id()
    audit = AuditLog(audit_path, redact, run_id)
    report = PushReport(run_id, fabric.name, options.commit, [], audit_path=str(audit_path))

    configs: dict[str, Render] = {}
    for dev in devices:
        driver = DRIVERS[dev.platform]
        rep = DeviceReport(dev.name, dev.platform, dev.switch.role,
                           str(dev.address) if dev.address else "", dev.config_path,
                           driver.mode, driver.diff_source)
        report.devices.append(rep)
        if dev.address is None:
            rep.fail(DeviceError("config", f"no address for {dev.name} in {options.hosts}"))
            continue
        texts: dict[str, str] = {}
        for key, rel in {"config": dev.config_path, **dev.extra_paths}.items():
            path = render_dir / rel
            if not path.exists():
                rep.fail(DeviceError("config", f"no rendered config {path}: "
                                     "No such file or directory"))
                continue
            try:
                texts[key] = read_rendered(path)
            except FabgenError as exc:
                rep.fail(DeviceError("config", str(exc)))
        if rep.failed:
            continue
        configs[dev.name] = Render(texts["config"], golden=texts.get("golden"))
        rep.config_sha256 = hashlib.sha256(texts["config"].encode("utf-8")).hexdigest()
        if "golden" in texts:
            rep.golden_sha256 = hashlib.sha256(texts["golden"].encode("utf-8")).hexdigest()
    problems = check_render(render_dir, loaded.source.sha256,
                            [p for d in devices for p in (d.config_path, *d.extra_paths.values())])
    ready = [d for d in devices if d.name in configs]
    # The rollout plan before any device is contacted: a bad --canary is an input error. (A
    # commit goes ahead only when every selected device is ready, so this is the plan.)
    batches = plan(devices, fabric.switches, options.canary, options.batch_size,
                   options.max_tier_fraction) if options.commit else []

    action = "COMMIT" if options.commit else "DRY RUN"
    say(f"fabgen push {fabric.name}: {action} of {len(devices)} device(s)"
        + ("" if options.commit else "; nothing will be changed (--commit applies)"))
    say(f"  render {render_dir}, hosts {options.hosts}, audit {audit_path}, run {run_id}")
    for platform in sorted({d.platform for d in devices}):
        apply = "reload -y" if options.sonic_apply == "reload" else "replace"
        summary = DRIVERS[platform].summary.replace("{apply}", apply)
        say(f"  {platform}: {summary}")
    for problem in problems:
        say(f"  {'error' if options.commit else 'warning'}: {problem}")
    audit.write("run", action="commit" if options.commit else "dry-run", fabric=fabric.name,
                intent=str(options.intent), intent_sha256=loaded.source.sha256,
                render_dir=str(render_dir), hosts_file=str(options.hosts),
                operator=getpass.getuser(), devices=[d.name for d in devices],
                confirm_timeout=options.confirm_timeout if options.commit else None,
                health_timeout=options.health_timeout if options.commit else None,
                batches=[[label, names] for label, names in batches], render_problems=problems)

    settings = runner.RunSettings(
        run_id=run_id, workers=options.workers, timeout=options.timeout,
        apply_timeout=options.apply_timeout, confirm_timeout=options.confirm_timeout,
        known_hosts=known_hosts, accept_new_host_keys=options.accept_new_host_keys,
        sonic_apply=options.sonic_apply, ssh_config=options.ssh_config,
        health_timeout=options.health_timeout, sonic_change_hwsku=options.sonic_change_hwsku)
    reports = {r.name: r for r in report.devices}
    ctx = runner.RunContext(settings, {d.name: d for d in devices}, configs, reports)

    if options.commit and (problems or len(ready) < len(devices)):
        bad = [r.name for r in report.devices if r.failed]
        report.refused = "; ".join(problems + ([f"not pushable: {', '.join(bad)}"] if bad else []))
        say(f"refusing to commit, nothing was touched: {report.refused}")
    elif ready:
        nr = runner.build_nornir(ready, creds, settings)
        if not options.commit:
            names = [d.name for d in ready]
            # In chunks of a few rounds of workers, so a progress bar moves on a large fabric.
            chunk = max(1, options.workers * 4)
            for start in range(0, len(names), chunk):
                part = names[start:start + chunk]
                try:
                    runner.run_tasks(nr, part, runner.dry_run_task, ctx)
                finally:
                    runner.close(nr, part, ctx)
                    _take_notes(libs, part, reports)
                if progress:
                    progress(start + len(part), len(names))
        else:
            _rollout(nr, batches, options, ctx, report, say, audit, libs, progress)

    if not options.commit or report.refused:
        for rep in report.devices:
            _show(rep, say, options.show_diff)
    _take_notes(libs, list(reports), reports)
    report.notes = libs.take_general()
    for note in report.notes:
        say(f"note: {note}")
    for rep in report.devices:
        if not (options.commit and rep.batch):  # commit batches were logged as they ended
            audit.write("device", **_audit_fields(rep))
    counts: dict[str, int] = {}
    for rep in report.devices:
        key = "failed" if rep.failed else rep.status
        counts[key] = counts.get(key, 0) + 1
    order = ["committed", "would-change", "unchanged", "pending-confirm", "rolled-back", "failed",
             "not-attempted"]
    say(f"{'commit' if options.commit else 'dry run'}: "
        + ", ".join(f"{counts[k]} {k.replace('not-attempted', 'not touched')}"
                    for k in order if counts.get(k)))
    audit.write("end", exit_code=report.exit_code, stopped_after=report.stopped_after or None,
                refused=report.refused or None, counts=counts,
                untouched=[r.name for r in report.untouched], notes=report.notes)
    report.redact(redact)  # --json, --quiet and any caller get masked texts, as the console
    return report


def _take_notes(libs: LibraryLog, names: list[str], reports: dict[str, DeviceReport]) -> None:
    for name in names:
        reports[name].notes += libs.take(name)


def _audit_fields(rep: DeviceReport) -> dict[str, object]:
    data = rep.to_dict()
    data.pop("diff")  # configs and diffs stay out of the log: hashes and counts say enough
    data.pop("steps")
    data["steps"] = [f"{s.name}{'!' if s.failed else ''}" for s in rep.steps]
    return data


def _rollout(nr: Nornir, batches: list[tuple[str, list[str]]], options: PushOptions,
             ctx: RunContext, report: PushReport, say: ConsolePrint, audit: AuditLog,
             libs: LibraryLog, progress: Callable[[int, int], None] | None = None) -> None:
    """Canary, then batches; stop at the first batch with a failure, rolled back whole."""
    from fabgen.push import runner

    reports = {r.name: r for r in report.devices}
    total = len(batches) - 1
    devices_total, done = sum(len(names) for _, names in batches), 0
    for label, names in batches:
        title = "canary" if label == "canary" else f"batch {label}/{total}"
        say(f"{title}: {', '.join(names)}")
        for name in names:
            reports[name].batch = label
        try:
            runner.run_tasks(nr, names, runner.apply_task, ctx)
            failed = [n for n in names if reports[n].failed]
            if failed:
                runner.run_tasks(nr, names, runner.rollback_task, ctx)
            else:
                runner.run_tasks(nr, names, runner.confirm_task, ctx)
                failed = [n for n in names if reports[n].failed]
        finally:
            runner.close(nr, names, ctx)
            _take_notes(libs, names, reports)
        for name in names:
            _show(reports[name], say, options.show_diff, indent="  ")
            audit.write("device", **_audit_fields(reports[name]))
        done += len(names)
        if progress:
            progress(done, devices_total)
        if failed:
            report.stopped_after = title
            rest = [r.name for r in report.devices if not r.batch and not r.failed]
            say(f"stopped after {title} ({', '.join(failed)} failed)"
                + (f"; not touched: {', '.join(rest)}" if rest else ""))
            return
