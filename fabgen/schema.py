"""The intent's JSON Schema (committed under schemas/) and the README's intent reference."""

from __future__ import annotations

import json
from typing import Any

from fabgen.intent.models import Intent

SCHEMA_ID = "https://fabgen.invalid/schemas/fabgen-intent.schema.json"


def schema() -> dict[str, Any]:
    data = Intent.model_json_schema(mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **data}


def schema_text() -> str:
    return json.dumps(schema(), indent=2, sort_keys=True) + "\n"


def _type(prop: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in prop:
        return "object"
    if "enum" in prop:
        return " \\| ".join(f"`{v}`" for v in prop["enum"])
    if "const" in prop:
        return f"`{prop['const']}`"
    if "anyOf" in prop:
        parts = [_type(p, defs) for p in prop["anyOf"] if p.get("type") != "null"]
        return " or ".join(dict.fromkeys(parts))
    if prop.get("type") == "array":
        return f"list of {_type(prop.get('items', {}), defs)}"
    return str(prop.get("type", "string"))


def reference_markdown() -> str:
    """A table per section of the intent, generated from the schema (kept in sync by a test)."""
    root = schema()
    defs: dict[str, Any] = root.get("$defs", {})
    lines: list[str] = []

    def walk(obj: dict[str, Any], prefix: str) -> None:
        required = set(obj.get("required", []))
        for key, prop in obj.get("properties", {}).items():
            path = f"{prefix}{key}"
            ref = prop.get("$ref") or next((p.get("$ref") for p in prop.get("anyOf", [])
                                            if "$ref" in p), None)
            default = prop.get("default")
            shown = "required" if key in required else (
                "—" if default is None else f"`{json.dumps(default)}`")
            if ref and isinstance(default, dict):
                shown = "see below"
            desc = " ".join(str(prop.get("description", "")).split())
            lines.append(f"| `{path}` | {_type(prop, defs)} | {shown} | {desc} |")
            if ref:
                walk(defs[ref.split("/")[-1]], path + ".")
            items = prop.get("items", {})
            if "$ref" in items:
                walk(defs[items["$ref"].split("/")[-1]], path + "[].")

    walk(root, "")
    head = ["| key | type | default | meaning |", "|---|---|---|---|"]
    return "\n".join(head + lines) + "\n"


if __name__ == "__main__":
    print(reference_markdown(), end="")
