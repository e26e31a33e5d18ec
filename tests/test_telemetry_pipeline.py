"""The pieces every collector timeline runs through (tests/telemetry_timeline.py): the gnmic
model's rewrite of event attributes for starlark-go. The timelines themselves, each platform's
answers through its rendered collector into `promtool test rules`, are cases of the platform
contract (tests/platforms/contract.py: test_every_alert_fires_from_its_telemetry,
test_healthy_telemetry_is_silent; answers in tests/platforms/<os>/gnmi.py)."""

from __future__ import annotations

from tests import gnmic_model


def test_attribute_rewrite_touches_only_event_attributes() -> None:
    source = 'x = e.values.items()\ny = d.values()\ne.tags["a"] = t.name\nz = s.strip()\n'
    assert gnmic_model.rewrite_attributes(source) == (
        'x = e["values"].items()\ny = d.values()\ne["tags"]["a"] = t["name"]\n'
        'z = s.strip()\n')
