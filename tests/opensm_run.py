"""Test helper: install one plane's rendered OpenSM files in a temp dir, run the real OpenSM on
the rendered topology in ibsim, and check what it programmed against the files.

Used by test_opensm.py (pure checks of the files) and test_opensm_ibsim.py (the real tools).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from fabgen.targets import opensm
from fabgen.targets.base import RenderContext
from fabgen.targets.ibnetdiscover import parse_ibnetdiscover
from fabgen.targets.ufm import UFM_OPENSM_DIR
from fabgen.topology.model import Fabric

try:  # pytest puts tests/ on sys.path while it has no __init__.py, the repo root once it has
    import ibsim_harness as h
except ImportError:
    from tests import ibsim_harness as h  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
IB_INVENTORY = ROOT / "inventories" / "ib-ndr-1024.yaml"
# Two tenant partitions and three traffic classes on a 16-host fat tree (make_fat_tree).
TENANTS: dict[str, Any] = {
    "partitions": [
        {"name": "tenant-a", "pkey": "0x0101", "hosts": ["node00[1-6]"]},
        {"name": "tenant-b", "pkey": 0x8102, "hosts": ["node007", "node01*"],
         "membership": "limited", "ipoib": False},
    ],
    "traffic_classes": [
        {"name": "best-effort", "sl": 0, "default": True, "ipoib": True},
        {"name": "compute", "sl": 2, "weight": 192, "partitions": ["tenant-a"]},
        {"name": "storage", "sl": 4, "vl": 2, "weight": 32, "partitions": ["tenant-b"]},
    ],
    "service_level": 2,
}

# Engines the Debian OpenSM in CI knows (opensm_plan.ENGINE_BUILDS: the upstream ones).
UPSTREAM_ENGINES = ("ftree", "updn", "minhop")


def render_all(intent: Any, fabric: Fabric, base_dir: Path | None = None) -> dict[str, str]:
    ctx = RenderContext(intent=intent, fabric=fabric, base_dir=base_dir)
    files = opensm.TARGET.render(ctx)
    files.update(opensm.TOPOLOGY_TARGET.render(ctx))
    return files


def fake_intent(**ib: Any) -> SimpleNamespace:
    """An intent-shaped object for fabrics built by hand (ibsim_harness.make_fat_tree): the
    infiniband fields the way settings_from_intent reads them, no management hosts."""
    generation = ib.pop("generation", "ndr")
    base = {"routing_engine": "ftree", "adaptive_routing": None, "sharp": False,
            "service_level": 0, "sm_priority": 15, "opensm": "upstream",
            "management": {"kind": "opensm", "hosts": []}}
    return SimpleNamespace(infiniband=SimpleNamespace(**{**base, **ib}),
                           fabric=SimpleNamespace(generation=generation))


def conf_options(text: str) -> dict[str, str]:
    """The options a config sets (comment lines, commented-out options included, skipped)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, value = line.partition(" ")
            out[key] = value.strip()
    return out


def guid_lines(text: str) -> list[int]:
    return [int(line, 16) for line in text.splitlines() if line.startswith("0x")]


def parse_partitions(text: str) -> list[tuple[int, list[tuple[str, bool]]]]:
    """(P_Key, [(member, full)]) per definition; member is ALL, ALL_SWITCHES, SELF or a GUID."""
    body = re.sub(r"#[^\n]*", "", text)
    out = []
    for stmt in body.split(";"):
        if ":" not in stmt:
            continue
        head, members = stmt.split(":", 1)
        pkey = int(head.split(",")[0].split("=")[1], 16)
        entries = []
        for m in members.split(","):
            if m.strip():
                who, _, how = m.strip().partition("=")
                entries.append((who.strip(), how.strip() == "full"))
        out.append((pkey, entries))
    return out


def expected_pkeys(text: str, port: int, sm_port: int) -> tuple[int, ...]:
    """The P_Keys partitions.conf gives a CA port (0x8000 = full member), sorted."""
    keys = []
    for pkey, entries in parse_partitions(text):
        matched = [full for who, full in entries
                   if who in ("ALL", "ALL_CAS") or (who == "SELF" and port == sm_port)
                   or (who.startswith("0x") and int(who, 16) == port)]
        if matched:
            keys.append(pkey | (0x8000 if any(matched) else 0))
    return tuple(sorted(keys))


def vlarb_pairs(value: str) -> tuple[tuple[int, int], ...]:
    pairs = (p.split(":") for p in value.split(","))
    return tuple((int(vl), int(w)) for vl, w in pairs if int(w))


@dataclasses.dataclass
class Installed:
    config: str  # the master SM's opensm.conf, deployment paths moved into tmp
    host: str | None  # the master SM host, None when the intent plans none
    files: dict[str, str]  # the shared files by name
    topology: str
    cns: list[int]  # cn_guids.txt, [] without real GUIDs
    roots: list[int]


def ufm_partitions(user_ext: str | None, defmember: str) -> str:
    """The partitions.conf UFM generates (UFM Enterprise User Manual, Appendix - Partitioning:
    SM ports and switches full members of the default partition, HCA ports `defmember`, the
    appliance's `ib partition management defmember`), with partitions.conf.user_ext merged in,
    as /opt/ufm/scripts/sync_partitions_conf.sh does. fabgen's model of UFM, for the simulator:
    UFM's own generator is not public."""
    default = f"Default=0x7fff, ipoib, mtu=5 : ALL={defmember}, ALL_SWITCHES=full, SELF=full ;\n"
    return default + (user_ext or "")


def install(files: dict[str, str], fabric: Fabric, plane: int, tmp: Path, *,
            defmember: str | None = None) -> Installed:
    """One plane's rendered files with their deployment paths moved into tmp; the master's
    opensm.conf (the highest sm_priority) is the one run. A UFM pair's one configuration
    (ufm/) runs on its active node, the first UFM host, with the partitions.conf UFM would
    generate (ufm_partitions; `defmember` None: limited when tenants are written)."""
    plane_files = opensm.plane_files(files, fabric, plane)
    if "ufm/opensm.conf" in plane_files:
        where = UFM_OPENSM_DIR
        config = plane_files["ufm/opensm.conf"].replace(where + "/", f"{tmp}/")
        shared = {n[len("ufm/"):]: t for n, t in plane_files.items()
                  if n.startswith("ufm/") and n not in ("ufm/opensm.conf", "ufm/ufm-setup.sh")}
        user_ext = shared.pop("partitions.conf.user_ext", None)
        tenants = user_ext is not None and re.search(r"^\s+0x[0-9a-f]{16}=", user_ext,
                                                       re.MULTILINE) is not None
        shared["partitions.conf"] = ufm_partitions(
            user_ext, defmember or ("limited" if tenants else "full"))
        shared["topology.ibnet"] = plane_files["topology.ibnet"]
        host: str | None = fabric.sm_hosts[0].name
    else:
        where = opensm.deploy_dir(fabric, plane)
        confs = {name: text for name, text in plane_files.items()
                 if name.endswith("opensm.conf")}
        name = max(confs, key=lambda n: (int(conf_options(confs[n])["sm_priority"]), n))
        config = confs[name].replace(where + "/", f"{tmp}/")
        shared = {n: t for n, t in plane_files.items() if "/" not in n and n != "opensm.conf"}
        host = name.split("/")[0] if "/" in name else None
    assert where not in config, "every deployment path was moved"
    topology = shared.pop("topology.ibnet")
    return Installed(config, host, shared, topology,
                     guid_lines(shared.get("cn_guids.txt", "")),
                     guid_lines(shared.get("root_guids.txt", "")))


def ca_ports(topology: str) -> dict[str, tuple[str, int]]:
    """Every CA port of a topology by its description: {"ufm01 HCA-0": (node id, port GUID)}
    for its first port (the one ibsim can attach a client to)."""
    out = {}
    for node in parse_ibnetdiscover(topology).nodes.values():
        if node.kind == "ca" and 1 in node.port_guids:
            out[node.desc] = (node.node_id, node.port_guids[1])
    return out


def every_ca_port(topology: str) -> list[int]:
    """The port GUID of every cabled CA port of a topology, in file order."""
    return [g for node in parse_ibnetdiscover(topology).nodes.values() if node.kind == "ca"
            for _, g in sorted(node.port_guids.items())]


def sm_location(inst: Installed, fabric: Fabric, plane: int) -> tuple[str, int]:
    """(node id, port GUID) where OpenSM runs in the simulator: the port its config binds
    (`guid`), else the planned SM host's port on the plane, else the first CA with a cabled
    port 1, else the first switch (port 0, as on a managed switch). ibsim attaches a client to
    a CA's first port only (sim_ctl_new_client: node_get_port(node, 0))."""
    cas = ca_ports(inst.topology)
    guid = conf_options(inst.config).get("guid")
    if guid is not None:
        want = int(guid, 16)
        found = next((node for node, g in cas.values() if g == want), None)
        assert found is not None, f"no CA port with the bound GUID {guid}"
        return found, want
    if inst.host is not None:
        host = next(h for h in (*fabric.sm_hosts, *fabric.hosts) if h.name == inst.host)
        port = next(hp for hp in host.ports if fabric.planes <= 1 or hp.plane == plane)
        node, guid_ = cas[f"{host.name} HCA-{port.nic}"]
        return node, guid_
    first = h.first_ca(inst.topology)
    disc = parse_ibnetdiscover(inst.topology)
    if first is not None and 1 in disc.nodes[first].port_guids:
        return first, disc.nodes[first].port_guids[1]
    switch = next(n for n in disc.nodes.values() if n.kind == "switch")
    assert switch.guid is not None
    return switch.node_id, switch.guid


def leaves_all_have_hosts(fabric: Fabric, plane: int) -> bool:
    hosts_on = {link.z_device for link in (*fabric.links, *fabric.sm_links)
                if link.kind in ("node-leaf", "sm-leaf")}
    return all(sw.name in hosts_on for sw in fabric.switches
               if sw.role == "leaf" and (fabric.planes <= 1 or sw.plane == plane))


def readback(ports: list[int], qos: bool) -> Any:
    def query(env: dict[str, str], tmp: Path) -> Any:
        pkeys = h.smp_pkeys(env, tmp, ports)
        if not qos:
            return pkeys, None, None
        return pkeys, h.smp_sl2vl(env, tmp, ports), h.smp_vlarb(env, tmp, ports)
    return query


def run_plane(files: dict[str, str], fabric: Fabric, plane: int, tmp: Path, *,
              with_roots: bool = True, timeout: float = 30) -> h.OpenSMResult:
    """Run the master's OpenSM on one plane and check everything it programmed against the
    files: the engine that routed, the port it bound, every CA port's P_Keys, SL2VL and VLArb.

    with_roots=False is the cabling proof: no root/cn GUID files even when rendered, so ftree
    validates the fat tree itself, and no QoS (programming every switch's per-port-pair SL2VL
    tables costs the simulator seconds on the big inventory; the deployment run checks QoS).
    """
    inst = install(files, fabric, plane, tmp)
    options = conf_options(inst.config)
    overrides = {}
    node, port = sm_location(inst, fabric, plane)
    if "guid" not in options:  # the operator's step 3: bind the SM host's port, found here
        overrides["guid"] = f"0x{port:016x}"
    if not with_roots:
        overrides.update({"root_guid_file": "(null)", "cn_guid_file": "(null)", "qos": "FALSE"})
    config = h.merge_config(inst.config, overrides)
    all_cas = every_ca_port(inst.topology)
    result = h.run_opensm(inst.topology, tmp, config=config, files=inst.files, sm_node=node,
                          on_up=readback(all_cas, qos=with_roots), timeout=timeout)
    tail = result.log[-3000:]
    assert result.subnet_up, tail
    engine = options["routing_engine"].split(",")[0]
    assert engine in UPSTREAM_ENGINES, f"{engine} needs NVIDIA's OpenSM, not the one in CI"
    assert f"{engine} tables configured on all switches" in result.log, tail
    if engine == "ftree":
        assert result.ftree_ok and not result.fell_back, tail
        top = [sw for sw in fabric.switches if fabric.planes <= 1 or sw.plane == plane]
        top_role = next(r for r in ("core", "spine", "leaf") if any(s.role == r for s in top))
        roots = len(inst.roots) if inst.roots and with_roots else sum(
            1 for s in top if s.role == top_role)
        if (inst.roots and with_roots) or leaves_all_have_hosts(fabric, plane):
            # ftree left to guess the roots takes a leaf without hosts for one
            assert f"{roots} switches at rank 0 (roots)" in result.log, tail
        cns = len(inst.cns) if inst.cns and with_roots else len(all_cas)
        assert f"({cns} of them CNs)" in result.log, tail
    assert result.ftree_errors == ()
    assert "PARSE ERROR" not in result.log
    assert not re.findall(r"ERR [0-9A-F]{4}", result.log), tail

    bound = int(re.findall(r"Setting IS_SM on port (0x[0-9a-fA-F]+)", result.log)[0], 16)
    assert bound == port, "OpenSM bound the port its config names"
    if with_roots:
        assert "Loading QoS policy file" in result.log
    pkeys, sl2vl, vlarb = result.on_up  # type: ignore[misc]
    want_sl2vl = tuple(int(v) for v in options["qos_sl2vl"].split(","))
    want_vlarb = (vlarb_pairs(options["qos_vlarb_low"]), vlarb_pairs(options["qos_vlarb_high"]))
    assert len(pkeys) == len(all_cas)
    for guid in all_cas:
        want = expected_pkeys(inst.files["partitions.conf"], guid, bound)
        assert tuple(sorted(pkeys[guid])) == want, f"port {guid:#x}"
        if with_roots:
            assert sl2vl[guid] == want_sl2vl, f"port {guid:#x}"
            assert vlarb[guid] == want_vlarb, f"port {guid:#x}"
    return result
