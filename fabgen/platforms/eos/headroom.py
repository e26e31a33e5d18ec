"""EOS's rows of the report's PFC headroom table: no public EOS headroom model, so the rows say
NOT SIZED and quote Arista's SONiC table for the same hardware (catalog.buffers.tomahawk)."""

from __future__ import annotations

from fabgen.catalog import buffers
from fabgen.platforms.common.headroom import CLASS, cable_cell, lengths, pg_bytes
from fabgen.qos import QosPlan
from fabgen.targets.base import RenderContext
from fabgen.topology.model import Switch

__all__ = ["headroom_rows"]


def headroom_rows(ctx: RenderContext, switches: list[Switch],
                  plan: QosPlan) -> list[dict[str, str]]:
    """The rows of one group of EOS switches: EOS's default MMU, not sized, with Arista's
    published SONiC table for the same SKU beside it."""
    switch = switches[0]
    model = buffers.model_for(switch.model, switch.breakout)
    vendor = "-"
    if model is not None and model.table is not None:
        speed = switch.speed_gbps * 1000
        cables = model.table.cables(speed)
        if cables:
            vendor = (f"Arista SONiC {model.sku}: "
                      f"{pg_bytes(model.table.rows[speed, cables[-1]])} (<= {cables[-1]} m)")
    return [{"platform": "Arista EOS", "switch": f"{switch.role} {switch.model}",
             "class": CLASS[k], "speed": f"{switch.speed_gbps}G",
             "cable": cable_cell(plan, k, m), "model": "EOS default MMU",
             "inputs": "-", "formula": "no public EOS model", "result": "EOS default",
             "vendor": vendor, "status": "NOT SIZED"} for k, m in lengths(ctx, switches)]
