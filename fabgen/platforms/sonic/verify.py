"""`fabgen verify` on SONiC: the `show` outputs verify/collect-sonic.sh saves, their parsers, and
what they say against the plan (ports, LLDP, the routing design, BGP, BFD, PFC, the watchdog).

The files (sonic-utilities show commands; FRR's vtysh):
  lldp.txt          show lldp table
  interfaces.txt    show interfaces status
  bgp.json          vtysh -c 'show ip bgp summary json'
  pfc.txt           show pfc counters
  pfcwd.txt         show pfcwd stats
  pfcwd-config.txt  show pfcwd config
  bfd.json          vtysh -c 'show bfd peers json'        (only when underlay.bfd is on)
  device-metadata.json  sonic-cfggen -d --var-json DEVICE_METADATA
  golden.json       sudo cat /etc/sonic/golden_config_db.json

BFD runs in FRR's bfdd (SONiC's `neighbor FABRIC bfd` from CONFIG_DB through frrcfgd, which also
makes supervisord start bfdd), so FRR's parser serves (fabgen.verify.saved). Without BFD in the
plan bfdd has no sessions and may not run at all, so the file is neither collected nor read.
The two JSON files of DEVICE_METADATA show the routing design (frr_mgmt_framework_config,
docker_routing_config_mode, type) and whether golden_config_db.json keeps it through
db_migrator.

The text outputs are tabulate tables (a header line, a line of dashes per column, rows); the
parser cuts columns at the dash runs, so an empty cell or a cell with spaces stays in place.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from fabgen import underlay
from fabgen.intent.models import MonitoringSpec
from fabgen.platforms.contract.outputs import SavedFile
from fabgen.platforms.sonic.data import skus
from fabgen.qos import QosPlan
from fabgen.verify import findings as compare
from fabgen.verify import saved
from fabgen.verify.expect import ExpectedSwitch
from fabgen.verify.findings import Finding

__all__ = ["CLEAR", "SAVED", "device_metadata", "findings", "parse_number", "parse_tables"]

SAVED = (
    SavedFile("lldp.txt", "show lldp table", "LLDP neighbours"),
    SavedFile("interfaces.txt", "show interfaces status", "port state, speed, MTU"),
    SavedFile("bgp.json", "vtysh -c 'show ip bgp summary json'", "BGP sessions"),
    SavedFile("pfc.txt", "show pfc counters", "PFC frames per priority"),
    SavedFile("pfcwd.txt", "show pfcwd stats", "PFC watchdog storms"),
    SavedFile("pfcwd-config.txt", "show pfcwd config", "PFC watchdog settings"),
    SavedFile("bfd.json", "vtysh -c 'show bfd peers json'", "BFD sessions", bfd_only=True),
    SavedFile("device-metadata.json", "sonic-cfggen -d --var-json DEVICE_METADATA",
              "routing mode and role (DEVICE_METADATA)"),
    SavedFile("golden.json", "sudo cat /etc/sonic/golden_config_db.json",
              "the routing mode db_migrator keeps (golden_config_db.json)"),
    SavedFile("bgp-device-global.json", "sonic-cfggen -d --var-json BGP_DEVICE_GLOBAL",
              "a TSA drain request (BGP_DEVICE_GLOBAL|STATE tsa_enabled)"),
)
# What the collect script says clears the counters verify reads.
CLEAR = "sonic-clear pfccounters; sonic-clear queuecounters; sonic-clear pfcwd"

_DASHES = re.compile(r"-+")
_RULE = re.compile(r"^\s*-+(\s+-+)*\s*$")


def parse_tables(text: str) -> list[list[dict[str, str]]]:
    """Every tabulate table of a `show` output, as rows of {header: cell}.

    A table starts at a line of dash runs under its header and ends at a blank line or a line
    of dashes alone (SONiC's "Total entries" footer).
    """
    lines = text.splitlines()
    tables: list[list[dict[str, str]]] = []
    i = 1
    while i < len(lines):
        rule = lines[i]
        if not _RULE.match(rule) or not lines[i - 1].strip():
            i += 1
            continue
        starts = [m.start() for m in _DASHES.finditer(rule)]
        if len(starts) < 2:
            i += 1
            continue
        bounds = list(zip(starts, [*starts[1:], None], strict=True))
        header = [lines[i - 1][a:b].strip() for a, b in bounds]
        rows = []
        i += 1
        while i < len(lines) and lines[i].strip() and not _RULE.match(lines[i]):
            rows.append({h: lines[i][a:b].strip() for h, (a, b) in zip(header, bounds,
                                                                       strict=True)})
            i += 1
        tables.append(rows)
    return tables


def parse_number(text: str) -> int | None:
    """A counter cell: "1,200" -> 1200; "N/A" or empty -> None."""
    cleaned = text.replace(",", "").strip()
    return int(cleaned) if cleaned.isdigit() else None


def device_metadata(text: str, what: str, key: str = "localhost") -> dict[str, Any]:
    """DEVICE_METADATA|localhost from `sonic-cfggen -d --var-json DEVICE_METADATA` ({"localhost":
    {...}}) or from a golden_config_db.json ({"DEVICE_METADATA": {"localhost": {...}}}); {} for
    an empty file (no golden file on the switch). Another table's row the same way (`key`:
    BGP_DEVICE_GLOBAL's STATE)."""
    if not text.strip():
        return {}
    data = saved.load_json(text, what)
    if isinstance(data, dict) and isinstance(data.get("DEVICE_METADATA"), dict):
        data = data["DEVICE_METADATA"]
    local = data.get(key) if isinstance(data, dict) else None
    return local if isinstance(local, dict) else {}


def findings(sw: ExpectedSwitch, texts: Mapping[str, str], plan: QosPlan,
             limits: MonitoringSpec, checks: tuple[str, ...],
             bfd: underlay.Bfd | None) -> list[Finding]:
    """Every difference between a SONiC switch's saved outputs and its plan."""
    out: list[Finding] = []
    if "interfaces" in checks and "interfaces.txt" in texts:
        state = {}
        for table in parse_tables(texts["interfaces.txt"]):
            for row in table:
                if "Interface" in row:
                    state[row["Interface"]] = {"oper": row.get("Oper", ""),
                                               "speed": row.get("Speed", ""),
                                               "mtu": row.get("MTU", "")}
        out += compare.interfaces(sw, state)
    if "routing" in checks:
        out += _routing(sw, texts)
    if "lldp" in checks and "lldp.txt" in texts:
        neighbors: dict[str, list[tuple[str, str]]] = {}
        for table in parse_tables(texts["lldp.txt"]):
            for row in table:
                if "LocalPort" in row:
                    neighbors.setdefault(row["LocalPort"], []).append(
                        (row.get("RemoteDevice", ""), row.get("RemotePortID", "")))
        out += compare.lldp(sw, neighbors, limits)
    if "bgp" in checks and "bgp.json" in texts:
        out += compare.bgp(sw, saved.bgp_peers(texts["bgp.json"]))
    if "pfc" in checks and "pfc.txt" in texts:
        out += _pfc(sw, texts["pfc.txt"], plan, limits)
    if "pfc-watchdog" in checks:
        out += _watchdog(sw, texts, plan)
    if bfd is not None and "bfd" in checks and "bfd.json" in texts:
        out += compare.bfd(sw, saved.bfd_peers(texts["bfd.json"]), bfd)
    return out


# What the SONiC target writes into DEVICE_METADATA|localhost for its routing design, and
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


def _routing(sw: ExpectedSwitch, texts: Mapping[str, str]) -> list[Finding]:
    out = []
    if "bgp-device-global.json" in texts:
        state = device_metadata(texts["bgp-device-global.json"], "bgp-device-global.json",
                                key="STATE")
        if state.get("tsa_enabled") == "true":
            out.append(Finding(sw.name, "", "routing", _TSA_NOT_APPLIED,
                               "tsa_enabled true: drain requested but not applied"))
    if "device-metadata.json" in texts:
        meta = device_metadata(texts["device-metadata.json"], "device-metadata.json")
        if sw.hwsku is not None and meta.get("hwsku") != sw.hwsku:
            out.append(Finding(sw.name, "", "routing", f"DEVICE_METADATA hwsku {sw.hwsku} (the "
                               "port, buffer and QoS tables are that SKU's)",
                               str(meta.get("hwsku", "not set"))))
        for field, value, why in _ROUTING:
            if meta.get(field) != value:
                out.append(Finding(sw.name, "", "routing", f"DEVICE_METADATA {field} {value} "
                                   f"({why})", str(meta.get(field, "not set"))))
        role_type = skus.ROLE_TYPE.get(sw.role)
        allowed = {role_type, skus.CORE_FALLBACK} if sw.role == "core" else {role_type}
        if role_type is not None and meta.get("type") not in allowed:
            out.append(Finding(sw.name, "", "routing", f"DEVICE_METADATA type {role_type} (its "
                               "buffer template ships with the SKU)",
                               str(meta.get("type", "not set"))))
    if "golden.json" in texts:
        golden = device_metadata(texts["golden.json"], "golden.json")
        mode = golden.get("docker_routing_config_mode")
        if mode != "unified":
            out.append(Finding(sw.name, "", "routing", "/etc/sonic/golden_config_db.json with "
                               "docker_routing_config_mode unified (db_migrator, run by config "
                               "reload and upgrades, resets the mode where minigraph.xml exists)",
                               "no golden file" if not golden else f"mode {mode or 'not set'}"))
    return out


def _pfc(sw: ExpectedSwitch, text: str, plan: QosPlan,
               limits: MonitoringSpec) -> list[Finding]:
    """PFC frames since the counters were cleared: the lossless priority within the limit,
    none on a priority the plan does not make lossless (that one would be misconfigured)."""
    counts: dict[str, dict[int, int]] = {}
    for table in parse_tables(text):
        for row in table:
            port = row.get("Port Rx") or row.get("Port Tx")
            if not port:
                continue
            for prio in range(8):
                n = parse_number(row.get(f"PFC{prio}", ""))
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


def _watchdog(sw: ExpectedSwitch, texts: Mapping[str, str], plan: QosPlan) -> list[Finding]:
    out = []
    names = {p.name for p in sw.ports}
    if "pfcwd.txt" in texts:
        for table in parse_tables(texts["pfcwd.txt"]):
            for row in table:
                queue = row.get("QUEUE", "")
                port = queue.split(":")[0]
                if port not in names:
                    continue
                detected = row.get("STORM DETECTED/RESTORED", "0/0").split("/")[0]
                status = row.get("STATUS", "")
                if status == "stormed" or (parse_number(detected) or 0) > 0:
                    out.append(Finding(sw.name, port, "pfc-watchdog",
                                       f"no PFC storm on queue {queue}",
                                       f"status {status}, storms detected {detected}"))
    wd = plan.watchdog
    if wd.enabled and "pfcwd-config.txt" in texts:
        config = {}
        for table in parse_tables(texts["pfcwd-config.txt"]):
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
