"""Parsers for the human units an intent uses: link speeds, byte sizes, ratios."""

from __future__ import annotations

import re
from fractions import Fraction

_SPEED = re.compile(r"^(\d+)\s*([GT])(?:b(?:ps|/s)?)?$", re.IGNORECASE)
_SIZE = re.compile(r"^(\d+)\s*(B|KB|KIB|MB|MIB)?$", re.IGNORECASE)
_RATIO = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?)\s*$")

_SIZE_FACTOR = {"": 1, "B": 1, "KB": 1000, "KIB": 1024, "MB": 1000**2, "MIB": 1024**2}


def parse_speed_gbps(value: object) -> int:
    """'400G', '800Gbps', '1.6T' style strings (or a bare int of Gb/s) to Gb/s."""
    if isinstance(value, bool):
        raise ValueError("a link speed like '400G'")
    if isinstance(value, int):
        if value <= 0:
            raise ValueError("a link speed must be positive")
        return value
    if isinstance(value, str):
        text = value.strip()
        tera = re.fullmatch(r"(\d+(?:\.\d+)?)\s*T(?:b(?:ps|/s)?)?", text, re.IGNORECASE)
        if tera:
            return int(Fraction(tera.group(1)) * 1000)
        m = _SPEED.match(text)
        if m:
            n = int(m.group(1))
            return n * 1000 if m.group(2).upper() == "T" else n
    raise ValueError(f"expected a link speed like '400G', got {value!r}")


def format_speed(gbps: int) -> str:
    return f"{gbps // 1000}T" if gbps >= 1000 and gbps % 1000 == 0 else f"{gbps}G"


def parse_bytes(value: object) -> int:
    """'150KB' (10^3), '1MiB' (2^20) or a bare int of bytes."""
    if isinstance(value, bool):
        raise ValueError("expected a size like '150KB'")
    if isinstance(value, int):
        if value < 0:
            raise ValueError("a size cannot be negative")
        return value
    if isinstance(value, str):
        m = _SIZE.match(value.strip())
        if m:
            return int(m.group(1)) * _SIZE_FACTOR[(m.group(2) or "").upper()]
    raise ValueError(f"expected a size like '150KB' or '1MiB', got {value!r}")


def parse_ratio(value: object) -> Fraction:
    """'2:1' or '8:7' (down:up bandwidth) to a Fraction >= 1."""
    if isinstance(value, str):
        m = _RATIO.match(value)
        if m:
            down, up = Fraction(m.group(1)), Fraction(m.group(2))
            if down <= 0 or up <= 0:
                raise ValueError("both sides of a ratio must be positive")
            ratio = down / up
            if ratio < 1:
                raise ValueError(
                    f"oversubscription {value!r} is below 1:1; more uplink than downlink "
                    "bandwidth buys nothing, use '1:1'"
                )
            if ratio > 16:
                raise ValueError(f"oversubscription {value!r} is above 16:1; a leaf needs at "
                                 "least one uplink per 16 host ports")
            return ratio
    raise ValueError(f"expected a ratio like '1:1', '2:1' or '8:7', got {value!r}")


def format_ratio(ratio: Fraction) -> str:
    return f"{ratio.numerator}:{ratio.denominator}"
