"""IPoIB addressing and the storage network's layout: what build() plans and what the intent
checks refuse (test_ufm_ibsim.py brings the storage subnet up in ibsim)."""

from __future__ import annotations

from ipaddress import IPv4Network
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from fabgen.errors import FabgenError
from fabgen.intent import load
from fabgen.intent.models import Intent
from fabgen.targets import sm_bringup
from fabgen.targets.base import RenderContext
from fabgen.topology.build import build

try:  # pytest puts tests/ on sys.path while it has no __init__.py, the repo root once it has
    import opensm_run as r
except ImportError:
    from tests import opensm_run as r  # type: ignore[no-redef]


def _inventory(**changes: Any) -> dict[str, Any]:
    data = load(r.IB_INVENTORY).intent.model_dump(mode="json")
    for path, value in changes.items():
        node = data
        *parents, last = path.split(".")
        for key in parents:
            node = node[key]
        node[last] = value
    return data


def _load(tmp: Path, data: dict[str, Any]) -> Any:
    import yaml

    path = tmp / "intent.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return load(path)


def test_ipoib_addresses_every_compute_port_and_the_ufm_interfaces() -> None:
    intent = load(r.IB_INVENTORY).intent
    fabric = build(intent)
    prefix = IPv4Network("10.224.0.0/20")
    ufm = [hp.ipoib for h in fabric.sm_hosts for hp in h.ports if hp.ipoib is not None]
    assert [a.with_prefixlen for a in ufm] == ["10.224.0.1/20", "10.224.0.2/20"]
    # one address per UFM host: its fabric interface, the port its SM binds (the first)
    assert all(h.ports[0].ipoib is not None and all(p.ipoib is None for p in h.ports[1:])
               for h in fabric.sm_hosts)
    ports = [hp for h in fabric.hosts for hp in h.ports]
    assert all(hp.ipoib is not None for hp in ports)
    addresses = [hp.ipoib.ip for hp in ports if hp.ipoib is not None]
    assert len(set(addresses)) == len(addresses) == 127 * 8
    assert all(hp.ipoib is not None and hp.ipoib.interface.network == prefix for hp in ports)
    assert addresses[:2] == ["10.224.0.3", "10.224.0.4"]
    assert not {a.ip for a in ufm} & set(addresses)
    # the management network gets none; the storage network its own subnet
    # (topology.storage.ipoib): its UFM pair's fabric interfaces, then every node's two storage
    # ports, never the storage system's (its vendor's)
    by_role = {x.role: x for x in fabric.extras}
    assert all(hp.ipoib is None for h in (*by_role["management"].hosts,
                                          *by_role["management"].sm_hosts) for hp in h.ports)
    storage = by_role["storage"]
    assert [hp.ipoib.with_prefixlen for h in storage.sm_hosts for hp in h.ports
            if hp.ipoib is not None] == ["10.226.0.1/23", "10.226.0.2/23"]
    nodes = [h for h in storage.hosts if h.name in {x.name for x in fabric.hosts}]
    targets = [h for h in storage.hosts if h.name not in {x.name for x in fabric.hosts}]
    assert [hp.ipoib.with_prefixlen for hp in nodes[0].ports if hp.ipoib is not None] == \
        ["10.226.0.3/23", "10.226.0.4/23"]
    assert all(hp.ipoib is not None for h in nodes for hp in h.ports)
    assert all(hp.ipoib is None for h in targets for hp in h.ports)
    storage_addresses = [hp.ipoib.ip for h in nodes for hp in h.ports if hp.ipoib is not None]
    assert len(set(storage_addresses)) == 127 * 2


@pytest.mark.parametrize(("changes", "message", "loc"), [
    ({"infiniband.ipoib": {"prefix": "10.224.0.0/23"}},
     "IPoIB subnet 10.224.0.0/23 has 512 addresses; the compute ports and subnet-manager hosts "
     "need 1020", ("infiniband", "ipoib", "prefix")),
    ({"infiniband.partitions": [{"name": "a", "pkey": 1, "hosts": ["dgx00*"]},
                                {"name": "b", "pkey": 2, "hosts": ["dgx001"]}]},
     "host 'dgx001' is in partitions 'a' and 'b'", ("infiniband", "partitions", 1, "hosts")),
    ({"topology.storage.targets": {"count": 2, "ports": 2, "name": "dgx{index:03d}"}},
     "storage target 'dgx001' is already a compute host's name",
     ("topology", "storage", "targets", "name")),
    ({"topology.storage.subnet_manager": {"hosts": [{"name": "ufm01"}]}},
     "'ufm01' is already a compute subnet-manager host's name",
     ("topology", "storage", "subnet_manager", "hosts", 0, "name")),
    ({"topology.management.targets": {"count": 1}},
     "only the storage network has storage targets", ("topology", "management", "targets")),
    ({"topology.management.subnet_manager": {"hosts": [{"name": "m1"}]}},
     "a subnet manager belongs to an InfiniBand storage network only",
     ("topology", "management", "subnet_manager")),
    ({"topology.management.ipoib": {"prefix": "10.9.0.0/16"}},
     "IPoIB addressing belongs to an InfiniBand storage network only",
     ("topology", "management", "ipoib")),
    ({"topology.storage.ipoib": {"prefix": "10.226.0.0/24"}},
     "IPoIB subnet 10.226.0.0/24 has 256 addresses; the nodes' storage ports and the storage "
     "subnet manager need 258", ("topology", "storage", "ipoib", "prefix")),
    ({"infiniband.sharp_protocol": "ucx", "infiniband.sharp_version": "3.10"},
     "sharp_protocol ucx with SHARP 3.10: before 3.10.3 UCX must also be enabled",
     ("infiniband", "sharp_protocol")),
])
def test_intent_checks(tmp_path: Path, changes: dict[str, Any], message: str,
                       loc: tuple[Any, ...]) -> None:
    with pytest.raises(FabgenError) as err:
        _load(tmp_path, _inventory(**changes))
    found = [d for d in err.value.diagnostics if message in d.message]
    assert found, [d.message for d in err.value.diagnostics]
    assert found[0].loc == loc


def test_sharp_without_ipoib_is_a_warning(tmp_path: Path) -> None:
    data = _inventory(**{"infiniband.ipoib": None})
    warnings = [w for w in _load(tmp_path, data).warnings if w.loc == ("infiniband", "ipoib")]
    assert [w.message for w in warnings] == [
        "SHARP is on but no IPoIB addresses are planned: SHARP wants IPoIB on the compute "
        "servers (Setting up NVIDIA SHARP Environment), and UFM's fabric_interface needs an "
        "IPv4 address"]
    data["infiniband"]["sharp_protocol"] = "sockets"
    warnings = [w for w in _load(tmp_path, data).warnings if w.loc == ("infiniband", "ipoib")]
    assert [w.message for w in warnings] == [
        "SHARP is on but no IPoIB addresses are planned: libsharp reaches sharp_am over IPoIB "
        "(TCP 6126, sharp_protocol sockets), and UFM's fabric_interface needs an IPv4 address"]
    data["infiniband"]["sharp"] = False
    assert not [w for w in _load(tmp_path, data).warnings
                if w.loc == ("infiniband", "ipoib")]


def test_ufm_software_with_tenants_warns_the_hosts_stay_full_members(tmp_path: Path) -> None:
    data = _inventory(**{"infiniband.partitions": [{"name": "a", "pkey": 1,
                                                    "hosts": ["dgx00*"]}],
                         "infiniband.management.ufm": "software"})
    warnings = [w for w in _load(tmp_path, data).warnings
                if w.loc == ("infiniband", "management", "ufm")]
    assert len(warnings) == 1 and "documents no setting that makes the hosts limited members" \
        in warnings[0].message
    data["infiniband"]["default_membership"] = "full"  # said: accepted
    assert not [w for w in _load(tmp_path, data).warnings
                if w.loc == ("infiniband", "management", "ufm")]
    data["infiniband"]["management"]["ufm"] = "appliance"
    data["infiniband"]["default_membership"] = None
    assert not [w for w in _load(tmp_path, data).warnings
                if w.loc == ("infiniband", "management", "ufm")]


def test_two_planes_refuse_one_ipoib_subnet() -> None:
    from fabgen.errors import Diagnostics
    from fabgen.intent import semantic

    intent = Intent.model_validate({
        "name": "dual", "fabric": {"transport": "infiniband", "generation": "ndr"},
        "cluster": {"nodes": 4, "node": {"nics": 2, "nic_ports": 2}},
        "topology": {"leaf": {"ports": 8, "speed": "400G"}, "planes": 2},
        "infiniband": {"ipoib": {"prefix": "10.1.0.0/24"}}})
    diags = Diagnostics()
    semantic.check(intent, diags)
    assert [(d.message, d.loc) for d in diags.errors if d.loc[:2] == ("infiniband", "ipoib")] \
        == [("IPoIB addressing covers one subnet; each plane is a subnet of its own",
             ("infiniband", "ipoib"))]


def test_storage_ports_reach_two_leaves_and_targets_alternate() -> None:
    intent = load(r.IB_INVENTORY).intent
    fabric = build(intent)
    storage = next(x for x in fabric.extras if x.role == "storage")
    nodes = {h.name for h in fabric.hosts}
    for host in storage.hosts:
        leaves = [x.z_device for x in storage.links if x.a_device == host.name]
        if host.name in nodes:
            assert len(leaves) == 2 and len(set(leaves)) == 2, host.name
        else:  # a target: 8 ports, consecutive ones on different leaves
            assert len(leaves) == 8 and all(a != b for a, b in pairwise(leaves))
    targets = [h.name for h in storage.hosts if h.name not in nodes]
    assert targets == ["stor01", "stor02", "stor03", "stor04"]
    assert [h.name for h in storage.sm_hosts] == ["ufm-stor01", "ufm-stor02"]
    sm_leaves = {x.z_device for x in storage.sm_links}
    assert len(sm_leaves) == 2, "the storage UFM pair on two leaves"
    # every leaf port used once
    ends = [(x.z_device, x.z_port) for x in (*storage.links, *storage.sm_links)]
    assert len(ends) == len(set(ends))
    # the report says so
    text = sm_bringup.bringup_markdown(RenderContext(intent, fabric))
    section = text.split("### The storage subnet", 1)[1]
    assert "each node's 2 storage ports reach 2 different leaves" in section
    assert "the storage system's 32 ports (4 targets: stor01, stor02, stor03, ...)" in section
    assert "| ufm-stor01 | active |" in section


def test_storage_without_a_subnet_manager_is_said(tmp_path: Path) -> None:
    data = _inventory()
    del data["topology"]["storage"]["subnet_manager"]
    intent = _load(tmp_path, data).intent
    fabric = build(intent)
    storage = next(x for x in fabric.extras if x.role == "storage")
    assert storage.sm_hosts == ()
    text = sm_bringup.bringup_markdown(RenderContext(intent, fabric))
    assert "No subnet manager is planned for it (`topology.storage.subnet_manager`)" in text
