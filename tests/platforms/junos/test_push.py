"""The Junos push driver against a fake Junos switch over real NETCONF/SSH, driven by napalm's
own `junos` driver (PyEZ, ncclient): dry run, commit confirmed, confirm, an expired confirm
reverting, rollback, a refused statement and the management guard."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from fabgen.platforms.junos import config, text
from fabgen.platforms.junos.push.candidate import flatten, parse
from fabgen.platforms.junos.push.driver import JunosDriver, confirm_minutes, missing_statements
from fabgen.push.drivers.base import Render
from fabgen.push.results import DeviceError
from fabgen.targets.base import RenderContext
from tests.fakes.fake_junos import JunosFleet, Switch

USER, PASSWORD = "fabgen", "not-a-secret"


@pytest.fixture
def fleet() -> Iterator[JunosFleet]:
    f = JunosFleet(USER, PASSWORD)
    yield f
    f.close()


@pytest.fixture(scope="module")
def rendered(junos_ctx: RenderContext) -> Render:
    leaf = next(s for s in junos_ctx.fabric.switches if s.role == "leaf")
    return Render(text.curly_text(config.device_config(junos_ctx, leaf)))


def _driver(switch: Switch) -> tuple[JunosDriver, Any]:
    from napalm import get_network_driver

    conn = get_network_driver("junos")("127.0.0.1", USER, PASSWORD, timeout=30,
                                       optional_args={"port": switch.port})
    conn.open()
    return JunosDriver(conn, "run-1", timeout=30, host="192.0.2.51"), conn


def test_confirm_minutes_round_up() -> None:
    assert [confirm_minutes(s) for s in (1, 60, 61, 300)] == [1, 1, 2, 5]


def test_dry_run_diffs_and_changes_nothing(fleet: JunosFleet, rendered: Render) -> None:
    switch = fleet.add("leaf-su1-r0")
    before = switch.running_text()
    driver, conn = _driver(switch)
    step = driver.prepare(rendered)
    assert step.changed and "[edit class-of-service" in step.diff
    assert "+   explicit-congestion-notification;" in step.diff
    assert not any(line.startswith("-") for line in step.diff.splitlines())  # nothing removed
    driver.discard()
    conn.close()
    assert switch.running_text() == before and switch.commits == []
    assert not switch.locked
    # What napalm and PyEZ sent, in order (facts are gathered lazily: none at open).
    assert switch.rpcs[:5] == ["get-configuration", "lock-configuration", "load-configuration",
                               "get-configuration", "get-configuration"]
    assert switch.rpcs[5:] == ["load-configuration", "unlock-configuration", "close-session"]


def test_commit_confirmed_then_confirm_keeps_management(fleet: JunosFleet,
                                                         rendered: Render) -> None:
    switch = fleet.add("leaf-su1-r0")
    driver, conn = _driver(switch)
    driver.prepare(rendered)
    step = driver.commit(rendered, confirm_seconds=120)
    assert step.detail == "commit confirmed 2 min" and conn.has_pending_commit()
    driver.verify(rendered)
    assert driver.health(rendered, timeout=5).detail.endswith("Established")
    driver.confirm()
    conn.close()
    assert switch.commits == ["confirmed", "confirm"]
    live = set(flatten(parse(switch.running_text())))
    assert missing_statements(rendered.config, switch.running_text()) == []
    # The operator's management configuration is still there, untouched.
    assert ("interfaces", "re0:mgmt-0", "unit", "0", "family", "inet", "address",
            "192.0.2.51/24") in live
    assert ("system", "services", "netconf", "ssh") in live
    assert ("system", "host-name", "leaf-su1-r0") in live


def test_unconfirmed_commit_reverts_on_the_device(fleet: JunosFleet, rendered: Render) -> None:
    switch = fleet.add("leaf-su1-r0", minute=0.3)  # a "minute" of 0.3 s
    before = switch.running_text()
    driver, conn = _driver(switch)
    driver.prepare(rendered)
    driver.commit(rendered, confirm_seconds=60)
    assert switch.running_text() != before
    deadline = time.monotonic() + 5
    while switch.commits[-1] != "revert" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert switch.commits == ["confirmed", "revert"]
    assert switch.running_text() == before
    with pytest.raises(DeviceError, match="statement"):
        driver.verify(rendered)
    conn.close()


def test_rollback_after_commit_restores_the_previous_config(fleet: JunosFleet,
                                                            rendered: Render) -> None:
    switch = fleet.add("leaf-su1-r0")
    before = switch.running_text()
    driver, conn = _driver(switch)
    driver.prepare(rendered)
    driver.commit(rendered, confirm_seconds=60)
    step = driver.rollback()
    conn.close()
    assert step.changed and switch.running_text() == before
    assert switch.commits == ["confirmed", "confirm"]  # the rollback's commit ends the confirm


def test_a_refused_statement_stops_before_anything_is_live(fleet: JunosFleet,
                                                           rendered: Render) -> None:
    switch = fleet.add("leaf-su1-r0")
    switch.refuse = {"flow-control-queue"}
    driver, conn = _driver(switch)
    with pytest.raises(DeviceError, match="refused"):
        driver.prepare(rendered)
    conn.close()
    assert switch.commits == [] and not switch.locked


def test_management_guard_refuses_a_render_touching_the_management_port(
        fleet: JunosFleet, rendered: Render) -> None:
    switch = fleet.add("leaf-su1-r0")
    driver, conn = _driver(switch)
    hostile = Render(rendered.config + "interfaces {\n    re0:mgmt-0 {\n        disable;\n"
                     "    }\n}\n")
    with pytest.raises(DeviceError, match="management"):
        driver.build(hostile)
    conn.close()
    assert "load-configuration" not in switch.rpcs
