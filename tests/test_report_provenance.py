"""report.md says at its top which fabgen rendered it from which intent (issue 29): the version
and the intent's sha256, the same as manifest.json, whichever process rendered the report."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import fabgen
from tests.conftest import ROOT


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_report_names_fabgen_and_the_intent_hash(cli, tmp_path: Path, jobs: str) -> None:  # type: ignore[no-untyped-def]
    intent = tmp_path / "pod.yaml"
    # CRLF line ends: the hash is of the text with LF ends, as manifest.json's.
    text = (ROOT / "inventories" / "ib-ndr-1024.yaml").read_text(encoding="utf-8")
    intent.write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    out = tmp_path / "out"
    assert cli("render", "-q", str(intent), "-o", str(out), "--jobs", jobs).code == 0
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["fabgen_version"], manifest["intent"]["sha256"]) == (fabgen.__version__,
                                                                        digest)
    lines = (out / "report.md").read_text(encoding="utf-8").splitlines()
    assert lines[:3] == ["# ib-ndr-1024", "",
                         f"Rendered by fabgen {fabgen.__version__} from the intent with sha256 "
                         f"`{digest}` (as in manifest.json)."]
