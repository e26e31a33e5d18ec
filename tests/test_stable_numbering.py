"""Growth renumbers nothing: a fabric with one more scalable unit, or more nodes in a unit built
in full, keeps every existing cable's id and both ends, every switch's loopback, ASN and
number, every host's addresses, IPoIB address and GUIDs (topology.numbering).

The one exception is physical: when the spines (or cores) a fabric has cannot take another
unit, growth adds spines and spreads each leaf's uplinks over them (equal links to every
spine), so those cables move to new spines. They keep their id, their leaf end and their /31;
the test then checks that the spine layer really did change shape, so the exception can never
hide a numbering bug.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fabgen.errors import Diagnostics
from fabgen.intent import load, semantic
from fabgen.intent.models import Intent
from fabgen.targets.ibnetdiscover import guid_plan
from fabgen.topology import sizing
from fabgen.topology.build import build, extra_shape
from fabgen.topology.model import Fabric, Link
from tests.strategies import intents

ROOT = Path(__file__).resolve().parent.parent
INVENTORIES = sorted((ROOT / "inventories").glob("*.yaml"))
# What decides where a leaf's uplinks go and where a spine's go: when growth changes one, the
# spine layer changed shape and the cables above the leaves were re-spread (physically).
_SPINE_LAYER = ("tiers", "spines_per_pod", "leaf_spine_links", "leaf_up",
                "spine_up", "spine_up_offset", "cores_per_group", "spine_core_links")


def pinned(intent: Intent) -> Intent:
    """The intent with each network's unit size written out, as one that grows sets it: a unit
    sized to its nodes (no scalable_unit) is re-sized by growth, which is not growth by units."""
    data = intent.model_dump(mode="json")
    data["topology"]["scalable_unit"] = sizing.shape(intent).su_size
    for role in ("storage", "management"):
        if data["topology"][role] is not None:
            data["topology"][role]["scalable_unit"] = extra_shape(intent, role).su_size
    return Intent.model_validate(data)


def grown(intent: Intent, nodes: int) -> Intent:
    data = intent.model_dump(mode="json")
    data["cluster"]["nodes"] += nodes
    return Intent.model_validate(data)


def shapes(intent: Intent) -> dict[str, sizing.Shape]:
    out = {"compute": sizing.shape(intent)}
    for role in ("storage", "management"):
        if getattr(intent.topology, role) is not None:
            out[role] = extra_shape(intent, role)
    return out


def networks(fabric: Fabric) -> dict[str, Fabric]:
    return {fabric.role: fabric, **{x.role: x for x in fabric.extras}}


def spine_layer_changed(old: sizing.Shape, new: sizing.Shape) -> bool:
    return any(getattr(old, f) != getattr(new, f) for f in _SPINE_LAYER)


def _anchor(link: Link) -> tuple[object, ...]:
    """What a cable keeps even when growth moves it to a new upper switch: its id's switch
    port (the lower end), its other end for a host cable, and its /31."""
    return (link.kind, link.a_device, link.a_port, link.a_address, link.z_address,
            *((link.z_device, link.z_port) if link.kind in ("node-leaf", "sm-leaf",
                                                             "peer-link") else ()))


def stability(old_intent: Intent, new_intent: Intent) -> dict[str, Counter[str]]:
    """Assert that `new_intent` (the old one grown) renumbers nothing; returns, per network,
    how many cables were kept whole, moved to a new upper switch, or added."""
    old_shapes, new_shapes = shapes(old_intent), shapes(new_intent)
    old_fabric, new_fabric = build(old_intent), build(new_intent)
    tally: dict[str, Counter[str]] = {}
    for role, old in networks(old_fabric).items():
        new = networks(new_fabric)[role]
        where = f"{role} network"
        respread = spine_layer_changed(old_shapes[role], new_shapes[role])
        ids = [link.id for link in (*new.links, *new.sm_links)]
        assert len(ids) == len(set(ids)), f"{where}: cable ids are not unique"
        new_links = {link.id: link for link in (*new.links, *new.sm_links)}
        count: Counter[str] = Counter()
        for link in (*old.links, *old.sm_links):
            now = new_links.get(link.id)
            if now == link:
                count["kept"] += 1
                continue
            above = link.kind in ("leaf-spine", "spine-core")
            assert above and respread, f"{where}: {link} became {now}"
            if now is not None:
                assert _anchor(now) == _anchor(link), f"{where}: {link} became {now}"
            count["moved"] += 1
        count["added"] = len(new_links) - count["kept"] - sum(
            1 for link in (*old.links, *old.sm_links)
            if link.id in new_links and new_links[link.id] != link)
        switches = {s.name: s for s in new.switches}
        for s in old.switches:
            assert s.name in switches, f"{where}: {s.name} is gone"
            t = switches[s.name]
            assert (t.loopback, t.asn, t.number) == (s.loopback, s.asn, s.number), \
                f"{where}: {s.name} {s.loopback} AS{s.asn} #{s.number} became " \
                f"{t.loopback} AS{t.asn} #{t.number}"
        hosts = {h.name: h for h in (*new.hosts, *new.sm_hosts)}
        for h in (*old.hosts, *old.sm_hosts):
            assert hosts.get(h.name) == h, f"{where}: host {h.name} changed"
        if old.transport == "infiniband":
            before, after = guid_plan(old), guid_plan(new)
            for table in ("switch_guids", "ca_guids", "port_guids"):
                mine, theirs = getattr(before, table), getattr(after, table)
                assert {k: theirs.get(k) for k in mine} == mine, f"{where}: {table} moved"
        tally[role] = count
    return tally


def _fits(intent: Intent) -> bool:
    try:
        sizing.shape(intent)
    except sizing.SizingError:
        return False
    diags = Diagnostics()
    semantic.check(intent, diags)
    return not diags.errors


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.filter_too_much])
@given(intents(max_host_ports=600), st.data())
def test_growth_renumbers_nothing(intent: Intent, data: st.DataObject) -> None:
    """Any fabric the strategies draw, grown by a unit or by a node: nothing moves but what
    a changed spine layer re-spreads."""
    intent = pinned(intent)
    su = sizing.shape(intent).su_size
    extra = data.draw(st.sampled_from((1, su)), label="nodes added")
    bigger = grown(intent, extra)
    assume(_fits(bigger))
    # 2 to 3 tiers re-plans the spine layer (test_two_to_three_tiers says what stays).
    assume(all(new.tiers == old.tiers
               for old, new in zip(shapes(intent).values(), shapes(bigger).values(), strict=True)))
    stability(intent, bigger)


@pytest.mark.parametrize("path", INVENTORIES, ids=lambda p: p.stem)
def test_example_inventories_grow_by_a_unit(path: Path) -> None:
    intent = load(path).intent
    su = sizing.shape(intent).su_size
    bigger = grown(intent, su)
    tally = stability(intent, bigger)
    old, new = sizing.shape(intent), sizing.shape(bigger)
    if path.stem == "ib-ndr-1024":
        # 4 SUs fill the 16 QM9700 spines (32 leaves x 32 uplinks = 16 x 64 ports): a fifth
        # needs 32 spines, one link from every leaf to each, as NVIDIA's SuperPOD adds spines
        # with SUs (H100 RA Table 4). Every other number stays.
        assert (old.spines_per_pod, new.spines_per_pod) == (16, 32)
        assert tally["compute"]["moved"] == 32 * 32 - 1  # leaf-su1-r0 port 33 stays on spine-01
        assert tally["storage"]["moved"] == 0 and tally["management"]["moved"] == 0
    else:
        assert not spine_layer_changed(old, new)
        assert all(t["moved"] == 0 for t in tally.values())


def _bench(gpus: int, transport: str) -> Intent:
    sys.path.insert(0, str(ROOT))
    from benchmarks.render_scale import intent_for

    return Intent.model_validate(intent_for(gpus, transport))


@pytest.mark.parametrize(("gpus", "transport", "tiers", "respread"), [
    (1024, "roce", 2, True), (6144, "roce", 2, False), (32768, "roce", 3, True),
    (33280, "roce", 3, False), (2048, "ib", 2, False), (16384, "ib", 3, False)])
def test_fabrics_of_several_sizes_grow_by_a_unit(gpus: int, transport: str, tiers: int,
                                                 respread: bool) -> None:
    """The benchmark's fabrics (rail-optimized, 64-node units) with one unit more. Sizing
    gives a fabric the fewest spines (and cores) that reach every leaf (pod) with equal links,
    so a power-of-two fabric fills them: 1,024 RoCE GPUs (16 leaves, 8 spines x 2 links)
    need 16 spines for a third unit; 32,768 GPUs are 8 full pods, and a ninth takes the cores
    past 4 per group (9 pods x 16 links > 128 ports), so there are 8 and every spine's uplinks
    are spread over them. The others keep their spines: 6,144 GPUs (12 units) under 64 spines,
    33,280 (one unit in pod 9) a second unit under pod 9's spines. Either way every number
    stays (`stability`)."""
    intent = _bench(gpus, transport)
    old = sizing.shape(intent)
    assert old.tiers == tiers
    bigger = grown(intent, 64)
    tally = stability(intent, bigger)
    assert spine_layer_changed(old, sizing.shape(bigger)) == respread
    assert (tally["compute"]["moved"] > 0) == respread


def test_two_to_three_tiers_keeps_the_leaf_level() -> None:
    """8,192 GPUs fill 64 spines of 128 ports (16 units x 8 leaves x 1 link): a seventeenth
    unit needs three tiers. The spines become pods' spines (renamed, numbered anew, every leaf
    uplink on a new spine); every leaf keeps its loopback, ASN and number, every uplink cable
    its id, leaf end and /31, every host cable everything."""
    intent = _bench(8192, "roce")
    bigger = grown(intent, 64)
    assert (sizing.shape(intent).tiers, sizing.shape(bigger).tiers) == (2, 3)
    old, new = build(intent), build(bigger)
    switches = {s.name: s for s in new.switches}
    for s in old.switches:
        if s.role == "leaf":
            t = switches[s.name]
            assert (t.loopback, t.asn, t.number) == (s.loopback, s.asn, s.number)
        else:
            assert s.name not in switches  # spine-01 is now spine-pod1-01
    hosts = {h.name: h for h in new.hosts}
    assert all(hosts[h.name] == h for h in old.hosts)  # addresses, ports, GUID ordinals
    links = {link.id: link for link in new.links}
    for link in old.links:
        if link.kind == "node-leaf":
            assert links[link.id] == link
        else:
            assert _anchor(links[link.id]) == _anchor(link)
            assert links[link.id].z_device.startswith("spine-pod")


def _render(intent_path: Path, out: Path) -> None:
    subprocess.run([sys.executable, "-m", "fabgen", "render", "-q", str(intent_path), "-o",
                    str(out)], check=True)


def _csv_rows(path: Path) -> dict[str, dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return {row["id"]: row for row in csv.DictReader(f)}


# Per-row and per-key diff rules: on files about the whole fabric that grows, an existing row,
# key or neighbour that changes would be a renumbering.
_ADD_ONLY_KINDS = {"cables", "cables-json", "rails", "k8s-json", "k8s-script", "frr"}
_ADD_ONLY_FILES = {"telemetry/prometheus-scrape-sonic-snmp.yml"}  # one target per switch


def test_fabgen_diff_of_one_more_unit_shows_only_what_was_added(tmp_path: Path) -> None:
    """The real command (`fabgen diff --format json`) on two renders of roce-256 (one unit,
    then two): the new unit's cables, leaves and hosts are reported as added, exactly those
    the built fabric adds; no cable is removed, moved, changed or renumbered; the spines are
    the only devices changed, by their new ports brought up and their new BGP neighbours."""
    source = ROOT / "inventories" / "roce-256-sonic.yaml"
    data: dict[str, Any] = yaml.safe_load(source.read_text(encoding="utf-8"))
    data["cluster"]["nodes"] += data["topology"]["scalable_unit"]
    bigger = tmp_path / "roce-256-plus.yaml"
    bigger.write_text(yaml.safe_dump(data), encoding="utf-8")
    _render(source, tmp_path / "old")
    _render(bigger, tmp_path / "new")
    proc = subprocess.run([sys.executable, "-m", "fabgen", "diff", "--format", "json",
                           str(tmp_path / "old"), str(tmp_path / "new")],
                          capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr  # changes
    diff = json.loads(proc.stdout)
    schema = json.loads((ROOT / "schemas" / "fabgen-diff.schema.json").read_text("utf-8"))
    jsonschema.validate(diff, schema)

    # What growth adds, from the built fabrics (not from the renders the diff read).
    old, new = build(load(source).intent), build(load(bigger).intent)
    old_ids = {link.id for link in old.links}
    added = {link.id: link for link in new.links if link.id not in old_ids}
    assert {link.kind for link in added.values()} == {"node-leaf", "leaf-spine"}
    new_leaves = {s.name for s in new.switches} - {s.name for s in old.switches}
    new_hosts = {h.name for h in new.hosts} - {h.name for h in old.hosts}
    assert new_leaves and new_hosts
    assert all(link.a_device in new_hosts | new_leaves for link in added.values())

    assert diff["summary"]["cables"] == {"added": len(added), "removed": 0, "moved": 0,
                                         "changed": 0, "renumbered": 0, "renamed": 0}
    status = {d["name"]: (d["role"], d["status"]) for d in diff["devices"]}
    assert {n for n, (_, s) in status.items() if s == "added"} == new_leaves | new_hosts
    changed = {n for n, (_, s) in status.items() if s != "added"}
    assert changed == {s.name for s in new.switches if s.role == "spine"}
    assert all(status[n][1] == "changed" for n in changed)
    assert diff["summary"]["files"]["removed"] == 0

    cabling = next(f for f in diff["files"] if f["name"] == "cabling/cabling.csv")
    assert {c["op"] for c in cabling["changes"]} == {"+"}
    reported = {c["new"]["id"]: c["new"] for c in cabling["changes"]}
    assert set(reported) == set(added)
    for cid, row in reported.items():  # the new unit's addresses, as the plan has them
        assert (row["a_device"], row["a_address"], row["z_address"]) == (
            added[cid].a_device, f"{added[cid].a_address}", f"{added[cid].z_address}"), cid

    for file in diff["files"]:
        if file["status"] == "added":
            assert file["device"] in new_leaves | new_hosts, file["name"]
        elif file.get("device") in changed:
            for change in file["changes"]:
                # added: the new leaves' ports, interfaces and BGP neighbours; changed: only
                # those ports, down (spare) before, up now
                assert change["op"] == "+" or (
                    change["op"] == "~" and change["at"][-1] == "admin_status"
                    and (change["old"], change["new"]) == ("down", "up")), change
        elif file["kind"] in _ADD_ONLY_KINDS or file["name"] in _ADD_ONLY_FILES:
            assert {c["op"] for c in file["changes"]} == {"+"}, file["name"]
        else:
            # the fabric's shared files: counts and summaries grow with it
            assert file["name"] in SHARED_FILES, file["name"]
    # And in the files themselves: every existing cable row is in the new sheet, unchanged.
    before = _csv_rows(tmp_path / "old" / "cabling" / "cabling.csv")
    after = _csv_rows(tmp_path / "new" / "cabling" / "cabling.csv")
    assert {cid: after.get(cid) for cid in before} == before


# Files about the whole fabric, whose counts and summaries grow with it.
SHARED_FILES = {"intent.resolved.yaml", "report.md", "report.svg",
                "scheduler/kubernetes/volcano-hypernodes.yaml", "scheduler/slurm/topology.conf",
                "scheduler/slurm/topology.yaml", "telemetry/gnmic-sonic.yaml",
                "cabling/topology.dot"}
