"""From a render context to a lab result: what `fabgen frr-lab` and the tests call."""

from __future__ import annotations

import json
from collections.abc import Callable

from fabgen.platforms.sonic import checks as sonic_checks
from fabgen.platforms.sonic import target as sonic
from fabgen.platforms.sonic.frrlab import model
from fabgen.platforms.sonic.frrlab.lab import (
    LabResult,
    check,
    measure,
    pick_link,
    running,
    wait_session,
)
from fabgen.platforms.sonic.frrlab.model import Lab
from fabgen.platforms.sonic.frrlab.netns import LabError
from fabgen.targets.base import RenderContext

__all__ = ["from_context", "run_lab"]

Progress = Callable[[str], None]


def from_context(ctx: RenderContext, switches: str | None = None) -> Lab:
    """The lab of the context's SONiC switches (`switches`: an fnmatch pattern selecting some),
    each with the config_db.json and frr.expected.conf the sonic target renders for it, wired by
    the cables between them."""
    import fnmatch

    chosen = [s for s in ctx.fabric.switches if s.platform == "sonic"
              and (switches is None or fnmatch.fnmatchcase(s.name, switches))]
    if not chosen:
        raise LabError("no SONiC switch to put in the lab"
                       + (f" (--switches {switches!r})" if switches else ""))
    specs = []
    names = {s.name for s in chosen}
    cables = []
    for switch in chosen:
        files = sonic.TARGET.render_unit(ctx, switch.name)
        config = json.loads(files[f"sonic/{switch.name}/config_db.json"])
        frr = files[f"sonic/{switch.name}/frr.expected.conf"]
        if switch.asn is None:
            raise LabError(f"{switch.name} has no ASN")
        specs.append((switch.name, switch.role, switch.asn, config, frr))
        for p in ctx.index.ports(switch):
            # Each switch-to-switch cable once, from its lower end (a leaf's uplink).
            if p.peer_switch is not None and p.uplink and p.peer in names:
                cables.append(((switch.name, p.name), (p.peer, p.peer_port)))
    return model.plan(specs, cables)


def run_lab(lab: Lab, *, timeout: float = 90.0, detect: bool = True, hold: bool = False,
            progress: Progress | None = None, run_id: str | None = None) -> LabResult:
    """Bring the lab up, check it, and (`detect`) time one link's failure by BFD when the
    config runs BFD and (`hold`, or when it does not) by the BGP hold timer."""
    say = progress or (lambda _m: None)
    with running(lab, say, run_id) as ns:
        result = check(ns, lab, timeout, say)
        if not detect or not result.ok:
            return result
        cable = pick_link(lab)
        (sw, _), (peer, _) = cable
        config = lab.switch(sw).config
        group = config.get("BGP_PEER_GROUP", {}).get("default|FABRIC", {})
        hold_ms = int(group.get("holdtime", "180")) * 1000
        bfd_ms = sonic_checks.FRR_BFD_DEFAULTS[0] * sonic_checks.FRR_BFD_DEFAULTS[1]
        if lab.switch(sw).bfd:
            result.detections.append(measure(ns, lab, cable, "bfd", bfd_ms, hold_ms / 1000 + 5))
            say(f"dropped {sw} {cable[0][1]} <-> {peer}: BFD down after "
                f"{result.detections[-1].bfd_down_ms} ms")
            wait_session(ns, lab, cable)
        if hold or not lab.switch(sw).bfd:
            bfd_on = lab.switch(sw).bfd
            if bfd_on:
                # A lab-only change, reported as such: BFD off on the two switches of the link
                # (FRR keeps a peer-group's `bfd` on a member whatever the member says).
                for end in (sw, peer):
                    ns.configure(end, [f"router bgp {lab.switch(end).asn}",
                                       "no neighbor FABRIC bfd"])
                wait_session(ns, lab, cable, bfd=False)
            try:
                result.detections.append(
                    measure(ns, lab, cable, "hold-timer", hold_ms, hold_ms / 1000 + 5))
                say(f"dropped {sw} {cable[0][1]} <-> {peer} with BFD off: BGP down after "
                    f"{result.detections[-1].bgp_down_ms} ms")
            finally:
                if bfd_on:
                    for end in (sw, peer):
                        ns.configure(end, [f"router bgp {lab.switch(end).asn}",
                                           "neighbor FABRIC bfd"])
            wait_session(ns, lab, cable, bfd=bfd_on)
        return result
