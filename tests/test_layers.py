"""fabgen's imports follow the layer table of docs/architecture.md, with no circles."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import ROOT
from tests.import_graph import (
    Layer,
    imports,
    layer_of,
    modules,
    problems,
    read_layers,
)

DOC = ROOT / "docs" / "architecture.md"

# Imports that break the rules today, each with the work that removes it. When that work
# lands, test_known_exceptions_are_still_needed fails until the line is deleted here.
# (The last one, targets.opensm -> verify_cabling, went when the ibnetdiscover format became
# one module, fabgen.targets.ibnetdiscover, that both import: issue 17.)
KNOWN_EXCEPTIONS: set[tuple[str, str]] = set()


def _layers() -> list[Layer]:
    return read_layers(DOC.read_text(encoding="utf-8"))


def _platforms() -> tuple[str, ...]:
    """The names `{os}` stands for in the table: the registered platforms."""
    from fabgen.platforms.registry import facts

    return facts.names()


def _layer_name(module: str) -> str | None:
    layer = layer_of(module, _layers(), _platforms())
    return layer.name if layer else None


def test_fabgen_imports_follow_the_layers_without_circles() -> None:
    assert problems(modules(ROOT, "fabgen"), _layers(), KNOWN_EXCEPTIONS, _platforms()) == []


# Issue 17: a module past this is doing more than one thing; split it by responsibility
# (docs/architecture.md, "Who owns what", says where each part goes), as cli/ and
# intent/models/ were. Not a style limit: a module this long is one a maintainer cannot read
# whole.
MAX_MODULE_LINES = 700


def test_no_module_is_over_700_lines() -> None:
    found = modules(ROOT, "fabgen")
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines())
             for name, path in found.items()}
    assert len(sizes) > 50 and max(sizes.values()) > 300  # the tree was read
    over = {name: lines for name, lines in sizes.items() if lines > MAX_MODULE_LINES}
    assert not over, f"split these by responsibility: {over}"


def test_known_exceptions_are_still_needed() -> None:
    edges = {(i.importer, i.imported) for i in imports(modules(ROOT, "fabgen"))}
    stale = sorted(KNOWN_EXCEPTIONS - edges)
    assert not stale, f"no longer imported, delete from KNOWN_EXCEPTIONS: {stale}"


def test_the_table_is_read_and_the_graph_is_real() -> None:
    """Guards against a check that passes because it reads nothing."""
    layers = _layers()
    assert [layer.name for layer in layers][:5] == [
        "foundation", "intent and catalog", "topology", "qos", "intent loading"]
    assert [layer.number for layer in layers] == list(range(1, len(layers) + 1))
    known = modules(ROOT, "fabgen")
    assert len(known) > 50
    edges = {(i.importer, i.imported, i.kind) for i in imports(known)}
    assert ("fabgen.topology.build", "fabgen.intent.names", "module") in edges
    assert ("fabgen.cli.intent_commands", "fabgen.render", "module") in edges
    assert ("fabgen.targets.report", "fabgen.whatif", "deferred") in edges
    assert ("fabgen.intent", "fabgen.intent.loader", "typing") in edges
    assert _layer_name("fabgen.intent.models") == "intent and catalog"
    assert _layer_name("fabgen.intent.loader") == "intent loading"
    assert _layer_name("fabgen.intent") == "intent loading"
    assert _layer_name("fabgen.catalog.ports") == "topology"
    assert _layer_name("fabgen") == "foundation"
    assert _layer_name("fabgen.nowhere") is None  # `fabgen` alone is not a wildcard


def _package(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return modules(tmp_path, "pkg")


TOY_DOC = """
## Layers

| # | layer | modules | owns |
|---|---|---|---|
| 1 | low | `pkg` `pkg.low` `pkg.sub.base` | |
| 2 | high | `pkg.high` `pkg.sub.*` | |

## Next
"""


def test_a_lower_layer_importing_a_higher_one_fails(tmp_path: Path) -> None:
    known = _package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low.py": "from typing import TYPE_CHECKING\n"
                      "if TYPE_CHECKING:\n    from pkg.high import thing\n",
        "pkg/high.py": "thing = 1\n",
    })
    assert problems(known, read_layers(TOY_DOC)) == [
        "pkg.low:3 (1 low) imports pkg.high (2 high), a higher layer"]
    (tmp_path / "pkg" / "high.py").write_text("from pkg import low\nthing = 1\n")
    assert problems(known, read_layers(TOY_DOC))[1:] == ["import circle: pkg.high <-> pkg.low"]


def test_a_circle_hidden_in_a_function_fails(tmp_path: Path) -> None:
    known = _package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low.py": "",
        "pkg/high.py": "from pkg.sub import other\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/other.py": "def late():\n    from pkg import high\n",
    })
    assert problems(known, read_layers(TOY_DOC)) == [
        "import circle: pkg.high <-> pkg.sub.other"]
    assert problems(known, read_layers(TOY_DOC), {("pkg.sub.other", "pkg.high")}) == []


def test_a_package_init_importing_above_its_floor_fails(tmp_path: Path) -> None:
    known = _package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low.py": "",
        "pkg/high.py": "",
        "pkg/sub/__init__.py": "from pkg.sub.top import x\n",  # pkg.sub.base is layer 1
        "pkg/sub/base.py": "",
        "pkg/sub/top.py": "x = 1\n",
    })
    [problem] = problems(known, read_layers(TOY_DOC))
    assert problem.startswith("pkg.sub:1 (a package __init__) imports pkg.sub.top (2 high) at "
                              "module level, above its package's lowest layer 1")


def test_a_module_in_no_layer_is_named(tmp_path: Path) -> None:
    known = _package(tmp_path, {"pkg/__init__.py": "", "pkg/low.py": "", "pkg/stray.py": ""})
    assert problems(known, read_layers(TOY_DOC)) == [
        "pkg.stray is in no layer: add it to the `## Layers` table of docs/architecture.md"]


def test_relative_imports_resolve(tmp_path: Path) -> None:
    known = _package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/low.py": "from .high import thing\n",
        "pkg/high.py": "thing = 1\n",
        "pkg/sub/__init__.py": "from ..low import x\nfrom . import base\n",
        "pkg/sub/base.py": "",
    })
    edges = {(i.importer, i.imported) for i in imports(known)}
    assert edges == {("pkg.low", "pkg.high"), ("pkg.sub", "pkg.low"), ("pkg.sub", "pkg.sub.base")}


def test_the_circle_this_check_replaced_would_fail(tmp_path: Path) -> None:
    """The real tree with one line put back as it was: topology.build taking expand_device
    from intent.semantic, which imports topology."""
    for path in (ROOT / "fabgen").rglob("*.py"):
        copy = tmp_path / path.relative_to(ROOT)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    build = tmp_path / "fabgen" / "topology" / "build.py"
    text = build.read_text(encoding="utf-8")
    assert "from fabgen.intent.names import expand_device" in text
    build.write_text(text.replace("from fabgen.intent.names import expand_device",
                                  "from fabgen.intent.semantic import expand_device"))
    found = problems(modules(tmp_path, "fabgen"), _layers(), KNOWN_EXCEPTIONS, _platforms())
    assert any(p.startswith("fabgen.topology.build:") and p.endswith(
        "imports fabgen.intent.semantic (5 intent loading), a higher layer") for p in found)
    assert any(p.startswith("import circle:") and "fabgen.intent.semantic" in p
               and "fabgen.topology.build" in p for p in found)


def _platform_of(module: str, names: tuple[str, ...]) -> str | None:
    parts = module.split(".")
    if len(parts) >= 3 and parts[:2] == ["fabgen", "platforms"] and parts[2] in names:
        return parts[2]
    return None


def platform_import_problems(known: dict[str, Path], names: tuple[str, ...]) -> list[str]:
    """The platform rules of docs/architecture.md: only the registry imports a platform's
    folder; a platform imports no other platform and no registry; the package `__init__`s under
    fabgen/platforms/ import nothing (the intent models import the registry at layer 2)."""
    out = []
    for imp in imports(known):
        owner, target = _platform_of(imp.importer, names), _platform_of(imp.imported, names)
        registry = imp.importer.startswith("fabgen.platforms.registry")
        if target is not None and owner != target and not registry:
            out.append(f"{imp.importer}:{imp.line} imports {imp.imported}: only "
                       "fabgen.platforms.registry imports a platform")
        if owner is not None and imp.imported.startswith("fabgen.platforms.registry"):
            out.append(f"{imp.importer}:{imp.line} imports {imp.imported}: a platform knows "
                       "itself through its facts, not the registry")
        if (imp.importer.startswith("fabgen.platforms")
                and known[imp.importer].name == "__init__.py"):
            out.append(f"{imp.importer} imports {imp.imported}: a platforms package's "
                       "__init__ imports nothing")
    return out


def test_only_the_registry_imports_a_platform() -> None:
    assert platform_import_problems(modules(ROOT, "fabgen"), _platforms()) == []


def test_the_platform_rules_bite(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "fabgen", tmp_path / "fabgen",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "fabgen/targets/odd.py").write_text(
        "from fabgen.platforms.eos import facts\n")
    (tmp_path / "fabgen/platforms/nvue/odd.py").write_text(
        "from fabgen.platforms.sonic import facts\nfrom fabgen.platforms.registry import push\n")
    found = platform_import_problems(modules(tmp_path, "fabgen"), _platforms())
    assert len(found) == 3, found
    assert any(f.startswith("fabgen.targets.odd:1 imports fabgen.platforms.eos") for f in found)


_IMPORT_EACH_FIRST = r"""
import importlib, os, sys
import jinja2, orjson, pydantic, yaml  # third-party, loaded once before forking
failed = []
for name in sys.argv[1:]:
    pid = os.fork()
    if pid == 0:
        try:
            importlib.import_module(name)
        except BaseException as exc:  # noqa: BLE001 - reported by the parent
            sys.stderr.write(f"{name}: {type(exc).__name__}: {exc}\n")
            os._exit(1)
        os._exit(0)
    if os.waitpid(pid, 0)[1] != 0:
        failed.append(name)
print("\n".join(failed))
"""


def test_every_module_imports_first() -> None:
    """Each module imported first in a fresh interpreter (forked after the third-party
    libraries load): a circle through a package's implicit parent import, which the AST graph
    cannot see (platforms/<os>/push importing push.drivers.base runs fabgen/push/__init__), is
    an ImportError here."""
    import subprocess
    import sys

    names = sorted(m for m in modules(ROOT, "fabgen") if m != "fabgen.__main__")  # runs main
    run = subprocess.run([sys.executable, "-c", _IMPORT_EACH_FIRST, *names], cwd=ROOT,
                         capture_output=True, text=True, check=False, timeout=600)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == [], run.stderr
