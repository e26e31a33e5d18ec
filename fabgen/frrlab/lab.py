"""Run an FRR lab: bring the SONiC underlay up, wait until it converges, check it against the
expectations, then drop one link's packets and time how long the fabric takes to notice.

`bring_up` and `check` need root (fabgen.frrlab.netns); `build` does not.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from ipaddress import IPv4Interface
from typing import Any

from fabgen.frrlab import model
from fabgen.frrlab.netns import LabError, Namespaces, snmp_available
from fabgen.verify import saved

# RFC 4273 BGP4-MIB bgpPeerState and its "established" (the SONiC BgpSessionDown alert's
# source: fabgen.targets.sonic_snmp).
BGP_PEER_STATE_OID = "1.3.6.1.2.1.15.3.1.2"
BGP_ESTABLISHED = 6
# How long the lab keeps watching after the first moment every session is up, counting
# sessions that go down again: a BFD session flapping under load shows within a few of its
# 0.9 s detection times.
SETTLE_S = 5.0
# Detection is judged late only when even the poll before the one that saw it (the latest
# moment the session was still seen up) is past the plan by more than this: FRR runs its BFD
# and hold timers in its event loop, which fires them late by the work queued before them
# (route processing right after a failure) and by the host's scheduling, here a shared
# 2-core machine running every switch of the lab. It is stated in every verdict.
DETECTION_SLACK_MS = 100

__all__ = ["DETECTION_SLACK_MS", "SETTLE_S", "Detection", "LabResult", "bgp_peer_states",
           "bring_up", "check", "format_result", "measure", "pick_link", "running",
           "wait_session"]

Progress = Callable[[str], None]
_WORKERS = 8


@dataclass(frozen=True, slots=True)
class Detection:
    """One link whose packets were dropped (the link stayed up), seen from its lower end."""

    switch: str
    port: str
    peer: str
    peer_port: str
    detector: str  # "bfd" (the config as rendered) or "hold-timer" (BFD off on this session)
    expected_ms: int  # BFD interval x multiplier, or the BGP hold time
    bfd_down_ms: int | None  # bfdd declared the session down
    bgp_down_ms: int | None  # the BGP session left Established
    route_ms: int | None  # the kernel route lost the link's next hop
    probe: str  # the prefix whose next hops were watched
    # The poll before the one that saw each event (ms after the drop): the event happened
    # between it and the *_ms above, so that gap is the measurement's resolution.
    bfd_last_up_ms: int | None = None
    bgp_last_up_ms: int | None = None
    route_last_up_ms: int | None = None
    poll_ms: int = 0  # the longest span from one poll's start to the next poll's end
    bgp_peer_state: int | None = None  # BGP4-MIB bgpPeerState once BGP saw the loss

    @property
    def late(self) -> list[str]:
        """What the detector did not do in time: each event the detector must cause (BFD
        down with BFD; BGP down; the route's next hop gone) not seen at all, or seen only after
        a poll that still found it up later than the plan plus DETECTION_SLACK_MS."""
        events = [("BFD down", self.bfd_down_ms, self.bfd_last_up_ms)] if (
            self.detector == "bfd") else []
        events += [("BGP down", self.bgp_down_ms, self.bgp_last_up_ms),
                   ("route withdrawn", self.route_ms, self.route_last_up_ms)]
        limit = self.expected_ms + DETECTION_SLACK_MS
        out = []
        for what, seen, before in events:
            if seen is None:
                out.append(f"{what} not seen")
            elif (before or 0) > limit:
                out.append(f"{what} after {before}-{seen} ms, plan {self.expected_ms} ms + "
                           f"{DETECTION_SLACK_MS} ms")
        return out

    @property
    def verdict(self) -> str:
        late = self.late
        return "in time" if not late else "LATE: " + "; ".join(late)


@dataclass
class LabResult:
    switches: int
    sessions: int = 0
    sessions_up: int = 0
    bfd_sessions: int = 0
    bfd_up: int = 0
    routes: int = 0
    routes_ok: int = 0
    converged_s: float | None = None
    first_up_s: float | None = None  # every BGP session Established and BFD up, first time
    # Sessions that went down after first_up_s (BGP connections dropped, BFD session-down
    # counts), until the check ended: none is expected on a healthy lab.
    flaps: list[str] = field(default_factory=list)
    settle_s: float = 0.0  # how long the check kept watching after first_up_s
    # BGP4-MIB bgpPeerState through each switch's snmpd (None: snmpd not installed here).
    snmp_sessions: int | None = None
    snmp_established: int = 0
    refused: dict[str, list[str]] = field(default_factory=dict)  # switch -> vtysh -b errors
    problems: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    detections: list[Detection] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (not self.problems and not self.refused and self.converged_s is not None
                and not self.flaps and all(not d.late for d in self.detections))

    def as_json(self) -> dict[str, Any]:
        out = {**asdict(self), "ok": self.ok}
        out["detections"] = [{**asdict(d), "verdict": d.verdict,
                              "slack_ms": DETECTION_SLACK_MS} for d in self.detections]
        return out


def _prefix(dst: str) -> str:
    return dst if "/" in dst else f"{dst}/32"


def _width(entry: dict[str, Any]) -> int:
    hops = entry.get("nexthops")
    return len(hops) if isinstance(hops, list) else 1


@contextmanager
def running(lab: model.Lab, progress: Progress | None = None,
            run_id: str | None = None) -> Iterator[Namespaces]:
    """The lab's namespaces, wired and booted; torn down on leaving."""
    with Namespaces(run_id or str(os.getpid())) as ns:
        bring_up(ns, lab, progress)
        yield ns


def bring_up(ns: Namespaces, lab: model.Lab, progress: Progress | None = None) -> None:
    say = progress or (lambda _m: None)
    for sw in lab.switches:
        ns.add(sw.name)
    # Cables first (one veth per cable, an end in each namespace), then each switch's own.
    root = []
    for (a_sw, a_port), (z_sw, z_port) in lab.cables:
        root.append(f"link add {a_port} netns {ns.namespaces[a_sw]} type veth peer name "
                    f"{z_port} netns {ns.namespaces[z_sw]}")
    ns.batch(root)
    say(f"{len(lab.switches)} namespaces, {len(lab.cables)} cables")
    for sw in lab.switches:
        commands = ["link set lo up"]
        for i, intf in enumerate(sw.interfaces):
            if intf.kind != "fabric":
                # The other end stays here: the address is a connected route, as on the switch.
                commands.append(f"link add {intf.name} type veth peer name stub{i}")
                commands.append(f"link set stub{i} up")
            if intf.mtu:
                commands.append(f"link set {intf.name} mtu {intf.mtu}")
            commands.append(f"address add {intf.address} dev {intf.name}")
            commands.append(f"link set {intf.name} up")
        ns.batch(commands, sw.name)
        ns.write(sw.name, "frr.conf", sw.frr_conf)
        ns.write(sw.name, "vtysh.conf", "service integrated-vtysh-config\n")
    snmp = snmp_available()
    with ThreadPoolExecutor(_WORKERS) as pool:
        list(pool.map(lambda s: ns.start(s.name, snmp), lab.switches))
    say("daemons started" + (" (and snmpd, AgentX master)" if snmp else ""))


def check(ns: Namespaces, lab: model.Lab, timeout: float = 90.0,
          progress: Progress | None = None, boot: bool = True,
          settle_s: float = SETTLE_S) -> LabResult:
    """Boot every switch's frr.conf (`vtysh -b`; not with boot=False, to look at a lab as it
    runs), then poll until sessions, BFD and routes are what the expectations say, or until
    `timeout`; the result lists what is still wrong. From the first poll that finds every
    session up, FRR's own counters of each session (BGP connections dropped, BFD session-down
    events) are kept, and after convergence the lab is watched `settle_s` longer: any session
    that went down again is a flap, and fails the result. Where snmpd runs beside FRR, each
    switch's BGP4-MIB must then show every session established (the SONiC alert's source)."""
    say = progress or (lambda _m: None)
    result = LabResult(len(lab.switches), outside=list(lab.outside))
    with ThreadPoolExecutor(_WORKERS) as pool:  # each is a vtysh process: I/O-bound
        booted = pool.map(lambda s: ns.boot(s.name), lab.switches) if boot else []
        for sw, refused in zip(lab.switches, booted, strict=False):
            if refused:
                result.refused[sw.name] = refused
    start = time.monotonic()
    want = model.expectations(lab)
    problems: list[str] = []
    baseline: dict[str, dict[str, tuple[int, int]]] | None = None
    while True:
        problems = _compare(ns, lab, want, result)
        now = time.monotonic() - start
        say(f"{now:.1f} s: sessions {result.sessions_up}/{result.sessions}"
            f", BFD {result.bfd_up}/{result.bfd_sessions}, routes {result.routes_ok}/"
            f"{result.routes}")
        if baseline is None and result.sessions_up == result.sessions and (
                result.bfd_up == result.bfd_sessions):
            baseline = _down_counts(ns, lab)
            result.first_up_s = round(now, 2)
        if not problems and result.converged_s is None:
            result.converged_s = round(now, 2)
            say(f"converged in {result.converged_s} s; watching {settle_s:.0f} s for flaps")
        if result.converged_s is not None and now - result.converged_s >= settle_s:
            break
        if result.converged_s is None and now > timeout:
            break
        time.sleep(0.5)
    if baseline is not None and result.first_up_s is not None:
        result.settle_s = round(time.monotonic() - start - result.first_up_s, 2)
        result.flaps = _flaps(baseline, _down_counts(ns, lab))
        for flap in result.flaps:
            say(f"flap after every session was up: {flap}")
    if result.converged_s is not None and snmp_available():
        problems += _snmp_compare(ns, lab, want, result)
    result.problems = problems
    return result


def _down_counts(ns: Namespaces, lab: model.Lab) -> dict[str, dict[str, tuple[int, int]]]:
    """switch -> peer -> (BGP connections dropped, BFD session-down events): FRR's own
    counters (`show bgp neighbors json` connectionsDropped, `show bfd peers counters json`
    session-down), so a session that went down and came back between two polls counts."""
    def one(sw: model.LabSwitch) -> dict[str, tuple[int, int]]:
        bgp = ns.vtysh_json(sw.name, "show bgp neighbors json")
        bfd = ns.vtysh_json(sw.name, "show bfd peers counters json") if sw.bfd else []
        bfd_down = {str(p.get("peer")): int(p.get("session-down", 0))
                    for p in (bfd if isinstance(bfd, list) else []) if isinstance(p, dict)}
        return {peer: (int(info.get("connectionsDropped", 0)), bfd_down.get(peer, 0))
                for peer, info in (bgp if isinstance(bgp, dict) else {}).items()
                if isinstance(info, dict)}
    with ThreadPoolExecutor(_WORKERS) as pool:
        return dict(zip((s.name for s in lab.switches), pool.map(one, lab.switches),
                        strict=True))


def _flaps(before: dict[str, dict[str, tuple[int, int]]],
           after: dict[str, dict[str, tuple[int, int]]]) -> list[str]:
    out = []
    for switch in sorted(after):
        for peer, (bgp, bfd) in sorted(after[switch].items()):
            bgp0, bfd0 = before.get(switch, {}).get(peer, (bgp, bfd))
            if bgp > bgp0 or bfd > bfd0:
                out.append(f"{switch}: {peer}: BGP dropped {bgp - bgp0} time(s), BFD went "
                           f"down {bfd - bfd0} time(s)")
    return out


def bgp_peer_states(walk: str) -> dict[str, int]:
    """peer address -> bgpPeerState from `snmpwalk -On -Oe -Oq` of bgpPeerState."""
    out = {}
    prefix = "." + BGP_PEER_STATE_OID + "."
    for line in walk.splitlines():
        oid, _, value = line.partition(" ")
        if oid.startswith(prefix) and value.strip().isdigit():
            out[oid[len(prefix):]] = int(value)
    return out


def _snmp_compare(ns: Namespaces, lab: model.Lab, want: model.Expectations,
                  result: LabResult) -> list[str]:
    problems = []
    result.snmp_sessions = result.snmp_established = 0
    for sw in lab.switches:
        states = bgp_peer_states(ns.snmp_walk(sw.name, BGP_PEER_STATE_OID))
        for ip in sorted(want.sessions[sw.name]):
            result.snmp_sessions += 1
            if states.get(ip) == BGP_ESTABLISHED:
                result.snmp_established += 1
            else:
                problems.append(f"{sw.name}: BGP4-MIB bgpPeerState of {ip} is "
                                f"{states.get(ip, 'absent')}, expected {BGP_ESTABLISHED}")
    return problems


@dataclass(frozen=True, slots=True)
class _Seen:
    peers: dict[str, dict[str, Any]]
    bfd: dict[str, dict[str, Any]]
    kernel: dict[str, int]


def _look(ns: Namespaces, sw: model.LabSwitch) -> _Seen:
    peers = saved.bgp_peers(ns.vtysh(sw.name, "show bgp ipv4 unicast summary json"))
    bfd = saved.bfd_peers(ns.vtysh(sw.name, "show bfd peers json")) if sw.bfd else {}
    kernel = {_prefix(str(e.get("dst"))): _width(e) for e in ns.kernel_routes(sw.name)}
    return _Seen(peers, bfd, kernel)


def _compare(ns: Namespaces, lab: model.Lab, want: model.Expectations,
             result: LabResult) -> list[str]:
    problems: list[str] = []
    result.sessions = result.sessions_up = result.bfd_sessions = result.bfd_up = 0
    result.routes = result.routes_ok = 0
    with ThreadPoolExecutor(_WORKERS) as pool:
        seen = list(pool.map(lambda s: _look(ns, s), lab.switches))
    for sw, look in zip(lab.switches, seen, strict=True):
        sessions = want.sessions[sw.name]
        for ip, (peer, asn) in sorted(sessions.items()):
            result.sessions += 1
            state = str(look.peers.get(ip, {}).get("state", "absent"))
            if state == "Established":
                result.sessions_up += 1
            else:
                problems.append(f"{sw.name}: BGP {ip} ({peer} AS{asn}) {state}")
            if sw.bfd:
                result.bfd_sessions += 1
                status = str(look.bfd.get(ip, {}).get("status", "absent"))
                if status == "up":
                    result.bfd_up += 1
                else:
                    problems.append(f"{sw.name}: BFD {ip} ({peer}) {status}")
        for prefix, width in sorted(want.routes[sw.name].items()):
            result.routes += 1
            got = look.kernel.get(prefix)
            if got == width:
                result.routes_ok += 1
            else:
                problems.append(f"{sw.name}: route {prefix} (from {want.origin[prefix]}) "
                                f"{'missing' if got is None else f'{got} next hops'}, "
                                f"expected {width}")
    return problems


def pick_link(lab: model.Lab) -> tuple[tuple[str, str], tuple[str, str]]:
    """The first cable whose lower end is a leaf (a leaf's first uplink)."""
    for cable in lab.cables:
        if lab.switch(cable[0][0]).role == "leaf":
            return cable
    if not lab.cables:
        raise LabError("the lab has no cable between two of its switches")
    return lab.cables[0]


def _address(lab: model.Lab, switch: str, port: str) -> str:
    intf = next(i for i in lab.switch(switch).interfaces if i.name == port)
    return str(IPv4Interface(intf.address).ip)


def _probe(lab: model.Lab, want: model.Expectations, switch: str) -> tuple[str, int]:
    """A prefix the switch reaches over more than one next hop (the link's loss shows as one
    fewer), preferring a remote leaf's loopback."""
    routes = want.routes[switch]
    role = lab.switch(switch).role
    candidates = sorted((p for p, w in routes.items() if w > 1),
                        key=lambda p: (lab.switch(want.origin[p]).role != role,
                                       not p.endswith("/32"), p))
    if not candidates:
        raise LabError(f"{switch} has no route over several links to watch")
    return candidates[0], routes[candidates[0]]


def _state(ns: Namespaces, switch: str, peer_ip: str) -> tuple[str, str, dict[str, int]]:
    """(BFD status, BGP state, kernel widths) of one session, in two calls."""
    d = ns.dir(switch)
    # BGP first: vtysh stops at a failing command, and bfdd fails on a session it lacks.
    out = ns.exec(switch, ["vtysh", "--vty_socket", str(d), "-c",
                           f"show bgp neighbors {peer_ip} json", "-c",
                           f"show bfd peer {peer_ip} json"], check=False).stdout
    # Two documents, or a "% Unable to find" line where bfdd has no such session: decode the
    # JSON objects that start a line.
    decoder = json.JSONDecoder()
    docs: list[Any] = []
    at = 0
    while (at := out.find("{", at)) != -1:
        if at and out[at - 1] != "\n":
            at += 1
            continue
        try:
            doc, at = decoder.raw_decode(out, at)
        except json.JSONDecodeError:
            at += 1
            continue
        docs.append(doc)
    bfd = next((d for d in docs if isinstance(d, dict) and "status" in d), {})
    bgp: dict[str, Any] = next((d[peer_ip] for d in docs if isinstance(d, dict) and peer_ip in d),
                               {})
    widths = {_prefix(str(e.get("dst"))): _width(e) for e in ns.kernel_routes(switch)}
    return str(bfd.get("status", "absent")), str(bgp.get("bgpState", "absent")), widths


def measure(ns: Namespaces, lab: model.Lab, cable: tuple[tuple[str, str], tuple[str, str]],
            detector: str, expected_ms: int, timeout_s: float) -> Detection:
    """Drop the cable's packets both ways (tc blackhole on each end; carrier stays up) and
    time, from the moment the drop is in place, when bfdd, bgpd and the kernel route notice.
    The drop is removed before returning."""
    (sw, port), (peer, peer_port) = cable
    peer_ip = _address(lab, peer, peer_port)
    probe, width = _probe(lab, model.expectations(lab), sw)
    times: dict[str, int | None] = {"bfd": None, "bgp": None, "route": None}
    deadline = time.monotonic() + 60
    while True:  # the session and the probe's every next hop, before anything is dropped
        bfd_state, before, widths = _state(ns, sw, peer_ip)
        if before == "Established" and widths.get(probe) == width and (
                detector != "bfd" or bfd_state == "up"):
            break
        if time.monotonic() > deadline:
            raise LabError(f"{sw}: before the drop the session to {peer_ip} is {before} and "
                           f"{probe} has {widths.get(probe)} next hops (expected {width})")
        time.sleep(0.2)
    ns.drop(sw, port)
    ns.drop(peer, peer_port)
    start = time.monotonic()
    # A poll reads its state somewhere between its start and its end (vtysh, then the kernel;
    # seconds apart on a loaded host). An event first seen at one poll happened after the
    # start of the last poll that still saw it up (0: the drop itself) and by the end of the
    # poll that saw it: the first is kept as the event's "last up", the second as its time.
    last_up: dict[str, int] = {"bfd": 0, "bgp": 0, "route": 0}
    previous_start, gap = 0, 0
    snmp_state = None
    try:
        while time.monotonic() - start < timeout_s:
            began = round((time.monotonic() - start) * 1000)
            bfd, bgp, widths = _state(ns, sw, peer_ip)
            now = round((time.monotonic() - start) * 1000)
            gap, previous_start = max(gap, now - previous_start), began
            seen = {"bfd": bfd not in ("up", "absent"), "bgp": bgp != "Established",
                    "route": widths.get(probe, 0) < width}
            for event, down in seen.items():
                if times[event] is None:
                    if down:
                        times[event] = now
                    else:
                        last_up[event] = began
            if times["bgp"] is not None and times["route"] is not None and (
                    detector != "bfd" or times["bfd"] is not None):
                break
            time.sleep(0.01)
        if times["bgp"] is not None and snmp_available():
            snmp_state = bgp_peer_states(ns.snmp_walk(sw, BGP_PEER_STATE_OID)).get(peer_ip)
    finally:
        ns.undrop(sw, port)
        ns.undrop(peer, peer_port)
    return Detection(sw, port, peer, peer_port, detector, expected_ms, times["bfd"],
                     times["bgp"], times["route"], probe,
                     bfd_last_up_ms=last_up["bfd"] if times["bfd"] is not None else None,
                     bgp_last_up_ms=last_up["bgp"] if times["bgp"] is not None else None,
                     route_last_up_ms=last_up["route"] if times["route"] is not None
                     else None, poll_ms=gap, bgp_peer_state=snmp_state)


def wait_session(ns: Namespaces, lab: model.Lab, cable: tuple[tuple[str, str], tuple[str, str]],
                 timeout_s: float = 60.0, bfd: bool = True) -> None:
    """Until the cable's session is Established again (and its BFD up)."""
    (sw, _), (peer, peer_port) = cable
    peer_ip = _address(lab, peer, peer_port)
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        state_bfd, state_bgp, _ = _state(ns, sw, peer_ip)
        if state_bgp == "Established" and (not bfd or state_bfd == "up"):
            return
        time.sleep(0.2)
    raise LabError(f"{sw}: the session to {peer_ip} did not come back in {timeout_s:.0f} s")


def format_result(result: LabResult) -> str:
    """The result as a few lines for a terminal."""
    lines = [f"{result.switches} switch(es): BGP {result.sessions_up}/{result.sessions} "
             f"Established, BFD {result.bfd_up}/{result.bfd_sessions} up, routes "
             f"{result.routes_ok}/{result.routes} with the planned ECMP width"
             + (f", converged in {result.converged_s} s" if result.converged_s is not None
                else ", NOT converged")]
    if result.first_up_s is not None:
        lines.append(f"every session up first at {result.first_up_s} s; watched "
                     f"{result.settle_s} s from then: "
                     + (f"{len(result.flaps)} FLAP(S)" if result.flaps else "no flap"))
    lines += [f"flap: {f}" for f in result.flaps[:50]]
    if result.snmp_sessions is not None:
        lines.append(f"BGP4-MIB through snmpd (the BgpSessionDown alert's source): "
                     f"{result.snmp_established}/{result.snmp_sessions} established")
    for switch, refused in sorted(result.refused.items()):
        lines += [f"{switch}: frr.conf line refused by FRR: {line}" for line in refused]
    lines += result.problems[:50]
    if len(result.problems) > 50:
        lines.append(f"... and {len(result.problems) - 50} more")
    if result.outside:
        lines.append(f"not in the lab (other platforms or not selected): BGP peers "
                     f"{', '.join(result.outside[:10])}" + (" ..." if len(result.outside) > 10
                                                            else ""))
    for d in result.detections:
        def ms(value: int | None) -> str:
            return "not seen" if value is None else f"{value} ms"
        lines.append(f"{d.detector}: {d.switch} {d.port} <-> {d.peer} {d.peer_port} dropped: "
                     f"BFD down {ms(d.bfd_down_ms)}, BGP down {ms(d.bgp_down_ms)}, route "
                     f"{d.probe} lost the link {ms(d.route_ms)} (plan: {d.expected_ms} ms; "
                     f"resolution {d.poll_ms} ms at worst: each event happened after the start "
                     f"of the poll before it; tolerance {DETECTION_SLACK_MS} ms): {d.verdict}"
                     + (f"; BGP4-MIB bgpPeerState then {d.bgp_peer_state}"
                        if d.bgp_peer_state is not None else ""))
    return "\n".join(lines) + "\n"
