"""SONiC's traditional-model buffer manager, as a test model of what it does to a config_db.

Modelled on sonic-net/sonic-swss cfgmgr/buffermgr.cpp at e6b0c5b5d2ab (BufferMgr::
doSpeedUpdateTask, doTask on PORT, readPgProfileLookupFile) and orchagent/orch.cpp
generateIdListFromMap. On every PORT update of a port whose CABLE_LENGTH is not "0m":

* the lossless PGs are the port's PORT_QOS_MAP pfc_enable priorities, grouped in ranges;
* the default profile name is pg_lossless_<speed>_<cable>_profile;
* admin down on a Mellanox or Barefoot switch: each lossless PG whose profile is that default
  name is deleted from BUFFER_PG (a PG with another profile is kept: "won't reclaim buffer");
* otherwise, no lookup-table row for (speed, cable): nothing changes (task_invalid_entry);
* otherwise the default profile is created from the row if it does not exist (pool
  ingress_lossless_pool, xon, [xon_offset], xoff, size, <pool mode>_th = threshold), and each
  lossless PG is pointed at it.
"""

from __future__ import annotations

import copy
from typing import Any

from fabgen.catalog.buffers import LookupTable

ConfigDb = dict[str, dict[str, dict[str, str]]]


def _ranges(values: list[int]) -> list[str]:
    out: list[list[int]] = []
    for v in sorted(values):
        if out and out[-1][-1] == v - 1:
            out[-1].append(v)
        else:
            out.append([v])
    return [str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in out]


class BufferMgr:
    def __init__(self, config: ConfigDb, table: LookupTable | None, vendor: str) -> None:
        self.db: ConfigDb = copy.deepcopy(config)
        self.table = table
        self.vendor = vendor

    def boot(self) -> None:
        """buffermgrd starting: every PORT entry arrives once."""
        for port in sorted(self.db.get("PORT", {})):
            self.port_update(port)

    def set_admin(self, port: str, status: str) -> None:
        self.db["PORT"][port]["admin_status"] = status
        self.port_update(port)

    def port_update(self, port: str) -> None:
        cable = self.db.get("CABLE_LENGTH", {})
        lengths = next(iter(cable.values()), {}) if cable else {}
        length = lengths.get(port)
        if length is None or length == "0m":
            return
        entry = self.db["PORT"][port]
        speed = entry["speed"]
        admin = entry.get("admin_status", "down")
        pfc = self.db.get("PORT_QOS_MAP", {}).get(port, {}).get("pfc_enable")
        if pfc is None:
            return
        pgs = _ranges([int(p) for p in pfc.split(",") if p])
        name = f"pg_lossless_{speed}_{length}_profile"
        table_pg = self.db.setdefault("BUFFER_PG", {})
        if admin == "down" and self.vendor in ("mellanox", "barefoot"):
            for pg in pgs:
                key = f"{port}|{pg}"
                if table_pg.get(key, {}).get("profile") == name:
                    del table_pg[key]
            return
        row = None
        if self.table is not None:
            row = self.table.rows.get((int(speed), int(length.removesuffix("m"))))
        if row is None:
            return
        profiles = self.db.setdefault("BUFFER_PROFILE", {})
        if name not in profiles:
            mode = self.db["BUFFER_POOL"]["ingress_lossless_pool"]["mode"]
            fields: dict[str, Any] = {"pool": "ingress_lossless_pool", "xon": str(row.xon)}
            if row.xon_offset is not None:
                fields["xon_offset"] = str(row.xon_offset)
            fields.update({"xoff": str(row.xoff), "size": str(row.size),
                           f"{mode}_th": str(row.threshold)})
            profiles[name] = fields
        for pg in pgs:
            table_pg[f"{port}|{pg}"] = {"profile": name}

    def lossless(self, port: str) -> dict[str, dict[str, str]]:
        """Each lossless PG of a port -> the profile fields it uses now."""
        pfc = self.db["PORT_QOS_MAP"][port]["pfc_enable"]
        out = {}
        for pg in _ranges([int(p) for p in pfc.split(",") if p]):
            entry = self.db.get("BUFFER_PG", {}).get(f"{port}|{pg}")
            if entry is not None:
                out[pg] = self.db["BUFFER_PROFILE"][entry["profile"]]
        return out
