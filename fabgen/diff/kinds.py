"""Every kind of file fabgen writes, and how `fabgen diff` compares it.

A rendered file's kind is the first rule whose pattern matches its path (`*` is one path
component; `plane<N>/` directories of multi-plane fabrics are ignored). Files no rule names
fall to a generic rule by extension; tests/test_diff_kinds.py fails on any rendered file that
does, so a new output gets its own rule here.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from fabgen.diff.model import Style
from fabgen.diff.sections import Locator, heading_locator, line_locator
from fabgen.diff.tables import CABLES, RAILS, TableSpec

Format = Literal["json", "yaml", "text"]
# How a place in the file is printed: key paths with dots, SONiC's TABLE|key field, NVUE's
# `set interface swp1 link mtu`, section paths, line numbers, row ids.
AtStyle = Literal["dots", "sonic", "nvue", "sections", "lines", "table"]


@dataclass(frozen=True, slots=True)
class Kind:
    name: str
    patterns: tuple[str, ...]
    style: Style
    fmt: Format
    what: str  # what the file is, for the README's table
    at: AtStyle = "dots"
    os: str | None = None  # the platform of the device the file configures
    role: str | None = None  # the role of that device when the path says it (hosts)
    device: bool = False  # the first `*` of the pattern names a device
    table: TableSpec | None = None
    locate: Locator = line_locator
    # sections: "!" or "#" (indented config with that comment mark), "blocks" (ibnetdiscover)
    parser: str = "!"
    generic: bool = False  # a fallback: no rule names this file
    # A device backup (Oxidized, RANCID: the running config) holds this file; when False, a
    # backup that lacks it is no drift (SONiC's golden_config_db.json is read only by
    # db_migrator, and `show runningconfiguration` does not print it).
    backed_up: bool = True

    def matches(self, parts: tuple[str, ...]) -> bool:
        return any(_match(p, parts) for p in self.patterns)

    def device_of(self, path: str) -> str | None:
        if not self.device:
            return None
        parts = _parts(path)
        for pattern in self.patterns:
            pat = pattern.split("/")
            if _match(pattern, parts):
                i = next(i for i, p in enumerate(pat) if "*" in p)
                return parts[i] if pat[i] == "*" else PurePosixPath(parts[i]).stem
        return None


def _parts(path: str) -> tuple[str, ...]:
    return tuple(p for p in path.split("/") if not re.fullmatch(r"plane\d+", p))


def _match(pattern: str, parts: tuple[str, ...]) -> bool:
    pat = pattern.split("/")
    return len(pat) == len(parts) and all(fnmatch.fnmatchcase(x, p)
                                          for x, p in zip(parts, pat, strict=True))


def _k(name: str, patterns: str, style: Style, fmt: Format, what: str, **kw: object) -> Kind:
    return Kind(name, tuple(patterns.split()), style, fmt, what, **kw)  # type: ignore[arg-type]


# In order: the first match wins.
KINDS: tuple[Kind, ...] = (
    _k("manifest", "manifest.json", "keys", "json",
       "the render's manifest: not compared (its hashes restate the files)"),
    _k("intent", "intent.resolved.yaml", "keys", "yaml", "the resolved intent, key by key"),
    _k("report", "report.md", "lines", "text", "the report, line by line under its headings",
       at="lines", locate=heading_locator),
    _k("picture", "report.svg", "lines", "text", "the report's picture, line by line",
       at="lines"),
    _k("cables", "cabling/*.csv", "table", "text",
       "cable tables, cable by cable, matched by both ends: added, removed, moved (one "
       "end kept), changed (another column), renumbered (the same cable under a new id: "
       "relabel it)", at="table", table=CABLES),
    _k("cables-json", "cabling/*.json", "table", "json",
       "the cable tables as JSON: as the CSV, and the switch list key by key",
       at="table", table=CABLES),
    _k("topology-dot", "cabling/topology.dot", "lines", "text",
       "the grouped topology drawing (DOT), line by line", at="lines"),
    _k("rails", "bringup/rails.csv", "table", "text",
       "the rails table, row by row (host, NIC, port)", at="table", table=RAILS),
    _k("ibdm", "bringup/infiniband/ibdm.topo bringup/infiniband/storage/ibdm.topo",
       "sections", "text",
       "the ibdm topology, by switch section", at="sections", parser="#"),
    _k("ibnl", "bringup/infiniband/ibnl/*.ibnl bringup/infiniband/storage/ibnl/*.ibnl",
       "lines", "text",
       "IBNL system definitions, line by line", at="lines"),
    _k("node-name-map", "bringup/infiniband/node-name-map infiniband/node-name-map "
       "infiniband/*/ib-node-name-map infiniband/storage/*/ib-node-name-map",
       "lines", "text", "InfiniBand node-name maps, line by line", at="lines"),
    _k("sonic", "sonic/*/config_db.json", "keys", "json",
       "SONiC config_db.json by table, key and field "
       "(`WRED_PROFILE|ROCE_LOSSLESS.green_min_threshold`)", at="sonic", os="sonic", device=True),
    _k("sonic-golden", "sonic/*/golden_config_db.json", "keys", "json",
       "SONiC golden_config_db.json (what db_migrator keeps) by table, key and field",
       at="sonic", os="sonic", device=True, backed_up=False),
    _k("frr", "sonic/*/frr.conf sonic/*/frr.expected.conf", "sections", "text",
       "FRR config by section (`router bgp 65000 > bgp router-id`)",
       at="sections", os="sonic", device=True),
    _k("eos", "eos/*.cfg", "sections", "text",
       "Arista EOS config by section (`interface Ethernet1/1 > uc-tx-queue 3`)",
       at="sections", os="eos", device=True),
    _k("nvue", "nvue/*/startup.yaml", "keys", "yaml",
       "NVUE startup.yaml by `nv set` path (`set interface swp1s0 link mtu`)",
       at="nvue", os="nvue", device=True),
    _k("host-env", "hosts/*.env", "lines", "text", "each host's env file, line by line",
       at="lines", role="host", device=True),
    _k("host-scripts", "hosts/*.sh hosts/*.service", "lines", "text",
       "host scripts and the systemd unit, line by line", at="lines"),
    _k("nccl", "nccl/*.env nccl/*.conf", "lines", "text", "NCCL env and conf, line by line",
       at="lines"),
    _k("opensm", "infiniband/*/opensm.conf", "lines", "text",
       "each subnet manager's opensm.conf, line by line", at="lines",
       role="subnet manager", device=True),
    _k("storage-opensm", "infiniband/storage/*/opensm.conf", "lines", "text",
       "the storage subnet's opensm.conf, line by line", at="lines"),
    _k("subnet-manager", "infiniband/*.conf infiniband/*.cfg infiniband/*.txt "
       "infiniband/*.sh infiniband/*/*.txt infiniband/*/*.conf infiniband/*/*.cfg "
       "infiniband/*/*.sh infiniband/*/*.cli infiniband/storage/*/*.conf "
       "infiniband/storage/*/*.cfg infiniband/storage/*/*.txt infiniband/storage/*/*.sh "
       "infiniband/storage/*/*.cli", "lines", "text",
       "partitions, QoS policy, SHARP, GUID lists, UFM setup (script or appliance CLI), "
       "routing check: line by line",
       at="lines"),
    _k("ibnetdiscover", "infiniband/topology.ibnet infiniband/storage/topology.ibnet",
       "sections", "text",
       "the planned fabric in ibnetdiscover format, by node section", at="sections",
       parser="blocks"),
    _k("k8s-yaml", "scheduler/kubernetes/*.yaml", "keys", "yaml",
       "Kubernetes objects, matched by kind and name, key by key"),
    _k("k8s-json", "scheduler/kubernetes/*.json", "keys", "json", "node labels, key by key"),
    _k("k8s-script", "scheduler/kubernetes/*.sh", "lines", "text",
       "the node-labelling script, line by line", at="lines"),
    _k("slurm-conf", "scheduler/slurm/*.conf", "lines", "text",
       "Slurm topology.conf, line by line", at="lines"),
    _k("slurm-yaml", "scheduler/slurm/*.yaml", "keys", "yaml", "Slurm topology.yaml, key by key"),
    _k("telemetry", "telemetry/*.yaml telemetry/*.yml", "keys", "yaml",
       "gnmic, collector, snmp_exporter, scrape and alert rules, key by key"),
    _k("telemetry-text", "telemetry/*.sysconfig telemetry/*.star", "lines", "text",
       "exporter settings and processors, line by line", at="lines"),
    _k("verify-script", "verify/*.sh", "lines", "text", "collection scripts, line by line",
       at="lines"),
    _k("anta", "verify/*.yaml", "keys", "yaml", "the ANTA catalog and inventory, key by key"),
)

GENERIC: dict[Format, Kind] = {
    "json": _k("other-json", "*", "keys", "json", "any other JSON, key by key", generic=True),
    "yaml": _k("other-yaml", "*", "keys", "yaml", "any other YAML, key by key", generic=True),
    "text": _k("other-text", "*", "lines", "text", "any other text, line by line", at="lines",
               generic=True),
}
BY_NAME = {k.name: k for k in (*KINDS, *GENERIC.values())}


def fmt_of(path: str) -> Format:
    suffix = PurePosixPath(path).suffix
    return "json" if suffix == ".json" else "yaml" if suffix in (".yaml", ".yml") else "text"


def kind_of(path: str) -> Kind:
    parts = _parts(path)
    for kind in KINDS:
        if kind.matches(parts):
            return kind
    return GENERIC[fmt_of(path)]


def table() -> str:
    """The README's table of what `fabgen diff` compares how (between its diff-kinds
    markers; tests/test_diff_kinds.py keeps the two equal)."""
    rows = ["| files | compared |", "|---|---|"]
    for kind in (*KINDS, GENERIC["text"]):
        files = ", ".join(f"`{p}`" for p in kind.patterns) if not kind.generic else "others"
        rows.append(f"| {files} | {kind.what.replace('|', chr(92) + '|')} |")
    return "\n".join(rows) + "\n"
