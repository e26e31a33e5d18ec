"""NVUE's push face (contract/push.py): its driver, where its rendered config is, and how
`fabgen diff` reads its configs and backups."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from fabgen.platforms.contract.push import Push
from fabgen.platforms.nvue.facts import FACTS
from fabgen.platforms.nvue.push import backup
from fabgen.platforms.nvue.push.driver import NvueDriver

__all__ = ["PUSH", "NvuePush"]


class NvuePush(Push):
    facts = FACTS
    driver = NvueDriver
    config_path = "nvue/{name}/startup.yaml"
    kinds = backup.KINDS
    backup_names: ClassVar[Mapping[str, str]] = {"startup.yaml": "nvue"}
    config_names: ClassVar[Mapping[str, str]] = {"nvue": "startup.yaml"}
    default_formats = ("yaml",)


PUSH = NvuePush()
