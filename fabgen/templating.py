"""The one Jinja2 environment: strict undefined, no autoescape, errors reported as `x.j2:LINE`."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jinja2

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
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
