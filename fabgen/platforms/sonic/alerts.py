"""The series SONiC's collector (gnmic + sonic-gnmi COUNTERS_DB/APPL_DB/STATE_DB,
telemetry.sonic_gnmic) produces for the alerting rules: the SAI counter names of sonic-swss
(SAI_PORT_STAT_PFC_3_RX_PKTS, SAI_QUEUE_STAT_...); BGP state from FRR's BGP4-MIB by
snmp_exporter (snmp.py)."""

from __future__ import annotations

from fabgen.platforms.contract.outputs import Signals
from fabgen.platforms.sonic import snmp

__all__ = ["SIGNALS"]

SIGNALS = Signals(
    platform="sonic", device="source", port="interface",
    pfc_rx="sonic_port_SAI_PORT_STAT_PFC_{q}_RX_PKTS{f}",
    pfc_tx="sonic_port_SAI_PORT_STAT_PFC_{q}_TX_PKTS{f}",
    # pfcwdorch's own counters in the watched queue's COUNTERS hash (the queue path).
    watchdog="sonic_queue_PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED{f}",
    ecn_other='sonic_queue_SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS{f, queue!="{q}"}',
    lossless_drops='sonic_queue_SAI_QUEUE_STAT_DROPPED_PACKETS{f, queue="{q}"}',
    # BGP4-MIB bgpPeerState from FRR bgpd's AgentX subagent through the switch's snmpd, by
    # snmp_exporter (snmp.py: bgpmon, STATE_DB NEIGH_STATE_TABLE's writer, does not run
    # under frrcfgd). 6 is established.
    bgp_down=f"sonic_bgp_peer_state{{f}} != {snmp.ESTABLISHED}", bgp_flaps=None,
    bgp_peer=snmp.PEER_LABEL,
    # FRR bfdd's sessions are in no SONiC database: bfdorch's STATE_DB BFD_SESSION_TABLE
    # holds only sessions created through APPL_DB for hardware offload (sonic-swss
    # orchagent/bfdorch.cpp; SONiC "BFD HW offload for BGP" HLD, bfdsyncd), which fabgen's
    # BGP config does not ask for, and bfdd has no SNMP module. A BFD failure takes the BGP
    # session down (BgpSessionDown); `fabgen verify` reads `show bfd peers json`.
    bfd_up=None,
    bgp_unknown=("(up{job} == 0) or (up{job} == 1 unless on(source) "
                 "group by (source) (sonic_bgp_peer_state{f}))"),
    bgp_unknown_why=("its snmpd does not answer snmp_exporter, or answers without a BGP4-MIB "
                     "peer: bgpd not running, not loaded with -M snmp, or not connected to "
                     "snmpd's AgentX socket"),
    bgp_unknown_check=("Check `show snmpagentaddress`, the SNMP user and `docker exec bgp "
                       "vtysh -c 'show running-config' | grep agentx`."),
    # APPL_DB flap_count (sonic-swss #3052, 2024-03); older releases have none and the rule
    # falls back to counting changes of the sampled oper state.
    oper_up="sonic_port_state_oper_up{f}", carrier="sonic_port_state_flap_count{f}",
    # STATE_DB PORT_TABLE speed: the speed the link came up at, Mb/s (APPL_DB's is the
    # configured speed, which cannot differ from the plan's).
    speed="sonic_port_oper_speed{f}", speed_per_gbps=1000,
    # APPL_DB flap_count exists from 202405 on (sonic-swss #3052): where it does it decides,
    # elsewhere the sampled state.
    carrier_optional=True,
)
