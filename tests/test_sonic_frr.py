"""The frr.conf a SONiC switch builds from fabgen's config_db.json (fabgen.platforms.sonic.frr).

The model is what the FRR lab runs and what frr.expected.conf shows, so it must print exactly
the command lines the bgp container's frrcfgd templates print. With FABGEN_UPSTREAM naming a
directory with sonic-net+sonic-buildimage (and sonic-net+sonic-swss-common), the real
templates are rendered through sonic-cfggen's own Jinja environment (tests/sonic_upstream.py)
for one switch per role of every case of tests/test_sonic.py, and compared line for line.
Without it, that comparison skips; the rest runs in CI.
"""

from __future__ import annotations

import copy
import difflib
from pathlib import Path

import pytest

from fabgen.platforms.sonic import frr as sonic_frr
from tests import sonic_upstream
from tests.test_sonic import CASES, _case, _one_per_role, case_dir

__all__ = ["case_dir"]  # the fixture, shared with test_sonic


@pytest.mark.parametrize("name", CASES)
def test_model_matches_frrcfgd_templates(name: str, case_dir: Path) -> None:
    sonic_upstream.buildimage()  # or a skip naming FABGEN_UPSTREAM
    case = _case(name, case_dir)
    for switch in _one_per_role(case):
        config = case.config(switch)
        real = sonic_frr.command_lines(sonic_upstream.render_frrcfgd(config))
        mine = sonic_frr.command_lines(sonic_frr.frr_conf(config))
        assert mine == real, f"{name}/{switch.name}:\n" + "\n".join(
            difflib.unified_diff(real, mine, "frrcfgd templates", "sonic_frr", lineterm=""))


def test_model_covers_what_fabgen_writes(case_dir: Path) -> None:
    """Every table of a rendered config is either modelled or never reaches frr.conf."""
    case = _case("roce-256-sonic", case_dir)
    leaf = case.ctx.fabric.switches_of("leaf")[0]
    config = case.config(leaf)
    bgp = {t for t in config if t.startswith(("BGP", "ROUTE_MAP", "PREFIX"))}
    assert bgp <= sonic_frr.MODELLED_TABLES
    text = sonic_frr.frr_conf(config)
    lines = sonic_frr.command_lines(text)
    assert f"router bgp {leaf.asn}" in lines
    assert " neighbor FABRIC bfd" in lines
    assert lines.count("  neighbor FABRIC route-map FABRIC in") == 1
    # Three address families, the two empty ones included, as the templates print them.
    assert [x for x in lines if x.startswith(" address-family")] == [
        " address-family ipv4 unicast", " address-family ipv6 unicast",
        " address-family l2vpn evpn"]


@pytest.mark.parametrize("table, key, fields", [
    ("BGP_NEIGHBOR_AF", "default|10.0.0.1|ipv4_unicast", {"admin_status": "up"}),
    ("STATIC_ROUTE", "default|0.0.0.0/0", {"nexthop": "10.0.0.1"}),
])
def test_unmodelled_table_is_refused(table: str, key: str, fields: dict[str, str],
                                     case_dir: Path) -> None:
    case = _case("roce-256-sonic", case_dir)
    config = copy.deepcopy(case.config(case.ctx.fabric.switches_of("leaf")[0]))
    config[table] = {key: fields}
    with pytest.raises(ValueError, match=table):
        sonic_frr.frr_conf(config)


def test_unmodelled_field_is_refused(case_dir: Path) -> None:
    case = _case("roce-256-sonic", case_dir)
    config = copy.deepcopy(case.config(case.ctx.fabric.switches_of("leaf")[0]))
    config["BGP_PEER_GROUP"]["default|FABRIC"]["ebgp_multihop"] = "true"
    with pytest.raises(ValueError, match="ebgp_multihop"):
        sonic_frr.frr_conf(config)


def test_prefix_bounds_compare_as_the_template_does() -> None:
    """bgpd.conf.db.pref_list.j2 compares the range's lower bound with the prefix length as
    strings: "32" > "24" prints `ge 32`, "32" > "8" is False and prints only `le 32`."""
    def line(prefix: str, bounds: str) -> str:
        db = {"PREFIX_SET": {"S": {"mode": "IPv4"}},
              "PREFIX": {f"S|10|{prefix}|{bounds}": {"action": "permit"}}}
        return sonic_frr._prefix_lists(db)[1]

    assert line("10.255.0.0/24", "32..32") == \
        "ip prefix-list S seq 10 permit 10.255.0.0/24 ge 32 le 32"
    assert line("10.0.0.0/8", "32..32") == "ip prefix-list S seq 10 permit 10.0.0.0/8 le 32"
