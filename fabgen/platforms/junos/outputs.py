"""Junos's outputs: the configuration of each QFX5240 (JSON, curly text, `set` commands) and
the notes on what no public source fixes, `fabgen verify` of its saved `| display json`
outputs, and its lines in the report. No collector or alert group: the gNMI paths of
telemetry.py are not verified on a QFX5240 and per-priority PFC has no sourced path (the
report says so instead of alerting on series nobody checked)."""

from __future__ import annotations

from collections.abc import Mapping

from fabgen.intent.models import MonitoringSpec
from fabgen.platforms.contract.outputs import Outputs
from fabgen.platforms.junos import saved as junos_saved
from fabgen.platforms.junos.facts import FACTS
from fabgen.platforms.junos.target import TARGET
from fabgen.qos import QosPlan
from fabgen.targets.base import RenderContext
from fabgen.underlay import Bfd
from fabgen.verify.expect import ExpectedSwitch
from fabgen.verify.findings import Finding

__all__ = ["OUTPUTS", "JunosOutputs"]


class JunosOutputs(Outputs):
    facts = FACTS
    target = TARGET
    saved = junos_saved.SAVED
    clear_counters = junos_saved.CLEAR
    hash_note = "`forwarding-options hash-key family inet layer-3; layer-4` (the 5-tuple)"
    bfd_note = "`bfd-liveness-detection` with the plan's interval and multiplier on the BGP group"
    spare_ports_note = "Junos `disable` on the port, its class of service applied"

    def collector_howto(self, ctx: RenderContext) -> str:
        return ("Junos: no collector file (its gNMI paths are not verified on a QFX5240, see "
                "junos/NOTES.txt)")

    def findings(self, sw: ExpectedSwitch, texts: Mapping[str, str], plan: QosPlan,
                 limits: MonitoringSpec, checks: tuple[str, ...],
                 bfd: Bfd | None) -> list[Finding]:
        return junos_saved.findings(sw, texts, plan, limits, checks, bfd)


OUTPUTS = JunosOutputs()
