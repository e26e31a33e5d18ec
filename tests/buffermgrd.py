"""SONiC's traditional-model buffer manager, as a test model of what it does to a config_db,
and NVIDIA's shared-buffer accounting (`mellanox_pool_size`).

Modelled on sonic-net/sonic-swss cfgmgr/buffermgr.cpp at e6b0c5b5d2ab (BufferMgr::
doSpeedUpdateTask, doTask on PORT, readPgProfileLookupFile) and orchagent/orch.cpp
generateIdListFromMap. Without a readable pg_profile_lookup.ini (m_pgfile_processed false)
PORT updates are ignored. Otherwise, on every PORT update of a port whose CABLE_LENGTH is not
"0m":

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
import math
from collections import Counter
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
        """table: the platform's pg_profile_lookup.ini rows, None when it has none readable."""
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
        if self.table is None:
            return  # doTask: PORT entries are only handled once the lookup file was read
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


# buffer_pool_mellanox.lua (sonic-swss cfgmgr, e6b0c5b5d2ab) constants.
PRIVATE_HEADROOM = 10 * 1024
MGMT_POOL = 256 * 1024
EGRESS_MIRROR_HEADROOM = 10 * 1024
FORCED_SHP = 655360  # the SHP size the lua forces when profiles need one and none is set


def _count(ids: str) -> int:
    low, _, high = ids.partition("-")
    return int(high or low) - int(low) + 1


def mellanox_pool_size(db: ConfigDb, *, pipeline_latency_kib: int) -> int:
    """The size buffer_pool_mellanox.lua gives each ingress pool of `db` that has none: the
    switch buffer (egress_lossless_pool size, the lua's fallback for SAI's mmu_size) less every
    PG, queue and port reservation `db` holds, private headroom, the shared headroom pool,
    management PGs, egress mirror headroom and the management pool, split between the ingress
    pools. `db` is CONFIG_DB as buffermgrd leaves it (the lua reads APPL_DB, its copy).
    pipeline_latency_kib: ASIC_TABLE pipeline_latency (platform/mellanox/asic_table.j2).
    """
    lossy_reserved = pipeline_latency_kib * 1024
    lossy_reserved_8 = (2 * pipeline_latency_kib - 1) * 1024
    ports = db["PORT"]
    eight = {p for p, e in ports.items() if len(e["lanes"].split(",")) == 8}
    up = {p for p, e in ports.items() if e.get("admin_status") == "up"}
    pools = db["BUFFER_POOL"]
    ingress = [n for n, f in pools.items() if f["type"] == "ingress"]
    profiles = db["BUFFER_PROFILE"]
    # Profiles of an ingress pool are lossless when they have an xoff, lossy otherwise.
    lossless = {n: "xoff" in f for n, f in profiles.items() if f["pool"] in ingress}
    refs: Counter[str] = Counter()
    lossy_on_8 = 0
    lossless_ports = set()
    for table in ("BUFFER_PG", "BUFFER_QUEUE"):
        for key, entry in db.get(table, {}).items():
            port, ids = key.split("|")
            name, n = entry["profile"], _count(ids)
            refs[name] += n
            if port in eight and lossless.get(name) is False:
                lossy_on_8 += n
            if lossless.get(name):
                lossless_ports.add(port)
    for table in ("BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_PORT_EGRESS_PROFILE_LIST"):
        for entry in db.get(table, {}).values():
            for name in entry["profile_list"].split(","):
                if lossless.get(name) is not False:  # a lossy ingress profile reserves no PG
                    refs[name] += 1
    shp = int(pools["ingress_lossless_pool"].get("xoff", "0"))
    occupied = 0
    xoff = 0
    for name, n in refs.items():
        fields = profiles[name]
        size = int(fields["size"]) + (lossy_reserved if lossless.get(name) is False else 0)
        if shp == 0 and "xoff" in fields:
            xoff += max(int(fields["xon"]) + int(fields["xoff"]) - size, 0) * n
        occupied += size * n
    occupied += (lossy_reserved_8 - lossy_reserved) * lossy_on_8
    if xoff > 0 and shp == 0:
        shp = FORCED_SHP
    if shp:
        occupied += len(lossless_ports) * PRIVATE_HEADROOM + shp
    occupied += len(up - eight) * lossy_reserved + len(up & eight) * lossy_reserved_8
    occupied += len(up) * EGRESS_MIRROR_HEADROOM + MGMT_POOL
    available = int(pools["egress_lossless_pool"]["size"]) - occupied
    return math.ceil(available / len(ingress))
