"""`fabgen verify`: each switch's saved `show` outputs against the plan: ports, LLDP, the
platform's routing design, BGP sessions, BFD sessions (when the underlay runs BFD), PFC and the
watchdog, as far as each platform's outputs tell (its `saved` files and `findings`).

Each difference is one Finding naming the switch, the port (or BGP neighbour) and what the plan
expects there. Pure functions except `verify_dir`, which reads the saved files. A platform that
saves nothing is checked another way (its `verified_by`), and its switches are listed as
skipped.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fabgen import underlay, user_files
from fabgen.errors import one_line
from fabgen.intent.models import MonitoringSpec
from fabgen.platforms.registry import facts as platform_facts
from fabgen.platforms.registry import outputs as platforms
from fabgen.qos import QosPlan
from fabgen.topology.summary import natural_key
from fabgen.verify.expect import ExpectedSwitch, expected_switches
from fabgen.verify.findings import Finding

__all__ = ["CHECKS", "Finding", "Report", "format_report", "verify_dir", "verify_intent",
           "verify_switch"]

# The largest saved output read (each platform's `saved`: `show` tables, lldpctl and vtysh
# JSON). The biggest, lldpctl's JSON, is a few KB a port, a few MB for a 512-port switch; a
# file over this is not a saved output and is refused unread.
SAVED_MAX_BYTES = 16 * 1024 * 1024
# Check names, in the order findings are printed; `--checks` selects among them. A platform
# checks those its outputs tell (`routing`: how the switch holds its routing config).
CHECKS = ("outputs", "interfaces", "lldp", "routing", "bgp", "bfd", "pfc", "pfc-watchdog")


@dataclass(frozen=True, slots=True)
class Report:
    findings: tuple[Finding, ...]
    checked: tuple[str, ...]  # switches whose outputs were read
    skipped: tuple[str, ...]  # switches of the selection no saved output can check
    # The skipped switches' platforms, for the note saying how they are checked instead.
    platforms: dict[str, str] = field(default_factory=dict, compare=False)

    def as_json(self) -> dict[str, object]:
        return {"findings": [asdict(f) for f in self.findings], "checked": list(self.checked),
                "skipped": list(self.skipped)}


Reader = Callable[[str], str | None]  # file name -> its text, None when absent


def verify_switch(sw: ExpectedSwitch, read: Reader, plan: QosPlan, limits: MonitoringSpec,
                  checks: tuple[str, ...] = CHECKS,
                  bfd: underlay.Bfd | None = None) -> list[Finding]:
    """Every difference between one switch's saved outputs and its plan (`bfd`: the
    underlay's BFD timers, None when the plan runs no BFD)."""
    out: list[Finding] = []
    texts: dict[str, str] = {}
    outputs = platforms.get(sw.platform)
    for f in outputs.saved:
        if f.bfd_only and bfd is None:
            continue
        text = read(f.name)
        if text is None:
            if "outputs" in checks:
                out.append(Finding(sw.name, "", "outputs", f"{f.name} (`{f.command}`)",
                                   "no such file"))
        else:
            texts[f.name] = text
    return out + outputs.findings(sw, texts, plan, limits, checks, bfd)


def verify_dir(switches: tuple[ExpectedSwitch, ...], directory: Path, plan: QosPlan,
               limits: MonitoringSpec, devices: str | None = None,
               checks: tuple[str, ...] = CHECKS, bfd: underlay.Bfd | None = None) -> Report:
    """Check every selected switch whose platform saves outputs against
    `directory/<switch>/`."""
    findings: list[Finding] = []
    checked: list[str] = []
    skipped: list[str] = []
    for sw in switches:
        if devices is not None and not fnmatch.fnmatchcase(sw.name, devices):
            continue
        if not platforms.get(sw.platform).saved:
            skipped.append(sw.name)
            continue
        base = directory / sw.name

        def read(name: str, base: Path = base) -> str | None:
            path = base / name
            if not path.exists():
                return None
            # Bounded, and a FIFO, device or directory at the name is an error, not a hang.
            return user_files.read_text(path, what="a saved switch output",
                                        limit=SAVED_MAX_BYTES)

        try:
            findings += verify_switch(sw, read, plan, limits, checks, bfd)
        except ValueError as exc:
            findings.append(Finding(sw.name, "", "outputs", "readable saved outputs", str(exc)))
        checked.append(sw.name)
    order = {c: i for i, c in enumerate(CHECKS)}
    findings.sort(key=lambda f: (natural_key(f.device), order[f.check], natural_key(f.port)))
    return Report(tuple(findings), tuple(checked), tuple(skipped),
                  {sw.name: sw.platform for sw in switches if sw.name in set(skipped)})


def verify_intent(intent: Path, directory: Path, devices: str | None = None,
                  checks: tuple[str, ...] = CHECKS) -> Report:
    """Load the intent (errors raise FabgenError with file:line:col), plan it and check
    `directory`. A RoCE intent only: InfiniBand fabrics have `fabgen verify-cabling`."""
    from fabgen import qos
    from fabgen.intent.loader import load
    from fabgen.topology.build import build
    from fabgen.topology.index import FabricIndex

    loaded = load(intent)
    if loaded.intent.fabric.transport != "roce":
        raise ValueError(f"{intent}: an InfiniBand fabric; use `fabgen verify-cabling` with "
                         "ibnetdiscover output instead")
    plan = qos.plan(loaded.intent)
    switches = expected_switches(FabricIndex(build(loaded.intent)), plan)
    if devices is not None and not any(fnmatch.fnmatchcase(s.name, devices) for s in switches):
        raise ValueError(f"--devices {devices!r} matches no switch of {loaded.intent.name}")
    return verify_dir(switches, directory, plan, loaded.intent.monitoring, devices, checks,
                      underlay.plan(loaded.intent).bfd)


def format_report(report: Report) -> str:
    lines = [one_line(f.message) for f in report.findings]  # saved outputs are echoed
    switches = len({f.device for f in report.findings})
    if report.findings:
        lines.append(f"{len(report.findings)} mismatch(es) on {switches} of "
                     f"{len(report.checked)} switch(es)")
    else:
        lines.append(f"{len(report.checked)} switch(es) match the plan")
    by_platform: dict[str, int] = {}
    for name in report.skipped:
        platform = report.platforms.get(name, "")
        by_platform[platform] = by_platform.get(platform, 0) + 1
    for platform, count in by_platform.items():
        outputs = platforms.get(platform)
        lines.append(f"note: {count} {platform_facts.get(platform).short} switch(es) not "
                     f"checked here: {outputs.verified_by}")
    return "\n".join(lines) + "\n"

