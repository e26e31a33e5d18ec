"""The telemetry pack: gnmic configs name every switch and the vendor paths, the NVUE startup.yaml
streams the plan's lossless priority, the InfiniBand exporter reads the node-name-map the OpenSM
files install, and every metric the alert rules read is one the collectors produce."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabgen import qos
from fabgen.intent.loader import load
from fabgen.render import render
from fabgen.targets import alerts, sonic_snmp, telemetry
from tests import gnmic_model
from tests.conftest import ROOT


def _files(name: str, only: list[str] | None = None) -> dict[str, str]:
    return render(load(ROOT / "inventories" / f"{name}.yaml"), only=only or ["daytwo"])


def _yaml(text: str) -> Any:
    return yaml.safe_load(text)


def test_gnmic_sonic_subscribes_every_sonic_switch() -> None:
    files = _files("roce-256-sonic")
    config = _yaml(files[telemetry.GNMIC_SONIC])
    loaded = load(ROOT / "inventories" / "roce-256-sonic.yaml")
    from fabgen.topology.build import build

    switches = [s.name for s in build(loaded.intent).switches]
    assert list(config["targets"]) == switches
    # TLS with the switch's certificate checked, the collector's certificate from gnmic's
    # global flags (its environment): no secret and no key path in the file.
    assert config["targets"]["leaf-su1-r0"] == {
        "address": "leaf-su1-r0:8080", "insecure": False, "skip-verify": False,
        "event-tags": {"fabric": "roce-256", "platform": "sonic", "role": "leaf"}}
    paths = {(s["target"], s["paths"][0]) for s in config["subscriptions"].values()}
    # sonic-gnmi virtual paths (sonic_data_client/virtual_db.go pathTransFuncTbl) and tables;
    # the operational speed from STATE_DB, the watchdog from the queue path.
    assert paths == {("COUNTERS_DB", "COUNTERS/Ethernet*"),
                     ("COUNTERS_DB", "COUNTERS/Ethernet*/Queues"),
                     ("COUNTERS_DB", "PERIODIC_WATERMARKS/Ethernet*/PriorityGroups"),
                     ("APPL_DB", "PORT_TABLE"), ("STATE_DB", "PORT_TABLE")}
    # Sampled, states too: gnmic's Prometheus output expires a series after 60 s without an
    # update, which would end a down alert while the session is still down.
    assert {s["stream-mode"] for s in config["subscriptions"].values()} == {"sample"}
    output = config["outputs"]["prometheus"]
    assert (output["metric-prefix"], output["append-subscription-name"]) == ("sonic", True)
    source = config["processors"]["fabgen-sonic-split"]["event-starlark"]["source"]
    assert "def apply(*events)" in source
    # The alias table is the rendered PORT table's: sonic-gnmi keys COUNTERS_DB by alias.
    port = json.loads(_files("roce-256-sonic", ["sonic"])["sonic/leaf-su1-r0/config_db.json"])[
        "PORT"]
    layouts = json.loads(source.split("LAYOUTS = ")[1].split("\nSWITCHES")[0])
    switches = json.loads(source.split("SWITCHES = ")[1].split("\n#")[0])
    table = layouts[switches["leaf-su1-r0"]]
    assert {a: n for a, n in table.items() if a != n} == {
        entry["alias"]: name for name, entry in port.items()}
    assert all(table[name] == name for name in port)
    assert set(switches) == set(switches_of(loaded))


def switches_of(loaded: Any) -> list[str]:
    from fabgen.topology.build import build

    return [s.name for s in build(loaded.intent).switches if s.platform == "sonic"]


def test_gnmic_eos_dials_the_gnmi_port_the_config_opens(tmp_path: Path) -> None:
    """gnmic dials EOS's default gNMI port, which the EOS config opens with `management api
    gnmi`; an SSL profile in the intent turns TLS on at both ends."""
    files = _files("roce-eos-nvue-2to1", ["telemetry", "eos"])
    target = _yaml(files[telemetry.GNMIC_EOS])["targets"]["leaf-su1-r0"]
    assert target["address"] == "leaf-su1-r0:6030"
    assert target["insecure"] is True and not {"username", "password"} & set(target)
    assert "\nmanagement api gnmi\n   transport grpc default\n!" in files["eos/leaf-su1-r0.cfg"]
    text = (ROOT / "inventories" / "roce-eos-nvue-2to1.yaml").read_text()
    intent = tmp_path / "tls.yaml"
    intent.write_text(text + "monitoring:\n  eos_gnmi_port: 50051\n  eos_gnmi_vrf: MGMT\n"
                      "  eos_gnmi_ssl_profile: GNMI\n")
    files = render(load(intent), only=["telemetry", "eos", "report"])
    target = _yaml(files[telemetry.GNMIC_EOS])["targets"]["leaf-su1-r0"]
    assert target["address"] == "leaf-su1-r0:50051"
    assert (target["insecure"], target["skip-verify"]) == (False, False)
    assert not {"tls-ca", "username", "password"} & set(target)
    assert ("\nmanagement api gnmi\n   transport grpc MGMT\n      ssl profile GNMI\n"
            "      port 50051\n      vrf MGMT\n!") in files["eos/leaf-su1-r0.cfg"]
    assert "SSL profile `GNMI`" in files["report.md"]


# EOS 4.36.1F image profile (aristanetworks/yang EOS-4.36.1F/arista-nosimageprofile.textproto):
# each of these leaves is listed with gnmi_rpc subscribe: true.
EOS_PROFILE_LEAVES = {
    "/interfaces/interface/ethernet/pfc/priorities/priority/state/in-frames",
    "/interfaces/interface/ethernet/pfc/priorities/priority/state/out-frames",
    "/interfaces/interface/ethernet/pfc/priorities/priority/state/all-buffers-octets-max-last-poll",
    "/interfaces/interface/ethernet/pfc/watchdog/tx-queues/tx-queue/state/stuck-count",
    "/qos/interfaces/interface/output/queues/queue/state/ecn-marked-pkts",
    "/qos/interfaces/interface/output/queues/queue/state/dropped-pkts",
    "/interfaces/interface/state/oper-status",
    "/interfaces/interface/state/counters/carrier-transitions",
    "/interfaces/interface/ethernet/state/port-speed",
    "/network-instances/network-instance/protocols/protocol/bgp/neighbors/neighbor/state/"
    "session-state",
    "/bfd/interfaces/interface/peers/peer/state/session-state",
}


def test_gnmic_eos_paths_are_in_arista_profile() -> None:
    config = _yaml(_files("roce-eos-nvue-2to1")[telemetry.GNMIC_EOS])
    paths = [p for s in config["subscriptions"].values() for p in s["paths"]]
    for path in paths:
        assert any(leaf == path or leaf.startswith(path + "/") for leaf in EOS_PROFILE_LEAVES), path
    assert {t["event-tags"]["platform"] for t in config["targets"].values()} == {"eos"}


def test_nvue_startup_config_streams_the_lossless_priority(tmp_path: Path) -> None:
    """The OTLP export is in the switch's startup.yaml (the file `nv config replace` takes),
    under system.telemetry, with no separate fragment left to forget."""
    from tests.test_eos_nvue import load_nvue

    text = (ROOT / "inventories" / "roce-eos-nvue-2to1.yaml").read_text()
    intent = tmp_path / "mixed.yaml"
    assert "\nmonitoring:" not in text
    intent.write_text(text + "monitoring:\n  otlp_destination: otel-1\n")
    loaded = load(intent)
    files = render(loaded, only=["nvue", "telemetry"])
    assert not [p for p in files if p.startswith("nvue/") and not p.endswith("/startup.yaml")]
    assert telemetry.OTEL_COLLECTOR in files
    tel = load_nvue(files["nvue/spine-01/startup.yaml"])["system"]["telemetry"]
    assert tel["export"]["otlp"] == {"state": "enabled", "grpc": {
        "destination": {"otel-1": {"port": 4317}}, "insecure": "enabled", "port": 4317}}
    stats = tel["interface-stats"]
    assert stats["export"] == {"state": "enabled"} and stats["sample-interval"] == 10
    assert list(stats["switch-priority"]) == ["3"]
    assert list(stats["ingress-buffer"]["priority-group"]) == ["3"]
    queues = list(stats["egress-buffer"]["traffic-class"])
    assert queues == [str(q) for q in sorted({c.queue for c in qos.plan(loaded.intent).classes})]
    assert {"0", "3", "6"} <= set(queues)  # default, RoCE, CNP
    assert tel["label"] == {"device": {"description": "spine-01"}}
    assert tel["buffer-stats"] == tel["router"]["bgp"] == {"export": {"state": "enabled"}}
    # Without a collector the export has no destination and the report says how to add one.
    default = _files("roce-eos-nvue-2to1", ["nvue", "report"])
    grpc = load_nvue(default["nvue/spine-01/startup.yaml"])["system"]["telemetry"]["export"][
        "otlp"]["grpc"]
    assert "destination" not in grpc
    assert "monitoring.otlp_destination is not set" in default["report.md"]


def test_infiniband_exporter_reads_the_node_name_map() -> None:
    # The example names no real GUIDs, so OpenSM gets no node-name-map and the exporter no flag.
    files = _files("ib-ndr-1024", ["telemetry", "opensm"])
    options = files["telemetry/infiniband_exporter.sysconfig"]
    assert 'OPTIONS="--collector.switch --collector.hca"' in options
    assert "infiniband/node-name-map" not in files
    # With the real GUIDs (infiniband.guids_file) the exporter reads OpenSM's node-name-map.
    from fabgen.targets.base import RenderContext
    from fabgen.topology.build import build

    intent = load(ROOT / "inventories" / "ib-ndr-1024.yaml").intent
    intent = intent.model_copy(update={"infiniband": intent.infiniband.model_copy(
        update={"guids_file": "fabric.ibnd"})})
    named = telemetry.TARGET.render(RenderContext(intent, build(intent)))
    # A UFM pair: UFM's ib-node-name-map (UFM Enterprise User Manual, SM Default Files)
    assert 'OPTIONS="--collector.switch --collector.hca ' \
           '--ibnetdiscover.node-name-map=/opt/ufm/files/conf/opensm/ib-node-name-map"' in \
        named["telemetry/infiniband_exporter.sysconfig"]
    # plain OpenSM hosts: the node-name-map beside their opensm.conf
    mgmt = intent.infiniband.management.model_copy(update={"kind": "opensm"})
    plain = intent.model_copy(update={"infiniband": intent.infiniband.model_copy(
        update={"management": mgmt})})
    named = telemetry.TARGET.render(RenderContext(plain, build(plain)))
    assert 'OPTIONS="--collector.switch --collector.hca ' \
           '--ibnetdiscover.node-name-map=/etc/opensm/node-name-map"' in named[
               "telemetry/infiniband_exporter.sysconfig"]


def _metrics(expr: str) -> set[str]:
    names = set(re.findall(r"\b([a-z][a-z0-9]*_[A-Za-z0-9_]+)(?=\{|\[)", expr))
    return {n for n in names if not n.startswith(("label_replace", "on_"))}


def test_rules_read_only_metrics_the_collectors_produce() -> None:
    # SONiC: sonic_<event>_<field>, with the events the starlark splitter names.
    events = {event for _, _, _, event, _ in telemetry.SONIC_SUBSCRIPTIONS.values()}
    eos_subscriptions = set(_yaml(_files("roce-eos-nvue-2to1")[telemetry.GNMIC_EOS])
                            ["subscriptions"])
    for name in ("roce-256-sonic", "roce-eos-nvue-2to1"):
        groups = _yaml(_files(name)[alerts.RULES])["groups"]
        for group in groups:
            for rule in group["rules"]:
                for metric in _metrics(rule["expr"]):
                    platform = group["name"].rsplit("-", 1)[1]
                    if platform == "sonic" and metric in (sonic_snmp.METRIC, "up"):
                        # snmp_exporter's metric, and the scrape job's `up`.
                        assert (sonic_snmp.METRIC in _files(name)[sonic_snmp.SNMP_EXPORTER]
                                and "up{job=" in rule["expr"]) or metric != "up", rule
                    elif platform == "sonic":
                        assert any(metric.startswith(f"sonic_{e}_") for e in events), metric
                    elif platform == "eos":
                        assert metric.split("_")[1] in eos_subscriptions, metric
                    elif platform == "nvue":
                        assert metric.startswith("nvswitch_"), metric
                    else:
                        assert metric.startswith("node_infiniband_"), metric


# --- gnmic loads the configs (tests/gnmic_model.load_targets, from gnmic's source) -----------

COLLECTOR_ENV = {"GNMIC_TLS_CA": "/etc/gnmic/ca.pem", "GNMIC_TLS_CERT": "/etc/gnmic/c.pem",
                 "GNMIC_TLS_KEY": "/etc/gnmic/c.key", "GNMIC_USERNAME": "telemetry",
                 "GNMIC_PASSWORD": "s3cret"}


def _exists(path: str) -> bool:
    return path in {"/etc/gnmic/ca.pem", "/etc/gnmic/c.pem", "/etc/gnmic/c.key"}


def test_gnmic_model_rejects_env_references_in_target_tls_paths() -> None:
    """What the earlier render wrote: gnmic stats `${GNMIC_TLS_CA}` as a file under the working
    directory before it expands the variable, and the whole config fails to load."""
    config = {"targets": {"leaf": {"address": "leaf:8080", "insecure": False,
                                   "tls-ca": "${GNMIC_TLS_CA}"}}}
    with pytest.raises(gnmic_model.GnmicLoadError, match=r"/srv/\$\{GNMIC_TLS_CA\}"):
        gnmic_model.load_targets(config, COLLECTOR_ENV, "/srv", _exists)


@pytest.mark.parametrize(("inventory", "path", "ssl"), [
    ("roce-256-sonic", telemetry.GNMIC_SONIC, None),
    ("roce-eos-nvue-2to1", telemetry.GNMIC_EOS, None),
    ("roce-eos-nvue-2to1", telemetry.GNMIC_EOS, "GNMI")])
def test_rendered_gnmic_configs_load_and_inherit_the_collector_env(
        inventory: str, path: str, ssl: str | None, tmp_path: Path) -> None:
    text = (ROOT / "inventories" / f"{inventory}.yaml").read_text()
    if ssl:
        text += f"monitoring:\n  eos_gnmi_ssl_profile: {ssl}\n"
    intent = tmp_path / "intent.yaml"
    intent.write_text(text)
    config = _yaml(render(load(intent), only=["telemetry"])[path])
    targets = gnmic_model.load_targets(config, COLLECTOR_ENV, "/srv", _exists)
    assert set(targets) == set(config["targets"])
    for tc in targets.values():
        # Credentials come from the environment, never from the file.
        assert (tc["username"], tc["password"]) == ("telemetry", "s3cret")
        if tc["insecure"]:
            assert ssl is None and path == telemetry.GNMIC_EOS
            assert "tls-ca" not in tc
        else:
            assert (tc["tls-ca"], tc["tls-cert"], tc["tls-key"], tc["skip-verify"]) == (
                "/etc/gnmic/ca.pem", "/etc/gnmic/c.pem", "/etc/gnmic/c.key", False)
    # Without the CA file on the collector gnmic says so at load (the global flag's path).
    if not all(tc["insecure"] for tc in targets.values()):
        with pytest.raises(gnmic_model.GnmicLoadError, match=r"ca\.pem"):
            gnmic_model.load_targets(config, COLLECTOR_ENV, "/srv", lambda p: False)


@pytest.mark.realtool
def test_sonic_bgp_state_scrape_job_is_a_valid_prometheus_config(tmp_path: Path) -> None:
    """The SNMP scrape job (a scrape_config_files file, which is a prometheus.yml with only
    scrape_configs) passes promtool; the exporter module walks BGP4-MIB bgpPeerState with the
    SNMPv3 user from the environment, nothing secret in the file."""
    import subprocess

    from tests.conftest import require_tool

    files = _files("roce-256-sonic", ["telemetry"])
    scrape = tmp_path / "scrape.yml"
    scrape.write_text(files[sonic_snmp.SCRAPE])
    require_tool("promtool")
    run = subprocess.run(["promtool", "check", "config", str(scrape)], capture_output=True,
                         text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    (job,) = _yaml(files[sonic_snmp.SCRAPE])["scrape_configs"]
    assert {t for g in job["static_configs"] for t in g["targets"]} == set(
        _yaml(files[telemetry.GNMIC_SONIC])["targets"])
    exporter = _yaml(files[sonic_snmp.SNMP_EXPORTER])
    (auth,) = exporter["auths"].values()
    assert {auth[k] for k in ("username", "password", "priv_password")} == {
        "${FABGEN_SNMP_USERNAME}", "${FABGEN_SNMP_AUTH_PASSWORD}", "${FABGEN_SNMP_PRIV_PASSWORD}"}
    (module,) = exporter["modules"].values()
    assert module["walk"] == ["1.3.6.1.2.1.15.3.1.2"]
