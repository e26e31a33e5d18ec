"""Test helper: check a SONiC config_db.json dict against the SONiC YANG models with yanglint.

config_db is `TABLE -> "k1|k2" -> {field: str}`; libyang wants the RFC 7951 JSON instance of
the sonic-* modules, which differs in three ways this module bridges (as sonic-yang-mgmt does):

- shape: `TABLE` lives in `<module>:<module>/TABLE`; each key becomes an entry of the list whose
  key has as many leaves as the config_db key has `|` parts (INTERFACE: `Ethernet0` goes to
  INTERFACE_LIST, `Ethernet0|10.0.0.0/31` to INTERFACE_IPPREFIX_LIST); QoS maps (`AZURE ->
  {"26": "3"}`) become an outer list keyed by name holding an inner list of key/value pairs;
  DEVICE_METADATA and FLEX_COUNTER_TABLE keys are containers, not list entries.
- types: config_db stores strings; RFC 7951 wants JSON numbers for (u)int8..32, booleans for
  boolean, strings for the rest (uint64 included). Leaf types are read from the compiled
  schema (`yanglint -f info`), so nothing here restates the models.
- tables: which module holds which table is the one thing written down (TABLE_MODULES); a
  table missing from it is reported as unvalidated, which the tests treat as a failure.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from tests.conftest import require_data, require_tool

# The models are not in this repository: a directory with yang/ (sonic-buildimage
# src/sonic-yang-models/yang-models) and ietf/ (ietf-inet-types, ietf-yang-types), named by
# $FABGEN_SONIC_YANG, else ../shared/sonic-yang beside the checkout where that exists.
YANG_ENV = "FABGEN_SONIC_YANG"
YANG_FALLBACK = Path(__file__).resolve().parents[2] / "shared" / "sonic-yang"


def yang_root() -> Path:
    """The models' directory, or a skip (a failure under FABGEN_REQUIRE_TOOLS=1) with the
    reason; call it at the start of a test that runs yanglint."""
    require_tool("yanglint")
    return require_data(YANG_ENV, YANG_FALLBACK, "the SONiC YANG models", ("yang", "ietf"))


def _dirs() -> tuple[Path, Path]:
    root = yang_root()
    return root / "yang", root / "ietf"

# config_db table -> the sonic-yang module (= its top container) that models it.
TABLE_MODULES: dict[str, str] = {
    "BGP_GLOBALS": "sonic-bgp-global",
    "BGP_GLOBALS_AF": "sonic-bgp-global",
    "BGP_GLOBALS_AF_NETWORK": "sonic-bgp-global",
    "BGP_NEIGHBOR": "sonic-bgp-neighbor",
    "BGP_PEER_GROUP": "sonic-bgp-peergroup",
    "BGP_PEER_GROUP_AF": "sonic-bgp-peergroup",
    "BUFFER_PG": "sonic-buffer-pg",
    "BUFFER_POOL": "sonic-buffer-pool",
    "BUFFER_PORT_EGRESS_PROFILE_LIST": "sonic-buffer-port-egress-profile-list",
    "BUFFER_PORT_INGRESS_PROFILE_LIST": "sonic-buffer-port-ingress-profile-list",
    "BUFFER_PROFILE": "sonic-buffer-profile",
    "BUFFER_QUEUE": "sonic-buffer-queue",
    "CABLE_LENGTH": "sonic-cable-length",
    "COPP_GROUP": "sonic-copp",
    "COPP_TRAP": "sonic-copp",
    "DEFAULT_LOSSLESS_BUFFER_PARAMETER": "sonic-default-lossless-buffer-parameter",
    "DEVICE_METADATA": "sonic-device_metadata",
    "DSCP_TO_TC_MAP": "sonic-dscp-tc-map",
    "FLEX_COUNTER_TABLE": "sonic-flex_counter",
    "INTERFACE": "sonic-interface",
    "LOOPBACK_INTERFACE": "sonic-loopback-interface",
    "LOSSLESS_TRAFFIC_PATTERN": "sonic-lossless-traffic-pattern",
    "MAP_PFC_PRIORITY_TO_QUEUE": "sonic-pfc-priority-queue-map",
    "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP": "sonic-pfc-priority-priority-group-map",
    "PFC_WD": "sonic-pfcwd",
    "PORT": "sonic-port",
    "PORT_QOS_MAP": "sonic-port-qos-map",
    "PREFIX": "sonic-routing-policy-sets",
    "PREFIX_SET": "sonic-routing-policy-sets",
    "QUEUE": "sonic-queue",
    "ROUTE_MAP": "sonic-route-map",
    "ROUTE_MAP_SET": "sonic-route-map",
    "SCHEDULER": "sonic-scheduler",
    "SWITCH_HASH": "sonic-hash",
    "TC_TO_PRIORITY_GROUP_MAP": "sonic-tc-priority-group-map",
    "TC_TO_QUEUE_MAP": "sonic-tc-queue-map",
    "WRED_PROFILE": "sonic-wred-profile",
}

_NUMBER_TYPES = {"int8", "int16", "int32", "uint8", "uint16", "uint32"}


class Untranslatable(ValueError):
    """A config_db entry has no place in the models (no module, or no list for its key)."""


# --- a small reader for `yanglint -f info` output -------------------------------------------

@dataclass
class Stmt:
    keyword: str
    arg: str
    subs: list[Stmt] = field(default_factory=list)

    def find(self, keyword: str) -> list[Stmt]:
        return [s for s in self.subs if s.keyword == keyword]

    def first(self, keyword: str) -> Stmt | None:
        found = self.find(keyword)
        return found[0] if found else None


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'|[{};]|[^\s{};"\']+', re.S)


def _parse(text: str) -> list[Stmt]:
    """YANG statement syntax: `keyword [argument] ;` or `keyword [argument] { ... }`."""
    stack: list[list[Stmt]] = [[]]
    owners: list[Stmt] = []
    words: list[str] = []
    for tok in _TOKEN.findall(text):
        if tok in (";", "{"):
            keyword, arg = (words[0], " ".join(w.strip("\"'") for w in words[1:])) if words \
                else ("", "")
            stmt = Stmt(keyword, arg)
            stack[-1].append(stmt)
            words = []
            if tok == "{":
                owners.append(stmt)
                stack.append(stmt.subs)
        elif tok == "}":
            stack.pop()
            owners.pop()
        else:
            words.append(tok)
    return stack[0]


@dataclass(frozen=True)
class LeafType:
    """How a leaf's config_db string is written in RFC 7951 JSON."""

    kinds: tuple[str, ...]  # "number" | "bool" | "string"; several for a union
    leaf_list: bool = False


def _kinds(type_stmt: Stmt) -> tuple[str, ...]:
    name = type_stmt.arg.split(":")[-1]
    if name == "union":
        return tuple(k for member in type_stmt.find("type") for k in _kinds(member))
    if name == "leafref":
        target = type_stmt.first("type")
        return _kinds(target) if target is not None else ("string",)
    if name in _NUMBER_TYPES:
        return ("number",)
    if name == "boolean":
        return ("bool",)
    return ("string",)  # string, enumeration, uint64/int64/decimal64 (RFC 7951 §6.1), ...


@dataclass(frozen=True)
class ListShape:
    name: str
    keys: tuple[str, ...]
    leaves: dict[str, LeafType]
    inner: ListShape | None  # a QoS-map style list nested in an entry


@dataclass(frozen=True)
class TableShape:
    module: str
    lists: tuple[ListShape, ...]
    containers: dict[str, dict[str, LeafType]]  # DEVICE_METADATA/localhost, FLEX_COUNTER...


def _leaves(node: Stmt) -> dict[str, LeafType]:
    out: dict[str, LeafType] = {}
    for sub in node.subs:
        if sub.keyword in ("leaf", "leaf-list"):
            type_stmt = sub.first("type")
            kinds = _kinds(type_stmt) if type_stmt is not None else ("string",)
            out[sub.arg] = LeafType(kinds, sub.keyword == "leaf-list")
    return out


def _list_shape(node: Stmt, source: Stmt | None) -> ListShape:
    # Keys come from the module as written: libyang 2.1's `info` printer joins a multi-leaf
    # key without a separator ("nameip-prefix"); its `yang` printer keeps "name ip-prefix".
    key = source.first("key") if source is not None else None
    inner = node.first("list")
    inner_source = source.first("list") if source is not None else None
    return ListShape(node.arg, tuple(key.arg.split()) if key is not None else (),
                     _leaves(node),
                     _list_shape(inner, inner_source) if inner is not None else None)


def _run(*args: str) -> str:
    exe = yanglint()
    if exe is None:
        raise RuntimeError("yanglint is not installed")
    yang_dir, ietf_dir = _dirs()
    proc = subprocess.run([exe, "-p", str(yang_dir), "-p", str(ietf_dir), *args],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not proc.stdout:
        raise RuntimeError(f"yanglint {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def yanglint() -> str | None:
    return shutil.which("yanglint")


@cache
def table_shape(table: str) -> TableShape:
    """The lists/containers of one table, read from the compiled module by yanglint."""
    module = TABLE_MODULES.get(table)
    if module is None:
        raise Untranslatable(f"table {table} has no YANG model in the sonic-yang models "
                             "(keep unmodelled tables out of config_db)")
    path = str(_dirs()[0] / f"{module}.yang")
    compiled = _parse(_run("-f", "info", "-P", f"/{module}:{module}/{table}", path))[0]
    written = _parse(_run("-f", "yang", path))[0]
    top = next(s for s in written.find("container") if s.arg == module)
    container = next(s for s in top.find("container") if s.arg == table)
    sources = {s.arg: s for s in container.find("list")}
    return TableShape(
        module,
        tuple(_list_shape(s, sources.get(s.arg)) for s in compiled.find("list")),
        {s.arg: _leaves(s) for s in compiled.find("container")},
    )


# --- config_db -> instance ------------------------------------------------------------------

def _value(kind: LeafType, text: str | list[str]) -> Any:
    def one(item: str) -> Any:
        if "number" in kind.kinds and re.fullmatch(r"-?\d+", item):
            return int(item)
        if "bool" in kind.kinds and item in ("true", "false") and "string" not in kind.kinds:
            return item == "true"
        # Anything else is passed as a string: libyang then rejects it with its own message.
        return item
    if isinstance(text, list):  # config_db.json writes a leaf-list as a JSON array
        return [one(i) for i in text] if kind.leaf_list else text
    if kind.leaf_list:
        return [one(i) for i in text.split(",")] if text else []
    return one(text)


def _fields(leaves: dict[str, LeafType], fields: dict[str, Any]) -> dict[str, Any]:
    # Unknown fields are kept as strings so that libyang reports them (strict parsing).
    plain = LeafType(("string",))
    return {name: _value(leaves.get(name, plain), value) for name, value in fields.items()}


def _entry(table: str, shape: TableShape, key: str, fields: dict[str, Any]) -> tuple[str, Any]:
    parts = key.split("|")
    matching = [lst for lst in shape.lists if len(lst.keys) == len(parts)]
    if not matching:
        counts = sorted({len(lst.keys) for lst in shape.lists})
        raise Untranslatable(f"{table}|{key}: no list of {shape.module} takes a "
                             f"{len(parts)}-part key (lists take {counts})")
    lst = matching[0]
    entry: dict[str, Any] = {}
    for name, part in zip(lst.keys, parts, strict=True):
        entry[name] = _value(lst.leaves.get(name, LeafType(("string",))), part)
    if lst.inner is not None:
        inner = lst.inner
        (key_leaf,) = inner.keys
        value_leaf = next(n for n in inner.leaves if n != key_leaf)
        entry[inner.name] = [
            {key_leaf: _value(inner.leaves[key_leaf], k),
             value_leaf: _value(inner.leaves[value_leaf], v)}
            for k, v in fields.items()
        ]
    else:
        entry.update(_fields(lst.leaves, fields))
    return lst.name, entry


def to_instance(config: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """The RFC 7951 JSON instance of a config_db dict; raises Untranslatable."""
    instance: dict[str, Any] = {}
    for table, rows in config.items():
        shape = table_shape(table)
        body: dict[str, Any] = {}
        if shape.containers and not shape.lists:
            for key, fields in rows.items():
                if key not in shape.containers:
                    raise Untranslatable(f"{table}|{key}: {shape.module} has no container "
                                         f"{key} (has {sorted(shape.containers)})")
                body[key] = _fields(shape.containers[key], fields)
        else:
            for key, fields in rows.items():
                list_name, entry = _entry(table, shape, key, fields)
                body.setdefault(list_name, []).append(entry)
        top = instance.setdefault(f"{shape.module}:{shape.module}", {})
        top[table] = body
    return instance


@dataclass(frozen=True)
class Result:
    ok: bool
    stderr: str


def validate(config: dict[str, dict[str, dict[str, Any]]]) -> Result:
    """Translate and run yanglint on one config_db dict: (ok, yanglint's or our message)."""
    try:
        instance = to_instance(config)
    except Untranslatable as exc:
        return Result(False, f"untranslatable: {exc}")
    exe = yanglint()
    if exe is None:
        raise RuntimeError("yanglint is not installed")
    modules = sorted({table_shape(t).module for t in config})
    yang_dir, ietf_dir = _dirs()
    with tempfile.TemporaryDirectory(prefix="fabgen-yang-") as tmp:
        path = Path(tmp) / "config_db.instance.json"
        path.write_text(json.dumps(instance, indent=1), encoding="utf-8")
        # -i: implement the modules ours import, so leafrefs and `when`/`must` paths into
        # them (PORT, DEVICE_METADATA, ...) resolve instead of failing as "non-implemented".
        proc = subprocess.run(
            [exe, "-i", "-p", str(yang_dir), "-p", str(ietf_dir), "-t", "config",
             *(str(yang_dir / f"{m}.yang") for m in modules), str(path)],
            capture_output=True, text=True, check=False)
    return Result(proc.returncode == 0, proc.stderr)
