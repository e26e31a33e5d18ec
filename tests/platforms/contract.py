"""The shared per-platform test contract (napalm's pattern): every registered platform runs these
cases through its own Harness (tests/platforms/<os>/test_contract.py is a subclass naming
it); a platform's own test files only add what is particular to it.

`PlatformContract` has no `Test` prefix, so pytest collects only the subclasses. Each case uses
the smallest fabric that exercises it: the examples' golden renders (which tests/test_golden.py
holds equal to a fresh render), test_push's tiny lab with its fake devices, and synthetic
saved outputs and telemetry series shaped as the platform prints and exports them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import paramiko
import pytest
import yaml

from fabgen import catalog, qos
from fabgen.catalog.ports import native_lanes
from fabgen.intent import load
from fabgen.platforms.registry import facts as facts_registry
from fabgen.platforms.registry import outputs as outputs_registry
from fabgen.platforms.registry import push as push_registry
from fabgen.targets import alerts
from fabgen.topology.build import build
from fabgen.verify.check import verify_switch
from fabgen.verify.expect import ExpectedSwitch, expected_switches
from tests.conftest import ROOT, require_tool

GOLDEN = ROOT / "golden"
INVENTORIES = ROOT / "inventories"

# A lab of test_push: (leaf platform of the tiny fabric, device of this platform in it).
LabSpec = tuple[str, str]
# Saved outputs of one switch as its collect script saves them: (switch, plan) -> files.
SavedOutputs = Callable[[ExpectedSwitch, Any], dict[str, str]]


# alert -> (metric, labels that pick the faulted series, extra alert labels, when it fires)
Fires = Mapping[str, tuple[str, Mapping[str, str], Mapping[str, str], str]]


@dataclass(frozen=True)
class AlertTimeline:
    """A platform's telemetry as its server sends it, through its rendered collector."""

    inventory: str  # the example whose golden render's collector and rules are used
    # storm? -> {series: value per step}: a PFC storm with every fault its alerts know, or a
    # healthy fabric (tests/telemetry_timeline.py runs the collector)
    timeline: Callable[[bool], dict[str, list[float]]]
    fires: Fires  # every alert of its rule group, and where the storm must fire it


@dataclass(frozen=True)
class Harness:
    """What a platform plugs into the contract."""

    platform: str
    # The OS's own validator of one switch's rendered files ({path: text}) -> problems; None
    # when no validator CI can run exists (the case skips with `no_validator`).
    validate: Callable[[Mapping[str, str], Path], list[str]] | None = None
    no_validator: str = ""
    # Where its fake device runs in test_push's lab; None: it has no push face.
    lab: LabSpec | None = None
    # A lab of its own instead (tmp dir -> an object with test_push.Lab's start, state,
    # render(bad=), push and close, plus fail_bgp, user and password), for a fake device
    # test_push does not run.
    make_lab: Callable[[Path], Any] | None = None
    # Problems with the device's own (management) config after a commit, given its state
    # before and after: [] when everything a push must keep is kept.
    management_kept: Callable[[Any, str, dict[str, str]], list[str]] | None = None
    # Its saved outputs for `fabgen verify` of a healthy switch; None: another tool verifies.
    saved_outputs: SavedOutputs | None = None
    # An inventory using the platform with a switch and port whose telemetry the alert cases
    # use, and the labels its collector gives every series (besides device and port).
    telemetry_fixture: tuple[str, str, str] | None = None
    # An intent using the platform, for the verify cases when no example inventory does.
    fixture_intent: Path | None = None
    extra_labels: Mapping[str, str] = field(default_factory=dict)
    # Its telemetry server's answers through its collector (tests/platforms/<os>/gnmi.py);
    # None: `no_alert_timeline` says why, and only the synthetic storm case runs.
    alert_timeline: AlertTimeline | None = None
    no_alert_timeline: str = ""


def _intent_platforms(path: Path) -> set[str]:
    data = yaml.safe_load(path.read_text())
    named = set((data.get("platforms") or {}).values()) - {None}
    if data.get("fabric", {}).get("transport", "roce") != "roce":
        return set()
    return named or {facts_registry.DEFAULT}


def examples_using(platform: str) -> list[str]:
    return [p.stem for p in sorted(INVENTORIES.glob("*.yaml"))
            if platform in _intent_platforms(p)]


@cache
def _fabric(inventory: str | Path) -> Any:
    path = inventory if isinstance(inventory, Path) else INVENTORIES / f"{inventory}.yaml"
    intent = load(path).intent
    return intent, build(intent), qos.plan(intent)


def _switches_of(inventory: str, platform: str) -> list[Any]:
    return [s for s in _fabric(inventory)[1].switches if s.platform == platform]


class PlatformContract:
    """Every case reads `self.harness`."""

    harness: Harness

    # --- registration ---------------------------------------------------------------------

    def test_registered_in_every_face(self) -> None:
        name = self.harness.platform
        facts = facts_registry.get(name)
        assert facts.name == name and name in facts.words
        assert name in facts_registry.INTENT_NAMES
        assert outputs_registry.get(name).facts is facts
        if self.harness.lab is not None:
            assert push_registry.get(name).facts is facts

    def test_every_device_file_has_a_name_for_diff(self) -> None:
        """`fabgen diff` names a device's files where it has several (a copy of the render's
        folder as backups holds every rendering): each device kind needs its name."""
        if self.harness.platform not in push_registry.names():
            pytest.skip(f"{self.harness.platform} has no push face")
        face = push_registry.get(self.harness.platform)
        device_kinds = {k.name for k in face.kinds if k.device}
        assert device_kinds <= set(face.config_names), device_kinds - set(face.config_names)

    # --- rendering ------------------------------------------------------------------------

    def test_renders_every_example_that_uses_it(self) -> None:
        name = self.harness.platform
        used = examples_using(name)
        if not used:
            pytest.skip(f"no example inventory uses {name}")
        face = push_registry.get(name) if name in push_registry.names() else None
        for inventory in used:
            root = GOLDEN / inventory
            for sw in _switches_of(inventory, name):
                if face is not None:
                    for path in (face.config_path, *face.extra_paths.values()):
                        assert (root / path.format(name=sw.name)).is_file(), (inventory, path)
                else:
                    assert any((root / name).glob(f"**/{sw.name}*")), (inventory, sw.name)

    def test_configs_pass_the_os_validator(self, tmp_path: Path) -> None:
        h = self.harness
        if h.validate is None:
            pytest.skip(f"{h.platform}: {h.no_validator}")
        for inventory in examples_using(h.platform):
            seen_roles: set[str] = set()
            for sw in _switches_of(inventory, h.platform):
                if sw.role in seen_roles:
                    continue
                seen_roles.add(sw.role)
                root = GOLDEN / inventory
                files = {p.relative_to(root).as_posix(): p.read_text()
                         for p in root.rglob("*") if (p.is_file() and sw.name in p.parts)
                         or (p.is_file() and p.name.startswith(sw.name + "."))}
                assert files, (inventory, sw.name)
                problems = h.validate(files, tmp_path)
                assert problems == [], (inventory, sw.name, problems)

    def test_port_names_are_unique_on_its_hardware(self) -> None:
        facts = facts_registry.get(self.harness.platform)
        models = [m for m in catalog.switches().values()
                  if m.transport == "ethernet" and m.vendor in facts.runs_on.vendors]
        assert models, "no catalog switch it runs on"
        for model in models:
            for split in (1, *(b.count for b in model.breakouts)):
                names = [facts.port_name(p, split, native_lanes(model.key))
                         for p in range(1, model.cages * split + 1)]
                assert len(set(names)) == len(names), (model.key, split)

    def test_mtu_above_its_maximum_is_refused_at_the_field(self, tmp_path: Path) -> None:
        facts = facts_registry.get(self.harness.platform)
        inventory = (examples_using(self.harness.platform) or ["roce-256-sonic"])[0]
        data = yaml.safe_load((INVENTORIES / f"{inventory}.yaml").read_text())
        data["platforms"] = {role: self.harness.platform
                             for role in (data.get("platforms") or {"leaf": None})}
        data.setdefault("qos", {})["mtu"] = facts.capabilities.max_mtu + 2
        data["qos"]["host_mtu"] = min(data["qos"].get("host_mtu", 9000),
                                      facts.capabilities.max_mtu - 200)
        path = tmp_path / "too-big.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        from fabgen.errors import FabgenError

        with pytest.raises(FabgenError) as err:
            load(path)
        text = str(err.value)
        assert "qos.mtu" in text or "mtu" in text, text
        assert str(facts.capabilities.max_mtu) in text, text

    # --- push, against its fake device ----------------------------------------------------

    def _lab(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
        from tests import test_push

        if self.harness.lab is None:
            pytest.skip(f"{self.harness.platform} has no push face")
        if self.harness.make_lab is not None:
            monkeypatch.chdir(tmp_path)
            own = self.harness.make_lab(tmp_path)
            monkeypatch.setenv("FABGEN_USERNAME", own.user)
            monkeypatch.setenv("FABGEN_PASSWORD", own.password)
            try:
                yield own
            finally:
                own.close()
            return
        for var in ("FABGEN_SONIC_PASSWORD", "FABGEN_EOS_PASSWORD", "FABGEN_NVUE_PASSWORD"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("FABGEN_USERNAME", test_push.USER)
        monkeypatch.setenv("FABGEN_PASSWORD", test_push.PASSWORD)
        monkeypatch.chdir(tmp_path)
        lab = test_push.Lab(tmp_path, _key(), leaf=self.harness.lab[0])
        try:
            yield lab
        finally:
            lab.close()

    @pytest.fixture
    def lab(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
        yield from self._lab(tmp_path, monkeypatch)

    def test_dry_run_changes_nothing(self, lab: Any) -> None:
        name = self._device()
        lab.start(name)
        before = lab.state(name)
        dev = _by_name(lab.push(devices=name))[name]
        face = push_registry.get(self.harness.platform)
        assert (dev.status, dev.diff_source) == ("would-change", face.driver.diff_source)
        assert dev.diff
        assert lab.state(name) == before

    def test_commit_confirm_keeps_management(self, lab: Any) -> None:
        name = self._device()
        lab.start(name)
        before = lab.state(name)
        dev = _by_name(lab.push(devices=name, commit=True, confirm_timeout=60))[name]
        assert dev.status == "committed", dev.error
        assert [s.name for s in dev.steps][-2:] == ["health", "confirm"]
        assert self.harness.management_kept is not None
        assert self.harness.management_kept(lab, name, before) == []
        again = _by_name(lab.push(devices=name))[name]
        assert again.status == "unchanged", again.diff  # the render is live

    def test_rejected_config_changes_nothing(self, lab: Any) -> None:
        name = self._device()
        lab.render(bad=(name,))
        lab.start(name)
        before = lab.state(name)
        dev = _by_name(lab.push(devices=name, commit=True, confirm_timeout=60))[name]
        assert dev.status == "failed" and dev.error_kind in ("rejected", "verify", "commit"), \
            (dev.status, dev.error_kind, dev.error)
        assert _settled(lab, name) == _settled_state(before)

    def test_failed_health_rolls_back(self, lab: Any) -> None:
        name = self._device()
        lab.start(name)
        if not _can_fail_bgp(lab, name):
            pytest.skip(f"the fake {self.harness.platform} device has no BGP-down switch")
        before = lab.state(name)
        dev = _by_name(lab.push(devices=name, commit=True, confirm_timeout=60,
                                health_timeout=1))[name]
        assert (dev.status, dev.error_kind, dev.rolled_back) == ("failed", "health", True)
        assert _settled(lab, name) == _settled_state(before)

    def _device(self) -> str:
        assert self.harness.lab is not None
        return self.harness.lab[1]

    # --- verify on saved outputs ----------------------------------------------------------

    def _saved_case(self) -> tuple[ExpectedSwitch, Any, dict[str, str]]:
        h = self.harness
        outputs = outputs_registry.get(h.platform)
        if h.saved_outputs is None:
            assert outputs.verified_by, "neither saved outputs nor another verifier"
            pytest.skip(f"{h.platform} is verified by {outputs.verified_by}")
        used = examples_using(h.platform)
        assert used or h.fixture_intent is not None, "no intent uses the platform"
        intent, fabric, plan = _fabric(used[0] if used else h.fixture_intent)
        from fabgen.topology.index import FabricIndex

        sw = next(s for s in expected_switches(FabricIndex(fabric), plan,
                                               platforms=(h.platform,)))
        return sw, (intent, plan), h.saved_outputs(sw, plan)

    def test_healthy_saved_outputs_pass(self) -> None:
        sw, (intent, plan), files = self._saved_case()
        from fabgen import underlay

        found = verify_switch(sw, files.get, plan, intent.monitoring,
                              bfd=underlay.plan(intent).bfd)
        assert found == [], [f.message for f in found]

    def test_a_missing_output_and_a_lost_session_are_reported(self) -> None:
        sw, (intent, plan), files = self._saved_case()
        from fabgen import underlay

        saved = outputs_registry.get(self.harness.platform).saved
        dropped = next(f.name for f in saved if f.name != "bgp.json" and not f.bfd_only)
        files = {k: v for k, v in files.items() if k != dropped}
        peer = sw.sessions[0].peer_ip
        files["bgp.json"] = files["bgp.json"].replace('"Established"', '"Active"', 1)
        found = verify_switch(sw, files.get, plan, intent.monitoring,
                              bfd=underlay.plan(intent).bfd)
        assert any(f.check == "outputs" and dropped in f.expected + f.actual for f in found), \
            [f.message for f in found]
        assert any(f.check == "bgp" and f.port == peer and f.actual == "Active" for f in found)

    # --- alerts from its telemetry ---------------------------------------------------------

    def test_pfc_storm_fires_and_calm_stays_silent(self, tmp_path: Path) -> None:
        h = self.harness
        outputs = outputs_registry.get(h.platform)
        sig = outputs.signals
        if sig is None or h.telemetry_fixture is None:
            pytest.skip(f"{h.platform} exports no PFC series to alert on")
        require_tool("promtool")
        inventory, switch, port = h.telemetry_fixture
        rules = tmp_path / "rules.yaml"
        rules.write_text((GOLDEN / inventory / alerts.RULES).read_text())
        _, fabric, plan = _fabric(inventory)
        prio = str(plan.rdma.priority)
        labels = {sig.device: switch, sig.port: port, **h.extra_labels}
        if sig.fabric_label:
            labels["fabric"] = fabric.name
        storm, calm = _series(sig.pfc_rx, prio, labels, "0+200000x60"), \
            _series(sig.pfc_rx, prio, {**labels, sig.port: port + "x"}, "0+10x60")
        expected = {k: v for k, v in storm_labels(storm).items()}
        expected.update({"fabric": fabric.name, "platform": h.platform, "severity": "critical"})
        from tests.test_alerts import _run_tests

        # promtool compares every firing alert's labels and annotations: the storm fires on
        # exactly that port, the calm port (a tenth of a frame per second) stays silent.
        _run_tests(rules, [{"interval": "10s", "input_series": [storm, calm],
                            "alert_rule_test": [{"eval_time": "3m", "alertname": "PfcStorm",
                                                 "exp_alerts": [{"exp_labels": expected}]}]}])


    def _timeline_group(self) -> tuple[AlertTimeline, str, dict[str, Any]]:
        h = self.harness
        if h.alert_timeline is None:
            assert h.no_alert_timeline, "an alert timeline or the reason there is none"
            pytest.skip(f"{h.platform}: {h.no_alert_timeline}")
        require_tool("promtool")
        text = (GOLDEN / h.alert_timeline.inventory / alerts.RULES).read_text()
        groups = [g for g in yaml.safe_load(text)["groups"]
                  if g["name"].endswith(f"-{h.platform}")]
        assert len(groups) == 1, [g["name"] for g in groups]
        return h.alert_timeline, text, groups[0]

    def test_every_alert_has_a_case_in_its_timeline(self) -> None:
        t, _, group = self._timeline_group()
        assert sorted(r["alert"] for r in group["rules"]) == sorted(t.fires)

    def test_every_alert_fires_from_its_telemetry(self, tmp_path: Path) -> None:
        """Each alert of its group fires on the faulted series, from answers shaped as its
        server sends them, with the labels its collector gives (one promtool run)."""
        t, text, group = self._timeline_group()
        from tests import telemetry_timeline
        from tests.test_alerts import _alert, _run_tests

        storm = t.timeline(True)
        checks = []
        for rule in group["rules"]:
            metric, pick, extra, at = t.fires[rule["alert"]]
            matches = [telemetry_timeline.labels(k) for k in storm if k.startswith(metric + "{")
                       and pick.items() <= telemetry_timeline.labels(k).items()]
            assert len(matches) == 1, (rule["alert"], metric, pick, matches)
            checks.append(_alert(rule["alert"], at, {**matches[0], **extra, **rule["labels"]}))
        rules = tmp_path / "rules.yaml"
        rules.write_text(text)
        _run_tests(rules, [{"interval": f"{telemetry_timeline.STEP_S}s",
                            "input_series": telemetry_timeline.promtool_series(storm),
                            "alert_rule_test": checks}])

    def test_healthy_telemetry_is_silent(self, tmp_path: Path) -> None:
        t, text, group = self._timeline_group()
        from tests import telemetry_timeline
        from tests.test_alerts import _alert, _run_tests

        rules = tmp_path / "rules.yaml"
        rules.write_text(text)
        checks = [_alert(r["alert"], at) for r in group["rules"] for at in ("3m", "7m", "10m")]
        _run_tests(rules, [{"interval": f"{telemetry_timeline.STEP_S}s",
                            "input_series": telemetry_timeline.promtool_series(
                                t.timeline(False)),
                            "alert_rule_test": checks}])


def _series(selector: str, prio: str, labels: Mapping[str, str], values: str) -> dict[str, str]:
    """A series the selector matches: its metric name and equality matchers, plus `labels`."""
    text = selector.replace("{q}", prio).replace("{f, ", "{").replace("{f}", "")
    name, _, rest = text.partition("{")
    matchers = dict(re.findall(r'(\w+)="([^"]*)"', rest))
    inner = ", ".join(f'{k}="{v}"' for k, v in {**matchers, **labels}.items())
    return {"series": f"{name}{{{inner}}}", "values": values}


def storm_labels(series: Mapping[str, str]) -> dict[str, str]:
    return dict(re.findall(r'(\w+)="([^"]*)"', series["series"]))


@cache
def _key() -> paramiko.PKey:
    return paramiko.RSAKey.generate(2048)


def _by_name(report: Any) -> dict[str, Any]:
    return {d.name: d for d in report.devices}


def _settled_state(state: Mapping[str, str]) -> dict[str, str]:
    # A checkpoint file fabgen's own rollback timer leaves behind is not the config.
    return {k: v for k, v in state.items() if not k.startswith(".fake/checkpoints/")}


def _settled(lab: Any, name: str) -> dict[str, str]:
    return _settled_state(lab.state(name))


def _can_fail_bgp(lab: Any, name: str) -> bool:
    if hasattr(lab, "fail_bgp"):
        return bool(lab.fail_bgp(name))
    if name in getattr(lab, "eos", {}):
        return False
    lab.linux(name).bgp_down()
    return True
