"""Fixtures of the Junos platform tests: the small QFX5240 fabric, rendered as Junos."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabgen import render
from fabgen.intent import load
from fabgen.targets.base import RenderContext

FABRIC = Path(__file__).with_name("fabric.yaml")


@pytest.fixture(scope="session")
def junos_ctx() -> RenderContext:
    return render.context(load(FABRIC).intent, FABRIC.parent)
