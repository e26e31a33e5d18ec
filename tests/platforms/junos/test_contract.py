"""Junos runs the shared platform contract (tests/platforms/contract.py): its configurations
validated by libyang against Juniper's 23.4R2-EVO YANG (yang.py, FABGEN_JUNOS_YANG; skipped
without it), pushed with `fabgen push` through napalm's `junos` driver to the fake Junos device
(commit confirmed by the device), verified from `| display json` outputs, and its PFC storm
alert fired on the series its gnmic collector makes of Juniper's `jnx-pfc-statistics`
(telemetry.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fabgen.platforms.junos import cos, facts
from fabgen.platforms.junos.push.candidate import flatten, parse
from tests.platforms.contract import Harness, PlatformContract
from tests.platforms.junos import gnmi, lab, yang


def _validate(files: Mapping[str, str], tmp: Path) -> list[str]:
    out = []
    for path, text in files.items():
        if path.endswith(".json"):
            problems = yang.validate(json.loads(text), tmp)
            out += [f"{path}: {p}" for p in problems]
    return out


def _management_kept(the_lab: Any, name: str, before: dict[str, str]) -> list[str]:
    def mgmt(text: str) -> set[tuple[str, ...]]:
        return {p for p in flatten(parse(text)) if p[:2] == ("interfaces", "re0:mgmt-0")
                or p[:1] == ("routing-instances",) or p[:2] == ("system", "login")}

    was, now = mgmt(before["running"]), mgmt(the_lab.state(name)["running"])
    return [] if was and was == now else [f"management changed: {sorted(was ^ now)[:3]}"]


def _records(top: str, record: str, rows: list[dict[str, str]]) -> str:
    return json.dumps({top: [{record: [{k: [{"data": v}] for k, v in r.items()}
                                       for r in rows]}]})


def _saved(sw: Any, plan: Any) -> dict[str, str]:
    """`| display json` outputs of a healthy switch, in the element layout of
    tests/platforms/junos/data (Juniper's JSON rendering of the RPC replies)."""
    media = str(sw.mtu + facts.ETHERNET_OVERHEAD)
    return {
        "interfaces.json": _records("interface-information", "physical-interface", [
            {"name": p.name, "admin-status": "up", "oper-status": "up", "mtu": media,
             "speed": f"{p.speed_gbps}Gbps"} for p in sw.ports]),
        "lldp.json": _records("lldp-neighbors-information", "lldp-neighbor-information", [
            {"lldp-local-port-id": p.name, "lldp-remote-system-name": p.peer,
             "lldp-remote-port-id": p.peer_port_ids[-1]} for p in sw.ports]),
        "bgp.json": _records("bgp-information", "bgp-peer", [
            {"peer-address": s.peer_ip, "peer-state": "Established",
             "peer-as": str(s.peer_asn)} for s in sw.sessions]),
        "bfd.json": _records("bfd-session-information", "bfd-session", [
            {"session-neighbor": s.peer_ip, "session-state": "Up",
             "session-interface": f"{s.port}.0", "session-transmission-interval": "0.300",
             "session-adaptive-multiplier": "3"} for s in sw.sessions]),
        "cos.json": _congestion_notification(plan),
        "cos-interfaces.json": json.dumps({"cos-interface-information": [{"interface-map": [
            {"interface-name": [{"data": p.name}],
             "interface-congestion-notification-map-name": [{"data": cos.pfc_profile(5)}]}
            for p in sw.ports]}]}),
    }


def _congestion_notification(plan: Any) -> str:
    """`show class-of-service congestion-notification | display json` of fabgen's profile,
    in the element layout of Juniper's RPC YANG (tests/platforms/junos/data/cos.json)."""
    def d(value: object) -> list[dict[str, str]]:
        return [{"data": str(value)}]

    wd = plan.watchdog
    profile = {
        "congestion-notification-name": d(cos.pfc_profile(5)),
        "congestion-notification-input": [{"congestion-notification-map": [{
            "congestion-notification-map-item": [
                {"pfc-priority": d(f"{x:06b}"), "pfc-enable-state": d("Enabled")}
                for x in plan.rdma.dscp]}]}],
        "congestion-notification-output": [{"congestion-notification-output-map": [{
            "congestion-notification-output-map-item": [
                {"pfc-priority": d(f"{p:03b}"),
                 "pfc-flow-control-queue-list": [{"pfc-flow-control-queue": d(plan.rdma.queue)}]}
                for p in plan.pfc_priorities]}]}],
        "congestion-notification-pfc-watchdog": [{
            "pfc-wd-enabled": d("Enabled"), "pfc-wd-action": d(wd.action),
            "pfc-wd-poll-interval": d(wd.poll_ms),
            "pfc-wd-detection": d(wd.detection_ms // wd.poll_ms),
            "pfc-wd-recovery": d(wd.restoration_ms)}],
    }
    return json.dumps({"cos-congestion-notification-information": [
        {"cos-congestion-notification": [profile]}]})


class TestJunos(PlatformContract):
    harness = Harness(
        platform="junos", validate=_validate, lab=("junos", "leaf-su1-r0"),
        make_lab=lab.JunosLab, management_kept=_management_kept, saved_outputs=_saved,
        fixture_intent=lab.FABRIC,
        telemetry_fixture=("roce-junos-sonic", "leaf-su1-r0", "et-0/0/16:0"),
        alert_timeline=gnmi.ALERTS)
