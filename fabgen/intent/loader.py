"""Reading an intent file: YAML with positions, pydantic validation, errors as `file:line:col`."""

from __future__ import annotations

import contextlib
import hashlib
import types
import typing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from fabgen.errors import Diagnostic, Diagnostics, FabgenError, Loc
from fabgen.intent.models import Intent
from fabgen.intent.semantic import check
from fabgen.suggest import closest


@dataclass(frozen=True)
class IntentSource:
    """The file as read: its text, hash and the YAML node tree that knows every position."""

    path: str
    text: str
    sha256: str
    tree: Any

    def locate(self, loc: Loc, *, key: bool = False) -> tuple[int, int]:
        """1-based line/column of the deepest node `loc` reaches (a key's own position if `key`)."""
        node = self.tree
        line, col = 0, 0
        if isinstance(node, CommentedMap | CommentedSeq):
            line, col = node.lc.line, node.lc.col
        for i, part in enumerate(loc):
            last = i == len(loc) - 1
            if isinstance(node, CommentedMap) and isinstance(part, str):
                real = _key_of(node, part)
                if real is _MISSING:
                    continue
                # a key merged in by `<<` has no position of its own: keep the map's
                with contextlib.suppress(KeyError):
                    line, col = node.lc.key(real) if last and key else node.lc.value(real)
                node = node[real]
            elif isinstance(node, CommentedSeq) and isinstance(part, int) and part < len(node):
                line, col = node.lc.item(part)
                node = node[part]
            else:
                continue  # a missing field or a pydantic type tag: stay on the parent
        return line + 1, col + 1

    def real_loc(self, loc: Loc) -> Loc:
        """Drop pydantic's type tags ('function-after[...]', 'list[str]') from a location."""
        out: list[str | int] = []
        node = self.tree
        for part in loc:
            real = _key_of(node, part) if isinstance(node, CommentedMap) and isinstance(
                part, str) else _MISSING
            if real is not _MISSING:
                node = node[real]
                out.append(part)
            elif isinstance(node, CommentedSeq) and isinstance(part, int):
                node = node[part] if part < len(node) else None
                out.append(part)
            elif isinstance(part, str) and part.replace("_", "").isalnum() and part.islower():
                node = None  # a field the file does not have (e.g. a missing key)
                out.append(part)
        return tuple(out)

    def place(self, diag: Diagnostic, *, key: bool = False) -> Diagnostic:
        line, col = self.locate(diag.loc, key=key)
        return replace(diag, file=self.path, line=line, col=col)


_MISSING = object()


def _key_of(node: CommentedMap, part: str) -> Any:
    """The mapping's own key for a location part (YAML keys may be ints or null: `1: x`)."""
    if part in node:
        return part
    return next((k for k in node if str(k) == part), _MISSING)


def _plain(node: Any) -> Any:
    """ruamel's commented containers and scalar subclasses to plain Python values."""
    if isinstance(node, CommentedMap):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, CommentedSeq):
        return [_plain(v) for v in node]
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    return node


def read_source(path: Path) -> IntentSource:
    """Read and parse the YAML; every failure is one clear line, never a traceback."""
    name = str(path)
    if not path.exists():
        raise FabgenError.single("no such file", name)
    if path.is_dir():
        raise FabgenError.single("is a directory; expected an intent YAML file", name)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise FabgenError.single(f"cannot read: {exc.strerror}", name) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        col = exc.start - (before.rfind(b"\n") + 1) + 1
        raise FabgenError.single(
            f"not valid UTF-8 (byte 0x{raw[exc.start]:02x}); save the file as UTF-8", name, line,
            col) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    try:
        tree = yaml.load(text)
    except DuplicateKeyError as exc:
        mark = exc.problem_mark
        key = _duplicate_key(exc)
        first = _first_line(text, key, mark.line, mark.column) if key and mark else None
        message = f"duplicate key {key!r}" if key else "duplicate key"
        if first:
            message += f" (first defined at line {first})"
        raise FabgenError.single(message, name, mark.line + 1 if mark else None,
                                 mark.column + 1 if mark else None) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        raise FabgenError.single(
            f"YAML syntax error: {problem}", name,
            mark.line + 1 if mark else None, mark.column + 1 if mark else None) from None
    except YAMLError as exc:
        raise FabgenError.single(f"YAML error: {exc}", name) from None
    if tree is None:
        raise FabgenError.single("the file is empty; an intent needs at least name, fabric, "
                                 "cluster and topology", name, 1, 1)
    if not isinstance(tree, CommentedMap):
        raise FabgenError.single(
            "the top level must be a mapping of keys (name, fabric, ...), got "
            f"{'a list' if isinstance(tree, list) else repr(tree)}", name, 1, 1)
    # Hash the text with LF line ends: a CRLF checkout of the same intent is the same intent.
    digest = hashlib.sha256(text.replace("\r\n", "\n").encode("utf-8")).hexdigest()
    return IntentSource(name, text, digest, tree)


def _first_line(text: str, key: str, dup_line: int, col: int) -> int | None:
    """The line of the first `key:` at the duplicate's indentation, above the duplicate."""
    lines = text.splitlines()
    for i in range(dup_line - 1, -1, -1):
        line = lines[i]
        indent = len(line) - len(line.lstrip(" "))
        if indent < col and line.strip() and not line.lstrip().startswith(("#", "-")):
            break  # left the enclosing mapping
        if indent == col and line[col:].split(":", 1)[0].strip("'\" ") == key:
            first = i + 1
            return first
    return None


def _duplicate_key(exc: DuplicateKeyError) -> str | None:
    problem = exc.problem or ""
    # ruamel: 'found duplicate key "name" with value "x" (original value: "y")'
    if '"' in problem:
        return problem.split('"')[1]
    return None


# --- pydantic errors -> diagnostics -------------------------------------------------------

def _unwrap(annotation: Any) -> list[Any]:
    """The model classes an annotation can hold (through Optional, list, dict, Annotated)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType, list, tuple, dict):
        out: list[Any] = []
        for arg in typing.get_args(annotation):
            out.extend(_unwrap(arg))
        return out
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return []


def model_at(loc: Loc) -> type[BaseModel] | None:
    """The pydantic model that owns the mapping at `loc` (to suggest its field names)."""
    model: type[BaseModel] = Intent
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part)
        if field is None:
            continue
        candidates = _unwrap(field.annotation)
        if not candidates:
            return None
        model = candidates[0]
    return model


def _message(err: Any) -> tuple[str, str | None]:
    kind = err["type"]
    msg: str = err["msg"]
    if msg.startswith("Value error, "):
        return msg.removeprefix("Value error, "), None
    if msg.startswith("Assertion failed, "):
        return msg.removeprefix("Assertion failed, "), None
    value = err.get("input")
    if kind == "literal_error":
        expected = str(err.get("ctx", {}).get("expected", ""))
        options = [o.strip().strip("'") for o in expected.replace(" or ", ", ").split(",")]
        hint = None
        if isinstance(value, str):
            guess = closest(value, [o for o in options if o])
            hint = f"did you mean {guess!r}?" if guess else None
        return f"expected {expected}, got {value!r}", hint
    text = msg[0].lower() + msg[1:]
    text = text.replace("input should be", "expected").replace("less than or equal to", "at most")
    text = text.replace("greater than or equal to", "at least")
    if kind == "bool_type" and isinstance(value, str):
        return f"expected true or false, got {value!r}", "YAML 1.2: yes/no/on/off are strings"
    if kind.endswith("_type") or kind.endswith("_parsing"):
        return f"{text}, got {value!r}", None
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than",
                "too_short", "too_long"):
        return f"{text}, got {value!r}", None
    return text, None


def _from_validation(source: IntentSource, exc: ValidationError) -> list[Diagnostic]:
    seen: set[tuple[Loc, str]] = set()
    out: list[Diagnostic] = []
    for err in exc.errors(include_url=False):
        loc = source.real_loc(tuple(err["loc"]))
        if err["type"] == "extra_forbidden":
            key = loc[-1] if loc else "?"
            owner = model_at(loc[:-1])
            hint = None
            if owner is not None and isinstance(key, str):
                guess = closest(key, list(owner.model_fields))
                hint = f"did you mean {guess!r}?" if guess else (
                    "known keys: " + ", ".join(owner.model_fields))
            diag = source.place(Diagnostic(f"unknown key {key!r}", loc[:-1], hint=hint),
                                key=False)
            line, col = source.locate(loc, key=True)
            diag = replace(diag, line=line, col=col)
        elif err["type"] == "missing":
            diag = source.place(Diagnostic(f"required key {loc[-1]!r} is missing", loc[:-1]))
        else:
            message, hint = _message(err)
            diag = source.place(Diagnostic(message, loc, hint=hint))
        ident = (diag.loc, diag.message)
        if ident in seen:
            continue
        seen.add(ident)
        out.append(diag)
    return out


@dataclass(frozen=True)
class LoadedIntent:
    intent: Intent
    source: IntentSource
    warnings: tuple[Diagnostic, ...]


def load(path: str | Path, *, strict: bool = False) -> LoadedIntent:
    """Read, validate and check an intent; raise FabgenError with every error of the file.

    Warnings (dangerous but legal choices) are returned, or raised as errors when `strict`.
    """
    source = read_source(Path(path))
    data = _plain(source.tree)
    try:
        intent = Intent.model_validate(data)
    except ValidationError as exc:
        raise FabgenError(_from_validation(source, exc)) from None
    diags = Diagnostics()
    check(intent, diags)
    placed = [source.place(d) for d in diags.items]
    if strict:
        placed = [replace(d, severity="error") for d in placed]
    errors = [d for d in placed if d.severity == "error"]
    if errors:
        raise FabgenError(errors)
    return LoadedIntent(intent, source, tuple(sorted(placed, key=Diagnostic.sort_key)))
