"""Name rules: what may reach a switch CLI, a shell script or a file name from the intent."""

from __future__ import annotations

import re
import string

# Hostnames and other identifiers that land in configs and scripts: no spaces, quotes, `;`, `$`,
# backticks, slashes or newlines. RFC 1123 labels plus `_` and `.` (every platform takes both).
SAFE_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62})$")
# Linux netdev names: at most 15 bytes (IFNAMSIZ - 1), no `/`, `:` or whitespace, and neither
# "." nor ".." (net/core/dev.c dev_valid_name), which would also walk out of /sys/class/net/.
NETDEV_NAME = re.compile(r"^(?!\.\.?$)[A-Za-z0-9_.-]{1,15}$")
# RDMA device names as the kernel prints them (mlx5_0, rocep1s0f0, efa_0).
RDMA_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,63}$")
# Free text that reaches a config (descriptions): printable, no quotes, no CLI/shell specials.
SAFE_TEXT = re.compile(r"^[A-Za-z0-9 ._:/,+()#@=-]{0,200}$")

UNSAFE_HINT = ("use letters, digits, '.', '_' and '-' only "
               "(no spaces, quotes, ';', '$' or backticks)")


def check_name(value: str, what: str = "name") -> str:
    if not SAFE_NAME.match(value):
        raise ValueError(f"{value!r} is not safe in a switch CLI or shell script; {UNSAFE_HINT}")
    return value


def check_text(value: str, what: str = "text") -> str:
    if not SAFE_TEXT.match(value):
        raise ValueError(
            f"{what} {value!r} has characters that could break a config line; "
            "allowed: letters, digits, spaces and . _ : / , + ( ) # @ = -"
        )
    return value


# The format specs a name template may give an integer placeholder: zero padding to a width
# and a base (`04d`, `x`, `#06x`). Checked before anything is expanded: `{index:0999999999d}`
# would otherwise allocate a gigabyte before the name's length is looked at. Fill characters
# and alignment are refused: `{index:1<3}` names host 1 and host 11 both `111`.
FORMAT_SPEC = re.compile(r"^#?0?(?P<width>[0-9]{1,2})?[dxXob]?$")
MAX_WIDTH = 20  # the longest safe name is 63 characters; no placeholder needs more than 20


def template_fields(template: str) -> list[str]:
    """The placeholder names of a str.format template, rejecting attribute/index access and
    any format spec other than zero padding and a base."""
    names: list[str] = []
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:  # "Single '}' encountered", "unmatched '{'"
        raise ValueError(f"is not a valid template ({exc})") from None
    for _literal, field, spec, conversion in parsed:
        if field is None:
            continue
        if not field.isidentifier():
            raise ValueError(f"placeholder {{{field}}} is not a plain name")
        if conversion is not None:
            raise ValueError(f"placeholder {{{field}!{conversion}}} may not use a conversion")
        spec = spec or ""
        match = FORMAT_SPEC.match(spec)
        if match is None or int(match["width"] or 0) > MAX_WIDTH:
            shown = spec if len(spec) <= 20 else spec[:17] + "..."
            raise ValueError(
                f"placeholder {{{field}:{shown}}}: a name template may only pad with zeros to "
                f"a width of at most {MAX_WIDTH} and pick a base (like {{{field}:04d}} or "
                f"{{{field}:x}})")
        names.append(field)
    return names


def check_template(template: str, allowed: tuple[str, ...], pattern: re.Pattern[str],
                   samples: list[dict[str, int]], what: str) -> str:
    """A name template is safe when every placeholder is known and every expansion matches."""
    try:
        fields = template_fields(template)
    except ValueError as exc:
        raise ValueError(f"{what} template {template!r}: {exc}") from None
    unknown = sorted(set(fields) - set(allowed))
    if unknown:
        raise ValueError(
            f"{what} template {template!r} uses unknown placeholder(s) {', '.join(unknown)}; "
            f"available: {', '.join(allowed)}"
        )
    for sample in samples:
        try:
            text = template.format(**sample)
        except (ValueError, KeyError) as exc:
            raise ValueError(f"{what} template {template!r} cannot be expanded: {exc}") from None
        if not pattern.match(text):
            raise ValueError(
                f"{what} template {template!r} expands to {text!r}, which is not a safe {what}; "
                f"{UNSAFE_HINT}"
            )
    return template


def expand_device(template: str, dev: int, nic_ports: int, planes: int) -> str:
    """A per-port name template (`mlx5_{rail}`, `rdma{dev}`) for compute port `dev` of a node.

    Both the checks (two ports must not get one name) and the build expand it, so it lives here,
    below both. `dev` counts ports NIC by NIC; port p of a NIC is on plane p % planes, and the
    ports of one NIC that share a plane take consecutive rails (as topology.build cables them).
    """
    nic, port = divmod(dev, nic_ports)
    rail = nic * (nic_ports // planes) + port // planes
    return template.format(dev=dev, nic=nic, port=port, rail=rail)


GLOB = re.compile(r"^[A-Za-z0-9._*?\[\]!-]{1,63}$")


def check_glob(value: str) -> str:
    if not GLOB.match(value):
        raise ValueError(f"host pattern {value!r} may use letters, digits, '.', '_', '-' and the "
                         "wildcards * ? [ ] only")
    return value
