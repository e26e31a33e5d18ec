"""Bounds (issues 15 and 18): the largest fabric fabgen builds, hostile intents that must fail
small, and a clean error when memory truly runs out."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fabgen.errors import FabgenError
from fabgen.intent import load
from fabgen.intent.models import MAX_HOST_PORTS
from fabgen.topology import sizing
from tests.conftest import ROOT
from tests.hostile import ALIAS_BOMB

BASE = (ROOT / "inventories" / "roce-256-sonic.yaml").read_text(encoding="utf-8")


def _largest(nodes: int) -> dict[str, object]:
    """benchmarks/render_scale.py's RoCE fabric (8 rails on SN5600 2x400G) with `nodes`."""
    return {
        "name": "largest", "fabric": {"transport": "roce", "speed": "400G"},
        "cluster": {"nodes": nodes, "node": {"gpus": 8, "nics": 8}},
        "topology": {"scalable_unit": 64, "leaf": {"model": "sn5600", "breakout": "2x400G"}},
        "qos": {"cable_length_m": 5, "fabric_cable_length_m": 100},
        "addressing": {"p2p": "10.0.0.0/11", "hosts": "10.64.0.0/11",
                       "loopbacks": "10.255.0.0/16", "asn": {"leaf_start": 4200000000}},
    }


def test_the_largest_supported_fabric_is_valid_and_one_node_more_is_not(tmp_path: Path) -> None:
    """The README's largest fabric (262,144 host ports; its render is benchmarked at 1.7 GiB)
    passes every check; one node more is refused at cluster.nodes, naming the limit."""
    nodes = MAX_HOST_PORTS // 8
    path = tmp_path / "max.yaml"
    path.write_text(yaml.safe_dump(_largest(nodes)))
    loaded = load(path)
    assert sizing.shape(loaded.intent).host_ports() == MAX_HOST_PORTS
    path.write_text(yaml.safe_dump(_largest(nodes + 1)))
    with pytest.raises(FabgenError) as info:
        load(path)
    assert [d.render() for d in info.value.diagnostics] == [
        f"{path}:11:10: cluster.nodes: 32,769 nodes x 8 ports (compute, storage and "
        "management) are 262,152 host ports; fabgen builds fabrics of up to 262,144 (at most "
        "32,768 nodes like these; a larger cluster is several fabrics, one intent each)"]


def test_storage_and_management_ports_count_toward_the_limit(tmp_path: Path) -> None:
    data = _largest(MAX_HOST_PORTS // 8)
    data["topology"]["management"] = {  # type: ignore[index]
        "nics": 1, "speed": "100G", "leaf": {"model": "sn4600c"}}
    path = tmp_path / "max.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(FabgenError, match=r"x 9 ports .* are 294,912 host ports"):
        load(path)


# Each within fabgen's bounds only because of them: the process must end with one line and
# exit 1, small. Peak memory is read from the child's own rusage (wait4).
HOSTILE: dict[str, str | tuple[str, str]] = {
    "alias-bomb": ALIAS_BOMB,
    "deep-lists": "x: " + "[" * 5000 + "]" * 5000 + "\n",
    "deep-maps": "x: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n",
    "deep-alias-chain": "a0: &a0 [[[[[[[[[[1]]]]]]]]]]\n" + "".join(
        f"a{i}: &a{i} [[[[[[[[[[*a{i - 1}]]]]]]]]]]\n" for i in range(1, 10)),
    "long-integer": "x: " + "9" * 4000 + "\n",
    "big-file": "x: [" + ", ".join(["1"] * 60000) + "]\n",
    "many-values": "x: [" + ", ".join(["1"] * 30000) + "]\n",
    "name-width": ("gpu{index:04d}", "gpu{index:0999999999d}"),
}
MAX_RSS_MIB = 100


# The child reports its own high-water mark (VmHWM): rusage's ru_maxrss of a child started
# from this big test process counts the parent's pages it was forked with.
CHILD = ("import re, sys\n"
         "from fabgen.cli import main\n"
         "code = main(sys.argv[1:])\n"
         "hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())[1]\n"
         "print(hwm)\n"
         "sys.exit(code)\n")


def _peak_child_rss_mib(args: list[str], cwd: Path) -> tuple[int, float, str]:
    """Run `fabgen ARGS` in a child: its exit code, its own peak RSS and its stderr."""
    proc = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)  # a hang guard, not a speed test
    return proc.returncode, int(proc.stdout.split()[-1]) / 1024, proc.stderr


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_intents_fail_in_one_line_under_100_mib(case: str, tmp_path: Path) -> None:
    path = tmp_path / f"{case}.yaml"
    text = HOSTILE[case]
    path.write_text(BASE.replace(*text) if isinstance(text, tuple) else BASE + text,
                    encoding="utf-8")
    code, rss, err = _peak_child_rss_mib(["--no-color", "validate", str(path)], tmp_path)
    assert code == 1 and len(err.splitlines()) == 1, err
    assert err.startswith(f"{path}:"), err
    assert rss < MAX_RSS_MIB, f"{case}: peak RSS {rss:.0f} MiB"


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_out_of_memory_is_one_clean_line_and_writes_nothing(tmp_path: Path) -> None:
    """A render that cannot get memory (a ulimit, a full machine) ends with one line and
    exit 1, never a crash inside a serialiser, and leaves nothing beside its output."""
    intent = tmp_path / "big.yaml"
    intent.write_text(yaml.safe_dump(_largest(1024)))
    script = (
        "import re, resource, sys\n"
        "from fabgen.cli import main\n"
        "import fabgen.render, fabgen.platforms.sonic.target, orjson\n"
        "size = int(re.search(r'VmSize:\\s+(\\d+)', open('/proc/self/status').read())[1])\n"
        "limit = (size + 24 * 1024) * 1024  # 24 MiB more than the interpreter already has\n"
        "resource.setrlimit(resource.RLIMIT_AS, (limit, limit))\n"
        "sys.exit(main(['--no-color', 'render', sys.argv[1], '-o', sys.argv[2]]))\n")
    proc = subprocess.run([sys.executable, "-c", script, str(intent), str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])
    assert proc.stderr == ("error: out of memory (a ulimit or the machine's); the README's "
                           "Scale section says what a fabric of this size needs\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.yaml"]
