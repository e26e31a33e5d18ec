"""What to push where: switches of the fabric, their management addresses, their rendered files.

The intent has no management addresses, so a hosts file maps switch names to them:

    # switch name: host, host:port, [v6]:port, or {host: ..., port: ...}
    leaf-su1-r0: 10.0.0.11
    leaf-su1-r1: 10.0.0.12:2222
    spine-01: {host: 2001:db8::21, port: 22}

It holds no credentials (see credentials.py), and a key that names no switch of the fabric is
an error, so a typo cannot silently leave a device out.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from ipaddress import ip_address
from pathlib import Path
from typing import Any

from fabgen import user_files
from fabgen.errors import Diagnostic, FabgenError
from fabgen.intent import yaml_tree
from fabgen.intent.yaml_tree import Map
from fabgen.output import MANIFEST
from fabgen.platforms.registry import push as platforms
from fabgen.suggest import close_matches
from fabgen.topology.model import Fabric, Switch

# Where each platform's rendered config lives in a render directory (the targets' layout), and
# the files pushed with it: each platform's push face.
CONFIG_PATHS: dict[str, str] = {p.facts.name: p.config_path for p in platforms.all()}
PUSHABLE = tuple(CONFIG_PATHS)
EXTRA_PATHS: dict[str, dict[str, str]] = {p.facts.name: dict(p.extra_paths)
                                          for p in platforms.all()}


@dataclass(frozen=True, slots=True)
class Address:
    host: str
    port: int = 22

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


@dataclass(frozen=True, slots=True)
class Device:
    """One switch to push: the fabric's facts plus where it is and what goes to it."""

    switch: Switch
    address: Address | None
    config_path: str  # relative to the render directory

    @property
    def name(self) -> str:
        return self.switch.name

    @property
    def platform(self) -> str:
        return self.switch.platform

    @property
    def extra_paths(self) -> dict[str, str]:
        """Other rendered files pushed with the config, by what they are ({"golden": path})."""
        return {k: p.format(name=self.name)
                for k, p in EXTRA_PATHS.get(self.platform, {}).items()}


def parse_address(value: Any) -> Address:
    """`host`, `host:port`, `[v6]:port`, a bare IPv6 address, or {host: ..., port: ...}."""
    if isinstance(value, dict):
        host, port = value.get("host"), value.get("port", 22)
        extra = set(value) - {"host", "port"}
        if extra:
            raise ValueError(f"unknown key(s) {', '.join(sorted(map(str, extra)))} "
                             "(expected host, port)")
        if not isinstance(host, str) or not host:
            raise ValueError("host must be a name or an address")
    elif isinstance(value, str) and value.strip():
        text = value.strip()
        port = 22
        if text.startswith("["):
            host, _, rest = text[1:].partition("]")
            if rest:
                if not rest.startswith(":"):
                    raise ValueError(f"{value!r}: expected [address]:port")
                port = rest[1:]
        elif text.count(":") == 1:
            host, port = text.split(":")
        else:
            host = text
            if ":" in host:
                ip_address(host)  # a bare IPv6 address, or an error
    else:
        raise ValueError(f"expected host, host:port or {{host: ..., port: ...}}, got {value!r}")
    try:
        port_number = int(port)
    except (TypeError, ValueError):
        raise ValueError(f"port {port!r} is not a number") from None
    if not 0 < port_number < 65536:
        raise ValueError(f"port {port_number} is out of range")
    if not host or any(c.isspace() for c in host):
        raise ValueError(f"{host!r} is not a host name or address")
    return Address(host, port_number)


# A hosts file names each switch of the fabric at most once (any other key is an error), so
# its bounds follow the fabric rather than a fixed size: an entry is a switch name, a host of
# at most 253 characters (a DNS name, RFC 1035 2.3.4) and a port, 512 bytes with room for a
# comment; its longest form, `name: {host: h, port: p}`, is 6 values. The floor covers a lab
# of a few switches with a commented header. A hostile file for a small fabric is so refused
# in milliseconds, before ruamel's pure-Python scanner spends seconds on it.
HOSTS_FLOOR_BYTES = 64 * 1024
HOSTS_BYTES_PER_SWITCH = 512
HOSTS_VALUES_PER_SWITCH = 8


def hosts_limits(switches: int) -> yaml_tree.Limits:
    """What a hosts file for a fabric of `switches` switches may be."""
    return yaml_tree.Limits(
        max_bytes=HOSTS_FLOOR_BYTES + HOSTS_BYTES_PER_SWITCH * switches,
        max_depth=4,  # the file's mapping, an entry's {host, port}, and slack for the error
        max_nodes=64 + HOSTS_VALUES_PER_SWITCH * switches,
        max_scalar=1024, max_int_digits=20, what="a hosts file")


def load_hosts(path: Path, fabric: Fabric) -> dict[str, Address]:
    """Read the hosts file; every error of the file at once, with its line and column.

    Read as the intent is (user_files, yaml_tree): bounded in size, nesting and values once
    aliases are expanded, never blocking on a FIFO, every failure one `file:line:col` line.
    """
    shown = str(path)
    limits = hosts_limits(len(fabric.switches))
    text = user_files.read_text(path, what="a hosts file", limit=limits.max_bytes, shown=shown)
    try:
        tree = yaml_tree.parse(text, limits)
    except yaml_tree.YamlInputError as exc:
        raise FabgenError.single(exc.message, file=shown, line=exc.line or None,
                                 col=exc.col or None) from None
    if tree is None:
        tree = Map((1, 1))
    if not isinstance(tree, Map):
        raise FabgenError.single("expected a mapping of switch name to address", file=shown,
                                 line=1, col=1)
    names = {s.name for s in fabric.switches}
    errors: list[Diagnostic] = []
    out: dict[str, Address] = {}
    for key, value in tree.items():
        line, col = tree.key_pos[key]
        name = str(key)
        if name not in names:
            near = close_matches(name, names)
            hint = f"did you mean {', '.join(near)}?" if near else None
            errors.append(Diagnostic(f"{name}: no switch of {fabric.name} has this name",
                                     file=shown, line=line, col=col, hint=hint))
            continue
        try:
            out[name] = parse_address(dict(value) if isinstance(value, Map) else value)
        except ValueError as exc:
            errors.append(Diagnostic(f"{name}: {exc}", file=shown, line=line, col=col))
    if errors:
        raise FabgenError(errors)
    return out


def select(fabric: Fabric, devices: str | None = None, roles: Iterable[str] = (),
           rails: Iterable[int] = ()) -> list[Switch]:
    """Pushable switches matching every given filter, in fabric order.

    `devices` is a glob on the name (several separated by commas); `roles` and `rails` keep
    switches with one of the values (a rail filter keeps only rail leaves).
    """
    globs = [g.strip() for g in (devices or "").split(",") if g.strip()]
    roles, rails = set(roles), set(rails)
    picked = [
        s for s in fabric.switches
        if s.platform in PUSHABLE
        and (not globs or any(fnmatch.fnmatchcase(s.name, g) for g in globs))
        and (not roles or s.role in roles)
        and (not rails or s.rail in rails)
    ]
    if not picked:
        what = [f"--devices {devices!r}" if devices else "",
                f"--role {','.join(sorted(roles))}" if roles else "",
                f"--rail {','.join(map(str, sorted(rails)))}" if rails else ""]
        filters = " ".join(w for w in what if w) or "no filter"
        kinds = sorted({s.platform for s in fabric.switches})
        raise FabgenError.single(
            f"push: {filters} selects no switch of {fabric.name} that fabgen can push "
            f"(platforms here: {', '.join(kinds)}; pushable: {', '.join(PUSHABLE)})")
    return picked


def devices_for(switches: Iterable[Switch], hosts: dict[str, Address]) -> list[Device]:
    return [Device(s, hosts.get(s.name), CONFIG_PATHS[s.platform].format(name=s.name))
            for s in switches]


# The largest file push reads from a render directory. A rendered config is about 3 KB a
# port (golden: a 64-port spine's JSON config is 197 KB), 1.6 MB for a
# 512-port switch; the manifest is about 100 bytes a file, 5.3 MB for the largest render's
# 53,271 files. 64 MiB is far above both, and keeps a planted huge file out of memory.
RENDERED_MAX_BYTES = 64 * 1024 * 1024


def read_rendered(path: Path) -> str:
    """A file of a render directory: bounded, not a FIFO or device, UTF-8 (user_files)."""
    return user_files.read_text(path, what="a rendered file", limit=RENDERED_MAX_BYTES)


def check_render(render_dir: Path, intent_sha256: str, paths: Iterable[str]) -> list[str]:
    """Problems that make a render directory unsafe to push: not a fabgen render, rendered
    from another intent, or a file edited since it was rendered (its manifest hash differs)."""
    if not (render_dir / MANIFEST).exists():
        return [f"{render_dir} has no {MANIFEST}: render it with `fabgen render INTENT "
                f"-o {render_dir}` first"]
    try:
        manifest = json.loads(read_rendered(render_dir / MANIFEST))
    except FabgenError as exc:
        return [str(exc)]
    except ValueError as exc:
        return [f"{render_dir / MANIFEST} is not valid JSON: {exc}"]
    except RecursionError:  # json recurses once per level of nesting
        return [f"{render_dir / MANIFEST} is not a fabgen manifest (nested too deeply)"]
    if not isinstance(manifest, dict):
        return [f"{render_dir / MANIFEST} is not a fabgen manifest (not a JSON object)"]
    problems = []
    rendered_from = manifest.get("intent", {}).get("sha256")
    if rendered_from != intent_sha256:
        problems.append(f"{render_dir} was rendered from a different version of the intent; "
                        "render it again")
    files = manifest.get("files", {})
    for rel in paths:
        path = render_dir / rel
        if not path.is_file():
            continue  # reported per device as a missing render
        if rel not in files:
            problems.append(f"{rel} is not in {MANIFEST}: it was not written by this render")
            continue
        try:
            data = user_files.read_bytes(path, what="a rendered file",
                                         limit=RENDERED_MAX_BYTES)
        except FabgenError as exc:
            problems.append(str(exc))
            continue
        digest = hashlib.sha256(data).hexdigest()
        if digest != files[rel]:
            problems.append(f"{rel} was changed after rendering (its sha256 is not the "
                            "manifest's); render again rather than editing rendered files")
    return problems
