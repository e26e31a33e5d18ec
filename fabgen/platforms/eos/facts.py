"""Arista EOS's facts: names, QoS and underlay limits, the hardware it runs on, port names."""

from __future__ import annotations

from fabgen.platforms.contract.facts import (
    FIVE_TUPLE,
    Capabilities,
    EcmpLimit,
    Facts,
    RunsOn,
    split_port,
)

__all__ = ["FACTS", "EosFacts"]


class EosFacts(Facts):
    name = "eos"
    title = "Arista EOS"
    short = "EOS"
    words = ("eos", "anta")
    runs_on = RunsOn(
        ("Arista",),
        "Arista switches",
        "Arista EOS runs on Arista's own switches (one EOS image for every Arista platform; "
        "the 7060X6 datasheet lists EOS as its OS); cEOS/vEOS are lab images, not for "
        "another vendor's switch")
    # EOS: routed-port MTU up to 9214; the PFC watchdog drops a stuck queue; its timers are
    # seconds with two decimals (10 ms steps); `no priority` on a tx-queue makes it and every
    # lower queue round-robin, so strict queues sit above the round-robin ones.
    capabilities = Capabilities("eos", 9214, ("drop",), 100, 10, True, True, True,
                                "Arista EOS user manual, MTU and priority-flow-control watchdog")
    # `maximum-paths <1-600> ecmp <1-600>` (aristanetworks/avd eos_cli_config_gen
    # router_bgp.schema.yml, maximum_paths.paths and .ecmp, min 1 max 600). The ASIC's own
    # ECMP group size is what `show bgp instance` prints as "Maximum ECMP"; Arista publishes no
    # number for the 7060X6, so the report asks the operator to compare it.
    ecmp = EcmpLimit(600, "EOS `maximum-paths <1-600> ecmp <1-600>`, AVD router_bgp schema")
    # EOS on Strata (7060X6, Tomahawk 5) hashes the routed 5-tuple by default and fabgen writes
    # no command to change that set; the BTH destination QP is added with UDF bytes,
    # `port-channel load-balance trident udf eth-type ipv4 header outer l4 offset 13..15 mask
    # 0xff` (aristanetworks/avd#5386, AVD port_channel.load_balance_trident_udf).
    hash_fields = frozenset({*FIVE_TUPLE, "roce-dest-qp"})
    # `ip hardware fib load-balance distribution dynamic` (EOS 4.24.2F TOI "Support for dynamic
    # load balancing on ECMP groups"; AVD ip_hardware.fib.load_balance_distribution.dynamic):
    # flowlets move to the less-loaded member, a flow's packets stay in order.
    adaptive = "flowlet dynamic load balancing (DLB)"

    def port_name(self, port: int, breakout: int, lanes: int) -> str:
        """`Ethernet<native>/<first lane>` (EOS interface naming: an unsplit OSFP is
        Ethernet1/1, 2x400G on an 8-lane OSFP is Ethernet1/1 and Ethernet1/5)."""
        native, k, width = split_port(port, breakout, lanes)
        return f"Ethernet{native}/{1 + k * width}"


FACTS = EosFacts()
