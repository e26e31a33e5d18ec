"""Streaming render (issue 18): the files a target yields one device or one chunk at a time are
byte for byte the files it renders whole, so memory stays flat without changing a byte."""

from __future__ import annotations

import pytest

from fabgen.intent import load
from fabgen.output import text_of
from fabgen.render import render, render_iter, targets
from fabgen.serialize import json_text
from fabgen.targets import cabling
from fabgen.targets.base import RenderContext
from fabgen.topology.build import build
from tests.conftest import INVENTORIES


@pytest.mark.parametrize("intent", INVENTORIES, ids=lambda p: p.stem)
def test_cabling_tables_stream_the_same_bytes(intent, monkeypatch: pytest.MonkeyPatch) -> None:
    fabric = build(load(intent).intent)
    for net in (fabric, *fabric.extras):
        rows = cabling.cable_rows(net)
        whole = json_text({"name": net.name, "cables": rows,
                           "switches": cabling.switch_rows(net)})
        # chunk boundaries everywhere: 3 rows per chunk
        monkeypatch.setattr(cabling, "CHUNK_ROWS", 3)
        chunks = list(cabling.json_chunks(net))
        assert len(chunks) > 3
        assert "".join(chunks) == whole
        assert "".join(cabling.csv_chunks(net)) == cabling.render_csv(net, rows)
        monkeypatch.undo()


def test_an_empty_table_is_what_json_text_writes() -> None:
    assert "".join(cabling._json_array([])) == "[]"
    one = "".join(cabling._json_array([{"b": None, "a": [1, {"c": 2}]}]))
    doc = json_text({"cables": [{"b": None, "a": [1, {"c": 2}]}], "name": "n",
                     "switches": []})
    assert doc == '{\n  "cables": ' + one + ',\n  "name": "n",\n  "switches": []\n}\n'


@pytest.mark.parametrize("intent", INVENTORIES, ids=lambda p: p.stem)
def test_streaming_targets_give_what_they_render_whole(intent) -> None:
    loaded = load(intent)
    fabric = build(loaded.intent)
    from fabgen import qos

    ctx = RenderContext(intent=loaded.intent, fabric=fabric,
                        qos=qos.plan(loaded.intent) if fabric.transport == "roce" else None,
                        base_dir=intent.parent)
    streaming = [t for t in targets().values() if hasattr(t, "render_iter") and t.applies(ctx)]
    assert streaming, "each example has a streaming target (cabling at least)"
    for target in streaming:
        streamed = {p: text_of(c) for p, c in target.render_iter(ctx)}  # type: ignore[attr-defined]
        assert streamed == target.render(ctx)


@pytest.mark.parametrize("intent", INVENTORIES, ids=lambda p: p.stem)
def test_render_iter_yields_each_path_once_and_the_manifest_last(intent) -> None:
    loaded = load(intent)
    paths = [p for p, content in render_iter(loaded) if text_of(content) is not None]
    assert len(paths) == len(set(paths)) and paths[-1] == "manifest.json"
    assert set(paths) == set(render(loaded))
