"""The Junos configuration read back: QoS from the plan, Juniper's published values pinned,
ports and peers from the fabric, the three renderings equal, the catalog entry's datasheet
values, and intent text that cannot inject a statement."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest

from fabgen import catalog, underlay
from fabgen.platforms.junos import config, cos, facts, target, text
from fabgen.platforms.junos.push import candidate
from fabgen.targets.base import RenderContext


def _leaf(ctx: RenderContext) -> Any:
    return next(s for s in ctx.fabric.switches if s.role == "leaf")


def _section(cfg: dict[str, Any], name: str) -> Any:
    root = cfg[config.ROOT]
    return next(v for k, v in root.items() if k.endswith(":" + name))


def test_juniper_values_are_pinned() -> None:
    # [JVD] leaf1_qfx5240-64od.conf; [PFCWD]; [MTU]; [YANG] maximum-ecmp enum.
    assert cos.QUEUE_BUFFER_BYTES == 165_200_000  # [COS] 165.2 MB
    assert cos.STRICT_PERCENT == 5
    assert config.DLB_INACTIVITY_US == 128
    assert facts.GNMI_PORT == 32767
    assert (facts.MAX_MEDIA_MTU, facts.ETHERNET_OVERHEAD, facts.MAX_IP_MTU) == (9216, 14, 9202)
    assert facts.WATCHDOG_ACTIONS == ("drop", "forward")
    assert (facts.WATCHDOG_DEFAULT_POLL_MS, facts.WATCHDOG_DEFAULT_DETECTION_POLLS,
            facts.WATCHDOG_DEFAULT_RECOVERY_MS) == (100, 2, 200)
    assert facts.ECMP_STEPS[0] == 16 and facts.MAX_ECMP == 512
    assert cos.SHARED_BUFFER_JVD["ingress"] == {"lossless": 66, "lossless-headroom": 24,
                                                "lossy": 10}


def test_catalog_entry_matches_the_datasheet() -> None:
    model = catalog.switches()["qfx5240-64od"]
    assert (model.vendor, model.ports, model.speed_gbps, model.cages, model.cage) == \
        ("Juniper", 64, 800, 64, "OSFP")
    assert [str(b) for b in model.breakouts] == ["2x400G", "4x200G"]
    assert set(facts.HARDWARE) == {"qfx5240-64od"}


@pytest.mark.parametrize("port, breakout, name", [
    (1, 1, "et-0/0/0"), (64, 1, "et-0/0/63"), (1, 2, "et-0/0/0:0"), (2, 2, "et-0/0/0:1"),
    (3, 2, "et-0/0/1:0"), (8, 4, "et-0/0/1:3"), (128, 2, "et-0/0/63:1")])
def test_port_names(port: int, breakout: int, name: str) -> None:
    assert facts.port_name(port, breakout) == name


def test_qos_follows_the_plan(junos_ctx: RenderContext) -> None:
    plan = junos_ctx.qos
    assert plan is not None
    cfg = config.device_config(junos_ctx, _leaf(junos_ctx))
    cosd = _section(cfg, "class-of-service")
    classes = {c["name"]: c for c in cosd["forwarding-classes"]["class"]}
    rdma = classes["fabgen-rdma"]
    assert (rdma["queue-num"], rdma["pfc-priority"], rdma["no-loss"]) == (3, 3, [None])
    assert classes["fabgen-cnp"]["queue-num"] == 6 and "no-loss" not in classes["fabgen-cnp"]
    dscp = {fc["name"]: fc["loss-priority"][0]["code-points"]
            for fc in cosd["classifiers"]["dscp"][0]["forwarding-class"]}
    assert dscp["fabgen-rdma"] == ["011010"] and dscp["fabgen-cnp"] == ["110000"]
    assert len(dscp["fabgen-default"]) == 64 - 3  # every DSCP is classified
    assert sum(len(v) for v in dscp.values()) == 64
    profiles = {p["name"]: p for p in cosd["congestion-notification-profile"]}
    assert set(profiles) == {"fabgen-pfc-5m", "fabgen-pfc-100m"}  # the plan's cable lengths
    p = profiles["fabgen-pfc-100m"]
    assert p["input"]["dscp"]["code-point"] == [{"name": "011010", "pfc": [None]}]
    assert p["output"]["ieee-802.1"]["code-point"] == [{"name": "011",
                                                         "flow-control-queue": [3]}]
    assert p["pfc-watchdog"] == {"poll-interval": 100, "detection": 2, "recovery": 400,
                                 "watchdog-action": "drop"}
    scheds = {s["name"]: s for s in cosd["schedulers"]}
    assert scheds["fabgen-q6"]["priority"] == "strict-high"
    assert scheds["fabgen-q3"]["explicit-congestion-notification"] == [None]
    rates = [s["transmit-rate"]["percent"] for s in scheds.values()]
    assert sum(rates) == 100
    drop = cosd["drop-profiles"][0]["interpolate"]
    assert drop["drop-probability"] == [0, plan.ecn.probability if plan.ecn else 0]
    # The plan's 150 KB..1.5 MB over the QFX5240's 165.2 MB buffer, rounded down.
    assert plan.ecn is not None and (plan.ecn.min_bytes, plan.ecn.max_bytes) == \
        (150_000, 1_500_000)
    assert drop["fill-level"] == [0, 1]


@pytest.mark.parametrize("low, high, levels", [
    (150_000, 1_500_000, (0, 1)),  # the usual plan: both below 1 % of 165.2 MB
    (1_652_000, 3_304_000, (1, 2)),  # exact percents stay
    (1_651_999, 3_303_999, (0, 1)),  # a byte short rounds down: marking never later
    (16_520_000, 148_680_000, (10, 90)),
    (160_000_000, 165_000_000, (96, 99)),  # never 100 % (Juniper), low < high
])
def test_ecn_thresholds_come_from_the_plans_bytes(low: int, high: int,
                                                  levels: tuple[int, int]) -> None:
    assert cos.ecn_fill_levels(low, high) == levels
    start, end = levels
    # Each level's byte point on the whole buffer is at or below the plan's.
    assert start * cos.QUEUE_BUFFER_BYTES // 100 <= low
    assert end < 100 and start < end


def test_ports_peers_and_bgp_follow_the_fabric(junos_ctx: RenderContext) -> None:
    leaf = _leaf(junos_ctx)
    cfg = config.device_config(junos_ctx, leaf)
    intfs = {i["name"]: i for i in _section(cfg, "interfaces")["interface"]}
    ports = junos_ctx.index.ports(leaf)
    assert len([n for n in intfs if ":" in n]) == leaf.radix
    assert intfs["et-0/0/0"] == {"name": "et-0/0/0", "number-of-sub-ports": 2, "speed": "400g"}
    for p in ports:
        unit = intfs[facts.port_name(p.port, leaf.breakout)]["unit"][0]["family"]["inet"]
        assert unit["address"] == [{"name": p.interface_address}] and unit["mtu"] == 9100
    spare = [i for n, i in intfs.items() if ":" in n and "description" not in i]
    assert spare and all(i["disable"] == [None] and i["mtu"] == 9114 for i in spare)
    group = _section(cfg, "protocols")["bgp"]["group"][0]
    uplinks = [p for p in ports if p.uplink]
    assert [n["name"] for n in group["neighbor"]] == [p.peer_ip for p in uplinks]
    bfd = underlay.plan(junos_ctx.intent).bfd
    assert bfd is not None
    assert group["bfd-liveness-detection"] == {"minimum-interval": bfd.interval_ms,
                                               "multiplier": bfd.multiplier}
    routing = _section(cfg, "routing-options")
    assert int(routing["maximum-ecmp"]) >= len(uplinks)
    assert routing["autonomous-system"] == {"as-number": str(leaf.asn)}
    dlb = _section(cfg, "forwarding-options")["enhanced-hash-key"]["ecmp-dlb"]
    assert dlb["flowlet"]["inactivity-interval"] == 128  # load_balancing.mode: adaptive


def test_the_three_renderings_say_the_same(junos_ctx: RenderContext) -> None:
    cfg = config.device_config(junos_ctx, _leaf(junos_ctx))
    curly = set(candidate.flatten(candidate.parse(text.curly_text(cfg))))
    sets = {tuple(re.findall(r'"[^"]*"|\S+', line)[1:])
            for line in text.set_text(cfg).splitlines()}
    assert curly == sets
    assert ("routing-options", "autonomous-system", str(_leaf(junos_ctx).asn)) in sets
    assert ("interfaces", "et-0/0/0:0", "unit", "0", "family", "inet", "mtu", "9100") in sets
    assert ("class-of-service", "drop-profiles", "fabgen-ecn", "interpolate", "fill-level",
            "1") in sets
    # Every leaf value of the JSON is in the text (no statement dropped on the way).
    leaves = 0

    def walk(node: Any) -> None:
        nonlocal leaves
        if isinstance(node, dict):
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
        elif node is not None:
            leaves += 1
            shown = {str(node), f'"{node}"'}
            assert any(shown & set(path) for path in sets), node

    walk(cfg)
    assert leaves > 1000


def test_intent_text_cannot_add_a_statement(junos_ctx: RenderContext) -> None:
    hostile = junos_ctx.intent.model_copy(update={"description": 'x"; } system { root-auth'})
    ctx = RenderContext(hostile, junos_ctx.fabric, junos_ctx.qos)
    curly = text.curly_text(config.device_config(ctx, _leaf(ctx)))
    assert "root-auth" in curly and '"; }' not in curly
    assert [n.words[0] for n in candidate.parse(curly)] == \
        [name for name, _ in config.SECTIONS]


def test_target_writes_three_files_and_notes(junos_ctx: RenderContext) -> None:
    t = target.JunosTarget()
    files = t.render(junos_ctx)
    assert len(files) == 3 * len(junos_ctx.fabric.switches) + 1
    notes = files["junos/NOTES.txt"]
    assert "the plan's 150,000..1,500,000 B are fill levels 0..1 %" in notes
    assert "NOT verified" in notes and "Shared buffer: NOT written" in notes


def test_what_junos_cannot_express_is_refused(junos_ctx: RenderContext) -> None:
    plan = junos_ctx.qos
    assert plan is not None
    alert = dataclasses.replace(plan, watchdog=dataclasses.replace(plan.watchdog,
                                                                    action="alert"))
    with pytest.raises(cos.UnsupportedPlan, match="alert"):
        cos.class_of_service(alert, [5])
    big = RenderContext(junos_ctx.intent, junos_ctx.fabric, dataclasses.replace(plan, mtu=9214))
    with pytest.raises(cos.UnsupportedPlan, match="9228"):
        config.device_config(big, _leaf(big))
    with pytest.raises(ValueError, match="512"):
        config.maximum_ecmp(513, "x")
