"""Kubernetes files: the Kueue, KAI and Volcano objects against their published CRDs, and every
node's labels naming an existing level of them (CRDs: tests/data/crds, SOURCES.md)."""

from __future__ import annotations

import copy
import json
import re
import shlex
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from fabgen.intent import load
from fabgen.intent.models import Intent
from fabgen.render import render
from fabgen.targets.base import RenderContext
from fabgen.targets.kubernetes import HOSTNAME, TARGET, not_a_node
from fabgen.topology.build import build
from fabgen.topology.groups import compute_hosts
from tests.conftest import INVENTORIES, require_tool
from tests.test_slurm import three_tier_intent

CRDS = Path(__file__).parent / "data" / "crds"
OUT = "scheduler/kubernetes"


def _strict(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with unknown fields made errors: the API server would prune them silently,
    so a misspelled field would vanish instead of failing."""
    schema = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if ("properties" in node and "additionalProperties" not in node
                    and not node.get("x-kubernetes-preserve-unknown-fields")):
                node["additionalProperties"] = False
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return schema


@cache
def crd_schemas() -> dict[tuple[str, str], dict[str, Any]]:
    """{(apiVersion, kind): openAPIV3Schema} of every served version of the kept CRDs."""
    out = {}
    for path in sorted(CRDS.glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        spec = crd["spec"]
        for version in spec["versions"]:
            if version.get("served"):
                key = (f"{spec['group']}/{version['name']}", spec["names"]["kind"])
                out[key] = _strict(version["schema"]["openAPIV3Schema"])
    return out


def validate(doc: dict[str, Any]) -> None:
    schema = crd_schemas()[doc["apiVersion"], doc["kind"]]
    jsonschema.validate(doc, schema)
    if doc["kind"] == "Topology":
        levels = [lv["nodeLabel"] for lv in doc["spec"]["levels"]]
        # x-kubernetes-validations of both Topology CRDs
        assert len(set(levels)) == len(levels), "must be unique"
        assert HOSTNAME not in levels or levels[-1] == HOSTNAME
    if doc["kind"] == "ResourceFlavor":
        # x-kubernetes-validations of the ResourceFlavor CRD's spec (create: no oldSelf)
        spec = doc["spec"]
        assert "topologyName" not in spec or len(spec.get("nodeLabels", {})) >= 1, \
            "at least one nodeLabel is required when topology is set"
    if doc["kind"] == "HyperNode":
        qualified = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
        assert doc["spec"]["members"], "member must have at least one member"
        for member in doc["spec"]["members"]:
            selectors = set(member["selector"]) & {"exactMatch", "regexMatch", "labelMatch"}
            assert len(selectors) == 1  # the CRD's CEL rules and the VAP
            if "exactMatch" in selectors:
                assert qualified.match(member["selector"]["exactMatch"]["name"])
            if "labelMatch" in selectors:
                assert member["type"] == "Node"


def kube_files(intent: Intent) -> dict[str, str]:
    return TARGET.render(RenderContext(intent=intent, fabric=build(intent)))


def cases() -> list[tuple[str, Intent]]:
    out = [(p.stem, load(p).intent) for p in INVENTORIES]
    out += [(f"3tier-{s}", three_tier_intent(s)) for s in ("rail-optimized", "rail-unaware")]
    return out


@pytest.mark.parametrize(("name", "intent"), cases(), ids=[c[0] for c in cases()])
def test_objects_validate_and_labels_name_existing_levels(name: str, intent: Intent) -> None:
    files = kube_files(intent)
    kueue = yaml.safe_load(files[f"{OUT}/kueue-topology.yaml"])
    kai = yaml.safe_load(files[f"{OUT}/kai-topology.yaml"])
    flavor = yaml.safe_load(files[f"{OUT}/kueue-resourceflavor.yaml"])
    hypernodes = list(yaml.safe_load_all(files[f"{OUT}/volcano-hypernodes.yaml"]))
    for doc in (kueue, kai, flavor, *hypernodes):
        validate(doc)
    # Kueue's TAS reads the Topology through a flavor naming it (same API version)
    assert flavor["apiVersion"] == kueue["apiVersion"]
    assert flavor["spec"]["topologyName"] == kueue["metadata"]["name"]
    assert kueue["apiVersion"].startswith("kueue.x-k8s.io/")
    assert kai["apiVersion"].startswith("kai.scheduler/")
    levels = [lv["nodeLabel"] for lv in kueue["spec"]["levels"]]
    assert levels == [lv["nodeLabel"] for lv in kai["spec"]["levels"]]
    assert levels[-1] == HOSTNAME

    labels: dict[str, dict[str, str]] = json.loads(files[f"{OUT}/node-labels.json"])
    fabric = build(intent)
    assert set(labels) == {h.name for h in compute_hosts(fabric)}
    # the HyperNode tree: which node (or HyperNode) is under which HyperNode, per tier
    prefix = f"{intent.name}-"
    parent: dict[tuple[int, str], str] = {}
    for doc in hypernodes:
        for member in doc["spec"]["members"]:
            parent[doc["spec"]["tier"], member["selector"]["exactMatch"]["name"]] = \
                doc["metadata"]["name"]
    tiers = levels[:-1][::-1]  # bottom up, as Volcano counts: leaf = tier 1
    for node, node_labels in labels.items():
        assert set(node_labels) == set(tiers), f"{node}: {node_labels}"
        below = node
        for tier, key in enumerate(tiers, start=1):
            above = parent[tier, below]
            assert above == prefix + node_labels[key], f"{node}: {key}"
            below = above
    # nodes sharing a leaf label share every leaf: the label is a real network domain
    leaves: dict[str, set[str]] = {}
    for link in fabric.links:
        if link.kind == "node-leaf":
            leaves.setdefault(link.a_device, set()).add(link.z_device)
    by_value: dict[str, set[frozenset[str]]] = {}
    leaf_key = tiers[0]
    for node, node_labels in labels.items():
        by_value.setdefault(node_labels[leaf_key], set()).add(frozenset(leaves[node]))
    assert all(len(v) == 1 for v in by_value.values())
    # the flavor's nodeLabels select exactly this fabric's compute nodes
    assert {node for node, node_labels in labels.items()
            if flavor["spec"]["nodeLabels"].items() <= node_labels.items()} == set(labels)
    assert len({frozenset(v.pop()) for v in by_value.values()}) == len(by_value)


def test_label_keys_come_from_the_intent() -> None:
    data = load(INVENTORIES[0]).intent.model_dump(mode="json")
    data["scheduling"] = {"labels": {"leaf": "example.com/leaf-group",
                                     "spine": "example.com/spine-group"}}
    files = kube_files(Intent.model_validate(data))
    kueue = yaml.safe_load(files[f"{OUT}/kueue-topology.yaml"])
    assert [lv["nodeLabel"] for lv in kueue["spec"]["levels"]] == [
        "example.com/spine-group", "example.com/leaf-group", HOSTNAME]
    assert "example.com/leaf-group=su1" in files[f"{OUT}/label-nodes.sh"]


@pytest.mark.parametrize("labels", [{"leaf": "Bad Key"}, {"leaf": "a/b/c"},
                                    {"leaf": "x/y", "spine": "x/y"},
                                    {"core": "kubernetes.io/hostname"}])
def test_bad_label_keys_are_intent_errors(labels: dict[str, str]) -> None:
    data = load(INVENTORIES[0]).intent.model_dump(mode="json")
    data["scheduling"] = {"labels": labels}
    with pytest.raises(ValueError):
        Intent.model_validate(data)


def test_nodes_are_the_host_names_in_lower_case() -> None:
    data = load(INVENTORIES[0]).intent.model_dump(mode="json")
    data["hosts"]["name"] = "DGX{index:03d}"
    files = kube_files(Intent.model_validate(data))
    assert "DGX001" not in "".join(files.values())
    assert "dgx001" in json.loads(files[f"{OUT}/node-labels.json"])


def test_host_names_that_cannot_be_nodes_skip_the_target() -> None:
    data = load(INVENTORIES[0]).intent.model_dump(mode="json")
    data["hosts"]["name"] = "gpu_{index:03d}"
    intent = Intent.model_validate(data)
    fabric = build(intent)
    assert not_a_node(fabric) == "gpu_001"
    assert not TARGET.applies(RenderContext(intent=intent, fabric=fabric))


def _script_labels(script: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for command in script.replace("\\\n", " ").splitlines():
        words = shlex.split(command, comments=True)
        if words[:3] != ["$KUBECTL", "label", "--overwrite"]:
            continue
        assert words[3] == "node"
        names = [w for w in words[4:] if "=" not in w]
        values = dict(w.split("=", 1) for w in words[4:] if "=" in w)
        for name in names:
            out[name] = values
    return out


@pytest.mark.realtool
@pytest.mark.parametrize("intent", INVENTORIES, ids=lambda p: p.stem)
def test_label_script_is_clean_and_sets_the_labels(intent: Path, tmp_path: Path) -> None:
    require_tool("shellcheck")
    files = render(load(intent), only=["kubernetes"])
    script = tmp_path / "label-nodes.sh"
    script.write_text(files[f"{OUT}/label-nodes.sh"])
    result = subprocess.run(["shellcheck", "-s", "sh", str(script)], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stdout
    assert _script_labels(files[f"{OUT}/label-nodes.sh"]) == json.loads(
        files[f"{OUT}/node-labels.json"])


def test_the_flavor_checks_can_fail() -> None:
    """The CRD and its CEL rule refuse a flavor without nodeLabels or with a misspelt field."""
    flavor = yaml.safe_load(kube_files(cases()[0][1])[f"{OUT}/kueue-resourceflavor.yaml"])
    validate(flavor)
    bare = copy.deepcopy(flavor)
    del bare["spec"]["nodeLabels"]
    with pytest.raises(AssertionError, match="nodeLabel is required"):
        validate(bare)
    typo = copy.deepcopy(flavor)
    typo["spec"]["topologyname"] = typo["spec"].pop("topologyName")
    with pytest.raises(jsonschema.ValidationError):
        validate(typo)
