"""Candidates: replace what fabgen owns, keep what the device owns.

A render has no management section (management interface and VRF, users, AAA, NTP, syslog...):
pushing it as a whole-config replace would delete those and cut the session off. So every push
builds its candidate from the device's running config, with the parts fabgen owns replaced by
the render and every other part carried over unchanged:

- SONiC config_db.json: fabgen owns exactly the top-level tables the render has, except
  DEVICE_METADATA, where it owns only the fields it renders minus `mac`, `platform`, `hwsku`
  (the device's own), and the tables in SONIC_MERGED (FLEX_COUNTER_TABLE), where it owns only
  the rows and fields it renders; every other table (MGMT_*, FEATURE, CRM, AAA, NTP, GNMI,
  ...) is kept.
- NVUE startup.yaml: a deep merge of the rendered `set` tree into the running one, replacing
  whole subtrees only at the keys in NVUE_OWNED (each rendered interface, `qos`, `router bgp`,
  `vrf <name> router bgp`, `system hostname`); other rendered leaves are set, nothing else is
  removed (eth0, vrf mgmt, system aaa/ntp/ssh, service ... stay).
- EOS CLI: a list of top-level sections. fabgen owns each section it renders, by its header
  line, and for the kinds in EOS_KINDS every section of that kind (a running `router bgp 65000`
  goes when the render has `router bgp 65101`), and the kinds in EOS_ALWAYS (BFD, load
  balancing) even when the render has none; every other running section (`interface
  Management1`, `username`, `aaa`, `vrf instance MGMT`, ...) is carried into the candidate.
  NVUE_ALWAYS does the same for NVUE paths. (SONiC's BGP is in config_db.json, whose FRR
  config the switch renders itself: fabgen pushes no frr.conf.)

`management()` then extracts what the session depends on (the management interface, or the
interface carrying the address fabgen connected to, its VRF and routes, SSH); a candidate that
would remove or change any of it is refused before anything is applied, as a last guard.
All functions here are pure: text or parsed data in, text or data out.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

# --- CLI configs (EOS; FRR's section syntax too) -----------------------------------------------

# Kinds of top-level sections fabgen owns as a class when it renders one of that kind.
EOS_KINDS = ("hostname", "service routing protocols model", "router bgp", "qos map",
             "priority-flow-control")
# Kinds fabgen owns even when the render has none: the underlay's optional settings (BFD off,
# hash instead of dynamic load balancing must remove what an earlier push set).
EOS_ALWAYS = ("router bfd", "ip hardware fib load-balance distribution",
              "port-channel load-balance trident udf")
_CLOSERS = ("exit", "exit-vrf", "exit-address-family")  # FRR writes `exit` at column 0


def cli_sections(text: str) -> list[list[str]]:
    """Top-level sections of an EOS or FRR config: a header line (not indented) and the
    indented lines under it. Column-0 `!` comments, `end` and blank lines are dropped; FRR's
    column-0 `exit` closing a block stays with that block."""
    sections: list[list[str]] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip():
            continue
        if line[0] in " \t" or (line in _CLOSERS and sections):
            if sections:
                sections[-1].append(line)
            continue
        if line.startswith("!") or line == "end":
            continue
        sections.append([line])
    return sections


def _plain(header: str) -> str:
    """`no ip routing` and `ip routing` are the same section."""
    return header[3:] if header.startswith("no ") else header


def _kind(header: str, kinds: Iterable[str]) -> str | None:
    plain = _plain(header)
    return next((k for k in kinds if plain == k or plain.startswith(k + " ")), None)


def carried_sections(running: str, render: str, kinds: tuple[str, ...],
                     always: tuple[str, ...] = ()) -> list[list[str]]:
    """The running config's sections that fabgen does not own, in running order."""
    rendered = cli_sections(render)
    headers = {_plain(s[0]) for s in rendered}
    owned_kinds = {k for s in rendered if (k := _kind(s[0], kinds)) is not None}
    return [s for s in cli_sections(running)
            if _plain(s[0]) not in headers and _kind(s[0], kinds) not in owned_kinds
            and _kind(s[0], always) is None]


def _render_body(render: str) -> list[str]:
    lines = render.splitlines()
    while lines and lines[-1].strip() in ("", "end"):
        lines.pop()
    return lines


def eos_candidate(running: str, render: str) -> str:
    """The render verbatim (without its `end`), then every running section fabgen does not
    own, then `end`."""
    out = _render_body(render)
    for section in carried_sections(running, render, EOS_KINDS, EOS_ALWAYS):
        out += [*section, "!"]
    return "\n".join([*out, "end"]) + "\n"


def bgp_neighbours(text: str) -> list[str]:
    """The peers of the (first) `router bgp` section of an EOS or FRR config, in order: names
    with `remote-as`, `interface` or a peer-group membership; peer-group definitions are not
    peers. Only the section's first level (not `vrf X` or address-family sub-blocks)."""
    for section in cli_sections(text):
        if not section[0].startswith("router bgp "):
            continue
        children = [x for x in section[1:] if x[:1] in (" ", "\t")]  # not FRR's `exit`
        depth = min((len(x) - len(x.lstrip()) for x in children), default=0)
        groups: set[str] = set()
        peers: list[str] = []
        for raw in children:
            if len(raw) - len(raw.lstrip()) != depth:
                continue
            w = raw.split()
            if len(w) < 3 or w[0] != "neighbor":
                continue
            if w[2:] in (["peer-group"], ["peer", "group"]):
                groups.add(w[1])
            elif w[2] in ("remote-as", "interface", "peer-group") or w[2:4] == ["peer", "group"]:
                peers.append(w[1])
        return [p for p in dict.fromkeys(peers) if p not in groups]
    return []


def eos_management(text: str, host: str | None = None) -> dict[str, Any]:
    """What an EOS session depends on: `interface Management*` and any interface with the
    address fabgen connected to (addresses, VRF, shutdown), the VRFs they are in and those
    VRFs' static routes, `management ssh`, and the local users."""
    sections = cli_sections(text)
    facts: dict[str, Any] = {}
    vrfs: set[str] = set()
    for s in sections:
        body = [x.strip() for x in s[1:]]
        header = s[0]
        if not header.startswith("interface "):
            continue
        uses_host = host is not None and any(x.startswith(f"ip address {host}/") for x in body)
        if header.startswith("interface Management") or uses_host:
            facts[header] = tuple(x for x in body if x.split()[0] in ("ip", "ipv6", "vrf")
                                  or x in ("shutdown", "no shutdown"))
            vrfs |= {x.split()[1] for x in body if x.startswith("vrf ") and len(x.split()) > 1}
    for s in sections:
        header = s[0]
        if (header in {f"vrf instance {v}" for v in vrfs}
                or any(header.startswith(f"ip route vrf {v} ") for v in vrfs)
                or header.startswith(("management ssh", "username "))):
            facts[header] = tuple(x.strip() for x in s[1:])
    return facts


# --- SONiC config_db.json ----------------------------------------------------------------------

DEVICE_OWN_METADATA = ("mac", "platform", "hwsku")  # DEVICE_METADATA fields the device owns
# Tables merged row by row and field by field instead of replaced: a counter group the image
# enables and the render does not name (a newer release's default, an operator's
# `counterpoll ... enable`, a POLL_INTERVAL tuned on the switch) stays as it is. Replacing
# FLEX_COUNTER_TABLE would switch those groups off at the next reboot (sonic-swss
# flexcounterorch polls only the groups present in CONFIG_DB).
# CoPP: the switch's own groups and traps (its image's copp_cfg.json is the base) stay beside
# the underlay's rows.
SONIC_MERGED = ("COPP_GROUP", "COPP_TRAP", "FLEX_COUNTER_TABLE")
SONIC_MGMT_TABLES = ("MGMT_INTERFACE", "MGMT_PORT", "MGMT_VRF_CONFIG")


def _rendered_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    return {f: v for f, v in fields.items() if f not in DEVICE_OWN_METADATA}


def sonic_candidate(running: Mapping[str, Any], render: Mapping[str, Any],
                    change_hwsku: bool = False) -> dict[str, Any]:
    """Every running table the render does not have, unchanged; the rendered tables whole;
    DEVICE_METADATA merged field by field (the device keeps mac, platform, hwsku; with
    `change_hwsku` the render's hwsku is written), the tables of SONIC_MERGED row by row and
    field by field."""
    out = {t: copy.deepcopy(rows) for t, rows in running.items() if t not in render}
    for table, rows in render.items():
        if table == "DEVICE_METADATA" or table in SONIC_MERGED:
            keep = _rendered_fields if table == "DEVICE_METADATA" else dict
            merged = copy.deepcopy(dict(running.get(table) or {}))
            for key, fields in rows.items():
                merged.setdefault(key, {}).update(copy.deepcopy(keep(fields)))
            out[table] = merged
        else:
            out[table] = copy.deepcopy(rows)
    if change_hwsku:
        sku = ((render.get("DEVICE_METADATA") or {}).get("localhost") or {}).get("hwsku")
        if sku:
            out["DEVICE_METADATA"].setdefault("localhost", {})["hwsku"] = sku
    return dict(sorted(out.items()))


def hwsku_mismatch(running: Mapping[str, Any], render: Mapping[str, Any]) -> tuple[str, str] | None:
    """(running hwsku, rendered hwsku) when they differ, else None. The render's PORT (lanes,
    aliases, speeds) and buffer tables are its SKU's: on another SKU they name ports and
    buffer pools that SKU does not have (a factory SN5600 runs ACS-SN5600, sonic-buildimage
    device/mellanox/x86_64-nvidia_sn5600-r0/default_sku)."""
    def sku(config: Mapping[str, Any]) -> str:
        meta = (config.get("DEVICE_METADATA") or {}).get("localhost") or {}
        return str(meta.get("hwsku") or "")
    have, want = sku(running), sku(render)
    return (have or "none", want) if want and have != want else None


def sonic_owned(config: Mapping[str, Any], render: Mapping[str, Any]) -> dict[str, Any]:
    """The part of `config` (a running config or the render itself) that fabgen owns for this
    render: the rendered tables, and the rendered DEVICE_METADATA fields minus the device's."""
    out: dict[str, Any] = {}
    for table, rows in render.items():
        have = config.get(table) or {}
        if table == "DEVICE_METADATA" or table in SONIC_MERGED:
            owned = _rendered_fields if table == "DEVICE_METADATA" else dict
            out[table] = {key: {f: v for f, v in (have.get(key) or {}).items()
                                if f in owned(fields)}
                          for key, fields in rows.items()}
        else:
            out[table] = have
    return out


def sonic_management(config: Mapping[str, Any], host: str | None = None) -> dict[str, Any]:
    """What a SONiC session depends on: MGMT_INTERFACE, MGMT_PORT, MGMT_VRF_CONFIG, and any
    row keyed by the address fabgen connected to (an in-band session over a loopback)."""
    facts: dict[str, Any] = {}
    for table, rows in config.items():
        if not isinstance(rows, Mapping):
            continue
        for key, fields in rows.items():
            if table in SONIC_MGMT_TABLES or (host is not None and f"|{host}/" in key):
                facts[f"{table}|{key}"] = fields
    return facts


# --- Cumulus NVUE startup.yaml -----------------------------------------------------------------

# Paths (in the `set` tree) whose whole subtree fabgen replaces when it renders them.
NVUE_OWNED: tuple[tuple[str, ...], ...] = (
    ("interface", "*"), ("qos",), ("router", "bgp"), ("vrf", "*", "router", "bgp"),
    ("system", "hostname"), ("router", "adaptive-routing"), ("system", "forwarding", "ecmp-hash"))
# Owned paths removed from the running tree when the render lacks them (adaptive routing that
# an earlier push turned on goes when the fabric is back to hash load balancing).
NVUE_ALWAYS: tuple[tuple[str, ...], ...] = (("router", "adaptive-routing"),)


def _owned_path(path: tuple[str, ...]) -> bool:
    return any(len(p) == len(path) and all(a in ("*", b) for a, b in zip(p, path, strict=True))
               for p in NVUE_OWNED)


def _merge(have: Any, want: Mapping[Any, Any], path: tuple[str, ...]) -> dict[Any, Any]:
    out: dict[Any, Any] = copy.deepcopy(dict(have)) if isinstance(have, Mapping) else {}
    for key, value in want.items():
        where = (*path, str(key))
        if _owned_path(where) or not isinstance(value, Mapping):
            out[key] = copy.deepcopy(value)
        else:
            out[key] = _merge(out.get(key), value, where)
    return out


def nvue_set(ops: Any) -> dict[Any, Any]:
    """The `set` tree of an NVUE config (a list of operations), several `set`s merged."""
    merged: dict[Any, Any] = {}
    for op in ops if isinstance(ops, list) else []:
        if isinstance(op, Mapping) and isinstance(op.get("set"), Mapping):
            merged = _merge(merged, op["set"], ())
    return merged


def nvue_candidate(running: Any, render: Any) -> list[dict[str, Any]]:
    """The running config's `header` (if any) and its `set` tree with the render merged in
    (see NVUE_OWNED). Raises ValueError for a render that is not a list of `set` operations."""
    if not isinstance(render, list) or not all(
            isinstance(op, Mapping) and set(op) <= {"set", "header"} for op in render):
        raise ValueError("the rendered startup.yaml is not a list of `set` operations")
    headers = [dict(op) for op in (running if isinstance(running, list) else [])
               if isinstance(op, Mapping) and "header" in op]
    want = nvue_set(render)
    merged = _merge(nvue_set(running), want, ())
    for path in NVUE_ALWAYS:
        *parents, leaf = path
        have: Any = merged
        wanted: Any = want
        for key in parents:
            have = have.get(key) if isinstance(have, Mapping) else None
            wanted = wanted.get(key) if isinstance(wanted, Mapping) else None
        if isinstance(have, dict) and leaf in have and not (
                isinstance(wanted, Mapping) and leaf in wanted):
            del have[leaf]
    return [*headers, {"set": merged}]


def nvue_neighbours(render: Any) -> list[str]:
    """The BGP neighbours the render configures in VRF default."""
    tree = nvue_set(render)
    bgp = (((tree.get("vrf") or {}).get("default") or {}).get("router") or {}).get("bgp") or {}
    return [str(n) for n in (bgp.get("neighbor") or {})]


def nvue_management(config: Any, host: str | None = None) -> dict[str, Any]:
    """What an NVUE session depends on: eth0 (and any interface with the address fabgen
    connected to): its `ip` subtree (addresses, VRF, gateway) and that VRF; `system ssh*`."""
    tree = nvue_set(config)
    facts: dict[str, Any] = {}
    for name, cfg in (tree.get("interface") or {}).items():
        ip = (cfg.get("ip") or {}) if isinstance(cfg, Mapping) else {}
        addresses = [str(a) for a in (ip.get("address") or {})]
        if str(name) == "eth0" or (host is not None
                                   and any(a.startswith(f"{host}/") for a in addresses)):
            facts[f"interface {name} ip"] = ip
            vrf = ip.get("vrf")
            if vrf:
                facts[f"vrf {vrf}"] = (tree.get("vrf") or {}).get(vrf)
    for key, value in (tree.get("system") or {}).items():
        if str(key).startswith("ssh"):
            facts[f"system {key}"] = value
    return facts


# --- the guard ----------------------------------------------------------------------------------

def lost_management(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """Management facts of the running config that the candidate removes or changes, by name
    (a `username` line shows only the user, never its secret)."""
    lost = [key for key, value in before.items() if after.get(key) != value]
    return [" ".join(k.split()[:2]) if k.startswith("username ") else k for k in lost]
