"""Timelines of telemetry answers (a PFC storm with every fault the alerts know, and a healthy
fabric) fed through a rendered collector: each gNMI answer becomes gnmic's event
(tests/gnmic_model.py), the rendered event-starlark processor runs on it in starlark-go, and
the Prometheus output's series are collected step by step into promtool input series (SNMP
walks likewise through tests/snmp_exporter_model.py).

What each platform's server answers lives with the platform (tests/platforms/<os>/gnmi.py,
from the fixtures in tests/fixtures/gnmi); the platform contract runs its alerts on them."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests import gnmic_model, snmp_exporter_model

FIXTURES = Path(__file__).parent / "fixtures" / "gnmi"
STEP_S = 10  # gnmic samples every 10 s (fabgen.platforms.common.gnmic.SAMPLE_INTERVAL)
STEPS = 61  # 10 minutes

Answer = dict[str, Any]


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def add(fields: dict[str, str], field: str, amount: int) -> None:
    fields[field] = str(int(fields[field]) + amount)


# --- OpenConfig servers answer leaf by leaf ---------------------------------------------------

def openconfig_faults(path: str, val: str, step: int, storm: bool, first: bool,
                      peer: str = "10.254.0.0") -> str | None:
    """The storm's faults on the OpenConfig leaves every OpenConfig platform streams: the BGP
    session to `peer` and the first port's BFD session down from step 20, the first port up
    at 200G, every other port flapping four times in its first 80 s. None: not faulted."""
    if not storm:
        return None
    if step >= 20 and f"neighbor-address={peer}" in path:
        return "ACTIVE"
    if step >= 20 and first and path.startswith("/bfd/"):
        return "DOWN"
    if first and path.endswith("port-speed"):
        return "openconfig-if-ethernet:SPEED_200GB"
    if not first and path.endswith("carrier-transitions"):
        return str(int(val) + min(step, 8))
    if not first and path.endswith("oper-status") and step < 8:
        return "DOWN" if step % 2 else "UP"
    return None


def openconfig_timeline(config: Path, updates: Callable[[int, bool], list[dict[str, str]]]
                        ) -> Callable[[bool], dict[str, list[float]]]:
    """storm? -> {series: value per step} of a server answering leaf by leaf (`updates` at a
    step) through the rendered gnmic config at `config`; each timeline is built once."""
    def events(cfg: dict[str, Any], step: int, storm: bool) -> list[dict[str, Any]]:
        return openconfig_events(cfg, updates(step, storm), step)

    @functools.cache
    def timeline(storm: bool) -> dict[str, list[float]]:
        return run(config.read_text(), events, storm)
    return timeline


def openconfig_events(config: dict[str, Any], updates: list[dict[str, str]],
                      step: int) -> list[dict[str, Any]]:
    """One event per leaf-by-leaf update of leaf-su1-r0, named after the subscription whose
    path the update is under."""
    subs = {p: name for name, sub in config["subscriptions"].items() for p in sub["paths"]}
    target = "leaf-su1-r0"
    tags = config["targets"][target]["event-tags"]
    out = []
    for update in updates:
        bare, _ = gnmic_model._path_tags(update["path"])
        name = next(n for p, n in subs.items() if bare == p or bare.startswith(p + "/"))
        value = json.loads(json.dumps(update["val"]))
        out.append(gnmic_model.event(name, None, update["path"], value, source=target,
                                     timestamp=step * STEP_S * 10**9, event_tags=tags))
    return out


# --- through the collector into series ------------------------------------------------------

def run(config_text: str, events_at: Callable[[dict[str, Any], int, bool], list[dict[str, Any]]],
        storm: bool) -> dict[str, list[float]]:
    """{series: value per step} of a timeline through the rendered gnmic config."""
    config = yaml.safe_load(config_text)
    (output,) = config["outputs"].values()
    (processor_name,) = output["event-processors"]
    processor = gnmic_model.Processor(
        config["processors"][processor_name]["event-starlark"]["source"])
    timeline: dict[str, list[float]] = {}
    for step in range(STEPS):
        got = gnmic_model.series(processor.apply(events_at(config, step, storm)),
                                 output["metric-prefix"])
        for key, value in got.items():
            timeline.setdefault(key, [float("nan")] * step).append(value)
        for values in timeline.values():
            if len(values) < step + 1:
                values.append(float("nan"))
    return timeline


def promtool_series(timeline: dict[str, list[float]]) -> list[dict[str, str]]:
    """promtool input_series; a step with no sample is `_`."""
    def text(v: float) -> str:
        if v != v:
            return "_"
        return str(int(v)) if v.is_integer() else repr(v)
    return [{"series": key, "values": " ".join(text(v) for v in values)}
            for key, values in sorted(timeline.items())]


def labels(key: str) -> dict[str, str]:
    """The labels of a series key `name{a="b", ...}`."""
    inner = key[key.index("{") + 1:-1]
    out = {}
    for part in inner.split('", '):
        k, _, v = part.partition('="')
        out[k] = v.rstrip('"')
    return out


def run_snmp(exporter_text: str, scrape_text: str,
             walks_at: Callable[[int, bool], dict[str, str | None]],
             storm: bool) -> dict[str, list[float]]:
    """{series: value per step} Prometheus stores from the rendered snmp_exporter module and
    scrape job (tests/snmp_exporter_model.py), given what each switch's snmpd answers at a
    step (None: no answer)."""
    (job,) = yaml.safe_load(scrape_text)["scrape_configs"]
    (module,) = yaml.safe_load(exporter_text)["modules"].values()
    timeline: dict[str, list[float]] = {}
    for step in range(STEPS):
        for target, walk in walks_at(step, storm).items():
            for key, value in snmp_exporter_model.scrape(job, module, target, walk).items():
                timeline.setdefault(key, [float("nan")] * step).append(value)
        for values in timeline.values():
            if len(values) < step + 1:
                values.append(float("nan"))
    return timeline
