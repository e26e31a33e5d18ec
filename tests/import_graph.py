"""fabgen's own imports read from the source (ast), checked against the layer table of
docs/architecture.md: every import goes to its own layer or a lower one, no module imports
itself back through others, and a package's __init__ pulls in nothing above the package.

Every import counts: at module level, inside a function (a deferred import is still a
dependency; deferring one to dodge a circle is what this check exists to catch) and under
`if TYPE_CHECKING:` (a type names what the module knows about).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Kind = Literal["module", "deferred", "typing"]


@dataclass(frozen=True, order=True)
class Import:
    importer: str
    imported: str
    line: int
    kind: Kind


@dataclass(frozen=True)
class Layer:
    number: int
    name: str
    patterns: tuple[str, ...]  # `a.b` the module itself; `a.b.*` it and every module below


def modules(root: Path, package: str) -> dict[str, Path]:
    """Module name -> file, for every .py file of the package under `root`."""
    out: dict[str, Path] = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _resolve(name: str, known: Mapping[str, Path]) -> str | None:
    """The longest known module that `name` is or lies inside (`a.b.func` -> `a.b`)."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in known:
            return candidate
    return None


def imports(known: Mapping[str, Path]) -> list[Import]:
    """Every import of one known module by another, with its line and kind."""
    found: set[Import] = set()
    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]

        def visit(node: ast.AST, kind: Kind, module: str = module, package: str = package
                  ) -> None:
            if isinstance(node, ast.If) and _is_type_checking(node.test):
                for child in node.body:
                    visit(child, "typing")
                for child in node.orelse:
                    visit(child, kind)
                return
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                kind = "deferred" if kind == "module" else kind
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the package, one level up per extra dot
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                # `from a import b` imports the module a.b when there is one, else a's name b.
                targets = [f"{base}.{alias.name}" for alias in node.names]
            for target in targets:
                resolved = _resolve(target, known)
                if resolved is not None and resolved != module:
                    found.add(Import(module, resolved, getattr(node, "lineno", 0), kind))
            for inner in ast.iter_child_nodes(node):
                visit(inner, kind)

        visit(tree, "module")
    return sorted(found)


def read_layers(doc: str) -> list[Layer]:
    """The `## Layers` table: rows `| N | name | `module` `module.*` ... | what it owns |`."""
    section = doc.split("\n## Layers", 1)[1].split("\n## ", 1)[0]
    out: list[Layer] = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].isdigit():
            out.append(Layer(int(cells[0]), cells[1], tuple(re.findall(r"`([\w.*{}]+)`",
                                                                       cells[2]))))
    return out


def layer_of(module: str, layers: Iterable[Layer], platforms: Iterable[str] = ()) -> Layer | None:
    """The layer whose most specific pattern matches: an exact name beats any `.*`, and a
    longer `.*` beats a shorter one. `{os}` in a pattern stands for one path segment naming a
    registered platform (`platforms`): `fabgen.platforms.{os}.facts` is layer 2 for
    `fabgen.platforms.sonic.facts`, and a folder no registry names is in no layer."""
    best: tuple[int, Layer] | None = None
    names = tuple(platforms)
    for layer in layers:
        for written in layer.patterns:
            expanded = ([written.replace("{os}", n) for n in names] if "{os}" in written
                        else [written])
            for pattern in expanded:
                if pattern.endswith(".*"):
                    stem = pattern[:-2]
                    score = len(stem) if module == stem or module.startswith(stem + ".") else -1
                else:
                    score = 10_000 + len(pattern) if module == pattern else -1
                if score >= 0 and (best is None or score > best[0]):
                    best = (score, layer)
    return best[1] if best else None


def cycles(edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """Groups of modules that import each other, directly or through others (Tarjan's SCC)."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group: list[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return sorted(out)


def problems(known: Mapping[str, Path], layers: list[Layer],
             exceptions: Iterable[tuple[str, str]] = (),
             platforms: Iterable[str] = ()) -> list[str]:
    """Every breach of the three rules, as lines a maintainer can act on (`platforms`: the
    names `{os}` stands for)."""
    allowed = set(exceptions)
    out: list[str] = []
    names = tuple(platforms)
    where = {m: layer_of(m, layers, names) for m in known}
    for module, layer in sorted(where.items()):
        if layer is None:
            out.append(f"{module} is in no layer: add it to the `## Layers` table of "
                       "docs/architecture.md")
    found = [i for i in imports(known) if (i.importer, i.imported) not in allowed]
    for imp in found:
        low, high = where[imp.importer], where[imp.imported]
        if low is None or high is None:
            continue
        if high.number > low.number:
            out.append(f"{imp.importer}:{imp.line} ({low.number} {low.name}) imports "
                       f"{imp.imported} ({high.number} {high.name}), a higher layer")
    for group in cycles((i.importer, i.imported) for i in found):
        out.append("import circle: " + " <-> ".join(group))
    # A package's __init__ runs whenever any module of the package is imported, so what it
    # imports at module level must not sit above the package's lowest module.
    for imp in found:
        if imp.kind != "module" or known[imp.importer].name != "__init__.py":
            continue
        inside = [where[m] for m in known if m.startswith(imp.importer + ".")]
        floor = min((layer.number for layer in inside if layer is not None), default=None)
        target = where[imp.imported]
        if floor is not None and target is not None and target.number > floor:
            out.append(f"{imp.importer}:{imp.line} (a package __init__) imports "
                       f"{imp.imported} ({target.number} {target.name}) at module level, above "
                       f"its package's lowest layer {floor}: import it on first use instead")
    return out
