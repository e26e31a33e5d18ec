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


def test_nccl_log_lines_check_sharp_reads() -> None:
    root = _checkout("NVIDIA+nccl")
    texts = {
        "plugin": _read(root, "src/plugin/net/net_v11.cc"),
        "collnet": _read(root, "src/transport/coll_net.cc"),
        "enqueue": _read(root, "src/enqueue.cc"),
        "init": _read(root, "src/init.cc"),
    }
    assert '"NET/Plugin: Loaded collnet plugin %s (v11)"' in texts["plugin"]
    assert "[send] via COLLNET/%s/%d%s%s" in texts["collnet"]
    assert '"rank %d Connected CollNet"' in texts["collnet"]
    assert '"Connected Collnet Chains %s"' in texts["collnet"]
    assert "No algorithm/protocol available for function %s with datatype %s." in \
        texts["enqueue"]
    assert " NCCL_ALGO was set to %s." in texts["enqueue"]
    assert "less than CollNet node threshold %d, disabling CollNet" in texts["init"]
    # a run without CollNet sets it aside without an error (the reason for the CollNet-only
    # NCCL_ALGO): ncclCollNetSetup's fail path
    assert "comm->config.collnetEnable = 0;" in texts["collnet"]
    algos = re.search(r"ncclAlgoStr\[NCCL_NUM_ALGORITHMS\] = \{([^}]*)\}", texts["init"])
    assert algos is not None
    names = {a.strip().strip('"').lower() for a in algos.group(1).split(",")}
    assert {a.lower() for a in sharp.NCCL_ALGO_COLLNET.split(",")} <= names
    # every required/forbidden NCCL line's fixed text appears in the source it cites
    for fixed in ("NET/Plugin: Loaded collnet plugin", "via COLLNET/", "Connected CollNet",
                  "Connected Collnet Chains", "No algorithm/protocol available",
                  "disabling CollNet"):
        assert any(fixed in t for t in texts.values()), fixed
    assert {line.text for line in sharp.CHECK_REQUIRED} >= {
        "NET/Plugin: Loaded collnet plugin SHARP", "via COLLNET/SHARP/"}


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
