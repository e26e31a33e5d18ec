"""The report's "Underlay and load balancing" section: BGP timers, BFD, ECMP width per tier
against each platform's limit, what the hash reads, and how NCCL gives it flows to spread."""

from __future__ import annotations

from fabgen import underlay
from fabgen.qos import used_platforms
from fabgen.targets import nccl
from fabgen.targets.base import RenderContext
from fabgen.topology import sizing

__all__ = ["underlay_markdown"]

_HASH = {  # what each platform is given for the plan's hash fields
    "sonic": "config_db `SWITCH_HASH|GLOBAL` `ecmp_hash` (applied where the ASIC's SAI takes a "
             "native field list: `show switch-hash capabilities`)",
    "nvue": "`system forwarding ecmp-hash`, every 5-tuple field written on or off",
    "eos": "the routed 5-tuple EOS hashes by default; `roce-dest-qp` adds the BTH destination "
           "QP as UDF bytes (`port-channel load-balance trident udf`)",
}
_BFD = {
    "sonic": "`neighbor FABRIC bfd` on the underlay peer group (config_db `BGP_PEER_GROUP` "
             "`bfd`) at bfdd's defaults, 300 ms x 3 (SONiC's BGP schema has no timer fields; "
             "other timers are refused at load). bfdd runs because DEVICE_METADATA sets "
             "`frr_mgmt_framework_config` (SONiC's supervisord starts bfdd only then); `fabgen "
             "verify` reads `show bfd peers json` and the routing mode, `fabgen frr-lab` runs "
             "the same config in real FRR",
    "nvue": "`neighbor <ip> bfd` with the timers on every peer (Cumulus 5.0-5.14 keys; 5.15 "
            "moves them to `router bfd profile`)",
    "eos": "`router bfd` default timers, `neighbor <ip> bfd` on every peer",
}


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
        lines += [f"  - {p}: {_BFD[p]}." for p in used]
    if "sonic" in used:
        lines.append(
            "- SONiC routing: BGP lives in config_db.json (frrcfgd's tables: `BGP_GLOBALS`, "
            "`BGP_PEER_GROUP`, `BGP_NEIGHBOR`, policy `ROUTE_MAP`/`PREFIX`), DEVICE_METADATA "
            "`docker_routing_config_mode: unified` + `frr_mgmt_framework_config: true`: the "
            "bgp container renders FRR's config from CONFIG_DB (`sonic/<switch>/"
            "frr.expected.conf` shows it; never upload it), so `config reload`, `config load`, "
            "checkpoints and image upgrades carry BGP with the rest. Install "
            "`golden_config_db.json` with it (`fabgen push` does): db_migrator resets the mode "
            "where `/etc/sonic/minigraph.xml` exists unless the golden file keeps it.")
    lb = plan.load_balancing
    if lb.mode == "adaptive":
        lines.append("- Load balancing: adaptive (`load_balancing.mode`): "
                     + "; ".join(f"{p}: {underlay.ADAPTIVE[p]}" for p in used) + ".")
    lines.append(f"- ECMP hash on {', '.join(lb.hash_fields)}:")
    lines += [f"  - {p}: {_HASH[p]}." for p in used]
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
    lines.append("- Spare (uncabled) ports are down with the lossless QoS of a cabled port on "
                 "every platform (SONiC `admin_status down` with every QoS, buffer and watchdog "
                 "table; EOS `shutdown` with the same per-port QoS; NVUE `link state down` with "
                 "the PFC watchdog, the global QoS profile covering it): a cable plugged in "
                 "later comes up lossless once the port is enabled.")
    if "eos" in used:
        lines.append("- EOS installs at most its ASIC's ECMP group size, which `show bgp "
                     "instance` prints as Maximum ECMP; Arista publishes no number for the "
                     "7060X6, so compare it with the table above after the push.")
    return "\n".join(lines)
