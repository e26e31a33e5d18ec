"""Fake SONiC (`config`, `show`) and Cumulus NVUE (`nv`) commands; state in files under cwd.

Run as `python fake_cli.py PROGRAM ARGS...` from the wrappers `fake_linux` puts on PATH. The
current directory is the fake switch's home. Errors print `Error: ...` and exit non-zero, as the
real CLIs do; a command that would ask `[y/N]` without `-y` reads stdin (EOF: aborted).

SONiC state: `.fake/running.json` (the running CONFIG_DB), `.fake/checkpoints/NAME.json`,
`etc/sonic/config_db.json` (saved config), `etc/sonic/frr/frr.conf` (the FRR config file; the
fake `sudo` maps /etc/... to the home's etc/...), `.fake/frr-running.conf` (what FRR runs) and
`.fake/bgp-daemons` (which config daemon the bgp container started with). The bgp container
(`systemctl restart bgp`, `config reload`) starts as sonic-buildimage's docker_init.sh and
supervisord do: with frr_mgmt_framework_config true (unified, or separated before
sonic-buildimage#27547) it renders frr.conf from CONFIG_DB with frrcfgd's templates (the fake
uses fabgen's model of them, fabgen.platforms.sonic.frr), runs bfdd and frrcfgd, which then applies
every later CONFIG_DB change (`config replace`, `load`, `rollback`) to FRR; in split-unified it
loads the file, appending the `fpm` lines when they are missing, and runs no bfdd. Commands that
change config need root (the fake `sudo` sets FAKE_ROOT=1), like the real `config`.
`vtysh -c "show running-config" | "show ip bgp summary json" | "show bfd peers json"` answer
from what FRR runs.

NVUE state: `.fake/applied.yaml`, `.fake/pending.yaml` (the pending revision after `nv config
replace`), `.fake/confirm.json` (an apply waiting for `--confirm-yes`; it expires lazily on the
next `nv` call, rolling back), `etc/nvue.d/startup.yaml` (saved config). `nv config diff`
compares the parsed configs, as NVUE compares revisions, not their text, and prints the
operations between them as NVUE does (`- set: {...}` / `- unset: {...}` YAML).

BGP: every neighbour with a `remote-as` (SONiC) or under `vrf default router bgp neighbor`
(NVUE) is Established, unless `.fake/bgp-down` exists (then all are Active/idle).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

import yaml

FAKE = Path(".fake")
TABLE = re.compile(r"^[A-Z][A-Z0-9_]*$")
NVUE_ROOTS = {"system", "interface", "router", "qos", "vrf", "bridge", "evpn", "nve", "service",
              "acl", "mlag", "header"}


def fail(message: str, code: int = 1) -> NoReturn:
    print(f"Error: {message}")
    sys.exit(code)


def need_root() -> None:
    if os.environ.get("FAKE_ROOT") != "1":
        fail("Root privileges are required for this operation")


def confirm(question: str, args: list[str]) -> None:
    if "-y" in args or "--yes" in args:
        return
    print(f"{question} [y/N]: ", end="", flush=True)
    if sys.stdin.readline().strip().lower() != "y":
        print("Aborted!")
        sys.exit(1)


# --- SONiC ----------------------------------------------------------------------------------

def sonic_validate(path: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        fail(f"File {path} does not exist")
    except ValueError as exc:
        fail(f"{path} is not valid JSON: {exc}")
    if not isinstance(data, dict):
        fail(f"{path}: expected a JSON object of tables")
    for table, rows in data.items():
        if not TABLE.match(table) or not isinstance(rows, dict) or \
                not all(isinstance(v, dict) for v in rows.values()):
            fail(f"Config validation failed: invalid table {table!r}")
    return data


def _replace(path: Path, text: str) -> None:
    """Write a state file whole (temp + rename): a test polling it, or a confirm timer firing
    while another command runs, never reads it half written."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def sonic_write(data: dict[str, Any]) -> None:
    FAKE.mkdir(exist_ok=True)
    _replace(FAKE / "running.json", json.dumps(data, indent=4, sort_keys=True) + "\n")


def sonic_running() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FAKE / "running.json").read_text())
    return data


def sonic_config(args: list[str]) -> None:
    if not args:
        fail("Missing command.", 2)
    cmd, rest = args[0], args[1:]
    files = [a for a in rest if not a.startswith("-")]
    if cmd in ("reload", "replace", "load", "checkpoint", "rollback", "delete-checkpoint",
               "save"):
        need_root()
    if cmd in ("reload", "replace", "load"):
        if not files:
            fail("Missing argument FILE.", 2)
        if cmd != "replace":
            confirm(f"{'Reload' if cmd == 'reload' else 'Load'} config from the file "
                    f"{files[0]}?", rest)
        data = sonic_validate(files[0])
        if cmd == "load":  # merge: tables and keys are added or updated, never removed
            merged = sonic_running()
            for table, rows in data.items():
                for key, fields in rows.items():
                    merged.setdefault(table, {}).setdefault(key, {}).update(fields)
            data = merged
        sonic_write(data)
        if cmd == "reload":  # `config reload` restarts the services, bgp among them
            bgp_restart()
        else:
            frrcfgd_apply()
        print("Config replaced successfully." if cmd == "replace" else "Running command: "
              f"/usr/local/bin/sonic-cfggen -j {files[0]} --write-to-db")
    elif cmd == "checkpoint":
        (FAKE / "checkpoints").mkdir(parents=True, exist_ok=True)
        shutil.copy(FAKE / "running.json", FAKE / "checkpoints" / f"{files[0]}.json")
        print("Checkpoint created successfully.")
    elif cmd == "rollback":
        path = FAKE / "checkpoints" / f"{files[0]}.json"
        if not path.exists():
            fail(f"Checkpoint {files[0]} does not exist")
        _replace(FAKE / "running.json", path.read_text())
        frrcfgd_apply()
        print("Config rolled back successfully.")
    elif cmd == "delete-checkpoint":
        (FAKE / "checkpoints" / f"{files[0]}.json").unlink(missing_ok=True)
        print("Checkpoint deleted successfully.")
    elif cmd == "list-checkpoints":
        print(json.dumps(sorted(p.stem for p in (FAKE / "checkpoints").glob("*.json"))))
    elif cmd == "save":
        confirm("Existing files will be overwritten, continue?", rest)
        Path("etc/sonic").mkdir(parents=True, exist_ok=True)
        shutil.copy(FAKE / "running.json", "etc/sonic/config_db.json")
    else:
        fail(f'No such command "{cmd}".', 2)


FRR_FILE = Path("etc/sonic/frr/frr.conf")
FPM_LINES = ("no fpm use-next-hop-groups", "fpm address 127.0.0.1")


def _frrcfgd_mode(meta: dict[str, Any]) -> bool:
    return meta.get("frr_mgmt_framework_config") == "true" and \
        meta.get("docker_routing_config_mode", "separated") in ("unified", "separated")


def frrcfgd_apply() -> None:
    """frrcfgd (when the container runs it) applies CONFIG_DB's BGP to FRR as it changes."""
    daemons = FAKE / "bgp-daemons"
    if daemons.exists() and daemons.read_text().strip() == "frrcfgd":
        from fabgen.platforms.sonic.frr import frr_conf

        _replace(FAKE / "frr-running.conf", frr_conf(sonic_running()))


def bgp_restart() -> None:
    """The bgp container starts: with frrcfgd, frr.conf rendered from CONFIG_DB and loaded;
    split-unified: docker_init.sh appends the fpm lines if the file lacks them, then bgpd/zebra
    load /etc/frr/frr.conf."""
    meta = sonic_running().get("DEVICE_METADATA", {}).get("localhost", {})
    if _frrcfgd_mode(meta):
        from fabgen.platforms.sonic.frr import frr_conf

        text = frr_conf(sonic_running())
        FRR_FILE.parent.mkdir(parents=True, exist_ok=True)
        _replace(FRR_FILE, text)
        _replace(FAKE / "frr-running.conf", text)
        _replace(FAKE / "bgp-daemons", "frrcfgd\n")
        return
    _replace(FAKE / "bgp-daemons", "file\n")
    text = FRR_FILE.read_text() if FRR_FILE.exists() else ""
    if not re.search(r"^no fpm use-next-hop-groups", text, re.M):
        text = text + ("" if text.endswith("\n") or not text else "\n") + \
            "\n".join(FPM_LINES) + "\n"
        FRR_FILE.parent.mkdir(parents=True, exist_ok=True)
        _replace(FRR_FILE, text)
    _replace(FAKE / "frr-running.conf", text)


def systemctl(args: list[str]) -> None:
    need_root()
    if args[:1] == ["restart"] and args[1:] in (["bgp"], ["bgp.service"]):
        bgp_restart()
    else:
        fail(f"fake systemctl: unsupported {' '.join(args)}")


def bgp_peers(names: list[str]) -> dict[str, bool]:
    up = not (FAKE / "bgp-down").exists()
    return {n: up for n in names}


def vtysh(args: list[str]) -> None:
    running = FAKE / "frr-running.conf"
    text = running.read_text() if running.exists() else ""
    command = args[1] if args[:1] == ["-c"] and len(args) > 1 else ""
    if command == "show running-config":
        print("Building configuration...\n\nCurrent configuration:\n" + text + "end")
    elif command == "show ip bgp summary json":
        names = re.findall(r"^\s*neighbor (\S+) remote-as ", text, re.M)
        peers = {n: {"remoteAs": 0, "state": "Established" if up else "Active",
                     "peerState": "OK" if up else "Idle"}
                 for n, up in bgp_peers(names).items()}
        print(json.dumps({"ipv4Unicast": {"routerId": "0.0.0.0", "peers": peers}}))
    elif command == "show bfd peers json":
        daemons = FAKE / "bgp-daemons"
        if not daemons.exists() or daemons.read_text().strip() != "frrcfgd":
            print("bfdd is not running")  # supervisord starts bfdd only with frrcfgd
            sys.exit(1)
        names = re.findall(r"^\s*neighbor (\S+) remote-as ", text, re.M)
        print(json.dumps([{"peer": n, "status": "up" if up else "down"}
                          for n, up in bgp_peers(names).items()]))
    else:
        print(f"% Unknown command: {command}")
        sys.exit(1)


def sonic_show(args: list[str]) -> None:
    if args[:2] == ["runningconfiguration", "all"]:
        print(json.dumps(sonic_running(), indent=4, sort_keys=True))
    else:
        fail(f"No such command {' '.join(args)!r}.", 2)


# --- NVUE -----------------------------------------------------------------------------------

def nv_expire() -> None:
    """An apply with --confirm whose time is up rolls back, as NVUE does."""
    path = FAKE / "confirm.json"
    if path.exists():
        state = json.loads(path.read_text())
        if time.time() >= state["deadline"]:
            _replace(FAKE / "applied.yaml", state["previous"])
            path.unlink()


def nv_validate(text: str) -> None:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        fail(f"Invalid YAML: {exc}")
    if not isinstance(data, list):
        fail("Invalid config: expected a list of 'set'/'unset' operations")
    for op in data:
        if not isinstance(op, dict) or not set(op) <= {"header", "set", "unset"}:
            fail(f"Invalid config: unexpected operation {op!r}")
        for key in (op.get("set") or {}):
            if key not in NVUE_ROOTS:
                fail(f"Invalid config [set]: '{key}' is not a valid property")


def nv_tree(text: str) -> dict[str, Any]:
    """The `set` operations of a startup.yaml merged into one tree (`header` dropped)."""
    tree: dict[str, Any] = {}
    for op in yaml.safe_load(text) or []:
        merge(tree, op.get("set") or {})
    return tree


def merge(into: dict[str, Any], tree: dict[str, Any]) -> None:
    for key, value in tree.items():
        if isinstance(value, dict) and value and isinstance(into.get(key), dict):
            merge(into[key], value)
        else:
            into[key] = value


def nv_diff(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """`nv config diff` as NVUE prints it: the operations that turn `old` into `new`, a
    `- set:` tree of new or changed values and a `- unset:` tree of removed keys (null)."""

    def sets(a: Any, b: Any) -> Any:
        if isinstance(a, dict) and isinstance(b, dict) and b:
            out = {k: sets(a.get(k), v) for k, v in b.items() if a.get(k) != v}
            return {k: v for k, v in out.items() if v != {} or b[k] == {}}
        return b

    def unsets(a: dict[str, Any], b: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in a.items():
            if not isinstance(b, dict) or key not in b:
                out[key] = None
            elif isinstance(value, dict) and isinstance(b[key], dict) and value:
                inner = unsets(value, b[key])
                if inner:
                    out[key] = inner
        return out

    ops: list[dict[str, Any]] = []
    added, removed = sets(old, new), unsets(old, new)
    if added:
        ops.append({"set": added})
    if removed:
        ops.append({"unset": removed})
    return ops


def nv_config(args: list[str]) -> None:
    nv_expire()
    cmd, rest = (args[0], args[1:]) if args else ("", [])
    applied, pending = FAKE / "applied.yaml", FAKE / "pending.yaml"
    confirm_file = FAKE / "confirm.json"
    if cmd == "replace":
        text = Path(rest[0]).read_text() if rest and Path(rest[0]).exists() else None
        if text is None:
            fail(f"File {rest[0] if rest else ''!r} not found")
        nv_validate(text)
        _replace(pending, text)
        print("Loading config file: ... done")
    elif cmd == "diff":
        if pending.exists():
            ops = nv_diff(nv_tree(applied.read_text()), nv_tree(pending.read_text()))
            if ops:
                print(yaml.safe_dump(ops, sort_keys=False, default_flow_style=False), end="")
    elif cmd == "detach":
        pending.unlink(missing_ok=True)
    elif cmd == "apply":
        if "--confirm-status" in rest:
            if confirm_file.exists():
                left = json.loads(confirm_file.read_text())["deadline"] - time.time()
                print(f"Confirm timer: {int(left)}s remaining")
            else:
                print("No apply is waiting for confirmation")
            return
        if "--confirm-yes" in rest or "--confirm-no" in rest:
            if not confirm_file.exists():
                fail("No pending apply to confirm")
            if "--confirm-no" in rest:
                _replace(applied, json.loads(confirm_file.read_text())["previous"])
            confirm_file.unlink()
            return
        if confirm_file.exists():
            fail("An apply is waiting for confirmation")
        if not pending.exists():
            print("Warning: no pending changes to apply")
            return
        confirm("Are you sure?", rest)
        previous = applied.read_text()
        _replace(applied, pending.read_text())
        pending.unlink()
        if "--confirm" in rest:
            m = re.fullmatch(r"(\d+)([smh]?)", rest[rest.index("--confirm") + 1])
            if m is None:
                fail("Invalid --confirm duration", 2)
            seconds = int(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]
            confirm_file.write_text(json.dumps({"deadline": time.time() + seconds,
                                                "previous": previous}))
        print("applied")
    elif cmd == "save":
        Path("etc/nvue.d").mkdir(parents=True, exist_ok=True)
        shutil.copy(applied, "etc/nvue.d/startup.yaml")
    elif cmd == "show":
        print(applied.read_text(), end="")
    else:
        fail(f"Unknown command: nv config {cmd}", 2)


def nv_show(args: list[str]) -> None:
    if args[:5] != ["vrf", "default", "router", "bgp", "neighbor"]:
        fail(f"Unknown command: nv show {' '.join(args)}", 2)
    nv_expire()
    applied = yaml.safe_load((FAKE / "applied.yaml").read_text()) or []
    names: list[str] = []
    for op in applied:
        bgp = ((((op.get("set") or {}).get("vrf") or {}).get("default") or {})
               .get("router") or {}).get("bgp") or {}
        names += [str(n) for n in (bgp.get("neighbor") or {})]
    print(json.dumps({n: {"state": "established" if up else "idle"}
                      for n, up in bgp_peers(names).items()}))


def main() -> None:
    prog, args = sys.argv[1], sys.argv[2:]
    if prog == "config":
        sonic_config(args)
    elif prog == "show":
        sonic_show(args)
    elif prog == "systemctl":
        systemctl(args)
    elif prog == "vtysh":
        vtysh(args)
    elif prog == "nv":
        if args[:1] == ["show"]:
            nv_show(args[1:])
            return
        if args[:1] != ["config"]:
            fail(f"Unknown command: nv {' '.join(args)}", 2)
        nv_config(args[1:])
    else:
        fail(f"unknown program {prog}", 127)


if __name__ == "__main__":
    main()
