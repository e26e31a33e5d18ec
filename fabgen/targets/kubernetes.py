"""Kubernetes target: node labels per network tier, and the topology objects that read them.

Topology-aware schedulers group nodes by label: Kueue's Topology (kueue.x-k8s.io) and NVIDIA
KAI-Scheduler's Topology (kai.scheduler) list the label keys from the top tier down to
kubernetes.io/hostname; Volcano reads a tree of HyperNode objects (topology.volcano.sh), tier 1
at the bottom. All three need a strict tree: one value per tier and node. A node of a
multi-plane fabric has a port on every plane and the tiers nest the same way in each, so the
labels name the plane-agnostic groups (fabgen.topology.groups): the leaf group, the pod's spine
set, the cores.

Files (scheduler/kubernetes/):
- label-nodes.sh: `kubectl label --overwrite` per leaf group (its nodes share every value).
- node-labels.json: {node: {key: value}}, the same labels for other tooling.
- kueue-topology.yaml, kai-topology.yaml: the Topology objects (levels = the label keys).
- kueue-resourceflavor.yaml: the ResourceFlavor Kueue's topology-aware scheduling reads the
  Topology through (`spec.topologyName`; Kueue docs, "Topology Aware Scheduling": "reference the
  Topology API from a dedicated ResourceFlavor by the .spec.topologyName field"). The CRD wants
  at least one nodeLabel with a topologyName: the top tier's label, which every compute node of
  the fabric carries with the same value.
- volcano-hypernodes.yaml: the HyperNode tree, leaf groups listing their nodes by name.

The label keys come from the intent (scheduling.labels). A node registers under its host name
in lower case (the kubelet lowercases it: kubernetes pkg/util/node GetHostname); a host name that
is not a Kubernetes node name even then (an '_') cannot be a node, and the target does not apply
(the report says why).
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from fabgen import templating
from fabgen.intent.models import NodeLabelKeys
from fabgen.serialize import json_text
from fabgen.targets.base import Artifacts, RenderContext
from fabgen.topology.groups import FabricGroups, compute_hosts
from fabgen.topology.model import Fabric

__all__ = ["HOSTNAME", "KAI_API", "KUEUE_API", "OUT_DIR", "TARGET", "VOLCANO_API",
           "KubernetesTarget", "levels", "node_labels", "node_name", "not_a_node"]

OUT_DIR = "scheduler/kubernetes"
HOSTNAME = "kubernetes.io/hostname"
# Served versions of the CRDs kept in tests/data/crds (Kueue 0.19: v1beta2 is the storage
# version, v1beta1 still served; KAI-Scheduler 0.13; Volcano 1.15).
KUEUE_API = "kueue.x-k8s.io/v1beta2"
KAI_API = "kai.scheduler/v1alpha1"
VOLCANO_API = "topology.volcano.sh/v1alpha1"
# Kubernetes object and node names: RFC 1123 subdomains (at most 253 characters).
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# Label values: at most 63 characters, alphanumeric at both ends.
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def node_name(host: str) -> str:
    """The Node object's name for a host: its name in lower case, as the kubelet registers it."""
    return host.lower()


def not_a_node(fabric: Fabric) -> str | None:
    """The first compute host whose name cannot be a Kubernetes node name, or None."""
    for host in compute_hosts(fabric):
        name = node_name(host.name)
        if len(name) > 253 or not _SUBDOMAIN.match(name):
            return host.name
    return None


def object_name(fabric: str) -> str:
    """Topology objects are named after the fabric (a SafeName: '_' is its only character a
    Kubernetes name refuses)."""
    return fabric.lower().replace("_", "-")


def levels(groups: FabricGroups, keys: NodeLabelKeys) -> list[tuple[str, str]]:
    """(label key, tier) from the top tier down, ending with the node itself."""
    out = [(keys.core, "core")] if groups.tiers == 3 else []
    return [*out, (keys.spine, "spine"), (keys.leaf, "leaf"), (HOSTNAME, "node")]


def node_labels(groups: FabricGroups, keys: NodeLabelKeys) -> dict[str, dict[str, str]]:
    """Each compute node's tier labels (hostname excluded: the kubelet sets it)."""
    pod_of = groups.pod_of()
    out: dict[str, dict[str, str]] = {}
    for group in groups.leaf_groups:
        labels = {keys.leaf: group.name, keys.spine: pod_of[group.name].name}
        if groups.tiers == 3:
            labels[keys.core] = groups.top
        for value in labels.values():
            if len(value) > 63 or not _LABEL_VALUE.match(value):
                raise ValueError(f"{value!r} is not a Kubernetes label value")
        for host in group.hosts:
            out[node_name(host)] = labels
    return out


def _topology(api: str, groups: FabricGroups, keys: NodeLabelKeys, note: str) -> str:
    doc = {"apiVersion": api, "kind": "Topology", "metadata": {"name": object_name(groups.fabric)},
           "spec": {"levels": [{"nodeLabel": key} for key, _tier in levels(groups, keys)]}}
    return note + yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)


def _resource_flavor(groups: FabricGroups, keys: NodeLabelKeys,
                     labels: dict[str, dict[str, str]], note: str) -> str:
    top = levels(groups, keys)[0][0]
    values = {node[top] for node in labels.values()}
    if len(values) != 1:  # the top tier is one set of switches by construction
        raise ValueError(f"compute nodes differ in their top-tier label {top}: {sorted(values)}")
    name = object_name(groups.fabric)
    doc = {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": name},
           "spec": {"nodeLabels": {top: values.pop()}, "topologyName": name}}
    return note + yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)


def _hypernodes(groups: FabricGroups) -> list[dict[str, Any]]:
    """HyperNodes bottom up: tier 1 leaf groups (members: nodes), tier 2 pods, tier 3 cores."""
    prefix = f"{object_name(groups.fabric)}-"
    out: list[dict[str, Any]] = [
        {"name": prefix + g.name.lower(), "tier": 1, "tier_name": "leaf", "type": "Node",
         "members": [node_name(h) for h in g.hosts]} for g in groups.leaf_groups]
    out += [{"name": prefix + p.name, "tier": 2, "tier_name": "spine", "type": "HyperNode",
             "members": [prefix + c.lower() for c in p.children]} for p in groups.pods]
    if groups.tiers == 3:
        out.append({"name": prefix + groups.top, "tier": 3, "tier_name": "core",
                    "type": "HyperNode", "members": [prefix + p.name for p in groups.pods]})
    for node in out:
        if len(node["name"]) > 253 or not _SUBDOMAIN.match(node["name"]):
            raise ValueError(f"HyperNode name {node['name']!r} is not a Kubernetes object name")
    return out


class KubernetesTarget:
    name = "kubernetes"
    description = ("scheduler/kubernetes/: node labels per tier (label-nodes.sh, "
                   "node-labels.json), Kueue Topology and its ResourceFlavor, KAI Topology, "
                   "Volcano HyperNodes")

    def applies(self, ctx: RenderContext) -> bool:
        return bool(ctx.fabric.hosts) and not_a_node(ctx.fabric) is None

    def render(self, ctx: RenderContext) -> Artifacts:
        groups = ctx.index.groups
        keys = ctx.intent.scheduling.labels
        labels = node_labels(groups, keys)
        tiers = levels(groups, keys)
        pod_of = groups.pod_of()
        commands = []
        for group in groups.leaf_groups:
            values = labels[node_name(group.hosts[0])]
            commands.append({"group": group.name,
                             "nodes": " ".join(node_name(h) for h in group.hosts),
                             "labels": " ".join(f"{k}={values[k]}" for k, _t in tiers
                                                if k in values),
                             "pod": pod_of[group.name].name})
        note = (f"# {groups.fabric}: the compute fabric's tiers for topology-aware scheduling,"
                " rendered by fabgen.\n# Levels name the node labels label-nodes.sh sets, top "
                "tier first.\n")
        flavor_note = (
            f"# {groups.fabric}: the ResourceFlavor through which Kueue's topology-aware "
            f"scheduling reads\n# Topology {object_name(groups.fabric)} (kueue-topology.yaml): "
            "it selects the compute nodes by their top-tier label\n# (label-nodes.sh sets it). "
            "Name it in a ClusterQueue's flavors; rendered by fabgen.\n")
        return {
            f"{OUT_DIR}/label-nodes.sh": templating.render(
                "kubernetes/label-nodes.sh.j2", fabric=groups.fabric, commands=commands,
                tiers=[{"key": k, "tier": t} for k, t in tiers if k != HOSTNAME]),
            f"{OUT_DIR}/node-labels.json": json_text(labels),
            f"{OUT_DIR}/kueue-topology.yaml": _topology(KUEUE_API, groups, keys, note),
            f"{OUT_DIR}/kueue-resourceflavor.yaml": _resource_flavor(
                groups, keys, labels, flavor_note),
            f"{OUT_DIR}/kai-topology.yaml": _topology(KAI_API, groups, keys, note),
            f"{OUT_DIR}/volcano-hypernodes.yaml": templating.render(
                "kubernetes/hypernodes.yaml.j2", fabric=groups.fabric, api=VOLCANO_API,
                hypernodes=_hypernodes(groups)),
        }


TARGET = KubernetesTarget()
