"""Test helper: run SONiC's own code from fetched checkouts, for the cross-checks.

FABGEN_UPSTREAM names a directory holding checkouts named owner+repo (sonic-net+sonic-buildimage,
sonic-net+sonic-utilities, sonic-net+sonic-swss-common). CI has no network to fetch them, so a
test that needs one skips with a reason naming the variable (FABGEN_REQUIRE_TOOLS does not force
these). Nothing from the checkouts is copied into this repository.

What is real and what is stubbed:
- sonic-cfggen's Jinja environment and filters (sonic-config-engine/sonic-cfggen, loaded as a
  module; the imports only its other commands use are stubbed) render frrcfgd's templates.
- swsscommon is a C++ library (SWIG); only its Redis side is replaced here, by a dict
  (`_NativeDb`, following sonic-swss-common common/configdb.cpp: set_entry deletes the fields
  the new entry lacks, mod_entry merges, an empty entry deletes the key). The Python
  ConfigDBConnector on top of it (typed_to_raw, "NULL" placeholders, "@" lists, key
  serialisation) is sonic-swss-common's own %pythoncode from common/configdb.h, executed as is.
- db_migrator.py, mellanox_buffer_migrator.py (sonic-utilities scripts/), utilities_common,
  sonic_py_common and minigraph.py (sonic-buildimage) are imported from the checkouts unchanged;
  sonic_py_common.device_info's platform and version readers, which read files of a switch's
  root filesystem, are given the switch's values.
"""

from __future__ import annotations

import copy
import fnmatch
import importlib.machinery
import importlib.util
import os
import re
import sys
import tempfile
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

UPSTREAM_ENV = "FABGEN_UPSTREAM"


def checkout(name: str) -> Path:
    """The checkout `owner+repo` under $FABGEN_UPSTREAM, or a skip naming the variable."""
    root = os.environ.get(UPSTREAM_ENV)
    if not root:
        pytest.skip(f"{UPSTREAM_ENV} is not set (a directory with fetched {name})")
    path = Path(root) / name
    if not path.is_dir():
        pytest.skip(f"{UPSTREAM_ENV}={root} has no {name} checkout")
    return path


def buildimage() -> Path:
    return checkout("sonic-net+sonic-buildimage")


# --- frrcfgd's templates through sonic-cfggen ---------------------------------------------

def _stub(name: str, **attrs: Any) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    return module


def _nothing(*_args: Any, **_kwargs: Any) -> None:
    return None


def load_cfggen() -> types.ModuleType:
    """sonic-cfggen as a module: its jinja environment (_get_jinja2_env) and filters are used as
    written; modules only its minigraph/DB commands import are stubs that are never called."""
    path = buildimage() / "src" / "sonic-config-engine" / "sonic-cfggen"
    stubs = {
        "config_samples": _stub("config_samples", generate_sample_config=_nothing,
                                get_available_config=_nothing),
        "minigraph": _stub("minigraph", minigraph_encoder=None, parse_device_desc_xml=_nothing,
                           parse_asic_sub_role=_nothing, parse_asic_switch_type=_nothing,
                           parse_hostname=_nothing),
        "minigraph_ext": _stub("minigraph_ext", parse_xml=_nothing),
        "portconfig": _stub("portconfig", get_port_config=_nothing, get_breakout_mode=_nothing),
        "asic_sensors_config": _stub("asic_sensors_config", get_asic_sensors_config=_nothing),
        "sonic_yang_cfg_generator": _stub("sonic_yang_cfg_generator",
                                          SonicYangCfgDbGenerator=object),
    }
    with swsscommon_stub(), _modules(stubs), _modules(_py_common_stubs()):
        loader = importlib.machinery.SourceFileLoader("sonic_cfggen", str(path))
        spec = importlib.util.spec_from_loader("sonic_cfggen", loader)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    return module


def _py_common_stubs() -> dict[str, types.ModuleType]:
    multi = _stub("sonic_py_common.multi_asic", get_asic_id_from_name=_nothing,
                  get_asic_device_id=_nothing, is_multi_asic=lambda: False,
                  get_asic_sub_role=_nothing)
    info = _stub("sonic_py_common.device_info", is_smartswitch=lambda: False)
    return {"sonic_py_common": _stub("sonic_py_common", multi_asic=multi, device_info=info),
            "sonic_py_common.multi_asic": multi, "sonic_py_common.device_info": info}


@contextmanager
def _modules(mods: dict[str, types.ModuleType]) -> Iterator[None]:
    saved = {name: sys.modules.get(name) for name in mods}
    sys.modules.update(mods)
    try:
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old


def render_frrcfgd(config_db: dict[str, Any]) -> str:
    """frr.conf as the bgp container renders it in unified mode with frr_mgmt_framework_config:
    frrcfgd's frr.conf.j2 (what gen_frr.conf.j2 includes) with frrcfgd's templates installed flat
    as in /usr/local/sonic/frrcfgd and docker-fpm-frr's as in /usr/share/sonic/templates."""
    cfggen = load_cfggen()
    root = buildimage()
    frrcfgd = root / "src" / "sonic-frr-mgmt-framework" / "templates"
    fpm = root / "dockers" / "docker-fpm-frr" / "frr"
    data = cfggen.FormatConverter.to_deserialized(copy.deepcopy(config_db))
    with tempfile.TemporaryDirectory(prefix="frrcfgd-") as tmp:
        flat = Path(tmp)
        for template in frrcfgd.glob("*/*.j2"):
            (flat / template.name).write_bytes(template.read_bytes())
        env = cfggen._get_jinja2_env([str(flat), str(fpm)])
        return str(env.get_template("frr.conf.j2").render(data))


# --- swsscommon: the Redis side replaced by a dict ----------------------------------------

SEPARATORS = {"CONFIG_DB": "|", "STATE_DB": "|", "APPL_DB": ":", "LOGLEVEL_DB": ":",
              "COUNTERS_DB": ":", "ASIC_DB": ":"}
DATABASES: dict[str, dict[str, dict[str, str]]] = {}  # db name -> redis key -> hash


def reset_databases(config: dict[str, dict[str, dict[str, Any]]] | None = None) -> None:
    """Empty every database; load `config` (a config_db.json dict) into CONFIG_DB the way
    `config reload` writes it (sonic-cfggen -j ... --write-to-db: typed_to_raw per entry)."""
    DATABASES.clear()
    for name in SEPARATORS:
        DATABASES[name] = {}
    for table, rows in (config or {}).items():
        for key, fields in rows.items():
            raw = {}
            for field, value in fields.items():
                if isinstance(value, list):
                    raw[field + "@"] = ",".join(value)
                else:
                    raw[field] = str(value)
            DATABASES["CONFIG_DB"][f"{table}|{key}"] = raw or {"NULL": "NULL"}


def dump_config() -> dict[str, dict[str, dict[str, Any]]]:
    """CONFIG_DB as `config save` writes it (lists for "@" fields, no NULL placeholders)."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for redis_key, raw in DATABASES["CONFIG_DB"].items():
        table, _, key = redis_key.partition("|")
        fields: dict[str, Any] = {}
        for field, value in raw.items():
            if field == "NULL":
                continue
            if field.endswith("@"):
                fields[field[:-1]] = value.split(",")
            else:
                fields[field] = value
        out.setdefault(table, {})[key] = fields
    return out


class _V2Base:
    """SonicV2Connector_Native's raw API over DATABASES (common/sonicv2connector.h)."""

    def __init__(self, use_unix_socket_path: bool = False, namespace: str = "",
                 **_kwargs: Any) -> None:
        self.namespace = namespace
        for name in SEPARATORS:
            setattr(self, name, name)

    def connect(self, db_name: str, retry_on: bool = True) -> None:
        DATABASES.setdefault(db_name, {})

    def close(self, *_args: Any) -> None:
        return None

    def get_db_separator(self, db_name: str) -> str:
        return SEPARATORS[db_name]

    def keys(self, db_name: str, pattern: str = "*", *_args: Any) -> list[str]:
        return [k for k in DATABASES[db_name] if fnmatch.fnmatchcase(k, pattern)]

    def get(self, db_name: str, key: str, field: str, *_args: Any) -> str | None:
        return DATABASES[db_name].get(key, {}).get(field)

    def get_all(self, db_name: str, key: str, *_args: Any) -> dict[str, str]:
        return dict(DATABASES[db_name].get(key, {}))

    def set(self, db_name: str, key: str, field: str, value: Any, *_args: Any) -> int:
        DATABASES[db_name].setdefault(key, {})[field] = str(value)
        return 1

    def hmset(self, db_name: str, key: str, values: dict[str, Any]) -> None:
        DATABASES[db_name].setdefault(key, {}).update({k: str(v) for k, v in values.items()})

    def delete(self, db_name: str, key: str, *_args: Any) -> int:
        return 1 if DATABASES[db_name].pop(key, None) is not None else 0

    def exists(self, db_name: str, key: str) -> bool:
        return key in DATABASES[db_name]

    def delete_all_by_pattern(self, db_name: str, pattern: str) -> None:
        for key in self.keys(db_name, pattern):
            del DATABASES[db_name][key]


class _SonicV2Native(_V2Base):
    """The Python SonicV2Connector (SWIG: a subclass of SonicV2Connector_Native)."""


class _ConfigDbNative(_V2Base):
    """ConfigDBConnector_Native (common/configdb.cpp) over DATABASES."""

    def __init__(self, use_unix_socket_path: bool = False, namespace: str = "",
                 **kwargs: Any) -> None:
        super().__init__(use_unix_socket_path, namespace, **kwargs)
        self._db = "CONFIG_DB"

    def db_connect(self, db_name: str, wait_for_init: bool = False,
                   retry_on: bool = False) -> None:
        self._db = db_name
        self.connect(db_name)

    def connect(self, *args: Any, **_kwargs: Any) -> None:  # type: ignore[override]
        name = args[0] if args and isinstance(args[0], str) else self._db
        DATABASES.setdefault(name, {})

    def getKeySeparator(self) -> str:
        return SEPARATORS[self._db]

    getTableNameSeparator = getKeySeparator

    def getDbName(self) -> str:
        return self._db

    def _hash(self, table: str, key: str) -> str:
        return f"{table.upper()}{SEPARATORS[self._db]}{key}"

    def set_entry(self, table: str, key: str, data: dict[str, str]) -> None:
        name = self._hash(table, key)
        if not data:
            DATABASES[self._db].pop(name, None)
        else:
            DATABASES[self._db][name] = dict(data)  # hmset, then hdel of the fields left out

    def mod_entry(self, table: str, key: str, data: dict[str, str]) -> None:
        name = self._hash(table, key)
        if not data:
            DATABASES[self._db].pop(name, None)
        else:
            DATABASES[self._db].setdefault(name, {}).update(data)

    def get_entry(self, table: str, key: str) -> dict[str, str]:
        return dict(DATABASES[self._db].get(self._hash(table, key), {}))

    def _rows(self, table: str) -> Iterator[tuple[str, str]]:
        prefix = f"{table.upper()}{SEPARATORS[self._db]}"
        for name in list(DATABASES[self._db]):
            if name.startswith(prefix):
                yield name, name[len(prefix):]

    def get_keys(self, table: str, split: bool = True) -> list[str]:
        return [row if split else name for name, row in self._rows(table)]

    def get_table(self, table: str) -> dict[str, dict[str, str]]:
        return {row: dict(DATABASES[self._db][name]) for name, row in self._rows(table)}

    def delete_table(self, table: str) -> None:
        for name, _ in list(self._rows(table)):
            del DATABASES[self._db][name]

    def mod_config(self, data: dict[str, dict[str, dict[str, str]]]) -> None:
        for table, rows in data.items():
            if not rows:
                self.delete_table(table)
                continue
            for key, fields in rows.items():
                self.mod_entry(table, key, fields)

    def get_config(self) -> dict[str, dict[str, dict[str, str]]]:
        out: dict[str, dict[str, dict[str, str]]] = {}
        sep = SEPARATORS[self._db]
        for name, fields in DATABASES[self._db].items():
            table, _, row = name.partition(sep)
            out.setdefault(table, {})[row] = dict(fields)
        return out

    def get_redis_client(self, db_name: str) -> Any:
        raise NotImplementedError("pub/sub is not part of the stub")


def _python_connector() -> dict[str, Any]:
    """sonic-swss-common's own Python ConfigDBConnector (common/configdb.h %pythoncode) on the
    dict-backed natives above."""
    header = (checkout("sonic-net+sonic-swss-common") / "common" / "configdb.h").read_text()
    blocks = re.findall(r"%pythoncode %\{\n(.*?)%\}", header, re.S)
    code = next(b for b in blocks if "class ConfigDBConnector(" in b)
    namespace: dict[str, Any] = {"SonicV2Connector": _SonicV2Native,
                                 "ConfigDBConnector_Native": _ConfigDbNative}
    exec(compile(_dedent(code), "configdb.h:%pythoncode", "exec"), namespace)
    return namespace


def _dedent(code: str) -> str:
    lines = code.splitlines()
    indent = min(len(line) - len(line.lstrip()) for line in lines if line.strip())
    return "\n".join(line[indent:] for line in lines) + "\n"


class _SonicDBConfig:
    @staticmethod
    def isInit() -> bool:
        return True

    @staticmethod
    def isGlobalInit() -> bool:
        return True

    @staticmethod
    def initialize(*_args: Any) -> None:
        return None

    initializeGlobalConfig = initialize


@contextmanager
def swsscommon_stub() -> Iterator[types.ModuleType]:
    """`swsscommon.swsscommon` with the real Python ConfigDBConnector on the dict natives."""
    try:
        ns = _python_connector()
        connector = ns["ConfigDBConnector"]
    except pytest.skip.Exception:
        connector = type("ConfigDBConnector", (_ConfigDbNative,), {})
    inner = _stub("swsscommon.swsscommon", ConfigDBConnector=connector,
                  ConfigDBPipeConnector=connector, SonicV2Connector=_SonicV2Native,
                  SonicDBConfig=_SonicDBConfig)
    outer = _stub("swsscommon", swsscommon=inner)
    with _modules({"swsscommon": outer, "swsscommon.swsscommon": inner}):
        yield inner


# --- sonic-utilities' db_migrator ---------------------------------------------------------

def _path_entries() -> list[str]:
    utilities = checkout("sonic-net+sonic-utilities")
    root = buildimage()
    return [str(utilities / "scripts"), str(utilities),
            str(root / "src" / "sonic-py-common"), str(root / "src" / "sonic-config-engine")]


def run_db_migrator(config: dict[str, Any], *, asic_type: str, platform: str,
                    init_cfg: dict[str, Any] | None = None,
                    golden: dict[str, Any] | None = None,
                    minigraph: Path | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    """Load `config` into CONFIG_DB as `config reload` does, run sonic-utilities'
    `db_migrator.py -o migrate` (DBMigrator(None).migrate(), its main's call) and return
    CONFIG_DB as `config save` would write it.

    The switch's files db_migrator reads are temporary files here: /etc/sonic/init_cfg.json
    (`init_cfg`, the image's defaults), /etc/sonic/golden_config_db.json (`golden`, absent when
    None) and /etc/sonic/minigraph.xml (`minigraph`, absent when None). sonic_py_common's
    platform and version readers return the switch's platform and ASIC vendor."""
    import json

    pytest.importorskip("natsort", reason="sonic-py-common imports natsort (pip install natsort)")
    pytest.importorskip("click", reason="sonic-utilities imports click (pip install click)")
    pytest.importorskip("netifaces", reason="utilities_common imports netifaces")
    added = [p for p in _path_entries() if p not in sys.path]
    sys.path[:0] = added
    names_before = set(sys.modules)
    try:
        with swsscommon_stub(), tempfile.TemporaryDirectory(prefix="db-migrator-") as tmp:
            from sonic_py_common import device_info

            # The switch's root filesystem: /host/machine.conf, sonic_version.yml and
            # /usr/share/sonic/device (here the checkout's device/<vendor>/), its hwsku.
            hwsku = config.get("DEVICE_METADATA", {}).get("localhost", {}).get("hwsku")
            device_info.get_platform_info = lambda *_a, **_k: {  # type: ignore[attr-defined]
                "platform": platform, "asic_type": asic_type}
            device_info.get_sonic_version_info = lambda: {  # type: ignore[attr-defined]
                "asic_type": asic_type}
            device_info.get_platform = lambda *_a, **_k: platform  # type: ignore[attr-defined]
            device_info.get_hwsku = lambda *_a, **_k: hwsku  # type: ignore[attr-defined]
            vendor_dir = next((d.parent for d in (buildimage() / "device").glob(f"*/{platform}")),
                              None)
            if vendor_dir is not None:
                device_info.HOST_DEVICE_PATH = str(vendor_dir)  # type: ignore[attr-defined]
            import db_migrator

            base = Path(tmp)
            (base / "init_cfg.json").write_text(json.dumps(init_cfg or {}))
            db_migrator.INIT_CFG_FILE = str(base / "init_cfg.json")
            db_migrator.GOLDEN_CFG_FILE = str(base / "golden_config_db.json")
            db_migrator.MINIGRAPH_FILE = str(minigraph or base / "minigraph.xml")
            if golden is not None:
                (base / "golden_config_db.json").write_text(json.dumps(golden))
            reset_databases(config)
            db_migrator.DBMigrator(None).migrate()
            return dump_config()
    finally:
        for p in added:
            sys.path.remove(p)
        for name in set(sys.modules) - names_before:
            del sys.modules[name]
