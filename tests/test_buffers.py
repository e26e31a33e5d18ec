"""Buffer models: NVIDIA's and Arista's published lossless profiles, pinned and reproduced.

The rows below are copied from sonic-net/sonic-buildimage at 086b03bd70f9 (2026-08-23), the
files named above each block: NVIDIA's pg_profile_lookup.ini for the SKUs fabgen renders
(ACS-SN5600, whose table Mellanox-SN5600-O128 links to; Mellanox-SN5600-V256; ACS-MSN4700,
whose table ACS-MSN4600C links to; Mellanox-SN4700-V64 and -C128, the traditional-model SKUs of
the split SN4700) and Arista's for the 7060X6. Columns: speed (Mb/s), cable, size, xon, xoff,
threshold [, xon_offset].
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from fabgen.catalog.buffers import PgProfile, model_for, spectrum, tomahawk

# device/mellanox/x86_64-nvidia_sn5600-r0/ACS-SN5600/pg_profile_lookup.ini
ACS_SN5600 = """\
  10000    5m 64512   19456  45056         0
  25000    5m 67584   19456  48128         0
  40000    5m 75776   19456  57344         0
  50000    5m 82944   19456  63488         0
 100000    5m 133120  19456  113664        0
 200000    5m 150528  19456  131072        0
 400000    5m 250880  19456  231424        0
 800000    5m 304128  38912  257024        0
  10000   40m 65536   19456  46080         0
  25000   40m 71680   19456  52224         0
  40000   40m 81920   19456  62464         0
  50000   40m 89088   19456  69632         0
 100000   40m 146432  19456  126976        0
 200000   40m 177152  19456  157696        0
 400000   40m 303104  19456  283648        0
 800000   40m 410624  38912  362496        0
  10000  300m 75776   19456  56320         0
  25000  300m 96256   19456  76800         0
  40000  300m 120832  19456  101376        0
  50000  300m 138240  19456  118784        0
 100000  300m 244736  19456  225280        0
 200000  300m 374784  19456  355328        0
 400000  300m 697344  19456  677888        0
 800000  300m 1198080 38912  1150976       0
"""

# device/mellanox/x86_64-nvidia_sn5600-r0/Mellanox-SN5600-V256/pg_profile_lookup.ini
MELLANOX_SN5600_V256 = """\
  10000    5m 19456  19456  33792         0
  25000    5m 19456  19456  35840         0
  40000    5m 19456  19456  41984         0
  50000    5m 19456  19456  46080         0
 100000    5m 19456  19456  79872         0
 200000    5m 19456  19456  91136         0
 400000    5m 19456  19456  157696        0
 800000    5m 38912  38912  175104        0
  10000   40m 19456  19456  34816         0
  25000   40m 19456  19456  37888         0
  40000   40m 19456  19456  45056         0
  50000   40m 19456  19456  50176         0
 100000   40m 19456  19456  88064         0
 200000   40m 19456  19456  108544        0
 400000   40m 19456  19456  192512        0
 800000   40m 38912  38912  245760        0
  10000  300m 19456  19456  40960         0
  25000  300m 19456  19456  54272         0
  40000  300m 19456  19456  71680         0
  50000  300m 19456  19456  82944         0
 100000  300m 19456  19456  153600        0
 200000  300m 19456  19456  240640        0
 400000  300m 19456  19456  455680        0
 800000  300m 38912  38912  771072        0
"""

# device/mellanox/x86_64-mlnx_msn4700-r0/ACS-MSN4700/pg_profile_lookup.ini
ACS_MSN4700 = """\
  10000    5m 52224  19456  32768          0
  25000    5m 52224  19456  32768          0
  40000    5m 53248  19456  33792          0
  50000    5m 53248  19456  33792          0
 100000    5m 53248  19456  33792          0
 200000    5m 55296  19456  35840          0
 400000    5m 86016  37888  38912          0
  10000   40m 53248  19456  33792          0
  25000   40m 55296  19456  35840          0
  40000   40m 57344  19456  37888          0
  50000   40m 58368  19456  38912          0
 100000   40m 63488  19456  44032          0
 200000   40m 74752  19456  55296          0
 400000   40m 124928 37888  77824          0
  10000  300m 60416  19456  40960          0
  25000  300m 73728  19456  54272          0
  40000  300m 86016  19456  66560          0
  50000  300m 95232  19456  75776          0
 100000  300m 137216 19456  117760         0
 200000  300m 223232 19456  203776         0
 400000  300m 420864 37888  373760         0
"""
# device/arista/x86_64-arista_7060x6_64pe/Arista-7060X6-64PE-O128S2/pg_profile_lookup.ini
ARISTA_7060X6_64PE_O128S2 = """\
400000  5m    18796   0    612140  0         3556
400000  40m   18796   0    612140  0         3556
400000  150m  18796   0    612140  0         3556
"""

# device/arista/x86_64-arista_7060x6_64pe/Arista-7060X6-64PE-256x200G/BALANCED/
# pg_profile_lookup.ini
ARISTA_7060X6_64PE_256X200G = """\
 100000  5m   18796   0    300990  0         3556
 200000  5m   18796   0    300990  0         3556
 100000  40m  18796   0    300990  0         3556
 200000  40m  18796   0    300990  0         3556
"""

# device/mellanox/x86_64-mlnx_msn4700-r0/Mellanox-SN4700-O8C48/pg_profile_lookup.ini
# (Mellanox-SN4700-V64 links to it)
MELLANOX_SN4700_V64 = """\
  10000    5m 19456  19456  16384          0
  25000    5m 19456  19456  17408          0
  40000    5m 19456  19456  19456          0
  50000    5m 19456  19456  21504          0
 100000    5m 19456  19456  37888          0
 200000    5m 19456  19456  43008          0
 400000    5m 38912  38912  73728          0
  10000   40m 19456  19456  16384          0
  25000   40m 19456  19456  18432          0
  40000   40m 19456  19456  21504          0
  50000   40m 19456  19456  23552          0
 100000   40m 19456  19456  43008          0
 200000   40m 19456  19456  51200          0
 400000   40m 38912  38912  91136          0
  10000  300m 19456  19456  19456          0
  25000  300m 19456  19456  26624          0
  40000  300m 19456  19456  34816          0
  50000  300m 19456  19456  40960          0
 100000  300m 19456  19456  75776          0
 200000  300m 19456  19456  118784         0
 400000  300m 38912  38912  225280         0
  10000 1500m 19456  19456  35840          0
  25000 1500m 19456  19456  65536          0
  40000 1500m 19456  19456  96256          0
  50000 1500m 19456  19456  117760         0
 100000 1500m 19456  19456  230400         0
 200000 1500m 19456  19456  427008         0
 400000 1500m 38912  38912  427008         0
  10000 2000m 19456  19456  41984          0
  25000 2000m 19456  19456  80896          0
  40000 2000m 19456  19456  121856         0
  50000 2000m 19456  19456  149504         0
 100000 2000m 19456  19456  293888         0
 200000 2000m 19456  19456  555008         0
 400000 2000m 38912  38912  555008         0
"""

# device/mellanox/x86_64-mlnx_msn4700-r0/Mellanox-SN4700-C128/pg_profile_lookup.ini
MELLANOX_SN4700_C128 = """\
  10000    5m 19456  19456  24576          0
  25000    5m 19456  19456  26624          0
  40000    5m 19456  19456  30720          0
  50000    5m 19456  19456  33792          0
 100000    5m 19456  19456  59392          0
 200000    5m 19456  19456  66560          0
 400000    5m 38912  38912  115712         0
  10000   40m 19456  19456  25600          0
  25000   40m 19456  19456  28672          0
  40000   40m 19456  19456  33792          0
  50000   40m 19456  19456  36864          0
 100000   40m 19456  19456  66560          0
 200000   40m 19456  19456  80896          0
 400000   40m 38912  38912  144384         0
  10000  300m 19456  19456  30720          0
  25000  300m 19456  19456  41984          0
  40000  300m 19456  19456  54272          0
  50000  300m 19456  19456  63488          0
 100000  300m 19456  19456  120832         0
 200000  300m 19456  19456  188416         0
 400000  300m 38912  38912  358400         0
  10000 1500m 19456  19456  55296          0
  25000 1500m 19456  19456  103424         0
  40000 1500m 19456  19456  153600         0
  50000 1500m 19456  19456  187392         0
 100000 1500m 19456  19456  366592         0
  10000 2000m 19456  19456  32768          0
  25000 2000m 19456  19456  64512          0
  40000 2000m 19456  19456  97280          0
  50000 2000m 19456  19456  119808         0
 100000 2000m 19456  19456  234496         0
 400000 2000m 38912  38912  876544         0
"""

NVIDIA = {"ACS-SN5600": ACS_SN5600, "Mellanox-SN5600-O128": ACS_SN5600,
          "Mellanox-SN5600-V256": MELLANOX_SN5600_V256, "ACS-MSN4700": ACS_MSN4700,
          "ACS-MSN4600C": ACS_MSN4700, "Mellanox-SN4700-V64": MELLANOX_SN4700_V64,
          "Mellanox-SN4700-C128": MELLANOX_SN4700_C128}
ARISTA = {"Arista-7060X6-64PE-O128S2": ARISTA_7060X6_64PE_O128S2,
          "Arista-7060X6-64PE-256x200G": ARISTA_7060X6_64PE_256X200G}


def _rows(text: str) -> dict[tuple[int, int], PgProfile]:
    out = {}
    for line in text.splitlines():
        speed, cable, size, xon, xoff, threshold, *offset = line.split()
        out[int(speed), int(cable.removesuffix("m"))] = PgProfile(
            int(size), int(xon), int(xoff), int(threshold),
            int(offset[0]) if offset else None)
    return out


@pytest.mark.parametrize("sku", sorted(NVIDIA))
def test_nvidia_tables_are_reproduced_row_for_row(sku: str) -> None:
    assert spectrum.table(sku).rows == _rows(NVIDIA[sku])


@pytest.mark.parametrize("sku", sorted(NVIDIA))
def test_formula_gives_every_published_row(sku: str) -> None:
    """The formula with the table's inputs, not the stored exception, against every row."""
    spec = spectrum.TABLES[sku]
    for (speed, cable), row in _rows(NVIDIA[sku]).items():
        lanes = 8 if speed in spec.eight_lane_speeds else 4
        got, _ = spectrum.headroom(spectrum.ASICS[spec.asic], speed, cable, port_mtu=spec.frame,
                                   lanes=lanes, pattern=spec.pattern, rules=spec.rules,
                                   shared_headroom=spec.shared_headroom,
                                   overhead_mtu=spec.overhead_mtu)
        if (spec.sku, speed, cable) in spectrum.PUBLISHED_EXCEPTIONS:
            assert got != row, (sku, speed, cable, "an exception the formula gives")
            if spec.sku == "ACS-SN5600":
                # Size 1 KiB below its own xon + xoff, which no revision produces.
                assert (got.xon, got.xoff, got.size - 1024) == (row.xon, row.xoff, row.size)
            else:
                # The SN4700 tables' long-cable rows: only xoff differs from the formula.
                assert (got.xon, got.size) == (row.xon, row.size) and got.xoff != row.xoff
            continue
        assert got == row, (sku, speed, cable)


def test_exceptions_are_few_and_long() -> None:
    """Every row the formula does not give is a 1500 m or 2000 m row, but ACS-SN5600's one."""
    for sku, speed, cable in spectrum.PUBLISHED_EXCEPTIONS:
        assert cable in (1500, 2000) or (sku, speed, cable) == ("ACS-SN5600", 40000, 5)


def test_issue_numbers_for_sn5600_400g() -> None:
    rows = spectrum.table("ACS-SN5600").rows
    assert rows[400000, 5] == PgProfile(size=250880, xon=19456, xoff=231424)
    assert rows[400000, 40].xoff == 283648
    assert rows[400000, 300].xoff == 677888


def test_current_lua_by_hand() -> None:
    """buffer_headroom_mellanox.lua for SN5600 400G (4 lanes), 5 m, port MTU 9100, SONiC's
    dynamic-model traffic pattern (mtu 1024, 50% small packets):
      cable    2 x 5 m x 400e9 b/s / 1.98e8 m/s / 8000        =  2525.25 B
      peer     905 quanta x 512 bit / 8                       = 57920 B
      tile     400000 / 1000 x 120 / 8                        =  6000 B
      mac/phy  0.8 KiB                                        =   819.2 B
      propagation 9100 + 2525.25 + 819.2 + 57920 + 6000       = 76364.45 B
      small packets by byte 100 x 64 / ((50 x 64 + 50 x 1024) / 100) = 11.76 %
      occupancy (100 - 11.76 + 11.76 x ceil(192 / 64)) / 100 = 1.2353
      xoff 1024 + 76364.45 x 1.2353 = 95356.6 -> 96256 (94 KiB); the worst case
      (x 3: 230400) is more than 2 KiB above it, so +2048 = 98304; xon 19 KiB = 19456."""
    profile, terms = spectrum.headroom(spectrum.ASICS["spectrum-4"], 400000, 5, port_mtu=9100,
                                       lanes=4, pattern=spectrum.DYNAMIC_PATTERN)
    assert terms.bytes_on_cable == Fraction(2 * 5 * 400_000 * 10**9, 198_000_000 * 8000)
    assert terms.peer_response == 57920 and terms.tile == 6000
    assert profile == PgProfile(size=98304 + 19456, xon=19456, xoff=98304)
    # 8 lanes (800G): pipeline latency doubles and one port MTU is added to the size.
    eight, _ = spectrum.headroom(spectrum.ASICS["spectrum-4"], 800000, 5, port_mtu=9100,
                                 lanes=8, pattern=spectrum.DYNAMIC_PATTERN)
    # 38912 + 108544 + 9100 = 156556, rounded up to a whole KiB.
    assert (eight.xon, eight.xoff, eight.size) == (38912, 108544, 156672)


@pytest.mark.parametrize("sku", sorted(ARISTA))
def test_arista_tables_are_pinned(sku: str) -> None:
    assert tomahawk.TABLES[sku].rows == _rows(ARISTA[sku])


def test_models_per_switch() -> None:
    sn5600 = model_for("sn5600", 2)
    assert sn5600 is not None and sn5600.sku == "Mellanox-SN5600-O128"
    assert sn5600.default_mode == "dynamic" and sn5600.vendor == "mellanox"
    arista = model_for("7060x6-64pe", 2)
    assert arista is not None and arista.default_mode == "traditional"
    assert arista.modes == ("traditional",)
    # No public numbers: a model that says so, or nothing at all for a custom switch.
    for key in ("th5-51t", "7060x6-64pe"):
        unpublished = model_for(key, 1)
        assert unpublished is not None and unpublished.table is None and unpublished.note
    assert model_for("custom", 1) is None
    split = model_for("sn4600c", 2)
    assert split is not None and split.table is None and split.modes == ("dynamic",)
    # NVIDIA's Mellanox-* SKUs (but O128) run the traditional model: db_migrator forces it.
    for key, breakout in (("sn4700", 2), ("sn4700", 4), ("sn5600", 4)):
        traditional = model_for(key, breakout)
        assert traditional is not None and traditional.table is not None
        assert traditional.modes == ("traditional",) == (traditional.default_mode,)


def test_pool_sizes_refuse_more_headroom_than_buffer() -> None:
    model = model_for("sn5600", 2)
    assert model is not None and model.layout is not None
    huge = PgProfile(size=3_000_000, xon=19456, xoff=2_980_544)
    with pytest.raises(ValueError, match="exceed"):
        spectrum.pool_sizes(model.layout, "spectrum-4", ports=128, ports_8lane=0,
                            pg_profiles=[(huge, 128)], lossy_pgs_per_port=1,
                            lossless_ports=128)


# Buffer objects as NVIDIA's templates write them (sonic-buildimage at 086b03bd70f9):
# device/mellanox/x86_64-mlnx_msn2700-r0/ACS-MSN2700/buffers_defaults_objects.j2 (linked from
# ACS-SN5600, Mellanox-SN5600-O128, ACS-MSN4700, ACS-MSN4600C) and
# device/mellanox/x86_64-mlnx_msn2700-r0/Mellanox-SN2700-D48C8/buffers_defaults_objects.j2
# (linked from Mellanox-SN5600-V256): BUFFER_PROFILE, BUFFER_POOL without sizes, the port
# profile lists. ingress_lossy_profile has dynamic_th 3 in both (7 only in the objects of
# Mellanox-SN5600-C256S1 / -C224O8, SKUs fabgen does not render).
NVIDIA_OBJECTS = {
    "two ingress pools": {
        "profiles": {
            "ingress_lossless_profile": {"pool": "ingress_lossless_pool", "size": "0",
                                         "dynamic_th": "7"},
            "ingress_lossy_profile": {"pool": "ingress_lossy_pool", "size": "0",
                                      "dynamic_th": "3"},
            "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0",
                                        "dynamic_th": "7"},
            "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "9216",
                                     "dynamic_th": "7"},
            "q_lossy_profile": {"pool": "egress_lossy_pool", "size": "0", "dynamic_th": "3"},
        },
        "pools": {"ingress_lossless_pool": "ingress", "ingress_lossy_pool": "ingress",
                  "egress_lossless_pool": "egress", "egress_lossy_pool": "egress"},
        "ingress_list": ("ingress_lossless_profile", "ingress_lossy_profile"),
        "egress_list": ("egress_lossless_profile", "egress_lossy_profile"),
    },
    "one ingress pool": {
        "profiles": {
            "ingress_lossless_profile": {"pool": "ingress_lossless_pool", "size": "0",
                                         "dynamic_th": "7"},
            "ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "0",
                                      "dynamic_th": "3"},
            "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0",
                                        "dynamic_th": "7"},
            "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "9216",
                                     "dynamic_th": "7"},
            "q_lossy_profile": {"pool": "egress_lossy_pool", "size": "0", "dynamic_th": "3"},
        },
        "pools": {"ingress_lossless_pool": "ingress", "egress_lossless_pool": "egress",
                  "egress_lossy_pool": "egress"},
        "ingress_list": ("ingress_lossless_profile",),
        "egress_list": ("egress_lossless_profile", "egress_lossy_profile"),
    },
}
# egress_lossless_pool_size of buffers_defaults_t1.j2: ACS-SN5600 (O128 links to it),
# Mellanox-SN5600-V256, ACS-MSN4700 (ACS-MSN4600C links to it).
NVIDIA_MMU = {("sn5600", 1): 158229504, ("sn5600", 2): 158229504, ("sn5600", 4): 158229504,
              ("sn4700", 1): 60817392, ("sn4600c", 1): 60817392}
NVIDIA_OBJECT_SET = {("sn5600", 1): "two ingress pools", ("sn5600", 2): "two ingress pools",
                     ("sn5600", 4): "one ingress pool", ("sn4700", 1): "two ingress pools",
                     ("sn4600c", 1): "two ingress pools"}


@pytest.mark.parametrize("key", sorted(NVIDIA_MMU))
def test_nvidia_buffer_objects_are_pinned(key: tuple[str, int]) -> None:
    model = model_for(*key)
    assert model is not None and model.layout is not None
    layout = model.layout
    vendor = NVIDIA_OBJECTS[NVIDIA_OBJECT_SET[key]]
    assert layout.mmu_bytes == NVIDIA_MMU[key]
    assert layout.profiles == vendor["profiles"]
    assert {n: f["type"] for n, f in layout.pools.items()} == vendor["pools"]
    assert layout.ingress_pools == tuple(n for n, t in vendor["pools"].items()
                                         if t == "ingress")
    assert layout.ingress_list == vendor["ingress_list"]
    assert layout.egress_list == vendor["egress_list"]


# Arista's buffers_defaults_t1.j2 (device/arista/x86_64-arista_7060x6_64pe/<SKU>/ at
# 086b03bd70f9): BUFFER_POOL and BUFFER_PROFILE verbatim.
ARISTA_OBJECTS = {
    "Arista-7060X6-64PE-O128S2": {
        "pools": {"ingress_lossless_pool": {"size": "166115492", "type": "ingress",
                                            "mode": "dynamic", "xoff": "29423360"},
                  "egress_lossless_pool": {"size": "166115492", "type": "egress",
                                           "mode": "dynamic"}},
        "profiles": {"ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "0",
                                               "static_th": "167546528"},
                     "egress_lossy_profile": {"pool": "egress_lossless_pool", "size": "1778",
                                              "dynamic_th": "0"},
                     "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0",
                                                 "static_th": "167546528"}},
    },
    "Arista-7060X6-64PE-256x200G": {  # BALANCED/buffers_defaults_t1.j2
        "pools": {"ingress_lossless_pool": {"size": "121964196", "type": "ingress",
                                            "mode": "dynamic", "xoff": "29520896"},
                  "egress_lossless_pool": {"size": "121964196", "type": "egress",
                                           "mode": "static"}},
        "profiles": {"ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "0",
                                               "static_th": "167546528"},
                     "egress_lossy_profile": {"pool": "egress_lossless_pool", "size": "1778",
                                              "dynamic_th": "1"},
                     "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0",
                                                 "static_th": "125995684"}},
    },
}


@pytest.mark.parametrize("sku", sorted(ARISTA_OBJECTS))
def test_arista_buffer_objects_are_pinned(sku: str) -> None:
    layout = tomahawk.LAYOUTS[sku]
    vendor = ARISTA_OBJECTS[sku]
    pools = {n: {**f, **layout.fixed_sizes.get(n, {})} for n, f in layout.pools.items()}
    assert pools == vendor["pools"]
    assert layout.profiles == vendor["profiles"]
