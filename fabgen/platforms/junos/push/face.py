"""Junos's push face (contract/push.py): the napalm `junos` driver (`load override`, the
device's diff, `commit confirmed`), where its rendered configuration is, and how `fabgen diff`
reads its configurations and backups."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from fabgen.platforms.contract.push import Push
from fabgen.platforms.junos.facts import FACTS
from fabgen.platforms.junos.push import backup
from fabgen.platforms.junos.push.driver import JunosDriver

__all__ = ["PUSH", "JunosPush"]


class JunosPush(Push):
    facts = FACTS
    driver = JunosDriver
    config_path = "junos/{name}.conf"
    kinds = backup.KINDS
    # The active configuration a Junos switch keeps on disk (/config/juniper.conf.gz).
    backup_names: ClassVar[Mapping[str, str]] = {"juniper.conf": "junos"}
    # How each file of a switch is named where a device holds several (a copy of the render's
    # folder as backups holds all three renderings).
    config_names: ClassVar[Mapping[str, str]] = {
        "junos": "juniper.conf", "junos-json": "configuration (YANG JSON)",
        "junos-set": "configuration (set commands)"}


PUSH = JunosPush()
