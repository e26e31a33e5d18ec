"""Expected-topology check: a real `ibnetdiscover` output compared with the cabling plan.

`verify()` names every difference with its exact ports: cables missing, extra, swapped with
another cable, landed on the wrong port (miscabled), and links running below their planned width
or speed. Nodes are matched by node GUID when the GUID plan knows it (a plan read from the real
fabric), else by node description: the switch name, or "<host> mlx5_<n>" (rdma-ndd's) / "<host>
HCA-<nic>" (the simulated fabric's) for a host adapter (the subnet-manager hosts' cables are
checked like the nodes'). Findings name an adapter "<host> <RDMA device>" and give each end's
panel place beside its port, as the cabling sheet's panel columns do ("dgx001 mlx5_3 port 1
(OSFP3 P2)", "leaf01 port 34 (cage 17 port 2)"), so a technician finds the cable. Reading the
format is fabgen.targets.ibnetdiscover's. Pure functions except `verify_file`, which reads the
two files it is given.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from fabgen import user_files
from fabgen.catalog.ports import switch_panel
from fabgen.errors import one_line
from fabgen.targets.ibnetdiscover import MAX_BYTES as IBND_MAX_BYTES
from fabgen.targets.ibnetdiscover import (
    Discovery,
    GuidPlan,
    NodeIndex,
    ca_name,
    discovered_node,
    node_index,
    parse_ibnetdiscover,
)
from fabgen.targets.opensm import guid_plan_for
from fabgen.targets.opensm_plan import settings_from_intent
from fabgen.topology.model import Fabric, Host
from fabgen.topology.summary import natural_key

__all__ = [
    "SPEED_ORDER",
    "End",
    "Finding",
    "FindingKind",
    "format_findings",
    "planned_rate",
    "verify",
    "verify_file",
]

FindingKind = Literal["missing", "extra", "swapped", "miscabled", "degraded"]
_KIND_ORDER: tuple[FindingKind, ...] = ("missing", "swapped", "miscabled", "extra", "degraded")

# IB per-lane signalling generations, slowest first; FDR10 sits between QDR and FDR.
SPEED_ORDER: tuple[str, ...] = ("SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR")
# Gb/s per lane as ports are sold (4x HDR = 200G, 4x NDR = 400G, 2x NDR = "NDR200").
_LANE_GBPS = {"SDR": 2.5, "DDR": 5, "QDR": 10, "FDR10": 10, "FDR": 14, "EDR": 25, "HDR": 50,
              "NDR": 100, "XDR": 200}
_WIDTHS = (4, 2, 1, 8, 12)  # preferred first: 4x is what every HDR/NDR/XDR port runs


# --------------------------------------------------------------------------- findings


@dataclass(frozen=True, slots=True, order=True)
class End:
    """One end of a cable: a switch port, or a host adapter port ("dgx001 mlx5_3" port 1)."""

    device: str
    port: int
    note: str = field(default="", compare=False)  # its panel place: "OSFP3 P2", "cage 17 port 2"

    def __str__(self) -> str:
        return f"{self.device} port {self.port}" + (f" ({self.note})" if self.note else "")

    @property
    def key(self) -> tuple[str, int]:
        return (self.device, self.port)


@dataclass(frozen=True, slots=True)
class Finding:
    """One difference between the plan and the discovered fabric, with the exact ports."""

    kind: FindingKind
    planned: tuple[End, End] | None  # the cable as planned (None for an extra cable)
    found: tuple[End, End] | None  # the cable as discovered (None for a missing cable)
    message: str

    def __str__(self) -> str:
        return self.message


Cable = frozenset[tuple[str, int]]
Rate = tuple[int, str]  # (width, speed name)


def planned_rate(speed_gbps: int, generation: str | None = None) -> Rate:
    """Width and lane speed a link of this speed runs at: 400G NDR = 4x NDR, NDR200 = 2x NDR."""
    gens = [generation.upper()] if generation else ["XDR", "NDR", "HDR", "EDR", "FDR", "QDR"]
    for width in _WIDTHS:
        for gen in gens:
            if _LANE_GBPS[gen] * width == speed_gbps:
                return width, gen
    raise ValueError(f"no InfiniBand width/speed gives {speed_gbps} Gb/s"
                     + (f" at {generation.upper()}" if generation else ""))


def _rate_text(rate: Rate) -> str:
    return f"{rate[0]}x{rate[1]}"


def _slower(found: Rate, planned: Rate) -> bool:
    width, speed = found
    if width < planned[0]:
        return True
    if speed in SPEED_ORDER and planned[1] in SPEED_ORDER:
        return SPEED_ORDER.index(speed) < SPEED_ORDER.index(planned[1])
    return speed != planned[1]


def _in_plane(plane: int | None, value: int) -> bool:
    return plane is None or plane == value


def _host_end(host: Host, dev: int) -> End:
    hp = next(p for p in host.ports if p.dev == dev)
    return End(ca_name(host, hp.nic), hp.port + 1, hp.panel)


def _switch_end(fabric: Fabric, name: str, port: int) -> End:
    sw = fabric.by_name.get(name)
    panel = switch_panel(sw, port) if sw is not None and 1 <= port <= sw.radix else ""
    return End(name, port, panel)


def _planned(fabric: Fabric, plane: int | None, generation: str | None,
             expected_speed: str | None, expected_width: int | None
             ) -> dict[Cable, tuple[End, End, Rate]]:
    hosts = {h.name: h for h in (*fabric.hosts, *fabric.sm_hosts)}
    out: dict[Cable, tuple[End, End, Rate]] = {}
    for link in (*fabric.links, *fabric.sm_links):
        if not _in_plane(plane, link.plane):
            continue
        if link.kind in ("node-leaf", "sm-leaf"):
            a = _host_end(hosts[link.a_device], link.a_port)
        else:
            a = _switch_end(fabric, link.a_device, link.a_port)
        z = _switch_end(fabric, link.z_device, link.z_port)
        width, speed = planned_rate(link.speed_gbps, generation)
        rate = (expected_width or width, expected_speed.upper() if expected_speed else speed)
        out[frozenset({a.key, z.key})] = (a, z, rate)
    return out


def _pick_plane(fabric: Fabric, disc: Discovery, index: NodeIndex) -> int | None:
    if fabric.planes <= 1:
        return None
    planes = {sw.name: sw.plane for sw in fabric.switches}
    seen: Counter[int] = Counter()
    for node in disc.nodes.values():
        key = discovered_node(node, index)
        if key is not None and key[0] == "switch":
            seen[planes[key[1]]] += 1
    if not seen:
        raise ValueError("no discovered switch matches a switch of the plan (by GUID or node "
                         "description); is this the right fabric?")
    return seen.most_common(1)[0][0]


def _discovered(fabric: Fabric, disc: Discovery, index: NodeIndex
                ) -> dict[Cable, tuple[End, End, Rate | None]]:
    hosts = {h.name: h for h in (*fabric.hosts, *fabric.sm_hosts)}
    labels: dict[str, tuple[str, dict[int, str] | None]] = {}  # node id -> (device, notes)
    for node_id, node in disc.nodes.items():
        key = discovered_node(node, index)
        if key is None:
            what = {"switch": "switch", "ca": "adapter", "router": "router"}[node.kind]
            guid = f" {node.guid:#018x}" if node.guid is not None else f" {node_id}"
            name = f'unplanned {what} "{node.desc}"{guid}' if node.desc else \
                f"unplanned {what}{guid}"
            labels[node_id] = (name, {})
        elif key[0] == "switch":
            labels[node_id] = (key[1], None)  # a planned switch: notes from its panel
        else:
            hname, nic = key[1]
            notes = {hp.port + 1: hp.panel for hp in hosts[hname].ports if hp.nic == nic}
            labels[node_id] = (ca_name(hosts[hname], nic), notes)

    def end(node_id: str, port: int) -> End:
        device, notes = labels.get(node_id, (f"unknown node {node_id}", {}))
        if notes is None:
            return _switch_end(fabric, device, port)
        return End(device, port, notes.get(port, ""))

    out: dict[Cable, tuple[End, End, Rate | None]] = {}
    for p in disc.ports:
        a, z = end(p.node_id, p.port), end(p.far_id, p.far_port)
        rate = (p.width, p.speed) if p.width is not None and p.speed is not None else None
        cable = frozenset({a.key, z.key})
        if cable in out:
            old = out[cable][2]
            if old is None or (rate is not None and _slower(rate, old)):
                out[cable] = (*out[cable][:2], rate)  # the two sides disagree: keep the slower
            continue
        out[cable] = (a, z, rate)
    return out


def _other(cable: Cable, key: tuple[str, int]) -> tuple[str, int]:
    rest = [k for k in cable if k != key]
    return rest[0] if rest else key


def verify(
    fabric: Fabric,
    guids: GuidPlan | None,
    ibnetdiscover_text: str,
    *,
    plane: int | None = None,
    generation: str | None = None,
    expected_speed: str | None = None,
    expected_width: int | None = None,
) -> list[Finding]:
    """Every difference between the plan and a discovered fabric, sorted by kind and port.

    plane: which plane the discovery covers (each IB plane is its own subnet); guessed from the
      discovered switch names when the fabric has several and none is given.
    generation: the fabric's IB generation ("ndr"), to tell 2x NDR from 4x HDR at 200G.
    expected_speed: the lane speed every link should train at instead of the planned one, e.g.
      "HDR" for a simulated fabric (ibsim models no NDR/XDR); width is still checked.
    """
    disc = parse_ibnetdiscover(ibnetdiscover_text)
    index = node_index(fabric, guids)
    if plane is None:
        plane = _pick_plane(fabric, disc, index)
    planned = _planned(fabric, plane, generation, expected_speed, expected_width)
    found = _discovered(fabric, disc, index)

    missing = {c for c in planned if c not in found}
    extra = {c for c in found if c not in planned}
    ends: dict[tuple[str, int], End] = {}
    for a, z, _ in [*planned.values(), *found.values()]:
        for e in (a, z):
            if e.key not in ends or not ends[e.key].note:
                ends[e.key] = e
    planned_at = {k: c for c in missing for k in c}
    found_at = {k: c for c in extra for k in c}
    findings: list[Finding] = []

    def pair(c: Cable, first: tuple[str, int]) -> tuple[End, End]:
        return ends[first], ends[_other(c, first)]

    # A swap: planned x-y and x2-y2 are found as x-y2 and x2-y (two cables, four ports).
    for cable in sorted(missing, key=sorted):
        if cable not in missing:
            continue
        for x in sorted(cable):
            y = _other(cable, x)
            wrong = found_at.get(x)
            if wrong is None or wrong not in extra:
                continue
            y2 = _other(wrong, x)
            partner = planned_at.get(y2)
            if partner is None or partner == cable or partner not in missing:
                continue
            x2 = _other(partner, y2)
            back = found_at.get(x2)
            if back is None or back not in extra or _other(back, x2) != y:
                continue
            for px, py, qx, qy, got in ((x, y, x2, y2, y2), (x2, y2, x, y, y)):
                findings.append(Finding(
                    "swapped", (ends[px], ends[py]), (ends[px], ends[got]),
                    f"swapped cable: {ends[px]} is cabled to {ends[got]}, planned {ends[py]} "
                    f"(swapped with the cable of {ends[qx]}, planned to {ends[qy]})"))
            missing -= {cable, partner}
            extra -= {wrong, back}
            break

    # One end right, the other on a wrong port: a miscabled (moved) cable.
    for cable in sorted(missing, key=sorted):
        for x in sorted(cable):
            wrong = found_at.get(x)
            if wrong is None or wrong not in extra:
                continue
            y, w = _other(cable, x), _other(wrong, x)
            findings.append(Finding(
                "miscabled", (ends[x], ends[y]), (ends[x], ends[w]),
                f"miscabled: {ends[x]} is cabled to {ends[w]}, planned {ends[y]}"))
            missing.discard(cable)
            extra.discard(wrong)
            break

    for cable in missing:
        a, z, _rate = planned[cable]
        findings.append(Finding("missing", (a, z), None,
                                f"missing cable: {a} <-> {z} is not connected"))
    for cable in extra:
        a, z = pair(cable, min(cable))
        findings.append(Finding("extra", None, (a, z),
                                f"extra cable: {a} <-> {z} is not in the plan"))
    for cable, (a, z, want) in planned.items():
        seen = found[cable][2] if cable in found else None
        if seen is not None and _slower(seen, want):
            findings.append(Finding(
                "degraded", (a, z), (a, z),
                f"degraded link: {a} <-> {z} runs at {_rate_text(seen)}, "
                f"planned {_rate_text(want)}"))
    return sorted(findings, key=lambda f: (_KIND_ORDER.index(f.kind), natural_key(f.message)))


def format_findings(findings: Iterable[Finding], *, cables: int | None = None) -> str:
    """A report for a terminal or CI log: a summary line, then one line per finding."""
    items = list(findings)
    if not items:
        checked = f" ({cables} cables checked)" if cables is not None else ""
        return f"cabling matches the plan{checked}: no missing, extra, swapped or slow links\n"
    counts = Counter(f.kind for f in items)
    summary = ", ".join(f"{counts[k]} {k}" for k in _KIND_ORDER if counts[k])
    noun = "finding" if len(items) == 1 else "findings"
    # A message may echo a node description from the file: one finding, one line.
    return f"{len(items)} {noun}: {summary}\n" + "".join(f"  {one_line(f.message)}\n"
                                                          for f in items)


def verify_file(
    intent_path: str | Path,
    ibnetdiscover_path: str | Path,
    *,
    plane: int | None = None,
    expected_speed: str | None = None,
    expected_width: int | None = None,
) -> list[Finding]:
    """`fabgen verify-cabling INTENT --ibnetdiscover FILE`: load, build, compare.

    Raises fabgen.errors.FabgenError for a bad intent or an unreadable, oversized, binary or
    non-regular (FIFO, device) ibnetdiscover file.
    """
    from fabgen.intent import load
    from fabgen.topology.build import build

    intent = load(intent_path).intent
    fabric = build(intent)
    settings = settings_from_intent(intent)
    text = user_files.read_text(Path(ibnetdiscover_path), what="an ibnetdiscover output",
                                limit=IBND_MAX_BYTES)
    guids = guid_plan_for(fabric, settings, base=Path(intent_path).parent)
    return verify(fabric, guids, text, plane=plane, generation=settings.generation,
                  expected_speed=expected_speed, expected_width=expected_width)
