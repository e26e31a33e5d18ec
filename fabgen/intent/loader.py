"""Reading an intent file: YAML with positions, pydantic validation, errors as `file:line:col`."""

from __future__ import annotations

import hashlib
import types
import typing
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from fabgen import user_files
from fabgen.errors import Diagnostic, Diagnostics, FabgenError, Loc
from fabgen.intent import yaml_tree
from fabgen.intent.models import Intent
from fabgen.intent.semantic import check
from fabgen.intent.yaml_tree import Map, Seq
from fabgen.suggest import closest


@dataclass(frozen=True)
class IntentSource:
    """The file as read: its text, hash and the YAML tree that knows every position."""

    path: str
    text: str
    sha256: str
    tree: Any

    def locate(self, loc: Loc, *, key: bool = False) -> tuple[int, int]:
        """1-based line/column of the deepest node `loc` reaches (a key's own position if `key`)."""
        node = self.tree
        line, col = node.pos if isinstance(node, Map | Seq) else (1, 1)
        for i, part in enumerate(loc):
            last = i == len(loc) - 1
            if isinstance(node, Map) and isinstance(part, str) and part in node:
                line, col = node.key_pos[part] if last and key else node.value_pos[part]
                node = node[part]
            elif isinstance(node, Seq) and isinstance(part, int) and 0 <= part < len(node):
                line, col = node.item_pos[part]
                node = node[part]
            else:
                continue  # a missing field or a pydantic type tag: stay on the parent
        return line, col

    def real_loc(self, loc: Loc) -> Loc:
        """Drop pydantic's type tags ('function-after[...]', 'list[str]') from a location."""
        out: list[str | int] = []
        node = self.tree
        for part in loc:
            if isinstance(node, Map) and isinstance(part, str) and part in node:
                node = node[part]
                out.append(part)
            elif isinstance(node, Seq) and isinstance(part, int):
                node = node[part] if 0 <= part < len(node) else None
                out.append(part)
            elif isinstance(part, str) and part.replace("_", "").isalnum() and part.islower():
                node = None  # a field the file does not have (e.g. a missing key)
                out.append(part)
        return tuple(out)

    def place(self, diag: Diagnostic, *, key: bool = False) -> Diagnostic:
        line, col = self.locate(diag.loc, key=key)
        return replace(diag, file=self.path, line=line, col=col)


def _plain(node: Any) -> Any:
    """The tree as plain dicts and lists (aliases become copies: the tree's limits bound them)."""
    if isinstance(node, Map):
        return {k: _plain(v) for k, v in node.items()}
    if isinstance(node, Seq):
        return [_plain(v) for v in node]
    return node


def read_source(path: Path) -> IntentSource:
    """Read and parse the YAML; every failure is one clear line, never a traceback."""
    name = str(path)
    if not path.exists():
        raise FabgenError.single("no such file", name)
    if path.is_dir():
        raise FabgenError.single("is a directory; expected an intent YAML file", name)
    # Bounded, and a FIFO or device is refused before it can block or stream forever.
    text = user_files.read_text(path, what="an intent", limit=yaml_tree.LIMITS.max_bytes,
                                shown=name)
    try:
        tree = yaml_tree.parse(text)
    except yaml_tree.YamlInputError as exc:
        raise FabgenError.single(exc.message, name, exc.line or None, exc.col or None) from None
    if tree is None:
        raise FabgenError.single("the file is empty; an intent needs at least name, fabric, "
                                 "cluster and topology", name, 1, 1)
    if not isinstance(tree, Map):
        raise FabgenError.single(
            "the top level must be a mapping of keys (name, fabric, ...), got "
            f"{'a list' if isinstance(tree, Seq) else _shown(tree)}", name, 1, 1)
    # Hash the text with LF line ends: a CRLF checkout of the same intent is the same intent.
    digest = hashlib.sha256(text.replace("\r\n", "\n").encode("utf-8")).hexdigest()
    return IntentSource(name, text, digest, tree)


def _shown(value: Any, limit: int = 80) -> str:
    """repr() of a value for a message, cut to `limit` characters (a value may be 4 KiB)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 5] + "...'"


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
        return f"expected {expected}, got {_shown(value)}", hint
    text = msg[0].lower() + msg[1:]
    text = text.replace("input should be", "expected").replace("less than or equal to", "at most")
    text = text.replace("greater than or equal to", "at least")
    if kind == "bool_type" and isinstance(value, str):
        return f"expected true or false, got {_shown(value)}", "YAML 1.2: yes/no/on/off are strings"
    if kind.endswith("_type") or kind.endswith("_parsing"):
        return f"{text}, got {_shown(value)}", None
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than",
                "too_short", "too_long"):
        return f"{text}, got {_shown(value)}", None
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


class CheckCrashed(RuntimeError):
    """A check raised something it should not have: fabgen's bug, reported with the file."""


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
    try:
        try:
            intent = Intent.model_validate(_plain(source.tree))
        except ValidationError as exc:
            raise FabgenError(_from_validation(source, exc)) from None
        diags = Diagnostics()
        check(intent, diags)
    except FabgenError:
        raise
    except Exception as exc:
        # The file is bounded (size, depth, values), so anything else is fabgen's own bug:
        # still one line, naming the file it happened on (exit 3; --debug has the traceback).
        raise CheckCrashed(f"{source.path}: checking this intent failed: "
                           f"{type(exc).__name__}: {str(exc)[:300]}") from exc
    placed = [source.place(d) for d in diags.items]
    if strict:
        placed = [replace(d, severity="error") for d in placed]
    errors = [d for d in placed if d.severity == "error"]
    if errors:
        raise FabgenError(errors)
    return LoadedIntent(intent, source, tuple(sorted(placed, key=Diagnostic.sort_key)))
