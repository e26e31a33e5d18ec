"""The report's PFC headroom table: per platform, switch model and port class, what headroom
the switch gets, from which inputs and formula, and the vendor's published value beside it.

Rows are computed from the same code the switch targets render from (sonic.switch_buffers,
eos.headroom_notes, NVUE's cable-length rule), so the report cannot claim sizing the configs
do not have: every row says whether the value is the vendor's, computed on the switch, or not
sized at all.
"""

from __future__ import annotations

from fabgen.catalog import buffers
from fabgen.catalog.buffers import PgProfile
from fabgen.qos import QosPlan
from fabgen.targets.base import RenderContext
from fabgen.targets.cable_lengths import CableLengths, cable_lengths
from fabgen.topology.model import Switch

__all__ = ["headroom_formulas", "headroom_notes", "headroom_rows"]

_CLASS = {"node-leaf": "host ports", "leaf-spine": "leaf-spine", "spine-core": "spine-core"}


def _bytes(p: PgProfile) -> str:
    text = f"xon {p.xon} / xoff {p.xoff} / size {p.size}"
    if p.xon_offset is not None:
        text += f" / xon_offset {p.xon_offset}"
    return text + " B"


def _representatives(ctx: RenderContext) -> list[list[Switch]]:
    """Per (platform, role, model, split) the switches whose headroom the table must show:
    the first (they all get the same headroom from the class lengths), and every switch with
    a measured cable, whose ports may need another row."""
    lengths = ctx.derived(cable_lengths)
    seen: dict[tuple[str, str, str, int], list[Switch]] = {}
    for switch in ctx.fabric.switches:
        key = (switch.platform, switch.role, switch.model, switch.breakout)
        if key not in seen:
            seen[key] = [switch]
        elif lengths.device_key(switch.name):
            seen[key].append(switch)
    return list(seen.values())


def _cable(plan: QosPlan, kind: str, metres: int) -> str:
    return f"{metres} m" + ("" if metres == plan.cable_m(kind) else " (measured)")


def _lengths(ctx: RenderContext, switches: list[Switch]) -> list[tuple[str, int]]:
    """The distinct (port class, cable length) of these switches' cabled ports."""
    lengths = ctx.derived(cable_lengths)
    found: set[tuple[str, int]] = set()
    for switch in switches:
        for kind, metres in lengths.on_ports(switch.name, ctx.index.ports(switch)).items():
            found.update((kind, m) for m in metres)
    return sorted(found, key=lambda km: (list(_CLASS).index(km[0]), km[1]))


def _sonic_rows(ctx: RenderContext, switches: list[Switch],
                plan: QosPlan) -> list[dict[str, str]]:

    rows: list[tuple[tuple[int, int], dict[str, str]]] = []
    seen: set[tuple[str, int]] = set()
    for switch in switches:
        rows.extend(_sonic_switch_rows(ctx, switch, plan, seen))
    # By port class, then cable length (sorted is stable: one switch's order otherwise).
    return [row for _, row in sorted(rows, key=lambda kr: kr[0])]


def _sonic_switch_rows(ctx: RenderContext, switch: Switch, plan: QosPlan,
                       seen: set[tuple[str, int]]
                       ) -> list[tuple[tuple[int, int], dict[str, str]]]:
    from fabgen.targets import sonic

    result = sonic.switch_buffers(ctx, switch)
    model = result.model
    rows: list[tuple[tuple[int, int], dict[str, str]]] = []
    for head in result.ports:
        if (head.port.kind, head.port.cable_m) in seen:
            continue
        seen.add((head.port.kind, head.port.cable_m))
        order = (list(_CLASS).index(head.port.kind), head.port.cable_m)
        base = {"platform": "SONiC", "switch": f"{switch.role} {switch.model}",
                "class": _CLASS[head.port.kind], "speed": f"{head.port.speed_gbps}G",
                "cable": _cable(plan, head.port.kind, head.port.cable_m)}
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
                      f"{_bytes(d.vendor)}")
        elif model.table is not None and result.mode == "traditional" and head.sized \
                and head.rebuilt_by_buffermgrd:
            vendor = "= published row"
        rows.append((order, {
            **base,
            "model": f"{model.family}, {how}",
            "inputs": "; ".join(f"{k} {v}" for k, v in d.inputs) if d else "Arista table",
            "formula": "(1) sonic-swss buffer_headroom_mellanox.lua" if d
            else "vendor table, no public formula",
            "result": _bytes(head.profile),
            "vendor": vendor,
            "status": status,
        }))
    return rows


def _nvue_rows(ctx: RenderContext, switches: list[Switch],
               plan: QosPlan) -> list[dict[str, str]]:
    from fabgen.targets import nvue

    lengths = ctx.derived(cable_lengths)
    found: dict[tuple[int, int, str], dict[str, str]] = {}
    for switch in switches:
        default, own = nvue.pfc_cable_lengths(ctx, switch)
        ports = ctx.index.ports(switch)
        cables = [(p.kind, lengths.link_m(p.link), own.get(p.name)) for p in ports] or [
            ("leaf-spine", plan.cable_m("leaf-spine"), None)]
        for kind, metres, profile_m in cables:
            if profile_m is None:
                inputs = f"cable-length {default} m (longest class on this switch)"
            else:
                inputs = (f"cable-length {profile_m} m (PFC profile "
                          f"{nvue.measured_profile(profile_m)} of its own)")
            key = (list(_CLASS).index(kind), metres, inputs)
            found.setdefault(key, {
                "platform": "Cumulus NVUE", "switch": f"{switch.role} {switch.model}",
                "class": _CLASS[kind], "speed": f"{switch.speed_gbps}G",
                "cable": _cable(plan, kind, metres), "model": "Cumulus (qos pfc cable-length)",
                "inputs": inputs, "formula": "Cumulus internal, not published",
                "result": "computed on the switch", "vendor": "-",
                "status": "computed on the switch"})
    return [found[key] for key in sorted(found)]


def _eos_rows(ctx: RenderContext, switches: list[Switch],
              plan: QosPlan) -> list[dict[str, str]]:
    switch = switches[0]
    model = buffers.model_for(switch.model, switch.breakout)
    vendor = "-"
    if model is not None and model.table is not None:
        speed = switch.speed_gbps * 1000
        cables = model.table.cables(speed)
        if cables:
            vendor = (f"Arista SONiC {model.sku}: "
                      f"{_bytes(model.table.rows[speed, cables[-1]])} (<= {cables[-1]} m)")
    return [{"platform": "Arista EOS", "switch": f"{switch.role} {switch.model}",
             "class": _CLASS[k], "speed": f"{switch.speed_gbps}G",
             "cable": _cable(plan, k, m), "model": "EOS default MMU",
             "inputs": "-", "formula": "no public EOS model", "result": "EOS default",
             "vendor": vendor, "status": "NOT SIZED"} for k, m in _lengths(ctx, switches)]


def _unmodelled_rows(ctx: RenderContext, switches: list[Switch],
                     plan: QosPlan) -> list[dict[str, str]]:
    """A platform without a headroom statement of its own (one added by the platform recipe
    before its buffer story is written): the report says so instead of implying sizing."""
    switch = switches[0]
    return [{"platform": switch.platform, "switch": f"{switch.role} {switch.model}",
             "class": _CLASS[k], "speed": f"{switch.speed_gbps}G",
             "cable": _cable(plan, k, m), "model": "none", "inputs": "-",
             "formula": f"fabgen has no headroom model for {switch.platform}",
             "result": "platform default", "vendor": "-", "status": "NOT SIZED"}
            for k, m in _lengths(ctx, switches)]


def headroom_rows(ctx: RenderContext) -> list[dict[str, str]]:
    plan = ctx.qos
    if plan is None:
        return []
    rows: list[dict[str, str]] = []
    builders = {"sonic": _sonic_rows, "nvue": _nvue_rows, "eos": _eos_rows}
    for switches in _representatives(ctx):
        platform = switches[0].platform
        rows.extend(builders.get(platform, _unmodelled_rows)(ctx, switches, plan))
    return rows


def headroom_formulas(rows: list[dict[str, str]]) -> list[str]:
    """The formulas the table's rows refer to, printed once under it."""
    from fabgen.catalog.buffers import spectrum

    if any(r["formula"].startswith("(1)") for r in rows):
        return [f"(1) {spectrum.FORMULA}; rounded up to 1 KiB (ceil1K)"]
    return []


def headroom_notes(plan: QosPlan, measured: CableLengths | None = None) -> list[str]:
    lengths = [f"hosts {plan.cable_length_m} m (also the NICs' mlnx_qos --cable_len)",
               f"leaf-spine {plan.fabric_cable_length_m} m"]
    if plan.core_cable_length_m is not None:
        lengths.append(f"spine-core {plan.core_cable_length_m} m")
    notes = ["PFC headroom cable lengths: " + ", ".join(lengths)]
    if measured is not None and measured.by_link:
        sources = sorted({m.source.rsplit(":", 1)[0] if ":" in m.source else "qos.cable_lengths"
                          for m in measured.by_link.values()})
        longer = sum(1 for m in measured.by_link.values() if m.metres > m.class_m)
        notes.append(f"Measured cable lengths: {len(measured.by_link)} cables "
                     f"({', '.join(sources)}) replace their class's length on both ends, "
                     f"{longer} of them longer than it (more headroom on those ports)")
    if plan.cable_defaults:
        notes.append("Default (not measured) cable lengths: "
                     + ", ".join(f"qos.{f}" for f in plan.cable_defaults))
    return notes
