"""nccl/*.conf as every NCCL release reads it: only the rendered variables come out.

NCCL before 2.26.2 reads comment lines as variables when they hold an '=' (tests/nccl_conf.py,
the model of setEnvFile per version). Each rendered .conf, for every transport and profile, is
read the way each modelled release reads it, and must give exactly the profile's variables.
With FABGEN_UPSTREAM set (a directory holding NVIDIA+nccl checkouts: `NVIDIA+nccl`, and any
`NVIDIA+nccl@<tag>`), the real setEnvFile of each checkout is compiled and run on the same files
and on a hostile one, and must agree with the model of its version.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from fabgen.intent import load
from fabgen.intent.models import Intent
from fabgen.qos import plan
from fabgen.targets import nccl, nic
from fabgen.targets.base import RenderContext
from fabgen.topology.build import build
from tests.conftest import INVENTORIES

try:
    import nccl_conf as model
except ImportError:
    from tests import nccl_conf as model  # type: ignore[no-redef]


def _variant(path: Path, update: dict[str, dict[str, Any]]) -> Intent:
    intent = load(path).intent
    for section, fields in update.items():
        intent = intent.model_copy(update={section: getattr(intent, section).model_copy(
            update=fields)})
    return intent


def _variants() -> Iterator[tuple[str, Intent]]:
    ib = next(p for p in INVENTORIES if load(p).intent.fabric.transport == "infiniband")
    roce = next(p for p in INVENTORIES if load(p).intent.fabric.transport == "roce")
    for path in INVENTORIES:
        yield path.stem, load(path).intent
    yield "ib-no-sharp-no-ar", _variant(ib, {"infiniband": {"sharp": False,
                                                            "adaptive_routing": False}})
    yield "ib-rail-unaware", _variant(ib, {"topology": {"style": "rail-unaware"}})
    yield "roce-efa", _variant(roce, {"nccl": {"profile": "efa"}})
    eos = next(p for p in INVENTORIES if "eos" in p.stem)
    yield "roce-no-bootstrap", _variant(eos, {"hosts": {"bootstrap_interface": None}})


@cache
def _cases() -> dict[str, tuple[dict[str, str], dict[str, str]]]:
    """{case: (the conf file's text, the variables it should set)}."""
    out = {}
    for name, intent in _variants():
        fabric = build(intent)
        qos = plan(intent) if intent.fabric.transport == "roce" else None
        ctx = RenderContext(intent, fabric, qos)
        files = nccl.TARGET.render(ctx)
        conf = files[f"nccl/{nic.profile_name(ctx)}.conf"]
        want = {e.key: e.value for e in nccl.entries(ctx) if e.value is not None}
        out[name] = ({"conf": conf}, want)
    return out


CASES = sorted(_cases())


@pytest.mark.parametrize("version", model.VERSIONS, ids=lambda v: ".".join(map(str, v)))
@pytest.mark.parametrize("case", CASES)
def test_every_release_reads_only_the_rendered_variables(case: str,
                                                        version: tuple[int, int, int]) -> None:
    files, want = _cases()[case]
    got = model.load(files["conf"], version)
    assert got == want, sorted(set(got) ^ set(want))


def test_the_model_reads_comments_as_the_releases_do() -> None:
    # The bug the rendered files avoid, pinned: before 2.26.2 a comment with '=' is a variable.
    text = "# mlx5_0=GPU0\nNCCL_IB_HCA==mlx5_0:1\n#NCCL_DEBUG=INFO\n"
    assert model.load(text, (2, 26, 1)) == {"# mlx5_0": "GPU0", "NCCL_IB_HCA": "=mlx5_0:1",
                                            "#NCCL_DEBUG": "INFO"}
    assert model.load(text, (2, 26, 2)) == {"NCCL_IB_HCA": "=mlx5_0:1"}
    # the environment wins, the first line of a name wins, an empty name is refused
    assert model.load("A=1\nA=2\nB=3\n=4\n", (2, 30, 7), {"B": "0"}) == {"A": "1"}
    # 2.30.3 cuts a '\r' and reads a long line in 4095-byte pieces; earlier releases do neither
    crlf = "A=1\r\n"
    assert model.load(crlf, (2, 30, 7)) == {"A": "1"}
    assert model.load(crlf, (2, 29, 7)) == {"A": "1\r"}
    long = "# " + "x" * 4100 + "=y\n"
    assert model.load(long, (2, 30, 7)) == {"x" * 7: "y"}
    assert model.load(long, (2, 29, 7)) == {}


def test_a_comment_with_an_equals_sign_is_refused() -> None:
    with pytest.raises(ValueError, match=r"NCCL < 2\.26\.2"):
        nccl.check_conf("# the 8 ports (mlx5_0=GPU0)\nNCCL_IB_HCA==mlx5_0:1\n")
    assert nccl.check_conf("NCCL_IB_HCA==mlx5_0:1\n") == "NCCL_IB_HCA==mlx5_0:1\n"


# --- the real setEnvFile, from checkouts of NVIDIA/nccl --------------------------------------

_HARNESS = r"""
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
extern char **environ;
static void ncclOsSetEnv(const char* name, const char* value) { setenv(name, value, 0); }
%s
int main(int argc, char** argv) {
  clearenv();
  for (int i = 2; i < argc; i++) putenv(argv[i]);
  setEnvFile(argv[1]);
  for (char** e = environ; *e; e++) { fputs(*e, stdout); fputc('\0', stdout); }
  return 0;
}
"""

HOSTILE = (b"# mlx5_0=GPU0 (a comment)\nA=1\r\nA=2\n=4\nB=keep\nNCCL_IB_HCA==mlx5_0:1\n"
           b"C=" + b"v" * 1100 + b"\nno equals sign\nD=last")
# A name longer than 1023 bytes: NCCL before 2.12.10 writes past envVar (not modelled).
LONG_NAME = b"# " + b"x" * 4100 + b"=y\n"


def _set_env_file(source: str) -> str:
    """The text of setEnvFile in param.cc (or param.h before 2.12.10), found by its braces."""
    m = re.search(r"^(?:static )?void setEnvFile\(const char\* ?fileName\) \{", source, re.M)
    assert m, "setEnvFile not found"
    depth, i = 0, m.end() - 1
    while True:
        depth += {"{": 1, "}": -1}.get(source[i], 0)
        i += 1
        if depth == 0:
            return source[m.start():i].replace("static void", "void", 1)


def _checkouts() -> list[Path]:
    root = os.environ.get("FABGEN_UPSTREAM")
    if not root:
        pytest.skip("set FABGEN_UPSTREAM to a directory holding NVIDIA+nccl checkouts "
                    "(NVIDIA+nccl, NVIDIA+nccl@<tag>) to run setEnvFile itself")
    found = sorted(p for p in Path(root).iterdir()
                   if p.is_dir() and (p.name == "NVIDIA+nccl" or p.name.startswith("NVIDIA+nccl@")))
    if not found:
        pytest.fail(f"FABGEN_UPSTREAM={root} holds no NVIDIA+nccl checkout")
    return found


def _version(checkout: Path) -> tuple[int, int, int]:
    text = (checkout / "makefiles" / "version.mk").read_text()
    parts = {k: int(v) for k, v in re.findall(r"^NCCL_(MAJOR|MINOR|PATCH)\s*:=\s*(\d+)", text,
                                              re.M)}
    return parts["MAJOR"], parts["MINOR"], parts["PATCH"]


def test_the_model_agrees_with_the_real_set_env_file(tmp_path: Path) -> None:
    for checkout in _checkouts():
        version = _version(checkout)
        hostile = HOSTILE + (b"\n" + LONG_NAME if version >= model.NAME_CAPPED_FROM else b"")
        files = {"hostile": hostile, **{c: _cases()[c][0]["conf"].encode() for c in CASES}}
        sources = [checkout / "src" / "misc" / "param.cc", checkout / "src" / "include" /
                   "param.h"]
        source = next(p for p in sources if p.is_file() and "setEnvFile(const" in p.read_text())
        exe = tmp_path / f"set_env_file_{checkout.name}"
        cc = tmp_path / f"{checkout.name}.cc"
        cc.write_text(_HARNESS % _set_env_file(source.read_text()))
        subprocess.run(["g++", "-O0", "-o", str(exe), str(cc)], check=True, timeout=120)
        for name, data in files.items():
            conf = tmp_path / f"{name}.conf"
            conf.write_bytes(data)
            out = subprocess.run([str(exe), str(conf), "B=env"], capture_output=True,
                                 check=True, timeout=30).stdout
            real = dict(item.decode(errors="surrogateescape").split("=", 1)
                        for item in out.split(b"\0") if item)
            real.pop("B")
            assert real == model.load(data, version, {"B": "env"}), (checkout.name, name)
