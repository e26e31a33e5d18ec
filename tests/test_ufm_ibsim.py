"""UFM's files, tenants, updn's roots and the storage subnet in the real OpenSM on ibsim.

- Two tenant partitions, a guids_file made by ibnetdiscover of the simulated fabric, UFM's
  layout (its partitions.conf modelled by opensm_run.ufm_partitions): `smpquery pkeys` (the
  real infiniband-diags tool) shows each host's tenant key at the index NCCL is told
  (NCCL_IB_PKEY) and the host file carries (HOST_PKEY), the default partition at index 0.
- updn without a root_guid_file ranks leaves roots on a fabric whose leaves each hold under 5%
  of the adapters (osm_ucast_updn.c); with fabgen's root list only the spines are.
- The storage network's own subnet comes up with its rendered files, every node's two storage
  ports and the targets' ports active.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from fabgen.intent import load
from fabgen.intent.models import Intent
from fabgen.targets import ib_hosts, nccl, nic, opensm, opensm_files, opensm_plan
from fabgen.targets.base import RenderContext
from fabgen.targets.ibnetdiscover import GuidPlan, guid_plan, render_topology, root_guids
from fabgen.targets.opensm_partitions import TENANT_PKEY_INDEX
from fabgen.topology.build import build, extra_intent
from fabgen.topology.index import FabricIndex

try:  # pytest puts tests/ on sys.path while it has no __init__.py, the repo root once it has
    import ibsim_harness as h
    import opensm_run as r
except ImportError:
    from tests import ibsim_harness as h  # type: ignore[no-redef]
    from tests import opensm_run as r  # type: ignore[no-redef]

pytestmark = pytest.mark.realtool


def shifted(plan: GuidPlan, offset: int = 0x0000_2000_0000) -> GuidPlan:
    """GUIDs as a real fabric would have them: nothing like fabgen's deterministic plan."""
    return GuidPlan({k: v + offset for k, v in plan.switch_guids.items()},
                    {k: v + offset for k, v in plan.ca_guids.items()}, dict(plan.ca_ports),
                    {k: v + offset for k, v in plan.port_guids.items()})


def tenants(**ib: Any) -> Intent:
    """Two 8-port leaves, 3 nodes each, 2 spines, a UFM pair; two tenants of three nodes,
    run by the upstream OpenSM CI has."""
    return Intent.model_validate({
        "name": "tenants", "fabric": {"transport": "infiniband", "generation": "ndr"},
        "cluster": {"nodes": 6, "node": {"nics": 1, "gpus": 1}},
        "topology": {"style": "rail-unaware", "leaf": {"ports": 8, "speed": "400G"},
                     "scalable_unit": 8},
        "infiniband": {"opensm": "upstream",
                       "partitions": [{"name": "tenant-a", "pkey": "0x0101",
                                       "hosts": ["gpu000[1-3]"]},
                                      {"name": "tenant-b", "pkey": "0x0102",
                                       "hosts": ["gpu000[4-6]"]}],
                       "ipoib": {"prefix": "10.224.0.0/24"}, **ib}})


def _pkey_table(text: str) -> list[int]:
    """`smpquery pkeys` output as a list of table entries, index 0 first (infiniband-diags
    smpquery.c pkey_table: rows "  <first index>: <key> <key> ...")."""
    table: dict[int, int] = {}
    for line in text.splitlines():
        row = re.match(r"^\s*(\d+):\s+((?:0x[0-9a-fA-F]{4}\s*)+)$", line)
        if row:
            for i, key in enumerate(row.group(2).split()):
                table[int(row.group(1)) + i] = int(key, 16)
    return [table[i] for i in sorted(table)]


def test_tenant_pkey_sits_where_nccl_looks(tmp_path: Path) -> None:
    h.require_tools()
    intent = tenants()
    fabric = build(intent)
    real = shifted(guid_plan(fabric))
    # the guids_file: what ibnetdiscover finds in the simulated fabric
    seen = h.run_opensm(render_topology(fabric, real), tmp_path / "discover", discover=True)
    assert seen.subnet_up and seen.ibnetdiscover is not None
    (tmp_path / "fabric.ibnd").write_text(seen.ibnetdiscover)
    data = intent.model_dump(mode="json")
    data["infiniband"]["guids_file"] = "fabric.ibnd"
    discovered = Intent.model_validate(data)
    ctx = RenderContext(discovered, fabric, base_dir=tmp_path)
    files = {**opensm.TARGET.render(ctx), **opensm.TOPOLOGY_TARGET.render(ctx),
             **nic.TARGET.render(ctx)}
    env = {e.key: e.value for e in nccl.entries(ctx)}
    assert env["NCCL_IB_PKEY"] == str(TENANT_PKEY_INDEX) == "1"
    assert "infiniband/ufm/partitions.conf.user_ext" in files
    host_pkey = {h_.name: re.search(r'^HOST_PKEY="(0x[0-9a-f]{4})"$',
                                    files[f"hosts/{h_.name}.env"], re.MULTILINE)
                 for h_ in fabric.hosts}
    want = {name: int(m.group(1), 16) for name, m in host_pkey.items() if m}
    assert want == {**{f"gpu000{i}": 0x8101 for i in (1, 2, 3)},
                    **{f"gpu000{i}": 0x8102 for i in (4, 5, 6)}}

    inst = r.install(files, fabric, 0, tmp_path / "deploy")
    node, port = r.sm_location(inst, fabric, 0)
    config = h.merge_config(inst.config, {"guid": f"0x{port:016x}"})
    ports = {host.name: real.port_guids[(host.name, 0)] for host in fabric.hosts}

    def query(client: dict[str, str], run_tmp: Path) -> Any:
        return {name: h.run_tool(client, run_tmp, ["smpquery", "pkeys", "-G", f"0x{guid:x}"])
                for name, guid in ports.items()}

    result = h.run_opensm(inst.topology, tmp_path / "deploy", config=config, files=inst.files,
                          sm_node=node, on_up=query, timeout=30)
    assert result.subnet_up, result.log[-3000:]
    assert "PARSE ERROR" not in result.log
    index = int(env["NCCL_IB_PKEY"] or 0)
    for name, out in result.on_up.items():  # type: ignore[union-attr]
        assert out.returncode == 0, out.stderr
        table = _pkey_table(out.stdout)
        assert table[0] == 0x7FFF, f"{name}: the default partition, limited, at index 0"
        assert table[index] == want[name], f"{name}: {table[:4]}"
        assert table[index] != table[0]
    # and a host's key is not the other tenant's: traffic between tenants is dropped
    assert want["gpu0001"] & 0x7FFF != want["gpu0004"] & 0x7FFF


def _updn_roots(fabric: Any, guids: GuidPlan, tmp: Path, root_file: bool) -> set[int]:
    """The switches updn ranked roots, from OpenSM's own dump (osm_ucast_updn.c dump_roots,
    written with log_flags' ROUTING bit 0x40)."""
    settings = opensm_plan.OpenSMSettings(routing_engine="updn", opensm="upstream",
                                          management="opensm")
    files = opensm.render_opensm(FabricIndex(fabric), guids if root_file else None, settings)
    files["infiniband/topology.ibnet"] = render_topology(fabric, guids)
    inst = r.install(files, fabric, 0, tmp)
    node, port = r.sm_location(inst, fabric, 0)
    config = h.merge_config(inst.config, {"guid": f"0x{port:016x}"})
    result = h.run_opensm(inst.topology, tmp, config=h.merge_config(config, {}),
                          files=inst.files, sm_node=node, timeout=30,
                          on_up=lambda _env, run_tmp: (run_tmp / "dump" /
                                                       "opensm-updn-roots.dump").read_text())
    assert result.subnet_up and "updn tables configured on all switches" in result.log
    return {int(line, 16) for line in str(result.on_up).split()}


def test_updn_ranks_leaves_roots_without_a_root_file(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """24 leaves of one host each: every leaf holds 1/24 < 5% of the adapters, so updn's own
    search ranks all 26 switches roots (fabgen's note says so); root_guids.txt pins the 2
    spines."""
    h.require_tools()
    # OpenSM dumps the roots only with the routing log bit on.
    overrides = h.run_config_overrides
    monkeypatch.setattr(h, "run_config_overrides",
                        lambda tmp, log: {**overrides(tmp, log), "log_flags": "0x43"})
    fabric = h.make_fat_tree(leaves=24, spines=2, hosts_per_leaf=1)
    plan = guid_plan(fabric)
    assert opensm_files.updn_auto_roots(fabric) == 26
    every = _updn_roots(fabric, plan, tmp_path / "auto", root_file=False)
    assert every == set(plan.switch_guids.values())
    pinned = _updn_roots(fabric, plan, tmp_path / "pinned", root_file=True)
    assert pinned == set(root_guids(fabric, plan)) and len(pinned) == 2


def test_storage_subnet_comes_up(tmp_path: Path) -> None:
    """The inventory's storage network, its own subnet: the rendered storage files run in
    OpenSM with the storage UFM pair's first node as SM; every node's two storage ports and the
    targets' ports get their P_Keys (are active), and each node's two ports sit on two leaves."""
    h.require_tools()
    loaded = load(r.IB_INVENTORY).intent
    data = loaded.model_dump(mode="json")
    data["infiniband"].update(opensm="upstream", sharp=False)  # what CI's OpenSM runs
    intent = Intent.model_validate(data)
    fabric = build(intent)
    storage = next(x for x in fabric.extras if x.role == "storage")
    ctx = RenderContext(intent, fabric)
    files = {p: t for p, t in {**opensm.TARGET.render(ctx),
                               **opensm.TOPOLOGY_TARGET.render(ctx)}.items()
             if p.startswith("infiniband/storage/")}
    assert "infiniband/storage/ufm/opensm.conf" in files
    settings = opensm_plan.settings_from_intent(extra_intent(intent, "storage"))
    assert not settings.partitions and not settings.sharp
    for node in fabric.hosts:
        leaves = {x.z_device for x in storage.links if x.a_device == node.name}
        assert len(leaves) == 2, node.name
    result = r.run_plane(files, storage, 0, tmp_path / "storage", timeout=60)
    targets = [x for x in storage.hosts if x.name.startswith("stor")]
    assert len(targets) == 4 and all(len(t.ports) == 8 for t in targets)
    pkeys = result.on_up[0]  # type: ignore[index]
    plan = guid_plan(storage)
    for host in storage.hosts:
        for hp in host.ports:
            assert pkeys[plan.port_guids[(host.name, hp.dev)]], f"{host.name} {hp.rdma_device}"
    ufm = plan.port_guids[("ufm-stor01", 0)]
    assert f"Setting IS_SM on port 0x{ufm:016x}" in result.log
    assert ib_hosts.IPOIB_TABLE_BASE > nic.ROUTE_TABLE_BASE  # the two never share a table


@pytest.mark.parametrize("product", ["software", "appliance"])
def test_check_routing_accepts_either_ufm_node(product: str, tmp_path: Path) -> None:
    """A UFM pair's check-routing.sh, run through the simulator: OpenSM on ufm02 (after a
    failover) is as planned as on ufm01, and reads the log given (UFM's, in production). UFM
    Enterprise software runs it on the master; the appliances run no shell, so there it runs
    on a compute node, through that node's port, with the log copied off the master."""
    h.require_tools()
    intent = tenants(partitions=[])
    fabric = build(intent)
    real = shifted(guid_plan(fabric))
    (tmp_path / "fabric.ibnd").write_text(render_topology(fabric, real, real_guids=True))
    data = intent.model_dump(mode="json")
    data["infiniband"]["guids_file"] = "fabric.ibnd"
    data["infiniband"]["management"] = {"kind": "ufm", "ufm": product,
                                        "hosts": [{"name": "ufm01"}, {"name": "ufm02"}]}
    ctx = RenderContext(Intent.model_validate(data), fabric, base_dir=tmp_path)
    files = {**opensm.TARGET.render(ctx), **opensm.TOPOLOGY_TARGET.render(ctx)}
    check = files["infiniband/check-routing.sh"]
    assert ('log="${1:-/opt/ufm/files/log/opensm.log}"' if product == "software" else
            'log="${1:-opensm.log}"') in check
    for active in ("ufm02", "ufm01"):
        run_tmp = tmp_path / active
        inst = r.install(files, fabric, 0, run_tmp)
        guid = real.port_guids[(active, 0)]
        node = next(n for n, g in r.ca_ports(inst.topology).values() if g == guid)
        config = h.merge_config(inst.config, {"guid": f"0x{guid:016x}"})
        run_tmp.mkdir(parents=True, exist_ok=True)
        script = run_tmp / "check-routing.sh"
        script.write_text(check)

        # where the script runs: the master UFM node, or a compute node (the appliance)
        runner = node if product == "software" else next(
            n for n, g in r.ca_ports(inst.topology).values()
            if g == real.port_guids[("gpu0001", 0)])

        def run_check(client: dict[str, str], at: Path, script: Path = script,
                      runner: str = runner) -> Any:
            return h.run_tool(client, at, ["bash", str(script), str(at / "opensm.log")],
                              env={"CA": "ibsim0", "SIM_HOST": runner})

        result = h.run_opensm(inst.topology, run_tmp, config=config, files=inst.files,
                              sm_node=node, on_up=run_check, timeout=30)
        out = result.on_up
        assert out.returncode == 0, out.stdout  # type: ignore[union-attr]
        assert (f"OK    the master SM binds the planned port of {active} (0x{guid:x})"
                in out.stdout)  # type: ignore[union-attr]


def test_default_partition_forms_in_the_real_opensm(tmp_path: Path) -> None:
    """Each form of the default partition that tests/test_ufm.py feeds ufm-setup.sh's reading
    (DEFAULT_FORMS), through the real OpenSM: a host's P_Key table holds 0x7fff (limited) or
    0xffff (full) as the form's expected membership says. So the reading fabgen ships is
    checked against OpenSM's own parser, not against fabgen's idea of it."""
    h.require_tools()
    try:
        from test_ufm import DEFAULT_FORMS
    except ImportError:
        from tests.test_ufm import DEFAULT_FORMS  # type: ignore[no-redef]
    fabric = h.make_fat_tree(leaves=2, spines=1, hosts_per_leaf=1)
    plan = guid_plan(fabric)
    topology = render_topology(fabric, plan)
    host = plan.port_guids[("node002", 0)]  # node001 runs the SM (SELF=full)
    for i, (form, (text, expected)) in enumerate(sorted(DEFAULT_FORMS.items())):
        run_tmp = tmp_path / f"form{i}"
        result = h.run_opensm(topology, run_tmp, routing_engine="updn",
                              files={"partitions.conf": text},
                              on_up=lambda env, t: h.smp_pkeys(env, t, [host]))
        assert result.subnet_up, (form, result.log[-2000:])
        assert "PARSE ERROR" not in result.log, form
        keys = result.on_up[host]  # type: ignore[index]
        want = 0x7FFF if expected == "limited" else 0xFFFF
        assert keys[0] == want, f"{form}: {[hex(k) for k in keys]}"
