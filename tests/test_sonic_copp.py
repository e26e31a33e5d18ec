"""The underlay's control-plane policing on SONiC: BFD trapped on BGP's high-priority group.

SONiC's default CoPP has no BFD trap, so BFD rides ip2me on the lowest-priority group shared
with SSH, SNMP and gNMI (fabgen.targets.sonic_bgp says why and cites the sources). The rendered
rows validate with libyang against sonic-copp.yang (its trap_group leafref included), carry
copp_cfg.j2's values for the group and BGP's trap, and with FABGEN_UPSTREAM are compared with
the real copp_cfg.j2 and sonic-swss's trap-name table.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import pytest

from fabgen.intent.loader import load
from fabgen.render import render
from tests import sonic_upstream, sonic_yang
from tests.conftest import ROOT

INVENTORY = "roce-256-sonic"
# sonic-buildimage 086b03bd70f9 files/image_config/copp/copp_cfg.j2: queue4_group1 and the bgp trap.
QUEUE4_GROUP1 = {"trap_action": "trap", "trap_priority": "4", "queue": "4",
                 "meter_type": "packets", "mode": "sr_tcm", "cir": "6000", "cbs": "6000",
                 "red_action": "drop"}
BGP_TRAP = {"trap_ids": "bgp,bgpv6", "trap_group": "queue4_group1"}


@functools.cache
def _config(switch: str = "leaf-su1-r0") -> dict[str, Any]:
    files = render(load(ROOT / "inventories" / f"{INVENTORY}.yaml"), only=["sonic"])
    data: dict[str, Any] = json.loads(files[f"sonic/{switch}/config_db.json"])
    return data


def test_bfd_is_trapped_on_bgps_high_priority_group() -> None:
    config = _config()
    assert config["COPP_GROUP"] == {"queue4_group1": QUEUE4_GROUP1}
    assert config["COPP_TRAP"] == {
        "bgp": BGP_TRAP,
        # no FEATURE|bfd exists, so coppmgr installs the trap only when always enabled
        "bfd": {"trap_ids": "bfd,bfdv6", "trap_group": "queue4_group1",
                "always_enabled": "true"}}


def test_no_bfd_trap_without_bfd(tmp_path: Any) -> None:
    intent = tmp_path / "nobfd.yaml"
    intent.write_text((ROOT / "inventories" / f"{INVENTORY}.yaml").read_text()
                      + "underlay:\n  bfd:\n    enabled: false\n")
    config = json.loads(render(load(intent), only=["sonic"])["sonic/leaf-su1-r0/config_db.json"])
    assert set(config["COPP_TRAP"]) == {"bgp"}


@pytest.mark.realtool
def test_copp_rows_validate_and_a_dangling_group_does_not() -> None:
    config = _config()
    copp = {t: config[t] for t in ("COPP_GROUP", "COPP_TRAP")}
    assert sonic_yang.validate(copp).ok
    dangling = json.loads(json.dumps(copp))
    dangling["COPP_TRAP"]["bfd"]["trap_group"] = "queue9_missing"
    result = sonic_yang.validate(dangling)
    assert not result.ok and "leafref" in result.stderr.lower(), result.stderr


def test_upstream_default_copp_lacks_bfd_and_matches_the_group() -> None:
    """Cross-check: copp_cfg.j2 rendered with the rendered DEVICE_METADATA has the same
    queue4_group1 and bgp trap, and no bfd trap; `bfd`/`bfdv6` are trap names orchagent
    knows (sonic-swss copporch.cpp trap_id_map)."""
    root = sonic_upstream.buildimage()
    cfggen = sonic_upstream.load_cfggen()
    template = root / "files" / "image_config" / "copp" / "copp_cfg.j2"
    env = cfggen._get_jinja2_env([str(template.parent)])
    meta = {"DEVICE_METADATA": _config()["DEVICE_METADATA"]}
    default = json.loads(env.get_template(template.name).render(meta))
    assert default["COPP_GROUP"]["queue4_group1"] == QUEUE4_GROUP1
    assert default["COPP_TRAP"]["bgp"] == BGP_TRAP
    assert not [t for t, v in default["COPP_TRAP"].items() if "bfd" in v["trap_ids"]]
    assert default["COPP_TRAP"]["ip2me"]["trap_group"] == "queue1_group1"
    assert default["COPP_GROUP"]["queue1_group1"]["trap_priority"] == "1"
    swss = sonic_upstream.checkout("sonic-net+sonic-swss")
    copporch = (swss / "orchagent" / "copporch.cpp").read_text()
    for name in ("bfd", "bfdv6", "bgp", "bgpv6"):
        assert re.search(rf'\{{"{name}", SAI_HOSTIF_TRAP_TYPE_', copporch), name


def test_push_merges_copp_rows_into_the_switchs_own() -> None:
    from fabgen.push.candidate import sonic_candidate

    running = {"COPP_TRAP": {"lldp": {"trap_ids": "lldp", "trap_group": "queue4_group3"},
                             "bgp": {"trap_ids": "bgp", "trap_group": "queue4_group1"}},
               "COPP_GROUP": {"queue4_group3": {"queue": "4", "cir": "100"}}}
    render_ = {t: _config()[t] for t in ("COPP_GROUP", "COPP_TRAP")}
    out = sonic_candidate(running, render_)
    assert out["COPP_TRAP"]["lldp"] == running["COPP_TRAP"]["lldp"]
    assert out["COPP_TRAP"]["bgp"] == BGP_TRAP and "bfd" in out["COPP_TRAP"]
    assert set(out["COPP_GROUP"]) == {"queue4_group1", "queue4_group3"}
