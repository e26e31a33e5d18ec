"""Every Junos configuration fabgen writes is valid Junos OS Evolved 23.4R2 configuration by
Juniper's own YANG, checked by libyang (yanglint), unknown statements included; and the step
that makes Juniper's files loadable by libyang does only what it must."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fabgen.platforms.junos import config, text
from fabgen.targets.base import RenderContext
from tests.conftest import require_tool
from tests.platforms.junos import yang


def test_escape_doubles_only_what_yang_refuses() -> None:
    src = ('pattern "\\*";\n'            # the published form: refused by libyang
           'description "a\\nb \\"q\\" c\\\\d";\n'  # allowed escapes stay
           "pattern '\\*';\n"            # single quotes: no escapes in YANG, kept
           '// comment "\\*"\n'          # comments kept
           '/* block "\\d" */ x "\\d";\n')
    assert yang.escape_backslashes(src) == (
        'pattern "\\\\*";\n'
        'description "a\\nb \\"q\\" c\\\\d";\n'
        "pattern '\\*';\n"
        '// comment "\\*"\n'
        '/* block "\\d" */ x "\\\\d";\n')


def test_escape_is_idempotent_on_clean_text() -> None:
    clean = 'module m { leaf a { type string { pattern "\\\\*"; } } }'
    assert yang.escape_backslashes(clean) == clean


def test_libyang_refuses_the_published_form_and_takes_the_escaped_one(tmp_path: Path) -> None:
    require_tool("yanglint")
    module = ('module t { namespace "urn:t"; prefix t; '
              'leaf a { type string { pattern "\\*"; } } }\n')
    raw = tmp_path / "raw" / "t.yang"
    fixed = tmp_path / "fixed" / "t.yang"
    raw.parent.mkdir()
    fixed.parent.mkdir()
    raw.write_text(module)
    fixed.write_text(yang.escape_backslashes(module))
    refused = subprocess.run(["yanglint", str(raw)], capture_output=True, text=True)
    assert refused.returncode != 0 and "\\*" in refused.stderr
    data = tmp_path / "d.json"
    for value, ok in (("*", True), ("x", False)):
        data.write_text(json.dumps({"t:a": value}))
        run = subprocess.run(["yanglint", "-t", "config", str(fixed), str(data)],
                             capture_output=True, text=True)
        assert (run.returncode == 0) is ok, run.stderr


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ...]:
    return yang.prepared(yang.source(), tmp_path_factory.mktemp("junos-yang"))


def _yanglint(models: tuple[Path, ...], data: dict[str, Any], path: Path) -> \
        subprocess.CompletedProcess[str]:
    path.write_text(json.dumps(data))
    return subprocess.run(["yanglint", "-p", str(models[0].parent), "-t", "config",
                           *map(str, models), str(path)], capture_output=True, text=True)


def test_every_role_validates(junos_ctx: RenderContext, models: tuple[Path, ...],
                              tmp_path: Path) -> None:
    roles = {s.role: s for s in junos_ctx.fabric.switches}
    assert set(roles) == {"leaf", "spine"}
    for switch in roles.values():
        cfg = config.device_config(junos_ctx, switch)
        run = _yanglint(models, json.loads(text.json_text(cfg)), tmp_path / f"{switch.name}.json")
        assert run.returncode == 0, f"{switch.name}: {run.stderr}"


@pytest.mark.parametrize("section, key, value, message", [
    ("junos-conf-system:system", "no-such-statement", 1, "not found"),
    ("junos-conf-class-of-service:class-of-service", "shared-buffer",
     {"ingress": {"percent": 10}}, "not found"),  # 23.4X100 syntax, not 23.4R2's
    ("junos-conf-routing-options:routing-options", "maximum-ecmp", "48", "Invalid"),
])
def test_what_the_schema_refuses_is_an_error(junos_ctx: RenderContext, models: tuple[Path, ...],
                                             tmp_path: Path, section: str, key: str,
                                             value: Any, message: str) -> None:
    """Guards against a check that passes everything: unknown statements, a release's
    statements the schema lacks and values outside an enumeration all fail."""
    switch = junos_ctx.fabric.switches[0]
    cfg = json.loads(text.json_text(config.device_config(junos_ctx, switch)))
    cfg[config.ROOT][section][key] = value
    run = _yanglint(models, cfg, tmp_path / "bad.json")
    assert run.returncode != 0 and message in run.stderr, run.stderr


def test_every_junos_config_of_the_example_validates(models: tuple[Path, ...],
                                                      tmp_path: Path) -> None:
    """Issue 32's bar: each QFX5240's JSON in golden/roce-junos-sonic (what tests/test_golden
    holds equal to a fresh render) is valid 23.4R2-EVO configuration."""
    from tests.conftest import GOLDEN

    configs = sorted((GOLDEN / "roce-junos-sonic" / "junos").glob("*.json"))
    assert len(configs) == 8  # the example's eight leaves
    run = subprocess.run(["yanglint", "-p", str(models[0].parent), "-t", "config",
                          *map(str, models), *map(str, configs)], capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
