"""No module outside fabgen/platforms/ names a network OS (issue 32): the core asks the Platform
contract. The scanner is tests/platforms/os_words.py (`python -m tests.platforms.os_words`
lists every place); this test holds the tree to it, with the few text-only exceptions below."""

from __future__ import annotations

import fnmatch
import shutil
from dataclasses import dataclass
from pathlib import Path

from tests.platforms import os_words


@dataclass(frozen=True, slots=True)
class Allowed:
    glob: str
    where: frozenset[str]  # identifier | string | docstring | comment | text
    reason: str


ALLOWED = (
    Allowed("fabgen/intent/models/*.py", frozenset({"docstring"}),
            "the JSON Schema's descriptions and the README reference, both published and kept "
            "byte-identical: they tell the user what each OS does with a field and decide "
            "nothing (follow-up: generate the per-platform notes from the registry)"),
    Allowed("fabgen/intent/models/operations.py", frozenset({"identifier"}),
            "field names of the published schema (monitoring.eos_gnmi_port, _vrf, "
            "_ssl_profile): renaming them would break every intent that sets them"),
    Allowed("fabgen/catalog/**", frozenset({"text", "string", "comment", "docstring"}),
            "hardware data whose only public source is a switch OS's repository (the ASIC "
            "buffer tables and platform lists of sonic-net/sonic-buildimage and sonic-swss): "
            "the citation beside each value must name it"),
    Allowed("fabgen/resources.py", frozenset({"string"}),
            "DEFAULT_EXAMPLE is a shipped example's file name (`fabgen init`'s default and a "
            "golden directory), not a decision about an OS"),
)


def _allowed(hit: os_words.Hit) -> Allowed | None:
    for entry in ALLOWED:
        if fnmatch.fnmatch(hit.path, entry.glob) and hit.where in entry.where:
            return entry
    return None


def test_no_os_name_outside_the_platforms() -> None:
    left = [str(h) for h in os_words.scan() if _allowed(h) is None]
    assert left == [], "an OS named outside fabgen/platforms/ (move it to its platform's " \
        "folder, or ask the registry):\n" + "\n".join(left)


def test_every_exception_is_still_needed() -> None:
    used = {_allowed(h) for h in os_words.scan()}
    assert [e.glob for e in ALLOWED if e not in used] == []


def test_the_words_are_every_platforms_names() -> None:
    from fabgen.platforms.registry import facts

    found = set(os_words.words())
    for f in facts.all():
        assert f.name in found and {w.lower() for w in f.words} <= found
    assert len(os_words.scanned_files()) > 100  # the scan reads the tree, not an empty glob


def test_the_rule_bites(tmp_path: Path) -> None:
    """A copy of fabgen/ with an OS test planted in a core target and an OS-named class in qos
    fails at both places; the platform's own folder may name itself."""
    shutil.copytree(os_words.ROOT / "fabgen", tmp_path / "fabgen",
                    ignore=shutil.ignore_patterns("__pycache__"))
    cabling = tmp_path / "fabgen/targets/cabling.py"
    cabling.write_text(cabling.read_text() + '\n\ndef _odd(sw):\n    if sw.platform == "sonic":'
                       "\n        return 1\n")
    qos = tmp_path / "fabgen/qos.py"
    qos.write_text(qos.read_text() + "\n\nclass NvueThing:\n    pass\n")
    hits = [h for h in os_words.scan(tmp_path) if _allowed(h) is None]
    assert {(h.path, h.word, h.where) for h in hits} == {
        ("fabgen/targets/cabling.py", "sonic", "string"),
        ("fabgen/qos.py", "nvue", "identifier")}
