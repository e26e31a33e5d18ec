"""SONiC buffers: lossless PGs that SONiC's own buffer manager keeps, pools that fit the buffer.

tests/buffermgrd.py models buffermgrd's traditional-model rules (sonic-swss buffermgr.cpp);
these tests boot it on every rendered switch, with the vendor's lookup rows as pinned in
tests/test_buffers.py (not fabgen's reproduction of them), flap every port (admin down, then
up) and check each port still has its lossless PG with the profile fabgen sized for it. The
same module models NVIDIA's shared-buffer accounting (buffer_pool_mellanox.lua), which the
pool sizes are checked against with every port up.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabgen import qos
from fabgen.catalog.buffers import LookupTable, PgProfile, model_for
from fabgen.intent import load
from fabgen.platforms.sonic import target as sonic
from fabgen.targets.base import RenderContext
from fabgen.topology.build import build
from tests import sonic_yang, test_buffers
from tests.buffermgrd import BufferMgr, mellanox_pool_size

BASE = """\
name: {name}
fabric: {{transport: roce, speed: {speed}}}
cluster:
  nodes: 8
  node: {{model: dgx-h100, gpus: 8, nics: 8, nic: connectx-7, nic_ports: 1}}
topology:
  leaf: {{model: {model}{breakout}}}
qos:
  mtu: 9100
  cable_length_m: {host}
  fabric_cable_length_m: {fabric}
  buffer_model: {mode}
platforms: {{leaf: sonic, spine: sonic}}
"""
SPLIT = ", breakout: 2x400G"
CASES = {
    # NVIDIA table rows 5/40/300 m: 20 m hosts use the 40 m row, 100 m uplinks the 300 m row.
    "sn5600-traditional": dict(speed="400G", model="sn5600", breakout=SPLIT, host=20,
                               fabric=100, mode="traditional"),
    # Past the last row: a computed profile under a name buffermgrd never deletes.
    "sn5600-500m": dict(speed="400G", model="sn5600", breakout=SPLIT, host=5, fabric=500,
                        mode="traditional"),
    "sn5600-dynamic": dict(speed="400G", model="sn5600", breakout=SPLIT, host=5,
                           fabric=100, mode="auto"),
    "7060x6-o128s2": dict(speed="400G", model="7060x6-64pe", breakout=SPLIT, host=5,
                          fabric=100, mode="auto"),
    "sn4700-traditional": dict(speed="400G", model="sn4700", breakout="", host=5,
                               fabric=40, mode="traditional"),
    # NVIDIA's shared-headroom-pool SKU (size = xon) with its one-ingress-pool objects.
    "sn5600-v256-traditional": dict(speed="200G", model="sn5600", breakout=", breakout: 4x200G",
                                    host=5, fabric=40, mode="traditional"),
    # The split SN4700's SKUs, traditional by NVIDIA's choice (db_migrator forces it): the
    # model picks it, shared headroom pool, one ingress pool.
    "sn4700-v64": dict(speed="200G", model="sn4700", breakout=", breakout: 2x200G", host=5,
                       fabric=300, mode="auto"),
    "sn4700-c128": dict(speed="100G", model="sn4700", breakout=", breakout: 4x100G", host=5,
                        fabric=40, mode="auto"),
}
# ASIC_TABLE pipeline_latency of Spectrum-3 and Spectrum-4, KiB (sonic-buildimage
# platform/mellanox/asic_table.j2 at 086b03bd70f9).
PIPELINE_LATENCY_KIB = 19


def _vendor_table(sku: str) -> LookupTable:
    """The SKU's pg_profile_lookup.ini as pinned from sonic-buildimage in tests/test_buffers."""
    text = {**test_buffers.NVIDIA, **test_buffers.ARISTA}[sku]
    return LookupTable(sku, "tests/test_buffers.py", test_buffers._rows(text))


def _ctx(name: str, tmp: Path) -> RenderContext:
    path = tmp / f"{name}.yaml"
    path.write_text(BASE.format(name=name, **CASES[name]), encoding="utf-8")
    intent = load(path).intent
    return RenderContext(intent=intent, fabric=build(intent), qos=qos.plan(intent))


@pytest.mark.parametrize("name", sorted(CASES))
def test_lossless_pgs_survive_admin_down_up(name: str, tmp_path: Path) -> None:
    ctx = _ctx(name, tmp_path)
    files = sonic.TARGET.render(ctx)
    for switch in ctx.fabric.switches:
        config = json.loads(files[f"sonic/{switch.name}/config_db.json"])
        buffers = sonic.switch_buffers(ctx, switch)
        model = model_for(switch.model, switch.breakout)
        assert model is not None
        if buffers.mode == "dynamic":
            # buffermgrd computes headroom itself; the CONFIG_DB PGs are "NULL" and stay.
            assert all(config["BUFFER_PG"][f"{h.port.name}|3"] == {"profile": "NULL"}
                       for h in buffers.ports)
            assert config["CABLE_LENGTH"]["ROCE"] == {h.port.name: f"{h.port.cable_m}m"
                                                      for h in buffers.ports}
            continue
        mgr = BufferMgr(config, _vendor_table(model.sku), model.vendor)
        mgr.boot()
        expected = {h.port.name: h.profile for h in buffers.ports}
        for port, entry in config["PORT"].items():
            if entry["admin_status"] == "up":
                _assert_sized(mgr, port, expected, f"{name}/{switch.name} boot")
        for port in config["PORT"]:
            mgr.set_admin(port, "down")
            mgr.set_admin(port, "up")
            _assert_sized(mgr, port, expected, f"{name}/{switch.name} after a flap")


def _assert_sized(mgr: BufferMgr, port: str, expected: dict[str, PgProfile | None],
                  where: str) -> None:
    profile = expected[port]
    pgs = mgr.lossless(port)
    assert set(pgs) == {"3"}, f"{where}: {port} lost its lossless PG"
    fields = pgs["3"]
    assert profile is not None
    assert (fields["xon"], fields["xoff"], fields["size"]) == (
        str(profile.xon), str(profile.xoff), str(profile.size)), f"{where}: {port}"


def test_the_model_catches_a_profile_buffermgrd_cannot_rebuild(tmp_path: Path) -> None:
    """What fabgen rendered before: a default-named 100 m profile NVIDIA's table lacks."""
    ctx = _ctx("sn5600-traditional", tmp_path)
    leaf = ctx.fabric.switches_of("spine")[0]
    config = json.loads(sonic.TARGET.render(ctx)[f"sonic/{leaf.name}/config_db.json"])
    port = next(p for p, e in config["PORT"].items() if e["admin_status"] == "up")
    old = config["BUFFER_PG"][f"{port}|3"]["profile"]
    config["BUFFER_PROFILE"]["pg_lossless_400000_100m_profile"] = config["BUFFER_PROFILE"][old]
    config["BUFFER_PG"][f"{port}|3"] = {"profile": "pg_lossless_400000_100m_profile"}
    config["CABLE_LENGTH"]["ROCE"][port] = "100m"
    model = model_for(leaf.model, leaf.breakout)
    assert model is not None
    mgr = BufferMgr(config, _vendor_table(model.sku), model.vendor)
    mgr.boot()
    assert mgr.lossless(port)  # up at boot: buffermgrd cannot rebuild it, but leaves it
    mgr.set_admin(port, "down")
    mgr.set_admin(port, "up")
    assert mgr.lossless(port) == {}  # gone: the failure the issue describes


@pytest.mark.parametrize("name", sorted(CASES))
def test_cable_length_is_a_table_row_in_the_traditional_model(name: str, tmp_path: Path) -> None:
    ctx = _ctx(name, tmp_path)
    for switch in ctx.fabric.switches:
        buffers = sonic.switch_buffers(ctx, switch)
        if buffers.mode != "traditional" or buffers.model is None \
                or buffers.model.table is None:
            continue
        table = buffers.model.table
        for h in buffers.ports:
            speed = h.port.speed_gbps * 1000
            if h.rebuilt_by_buffermgrd:
                assert h.cable_key_m >= h.port.cable_m
                assert h.cable_key_m == table.at_or_above(speed, h.port.cable_m)
                assert h.profile == table.rows[speed, h.cable_key_m]
                assert h.profile_name == f"pg_lossless_{speed}_{h.cable_key_m}m_profile"
            else:
                assert not (h.profile_name or "").startswith("pg_lossless_")


@pytest.mark.parametrize("name", sorted(CASES))
def test_pools_and_headroom_fit_the_buffer(name: str, tmp_path: Path) -> None:
    """Shared pools plus every port's lossless PG (spare ports too, once up) <= the buffer."""
    ctx = _ctx(name, tmp_path)
    for switch in ctx.fabric.switches:
        buffers = sonic.switch_buffers(ctx, switch)
        pools = buffers.tables.get("BUFFER_POOL", {})
        model = buffers.model
        assert model is not None and model.layout is not None
        if buffers.mode == "dynamic":
            assert all("size" not in f for n, f in pools.items() if n != "egress_lossless_pool")
            continue
        if model.layout.fixed_sizes:
            # Tomahawk 5: Arista's published pool sizes for the SKU, verbatim (how Broadcom's
            # SAI carves headroom from them is not public, so nothing is recomputed).
            assert {p: {k: f[k] for k in ("size", "xoff") if k in f}
                    for p, f in pools.items()} == model.layout.fixed_sizes
            continue
        shared = sum(int(pools[p]["size"]) + int(pools[p].get("xoff", "0"))
                     for p in model.layout.ingress_pools)
        reserved = sum(h.profile.size for h in buffers.ports if h.profile is not None)
        assert shared + reserved <= model.layout.mmu_bytes, switch.name


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items()
                                        if str(c["model"]).startswith("sn")
                                        and c["mode"] == "traditional"))
def test_pools_are_what_nvidias_accounting_leaves_with_every_port_up(name: str,
                                                                      tmp_path: Path) -> None:
    """buffer_pool_mellanox.lua's split of the rendered config, every port (spares too)
    brought up so buffermgrd gives it its lossless PG: fabgen's pools are no bigger, so the
    buffer is never oversubscribed when a spare port is cabled and enabled."""
    ctx = _ctx(name, tmp_path)
    files = sonic.TARGET.render(ctx)
    for switch in ctx.fabric.switches:
        config = json.loads(files[f"sonic/{switch.name}/config_db.json"])
        model = model_for(switch.model, switch.breakout)
        assert model is not None
        mgr = BufferMgr(config, _vendor_table(model.sku), model.vendor)
        mgr.boot()
        for port in config["PORT"]:
            mgr.set_admin(port, "up")
        assert all(mgr.lossless(port) for port in config["PORT"])
        expected = mellanox_pool_size(mgr.db, pipeline_latency_kib=PIPELINE_LATENCY_KIB)
        pools = config["BUFFER_POOL"]
        shared = [n for n, f in pools.items() if n != "egress_lossless_pool"]
        for pool in shared:
            # fabgen rounds down, the lua up: at most one byte apart.
            assert 0 <= expected - int(pools[pool]["size"]) <= 1, (switch.name, pool)


@pytest.mark.realtool
@pytest.mark.parametrize("name", sorted(CASES))
def test_every_buffer_model_validates_with_yanglint(name: str, tmp_path: Path) -> None:
    sonic_yang.yang_root()  # yanglint and the models, or a skip saying which is missing
    ctx = _ctx(name, tmp_path)
    files = sonic.TARGET.render(ctx)
    for role in ("leaf", "spine"):
        switch = ctx.fabric.switches_of(role)[0]
        result = sonic_yang.validate(json.loads(files[f"sonic/{switch.name}/config_db.json"]))
        assert result.ok, f"{name}/{switch.name}:\n{result.stderr}"
