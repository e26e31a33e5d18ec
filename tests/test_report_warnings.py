"""The report's Warnings section lists every warning `fabgen render` printed, with the same text
(the intent file named without its directory), then the plan's own; with workers too."""

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
    assert len(printed) == 2, run.err
    assert any("cable lengths not measured" in p for p in printed)
    assert any("neither src-port nor roce-dest-qp" in p for p in printed)
    listed = _warnings_section((out / "report.md").read_text())
    # Same text, the path shown by the file's name (the report must not depend on the cwd).
    expected = [p.replace(f"{tmp_path}/", "", 1) for p in printed]
    assert all(p.startswith(f"{intent}:") for p in printed)
    assert listed[:len(expected)] == expected
    # The plan's warnings follow, as before.
    from fabgen.intent.loader import load
    from fabgen.topology.build import build

    plan = list(build(load(intent).intent).warnings)
    assert listed[len(expected):len(expected) + len(plan)] == plan
    # Then the SONiC render's own notes (SN5600's 65th port, outside the cabled cages).
    assert [w.split(":")[0] for w in listed[len(expected) + len(plan):]] == [
        "SONiC Mellanox-SN5600-O128 (12 switch(es))"]

