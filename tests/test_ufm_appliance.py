"""The UFM Enterprise Appliance's CLI file: every command line is one the manuals print, in the
order the appliance needs (UFM stopped while the settings that need it change), and the settings
the CLI has no command for are said, not invented.

SYNTAX holds each command as NVIDIA's manual prints its syntax, with the manual: `{a | b}` one of,
`[a | b]` optionally one of, `<...>` an argument of the kind named in ARGUMENTS.
"""

from __future__ import annotations

import ipaddress
import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from fabgen.intent import load
from fabgen.intent.models import Intent
from fabgen.targets import sm_bringup
from fabgen.targets.base import RenderContext
from fabgen.targets.ibnetdiscover import guid_plan, render_topology
from fabgen.topology.build import build

try:  # pytest puts tests/ on sys.path while it has no __init__.py, the repo root once it has
    import opensm_run as r
except ImportError:
    from tests import opensm_run as r  # type: ignore[no-redef]

_UM = "UFM Enterprise Appliance Software User Manual"
_SDN = "UFM-SDN Appliance Command Reference Guide"
SYNTAX = {
    "ufm start": f"{_UM} v1.4.1, UFM Commands",
    "no ufm start": f"{_UM} v1.4.1, UFM Commands",
    "show ufm status": f"{_UM} v1.4.0, UFM Commands",
    "interface {eno8303 | eno8403 | eno12399np0 | eno12409np1 | ib0 | ib1 | ib2 | ib3}":
        f"{_UM} v1.3.1-v1.4.3, System Management",
    "ip address <IP address> <netmask>": f"{_UM} v1.3.1, System Management (config interface)",
    "show interfaces [eno8303 | eno8403 | eno12399np0 | eno12409np1 | ib0 | ib1 | ib2 | ib3]":
        f"{_UM} v1.10.4, System Management",
    "ib sm sharp enable": f"{_SDN} v4.10.1, SHARP Configuration in OpenSM",
    "ib sharp enable": f"{_SDN} v4.9.0-v4.18.3, SHARP Aggregation Manager",
    "ib sharp smx-protocol {sockets | ucx}": f"{_SDN} v4.9.0-v4.18.3, SHARP Aggregation Manager",
    "ib sharp allocation enable": f"{_SDN} v4.9.0-v4.18.3, SHARP Aggregation Manager",
    "ib sharp job-pkey-on-tree enable": f"{_SDN} v4.9.0-v4.18.3, SHARP Aggregation Manager",
    "show ib sharp": f"{_SDN} v4.9.0, SHARP Aggregation Manager",
    "ib partition management defmember <type>": f"{_SDN} v4.10.0-v4.18.3, Partition",
    "show ib partition": f"{_SDN} v4.10.0, Partition",
}
ARGUMENTS = {
    "IP address": r"(?:\d{1,3}\.){3}\d{1,3}",
    "netmask": r"(?:\d{1,3}\.){3}\d{1,3}",
    "type": r"(?:full|limited|both)",  # "full - full membership, limited - ..., both - ..."
}


def _pattern(syntax: str) -> re.Pattern[str]:
    out = re.escape(syntax)
    out = re.sub(r"\\\{(.*?)\\\}", lambda m: "(?:" + m.group(1).replace(r"\ \|\ ", "|") + ")",
                 out)
    out = re.sub(r"\\ \\\[(.*?)\\\]",
                 lambda m: r"(?:\ (?:" + m.group(1).replace(r"\ \|\ ", "|") + "))?", out)
    out = re.sub(r"<(.*?)>", lambda m: ARGUMENTS[m.group(1).replace("\\ ", " ")], out)
    return re.compile(out + "$")


PATTERNS = {syntax: _pattern(syntax) for syntax in SYNTAX}


def _commands(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def _blocks(text: str) -> dict[str, list[str]]:
    blocks: dict[str, list[str]] = {}
    title = ""
    for line in text.splitlines():
        if line.startswith("# ---- "):
            title = line[len("# ---- "):]
            blocks[title] = []
        elif line and not line.startswith("#"):
            blocks[title].append(line)
    return blocks


def _render(**ib: Any) -> dict[str, str]:
    data = load(r.IB_INVENTORY).intent.model_dump(mode="json")
    data["infiniband"].update(ib)
    intent = Intent.model_validate(data)
    return r.render_all(intent, build(intent))


def test_the_syntax_table_reads_the_manuals_way() -> None:
    assert PATTERNS["ib sharp smx-protocol {sockets | ucx}"].match("ib sharp smx-protocol ucx")
    assert not PATTERNS["ib sharp smx-protocol {sockets | ucx}"].match("ib sharp smx-protocol 1")
    assert PATTERNS["ip address <IP address> <netmask>"].match("ip address 10.0.0.1 255.0.0.0")
    show = PATTERNS["show interfaces [eno8303 | eno8403 | eno12399np0 | eno12409np1 | ib0 | ib1 "
                    "| ib2 | ib3]"]
    assert show.match("show interfaces") and show.match("show interfaces ib0")
    assert not show.match("show interfaces ib9")


@pytest.mark.parametrize("ib", [
    {},
    {"sharp_protocol": "sockets"},
    {"sharp": False},
    {"partitions": [{"name": "tenant-a", "pkey": "0x0101", "hosts": ["dgx0*"]}]},
], ids=["sharp", "sockets", "no-sharp", "tenants"])
def test_every_command_is_the_manuals(ib: dict[str, Any], tmp_path: Path) -> None:
    files = _render(**ib)
    for path in ("infiniband/ufm/appliance.cli", "infiniband/storage/ufm/appliance.cli"):
        text = files[path]
        for line in _commands(text):
            assert any(p.match(line) for p in PATTERNS.values()), f"{path}: {line!r}"
        for block, lines in _blocks(text).items():
            for a, b in itertools.pairwise(lines):
                if b.startswith("ip address "):
                    assert a.startswith("interface "), f"{block}: ip address outside interface"
            for line in lines:
                if line.startswith("ip address "):
                    mask = line.split()[3]
                    ipaddress.IPv4Network(f"0.0.0.0/{mask}")  # a contiguous netmask
    assert "ufm/ufm-setup.sh" not in " ".join(files), "the appliance is not edited as files"


def test_the_order_the_appliance_needs() -> None:
    text = _render(partitions=[{"name": "tenant-a", "pkey": "0x0101", "hosts": ["dgx0*"]}],
                   guids_file=None)["infiniband/ufm/appliance.cli"]
    cmds = _commands(text)
    stop, start = cmds.index("no ufm start"), cmds.index("ufm start")
    # "It is not possible to modify the defmember in case OpenSM or UFM are running"; SHARP in
    # OpenSM likewise; the interfaces are addressed with UFM stopped (Bring-up Procedure)
    for needs_stop in ("ib sm sharp enable", "ip address 10.224.0.1 255.255.240.0",
                       "ip address 10.224.0.2 255.255.240.0"):
        assert stop < cmds.index(needs_stop) < start, needs_stop
    # one address per node, in that node's block
    blocks = _blocks(text)
    assert blocks["ufm01: its fabric interface ib0"] == ["interface ib0",
                                                        "ip address 10.224.0.1 255.255.240.0"]
    assert blocks["ufm02: its fabric interface ib0"] == ["interface ib0",
                                                        "ip address 10.224.0.2 255.255.240.0"]
    # without written tenants (no guids_file) no SHARP allocation, no defmember
    assert "ib sharp allocation enable" not in cmds
    assert "ib partition management defmember limited" not in cmds


def test_tenants_on_the_appliance(tmp_path: Path) -> None:
    intent = load(r.IB_INVENTORY).intent
    fabric = build(intent)
    (tmp_path / "fabric.ibnd").write_text(render_topology(fabric, guid_plan(fabric),
                                                          real_guids=True))
    data = intent.model_dump(mode="json")
    data["infiniband"].update(guids_file="fabric.ibnd", partitions=[
        {"name": "tenant-a", "pkey": "0x0101", "hosts": ["dgx0[0-5]*"]}])
    ctx = RenderContext(Intent.model_validate(data), fabric, base_dir=tmp_path)
    files = r.render_all(ctx.intent, ctx.fabric, base_dir=tmp_path)
    cmds = _commands(files["infiniband/ufm/appliance.cli"])
    for want in ("ib sharp allocation enable", "ib sharp job-pkey-on-tree enable",
                 "ib partition management defmember limited"):
        assert cmds.index("no ufm start") < cmds.index(want) < cmds.index("ufm start"), want
    text = files["infiniband/ufm/appliance.cli"]
    assert "ib sm configuration import partition-conf-user-ext <url>" in text
    assert "`ib partition management defmember limited` (ufm/appliance.cli)" in \
        files["infiniband/ufm/partitions.conf.user_ext"]
    report = sm_bringup.bringup_markdown(ctx)
    assert "each host is a limited member of the default partition" in report
    # what the CLI cannot set is said, with its consequence
    assert "the CLI documents no command for them" in report
    assert "SHARP's SL 1 on VL 1 of its own" in report


def test_software_is_said_to_leave_hosts_full_members(tmp_path: Path) -> None:
    intent = load(r.IB_INVENTORY).intent
    fabric = build(intent)
    (tmp_path / "fabric.ibnd").write_text(render_topology(fabric, guid_plan(fabric),
                                                          real_guids=True))
    data = intent.model_dump(mode="json")
    data["infiniband"].update(guids_file="fabric.ibnd", partitions=[
        {"name": "tenant-a", "pkey": "0x0101", "hosts": ["dgx0[0-5]*"]}])
    data["infiniband"]["management"]["ufm"] = "software"
    ctx = RenderContext(Intent.model_validate(data), fabric, base_dir=tmp_path)
    report = sm_bringup.bringup_markdown(ctx)
    assert "each host is a full member of the default partition" in report
    assert "UFM Enterprise software documents no setting to change that" in report
