"""The one Jinja2 environment: strict undefined, no autoescape, errors reported as `x.j2:LINE`."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import jinja2

from fabgen import resources

TEMPLATES = resources.templates()
PLATFORMS = resources.package() / "platforms"


class _ResourceLoader(jinja2.BaseLoader):
    """Templates read through importlib.resources (a wheel, a zip or an editable checkout).

    A name `<dir>/<file>` is the core's `templates/<dir>/<file>`, or a platform's own
    `platforms/<dir>/templates/<file>` (its folder holds its templates: `<os>/x.j2` is
    fabgen/platforms/<os>/templates/x.j2). One name in both places is an error, so neither
    can shadow the other."""

    def get_source(self, environment: jinja2.Environment,
                   template: str) -> tuple[str, str | None, Callable[[], bool] | None]:
        parts = template.split("/")
        if any(p in ("", ".", "..") for p in parts):
            raise jinja2.TemplateNotFound(template)
        core = TEMPLATES.joinpath(*parts)
        own = (PLATFORMS.joinpath(parts[0], "templates", *parts[1:]) if len(parts) > 1
               else None)
        found = [(path, name) for path, name in (
            (core, f"templates/{template}"),
            (own, f"platforms/{parts[0]}/templates/{'/'.join(parts[1:])}"))
            if path is not None and path.is_file()]
        if not found:
            raise jinja2.TemplateNotFound(template)
        if len(found) > 1:
            raise TemplateError(f"{template}: both {found[0][1]} and {found[1][1]} exist; a "
                                "platform's template must not shadow a core one")
        path, name = found[0]
        # Packaged templates do not change while fabgen runs: never reload.
        return path.read_text(encoding="utf-8"), name, lambda: True


class _Environment(jinja2.Environment):
    """Templates read plain dicts (the targets' data layer): `intf.name` looks the key up
    first. Jinja's default tries the attribute first, and every miss raises and catches an
    AttributeError, which at a few million lookups was a large part of rendering configs.
    The result differs from Jinja's only for a key named like a dict method, which no
    template reads as a method."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)


@cache
def environment() -> jinja2.Environment:
    return _Environment(
        loader=_ResourceLoader(),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # configs and scripts, not HTML
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


class TemplateError(RuntimeError):
    """A template failed; the message names the template file and line."""


def render(template: str, **data: Any) -> str:
    """Render `templates/<template>`; compiled templates are cached by the environment."""
    try:
        return environment().get_template(template).render(**data)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"{exc.filename or template}:{exc.lineno}: {exc.message}") from None
    except jinja2.UndefinedError as exc:
        raise TemplateError(f"{template}: {exc.message}") from None
