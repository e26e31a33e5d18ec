"""The report's "Underlay and load balancing" section: BGP timers, BFD, ECMP width per tier
against each platform's limit, what the hash reads, and how NCCL gives it flows to spread."""

from __future__ import annotations

from fabgen import underlay
from fabgen.platforms.registry import outputs as platforms
from fabgen.qos import used_platforms
from fabgen.targets import nccl
from fabgen.targets.base import RenderContext
from fabgen.topology import sizing

__all__ = ["underlay_markdown"]

def _idle(flows: int, paths: int) -> str:
    """Expected share of `paths` no flow hashes to: (1 - 1/paths)^flows."""
    return f"{(1 - 1 / paths) ** flows:.0%}"


def underlay_markdown(ctx: RenderContext) -> str:
    """The section's Markdown (empty for an InfiniBand fabric)."""
    intent = ctx.intent
    if ctx.fabric.transport != "roce":
        return ""
    plan = underlay.plan(intent)
    roles = used_platforms(intent)
    widths = underlay.ecmp_widths(sizing.shape(intent))
    lines = ["## Underlay and load balancing", "",
             "| Tier | Platform | ECMP paths | Platform maximum | Source |",
             "|---|---|---:|---:|---|"]
    for role, width in widths.items():
        limit = underlay.MAX_ECMP[roles[role]]
        lines.append(f"| {role.title()} | {roles[role]} | {width} | {limit.paths} | "
                     f"{limit.source} |")
    used = sorted({roles[r] for r in widths})
    lines += ["", f"- BGP timers: keepalive {plan.keepalive_s} s, hold {plan.hold_s} s on every "
              "platform (`underlay.bgp`)."]
    if plan.bfd is None:
        lines.append("- BFD: off (`underlay.bfd.enabled`); a dead link is found after the hold "
                     "time.")
    else:
        lines.append(f"- BFD: {plan.bfd.interval_ms} ms x {plan.bfd.multiplier} = "
                     f"{plan.bfd.detection_ms} ms to detect a dead link, on every underlay "
                     "session:")
        lines += [f"  - {p}: {platforms.get(p).bfd_note}." for p in used]
    lines += [line for p in used for line in platforms.get(p).routing_notes(ctx)]
    lb = plan.load_balancing
    if lb.mode == "adaptive":
        lines.append("- Load balancing: adaptive (`load_balancing.mode`): "
                     + "; ".join(f"{p}: {underlay.ADAPTIVE[p]}" for p in used) + ".")
    lines.append(f"- ECMP hash on {', '.join(lb.hash_fields)}:")
    lines += [f"  - {p}: {platforms.get(p).hash_note}." for p in used]
    qps = nccl.qps_per_connection(ctx)
    entropy = "src-port" in lb.hash_fields or "roce-dest-qp" in lb.hash_fields
    leaf_up = widths["leaf"]
    if entropy and leaf_up:
        lines.append(
            f"- NCCL: {qps} queue pair(s) per connection (`NCCL_IB_QPS_PER_CONNECTION`), each its "
            f"own UDP source port, so every connection is {qps} flow(s) to the hash. Hashing F "
            f"flows over U uplinks leaves (1 - 1/U)^F of them idle on average: with the leaves' "
            f"{leaf_up} uplinks, F = {leaf_up} leaves {_idle(leaf_up, leaf_up)} idle, "
            f"F = {4 * leaf_up} leaves {_idle(4 * leaf_up, leaf_up)}.")
    elif not entropy:
        lines.append("- NCCL: the hash reads neither the UDP source port nor the destination QP, "
                     "so more queue pairs per connection add no flows to spread.")
    # The fabric's own platforms, in output order: a note on an OS no switch runs tells the
    # reader nothing.
    spare = "; ".join(o.spare_ports_note for o in platforms.all() if o.facts.name in used)
    lines.append("- Spare (uncabled) ports are down with the lossless QoS of a cabled port on "
                 f"every platform ({spare}): a cable plugged in later comes up lossless once "
                 "the port is enabled.")
    lines += [line for p in used for line in platforms.get(p).underlay_caveats(ctx)]
    return "\n".join(lines)
