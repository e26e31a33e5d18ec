"""NVUE runs the shared platform contract (tests/platforms/contract.py): pushed to test_push's
fake Cumulus shell (`nv config apply --confirm`), verified from NVUE/lldpd/FRR outputs,
alerting on the OpenTelemetry collector's series. NVIDIA publishes no schema of startup.yaml
CI can run: that case skips, saying so."""

from __future__ import annotations

from typing import Any

import yaml

from tests.platforms.contract import Harness, PlatformContract


def _management_kept(lab: Any, name: str, before: dict[str, str]) -> list[str]:
    tree = yaml.safe_load(lab.linux(name).running())[1]["set"]
    was = yaml.safe_load(before["etc/nvue.d/startup.yaml"])[1]["set"]
    out = []
    if tree["interface"].get("eth0") != was["interface"].get("eth0"):
        out.append("interface eth0 changed")
    if tree["vrf"].get("mgmt") != was["vrf"].get("mgmt"):
        out.append("vrf mgmt changed")
    return out


def _saved(sw: Any, plan: Any) -> dict[str, str]:
    from tests.test_verify import _nvue_outputs

    return _nvue_outputs(sw)


class TestNvue(PlatformContract):
    harness = Harness(
        platform="nvue",
        no_validator="no public schema of Cumulus NVUE's startup.yaml exists that CI can run; "
                     "tests/test_eos_nvue.py reads the configs back",
        lab=("nvue", "leaf-su1-r0"), management_kept=_management_kept, saved_outputs=_saved,
        telemetry_fixture=("roce-eos-nvue-2to1", "spine-01", "swp1s0"),
        no_alert_timeline="no sample of Cumulus's OTLP export was found to build its answers "
                          "from (the OpenTelemetry page documents metric names, not messages); "
                          "its storm rule runs on series named as the collector serves them")
