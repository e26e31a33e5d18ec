"""`fabgen diff` against device backups: what fabgen owns is cut the same way on both sides,
so a backup identical to the render shows no drift (on main, `router bfd` was dropped from
EOS backups only: every switch showed "changed"), the device's own sections are no drift,
and a real difference is shown exactly."""

from __future__ import annotations

import fnmatch
import json
import shutil
from pathlib import Path

import pytest
import yaml

from fabgen.diff.sections import parse_config, parse_frr
from fabgen.platforms.eos.push import backup as eos_backup
from fabgen.platforms.nvue.push import backup as nvue_backup
from fabgen.platforms.sonic.push import backup as sonic_backup
from tests.conftest import GOLDEN

EOS_RENDER = GOLDEN / "roce-eos-nvue-2to1"  # EOS leaves, NVUE spines
SONIC_RENDER = GOLDEN / "roce-256-sonic"


def _backups(tmp_path: Path, platform: str, layout: str) -> tuple[Path, Path]:
    """(a render whose switches include `platform`'s, backups byte-identical to every switch
    config of it: `platform`'s in `layout`, the mixed render's other platform copied)."""
    render = SONIC_RENDER if platform == "sonic" else EOS_RENDER
    out = tmp_path / "backups"
    out.mkdir()
    for other in ("eos", "nvue"):
        if render is EOS_RENDER and other != platform:
            shutil.copytree(render / other, out / other)  # a copy of the render's layout
    if layout == "copy":  # `cp -r render/<platform>/* backups/`
        shutil.copytree(render / platform, out, dirs_exist_ok=True)
    elif platform == "eos":  # Oxidized: one file per device, no extension
        for cfg in (render / "eos").iterdir():
            shutil.copy(cfg, out / cfg.stem)
    elif platform == "nvue":
        for dev in (render / "nvue").iterdir():
            shutil.copy(dev / "startup.yaml", out / f"{dev.name}.yaml")
    else:  # SONiC, flat: config_db.json as <device>.json, its FRR config as <device>.conf
        for dev in (render / "sonic").iterdir():
            shutil.copy(dev / "config_db.json", out / f"{dev.name}.json")
            shutil.copy(dev / "frr.expected.conf", out / f"{dev.name}.conf")
    return render, out


@pytest.mark.parametrize(("platform", "layout"), [
    ("eos", "copy"), ("eos", "flat"), ("nvue", "copy"), ("nvue", "flat"), ("sonic", "copy"),
    ("sonic", "flat")])
def test_a_backup_identical_to_the_render_shows_no_drift(platform: str, layout: str,
                                                         tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    render, backups = _backups(tmp_path, platform, layout)
    # SONiC: config_db.json and the FRR config, and golden_config_db.json where the backup
    # holds it (a copy of the render's directory); a flat backup lacks it: no drift
    configs = (36 if layout == "copy" else 24) if platform == "sonic" else 12
    for old, new in ((backups, render), (render, backups)):
        result = cli("diff", "--format", "json", str(old), str(new))
        data = json.loads(result.out)
        assert result.code == 0, result.out[:2000]
        assert data["compared_by"] == "device"
        assert data["summary"]["files"] == {"added": 0, "removed": 0, "changed": 0,
                                            "unchanged": configs}


def test_switches_the_backups_lack_are_added(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """Backups of the EOS leaves only: the render's NVUE spines are what it would add."""
    backups = tmp_path / "backups"
    shutil.copytree(EOS_RENDER / "eos", backups)
    result = json.loads(cli("diff", "--json", str(backups), str(EOS_RENDER)).out)
    assert result["summary"]["files"] == {"added": 4, "removed": 0, "changed": 0,
                                          "unchanged": 8}
    assert {(d["name"], d["status"]) for d in result["devices"]} == {
        (f"spine-0{i}", "added") for i in range(1, 5)}


def _running_eos(text: str) -> str:
    """An EOS running config as Oxidized saves it: its comments, the device's own sections."""
    return ("! DCS-7060X6-64PE inventory (Oxidized's comment)\n! Command: show running-config\n"
            "! device: leaf (DCS-7060X6-64PE, EOS-4.32.1F)\n!\n"
            "username admin privilege 15 role network-admin secret sha512 $6$x\n!\n"
            "interface Management1\n   ip address 192.0.2.10/24\n!\n"
            "ntp server 192.0.2.1\n!\nmanagement api http-commands\n   no shutdown\n!\n"
            + text.replace("\nend\n", "\n!\nip route vrf MGMT 0.0.0.0/0 192.0.2.1\n!\nend\n"))


def _running_frr(text: str) -> str:
    """vtysh's `show running-config`."""
    return ("Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.5.4\n"
            + text + "!\nservice integrated-vtysh-config\n!\nline vty\n!\nend\n")


def _running_nvue(text: str) -> str:
    """`nv config show -o yaml`: the revision's header, then what is set, with the device's
    own management interface, VRF and AAA."""
    docs = yaml.safe_load(text)
    sets = docs[0]["set"]
    sets["interface"]["eth0"] = {"ip": {"address": {"dhcp": {}}, "vrf": "mgmt"}, "type": "eth"}
    sets["vrf"]["mgmt"] = {"table": "auto"}
    sets["system"]["aaa"] = {"user": {"cumulus": {"role": "system-admin"}}}
    sets["service"] = {"ntp": {"mgmt": {"server": {"192.0.2.1": {}}}}}
    header = {"header": {"model": "SN5600", "nvue-api-version": "nvue_v1", "rev-id": 1.0,
                         "version": "Cumulus Linux 5.11.0"}}
    return yaml.safe_dump([header, {"set": sets}], sort_keys=False)


def _running_sonic(text: str) -> str:
    """`show runningconfiguration all`: the platform's own tables beside fabgen's."""
    data = json.loads(text)
    data["FEATURE"] = {"bgp": {"state": "enabled"}, "lldp": {"state": "enabled"}}
    data["MGMT_INTERFACE"] = {"eth0|192.0.2.10/24": {"gwaddr": "192.0.2.1"}}
    data["CRM"] = {"Config": {"polling_interval": "300"}}
    data["VERSIONS"] = {"DATABASE": {"VERSION": "version_4_0_1"}}
    return json.dumps(data, indent=4)


def _running_backups(tmp_path: Path) -> Path:
    out = tmp_path / "running"
    out.mkdir()
    for cfg in (EOS_RENDER / "eos").iterdir():
        (out / cfg.stem).write_text(_running_eos(cfg.read_text()))
    for dev in (EOS_RENDER / "nvue").iterdir():
        (out / f"{dev.name}.yaml").write_text(_running_nvue((dev / "startup.yaml").read_text()))
    return out


def _running_sonic_backups(tmp_path: Path) -> Path:
    out = tmp_path / "sonic-running"
    for dev in (SONIC_RENDER / "sonic").iterdir():
        (out / dev.name).mkdir(parents=True)
        (out / dev.name / "config_db.json").write_text(
            _running_sonic((dev / "config_db.json").read_text()))
        (out / dev.name / "frr.conf").write_text(
            _running_frr((dev / "frr.expected.conf").read_text()))
    return out


def test_the_devices_own_sections_are_not_drift(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    for backups, render in ((_running_backups(tmp_path), EOS_RENDER),
                            (_running_sonic_backups(tmp_path), SONIC_RENDER)):
        result = cli("diff", "--no-pager", str(backups), str(render))
        assert result.code == 0, result.out[:3000]
        everything = cli("diff", "--json", "--all", str(backups), str(render))
        assert everything.code == 2  # --all: the device's own sections are compared too
        changes = [c for f in json.loads(everything.out)["files"] for c in f["changes"]]
        assert any("Management1" in str(c["new"]) + str(c["old"]) for c in changes) or \
            any("MGMT_INTERFACE" in c["at"] for c in changes)


def test_drift_is_shown_exactly(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    backups = _running_backups(tmp_path)
    leaf = backups / "leaf-su1-r0"
    text = leaf.read_text()
    assert text.count("   mtu 9214\n") > 1
    # One port's MTU drifted, and someone removed BFD: both are fabgen's, both are shown.
    bfd = text[text.index("router bfd\n"):]
    bfd = bfd[:bfd.index("!\n")]
    at = text.index("   mtu 9214\n", text.index("interface Ethernet1/1\n"))
    text = text[:at] + "   mtu 9000\n" + text[at + len("   mtu 9214\n"):]
    leaf.write_text(text.replace(bfd, ""))
    spine = backups / "spine-01.yaml"
    spine.write_text(spine.read_text().replace("hostname: spine-01", "hostname: spine-1"))
    result = json.loads(cli("diff", "--json", str(backups), str(EOS_RENDER)).out)
    files = {f["name"]: f for f in result["files"]}
    assert set(files) == {"leaf-su1-r0", "spine-01"}
    leaf_changes = files["leaf-su1-r0"]["changes"]
    assert {"op": "~", "at": ["interface Ethernet1/1"], "old": "mtu 9000", "new": "mtu 9214"} \
        in [{k: c[k] for k in ("op", "at", "old", "new")} for c in leaf_changes]
    assert next(c["new"] for c in leaf_changes if c["op"] == "+") == "router bfd"
    assert [(c["op"], c["where"], c["old"], c["new"]) for c in files["spine-01"]["changes"]] \
        == [("~", "set system hostname", "spine-1", "spine-01")]
    assert {(d["name"], d["role"], d["new_os"]) for d in result["devices"]} == {
        ("leaf-su1-r0", "leaf", "eos"), ("spine-01", "spine", "nvue")}


def test_an_frr_interface_keeps_its_unindented_lines_and_a_static_route_is_drift(
        tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """frrcfgd writes `interface Ethernet0` / `link-detect` / `!` unindented: a link-detect
    lost on one port is that interface's change, not a top-level line. A static route nobody
    rendered (a default route past the fabric's ECMP) is drift on EOS and in FRR."""
    render, backups = _backups(tmp_path, "sonic", "flat")
    conf = backups / "leaf-su1-r0.conf"
    text = conf.read_text()
    port = "interface Ethernet8\nlink-detect\n"
    assert port in text
    conf.write_text(text.replace(port, "interface Ethernet8\n") + "ip route 0.0.0.0/0 192.0.2.1\n")
    result = json.loads(cli("diff", "--json", str(backups), str(render)).out)
    changes = [(c["op"], c["at"], c["old"], c["new"]) for f in result["files"]
               for c in f["changes"]]
    assert sorted(changes, key=str) == sorted([
        ("+", ["interface Ethernet8"], None, "link-detect"),
        ("-", [], "ip route 0.0.0.0/0 192.0.2.1", None)], key=str), changes
    (tmp_path / "eos").mkdir()
    eos = _running_backups(tmp_path / "eos")
    leaf = eos / "leaf-su1-r0"
    leaf.write_text(leaf.read_text() + "ip route 0.0.0.0/0 192.0.2.1\n")
    result = json.loads(cli("diff", "--json", str(eos), str(EOS_RENDER)).out)
    assert [(c["op"], c["old"]) for f in result["files"] for c in f["changes"]] == [
        ("-", "ip route 0.0.0.0/0 192.0.2.1")]


def test_every_rendered_section_is_in_the_owned_lists() -> None:
    """A section the render holds is compared anyway; the lists also keep one fabgen stops
    rendering visible as a removal. So every rendered section must be in them."""
    for cfg in GOLDEN.glob("*/eos/*.cfg"):
        for node in parse_config(cfg.read_text()):
            owned = eos_backup.EOS_SECTIONS
            assert node.line.startswith(owned) or node.line in owned, \
                (cfg, node.line)
    for conf in [*GOLDEN.glob("*/sonic/*/frr.conf"), *GOLDEN.glob("*/sonic/*/frr.expected.conf")]:
        for node in parse_frr(conf.read_text()):
            owned = sonic_backup.FRR_SECTIONS
            assert node.line.startswith(owned) or node.line in owned, \
                (conf, node.line)
    for db in [*GOLDEN.glob("*/sonic/*/config_db.json"),
               *GOLDEN.glob("*/sonic/*/golden_config_db.json")]:
        assert set(json.loads(db.read_text())) <= sonic_backup.SONIC_TABLES, db
    for startup in GOLDEN.glob("*/nvue/*/startup.yaml"):
        sets = yaml.safe_load(startup.read_text())[0]["set"]
        for top, sub in sets.items():
            for second in sub:
                assert any(fnmatch.fnmatchcase(top, a) and fnmatch.fnmatchcase(second, b)
                           for a, b in nvue_backup.NVUE_PATHS), (startup, top, second)


def test_two_backups_compare_by_device(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """Yesterday's backups against today's (Oxidized's git history): everything compared."""
    a = _running_backups(tmp_path)
    b = tmp_path / "today"
    shutil.copytree(a, b)
    assert cli("diff", "-q", str(a), str(b)).code == 0
    leaf = b / "leaf-su1-r3"
    leaf.write_text(leaf.read_text().replace("ntp server 192.0.2.1", "ntp server 192.0.2.2"))
    result = json.loads(cli("diff", "--json", str(a), str(b)).out)
    assert [(f["name"], [(c["op"], c["old"], c["new"]) for c in f["changes"]])
            for f in result["files"]] == [
        ("leaf-su1-r3", [("~", "ntp server 192.0.2.1", "ntp server 192.0.2.2")])]
    assert result["devices"][0]["role"] == ""  # no render says which role it has


JUNOS_RENDER = GOLDEN / "roce-junos-sonic"  # Junos leaves, SONiC spines


def _junos_backups(tmp_path: Path) -> Path:
    """Two Junos leaves' running configs as a backup tool saves them: the render's statements
    plus the device's own `system services`."""
    out = tmp_path / "backups"
    out.mkdir()
    for name in ("leaf-su1-r0", "leaf-su1-r1"):
        text = (JUNOS_RENDER / "junos" / f"{name}.conf").read_text()
        (out / name).write_text("system {\n    services {\n        ssh;\n    }\n}\n" + text)
    return out


def test_a_render_folder_given_alone_is_that_render_cut_to_it(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """`fabgen diff backups/ out/pod/junos`: the folder is the render's Junos part (no SONiC
    spines added, Junos's owned statements compared), not a directory of backups whose
    `.conf` and `.json` files would be taken for EOS and SONiC configs."""
    backups = _junos_backups(tmp_path)
    for new in (JUNOS_RENDER / "junos", Path(f"{JUNOS_RENDER}/junos/")):
        result = cli("diff", "--json", str(backups), str(new))
        data = json.loads(result.out)
        assert result.code == 2 and data["compared_by"] == "device"
        assert data["summary"]["files"] == {"added": 6, "removed": 0, "changed": 0,
                                            "unchanged": 2}
        assert {d["new_os"] for d in data["devices"]} == {"junos"}
        assert data["new"] == str(new).rstrip("/")
    # the whole render: its SONiC spines too
    data = json.loads(cli("diff", "--json", str(backups), str(JUNOS_RENDER)).out)
    assert data["summary"]["files"]["added"] == 14


def _repo(tmp_path: Path) -> Path:
    """A repository holding the Junos example's render at out/pod, committed twice: the
    second commit changes one leaf's MTU."""
    import subprocess

    repo = tmp_path / "repo"
    shutil.copytree(JUNOS_RENDER, repo / "out" / "pod")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@x"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "render"], check=True)
    leaf = repo / "out" / "pod" / "junos" / "leaf-su1-r0.conf"
    leaf.write_text(leaf.read_text().replace("mtu 9114;", "mtu 9000;"))
    subprocess.run([*git, "commit", "-q", "-am", "mtu"], check=True)
    return repo


@pytest.mark.parametrize(("cwd", "old", "new"), [
    (".", "git:HEAD~1:out/pod/junos", "out/pod/junos"),
    (".", "git:HEAD~1:./out/pod/junos", "git:HEAD:./out/pod/junos/"),
    ("out/pod", "git:HEAD~1:./junos", "./junos"),
    ("out/pod/junos", "git:HEAD~1:./", "."),
    ("out/pod", "git:HEAD~1:out/pod/junos", "junos/."),
    # the other side a whole render: cut to the same folder, the SONiC spines not "removed"
    ("out/pod", "git:HEAD~1:out/pod", "junos"),
])
def test_a_render_folder_is_cut_however_it_is_spelled(tmp_path: Path, cli, cwd: str,  # type: ignore[no-untyped-def]
                                                      old: str, new: str) -> None:
    repo = _repo(tmp_path)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(repo / cwd)
        result = cli("diff", "--json", old, new)
    data = json.loads(result.out)
    assert result.code == 2, result.out[:800] + result.err
    # the folder's 8 switches x 3 files and its NOTES; one leaf's MTU changed
    assert data["summary"]["files"] == {"added": 0, "removed": 0, "changed": 1,
                                        "unchanged": 24}
    assert [f["name"] for f in data["files"]] == ["junos/leaf-su1-r0.conf"]
    # the switch's role, from the render's cabling plan although the plan is not compared
    assert [(d["name"], d["role"]) for d in data["devices"]] == [("leaf-su1-r0", "leaf")]


def test_backups_of_other_platforms_are_out_of_a_folders_scope(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """Backups of every switch against the Junos folder: the SONiC spines' backups are not
    in question (against the whole render they are compared)."""
    backups = _junos_backups(tmp_path)
    for spine in ("spine-01", "spine-02"):
        shutil.copy(JUNOS_RENDER / "sonic" / spine / "config_db.json", backups / f"{spine}.json")
    data = json.loads(cli("diff", "--json", str(backups), str(JUNOS_RENDER / "junos")).out)
    assert data["summary"]["files"] == {"added": 6, "removed": 0, "changed": 0,
                                        "unchanged": 2}
    data = json.loads(cli("diff", "--json", str(backups), str(JUNOS_RENDER)).out)
    assert {d["name"] for d in data["devices"]} >= {"spine-01", "spine-02"}


def test_a_symlinked_folder_is_read_as_given(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """A render's folder that is a symbolic link (the walk of its parent does not enter it) is
    read as the directory it is, not as a render with every file removed."""
    pod = tmp_path / "pod"
    pod.mkdir()
    shutil.copy(JUNOS_RENDER / "manifest.json", pod)
    shutil.copytree(JUNOS_RENDER / "junos", tmp_path / "junos-real")
    (pod / "junos").symlink_to("../junos-real")
    result = cli("diff", "--json", str(JUNOS_RENDER / "junos"), str(pod / "junos"))
    data = json.loads(result.out)
    assert result.code == 0 and data["summary"]["files"]["removed"] == 0, result.out[:800]


def test_a_copy_of_a_platform_folder_elsewhere_is_a_backup(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    """Outside a render (no manifest above it) the same files are backups, compared with the
    render by device."""
    copy = tmp_path / "copy"
    shutil.copytree(JUNOS_RENDER / "junos", copy)
    data = json.loads(cli("diff", "--json", str(copy), str(JUNOS_RENDER)).out)
    assert data["compared_by"] == "device"
    # the 8 leaves' configuration and its YANG JSON unchanged (the `set` rendering is no
    # backup format), the SONiC spines added; NOTES.txt is the render's, not a switch
    assert data["summary"]["files"] == {"added": 8, "removed": 0, "changed": 0,
                                        "unchanged": 16}
    assert {d["name"] for d in data["devices"]} == {f"spine-0{i}" for i in range(1, 5)}
