"""Rollout order: the canary set, then batches that never take too much of one tier at once.

The rule, for every batch (the canary set included):

1. One role only: leaves, spines and cores are never in the same batch. Roles go in fabric
   order (leaves, then spines, then cores), each role's batches before the next role's.
2. Within a role, switches fall into failure domains, (role, plane, group): a leaf's scalable
   unit in its plane, a spine's pod, a core group. A batch takes at most
   `max(1, floor(size * max_fraction))` switches of one domain, where `size` counts every
   switch of that domain in the fabric, selected or not (what is not pushed still carries
   traffic, but what is pushed is down together).
3. A batch holds at most `batch_size` switches; it fills up from the next domains (another
   scalable unit, another plane) before a domain gets a second turn.

With the default max_fraction 0.25: 4 spines of a pod go one per batch; the 8 rail leaves of a
scalable unit go two per batch (each rail leaf serves one NIC of every node of the unit, so two
down cost every node 2 of its 8 rails); with 4 units and --batch-size 8 a batch takes two
leaves from each unit.
"""

from __future__ import annotations

import fnmatch
from collections import Counter, deque
from collections.abc import Iterable, Sequence

from fabgen.errors import FabgenError
from fabgen.push.inventory import Device
from fabgen.topology.model import Switch

Domain = tuple[str, int, int]  # (role, plane, group)


def domain(switch: Switch) -> Domain:
    return (switch.role, switch.plane, switch.group)


def caps(fabric_switches: Iterable[Switch], max_fraction: float) -> dict[Domain, int]:
    """How many switches of each failure domain may be in one batch."""
    sizes = Counter(domain(s) for s in fabric_switches)
    # The epsilon keeps 8 * 0.25 (or 10 * 0.3) from flooring to one less on float error.
    return {d: max(1, int(n * max_fraction + 1e-9)) for d, n in sizes.items()}


def _describe(d: Domain) -> str:
    role, plane, group = d
    what = {"leaf": "scalable unit", "spine": "pod", "core": "core group"}.get(role, "group")
    return f"{role}s of plane {plane} {what} {group}"


def plan(devices: Sequence[Device], fabric_switches: Iterable[Switch], canary: str | None,
         batch_size: int, max_fraction: float) -> list[tuple[str, list[str]]]:
    """[("canary", names), ("1", names), ...] for the selected `devices` (in fabric order).

    Raises FabgenError when --canary matches nothing or a canary set breaks the rule above.
    """
    cap = caps(fabric_switches, max_fraction)
    names = [d.name for d in devices]
    by_name = {d.name: d for d in devices}
    if canary:
        globs = [g.strip() for g in canary.split(",") if g.strip()]
        first = [n for n in names if any(fnmatch.fnmatchcase(n, g) for g in globs)]
        if not first:
            shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
            raise FabgenError.single(f"push: --canary {canary!r} matches none of the selected "
                                     f"devices ({shown})")
        roles = sorted({by_name[n].switch.role for n in first})
        if len(roles) > 1:
            raise FabgenError.single(f"push: --canary {canary!r} mixes roles "
                                     f"({', '.join(roles)}); a batch holds one role only")
        counts = Counter(domain(by_name[n].switch) for n in first)
        for d, n in counts.items():
            if n > cap[d]:
                raise FabgenError.single(
                    f"push: --canary {canary!r} takes {n} {_describe(d)} at once; at most "
                    f"{cap[d]} may be in one batch (--max-tier-fraction {max_fraction:g})")
    else:
        leaves = [n for n in names if by_name[n].switch.role == "leaf"]
        first = [leaves[0] if leaves else names[0]]
    out = [("canary", first)]
    rest = [d for d in devices if d.name not in first]
    for role in dict.fromkeys(d.switch.role for d in rest):
        queues: dict[Domain, deque[str]] = {}
        for dev in rest:
            if dev.switch.role == role:
                queues.setdefault(domain(dev.switch), deque()).append(dev.name)
        while any(queues.values()):
            batch: list[str] = []
            for d, queue in queues.items():
                for _ in range(min(cap[d], batch_size - len(batch), len(queue))):
                    batch.append(queue.popleft())
                if len(batch) == batch_size:
                    break
            out.append((str(len(out)), batch))
    return out
