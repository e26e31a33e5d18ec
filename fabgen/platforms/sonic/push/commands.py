"""SONiC's own subcommand: `fabgen frr-lab`, the SONiC underlay in real FRR, one network
namespace per switch (frrlab/)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from fabgen.platforms.contract.push import EXIT_INVALID, EXIT_OK, EXIT_USAGE, Command, Console

__all__ = ["FRR_LAB", "FrrLab"]


class FrrLab(Command):
    name = "frr-lab"
    help = "run the SONiC underlay in real FRR, one network namespace per switch"

    def parser_kwargs(self) -> dict[str, Any]:
        return {
            "description": (
                "Render the intent's SONiC switches and run each in a network namespace "
                "(root, Debian's frr and frr-snmp): its config_db.json's interfaces, a veth "
                "per cable of the cabling plan, FRR's zebra, staticd, bfdd and bgpd booted "
                "with the frr.conf the switch's bgp container builds from config_db.json. "
                "Checks every BGP session Established, every BFD session up and every "
                "announced prefix installed with the ECMP width eBGP gives, then drops one "
                "leaf uplink's packets (tc blackhole; the link stays up) and times "
                "detection. A session that goes down again after every session was up "
                "(a flap), or a detection later than the plan (BFD's interval x "
                "multiplier, or the hold time) by more than the stated tolerance, fails "
                "the lab; with snmpd installed, each switch's BGP4-MIB (the BgpSessionDown "
                "alert's source) is walked too. Namespaces and daemons are removed on exit."),
            "epilog": (
                "examples:\n"
                "  sudo fabgen frr-lab pod-a.yaml\n"
                "  sudo fabgen frr-lab pod-a.yaml --hold --json   # also time the hold timer\n\n"
                "exit codes: 0 the underlay converged as planned, without flaps, and detected "
                "the failure in time; 1 it did not (or bad input), "
                "2 usage or the machine cannot run a lab"),
        }

    def configure(self, p: argparse.ArgumentParser) -> None:
        p.add_argument("intent", metavar="INTENT")
        p.add_argument("--switches", metavar="GLOB", help="only these SONiC switches")
        p.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                       help="how long to wait for convergence (default 120)")
        p.add_argument("--no-failure", dest="detect", action="store_false",
                       help="do not drop a link and time detection")
        p.add_argument("--hold", action="store_true",
                       help="also time detection with BFD off on that link's two switches (a "
                            "lab-only change): the BGP hold timer")
        p.add_argument("--json", action="store_true", help="print the result as JSON")
        p.add_argument("-q", "--quiet", action="store_true", help="print only the result")

    def run(self, args: argparse.Namespace, console: Console) -> int:
        from fabgen import qos
        from fabgen.intent import load
        from fabgen.platforms.sonic.frrlab import lab as frrlab
        from fabgen.platforms.sonic.frrlab.netns import LabError, available
        from fabgen.platforms.sonic.frrlab.run import from_context, run_lab
        from fabgen.targets.base import RenderContext
        from fabgen.topology.build import build

        intent = load(args.intent).intent
        if intent.fabric.transport != "roce":
            console.error(f"{args.intent}: an InfiniBand fabric has no BGP underlay")
            return EXIT_INVALID
        why = available()
        if why is not None:
            console.error(f"cannot run an FRR lab here: {why}")
            return EXIT_USAGE
        ctx = RenderContext(intent=intent, fabric=build(intent), qos=qos.plan(intent))

        def progress(message: str) -> None:  # stderr: stdout carries the result
            console.info(message, sys.stderr)

        quiet = args.quiet or args.json
        try:
            lab = from_context(ctx, args.switches)
            result = run_lab(lab, timeout=args.timeout, detect=args.detect, hold=args.hold,
                             progress=None if quiet else progress)
        except LabError as exc:
            console.error(str(exc))
            return EXIT_INVALID
        if args.json:
            print(json.dumps(result.as_json(), indent=2))
        else:
            sys.stdout.write(frrlab.format_result(result))
        return EXIT_OK if result.ok else EXIT_INVALID


FRR_LAB = FrrLab()
