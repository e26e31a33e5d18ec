"""The shapes every buffer model shares: a lossless-PG profile, a vendor lookup table
(SONiC's pg_profile_lookup.ini), a derivation the report prints, a SKU's pool layout."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["BufferMode", "BufferModel", "Derivation", "LookupTable", "PgProfile", "PoolLayout"]

BufferMode = Literal["traditional", "dynamic"]


@dataclass(frozen=True, slots=True)
class PgProfile:
    """One lossless priority group's buffer, bytes (a pg_profile_lookup.ini row's values).

    size: buffer reserved for the PG; xoff: headroom above the pause threshold, for the bytes
    still arriving after PFC is sent; xon: the level at which PFC is released. With a shared
    headroom pool (SHP) the xoff comes from the pool, so size < xon + xoff.
    """

    size: int
    xon: int
    xoff: int
    threshold: int = 0  # the PG's dynamic_th (the table's "threshold" column)
    xon_offset: int | None = None

    @property
    def shared_headroom(self) -> bool:
        return self.size < self.xon + self.xoff


@dataclass(frozen=True, slots=True)
class LookupTable:
    """A vendor's pg_profile_lookup.ini: the rows SONiC's buffermgrd builds lossless profiles
    from in the traditional buffer model, keyed by (speed in Mb/s, cable metres)."""

    sku: str
    source: str  # repository path and commit of the file
    rows: dict[tuple[int, int], PgProfile]

    def cables(self, speed_mbps: int) -> tuple[int, ...]:
        return tuple(sorted(c for s, c in self.rows if s == speed_mbps))

    def at_or_above(self, speed_mbps: int, cable_m: int) -> int | None:
        """The shortest row length that covers a cable of `cable_m` metres, or None."""
        return next((c for c in self.cables(speed_mbps) if c >= cable_m), None)


@dataclass(frozen=True, slots=True)
class Derivation:
    """How one headroom value was reached, for the report: inputs, formula, result and the
    vendor's published value for the same inputs where one exists."""

    inputs: tuple[tuple[str, str], ...]
    formula: str
    result: PgProfile
    vendor: PgProfile | None = None
    vendor_source: str = ""


@dataclass(frozen=True, slots=True)
class PoolLayout:
    """The vendor's buffer objects for a SKU: pools, the non-PG profiles, and which profile
    every PG, queue and port list uses (SONiC buffers_defaults_*.j2 / *_objects.j2)."""

    mmu_bytes: int  # the switch's shared buffer (egress_lossless_pool size in SONiC)
    ingress_pools: tuple[str, ...]
    lossless_pool: str  # pool of the lossless PG profiles
    lossy_pg_profile: str
    lossless_queue_profile: str
    lossy_queue_profile: str
    profiles: dict[str, dict[str, str]]  # name -> fields, as config_db writes them
    pools: dict[str, dict[str, str]]  # name -> fields without size (sizes come from a model)
    fixed_sizes: dict[str, dict[str, str]] = field(default_factory=dict)  # published sizes
    ingress_list: tuple[str, ...] = ()  # BUFFER_PORT_INGRESS_PROFILE_LIST (empty: none)
    egress_list: tuple[str, ...] = ()
    source: str = ""


@dataclass(frozen=True, slots=True)
class BufferModel:
    """What fabgen knows of one switch model and port split (one SONiC HwSKU)."""

    family: str  # "NVIDIA Spectrum-4", "Broadcom Tomahawk 5"
    asic: str  # the family module's key: "spectrum-4", "tomahawk-5"
    sku: str
    vendor: Literal["mellanox", "broadcom"]  # SONiC's ASIC_VENDOR: buffermgrd's rules differ
    default_mode: BufferMode
    modes: tuple[BufferMode, ...]
    default_mode_source: str
    table: LookupTable | None
    layout: PoolLayout | None
    note: str = ""  # what the vendor does not publish, for the report and comments
