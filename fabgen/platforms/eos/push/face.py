"""EOS's push face (contract/push.py): its napalm driver, where its rendered config is, and how
`fabgen diff` reads its configs, backups and ANTA files, and `fabgen verify-counters`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from fabgen.platforms.contract.push import Push
from fabgen.platforms.eos.facts import FACTS
from fabgen.platforms.eos.push import backup, commands
from fabgen.platforms.eos.push.driver import EosDriver

__all__ = ["PUSH", "EosPush"]


class EosPush(Push):
    facts = FACTS
    driver = EosDriver
    config_path = "eos/{name}.cfg"
    kinds = backup.KINDS
    day_two_kinds = backup.DAY_TWO_KINDS
    backup_names: ClassVar[Mapping[str, str]] = {"running-config": "eos", "startup-config": "eos"}
    config_names: ClassVar[Mapping[str, str]] = {"eos": "running-config"}
    default_formats = ("text",)
    commands = (commands.VERIFY_COUNTERS,)


PUSH = EosPush()
