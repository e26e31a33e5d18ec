"""EOS counters over a window of traffic: two snapshots, their difference against the plan.

ANTA's counter tests compare a counter since it was last cleared with a fixed threshold, which
only holds for one window length, and trust that `anta exec clear-counters` (`clear counters`
and `clear hardware counter drop`, anta/cli/exec/utils.py) zeroes the PFC and queue-drop
counters, which no Arista document states. Instead `verify/anta-check.sh` takes ANTA's own
snapshot of the counter commands before and after the traffic (`anta exec snapshot`, JSON
files `<dir>/<switch>/json/<command with spaces as _>.json`) and `fabgen verify-counters`
compares the two: per planned port, PFC frames sent and received within the `PfcPauseRate`
alert's rate times the elapsed seconds (or monitoring.verify_pfc_frames_max), no packet dropped
by the lossless queue, ECN marks within monitoring.verify_ecn_marks_max when the intent sets it.

The outputs are read in the shapes ANTA's tests read (anta/tests/interfaces.py:
VerifyInterfacesPFCCounters, `show priority-flow-control counters` revision 3:
interfaceCounters.<port>.rxFrames/txFrames; VerifyInterfacesEgressQueueDrops, `show interfaces
counters queue detail`: egressQueueCounters.interfaces.<port>.ucastQueues.trafficClasses.TC<n>
.dropPrecedences.<DP>.droppedPackets; VerifyInterfacesECNCounters, `show qos interfaces ecn
counters queue`: intfQueueCounters.<port>.queueCounters.<queue>, "-" where ECN is off). A
snapshot without those keys (another eAPI revision) is an error, never a pass.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fabgen import user_files
from fabgen.errors import FabgenError
from fabgen.verify.findings import Finding  # check: pfc | lossless-drops | ecn | snapshot

__all__ = ["COMMANDS", "Budget", "compare", "compare_dirs", "snapshot_file"]

PFC = "show priority-flow-control counters"
QUEUE_DROPS = "show interfaces counters queue detail"
ECN = "show qos interfaces ecn counters queue"
COMMANDS = (PFC, QUEUE_DROPS, ECN)
_MAX_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Budget:
    pause_pps: int  # PFC frames per second per port and direction (the PfcPauseRate alert)
    pfc_frames_max: int | None  # an absolute budget instead (monitoring.verify_pfc_frames_max)
    lossless_queue: int
    ecn_marks_max: int | None

    def pfc_frames(self, elapsed_s: float) -> int:
        if self.pfc_frames_max is not None:
            return self.pfc_frames_max
        return int(self.pause_pps * elapsed_s)


def snapshot_file(directory: Path, device: str, command: str) -> Path:
    """Where `anta exec snapshot` writes a command's JSON (anta/cli/exec/utils.py
    collect_commands, anta/tools.py safe_command: `\\`, `/` and whitespace become `_`)."""
    safe = "".join("_" if c in "\\/" or c.isspace() else c for c in command)
    return directory / device / "json" / f"{safe}.json"


def _delta(before: int, after: int) -> int:
    """The increase; a counter that went down was cleared in between: `after` is then what
    it counted since (a lower bound of the window's count)."""
    return after - before if after >= before else after


def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            raise KeyError("/".join(path))
        data = data[key]
    return data


def compare(device: str, ports: list[str], before: dict[str, Any], after: dict[str, Any],
            elapsed_s: float, budget: Budget) -> list[Finding]:
    """Findings of one switch: `before`/`after` are {command: JSON output}."""
    out: list[Finding] = []
    limit = budget.pfc_frames(elapsed_s)
    why = (f"at most {limit} PFC frames each way in {elapsed_s:.0f} s"
           + (" (monitoring.verify_pfc_frames_max)" if budget.pfc_frames_max is not None
              else f" ({budget.pause_pps}/s, the PfcPauseRate alert's rate)"))
    q = f"TC{budget.lossless_queue}"
    for port in ports:
        try:
            pfc = [_get(s[PFC], "interfaceCounters", port) for s in (before, after)]
            rx = _delta(int(pfc[0]["rxFrames"]), int(pfc[1]["rxFrames"]))
            tx = _delta(int(pfc[0]["txFrames"]), int(pfc[1]["txFrames"]))
            tcs = [_get(s[QUEUE_DROPS], "egressQueueCounters", "interfaces", port,
                        "ucastQueues", "trafficClasses", q, "dropPrecedences")
                   for s in (before, after)]
            drops = sum(_delta(int(tcs[0].get(dp, {}).get("droppedPackets", 0)),
                               int(v["droppedPackets"])) for dp, v in tcs[1].items())
        except (KeyError, TypeError, ValueError) as exc:
            out.append(Finding(device, port, "snapshot", "the port's PFC and "
                                      f"{q} unicast drop counters in both snapshots",
                                      f"no {exc}"))
            continue
        if rx > limit or tx > limit:
            out.append(Finding(device, port, "pfc", why, f"received {rx}, sent {tx}"))
        if drops:
            out.append(Finding(device, port, "lossless-drops",
                                      f"no packet dropped by the lossless queue {q} (PFC "
                                      "pauses the sender first)", f"{drops} dropped"))
        if budget.ecn_marks_max is not None:
            try:
                marks = [_get(s[ECN], "intfQueueCounters", port, "queueCounters",
                              str(budget.lossless_queue)) for s in (before, after)]
                marked = _delta(int(marks[0]), int(marks[1]))
            except (KeyError, TypeError, ValueError) as exc:
                out.append(Finding(device, port, "snapshot", "the ECN counter of "
                                          f"queue {budget.lossless_queue} in both snapshots",
                                          f"no {exc}"))
                continue
            if marked > budget.ecn_marks_max:
                out.append(Finding(device, port, "ecn", f"at most "
                                          f"{budget.ecn_marks_max} ECN marks "
                                          "(monitoring.verify_ecn_marks_max)", str(marked)))
    return out


def _read(directory: Path, device: str, command: str) -> Any:
    path = snapshot_file(directory, device, command)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no snapshot of `{command}` (anta exec snapshot)")
    text = user_files.read_text(path, what="an ANTA snapshot", limit=_MAX_BYTES)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON: {exc}") from None


def compare_dirs(switches: dict[str, list[str]], before: Path, after: Path, elapsed_s: float,
                 budget: Budget) -> list[Finding]:
    """Every selected switch ({name: planned ports}) from two `anta exec snapshot` dirs; a
    switch missing from a snapshot is one finding, not an error of the run."""
    commands = [PFC, QUEUE_DROPS] + ([ECN] if budget.ecn_marks_max is not None else [])
    out: list[Finding] = []
    for device, ports in switches.items():
        try:
            snaps = [{c: _read(d, device, c) for c in commands} for d in (before, after)]
        except (OSError, ValueError, FabgenError) as exc:
            out.append(Finding(device, "", "snapshot", "both snapshots", str(exc)))
            continue
        out += compare(device, ports, snaps[0], snaps[1], elapsed_s, budget)
    return out
