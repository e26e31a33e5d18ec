"""What every gnmic collector fabgen writes shares: a target entry (its event tags name the
fabric, role and platform of the switch), no credentials or TLS files (the collector's
environment holds them), the sampling interval, Starlark literals for the processors, and the
YAML text with its usage header."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import yaml

from fabgen.natural import natural_key
from fabgen.topology.model import Fabric, Switch

__all__ = ["SAMPLE_INTERVAL", "collector_yaml", "gnmic_target", "starlark"]

# Counters are sampled every 10 s by every collector: the slowest default counter poll of the
# platforms (each platform's telemetry module cites its own), so a faster sample would repeat
# values; rates over 1 m then have 6 points.
SAMPLE_INTERVAL = "10s"


class _Dumper(yaml.SafeDumper):
    """Multi-line strings (the processors' Starlark programs) as literal blocks, readable and
    diffable as the program text."""


def _str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = "|" if "\n" in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _str)


def collector_yaml(data: Any, usage: str, env: str = "") -> str:
    """A collector's config as YAML, under a header saying how to run it and what it
    reads from its environment."""
    head = f"# fabgen: {usage}\n"
    if env:
        head += "".join(f"# {line}\n" for line in textwrap.wrap(env, 96))
    return head + yaml.dump(data, Dumper=_Dumper, sort_keys=True, default_flow_style=False,
                            width=100)


def gnmic_target(fabric: Fabric, sw: Switch, port: int, tls: dict[str, Any]) -> dict[str, Any]:
    """One switch as a gnmic target, keyed by its name."""
    # The target's key is its name: gnmic labels every metric with it (`source`), and the
    # alert rules name the switch by that label.
    return {"address": f"{sw.name}:{port}", **tls,
            "event-tags": {"fabric": fabric.name, "role": sw.role, "platform": sw.platform}}


# TLS and credentials: none in the file. gnmic loads a target's tls-ca/tls-cert/tls-key as
# paths *before* it expands environment variables in them (openconfig/gnmic 597750387b51
# pkg/config/targets.go GetTargets: expandCertPaths at :99, expandTargetEnv at :111;
# expandOSPath, config.go:1147-1172, joins a relative path to the working directory and stats
# it), so a target key `tls-ca: ${GNMIC_TLS_CA}` makes the whole config fail to load. The
# collector's environment sets gnmic's global flags instead (GNMIC_TLS_CA, GNMIC_TLS_CERT,
# GNMIC_TLS_KEY, GNMIC_USERNAME, GNMIC_PASSWORD: docs/user_guide/configuration_env.md), and
# every target without its own value inherits them (setTargetConfigDefaultsFromGlobalFlags:
# username and password always, the TLS files when the target is not insecure).
# `skip-verify: false`: the switch's certificate is checked against GNMIC_TLS_CA.


def starlark(value: Any) -> str:
    """A Starlark literal of strings, dicts and lists (JSON's spelling is Starlark's), keys in
    natural order, one entry a line."""
    def ordered(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: ordered(v[k]) for k in sorted(v, key=natural_key)}
        return v
    return json.dumps(ordered(value), indent=4)
