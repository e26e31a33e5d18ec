"""Slurm target: topology.conf (topology/tree) and topology.yaml (tree and block, Slurm >= 25.05).

Level 0 is the leaf group (fabgen.topology.groups): in a rail-optimized fabric the scalable
unit's rail group, whose rail leaves all serve the same nodes; in a rail-unaware one the leaf.
Every compute node is under exactly one level-0 switch, so Slurm never logs "Multiple leaf
switches contain nodes". Above it: each plane's spine set of the pod, and in 3 tiers each plane's
cores. Slurm takes a switch with several parents (topology.conf(5) lists four spines over the same
leaves), so every plane's spine set is a parent of the same leaf groups. Storage and management
networks never appear: no job's traffic crosses them.

topology.yaml (topology.yaml(5), Slurm 25.05 and later; it replaces topology.conf when both
exist) holds the same tree, marked cluster_default, and a block topology: one block per leaf
group, block_sizes from the plan (the nodes of one group, then the pod when its groups are a power
of two: Slurm aggregates 2^k consecutive blocks, block_record.c, so only such a pod lines up).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from fabgen import templating
from fabgen.targets.base import Artifacts, RenderContext
from fabgen.targets.hostlist import compress
from fabgen.topology.groups import FabricGroups

__all__ = ["OUT_DIR", "TARGET", "Fit", "SlurmTarget", "block_sizes", "fit_sentence", "fits",
           "level_lines", "slurm_data", "topology_yaml"]

OUT_DIR = "scheduler/slurm"
# topology.conf(5): "cannot be longer than 64 characters".
MAX_SWITCH_NAME = 64



@dataclass(frozen=True, slots=True)
class Fit:
    """How big a job stays under one tier: the smallest such domain decides the guarantee."""

    tier: str  # "leaf group", "spine set", "fabric"
    nodes: int  # nodes of the smallest domain of this tier
    largest: int  # nodes of the largest domain of this tier
    domains: int
    what: str  # what the domain is, for people


def fits(groups: FabricGroups) -> tuple[Fit, ...]:
    """Which job size fits under one leaf group, one spine set (pod), the whole fabric."""
    sizes = [len(g.hosts) for g in groups.leaf_groups] or [0]
    what = ("a scalable unit's rail group: every rail leaf serves these nodes, same-rail "
            "traffic stays on one leaf" if groups.rail_optimized
            else "one leaf (in every plane): all of a node's ports share it")
    out = [Fit("leaf group", min(sizes), max(sizes), len(sizes), what)]
    pod_sizes = [p.nodes for p in groups.pods] or [0]
    if groups.tiers == 3:
        out.append(Fit("spine set", min(pod_sizes), max(pod_sizes), len(pod_sizes),
                       "a pod: its leaf groups meet at the pod's spines without the cores"))
        out.append(Fit("fabric", groups.nodes, groups.nodes, 1,
                       "every node, through the cores"))
    else:
        out.append(Fit("spine set", groups.nodes, groups.nodes, 1,
                       "every node: all leaf groups meet at the spines"))
    return tuple(out)


def block_sizes(groups: FabricGroups) -> tuple[list[int], str]:
    """Slurm block_sizes from the plan, and why (a comment for the file)."""
    sizes = [len(g.hosts) for g in groups.leaf_groups]
    base = max(sizes) if sizes else 1
    out = [base]
    why = f"base block: the {base} nodes of one leaf group"
    if groups.tiers == 3 and groups.pods:
        per_pod = max(len(p.children) for p in groups.pods)
        if per_pod > 1 and per_pod & (per_pod - 1) == 0:
            out.append(base * per_pod)
            why += f"; {base * per_pod}: one pod ({per_pod} leaf groups under one spine set)"
        elif per_pod > 1:
            why += (f"; a pod has {per_pod} leaf groups, not a power of two, so Slurm cannot "
                    "aggregate blocks along pod boundaries and no pod size is listed")
    return out, why


def _members(names: tuple[str, ...]) -> str:
    return compress(names)


def slurm_data(groups: FabricGroups, gpus_per_node: int) -> dict[str, Any]:
    """Every switch line of the tree, level by level, display-ready."""
    level0 = [{"name": g.name, "nodes": compress(g.hosts),
               "comment": f"{len(g.hosts)} nodes; " + (
                   f"rail leaves {_members(g.leaves)}" if groups.rail_optimized
                   else f"leaf {_members(g.leaves)}")}
              for g in groups.leaf_groups]
    level1 = [{"name": s.name, "switches": compress(s.children),
               "comment": f"{s.nodes} nodes; plane {s.plane + 1} spines {_members(s.spines)}"
               if groups.planes > 1 else f"{s.nodes} nodes; spines {_members(s.spines)}"}
              for s in groups.spine_sets]
    level2 = [{"name": c.name, "switches": compress(c.children),
               "comment": f"{c.nodes} nodes; plane {c.plane + 1} cores {_members(c.cores)}"
               if groups.planes > 1 else f"{c.nodes} nodes; cores {_members(c.cores)}"}
              for c in groups.core_sets]
    for line in (*level0, *level1, *level2):
        if len(line["name"]) > MAX_SWITCH_NAME:
            raise ValueError(f"Slurm switch name {line['name']!r} is longer than "
                             f"{MAX_SWITCH_NAME} characters")
    return {"fabric": groups.fabric, "levels": level_lines(groups),
            "fit": fit_sentence(groups, gpus_per_node), "level0": level0, "level1": level1,
            "level2": level2}


def level_lines(groups: FabricGroups) -> list[str]:
    """What each level of the tree is, for the file header and the report."""
    per = [] if groups.planes <= 1 else ["plane"]
    per += ["pod"] if groups.tiers == 3 else []
    out = [("Level 0, leaf groups: one per scalable unit, whose rail leaves all serve the same "
            "nodes (a job's same-rail traffic stays on one leaf)") if groups.rail_optimized else
           ("Level 0, leaf groups: one per leaf position, in every plane the one leaf all of a "
            "node's ports share")]
    out.append("Level 1, spine sets" + (f", one per {' and '.join(per)}" if per else "")
               + ": where the leaf groups' uplinks land")
    if groups.core_sets:
        out.append("Level 2, cores" + (", one set per plane" if groups.planes > 1 else "")
                   + ": joining the pods")
    return out


def fit_sentence(groups: FabricGroups, gpus_per_node: int) -> str:
    """The largest job that stays under one leaf group / one spine set, in one sentence."""
    leaf, spine, *rest = fits(groups)

    def size(f: Fit) -> str:
        smallest = "" if f.nodes == f.largest else f"; {f.nodes:,} in the smallest"
        return f"{f.largest:,} nodes ({f.largest * gpus_per_node:,} GPUs{smallest})"

    text = (f"A job of up to {size(leaf)} fits under one leaf group, up to {size(spine)} under "
            "one spine set")
    if rest:
        text += f"; larger ones, up to all {size(rest[0])}, cross the cores"
    return text + "."


def topology_yaml(groups: FabricGroups) -> str:
    """topology.yaml: the tree (cluster default) and the block topology, in the documented key
    order (`topology` must be the first key of each entry)."""
    switches: list[dict[str, Any]] = [{"switch": g.name, "nodes": compress(g.hosts)}
                                      for g in groups.leaf_groups]
    switches += [{"switch": s.name, "children": compress(s.children)}
                 for s in groups.spine_sets]
    switches += [{"switch": c.name, "children": compress(c.children)}
                 for c in groups.core_sets]
    sizes, why = block_sizes(groups)
    doc = [
        {"topology": "tree", "cluster_default": True, "tree": {"switches": switches}},
        {"topology": "block", "cluster_default": False,
         "block": {"block_sizes": sizes,
                   "blocks": [{"block": g.name, "nodes": compress(g.hosts)}
                              for g in groups.leaf_groups]}},
    ]
    partial = [g.name for g in groups.leaf_groups if len(g.hosts) < sizes[0]]
    header = [
        f"# Slurm topology.yaml (Slurm 25.05 or later) for {groups.fabric}, rendered by fabgen.",
        "# Slurm reads it instead of topology.conf when both exist. 'tree' is the cluster",
        "# default (the same switches as topology.conf); partitions may pick 'block' with",
        "# Topology=block in slurm.conf.",
        f"# block_sizes: {why}.",
    ]
    if partial:
        header.append(f"# Not yet full (fewer nodes than the base block): {', '.join(partial)}.")
    # PyYAML's pure emitter (not libyaml's): the same bytes wherever fabgen runs. One line per
    # group keeps it fast enough at 16k nodes.
    body = yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, width=1 << 16)
    return "\n".join(header) + "\n---\n" + body


class SlurmTarget:
    name = "slurm"
    description = ("scheduler/slurm/topology.conf (topology/tree) and topology.yaml (tree and "
                   "block, Slurm >= 25.05): the compute fabric's leaf groups, spines and cores")

    def applies(self, ctx: RenderContext) -> bool:
        return bool(ctx.fabric.hosts)

    def render(self, ctx: RenderContext) -> Artifacts:
        groups = ctx.index.groups
        gpus = ctx.intent.cluster.node.gpus
        return {
            f"{OUT_DIR}/topology.conf": templating.render("slurm/topology.conf.j2",
                                                          **slurm_data(groups, gpus)),
            f"{OUT_DIR}/topology.yaml": topology_yaml(groups),
        }


TARGET = SlurmTarget()
