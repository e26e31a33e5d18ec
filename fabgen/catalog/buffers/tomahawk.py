"""Broadcom Tomahawk 5 buffers, as Arista publishes them for the 7060X6 in SONiC.

Broadcom's MMU headroom model for Tomahawk 5 is not public (its MMU guide is under NDA), and
SONiC has no Broadcom headroom calculation (buffermgrd's dynamic model needs a vendor
buffer_headroom_<vendor>.lua; sonic-swss ships none for Broadcom). What is public is Arista's
SONiC buffer configuration per 7060X6 SKU, which fabgen uses verbatim:

  [ARISTA] sonic-net/sonic-buildimage@086b03bd70f9 device/arista/x86_64-arista_7060x6_64pe/
           <SKU>/pg_profile_lookup.ini and buffers_defaults_t1.j2 (Arista-7060X6-64PE-O128S2,
           "Add QoS settings", #22432; Arista-7060X6-64PE-256x200G/BALANCED, #19570/#19849).

Those rows give the same xoff for every cable length they list: lossless PGs draw their xoff
from a shared headroom pool (the ingress_lossless_pool `xoff`), sized by Arista for the SKU.
The 64x800G SKU (Arista-7060X6-64PE, device/common/profiles/th5/gen/BALANCED) publishes no
lossless rows and no-op buffer templates, and a generic Tomahawk 5 has no public numbers at
all: for those `model_for` returns a model without a table, or None.
"""

from __future__ import annotations

from functools import cache

from fabgen.catalog.buffers.model import BufferModel, LookupTable, PgProfile, PoolLayout

__all__ = ["LAYOUTS", "TABLES", "model_for"]

_SOURCE = "sonic-net/sonic-buildimage@086b03bd70f9 device/arista/x86_64-arista_7060x6_64pe"
_O128S2 = "Arista-7060X6-64PE-O128S2"
_V256 = "Arista-7060X6-64PE-256x200G"

# [ARISTA] pg_profile_lookup.ini rows: speed cable size xon xoff threshold xon_offset.
_ROW_400G = PgProfile(size=18796, xon=0, xoff=612140, threshold=0, xon_offset=3556)
_ROW_200G = PgProfile(size=18796, xon=0, xoff=300990, threshold=0, xon_offset=3556)
TABLES: dict[str, LookupTable] = {
    _O128S2: LookupTable(_O128S2, f"{_SOURCE}/{_O128S2}/pg_profile_lookup.ini",
                         {(400000, c): _ROW_400G for c in (5, 40, 150)}),
    _V256: LookupTable(_V256, f"{_SOURCE}/{_V256}/BALANCED/pg_profile_lookup.ini",
                       {(s, c): _ROW_200G for s in (100000, 200000) for c in (5, 40)}),
}


def _layout(sku: str, pool: int, xoff: int, egress_mode: str, egress_lossy_th: str,
            egress_lossless_th: str, path: str) -> PoolLayout:
    """[ARISTA] buffers_defaults_t1.j2 of the SKU: one ingress pool with a shared headroom
    pool (xoff), and Arista's three profiles; sizes as published (no model to recompute them)."""
    return PoolLayout(
        mmu_bytes=pool,
        ingress_pools=("ingress_lossless_pool",),
        lossless_pool="ingress_lossless_pool",
        lossy_pg_profile="ingress_lossy_profile",
        lossless_queue_profile="egress_lossless_profile",
        lossy_queue_profile="egress_lossy_profile",
        profiles={
            "ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "0",
                                      "static_th": "167546528"},
            "egress_lossy_profile": {"pool": "egress_lossless_pool", "size": "1778",
                                     "dynamic_th": egress_lossy_th},
            "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0",
                                        "static_th": egress_lossless_th},
        },
        pools={
            "ingress_lossless_pool": {"type": "ingress", "mode": "dynamic"},
            "egress_lossless_pool": {"type": "egress", "mode": egress_mode},
        },
        fixed_sizes={
            "ingress_lossless_pool": {"size": str(pool), "xoff": str(xoff)},
            "egress_lossless_pool": {"size": str(pool)},
        },
        source=f"{_SOURCE}/{sku}/{path}",
    )


LAYOUTS: dict[str, PoolLayout] = {
    _O128S2: _layout(_O128S2, 166_115_492, 29_423_360, "dynamic", "0", "167546528",
                     "buffers_defaults_t1.j2"),
    _V256: _layout(_V256, 121_964_196, 29_520_896, "static", "1", "125995684",
                   "BALANCED/buffers_defaults_t1.j2"),
}
SKUS = {("7060x6-64pe", 2): _O128S2, ("7060x6-64pe", 4): _V256}
_UNPUBLISHED = {
    "7060x6-64pe": ("Arista publishes no lossless buffer values for this 7060X6 split (the "
                    "64x800G SKU's lookup table is empty and its buffer templates are no-ops)"),
    "th5-51t": ("Broadcom publishes no Tomahawk 5 headroom model or table (the MMU guide is "
                "under NDA)"),
}


@cache
def model_for(model: str, breakout: int) -> BufferModel | None:
    if model not in _UNPUBLISHED:
        return None
    sku = SKUS.get((model, breakout))
    return BufferModel(
        family="Broadcom Tomahawk 5",
        asic="tomahawk-5",
        sku=sku or "",
        vendor="broadcom",
        # SONiC's default: init_cfg.json.j2 writes "traditional" unless the platform's rules.mk
        # sets SONIC_BUFFER_MODEL (broadcom's does not), and no Broadcom headroom lua exists.
        default_mode="traditional",
        modes=("traditional",),
        default_mode_source="sonic-buildimage files/build_templates/init_cfg.json.j2",
        table=TABLES.get(sku) if sku else None,
        layout=LAYOUTS.get(sku) if sku else None,
        note="" if sku else _UNPUBLISHED[model],
    )
