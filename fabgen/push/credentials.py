"""Device credentials: from environment variables or a terminal prompt, never from a file.

The intent and the hosts file carry no credentials, and nothing fabgen writes (audit log,
output, known_hosts) contains the password: every line of output and every audit record goes
through a `Redactor` as a second line of defence.
"""

from __future__ import annotations

import getpass
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fabgen.errors import FabgenError

USERNAME_ENV = "FABGEN_USERNAME"
PASSWORD_ENV = "FABGEN_PASSWORD"


def platform_env(platform: str, what: str) -> str:
    """The per-platform override, FABGEN_<PLATFORM>_PASSWORD (each switch OS has its own
    default admin account, so they often differ)."""
    return f"FABGEN_{platform.upper()}_{what}"


@dataclass(frozen=True, slots=True)
class Credentials:
    """A username and password; the password never appears in repr() or str()."""

    username: str
    password: str = field(repr=False)


def resolve(platforms: Iterable[str], username: str | None = None,
            env: Mapping[str, str] | None = None, interactive: bool | None = None,
            ask_password: Callable[[str], str] = getpass.getpass,
            ask_username: Callable[[str], str] = input) -> dict[str, Credentials]:
    """Credentials per platform: FABGEN_<PLATFORM>_USERNAME/PASSWORD, then FABGEN_USERNAME/
    PASSWORD (`username` overrides both usernames), then a prompt when stdin is a terminal.

    Raises FabgenError when a password is missing and there is no terminal to ask on.
    """
    env = os.environ if env is None else env
    if interactive is None:
        interactive = sys.stdin.isatty()
    out: dict[str, Credentials] = {}
    prompted: Credentials | None = None
    for platform in sorted(set(platforms)):
        user = username or env.get(platform_env(platform, "USERNAME")) or env.get(USERNAME_ENV)
        password = env.get(platform_env(platform, "PASSWORD")) or env.get(PASSWORD_ENV)
        if user and password:
            out[platform] = Credentials(user, password)
            continue
        if not interactive:
            missing = [n for n, v in ((USERNAME_ENV, user), (PASSWORD_ENV, password)) if not v]
            raise FabgenError.single(
                f"push: no device {' or '.join(m.split('_')[1].lower() for m in missing)} for "
                f"{platform} devices: set {' and '.join(missing)} (or "
                f"{platform_env(platform, 'PASSWORD')}), or run from a terminal to be prompted")
        if prompted is None:  # one prompt serves every platform without its own variables
            prompted = Credentials(
                user or ask_username("device username: ").strip(),
                password or ask_password("device password (not echoed): "))
        out[platform] = Credentials(user or prompted.username, password or prompted.password)
    return out


class Redactor:
    """Replace every secret in text (and in nested audit records) with `********`."""

    MASK = "********"

    def __init__(self, secrets: Iterable[str]) -> None:
        # Longest first, so a password containing another one is masked whole.
        self.secrets = sorted({s for s in secrets if s}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, self.MASK)
        return text

    def record(self, value: Any) -> Any:
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {k: self.record(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.record(v) for v in value]
        return value
