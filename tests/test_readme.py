"""The README's quick start is what CI runs, and its commands are the ones that work."""

from __future__ import annotations

import re

from tests.conftest import ROOT


def _quick_start() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(?:sh|bash|console)?\n(.*?)```", section, re.S)
    return [line.strip() for block in blocks for line in block.splitlines()
            if line.strip() and not line.strip().startswith("#")]


def test_quick_start_has_exactly_two_commands() -> None:
    commands = _quick_start()
    assert len(commands) == 2, commands
    assert commands[0].endswith("fabgen render")
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _quick_start()[1] in ci.splitlines()
