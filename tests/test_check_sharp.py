"""hosts/check-sharp.sh against NCCL logs in the format of every release from 2.18 to 2.30
(tests/nccl_log_formats.py, each string cited to its tag; tests/test_upstream_ib.py reads them
from the tags): a SHARP run passes, the same job without SHARP fails, whichever release ran it.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from fabgen.intent import load
from fabgen.targets import preflight, sharp
from fabgen.targets.base import RenderContext
from fabgen.topology.build import build
from tests.conftest import require_tool

try:  # pytest puts tests/ on sys.path while it has no __init__.py, the repo root once it has
    import nccl_log_formats as formats
    import opensm_run as r
except ImportError:
    from tests import nccl_log_formats as formats  # type: ignore[no-redef]
    from tests import opensm_run as r  # type: ignore[no-redef]


@pytest.fixture(scope="module")
def script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    intent = load(r.IB_INVENTORY).intent
    files = preflight.TARGET.render(RenderContext(intent, build(intent)))
    path = tmp_path_factory.mktemp("sharp") / "check-sharp.sh"
    path.write_text(files["hosts/check-sharp.sh"])
    return path


def _run(script: Path, tmp: Path, log: str) -> subprocess.CompletedProcess[str]:
    (tmp / "job.log").write_text(log)
    return subprocess.run(["bash", str(script), str(tmp / "job.log")], capture_output=True,
                          text=True, timeout=60, check=False)


def _fails(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [x for x in result.stdout.splitlines() if x.startswith("FAIL")]


@pytest.mark.parametrize("release", formats.RELEASES, ids=lambda x: x.tag)
def test_a_sharp_run_passes_in_every_release_format(script: Path, tmp_path: Path,
                                                     release: formats.Release) -> None:
    ok = _run(script, tmp_path, formats.sharp_log(release))
    assert ok.returncode == 0, ok.stdout
    assert ok.stdout.endswith("check-sharp: the job reduced through SHARP\n")


@pytest.mark.parametrize("release", formats.RELEASES, ids=lambda x: x.tag)
def test_the_same_job_without_sharp_fails_in_every_release_format(
        script: Path, tmp_path: Path, release: formats.Release) -> None:
    bad = _run(script, tmp_path, formats.no_sharp_log(release))
    assert bad.returncode == 1
    fails = _fails(bad)
    # no COLLNET/SHARP channel, not connected, the two errors, no result line
    assert len(fails) == 5, bad.stdout
    assert any("CollNet-only NCCL_ALGO left NCCL nothing to run" in f for f in fails), fails
    assert any("libsharp could not reach sharp_am" in f for f in fails), fails
    assert not any("no CollNet plugin" in f for f in fails), "the plugin did load"


def test_a_good_bandwidth_without_collnet_fails(script: Path, tmp_path: Path) -> None:
    fallback = _run(script, tmp_path, "# Out of bounds values : 0 OK\n"
                                      "# Avg bus bandwidth    : 380.2\n")
    assert fallback.returncode == 1
    assert "FAIL NCCL loaded no CollNet plugin" in fallback.stdout


def test_the_plugin_line_alone_proves_nothing(script: Path, tmp_path: Path) -> None:
    """NCCL 2.26-2.27 name the net plugin where the CollNet plugin loads: the name is not the
    proof, `via COLLNET/SHARP/` is."""
    release = next(x for x in formats.RELEASES if x.tag == "v2.27.7-1")
    log = formats.sharp_log(release).replace("COLLNET/SHARP/", "COLLNET/OTHER/")
    result = _run(script, tmp_path, log)
    assert result.returncode == 1
    assert _fails(result) == ["FAIL no CollNet channel was set up through SHARP: no line "
                              "matches 'via COLLNET/SHARP/'"]


def test_messages_read_as_sentences_and_stay_inside_their_quotes() -> None:
    for line in (*sharp.CHECK_REQUIRED, *sharp.CHECK_FORBIDDEN):
        for text in (line.found, line.absent):
            assert not re.search(r"[\"$`\\]", text), text
        assert "'" not in line.pattern, line.pattern
        assert "did not happen" not in line.absent


def test_runbook_quotes_what_nccl_prints(tmp_path: Path) -> None:
    intent = load(r.IB_INVENTORY).intent
    text = preflight.runbook_markdown(RenderContext(intent, build(intent)))
    stage = text.split("### 4. SHARP", 1)[1]
    # NCCL 2.18-2.29 print it lower-case after "Error : "; only 2.30 capitalises
    assert "`Error : no algorithm/protocol available`, NCCL 2.18 to 2.29" in stage
    assert "`No algorithm/protocol available ...` from 2.30" in stage
    assert "NCCL_ALGO=CollNetDirect,CollNetChain NCCL_DEBUG=INFO" in stage
    assert "bash hosts/check-sharp.sh sharp.log" in stage


@pytest.mark.realtool
def test_check_sharp_passes_shellcheck(script: Path) -> None:
    require_tool("shellcheck")
    result = subprocess.run(["shellcheck", "--norc", str(script)], capture_output=True,
                            text=True, check=False, timeout=60)
    assert result.returncode == 0, result.stdout
