"""SONiC: config_db.json (BGP included) and golden_config_db.json uploaded, `config reload` or
`config replace`, a confirm timer run by fabgen on the device (SONiC has no commit-confirm)."""

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


SONIC_GOLDEN = "/etc/sonic/golden_config_db.json"
# The bgp container's frr.conf: in unified mode it writes it from CONFIG_DB at every start, so a
# push that switches a split-unified device over keeps the old file to roll back to.
SONIC_FRR = "/etc/sonic/frr/frr.conf"
# The DEVICE_METADATA fields that pick which daemons the bgp container runs: a change of them
# only takes effect when the container restarts.
ROUTING_FIELDS = ("docker_routing_config_mode", "frr_mgmt_framework_config")


def golden_candidate(have: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
    """The device's golden_config_db.json with DEVICE_METADATA|localhost as it will run (its
    other tables and any other DEVICE_METADATA keys kept)."""
    out = {t: rows for t, rows in have.items() if t != "DEVICE_METADATA"}
    meta = dict(have.get("DEVICE_METADATA") or {})
    meta["localhost"] = dict(metadata)
    out["DEVICE_METADATA"] = meta
    return dict(sorted(out.items()))


def bgp_lines(config: dict[str, Any]) -> list[str]:
    """What bgpd must run for a rendered config_db: its `router bgp` and one `remote-as` line
    per BGP_NEIGHBOR (frrcfgd's templates print them so: fabgen.targets.sonic_frr)."""
    glob = (config.get("BGP_GLOBALS") or {}).get("default") or {}
    lines = [f"router bgp {glob['local_asn']}"] if "local_asn" in glob else []
    for key, fields in sorted((config.get("BGP_NEIGHBOR") or {}).items()):
        if "|" in key and "asn" in fields:
            lines.append(f"neighbor {key.split('|', 1)[1]} remote-as {fields['asn']}")
    return lines


def hwsku_refusal(have: str, want: str) -> str:
    """Why a push to a switch of another HwSKU is refused, and the ways SONiC changes a SKU."""
    return (f"the switch runs HwSKU {have}, the render is for {want}: its PORT, buffer and QoS "
            f"tables are {want}'s and would be written onto {have}'s port layout (SONiC finds "
            "the port table, SAI profile and buffer templates in device/<platform>/<hwsku>/ by "
            "DEVICE_METADATA hwsku). Refused, nothing was applied. To change the SKU: on the "
            f"switch `sudo sonic-cfggen -H -k {want} --preset t1 > /tmp/{want}.json` (the "
            "factory default config-setup makes for a SKU, files/image_config/config-setup) "
            f"and `sudo config reload -y /tmp/{want}.json`, then push again; or push with "
            "--sonic-change-hwsku, which writes the render's hwsku with `config reload` (every "
            "container restarts and reads the new SKU's files). Either way check `show "
            "platform summary` and `show interfaces status` afterwards; a SKU whose port "
            "split needs an ASIC reset may need `sudo reboot`.")


def _bfd_wanted(config: dict[str, Any]) -> bool:
    return any(v.get("bfd") == "true" for v in (config.get("BGP_PEER_GROUP") or {}).values())


class SonicDriver(LinuxDriver):
    """netmiko `linux` to SONiC: upload config_db.json and golden_config_db.json (candidates
    built from the device's own), `config checkpoint`, `config reload -y` (replace; restarts
    services) or `config replace` (GCU), read back, `config save -y`.

    BGP is in config_db.json (fabgen.targets.sonic_bgp): with frr_mgmt_framework_config true
    and docker_routing_config_mode unified the bgp container renders FRR's config from CONFIG_DB
    when it starts, runs bfdd, and frrcfgd applies later CONFIG_DB changes, so `config replace`
    changes BGP live. Switching a device into that mode (from split-unified or bgpcfgd) needs
    the container to restart: `config reload` restarts every service (sonic-utilities
    config/main.py `reload` -> `_restart_services`); with `config replace` fabgen runs
    `systemctl restart bgp` when those fields change. /etc/sonic/golden_config_db.json gets the
    device's DEVICE_METADATA as it will run, so db_migrator (config reload, image upgrades) keeps
    the routing mode where a minigraph.xml exists; the previous file is kept on the device and
    restored with the checkpoint on rollback, and so is /etc/sonic/frr/frr.conf, which the
    container rewrites from CONFIG_DB once it runs frrcfgd. The diff is LOCAL: fabgen compares
    the tables it owns in `show runningconfiguration all` and the golden file with the
    candidates. After the commit fabgen checks that bgpd runs the rendered router and
    neighbours and that bfdd answers.

    SONiC has no commit-confirm. fabgen arms its own timer *on the device* before applying: a
    detached `sleep N; config rollback <checkpoint>` (and golden file restore) that fires unless
    confirm() defuses it, so a push that cuts fabgen off the device still reverts. Defusing and
    firing race on one atomic rename, so exactly one of them wins.
    """

    platform = "sonic"
    diff_source = "local"
    confirm_by = "fabgen"
    connection_platform = "linux"
    filename = "config_db.json"
    summary = ("replace: upload config_db.json (BGP included; the running tables fabgen does not "
               "own kept) and golden_config_db.json (the routing mode kept through db_migrator), "
               "`config checkpoint`, `config {apply}`; diff LOCAL (fabgen compares the tables it "
               "owns in `show runningconfiguration all` and the golden file with the "
               "candidates); commit-confirm by fabgen (a timer on the device that runs `config "
               "rollback` and restores the golden file unless confirmed)")

    def __init__(self, conn: Any, run_id: str, timeout: float,
                 apply_timeout: float | None = None, apply: str = "reload",
                 host: str | None = None, change_hwsku: bool = False) -> None:
        super().__init__(conn, run_id, timeout, apply_timeout, host)
        self.apply = apply
        self.change_hwsku = change_hwsku
        self.hwsku_change: tuple[str, str] | None = None
        self.checkpoint = f"fabgen-{run_id}"
        self.marker = f".fabgen/pending-{run_id}"
        self.golden_backup = f".fabgen/golden-before-{run_id}"
        self.frr_backup = f".fabgen/frr-before-{run_id}"
        self.remote_golden = f"fabgen-{run_id}-golden_config_db.json"
        self.timer_pid: int | None = None
        self.checkpointed = False
        self.mode_changed = False
        self.candidate_db: dict[str, Any] | None = None
        self.candidate_golden: dict[str, Any] | None = None

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

    def running_golden(self) -> dict[str, Any]:
        """The device's golden_config_db.json ({} when there is none)."""
        rc, out = self.sh(f"sudo -n test -e {SONIC_GOLDEN} && sudo -n cat {SONIC_GOLDEN}",
                          kind=None)
        if rc or not out.strip():
            return {}
        try:
            data = json.loads(out)
        except ValueError:
            raise DeviceError("error", f"{SONIC_GOLDEN} on the device is not JSON: "
                              f"{tail(out)}") from None
        return data if isinstance(data, dict) else {}

    def running(self) -> str:
        db, golden = self.running_db(), self.running_golden()
        self._fresh = (db, golden)
        return canonical_json(db) + f"--- {SONIC_GOLDEN}\n" + canonical_json(golden)

    @staticmethod
    def parse(config: str, what: str = "config_db.json") -> dict[str, Any]:
        try:
            data = json.loads(config)
        except ValueError as exc:
            raise DeviceError("config", f"the rendered {what} is not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise DeviceError("config", f"the rendered {what} is not a JSON object")
        return data

    def prepare(self, render: Render) -> Step:
        if render.golden is None:
            raise DeviceError("config", "no rendered golden_config_db.json: db_migrator would "
                              "reset the routing mode where the switch has a minigraph.xml")
        want = self.parse(render.config)
        self.parse(render.golden, "golden_config_db.json")
        have, have_golden = self._take_fresh() or (self.running_db(), self.running_golden())
        mismatch = cand.hwsku_mismatch(have, want)
        if mismatch is not None and not self.change_hwsku:
            raise DeviceError("refused", hwsku_refusal(*mismatch))
        if mismatch is not None and self.apply != "reload":
            raise DeviceError("refused", "a HwSKU change needs `config reload` (--sonic-apply "
                              "reload): the containers read the SKU's files when they start")
        candidate = cand.sonic_candidate(have, want, change_hwsku=mismatch is not None)
        self.hwsku_change = mismatch
        lost = cand.lost_management(cand.sonic_management(have, self.host),
                                    cand.sonic_management(candidate, self.host))
        if lost:
            raise refuse(lost)
        metadata = (candidate.get("DEVICE_METADATA") or {}).get("localhost") or {}
        golden = golden_candidate(have_golden, metadata)
        before = (have.get("DEVICE_METADATA") or {}).get("localhost") or {}
        self.mode_changed = any(before.get(f) != metadata.get(f) for f in ROUTING_FIELDS)
        self.candidate_db, self.candidate_golden = candidate, golden
        owned_have = canonical_json(cand.sonic_owned(have, want))
        owned_want = canonical_json(cand.sonic_owned(candidate, want))
        golden_have, golden_want = canonical_json(have_golden), canonical_json(golden)
        diff = "\n".join(x for x in (
            unified(owned_have, owned_want, "device:running (show runningconfiguration all: "
                     "the tables fabgen owns)", "candidate:config_db.json (the render)"),
            unified(golden_have, golden_want, f"device:{SONIC_GOLDEN}",
                     "candidate:golden_config_db.json (the device's + DEVICE_METADATA)"),
        ) if x)
        detail = "local diff: computed by fabgen, not by the device"
        if mismatch is not None:
            detail += f"; HwSKU {mismatch[0]} -> {mismatch[1]} (--sonic-change-hwsku)"
        return Step("prepare", changed=owned_have != owned_want or golden_have != golden_want
                    or mismatch is not None, diff=diff, detail=detail)

    def discard(self) -> Step:
        self.cleanup()
        return Step("discard")

    def _restore(self) -> str:
        """Shell: the golden file as it was, and the bgp container's daemons as they were."""
        restore = (f"if [ -e {self.golden_backup} ]; then sudo -n cp {self.golden_backup} "
                   f"{SONIC_GOLDEN}; else sudo -n rm -f {SONIC_GOLDEN}; fi")
        if self.mode_changed:
            restore += (f"; if [ -e {self.frr_backup} ]; then sudo -n cp {self.frr_backup} "
                        f"{SONIC_FRR}; fi; sudo -n systemctl restart bgp")
        return restore

    def commit(self, render: Render, confirm_seconds: int) -> Step:
        self._fresh = None
        if self.candidate_db is None:
            self.prepare(render)
        assert self.candidate_db is not None and self.candidate_golden is not None
        self.upload({self.remote: canonical_json(self.candidate_db),
                     self.remote_golden: canonical_json(self.candidate_golden)})
        self.sh(f"sudo -n config checkpoint {self.checkpoint}")
        self.checkpointed = True
        # The golden file restored on rollback (none: removed), and the marker the timer races.
        self.sh(f"mkdir -p .fabgen && {{ if sudo -n test -e {SONIC_GOLDEN}; then sudo -n cp "
                f"{SONIC_GOLDEN} {self.golden_backup}; fi; if sudo -n test -e {SONIC_FRR}; then "
                f"sudo -n cp {SONIC_FRR} {self.frr_backup}; fi; }} && : > {self.marker}")
        fire = (f"sleep {confirm_seconds}; mv {self.marker} .fabgen/expired-{self.run_id} "
                f"2>/dev/null && {{ sudo -n config rollback {self.checkpoint}; "
                f"{self._restore()}; }}")
        _, out = self.sh(f"setsid nohup sh -c {shlex.quote(fire)} >/dev/null 2>&1 </dev/null "
                         "& echo __pid=$!")
        m = re.search(r"__pid=(\d+)", out)
        if m is None:
            raise DeviceError("error", f"could not start the confirm timer: {tail(out)}")
        self.timer_pid = int(m.group(1))
        self.committed = True  # from here on a rollback must restore the checkpoint
        self.sh(f"sudo -n cp {shlex.quote(self.remote_golden)} {SONIC_GOLDEN}", kind="rejected")
        command = "config reload -y" if self.apply == "reload" else "config replace"
        self.sh(f"sudo -n {command} {shlex.quote(self.remote)}", kind="rejected",
                timeout=self.apply_timeout)
        if self.apply == "replace" and self.mode_changed:  # GCU restarts nothing
            self.sh("sudo -n systemctl restart bgp", kind="rejected", timeout=self.apply_timeout)
        return Step("commit", changed=True,
                    detail=f"`config {self.apply}` + golden_config_db.json; fabgen confirm timer "
                           f"{confirm_seconds}s")

    def verify(self, render: Render) -> Step:
        want = self.parse(render.config)
        have = self.running_db()
        differences = _differences(cand.sonic_owned(want, want), cand.sonic_owned(have, want))
        if self.candidate_db is not None:
            kept = {t: r for t, r in self.candidate_db.items() if t not in want}
            differences += _differences(kept, have)
        if self.hwsku_change is not None and cand.hwsku_mismatch(have, want) is not None:
            differences.append(f"DEVICE_METADATA|localhost|hwsku: not {self.hwsku_change[1]}")
        if differences:
            raise DeviceError("verify", f"{len(differences)} field(s) of the candidate differ "
                              f"in the running config: {'; '.join(differences[:5])}")
        if self.candidate_golden is not None and self.running_golden() != self.candidate_golden:
            raise DeviceError("verify", f"{SONIC_GOLDEN} is not the candidate after the commit")
        # bgpd really runs CONFIG_DB's BGP (frrcfgd, not an old frr.conf or bgpcfgd's).
        _, frr_running = self.sh('sudo -n vtysh -c "show running-config"')
        lines = {y.strip() for y in frr_running.splitlines()}
        missing = [x for x in bgp_lines(want) if x not in lines]
        if missing:
            raise DeviceError("verify", f"bgpd does not run config_db.json's BGP: {len(missing)} "
                              f"line(s) missing from `show running-config`: "
                              f"{'; '.join(missing[:5])}")
        if _bfd_wanted(want):
            rc, out = self.sh('sudo -n vtysh -c "show bfd peers json"', kind=None)
            try:
                peers = json.loads(out) if not rc else None
            except ValueError:
                peers = None
            if not isinstance(peers, list):
                raise DeviceError("verify", "bfdd does not answer `show bfd peers json` (is "
                                  f"frr_mgmt_framework_config in effect?): {tail(out)}")
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
            self.sh(self._restore(), timeout=self.apply_timeout)
            self.committed = False
            self._tidy()
            return Step("rollback", changed=True,
                        detail=f"`config rollback {self.checkpoint}`, golden file restored")
        self._tidy()
        return Step("rollback", detail="nothing was applied")

    def _tidy(self) -> None:
        if self.checkpointed:
            self.sh(f"sudo -n config delete-checkpoint {self.checkpoint}", kind=None)
            self.checkpointed = False
        self.cleanup(also=f".fabgen/*-{self.run_id}")

    def neighbours(self, render: Render) -> list[str]:
        try:
            config = self.parse(render.config)
        except DeviceError:
            return []
        return [k.split("|", 1)[1] for k in sorted(config.get("BGP_NEIGHBOR") or {})
                if "|" in k]

    def bgp_states(self) -> dict[str, str]:
        rc, out = self.sh('sudo -n vtysh -c "show ip bgp summary json"', kind=None)
        if rc:
            raise DeviceError("error", f"vtysh: {tail(out)}")
        try:
            return frr_peer_states(json.loads(out))
        except ValueError:
            return {}
