"""Fabric invariants: a built Fabric's cabling is complete, unique, rail-aligned and symmetric.

`check_fabric` reads only `fabric.switches`, `fabric.hosts`, `fabric.links` and the subnet-manager
hosts and cables (`sm_hosts`, `sm_links`), so a test (or a cabling import) can hand it a modified
copy made with `dataclasses.replace(fabric, links=...)`.
It runs on fabrics with hundreds of thousands of cables, so every check is a dictionary count over
the links (one pass each) and never a scan of all links per switch.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from fabgen.intent.units import format_ratio
from fabgen.topology.model import Fabric, Host, HostPort, Link, LinkKind, Role, Switch

# Which roles each link kind joins, lower end first: a cable listed under the wrong kind would be
# counted in the wrong tier by every check below and by the bill of materials.
_KIND_ROLES: dict[LinkKind, tuple[Role | None, Role]] = {
    "node-leaf": (None, "leaf"),
    "leaf-spine": ("leaf", "spine"),
    "spine-core": ("spine", "core"),
    "sm-leaf": (None, "leaf"),
    "peer-link": ("leaf", "leaf"),  # an MLAG pair's inter-switch link: neither up nor down
}
# Kinds whose lower end is a host port (a_port is its device index, not a switch port).
_HOST_KINDS: tuple[LinkKind, ...] = ("node-leaf", "sm-leaf")
# Examples per finding: enough to locate a miscabling by hand, short enough to read.
_EXAMPLES = 4

# Every finding code, in the order check_fabric reports them; stable, so CI can match on them.
CODES: dict[str, str] = {
    "link-kind": "a cable's ends are not the roles its kind says, or name no known device/port",
    "plane-mismatch": "a cable joins devices of different planes",
    "nic-port-uncabled": "a host's compute port has no cable",
    "nic-port-cabled-twice": "a host's compute port has more than one cable",
    "radix-exceeded": "a cable uses a switch port outside 1..radix",
    "port-reused": "a switch port carries more than one cable",
    "rail-misaligned": "a rail of an SU spans leaves, or a leaf serves several rails/SUs",
    "port-plan": "a switch has more down- or uplinks cabled than its down/up port split",
    "asymmetric": "unequal link counts between a switch and the switches of its upper group",
    "su-split": "the leaves of one scalable unit are cabled to different pods",
    "oversubscription": "a switch's down:up ratio is above the one asked for",
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One violated invariant. `code` is stable (tests and CI match on it); `message` names the
    devices and ports involved."""

    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


def check_fabric(fabric: Fabric, *,
                 expected_oversubscription: dict[str, Fraction] | None = None) -> list[Finding]:
    """Every invariant of DESIGN §3 that `fabric` (and its storage/management networks)
    violates, in a stable order; [] when sound.

    `expected_oversubscription` maps a role (`leaf`, `spine`) to the highest down:up ratio its
    switches may have; omit it to skip that check.
    """
    switches = {s.name: s for s in fabric.switches}
    # The subnet-manager hosts' cables share the leaves' host ports with the nodes: they are
    # checked with them (cabled once, no port reused, within the down-port split).
    links = fabric.links + fabric.sm_links
    host_ports: dict[tuple[str, int], tuple[Host, HostPort]] = {
        (h.name, p.dev): (h, p) for h in (*fabric.hosts, *fabric.sm_hosts) for p in h.ports}
    out: list[Finding] = []
    out += _ends(links, switches, host_ports)
    out += _host_ports(links, host_ports)
    out += _switch_ports(links, switches)
    if fabric.rails > 0:
        out += _rails(fabric.links, switches, host_ports)
    up, down = _tier_links(links)
    out += _port_plan(fabric.switches, up, down)
    out += _symmetry(fabric, switches, up, "leaf", "spine")
    if fabric.tiers >= 3:
        out += _symmetry(fabric, switches, up, "spine", "core")
    if expected_oversubscription:
        out += _oversubscription(fabric.switches, up, expected_oversubscription)
    # Storage and management networks are fabrics of their own, held by the compute fabric;
    # the same invariants hold there (their oversubscription is their own, so not checked).
    for extra in fabric.extras:
        out += [Finding(f.code, f"{extra.role} network: {f.message}") for f in check_fabric(extra)]
    return out


def _examples(items: Iterable[str]) -> str:
    listed = list(items)
    text = ", ".join(listed[:_EXAMPLES])
    if len(listed) > _EXAMPLES:
        text += f" and {len(listed) - _EXAMPLES} more"
    return text


def _ends(links: Iterable[Link], switches: dict[str, Switch],
          host_ports: dict[tuple[str, int], tuple[Host, HostPort]]) -> list[Finding]:
    """Both ends of every cable exist, have the roles its kind says, and sit on its plane."""
    out: list[Finding] = []
    for link in links:
        if link.kind not in _KIND_ROLES:
            out.append(Finding("link-kind", f"{link.id} has unknown kind {link.kind!r}"))
            continue
        lower, upper = _KIND_ROLES[link.kind]
        z = switches.get(link.z_device)
        if z is None or z.role != upper:
            what = "unknown device" if z is None else f"a {z.role}"
            out.append(Finding("link-kind", f"{link.id} ({link.kind}) ends at {link.z_device} "
                               f"port {link.z_port}, {what}, not a {upper}"))
        elif z.plane != link.plane:
            out.append(Finding("plane-mismatch", f"{link.id} is on plane {link.plane + 1} but "
                               f"{z.name} port {link.z_port} is on plane {z.plane + 1}"))
        if lower is None:
            entry = host_ports.get((link.a_device, link.a_port))
            if entry is None:
                out.append(Finding("link-kind", f"{link.id} starts at {link.a_device} port "
                                   f"{link.a_port}, which is no host's compute port"))
            elif entry[1].plane != link.plane:
                out.append(Finding("plane-mismatch", f"{link.id}: {link.a_device} port "
                                   f"{link.a_port} belongs to plane {entry[1].plane + 1}, the "
                                   f"cable to plane {link.plane + 1}"))
            continue
        a = switches.get(link.a_device)
        if a is None or a.role != lower:
            what = "unknown device" if a is None else f"a {a.role}"
            out.append(Finding("link-kind", f"{link.id} ({link.kind}) starts at {link.a_device} "
                               f"port {link.a_port}, {what}, not a {lower}"))
        elif a.plane != link.plane:
            out.append(Finding("plane-mismatch", f"{link.id} is on plane {link.plane + 1} but "
                               f"{a.name} port {link.a_port} is on plane {a.plane + 1}"))
    return out


def _host_ports(links: Iterable[Link],
                host_ports: dict[tuple[str, int], tuple[Host, HostPort]]) -> list[Finding]:
    """Each NIC port has exactly one cable: a missing one is a lost rail, a second one a typo."""
    cables: dict[tuple[str, int], list[Link]] = defaultdict(list)
    for link in links:
        if link.kind in _HOST_KINDS:
            cables[link.a_device, link.a_port].append(link)
    out: list[Finding] = []
    for (host, dev), (_, port) in host_ports.items():
        found = cables.get((host, dev), [])
        if not found:
            out.append(Finding("nic-port-uncabled", f"{host} port {dev} ({port.netdev}, rail "
                               f"{port.rail}, plane {port.plane + 1}) has no cable"))
        elif len(found) > 1:
            ends = _examples(f"{c.id} to {c.z_device} port {c.z_port}" for c in found)
            out.append(Finding("nic-port-cabled-twice", f"{host} port {dev} ({port.netdev}) "
                               f"has {len(found)} cables: {ends}"))
    return out


def _switch_ports(links: Iterable[Link], switches: dict[str, Switch]) -> list[Finding]:
    """No switch port carries two cables, and every port number exists on the switch."""
    users: dict[tuple[str, int], list[str]] = defaultdict(list)
    out: list[Finding] = []
    for link in links:
        ends = [(link.z_device, link.z_port)]
        if link.kind not in _HOST_KINDS:  # a host's a_port is its device index, not a port
            ends.append((link.a_device, link.a_port))
        for device, port in ends:
            users[device, port].append(link.id)
            switch = switches.get(device)
            if switch is not None and not 1 <= port <= switch.radix:
                out.append(Finding("radix-exceeded", f"{link.id} uses {device} port {port}, "
                                   f"outside 1..{switch.radix} of its {switch.model}"))
    for (device, port), ids in users.items():
        if len(ids) > 1:
            out.append(Finding("port-reused", f"{device} port {port} carries {len(ids)} cables: "
                               f"{_examples(ids)}"))
    return out


def _rails(links: Iterable[Link], switches: dict[str, Switch],
           host_ports: dict[tuple[str, int], tuple[Host, HostPort]]) -> list[Finding]:
    """Rail r of every node of a scalable unit lands on one leaf, and that leaf serves no other
    rail or unit: NCCL's rail-local rings rely on it to stay one hop."""
    # (plane, su, rail) -> leaf -> "host port dev" of each cable landing there
    by_rail: dict[tuple[int, int, int], dict[str, list[str]]] = defaultdict(
        lambda: defaultdict(list))
    by_leaf: dict[str, Counter[tuple[int, int, int]]] = defaultdict(Counter)
    for link in links:
        if link.kind != "node-leaf":
            continue
        entry = host_ports.get((link.a_device, link.a_port))
        if entry is None:
            continue  # reported by _ends
        host, port = entry
        key = (port.plane, host.su, port.rail)
        by_rail[key][link.z_device].append(f"{host.name} port {port.dev}")
        by_leaf[link.z_device][key] += 1
    out: list[Finding] = []
    for (plane, su, rail), leaves in by_rail.items():
        if len(leaves) > 1:
            # Name the leaf most ports use first; the odd ones out are the likely miscabling.
            ranked = sorted(leaves.items(), key=lambda kv: -len(kv[1]))
            parts = [f"{leaf} ({len(ports)}: {_examples(ports)})" for leaf, ports in ranked]
            out.append(Finding("rail-misaligned", f"rail {rail} of SU {su + 1}, plane "
                               f"{plane + 1} lands on {len(leaves)} leaves: {'; '.join(parts)}"))
    for leaf, keys in by_leaf.items():
        if len(keys) > 1:
            served = _examples(f"rail {r} of SU {s + 1} plane {p + 1} ({n} ports)"
                               for (p, s, r), n in keys.most_common())
            out.append(Finding("rail-misaligned", f"{leaf} serves {len(keys)} rails: {served}"))
        switch = switches.get(leaf)
        (plane, su, rail), _ = keys.most_common(1)[0]
        if switch is not None and switch.rail is not None and switch.rail != rail:
            out.append(Finding("rail-misaligned", f"{leaf} is the rail {switch.rail} leaf but "
                               f"its hosts' ports are rail {rail}"))
    return out


def _tier_links(links: Iterable[Link]) -> tuple[dict[str, Counter[str]], dict[str, int]]:
    """Per switch: its uplinks counted per upper switch, and its number of downlinks."""
    up: dict[str, Counter[str]] = defaultdict(Counter)
    down: Counter[str] = Counter()
    for link in links:
        if link.kind == "peer-link":
            continue  # within a tier
        if link.kind not in _HOST_KINDS:
            up[link.a_device][link.z_device] += 1
        down[link.z_device] += 1
    return up, down


def _port_plan(all_switches: Iterable[Switch], up: dict[str, Counter[str]],
               down: dict[str, int]) -> list[Finding]:
    """Cabled ports fit the down/up split the switch was sized with; the report's
    oversubscription and the renderers' port roles are printed from that split."""
    out: list[Finding] = []
    for s in all_switches:
        n_down, n_up = down.get(s.name, 0), sum(up[s.name].values()) if s.name in up else 0
        if n_down > s.down_ports:
            out.append(Finding("port-plan", f"{s.name} has {n_down} downlinks cabled but "
                               f"{s.down_ports} down ports"))
        if n_up > s.up_ports:
            out.append(Finding("port-plan", f"{s.name} has {n_up} uplinks cabled but "
                               f"{s.up_ports} up ports"))
    return out


def _symmetry(fabric: Fabric, switches: dict[str, Switch], up: dict[str, Counter[str]],
              lower_role: Role, upper_role: Role) -> list[Finding]:
    """Equal links between every lower switch and every upper switch of its group.

    Leaf->spine: a leaf's pod is the pod of the spines it reaches; it must reach every spine of
    that pod equally, and each spine must get equally many links from every leaf of its pod.
    Spine->core: spine j of a pod reaches every core of one core group equally, and each core
    gets equally many links from every pod of its plane. Unequal counts are what make ECMP
    hashing and adaptive routing overload one path without any error.
    """
    out: list[Finding] = []
    # Upper switches per (plane, group): the set a lower switch of that group must reach.
    groups: dict[tuple[int, int], list[str]] = defaultdict(list)
    for s in fabric.switches:
        if s.role == upper_role:
            groups[s.plane, s.group].append(s.name)
    # What each upper switch receives, keyed by the lower side's unit of fairness: the leaf
    # itself (leaf->spine), or the spine's pod (spine->core), since a core serves pods.
    received: dict[str, Counter[str]] = defaultdict(Counter)
    # Who each upper switch must hear from, per plane and group: the leaves that reach the pod
    # (a leaf's pod is defined by its cabling), or every pod of the plane (for cores).
    members: dict[tuple[int, int], set[str]] = defaultdict(set)
    pods_of_plane: dict[int, set[str]] = defaultdict(set)
    # (plane, SU) -> pod -> its leaves: a unit is cabled to one pod as a whole, else rail-local
    # traffic of one SU crosses the core and the pods' sizes no longer match the plan.
    unit_pods: dict[tuple[int, int], dict[tuple[int, int], list[str]]] = defaultdict(
        lambda: defaultdict(list))
    for s in fabric.switches:
        if s.role != lower_role:
            continue
        key = s.name if lower_role == "leaf" else f"pod {s.group + 1}"
        pods_of_plane[s.plane].add(key)
        uppers = {name: n for name, n in up.get(s.name, Counter()).items()
                  if (u := switches.get(name)) is not None and u.role == upper_role}
        if not uppers:
            if groups:
                out.append(Finding("asymmetric", f"{s.name} has no uplinks to any {upper_role}"))
            continue
        per_group: Counter[tuple[int, int]] = Counter()
        for name, n in uppers.items():
            u = switches[name]
            per_group[u.plane, u.group] += n
            received[name][key] += n
            members[u.plane, u.group].add(key)
        if len(per_group) > 1:
            spread = _examples(f"plane {p + 1} group {g + 1} x{n}"
                               for (p, g), n in per_group.most_common())
            out.append(Finding("asymmetric", f"{s.name} reaches {len(per_group)} "
                               f"{upper_role} groups: {spread}"))
        group = per_group.most_common(1)[0][0]
        if lower_role == "leaf":
            unit_pods[s.plane, s.group][group].append(s.name)
        missing = [name for name in groups[group] if name not in uppers]
        if len(set(uppers.values())) > 1 or missing:
            detail = _examples(f"{name} x{n}" for name, n in sorted(uppers.items()))
            if missing:
                detail += f"; none to {_examples(missing)}"
            out.append(Finding("asymmetric", f"{s.name} has unequal links to the "
                               f"{upper_role}s of its group: {detail}"))
    for (plane, unit), pods in unit_pods.items():
        if len(pods) > 1:
            spread = "; ".join(f"{_examples(leaves)} to the spines of pod {g + 1}"
                               for (_, g), leaves in pods.items())
            out.append(Finding("su-split", f"SU {unit + 1} of plane {plane + 1} is cabled to "
                               f"{len(pods)} pods: {spread}"))
    what = "leaves of its pod" if lower_role == "leaf" else "pods"
    for (plane, grp), names in groups.items():
        expected = (members.get((plane, grp), set()) if lower_role == "leaf"
                    else pods_of_plane.get(plane, set()))
        for name in names:
            got = received.get(name, Counter())
            missing = sorted(expected - got.keys())
            if lower_role == "leaf":
                # Each leaf owes every spine of its pod an equal share of its uplinks. A leaf of
                # a partial unit built with `full_units: false` has fewer uplinks (and fewer
                # hosts), so its share is smaller but still equal over the spines.
                share = {key: switches[key].up_ports // len(names) for key in got}
                unequal = any(n != share[key] for key, n in got.items())
            else:
                unequal = len(set(got.values())) > 1
            if unequal or missing:
                detail = _examples(f"{key} x{n}" for key, n in sorted(got.items()))
                if missing:
                    detail += f"; none from {_examples(missing)}"
                out.append(Finding("asymmetric", f"{name} has unequal links from the {what}: "
                                   f"{detail}"))
    return out


def _oversubscription(all_switches: Iterable[Switch], up: dict[str, Counter[str]],
                      expected: dict[str, Fraction]) -> list[Finding]:
    """Down:up bandwidth of each switch (its down-port capacity over the uplinks actually
    cabled) is at most what the intent asked for."""
    out: list[Finding] = []
    for s in all_switches:
        limit = expected.get(s.role)
        # No up capacity means the top tier (a 2-tier spine, a core): nothing to oversubscribe.
        if limit is None or s.down_ports == 0 or s.up_ports == 0:
            continue
        uplinks = sum(up[s.name].values()) if s.name in up else 0
        if uplinks == 0:
            out.append(Finding("oversubscription", f"{s.name} has {s.down_ports} down ports and "
                               f"no uplinks; asked for at most {format_ratio(limit)}"))
            continue
        ratio = Fraction(s.down_ports, uplinks)
        if ratio > limit:
            out.append(Finding("oversubscription", f"{s.name} is {format_ratio(ratio)} "
                               f"({s.down_ports} down, {uplinks} up), above the "
                               f"{format_ratio(limit)} asked for"))
    return out
