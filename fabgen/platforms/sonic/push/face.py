"""SONiC's push face (contract/push.py): its driver, the `--sonic-apply` and
`--sonic-change-hwsku` options, where its rendered files are, how `fabgen diff` reads its
configs and backups, and `fabgen frr-lab`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from fabgen.platforms.contract.push import Push, PushOption
from fabgen.platforms.sonic.facts import FACTS
from fabgen.platforms.sonic.push import backup, commands
from fabgen.platforms.sonic.push.driver import SonicDriver
from fabgen.push.drivers.base import Driver

__all__ = ["PUSH", "SonicPush"]

APPLY = PushOption("apply", ("reload", "replace"), "reload",
                   "how the uploaded config_db.json is applied: `config reload -y` (restarts "
                   "services) or `config replace` (GCU, changes in place)")

CHANGE_HWSKU = PushOption("change-hwsku", ("no", "yes"), "no",
                          "push to a SONiC switch whose running HwSKU differs from the "
                          "render's, writing the render's (with `config reload`); refused "
                          "without it", flag=True)


class SonicPush(Push):
    facts = FACTS
    driver = SonicDriver
    config_path = "sonic/{name}/config_db.json"
    # golden_config_db.json: db_migrator keeps the routing mode with it.
    extra_paths: ClassVar[Mapping[str, str]] = {"golden": "sonic/{name}/golden_config_db.json"}
    options = (APPLY, CHANGE_HWSKU)
    kinds = backup.KINDS
    backup_names: ClassVar[Mapping[str, str]] = {
        "config_db.json": "sonic", "golden_config_db.json": "sonic-golden", "frr.conf": "frr",
        "frr.expected.conf": "frr", "bgpd.conf": "frr"}
    config_names: ClassVar[Mapping[str, str]] = {
        "sonic": "config_db.json", "sonic-golden": "golden_config_db.json", "frr": "frr.conf"}
    default_formats = ("json",)
    commands = (commands.FRR_LAB,)

    def connect(self, conn: Any, run_id: str, timeout: float, apply_timeout: float,
                host: str | None, options: Mapping[str, str]) -> Driver:
        return SonicDriver(conn, run_id, timeout, apply_timeout,
                           apply=options.get("apply", APPLY.default), host=host,
                           change_hwsku=options.get("change-hwsku") == "yes")

    def check_options(self, options: Mapping[str, str]) -> list[str]:
        if options.get("change-hwsku") == "yes" and options.get("apply", APPLY.default) != "reload":
            return ["--sonic-change-hwsku needs --sonic-apply reload: the containers read the "
                    "SKU's files when they start, and `config replace` restarts none"]
        return []

    def summary(self, options: Mapping[str, str]) -> str:
        apply = "reload -y" if options.get("apply", APPLY.default) == "reload" else "replace"
        return SonicDriver.summary.replace("{apply}", apply)


PUSH = SonicPush()
