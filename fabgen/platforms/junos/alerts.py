"""The series Junos's collector (gnmic + the paths of telemetry.py) produces for the alerting
rules, and what it cannot alert on."""

from __future__ import annotations

from fabgen.platforms.contract.outputs import Signals

__all__ = ["SIGNALS", "UNALERTED"]

SIGNALS = Signals(
    platform="junos", device="source", port="interface_name",
    # jnx-pfc-statistics is keyed by the priority (its `priority` leaf, "Egress queue priority
    # value"): the plan's lossless priority.
    pfc_rx='junos_pfc_in_mac_pause_frames{f, priority="{q}"}',
    pfc_tx='junos_pfc_out_mac_pause_frames{f, priority="{q}"}',
    # No PFC watchdog counter in any 23.4R2-EVO model (OpenConfig, Juniper augments, native
    # JTI): a watchdog that drops shows as drops on the lossless queue (LosslessQueueDrops),
    # and `fabgen verify` reads the watchdog's configuration.
    watchdog=None,
    # No ECN-marked-packets leaf in any 23.4R2-EVO model either (out-queue counts packets,
    # drops and buffer occupancy, not marks).
    ecn_other=None,
    # Every drop the out-queue counts on the plan's lossless queue (out-queue's key, the
    # forwarding class's queue): tail drops (the queue's buffer full) and WRED drops (the
    # queue's ECN drop profile drops the packets it cannot mark: a sender not ECN-capable).
    # The processor gives them one series each (drop=tail|red). Whether a drop at ingress
    # (headroom overflow) or the watchdog's drops are counted there is not verified on a
    # switch.
    lossless_drops='junos_queues_drop_pkts{f, queue="{q}"}',
    bgp_down="junos_bgp_session_state{f} == 0", bgp_flaps=None, bgp_peer="neighbor",
    bfd_up="junos_bfd_session_state{f}",  # openconfig-bfd session-state, UP = 1
    oper_up="junos_intf_oper_status{f}", carrier="junos_intf_carrier_transitions{f}",
    # carrier-transitions is OpenConfig's, not in Juniper's leaf-level list of what the PFE
    # sensor exports: where it is missing, count changes of the oper status.
    carrier_optional=True,
    speed="junos_intf_port_speed{f}", speed_per_gbps=1000,
    # Front-panel ports only (`et-`, facts.port_name): the management port (re0:mgmt-0) has
    # a speed and a state of its own.
    fabric_ports="et-.*",
    queue_label="queue",
)

# What the rules cannot watch on Junos, for the report.
UNALERTED = ("PFC watchdog events and ECN marks: Junos OS Evolved 23.4R2 models no such "
             "counter (OpenConfig, Juniper's augments, native JTI); whether the watchdog's "
             "drops are counted as queue drops (LosslessQueueDrops) is not verified on a "
             "switch")
