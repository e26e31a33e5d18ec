"""Junos's collector subscribes to paths Juniper publishes for Junos OS Evolved 23.4R2, and the
gNMI fixture its alert tests run on is data those models accept: checked by libyang against
Juniper's own OpenConfig modules and augments (Juniper/yang `23.4/23.4R2-EVO/openconfig`, found
beside $FABGEN_JUNOS_YANG's conf-and-rpcs; skipped without it), and against Juniper's deviation
module, which marks what Junos does not support."""

from __future__ import annotations

import json
import re
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from fabgen.platforms.junos import alerts, telemetry
from tests import telemetry_timeline
from tests.platforms.junos import yang

# Where a list's key leaf lives besides the entry (OpenConfig keys are leafrefs to it).
_KEY_HOME = {"interface": "config", "network-instance": "config", "protocol": "config",
             "neighbor": "config", "peer": "state"}
# Keys whose YANG type is a number (JSON_IETF writes uint32 as a number).
_NUMERIC_KEYS = {"priority", "queue-number"}
# The module each top-level container or augmenting node belongs to (JSON_IETF qualifies a
# node by its module where the module changes).
_MODULE = {"interfaces": "openconfig-interfaces", "ethernet": "openconfig-if-ethernet",
           "jnx-pfc-statistics": "jnx-aug-openconfig-interfaces",
           "out-queue": "jnx-aug-openconfig-interfaces",
           "network-instances": "openconfig-network-instance", "bfd": "openconfig-bfd"}
_TOP = {"interfaces", "network-instances", "bfd"}  # qualified only at the root
_IMPLEMENTED = ("openconfig-policy-types.yang", "jnx-aug-openconfig-interfaces.yang",
                "openconfig-network-instance.yang", "openconfig-bfd.yang")


def _version_root() -> Path:
    """Juniper/yang's 23.4R2-EVO directory (FABGEN_JUNOS_YANG names its conf-and-rpcs)."""
    root = yang.source().parents[1]
    if not (root / "openconfig" / "models" / "augments").is_dir():
        pytest.fail(f"{root} has no openconfig/models/augments (fetch Juniper/yang's whole "
                    "23.4/23.4R2-EVO directory)")
    return root


@cache
def _models(root: Path, out: Path) -> Path:
    """Juniper's OpenConfig modules, augments and the types they import, escaped as libyang
    needs (yang.escape_backslashes), in one search directory."""
    out.mkdir(parents=True, exist_ok=True)
    oc = root / "openconfig" / "models"
    sources = [*oc.glob("*.yang"), *(oc / "augments").glob("*.yang"),
               *(root / "ietf" / "models").glob("*.yang"),
               root / "native" / "jti" / "models" / "junos-yang-types.yang",
               root / "native" / "jti" / "models" / "junos-extension.yang"]
    for src in sources:
        (out / src.name).write_text(yang.escape_backslashes(src.read_text()))
    return out


def _segments(path: str) -> list[tuple[str, dict[str, str]]]:
    out = []
    for part in re.findall(r"[^/\[]+(?:\[[^\]]*\])*", path):
        name = part.split("[", 1)[0]
        keys = dict(re.findall(r"\[([^=\]]+)=([^\]]*)\]", part))
        out.append((name, keys))
    return out


def tree(updates: list[dict[str, str]]) -> dict[str, Any]:
    """Leaf-by-leaf gNMI updates as one JSON_IETF data tree (RFC 7951), list keys also where
    OpenConfig keeps them (config/ or state/)."""
    root: dict[str, Any] = {}
    for update in updates:
        node = root
        segments = _segments(update["path"])
        parent = ""
        for i, (name, keys) in enumerate(segments):
            module = _MODULE.get(name) if i == 0 or name not in _TOP else None
            field = f"{module}:{name}" if module and module != parent else name
            parent = module or parent
            if i == len(segments) - 1:
                node[field] = update["val"]
                break
            if not keys:
                node = node.setdefault(field, {})
                continue
            typed = {k: int(v) if k in _NUMERIC_KEYS else v for k, v in keys.items()}
            entries = node.setdefault(field, [])
            entry = next((e for e in entries if all(e.get(k) == v for k, v in typed.items())),
                         None)
            if entry is None:
                entry = dict(typed)
                if name in _KEY_HOME:
                    entry[_KEY_HOME[name]] = dict(typed)
                entries.append(entry)
            node = entry
    return root


def _yanglint(data: dict[str, Any], tmp: Path) -> subprocess.CompletedProcess[str]:
    """yanglint on a subscription's answers: a part of the tree, so read as a NETCONF <get>
    reply (every node must be in the models and every value of its type; the siblings a
    whole datastore must hold are not asked for)."""
    models = _models(_version_root(), tmp / "junos-oc")
    path = tmp / "data.json"
    path.write_text(json.dumps(data))
    return subprocess.run(["yanglint", "-i", "-p", str(models), "-t", "get",
                           *(str(models / m) for m in _IMPLEMENTED), str(path)],
                          capture_output=True, text=True, check=False)


def _fixture() -> list[dict[str, str]]:
    return list(telemetry_timeline.fixture("junos-openconfig-updates.json"))


def _bare(path: str) -> str:
    return "/" + "/".join(name for name, _ in _segments(path))


def test_fixture_is_data_of_junipers_models(tmp_path: Path) -> None:
    run = _yanglint(tree(_fixture()), tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]


@pytest.mark.parametrize(("old", "new", "complaint"), [
    ("in-mac-pause-frames", "in-pfc-frames", "in-pfc-frames"),   # a leaf Juniper has not
    ("out-queue", "queue", "queue"),                              # a list in the wrong place
])
def test_a_path_outside_the_models_is_refused(tmp_path: Path, old: str, new: str,
                                              complaint: str) -> None:
    updates = [{"path": u["path"].replace(old, new), "val": u["val"]} for u in _fixture()]
    run = _yanglint(tree(updates), tmp_path)
    assert run.returncode != 0 and complaint in run.stderr, run.stderr[-800:]


def test_a_wrongly_typed_value_is_refused(tmp_path: Path) -> None:
    updates = _fixture()
    i = next(i for i, u in enumerate(updates) if u["path"].endswith("in-mac-pause-frames"))
    updates[i] = {**updates[i], "val": "many"}
    run = _yanglint(tree(updates), tmp_path)
    assert run.returncode != 0 and "many" in run.stderr, run.stderr[-800:]


def test_every_subscription_has_fixture_leaves() -> None:
    leaves = {_bare(u["path"]) for u in _fixture()}
    for p in telemetry.PATHS:
        assert any(leaf == p.path or leaf.startswith(p.path + "/") for leaf in leaves), p.path


def not_supported(deviations: str) -> set[str]:
    """Targets (module prefixes dropped) of Juniper's `deviate not-supported` statements."""
    out = set()
    for m in re.finditer(r"\bdeviation\s+", deviations):
        start = deviations.index("{", m.end())
        target = re.sub(r'["+\s]', "", deviations[m.end():start])
        depth, end = 0, start
        while True:
            depth += {"{": 1, "}": -1}.get(deviations[end], 0)
            if depth == 0:
                break
            end += 1
        if re.search(r"\bdeviate\s+not-supported\b", deviations[start:end]):
            out.add("/" + "/".join(s.split(":")[-1] for s in target.strip("/").split("/")))
    return out


def test_no_subscribed_path_is_one_junos_does_not_support() -> None:
    dev = _version_root() / "openconfig" / "models" / "deviations" / "jnx-openconfig-dev.yang"
    unsupported = not_supported(dev.read_text())
    # The reader finds what Juniper marks (a known one), so an empty answer is no pass.
    assert "/interfaces/interface/ethernet/state/counters/in-symbol-error" in unsupported
    leaves = {_bare(u["path"]) for u in _fixture()} | {p.path for p in telemetry.PATHS}
    hit = sorted((leaf, t) for leaf in leaves for t in unsupported
                 if leaf == t or leaf.startswith(t + "/"))
    assert hit == []


def test_deviation_reader_on_a_small_module() -> None:
    text = ('deviation /oc-if:interfaces/oc-if:interface/oc-if:state/oc-if:a {\n'
            '  deviate not-supported;\n}\n'
            'deviation "/oc-if:interfaces/oc-if:interface/" +\n  "oc-if:state/oc-if:b" {\n'
            '  deviate replace { type string; }\n}\n'
            'deviation "/oc-qos:qos/oc-qos:config" {\n  description "x";\n'
            '  deviate not-supported;\n}\n')
    assert not_supported(text) == {"/interfaces/interface/state/a", "/qos/config"}


def test_what_has_no_path_is_said_not_alerted() -> None:
    """No rule watches a series Junos does not send, and the report says which."""
    import yaml

    from fabgen.targets import alerts as alert_rules
    from tests.platforms.contract import GOLDEN

    golden = GOLDEN / "roce-junos-sonic"
    groups = yaml.safe_load((golden / alert_rules.RULES).read_text())["groups"]
    junos = {r["alert"] for g in groups if g["name"].endswith("-junos") for r in g["rules"]}
    sonic = {r["alert"] for g in groups if g["name"].endswith("-sonic") for r in g["rules"]}
    assert {"PfcWatchdogTriggered", "EcnMarksOnNonRoceQueue"} <= sonic - junos
    assert alerts.UNALERTED in (golden / "report.md").read_text()


# --- zero suppression: why the config streams zero counters ---------------------------------

def _late_drops(suppressed: bool, counter: str = "tail-drop-pkts") -> dict[str, list[float]]:
    """A healthy fabric whose lossless queue on et-0/0/16:0 drops 5 packets at step 40 (long
    after the collector's first sync), with the Packet Forwarding Engine's zero suppression
    (every zero counter left out after the first sync) or without it."""
    from tests import telemetry_timeline as tl
    from tests.platforms.contract import GOLDEN
    from tests.platforms.junos import gnmi

    def updates(step: int, storm: bool) -> list[dict[str, str]]:
        out = []
        for u in gnmi.junos_updates(step, False):
            val = u["val"]
            if step >= 40 and "et-0/0/16:0]" in u["path"] and u["path"].endswith(
                    f"out-queue[queue-number=3]/{counter}"):
                val = "5"
            if not (suppressed and step > 0 and val == "0"):
                out.append({"path": u["path"], "val": val})
        return out

    return tl.openconfig_timeline(GOLDEN / gnmi.INVENTORY / telemetry.GNMIC_JUNOS,
                                  updates)(False)


def _drops_alert(timeline: dict[str, list[float]], tmp_path: Path,
                 *expected: dict[str, str]) -> None:
    from fabgen.targets import alerts as alert_rules
    from tests import telemetry_timeline as tl
    from tests.conftest import require_tool
    from tests.platforms.contract import GOLDEN
    from tests.platforms.junos import gnmi
    from tests.test_alerts import _alert, _run_tests

    require_tool("promtool")
    rules = tmp_path / "rules.yaml"
    rules.write_text((GOLDEN / gnmi.INVENTORY / alert_rules.RULES).read_text())
    _run_tests(rules, [{"interval": f"{tl.STEP_S}s",
                        "input_series": tl.promtool_series(timeline),
                        "alert_rule_test": [_alert("LosslessQueueDrops", "9m", *expected)]}])


def _labels(drop: str) -> dict[str, str]:
    return {"alertname": "LosslessQueueDrops", "drop": drop, "fabric": "roce-junos-sonic",
            "interface_name": "et-0/0/16:0", "platform": "junos", "queue": "3",
            "role": "leaf", "severity": "critical", "source": "leaf-su1-r0",
            "subscription_name": "queues"}


@pytest.mark.parametrize("statement_removed", [False, True])
def test_first_drops_alert_only_when_zeros_are_streamed(statement_removed: bool,
                                                         tmp_path: Path) -> None:
    """The rendered config turns zero suppression off; without that statement the switch
    suppresses zeros ("gNMI Subscription", facts.py [GNMI-SUB]) and the first drops of a queue
    that never dropped are missed."""
    from tests.platforms.contract import GOLDEN

    conf = (GOLDEN / "roce-junos-sonic" / "junos" / "leaf-su1-r0.conf").read_text()
    if statement_removed:
        conf = conf.replace("no-zero-suppression;", "")
    suppressed = "no-zero-suppression;" not in conf
    assert suppressed is statement_removed  # the render carries the statement
    timeline = _late_drops(suppressed)
    _drops_alert(timeline, tmp_path, *(() if suppressed else (_labels("tail"),)))


def test_wred_drops_on_the_lossless_queue_alert(tmp_path: Path) -> None:
    """The lossless queue's ECN drop profile drops what it cannot mark (a sender that is not
    ECN-capable): red-drop-pkts alerts as well, labelled drop=red."""
    _drops_alert(_late_drops(False, "red-drop-pkts"), tmp_path, _labels("red"))
