"""Packaged data and `fabgen init`: what a wheel install has to start from, without the repo.

The wheel itself (built, installed into a fresh venv, rendering every inventory from outside
the repository byte for byte as golden/) is checked by .ci/run; these tests pin what it relies
on: the package finds its files through importlib.resources, and they are the repository's.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fabgen import resources
from fabgen.intent import load
from fabgen.schema import schema_text
from tests.conftest import INVENTORIES, ROOT


def test_packaged_files_are_the_repository_files() -> None:
    """fabgen/templates, examples, schemas are links to the top-level directories (one source
    of truth), and resources reads them."""
    for link, target in (("templates", "templates"), ("examples", "inventories"),
                         ("schemas", "schemas")):
        path = ROOT / "fabgen" / link
        assert path.is_symlink() and path.resolve() == (ROOT / target).resolve(), link
    assert list(resources.examples()) == [p.stem for p in INVENTORIES]
    for name, packaged in resources.examples().items():
        assert packaged.read_text(encoding="utf-8") == \
            (ROOT / "inventories" / f"{name}.yaml").read_text(encoding="utf-8")
    assert resources.schema().read_text(encoding="utf-8") == schema_text()
    templates = sorted(str(p.relative_to(ROOT / "templates"))
                       for p in (ROOT / "templates").rglob("*.j2"))
    assert templates and all(resources.templates().joinpath(*t.split("/")).is_file()
                             for t in templates)


def test_package_data_globs_cover_every_shipped_file() -> None:
    """The wheel takes package data by glob (pyproject.toml): a template or example in a place
    no glob matches would be missing from every normal install."""
    import fnmatch
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["fabgen"]
    pkg = ROOT / "fabgen"
    shipped = [str(p.relative_to(pkg)) for d in ("templates", "examples", "schemas", "catalog",
                                                 "platforms")
               for p in (pkg / d).rglob("*") if p.is_file() and p.suffix != ".py"
               and "__pycache__" not in p.parts]
    assert shipped
    for rel in shipped:
        # setuptools' `**` matches any depth, fnmatch's `*` crosses `/` anyway.
        assert any(fnmatch.fnmatch(rel, g.replace("**/", "")) or fnmatch.fnmatch(rel, g)
                   for g in globs), rel


def test_runtime_reads_nothing_beside_the_package() -> None:
    """No module locates files through its own path (a wheel has no repository around it)."""
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "fabgen").rglob("*.py")
                 if re.search(r"__file__|\bparent\.parent\b", p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_init_writes_an_example_whose_schema_line_resolves(cli, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli("init")
    assert result.code == 0, result.err
    assert "fabgen render" in result.out
    intent = tmp_path / "fabgen.yaml"
    first, *rest = intent.read_text(encoding="utf-8").splitlines(keepends=True)
    schema_ref = first.removeprefix("# yaml-language-server: $schema=").strip()
    assert first.startswith("# yaml-language-server: $schema=")
    # Relative to the intent's directory, as the YAML language server resolves it.
    assert (intent.parent / schema_ref).read_text(encoding="utf-8") == schema_text()
    example = (ROOT / "inventories" / f"{resources.DEFAULT_EXAMPLE}.yaml").read_text(
        encoding="utf-8").splitlines(keepends=True)
    assert rest == example[1:]  # the example, only its schema line changed
    assert load(intent).intent.name == "roce-256"

    rendered = cli("render")  # ./fabgen.yaml is what render reads without an argument
    assert rendered.code == 0, rendered.err
    assert "built-in example" not in rendered.err
    assert (tmp_path / "out" / "roce-256" / "manifest.json").is_file()


def test_init_another_example_into_a_new_directory(cli, tmp_path: Path) -> None:
    target = tmp_path / "pods" / "ib.yaml"
    assert cli("init", "ib-ndr-1024", "-o", str(target)).code == 0
    assert load(target).intent.fabric.transport == "infiniband"
    assert (tmp_path / "pods" / resources.SCHEMA_FILE).is_file()
    # A second intent in the same directory shares the (identical) schema file.
    assert cli("init", "roce-eos-nvue-2to1", "-o", str(tmp_path / "pods" / "b.yaml")).code == 0
    bad = cli("init", "no-such-example", "-o", str(tmp_path / "c.yaml"))
    assert bad.code == 1 and "invalid choice" in bad.err and not (tmp_path / "c.yaml").exists()


def test_init_never_overwrites_without_force(cli, tmp_path: Path) -> None:
    intent = tmp_path / "pod.yaml"
    intent.write_text("mine\n")
    result = cli("--no-color", "init", "-o", str(intent))
    assert result.code == 1 and "pod.yaml exists; --force replaces it" in result.err
    assert intent.read_text() == "mine\n"
    assert not (tmp_path / resources.SCHEMA_FILE).exists()  # nothing written at all
    # A schema another fabgen version wrote is not replaced silently either.
    other = tmp_path / "other"
    other.mkdir()
    (other / resources.SCHEMA_FILE).write_text("{}\n")
    result = cli("--no-color", "init", "-o", str(other / "pod.yaml"))
    assert result.code == 1 and resources.SCHEMA_FILE in result.err
    assert not (other / "pod.yaml").exists()
    assert cli("init", "-o", str(intent), "--force").code == 0
    assert load(intent).intent.name == "roce-256"
    assert cli("init", "-o", str(other / "pod.yaml"), "--force").code == 0
    assert (other / resources.SCHEMA_FILE).read_text(encoding="utf-8") == schema_text()


def test_init_help_lists_the_examples(cli) -> None:
    helped = cli("init", "--help")
    assert helped.code == 0
    for name in resources.examples():
        assert name in helped.out
    assert "256-GPU RoCEv2 training pod" in helped.out


def test_render_without_intent_or_local_file_renders_the_builtin_example(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = cli("render")
    assert result.code == 0, result.err
    assert "no INTENT given and no ./fabgen.yaml" in result.err
    assert "fabgen init" in result.err
    assert (tmp_path / "out" / "roce-256" / "manifest.json").is_file()
    # -q still says which intent it read (tests/test_render_destination.py has the rest).
    quiet = cli("render", "-q")
    assert (quiet.code, quiet.out) == (0, "")
    assert quiet.err.startswith("note: no INTENT given and no ./fabgen.yaml")
