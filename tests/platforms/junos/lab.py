"""The Junos lab of the platform contract: tests/platforms/junos/fabric.yaml rendered by fabgen,
its switches as fake Junos devices (tests/fakes/fake_junos.py, NETCONF over SSH), pushed with
`fabgen push` (napalm's own `junos` driver), the way test_push's Lab does for the others."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from fabgen.intent import load
from fabgen.output import with_manifest, write
from fabgen.push import PushOptions, PushReport, run
from fabgen.render import render
from tests.fakes.fake_junos import JunosFleet

FABRIC = Path(__file__).with_name("fabric.yaml")
USER, PASSWORD = "fabgen", "pw-Junos-lab-4471"
BAD = "frobnicate"  # a statement the fake device's schema refuses


class JunosLab:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.user, self.password = USER, PASSWORD
        self.intent = tmp / "fabric.yaml"
        shutil.copy(FABRIC, self.intent)
        self.loaded = load(self.intent)
        self.render_dir = tmp / "out" / self.loaded.intent.name
        self.hosts_file = tmp / "hosts.yaml"
        self.known_hosts = tmp / "known_hosts"
        self.fleet = JunosFleet(USER, PASSWORD)
        self.addresses: dict[str, str] = {}
        self.bad: tuple[str, ...] = ()
        self.output: list[str] = []
        self.render()

    def render(self, bad: tuple[str, ...] = ()) -> None:
        self.bad = bad
        files = {k: v for k, v in render(self.loaded, only=["junos"]).items()
                 if k.startswith("junos/")}
        for name in bad:
            files[f"junos/{name}.conf"] += f"{BAD} everything;\n"
        write(self.render_dir, with_manifest(files, self.loaded.source.sha256,
                                             self.loaded.intent.name))

    def start(self, *names: str) -> None:
        for name in names:
            switch = self.fleet.add(name)
            if name in self.bad:
                switch.refuse = {BAD}
            self.addresses[name] = f"127.0.0.1:{switch.port}"
        self.hosts_file.write_text("".join(f"{n}: {a}\n" for n, a in self.addresses.items()))

    def state(self, name: str) -> dict[str, str]:
        return {"running": self.fleet.switches[name].running_text()}

    def fail_bgp(self, name: str) -> bool:
        self.fleet.switches[name].bgp_down = True
        return True

    def push(self, **kw: Any) -> PushReport:
        kw.setdefault("accept_new_host_keys", True)
        kw.setdefault("timeout", 30)
        kw.setdefault("health_timeout", 10)
        options = PushOptions(intent=self.intent, hosts=self.hosts_file,
                              render_dir=self.render_dir, known_hosts=self.known_hosts,
                              workers=2, **kw)
        return run(options, self.output.append)

    def close(self) -> None:
        self.fleet.close()
