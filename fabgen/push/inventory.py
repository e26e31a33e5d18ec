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

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import YAMLError

from fabgen.errors import Diagnostic, FabgenError
from fabgen.output import MANIFEST
from fabgen.suggest import close_matches
from fabgen.topology.model import Fabric, Switch

# Where each platform's rendered config lives in a render directory (the targets' layout).
CONFIG_PATHS: dict[str, str] = {
    "sonic": "sonic/{name}/config_db.json",
    "eos": "eos/{name}.cfg",
    "nvue": "nvue/{name}/startup.yaml",
}
PUSHABLE = tuple(CONFIG_PATHS)
# Files pushed with the config: SONiC's FRR config (bgpd reads it in split-unified mode).
EXTRA_PATHS: dict[str, dict[str, str]] = {"sonic": {"frr": "sonic/{name}/frr.conf"}}


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
        """Other rendered files pushed with the config, by what they are ({"frr": path})."""
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


def load_hosts(path: Path, fabric: Fabric) -> dict[str, Address]:
    """Read the hosts file; every error of the file at once, with its line and column."""
    shown = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise FabgenError.single(f"cannot read hosts file: {exc.strerror or exc}",
                                 file=shown) from None
    try:
        tree = YAML(typ="rt").load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise FabgenError.single(f"not valid YAML: {getattr(exc, 'problem', exc)}", file=shown,
                                 line=mark.line + 1 if mark else None,
                                 col=mark.column + 1 if mark else None) from None
    if tree is None:
        tree = CommentedMap()
    if not isinstance(tree, CommentedMap):
        raise FabgenError.single("expected a mapping of switch name to address", file=shown,
                                 line=1, col=1)
    names = {s.name for s in fabric.switches}
    errors: list[Diagnostic] = []
    out: dict[str, Address] = {}
    for key, value in tree.items():
        line, col = tree.lc.key(key)
        where = {"file": shown, "line": line + 1, "col": col + 1}
        name = str(key)
        if name not in names:
            near = close_matches(name, names)
            hint = f"did you mean {', '.join(near)}?" if near else None
            errors.append(Diagnostic(f"{name}: no switch of {fabric.name} has this name",
                                     hint=hint, **where))
            continue
        try:
            plain = dict(value) if isinstance(value, CommentedMap) else value
            out[name] = parse_address(plain)
        except ValueError as exc:
            errors.append(Diagnostic(f"{name}: {exc}", **where))
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


def check_render(render_dir: Path, intent_sha256: str, paths: Iterable[str]) -> list[str]:
    """Problems that make a render directory unsafe to push: not a fabgen render, rendered
    from another intent, or a file edited since it was rendered (its manifest hash differs)."""
    try:
        manifest = json.loads((render_dir / MANIFEST).read_text(encoding="utf-8"))
    except OSError:
        return [f"{render_dir} has no {MANIFEST}: render it with `fabgen render INTENT "
                f"-o {render_dir}` first"]
    except ValueError as exc:
        return [f"{render_dir / MANIFEST} is not valid JSON: {exc}"]
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
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != files[rel]:
            problems.append(f"{rel} was changed after rendering (its sha256 is not the "
                            "manifest's); render again rather than editing rendered files")
    return problems
