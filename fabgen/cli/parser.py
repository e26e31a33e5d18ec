"""The command line: every subcommand, its options and its help with examples."""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any, NoReturn

from fabgen import __version__, resources
from fabgen.cli.console import EXIT_CODES, EXIT_USAGE
from fabgen.cli.intent_commands import LOCAL_INTENT
from fabgen.platforms.registry import push as push_platforms

# Every example works as written, in this order, in an empty directory of a pipx install
# (tests/test_cli_manners.py runs them): no path of fabgen's repository, only files they make.
EPILOG = """\
examples:
  fabgen init                                 write ./fabgen.yaml from a packaged example
  fabgen validate                             check ./fabgen.yaml (exit 1 on any error)
  fabgen render                               render ./fabgen.yaml into out/NAME
  fabgen init ib-ndr-1024 -o pod-a.yaml       another example (fabgen init --help lists them)
  fabgen validate fabgen.yaml pod-a.yaml      check intents (exit 1 on any error)
  fabgen render pod-a.yaml -o configs/pod-a   render an intent into a directory
  fabgen render pod-a.yaml -o configs/pod-a --check
                                              exit 1 if configs/pod-a differs (CI gate)
  fabgen plan pod-a.yaml --json               switch/cable counts, bisection, as JSON
  fabgen diff git:HEAD~1:configs/pod-a configs/pod-a
                                              what a change does, per device (exit 2)
  fabgen schema > fabgen-intent.schema.json   JSON Schema for editors

""" + EXIT_CODES + "\n"


class Parser(argparse.ArgumentParser):
    """argparse, with its usage errors on fabgen's exit code for errors (1), not its own 2:
    2 is `fabgen diff`'s "changes", and `fabgen diff --formt json A B` must not read as
    that to a CI gate. Subcommand parsers are made of the same class (argparse uses the
    parent's type)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="fabgen",
        description="Generate every config of a GPU-cluster fabric (cabling, switch QoS, NIC "
                    "scripts, NCCL env, subnet manager, report) from one intent file.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    global_flags(parser, default=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name: str, **kwargs: Any) -> argparse.ArgumentParser:
        """A subcommand whose description and examples print as written (line breaks kept),
        taking the global flags after its name too (`fabgen render --no-color`)."""
        p = sub.add_parser(name, formatter_class=argparse.RawDescriptionHelpFormatter,
                           **kwargs)
        global_flags(p, default=argparse.SUPPRESS)
        return p

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--strict", action="store_true",
                       help="treat warnings (dangerous but legal choices) as errors")
        p.add_argument("-q", "--quiet", action="store_true", help="print errors only")
        p.add_argument("--json", action="store_true", help="print the result as JSON")

    p = command("validate", help="check intent files", epilog=EPILOG,
                description="Validate intents: every error of each file with file:line:col, "
                            "then warnings. Each valid intent is also rendered in memory "
                            "(nothing is written), so an intent that validates renders.")
    p.add_argument("intents", nargs="*", metavar="INTENT",
                   help=f"intent YAML files (default: ./{LOCAL_INTENT})")
    common(p)

    p = command("render", help="render all artifacts of an intent", epilog=EPILOG,
                description="Render every artifact into a directory, atomically. With "
                            "--check, compare instead of writing.")
    p.add_argument("intent", nargs="?", metavar="INTENT",
                   help=f"intent YAML (default: ./{LOCAL_INTENT} if it exists, else the "
                        f"built-in example {resources.DEFAULT_EXAMPLE})")
    p.add_argument("-o", "--output", metavar="DIR", help="output directory (default: out/NAME)")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if DIR differs from a fresh render")
    p.add_argument("--only", action="append", metavar="TARGETS",
                   help="render only these targets or groups, comma-separated (switches, hosts, "
                        "infiniband, cabling, report, nic, nccl, a platform's name, ...)")
    p.add_argument("--devices", metavar="PATTERN",
                   help="render per-device files only for devices matching a glob "
                        "(e.g. 'leaf-su1-*'); fabric-wide files are kept")
    p.add_argument("--follow-symlinks", action="store_true",
                   help="if DIR is a symbolic link, write at its target (refused otherwise)")
    p.add_argument("--force", action="store_true",
                   help="replace DIR even when it holds another fabric's render (its "
                        "manifest.json names the fabric)")
    p.add_argument("--jobs", "-j", type=jobs_count, metavar="N",
                   help="render with N processes (default: this machine's cores; 1 renders in "
                        "one process); the files are the same for every N")
    common(p)

    p = command("plan", help="print switch/cable counts without writing files", epilog=EPILOG)
    p.add_argument("intent", nargs="?", metavar="INTENT",
                   help=f"intent YAML (default: ./{LOCAL_INTENT})")
    common(p)

    p = command(
        "diff", help="compare two renders, a git revision, or backed-up running configs",
        description=textwrap.fill(
                    "Compare OLD and NEW, each a render directory, git:REV:PATH (PATH from "
                    "the repository's top, as in git), or a directory of device backups "
                    "(Oxidized/RANCID: one file per device, or a copy of a render's platform "
                    "folder). Every file by its kind: JSON/YAML key by key (order "
                    "ignored; several YAML documents matched by kind and name), device configs "
                    "as their platform structures them (by table, `set` path or section), "
                    "cable tables cable by cable (matched by both ends), scripts and env "
                    "files by line. Against "
                    "backups, only what fabgen owns, cut the same way on both sides. The "
                    "summary line comes first; on a terminal the text goes through $PAGER.",
                    width=90),
        epilog="examples:\n"
               "  fabgen diff git:HEAD~1:configs/pod-a configs/pod-a\n"
               "  fabgen diff git:origin/main:configs/pod-a configs/pod-a --format markdown "
               "> comment.md\n"
               "  fabgen diff /var/lib/oxidized/configs configs/pod-a --format json\n\n"
               "exit codes: 0 no changes, 2 changes (as terraform plan -detailed-exitcode), "
               "1 error,\n  a usage error (a mistyped flag) included; 3 a bug in fabgen")
    p.add_argument("old", metavar="OLD")
    p.add_argument("new", metavar="NEW")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text",
                   help="text (default), json (for scripts: README documents it) or markdown "
                        "(a pull-request comment)")
    p.add_argument("--json", dest="format", action="store_const", const="json",
                   help="the same as --format json")
    p.add_argument("--all", action="store_true",
                   help="against backups, compare everything, not only what fabgen renders "
                        "(every table, section or path of a device config)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="print only the summary line (text format only; with --json or "
                        "--format markdown it is a usage error)")
    p.add_argument("--no-pager", action="store_true",
                   help="never page (the text is paged only when stdout is a terminal)")
    p.add_argument("--max-chars", type=comment_size, default=65_536, metavar="N",
                   help="markdown: cut the comment to N characters (default 65,536, a GitHub "
                        "comment's limit)")
    p.add_argument("--full-diff-url", metavar="URL",
                   help="markdown: where the full diff is (a CI artifact), named when the "
                        "comment is cut")

    p = command(
        "check-cabling", help="check a cabling sheet against the invariants and the plan",
        description="Read a cabling sheet (fabgen's cabling.csv or cabling.json, e.g. after a "
                    "field team edited it) and report asymmetric uplinks, reused ports, rail "
                    "misalignment, two cables swapped (their rows, where to exchange them), and "
                    "cables missing from or added to the plan of INTENT, with the sheet's row "
                    "numbers and port names.",
        epilog="example:\n  fabgen check-cabling pod-a.yaml as-built/cabling.csv\n\n"
               "exit codes: 0 no finding, 1 findings or invalid input")
    p.add_argument("intent", metavar="INTENT")
    p.add_argument("sheet", metavar="SHEET", help="cabling.csv or cabling.json")
    p.add_argument("--json", action="store_true", help="print findings as JSON")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing; exit code only")

    p = command(
        "whatif", help="what the fabric loses when switches, links or a plane fail",
        description="Fail switches, links or planes and compute, from the fabric model, the "
                    "remaining bisection, the worst oversubscription, ECMP imbalance, which "
                    "rails/units/nodes are hit and whether any GPU pair loses every path.",
        epilog="SPEC: a switch (spine-03), a link (leaf-su1-r2:spine-03), a cable id "
               "(c-su1-r0-001),\n  a role count (spine:2, worst case), a plane (plane:1), "
               "all-single, or A+B together\n\nexamples:\n"
               "  fabgen whatif pod-a.yaml --fail spine-01 --fail spine:2\n"
               "  fabgen whatif pod-a.yaml --fail all-single --min-bisection 0.9 "
               "--max-oversubscription 2.0\n\n"
               "exit codes: 0 every scenario within the limits, 1 a limit violated or bad input")
    p.add_argument("intent", metavar="INTENT")
    p.add_argument("--fail", action="append", required=True, metavar="SPEC",
                   help="what fails (repeatable)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--min-bisection", type=float, metavar="FRACTION",
                   help="exit 1 if any scenario keeps less than this share of the intact "
                        "bisection (0.9 = 90%%)")
    p.add_argument("--max-oversubscription", type=float, metavar="RATIO",
                   help="exit 1 if any scenario leaves a switch oversubscribed above RATIO:1")
    p.add_argument("--limit", type=int, default=50, help="rows in the table (0 = all)")
    p.add_argument("-q", "--quiet", action="store_true", help="print only violations")

    p = command(
        "verify-cabling", help="compare an InfiniBand fabric's ibnetdiscover output with the plan",
        description="List missing, extra and swapped cables (exact ports) and links running "
                    "below the planned width or speed, matching nodes by GUID or description.",
        epilog="example:\n  ibnetdiscover > fabric.txt && fabgen verify-cabling pod-a.yaml "
               "--ibnetdiscover fabric.txt\n\nexit codes: 0 the fabric matches the plan, "
               "1 findings or invalid input")
    p.add_argument("intent", metavar="INTENT")
    p.add_argument("--ibnetdiscover", required=True, metavar="FILE")
    p.add_argument("--plane", type=int, metavar="N", help="which plane FILE shows (1-based)")
    p.add_argument("--expect-speed", metavar="NAME",
                   help="speed to expect instead of the plan's (HDR for a simulated fabric)")
    p.add_argument("--json", action="store_true", help="print findings as JSON")

    p = command(
        "verify", help="compare switches' saved show outputs with the plan",
        description="Read DIR/<switch>/ (the files verify/collect-<platform>.sh saves: LLDP, "
                    "interfaces, BGP, BFD and what each platform adds, such as its routing "
                    "mode, PFC and PFC watchdog) and report every port, neighbour or session "
                    "that differs from the plan. A platform with no collect script is checked "
                    "by its own tool: the report's \"How to check it\" names it.",
        epilog="example:\n  fabgen verify pod-a.yaml saved/ --devices 'leaf-*'\n\n"
               "exit codes: 0 every switch matches, 1 mismatches, invalid input or usage error")
    p.add_argument("intent", metavar="INTENT")
    p.add_argument("saved", metavar="DIR", help="one sub-directory of saved outputs per switch")
    p.add_argument("--devices", metavar="PATTERN", help="only switches matching this glob")
    p.add_argument("--checks", metavar="LIST",
                   help="comma-separated subset of: outputs, interfaces, lldp, routing, bgp, "
                        "bfd, pfc, pfc-watchdog (default: all)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")

    for extra in push_platforms.commands():  # each platform's own subcommands
        extra.configure(command(extra.name, help=extra.help, **extra.parser_kwargs()))

    p = command(
        "push", help="push rendered configs to switches (dry run by default)",
        description="Connect to each selected switch, load the rendered config and show the "
                    "device's diff (dry run, the default). With --commit: a canary, then "
                    "batches, each under commit-confirm (the switch's own confirm timer, or a "
                    "rollback timer fabgen arms where the OS has none), stopping and rolling "
                    "back at the first failed batch. Credentials come from FABGEN_USERNAME / "
                    "FABGEN_PASSWORD or a prompt, never from the intent or a file.",
        epilog="examples:\n"
               "  fabgen push pod-a.yaml --hosts mgmt.yaml                    # dry run: diffs\n"
               "  fabgen push pod-a.yaml --hosts mgmt.yaml --commit --role leaf --batch-size 8\n"
               "\nexit codes: 0 every device ok, 1 a device failed, the rollout stopped, or "
               "bad input")
    p.add_argument("intent", metavar="INTENT")
    p.add_argument("--hosts", required=True, metavar="FILE",
                   help="YAML: switch name -> management host[:port]")
    p.add_argument("-r", "--render-dir", metavar="DIR", help="rendered configs (default out/NAME)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", dest="commit", action="store_false",
                      help="show each device's diff, change nothing (default)")
    mode.add_argument("--commit", dest="commit", action="store_true",
                      help="apply: canary, then batches, with commit-confirm and rollback")
    p.set_defaults(commit=False)
    p.add_argument("--devices", metavar="GLOB[,GLOB]", help="only these switches")
    p.add_argument("--role", default="", metavar="ROLES", help="only these roles (leaf,spine,core)")
    p.add_argument("--rail", default="", metavar="RAILS", help="only leaves of these rails (0,3)")
    p.add_argument("--workers", type=int, default=8, help="devices at once (default 8)")
    p.add_argument("--timeout", type=int, default=60, help="per-command timeout, s")
    p.add_argument("--apply-timeout", type=int, default=300, help="applying command timeout, s")
    p.add_argument("--canary", metavar="GLOB", help="canary devices (default: the first leaf)")
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--max-tier-fraction", type=float, default=0.25, metavar="F",
                   help="at most this share of a failure domain (a unit's leaves, a pod's "
                        "spines) in one batch (default 0.25)")
    p.add_argument("--health-timeout", type=float, default=60.0, metavar="SECONDS",
                   help="wait this long for BGP sessions to be Established before confirming "
                        "(0: no health check)")
    p.add_argument("--confirm-timeout", type=int, default=600,
                   help="seconds before an unconfirmed commit rolls back")
    p.add_argument("--known-hosts", metavar="FILE", help="default ~/.ssh/known_hosts")
    p.add_argument("--accept-new-host-keys", action="store_true",
                   help="accept and record unknown host keys (changed keys are always refused)")
    p.add_argument("--audit", metavar="FILE", help="JSON-lines audit log")
    for push in push_platforms.all():  # each platform's own options: --<platform>-<name>
        for option in push.options:
            flag = f"--{push.facts.name}-{option.name}"
            if option.flag:
                p.add_argument(flag, action="store_const", const=option.choices[-1],
                               default=option.default, help=option.help or None)
            else:
                p.add_argument(flag, choices=option.choices, default=option.default,
                               help=option.help or None)
    p.add_argument("--username", help="login name (else FABGEN_USERNAME)")
    p.add_argument("--ssh-config", metavar="FILE")
    p.add_argument("--no-diff", action="store_true", help="do not print diffs")
    common(p)

    command("schema", help="print the intent's JSON Schema",
            epilog="example:\n  fabgen schema > fabgen-intent.schema.json")

    examples = "\n".join(f"  {name:<20} {resources.example_summary(name)}"
                         for name in resources.examples())
    p = command(
        "init", help="write a starter intent from one of the examples",
        description="Write an example intent to edit, and the JSON Schema beside it (its "
                    "`# yaml-language-server: $schema=` line points there, so editors complete "
                    "and check keys). Existing files are never replaced without --force.",
        epilog=f"examples (EXAMPLE):\n{examples}\n\n"
               "  fabgen init && fabgen render              ./fabgen.yaml, rendered to out/NAME\n"
               "  fabgen init ib-ndr-1024 -o pods/ib.yaml   another example, another file\n\n"
               "exit codes: 0 written, 1 a file exists (nothing written)")
    p.add_argument("example", nargs="?", default=resources.DEFAULT_EXAMPLE, metavar="EXAMPLE",
                   choices=list(resources.examples()),
                   help=f"which example (default: {resources.DEFAULT_EXAMPLE})")
    p.add_argument("-o", "--output", metavar="FILE", default=str(LOCAL_INTENT),
                   help=f"the intent file to write (default: {LOCAL_INTENT})")
    p.add_argument("--force", action="store_true", help="replace existing files")
    p.add_argument("-q", "--quiet", action="store_true", help="print errors only")
    return parser


def global_flags(p: argparse.ArgumentParser, default: Any) -> None:
    """--version, --debug and --no-color, on the main parser and on every subcommand.

    A subcommand's copies default to SUPPRESS, so they set the value only when given there and
    never reset what was given before the subcommand (`fabgen --no-color render`)."""
    p.add_argument("--version", action="version", version=f"fabgen {__version__}")
    p.add_argument("--debug", action="store_true", default=default,
                   help="show a traceback on errors")
    p.add_argument("--no-color", action="store_true", default=default,
                   help="never colour output")


def jobs_count(text: str) -> int:
    """--jobs N: a whole number of processes, at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"at least 1 process, not {value}")
    return value



MIN_COMMENT = 2048  # the summary and the note saying where the rest is must fit


def comment_size(text: str) -> int:
    """--max-chars N: a whole number of characters, at least MIN_COMMENT."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < MIN_COMMENT:
        raise argparse.ArgumentTypeError(f"at least {MIN_COMMENT}, not {value}")
    return value
