"""Numbers that stay put when the fabric grows: loopbacks, ASNs, /31s, GUID ordinals, cable ids.

Every number is a function of where a thing is (its scalable unit, plane, position, port) and
never of how many things were built before it, so a fabric with one more unit, or more nodes
in a unit that was built in full, keeps every number it had and adds new ones. The plan, as an
IPAM sheet would hold it:

- **Leaves** are numbered by unit, then plane, then position in the unit: leaf ordinal
  `(unit * planes + plane) * leaf_block + position`, `leaf_block` being a full unit's leaves.
  A new unit's leaves come after every existing one. The ordinal is the leaf's place in the
  loopback pool (from its bottom, after the network address), its ASN (`leaf_start +
  ordinal`) and the start of its block of /31s.
- **The spine layer** (spines and cores) is numbered in the order growth adds it: the spines
  and cores a one-unit fabric has, then those a second unit adds, and so on (spines before
  cores, then by plane, pod or group, index). Sizing decides how many spines and cores each
  unit count needs (`sizing.layers`); a switch added by growth takes the next number, and one
  that growth would take away keeps its number. Spine-layer loopbacks come from the top of the
  pool downwards, spines' /31 blocks from the top of the p2p pool downwards.
- Leaves grow up from the bottom of each pool and the spine layer down from its top, so
  neither needs the other's size: nothing moves until they meet, which the intent's checks
  report as a pool too small. No maximum fabric has to be guessed or reserved.
- **/31 blocks per switch, from the radix**: a leaf gets a block of the next power of two at
  or above the ports it can give to uplinks (its radix less its host ports), an aligned subnet
  whose n-th /31 is its n-th uplink port's; a spine (3 tiers) likewise for its core-facing
  ports. A leaf keeps its uplinks' /31s when the spines above it change.
- **Hosts**: the n-th compute port of node i takes /31 number `i * ports + n` of the hosts
  pool (and IPoIB address likewise after the subnet-manager hosts'): nodes are only appended.
- **Cable ids** name the switch port the cable is anchored at: a host's, subnet-manager
  host's or uplink cable at its leaf's port (`c-su1-r0-001`, `c-su1-r0-033`), a spine-core
  cable at the spine's port (`c-pod2-s05-065`), an MLAG peer link at the pair's first leaf.
  The lower end of a switch-to-switch cable is the one that stays when growth adds spines or
  cores, so a cable that must move to a new upper switch keeps its id. `c-`, `s-`, `m-`: the
  compute, storage and management networks; `p<n>-` the plane of a multi-plane fabric.

What a change of tiers (2 to 3, when the spines cannot take another unit) does: spines are
renamed into pods and every leaf's uplinks go to new spines, so the spine layer is numbered
anew; leaves keep their loopbacks, ASNs and uplink /31s, hosts their addresses, and host
cables their ids.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabgen.topology import sizing
from fabgen.topology.model import Role

# Cable id prefix per network (the compute fabric and the separate storage and management
# networks share a hall and a labelling scheme, so their ids must not collide).
CABLE_PREFIX = {"compute": "c", "storage": "s", "management": "m"}


def pow2(n: int) -> int:
    """The smallest power of two at or above n (1 for n <= 1)."""
    return 1 << max(n - 1, 0).bit_length()


@dataclass(frozen=True, slots=True)
class Numbering:
    """The stable numbers of one network (see the module docstring)."""

    planes: int
    leaf_block: int  # leaves numbered per unit and plane
    leaf_up_offset: int  # a leaf's uplinks are its ports leaf_up_offset+1..
    leaf_p2p_block: int  # /31s per leaf
    spine_p2p_block: int  # /31s per spine (0 in 2 tiers)
    spine_up_offset: int  # the lowest port before a spine's core-facing ones, at any pod size
    # (role, plane, pod or group, index) -> ordinal in the spine layer (loopbacks)
    layer: dict[tuple[Role, int, int, int], int]
    # (plane, pod, index) -> ordinal among the spines (their /31 blocks)
    spines: dict[tuple[int, int, int], int]
    leaves: int  # leaf ordinals in use: the highest built + 1
    layer_count: int  # spine-layer ordinals handed out (some may be held for a switch growth
    # took away)
    spine_count: int

    def leaf(self, plane: int, unit: int, position: int) -> int:
        return (unit * self.planes + plane) * self.leaf_block + position

    def leaf_uplink(self, leaf: int, port: int) -> int:
        """The /31 (its number from the bottom of the p2p pool) of a leaf's uplink port."""
        return leaf * self.leaf_p2p_block + port - self.leaf_up_offset - 1

    def spine_uplink(self, spine: int, port: int, pool_31s: int) -> int:
        """The /31 of a spine's core-facing port: the spine's block counts down from the top
        of the p2p pool (`pool_31s` /31s), its ports up within the block."""
        return pool_31s - (spine + 1) * self.spine_p2p_block + port - self.spine_up_offset - 1

    @property
    def p2p_31s(self) -> int:
        """/31s the plan reaches into the p2p pool, both ends counted."""
        return self.leaves * self.leaf_p2p_block + self.spine_count * self.spine_p2p_block


def plan(shape: sizing.Shape, leaf_ports: int) -> Numbering:
    """The numbering of a sized network. `leaf_ports`: the ports a leaf's hosts and uplinks may
    use (its radix less an MLAG peer link's)."""
    upper = shape.upper
    if upper is None:
        raise ValueError("a Shape from sizing.shape carries its Upper")
    layer: dict[tuple[Role, int, int, int], int] = {}
    spines: dict[tuple[int, int, int], int] = {}
    seen: tuple[int, int, int] | None = None
    # Growth, one unit at a time: what each unit count adds takes the next numbers.
    for units in range(1, shape.units + 1):
        at = sizing.layers(upper, units, shape.tiers)
        if at is None:  # fewer units than a fabric that fits always fit
            raise ValueError(f"{units} units do not fit at {shape.tiers} tiers")
        if (at.pods, at.spines_per_pod, at.cores_per_group) == seen:
            continue
        seen = (at.pods, at.spines_per_pod, at.cores_per_group)
        for plane in range(shape.planes):
            for pod in range(at.pods):
                for index in range(at.spines_per_pod):
                    if ("spine", plane, pod, index) not in layer:
                        layer["spine", plane, pod, index] = len(layer)
                        spines[plane, pod, index] = len(spines)
        for plane in range(shape.planes):
            for group in range(at.spines_per_pod if shape.tiers == 3 else 0):
                for index in range(at.cores_per_group):
                    layer.setdefault(("core", plane, group, index), len(layer))
    spine_offset = shape.spine.radix
    if shape.tiers == 3:
        # A spine's core-facing ports: from the lowest they start at in any size of its pod (a
        # pod alone in the fabric is cut to its units and may leave its spines more uplinks),
        # so a spine port keeps its /31 as its pod fills.
        for units in range(1, upper.full_pod_units() + 1):
            at = sizing.layers(upper, units, 3)
            if at is not None:
                spine_offset = min(spine_offset, at.spine_up_offset)
    spine_block = shape.spine.radix - spine_offset
    leaf_block = shape.leaf_block or shape.leaves_per_unit
    return Numbering(
        planes=shape.planes, leaf_block=leaf_block, leaf_up_offset=shape.leaf_up_offset,
        leaf_p2p_block=pow2(leaf_ports - shape.leaf_up_offset),
        spine_p2p_block=pow2(spine_block) if spine_block else 0, spine_up_offset=spine_offset,
        layer=layer, spines=spines,
        leaves=(shape.units * shape.planes - 1) * leaf_block + shape.leaves_per_unit,
        layer_count=len(layer), spine_count=len(spines))


def most_upper(shape: sizing.Shape) -> tuple[int, int]:
    """The most spines per pod (per plane in 2 tiers) and cores per group the fabric reaches as
    it grows at its tier count: the widths of their names' numbers, so that growth never
    renames spine-9 to spine-09."""
    upper = shape.upper
    spines, cores = shape.spines_per_pod, shape.cores_per_group
    if upper is None:
        return spines, cores
    if shape.tiers == 2:
        units = shape.units
        while (at := sizing.layers(upper, units + 1, 2)) is not None:
            units += 1
            spines = max(spines, at.spines_per_pod)
        return spines, cores
    upp = upper.full_pod_units()
    for units in range(1, upp + 1):
        at = sizing.layers(upper, units, 3)
        if at is not None:
            spines = max(spines, at.spines_per_pod)
    # Cores are added with pods; the most pods the cores can reach is their radix.
    for pods in (shape.core.radix if shape.core else 1, shape.pods):
        at = sizing.layers(upper, pods * upp, 3)
        if at is not None:
            cores = max(cores, at.cores_per_group)
    return spines, cores


def port_width(radix: int) -> int:
    """Digits of a port number in a cable id: every port of the switch the same width."""
    return max(2, len(str(radix)))
