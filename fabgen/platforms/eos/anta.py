"""ANTA target: `verify/anta-catalog.yaml`, the post-deploy checks of every EOS switch, and
`verify/anta-inventory.yaml`, the inventory of those switches that ANTA runs them against.

ANTA (Arista Network Test Automation, the `anta` package) runs a catalog of tests against an
inventory of EOS devices. Each test here is scoped to one switch by a tag filter; ANTA tags
every inventory device with its own name (anta/device.py, `self.tags.add(self.name)`), so an
inventory whose device names are the switch names needs no tags of its own.

Every test name and input is one of ANTA 1.10's (anta/tests/interfaces.py, connectivity.py,
routing/bgp.py, bfd.py, configuration.py); the tests load the rendered file with ANTA's own catalog
parser. ANTA has no PFC watchdog test: the watchdog's configuration is checked with
VerifyRunningConfigLines, its triggers by the `PfcWatchdogTriggered` alert (alerts target).

Counter tests read counters since they were last cleared, so they hold after normal traffic
only over a known window: `verify/anta-check.sh` clears the counters of every EOS switch with
ANTA's own `anta exec clear-counters`, lets traffic run for monitoring.verify_window_s (or runs
the traffic command it is given), then runs the catalog. Over that window the lossless queue
may drop nothing, and a port may send or receive as many PFC frames as the `PfcPauseRate`
alert allows (its rate x the window): normal RoCE traffic with DCQCN passes, a storm or a
lossless drop fails.
"""

from __future__ import annotations

import re
from typing import Any

from fabgen import templating, underlay
from fabgen.intent.models import MonitoringSpec
from fabgen.platforms.eos import target as eos
from fabgen.qos import QosPlan
from fabgen.serialize import yaml_text
from fabgen.targets import pfc_rates
from fabgen.targets.base import Artifacts, RenderContext
from fabgen.verify.expect import ExpectedSwitch, expected_switches

__all__ = ["CATALOG", "CHECK", "INVENTORY", "TARGET", "AntaTarget", "catalog_data",
           "catalog_text", "inventory_data", "inventory_text", "pfc_budget"]

CATALOG = "verify/anta-catalog.yaml"
CHECK = "verify/anta-check.sh"
INVENTORY = "verify/anta-inventory.yaml"
# Egress counters are read per unicast queue: RoCE is unicast, and on Strata switches (7060X6)
# unicast and multicast queues are separate (see eos.QUEUE_COMMAND).
_QUEUE_TYPES = ["unicast"]
# Characters with a meaning in a Python regex; only these are escaped so the pattern stays
# readable (re.escape would escape every space and dash too).
_REGEX_SPECIALS = re.compile(r"([.^$*+?{}\[\]\\|()])")


class AntaTarget:
    name = "anta"
    description = "ANTA test catalog and inventory of the EOS switches (verify/anta-*.yaml)"

    def applies(self, ctx: RenderContext) -> bool:
        return ctx.qos is not None and any(s.platform == "eos" for s in ctx.fabric.switches)

    def render(self, ctx: RenderContext) -> Artifacts:
        if ctx.qos is None:
            raise ValueError("the anta target renders RoCE fabrics only")
        switches = list(expected_switches(ctx.index, ctx.qos, platforms=("eos",)))
        mon = ctx.intent.monitoring
        budget = pfc_budget(mon, pfc_rates.pfc_thresholds(ctx)[1])
        data = catalog_data(switches, ctx.qos, mon, underlay.plan(ctx.intent).bfd,
                            pfc_frames_max=budget)
        return {CATALOG: catalog_text(data, ctx.fabric.name, mon.verify_window_s),
                CHECK: templating.render("eos/anta-check.sh.j2", catalog=CATALOG,
                                         window_s=mon.verify_window_s, pfc_budget=budget),
                INVENTORY: inventory_text(inventory_data(switches), ctx.fabric.name)}


TARGET = AntaTarget()


def pfc_budget(limits: MonitoringSpec, pause_rate_pps: int) -> int:
    """PFC frames a port may send or receive between clearing the counters and the check:
    monitoring.verify_pfc_frames_max, or the PfcPauseRate alert's rate over the window."""
    if limits.verify_pfc_frames_max is not None:
        return limits.verify_pfc_frames_max
    return pause_rate_pps * limits.verify_window_s


def inventory_data(switches: list[ExpectedSwitch]) -> dict[str, Any]:
    """ANTA's inventory (anta/inventory/models.py AntaInventoryInput under the root key
    `anta_inventory`): one host per EOS switch, named as the switch, so the catalog's tag
    filters (the switch's name, which ANTA adds to each device's tags) select it; tagged with
    its role too (`anta nrfu --tags spine`).

    `host` is the switch's name: the intent holds no management addresses (push reads them
    from --hosts, gnmic's targets are the names too). No credentials: ANTA takes them from
    its command line or environment."""
    return {"anta_inventory": {"hosts": [
        {"name": sw.name, "host": sw.name, "tags": [sw.role]} for sw in switches]}}


def inventory_text(data: dict[str, Any], fabric: str) -> str:
    header = (f"# fabgen: ANTA inventory of {fabric}'s EOS switches, for the catalog beside it.\n"
              "# host is each switch's name: resolve it in DNS or /etc/hosts, or replace it by\n"
              "# the switch's management address (the intent has none). Credentials are never\n"
              "# written here: give them to ANTA (--username, --prompt, or ANTA_USERNAME and\n"
              "# ANTA_PASSWORD).\n"
              "#   bash verify/anta-check.sh verify/anta-inventory.yaml [traffic command...]\n")
    return header + yaml_text(data, width=100)


def catalog_data(switches: list[ExpectedSwitch], plan: QosPlan, limits: MonitoringSpec,
                 bfd: underlay.Bfd | None = None, *,
                 pfc_frames_max: int | None = None) -> dict[str, list[dict[str, Any]]]:
    """{ANTA test module: [{TestName: inputs}]}, one entry per test and switch.
    `pfc_frames_max`: the PFC budget of the window (pfc_budget); None: the intent's, or 0."""
    pfc_max = pfc_frames_max if pfc_frames_max is not None else (
        limits.verify_pfc_frames_max or 0)
    modules: dict[str, list[dict[str, Any]]] = {
        "anta.tests.interfaces": [],
        "anta.tests.connectivity": [],
        "anta.tests.routing.bgp": [],
        "anta.tests.bfd": [],
        "anta.tests.configuration": [],
    }
    watchdog = _watchdog_lines(plan)
    for sw in switches:
        scope = {"filters": {"tags": [sw.name]}}
        names = [p.name for p in sw.ports]
        interfaces = modules["anta.tests.interfaces"]
        interfaces.append({"VerifyInterfacesStatus": {
            "interfaces": [{"name": p.name, "status": "up", "line_protocol_status": "up",
                            "description": f"to {p.peer} {p.peer_port}"} for p in sw.ports],
            **scope}})
        interfaces.append({"VerifyInterfacesSpeed": {
            "interfaces": [{"name": p.name, "speed": p.speed_gbps} for p in sw.ports],
            **scope}})
        # Routed fabric ports carry the plan's MTU, spare (shut down) ones too; Loopback and
        # Management are ANTA's defaults to ignore.
        interfaces.append({"VerifyL3MTU": {"mtu": sw.mtu, **scope}})
        interfaces.append({"VerifyInterfaceErrors": {"interfaces": names, **scope}})
        interfaces.append({"VerifyInterfacesPFCCounters": {
            "interfaces": names, "counters_threshold": pfc_max, **scope}})
        if limits.verify_ecn_marks_max is not None:
            # Only the RDMA queue has ECN configured and counted; ANTA skips queues without it
            # ("-"). Marks there are DCQCN working, so they are bounded only on request.
            interfaces.append({"VerifyInterfacesECNCounters": {
                "interfaces": names, "counters_threshold": limits.verify_ecn_marks_max,
                **scope}})
        # The lossless queue must never drop: a drop there means PFC did not hold.
        interfaces.append({"VerifyInterfacesEgressQueueDrops": {
            "interfaces": names, "traffic_classes": [f"TC{plan.rdma.queue}"],
            "queue_types": _QUEUE_TYPES, "packet_drop_threshold": 0, **scope}})
        neighbors = [{"port": p.name, "neighbor_device": p.peer,
                      # ANTA compares one port ID; the peer platform's own (SONiC: its alias).
                      "neighbor_port": p.peer_port_ids[-1]}
                     for p in sw.ports if p.peer_is_switch or limits.host_lldp]
        if neighbors:
            modules["anta.tests.connectivity"].append({"VerifyLLDPNeighbors": {
                "require_fqdn": False, "neighbors": neighbors, **scope}})
        if sw.sessions:
            modules["anta.tests.routing.bgp"].append({"VerifyBGPPeerSession": {
                "bgp_peers": [{"peer_address": s.peer_ip, "vrf": "default",
                               "description": f"{s.peer} AS{s.peer_asn} via {s.port}"}
                              for s in sw.sessions],
                **scope}})
        if sw.sessions and bfd is not None:
            # Every BGP peer has a BFD session that is up, registered by BGP and running the
            # plan's timers (anta/tests/bfd.py; the peers run the same plan, so the negotiated
            # intervals are the configured ones).
            peers = [{"peer_address": s.peer_ip, "vrf": "default"} for s in sw.sessions]
            tests = modules["anta.tests.bfd"]
            tests.append({"VerifyBFDSpecificPeers": {"bfd_peers": peers, **scope}})
            tests.append({"VerifyBFDPeersRegProtocols": {
                "bfd_peers": [{**p, "protocols": ["bgp"]} for p in peers], **scope}})
            tests.append({"VerifyBFDPeersIntervals": {
                "bfd_peers": [{**p, "tx_interval": bfd.interval_ms,
                               "rx_interval": bfd.interval_ms, "multiplier": bfd.multiplier}
                              for p in peers], **scope}})
        if watchdog:
            modules["anta.tests.configuration"].append({"VerifyRunningConfigLines": {
                "regex_patterns": watchdog, **scope}})
    return {module: tests for module, tests in modules.items() if tests}


def _watchdog_lines(plan: QosPlan) -> list[str]:
    """Regexes for the PFC watchdog lines the EOS config sets: the same values templates/eos
    prints, taken from eos._watchdog (timers in seconds), so a drifted config fails the test."""
    wd = eos._watchdog(plan)
    if wd is None:
        return []
    lines = [f"priority-flow-control pause watchdog default timeout {wd['timeout']}",
             f"priority-flow-control pause watchdog default recovery-time {wd['recovery_time']}",
             "priority-flow-control pause watchdog default polling-interval "
             f"{wd['polling_interval']}",
             f"priority-flow-control pause watchdog action {wd['action']}",
             # on the ports (interface_qos.j2), and ECN marks counted on the RoCE queue
             "   priority-flow-control pause watchdog",
             "      random-detect ecn count"]
    return ["^" + _REGEX_SPECIALS.sub(r"\\\1", line) + "$" for line in lines]


def catalog_text(data: dict[str, list[dict[str, Any]]], fabric: str,
                 window_s: int = 300) -> str:
    header = (f"# fabgen: ANTA catalog of {fabric}'s EOS switches; every test is tagged with the\n"
              "# switch it checks. Run after the push, with verify/anta-inventory.yaml (or an\n"
              "# inventory that names the devices like the switches: ANTA tags each device with\n"
              "# its name). The PFC counter budget is for counters cleared "
              f"{window_s} s before the\n"
              "# check, so run it through\n"
              "#   bash verify/anta-check.sh verify/anta-inventory.yaml [traffic command...]\n"
              "# which clears the counters (anta exec clear-counters), waits or runs the\n"
              "# traffic, then runs: anta nrfu --catalog verify/anta-catalog.yaml ... table\n")
    # The document is {module: [tests]}, keys sorted. Each test is written on its own (as a
    # one-item list: a block sequence under a key is not indented, so an item reads the same
    # at the top level): the node tree of the whole catalog took 300 MB at 528 switches.
    # No YAML anchors: each test's inputs are written out in full.
    parts = [header]
    for module in sorted(data):
        parts.append(f"{module}:\n")
        parts.extend(yaml_text([test], width=100) for test in data[module])
    return "".join(parts)
