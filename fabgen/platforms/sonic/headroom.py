"""SONiC's rows of the report's PFC headroom table, from the buffer tables its configs carry
(target.switch_buffers: buffermgrd's rules over the vendor's model, catalog.buffers)."""

from __future__ import annotations

from fabgen.catalog.buffers import spectrum
from fabgen.platforms.common.headroom import CLASS, cable_cell, pg_bytes
from fabgen.platforms.sonic.target import switch_buffers
from fabgen.qos import QosPlan
from fabgen.targets.base import RenderContext
from fabgen.topology.model import Switch

__all__ = ["footnotes", "headroom_rows"]


def headroom_rows(ctx: RenderContext, switches: list[Switch],
                  plan: QosPlan) -> list[dict[str, str]]:
    """The rows of one group of SONiC switches: per port class and cable length, the
    profile the switch runs (buffermgrd's rules: sonic.buffers) and the vendor's table beside
    it."""
    rows: list[tuple[tuple[int, int], dict[str, str]]] = []
    seen: set[tuple[str, int]] = set()
    for switch in switches:
        rows.extend(_switch_rows(ctx, switch, plan, seen))
    # By port class, then cable length (sorted is stable: one switch's order otherwise).
    return [row for _, row in sorted(rows, key=lambda kr: kr[0])]


def _switch_rows(ctx: RenderContext, switch: Switch, plan: QosPlan,
                       seen: set[tuple[str, int]]
                       ) -> list[tuple[tuple[int, int], dict[str, str]]]:
    result = switch_buffers(ctx, switch)
    model = result.model
    rows: list[tuple[tuple[int, int], dict[str, str]]] = []
    for head in result.ports:
        if (head.port.kind, head.port.cable_m) in seen:
            continue
        seen.add((head.port.kind, head.port.cable_m))
        order = (list(CLASS).index(head.port.kind), head.port.cable_m)
        base = {"platform": "SONiC", "switch": f"{switch.role} {switch.model}",
                "class": CLASS[head.port.kind], "speed": f"{head.port.speed_gbps}G",
                "cable": cable_cell(plan, head.port.kind, head.port.cable_m)}
        d = head.derivation
        if model is None or model.layout is None or head.profile is None:
            note = model.note if model is not None else "custom switch: no vendor model"
            rows.append((order, {**base, "model": f"{result.mode} (platform lookup table)",
                                 "inputs": "-", "formula": "-",
                                 "result": "not sized by fabgen", "vendor": note or "-",
                                 "status": "NOT SIZED"}))
            continue
        if result.mode == "dynamic":
            how = "dynamic: buffermgrd computes it (buffer_headroom_mellanox.lua)"
            status = "computed on the switch; value shown as buffermgrd derives it"
        elif head.rebuilt_by_buffermgrd:
            how = f"traditional: {model.sku} table row {head.cable_key_m} m"
            status = "vendor table" if head.sized else "NOT SIZED"
        elif head.sized:
            how = f"traditional: past the {model.sku} table, same formula"
            status = "vendor formula"
        else:
            how = f"traditional: {model.sku} longest row"
            status = "NOT SIZED for this length"
        vendor = "-"
        if d is not None and d.vendor is not None:
            vendor = ("= published row" if d.vendor == head.profile else
                      f"{model.sku} traditional table ({head.port.cable_m} m): "
                      f"{pg_bytes(d.vendor)}")
        elif model.table is not None and result.mode == "traditional" and head.sized \
                and head.rebuilt_by_buffermgrd:
            vendor = "= published row"
        rows.append((order, {
            **base,
            "model": f"{model.family}, {how}",
            "inputs": "; ".join(f"{k} {v}" for k, v in d.inputs) if d else "Arista table",
            "formula": "(1) sonic-swss buffer_headroom_mellanox.lua" if d
            else "vendor table, no public formula",
            "result": pg_bytes(head.profile),
            "vendor": vendor,
            "status": status,
        }))
    return rows


def footnotes(rows: list[dict[str, str]]) -> list[str]:
    """The formula the rows cite as (1): sonic-swss's headroom calculation."""
    if any(r["formula"].startswith("(1)") for r in rows):
        return [f"(1) {spectrum.FORMULA}; rounded up to 1 KiB (ceil1K)"]
    return []
