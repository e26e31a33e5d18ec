"""Cells of the report's PFC headroom table that every platform's rows share: the port class
names, a profile's bytes, a cable length, the lengths a group of switches' ports use."""

from __future__ import annotations

from fabgen.catalog.buffers import PgProfile
from fabgen.qos import QosPlan
from fabgen.targets.base import RenderContext
from fabgen.targets.cable_lengths import cable_lengths
from fabgen.topology.model import Switch

__all__ = ["CLASS", "cable_cell", "lengths", "pg_bytes"]

CLASS = {"node-leaf": "host ports", "leaf-spine": "leaf-spine", "spine-core": "spine-core"}


def pg_bytes(p: PgProfile) -> str:
    text = f"xon {p.xon} / xoff {p.xoff} / size {p.size}"
    if p.xon_offset is not None:
        text += f" / xon_offset {p.xon_offset}"
    return text + " B"


def cable_cell(plan: QosPlan, kind: str, metres: int) -> str:
    return f"{metres} m" + ("" if metres == plan.cable_m(kind) else " (measured)")


def lengths(ctx: RenderContext, switches: list[Switch]) -> list[tuple[str, int]]:
    """The distinct (port class, cable length) of these switches' cabled ports."""
    lengths = ctx.derived(cable_lengths)
    found: set[tuple[str, int]] = set()
    for switch in switches:
        for kind, metres in lengths.on_ports(switch.name, ctx.index.ports(switch)).items():
            found.update((kind, m) for m in metres)
    return sorted(found, key=lambda km: (list(CLASS).index(km[0]), km[1]))
