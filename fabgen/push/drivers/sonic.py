"""SONiC: config_db.json and frr.conf uploaded, `config reload` or `config replace`, a confirm
timer run by fabgen on the device (SONiC has no commit-confirm)."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from fabgen.push import candidate as cand
from fabgen.push.drivers.base import Render, refuse, tail, unified
from fabgen.push.drivers.linux import LinuxDriver
from fabgen.push.results import DeviceError, Step


def canonical_json(data: Any) -> str:
    return json.dumps(data, indent=4, sort_keys=True) + "\n"


def _differences(want: Any, have: Any, where: str = "") -> list[str]:
    """Where `have` lacks or differs from `want` (fields only `have` has are not reported)."""
    if isinstance(want, dict) and isinstance(have, dict):
        out = []
        for key, value in want.items():
            if key not in have:
                out.append(f"{where}{key}: missing")
            else:
                out += _differences(value, have[key], f"{where}{key}|")
        return out
    return [] if want == have else [f"{where.rstrip('|')}: {have!r} instead of {want!r}"]


def frr_peer_states(data: Any) -> dict[str, str]:
    """Peer states from FRR's `show ip bgp summary json`: `{"ipv4Unicast": {"peers": ...}}`
    (FRR 8+) or the address family's object itself (older FRR)."""
    if not isinstance(data, dict):
        return {}
    families = [data] if "peers" in data else [v for v in data.values() if isinstance(v, dict)]
    out: dict[str, str] = {}
    for family in families:
        for peer, info in (family.get("peers") or {}).items():
            out.setdefault(str(peer), str((info or {}).get("state", "")))
    return out


SONIC_FRR = "/etc/sonic/frr/frr.conf"


class SonicDriver(LinuxDriver):
    """netmiko `linux` to SONiC: upload config_db.json and frr.conf (candidates built from the
    device's own), `config checkpoint`, `config reload -y` (replace; restarts services) or
    `config replace` (GCU), read back, `config save -y`.

    frr.conf: the render sets `docker_routing_config_mode: split-unified`, so bgpd ignores
    CONFIG_DB's BGP tables and reads /etc/sonic/frr/frr.conf (bind-mounted as /etc/frr in the
    bgp container), which SONiC never regenerates in the split modes; the container loads it
    when it starts (sonic-buildimage dockers/docker-fpm-frr/docker_init.sh, `split-unified`
    branch; docs: SONiC FRR "split" configuration modes). So fabgen copies the candidate there
    before applying: `config reload` restarts every service, bgp included (sonic-utilities
    config/main.py `reload` -> `_restart_services`), and with `config replace`, which restarts
    nothing, fabgen runs `systemctl restart bgp`. The previous file is kept on the device and
    restored with the checkpoint on rollback. The diff is LOCAL: fabgen compares the tables it
    owns in `show runningconfiguration all` and the file /etc/sonic/frr/frr.conf (not FRR's
    `show running-config`, which FRR normalises) with the candidates.

    SONiC has no commit-confirm. fabgen arms its own timer *on the device* before applying: a
    detached `sleep N; config rollback <checkpoint>` (and frr.conf restore) that fires unless
    confirm() defuses it, so a push that cuts fabgen off the device still reverts. Defusing and
    firing race on one atomic rename, so exactly one of them wins.
    """

    platform = "sonic"
    diff_source = "local"
    confirm_by = "fabgen"
    connection_platform = "linux"
    filename = "config_db.json"
    summary = ("replace: upload config_db.json (the running tables fabgen does not own kept) "
               "and frr.conf (to /etc/sonic/frr, split-unified), `config checkpoint`, `config "
               "{apply}`; diff LOCAL (fabgen compares the tables it owns in `show "
               "runningconfiguration all` and the switch's frr.conf file with the candidates; "
               "not the device's own); commit-confirm by fabgen (a timer on the device that runs "
               "`config rollback` and restores frr.conf unless confirmed)")

    def __init__(self, conn: Any, run_id: str, timeout: float,
                 apply_timeout: float | None = None, apply: str = "reload",
                 host: str | None = None) -> None:
        super().__init__(conn, run_id, timeout, apply_timeout, host)
        self.apply = apply
        self.checkpoint = f"fabgen-{run_id}"
        self.marker = f".fabgen/pending-{run_id}"
        self.frr_backup = f".fabgen/frr-before-{run_id}"
        self.remote_frr = f"fabgen-{run_id}-frr.conf"
        self.timer_pid: int | None = None
        self.checkpointed = False
        self.frr_changed = False
        self.candidate_db: dict[str, Any] | None = None
        self.candidate_frr = ""

    def running_db(self) -> dict[str, Any]:
        _, out = self.sh("show runningconfiguration all")
        try:
            data = json.loads(out)
        except ValueError:
            raise DeviceError("error", "`show runningconfiguration all` did not print JSON: "
                              f"{tail(out)}") from None
        if not isinstance(data, dict):
            raise DeviceError("error", "`show runningconfiguration all` is not a JSON object")
        return data

    def running_frr(self) -> str:
        rc, out = self.sh(f"sudo -n cat {SONIC_FRR}", kind=None)
        if rc:
            raise DeviceError("error", f"cannot read {SONIC_FRR} (is the bgp container in "
                              f"split-unified mode?): {tail(out)}")
        return out + "\n" if out else ""

    def running(self) -> str:
        db, frr = self.running_db(), self.running_frr()
        self._fresh = (db, frr)
        return canonical_json(db) + f"--- {SONIC_FRR}\n" + frr

    @staticmethod
    def parse(config: str) -> dict[str, Any]:
        try:
            data = json.loads(config)
        except ValueError as exc:
            raise DeviceError("config", f"the rendered config_db.json is not JSON: {exc}") \
                from None
        if not isinstance(data, dict):
            raise DeviceError("config", "the rendered config_db.json is not a JSON object")
        return data

    def prepare(self, render: Render) -> Step:
        if render.frr is None:
            raise DeviceError("config", "no rendered frr.conf: bgpd (split-unified) would keep "
                              "its old configuration")
        want = self.parse(render.config)
        have, have_frr = self._take_fresh() or (self.running_db(), self.running_frr())
        candidate = cand.sonic_candidate(have, want)
        lost = cand.lost_management(cand.sonic_management(have, self.host),
                                    cand.sonic_management(candidate, self.host))
        if lost:
            raise refuse(lost)
        frr = cand.frr_candidate(have_frr, render.frr)
        self.candidate_db, self.candidate_frr = candidate, frr
        self.frr_changed = frr != have_frr
        owned_have = canonical_json(cand.sonic_owned(have, want))
        owned_want = canonical_json(cand.sonic_owned(candidate, want))
        diff = "\n".join(x for x in (
            unified(owned_have, owned_want, "device:running (show runningconfiguration all: "
                     "the tables fabgen owns)", "candidate:config_db.json (the render)"),
            unified(have_frr, frr, f"device:{SONIC_FRR} (the file bgpd loads)",
                     "candidate:frr.conf (the render + the device's own sections)"),
        ) if x)
        return Step("prepare", changed=owned_have != owned_want or self.frr_changed, diff=diff,
                    detail="local diff: computed by fabgen, not by the device")

    def discard(self) -> Step:
        self.cleanup()
        return Step("discard")

    def _restore_frr(self) -> str:
        return (f"sudo -n cp {self.frr_backup} {SONIC_FRR} && "
                "sudo -n systemctl restart bgp")

    def commit(self, render: Render, confirm_seconds: int) -> Step:
        self._fresh = None
        if self.candidate_db is None:
            self.prepare(render)
        assert self.candidate_db is not None
        self.upload({self.remote: canonical_json(self.candidate_db),
                     self.remote_frr: self.candidate_frr})
        self.sh(f"sudo -n config checkpoint {self.checkpoint}")
        self.checkpointed = True
        # The frr.conf restored on rollback, and the marker the confirm timer races for.
        self.sh(f"mkdir -p .fabgen && sudo -n cp {SONIC_FRR} {self.frr_backup} && "
                f": > {self.marker}")
        fire = (f"sleep {confirm_seconds}; mv {self.marker} .fabgen/expired-{self.run_id} "
                f"2>/dev/null && {{ sudo -n config rollback {self.checkpoint}; "
                f"{self._restore_frr()}; }}")
        _, out = self.sh(f"setsid nohup sh -c {shlex.quote(fire)} >/dev/null 2>&1 </dev/null "
                         "& echo __pid=$!")
        m = re.search(r"__pid=(\d+)", out)
        if m is None:
            raise DeviceError("error", f"could not start the confirm timer: {tail(out)}")
        self.timer_pid = int(m.group(1))
        self.committed = True  # from here on a rollback must restore the checkpoint
        self.sh(f"sudo -n cp {shlex.quote(self.remote_frr)} {SONIC_FRR}", kind="rejected")
        command = "config reload -y" if self.apply == "reload" else "config replace"
        self.sh(f"sudo -n {command} {shlex.quote(self.remote)}", kind="rejected",
                timeout=self.apply_timeout)
        if self.apply == "replace" and self.frr_changed:  # GCU restarts nothing
            self.sh("sudo -n systemctl restart bgp", kind="rejected", timeout=self.apply_timeout)
        return Step("commit", changed=True,
                    detail=f"`config {self.apply}` + frr.conf; fabgen confirm timer "
                           f"{confirm_seconds}s")

    def verify(self, render: Render) -> Step:
        want = self.parse(render.config)
        have = self.running_db()
        differences = _differences(cand.sonic_owned(want, want), cand.sonic_owned(have, want))
        if self.candidate_db is not None:
            kept = {t: r for t, r in self.candidate_db.items() if t not in want}
            differences += _differences(kept, have)
        if differences:
            raise DeviceError("verify", f"{len(differences)} field(s) of the candidate differ "
                              f"in the running config: {'; '.join(differences[:5])}")
        if self.candidate_frr and self.running_frr() != self.candidate_frr:
            raise DeviceError("verify", f"{SONIC_FRR} is not the candidate after the commit")
        # bgpd really loaded it: its running config has the rendered router and neighbours.
        _, frr_running = self.sh('sudo -n vtysh -c "show running-config"')
        wanted: list[str] = []
        for section in cand.cli_sections(render.frr or ""):
            if section[0].startswith("router bgp "):
                wanted += [section[0], *(x.strip() for x in section[1:] if " remote-as " in x)]
        missing = [x for x in wanted if x not in {y.strip() for y in frr_running.splitlines()}]
        if missing:
            raise DeviceError("verify", f"bgpd does not run the rendered frr.conf: "
                              f"{len(missing)} line(s) missing from `show running-config`: "
                              f"{'; '.join(missing[:5])}")
        return Step("verify")

    def _stop_timer(self) -> None:
        if self.timer_pid is not None:
            self.sh(f"kill -- -{self.timer_pid} 2>/dev/null || kill {self.timer_pid} "
                    "2>/dev/null; true", kind=None)
            self.timer_pid = None

    def confirm(self) -> Step:
        rc, _ = self.sh(f"mv {self.marker} .fabgen/confirmed-{self.run_id}", kind=None)
        if rc:
            raise DeviceError("confirm", "the confirm timer fired before confirmation: the "
                              f"device rolled back to checkpoint {self.checkpoint}")
        self._stop_timer()
        self.committed = False
        self.sh("sudo -n config save -y")
        self._tidy()
        return Step("confirm", changed=True, detail="confirmed, `config save -y`")

    def rollback(self) -> Step:
        if self.timer_pid is not None:
            # Take the marker first, so the timer cannot roll back a second time later.
            self.sh(f"mv {self.marker} .fabgen/rolled-back-{self.run_id} 2>/dev/null; true",
                    kind=None)
            self._stop_timer()
        if self.committed and self.checkpointed:
            self.sh(f"sudo -n config rollback {self.checkpoint}")
            self.sh(self._restore_frr(), timeout=self.apply_timeout)
            self.committed = False
            self._tidy()
            return Step("rollback", changed=True,
                        detail=f"`config rollback {self.checkpoint}`, frr.conf restored")
        self._tidy()
        return Step("rollback", detail="nothing was applied")

    def _tidy(self) -> None:
        if self.checkpointed:
            self.sh(f"sudo -n config delete-checkpoint {self.checkpoint}", kind=None)
            self.checkpointed = False
        self.cleanup(also=f".fabgen/*-{self.run_id}")

    def neighbours(self, render: Render) -> list[str]:
        return cand.bgp_neighbours(render.frr or "")

    def bgp_states(self) -> dict[str, str]:
        rc, out = self.sh('sudo -n vtysh -c "show ip bgp summary json"', kind=None)
        if rc:
            raise DeviceError("error", f"vtysh: {tail(out)}")
        try:
            return frr_peer_states(json.loads(out))
        except ValueError:
            return {}
