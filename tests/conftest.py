"""Shared test helpers: paths, running the CLI in-process, and the real-tool gate."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

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


def require_tool(*names: str) -> None:
    """Skip when a real tool is missing, unless FABGEN_REQUIRE_TOOLS=1 (CI), then fail."""
    missing = [n for n in names if shutil.which(n) is None]
    if missing:
        message = f"missing tool(s): {', '.join(missing)}"
        if os.environ.get("FABGEN_REQUIRE_TOOLS") == "1":
            pytest.fail(message)
        pytest.skip(message)
