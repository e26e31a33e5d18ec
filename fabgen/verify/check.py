"""`fabgen verify`: the saved `show` outputs of SONiC and NVUE switches against the plan:
ports, LLDP, SONiC's routing design (BGP from CONFIG_DB through frrcfgd, kept by the golden
file), BGP sessions, BFD sessions (when the underlay runs BFD), PFC and the watchdog.

Each difference is one Finding naming the switch, the port (or BGP neighbour) and what the plan
expects there. Pure functions except `verify_dir`, which reads the saved files.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from fabgen import underlay, user_files
from fabgen.catalog import sonic_skus
from fabgen.errors import one_line
from fabgen.intent.models import MonitoringSpec
from fabgen.qos import QosPlan
from fabgen.topology.summary import natural_key
from fabgen.verify import saved
from fabgen.verify.expect import ExpectedSwitch, expected_switches

__all__ = ["CHECKS", "Finding", "Report", "format_report", "verify_dir", "verify_intent",
           "verify_switch"]

# Check names, in the order findings are printed; `--checks` selects among them.
# The largest saved output read (saved.COMMANDS: `show` tables, lldpctl and vtysh JSON). The
# biggest, lldpctl's JSON, is a few KB a port, a few MB for a 512-port switch; a file over
# this is not a saved output and is refused unread.
SAVED_MAX_BYTES = 16 * 1024 * 1024
CHECKS = ("outputs", "interfaces", "lldp", "routing", "bgp", "bfd", "pfc", "pfc-watchdog")


@dataclass(frozen=True, slots=True)
class Finding:
    device: str
    port: str  # interface, BGP neighbour address or "" for the whole switch
    check: str
    expected: str
    actual: str

    @property
    def message(self) -> str:
        where = f"{self.device} {self.port}" if self.port else self.device
        return f"{where}: {self.check}: expected {self.expected}, got {self.actual}"


@dataclass(frozen=True, slots=True)
class Report:
    findings: tuple[Finding, ...]
    checked: tuple[str, ...]  # switches whose outputs were read
    skipped: tuple[str, ...]  # switches of the selection no saved output can check (EOS)

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
    for f in saved.commands(sw.platform, bfd is not None):
        text = read(f.name)
        if text is None:
            if "outputs" in checks:
                out.append(Finding(sw.name, "", "outputs", f"{f.name} (`{f.command}`)",
                                   "no such file"))
        else:
            texts[f.name] = text
    if sw.platform == "sonic":
        out += _sonic(sw, texts, plan, limits, checks)
    else:
        out += _nvue(sw, texts, limits, checks)
    if bfd is not None and "bfd" in checks and "bfd.json" in texts:
        out += _bfd(sw, saved.bfd_peers(texts["bfd.json"]), bfd)
    return out


def _speed(gbps: int) -> str:
    return f"{gbps}G"


def _interfaces(sw: ExpectedSwitch, state: dict[str, dict[str, str]]) -> list[Finding]:
    out = []
    for p in sw.ports:
        row = state.get(p.name)
        if row is None:
            out.append(Finding(sw.name, p.name, "interfaces", f"a port to {p.peer}",
                               "not in the output"))
            continue
        if row["oper"].lower() != "up":
            out.append(Finding(sw.name, p.name, "interfaces", f"up (cabled to {p.peer} "
                               f"{p.peer_port})", row["oper"] or "no state"))
        if row["speed"].upper() != _speed(p.speed_gbps):
            out.append(Finding(sw.name, p.name, "interfaces", f"speed {_speed(p.speed_gbps)}",
                               row["speed"] or "none"))
        if row["mtu"] != str(sw.mtu):
            out.append(Finding(sw.name, p.name, "interfaces", f"MTU {sw.mtu}",
                               row["mtu"] or "none"))
    return out


def _lldp(sw: ExpectedSwitch, neighbors: dict[str, list[tuple[str, str]]],
          limits: MonitoringSpec) -> list[Finding]:
    out = []
    for p in sw.ports:
        if not (p.peer_is_switch or limits.host_lldp):
            continue
        want = f"{p.peer} {'|'.join(p.peer_port_ids)}"
        seen = neighbors.get(p.name, [])
        if not seen:
            out.append(Finding(sw.name, p.name, "lldp", want, "no LLDP neighbour"))
            continue
        if not any((name == p.peer or name.startswith(p.peer + ".")) and port in p.peer_port_ids
                   for name, port in seen):
            got = ", ".join(f"{name} {port}" for name, port in seen)
            out.append(Finding(sw.name, p.name, "lldp", want, got))
    return out


def _bgp(sw: ExpectedSwitch, peers: dict[str, dict[str, object]]) -> list[Finding]:
    out = []
    for s in sw.sessions:
        peer = peers.get(s.peer_ip)
        want = f"Established with {s.peer} AS{s.peer_asn} via {s.port}"
        if peer is None:
            out.append(Finding(sw.name, s.peer_ip, "bgp", want, "no such neighbour"))
            continue
        state = str(peer.get("state", ""))
        if state != "Established":
            out.append(Finding(sw.name, s.peer_ip, "bgp", want, state or "no state"))
        remote = peer.get("remoteAs")
        if remote is not None and str(remote) != str(s.peer_asn):
            out.append(Finding(sw.name, s.peer_ip, "bgp", f"remote AS {s.peer_asn}",
                               f"AS{remote}"))
    return out


def _bfd(sw: ExpectedSwitch, peers: dict[str, dict[str, object]],
         bfd: underlay.Bfd) -> list[Finding]:
    """Every BGP peer has a BFD session that is up and runs the plan's timers. The session is
    FRR's (SONiC and Cumulus alike): its local receive/transmit intervals are the configured
    ones, whatever the peer asks for, so a drifted profile shows even while the session is up."""
    out = []
    timers = (f"transmit {bfd.interval_ms} ms, receive {bfd.interval_ms} ms, "
              f"multiplier {bfd.multiplier}")
    for s in sw.sessions:
        peer = peers.get(s.peer_ip)
        want = f"BFD up with {s.peer} via {s.port}"
        if peer is None:
            out.append(Finding(sw.name, s.peer_ip, "bfd", want, "no BFD session"))
            continue
        status = str(peer.get("status", ""))
        if status != "up":
            diagnostic = str(peer.get("diagnostic", ""))
            got = status or "no status"
            if diagnostic and diagnostic != "ok":
                got += f" ({diagnostic})"
            out.append(Finding(sw.name, s.peer_ip, "bfd", want, got))
        multiplier = peer.get("detect-multiplier", bfd.multiplier)
        got_timers = (peer.get("transmit-interval"), peer.get("receive-interval"), multiplier)
        if got_timers != (bfd.interval_ms, bfd.interval_ms, bfd.multiplier):
            out.append(Finding(sw.name, s.peer_ip, "bfd", timers,
                               f"transmit {got_timers[0]} ms, receive {got_timers[1]} ms, "
                               f"multiplier {got_timers[2]}"))
    return out


def _sonic(sw: ExpectedSwitch, texts: dict[str, str], plan: QosPlan, limits: MonitoringSpec,
           checks: tuple[str, ...]) -> list[Finding]:
    out: list[Finding] = []
    if "interfaces" in checks and "interfaces.txt" in texts:
        state = {}
        for table in saved.parse_tables(texts["interfaces.txt"]):
            for row in table:
                if "Interface" in row:
                    state[row["Interface"]] = {"oper": row.get("Oper", ""),
                                               "speed": row.get("Speed", ""),
                                               "mtu": row.get("MTU", "")}
        out += _interfaces(sw, state)
    if "routing" in checks:
        out += _sonic_routing(sw, texts)
    if "lldp" in checks and "lldp.txt" in texts:
        neighbors: dict[str, list[tuple[str, str]]] = {}
        for table in saved.parse_tables(texts["lldp.txt"]):
            for row in table:
                if "LocalPort" in row:
                    neighbors.setdefault(row["LocalPort"], []).append(
                        (row.get("RemoteDevice", ""), row.get("RemotePortID", "")))
        out += _lldp(sw, neighbors, limits)
    if "bgp" in checks and "bgp.json" in texts:
        out += _bgp(sw, saved.bgp_peers(texts["bgp.json"]))
    if "pfc" in checks and "pfc.txt" in texts:
        out += _sonic_pfc(sw, texts["pfc.txt"], plan, limits)
    if "pfc-watchdog" in checks:
        out += _sonic_watchdog(sw, texts, plan)
    return out


# What fabgen.targets.sonic writes into DEVICE_METADATA|localhost for its routing design, and
# why each matters when it is missing on the switch.
_ROUTING = (
    ("frr_mgmt_framework_config", "true",
     "BGP from CONFIG_DB through frrcfgd, and bfdd running (supervisord starts bfdd only then)"),
    ("docker_routing_config_mode", "unified",
     "the bgp container renders and loads frr.conf from CONFIG_DB"),
)


# `sudo TSA` writes BGP_DEVICE_GLOBAL|STATE tsa_enabled (sonic-buildimage
# dockers/docker-fpm-frr/base_image_files/TS); only bgpcfgd acts on it (sonic-bgpcfgd
# managers_device_global.py), and frrcfgd, which this design runs, has no handler for the
# table: the switch keeps carrying traffic. The drain that works: `sudo config bgp shutdown all`
# (BGP_NEIGHBOR admin_status, which frrcfgd applies as `neighbor ... shutdown`).
_TSA_NOT_APPLIED = ("no TSA request: frrcfgd never applies BGP_DEVICE_GLOBAL tsa_enabled, "
                    "so the switch is not drained (drain with `sudo config bgp shutdown all`, "
                    "undo with `sudo config bgp startup all`; clear the request with `sudo "
                    "TSB`)")


def _sonic_routing(sw: ExpectedSwitch, texts: dict[str, str]) -> list[Finding]:
    out = []
    if "bgp-device-global.json" in texts:
        state = saved.device_metadata(texts["bgp-device-global.json"], "bgp-device-global.json",
                                      key="STATE")
        if state.get("tsa_enabled") == "true":
            out.append(Finding(sw.name, "", "routing", _TSA_NOT_APPLIED,
                               "tsa_enabled true: drain requested but not applied"))
    if "device-metadata.json" in texts:
        meta = saved.device_metadata(texts["device-metadata.json"], "device-metadata.json")
        if sw.hwsku is not None and meta.get("hwsku") != sw.hwsku:
            out.append(Finding(sw.name, "", "routing", f"DEVICE_METADATA hwsku {sw.hwsku} (the "
                               "port, buffer and QoS tables are that SKU's)",
                               str(meta.get("hwsku", "not set"))))
        for field, value, why in _ROUTING:
            if meta.get(field) != value:
                out.append(Finding(sw.name, "", "routing", f"DEVICE_METADATA {field} {value} "
                                   f"({why})", str(meta.get(field, "not set"))))
        role_type = sonic_skus.ROLE_TYPE.get(sw.role)
        allowed = {role_type, sonic_skus.CORE_FALLBACK} if sw.role == "core" else {role_type}
        if role_type is not None and meta.get("type") not in allowed:
            out.append(Finding(sw.name, "", "routing", f"DEVICE_METADATA type {role_type} (its "
                               "buffer template ships with the SKU)",
                               str(meta.get("type", "not set"))))
    if "golden.json" in texts:
        golden = saved.device_metadata(texts["golden.json"], "golden.json")
        mode = golden.get("docker_routing_config_mode")
        if mode != "unified":
            out.append(Finding(sw.name, "", "routing", "/etc/sonic/golden_config_db.json with "
                               "docker_routing_config_mode unified (db_migrator, run by config "
                               "reload and upgrades, resets the mode where minigraph.xml exists)",
                               "no golden file" if not golden else f"mode {mode or 'not set'}"))
    return out


def _sonic_pfc(sw: ExpectedSwitch, text: str, plan: QosPlan,
               limits: MonitoringSpec) -> list[Finding]:
    """PFC frames since the counters were cleared: the lossless priority within the limit,
    none on a priority the plan does not make lossless (that one would be misconfigured)."""
    counts: dict[str, dict[int, int]] = {}
    for table in saved.parse_tables(text):
        for row in table:
            port = row.get("Port Rx") or row.get("Port Tx")
            if not port:
                continue
            for prio in range(8):
                n = saved.parse_number(row.get(f"PFC{prio}", ""))
                if n is not None:
                    counts.setdefault(port, {}).setdefault(prio, 0)
                    counts[port][prio] += n
    out = []
    lossless = set(plan.pfc_priorities)
    budget = limits.verify_pfc_frames_max or 0
    for p in sw.ports:
        seen = counts.get(p.name, {})
        for prio, n in sorted(seen.items()):
            if prio in lossless and n > budget:
                out.append(Finding(sw.name, p.name, "pfc", f"at most "
                                   f"{budget} PFC frames on priority "
                                   f"{prio} (monitoring.verify_pfc_frames_max)", str(n)))
            elif prio not in lossless and n:
                out.append(Finding(sw.name, p.name, "pfc", f"no PFC frames on priority {prio} "
                                   "(not lossless in the plan)", str(n)))
    return out


def _sonic_watchdog(sw: ExpectedSwitch, texts: dict[str, str], plan: QosPlan) -> list[Finding]:
    out = []
    names = {p.name for p in sw.ports}
    if "pfcwd.txt" in texts:
        for table in saved.parse_tables(texts["pfcwd.txt"]):
            for row in table:
                queue = row.get("QUEUE", "")
                port = queue.split(":")[0]
                if port not in names:
                    continue
                detected = row.get("STORM DETECTED/RESTORED", "0/0").split("/")[0]
                status = row.get("STATUS", "")
                if status == "stormed" or (saved.parse_number(detected) or 0) > 0:
                    out.append(Finding(sw.name, port, "pfc-watchdog",
                                       f"no PFC storm on queue {queue}",
                                       f"status {status}, storms detected {detected}"))
    wd = plan.watchdog
    if wd.enabled and "pfcwd-config.txt" in texts:
        config = {}
        for table in saved.parse_tables(texts["pfcwd-config.txt"]):
            for row in table:
                if "PORT" in row:
                    config[row["PORT"]] = row
        want = (f"action {wd.action}, detection {wd.detection_ms} ms, restoration "
                f"{wd.restoration_ms} ms")
        for p in sw.ports:
            entry = config.get(p.name)
            if entry is None:
                out.append(Finding(sw.name, p.name, "pfc-watchdog", want, "no watchdog"))
                continue
            got = (entry.get("ACTION", ""), entry.get("DETECTION TIME", ""),
                   entry.get("RESTORATION TIME", ""))
            if got != (wd.action, str(wd.detection_ms), str(wd.restoration_ms)):
                out.append(Finding(sw.name, p.name, "pfc-watchdog", want,
                                   f"action {got[0]}, detection {got[1]} ms, restoration "
                                   f"{got[2]} ms"))
    return out


def _nvue(sw: ExpectedSwitch, texts: dict[str, str], limits: MonitoringSpec,
          checks: tuple[str, ...]) -> list[Finding]:
    out: list[Finding] = []
    if "interfaces" in checks and "interfaces.json" in texts:
        out += _interfaces(sw, saved.nvue_interfaces(texts["interfaces.json"]))
    if "lldp" in checks and "lldp.json" in texts:
        out += _lldp(sw, saved.lldp_neighbors_lldpctl(texts["lldp.json"]), limits)
    if "bgp" in checks and "bgp.json" in texts:
        out += _bgp(sw, saved.bgp_peers(texts["bgp.json"]))
    return out


def verify_dir(switches: tuple[ExpectedSwitch, ...], directory: Path, plan: QosPlan,
               limits: MonitoringSpec, devices: str | None = None,
               checks: tuple[str, ...] = CHECKS, bfd: underlay.Bfd | None = None) -> Report:
    """Check every selected SONiC and NVUE switch against `directory/<switch>/`."""
    findings: list[Finding] = []
    checked: list[str] = []
    skipped: list[str] = []
    for sw in switches:
        if devices is not None and not fnmatch.fnmatchcase(sw.name, devices):
            continue
        if sw.platform not in saved.COMMANDS:
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
    return Report(tuple(findings), tuple(checked), tuple(skipped))


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
    if report.skipped:
        lines.append(f"note: {len(report.skipped)} EOS switch(es) not checked here: run "
                     "verify/anta-catalog.yaml with ANTA")
    return "\n".join(lines) + "\n"

