"""Files shipped inside the package (templates, example intents, the intent's JSON Schema).

They are found with importlib.resources, never beside the source tree, so a wheel, `pipx
install` or an editable checkout all read the same files. In the repository, fabgen/templates,
fabgen/examples and fabgen/schemas are symlinks to the top-level templates/, inventories/ and
schemas/ (the source of truth); the wheel build copies what they point at (pyproject.toml).
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable

SCHEMA_FILE = "fabgen-intent.schema.json"
DEFAULT_EXAMPLE = "roce-256-sonic"


def package() -> Traversable:
    return files("fabgen")


def templates() -> Traversable:
    return package() / "templates"


def schema() -> Traversable:
    return package() / "schemas" / SCHEMA_FILE


@cache
def examples() -> dict[str, Traversable]:
    """The example intents by name (file stem), sorted."""
    found = {p.name.removesuffix(".yaml"): p for p in (package() / "examples").iterdir()
             if p.name.endswith(".yaml") and p.is_file()}
    return dict(sorted(found.items()))


def example_summary(name: str) -> str:
    """The example's `description:` line, for `fabgen init --help` (no YAML parse needed)."""
    for line in examples()[name].read_text(encoding="utf-8").splitlines():
        if line.startswith("description:"):
            return line.split(":", 1)[1].strip().strip("'\"")
    return ""
