"""fabgen.serialize.yaml_text writes the same bytes through libyaml's emitter as through
PyYAML's Python one wherever it uses libyaml, and falls back where the two differ."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fabgen import serialize
from fabgen.serialize import CDumper, PythonDumper, yaml_text

pytestmark = pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML without libyaml")

_ascii = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1,
                 max_size=300)
_scalar = st.one_of(_ascii, st.integers(), st.booleans(), st.none(),
                    st.floats(allow_nan=False, allow_infinity=False))


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.lists(children, max_size=5),
                     st.dictionaries(_ascii, children, max_size=5))


_documents = _containers(st.recursive(_scalar, _containers, max_leaves=40))


def _both(data: Any, width: int) -> tuple[str, str]:
    kwargs: dict[str, Any] = {"sort_keys": True, "default_flow_style": False, "width": width,
                              "allow_unicode": False}
    return (yaml.dump(data, Dumper=CDumper, **kwargs),
            yaml.dump(data, Dumper=PythonDumper, **kwargs))


@settings(max_examples=400, deadline=None)
@given(_documents, st.sampled_from([80, 100, 4096]))
def test_libyaml_writes_what_python_writes_for_printable_ascii(data: Any, width: int) -> None:
    c_text, python_text = _both(data, width)
    assert c_text == python_text
    assert yaml_text(data, width=width) == python_text


@settings(max_examples=200, deadline=None)
@given(_documents)
def test_the_fast_path_builds_the_nodes_safe_representer_builds(data: Any) -> None:
    """Where yaml_text builds the node tree itself (no floats), it is PyYAML's own."""
    try:
        ours = serialize._node(data)
    except serialize._NotPlain:
        return
    dumper = PythonDumper(None, default_flow_style=False, sort_keys=True)
    dumper.serialize = lambda node: None  # type: ignore[method-assign]
    theirs = dumper.represent_data(data)
    assert _shape(ours) == _shape(theirs)


def _shape(node: Any) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return (node.tag, node.value, node.style)
    if isinstance(node, yaml.MappingNode):
        return (node.tag, node.flow_style, [(_shape(k), _shape(v)) for k, v in node.value])
    return (node.tag, node.flow_style, [_shape(item) for item in node.value])


def test_a_document_the_emitters_disagree_on_takes_the_python_emitter() -> None:
    """A multi-line string (the gnmic starlark source) is folded differently by libyaml: this
    is why yaml_text checks every string first."""
    long_lines = {"source": "\n".join(f"line {i}: " + "word " * 15 for i in range(6))}
    c_text, python_text = _both(long_lines, 100)
    assert c_text != python_text
    with pytest.raises(serialize._NotPlain):
        serialize._node(long_lines)
    assert yaml_text(long_lines, width=100) == python_text
    for odd in ({"": 1}, {"k": "tab\there"}, {"k": ["caf\u00e9"]}, {"k": 1.5}, {1: 2, "a": 3}):
        with pytest.raises(serialize._NotPlain):
            serialize._node(odd)
        assert yaml_text(odd) == yaml.dump(odd, Dumper=PythonDumper, default_flow_style=False,
                                           allow_unicode=False)
