"""Every SONiC alert reads a table or MIB whose writer runs on a switch configured as rendered.

Cross-check (FABGEN_UPSTREAM with a sonic-net+sonic-buildimage checkout): each container's
supervisord.conf template is rendered, as its init script does with sonic-cfggen, from the
rendered config_db.json of a SONiC leaf and spine (constants.yml left out: the image's
defaults, ENABLE_FRR_SNMP_AGENT=y). For each rule in the rendered SONiC alert group, the
processes that write what it reads must be programs of those containers, with the options
that make them write it; and the frr.conf the bgp container renders from the same config_db
(frrcfgd's templates) must say `agentx`. STATE_DB NEIGH_STATE_TABLE's writer, bgpmon, is shown
not to run, which is why BgpSessionDown reads BGP4-MIB.
"""

from __future__ import annotations

import configparser
import functools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabgen.intent.loader import load
from fabgen.render import render
from fabgen.targets import alerts
from tests import sonic_upstream
from tests.conftest import ROOT

INVENTORY = "roce-256-sonic"
SWITCHES = ("leaf-su1-r0", "spine-01")

# container -> (its supervisord template, relative to sonic-buildimage, and the directory its
# includes are found in).
TEMPLATES = {
    "bgp": "dockers/docker-fpm-frr/frr/supervisord/supervisord.conf.j2",
    "swss": "dockers/docker-orchagent/supervisord.conf.j2",
    "snmp": "dockers/docker-snmp/supervisord.conf.j2",
}
# What writes each source (container, program, words its command line must hold), and the
# flex counter group that makes orchagent's counters exist (sonic-swss flexcounterorch: a
# group absent or disabled in FLEX_COUNTER_TABLE is not polled).
ORCHAGENT = ("swss", "orchagent", ())
SNMP_BGP = [("bgp", "bgpd", ("-M snmp",)), ("snmp", "snmpd", ())]
WRITERS: dict[str, tuple[list[tuple[str, str, tuple[str, ...]]], str | None]] = {
    # COUNTERS_DB port counters (SAI_PORT_STAT_PFC_*): flex counter group PORT.
    "PfcStorm": ([ORCHAGENT], "PORT"),
    "PfcPauseRate": ([ORCHAGENT], "PORT"),
    # pfcwdorch's fields in the watched queue's COUNTERS hash: group PFCWD.
    "PfcWatchdogTriggered": ([ORCHAGENT], "PFCWD"),
    # SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS: group WRED_ECN_QUEUE; drops: group QUEUE.
    "EcnMarksOnNonRoceQueue": ([ORCHAGENT], "WRED_ECN_QUEUE"),
    "LosslessQueueDrops": ([ORCHAGENT], "QUEUE"),
    # BGP4-MIB bgpPeerState: bgpd's AgentX subagent, snmpd its master (fabgen.targets.sonic_snmp).
    "BgpSessionDown": (SNMP_BGP, None),
    "BgpStateUnknown": (SNMP_BGP, None),
    # STATE_DB PORT_TABLE speed and APPL_DB PORT_TABLE oper_status/flap_count: portsorch.
    "LinkWrongSpeed": ([ORCHAGENT], None),
    "LinkFlapping": ([ORCHAGENT], None),
}


@functools.cache
def _render() -> dict[str, str]:
    return render(load(ROOT / "inventories" / f"{INVENTORY}.yaml"), only=["sonic", "alerts"])


def _config(switch: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(_render()[f"sonic/{switch}/config_db.json"])
    return data


def test_every_sonic_alert_names_its_writers() -> None:
    groups = yaml.safe_load(_render()[alerts.RULES])["groups"]
    sonic = next(g for g in groups if g["name"].endswith("-sonic"))
    assert sorted(r["alert"] for r in sonic["rules"]) == sorted(WRITERS)


def _programs(container: str, config: dict[str, Any]) -> dict[str, str]:
    """program -> command line of the container's supervisord.conf rendered from `config`."""
    root = sonic_upstream.buildimage()
    template = root / TEMPLATES[container]
    cfggen = sonic_upstream.load_cfggen()
    data = cfggen.FormatConverter.to_deserialized(json.loads(json.dumps(config)))
    env = cfggen._get_jinja2_env([str(template.parent)])
    text = env.get_template(template.name).render(data)
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.read_string(text)
    return {s.split(":", 1)[1]: parser[s].get("command", "") for s in parser.sections()
            if s.startswith("program:")}


@pytest.mark.parametrize("switch", SWITCHES)
def test_writer_of_every_alert_source_is_started(switch: str) -> None:
    config = _config(switch)
    programs = {c: _programs(c, config) for c in TEMPLATES}
    for alert, (writers, group) in WRITERS.items():
        for container, program, words in writers:
            assert program in programs[container], (alert, container, sorted(
                programs[container]))
            for word in words:
                assert word in programs[container][program], (alert, programs[container][
                    program])
        if group is not None:
            assert config["FLEX_COUNTER_TABLE"][group]["FLEX_COUNTER_STATUS"] == "enable", (
                alert, group)
    # The table the earlier BGP alert read: bgpmon writes STATE_DB NEIGH_STATE_TABLE, and
    # supervisord does not start it under frrcfgd (frr_mgmt_framework_config "true").
    assert "bgpmon" not in programs["bgp"] and "frrcfgd" in programs["bgp"]
    assert "bfdd" in programs["bgp"]
    # bgpd registers BGP4-MIB only when its config says `agentx`: frrcfgd's frr.conf does.
    frr = sonic_upstream.render_frrcfgd(config)
    assert "agentx" in [line.strip() for line in frr.splitlines()]


def test_bgpmon_would_run_without_the_management_framework() -> None:
    """The same templates, the flag off: bgpmon and bgpcfgd run, frrcfgd and bfdd do not (the
    cross-check tells the two modes apart)."""
    config = _config(SWITCHES[0])
    config["DEVICE_METADATA"]["localhost"]["frr_mgmt_framework_config"] = "false"
    programs = _programs("bgp", config)
    assert {"bgpmon", "bgpcfgd"} <= set(programs) and not {"frrcfgd", "bfdd"} & set(programs)


def test_templates_exist() -> None:
    root = sonic_upstream.buildimage()
    for path in TEMPLATES.values():
        assert (root / path).is_file(), path
    assert Path(root / "dockers/docker-fpm-frr/snmp.conf").read_text().count(
        "agentXSocket    tcp:localhost:3161") == 1
