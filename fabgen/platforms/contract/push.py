"""What a platform adds to the commands: its push driver (what loading, diffing, committing and
rolling back really are on that OS), where its rendered files are, its own `fabgen push`
options, how `fabgen diff` reads its device configs and backups, and any command of its own.

`fabgen push`, `fabgen diff` and the CLI ask every platform through registry/push.py. A
platform without a push face (no `push/` folder) is rendered but not pushed.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from fabgen.diff.kind import Format, Kind
from fabgen.platforms.contract.facts import Facts
from fabgen.push.drivers.base import Driver

__all__ = ["EXIT_INVALID", "EXIT_OK", "EXIT_USAGE", "Command", "Console", "Push", "PushOption"]

# The exit codes of every fabgen command, as fabgen.cli.console defines them (a usage error is
# an error: 1): a platform's command returns them too.
EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 1


@dataclass(frozen=True, slots=True)
class PushOption:
    """One option of `fabgen push` a platform takes, offered as `--<platform>-<name>`."""

    name: str
    choices: tuple[str, ...]
    default: str
    help: str = ""
    flag: bool = False
    """A switch without a value: given, it is choices[-1]; else the default."""


class Console(Protocol):
    """What a platform's own command may print through (the CLI's console)."""

    def error(self, message: str) -> None: ...

    def info(self, message: str, stream: Any = ...) -> None: ...


class Command:
    """A subcommand of `fabgen` a platform brings: its parser and what it does. `run`
    returns the exit code (EXIT_OK; EXIT_INVALID for a failed check or invalid input;
    EXIT_USAGE)."""

    name: str
    help: str

    def configure(self, parser: argparse.ArgumentParser) -> None:
        raise NotImplementedError

    def run(self, args: argparse.Namespace, console: Console) -> int:
        raise NotImplementedError

    def parser_kwargs(self) -> dict[str, Any]:
        """description and epilog of its parser (`fabgen <name> --help`)."""
        return {}


class Push:
    """One platform's push and diff face; `PUSH` is the instance the registry lists."""

    facts: Facts
    """Its facts."""
    driver: type[Driver]
    """The driver class (its mode, diff source, who runs commit-confirm, its connection)."""
    config_path: str
    """The rendered config pushed to a switch, in a render directory ("<os>/{name}.cfg")."""
    extra_paths: ClassVar[Mapping[str, str]] = {}
    """Other rendered files pushed with it, by name (their hashes go in the report as
    `<name>_sha256`)."""
    options: tuple[PushOption, ...] = ()
    """Its own `fabgen push` options."""
    kinds: tuple[Kind, ...] = ()
    """How `fabgen diff` reads the device configs it renders (with their backup comparison),
    in the order the kinds are tried."""
    day_two_kinds: tuple[Kind, ...] = ()
    """Kinds of its fabric-wide day-two files (a test catalog), tried last."""
    backup_names: ClassVar[Mapping[str, str]] = {}
    """File names a device backup may give its configs -> the kind they hold."""
    config_names: ClassVar[Mapping[str, str]] = {}
    """Kind -> the file name a device's config of that kind is shown as."""
    default_formats: tuple[Format, ...] = ()
    """Backup formats that are this platform's config when nothing else says (a device only
    one side has): JSON, YAML or text. The first registered platform claiming one wins."""
    commands: tuple[Command, ...] = ()
    """Subcommands of its own."""

    def connect(self, conn: Any, run_id: str, timeout: float, apply_timeout: float,
                host: str | None, options: Mapping[str, str]) -> Driver:
        """A driver for one device session, with this platform's push options."""
        return self.driver(conn, run_id, timeout, apply_timeout, host=host)

    def check_options(self, options: Mapping[str, str]) -> list[str]:
        """Problems with a combination of its options (each option is already one of its
        choices); [] when they go together."""
        return []

    def summary(self, options: Mapping[str, str]) -> str:
        """One console line: what a push does on this OS with these options."""
        return self.driver.summary
