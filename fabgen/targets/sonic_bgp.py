"""The eBGP underlay of one SONiC switch as CONFIG_DB tables, for frrcfgd.

The routing design (docs/sonic-routing.md says why): BGP lives in CONFIG_DB, in the schema of
SONiC's FRR management framework (sonic-buildimage src/sonic-frr-mgmt-framework), and
DEVICE_METADATA sets `frr_mgmt_framework_config: true` and `docker_routing_config_mode:
unified`. The bgp container then builds /etc/frr/frr.conf from these tables when it starts
(docker_init.sh runs sonic-cfggen with frrcfgd's templates), loads it with `vtysh -b`, runs bfdd
and frrcfgd instead of bgpcfgd (supervisord.conf.common.j2), and frrcfgd applies later CONFIG_DB
changes (`config load`, `config replace`) to the running FRR. config_db.json is the one source:
`config reload`, `config load`, checkpoints and image upgrades carry BGP with the rest.

Every table here has a SONiC YANG model (sonic-bgp-global, -bgp-peergroup, -bgp-neighbor,
-route-map, -routing-policy-sets), so libyang checks them with the rest of config_db. What the
schema cannot say, fabgen does not write:

- FRR's eBGP default policy (RFC 8212: `bgp ebgp-requires-policy`, on in FRR's traditional
  defaults, which SONiC's FRR build keeps) has no BGP_GLOBALS field; the peers get a route-map
  instead, permitting exactly the fabric's loopback /32s and host /31s in and out.
- BFD timers other than bfdd's defaults need BFD_PEER_SINGLE_HOP, which has no YANG model
  (sonic-buildimage src/sonic-yang-models at the commit of catalog.sonic_skus); underlay.check
  refuses such timers on SONiC, so `neighbor ... bfd` runs bfdd's defaults, which are the plan's.
"""

from __future__ import annotations

from collections import Counter
from ipaddress import IPv4Network
from typing import Any

from fabgen import underlay
from fabgen.topology.index import FabricPort
from fabgen.topology.model import Switch

__all__ = ["COPP_GROUP", "PEER_GROUP", "POLICY", "PREFIX_SET", "VRF", "bgp_tables", "copp_tables",
           "ecmp_width", "golden", "metadata"]

VRF = "default"
AFI = "ipv4_unicast"
# One peer group carries what every underlay session shares (timers, BFD, policy).
PEER_GROUP = "FABRIC"
POLICY = "FABRIC"  # route-map, in and out
PREFIX_SET = "FABRIC_ROUTES"

ListRows = dict[str, dict[str, Any]]


def metadata() -> dict[str, str]:
    """DEVICE_METADATA|localhost fields that select this design (sonic-device_metadata.yang:
    frr_mgmt_framework_config boolean, docker_routing_config_mode "unified").

    synchronous_mode is SONiC's default ("enable", the YANG default and what minigraph.py
    writes), written out because db_migrator's migrate_device_metadata copies it from
    golden_config_db.json when CONFIG_DB lacks it, and writes the string "None" when the golden
    file lacks it too (sonic-utilities 691b1bbc scripts/db_migrator.py; tests/test_db_migrator)."""
    return {"docker_routing_config_mode": "unified", "frr_mgmt_framework_config": "true",
            "synchronous_mode": "enable"}


def golden(device_metadata: dict[str, str]) -> dict[str, dict[str, dict[str, str]]]:
    """/etc/sonic/golden_config_db.json for the switch: its whole DEVICE_METADATA|localhost.

    db_migrator (run by `config reload`, image upgrades and config-setup) takes
    DEVICE_METADATA from minigraph.xml and golden_config_db.json, the golden file's tables
    replacing minigraph's, and resets docker_routing_config_mode to that source's whenever
    either file exists (migrate_routing_config_mode: minigraph.py writes "separated"; a golden
    file without the field writes "None"). The golden file holding this switch's metadata keeps
    "unified" through all of them; it is whole, not the two routing fields, because
    `config load_minigraph --override_config` replaces the DEVICE_METADATA table with it.
    config-setup carries golden_config_db.json across image upgrades (its copy_list)."""
    return {"DEVICE_METADATA": {"localhost": dict(device_metadata)}}


# Control-plane policing of the underlay's packets. SONiC's default CoPP (sonic-buildimage
# 086b03bd70f9 files/image_config/copp/copp_cfg.j2) traps BGP on queue4_group1 (trap priority 4,
# queue 4, 6000 packets/s) but has no BFD trap, so BFD's UDP 3784 packets reach the CPU as ip2me
# (queue1_group1: priority 1, the lowest, 6000 packets/s shared with SSH, SNMP and gNMI): a burst
# of management traffic can starve a 300 ms x 3 session and take the links' BGP down with it.
# The `bfd` trap (trap ids bfd, bfdv6: sonic-swss orchagent/copporch.cpp trap_id_map, SAI
# SAI_HOSTIF_TRAP_TYPE_BFD/_BFDV6) goes on BGP's group. coppmgr installs a trap only when its
# FEATURE is enabled or the trap is always_enabled (sonic-swss cfgmgr/coppmgr.cpp
# setFeatureTrapIdsStatus), and there is no FEATURE|bfd, hence always_enabled. The group is
# written out with copp_cfg.j2's values because sonic-copp.yang's trap_group is a leafref to a
# COPP_GROUP row of CONFIG_DB; the BGP trap is written as copp_cfg.j2 has it. The push merges
# these rows into the switch's own CoPP tables (push.candidate.SONIC_MERGED).
COPP_GROUP = "queue4_group1"
_COPP_GROUP_FIELDS = {"trap_action": "trap", "trap_priority": "4", "queue": "4",
                      "meter_type": "packets", "mode": "sr_tcm", "cir": "6000", "cbs": "6000",
                      "red_action": "drop"}


def copp_tables(bfd: bool) -> dict[str, ListRows]:
    """COPP_GROUP and COPP_TRAP rows for the underlay's BGP (and BFD when the plan runs it)."""
    traps: ListRows = {"bgp": {"trap_ids": "bgp,bgpv6", "trap_group": COPP_GROUP}}
    if bfd:
        traps["bfd"] = {"trap_ids": "bfd,bfdv6", "trap_group": COPP_GROUP,
                        "always_enabled": "true"}
    return {"COPP_GROUP": {COPP_GROUP: dict(_COPP_GROUP_FIELDS)}, "COPP_TRAP": traps}


def _peer_asn(p: FabricPort) -> int | None:
    return p.peer_switch.asn if p.peer_switch is not None else None


def ecmp_width(switch: Switch, ports: tuple[FabricPort, ...]) -> int:
    """Uplinks (every one a path upwards), or the most parallel links to one lower switch
    (the paths to a prefix behind it), whichever is wider: underlay.ecmp_widths per switch."""
    uplinks = sum(1 for p in ports
                  if p.link.a_device == switch.name and p.link.kind != "node-leaf")
    parallel = Counter(p.peer for p in ports
                       if _peer_asn(p) is not None and p.link.z_device == switch.name)
    return max(uplinks, max(parallel.values(), default=0))


def bgp_tables(switch: Switch, ports: tuple[FabricPort, ...], plan: underlay.UnderlayPlan,
               loopbacks: IPv4Network, hosts: IPv4Network,
               describe: dict[str, str]) -> dict[str, ListRows]:
    """The BGP tables of one switch. `describe`: peer address -> the description to write
    (peer name and port, sanitised by the caller like PORT.description)."""
    if switch.asn is None or switch.loopback is None:
        raise ValueError(f"{switch.name}: a routed SONiC switch needs an ASN and a loopback")
    group = f"{VRF}|{PEER_GROUP}"
    peer_group: dict[str, str] = {"holdtime": str(plan.hold_s),
                                  "keepalive": str(plan.keepalive_s)}
    if plan.bfd is not None:
        peer_group["bfd"] = "true"
    neighbors: ListRows = {}
    for p in ports:
        asn = _peer_asn(p)
        if asn is None or p.peer_address is None:
            continue
        neighbors[f"{VRF}|{p.peer_address.ip}"] = {
            "asn": str(asn), "name": describe[p.peer_address.ip],
            "peer_group_name": PEER_GROUP}
    # Announce the loopback and the host-facing /31s (a leaf's NICs are reached through them);
    # switch-to-switch /31s stay out of the fabric's RIB.
    networks = [f"{switch.loopback}/32"]
    networks += [p.address.network for p in ports
                 if _peer_asn(p) is None and p.address is not None]
    width = underlay.ecmp_paths("sonic", switch.name, ecmp_width(switch, ports))
    return {
        "BGP_GLOBALS": {VRF: {"local_asn": str(switch.asn), "router_id": str(switch.loopback),
                              "log_nbr_state_changes": "true",
                              "load_balance_mp_relax": "true"}},
        "BGP_GLOBALS_AF": {f"{VRF}|{AFI}": {"max_ebgp_paths": str(width)}},
        "BGP_GLOBALS_AF_NETWORK": {f"{VRF}|{AFI}|{prefix}": {} for prefix in networks},
        "BGP_PEER_GROUP": {group: peer_group},
        "BGP_PEER_GROUP_AF": {f"{group}|{AFI}": {"admin_status": "up",
                                                 "route_map_in": [POLICY],
                                                 "route_map_out": [POLICY]}},
        "BGP_NEIGHBOR": neighbors,
        "ROUTE_MAP_SET": {POLICY: {}},
        "ROUTE_MAP": {f"{POLICY}|10": {"route_operation": "permit",
                                       "match_prefix_set": PREFIX_SET}},
        "PREFIX_SET": {PREFIX_SET: {"mode": "IPv4"}},
        # What the fabric routes: every loopback /32 and host /31 of the intent's pools.
        "PREFIX": {f"{PREFIX_SET}|10|{loopbacks}|32..32": {"action": "permit"},
                   f"{PREFIX_SET}|20|{hosts}|31..31": {"action": "permit"}},
    }
