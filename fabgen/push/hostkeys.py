"""SSH host keys: check each device's key against a known_hosts file before logging in.

A first SSH handshake without authentication fetches the device's host key. A key in the file
passes; a different key for the same name is refused (`host-key`), always; an unknown key is
refused unless `accept_new` (like OpenSSH's StrictHostKeyChecking=accept-new), which appends it
to the file. The login itself (netmiko, napalm) then runs with paramiko's RejectPolicy and the
same file, so the key checked here is the key logged in to.
"""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import paramiko

from fabgen.push.results import DeviceError

_LOCK = threading.Lock()  # one writer of the known_hosts file at a time


def known_hosts_name(host: str, port: int) -> str:
    """The name OpenSSH and paramiko file a key under: `host`, or `[host]:port` off port 22."""
    return host if port == 22 else f"[{host}]:{port}"


def fetch_host_key(host: str, port: int, timeout: float,
                   prefer: str | None = None) -> paramiko.PKey:
    """The device's host key, from a handshake that never authenticates.

    `prefer` is the key type already on file, asked for first as paramiko's SSHClient does, so
    a device with several host keys is checked with the one the login will see.
    """
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except TimeoutError:
        raise DeviceError("unreachable", f"no answer from {host}:{port} within "
                                         f"{timeout:g}s") from None
    except OSError as exc:
        raise DeviceError("unreachable", f"cannot connect to {host}:{port}: "
                                         f"{exc.strerror or exc}") from None
    try:  # wait for the server's banner ourselves: a silent server is a timeout, not an error
        sock.settimeout(timeout)
        if not sock.recv(4, socket.MSG_PEEK):
            sock.close()
            raise DeviceError("unreachable", f"{host}:{port} closed the connection at once")
    except TimeoutError:
        sock.close()
        raise DeviceError("timeout", f"{host}:{port} accepted the connection but sent no SSH "
                                     f"banner within {timeout:g}s") from None
    except OSError as exc:
        sock.close()
        raise DeviceError("unreachable", f"{host}:{port}: {exc.strerror or exc}") from None
    transport = paramiko.Transport(sock)
    transport.banner_timeout = transport.handshake_timeout = timeout
    if prefer is not None:
        options = transport.get_security_options()
        if prefer == "ssh-rsa":
            prefer = next((t for t in ("rsa-sha2-512", "rsa-sha2-256")
                           if t in options.key_types), prefer)
        options.key_types = [prefer, *(t for t in options.key_types if t != prefer)]
    try:
        transport.start_client(timeout=timeout)
        key = transport.get_remote_server_key()
    except (paramiko.SSHException, EOFError, OSError) as exc:
        raise DeviceError("unreachable", f"no SSH service at {host}:{port}: {exc}") from None
    finally:
        transport.close()
    return key


def _load(known_hosts: Path) -> paramiko.HostKeys:
    keys = paramiko.HostKeys()
    if known_hosts.exists():
        try:
            keys.load(str(known_hosts))
        except (OSError, paramiko.SSHException, ValueError) as exc:
            raise DeviceError("host-key", f"cannot read {known_hosts}: {exc}") from None
    return keys


def check(host: str, port: int, known_hosts: Path, accept_new: bool, timeout: float) -> str:
    """Check (and with `accept_new`, record) the device's host key; return what was done."""
    name = known_hosts_name(host, port)
    with _LOCK:
        keys = _load(known_hosts)
    entry = keys.lookup(name)
    key = fetch_host_key(host, port, timeout, prefer=next(iter(entry.keys()), None)
                         if entry is not None else None)
    with _LOCK:
        keys = _load(known_hosts)  # again: another worker may have added a line meanwhile
        if keys.check(name, key):
            return "known"
        entry = keys.lookup(name)
        if entry is not None and key.get_name() in entry:
            raise DeviceError(
                "host-key", f"HOST KEY CHANGED for {name}: the {key.get_name()} key is not the "
                f"one in {known_hosts} (fingerprint now {key.fingerprint}); if the device was "
                f"replaced, remove its line from {known_hosts}")
        if not accept_new:
            raise DeviceError(
                "host-key", f"unknown host key for {name} ({key.get_name()} {key.fingerprint}), "
                f"not in {known_hosts}; check it and add it, or pass --accept-new-host-keys")
        known_hosts.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(known_hosts, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="ascii") as f:
            f.write(f"{name} {key.get_name()} {key.get_base64()}\n")
        return "added"
