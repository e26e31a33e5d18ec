"""EOS runs the shared platform contract (tests/platforms/contract.py): pushed through napalm's
eos driver to test_push's fake EOS, verified by its ANTA catalog (tests/test_anta.py loads it
with ANTA's own classes), alerting on gnmic's series. No validator CI can run exists for EOS
configurations (Arista publishes no schema of its CLI): that case skips, saying so."""

from __future__ import annotations

from typing import Any

from tests.platforms.contract import Harness, PlatformContract
from tests.platforms.eos import gnmi


def _management_kept(lab: Any, name: str, before: dict[str, str]) -> list[str]:
    from tests.test_push import EOS_MGMT

    running = lab.eos[name].running().splitlines()
    return [f"lost: {line}" for line in EOS_MGMT if line not in running]


class TestEos(PlatformContract):
    harness = Harness(
        platform="eos",
        no_validator="no public validator of EOS CLI configs exists that CI can run "
                     "(Arista's is EOS itself); tests/test_eos_nvue.py reads the configs back",
        lab=("sonic", "spine-01"), management_kept=_management_kept,
        telemetry_fixture=("roce-eos-nvue-2to1", "leaf-su1-r0", "Ethernet1/1"),
        alert_timeline=gnmi.ALERTS)
