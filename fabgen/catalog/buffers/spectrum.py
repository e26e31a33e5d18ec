"""NVIDIA Spectrum buffer model: PFC headroom as sonic-swss computes it, and NVIDIA's tables.

Sources, cited below by tag:
  [LUA]   sonic-net/sonic-swss cfgmgr/buffer_headroom_mellanox.lua at e6b0c5b5d2ab (2026-08-21):
          the headroom buffermgrd computes in SONiC's dynamic buffer model.
  [LUA-H] the same file's history: 2cab51d11 (2020-12, first version: 400G ports take a 37 KiB
          pipeline latency and the ASIC table's peer response time), 6c88e47a4 (2021-06, an
          8-lane port doubles the pipeline latency less 1 KiB), f9462c499 (2021-11, peer response
          from IEEE pause quanta per speed), 3943093d4 (2024-09: worst-case factor rounded up,
          small packets counted by bytes, "kB on tile" for Spectrum-4/5, bytes on cable / 8000),
          b20a59691 (2026-07, +2 KiB when small packets are below 100% and SHP is off).
  [POOL]  sonic-swss cfgmgr/buffer_pool_mellanox.lua at e6b0c5b5d2ab: how NVIDIA accounts the
          shared buffer (reserved PG/queue sizes, management PGs, mirror headroom, 256 KiB
          management pool) and splits what is left between the shared pools.
  [ASIC]  sonic-net/sonic-buildimage platform/mellanox/asic_table.j2 at 086b03bd70f9 (2026-08-23):
          cell size, pipeline latency, MAC/PHY delay and peer response time per Spectrum ASIC.
  [INI]   sonic-buildimage device/mellanox/<platform>/<SKU>/pg_profile_lookup.ini at 086b03bd70f9:
          NVIDIA's lossless profiles per speed and cable length (traditional buffer model).
  [OBJ]   sonic-buildimage device/mellanox/x86_64-mlnx_msn2700-r0/ACS-MSN2700/
          buffers_defaults_objects.j2 (ACS-SN5600, ACS-MSN4700 and ACS-MSN4600C link to it) and
          each SKU's buffers_defaults_t1.j2: pools, profiles and the egress_lossless_pool size.
  [MODEL] sonic-buildimage platform/mellanox/rules.mk: SONIC_BUFFER_MODEL=dynamic, the buffer
          model NVIDIA builds its SONiC images with (init_cfg.json.j2 writes it to
          DEVICE_METADATA|localhost buffer_model).

NVIDIA's lookup tables were produced with the same calculation at the revision of their day,
and the one input that differs from what buildimage ships, the largest frame, is 9216 B
(SONiC's maximum port MTU). Each table below names the rules of its revision; the tests read
every published row and check the formula reproduces it exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Literal

from fabgen.catalog.buffers.model import BufferModel, Derivation, LookupTable, PgProfile, PoolLayout

__all__ = [
    "ASICS",
    "CURRENT",
    "DYNAMIC_PATTERN",
    "PUBLISHED_EXCEPTIONS",
    "TABLES",
    "Asic",
    "Pattern",
    "Rules",
    "TableSpec",
    "derive",
    "headroom",
    "model_for",
    "pool_sizes",
    "table",
    "table_profile",
]

KIB = 1024
SPEED_OF_LIGHT_M_S = 198_000_000  # [LUA] speed_of_light (signal speed in the cable, ~0.66 c)
MINIMAL_PACKET = 64  # [LUA] minimal_packet_size
HEADROOM_COMPENSATION = 2 * KIB  # [LUA] headroom_compensation (b20a59691)
# [LUA] pause_quanta_per_speed: IEEE 802.3 Annex 31B.3.7 quanta (512 bit times) per Mb/s speed.
PAUSE_QUANTA: dict[int, int] = {800000: 905, 400000: 905, 200000: 453, 100000: 394, 50000: 147,
                                40000: 118, 25000: 80, 10000: 67, 1000: 2, 100: 1}
PAUSE_QUANTUM_BITS = 512
BUILDIMAGE = "sonic-net/sonic-buildimage@086b03bd70f9"
SWSS = "sonic-net/sonic-swss@e6b0c5b5d2ab"


@dataclass(frozen=True, slots=True)
class Asic:
    """One ASIC_TABLE entry of [ASIC] (delays in KiB, as the table gives them)."""

    name: str
    cell_size: int
    pipeline_latency_kib: Fraction
    mac_phy_delay_kib: Fraction
    peer_response_time_kib: Fraction
    tile: bool  # [LUA] kb_on_tile applies to Spectrum-4 and Spectrum-5


ASICS: dict[str, Asic] = {
    "spectrum-3": Asic("MELLANOX-SPECTRUM-3", 144, Fraction(19), Fraction("0.8"),
                       Fraction("3.8"), tile=False),
    "spectrum-4": Asic("MELLANOX-SPECTRUM-4", 192, Fraction(19), Fraction("0.8"),
                       Fraction("3.8"), tile=True),
}
SWITCH_ASIC = {"sn4600c": "spectrum-3", "sn4700": "spectrum-3", "sn5600": "spectrum-4"}


@dataclass(frozen=True, slots=True)
class Pattern:
    """CONFIG_DB LOSSLESS_TRAFFIC_PATTERN: the lossless traffic the headroom is sized for."""

    mtu: int
    small_packet_percentage: int


# What SONiC's buffers_config.j2 writes for the dynamic model (LOSSLESS_TRAFFIC_PATTERN|AZURE:
# mtu 1024, small_packet_percentage 50); fabgen renders the same values.
DYNAMIC_PATTERN = Pattern(1024, 50)


@dataclass(frozen=True, slots=True)
class Rules:
    """The revision of the calculation: each field is one change of [LUA-H]."""

    peer_response: Literal["pause-quanta", "asic-table"]
    tile_delay: bool
    ceil_worst_case: bool
    small_packets_by_byte: bool
    eight_lane_xon: Literal["double", "double-less-1k"]
    # The lookup tables add the speed overhead of an 8-lane port (one frame of SONiC's default
    # port MTU, 9100) to the unrounded xoff; the lua adds the port MTU to the rounded xoff.
    size_from_raw_xoff: bool
    small_packet_compensation: bool


CURRENT = Rules("pause-quanta", True, True, True, "double", False, True)  # [LUA]


def _worst_case_factor(cell: int, rules: Rules) -> Fraction:
    factor = (Fraction(cell, MINIMAL_PACKET) if cell > 2 * MINIMAL_PACKET
              else Fraction(2 * cell, 1 + cell))
    return Fraction(math.ceil(factor)) if rules.ceil_worst_case else factor


def _round_up(value: Fraction | int) -> int:
    return math.ceil(Fraction(value) / KIB) * KIB


@dataclass(frozen=True, slots=True)
class Terms:
    """Every intermediate of one calculation, bytes unless named, for the report."""

    cell_occupancy: Fraction
    bytes_on_cable: Fraction
    mac_phy: Fraction
    peer_response: Fraction
    tile: Fraction
    propagation: Fraction
    xoff_raw: Fraction


def headroom(asic: Asic, speed_mbps: int, cable_m: int, *, port_mtu: int, lanes: int,
             pattern: Pattern, rules: Rules = CURRENT, shared_headroom: bool = False,
             overhead_mtu: int | None = None) -> tuple[PgProfile, Terms]:
    """[LUA]'s xon/xoff/size for one port (gearbox delay 0: no Spectrum SKU here has one)."""
    eight_lane = lanes == 8
    pipeline = asic.pipeline_latency_kib * KIB
    quanta = PAUSE_QUANTA.get(speed_mbps)
    if rules.peer_response == "pause-quanta" and quanta is not None:
        peer = Fraction(quanta * PAUSE_QUANTUM_BITS, 8)
    else:
        peer = asic.peer_response_time_kib * KIB
    tile = Fraction(speed_mbps * 120, 1000 * 8) if rules.tile_delay and asic.tile else Fraction(0)
    factor = _worst_case_factor(asic.cell_size, rules)
    spp = Fraction(pattern.small_packet_percentage)
    if rules.small_packets_by_byte:
        spp = 100 * MINIMAL_PACKET / ((spp * MINIMAL_PACKET + (100 - spp) * pattern.mtu) / 100)
    occupancy = (100 - spp + spp * factor) / 100
    cable = Fraction(2 * cable_m * speed_mbps * 1_000_000_000, SPEED_OF_LIGHT_M_S * 8 * 1000)
    mac_phy = asic.mac_phy_delay_kib * KIB
    propagation = port_mtu + cable + mac_phy + peer + tile
    xoff_raw = pattern.mtu + propagation * occupancy
    xoff = _round_up(xoff_raw)
    if (rules.small_packet_compensation and not shared_headroom
            and pattern.small_packet_percentage != 100):
        worst = _round_up(pattern.mtu + propagation * factor)
        if xoff + HEADROOM_COMPENSATION < worst:
            xoff += HEADROOM_COMPENSATION
    if eight_lane:
        pipeline = 2 * pipeline - (KIB if rules.eight_lane_xon == "double-less-1k" else 0)
    xon = _round_up(pipeline)
    overhead = (port_mtu if overhead_mtu is None else overhead_mtu) if eight_lane else 0
    if shared_headroom:
        size = xon
    elif rules.size_from_raw_xoff:
        size = _round_up(xoff_raw + xon + overhead)
    else:
        size = _round_up(xoff + xon + overhead)
    terms = Terms(occupancy, cable, mac_phy, peer, tile, propagation, xoff_raw)
    return PgProfile(size=size, xon=xon, xoff=xoff), terms


# --- NVIDIA's lookup tables ---------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class TableSpec:
    """One pg_profile_lookup.ini: where it is, and the inputs that reproduce its rows."""

    sku: str
    path: str
    asic: str
    speeds_mbps: tuple[int, ...]
    cables_m: tuple[int, ...]
    eight_lane_speeds: tuple[int, ...]  # the native speed of an 8-lane cage on this switch
    rules: Rules
    pattern: Pattern
    shared_headroom: bool = False
    frame: int = 9216  # SONiC's largest port MTU
    overhead_mtu: int = 9100  # SONiC's default port MTU
    unpublished: frozenset[tuple[int, int]] = frozenset()  # (speed, cable) the file lacks


_SPEEDS_SN5600 = (10000, 25000, 40000, 50000, 100000, 200000, 400000, 800000)
_SPEEDS_SN4700 = (10000, 25000, 40000, 50000, 100000, 200000, 400000)
_ACS_SN5600 = TableSpec(
    "ACS-SN5600", "device/mellanox/x86_64-nvidia_sn5600-r0/ACS-SN5600/pg_profile_lookup.ini",
    "spectrum-4", _SPEEDS_SN5600, (5, 40, 300), (800000,),
    Rules("pause-quanta", True, True, True, "double", True, False), Pattern(1024, 100))
_ACS_MSN4700 = TableSpec(
    "ACS-MSN4700", "device/mellanox/x86_64-mlnx_msn4700-r0/ACS-MSN4700/pg_profile_lookup.ini",
    "spectrum-3", _SPEEDS_SN4700, (5, 40, 300), (400000,),
    # 2020 table: peer response time from the ASIC table, worst-case factor 144/64 unrounded.
    Rules("asic-table", False, False, False, "double-less-1k", True, False), Pattern(1024, 100))
TABLES: dict[str, TableSpec] = {
    "ACS-SN5600": _ACS_SN5600,
    # Mellanox-SN5600-O128's pg_profile_lookup.ini is a link to ACS-SN5600's.
    "Mellanox-SN5600-O128": _ACS_SN5600,
    "Mellanox-SN5600-V256": TableSpec(
        "Mellanox-SN5600-V256",
        "device/mellanox/x86_64-nvidia_sn5600-r0/Mellanox-SN5600-V256/pg_profile_lookup.ini",
        "spectrum-4", _SPEEDS_SN5600, (5, 40, 300), (800000,),
        # Shared headroom pool (size = xon); 50% small packets of 4096 B, counted per packet.
        Rules("pause-quanta", True, True, False, "double", True, False), Pattern(4096, 50),
        shared_headroom=True),
    "ACS-MSN4700": _ACS_MSN4700,
    # ACS-MSN4600C's pg_profile_lookup.ini is a link to ACS-MSN4700's.
    "ACS-MSN4600C": _ACS_MSN4700,
    # Mellanox-SN4700-V64's pg_profile_lookup.ini is a link to Mellanox-SN4700-O8C48's. Shared
    # headroom pool (size = xon). The 5-300 m rows come from the 2020 rules with a 1024 B
    # lossless MTU at 1% small packets; the 1500 and 2000 m rows from none (PUBLISHED_EXCEPTIONS).
    "Mellanox-SN4700-V64": TableSpec(
        "Mellanox-SN4700-V64",
        "device/mellanox/x86_64-mlnx_msn4700-r0/Mellanox-SN4700-O8C48/pg_profile_lookup.ini",
        "spectrum-3", _SPEEDS_SN4700, (5, 40, 300, 1500, 2000), (400000,),
        Rules("pause-quanta", False, True, False, "double", True, False), Pattern(1024, 1),
        shared_headroom=True, frame=9100),
    # Shared headroom pool; 5-300 m and 1500 m rows from 1024 B at 50% small packets, the
    # 2000 m rows from none (each is the formula's value for 1000 m: PUBLISHED_EXCEPTIONS).
    "Mellanox-SN4700-C128": TableSpec(
        "Mellanox-SN4700-C128",
        "device/mellanox/x86_64-mlnx_msn4700-r0/Mellanox-SN4700-C128/pg_profile_lookup.ini",
        "spectrum-3", _SPEEDS_SN4700, (5, 40, 300, 1500, 2000), (400000,),
        Rules("pause-quanta", False, False, False, "double", True, False), Pattern(1024, 50),
        shared_headroom=True,
        unpublished=frozenset({(200000, 1500), (400000, 1500), (200000, 2000)})),
}


def _lanes(spec: TableSpec, speed_mbps: int) -> int:
    return 8 if speed_mbps in spec.eight_lane_speeds else 4


# Published rows the formula does not give: ACS-SN5600 40G 5 m is printed with size 75776, 1 KiB
# below its own xon + xoff (19456 + 57344), which no revision of [LUA] produces for a profile
# without a shared headroom pool. buildimage's value is kept, so buffermgrd and fabgen agree.
PUBLISHED_EXCEPTIONS: dict[tuple[str, int, int], PgProfile] = {
    ("ACS-SN5600", 40000, 5): PgProfile(size=75776, xon=19456, xoff=57344),
    # Mellanox-SN4700-O8C48/pg_profile_lookup.ini (Mellanox-SN4700-V64's): long-cable rows
    # 1 KiB below the formula, and the 400G rows repeating the 200G ones.
    **{("Mellanox-SN4700-V64", speed, cable): PgProfile(size=xon, xon=xon, xoff=xoff)
       for speed, cable, xon, xoff in (
           (40000, 2000, 19456, 121856), (50000, 2000, 19456, 149504),
           (100000, 2000, 19456, 293888), (200000, 1500, 19456, 427008),
           (200000, 2000, 19456, 555008), (400000, 1500, 38912, 427008),
           (400000, 2000, 38912, 555008))},
    # Mellanox-SN4700-C128/pg_profile_lookup.ini: the 2000 m rows.
    **{("Mellanox-SN4700-C128", speed, 2000): PgProfile(size=xon, xon=xon, xoff=xoff)
       for speed, xon, xoff in (
           (10000, 19456, 32768), (25000, 19456, 64512), (40000, 19456, 97280),
           (50000, 19456, 119808), (100000, 19456, 234496), (400000, 38912, 876544))},
}


@cache
def table(sku: str) -> LookupTable:
    """NVIDIA's lookup table of a SKU: every row computed from the formula and the table's
    inputs, except the published exceptions above."""
    spec = TABLES[sku]
    rows = {}
    for speed in spec.speeds_mbps:
        for cable in spec.cables_m:
            if (speed, cable) in spec.unpublished:
                continue
            profile, _ = headroom(ASICS[spec.asic], speed, cable, port_mtu=spec.frame,
                                  lanes=_lanes(spec, speed), pattern=spec.pattern,
                                  rules=spec.rules, shared_headroom=spec.shared_headroom,
                                  overhead_mtu=spec.overhead_mtu)
            rows[speed, cable] = PUBLISHED_EXCEPTIONS.get((spec.sku, speed, cable), profile)
    return LookupTable(sku, f"{BUILDIMAGE} {spec.path}", rows)


def table_profile(sku: str, speed_mbps: int, cable_m: int) -> PgProfile:
    """A profile with the table's inputs and rules at any length (for cables past its rows)."""
    spec = TABLES[sku]
    published = table(sku).rows.get((speed_mbps, cable_m))
    if published is not None:
        return published
    profile, _ = headroom(ASICS[spec.asic], speed_mbps, cable_m, port_mtu=spec.frame,
                          lanes=_lanes(spec, speed_mbps), pattern=spec.pattern, rules=spec.rules,
                          shared_headroom=spec.shared_headroom, overhead_mtu=spec.overhead_mtu)
    return profile


def _fmt(value: Fraction) -> str:
    text = f"{float(value):.2f}".rstrip("0").rstrip(".")
    return text


FORMULA_NAME = "sonic-swss buffer_headroom_mellanox.lua"
FORMULA = ("xoff = ceil1K(lossless_mtu + (frame + 2 x L x speed / 1.98e8 m/s / 8 + mac_phy + "
           "peer_response + tile) x cell_occupancy); xon = pipeline_latency (x2 on 8 lanes); "
           "size = xon + xoff (+ one frame on 8 lanes)")


def derive(sku: str | None, asic_key: str, speed_mbps: int, cable_m: int, *, port_mtu: int,
           lanes: int, dynamic: bool) -> Derivation:
    """The report's view of one calculation: the SKU table's revision for the traditional
    model (and the published row when the table has it), [LUA] as it runs for the dynamic."""
    asic = ASICS[asic_key]
    vendor = None
    source = ""
    if dynamic or sku is None:
        rules, pattern, frame, overhead, shp = CURRENT, DYNAMIC_PATTERN, port_mtu, None, False
        if sku is not None and (speed_mbps, cable_m) in (lookup := table(sku)).rows:
            # For comparison: the traditional model's row (sized for 100% small packets).
            vendor, source = lookup.rows[speed_mbps, cable_m], lookup.source
    else:
        spec = TABLES[sku]
        rules, pattern, frame, overhead = spec.rules, spec.pattern, spec.frame, spec.overhead_mtu
        shp = spec.shared_headroom
        lanes = _lanes(spec, speed_mbps)
        if (speed_mbps, cable_m) in (lookup := table(sku)).rows:
            vendor, source = lookup.rows[speed_mbps, cable_m], lookup.source
    profile, terms = headroom(asic, speed_mbps, cable_m, port_mtu=frame, lanes=lanes,
                              pattern=pattern, rules=rules, shared_headroom=shp,
                              overhead_mtu=overhead)
    inputs = (
        ("ASIC", f"{asic.name}, cell {asic.cell_size} B"),
        ("speed", f"{speed_mbps // 1000}G, {lanes} lanes"),
        ("cable", f"{cable_m} m ({_fmt(terms.bytes_on_cable)} B in flight both ways)"),
        ("frame", f"{frame} B"),
        ("lossless traffic", f"mtu {pattern.mtu} B, {pattern.small_packet_percentage}% small "
                             f"packets -> cell occupancy {_fmt(terms.cell_occupancy)}"),
        ("MAC/PHY delay", f"{_fmt(terms.mac_phy)} B"),
        ("peer response", f"{_fmt(terms.peer_response)} B"),
        ("tile", f"{_fmt(terms.tile)} B"),
    )
    return Derivation(inputs, FORMULA, profile, vendor, source)


# --- pools ---------------------------------------------------------------------------------

# [POOL] constants.
PRIVATE_HEADROOM = 10 * KIB
MGMT_POOL = 256 * KIB
EGRESS_MIRROR_HEADROOM = 10 * KIB


def pool_sizes(layout: PoolLayout, asic_key: str, *, ports: int, ports_8lane: int,
               pg_profiles: list[tuple[PgProfile, int]], lossy_pgs_per_port: int,
               lossless_ports: int) -> dict[str, dict[str, str]]:
    """[POOL]'s split of the shared buffer, counting every port as admin up with its lossless
    PG (a spare port brought up later must not push the reservations past the buffer).

    pg_profiles: each lossless PG profile with how many PGs use it. Returns the pool fields
    to add ({"size": ...}, and "xoff" for a shared headroom pool). Raises ValueError when the
    reservations alone exceed the buffer.
    """
    asic = ASICS[asic_key]
    lossy_reserved = int(asic.pipeline_latency_kib * KIB)
    lossy_reserved_8 = int((2 * asic.pipeline_latency_kib - 1) * KIB)
    occupied = 0
    xoff_total = 0
    for profile, count in pg_profiles:
        occupied += profile.size * count
        if profile.xon + profile.xoff > profile.size:
            xoff_total += (profile.xon + profile.xoff - profile.size) * count
    # Lossy PGs reserve the pipeline latency implicitly; more on 8-lane ports.
    occupied += ports * lossy_pgs_per_port * lossy_reserved
    occupied += ports_8lane * lossy_pgs_per_port * (lossy_reserved_8 - lossy_reserved)
    # Reserved sizes of the egress lossy profile in each port's egress list.
    for name in layout.egress_list:
        occupied += int(layout.profiles[name].get("size", "0")) * ports
    shp = 0
    if xoff_total:
        occupied += lossless_ports * PRIVATE_HEADROOM
        # over_subscribe_ratio 1: the pool holds every PG's xoff (buffers_config.j2 with shp).
        shp = max(xoff_total - lossless_ports * PRIVATE_HEADROOM, 0)
        occupied += shp
    # Management PGs and egress mirror headroom per admin-up port, and the management pool.
    occupied += (ports - ports_8lane) * lossy_reserved + ports_8lane * lossy_reserved_8
    occupied += ports * EGRESS_MIRROR_HEADROOM + MGMT_POOL
    available = layout.mmu_bytes - occupied
    if available <= 0:
        raise ValueError(f"PFC headroom and reserved buffers ({occupied} B) exceed the "
                         f"{layout.mmu_bytes} B switch buffer")
    share = available // len(layout.ingress_pools)
    out: dict[str, dict[str, str]] = {}
    for name in (*layout.ingress_pools, *(p for p in layout.pools
                                          if p not in layout.ingress_pools)):
        if name == "egress_lossless_pool":
            out[name] = {"size": str(layout.mmu_bytes)}
        else:
            out[name] = {"size": str(share)}
    if shp:
        out[layout.lossless_pool]["xoff"] = str(shp)
    return out


# --- buffer objects and the model per switch -------------------------------------------------

def _layout(mmu: int, source: str, *, one_ingress_pool: bool = False) -> PoolLayout:
    """NVIDIA's buffer objects [OBJ].

    Two ingress pools: x86_64-mlnx_msn2700-r0/ACS-MSN2700/buffers_defaults_objects.j2, which
    ACS-SN5600, Mellanox-SN5600-O128, ACS-MSN4700 and ACS-MSN4600C link to. One ingress pool
    (lossy PGs share the lossless pool, and only ingress_lossless_profile is in the port's
    ingress list): x86_64-mlnx_msn2700-r0/Mellanox-SN2700-D48C8/buffers_defaults_objects.j2,
    which Mellanox-SN5600-V256 links to. ingress_lossy_profile has dynamic_th 3 in both; the 7
    of Mellanox-SN5600-C256S1's own objects file belongs to a SKU fabgen does not render.
    """
    lossy_pool = "ingress_lossless_pool" if one_ingress_pool else "ingress_lossy_pool"
    pools = {
        "ingress_lossless_pool": {"type": "ingress", "mode": "dynamic"},
        "ingress_lossy_pool": {"type": "ingress", "mode": "dynamic"},
        "egress_lossless_pool": {"type": "egress", "mode": "dynamic"},
        "egress_lossy_pool": {"type": "egress", "mode": "dynamic"},
    }
    if one_ingress_pool:
        del pools["ingress_lossy_pool"]
    return PoolLayout(
        mmu_bytes=mmu,
        ingress_pools=(("ingress_lossless_pool",) if one_ingress_pool
                       else ("ingress_lossless_pool", "ingress_lossy_pool")),
        lossless_pool="ingress_lossless_pool",
        lossy_pg_profile="ingress_lossy_profile",
        lossless_queue_profile="egress_lossless_profile",
        lossy_queue_profile="q_lossy_profile",
        profiles={
            "ingress_lossless_profile": {"pool": "ingress_lossless_pool", "size": "0",
                                         "dynamic_th": "7"},
            "ingress_lossy_profile": {"pool": lossy_pool, "size": "0", "dynamic_th": "3"},
            "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0",
                                        "dynamic_th": "7"},
            "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "9216",
                                     "dynamic_th": "7"},
            "q_lossy_profile": {"pool": "egress_lossy_pool", "size": "0", "dynamic_th": "3"},
        },
        pools=pools,
        ingress_list=(("ingress_lossless_profile",) if one_ingress_pool
                      else ("ingress_lossless_profile", "ingress_lossy_profile")),
        egress_list=("egress_lossless_profile", "egress_lossy_profile"),
        source=source,
    )


# egress_lossless_pool size of each SKU's buffers_defaults_t1.j2 [OBJ]: the whole buffer.
MMU_BYTES = {"sn5600": 158_229_504, "sn4700": 60_817_392, "sn4600c": 60_817_392}
_T1 = {
    "sn5600": "device/mellanox/x86_64-nvidia_sn5600-r0/ACS-SN5600/buffers_defaults_t1.j2",
    "sn4700": "device/mellanox/x86_64-mlnx_msn4700-r0/ACS-MSN4700/buffers_defaults_t1.j2",
    "sn4600c": "device/mellanox/x86_64-mlnx_msn4700-r0/ACS-MSN4700/buffers_defaults_t1.j2",
}
# SKUs with buffer templates of their own (the rest use their switch's ACS SKU's), and those of
# them whose buffer objects are NVIDIA's one-ingress-pool set (see _layout).
_T1_SKU = {
    "Mellanox-SN5600-V256":
        "device/mellanox/x86_64-nvidia_sn5600-r0/Mellanox-SN5600-V256/buffers_defaults_t1.j2",
    "Mellanox-SN4700-V64":
        "device/mellanox/x86_64-mlnx_msn4700-r0/Mellanox-SN4700-V64/buffers_defaults_t1.j2",
    "Mellanox-SN4700-C128":
        "device/mellanox/x86_64-mlnx_msn4700-r0/Mellanox-SN4700-C128/buffers_defaults_t1.j2",
}
# Their buffers_defaults_objects.j2 link to Mellanox-SN2700-D48C8's (one ingress pool).
ONE_INGRESS_POOL = frozenset({"Mellanox-SN5600-V256", "Mellanox-SN4700-V64",
                              "Mellanox-SN4700-C128"})
# (switch model, breakout) -> the SKU whose table applies (as the SONiC HwSKU data
# names them).
SKUS = {("sn5600", 1): "ACS-SN5600", ("sn5600", 2): "Mellanox-SN5600-O128",
        ("sn5600", 4): "Mellanox-SN5600-V256", ("sn4700", 1): "ACS-MSN4700",
        ("sn4700", 2): "Mellanox-SN4700-V64", ("sn4700", 4): "Mellanox-SN4700-C128",
        ("sn4600c", 1): "ACS-MSN4600C"}
# sonic-utilities 691b1bbc scripts/mellanox_buffer_migrator.py (MellanoxBufferMigrator
# __init__): every "Mellanox-" SKU but these is a traditional-model SKU; db_migrator sets its
# buffer_model to traditional whenever it migrates a config (a fresh config_db.json, an image
# upgrade), so fabgen renders them traditional and refuses dynamic.
DYNAMIC_MODEL_SKUS = frozenset({"Mellanox-SN5600-O128"})
TRADITIONAL_SOURCE = ("sonic-utilities scripts/mellanox_buffer_migrator.py: db_migrator sets "
                      "buffer_model traditional on every Mellanox-* SKU but "
                      "Mellanox-SN5600-O128")


def default_mode(sku: str) -> Literal["traditional", "dynamic"]:
    """The buffer model a SKU runs (see DYNAMIC_MODEL_SKUS)."""
    return "traditional" if sku.startswith("Mellanox-") and sku not in DYNAMIC_MODEL_SKUS \
        else "dynamic"
_FAMILY = {"spectrum-3": "NVIDIA Spectrum-3", "spectrum-4": "NVIDIA Spectrum-4"}


@cache
def model_for(model: str, breakout: int) -> BufferModel | None:
    asic = SWITCH_ASIC.get(model)
    if asic is None:
        return None
    sku = SKUS.get((model, breakout))
    note = "" if sku else (
        f"NVIDIA publishes no SONiC SKU (lookup table) for a {breakout}-way split {model}: "
        "only SONiC's dynamic buffer model sizes its headroom")
    mode = default_mode(sku) if sku else "dynamic"
    if sku and mode == "traditional":
        note = f"{sku} runs the traditional buffer model ({TRADITIONAL_SOURCE})"
    modes: tuple[Literal["traditional", "dynamic"], ...] = (
        ("traditional",) if mode == "traditional" else
        ("dynamic", "traditional") if sku else ("dynamic",))
    return BufferModel(
        family=_FAMILY[asic],
        asic=asic,
        sku=sku or "",
        vendor="mellanox",
        default_mode=mode,
        modes=modes,
        default_mode_source=(TRADITIONAL_SOURCE if mode == "traditional" else
                             "sonic-buildimage platform/mellanox/rules.mk SONIC_BUFFER_MODEL"),
        table=table(sku) if sku else None,
        layout=_layout(MMU_BYTES[model],
                       f"{BUILDIMAGE} {_T1_SKU.get(sku or '', _T1[model])}",
                       one_ingress_pool=sku in ONE_INGRESS_POOL),
        note=note,
    )
