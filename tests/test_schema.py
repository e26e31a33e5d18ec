"""The committed JSON Schema and the README's intent reference must match the models."""

from __future__ import annotations

import json

from fabgen.schema import reference_markdown, schema_text
from tests.conftest import INVENTORIES, ROOT


def test_committed_schema_is_fresh() -> None:
    committed = (ROOT / "schemas" / "fabgen-intent.schema.json").read_text(encoding="utf-8")
    assert committed == schema_text(), "run: fabgen schema > schemas/fabgen-intent.schema.json"


def test_schema_command_prints_it(cli) -> None:
    result = cli("schema")
    assert result.code == 0
    assert json.loads(result.out)["title"] == "fabgen intent"


def test_inventories_point_editors_at_the_schema() -> None:
    for intent in INVENTORIES:
        first = intent.read_text(encoding="utf-8").splitlines()[0]
        assert first == "# yaml-language-server: $schema=../schemas/fabgen-intent.schema.json"


def test_readme_reference_is_in_sync() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("<!-- intent-reference:start -->\n") + len(
        "<!-- intent-reference:start -->\n")
    end = readme.index("<!-- intent-reference:end -->")
    assert readme[start:end] == reference_markdown(), (
        "regenerate with: python -m fabgen.schema, and paste between the markers")
