"""OpenSM's ftree check on what is left: per rank, the same port groups on every switch.

InfiniBand only. OpenSM's fabric_validate_topology() (osm_ucast_ftree.c) accepts a plane as a
pure fat-tree when, per rank, every switch has the same number of up-port groups (a group =
the ports to one neighbour) and, above the leaves, of down-port groups, and every group of a rank
has the same number of ports. Each switch is kept as a signature of those four facts; a scenario
changes only the signatures of the switches it touches.
"""

from __future__ import annotations

import itertools
from collections import Counter

from fabgen.topology.model import ROLES, Role
from fabgen.whatif.graph import Graph
from fabgen.whatif.results import Ftree

__all__ = ["FTREE_FALLBACK", "FtreeCheck"]

# OpenSM's construct_fabric() runs fabric_validate_topology() only when no root GUID file is
# configured; osm_ucast_mgr_process() then tries the next listed engine, else minhop.
FTREE_FALLBACK = ("without root_guid_file OpenSM refuses ftree and tries the next engine in "
                  "routing_engine (fabgen lists updn), else its default minhop; with "
                  "root_guid_file (fabgen's opensm.conf sets one once infiniband.guids_file "
                  "gives the real GUIDs) it skips this check and ftree still routes, unevenly")

# (up-port groups, their distinct sizes, down-port groups, their distinct sizes)
_FtreeSig = tuple[int, tuple[int, ...], int, tuple[int, ...]]


class FtreeCheck:
    """Signatures of the intact switches by plane and rank; `active` is False on RoCE."""

    def __init__(self, g: Graph) -> None:
        self.g = g
        self.ft_sig: dict[str, _FtreeSig] = {}
        # Keyed by (plane, role): every plane of an InfiniBand fabric is its own subnet with its
        # own subnet manager, so OpenSM only ever compares switches of one plane.
        self.ft_base: dict[tuple[int, Role], Counter[_FtreeSig]] = {}
        self.ft_names: dict[tuple[int, Role, _FtreeSig], list[str]] = {}
        self.ft_up: dict[str, Counter[int]] = {}  # port-group size -> groups, up and down
        self.ft_down: dict[str, Counter[int]] = {}
        if g.fabric.transport != "infiniband":
            return
        for name, sw in g.switch.items():
            self.ft_up[name] = Counter(g.up[name].values())
            self.ft_down[name] = Counter(g.down[name].values())
            sig = self._sig(sw.role, g.up[name], g.down[name])
            self.ft_sig[name] = sig
            self.ft_base.setdefault((sw.plane, sw.role), Counter())[sig] += 1
            self.ft_names.setdefault((sw.plane, sw.role, sig), []).append(name)

    @property
    def active(self) -> bool:
        return bool(self.ft_sig)

    @staticmethod
    def _sig(role: Role, up: dict[str, int], down: dict[str, int]) -> _FtreeSig:
        # Leaves' down groups are HCAs, which OpenSM allows to be missing: not compared.
        downs = () if role == "leaf" else tuple(sorted(set(down.values())))
        return (len(up), tuple(sorted(set(up.values()))),
                0 if role == "leaf" else len(down), downs)

    def check(self, dead: frozenset[str], lost: dict[tuple[str, str], int],
              changed: set[str]) -> Ftree:
        """The verdict on the cabling left after `dead` switches and `lost` links."""
        up = self.g.up
        # Port-group sizes per changed switch, from its intact histogram and its lost pairs.
        hist: dict[str, tuple[Counter[int], Counter[int]]] = {}
        for (a, z), gone in lost.items():
            size = up[a][z]
            for name, side in ((a, 0), (z, 1)):
                if name in dead:
                    continue
                h = hist.get(name)
                if h is None:
                    h = hist[name] = (Counter(self.ft_up[name]), Counter(self.ft_down[name]))
                h[side][size] -= 1
                if size - gone:
                    h[side][size - gone] += 1
        new: dict[str, _FtreeSig | None] = {}
        for name, (ups, downs) in hist.items():
            role = self.g.switch[name].role
            n_up, n_down = sum(ups.values()), sum(downs.values())
            # A switch with no switch link left is not discovered by the SM at all.
            new[name] = None if not n_up and not n_down else (
                n_up, tuple(sorted(k for k, v in ups.items() if v > 0)),
                0 if role == "leaf" else n_down,
                () if role == "leaf" else tuple(sorted(k for k, v in downs.items() if v > 0)))
        rank = self.g.rank
        planes_left = 0
        for plane in range(self.g.fabric.planes):
            if all(n in dead or new.get(n, 0) is None for n in self.g.by_plane[plane]):
                continue  # nothing left for this plane's subnet manager to route
            planes_left += 1
            for role in ROLES:
                reason = self._rank(plane, role, dead, new, rank)
                if reason:
                    return Ftree(False, reason, FTREE_FALLBACK)
        if not planes_left:
            return Ftree(False, "no switch is left to route", None)
        return Ftree(True)

    def _rank(self, plane: int, role: Role, dead: frozenset[str],
              new: dict[str, _FtreeSig | None], rank: dict[str, int]) -> str | None:
        counter = self.ft_base.get((plane, role))
        if counter is None:
            return None
        switch = self.g.switch
        touched = [n for n in itertools.chain(dead, new)
                   if switch[n].role == role and switch[n].plane == plane]
        if touched:
            counter = Counter(counter)
            for n in touched:
                counter[self.ft_sig[n]] -= 1
            for n in touched:
                sig = new.get(n)
                if sig is not None:
                    counter[sig] += 1
        sigs = [sig for sig, k in counter.items() if k > 0]
        if len(sigs) <= 1 and all(len(sig[1]) <= 1 and len(sig[3]) <= 1 for sig in sigs):
            return None
        skip = dead | new.keys()
        examples: dict[_FtreeSig, str] = {}
        for n in touched:
            sig = new.get(n)
            if sig is not None and (sig not in examples or rank[n] < rank[examples[sig]]):
                examples[sig] = n
        for sig in sigs:
            if sig not in examples:
                examples[sig] = next(n for n in self.ft_names[plane, role, sig] if n not in skip)
        ref = max(sigs, key=lambda sig: (counter[sig], -rank[examples[sig]]))
        return _reason(role, ref, sorted(sigs, key=lambda s: rank[examples[s]]), examples)


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _reason(role: Role, ref: _FtreeSig, sigs: list[_FtreeSig],
            examples: dict[_FtreeSig, str]) -> str | None:
    """The first of OpenSM's fabric_validate_topology() rules the rank breaks, or None."""
    name = examples[ref]
    for sig in sigs:
        if sig[0] != ref[0]:
            return (f"{examples[sig]} has {_n(sig[0], 'up-port group')} but {name} has "
                    f"{ref[0]} (OpenSM ERR AB09: different number of upward port groups)")
    if role != "leaf":
        for sig in sigs:
            if sig[2] != ref[2]:
                return (f"{examples[sig]} has {_n(sig[2], 'down-port group')} but {name} has "
                        f"{ref[2]} (OpenSM ERR AB0A: different number of downward port groups)")
    ref_up = ref[1][0] if ref[1] else None
    for sig in sigs:
        for size in sig[1]:
            if size != ref_up:
                return (f"{examples[sig]} has an up-port group of {_n(size, 'port')} where "
                        f"{name} has {ref_up} (OpenSM ERR AB0B: different number of ports in an "
                        "upward port group)")
    if role != "leaf":
        ref_down = ref[3][0] if ref[3] else None
        for sig in sigs:
            for size in sig[3]:
                if size != ref_down:
                    return (f"{examples[sig]} has a down-port group of {_n(size, 'port')} "
                            f"where {name} has {ref_down} (OpenSM ERR AB0C: different number "
                            "of ports in a downward port group)")
    return None

