"""`fabgen verify` on saved show outputs: a healthy switch passes; a miscabled LLDP neighbour
and a missing BGP session are reported with device, port and the expected value (SONiC and
NVUE); parsers read the real output layouts; exit codes gate CI."""

from __future__ import annotations

import json
from pathlib import Path

from fabgen import qos
from fabgen.catalog import sonic_skus
from fabgen.intent.loader import load
from fabgen.topology.build import build
from fabgen.topology.index import FabricIndex
from fabgen.verify import saved
from fabgen.verify.expect import ExpectedSwitch, expected_switches
from tests.conftest import ROOT

SONIC_INTENT = ROOT / "inventories" / "roce-256-sonic.yaml"
MIXED_INTENT = ROOT / "inventories" / "roce-eos-nvue-2to1.yaml"


def _switch(intent: Path, name: str) -> ExpectedSwitch:
    loaded = load(intent)
    switches = expected_switches(FabricIndex(build(loaded.intent)), qos.plan(loaded.intent))
    return next(s for s in switches if s.name == name)


def _table(headers: list[str], rows: list[list[str]]) -> str:
    """A table laid out like sonic-utilities' tabulate output: header, dashes, rows."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join(h.rjust(w) for h, w in zip(headers, widths, strict=True))
    dashes = "  ".join("-" * w for w in widths)
    body = ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join([line, dashes, *body]) + "\n"


def _sonic_outputs(sw: ExpectedSwitch, watchdog: tuple[str, int, int],
                   neighbor: dict[str, tuple[str, str]] | None = None,
                   pfc3: dict[str, str] | None = None,
                   stormed: frozenset[str] = frozenset()) -> dict[str, str]:
    """The outputs of a switch that matches its plan, except for the overrides: `neighbor`
    (port -> the LLDP neighbour seen there), `pfc3` (port -> PFC3 count), `stormed` ports."""
    action, detection, restoration = watchdog
    neighbor = neighbor or {}
    pfc3 = pfc3 or {}
    lldp = _table(["LocalPort", "RemoteDevice", "RemotePortID", "Capability", "RemotePortDescr"],
                  [[p.name, *neighbor.get(p.name, (p.peer, p.peer_port_ids[-1])), "BR",
                    f"{sw.name}:{p.name}"] for p in sw.ports if p.peer_is_switch])
    lldp = "Capability codes: (R) Router, (B) Bridge, (O) Other\n" + lldp + "-" * 50 + \
        f"\nTotal entries displayed:  {len(sw.ports)}\n"
    status = _table(["Interface", "Lanes", "Speed", "MTU", "FEC", "Alias", "Vlan", "Oper", "Admin",
                     "Type", "Asym PFC"],
                    [[p.name, "0,1,2,3", f"{p.speed_gbps}G", str(sw.mtu), "rs", "etp1", "routed",
                      "up", "up", "OSFP 8X Pluggable Transceiver", "N/A"] for p in sw.ports])
    bgp = {"ipv4Unicast": {"routerId": "10.255.0.1", "as": 65101, "peers": {
        s.peer_ip: {"remoteAs": s.peer_asn, "state": "Established", "peerState": "OK",
                    "pfxRcd": 12} for s in sw.sessions}}}
    pfc_header = ["PFC" + str(i) for i in range(8)]
    pfc = (_table(["Port Rx", *pfc_header],
                  [[p.name, "0", "0", "0", pfc3.get(p.name, "0"), *["0"] * 4] for p in sw.ports])
           + "\n"
           + _table(["Port Tx", *pfc_header], [[p.name, *["0"] * 8] for p in sw.ports]))
    pfcwd = _table(["QUEUE", "STATUS", "STORM DETECTED/RESTORED", "TX OK/DROP", "RX OK/DROP",
                    "TX LAST OK/DROP", "RX LAST OK/DROP"],
                   [[f"{p.name}:3", "stormed" if p.name in stormed else "operational",
                     "1/0" if p.name in stormed else "0/0", "100/0", "100/0", "0/0", "0/0"]
                    for p in sw.ports])
    config = _table(["PORT", "ACTION", "DETECTION TIME", "RESTORATION TIME"],
                    [[p.name, action, str(detection), str(restoration)] for p in sw.ports])
    meta = {"localhost": {"hostname": sw.name, "type": sonic_skus.ROLE_TYPE[sw.role],
                          "hwsku": sw.hwsku, "docker_routing_config_mode": "unified",
                          "frr_mgmt_framework_config": "true"}}
    return {"lldp.txt": lldp, "interfaces.txt": status, "bgp.json": json.dumps(bgp),
            "pfc.txt": pfc, "pfcwd.txt": pfcwd, "pfcwd-config.txt": config,
            "bfd.json": _bfd_json(sw), "device-metadata.json": json.dumps(meta),
            "golden.json": json.dumps({"DEVICE_METADATA": meta}),
            # `sudo TSB` leaves the row with tsa_enabled false; a switch never drained has none.
            "bgp-device-global.json": json.dumps({"STATE": {"tsa_enabled": "false"}})}


def _bfd_json(sw: ExpectedSwitch, interval_ms: int = 300, multiplier: int = 3) -> str:
    """`show bfd peers json` of a switch whose every BGP peer has an up session, laid out as
    FRR's bfdd prints it (bfdd/bfdd_vty.c __display_peer_json; FRR topotests' expected
    outputs): one object per session in a JSON array."""
    return json.dumps([
        {"multihop": False, "peer": s.peer_ip, "vrf": "default", "interface": s.port,
         "id": 100 + i, "remote-id": 200 + i, "passive-mode": False, "status": "up",
         "uptime": 3600, "diagnostic": "ok", "remote-diagnostic": "ok",
         "receive-interval": interval_ms, "transmit-interval": interval_ms,
         "echo-receive-interval": 50, "echo-transmit-interval": 0,
         "detect-multiplier": multiplier, "remote-receive-interval": interval_ms,
         "remote-transmit-interval": interval_ms, "remote-echo-receive-interval": 50,
         "remote-detect-multiplier": multiplier}
        for i, s in enumerate(sw.sessions)])


def _save(root: Path, device: str, files: dict[str, str]) -> None:
    (root / device).mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / device / name).write_text(text)


def test_healthy_sonic_switch_passes(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    sw = _switch(SONIC_INTENT, "leaf-su1-r0")
    _save(tmp_path, sw.name, _sonic_outputs(sw, ("drop", 200, 400)))
    run = cli("verify", str(SONIC_INTENT), str(tmp_path), "--devices", sw.name)
    assert (run.code, run.out) == (0, "1 switch(es) match the plan\n"), run.out + run.err


def test_sonic_miscabled_lldp_and_missing_bgp_session(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    sw = _switch(SONIC_INTENT, "leaf-su1-r0")
    uplinks = [p for p in sw.ports if p.peer_is_switch]
    a, b = uplinks[0], uplinks[-1]  # a cable landed on another spine's port
    assert a.peer != b.peer
    files = _sonic_outputs(sw, ("drop", 200, 400),
                           neighbor={a.name: (b.peer, b.peer_port_ids[-1])})
    bgp = json.loads(files["bgp.json"])
    lost = sw.sessions[1]
    del bgp["ipv4Unicast"]["peers"][lost.peer_ip]
    files["bgp.json"] = json.dumps(bgp)
    _save(tmp_path, sw.name, files)
    run = cli("verify", str(SONIC_INTENT), str(tmp_path), "--devices", sw.name)
    assert run.code == 1
    assert run.out.splitlines() == [
        f"{sw.name} {a.name}: lldp: expected {a.peer} {'|'.join(a.peer_port_ids)}, got "
        f"{b.peer} {b.peer_port_ids[-1]}",
        f"{sw.name} {lost.peer_ip}: bgp: expected Established with {lost.peer} "
        f"AS{lost.peer_asn} via {lost.port}, got no such neighbour",
        "2 mismatch(es) on 1 of 1 switch(es)",
    ]


def test_sonic_storm_pfc_and_watchdog_drift_are_reported(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    sw = _switch(SONIC_INTENT, "leaf-su1-r0")
    port = sw.ports[0].name
    files = _sonic_outputs(sw, ("forward", 200, 400),  # the plan says drop
                           pfc3={port: "1,200"}, stormed=frozenset({port}))
    _save(tmp_path, sw.name, files)
    run = cli("verify", str(SONIC_INTENT), str(tmp_path), "--devices", sw.name, "--json")
    assert run.code == 1
    report = json.loads(run.out)
    pfc = [f for f in report["findings"] if f["check"] == "pfc"]
    assert pfc == [{"device": sw.name, "port": port, "check": "pfc", "actual": "1200",
                    "expected": "at most 0 PFC frames on priority 3 "
                                "(monitoring.verify_pfc_frames_max)"}]
    watchdog = [(f["port"], f["actual"]) for f in report["findings"]
                if f["check"] == "pfc-watchdog"]
    assert (port, "status stormed, storms detected 1") in watchdog
    drift = "action forward, detection 200 ms, restoration 400 ms"
    assert sorted(p for p, actual in watchdog if actual == drift) == sorted(
        p.name for p in sw.ports)  # every port's action differs from the plan's drop
    assert report["checked"] == [sw.name]


def test_missing_outputs_and_usage_errors(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    sw = _switch(SONIC_INTENT, "spine-01")
    files = _sonic_outputs(sw, ("drop", 200, 400))
    del files["bgp.json"]
    _save(tmp_path, sw.name, files)
    run = cli("verify", str(SONIC_INTENT), str(tmp_path), "--devices", sw.name)
    assert run.code == 1
    assert run.out.splitlines()[0] == (
        "spine-01: outputs: expected bgp.json (`vtysh -c 'show ip bgp summary json'`), got no "
        "such file")
    assert cli("verify", str(SONIC_INTENT), str(tmp_path / "nope")).code == 1
    assert cli("verify", str(SONIC_INTENT), str(tmp_path), "--checks", "lldp,dns").code == 1
    bad = cli("verify", str(SONIC_INTENT), str(tmp_path), "--devices", "nothing-*")
    assert bad.code == 1 and "matches no switch" in bad.err


def test_sonic_routing_design_drift_is_reported(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A switch db_migrator reset (minigraph.xml, no golden file) and still on bgpcfgd: each
    field and the missing golden file are named, with what the plan expects."""
    sw = _switch(SONIC_INTENT, "leaf-su1-r0")
    files = _sonic_outputs(sw, ("drop", 200, 400))
    files["device-metadata.json"] = json.dumps({"localhost": {
        "docker_routing_config_mode": "separated", "type": "LeafRouter", "hwsku": sw.hwsku}})
    files["golden.json"] = ""  # `sudo cat` of a file that is not there
    _save(tmp_path, sw.name, files)
    run = cli("verify", str(SONIC_INTENT), str(tmp_path), "--devices", sw.name, "--checks",
              "routing")
    assert run.code == 1
    lines = run.out.splitlines()
    assert lines[0].startswith("leaf-su1-r0: routing: expected DEVICE_METADATA "
                               "frr_mgmt_framework_config true")
    assert lines[0].endswith("got not set")
    assert "docker_routing_config_mode unified" in lines[1] and lines[1].endswith("separated")
    assert "type BackEndToRRouter" in lines[2] and lines[2].endswith("got LeafRouter")
    assert "golden_config_db.json" in lines[3] and lines[3].endswith("got no golden file")
    assert lines[4] == "4 mismatch(es) on 1 of 1 switch(es)"


def test_sonic_tsa_request_and_wrong_hwsku_are_reported(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """`sudo TSA` under frrcfgd writes tsa_enabled and drains nothing: verify says so, with the
    drain that works. A factory SN5600 (ACS-SN5600) where the plan is the 2x400G SKU: named."""
    sw = _switch(SONIC_INTENT, "leaf-su1-r0")
    files = _sonic_outputs(sw, ("drop", 200, 400))
    assert json.loads(files["device-metadata.json"])["localhost"]["hwsku"] == sw.hwsku
    files["bgp-device-global.json"] = json.dumps({"STATE": {"tsa_enabled": "true"}})
    meta = json.loads(files["device-metadata.json"])
    meta["localhost"]["hwsku"] = "ACS-SN5600"
    files["device-metadata.json"] = json.dumps(meta)
    _save(tmp_path, sw.name, files)
    run = cli("verify", str(SONIC_INTENT), str(tmp_path), "--devices", sw.name)
    assert run.code == 1
    lines = run.out.splitlines()
    assert lines[0].endswith("got tsa_enabled true: drain requested but not applied")
    assert "sudo config bgp shutdown all" in lines[0]
    assert lines[1] == (f"leaf-su1-r0: routing: expected DEVICE_METADATA hwsku {sw.hwsku} (the "
                        "port, buffer and QoS tables are that SKU's), got ACS-SN5600")
    assert lines[2] == "2 mismatch(es) on 1 of 1 switch(es)"


# --- NVUE -------------------------------------------------------------------------------------

def _nvue_outputs(sw: ExpectedSwitch) -> dict[str, str]:
    interfaces = {p.name: {"type": "swp", "link": {"oper-status": "up", "admin-status": "up",
                                                   "speed": f"{p.speed_gbps}G", "mtu": sw.mtu}}
                  for p in sw.ports}
    interfaces["eth0"] = {"type": "eth", "link": {"oper-status": "up", "speed": "1G",
                                                  "mtu": 1500}}
    # lldpctl -f json: "interface" is a list of {port: details}; chassis keyed by system name.
    lldp = {"lldp": {"interface": [
        {p.name: {"via": "LLDP", "chassis": {p.peer: {"id": {"type": "mac",
                                                             "value": "0c:42:a1:00:00:01"}}},
                  "port": {"id": {"type": "ifname", "value": p.peer_port_ids[-1]},
                           "descr": p.peer_port}}}
        for p in sw.ports]}}
    bgp = {"ipv4Unicast": {"peers": {s.peer_ip: {"remoteAs": s.peer_asn, "state": "Established"}
                                     for s in sw.sessions}}}
    return {"interfaces.json": json.dumps(interfaces), "lldp.json": json.dumps(lldp),
            "bgp.json": json.dumps(bgp), "bfd.json": _bfd_json(sw)}


def test_nvue_miscabled_lldp_and_missing_bgp_session(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    sw = _switch(MIXED_INTENT, "spine-01")
    files = _nvue_outputs(sw)
    _save(tmp_path / "good", sw.name, files)
    run = cli("verify", str(MIXED_INTENT), str(tmp_path / "good"), "--devices", "spine-0[1]")
    assert run.code == 0, run.out
    a, b = sw.ports[0], sw.ports[1]
    lldp = json.loads(files["lldp.json"])
    lldp["lldp"]["interface"][0][a.name]["chassis"] = {b.peer: {}}
    lldp["lldp"]["interface"][0][a.name]["port"]["id"]["value"] = b.peer_port
    files["lldp.json"] = json.dumps(lldp)
    bgp = json.loads(files["bgp.json"])
    lost = sw.sessions[-1]
    bgp["ipv4Unicast"]["peers"][lost.peer_ip]["state"] = "Active"
    files["bgp.json"] = json.dumps(bgp)
    _save(tmp_path / "bad", sw.name, files)
    run = cli("verify", str(MIXED_INTENT), str(tmp_path / "bad"), "--devices", sw.name)
    assert run.code == 1
    assert run.out.splitlines() == [
        f"{sw.name} {a.name}: lldp: expected {a.peer} {a.peer_port}, got {b.peer} {b.peer_port}",
        f"{sw.name} {lost.peer_ip}: bgp: expected Established with {lost.peer} "
        f"AS{lost.peer_asn} via {lost.port}, got Active",
        "2 mismatch(es) on 1 of 1 switch(es)",
    ]


def _bfd_down(files: dict[str, str], sw: ExpectedSwitch) -> tuple[str, str]:
    """Take the last BGP peer's BFD session down as bfdd shows a detection timeout; return the
    peer address and the first peer's address, whose session is gone."""
    peers = json.loads(files["bfd.json"])
    down = peers[-1]
    down.update({"status": "down", "downtime": 12, "diagnostic": "control detection time expired"})
    del down["uptime"]
    gone = peers.pop(0)["peer"]
    files["bfd.json"] = json.dumps(peers)
    return down["peer"], gone


def test_sonic_bfd_session_down_is_reported(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    sw = _switch(SONIC_INTENT, "leaf-su1-r0")
    files = _sonic_outputs(sw, ("drop", 200, 400))
    down, gone = _bfd_down(files, sw)
    _save(tmp_path, sw.name, files)
    run = cli("verify", str(SONIC_INTENT), str(tmp_path), "--devices", sw.name)
    assert run.code == 1, run.out + run.err
    by_ip = {s.peer_ip: s for s in sw.sessions}
    assert run.out.splitlines() == [
        f"{sw.name} {gone}: bfd: expected BFD up with {by_ip[gone].peer} via "
        f"{by_ip[gone].port}, got no BFD session",
        f"{sw.name} {down}: bfd: expected BFD up with {by_ip[down].peer} via "
        f"{by_ip[down].port}, got down (control detection time expired)",
        "2 mismatch(es) on 1 of 1 switch(es)",
    ]
    # --checks selects it like every other check
    assert cli("verify", str(SONIC_INTENT), str(tmp_path), "--devices", sw.name,
               "--checks", "lldp,bgp").code == 0


def test_nvue_bfd_down_and_timer_drift_are_reported(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    sw = _switch(MIXED_INTENT, "spine-01")
    files = _nvue_outputs(sw)
    peers = json.loads(files["bfd.json"])
    peers[0]["status"] = "init"
    peers[1].update({"transmit-interval": 1000, "receive-interval": 1000})  # a drifted profile
    files["bfd.json"] = json.dumps(peers)
    _save(tmp_path, sw.name, files)
    run = cli("verify", str(MIXED_INTENT), str(tmp_path), "--devices", sw.name, "--json")
    assert run.code == 1
    report = json.loads(run.out)
    first, second = sw.sessions[0], sw.sessions[1]
    assert report["findings"] == [
        {"device": sw.name, "port": first.peer_ip, "check": "bfd",
         "expected": f"BFD up with {first.peer} via {first.port}", "actual": "init"},
        {"device": sw.name, "port": second.peer_ip, "check": "bfd",
         "expected": "transmit 300 ms, receive 300 ms, multiplier 3",
         "actual": "transmit 1000 ms, receive 1000 ms, multiplier 3"},
    ]


def test_bfd_output_is_needed_only_when_the_plan_runs_bfd(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    sw = _switch(SONIC_INTENT, "spine-01")
    files = _sonic_outputs(sw, ("drop", 200, 400))
    del files["bfd.json"]
    _save(tmp_path / "saved", sw.name, files)
    run = cli("verify", str(SONIC_INTENT), str(tmp_path / "saved"), "--devices", sw.name)
    assert run.code == 1
    assert run.out.splitlines()[0] == (
        "spine-01: outputs: expected bfd.json (`vtysh -c 'show bfd peers json'`), got no such "
        "file")
    off = tmp_path / "no-bfd.yaml"
    text = SONIC_INTENT.read_text()
    assert "\nunderlay:" not in text
    off.write_text(text + "underlay:\n  bfd:\n    enabled: false\n")
    assert cli("verify", str(off), str(tmp_path / "saved"), "--devices", sw.name).code == 0
    # and the collect script saves it only then
    from fabgen.render import render

    on = render(load(SONIC_INTENT), only=["collect"])["verify/collect-sonic.sh"]
    assert "show bfd peers json" in on
    assert "show bfd" not in render(load(off), only=["collect"])["verify/collect-sonic.sh"]


def test_bfd_parser_reads_frr_layout() -> None:
    # bfdd prints a JSON array; a session that is down has "downtime" and no "uptime".
    text = ('[{"multihop":false,"peer":"10.0.0.1","interface":"Ethernet0","status":"up",'
            '"receive-interval":300,"transmit-interval":300,"detect-multiplier":3},'
            '{"multihop":false,"peer":"10.0.0.3","status":"down","downtime":5}]')
    peers = saved.bfd_peers(text)
    assert sorted(peers) == ["10.0.0.1", "10.0.0.3"]
    assert peers["10.0.0.3"]["status"] == "down"
    import pytest

    with pytest.raises(ValueError, match="JSON array"):
        saved.bfd_peers('{"peers": {}}')


def test_eos_switches_are_left_to_anta(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    run = cli("verify", str(MIXED_INTENT), str(tmp_path), "--devices", "leaf-su1-r0")
    assert run.code == 0
    assert "run verify/anta-catalog.yaml with ANTA" in run.out


# --- parsers on the real layouts --------------------------------------------------------------

def test_parsers_read_sonic_utilities_layouts() -> None:
    # sonic-utilities tests/pfcstat_test.py and pfcwd_test.py expected outputs (layout and the
    # thousands separator pfcstat prints).
    pfc = ("  Port Rx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7\n"
           "---------  ------  ------  ------  ------  ------  ------  ------  ------\n"
           "Ethernet0   1,200     201     202     203     204     205     206     207\n"
           "Ethernet4     N/A     N/A     N/A     N/A     N/A     N/A     N/A     N/A\n\n"
           "  Port Tx    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7\n"
           "---------  ------  ------  ------  ------  ------  ------  ------  ------\n"
           "Ethernet0   1,210     211     212     213     214     215     216     217\n")
    rx, tx = saved.parse_tables(pfc)
    assert rx[0]["Port Rx"] == "Ethernet0" and saved.parse_number(rx[0]["PFC0"]) == 1200
    assert saved.parse_number(rx[1]["PFC3"]) is None
    assert saved.parse_number(tx[0]["PFC7"]) == 217
    wd = ("      QUEUE       STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    "
          "TX LAST OK/DROP    RX LAST OK/DROP\n"
          "-----------  -----------  -------------------------  ------------  ------------  "
          "-----------------  -----------------\n"
          "Ethernet0:3      stormed                        1/0       100/300       100/300    "
          "          0/200              0/200\n")
    (row,), = saved.parse_tables(wd)
    assert (row["QUEUE"], row["STATUS"], row["STORM DETECTED/RESTORED"]) == (
        "Ethernet0:3", "stormed", "1/0")
    lldp = ("Capability codes: (R) Router, (B) Bridge, (O) Other\n"
            "LocalPort    RemoteDevice             RemotePortID       Capability    "
            "RemotePortDescr\n"
            "-----------  -----------------------  -----------------  ------------  "
            "-------------------------\n"
            "Ethernet0    r-sonic-10-006           0c:42:a1:88:0a:1c  R             "
            "Interface   8 as enp5s0f0\n"
            "Ethernet4    spine-01                 etp1a                                \n"
            "--------------------------------------------------\n"
            "Total entries displayed:  2\n")
    (first, second), = saved.parse_tables(lldp)
    assert first["RemotePortDescr"] == "Interface   8 as enp5s0f0"
    assert (second["RemoteDevice"], second["RemotePortID"], second["Capability"]) == (
        "spine-01", "etp1a", "")


def test_lldpctl_single_interface_object() -> None:
    # lldpd writes one neighbour as an object, not a one-element list.
    text = json.dumps({"lldp": {"interface": {"swp1": {
        "chassis": {"leaf-1": {"id": {"type": "mac", "value": "aa:bb"}}},
        "port": {"id": {"type": "ifname", "value": "Ethernet1/1"}}}}}})
    assert saved.lldp_neighbors_lldpctl(text) == {"swp1": [("leaf-1", "Ethernet1/1")]}


def test_verify_help_names_every_check(cli) -> None:  # type: ignore[no-untyped-def]
    """`--checks` lists what the verifier runs: a check added to CHECKS must reach the help."""
    from fabgen.verify.check import CHECKS

    helped = cli("verify", "--help")
    assert helped.code == 0
    listed = " ".join(helped.out.split())
    assert f"comma-separated subset of: {', '.join(CHECKS)} (default: all)" in listed
