"""MTU defaults fitted to the fabric's platforms; an explicit MTU a platform cannot take stays
an error."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fabgen import qos
from fabgen.errors import FabgenError
from fabgen.intent import load
from fabgen.render import render

BASE = """\
name: t
fabric: {transport: roce, speed: 400G}
cluster:
  nodes: 16
  node: {model: hgx-h100, gpus: 8, nics: 8, nic: connectx-7, nic_ports: 1}
topology:
  leaf: {model: LEAF}
  spine: {model: SPINE}
"""


def intent(tmp_path: Path, platforms: str, qos_yaml: str = "", leaf: str = "sn5600",
           spine: str | None = None) -> Path:
    """Spines of the leaf's model unless given (an EOS spine must be an Arista switch)."""
    path = tmp_path / "t.yaml"
    path.write_text(BASE.replace("LEAF", leaf).replace("SPINE", spine or leaf)
                    + f"platforms: {platforms}\n" + qos_yaml)
    return path


def test_platform_maxima_are_the_vendors() -> None:
    """sonic-port.yang `mtu` range ends at 9216; Cumulus Linux takes 9216; EOS routed ports
    9214 (the sources named in qos.CAPABILITIES)."""
    assert {p: qos.CAPABILITIES[p].max_mtu for p in ("sonic", "nvue", "eos")} == \
        {"sonic": 9216, "nvue": 9216, "eos": 9214}  # a newer platform pins its own


@pytest.mark.parametrize(("platforms", "leaf", "spine", "mtu"), [
    ("{leaf: eos}", "7060x6-64pe", None, 9214),  # all EOS: was refused, "9216 is above ... eos"
    ("{leaf: eos, spine: nvue}", "7060x6-64pe", "sn5600", 9214),  # the lowest of those used
    ("{leaf: sonic}", "sn5600", None, 9216),
    ("{leaf: nvue, spine: sonic}", "sn5600", None, 9216),
])
def test_mtu_default_is_the_lowest_platform_maximum(tmp_path: Path, platforms: str, leaf: str,
                                                    spine: str | None, mtu: int) -> None:
    loaded = load(intent(tmp_path, platforms, leaf=leaf, spine=spine))
    plan = qos.plan(loaded.intent)
    assert (plan.mtu, plan.host_mtu) == (mtu, 9000)
    files = render(loaded, only=["report", "resolved"])
    resolved = yaml.safe_load(files["intent.resolved.yaml"])
    assert (resolved["qos"]["mtu"], resolved["qos"]["host_mtu"]) == (mtu, 9000)
    note = next(x for x in files["report.md"].splitlines() if x.startswith("- MTU:"))
    assert f"switch ports {mtu}, host netdevs 9000" in note
    assert f"qos.mtu not set: {mtu}, the largest every switch platform" in note
    assert "qos.host_mtu not set: 9000, which fits inside the switch MTU" in note


def test_eos_fabric_renders_the_default_mtu_on_every_port(tmp_path: Path) -> None:
    loaded = load(intent(tmp_path, "{leaf: eos}", leaf="7060x6-64pe"))
    configs = [t for p, t in render(loaded, only=["eos"]).items() if p.endswith(".cfg")]
    mtus = {line.strip() for text in configs for line in text.splitlines()
            if line.strip().startswith("mtu ")}
    assert configs and mtus == {"mtu 9214"}


def test_given_mtu_is_kept_and_host_mtu_follows_it_down(tmp_path: Path) -> None:
    plan = qos.plan(load(intent(tmp_path, "{leaf: sonic}", "qos: {mtu: 4200}\n")).intent)
    assert (plan.mtu, plan.host_mtu) == (4200, 4200)
    assert plan.mtu_note == "qos.host_mtu not set: 4200, the switch MTU, as 9000 does not fit " \
        "inside it"
    both = qos.plan(load(intent(tmp_path, "{leaf: sonic}",
                                "qos: {mtu: 9100, host_mtu: 9000}\n")).intent)
    assert (both.mtu, both.host_mtu, both.mtu_note) == (9100, 9000, "")


@pytest.mark.parametrize(("qos_yaml", "expected"), [
    ("qos: {mtu: 9216}\n",
     "t.yaml:10:12: qos.mtu: MTU 9216 is above what eos supports (9214)"),
    ("qos: {host_mtu: 9216}\n",
     "t.yaml:10:17: qos.host_mtu: host MTU 9216 exceeds the switch MTU 9214"),
])
def test_explicit_mtu_too_large_stays_an_error(tmp_path: Path, qos_yaml: str,
                                               expected: str) -> None:
    with pytest.raises(FabgenError) as exc:
        load(intent(tmp_path, "{leaf: eos}", qos_yaml, leaf="7060x6-64pe"))
    rendered = [d.render() for d in exc.value.diagnostics]
    assert len(rendered) == 1 and rendered[0].startswith(f"{tmp_path}/{expected}"), rendered
