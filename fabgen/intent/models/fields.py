"""Field types every section of the intent shares, and the strict base model."""

from __future__ import annotations

from fractions import Fraction
from ipaddress import IPv4Network
from typing import Annotated

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    WithJsonSchema,
)

from fabgen.intent import names
from fabgen.intent.units import (
    format_ratio,
    format_speed,
    parse_bytes,
    parse_ratio,
    parse_speed_gbps,
)

# --- reusable field types -------------------------------------------------------------------

SpeedGbps = Annotated[
    int,
    BeforeValidator(parse_speed_gbps),
    PlainSerializer(format_speed, return_type=str),
    WithJsonSchema({"type": "string", "pattern": r"^\d+(\.\d+)?[GgTt]", "examples": ["400G"]}),
]
Bytes = Annotated[
    int,
    BeforeValidator(parse_bytes),
    WithJsonSchema({"anyOf": [{"type": "integer", "minimum": 0},
                              {"type": "string", "pattern": r"^\d+\s*([KkMm][Ii]?)?[Bb]?$"}],
                    "examples": ["150KB", "1MiB"]}),
]
Ratio = Annotated[
    Fraction,
    BeforeValidator(parse_ratio),
    PlainSerializer(format_ratio, return_type=str),
    WithJsonSchema({"type": "string", "pattern": r"^\d+(\.\d+)?:\d+(\.\d+)?$",
                    "examples": ["1:1", "2:1", "8:7"]}),
]


def _net(value: object) -> IPv4Network:
    if isinstance(value, IPv4Network):
        return value
    if not isinstance(value, str):
        raise ValueError(f"expected an IPv4 prefix like '10.0.0.0/16', got {value!r}")
    try:
        return IPv4Network(value, strict=True)
    except ValueError as exc:
        raise ValueError(f"{value!r} is not an IPv4 prefix: {exc}") from None


Prefix = Annotated[
    IPv4Network,
    BeforeValidator(_net),
    PlainSerializer(str, return_type=str),
    WithJsonSchema({"type": "string", "format": "ipv4-prefix", "examples": ["10.254.0.0/16"]}),
]
SafeName = Annotated[str, AfterValidator(names.check_name)]
SafeText = Annotated[str, AfterValidator(names.check_text)]
Dscp = Annotated[int, Field(ge=0, le=63)]
Priority = Annotated[int, Field(ge=0, le=7)]


class StrictModel(BaseModel):
    """Unknown keys are errors; no silent coercion of '12' into 12; frozen once validated."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True,
                              use_attribute_docstrings=True)


def device_names(value: str | list[str], field: str, placeholders: tuple[str, ...],
                 samples: list[dict[str, int]]) -> str | list[str]:
    """An RDMA device or netdev per port, as a name template or an explicit list: each name
    reaches shell scripts, so every one (or every expansion of the samples) must be safe."""
    pattern = names.RDMA_NAME if field == "rdma_devices" else names.NETDEV_NAME
    what = "RDMA device" if field == "rdma_devices" else "netdev"
    if isinstance(value, str):
        return names.check_template(value, placeholders, pattern, samples, what)
    for item in value:
        if not pattern.match(item):
            raise ValueError(f"{what} {item!r} is not safe in a shell script; "
                             f"{names.UNSAFE_HINT}")
    return value
