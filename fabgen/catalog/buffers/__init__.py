"""Switch buffer models: lossless-PG headroom and shared-pool sizes from each vendor's own model.

One module per ASIC family holds the vendor's formula or published table and the source of
every constant beside it (`spectrum` for NVIDIA Spectrum, `tomahawk` for Broadcom Tomahawk 5
as Arista publishes it). `model.py` holds what they share (the shape of a lossless-PG
profile, of a vendor lookup table, of a derivation the report prints), re-exported here with
`model_for(model, breakout)`, the one entry point the targets call.

A switch with no entry (a custom switch, or a SKU whose vendor publishes no numbers) gets
`None`: the targets then render no headroom of their own and say so, rather than guess.
"""

from __future__ import annotations

from fabgen.catalog.buffers import spectrum, tomahawk
from fabgen.catalog.buffers.model import (
    BufferMode,
    BufferModel,
    Derivation,
    LookupTable,
    PgProfile,
    PoolLayout,
)

__all__ = [
    "BufferMode",
    "BufferModel",
    "Derivation",
    "LookupTable",
    "PgProfile",
    "PoolLayout",
    "model_for",
]


def model_for(model: str, breakout: int) -> BufferModel | None:
    """The buffer model of a catalog switch split `breakout` ways, or None when no vendor
    model or table is public for it."""
    return spectrum.model_for(model, breakout) or tomahawk.model_for(model, breakout)
