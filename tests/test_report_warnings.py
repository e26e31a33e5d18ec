"""The report's Warnings section lists every warning `fabgen render` printed, with the same text
(the intent file named without its directory), the plan's own among them; with workers too."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT


def _intent(tmp_path: Path) -> Path:
    """roce-256-sonic with two loader warnings: cable lengths left to their defaults, and a hash
    that ignores the RoCEv2 source port."""
    text = (ROOT / "inventories" / "roce-256-sonic.yaml").read_text()
    kept = [line for line in text.splitlines() if "cable_length_m" not in line]
    assert len(kept) == len(text.splitlines()) - 2 and "\nload_balancing:" not in text
    path = tmp_path / "warned.yaml"
    path.write_text("\n".join(kept) + "\nload_balancing:\n"
                    "  hash_fields: [src-ip, dst-ip, ip-protocol, dst-port]\n")
    return path


def _warnings_section(report: str) -> list[str]:
    section = report.split("\n## Warnings\n", 1)[1].split("\n## ", 1)[0]
    return [line[2:] for line in section.splitlines() if line.startswith("- ")]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_report_lists_every_printed_warning(tmp_path: Path, cli, jobs: str) -> None:  # type: ignore[no-untyped-def]
    intent = _intent(tmp_path)
    out = tmp_path / "out"
    run = cli("render", str(intent), "-o", str(out), "--jobs", jobs)
    assert run.code == 0, run.err
    printed = [line for line in run.err.splitlines() if ": warning: " in line]
    assert len(printed) == 3, run.err
    assert any("spines use 64 of their 128 ports" in p for p in printed)
    assert any("cable lengths not measured" in p for p in printed)
    assert any("neither src-port nor roce-dest-qp" in p for p in printed)
    listed = _warnings_section((out / "report.md").read_text())
    # Same text, the path shown by the file's name (the report must not depend on the cwd);
    # the plan's own warnings are among them, as `fabgen plan` prints them (issue 29).
    expected = [p.replace(f"{tmp_path}/", "", 1) for p in printed]
    assert all(p.startswith(f"{intent}:") for p in printed)
    assert listed[:len(expected)] == expected
    plan = cli("--no-color", "plan", str(intent))
    assert [line for line in plan.err.splitlines() if ": warning: " in line] == printed
    # Then the SONiC render's own notes (SN5600's 65th port, outside the cabled cages): render
    # facts, not intent warnings, so the report alone lists them.
    assert [w.split(":")[0] for w in listed[len(expected):]] == [
        "SONiC Mellanox-SN5600-O128 (12 switch(es))"]

