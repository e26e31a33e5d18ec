"""`fabgen diff` as a CI gate and in a pull request: exit codes that cannot be confused, the
pager, and the Markdown comment's size bound and escaping."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from fabgen.cli import COMMANDS
from fabgen.cli.console import EXIT_CHANGES, EXIT_INVALID, EXIT_OK
from fabgen.cli.parser import build_parser
from fabgen.diff import diff
from fabgen.diff.markdown import format_markdown
from tests.conftest import GOLDEN, ROOT, require_tool

RENDER = str(GOLDEN / "roce-256-sonic")


def _pair(tmp_path: Path, files: dict[str, tuple[str, str]]) -> tuple[str, str]:
    """Two renders holding `files` (path -> old text, new text)."""
    for i, side in enumerate(("a", "b")):
        (tmp_path / side).mkdir()
        (tmp_path / side / "manifest.json").write_text("{}\n")
        for path, texts in files.items():
            (tmp_path / side / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / side / path).write_text(texts[i])
    return str(tmp_path / "a"), str(tmp_path / "b")


def test_three_codes_that_cannot_be_confused(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert (EXIT_OK, EXIT_CHANGES, EXIT_INVALID) == (0, 2, 1)
    a, b = _pair(tmp_path, {"x.txt": ("1\n", "2\n")})
    for fmt in ("text", "json", "markdown"):
        assert cli("diff", "--format", fmt, a, a).code == 0
        assert cli("diff", "--format", fmt, a, b).code == 2
        assert cli("diff", "--format", fmt, a, str(tmp_path / "missing")).code == 1
    assert cli("diff", "-q", a, b).code == 2


@pytest.mark.parametrize("args", [
    ["diff", "--formt", "json", RENDER, RENDER],  # the issue's own example
    ["diff", "--format", "jsn", RENDER, RENDER],
    ["diff", RENDER],
    ["diff", RENDER, RENDER, RENDER],
    ["diff", "--max-chars", "lots", RENDER, RENDER],
    ["diff", "--max-chars", "10", RENDER, RENDER],
    ["--formt", "diff", RENDER, RENDER],
    ["dif", RENDER, RENDER],
    [],
])
def test_a_usage_error_is_never_the_changes_code(args: list[str], cli) -> None:  # type: ignore[no-untyped-def]
    result = cli(*args)
    assert result.code == EXIT_INVALID, (args, result.err)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_exits_1_on_a_mistyped_flag(command: str, cli) -> None:  # type: ignore[no-untyped-def]
    """One table for every command: 2 is only ever "changes"."""
    result = cli(command, "--no-such-flag")
    assert result.code == 1 and "error:" in result.err, result.err


def test_a_mistyped_flag_exits_1_from_the_installed_command() -> None:
    proc = subprocess.run([sys.executable, "-m", "fabgen", "diff", "--formt", "json", RENDER,
                           RENDER], capture_output=True, text=True, check=False)
    assert proc.returncode == 1 and "unrecognized arguments: --formt" in proc.stderr


def test_help_documents_the_codes(cli) -> None:  # type: ignore[no-untyped-def]
    text = cli("diff", "--help").out
    assert "0 no changes, 2 changes" in text and "1 error" in text
    top = cli("--help").out
    assert "2 changes (diff only)" in top and "a usage error" in top
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert "0 no changes, 2 changes, 1 error (a usage error included)" in readme


def _in_a_terminal(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run fabgen with stdout on a pseudo-terminal: its exit code and what it printed."""
    pty = pytest.importorskip("pty", reason="pseudo-terminals are POSIX")
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "fabgen", *args], stdout=slave,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            env={**os.environ, **env})
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the terminal closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    return proc.wait(timeout=120), b"".join(chunks).decode()


def test_the_text_is_paged_on_a_terminal_only(tmp_path: Path) -> None:
    a, b = _pair(tmp_path, {"x.txt": ("1\n", "2\n")})
    paged = tmp_path / "paged.txt"
    pager = {"FABGEN_PAGER": f"cat > {paged}", "NO_COLOR": "1"}
    code, shown = _in_a_terminal(["diff", a, b], pager)
    assert code == 2 and shown == ""
    assert paged.read_text().startswith("files: 0 added, 0 removed, 1 changed")
    paged.unlink()
    code, shown = _in_a_terminal(["diff", "--no-pager", a, b], pager)
    assert code == 2 and shown.startswith("files: ") and not paged.exists()
    # Not a terminal: never paged.
    proc = subprocess.run([sys.executable, "-m", "fabgen", "diff", a, b], capture_output=True,
                          text=True, env={**os.environ, **pager}, check=False)
    assert proc.returncode == 2 and proc.stdout.startswith("files: ") and not paged.exists()


def test_markdown_is_cut_to_fit_and_says_where_the_rest_is(tmp_path: Path) -> None:
    files = {f"eos/leaf{i:03d}.cfg": (f"hostname leaf{i}\ninterface Ethernet1\n   mtu 9000\n",
                                       f"hostname leaf{i}\ninterface Ethernet1\n   mtu {i}\n")
             for i in range(400)}
    a, b = _pair(tmp_path, files)
    result = diff(a, b)
    whole = format_markdown(result, limit=10_000_000)
    assert len(whole) > 20_000 and "Cut to fit" not in whole
    cut = format_markdown(result, limit=20_000, full_diff="https://ci.example/job/1/diff.txt")
    assert len(cut) <= 20_000
    assert cut.startswith("### fabgen diff: 400 devices, 400 files changed")
    assert cut.rstrip().endswith("the full diff: https://ci.example/job/1/diff.txt.")
    assert "✂ Cut to fit a comment (20,000 characters) after " in cut
    # Every block opened is closed: a cut never falls inside one.
    assert cut.count("<details>") == cut.count("</details>")
    assert cut.count("```") % 2 == 0
    plain = format_markdown(result, limit=20_000)
    assert f"run `fabgen diff {a} {b}` for the full diff" in plain


def test_markdown_groups_a_change_made_on_many_devices(tmp_path: Path) -> None:
    files = {f"eos/leaf{i}.cfg": ("interface Ethernet1/1\n   random-detect ecn minimum-threshold "
                                  "150000 bytes\n",
                                  "interface Ethernet1/1\n   random-detect ecn minimum-threshold "
                                  "200000 bytes\n") for i in range(1, 127)}
    a, b = _pair(tmp_path, files)
    md = format_markdown(diff(a, b))
    assert ("**126 devices (eos)**, 1 place each: `interface Ethernet1/1`\n\n```diff\n"
            "- random-detect ecn minimum-threshold 150000 bytes\n"
            "+ random-detect ecn minimum-threshold 200000 bytes\n```") in md
    assert "#### Changes by file" not in md  # nothing is left to say per file


def test_markdown_escapes_what_it_quotes(tmp_path: Path) -> None:
    """Config text is data: a line holding ``` or HTML cannot end a block or become markup."""
    a, b = _pair(tmp_path, {"hosts/x.sh": ("echo 1\n", "echo '```'\n</details><b>x</b>\n"),
                            "we`ird.txt": ("1\n", "2\n")})
    md = format_markdown(diff(a, b))
    assert "````diff\n" in md and "\n````" in md  # a longer fence than any inside
    assert "<b>x</b>" in md.split("````diff", 1)[1]  # only inside the fence
    assert "<code>we`ird.txt</code>" in md or "`` we`ird.txt ``" in md
    assert md.count("<details>") == md.count("</details>") - 1  # the quoted one is text


def test_json_is_stable(tmp_path: Path, cli) -> None:  # type: ignore[no-untyped-def]
    import jsonschema

    schema = json.loads((ROOT / "schemas" / "fabgen-diff.schema.json").read_text())
    a, b = _pair(tmp_path, {"x.json": ('{"b": [1, 2], "a": {"c": 1}}', '{"a": {"c": 2}}')})
    out = json.loads(cli("diff", "--json", a, b).out)
    jsonschema.validate(out, schema)
    assert out["fabgen_diff"] == 1
    # Printed a file at a time, byte for byte the whole document's json.dumps.
    from fabgen.diff.jsonout import chunks, to_json

    for old, new in ((a, b), (a, a)):
        result = diff(old, new)
        assert "".join(chunks(result)) == json.dumps(to_json(result), indent=2,
                                                     ensure_ascii=False) + "\n"
    assert [(c["op"], c["at"], c["old"], c["new"]) for c in out["files"][0]["changes"]] == [
        ("~", ["a", "c"], 1, 2), ("-", ["b", "[0]"], 1, None), ("-", ["b", "[1]"], 2, None)]


def _snippets() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Reviewing changes", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```yaml\n(.*?)```", section, re.S)


def test_the_readme_ci_snippets_are_valid_workflows(tmp_path: Path) -> None:
    """The GitHub Actions and GitLab CI snippets against the schemas of the real services
    (SchemaStore's, as check-jsonschema ships them), their shell through shellcheck, and every
    fabgen command in them through fabgen's own parser."""
    require_tool("check-jsonschema", "shellcheck")
    github, gitlab = _snippets()
    scripts = []
    for text, schema in ((github, "vendor.github-workflows"), (gitlab, "vendor.gitlab-ci")):
        path = tmp_path / f"{schema}.yml"
        path.write_text(text)
        proc = subprocess.run(["check-jsonschema", "--builtin-schema", schema, str(path)],
                              capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    workflow = yaml.safe_load(github)
    scripts.append("\n".join(s["run"] for s in workflow["jobs"]["diff"]["steps"] if "run" in s))
    scripts.append("\n".join(yaml.safe_load(gitlab)["fabgen-diff"]["script"]))
    for n, script in enumerate(scripts):
        (tmp_path / f"{n}.sh").write_text("#!/bin/bash\nset -e\n" + script + "\n")
        proc = subprocess.run(["shellcheck", str(tmp_path / f"{n}.sh")], capture_output=True,
                              text=True, check=False)
        assert proc.returncode == 0, proc.stdout
        for line in script.replace("\\\n", " ").splitlines():
            if line.strip().startswith("fabgen "):
                words = shlex.split(line.split(">")[0])[1:]
                build_parser().parse_args(words)  # a renamed flag exits 1 here
