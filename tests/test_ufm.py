"""UFM as UFM: its paths as NVIDIA's manuals print them, the one configuration of a UFM HA
pair, and ufm-setup.sh run against a fake UFM tree (gv.cfg, opensm.conf, sharp_am.cfg written
and checked); SHARP's proof (check-sharp.sh) against logs made of NCCL's own format strings.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fabgen.intent import load
from fabgen.intent.models import Intent
from fabgen.targets import nccl, preflight, sharp, ufm
from fabgen.targets.base import RenderContext
from fabgen.targets.ibnetdiscover import GuidPlan, guid_plan, render_topology
from fabgen.topology.build import build
from tests.conftest import require_tool

try:  # pytest puts tests/ on sys.path while it has no __init__.py, the repo root once it has
    import opensm_run as r
except ImportError:
    from tests import opensm_run as r  # type: ignore[no-redef]

STUBS = Path(__file__).parent / "fixtures" / "hoststubs"

# Each UFM path with where NVIDIA prints it.
UFM_PATHS = {
    # UFM Enterprise User Manual v6.15.8, v6.19.4 LTS, v6.19.14, v6.22.1, v6.23.11 LTS,
    # v6.24.2: "Appendix - SM Default Files"
    "UFM_OPENSM_CONF": "/opt/ufm/files/conf/opensm/opensm.conf",
    "UFM_NODE_NAME_MAP": "/opt/ufm/files/conf/opensm/ib-node-name-map",
    "UFM_PARTITIONS": "/opt/ufm/files/conf/opensm/partitions.conf",
    "UFM_QOS_POLICY": "/opt/ufm/files/conf/opensm/qos-policy.conf",
    # the same appendix, v6.15.8 and v6.19.4 LTS: "Default SM log"
    "UFM_SM_LOG": "/opt/ufm/files/log/opensm.log",
    # UFM Enterprise User Manual v6.15.8 LTS, v6.19.3, v6.22.1: "Appendix - Partitioning"
    "UFM_PARTITIONS_USER_EXT": "/opt/ufm/files/conf/partitions.conf.user_ext",
    "UFM_SYNC_PARTITIONS": "/opt/ufm/scripts/sync_partitions_conf.sh",
    "UFM_GV_CFG": "/opt/ufm/files/conf/gv.cfg",
    # SHARP Rev 3.12.0, "NVIDIA SHARP Installation": "conf/sharp/sharp_am.cfg" (beside
    # conf/gv.cfg in UFM's files)
    "UFM_SHARP_AM_CFG": "/opt/ufm/files/conf/sharp/sharp_am.cfg",
}


def test_ufm_paths_are_the_manuals() -> None:
    for name, path in UFM_PATHS.items():
        assert getattr(ufm, name) == path, name
    # SHARP Rev 3.12.0: "sharp_am communicates with libsharp clients over ... IPoIB using TCP
    # port 6126"; Rev 3.13.0: smx_protocol "Value 2 - Sockets".
    assert (sharp.SHARP_AM_TCP_PORT, sharp.SMX_PROTOCOL_SOCKETS) == (6126, 2)


def shifted(plan: GuidPlan, offset: int = 0x0000_3000_0000) -> GuidPlan:
    return GuidPlan({k: v + offset for k, v in plan.switch_guids.items()},
                    {k: v + offset for k, v in plan.ca_guids.items()}, dict(plan.ca_ports),
                    {k: v + offset for k, v in plan.port_guids.items()})


TENANTS = [{"name": "tenant-a", "pkey": "0x0101", "hosts": ["dgx0[0-5]*"]},
           {"name": "tenant-b", "pkey": "0x0102", "hosts": ["dgx0[6-9]*", "dgx1*"]}]


def inventory(tmp: Path, **ib: Any) -> RenderContext:
    """The IB example with real GUIDs (and the given infiniband fields)."""
    intent = load(r.IB_INVENTORY).intent
    fabric = build(intent)
    (tmp / "fabric.ibnd").write_text(render_topology(fabric, shifted(guid_plan(fabric)),
                                                     real_guids=True))
    data = intent.model_dump(mode="json")
    data["infiniband"].update(guids_file="fabric.ibnd", **ib)
    return RenderContext(Intent.model_validate(data), fabric, base_dir=tmp)


def test_one_configuration_for_the_ufm_pair(tmp_path: Path) -> None:
    ctx = inventory(tmp_path, partitions=TENANTS)
    files = r.render_all(ctx.intent, ctx.fabric, base_dir=tmp_path)
    ufm_files = sorted(p for p in files if p.startswith("infiniband/ufm/"))
    assert ufm_files == [f"infiniband/ufm/{n}" for n in (
        "ib-node-name-map", "opensm.conf", "partitions.conf.user_ext", "qos-policy.conf",
        "root_guids.txt", "sharp_am.cfg", "ufm-setup.sh")]
    assert not [p for p in files if re.match(r"infiniband/ufm0\d/", p)], "no per-node files"
    user_ext = files["infiniband/ufm/partitions.conf.user_ext"]
    assert "Default=" not in user_ext, "UFM writes the default partition itself"
    assert [p for p, _ in r.parse_partitions(user_ext)] == [0x0101, 0x0102]
    assert "ib partition management defmember limited" in user_ext
    am = r.conf_options(files["infiniband/ufm/sharp_am.cfg"])
    assert am["reservation_auto_by_pkeys"] == "TRUE"
    setup = files["infiniband/ufm/ufm-setup.sh"]
    assert 'GV_KEYS=("fabric_interface" "sharp_enabled" "sharp_allocation_enabled")' in setup
    assert 'GV_SECTIONS=("" "Sharp" "Sharp")' in setup
    assert 'UFM_ADDRESSES=("10.224.0.1/20" "10.224.0.2/20")' in setup
    assert 'TENANT_PKEYS=("0x0101" "0x0102")' in setup


def _ufm_tree(root: Path) -> None:
    """A fake UFM Enterprise tree: a gv.cfg, opensm.conf and sharp_am.cfg shaped like UFM's
    (fabgen's fixture, not UFM's files) with values fabgen must change."""
    conf = root / "opt/ufm/files/conf"
    (conf / "opensm").mkdir(parents=True)
    (conf / "sharp").mkdir()
    (conf / "gv.cfg").write_text("[Server]\nfabric_interface = ib1\nws_port = 8000\n\n"
                                 "[Sharp]\nsharp_enabled = false\n\n[Logging]\nlevel = INFO\n")
    (conf / "opensm/opensm.conf").write_text("# UFM's OpenSM options\nrouting_engine minhop\n"
                                             "# qos FALSE\nqos FALSE\nlmc 0\n")
    (conf / "sharp/sharp_am.cfg").write_text("smx_protocol 1\nib_qpc_sl 0\n")


def _run(script: Path, *args: str, root: Path, outputs: Path, bin_: Path
         ) -> subprocess.CompletedProcess[str]:
    env = {"PATH": f"{bin_}:{os.environ.get('PATH', '/usr/bin:/bin')}", "UFM_ROOT": str(root),
           "FABGEN_STUB_LOG": str(outputs / "calls.log"), "FABGEN_STUB_OUTPUT": str(outputs),
           "LC_ALL": "C"}
    return subprocess.run(["bash", str(script), *args], env=env, capture_output=True,
                          text=True, timeout=60, check=False)


@pytest.fixture
def stub_bin(tmp_path: Path) -> Path:
    dest = tmp_path / "bin"
    dest.mkdir()
    for name in ("_record", "ip"):
        shutil.copy(STUBS / name, dest / name)
        (dest / name).chmod(0o755)
    (dest / "ss").write_text('#!/usr/bin/env bash\nexec "$(dirname "$0")/_record" ss "$@"\n')
    (dest / "ss").chmod(0o755)
    return dest


def test_ufm_setup_writes_and_checks_ufms_files(tmp_path: Path, stub_bin: Path) -> None:
    ctx = inventory(tmp_path, partitions=TENANTS)
    files = r.render_all(ctx.intent, ctx.fabric, base_dir=tmp_path)
    here = tmp_path / "render"
    for path, text in files.items():
        if path.startswith("infiniband/ufm/"):
            (here / Path(path).name).parent.mkdir(parents=True, exist_ok=True)
            (here / Path(path).name).write_text(text)
    script = here / "ufm-setup.sh"
    root = tmp_path / "root"
    _ufm_tree(root)
    out = tmp_path / "out"
    out.mkdir()
    conf = root / "opt/ufm/files/conf"

    # No IPv4 address on the fabric interface: UFM would not start; nothing is written.
    before = (conf / "gv.cfg").read_text()
    refused = _run(script, "--host", "ufm01", root=root, outputs=out, bin_=stub_bin)
    assert refused.returncode == 2 and "fix the fabric interface first" in refused.stderr
    assert "FAIL ib0 lacks 10.224.0.1/20" in refused.stdout
    assert (conf / "gv.cfg").read_text() == before

    (out / "ip.out").write_text("4: ib0    inet 10.224.0.1/20 brd 10.224.15.255 scope global "
                                "ib0\\       valid_lft forever preferred_lft forever\n")
    dry = _run(script, "--dry-run", "--host", "ufm01", root=root, outputs=out, bin_=stub_bin)
    assert dry.returncode == 0, dry.stderr
    assert (conf / "gv.cfg").read_text() == before, "--dry-run writes nothing"
    done = _run(script, "--host", "ufm01", root=root, outputs=out, bin_=stub_bin)
    assert done.returncode == 0, done.stderr + done.stdout
    gv = (conf / "gv.cfg").read_text()
    assert "fabric_interface = ib0\nws_port = 8000" in gv, "set where it was"
    assert "[Sharp]\nsharp_allocation_enabled = true\nsharp_enabled = true\n" in gv
    assert "[Logging]\nlevel = INFO" in gv, "other sections untouched"
    assert (conf / "gv.cfg.fabgen-orig").read_text() == before
    osm = r.conf_options((conf / "opensm/opensm.conf").read_text())
    want = r.conf_options(files["infiniband/ufm/opensm.conf"])
    assert {k: osm[k] for k in want} == want
    assert "# qos FALSE" in (conf / "opensm/opensm.conf").read_text(), "comments kept"
    am = r.conf_options((conf / "sharp/sharp_am.cfg").read_text())
    assert (am["smx_protocol"], am["ib_qpc_sl"], am["reservation_auto_by_pkeys"]) == \
        ("2", "1", "TRUE")
    for name, dest in (("qos-policy.conf", ufm.UFM_QOS_POLICY),
                       ("ib-node-name-map", ufm.UFM_NODE_NAME_MAP),
                       ("root_guids.txt", ufm.UFM_ROOT_GUIDS),
                       ("partitions.conf.user_ext", ufm.UFM_PARTITIONS_USER_EXT)):
        assert (root / dest.lstrip("/")).read_text() == (here / name).read_text(), name
    assert "open TCP 6126 inbound on ib0" in done.stdout
    assert "ib partition management defmember limited" in done.stdout
    # again: the same files (idempotent)
    snapshot = {p: p.read_text() for p in root.rglob("*") if p.is_file()}
    again = _run(script, "--host", "ufm01", root=root, outputs=out, bin_=stub_bin)
    assert again.returncode == 0
    assert {p: p.read_text() for p in root.rglob("*") if p.is_file()} == snapshot

    # --check once UFM runs: its partitions.conf with the tenants merged, sharp_am listening
    (conf / "opensm/partitions.conf").write_text(
        r.ufm_partitions((here / "partitions.conf.user_ext").read_text(), "limited"))
    (out / "ss.out").write_text("LISTEN 0 128 0.0.0.0:6126 0.0.0.0:*\n")
    check = _run(script, "--check", "--host", "ufm01", root=root, outputs=out, bin_=stub_bin)
    assert check.returncode == 0, check.stdout
    assert "OK   gv.cfg sharp_enabled: true" in check.stdout
    assert "OK   sharp_am listens on TCP 6126" in check.stdout
    assert "OK   the hosts are limited members of the default partition" in check.stdout
    # drift: sharp_am off, UFM's default membership full, nothing on TCP 6126
    (conf / "gv.cfg").write_text(gv.replace("sharp_enabled = true", "sharp_enabled = false"))
    (conf / "opensm/partitions.conf").write_text(
        r.ufm_partitions((here / "partitions.conf.user_ext").read_text(), "full"))
    (out / "ss.out").write_text("")
    drift = _run(script, "--check", "--host", "ufm01", root=root, outputs=out, bin_=stub_bin)
    assert drift.returncode == 1
    fails = [x for x in drift.stdout.splitlines() if x.startswith("FAIL")]
    assert fails == [
        "FAIL gv.cfg sharp_enabled: false (want true)",
        "FAIL the default partition does not make the hosts limited members: tenants are not "
        "isolated (UFM appliance: ib partition management defmember limited)",
        "FAIL nothing listens on TCP 6126: is UFM running with sharp_enabled = true? "
        "(hosts/preflight.sh tests the port from the compute side)"]


def test_ufm_setup_stops_on_a_gv_cfg_without_the_key(tmp_path: Path, stub_bin: Path) -> None:
    ctx = inventory(tmp_path)
    text = r.render_all(ctx.intent, ctx.fabric, base_dir=tmp_path)["infiniband/ufm/ufm-setup.sh"]
    script = tmp_path / "ufm-setup.sh"
    script.write_text(text)
    root = tmp_path / "root"
    _ufm_tree(root)
    gv = root / "opt/ufm/files/conf/gv.cfg"
    gv.write_text(gv.read_text().replace("fabric_interface = ib1\n", ""))
    out = tmp_path / "out"
    out.mkdir()
    (out / "ip.out").write_text("4: ib0    inet 10.224.0.1/20 scope global ib0\n")
    result = _run(script, "--host", "ufm01", root=root, outputs=out, bin_=stub_bin)
    assert result.returncode == 2
    assert "has no fabric_interface and UFM's documentation names no section" in result.stderr


@pytest.mark.realtool
def test_ufm_setup_passes_shellcheck(tmp_path: Path) -> None:
    require_tool("shellcheck")
    scripts = []
    for ib in ({}, {"partitions": TENANTS}, {"sharp": False}):
        ctx = inventory(tmp_path, **ib)
        files = r.render_all(ctx.intent, ctx.fabric, base_dir=tmp_path)
        for name in ("infiniband/ufm/ufm-setup.sh", "infiniband/storage/ufm/ufm-setup.sh"):
            path = tmp_path / f"s{len(scripts)}.sh"
            path.write_text(files[name])
            scripts.append(str(path))
    result = subprocess.run(["shellcheck", "--norc", *scripts], capture_output=True, text=True,
                            check=False, timeout=120)
    assert result.returncode == 0, result.stdout


# --------------------------------------------------------------------------- SHARP's proof

def _format(line: str) -> str:
    """An NCCL format string filled in the way NCCL prints it."""
    return (line.replace("%02d", "00").replace("%1d", "0").replace("%d", "1")
            .replace("%s", "SHARP"))


# A SHARP run's log lines, made of the format strings at the places sharp.CHECK_* cite.
SHARP_LOG = "\n".join([
    "dgx001:1:1 [0] NCCL INFO " + _format("NET/Plugin: Loaded collnet plugin %s (v11)"),
    "dgx001:1:1 [0] NCCL INFO " + "SHARP rank 0/16 initialized on mlx5_0:1",
    "dgx001:1:1 [0] NCCL INFO CollNet 00/0 : 0 [send] via COLLNET/SHARP/0/GDRDMA",
    "dgx001:1:1 [0] NCCL INFO CollNet 00/0 : 0 [receive] via COLLNET/SHARP/0/GDRDMA",
    "dgx001:1:1 [0] NCCL INFO rank 0 Connected CollNet",
    "# Out of bounds values : 0 OK",
    "# Avg bus bandwidth    : 380.2",
]) + "\n"
# The same job without SHARP: NCCL refuses the CollNet-only algorithm list.
NO_SHARP_LOG = "\n".join([
    "dgx001:1:1 [0] NCCL INFO " + _format("NET/Plugin: Loaded collnet plugin %s (v11)"),
    "dgx001:1:1 [0] NCCL WARN NET/IB : SHARP coll init error: Cannot connect to SHARPD(-53)",
    "dgx001:1:1 [0] NCCL WARN No algorithm/protocol available for function AllReduce with "
    "datatype ncclFloat32. NCCL_ALGO was set to CollNetDirect,CollNetChain.",
]) + "\n"


def _check_sharp(tmp_path: Path, log: str) -> subprocess.CompletedProcess[str]:
    ctx = inventory(tmp_path)
    files = preflight.TARGET.render(ctx)
    script = tmp_path / "check-sharp.sh"
    script.write_text(files["hosts/check-sharp.sh"])
    (tmp_path / "job.log").write_text(log)
    return subprocess.run(["bash", str(script), str(tmp_path / "job.log")],
                          capture_output=True, text=True, timeout=60, check=False)


def test_check_sharp_passes_a_sharp_run_and_fails_without(tmp_path: Path) -> None:
    ok = _check_sharp(tmp_path, SHARP_LOG)
    assert ok.returncode == 0, ok.stdout
    assert ok.stdout.endswith("check-sharp: the job reduced through SHARP\n")
    bad = _check_sharp(tmp_path, NO_SHARP_LOG)
    assert bad.returncode == 1
    fails = [x for x in bad.stdout.splitlines() if x.startswith("FAIL")]
    assert len(fails) == 5, bad.stdout  # no COLLNET/SHARP, not connected, 2 errors, no result
    # a good bandwidth without SHARP (NCCL fell back) still fails: no CollNet lines
    fallback = _check_sharp(tmp_path, "# Out of bounds values : 0 OK\n"
                                      "# Avg bus bandwidth    : 380.2\n")
    assert fallback.returncode == 1


def test_runbook_sharp_stage_and_preflight_port(tmp_path: Path) -> None:
    ctx = inventory(tmp_path)
    text = preflight.runbook_markdown(ctx)
    stage = text.split("### 4. SHARP", 1)[1]
    assert "NCCL_ALGO=CollNetDirect,CollNetChain NCCL_DEBUG=INFO" in stage
    assert "bash hosts/check-sharp.sh sharp.log" in stage
    script = preflight.TARGET.render(ctx)["hosts/preflight.sh"]
    assert 'SHARP_AM_ADDRESSES=("10.224.0.1" "10.224.0.2")' in script
    assert "SHARP_PORT=6126" in script


def test_nccl_is_told_the_tenant_pkey_index(tmp_path: Path) -> None:
    pending = RenderContext(load(r.IB_INVENTORY).intent.model_copy(), build(
        load(r.IB_INVENTORY).intent))
    entries = {e.key: e for e in nccl.entries(pending)}
    assert entries["NCCL_IB_PKEY"].value is None
    ctx = inventory(tmp_path, partitions=TENANTS)
    entries = {e.key: e for e in nccl.entries(ctx)}
    assert entries["NCCL_IB_PKEY"].value == "1"
    assert "osm_pkey_mgr.c" in entries["NCCL_IB_PKEY"].why
    runbook = preflight.runbook_markdown(ctx)
    assert "ib_write_bw -d mlx5_0 -i 1 --sl=0 --pkey_index=1 -F --report_gbits" in runbook
    stage2 = runbook.split("### 2. RDMA", 1)[1].split("\n", 1)[0]
    assert stage2 == ", rail by rail: dgx001 (SU 1) and dgx033 (SU 2)"  # both tenant-a
    assert "the 59 nodes of tenant tenant-a" in runbook
    assert "-x NCCL_IB_PKEY" in runbook


def test_storage_ufm_needs_some_address_on_its_fabric_interface(tmp_path: Path,
                                                                 stub_bin: Path) -> None:
    """The storage subnet's UFM pair has no planned IPoIB address: any IPv4 address on its
    fabric interface passes, none fails (UFM would not start)."""
    ctx = inventory(tmp_path)
    files = r.render_all(ctx.intent, ctx.fabric, base_dir=tmp_path)
    here = tmp_path / "storage"
    here.mkdir()
    for path, text in files.items():
        if path.startswith("infiniband/storage/ufm/"):
            (here / Path(path).name).write_text(text)
    assert 'UFM_HOSTS=("ufm-stor01" "ufm-stor02")' in (here / "ufm-setup.sh").read_text()
    root = tmp_path / "root"
    _ufm_tree(root)
    out = tmp_path / "out"
    out.mkdir()
    (out / "ip.out").write_text("4: ib0    inet 192.168.80.1/24 scope global ib0\n")
    some = _run(here / "ufm-setup.sh", "--check", "--host", "ufm-stor01", root=root,
                outputs=out, bin_=stub_bin)
    assert "OK   ib0 has an IPv4 address (the plan names none)" in some.stdout
    (out / "ip.out").write_text("")
    none = _run(here / "ufm-setup.sh", "--check", "--host", "ufm-stor01", root=root,
                outputs=out, bin_=stub_bin)
    assert "FAIL ib0 has no IPv4 address: UFM will not start without one" in none.stdout
    assert none.returncode == 1
