"""SONiC candidates: config_db.json. fabgen owns exactly the top-level tables the render has,
except DEVICE_METADATA, where it owns only the fields it renders minus `mac`, `platform`,
`hwsku` (the device's own), and the tables in SONIC_MERGED (CoPP, FLEX_COUNTER_TABLE), where it owns
only the rows and fields it renders; every other table (MGMT_*, FEATURE, CRM, AAA, NTP, GNMI,
...) is kept. (SONiC's BGP is in config_db.json, whose FRR config the switch renders itself:
fabgen pushes no frr.conf.)
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ["DEVICE_OWN_METADATA", "SONIC_MERGED", "SONIC_MGMT_TABLES", "hwsku_mismatch",
           "sonic_candidate", "sonic_management", "sonic_owned"]

DEVICE_OWN_METADATA = ("mac", "platform", "hwsku")  # DEVICE_METADATA fields the device owns
# Tables merged row by row and field by field instead of replaced: a counter group the image
# enables and the render does not name (a newer release's default, an operator's
# `counterpoll ... enable`, a POLL_INTERVAL tuned on the switch) stays as it is. Replacing
# FLEX_COUNTER_TABLE would switch those groups off at the next reboot (sonic-swss
# flexcounterorch polls only the groups present in CONFIG_DB).
# CoPP: the switch's own groups and traps (its image's copp_cfg.json is the base) stay beside
# the underlay's rows.
SONIC_MERGED = ("COPP_GROUP", "COPP_TRAP", "FLEX_COUNTER_TABLE")
SONIC_MGMT_TABLES = ("MGMT_INTERFACE", "MGMT_PORT", "MGMT_VRF_CONFIG")


def _rendered_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {f: v for f, v in fields.items() if f not in DEVICE_OWN_METADATA}


def sonic_candidate(running: Mapping[str, Any], render: Mapping[str, Any],
                    change_hwsku: bool = False) -> dict[str, Any]:
    """Every running table the render does not have, unchanged; the rendered tables whole;
    DEVICE_METADATA merged field by field (the device keeps mac, platform, hwsku; with
    `change_hwsku` the render's hwsku is written), the tables of SONIC_MERGED row by row and
    field by field."""
    out = {t: copy.deepcopy(rows) for t, rows in running.items() if t not in render}
    for table, rows in render.items():
        if table == "DEVICE_METADATA" or table in SONIC_MERGED:
            keep = _rendered_fields if table == "DEVICE_METADATA" else dict
            merged = copy.deepcopy(dict(running.get(table) or {}))
            for key, fields in rows.items():
                merged.setdefault(key, {}).update(copy.deepcopy(keep(fields)))
            out[table] = merged
        else:
            out[table] = copy.deepcopy(rows)
    if change_hwsku:
        sku = ((render.get("DEVICE_METADATA") or {}).get("localhost") or {}).get("hwsku")
        if sku:
            out["DEVICE_METADATA"].setdefault("localhost", {})["hwsku"] = sku
    return dict(sorted(out.items()))


def hwsku_mismatch(running: Mapping[str, Any], render: Mapping[str, Any]) -> tuple[str, str] | None:
    """(running hwsku, rendered hwsku) when they differ, else None. The render's PORT (lanes,
    aliases, speeds) and buffer tables are its SKU's: on another SKU they name ports and
    buffer pools that SKU does not have (a factory SN5600 runs ACS-SN5600, sonic-buildimage
    device/mellanox/x86_64-nvidia_sn5600-r0/default_sku)."""
    def sku(config: Mapping[str, Any]) -> str:
        meta = (config.get("DEVICE_METADATA") or {}).get("localhost") or {}
        return str(meta.get("hwsku") or "")
    have, want = sku(running), sku(render)
    return (have or "none", want) if want and have != want else None


def sonic_owned(config: Mapping[str, Any], render: Mapping[str, Any]) -> dict[str, Any]:
    """The part of `config` (a running config or the render itself) that fabgen owns for this
    render: the rendered tables, and the rendered DEVICE_METADATA fields minus the device's."""
    out: dict[str, Any] = {}
    for table, rows in render.items():
        have = config.get(table) or {}
        if table == "DEVICE_METADATA" or table in SONIC_MERGED:
            owned = _rendered_fields if table == "DEVICE_METADATA" else dict
            out[table] = {key: {f: v for f, v in (have.get(key) or {}).items()
                                if f in owned(fields)}
                          for key, fields in rows.items()}
        else:
            out[table] = have
    return out


def sonic_management(config: Mapping[str, Any], host: str | None = None) -> dict[str, Any]:
    """What a SONiC session depends on: MGMT_INTERFACE, MGMT_PORT, MGMT_VRF_CONFIG, and any
    row keyed by the address fabgen connected to (an in-band session over a loopback)."""
    facts: dict[str, Any] = {}
    for table, rows in config.items():
        if not isinstance(rows, Mapping):
            continue
        for key, fields in rows.items():
            if table in SONIC_MGMT_TABLES or (host is not None and f"|{host}/" in key):
                facts[f"{table}|{key}"] = fields
    return facts
