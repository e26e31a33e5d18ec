"""The report's "How to check it" section: which day-two files this render has and how to run
them (the verification pack, the telemetry collectors and the alerting rules)."""

from __future__ import annotations

from fabgen import underlay
from fabgen.platforms.registry import outputs as platforms
from fabgen.targets.alerts import RULES, continuous_pause_pps
from fabgen.targets.base import RenderContext

__all__ = ["howto_markdown"]


def howto_markdown(ctx: RenderContext) -> str:
    fabric = ctx.fabric
    mon = ctx.intent.monitoring
    lines = ["## How to check it", ""]
    if fabric.transport == "infiniband":
        where = "telemetry/infiniband_exporter.sysconfig" if fabric.planes <= 1 else \
            "telemetry/plane<N>/infiniband_exporter.sysconfig"
        lines += [
            "- Cabling: `ibnetdiscover > fabric.txt && fabgen verify-cabling INTENT "
            "--ibnetdiscover fabric.txt` lists missing, swapped and slow links.",
            f"- Telemetry: run treydock/infiniband_exporter with the options in `{where}`; "
            "switches and HCAs carry their names from OpenSM's node-name map"
            + (" (UFM's ib-node-name-map: run it on a UFM node)" if ctx.fabric.sm_hosts and
               ctx.intent.infiniband.management.kind == "ufm" and fabric.planes <= 1 else "")
            + ".",
            f"- Alerts: `{RULES}` (link down, retraining, symbol errors above "
            f"{mon.ib_symbol_errors}/h, link-integrity errors, PortXmitWait above "
            f"{mon.ib_xmit_wait_per_s:,} ticks/s). Check with `promtool check rules {RULES}`.",
        ]
        return "\n".join(lines)
    used = {s.platform for s in fabric.switches}
    present = [o for o in platforms.all() if o.facts.name in used]
    bfd = underlay.plan(ctx.intent).bfd is not None
    lines.append("After the push, before the first job:")
    lines.append("")
    verified = [o for o in present if o.saved]
    if verified:
        names = " and ".join(f"`verify/collect-{o.facts.name}.sh`" for o in verified)
        title = " / ".join(o.facts.short for o in verified)
        extra = "".join(dict.fromkeys(o.verify_extra for o in verified))
        lines.append(f"- {title}: run {names} on each switch, gather the `saved/<switch>/`"
                     " directories and run `fabgen verify INTENT saved/`: every port up at its "
                     "planned speed and MTU, every LLDP neighbour as cabled, every BGP session "
                     "Established" + (", every BFD session up with the planned timers"
                                      if bfd else "")
                     + extra + "; exit 1 with one line per mismatch (`--json` for CI).")
    lines += [line for o in present if (line := o.post_deploy_howto(ctx, bfd)) is not None]
    lines += ["", "While jobs run:", ""]
    collectors = [c for o in present if (c := o.collector_howto(ctx)) is not None]
    setup = [line for o in present for line in o.telemetry_setup(ctx)]
    lines.append("- Telemetry: " + "; ".join(collectors) + ". PFC pause frames per priority, "
                 "ECN marks and drops per queue, buffer watermarks, PFC watchdog events, "
                 "link state and speed, BGP state.")
    lines += setup
    # BFD alerts where a collector exports the session state; where none does, the sentence
    # names every platform without it.
    bfd_alerted = [o for o in present if o.signals is not None and o.signals.bfd_up]
    gaps = [o for o in platforms.all() if o.bfd_telemetry_gap]
    slowest = min(link.speed_gbps for link in fabric.links)
    storm = mon.pfc_storm_pps or continuous_pause_pps(slowest)
    lines.append(f"- Alerts: load `{RULES}` into Prometheus. A PFC storm is more than "
                 f"{storm:,} pause frames/s for {mon.pfc_storm_for_s} s"
                 + ("" if mon.pfc_storm_pps else
                    f" (the rate that keeps a {slowest}G link paused)")
                 + f"; a BGP session down for {mon.bgp_down_for_s} s"
                 + (f" (on {' and '.join(o.facts.short for o in bfd_alerted)} also a BFD "
                    "session down as long)" if bfd and bfd_alerted else "")
                 + ", a port up at the wrong "
                 f"speed or flapping more than {mon.link_flaps} times in "
                 f"{mon.link_flap_window_s} s also alert. Thresholds: the intent's "
                 "`monitoring` section."
                 + (f" {' and '.join(o.facts.short for o in gaps)} stream no BFD session "
                    f"state ({'; '.join(str(o.bfd_telemetry_gap) for o in gaps)}): `fabgen "
                    "verify` checks their BFD sessions."
                    if bfd and any(o.bfd_telemetry_gap for o in present) else ""))
    maintenance = [line for o in present for line in o.maintenance_howto(ctx)]
    if maintenance:
        lines += ["", "Maintenance:", "", *maintenance]
    return "\n".join(lines)

