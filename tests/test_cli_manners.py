"""CLI manners a user notices at once: -q prints errors only, a closed pipe ends quietly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import INVENTORIES, ROOT

ROCE = ROOT / "inventories" / "roce-256-sonic.yaml"


def _with_warning(tmp_path: Path) -> Path:
    """The example with a legal but dangerous choice (the PFC watchdog off): one warning."""
    text = ROCE.read_text(encoding="utf-8")
    old = "pfc_watchdog: {detection_ms"
    assert old in text
    path = tmp_path / "warned.yaml"
    path.write_text(text.replace(old, "pfc_watchdog: {enabled: false, detection_ms"),
                    encoding="utf-8")
    return path


def test_quiet_prints_errors_only(cli, tmp_path: Path) -> None:
    intent = _with_warning(tmp_path)
    loud = cli("--no-color", "render", str(intent), "-o", str(tmp_path / "loud"))
    assert loud.code == 0 and "PFC watchdog is off" in loud.err  # the warning exists
    for args in (("render", str(intent), "-o", str(tmp_path / "q")),
                 ("validate", str(intent)), ("plan", str(intent))):
        result = cli("--no-color", *args, "-q")
        assert (result.code, result.out, result.err) == (0, "", ""), args
    # Errors still print with -q: --strict turns the warning into one.
    strict = cli("--no-color", "validate", str(intent), "-q", "--strict")
    assert strict.code == 1 and "PFC watchdog is off" in strict.err and strict.out == ""


@pytest.mark.parametrize("args", [
    ["schema"],
    ["plan", str(INVENTORIES[0]), "--json"],
    ["whatif", str(ROCE), "--fail", "all-single", "--limit", "0"],
], ids=["schema", "plan", "whatif"])
def test_closed_pipe_ends_quietly(args: list[str]) -> None:
    """`fabgen ... | head`: no "error: [Errno 32] Broken pipe", no traceback; the exit status a
    shell reports for git or grep killed by SIGPIPE (128 + 13)."""
    proc = subprocess.Popen([sys.executable, "-m", "fabgen", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before fabgen writes a byte
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert (proc.wait(timeout=120), err) == (141, "")


def test_global_flags_go_before_or_after_the_command(cli) -> None:
    """`fabgen render --no-color` as well as `fabgen --no-color render`, for every command,
    and a flag given before the command is not reset by the command's own copy."""
    import argparse

    from fabgen.cli import COMMANDS
    from fabgen.cli.parser import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    from fabgen.platforms.registry import push as platforms

    assert set(sub.choices) == set(COMMANDS) | {c.name for c in platforms.commands()}
    for name, command in sub.choices.items():
        flags = {s for a in command._actions for s in a.option_strings}
        assert {"--no-color", "--debug", "--version"} <= flags, name
    for argv in (["render", "--no-color"], ["--no-color", "render"]):
        args = parser.parse_args(argv)
        assert (args.no_color, args.debug) == (True, False), argv
    args = parser.parse_args(["--debug", "plan", "x.yaml", "--no-color"])
    assert (args.no_color, args.debug) == (True, True)
    assert parser.parse_args(["plan"]).no_color is False
    after = cli("validate", str(ROCE), "--no-color", "--debug")
    assert after.code == 0 and after.out == f"{ROCE}: ok\n"
    version = cli("diff", "--version")
    assert version.code == 0 and version.out.startswith("fabgen ")


def test_plan_validate_and_render_print_the_same_warnings(cli, tmp_path: Path) -> None:
    """What `plan` warns about (spines at half their ports, here), `validate` and `render` warn
    about too, and --strict refuses in all three (render writing nothing)."""
    intent = _with_warning(tmp_path)  # + the intent's own warning: the PFC watchdog off
    out = tmp_path / "out"
    runs = {"plan": cli("--no-color", "plan", str(intent)),
            "validate": cli("--no-color", "validate", str(intent)),
            "render": cli("--no-color", "render", str(intent), "-o", str(out))}
    printed = {name: [line for line in run.err.splitlines() if ": warning: " in line]
               for name, run in runs.items()}
    assert printed["plan"] == printed["validate"] == printed["render"], printed
    assert any("topology.spine: spines use 64 of their 128 ports" in w for w in printed["plan"])
    assert any("PFC watchdog is off" in w for w in printed["plan"])
    assert "warning:" not in runs["plan"].out  # said once, on stderr, like the others
    for name, args in (("plan", ()), ("validate", ()), ("render", ("-o", str(tmp_path / "s")))):
        strict = cli("--no-color", name, str(intent), "--strict", *args)
        assert strict.code == 1, name
        errors = strict.err.splitlines()
        assert any("topology.spine: spines use 64 of their 128 ports" in e for e in errors)
        assert not any(": warning: " in e for e in errors), name
    assert not (tmp_path / "s").exists()
    data = json.loads(cli("plan", str(intent), "--json").out)
    assert data["warnings"] == printed["plan"]


def test_push_without_its_extra_says_how_to_add_it(cli, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """pip and pipx users both get a command that works: `pipx inject fabgen 'fabgen[push]'`
    installs the extra's dependencies into fabgen's own venv (pipx 1.18.4, a wheel install)."""
    # As if the push extra were missing: nornir and any of its modules an earlier test loaded.
    for name in ["nornir", *(m for m in sys.modules if m.startswith("nornir."))]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, "fabgen.push.runner", raising=False)
    # An earlier test's push (the platform contract's) left the submodule as the package's
    # attribute too, which `from fabgen.push import runner` would take without importing.
    import fabgen.push

    monkeypatch.delattr(fabgen.push, "runner", raising=False)
    hosts = tmp_path / "mgmt.yaml"
    hosts.write_text("{}\n")
    result = cli("--no-color", "push", str(ROCE), "--hosts", str(hosts))
    assert result.code == 1
    assert result.err == ("push needs nornir: install fabgen with the push extra: pip install "
                          "'fabgen[push]', or for a pipx install: pipx inject fabgen "
                          "'fabgen[push]'\n")


# The main help's examples, run as a pipx user would: in an empty directory, in order.
def _main_examples() -> list[str]:
    from fabgen.cli.parser import EPILOG

    lines = EPILOG.split("examples:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    return [line.strip().split("  ")[0] for line in lines if line.startswith("  fabgen ")]


def test_main_help_examples_work_outside_the_repository(cli, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    examples = _main_examples()
    assert examples[0] == "fabgen init" and len(examples) >= 8
    for example in examples:
        args = example.split()[1:]
        if args[0] == "diff":
            continue  # needs a git history; tests/test_diff.py runs git: sources
        target = None
        if ">" in args:
            args, target = args[:args.index(">")], args[args.index(">") + 1]
        result = cli("--no-color", *args)
        assert result.code == 0, (example, result.err)
        if target:
            (tmp_path / target).write_text(result.out)
    assert (tmp_path / "configs" / "pod-a" / "manifest.json").is_file()


def test_no_help_names_a_path_of_the_repository(cli) -> None:
    from fabgen.cli import COMMANDS

    repo_dirs = ("inventories/", "golden/", "tests/", "docs/", "benchmarks/", "templates/",
                 "schemas/")
    for command in [None, *COMMANDS]:
        text = cli(*([command] if command else []), "--help").out
        assert not [d for d in repo_dirs if d in text], command
