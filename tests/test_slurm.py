"""Slurm topology: hostlists, the leaf groups against the cabling, and the real slurmctld.

The real-tool test starts Debian's slurmctld (22.05: topology/tree only) on 127.0.0.1 with a
throwaway slurm.conf naming the rendered nodes in state FUTURE, reads `scontrol show topology`
and checks it against the cabling: every compute node under exactly one level-0 switch, that
switch's nodes exactly the nodes its leaves serve, the top level covering every node, no storage
or management switch anywhere.
"""

from __future__ import annotations

import getpass
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fabgen.intent import load
from fabgen.intent.models import Intent
from fabgen.render import render
from fabgen.targets.base import RenderContext
from fabgen.targets.hostlist import compress, expand
from fabgen.targets.slurm import TARGET, block_sizes
from fabgen.topology.build import build
from fabgen.topology.groups import compute_hosts, fabric_groups
from fabgen.topology.model import Fabric
from tests.conftest import INVENTORIES, require_tool
from tests.strategies import intents

# --- hostlists ------------------------------------------------------------------------------


def test_hostlist_ranges_keep_the_padding() -> None:
    names = [f"gpu{i:04d}" for i in range(1, 33)] + ["gpu0040"]
    assert compress(names) == "gpu[0001-0032,0040]"
    assert compress(["node9", "node10", "node11"]) == "node9,node[10-11]"
    assert compress(["login"]) == "login"
    assert compress(["dgx001"]) == "dgx001"
    assert expand("gpu[0001-0003,0009],login,node[10-11]") == [
        "gpu0001", "gpu0002", "gpu0003", "gpu0009", "login", "node10", "node11"]


@given(st.lists(st.tuples(st.sampled_from(["gpu", "dgx-a", "n"]), st.integers(0, 1200),
                          st.sampled_from([0, 3, 4])), min_size=1, max_size=60))
@settings(max_examples=200, deadline=None)
def test_hostlist_round_trip(parts: list[tuple[str, int, int]]) -> None:
    names = list(dict.fromkeys(f"{p}{n:0{w}d}" for p, n, w in parts))
    assert sorted(expand(compress(names))) == sorted(names)


# --- leaf groups against the cabling --------------------------------------------------------


def _leaves_by_host(fabric: Fabric) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for link in fabric.links:
        if link.kind == "node-leaf":
            out.setdefault(link.a_device, set()).add(link.z_device)
    return out


def check_groups_match_cabling(fabric: Fabric, level0: dict[str, set[str]]) -> None:
    """A level-0 switch is exactly the nodes its leaves serve, and every node is in one."""
    compute = {h.name for h in compute_hosts(fabric)}
    leaves = {h: ls for h, ls in _leaves_by_host(fabric).items() if h in compute}
    served: dict[str, set[str]] = {}
    for host, ls in leaves.items():
        for leaf in ls:
            served.setdefault(leaf, set()).add(host)
    seen: dict[str, str] = {}
    for switch, nodes in level0.items():
        assert nodes <= compute, f"{switch} names non-compute hosts {sorted(nodes - compute)}"
        for node in nodes:
            assert node not in seen, f"{node} under {seen[node]} and {switch}"
            seen[node] = switch
        group_leaves = set().union(*(leaves[n] for n in nodes))
        for leaf in group_leaves:
            assert served[leaf] == nodes, f"{switch}: leaf {leaf} serves other nodes too"
    assert set(seen) == compute


@given(intents())
@settings(max_examples=60, deadline=None)
def test_groups_partition_the_nodes_by_shared_leaves(intent: Intent) -> None:
    fabric = build(intent)
    groups = fabric_groups(fabric)
    check_groups_match_cabling(fabric, {g.name: set(g.hosts) for g in groups.leaf_groups})
    assert len({g.name for g in groups.leaf_groups}) == len(groups.leaf_groups)
    # each plane's spine sets cover every group once; the pods partition the groups
    for plane in range(fabric.planes):
        children = [c for s in groups.spine_sets if s.plane == plane for c in s.children]
        assert sorted(children) == sorted(g.name for g in groups.leaf_groups)
    assert sum(p.nodes for p in groups.pods) == groups.nodes == len(fabric.hosts)


def three_tier_intent(style: str, planes: int = 2) -> Intent:
    """A small 3-tier fabric (custom 8-port leaves) with every feature the tree must carry."""
    return Intent.model_validate({
        "name": f"t3-{style}", "fabric": {"transport": "infiniband", "generation": "ndr"},
        "cluster": {"nodes": 22, "node": {"model": "generic", "gpus": 4, "nics": 2,
                                          "nic": "connectx-7", "nic_ports": planes}},
        "topology": {"style": style, "planes": planes, "tiers": 3,
                     "leaf": {"ports": 8, "speed": "400G"}},
    })


def test_block_sizes_follow_pods_only_when_slurm_can_aggregate_them() -> None:
    rail = fabric_groups(build(three_tier_intent("rail-optimized")))
    assert block_sizes(rail)[0] == [4, 8]  # 2 SUs of 4 nodes per pod
    classic = fabric_groups(build(three_tier_intent("rail-unaware")))
    assert block_sizes(classic)[0] == [2, 8]  # 4 leaves of 2 nodes per pod
    two_tier = fabric_groups(build(load(INVENTORIES[0]).intent))
    assert len(block_sizes(two_tier)[0]) == 1


def test_topology_yaml_follows_the_documented_format() -> None:
    """topology.yaml(5) of Slurm 25.05 (and data_parser v0.0.43 TOPOLOGY_CONF): a list of
    entries whose first key is `topology`, one of tree/block each; tree switches with `nodes` or
    `children`; blocks with `nodes`; successive block sizes a power of two times the base."""
    for intent in INVENTORIES:
        files = render(load(intent), only=["slurm"])
        text = files["scheduler/slurm/topology.yaml"]
        doc = yaml.safe_load(text)
        assert [d["topology"] for d in doc] == ["tree", "block"]
        for entry in doc:
            assert next(iter(entry)) == "topology"
            assert entry["cluster_default"] is (entry["topology"] == "tree")
            kinds = {"tree", "block", "flat"} & set(entry)
            assert len(kinds) == 1
        tree = doc[0]["tree"]["switches"]
        conf = _conf_switches(files["scheduler/slurm/topology.conf"])
        assert {s["switch"]: s.get("nodes") or s.get("children") for s in tree} == conf
        sizes = doc[1]["block"]["block_sizes"]
        assert all(s % sizes[0] == 0 and (s // sizes[0]) & (s // sizes[0] - 1) == 0
                   for s in sizes)
        for block in doc[1]["block"]["blocks"]:
            assert set(block) == {"block", "nodes"}


def _conf_switches(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            fields = dict(f.split("=", 1) for f in line.split())
            out[fields["SwitchName"]] = fields.get("Nodes") or fields["Switches"]
    return out


# --- the real slurmctld ---------------------------------------------------------------------

_LOG_PROBLEMS = ("Multiple leaf switches contain nodes", "switches lack access",
                 "not a tree", "has no nodes", "Invalid hostnames", "no switch can reach all")


@dataclass
class Controller:
    conf: Path
    log: Path
    env: dict[str, str]

    def scontrol(self, *args: str) -> str:
        out = subprocess.run(["scontrol", *args], env=self.env, capture_output=True,
                             text=True, timeout=60, check=True)
        return out.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _slurm_conf(tmp: Path, nodes: list[str]) -> str:
    host = socket.gethostname().split(".")[0]
    port = _free_port()
    user = getpass.getuser()
    return "\n".join([
        "ClusterName=fabgentest",
        f"SlurmctldHost={host}(127.0.0.1)",
        f"SlurmctldPort={port}",
        f"SlurmdPort={_free_port()}",
        # slurm.conf(5) 22.05: auth/none and cred/none need no munge daemon (test only).
        "AuthType=auth/none",
        "CredType=cred/none",
        f"SlurmUser={user}",
        f"StateSaveLocation={tmp / 'state'}",
        f"SlurmdSpoolDir={tmp / 'spool'}",
        f"SlurmctldPidFile={tmp / 'slurmctld.pid'}",
        f"SlurmctldLogFile={tmp / 'slurmctld.log'}",
        "SlurmctldDebug=info",
        "TopologyPlugin=topology/tree",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "MpiDefault=none",
        "SchedulerType=sched/builtin",
        "SelectType=select/linear",
        "ReturnToService=2",
        f"NodeName={compress(nodes)} CPUs=1 State=FUTURE",
        "PartitionName=all Nodes=ALL Default=YES State=UP",
        "",
    ])


@contextmanager
def run_slurmctld(tmp: Path, topology_conf: str, nodes: list[str]) -> Iterator[Controller]:
    """slurmctld in the foreground on 127.0.0.1, stopped by PID when the caller is done."""
    (tmp / "state").mkdir(parents=True)
    (tmp / "spool").mkdir()
    conf = tmp / "slurm.conf"
    conf.write_text(_slurm_conf(tmp, nodes))
    (tmp / "topology.conf").write_text(topology_conf)  # beside slurm.conf, where Slurm looks
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM")}
    env["SLURM_CONF"] = str(conf)
    log = tmp / "slurmctld.log"
    out = (tmp / "slurmctld.out").open("wb")
    proc = subprocess.Popen(["slurmctld", "-D", "-i", "-f", str(conf)], env=env, cwd=tmp,
                            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                            start_new_session=True)
    out.close()
    ctl = Controller(conf, log, env)
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"slurmctld exited {proc.returncode}:\n"
                            f"{(tmp / 'slurmctld.out').read_text()[-3000:]}")
            ping = subprocess.run(["scontrol", "ping"], env=env, capture_output=True, text=True,
                                  timeout=30)
            if "is UP" in ping.stdout:
                break
            if time.monotonic() > deadline:
                pytest.fail(f"slurmctld did not answer: {ping.stdout}{ping.stderr}")
            time.sleep(0.2)
        yield ctl
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)


def parse_show_topology(text: str) -> dict[str, tuple[int, set[str], set[str]]]:
    """{switch: (level, nodes, child switches)} from `scontrol show topology`."""
    out: dict[str, tuple[int, set[str], set[str]]] = {}
    for line in text.splitlines():
        if not line.startswith("SwitchName="):
            continue
        fields = dict(f.split("=", 1) for f in line.split())
        out[fields["SwitchName"]] = (int(fields["Level"]),
                                     set(expand(fields["Nodes"])) if "Nodes" in fields else set(),
                                     set(expand(fields["Switches"]))
                                     if "Switches" in fields else set())
    return out


def check_against_slurm(fabric: Fabric, topology_conf: str, tmp: Path) -> None:
    nodes = [h.name for h in compute_hosts(fabric)]
    others = {sw.name for extra in fabric.extras for sw in extra.switches}
    for name in sorted(others):
        assert name not in topology_conf, f"{name} (storage/management) in topology.conf"
    with run_slurmctld(tmp, topology_conf, nodes) as ctl:
        shown = parse_show_topology(ctl.scontrol("show", "topology"))
        # scontrol's own hostlist reading agrees with ours on one real line
        sample = next(iter(_conf_switches(topology_conf).items()))
        assert ctl.scontrol("show", "hostnames", sample[1]).split() == expand(sample[1])
    log = ctl.log.read_text()
    problems = [line for line in log.splitlines() if any(p in line for p in _LOG_PROBLEMS)]
    assert not problems, problems
    assert shown, log[-2000:]
    level0 = {name: n for name, (level, n, _c) in shown.items() if level == 0}
    check_groups_match_cabling(fabric, level0)
    top = max(level for level, _n, _c in shown.values())
    assert top >= 1
    for name, (level, covered, _children) in shown.items():
        assert name not in others
        if level == top:
            assert covered == set(nodes), f"top-level {name} misses nodes"
    groups = fabric_groups(fabric)
    level1 = [name for name, (level, _n, _c) in shown.items() if level == 1]
    assert len(level1) == fabric.planes * len(groups.pods)  # one spine set per plane and pod
    if fabric.tiers == 3:
        assert len([n for n, (lv, _a, _b) in shown.items() if lv == 2]) == fabric.planes


@pytest.mark.realtool
@pytest.mark.parametrize("intent", INVENTORIES, ids=lambda p: p.stem)
def test_slurmctld_reads_the_rendered_tree(intent: Path, tmp_path: Path) -> None:
    require_tool("slurmctld", "scontrol")
    loaded = load(intent)
    files = render(loaded, only=["slurm"])
    check_against_slurm(build(loaded.intent), files["scheduler/slurm/topology.conf"], tmp_path)


@pytest.mark.realtool
@pytest.mark.parametrize("style", ["rail-optimized", "rail-unaware"])
def test_slurmctld_reads_a_three_tier_dual_plane_tree(style: str, tmp_path: Path) -> None:
    require_tool("slurmctld", "scontrol")
    intent = three_tier_intent(style)
    fabric = build(intent)
    files = TARGET.render(RenderContext(intent=intent, fabric=fabric))
    check_against_slurm(fabric, files["scheduler/slurm/topology.conf"], tmp_path)


@pytest.mark.parametrize("intent", INVENTORIES, ids=lambda p: p.stem)
def test_report_says_which_job_fits_under_one_leaf_group(intent: Path) -> None:
    loaded = load(intent)
    fabric = build(loaded.intent)
    report = render(loaded, only=["report"])["report.md"]
    section = report.split("## Job placement", 1)[1].split("\n## ", 1)[0]
    gpus = loaded.intent.cluster.node.gpus
    # rail-optimized examples: a leaf group is one scalable unit (the last one may be short of
    # nodes: SM hosts on its reserved slots); a spine set all nodes
    short = len(fabric.hosts) - (fabric.units - 1) * fabric.su_size
    smallest = "" if short == fabric.su_size else f"; {short:,} in the smallest"
    assert (f"A job of up to {fabric.su_size:,} nodes ({fabric.su_size * gpus:,} GPUs{smallest}) "
            "fits under one leaf group, up to "
            f"{len(fabric.hosts):,} nodes ({len(fabric.hosts) * gpus:,} GPUs) under one spine set"
            ) in " ".join(section.split())
    assert "scheduler/slurm/topology.conf" in section
    assert loaded.intent.scheduling.labels.leaf in section
