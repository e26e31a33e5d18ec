"""UFM as UFM: its paths as NVIDIA's manuals print them, the one configuration of a UFM HA
pair, and UFM Enterprise software's ufm-setup.sh run against a fake UFM tree on either node of
the pair (gv.cfg, opensm.conf, sharp_am.cfg written and checked on the master, the node's own
part on the standby; the default partition read in every OpenSM form). SHARP's proof is
tests/test_check_sharp.py; the appliance's CLI tests/test_ufm_appliance.py.
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
from fabgen.targets import nccl, preflight, sharp, sm_bringup, ufm
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
    # port 6126"; Rev 3.13.0: smx_protocol "Value 1 - UCX. Value 2 - Sockets".
    assert sharp.SHARP_AM_TCP_PORT == 6126
    assert sharp.SMX_PROTOCOL == {"ucx": 1, "sockets": 2}
    assert sharp.RESERVATION_AUTO_FROM == (3, 13)


def shifted(plan: GuidPlan, offset: int = 0x0000_3000_0000) -> GuidPlan:
    return GuidPlan({k: v + offset for k, v in plan.switch_guids.items()},
                    {k: v + offset for k, v in plan.ca_guids.items()}, dict(plan.ca_ports),
                    {k: v + offset for k, v in plan.port_guids.items()})


TENANTS = [{"name": "tenant-a", "pkey": "0x0101", "hosts": ["dgx0[0-5]*"]},
           {"name": "tenant-b", "pkey": "0x0102", "hosts": ["dgx0[6-9]*", "dgx1*"]}]
SOFTWARE = {"kind": "ufm", "ufm": "software", "hosts": [{"name": "ufm01"}, {"name": "ufm02"}],
            "ports": 2}


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
    ctx = inventory(tmp_path, partitions=TENANTS, management=SOFTWARE)
    files = r.render_all(ctx.intent, ctx.fabric, base_dir=tmp_path)
    ufm_files = sorted(p for p in files if p.startswith("infiniband/ufm/"))
    assert ufm_files == [f"infiniband/ufm/{n}" for n in (
        "ib-node-name-map", "opensm.conf", "partitions.conf.user_ext", "qos-policy.conf",
        "root_guids.txt", "sharp_am.cfg", "ufm-setup.sh")]
    assert not [p for p in files if re.match(r"infiniband/ufm0\d/", p)], "no per-node files"
    user_ext = files["infiniband/ufm/partitions.conf.user_ext"]
    assert "Default=" not in user_ext, "UFM writes the default partition itself"
    assert [p for p, _ in r.parse_partitions(user_ext)] == [0x0101, 0x0102]
    assert "documents no\n# setting for it" in user_ext
    am = r.conf_options(files["infiniband/ufm/sharp_am.cfg"])
    assert (am["reservation_auto_by_pkeys"], am["enable_job_pkey_on_tree"]) == ("TRUE", "TRUE")
    assert am["smx_protocol"] == "1", "UCX: SHARP 3.13's default for new installs"
    assert "# unverified: option name read from sharp_am's option_manager.h" in \
        files["infiniband/ufm/sharp_am.cfg"]
    setup = files["infiniband/ufm/ufm-setup.sh"]
    assert 'GV_KEYS=("fabric_interface" "sharp_enabled" "sharp_allocation_enabled")' in setup
    assert 'GV_SECTIONS=("" "Sharp" "")' in setup
    assert 'GV_ADD_TO=("" "Sharp" "Sharp")' in setup
    assert 'UFM_ADDRESSES=("10.224.0.1/20" "10.224.0.2/20")' in setup
    assert 'TENANT_PKEYS=("0x0101" "0x0102")' in setup
    assert "SHARP_PORT=" not in setup, "UCX: no TCP port to check"


def test_sharp_before_3_13_has_no_automatic_reservations(tmp_path: Path) -> None:
    ctx = inventory(tmp_path, partitions=TENANTS, management=SOFTWARE, sharp_version="3.10.3")
    files = r.render_all(ctx.intent, ctx.fabric, base_dir=tmp_path)
    am = r.conf_options(files["infiniband/ufm/sharp_am.cfg"])
    assert "reservation_auto_by_pkeys" not in am
    assert am["smx_protocol"] == "2", "sockets: the default before SHARP 3.13"
    assert "SHARP_PORT=6126" in files["infiniband/ufm/ufm-setup.sh"]
    report = sm_bringup.bringup_markdown(ctx)
    assert "SHARP 3.10.3 has no `reservation_auto_by_pkeys`" in report
    assert "SHARP Reservation REST API" in report


def _ufm_tree(root: Path) -> None:
    """A fake UFM Enterprise tree: a gv.cfg, opensm.conf and sharp_am.cfg shaped like UFM's
    (fabgen's fixture, not UFM's files) with values fabgen must change. gv.cfg has a decoy
    sharp_enabled in another section before [Sharp]: only [Sharp]'s is UFM's switch."""
    conf = root / "opt/ufm/files/conf"
    (conf / "opensm").mkdir(parents=True)
    (conf / "sharp").mkdir()
    (conf / "gv.cfg").write_text("[Server]\nfabric_interface = ib1\nws_port = 8000\n\n"
                                 "[Plugin]\nsharp_enabled = false\n\n"
                                 "[Sharp]\nsharp_enabled = false\n\n[Logging]\nlevel = INFO\n")
    (conf / "opensm/opensm.conf").write_text("# UFM's OpenSM options\nrouting_engine minhop\n"
                                             "# qos FALSE\nqos FALSE\nlmc 0\n")
    (conf / "sharp/sharp_am.cfg").write_text("smx_protocol 2\nib_qpc_sl 0\n"
                                             "# enable_job_pkey_on_tree FALSE\n"
                                             "# root_guids_file (null)\n")


def _run(script: Path, *args: str, root: Path, outputs: Path, bin_: Path
         ) -> subprocess.CompletedProcess[str]:
    env = {"PATH": f"{bin_}:{os.environ.get('PATH', '/usr/bin:/bin')}", "UFM_ROOT": str(root),
           "FABGEN_STUB_LOG": str(outputs / "calls.log"), "FABGEN_STUB_OUTPUT": str(outputs),
           "LC_ALL": "C"}
    return subprocess.run(["bash", str(script), *args], env=env, capture_output=True,
                          text=True, timeout=60, check=False)


@pytest.fixture
def stub_bin(tmp_path: Path) -> Path:
    """ip, ss, findmnt, ufw and firewall-cmd as stubs (tests/fixtures/hoststubs/_record): canned
    output in <out>/<name>.out, exit code in <out>/<name>.rc."""
    dest = tmp_path / "bin"
    dest.mkdir()
    for name in ("_record", "ip"):
        shutil.copy(STUBS / name, dest / name)
        (dest / name).chmod(0o755)
    for name in ("ss", "findmnt", "ufw", "firewall-cmd"):
        (dest / name).write_text(f'#!/usr/bin/env bash\nexec "$(dirname "$0")/_record" {name} '
                                 '"$@"\n')
        (dest / name).chmod(0o755)
    return dest


def _outputs(tmp: Path, *, master: bool = True, address: str | None = "10.224.0.1/20"
             ) -> Path:
    out = tmp / "out"
    out.mkdir(exist_ok=True)
    # findmnt --mountpoint prints the source and exits 0 where /opt/ufm/files is mounted
    (out / "findmnt.out").write_text("/dev/drbd0\n" if master else "")
    (out / "findmnt.rc").write_text("0" if master else "1")
    (out / "ufw.out").write_text("Status: inactive\n")
    (out / "firewall-cmd.rc").write_text("252")  # firewalld not running
    if address is not None:
        (out / "ip.out").write_text(f"4: ib0    inet {address} brd 10.224.15.255 scope global "
                                    "ib0\\       valid_lft forever preferred_lft forever\n")
    return out


def _rendered(files: dict[str, str], where: Path, prefix: str = "infiniband/ufm/") -> Path:
    where.mkdir(parents=True, exist_ok=True)
    for path, text in files.items():
        if path.startswith(prefix) and "/" not in path[len(prefix):]:
            (where / Path(path).name).write_text(text)
    return where / "ufm-setup.sh"


def test_ufm_setup_writes_and_checks_ufms_files(tmp_path: Path, stub_bin: Path) -> None:
    ctx = inventory(tmp_path, partitions=TENANTS, management=SOFTWARE, sharp_protocol="sockets")
    files = r.render_all(ctx.intent, ctx.fabric, base_dir=tmp_path)
    here = tmp_path / "render"
    script = _rendered(files, here)
    root = tmp_path / "root"
    _ufm_tree(root)
    conf = root / "opt/ufm/files/conf"

    # No IPv4 address on the fabric interface: UFM would not start; nothing is written.
    out = _outputs(tmp_path, address=None)
    before = (conf / "gv.cfg").read_text()
    refused = _run(script, "--host", "ufm01", root=root, outputs=out, bin_=stub_bin)
    assert refused.returncode == 2 and "fix the failures above first" in refused.stderr
    assert "FAIL ib0 lacks 10.224.0.1/20" in refused.stdout
    assert (conf / "gv.cfg").read_text() == before

    out = _outputs(tmp_path)
    dry = _run(script, "--dry-run", "--host", "ufm01", root=root, outputs=out, bin_=stub_bin)
    assert dry.returncode == 0, dry.stderr
    assert (conf / "gv.cfg").read_text() == before, "--dry-run writes nothing"
    # each change said as file, key, old and new value, not as the function that writes it
    assert "  would gv.cfg [Sharp] sharp_enabled: false -> true" in dry.stdout
    assert "  would gv.cfg fabric_interface: ib1 -> ib0" in dry.stdout
    assert "  would sharp_am.cfg smx_protocol: 2 -> 2" not in dry.stdout, "no-op changes are quiet"
    assert "ini_set" not in dry.stdout and "kv_set" not in dry.stdout
    assert "OK   /opt/ufm/files is mounted here (/dev/drbd0): this is the master" in dry.stdout

    done = _run(script, "--host", "ufm01", root=root, outputs=out, bin_=stub_bin)
    assert done.returncode == 0, done.stderr + done.stdout
    gv = (conf / "gv.cfg").read_text()
    assert "fabric_interface = ib0\nws_port = 8000" in gv, "set where it was"
    assert "[Plugin]\nsharp_enabled = false\n" in gv, "another section's key is not UFM's"
    assert "[Sharp]\nsharp_allocation_enabled = true\nsharp_enabled = true\n" in gv
    assert "[Logging]\nlevel = INFO" in gv, "other sections untouched"
    assert (conf / "gv.cfg.fabgen-orig").read_text() == before
    osm = r.conf_options((conf / "opensm/opensm.conf").read_text())
    want = r.conf_options(files["infiniband/ufm/opensm.conf"])
    assert {k: osm[k] for k in want} == want
    assert "# qos FALSE" in (conf / "opensm/opensm.conf").read_text(), "comments kept"
    am_text = (conf / "sharp/sharp_am.cfg").read_text()
    am = r.conf_options(am_text)
    assert (am["smx_protocol"], am["ib_qpc_sl"], am["reservation_auto_by_pkeys"]) == \
        ("2", "1", "TRUE")
    # unverified names: set where UFM's file lists them (uncommented), never added
    assert am["enable_job_pkey_on_tree"] == "TRUE" and "# enable_job_pkey_on_tree" not in am_text
    assert am["root_guids_file"] == ufm.UFM_ROOT_GUIDS
    assert "ib_sat_qpc_sl" not in am
    assert "WARN sharp_am.cfg does not list ib_sat_qpc_sl, so it is not added" in done.stdout
    for name, dest in (("qos-policy.conf", ufm.UFM_QOS_POLICY),
                       ("ib-node-name-map", ufm.UFM_NODE_NAME_MAP),
                       ("root_guids.txt", ufm.UFM_ROOT_GUIDS),
                       ("partitions.conf.user_ext", ufm.UFM_PARTITIONS_USER_EXT)):
        assert (root / dest.lstrip("/")).read_text() == (here / name).read_text(), name
    assert "restart UFM from this master: ufm_ha_cluster stop && ufm_ha_cluster start" in \
        done.stdout
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
    assert "OK   gv.cfg [Sharp] sharp_enabled: true" in check.stdout
    assert "OK   sharp_am listens on TCP 6126" in check.stdout
    assert "OK   no host firewall is active (ufw, firewalld): TCP 6126 is open" in check.stdout
    assert re.search(r"OK   the \d+ tenant ports are limited members of the default partition "
                     r"\(unverified: ", check.stdout)
    # drift: sharp_am off, nothing on TCP 6126, ufw on and closed
    (conf / "gv.cfg").write_text(gv.replace("[Sharp]\nsharp_allocation_enabled = true\n"
                                            "sharp_enabled = true",
                                            "[Sharp]\nsharp_allocation_enabled = true\n"
                                            "sharp_enabled = false"))
    (out / "ss.out").write_text("")
    (out / "ufw.out").write_text("Status: active\n\nTo Action From\n22/tcp ALLOW Anywhere\n")
    drift = _run(script, "--check", "--host", "ufm01", root=root, outputs=out, bin_=stub_bin)
    assert drift.returncode == 1
    fails = [x for x in drift.stdout.splitlines() if x.startswith("FAIL")]
    assert fails == [
        "FAIL ufw blocks TCP 6126: ufw allow in on ib0 proto tcp to any port 6126",
        "FAIL gv.cfg [Sharp] sharp_enabled: false (want true)",
        "FAIL nothing listens on TCP 6126: is UFM running with sharp_enabled = true? "
        "(hosts/preflight.sh tests the port from the compute side)"]


def test_the_standby_checks_only_its_own_part(tmp_path: Path, stub_bin: Path) -> None:
    """On the standby /opt/ufm/files is not mounted (the DRBD volume is the master's): --check
    tests its fabric interface and firewall and passes; a write is refused."""
    ctx = inventory(tmp_path, management=SOFTWARE, sharp_protocol="sockets")
    script = _rendered(r.render_all(ctx.intent, ctx.fabric, base_dir=tmp_path),
                       tmp_path / "render")
    root = tmp_path / "root"
    (root / "opt/ufm/files").mkdir(parents=True)  # the empty mount point
    out = _outputs(tmp_path, master=False, address="10.224.0.2/20")
    check = _run(script, "--check", "--host", "ufm02", root=root, outputs=out, bin_=stub_bin)
    assert check.returncode == 0, check.stdout + check.stderr
    lines = check.stdout.splitlines()
    assert [x for x in lines if x.startswith(("OK", "FAIL"))] == [
        "OK   ib0 has 10.224.0.2/20",
        "OK   no host firewall is active (ufw, firewalld): TCP 6126 is open"]
    assert "standby: /opt/ufm/files is not mounted here" in check.stdout
    assert check.stdout.endswith("ufm-setup.sh: this standby node is ready to take over\n")
    # its own address missing: that is the standby's to fix, and it fails
    (out / "ip.out").write_text("")
    bad = _run(script, "--check", "--host", "ufm02", root=root, outputs=out, bin_=stub_bin)
    assert bad.returncode == 1 and "FAIL ib0 lacks 10.224.0.2/20" in bad.stdout
    # a write on the standby would land under the mount point and vanish: refused
    (out / "ip.out").write_text("4: ib0    inet 10.224.0.2/20 scope global ib0\n")
    write = _run(script, "--host", "ufm02", root=root, outputs=out, bin_=stub_bin)
    assert write.returncode == 2
    assert "this is the standby of the HA pair" in write.stderr
    assert not any(p.is_file() for p in root.rglob("*")), "nothing written"


def test_ufm_setup_stops_on_a_gv_cfg_without_the_key(tmp_path: Path, stub_bin: Path) -> None:
    ctx = inventory(tmp_path, management=SOFTWARE)
    script = _rendered(r.render_all(ctx.intent, ctx.fabric, base_dir=tmp_path),
                       tmp_path / "render")
    root = tmp_path / "root"
    _ufm_tree(root)
    gv = root / "opt/ufm/files/conf/gv.cfg"
    gv.write_text(gv.read_text().replace("fabric_interface = ib1\n", ""))
    result = _run(script, "--host", "ufm01", root=root, outputs=_outputs(tmp_path),
                  bin_=stub_bin)
    assert result.returncode == 2
    assert "has no fabric_interface and UFM's documentation names no section" in result.stderr


# OpenSM partition-config forms of the default partition (doc/partition-config.txt): for each,
# whether the tenants' ports end up limited members. tests/test_ufm_ibsim.py runs each through
# the real OpenSM and reads the hosts' P_Key tables.
DEFAULT_FORMS = {
    "member list": ("Default=0x7fff, ipoib, mtu=5 : ALL=limited, ALL_SWITCHES=full, "
                    "SELF=full ;\n", "limited"),
    "defmember flag": ("Default=0x7fff, ipoib, defmember=limited : ALL, ALL_SWITCHES=full, "
                       "SELF=full ;\n", "limited"),
    "no membership given": ("Default=0x7fff : ALL_CAS, SELF=full ;\n", "limited"),
    "abbreviated, no P_Key": ("Default : ALL=lim, SELF=full ;\n", "limited"),
    "multicast groups": ("Default=0x7fff,ipoib:\n  mgid=ff12:401b::0707,sl=1 # a group\n"
                         "  ALL_CAS=limited, SELF=full;\n", "limited"),
    "full": ("Default=0x7fff, ipoib : ALL=full, SELF=full ;\n", "full"),
    "full bit in the P_Key": ("Default=0xffff : ALL=both ;\n", "full"),
    "defmember full": ("Default=0x7fff, defmember=full : ALL_CAS ;\n", "full"),
    "later entry wins": ("Default=0x7fff : ALL=limited ;\nDefault=0x7fff : ALL_CAS=full ;\n",
                         "full"),
    "no rule for the default partition": ("other=0x0200 : ALL=full ;\n", "limited"),
}


@pytest.fixture(scope="module")
def tenant_setup(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """UFM Enterprise software's ufm-setup.sh (and the files beside it) of the IB example with
    two tenants, rendered once for the tests that only read partitions.conf."""
    tmp = tmp_path_factory.mktemp("tenants")
    ctx = inventory(tmp, partitions=TENANTS, management=SOFTWARE)
    return _rendered(r.render_all(ctx.intent, ctx.fabric, base_dir=tmp), tmp / "render")


@pytest.mark.parametrize("awk", ["mawk", "gawk"])
@pytest.mark.parametrize("form", sorted(DEFAULT_FORMS))
def test_default_membership_is_read_in_every_opensm_form(form: str, awk: str, tmp_path: Path,
                                                         stub_bin: Path,
                                                         tenant_setup: Path) -> None:
    """UFM hosts run Debian's or Ubuntu's awk (mawk) or RHEL's (gawk): the reading holds in
    both."""
    require_tool(awk)
    (stub_bin / "awk").symlink_to(shutil.which(awk) or awk)
    text, expected = DEFAULT_FORMS[form]
    script = tenant_setup
    here = script.parent
    root = tmp_path / "root"
    _ufm_tree(root)
    conf = root / "opt/ufm/files/conf"
    # the tenants merged after UFM's default partition, as sync_partitions_conf.sh does
    (conf / "opensm/partitions.conf").write_text(
        text + (here / "partitions.conf.user_ext").read_text())
    check = _run(script, "--check", "--host", "ufm01", root=root, outputs=_outputs(tmp_path),
                 bin_=stub_bin)
    limited = re.search(r"^OK   the (\d+) tenant ports are limited members of the default "
                        r"partition \(unverified: ", check.stdout, re.MULTILINE)
    full = re.search(r"^WARN (\d+) of the (\d+) tenant ports are full members", check.stdout,
                     re.MULTILINE)
    assert (limited is not None, full is not None) == (expected == "limited",
                                                        expected == "full"), check.stdout
    tenant_ports = len(set(re.findall(r"0x[0-9a-f]{16}",
                                      (here / "partitions.conf.user_ext").read_text())))
    assert int((limited or full).group(1)) == tenant_ports  # type: ignore[union-attr]


def test_one_port_left_full_is_caught(tmp_path: Path, stub_bin: Path,
                                      tenant_setup: Path) -> None:
    """ALL=limited, then one tenant port's GUID =full: that host is a full member."""
    script = tenant_setup
    here = script.parent
    root = tmp_path / "root"
    _ufm_tree(root)
    guid = re.findall(r"0x[0-9a-f]{16}", (here / "partitions.conf.user_ext").read_text())[0]
    (root / "opt/ufm/files/conf/opensm/partitions.conf").write_text(
        f"Default=0x7fff, ipoib : ALL=limited, SELF=full,\n  {guid.upper().replace('0X', '0x')}"
        "=full ;\n" + (here / "partitions.conf.user_ext").read_text())
    check = _run(script, "--check", "--host", "ufm01", root=root, outputs=_outputs(tmp_path),
                 bin_=stub_bin)
    assert re.search(r"^WARN 1 of the \d+ tenant ports are full members", check.stdout,
                     re.MULTILINE), check.stdout


@pytest.mark.realtool
def test_ufm_setup_passes_shellcheck(tmp_path: Path) -> None:
    require_tool("shellcheck")
    scripts = []
    for ib in ({}, {"partitions": TENANTS}, {"sharp": False}, {"sharp_protocol": "sockets"},
               {"partitions": TENANTS, "sharp_protocol": "sockets"}):
        ctx = inventory(tmp_path, management=SOFTWARE, **ib)
        files = r.render_all(ctx.intent, ctx.fabric, base_dir=tmp_path)
        for name in ("infiniband/ufm/ufm-setup.sh",):
            path = tmp_path / f"s{len(scripts)}.sh"
            path.write_text(files[name])
            scripts.append(str(path))
    result = subprocess.run(["shellcheck", "--norc", *scripts], capture_output=True, text=True,
                            check=False, timeout=120)
    assert result.returncode == 0, result.stdout


def test_runbook_sharp_stage_and_preflight_port(tmp_path: Path) -> None:
    ctx = inventory(tmp_path)
    text = preflight.runbook_markdown(ctx)
    stage = text.split("### 4. SHARP", 1)[1]
    assert "NCCL_ALGO=CollNetDirect,CollNetChain NCCL_DEBUG=INFO" in stage
    assert "bash hosts/check-sharp.sh sharp.log" in stage
    # UCX (SHARP 3.13's default): no TCP port to test from the hosts
    assert "SHARP_PORT" not in preflight.TARGET.render(ctx)["hosts/preflight.sh"]
    sockets = inventory(tmp_path, sharp_protocol="sockets")
    script = preflight.TARGET.render(sockets)["hosts/preflight.sh"]
    assert 'SHARP_AM_ADDRESSES=("10.224.0.1" "10.224.0.2")' in script
    assert "SHARP_PORT=6126" in script
    assert "`hosts/preflight.sh` has tested TCP 6126" in preflight.runbook_markdown(sockets)


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
    # both tenant-a; SU 1 holds 31 DGX beside the UFM slot, so dgx032 is SU 2's first
    assert stage2 == ", rail by rail: dgx001 (SU 1) and dgx032 (SU 2)"
    assert "the 59 nodes of tenant tenant-a" in runbook
    assert "-x NCCL_IB_PKEY" in runbook
    # srun places the job on the tenant's hosts, named: without -w Slurm may pick any 59
    srun = [line for line in runbook.splitlines() if line.lstrip().startswith("srun")]
    assert srun and all(" -N 59 -w dgx[001-059] " in line for line in srun), srun
    assert "srun's `-w dgx[001-059]`" in runbook


def test_storage_ufm_needs_some_address_on_its_fabric_interface(tmp_path: Path,
                                                                 stub_bin: Path) -> None:
    """A storage UFM pair (UFM Enterprise software) with no planned IPoIB address: any IPv4
    address on its fabric interface passes, none fails (UFM would not start)."""
    data = load(r.IB_INVENTORY).intent.model_dump(mode="json")
    data["topology"]["storage"]["subnet_manager"]["ufm"] = "software"
    data["topology"]["storage"]["ipoib"] = None
    intent = Intent.model_validate(data)
    files = r.render_all(intent, build(intent))
    script = _rendered(files, tmp_path / "storage", "infiniband/storage/ufm/")
    assert 'UFM_HOSTS=("ufm-stor01" "ufm-stor02")' in script.read_text()
    assert 'UFM_ADDRESSES=("" "")' in script.read_text()
    root = tmp_path / "root"
    _ufm_tree(root)
    out = _outputs(tmp_path, address="192.168.80.1/24")
    some = _run(script, "--check", "--host", "ufm-stor01", root=root, outputs=out, bin_=stub_bin)
    assert "OK   ib0 has an IPv4 address (the plan names none)" in some.stdout
    (out / "ip.out").write_text("")
    none = _run(script, "--check", "--host", "ufm-stor01", root=root, outputs=out, bin_=stub_bin)
    assert "FAIL ib0 has no IPv4 address: UFM will not start without one" in none.stdout
    assert none.returncode == 1
