"""The report's job-placement section: how big a job stays under one tier, and where the
scheduler files (Slurm, Kubernetes) put each tier. Numbers come from fabgen.topology.groups."""

from __future__ import annotations

from fabgen import templating
from fabgen.targets.base import RenderContext
from fabgen.targets.kubernetes import levels, not_a_node
from fabgen.targets.slurm import block_sizes, fit_sentence, fits, level_lines

__all__ = ["report_section"]


def report_section(ctx: RenderContext) -> str:
    """Markdown for report.md (no trailing newline); empty for a fabric without hosts."""
    if not ctx.fabric.hosts:
        return ""
    groups = ctx.index.groups
    gpus = ctx.intent.cluster.node.gpus
    rows = [{"tier": f.tier, "domains": f"{f.domains:,}",
             "nodes": f"{f.nodes:,}" if f.nodes == f.largest else f"{f.nodes:,}-{f.largest:,}",
             "gpus": f"{f.nodes * gpus:,}" if f.nodes == f.largest
             else f"{f.nodes * gpus:,}-{f.largest * gpus:,}", "what": f.what}
            for f in fits(groups)]
    sizes, why = block_sizes(groups)
    bad = not_a_node(ctx.fabric)
    return templating.render(
        "slurm/report.md.j2", fit=fit_sentence(groups, gpus), rows=rows,
        levels=level_lines(groups), first=groups.leaf_groups[0].name,
        block_sizes=", ".join(str(s) for s in sizes), block_why=why,
        labels=[{"key": k, "tier": t} for k, t in levels(groups, ctx.intent.scheduling.labels)],
        not_a_node=bad).rstrip("\n")
