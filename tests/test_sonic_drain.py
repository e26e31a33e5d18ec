"""Draining a SONiC switch under fabgen's routing design (frrcfgd).

`sudo TSA` does nothing here (it writes BGP_DEVICE_GLOBAL|STATE tsa_enabled, which only bgpcfgd
reads; `fabgen verify` reports the request). What works is sonic-utilities' `config bgp
shutdown all|neighbor <name>`, which writes BGP_NEIGHBOR admin_status, which frrcfgd turns into
`neighbor <ip> shutdown` (frrcfgd.py:1869, and its templates at boot). The model below is
sonic-utilities 691b1bbc config/main.py:700-760 (_is_neighbor_ipaddress,
_get_neighbor_ipaddress_list_by_hostname, _change_bgp_session_status[_by_addr]) over CONFIG_DB
as a dict of `TABLE|key` hashes, with swss-common's ConfigDBConnector semantics (get_entry
joins a key, get_table splits keys at `|` into tuples, mod_entry upper-cases the table):
the neighbour is found by its bare address (which the VRF-keyed rows `default|<ip>` never
match) or by an exact `name`. With FABGEN_UPSTREAM the real functions run on the same data.
"""

from __future__ import annotations

import ast
import functools
import json
import types
from collections import Counter
from typing import Any

import pytest

from fabgen.intent.loader import load
from fabgen.render import render
from tests import sonic_upstream
from tests.conftest import ROOT

INVENTORY = "roce-256-sonic"


class ConfigDb:
    """CONFIG_DB as swss-common's ConfigDBConnector shows it (common/configdb.h): hashes
    `TABLE|key`, keys with `|` split into tuples by get_table and joined by get_entry."""

    def __init__(self, config: dict[str, dict[str, dict[str, str]]]) -> None:
        self.hashes = {f"{t}|{k}": dict(v) for t, rows in config.items() for k, v in rows.items()}

    @staticmethod
    def _key(key: Any) -> str:
        return "|".join(key) if isinstance(key, tuple) else str(key)

    def get_entry(self, table: str, key: Any) -> dict[str, str]:
        return dict(self.hashes.get(f"{table}|{self._key(key)}", {}))

    def get_table(self, table: str) -> dict[Any, dict[str, str]]:
        out: dict[Any, dict[str, str]] = {}
        for name, fields in self.hashes.items():
            t, _, key = name.partition("|")
            if t == table:
                out[tuple(key.split("|")) if "|" in key else key] = dict(fields)
        return out

    def mod_entry(self, table: str, key: Any, data: dict[str, str]) -> None:
        self.hashes.setdefault(f"{table.upper()}|{self._key(key)}", {}).update(data)


def model_change_status(db: ConfigDb, ip_or_name: str, status: str) -> bool:
    """config/main.py _change_bgp_session_status."""
    addrs: list[Any] = []
    if db.get_entry("BGP_NEIGHBOR", ip_or_name.lower()):
        addrs.append(ip_or_name.lower())
    else:
        addrs = [a for a, s in db.get_table("BGP_NEIGHBOR").items()
                 if s.get("name") == ip_or_name]
    for addr in addrs:
        db.mod_entry("bgp_neighbor", addr, {"admin_status": status})
    return bool(addrs)


def model_shutdown_all(db: ConfigDb) -> None:
    """`config bgp shutdown all` (main.py `all`): every BGP_NEIGHBOR key."""
    for addr in db.get_table("BGP_NEIGHBOR"):
        db.mod_entry("bgp_neighbor", addr, {"admin_status": "down"})


@functools.cache
def _leaf() -> dict[str, Any]:
    files = render(load(ROOT / "inventories" / f"{INVENTORY}.yaml"), only=["sonic"])
    data: dict[str, Any] = json.loads(files["sonic/leaf-su1-r0/config_db.json"])
    return data


def _down(db: ConfigDb) -> set[str]:
    return {k.split("|", 2)[2] for k, v in db.hashes.items()
            if k.startswith("BGP_NEIGHBOR|") and v.get("admin_status") == "down"}


def test_neighbor_names_are_what_an_operator_types() -> None:
    """BGP_NEIGHBOR name is the peer switch's hostname (minigraph's convention), so `config bgp
    shutdown neighbor spine-01` finds every session to spine-01 and nothing else; the peer
    address alone finds nothing (the rows are keyed `default|<ip>`)."""
    config = _leaf()
    names = Counter(row["name"] for row in config["BGP_NEIGHBOR"].values())
    assert set(names) == {"spine-01", "spine-02", "spine-03", "spine-04"}
    db = ConfigDb(config)
    assert model_change_status(db, "spine-01", "down")
    to_spine1 = {k.split("|")[1] for k, v in config["BGP_NEIGHBOR"].items()
                 if v["name"] == "spine-01"}
    assert _down(db) == to_spine1 and len(to_spine1) == names["spine-01"] == 8
    first = sorted(config["BGP_NEIGHBOR"])[0].split("|")[1]
    assert not model_change_status(ConfigDb(config), first, "down")
    everything = ConfigDb(config)
    model_shutdown_all(everything)
    assert _down(everything) == {k.split("|")[1] for k in config["BGP_NEIGHBOR"]}


def test_frrcfgd_templates_shut_the_drained_sessions() -> None:
    """Cross-check (FABGEN_UPSTREAM): the frr.conf the bgp container renders from a drained
    CONFIG_DB (frrcfgd's templates, as at every container start) shuts those sessions."""
    config = _leaf()
    db = ConfigDb(config)
    model_change_status(db, "spine-02", "down")
    drained = json.loads(json.dumps(config))
    for key, fields in db.hashes.items():
        table, _, row = key.partition("|")
        if table == "BGP_NEIGHBOR":
            drained[table][row] = fields
    frr = sonic_upstream.render_frrcfgd(drained)
    shut = {line.split()[1] for line in frr.splitlines()
            if line.strip().startswith("neighbor ") and line.strip().endswith(" shutdown")}
    assert shut == _down(db) and len(shut) == 8


def _real_functions() -> types.SimpleNamespace:
    """sonic-utilities' own functions, lifted from config/main.py by name (the module imports
    half of SONiC), with click's echo stubbed."""
    path = sonic_upstream.checkout("sonic-net+sonic-utilities") / "config" / "main.py"
    tree = ast.parse(path.read_text())
    wanted = {"_is_neighbor_ipaddress", "_get_all_neighbor_ipaddresses",
              "_get_neighbor_ipaddress_list_by_hostname", "_change_bgp_session_status_by_addr",
              "_change_bgp_session_status"}
    nodes = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in wanted]
    assert {n.name for n in nodes} == wanted
    scope: dict[str, Any] = {"click": types.SimpleNamespace(echo=lambda *_a, **_k: None)}
    exec(compile(ast.Module(body=nodes, type_ignores=[]), str(path), "exec"), scope)
    return types.SimpleNamespace(**{name: scope[name] for name in wanted})


def test_real_sonic_utilities_finds_the_same_sessions() -> None:
    real = _real_functions()
    config = _leaf()
    for target in ("spine-03", sorted(config["BGP_NEIGHBOR"])[0].split("|")[1], "nobody"):
        theirs, ours = ConfigDb(config), ConfigDb(config)
        found = real._change_bgp_session_status(theirs, target, "down", False)
        assert found == model_change_status(ours, target, "down"), target
        assert theirs.hashes == ours.hashes, target
    theirs, ours = ConfigDb(config), ConfigDb(config)
    for addr in real._get_all_neighbor_ipaddresses(theirs):
        real._change_bgp_session_status_by_addr(theirs, addr, "down", False)
    model_shutdown_all(ours)
    assert theirs.hashes == ours.hashes and len(_down(ours)) == 32


@pytest.mark.parametrize("name", ["spine-01"])
def test_frr_description_is_the_peer_name(name: str) -> None:
    files = render(load(ROOT / "inventories" / f"{INVENTORY}.yaml"), only=["sonic"])
    frr = files["sonic/leaf-su1-r0/frr.expected.conf"]
    assert f" description {name}\n" in frr


def test_report_says_how_to_drain() -> None:
    report = render(load(ROOT / "inventories" / f"{INVENTORY}.yaml"), only=["report"])[
        "report.md"]
    assert "`sudo config bgp shutdown all`" in report and "`sudo TSA` drains nothing" in report
