"""Failure specs to scenarios: names checked against the intact fabric, with did-you-mean.

A spec is a switch (`spine-03`), a link (`leaf-su1-r2:spine-03`: every cable between the two; a
node may stand on one side), a cable id from the cabling plan (`c-su1-r0-001`), a role count
(`spine:2`: the worst 2 spines), a plane (`plane:1`, 1-based), `none` (the intact fabric) or
`all-single`. Elements joined by `+` fail together (`spine-01+leaf-su2-r0`).
"""

from __future__ import annotations

import re

from fabgen.natural import natural_key
from fabgen.suggest import closest
from fabgen.topology.model import ROLES, Role
from fabgen.whatif.graph import Graph
from fabgen.whatif.results import Scenario, WhatifError

__all__ = ["all_single", "parse"]


def parse(g: Graph, spec: str) -> list[Scenario]:
    """One spec to its scenarios (several only for `all-single`); WhatifError when it names
    nothing in the fabric."""
    text = spec.strip()
    if not text:
        raise WhatifError("empty failure spec")
    if text == "all-single":
        return all_single(g)
    if text == "none":
        return [Scenario("none", "none", detail="nothing failed")]
    parts = [p.strip() for p in text.split("+")]
    if len(parts) == 1:
        return [_element(g, text, text)]
    switches: list[str] = []
    cables: list[str] = []
    picks: list[tuple[Role, int]] = []
    for part in parts:
        if not part:
            raise WhatifError(f"empty element in {text!r} (join elements with '+')")
        one = _element(g, part, text)
        switches += [s for s in one.switches if s not in switches]
        cables += [c for c in one.cables if c not in cables]
        picks += one.picks
    return [Scenario(text, "combined", tuple(switches), tuple(cables), tuple(picks))]


def _element(g: Graph, part: str, whole: str) -> Scenario:
    where = "" if part == whole else f" in {whole!r}"
    if part in g.switch:
        return Scenario(part, "switch", (part,))
    if part in g.links:
        return Scenario(part, "cable", cables=(part,), detail=cable_text(g, part))
    left, sep, right = part.partition(":")
    if sep and left == "plane":
        if not right.isdigit() or not 1 <= int(right) <= g.fabric.planes:
            n = g.fabric.planes
            raise WhatifError(
                f"plane {right!r} does not exist{where}: the fabric has {n} plane"
                f"{'s' if n > 1 else ''} (plane:1{f'..plane:{n}' if n > 1 else ''})")
        plane = int(right) - 1
        names = tuple(s.name for s in g.fabric.switches if s.plane == plane)
        return Scenario(part, "plane", names, detail=f"every switch of plane {plane + 1}")
    if sep and right.isdigit() and left not in g.switch and left not in g.host_index:
        if left not in ROLES:
            guess = closest(left, ROLES)
            hint = f"did you mean '{guess}:{right}'?" if guess else "roles: leaf, spine, core"
            raise WhatifError(f"unknown role {left!r} in {part!r}{where} ({hint})")
        role: Role = left
        count = len(g.by_role[role])
        if count == 0:
            raise WhatifError(f"{part!r}{where}: the fabric has no {role} switches "
                              f"({g.tiers} tiers)")
        n = int(right)
        if not 1 <= n <= count:
            raise WhatifError(f"{part!r}{where}: can fail 1 to {count} {role} switches, "
                              f"not {n}")
        return Scenario(part, "role", picks=((role, n),),
                        detail=f"the worst {n} of {count} {role} switches")
    if sep:
        a, z = _device(g, left, part, where), _device(g, right, part, where)
        ids = g.bundle.get((a, z)) or g.bundle.get((z, a))
        if not ids:
            raise WhatifError(_no_cable(g, a, z, where))
        lower, upper = (a, z) if (a, z) in g.bundle else (z, a)
        return Scenario(f"{lower}:{upper}", "link", cables=tuple(ids),
                        detail=f"{len(ids)} cable{'s' if len(ids) > 1 else ''}")
    if part in g.host_index:
        raise WhatifError(f"{part!r}{where} is a node, not a switch; fail one of its links "
                          f"with {part}:LEAF or a cable id")
    if _LEGACY_ID.match(part) or _CABLE_LIKE.match(part):
        raise WhatifError(f"no cable {part!r} in the cabling plan{where} "
                          f"({_cable_hint(g, part)})")
    raise WhatifError(_unknown(g, part, where))


def _device(g: Graph, name: str, part: str, where: str) -> str:
    if name in g.switch or name in g.host_index:
        return name
    raise WhatifError(_unknown(g, name, where or f" in {part!r}"))


def _unknown(g: Graph, name: str, where: str) -> str:
    # `spine-5` for `spine-05` is the common slip: same words and numbers, other padding.
    guess = g.by_key.get(natural_key(name)) or closest(name, [*g.switch, "all-single"])
    if guess:
        hint = f"did you mean {guess!r}?"
    else:
        examples = [g.by_role[r][0] for r in ROLES if g.by_role[r]]
        hint = "switches are named like " + ", ".join(repr(e) for e in examples)
    return f"unknown switch {name!r}{where} ({hint})"


def _no_cable(g: Graph, a: str, z: str, where: str) -> str:
    if a in g.switch:
        near = [*g.up[a], *g.down[a]]
        near += [h for (h, leaf) in g.bundle if leaf == a and h in g.host_index]
    else:
        near = [leaf for (h, leaf) in g.bundle if h == a]
    guess = closest(z, near)
    if guess:
        hint = f"did you mean '{a}:{guess}'?"
    else:
        shown = sorted((n for n in near if n in g.switch), key=natural_key)
        more = f", ... ({len(shown)} in all)" if len(shown) > 6 else ""
        hint = f"{a} is cabled to {', '.join(shown[:6])}{more}" if shown else \
            f"{a} has no cables"
    return f"no cable between {a!r} and {z!r} in the cabling plan{where} ({hint})"


# fabgen's former cable ids (c000123, counted in build order); today's name the port a cable
# is anchored at (c-su1-r0-001, c-pod2-s05-065).
_LEGACY_ID = re.compile(r"^c\d+$", re.IGNORECASE)
_CABLE_LIKE = re.compile(r"^[a-z]-[a-z0-9-]*-\d+$", re.IGNORECASE)


def _unpadded(text: str) -> str:
    return re.sub(r"\d+", lambda m: str(int(m.group())), text.lower())


def _cable_hint(g: Graph, part: str) -> str:
    if not g.cable_ids:
        return "the plan has no cables"
    span = f"cable ids run {g.cable_ids[0]}..{g.cable_ids[-1]}"
    if _LEGACY_ID.match(part):
        return (f"{part!r} is of fabgen's former numbering; cable ids now name the port a "
                f"cable plugs into, as cabling/cabling.csv's id column: {span}")
    # `c-su1-r0-1` for `c-su1-r0-001` is the common slip: same words and numbers, other padding.
    wanted = _unpadded(part)
    guess = next((c for c in g.cable_ids if _unpadded(c) == wanted), None)
    return f"did you mean {guess!r}?" if guess else span


def cable_text(g: Graph, cid: str) -> str:
    link = g.links[cid]
    return f"{link.a_device} port {link.a_port} - {link.z_device} port {link.z_port}"


def all_single(g: Graph) -> list[Scenario]:
    """Every switch, every switch pair's bundle, one cable of each multi-cable bundle (all
    cables of a bundle give the same numbers), and every host cable."""
    out = [Scenario(s.name, "switch", (s.name,)) for s in g.fabric.switches]
    singles: list[Scenario] = []
    for (a, z), ids in g.bundle.items():
        if a not in g.switch:
            continue
        out.append(Scenario(f"{a}:{z}", "link", cables=tuple(ids),
                            detail=f"{len(ids)} cable{'s' if len(ids) > 1 else ''}"))
        if len(ids) > 1:
            singles.append(Scenario(ids[0], "cable", cables=(ids[0],),
                                    detail=f"any 1 of the {len(ids)} cables {a}:{z}"))
    out += singles
    for link in g.fabric.links:
        if link.kind == "node-leaf":
            out.append(Scenario(link.id, "cable", cables=(link.id,),
                                detail=cable_text(g, link.id)))
    return out
