"""SONiC HwSKUs as the vendors publish them in sonic-buildimage, and the roles their buffer
templates serve.

The data is `skus.yaml` (read at the sonic-buildimage commit named there). A SONiC image
finds a switch's port table (port_config.ini), SAI profile and buffer templates in
device/<vendor>/<platform>/<hwsku>/, so DEVICE_METADATA hwsku must be one of these names and
PORT must carry the lanes and aliases of that port table; a model and split with no published
SKU has no config that boots, and the intent is refused at load (`check`).

DEVICE_METADATA `type` picks the buffer template: sonic-buildimage
files/build_templates/buffers_config.j2 imports buffers_defaults_<postfix>.j2 from the SKU's
directory, the postfix by substring of the lowercased type: "torrouter" -> t0, "leafrouter" ->
t1, "lowerspinerouter" -> lt2, "fabricspinerouter" -> ft2, other "spinerouter" -> t2. A type
whose template the SKU lacks makes `config qos reload` (and the first boot's buffer
generation) fail, so each tier gets SONiC's back-end role and the SKU must publish its template.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

import yaml

__all__ = [
    "BUILDIMAGE",
    "CORE_FALLBACK",
    "ROLE_TYPE",
    "ModelSkus",
    "SonicSku",
    "buffer_template",
    "device_type",
    "models",
    "port_layout",
    "sku_for",
]

BUILDIMAGE = "sonic-net/sonic-buildimage 086b03bd70f9 (2026-08-23)"

# SONiC's back-end roles (sonic-device_metadata.yang `type` pattern: BackEndToRRouter,
# BackEndLeafRouter, BackEndSpineRouter): the GPU fabric is the back-end network of its hosts.
# A leaf is the hosts' ToR (T0), a spine the leaves' leaf router (T1), a core the spines' spine.
ROLE_TYPE: dict[str, str] = {"leaf": "BackEndToRRouter", "spine": "BackEndLeafRouter",
                             "core": "BackEndSpineRouter"}
# A core on a SKU without buffers_defaults_t2.j2 (NVIDIA ships t2 for none of the SKUs here but
# Mellanox-SN4700-C128) is typed as the tier below it, whose t1 template the SKU has: its
# buffers are fabgen's own either way, and the type only picks the template SONiC would
# regenerate them from (`config qos reload`).
CORE_FALLBACK = "BackEndLeafRouter"


def device_type(role: str, sku: SonicSku) -> str:
    """DEVICE_METADATA type of a switch of this role on this SKU (see ROLE_TYPE)."""
    wanted = ROLE_TYPE[role]
    if role == "core" and buffer_template(wanted) not in sku.buffer_templates:
        return CORE_FALLBACK
    return wanted


def buffer_template(device_type: str) -> str | None:
    """The buffers_defaults_<postfix>.j2 buffers_config.j2 imports for a DEVICE_METADATA type
    (its if-chain, in its order); None where it falls back to the platform default."""
    role = device_type.lower()
    if "mgmt" in role:
        return None
    if "torrouter" in role:
        return "t0"
    if "leafrouter" in role:
        return "t1"
    if "lowerspinerouter" in role:
        return "lt2"
    if role == "fabricspinerouter":
        return "ft2"
    if "spinerouter" in role:
        return "t2"
    return None


@dataclass(frozen=True, slots=True)
class SonicSku:
    hwsku: str
    split: int  # logical ports per front-panel cage
    ports: int  # front-panel ports (port_config.ini may list more, `extra_ports`)
    lanes_per_port: int
    buffer_templates: tuple[str, ...]  # postfixes of the SKU's buffers_defaults_<t>.j2
    buffer_models: tuple[str, ...]  # "dynamic", "traditional"
    extra_ports: tuple[str, ...]
    # port_config.ini rows (name, lanes, alias, index)
    published: tuple[tuple[str, str, str, int], ...]


@dataclass(frozen=True, slots=True)
class ModelSkus:
    model: str
    platform: str
    cage_first_lanes: tuple[int, ...]  # first SerDes lane of cage 1, 2, ...
    skus: tuple[SonicSku, ...]

    def for_split(self, split: int) -> SonicSku | None:
        return next((s for s in self.skus if s.split == split), None)


def _row(text: str) -> tuple[str, str, str, int]:
    name, lanes, alias, index = text.split()
    return name, lanes, alias, int(index)


@cache
def models() -> dict[str, ModelSkus]:
    """Every catalog switch model with published SONiC SKUs."""
    raw: dict[str, Any] = yaml.safe_load(
        (files("fabgen.platforms.sonic.data") / "skus.yaml").read_text(encoding="utf-8"))
    out: dict[str, ModelSkus] = {}
    for model, d in raw.items():
        skus = tuple(
            SonicSku(hwsku=name, split=int(s["split"]), ports=int(s["ports"]),
                     lanes_per_port=int(s["lanes_per_port"]),
                     buffer_templates=tuple(s["buffer_templates"]),
                     buffer_models=tuple(s["buffer_models"]),
                     extra_ports=tuple(s["extra_ports"]),
                     published=tuple(_row(r) for r in s["published"]))
            for name, s in d["skus"].items())
        cages = max(s.ports // s.split for s in skus)
        if "cage_first_lanes" in d:
            first = tuple(int(x) for x in d["cage_first_lanes"])
        else:
            first = tuple(n * int(d["cage_lane_stride"]) for n in range(cages))
        out[model] = ModelSkus(model, d["platform"], first, skus)
    return out


def sku_for(model: str, split: int) -> SonicSku | None:
    """The published SKU of a catalog model split `split` ways, or None."""
    known = models().get(model)
    return known.for_split(split) if known is not None else None


@cache
def port_layout(model: str, split: int) -> tuple[tuple[int, str, str], ...]:
    """(index, "lane,lane,...", alias) of logical ports 1..ports of a published SKU, as its
    port_config.ini lists them: cage n's first lane from the model's lane map, a split port
    `lanes_per_port` further per sub-port; alias etp<cage> unsplit, etp<cage>a, b, ... split
    (NVIDIA's and Arista's SONiC port tables alike)."""
    known = models()[model]
    sku = known.for_split(split)
    if sku is None:
        raise ValueError(f"no published SONiC SKU for {model} split {split} ways")
    out = []
    for number in range(sku.ports):
        cage, sub = divmod(number, split)
        first = known.cage_first_lanes[cage] + sub * sku.lanes_per_port
        lanes = ",".join(str(lane) for lane in range(first, first + sku.lanes_per_port))
        alias = f"etp{cage + 1}" + ("" if split == 1 else "abcdefgh"[sub])
        out.append((cage + 1, lanes, alias))
    return tuple(out)
