"""The registered platforms' push faces (contract/push.py), in output order: the drivers
`fabgen push` uses, the file kinds `fabgen diff` reads, platform options and commands."""

from __future__ import annotations

from fabgen.diff.kind import Format, Kind
from fabgen.platforms.contract.push import Command, Push
from fabgen.platforms.eos.push import face as eos
from fabgen.platforms.junos.push import face as junos
from fabgen.platforms.nvue.push import face as nvue
from fabgen.platforms.sonic.push import face as sonic

__all__ = ["PLATFORMS", "all", "backup_names", "commands", "config_names", "day_two_kinds",
           "default_kinds", "extra_names", "get", "kinds", "names"]

PLATFORMS: tuple[Push, ...] = (sonic.PUSH, eos.PUSH, nvue.PUSH, junos.PUSH)


def all() -> tuple[Push, ...]:
    """Every registered platform's push face, in output order."""
    return PLATFORMS


def names() -> tuple[str, ...]:
    """The platforms `fabgen push` can push to."""
    return tuple(p.facts.name for p in PLATFORMS)


def get(name: str) -> Push:
    """A platform's push face; KeyError naming the platform when it has none."""
    for push in PLATFORMS:
        if push.facts.name == name:
            return push
    raise KeyError(f"no platform {name!r} can be pushed to (known: {', '.join(names())})")


def kinds() -> tuple[Kind, ...]:
    """The kinds of every platform's device configs, in output order."""
    return tuple(k for p in PLATFORMS for k in p.kinds)


def day_two_kinds() -> tuple[Kind, ...]:
    return tuple(k for p in PLATFORMS for k in p.day_two_kinds)


def backup_names() -> dict[str, str]:
    """File name a backup may give a device config -> its kind, every platform's."""
    return {n: k for p in PLATFORMS for n, k in p.backup_names.items()}


def config_names() -> dict[str, str]:
    return {k: n for p in PLATFORMS for k, n in p.config_names.items()}


def default_kinds() -> dict[Format, str]:
    """Backup format -> the kind it stands for when nothing else says: the first registered
    platform claiming the format, its first kind."""
    out: dict[Format, str] = {}
    for p in PLATFORMS:
        for fmt in p.default_formats:
            out.setdefault(fmt, p.kinds[0].name)
    return out


def extra_names() -> tuple[str, ...]:
    """Names of the files pushed with a config, every platform's, sorted (`<name>_sha256`)."""
    return tuple(sorted({n for p in PLATFORMS for n in p.extra_paths}))


def commands() -> tuple[Command, ...]:
    """Every platform's own subcommands."""
    return tuple(c for p in PLATFORMS for c in p.commands)
