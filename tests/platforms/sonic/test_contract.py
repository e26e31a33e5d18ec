"""SONiC runs the shared platform contract (tests/platforms/contract.py): validated by
yanglint with the SONiC YANG models (tests/sonic_yang.py), pushed to the fake SONiC shell of
test_push's lab, verified from sonic-utilities' outputs, alerting on gnmic's series."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests import sonic_yang
from tests.platforms.contract import Harness, PlatformContract
from tests.platforms.sonic import gnmi


def _validate(files: Mapping[str, str], tmp: Path) -> list[str]:
    sonic_yang.yang_root()  # yanglint and the models, or a skip naming what is missing
    out = []
    for path, text in files.items():
        if path.endswith("/config_db.json"):
            result = sonic_yang.validate(json.loads(text))
            if not result.ok:
                out.append(f"{path}: {result.stderr}")
    return out


def _management_kept(lab: Any, name: str, before: dict[str, str]) -> list[str]:
    running = lab.linux(name).running()
    was = json.loads(before["etc/sonic/config_db.json"])
    return [f"{t} changed" for t in ("MGMT_INTERFACE", "MGMT_PORT", "MGMT_VRF_CONFIG")
            if t in was and running.get(t) != was[t]]


def _saved(sw: Any, plan: Any) -> dict[str, str]:
    from tests.test_verify import _sonic_outputs

    wd = plan.watchdog
    return _sonic_outputs(sw, (wd.action, wd.detection_ms, wd.restoration_ms))


class TestSonic(PlatformContract):
    harness = Harness(
        platform="sonic", validate=_validate, lab=("sonic", "leaf-su1-r0"),
        management_kept=_management_kept, saved_outputs=_saved,
        telemetry_fixture=("roce-256-sonic", "leaf-su1-r0", "Ethernet0"),
        alert_timeline=gnmi.ALERTS)
