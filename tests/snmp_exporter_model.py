"""Prometheus's snmp_exporter and the scrape job around it, as a test model: a walk of the
agent (`snmpwalk -On -Oe -Oq` lines) and the rendered module become the series Prometheus
stores, labelled by the rendered scrape job.

Modelled on prometheus/snmp_exporter at 1d54f35992fd (v0.30.1+), collector/collector.go:
pduToSamples (a `gauge` metric's value is the PDU's number; its labels are indexesToLabels of
the OID's suffix after the metric's OID), indexOidsAsString (`InetAddressIPv4`: four
sub-identifiers joined by dots); a gauge's enum_values name nothing in the sample. The scrape
side is Prometheus's: the static_configs' labels, `job` = job_name, and the relabel rules
(only the forms the rendered job uses: copy a source label, or set a replacement).
tests/test_frrlab.py runs the real snmp_exporter on a real walk and compares it with this.
"""

from __future__ import annotations

from typing import Any


def _index(oids: list[int], kind: str) -> str:
    if kind != "InetAddressIPv4":
        raise NotImplementedError(f"index type {kind} is not modelled")
    if len(oids) != 4:
        raise ValueError(f"an InetAddressIPv4 index has 4 sub-identifiers, not {oids}")
    return ".".join(str(o) for o in oids)


def exporter_samples(module: dict[str, Any], walk: str) -> dict[str, float]:
    """{`name{label="v"}`: value} the exporter serves for a walk, per the module's metrics."""
    out: dict[str, float] = {}
    for line in walk.splitlines():
        if not line.strip():
            continue
        oid, _, value = line.strip().partition(" ")
        for metric in module["metrics"]:
            prefix = "." + metric["oid"] + "."
            if not oid.startswith(prefix):
                continue
            assert metric["type"] == "gauge", metric
            rest = [int(x) for x in oid[len(prefix):].split(".")]
            labels = {}
            for index in metric.get("indexes", []):
                labels[index["labelname"]] = _index(rest[:4], index["type"])
                rest = rest[4:]
            inner = ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
            out[f"{metric['name']}{{{inner}}}"] = float(value)
    return out


def target_labels(job: dict[str, Any], target: str) -> dict[str, str]:
    """The labels Prometheus gives a target of the job after relabelling (the `__` ones
    dropped), `job` included."""
    labels: dict[str, str] = {"job": job["job_name"], "__address__": target}
    for group in job["static_configs"]:
        if target in group["targets"]:
            labels.update(group.get("labels", {}))
            break
    else:
        raise ValueError(f"{target} is not a target of {job['job_name']}")
    for rule in job["relabel_configs"]:
        if "source_labels" in rule:
            labels[rule["target_label"]] = ";".join(labels[s] for s in rule["source_labels"])
        else:
            labels[rule["target_label"]] = rule["replacement"]
    return {k: v for k, v in labels.items() if not k.startswith("__")}


def scrape(job: dict[str, Any], module: dict[str, Any], target: str,
           walk: str | None) -> dict[str, float]:
    """What Prometheus stores from one scrape of `target`: `up` (0 when the walk failed,
    None) and the exporter's samples with the target's labels."""
    labels = target_labels(job, target)

    def key(name: str, extra: dict[str, str]) -> str:
        merged = {**extra, **labels}
        return name + "{" + ", ".join(f'{k}="{merged[k]}"' for k in sorted(merged)) + "}"

    out = {key("up", {}): 0.0 if walk is None else 1.0}
    for sample, value in exporter_samples(module, walk or "").items():
        name, inner = sample.split("{", 1)
        extra = dict(part.split("=", 1) for part in inner.rstrip("}").split(", ") if part)
        out[key(name, {k: v.strip('"') for k, v in extra.items()})] = value
    return out
