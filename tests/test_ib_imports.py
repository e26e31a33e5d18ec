"""The InfiniBand modules import each other in one direction (issue 17: no import circles).

The ibnetdiscover format (parse and write) lives in fabgen.targets.ibnetdiscover, which both
the OpenSM target and verify-cabling import; it imports neither. Imports are read statically
(every `import`, also those inside functions), so a circle hidden in a function body counts.
"""

from __future__ import annotations

import ast
from pathlib import Path

import fabgen

PACKAGE = Path(fabgen.__file__).resolve().parent
IB_MODULES = ("fabgen.targets.ibnetdiscover", "fabgen.targets.opensm_plan",
              "fabgen.targets.opensm", "fabgen.targets.sm_bringup", "fabgen.verify_cabling")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """fabgen module -> the fabgen modules it imports (a `from fabgen.x import y` counts as
    fabgen.x.y when that is a module, else fabgen.x)."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name in modules}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    deps.add(sub if sub in modules else node.module)
        graph[name] = {d for d in deps if d in modules and d != name}
    return graph


def reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            todo.extend(graph.get(node, ()))
    return False


def test_no_circle_through_the_infiniband_modules() -> None:
    graph = import_graph()
    for module in IB_MODULES:
        assert module in graph, module
        circles = [dep for dep in graph[module] if reaches(graph, dep, module)]
        assert not circles, f"{module} imports {circles}, which import it back"


def test_ibnetdiscover_is_the_lowest_of_them() -> None:
    graph = import_graph()
    fmt = "fabgen.targets.ibnetdiscover"
    assert not {m for m in IB_MODULES if m != fmt and reaches(graph, fmt, m)}
    for user in ("fabgen.targets.opensm", "fabgen.verify_cabling"):
        assert fmt in graph[user], f"{user} reads and writes the format through {fmt}"
    # verify-cabling is a command: only the CLI imports it
    assert {m for m, deps in graph.items() if "fabgen.verify_cabling" in deps} <= {
        "fabgen.cli.check_commands"}


def test_the_checker_sees_a_circle() -> None:
    """The check itself can fail: a graph with a planted circle is caught."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert reaches(graph, "b", "a") and not reaches(graph, "a", "d")
