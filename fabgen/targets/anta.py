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

Counters are not in the catalog: ANTA's counter tests compare a counter since it was last
cleared with one fixed threshold, which holds for one window length only (a 30-minute run at a
normal 200 pauses/s fails a budget made for 300 s), and rely on `clear counters` zeroing the
PFC and queue-drop counters, which no Arista document states. `verify/anta-check.sh` takes
ANTA's own snapshots of the counter commands (`anta exec snapshot` with
`verify/anta-counters.yaml`) before and after the traffic, times the window, and
`fabgen verify-counters` checks the increase per port (fabgen.verify.counters): PFC frames
within the `PfcPauseRate` alert's rate times the elapsed seconds, no drop on the lossless
queue, ECN marks within monitoring.verify_ecn_marks_max when set. Then it runs the catalog.

ECN marks outside the RoCE queue cannot be counted on EOS: `random-detect ecn count` is
configured on the RoCE queue only (the queue with ECN thresholds; no Arista document says EOS
takes it on a queue without them), so the catalog checks the cause instead: no other transmit
queue of a fabric port has `random-detect ecn` in the running config (VerifyRunningConfig).
"""

from __future__ import annotations

import re
from typing import Any

from fabgen import templating, underlay
from fabgen.intent.models import MonitoringSpec
from fabgen.qos import QosPlan
from fabgen.serialize import yaml_text
from fabgen.targets import alerts, eos
from fabgen.targets.base import Artifacts, RenderContext
from fabgen.verify import counters
from fabgen.verify.expect import ExpectedSwitch, expected_switches

__all__ = ["CATALOG", "CHECK", "COUNTERS", "INVENTORY", "TARGET", "AntaTarget", "catalog_data",
           "catalog_text", "counter_commands", "inventory_data", "inventory_text"]

CATALOG = "verify/anta-catalog.yaml"
CHECK = "verify/anta-check.sh"
COUNTERS = "verify/anta-counters.yaml"
INVENTORY = "verify/anta-inventory.yaml"
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
        data = catalog_data(switches, ctx.qos, mon, underlay.plan(ctx.intent).bfd)
        pause = alerts.pfc_thresholds(ctx)[1]
        return {CATALOG: catalog_text(data, ctx.fabric.name),
                CHECK: templating.render("anta/anta-check.sh.j2", catalog=CATALOG,
                                         counters=COUNTERS, window_s=mon.verify_window_s,
                                         pause_pps=pause,
                                         pfc_frames_max=mon.verify_pfc_frames_max),
                COUNTERS: counter_text(mon),
                INVENTORY: inventory_text(inventory_data(switches), ctx.fabric.name)}


TARGET = AntaTarget()


def counter_commands(limits: MonitoringSpec) -> list[str]:
    """The commands `anta exec snapshot` saves before and after the traffic: what
    fabgen.verify.counters compares (ECN only when the intent bounds it)."""
    commands = [counters.PFC, counters.QUEUE_DROPS]
    if limits.verify_ecn_marks_max is not None:
        commands.append(counters.ECN)
    return commands


def counter_text(limits: MonitoringSpec) -> str:
    return ("# fabgen: the counters verify/anta-check.sh snapshots before and after the traffic "
            "(anta exec\n# snapshot --commands-list); fabgen verify-counters compares them.\n"
            + yaml_text({"json_format": counter_commands(limits)}, width=100))


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
                 bfd: underlay.Bfd | None = None) -> dict[str, list[dict[str, Any]]]:
    """{ANTA test module: [{TestName: inputs}]}, one entry per test and switch (counters are
    compared by fabgen verify-counters, not here)."""
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
        config = modules["anta.tests.configuration"]
        if watchdog:
            config.append({"VerifyRunningConfigLines": {"regex_patterns": watchdog, **scope}})
        config.append({"VerifyRunningConfig": {"rules": [_ecn_only_on_roce(plan)], **scope}})
    return {module: tests for module, tests in modules.items() if tests}


def _ecn_only_on_roce(plan: QosPlan) -> dict[str, Any]:
    """A VerifyRunningConfig rule (anta/tests/configuration.py, its nested wildcard sections:
    `show running-config | json`, each key matched with re.fullmatch): no transmit queue of an
    Ethernet interface but the RoCE queue has `random-detect ecn`. ECN marking elsewhere is a
    QoS config that differs from the plan, and EOS counts no marks on a queue without
    `random-detect ecn count`, so the alert that SONiC has cannot exist on EOS."""
    q = plan.rdma.queue
    return {"section": [r"interface Ethernet[0-9/]+", f"{eos.QUEUE_COMMAND} (?!{q}$)[0-9]+"],
            "entries": [{"match": "random-detect ecn", "mode": "contains", "absent": True,
                         "description": f"ECN only on the RoCE queue {q}"}]}


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


def catalog_text(data: dict[str, list[dict[str, Any]]], fabric: str) -> str:
    header = (f"# fabgen: ANTA catalog of {fabric}'s EOS switches; every test is tagged with the\n"
              "# switch it checks. Run after the push, with verify/anta-inventory.yaml (or an\n"
              "# inventory that names the devices like the switches: ANTA tags each device with\n"
              "# its name), through\n"
              "#   bash verify/anta-check.sh verify/anta-inventory.yaml [traffic command...]\n"
              "# which snapshots the PFC, drop and ECN counters before and after the traffic and\n"
              "# compares them (fabgen verify-counters), then runs: anta nrfu --catalog ...\n")
    # The document is {module: [tests]}, keys sorted. Each test is written on its own (as a
    # one-item list: a block sequence under a key is not indented, so an item reads the same
    # at the top level): the node tree of the whole catalog took 300 MB at 528 switches.
    # No YAML anchors: each test's inputs are written out in full.
    parts = [header]
    for module in sorted(data):
        parts.append(f"{module}:\n")
        parts.extend(yaml_text([test], width=100) for test in data[module])
    return "".join(parts)
