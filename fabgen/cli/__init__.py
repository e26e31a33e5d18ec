"""The `fabgen` command: parse arguments, run the command, print, return an exit code.

`main` is the entry point (`fabgen.cli:main`). The parser is in `parser`, the commands in
`intent_commands`, `check_commands` and `push_command`, what the user sees in `console`.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Callable, Sequence

from fabgen.cli import check_commands, intent_commands, push_command
from fabgen.cli.console import (
    EXIT_BUG,
    EXIT_INVALID,
    EXIT_USAGE,
    Console,
    UsageError,
    closed_stdout,
    one_line,
)
from fabgen.cli.parser import build_parser
from fabgen.errors import FabgenError

__all__ = ["main"]


COMMANDS: dict[str, Callable[[argparse.Namespace, Console], int]] = {
    "validate": intent_commands.cmd_validate,
    "render": intent_commands.cmd_render,
    "plan": intent_commands.cmd_plan,
    "schema": intent_commands.cmd_schema,
    "diff": check_commands.cmd_diff,
    "check-cabling": check_commands.cmd_check_cabling,
    "whatif": check_commands.cmd_whatif,
    "verify-cabling": check_commands.cmd_verify_cabling,
    "verify": check_commands.cmd_verify,
    "verify-counters": check_commands.cmd_verify_counters,
    "frr-lab": check_commands.cmd_frr_lab,
    "push": push_command.cmd_push,
    "init": intent_commands.cmd_init,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    console = Console(quiet=getattr(args, "quiet", False),
                      color=False if args.no_color else None)
    try:
        code = COMMANDS[args.command](args, console)
        sys.stdout.flush()  # a closed pipe shows here, not at exit as "Exception ignored"
        return code
    except BrokenPipeError:
        return closed_stdout()
    except FabgenError as exc:
        for diag in exc.diagnostics:
            console.diagnostic(diag)
        return EXIT_INVALID
    except UsageError as exc:
        console.error(str(exc))
        return EXIT_USAGE
    except KeyboardInterrupt:
        console.error("interrupted")
        return 130
    except Exception as exc:
        from fabgen.output import OutputError

        if args.debug:
            traceback.print_exc()
        from fabgen.intent.loader import CheckCrashed
        from fabgen.render import RenderError

        if isinstance(exc, OutputError | OSError | RenderError):
            console.error(one_line(str(exc)))
            return EXIT_INVALID
        if isinstance(exc, MemoryError):
            console.error("out of memory (a ulimit or the machine's); the README's Scale "
                          "section says what a fabric of this size needs")
            return EXIT_INVALID
        what = "" if isinstance(exc, CheckCrashed) else f"{type(exc).__name__}: "
        console.error(f"internal error: {what}{one_line(str(exc))} (rerun with --debug and "
                      "report it)")
        return EXIT_BUG

