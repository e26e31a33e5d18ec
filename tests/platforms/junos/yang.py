"""Test helper: Juniper's published YANG (Junos OS Evolved 23.4R2) made loadable by libyang.

The models are not in this repository (see docs on upstream sources): $FABGEN_JUNOS_YANG names
a directory holding Juniper/yang's `23.4/23.4R2-EVO/native/conf-and-rpcs` tree (its
`conf/models` and `common/models`, and `conf-with-extensions/models` for the text cross-check).
Without it the tests that need it skip, naming the variable; FABGEN_REQUIRE_TOOLS does not
force them (CI cannot fetch Juniper/yang). Checked against Juniper/yang commit
2a696d624fe5dae221cb54f7a5d131d29087d038.

libyang refuses the files as published: they write regular expressions such as
`pattern "\\*";` inside double-quoted strings, where YANG (RFC 7950 6.1.3) allows only the
escapes \\n, \\t, \\" and \\\\. `escape_backslashes` doubles every other backslash inside a
double-quoted string, which is what the authors meant (the regex `\\*`, a literal `*`).
"""

from __future__ import annotations

import os
import shutil
from functools import cache
from pathlib import Path

import pytest

ENV = "FABGEN_JUNOS_YANG"
# Modules fabgen's Junos configuration uses: junos-conf-root and one per top-level section.
MODULES = ("root", "system", "services", "interfaces", "forwarding-options", "policy-options",
           "class-of-service", "routing-options", "protocols")
_YANG_ESCAPES = frozenset('nt"\\')


def escape_backslashes(text: str) -> str:
    """YANG source with the backslashes YANG does not allow in double-quoted strings doubled.

    Walks the text as YANG's lexer does: `//` and `/* */` comments and single-quoted strings
    are copied as they are (a backslash means nothing there); inside a double-quoted string an
    allowed escape is copied, any other backslash gets a second one.
    """
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(text[i:end])
            i = end
        elif c == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(text[i:end])
            i = end
        elif c == "'":
            end = text.find("'", i + 1)
            end = n if end < 0 else end + 1
            out.append(text[i:end])
            i = end
        elif c == '"':
            out.append(c)
            i += 1
            while i < n and text[i] != '"':
                if text[i] == "\\":
                    nxt = text[i + 1] if i + 1 < n else ""
                    if nxt in _YANG_ESCAPES and nxt:
                        out.append(text[i:i + 2])
                        i += 2
                        continue
                    out.append("\\\\")
                    i += 1
                    continue
                out.append(text[i])
                i += 1
            if i < n:
                out.append('"')
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def source() -> Path:
    """The conf-and-rpcs directory named by $FABGEN_JUNOS_YANG, or a skip naming it."""
    given = os.environ.get(ENV)
    if not given:
        pytest.skip(f"Juniper's YANG is not here: set {ENV} to a Juniper/yang checkout's "
                    "23.4/23.4R2-EVO/native/conf-and-rpcs directory")
    root = Path(given)
    if not (root / "conf" / "models").is_dir() or not (root / "common" / "models").is_dir():
        pytest.fail(f"{ENV}={given} has no conf/models and common/models")
    if shutil.which("yanglint") is None:
        pytest.skip("yanglint (Debian libyang2-tools) is not installed")
    return root


def module_file(root: Path, kind: str, name: str) -> Path:
    found = sorted((root / kind / "models").glob(f"{name}@*.yang"))
    if not found:
        pytest.fail(f"{root / kind / 'models'} has no {name}@*.yang")
    return found[0]


@cache
def prepared(root: Path, out: Path, kind: str = "conf") -> tuple[Path, ...]:
    """The modules fabgen needs, escaped, written into `out`; the data modules' paths."""
    out.mkdir(parents=True, exist_ok=True)
    for common in (root / "common" / "models").glob("*.yang"):
        (out / common.name).write_text(escape_backslashes(common.read_text()))
    files = []
    for name in MODULES:
        src = module_file(root, kind, f"junos-conf-{name}")
        dest = out / src.name
        dest.write_text(escape_backslashes(src.read_text()))
        files.append(dest)
    return tuple(files)


def validate(data: dict[str, object], tmp: Path) -> list[str]:
    """yanglint's complaints about one configuration (Juniper YANG JSON); [] when valid.
    Skips as source() does when the models or yanglint are missing."""
    import json
    import subprocess

    models = prepared(source(), tmp / "junos-yang")
    path = tmp / "config.json"
    path.write_text(json.dumps(data))
    run = subprocess.run(["yanglint", "-p", str(models[0].parent), "-t", "config",
                          *map(str, models), str(path)], capture_output=True, text=True,
                         check=False)
    return [] if run.returncode == 0 else [run.stderr.strip()]
