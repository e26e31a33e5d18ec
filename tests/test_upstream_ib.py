"""Cross-checks against the upstream sources fabgen's InfiniBand host and SHARP files lean on.

CI cannot fetch them: these run when FABGEN_UPSTREAM names a directory holding the checkouts
as <owner>+<name> (NVIDIA+nccl, NVIDIA+nccl-tests, Mellanox+nccl-rdma-sharp-plugins,
linux-rdma+opensm), and skip naming the variable otherwise (FABGEN_REQUIRE_TOOLS does not force
them). What CI runs instead is fabgen's model of the same behaviour: tests/test_ufm.py feeds
check-sharp.sh logs made of these format strings, tests/test_ufm_ibsim.py runs the P_Key and
updn behaviour in Debian's OpenSM.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from fabgen.targets import nccl, sharp
from fabgen.targets.opensm_partitions import TENANT_PKEY_INDEX

try:  # pytest puts tests/ on sys.path while it has no __init__.py, the repo root once it has
    import nccl_log_formats as formats
except ImportError:
    from tests import nccl_log_formats as formats  # type: ignore[no-redef]

ENV = "FABGEN_UPSTREAM"


def _checkout(name: str) -> Path:
    base = os.environ.get(ENV)
    if not base:
        pytest.skip(f"{ENV} is not set (a directory of upstream checkouts, e.g. "
                    f"{ENV}=/work/upstream holding {name})")
    path = Path(base) / name
    if not path.is_dir():
        pytest.fail(f"{ENV}={base} has no {name}")
    return path


def _read(root: Path, rel: str) -> str:
    return (root / rel).read_text(errors="replace")


def test_nccl_ib_pkey_is_a_pkey_index() -> None:
    root = _checkout("NVIDIA+nccl")
    connect = _read(root, "src/transport/net_ib/connect.cc")
    assert 'NCCL_PARAM(IbPkey, "IB_PKEY", 0);' in connect
    assert "qpAttr.pkey_index = initAttr->pkeyIndex;" in connect
    assert "initAttr->pkeyIndex = ncclParamIbPkey();" in connect
    assert "connect.cc:17 NCCL_PARAM(IbPkey" in nccl.SOURCES["NCCL_IB_PKEY"]
    line = connect.splitlines()[16]
    assert "IbPkey" in line, "the line SOURCES cites"


def _release(tag: str) -> Path:
    base = os.environ.get(ENV)
    if not base:
        pytest.skip(f"{ENV} is not set (a directory of upstream checkouts holding "
                    f"NVIDIA+nccl@{tag})")
    path = Path(base) / f"NVIDIA+nccl@{tag}"
    if not (path / "src").is_dir():
        pytest.fail(f"{ENV}={base} has no NVIDIA+nccl@{tag}/src: fetch NVIDIA/nccl and run "
                    f"git archive {tag} src | tar -x -C {path}")
    return path


def _formats(root: Path, pattern: str) -> list[str]:
    """Every string literal of the release's sources that matches `pattern` (the format
    strings NCCL's INFO/WARN print)."""
    found = []
    for path in sorted((root / "src").rglob("*.cc")):
        for literal in re.findall(r'"((?:[^"\\]|\\.)*)"', path.read_text(errors="replace")):
            if re.search(pattern, literal, re.IGNORECASE):
                found.append(literal)
    return found


@pytest.mark.parametrize("release", formats.RELEASES, ids=lambda x: x.tag)
def test_nccl_release_prints_the_lines_check_sharp_reads(release: formats.Release) -> None:
    """fabgen's model of each release's log lines (tests/nccl_log_formats.py) is the release's
    own source, and check-sharp.sh's patterns match every variant the release can print."""
    root = _release(release.tag)
    for where, fmt in (release.plugin[:2], release.collnet, release.connected,
                       release.no_algo, release.disabling):
        assert fmt in _read(root, where), f"{release.tag} {where}: {fmt!r}"
    # Every CollNet-load line of the release, whatever plugin name it prints, and every
    # no-algorithm line, whatever its case, is what check-sharp.sh looks for.
    loaded = re.compile(sharp.CHECK_REQUIRED[0].pattern)
    plugin_lines = _formats(root, r"^NET/Plugin: Loaded coll")
    assert plugin_lines, release.tag
    for fmt in plugin_lines:
        assert loaded.search(formats.fill(fmt, "IBext_v10")), fmt
    no_algo = re.compile(sharp.CHECK_FORBIDDEN[0].pattern, re.IGNORECASE)
    assert sharp.CHECK_FORBIDDEN[0].ignore_case
    no_algo_lines = _formats(root, r"no algorithm/protocol available")
    assert no_algo_lines, release.tag
    assert all(no_algo.search(fmt) for fmt in no_algo_lines), no_algo_lines
    # the SHARP plugin's name in the channel line: collNetName is the CollNet plugin's name
    assert re.search(r"collNetName\(struct ncclComm\* comm\) \{\s*return "
                     r"comm->ncclCollNet->name;", _read(root, "src/include/coll_net.h"))
    # a run without CollNet sets it aside without an error (the reason for the CollNet-only
    # NCCL_ALGO): the set-up's fail path; and the algorithm names NCCL_ALGO takes
    fail_path = re.compile(r"fail:\s*(ncclTransportCollNetFree\(comm\);\s*)?"
                           r"comm->(collNetSupport|config\.collnetEnable) = 0;")
    assert fail_path.search(_read(root, "src/init.cc") + _read(root, "src/transport/coll_net.cc"))
    algos = re.search(r"ncclAlgoStr\[NCCL_NUM_ALGORITHMS\] = \{([^}]*)\}",
                      "".join(p.read_text(errors="replace")
                              for p in sorted((root / "src").rglob("*.cc"))))
    assert algos is not None, release.tag
    names = {a.strip().strip('"').lower() for a in algos.group(1).split(",")}
    assert {a.lower() for a in sharp.NCCL_ALGO_COLLNET.split(",")} <= names


def test_sharp_plugin_names_itself_sharp() -> None:
    root = _checkout("Mellanox+nccl-rdma-sharp-plugins")
    text = _read(root, "src/sharp_plugin.c")
    block = text.split("ncclCollNet_v11_t ncclCollNetPlugin_v11 = {", 1)[1]
    assert block.lstrip().startswith('"SHARP",')
    assert 'WARN("NET/IB : SHARP coll init error: %s(%d)\\n"' in text
    # one SHARP context per rail device: why every compute port carries IPoIB
    assert "init_spec.config.ib_dev_list = devName;" in text


def test_nccl_tests_print_the_result_line() -> None:
    root = _checkout("NVIDIA+nccl-tests")
    text = _read(root, "src/util.cu")
    assert 'PRINT("# %-20s : %d %s\\n", "Out of bounds values", errors[0], errors[0] ? ' \
           '"FAILED" : "OK");' in text
    assert len("Out of bounds values") == 20, "so %-20s pads nothing"


def test_opensm_puts_the_tenant_key_at_index_1() -> None:
    root = _checkout("linux-rdma+opensm")
    mgr = _read(root, "opensm/osm_pkey_mgr.c")
    # the default key to index 0 unless a partition says indx0; a first new key to index 1
    assert "If index 0 is occupied by non-default, it should reoccupied by pkey 0x7FFF" in mgr
    assert re.search(r"\} else \{\s*block_index = 0;\s*pkey_index = 1;\s*\}", mgr)
    assert TENANT_PKEY_INDEX == 1
    config = _read(root, "opensm/osm_prtn_config.c")
    assert 'else if (!strcmp(flag, "indx0"))' in config


def test_updn_root_search_thresholds() -> None:
    root = _checkout("linux-rdma+opensm")
    updn = _read(root, "opensm/osm_ucast_updn.c")
    assert "thd1 = cas_num * 0.9;" in updn and "thd2 = cas_num * 0.05;" in updn
    assert '"opensm-updn-roots.dump"' in updn
