"""The series Cumulus Linux 5.12's OpenTelemetry export produces through an OTel collector
(metric names from the "Open Telemetry Export" page's tables; `device` is the static label each
NVUE switch's startup.yaml sets)."""

from __future__ import annotations

from fabgen.platforms.contract.outputs import Signals

__all__ = ["SIGNALS"]

SIGNALS = Signals(
    platform="nvue", device="device", port="interface",
    # Only the lossless priority's switch-priority counters are enabled (nvue_telemetry).
    pfc_rx="nvswitch_interface_sp_rx_pause{f}",
    pfc_tx="nvswitch_interface_sp_tx_pause{f}",
    watchdog=None,  # Cumulus 5.12 exports no PFC watchdog counter over OTLP
    # The traffic-class attribute is `tc` in the documented histogram samples; the
    # interface_tc tables document no attribute name, so this assumes the same one.
    ecn_other='nvswitch_interface_tc_tx_ecn_marked_tc{f, tc!="{q}"}',
    lossless_drops='nvswitch_interface_tc_tx_no_buffer_discard_uc{f, tc="{q}"}',
    bgp_down=None,  # nvswitch_routing_bgp_peer_state's value encoding is not documented
    bgp_flaps_why="Cumulus exports the peer state as a number with no documented encoding",
    bgp_flaps="nvswitch_routing_bgp_peer_fsm_established_transitions{f}", bgp_peer="peer",
    # Cumulus 5.12's OTLP router statistics are BGP peer and RIB metrics only ("Router
    # Statistic Format"): no BFD session state is exported.
    bfd_up=None,
    oper_up="nvswitch_interface_oper_state{f}",  # bitmap: Up = 1
    carrier="nvswitch_interface_carrier_changes_total{f}",
    speed="nvswitch_interface_oper_aggregate_speed{f}", speed_per_gbps=1_000_000_000,
    # The collector carries only the device label (OTLP resource attributes): no fabric label.
    queue_label="tc", fabric_label=False,
)
