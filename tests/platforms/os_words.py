"""Where a network OS is named outside fabgen/platforms/: the scanner of the rule "the core asks
the Platform contract and never names an OS" (tests/platforms/test_no_os_names.py).

    python -m tests.platforms.os_words            # every place, path:line: word (where)

The words are each registered platform's `Facts.words` (its name, its product names, its own
vocabulary: SONiC's config_db, EOS's ANTA). A word matches case-insensitively between
non-alphanumeric characters, so `sonic_apply`, `GNMIC_SONIC`, `eos/*.cfg` and
`gnmic-sonic.yaml` are found; identifiers are also split at lower-to-upper boundaries, so
`SonicDriver` is. Python files are read token by token: each hit says whether it is in an
identifier, a string, a docstring or a comment. YAML and Jinja files are plain text.
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
# Scanned: the package's code and data, and the core templates.
SCANNED = ("fabgen/**/*.py", "fabgen/catalog/**/*.yaml", "templates/**/*.j2")
# Not scanned: each platform's own folder and the registry, which names them all.
OWN = ("fabgen/platforms/",)
NOT_OWN = ("fabgen/platforms/contract/", "fabgen/platforms/common/")


@dataclass(frozen=True, slots=True, order=True)
class Hit:
    path: str  # relative to the repository
    line: int
    word: str
    where: str  # identifier | string | docstring | comment | text

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.word} ({self.where})"


def words() -> tuple[str, ...]:
    """Every registered platform's words."""
    from fabgen.platforms.registry import facts

    return tuple(sorted({w.lower() for f in facts.all() for w in (f.name, *f.words)}))


def pattern(found: Iterable[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(w) for w in sorted(found, key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9])({alternatives})(?![A-Za-z0-9])", re.IGNORECASE)


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _docstring_lines(source: str) -> set[int]:
    """First lines of the string tokens that stand alone as statements: docstrings of modules,
    classes and functions, and the attribute docstrings under model fields (which become the
    JSON Schema's descriptions)."""
    return {node.lineno for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)}


def _python(path: str, source: str, rx: re.Pattern[str]) -> Iterator[Hit]:
    docs = _docstring_lines(source)
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME:
            where, text = "identifier", _CAMEL.sub(" ", tok.string)
        elif tok.type == tokenize.STRING or tok.type in _FSTRING_PARTS:
            where = "docstring" if tok.start[0] in docs else "string"
            text = tok.string
        elif tok.type == tokenize.COMMENT:
            where, text = "comment", tok.string
        else:
            continue
        for offset, chunk in enumerate(text.split("\n")):
            for m in rx.finditer(chunk):
                yield Hit(path, tok.start[0] + offset, m.group(1).lower(), where)


_FSTRING_PARTS = {getattr(tokenize, n) for n in ("FSTRING_START", "FSTRING_MIDDLE",
                                                   "FSTRING_END") if hasattr(tokenize, n)}


def _text(path: str, source: str, rx: re.Pattern[str]) -> Iterator[Hit]:
    for number, line in enumerate(source.splitlines(), start=1):
        for m in rx.finditer(line):
            yield Hit(path, number, m.group(1).lower(), "text")


def scanned_files(root: Path = ROOT) -> list[Path]:
    """The files the rule reads: outside each platform's folder and the registry."""
    out: set[Path] = set()
    for glob in SCANNED:
        for path in root.glob(glob):
            rel = path.relative_to(root).as_posix()
            if "__pycache__" in rel or not path.is_file():
                continue
            if rel.startswith(OWN) and not rel.startswith(NOT_OWN):
                continue
            out.add(path)
    return sorted(out)


def scan(root: Path = ROOT, found: Iterable[str] | None = None) -> list[Hit]:
    """Every OS word in the files of scanned_files()."""
    rx = pattern(found if found is not None else words())
    hits: list[Hit] = []
    for path in scanned_files(root):
        rel = path.relative_to(root).as_posix()
        source = path.read_text(encoding="utf-8")
        hits += _python(rel, source, rx) if path.suffix == ".py" else _text(rel, source, rx)
    return sorted(set(hits))


def main(argv: list[str]) -> int:
    hits = scan(ROOT, argv or None)
    for hit in hits:
        print(hit)
    files = len({h.path for h in hits})
    print(f"{len(hits)} place(s) in {files} file(s)", file=sys.stderr)
    return 1 if hits else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
