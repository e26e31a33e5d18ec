"""Shared test helpers: paths, running the CLI in-process, and the real-tool gate."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import pytest

from fabgen.cli import main

ROOT = Path(__file__).resolve().parent.parent
INVENTORIES = sorted((ROOT / "inventories").glob("*.yaml"))
GOLDEN = ROOT / "golden"


@dataclass
class Run:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """Run `fabgen ARGS...` in-process; returns exit code, stdout, stderr."""

    def run(*args: str) -> Run:
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse usage errors and --help/--version
            code = int(exc.code or 0)
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


def _missing(message: str) -> NoReturn:
    if os.environ.get("FABGEN_REQUIRE_TOOLS") == "1":
        pytest.fail(message)
    pytest.skip(message)


def require_tool(*names: str) -> None:
    """Skip when a real tool is missing, unless FABGEN_REQUIRE_TOOLS=1 (CI), then fail."""
    missing = [n for n in names if shutil.which(n) is None]
    if missing:
        _missing(f"missing tool(s): {', '.join(missing)}")


def require_fonts(*families: str) -> None:
    """Skip when fontconfig lacks a font family, unless FABGEN_REQUIRE_TOOLS=1 (CI), then fail."""
    require_tool("fc-list")
    import subprocess

    listed = subprocess.run(["fc-list", ":", "family"], capture_output=True, text=True,
                            check=True).stdout
    known = {name.strip() for line in listed.splitlines() for name in line.split(",")}
    missing = [f for f in families if f not in known]
    if missing:
        _missing(f"missing font(s): {', '.join(missing)}")


def require_data(env: str, fallback: Path, what: str, children: tuple[str, ...] = ()) -> Path:
    """A directory of test data that is not in this repository: $`env` when set, else
    `fallback` (beside the checkout) where it exists. Missing: a skip naming the variable,
    unless FABGEN_REQUIRE_TOOLS=1 (CI), then a failure. A variable naming a wrong directory
    always fails: someone asked for these tests to run."""
    given = os.environ.get(env)
    root = Path(given) if given else fallback
    bad = [str(root / c) for c in ("", *children) if not (root / c).is_dir()]
    if bad and given:
        pytest.fail(f"{what}: {env}={given} must be a directory with {', '.join(children)} "
                    f"(missing: {', '.join(bad)})")
    if bad:
        _missing(f"{what} not found: set {env} to their directory (none at {fallback})")
    return root
