"""EOS's load-time rules: the routed 5-tuple stays in the hash, and dynamic load balancing is
left to the operator to confirm on the switch model."""

from __future__ import annotations

from fabgen import underlay
from fabgen.errors import Diagnostics
from fabgen.intent.models import Intent
from fabgen.platforms.contract.checks import Checks
from fabgen.platforms.contract.facts import FIVE_TUPLE
from fabgen.platforms.eos.facts import FACTS

__all__ = ["CHECKS", "EosChecks"]


class EosChecks(Checks):
    name = FACTS.name

    def check_intent(self, intent: Intent, diags: Diagnostics) -> None:
        roles = underlay.tiers_in_use(intent)
        if roles is None or self.name not in roles.values():
            return
        lb = intent.load_balancing
        if not set(FIVE_TUPLE) <= set(lb.hash_fields):
            diags.error("EOS hashes the routed 5-tuple and fabgen has no verified EOS command to "
                        "drop fields from it", ("load_balancing", "hash_fields"),
                        "keep src-ip, dst-ip, ip-protocol, src-port and dst-port")
        if lb.mode == "adaptive":
            diags.warn("EOS dynamic load balancing (`ip hardware fib load-balance distribution "
                       "dynamic`, EOS 4.24.2F and later) depends on the switch model, and Arista "
                       "publishes no list fabgen could check; confirm the model supports it",
                       ("load_balancing", "mode"))


CHECKS = EosChecks()
