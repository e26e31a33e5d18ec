"""A model of sonic-utilities' db_migrator for the tables fabgen writes (test helper).

`db_migrator.py -o migrate` runs on every `config reload` (sonic-utilities config/main.py
migrate_db_to_lastest), after `config load_minigraph`, and at the first boot of a new image
(sonic-buildimage files/image_config/config-setup/config-setup, do_db_migration). This module
restates what it does to a config_db.json fabgen renders, from:

  sonic-net/sonic-utilities 691b1bbc4fd2 (2026-07-23)
    scripts/db_migrator.py            DBMigrator: generate_config_src (lines 109-156),
                                      the version_* chain (969-1448), common_migration_ops
                                      (1457-1493), migrate_routing_config_mode (742-755)
    scripts/mellanox_buffer_migrator.py  MellanoxBufferMigrator.__init__ (90-119: which SKUs
                                      are "default traditional"), mlnx_flush_new_buffer_
                                      configuration (817-842)
  sonic-net/sonic-buildimage 086b03bd70f9
    src/sonic-config-engine/minigraph.py  parse_xml's DEVICE_METADATA|localhost (2145-2155)

Only steps that can touch a table fabgen writes are modelled; the rest (APPL_DB, STATE_DB,
FEATURE, tables fabgen never writes) are left out. Where a step depends on data fabgen's configs
never hold (NVIDIA's old default buffer pools, PFC_WD_TABLE, ABNF references, autoneg "0/1"),
the model takes the branch fabgen's configs take, and tests/test_db_migrator.py runs the real
code on the same inputs (FABGEN_UPSTREAM) to show the model and the code agree.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["CURRENT_VERSION", "MINIGRAPH_METADATA", "VERSIONS", "migrate"]

Config = dict[str, dict[str, dict[str, Any]]]

CURRENT_VERSION = "version_202605_01"
# The chain from DBMigrator.version_unknown to CURRENT_VERSION, in order.
VERSIONS = (
    "version_unknown", "version_1_0_2", "version_1_0_3", "version_1_0_4", "version_1_0_5",
    "version_1_0_6", "version_2_0_0", "version_2_0_1", "version_2_0_2", "version_3_0_0",
    "version_3_0_1", "version_3_0_2", "version_3_0_3", "version_3_0_4", "version_3_0_5",
    "version_3_0_6", "version_3_0_7", "version_4_0_0", "version_4_0_1", "version_4_0_2",
    "version_4_0_3", "version_202305_01", "version_202311_01", "version_202311_02",
    "version_202311_03", "version_202405_01", "version_202405_02", "version_202411_01",
    "version_202411_02", "version_202505_01", "version_202511_01", CURRENT_VERSION,
)
# What minigraph.py's parse_xml puts in DEVICE_METADATA|localhost besides the device's own
# names (docker_routing_config_mode is "separated" unless the minigraph says otherwise).
MINIGRAPH_METADATA = {"docker_routing_config_mode": "separated", "synchronous_mode": "enable",
                      "yang_config_validation": "disable"}
# mellanox_buffer_migrator.py __init__: every "Mellanox-" SKU but these is a traditional-model
# SKU, whose buffer_model the migrator sets to traditional.
DYNAMIC_MODEL_SKUS = ("Mellanox-SN5600-O128",)
_IF_TABLES = ("INTERFACE", "PORTCHANNEL_INTERFACE", "VLAN_INTERFACE", "LOOPBACK_INTERFACE")


def _raw(value: Any) -> Any:
    """ConfigDBConnector.typed_to_raw: lists stay lists, everything else becomes str (None
    becomes "None")."""
    return value if isinstance(value, list) else str(value)


def _source(minigraph: dict[str, str] | None, golden: Config | None) -> Config | None:
    """generate_config_src: minigraph's data with the golden file's tables over it."""
    data: Config | None = None
    if minigraph is not None:
        data = {"DEVICE_METADATA": {"localhost": {**MINIGRAPH_METADATA, **minigraph}}}
    if golden is not None:
        data = {**(data or {}), **golden}  # update_config: whole tables replaced
    return data


def _mellanox_flush(db: Config) -> None:
    """version_1_0_2 .. version_1_0_6 on Mellanox: the pool/profile migrations find no NVIDIA
    default to migrate in a fabgen config and leave it; the flush then sets buffer_model to
    traditional unless the config is already dynamic on a dynamic-model SKU."""
    meta = db.get("DEVICE_METADATA", {}).get("localhost", {})
    sku = meta.get("hwsku")
    if not meta.get("platform") or not sku:
        return  # not "ready": the migrator skips
    default_traditional = sku.startswith("Mellanox-") and sku not in DYNAMIC_MODEL_SKUS
    already_dynamic = meta.get("buffer_model") == "dynamic" and not default_traditional
    if not already_dynamic:
        meta["buffer_model"] = "traditional"


def _interfaces(db: Config) -> None:
    """migrate_interface_table: an address entry without its bare interface entry gets one."""
    for table in _IF_TABLES:
        rows = db.get(table, {})
        for key in list(rows):
            if "|" in key:
                rows.setdefault(key.split("|", 1)[0], copy.deepcopy(rows[key]))


def _step(version: str, db: Config, asic_type: str, src: Config | None) -> None:
    meta = db.setdefault("DEVICE_METADATA", {}).setdefault("localhost", {})
    if version == "version_unknown":
        _interfaces(db)
    elif version in ("version_1_0_2", "version_1_0_3", "version_1_0_4", "version_1_0_5"):
        if asic_type == "mellanox":
            _mellanox_flush(db)
    elif version == "version_1_0_6":
        if asic_type == "mellanox":
            _mellanox_flush(db)
        else:
            meta["buffer_model"] = "traditional"
    elif version == "version_2_0_0":
        # migrate_port_qos_map_global: Broadcom needs a switch-wide DSCP_TO_TC_MAP.
        maps = sorted(db.get("DSCP_TO_TC_MAP", {}))
        qos = db.get("PORT_QOS_MAP", {})
        if asic_type == "broadcom" and maps and "global" not in qos:
            db.setdefault("PORT_QOS_MAP", {})["global"] = {"dscp_to_tc_map": maps[0]}
    elif version == "version_2_0_1":
        # migrate_device_metadata: synchronous_mode from the source when CONFIG_DB lacks it.
        if src and "DEVICE_METADATA" in src and "synchronous_mode" not in meta:
            meta["synchronous_mode"] = _raw(
                src["DEVICE_METADATA"]["localhost"].get("synchronous_mode"))
    elif version == "version_3_0_0":
        for entry in db.get("PORT", {}).values():  # migrate_..._for_dhcp_rate_limit
            entry.setdefault("dhcp_rate_limit", "300")
    elif version == "version_3_0_4":
        for entry in db.get("PORT_QOS_MAP", {}).values():
            if "pfc_enable" in entry:
                entry["pfcwd_sw_enable"] = entry["pfc_enable"]


def migrate(config: Config, *, asic_type: str, init_cfg: Config | None = None,
            golden: Config | None = None,
            minigraph: dict[str, str] | None = None) -> Config:
    """CONFIG_DB after `db_migrator.py -o migrate` on `config` (a config_db.json dict), on a
    switch with this ASIC vendor, image defaults (`init_cfg`), golden_config_db.json and
    minigraph.xml (the device names it gives: hostname, hwsku, type, ...; None: no file)."""
    db = copy.deepcopy(config)
    src = _source(minigraph, golden)
    version = db.get("VERSIONS", {}).get("DATABASE", {}).get("VERSION", "version_unknown")
    for step in VERSIONS[VERSIONS.index(version):]:
        _step(step, db, asic_type, src)
    db["VERSIONS"] = {"DATABASE": {"VERSION": CURRENT_VERSION}}
    # common_migration_ops: the image's defaults under what is configured ...
    for table, rows in (init_cfg or {}).items():
        for key, fields in rows.items():
            current = db.setdefault(table, {}).get(key, {})
            db[table][key] = {**fields, **current}
    # ... and the routing mode of the source, whenever there is one.
    if src and "DEVICE_METADATA" in src:
        meta = db.setdefault("DEVICE_METADATA", {}).setdefault("localhost", {})
        new = src["DEVICE_METADATA"]["localhost"].get("docker_routing_config_mode")
        if meta.get("docker_routing_config_mode") != new:
            meta["docker_routing_config_mode"] = _raw(new)
    return db
