"""fabgen's SONiC routing design through sonic-utilities' db_migrator.

db_migrator runs on `config reload`, after `config load_minigraph` and at an image upgrade's
first boot. These tests run it (tests/db_migrator_model.py in CI; the real
scripts/db_migrator.py when FABGEN_UPSTREAM points at the checkouts, with the model's result
compared to it) on one switch per role of every SONiC case of tests/test_sonic.py, under the
situations a switch meets:

- fresh: fabgen's config_db.json as rendered (no VERSIONS: the whole chain of migrations runs);
- pushed: the switch's VERSIONS kept (fabgen's push keeps tables it does not own);
- with /etc/sonic/minigraph.xml present, with fabgen's golden_config_db.json, with both.

What must hold: the BGP tables and frr_mgmt_framework_config come through untouched; the
routing mode stays "unified" whenever fabgen's golden file is there (and the test shows the
reset to minigraph's "separated" without it, the hazard the golden file is for); the buffer
model is left as rendered; anything else that changes is on a short list of known, harmless
additions.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tests import db_migrator_model as model
from tests import sonic_upstream
from tests.test_sonic import CASES, Case, _case, _one_per_role, case_dir

__all__ = ["case_dir"]  # the fixture, shared with test_sonic

# sonic-buildimage files/build_templates/init_cfg.json.j2 at 086b03bd70f9, DEVICE_METADATA part,
# as a Mellanox image (SONIC_BUFFER_MODEL=dynamic) renders it.
INIT_CFG = {"DEVICE_METADATA": {"localhost": {
    "buffer_model": "dynamic", "default_bgp_status": "up", "default_pfcwd_status": "disable",
    "timezone": "UTC"}}}
# What sonic-utilities' tests/db_migrator_input/minigraph.xml gives (the minigraph the real run
# parses): a ToR named SONiC-Dummy.
MINIGRAPH = {"hostname": "SONiC-Dummy", "type": "TorRouter"}
SCENARIOS = ("fresh", "fresh+minigraph", "fresh+golden", "fresh+minigraph+golden",
             "pushed+minigraph", "pushed+minigraph+golden")
ROUTING_TABLES = ("BGP_", "ROUTE_MAP", "PREFIX")
# What db_migrator may add to a fabgen config: SONiC defaults for fields fabgen leaves out.
KNOWN_ADDITIONS = {
    ("PORT", "dhcp_rate_limit"),  # version_3_0_0, "300"
    ("PORT_QOS_MAP", "pfcwd_sw_enable"),  # version_3_0_4 copies pfc_enable (watchdog off)
    ("DEVICE_METADATA", "default_bgp_status"),  # init_cfg.json
    ("DEVICE_METADATA", "timezone"),  # init_cfg.json
}


def _asic(config: dict[str, Any]) -> str:
    platform = config["DEVICE_METADATA"]["localhost"]["platform"]
    return "mellanox" if "mlnx" in platform or "nvidia" in platform else "broadcom"


def _inputs(case: Case, switch: Any, scenario: str) -> tuple[dict[str, Any], dict[str, Any]]:
    config = copy.deepcopy(case.config(switch))
    if scenario.startswith("pushed"):
        config["VERSIONS"] = {"DATABASE": {"VERSION": model.CURRENT_VERSION}}
    golden = json.loads(case.files[f"sonic/{switch.name}/golden_config_db.json"]) \
        if "golden" in scenario else None
    return config, {"golden": golden, "minigraph": MINIGRAPH if "minigraph" in scenario
                    else None}


def _changes(before: dict[str, Any], after: dict[str, Any]) -> set[tuple[str, str, str]]:
    out = set()
    for table in set(before) | set(after):
        old, new = before.get(table, {}), after.get(table, {})
        for key in set(old) | set(new):
            a, b = old.get(key, {}), new.get(key, {})
            for field in set(a) | set(b):
                if a.get(field) != b.get(field):
                    out.add((table, key, field))
    return out


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("name", CASES)
def test_routing_design_survives_db_migrator(name: str, scenario: str, case_dir: Path) -> None:
    case = _case(name, case_dir)
    for switch in _one_per_role(case):
        config, files = _inputs(case, switch, scenario)
        after = model.migrate(config, asic_type=_asic(config), init_cfg=INIT_CFG, **files)
        where = f"{name}/{switch.name} ({scenario})"
        for table in config:
            if table.startswith(ROUTING_TABLES):
                assert after[table] == config[table], f"{where}: {table} changed"
        meta, was = after["DEVICE_METADATA"]["localhost"], config["DEVICE_METADATA"]["localhost"]
        assert meta["frr_mgmt_framework_config"] == "true", where
        mode = "separated" if scenario.endswith("minigraph") else "unified"
        assert meta["docker_routing_config_mode"] == mode, where
        assert meta["buffer_model"] == was["buffer_model"], f"{where}: buffer model flipped"
        assert meta["synchronous_mode"] == "enable", where
        other = {(t, f) for t, _, f in _changes(config, after) if t != "VERSIONS"}
        other.discard(("DEVICE_METADATA", "docker_routing_config_mode"))
        other.discard(("PORT_QOS_MAP", "dscp_to_tc_map"))  # Broadcom: PORT_QOS_MAP|global
        assert other <= KNOWN_ADDITIONS, f"{where}: {sorted(other - KNOWN_ADDITIONS)}"


def test_model_resets_the_mode_without_the_golden_file() -> None:
    """The hazard itself (sonic-buildimage#27014): minigraph.xml on the switch, no golden
    file: db_migrator writes minigraph's "separated"; a golden file without the field writes
    the string "None", which no YANG model accepts."""
    config = {"DEVICE_METADATA": {"localhost": {"docker_routing_config_mode": "split-unified",
                                                "synchronous_mode": "enable"}},
              "VERSIONS": {"DATABASE": {"VERSION": model.CURRENT_VERSION}}}
    after = model.migrate(config, asic_type="mellanox", minigraph=MINIGRAPH)
    assert after["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"] == "separated"
    golden = {"DEVICE_METADATA": {"localhost": {"hostname": "x"}}}
    after = model.migrate(config, asic_type="mellanox", golden=golden)
    assert after["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"] == "None"


def test_model_flips_a_traditional_sku_to_traditional() -> None:
    """mellanox_buffer_migrator: every Mellanox-* SKU but Mellanox-SN5600-O128 runs the
    traditional model; a fresh config saying dynamic on one is set to traditional."""
    for sku, expect in (("Mellanox-SN4700-C128", "traditional"),
                        ("Mellanox-SN5600-O128", "dynamic"), ("ACS-SN5600", "dynamic")):
        config = {"DEVICE_METADATA": {"localhost": {
            "platform": "x86_64-nvidia_sn5600-r0", "hwsku": sku, "buffer_model": "dynamic"}}}
        after = model.migrate(config, asic_type="mellanox")
        assert after["DEVICE_METADATA"]["localhost"]["buffer_model"] == expect, sku


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("name", CASES)
def test_model_matches_the_real_db_migrator(name: str, scenario: str, case_dir: Path) -> None:
    utilities = sonic_upstream.checkout("sonic-net+sonic-utilities")
    case = _case(name, case_dir)
    minigraph = utilities / "tests" / "db_migrator_input" / "minigraph.xml"
    for switch in _one_per_role(case):
        config, files = _inputs(case, switch, scenario)
        asic = _asic(config)
        platform = config["DEVICE_METADATA"]["localhost"]["platform"]
        real = sonic_upstream.run_db_migrator(
            config, asic_type=asic, platform=platform, init_cfg=INIT_CFG,
            golden=files["golden"], minigraph=minigraph if files["minigraph"] else None)
        mine = model.migrate(config, asic_type=asic, init_cfg=INIT_CFG, **files)
        # Tables fabgen writes (and VERSIONS); the real code also fills tables fabgen never
        # writes (RESTAPI, TELEMETRY, ... from the minigraph), which the model leaves out.
        for table in set(config) | set(mine):
            differ = _changes({table: mine.get(table, {})}, {table: real.get(table, {})})
            assert not differ, f"{name}/{switch.name} ({scenario}): {sorted(differ)[:5]}"
