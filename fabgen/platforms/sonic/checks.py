"""SONiC's load-time rules: a published HwSKU for each switch model and split (with the buffer
template its DEVICE_METADATA type needs), a buffer model the switch's vendor has, BFD at bfdd's
defaults, and no adaptive load balancing."""

from __future__ import annotations

from fabgen import underlay
from fabgen.catalog.buffers import model_for
from fabgen.errors import Diagnostics
from fabgen.intent.models import Intent
from fabgen.platforms.contract.checks import Checks
from fabgen.platforms.sonic.data import skus
from fabgen.qos import used_platforms
from fabgen.topology import sizing

__all__ = ["CHECKS", "FRR_BFD_DEFAULTS", "SonicChecks"]

NAME = "sonic"
# FRR bfdd's session defaults (FRR user guide, "BFD": detect-multiplier 3, receive-interval and
# transmit-interval 300 ms; bfdd/bfd.h BFD_DEFDETECTMULT, BFD_DEF_REQ_MIN_RX,
# BFD_DEF_DES_MIN_TX). SONiC's BGP schema turns BFD on per peer (`neighbor ... bfd`) and has no
# timer fields; other timers need BFD_PEER_SINGLE_HOP, which no SONiC YANG model covers
# (sonic-buildimage src/sonic-yang-models at 086b03bd70f9), so SONiC runs these.
FRR_BFD_DEFAULTS = (300, 3)  # (interval ms, multiplier)


class SonicChecks(Checks):
    name = NAME

    def check_intent(self, intent: Intent, diags: Diagnostics) -> None:
        hwskus(intent, diags)
        buffer_model(intent, diags)
        tiers = underlay.tiers_in_use(intent)
        if tiers is None or NAME not in tiers.values():
            return
        bfd = intent.underlay.bfd
        if bfd.enabled and (bfd.interval_ms, bfd.multiplier) != FRR_BFD_DEFAULTS:
            field = "interval_ms" if bfd.interval_ms != FRR_BFD_DEFAULTS[0] else "multiplier"
            diags.error(f"SONiC runs BFD at bfdd's defaults ({FRR_BFD_DEFAULTS[0]} ms x "
                        f"{FRR_BFD_DEFAULTS[1]}): its BGP schema has no BFD timers, and the "
                        "table that has (BFD_PEER_SINGLE_HOP) has no SONiC YANG model, so fabgen "
                        "does not write it", ("underlay", "bfd", field),
                        f"use interval_ms {FRR_BFD_DEFAULTS[0]} and multiplier "
                        f"{FRR_BFD_DEFAULTS[1]} with SONiC switches, or another platform")
        if intent.load_balancing.mode == "adaptive":
            diags.error("SONiC has no adaptive routing or dynamic load balancing setting: the "
                        "SONiC YANG models have no such table", ("load_balancing", "mode"),
                        "use mode: hash on SONiC switches")


CHECKS = SonicChecks()


def buffer_model(intent: Intent, diags: Diagnostics) -> None:
    """qos.buffer_model other than auto must be one the switches' vendor has for the model and
    split (catalog.buffers)."""
    q = intent.qos
    if q.buffer_model == "auto":
        return
    roles = used_platforms(intent)
    t = intent.topology
    specs = {"leaf": t.leaf, "spine": t.spine or t.leaf, "core": t.core or t.spine or t.leaf}
    if t.core is None and t.tiers != 3:
        del roles["core"]  # a core tier only exists in three tiers (auto may pick 2)
    # Per model and port split: NVIDIA publishes lookup tables (the traditional model) for
    # some splits of a switch only, and its Mellanox-* SKUs run only the traditional model
    # (catalog.buffers.spectrum.DYNAMIC_MODEL_SKUS).
    by_model: dict[tuple[str, int], list[str]] = {}
    speed = sizing.link_speed(intent)
    for role, platform in roles.items():
        spec = specs[role]
        if platform != NAME or spec.model is None:
            continue
        try:
            split = sizing.resolve_switch(spec, speed, ("topology", role)).breakout
        except sizing.SizingError:
            continue  # the sizing check reports the switch itself
        by_model.setdefault((spec.model, split), []).append(role)
    for (model, split), on in by_model.items():
        buffers = model_for(model, split)
        if buffers is not None and q.buffer_model not in buffers.modes:
            how = f" split {split} ways" if split > 1 else ""
            why = f": {buffers.note}" if buffers.note else ""
            diags.error(f"{model}{how} ({buffers.family}, {'/'.join(on)}) has no SONiC "
                        f"{q.buffer_model} buffer model{why}", ("qos", "buffer_model"),
                        f"use {' or '.join(buffers.modes)}, or auto")


def hwskus(intent: Intent, diags: Diagnostics) -> None:
    """A SONiC switch needs a HwSKU its vendor publishes for its model and split (the image
    finds its port table and buffer templates by that name), and a DEVICE_METADATA type whose
    buffer template that SKU ships (data/skus.py)."""
    try:
        shape = sizing.shape(intent)
    except sizing.SizingError:
        return  # _fit reports it
    topo = intent.topology
    kinds = {"leaf": shape.leaf, "spine": shape.spine}
    if shape.tiers == 3 and shape.core is not None:
        kinds["core"] = shape.core
    platforms = used_platforms(intent)
    blamed: set[tuple[str, ...]] = set()
    for role, kind in kinds.items():
        if platforms[role] != NAME:
            continue
        owner = role if getattr(topo, role) is not None else (
            "spine" if role == "core" and topo.spine is not None else "leaf")
        spec = getattr(topo, owner)
        known = skus.models().get(kind.model)
        sku = known.for_split(kind.breakout) if known is not None else None
        if sku is None:
            field = "breakout" if spec is not None and spec.breakout else "model"
            loc = ("topology", owner, field)
            if loc in blamed:
                continue
            blamed.add(loc)
            if known is None:
                what = "a custom switch" if kind.model == "custom" else kind.model
                hint = ("use a switch model with published SONiC SKUs: "
                        + ", ".join(sorted(skus.models())))
            else:
                what = f"{kind.model} split {kind.breakout} way(s)"
                hint = (f"{kind.model}'s published SKUs: "
                        + ", ".join(f"{s.hwsku} ({s.ports} ports, split {s.split})"
                                    for s in known.skus))
            diags.error(f"SONiC has no published HwSKU for {what}: the image would find no "
                        "port table or buffer templates for it", loc,
                        f"{hint} ({skus.BUILDIMAGE}); or use another platform")
            continue
        device_type = skus.device_type(role, sku)
        template = skus.buffer_template(device_type)
        if template not in sku.buffer_templates:
            diags.error(f"SONiC {role} switches are DEVICE_METADATA type {device_type}, whose "
                        f"buffers need buffers_defaults_{template}.j2; {sku.hwsku} publishes "
                        f"only {', '.join(sku.buffer_templates)}", ("platforms", role),
                        "use a switch model and split whose SKU ships that template, or "
                        "another platform for this tier")
