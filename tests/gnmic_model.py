"""gnmic as a test model: how a gNMI answer becomes events, the rendered event-starlark
processor run on them in the real Starlark interpreter (starlark-go, the Go implementation gnmic
embeds, through its PyPI bindings), and how the Prometheus output names the series.

Modelled on openconfig/gnmic at 597750387b51:
* pkg/formatters/event.go: ResponseToEventMsgs / updateToEvent. The event is named after the
  subscription; its tags are the path keys (`<elem>_<key>`, the elem without its module prefix),
  the prefix's target (`target`) and the meta tags (`source`: the target's name,
  `subscription-name`); its values are the JSON_IETF value flattened with `/` between keys
  (getValueFlat), under the path prefix + path without keys. A scalar JSON value keeps the path.
* pkg/formatters/event_starlark: `Event(name, timestamp, tags, values, deletes)`, attributes
  name / timestamp / tags / values / deletes, `apply(*events)` returning a list of events; the
  program is resolved with sets, global reassignment and recursion allowed. Values must be
  str, int (int64), float or bool and tags str (toValues / toTags), or the whole batch is lost.
* pkg/outputs/prometheus_output/prometheus_common.go: metric name = prefix _ event name _ value
  name, each with [^a-zA-Z0-9_]+ replaced by `_` (MetricName); labels = tags named by the base
  of the tag key, sanitised the same way (GetLabels); a value that is no number (toFloat) is
  dropped.

starlark-go's Python bindings cannot define a Go value with attributes, so gnmic's Event is
modelled as a Starlark dict: attribute access `x.name`, `.timestamp`, `.tags`, `.values`,
`.deletes` in the program is rewritten to `x["name"]`... (tokens only, `rewrite_attributes`),
and `Event`/`copy_event` are defined in Starlark before the program. Everything else is the
program as rendered, run by the real interpreter.
"""

from __future__ import annotations

import io
import json
import re
import tokenize
from typing import Any

import starlark_go

EVENT_ATTRIBUTES = ("name", "timestamp", "tags", "values", "deletes")
_NAME_RE = re.compile(r"[^a-zA-Z0-9_]+")
_PRELUDE = '''
def Event(name, timestamp=0, tags=None, values=None, deletes=None):
    return {"name": name, "timestamp": timestamp, "tags": dict(tags or {}),
            "values": dict(values or {}), "deletes": list(deletes or [])}


def copy_event(e):
    return {"name": e["name"], "timestamp": e["timestamp"], "tags": dict(e["tags"]),
            "values": dict(e["values"]), "deletes": []}
'''
INT64 = 2**63


def rewrite_attributes(source: str) -> str:
    """`x.values` -> `x["values"]` for gnmic's event attributes; a method call of the same
    name (`d.values()`) stays."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, int, str]] = []  # (row, start col, end col, text)
    for i, tok in enumerate(tokens[:-2]):
        nxt, after = tokens[i + 1], tokens[i + 2]
        if (tok.type == tokenize.OP and tok.string == "."
                and nxt.type == tokenize.NAME and nxt.string in EVENT_ATTRIBUTES
                and not (after.type == tokenize.OP and after.string == "(")):
            edits.append((tok.start[0], tok.start[1], nxt.end[1], f'["{nxt.string}"]'))
    for row, start, end, text in sorted(edits, reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:start] + text + line[end:]
    return "".join(lines)


class Processor:
    """One rendered event-starlark program, loaded once, applied to batches of events."""

    def __init__(self, source: str) -> None:
        starlark_go.configure_starlark(allow_set=True, allow_global_reassign=True,
                                       allow_recursion=True)
        self.star = starlark_go.Starlark()
        self.star.exec(_PRELUDE, filename="gnmic-builtins.star")
        self.star.exec(rewrite_attributes(source), filename="processor.star")

    def apply(self, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.star.set(fabgen_events=events)
        out = self.star.eval("apply(*fabgen_events)")
        assert isinstance(out, list), out
        for event in out:
            check_event(event)
        return out


def check_event(event: dict[str, Any]) -> None:
    """What gnmic's toTags / toValues accept; anything else loses the batch on a real gnmic."""
    assert isinstance(event["name"], str) and event["name"], event
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in event["tags"].items()), event
    for key, value in event["values"].items():
        assert isinstance(key, str), event
        assert isinstance(value, str | float | bool) or (
            isinstance(value, int) and -INT64 <= value < INT64), (key, value)


# --- answers to events ----------------------------------------------------------------------

def parse_path(path: str) -> list[tuple[str, dict[str, str]]]:
    """`/a/b[k=v][k2=v2]/c` -> [(a, {}), (b, {k: v, k2: v2}), (c, {})]; a key value may hold
    `/` (interface names do)."""
    elems: list[tuple[str, dict[str, str]]] = []
    i = 0
    text = path.strip("/")
    while i < len(text):
        name_end = i
        while name_end < len(text) and text[name_end] not in "/[":
            name_end += 1
        name, keys = text[i:name_end], {}
        i = name_end
        while i < len(text) and text[i] == "[":
            close = text.index("]", i)
            key, _, value = text[i + 1:close].partition("=")
            keys[key] = value
            i = close + 1
        elems.append((name, keys))
        i += 1  # the "/"
    return elems


def _path_tags(path: str) -> tuple[str, dict[str, str]]:
    """tagsFromGNMIPath: the path without keys, and `<elem>_<key>` tags."""
    names, tags = [], {}
    for name, keys in parse_path(path):
        names.append(name)
        for key, value in keys.items():
            tags[f"{name.split(':')[-1]}_{key}"] = value
    return "/" + "/".join(names), tags


def _flatten(prefix: str, value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, inner in value.items():
            out.update(_flatten(f"{prefix}/{key}", inner))
        return out
    return {prefix: True if value is None else value}


def event(subscription: str, target_db: str | None, path: str, value: Any, *,
          source: str, timestamp: int, event_tags: dict[str, str] | None = None
          ) -> dict[str, Any]:
    """The event gnmic makes of one update: `value` is the decoded JSON_IETF value."""
    name, tags = _path_tags(path)
    if target_db:  # sonic-gnmi answers with the request's prefix, target included
        tags["target"] = target_db
        tags["subscription-target"] = target_db
    tags.update({"source": source, "subscription-name": subscription, **(event_tags or {})})
    return {"name": subscription, "timestamp": timestamp, "tags": tags,
            "values": _flatten(name, json.loads(json.dumps(value))), "deletes": []}


# --- events to Prometheus series ------------------------------------------------------------

def _float(value: Any) -> float | None:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def series(events: list[dict[str, Any]], prefix: str) -> dict[str, float]:
    """{`name{label="v",...}` (labels sorted): value} of a batch of processed events."""
    out: dict[str, float] = {}
    for ev in events:
        labels: dict[str, str] = {}
        for key, value in ev["tags"].items():
            labels.setdefault(_NAME_RE.sub("_", key.rsplit("/", 1)[-1]), value)
        inner = ", ".join(f'{k}="{labels[k]}"' for k in sorted(labels))
        for key, value in ev["values"].items():
            number = _float(value)
            if number is None:
                continue
            metric = (f"{_NAME_RE.sub('_', prefix)}_"
                      f"{_NAME_RE.sub('_', ev['name']).rstrip('_')}_"
                      f"{_NAME_RE.sub('_', key).lstrip('_')}")
            out[f"{metric}{{{inner}}}"] = number
    return out


# --- loading a config: targets and the global flags they inherit -----------------------------
#
# openconfig/gnmic 597750387b51, pkg/config:
# * config.go Load (:330-370): viper with env prefix GNMIC, `/` and `-` replaced by `_`,
#   AutomaticEnv, so a global flag (docs/user_guide/configuration_env.md: --tls-ca is
#   GNMIC_TLS_CA, --username GNMIC_USERNAME...) comes from the environment or the file's top
#   level; then expandOSPathFlagValues (:1175) turns the global tls-ca/tls-cert/tls-key
#   (osPathFlags, :76) into absolute paths that must exist.
# * targets.go GetTargets (:31-125), per target, in this order: SetTargetConfigDefaults (the
#   global flags fill what the target lacks: username, password, insecure, skip-verify always;
#   tls-ca (when set globally), tls-cert, tls-key only when the target is not insecure),
#   expandCertPaths (:99, :240-263: the target's TLS files through expandOSPath), the password
#   read again as a string, expandTargetEnv (:111, :265: os.ExpandEnv on name, address,
#   username, tls files; on the password only when it starts with `$`).
# * config.go expandOSPath (:1147-1172): "" and "-" and URLs kept; `~` expanded; a relative
#   path joined to the working directory; os.Stat must succeed or the load fails.

GLOBAL_PATH_FLAGS = ("tls-ca", "tls-cert", "tls-key")
GLOBAL_FLAGS = ("username", "password", "insecure", "skip-verify", *GLOBAL_PATH_FLAGS)


class GnmicLoadError(Exception):
    """What gnmic prints before exiting: the config did not load."""


def _expand_os_path(path: str, cwd: str, exists: Any) -> str:
    if path in ("", "-") or path.startswith(("http://", "https://", "sftp://", "ftp://")):
        return path
    import os.path

    full = path if os.path.isabs(path) else os.path.join(cwd, path)
    if not exists(full):
        raise GnmicLoadError(f"stat {full}: no such file or directory")
    return full


def _expand_env(text: str, env: dict[str, str]) -> str:
    """Go's os.ExpandEnv: $VAR and ${VAR}, unset variables empty."""
    return re.sub(r"\$\{([^}]*)\}|\$([A-Za-z0-9_]+)",
                  lambda m: env.get(m.group(1) or m.group(2), ""), text)


def load_targets(config: dict[str, Any], env: dict[str, str], cwd: str,
                 exists: Any) -> dict[str, dict[str, Any]]:
    """The targets gnmic runs for `config` (a parsed gnmic YAML) with the environment `env`,
    run from `cwd`; `exists(path)` says whether a file exists. Raises GnmicLoadError where
    gnmic stops loading."""
    flags: dict[str, Any] = {"username": "", "password": "", "insecure": False,
                             "skip-verify": False, "tls-ca": "", "tls-cert": "",
                             "tls-key": ""}
    for flag in GLOBAL_FLAGS:
        var = "GNMIC_" + flag.upper().replace("-", "_")
        if var in env:
            value: Any = env[var]
            if flag in ("insecure", "skip-verify"):
                value = value.lower() in ("1", "t", "true")
            flags[flag] = value
        elif flag in config:
            flags[flag] = config[flag]
    for flag in GLOBAL_PATH_FLAGS:
        if flags[flag]:
            flags[flag] = _expand_os_path(flags[flag], cwd, exists)
    out = {}
    for name, spec in (config.get("targets") or {}).items():
        tc = dict(spec or {})
        tc.setdefault("name", name)
        tc.setdefault("address", name)
        for flag in ("username", "password", "insecure", "skip-verify"):
            tc.setdefault(flag, flags[flag])
        if not tc["insecure"]:
            if "tls-ca" not in tc and flags["tls-ca"]:
                tc["tls-ca"] = flags["tls-ca"]
            tc.setdefault("tls-cert", flags["tls-cert"])
            tc.setdefault("tls-key", flags["tls-key"])
            for key in GLOBAL_PATH_FLAGS:  # expandCertPaths, before any env expansion
                if tc.get(key):
                    tc[key] = _expand_os_path(tc[key], cwd, exists)
        for key in ("name", "address", "username", *GLOBAL_PATH_FLAGS):
            if key in tc and isinstance(tc[key], str):
                tc[key] = _expand_env(tc[key], env)
        if isinstance(tc["password"], str) and tc["password"].startswith("$"):
            tc["password"] = _expand_env(tc["password"], env)
        out[name] = tc
    return out
