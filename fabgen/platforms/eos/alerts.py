"""The series EOS's collector (gnmic + EOS OpenConfig paths, telemetry.eos_gnmic) produces for
the alerting rules, BFD session state included."""

from __future__ import annotations

from fabgen.platforms.contract.outputs import Signals

__all__ = ["SIGNALS"]

SIGNALS = Signals(
    platform="eos", device="source", port="interface_name",
    pfc_rx='eos_pfc_in_frames{f, priority_index="{q}"}',
    pfc_tx='eos_pfc_out_frames{f, priority_index="{q}"}',
    watchdog="eos_pfcwd_stuck_count{f}",
    # EOS counts ECN marks only on a queue with `random-detect ecn count`, which the plan
    # puts on the RoCE queue alone (the one with ECN thresholds), so marks elsewhere never
    # show in ecn-marked-pkts: the ANTA catalog checks the cause (ECN configured on another
    # queue, VerifyRunningConfig) instead of an alert that cannot fire.
    ecn_other=None,
    lossless_drops='eos_queues_dropped_pkts{f, queue_name=~"\\\\D*{q}"}',
    bgp_down="eos_bgp_session_state{f} == 0", bgp_flaps=None, bgp_peer="neighbor",
    bfd_up="eos_bfd_session_state{f}",  # openconfig-bfd session-state, UP = 1
    oper_up="eos_intf_oper_status{f}", carrier="eos_intf_carrier_transitions{f}",
    speed="eos_intf_port_speed{f}", speed_per_gbps=1000,
    # Front-panel ports only: Management1 has a speed and a state of its own (1G, up), which
    # would read as a port at the wrong speed on every switch.
    fabric_ports="Ethernet.*",
    queue_label="queue_name",
)
