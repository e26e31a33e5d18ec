"""SONiC buffer tables of one switch: CABLE_LENGTH, pools, profiles, PGs, queues, port lists.

The numbers come from the switch's vendor model (fabgen.catalog.buffers); this module decides
how SONiC must hold them so its own buffer manager keeps them:

* traditional model: buffermgrd (sonic-swss cfgmgr/buffermgr.cpp, doSpeedUpdateTask) rebuilds a
  port's lossless PGs from the platform's pg_profile_lookup.ini on every PORT change: on admin
  down (Mellanox, Barefoot) it deletes a PG whose profile has the default name
  `pg_lossless_<speed>_<cable>_profile`; on admin up it points the PG at that default name,
  creating the profile from the table, and gives up (leaving the PG alone) when the table has
  no row for the port's speed and CABLE_LENGTH. So fabgen writes CABLE_LENGTH as the shortest
  table row that covers the real cable, and the profile under the default name with the
  table's values: whatever buffermgrd rebuilds is what fabgen wrote. A cable longer than every
  row gets its own computed profile under a name buffermgrd never touches. Spare (admin down)
  ports of a Mellanox switch carry no lossless PG: buffermgrd would delete it at boot and
  creates it, identical, when the port comes up.
* dynamic model (NVIDIA's default): buffermgrd computes headroom itself from CABLE_LENGTH, the
  port's speed and MTU and LOSSLESS_TRAFFIC_PATTERN (buffer_headroom_mellanox.lua), and the
  pool sizes (buffer_pool_mellanox.lua); lossless PGs are written with profile "NULL", and
  CABLE_LENGTH holds the real length.
* no public vendor model: no buffer tables at all; CABLE_LENGTH and pfc_enable let the
  platform's own lookup table size the PGs, and the report says fabgen did not size them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal

from fabgen.catalog.buffers import (
    BufferMode,
    BufferModel,
    Derivation,
    PgProfile,
    model_for,
    spectrum,
)

__all__ = ["PortCable", "PortHeadroom", "SwitchBuffers", "buffer_model", "resolve_mode",
           "switch_buffers"]

Table = dict[str, dict[str, str]]
Requested = Literal["auto", "traditional", "dynamic"]
# DEFAULT_LOSSLESS_BUFFER_PARAMETER default_dynamic_th, as SONiC's buffers_config.j2 writes it.
DEFAULT_DYNAMIC_TH = 0


@dataclass(frozen=True, slots=True)
class PortCable:
    """A front-panel port as the buffer manager sees it."""

    name: str
    admin_up: bool
    speed_gbps: int
    lanes: int
    cable_m: int  # the real (intent) length
    kind: str  # link class: node-leaf, leaf-spine, spine-core (planned, for a spare port)


@dataclass(frozen=True, slots=True)
class PortHeadroom:
    port: PortCable
    cable_key_m: int  # what CABLE_LENGTH says (a lookup-table row in the traditional model)
    profile_name: str | None  # None: "NULL" (dynamic) or no model
    profile: PgProfile | None
    rebuilt_by_buffermgrd: bool  # buffermgrd recreates this exact profile after a flap
    derivation: Derivation | None
    sized: bool  # the value is the vendor's (table row or vendor formula)


@dataclass(frozen=True, slots=True)
class SwitchBuffers:
    mode: BufferMode
    model: BufferModel | None
    ports: tuple[PortHeadroom, ...]
    tables: dict[str, Table]
    warnings: tuple[str, ...]


def buffer_model(model: str, breakout: int) -> BufferModel | None:
    return model_for(model, breakout)


def resolve_mode(requested: Requested, model: BufferModel | None) -> BufferMode:
    """The intent's choice, or the vendor's default (traditional without a model)."""
    if requested != "auto":
        return requested
    return model.default_mode if model is not None else "traditional"


def _ranges(values: list[int]) -> list[str]:
    """[0, 1, 2, 4] -> ["0-2", "4"]: SONiC's range keys (orch.cpp generateIdListFromMap)."""
    out: list[str] = []
    for v in sorted(values):
        if out and "-" not in out[-1] and int(out[-1]) == v - 1:
            out[-1] = f"{out[-1]}-{v}"
        elif out and "-" in out[-1] and int(out[-1].split("-")[1]) == v - 1:
            out[-1] = f"{out[-1].split('-')[0]}-{v}"
        else:
            out.append(str(v))
    return out


def _profile_fields(profile: PgProfile, pool: str) -> dict[str, str]:
    fields = {"pool": pool, "xon": str(profile.xon), "xoff": str(profile.xoff),
              "size": str(profile.size), "dynamic_th": str(profile.threshold)}
    if profile.xon_offset is not None:
        fields["xon_offset"] = str(profile.xon_offset)
    return fields


def _traditional_port(model: BufferModel, port: PortCable) -> tuple[PortHeadroom, str | None]:
    """The port's lossless profile under buffermgrd's rules (see the module docstring)."""
    speed = port.speed_gbps * 1000
    table = model.table
    assert table is not None
    row = table.at_or_above(speed, port.cable_m)
    derivation = None
    if model.vendor == "mellanox":
        derivation = spectrum.derive(model.sku, model.asic,
                                     speed, row if row is not None else port.cable_m,
                                     port_mtu=9216, lanes=port.lanes, dynamic=False)
    if row is not None:
        name = f"pg_lossless_{speed}_{row}m_profile"
        return PortHeadroom(port, row, name, table.rows[speed, row], True, derivation,
                            True), None
    name = f"lossless_{speed}_{port.cable_m}m"
    if model.vendor == "mellanox":
        profile = spectrum.table_profile(model.sku, speed, port.cable_m)
        return PortHeadroom(port, port.cable_m, name, profile, False, derivation, True), None
    cables = table.cables(speed)
    if not cables:
        raise ValueError(f"{model.sku} has no lossless row at {port.speed_gbps}G in its vendor "
                         f"table ({table.source})")
    longest = cables[-1]
    warning = (f"{model.sku}: the vendor table has no row for {port.cable_m} m at "
               f"{port.speed_gbps}G (rows up to {longest} m); its {longest} m row is used, "
               "NOT sized for this length")
    return PortHeadroom(port, port.cable_m, name, table.rows[speed, longest], False, None,
                        False), warning


def switch_buffers(model_name: str, breakout: int, requested: Requested,
                   ports: list[PortCable], *, lossless_pgs: list[int], lossy_pgs: list[int],
                   lossless_queues: list[int], lossy_queues: list[int], port_mtu: int,
                   map_name: str) -> SwitchBuffers:
    """Every buffer table of one SONiC switch, and per port what its headroom is and why."""
    model = buffer_model(model_name, breakout)
    mode = resolve_mode(requested, model)
    if model is not None and mode not in model.modes:
        raise ValueError(f"{model.family} {model.sku or model_name}: the {mode} buffer model "
                         f"is not available ({model.note or 'no vendor support'})")
    warnings: list[str] = []
    heads: list[PortHeadroom] = []
    tables: dict[str, Table] = {}
    if model is None or model.layout is None or (mode == "traditional" and model.table is None):
        for p in ports:
            heads.append(PortHeadroom(p, p.cable_m, None, None, False, None, False))
        tables["CABLE_LENGTH"] = {map_name: {h.port.name: f"{h.cable_key_m}m" for h in heads}}
        return SwitchBuffers(mode, model, tuple(heads), tables, tuple(warnings))
    layout = model.layout
    if mode == "dynamic":
        asic = model.asic
        for p in ports:
            derivation = spectrum.derive(model.sku or None, asic, p.speed_gbps * 1000,
                                         p.cable_m, port_mtu=port_mtu, lanes=p.lanes,
                                         dynamic=True)
            heads.append(PortHeadroom(p, p.cable_m, None, derivation.result, True, derivation,
                                      True))
    else:
        for p in ports:
            head, warning = _traditional_port(model, p)
            heads.append(head)
            if warning and warning not in warnings:
                warnings.append(warning)
    tables["CABLE_LENGTH"] = {map_name: {h.port.name: f"{h.cable_key_m}m" for h in heads}}
    profiles: Table = {}
    for h in heads:
        if h.profile_name is not None and h.profile is not None:
            profiles[h.profile_name] = _profile_fields(h.profile, layout.lossless_pool)
    profiles.update({name: dict(fields) for name, fields in layout.profiles.items()})
    pgs: Table = {}
    queues: Table = {}
    for h in heads:
        name = h.port.name
        for key in _ranges(lossy_pgs):
            pgs[f"{name}|{key}"] = {"profile": layout.lossy_pg_profile}
        # buffermgrd deletes a default-named lossless PG of an admin-down Mellanox port at
        # boot, and rebuilds it from CABLE_LENGTH and its table when the port comes up.
        dropped = (mode == "traditional" and model.vendor == "mellanox" and not h.port.admin_up
                   and h.rebuilt_by_buffermgrd)
        if not dropped:
            for key in _ranges(lossless_pgs):
                pgs[f"{name}|{key}"] = {"profile": h.profile_name or "NULL"}
        for key in _ranges(lossy_queues):
            queues[f"{name}|{key}"] = {"profile": layout.lossy_queue_profile}
        for key in _ranges(lossless_queues):
            queues[f"{name}|{key}"] = {"profile": layout.lossless_queue_profile}
    pools = {name: dict(fields) for name, fields in layout.pools.items()}
    if mode == "dynamic":
        # buffer_pool_mellanox.lua sizes every pool without a size; the egress lossless pool
        # keeps the whole buffer, as NVIDIA's templates write it in dynamic mode too.
        pools["egress_lossless_pool"]["size"] = str(layout.mmu_bytes)
        tables["DEFAULT_LOSSLESS_BUFFER_PARAMETER"] = {
            map_name: {"default_dynamic_th": str(DEFAULT_DYNAMIC_TH)}}
        pattern = spectrum.DYNAMIC_PATTERN
        tables["LOSSLESS_TRAFFIC_PATTERN"] = {map_name: {
            "mtu": str(pattern.mtu),
            "small_packet_percentage": str(pattern.small_packet_percentage)}}
    elif layout.fixed_sizes:
        for name, fields in layout.fixed_sizes.items():
            pools[name].update(fields)
    else:
        counts = Counter(h.profile for h in heads if h.profile is not None)
        sizes = spectrum.pool_sizes(
            layout, model.asic, ports=len(heads),
            ports_8lane=sum(1 for h in heads if h.port.lanes == 8),
            pg_profiles=[(prof, n * len(lossless_pgs)) for prof, n in counts.items()],
            # Every PG of a range reserves buffer (buffer_pool_mellanox.lua counts a BUFFER_PG
            # key "0-2" as three), so count PGs, not keys.
            lossy_pgs_per_port=len(lossy_pgs), lossless_ports=len(heads))
        for name, fields in sizes.items():
            pools[name].update(fields)
    tables["BUFFER_POOL"] = pools
    tables["BUFFER_PROFILE"] = profiles
    tables["BUFFER_PG"] = pgs
    tables["BUFFER_QUEUE"] = queues
    if layout.ingress_list:
        tables["BUFFER_PORT_INGRESS_PROFILE_LIST"] = {
            h.port.name: {"profile_list": ",".join(layout.ingress_list)} for h in heads}
    if layout.egress_list:
        tables["BUFFER_PORT_EGRESS_PROFILE_LIST"] = {
            h.port.name: {"profile_list": ",".join(layout.egress_list)} for h in heads}
    return SwitchBuffers(mode, model, tuple(heads), tables, tuple(warnings))
