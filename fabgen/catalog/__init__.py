"""Switch and NIC models as data (radix, speeds, breakouts), loaded once from the packaged YAML."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

import yaml

from fabgen.intent.units import parse_speed_gbps


@dataclass(frozen=True, slots=True)
class Breakout:
    """A port split: `count` logical ports of `speed_gbps` each from one native port."""

    count: int
    speed_gbps: int

    @classmethod
    def parse(cls, text: str) -> Breakout:
        count, _, speed = text.strip().lower().partition("x")
        try:
            if not count.strip().isdigit() or int(count) < 1:
                raise ValueError
            return cls(int(count), parse_speed_gbps(speed.strip()))
        except ValueError:
            raise ValueError(f"expected a breakout like '2x400G', got {text!r}") from None

    def __str__(self) -> str:
        return f"{self.count}x{self.speed_gbps}G"


@dataclass(frozen=True, slots=True)
class SwitchModel:
    key: str
    vendor: str
    name: str
    transport: str  # "infiniband" | "ethernet"
    ports: int
    speed_gbps: int
    cages: int
    cage: str
    breakouts: tuple[Breakout, ...]
    generation: str | None = None
    source: str = ""

    @property
    def ports_per_cage(self) -> int:
        return self.ports // self.cages


@dataclass(frozen=True, slots=True)
class NicModel:
    key: str
    name: str
    speed_gbps: int
    max_ports: int
    transports: tuple[str, ...]


def _load(name: str) -> dict[str, Any]:
    data = yaml.safe_load((files(__name__) / name).read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@cache
def switches() -> dict[str, SwitchModel]:
    out: dict[str, SwitchModel] = {}
    for key, d in _load("switches.yaml").items():
        out[key] = SwitchModel(
            key=key,
            vendor=d["vendor"],
            name=d["name"],
            transport=d["transport"],
            ports=d["ports"],
            speed_gbps=parse_speed_gbps(d["speed"]),
            cages=d["cages"],
            cage=d["cage"],
            breakouts=tuple(Breakout.parse(b) for b in d.get("breakouts", [])),
            generation=d.get("generation"),
            source=d.get("source", ""),
        )
    return out


@cache
def nics() -> dict[str, NicModel]:
    return {
        key: NicModel(key, d["name"], parse_speed_gbps(d["speed"]), d["max_ports"],
                      tuple(d["transports"]))
        for key, d in _load("nics.yaml").items()
    }


def _node_ports_per_cage() -> dict[str, int]:
    # Read as data (catalog.nodes reads the same file for the port maps; importing it here
    # would close a circle through the intent models it is typed against).
    raw = _load("nodes.yaml")
    out = {}
    for key, d in raw.items():
        cages = d.get("port_cages", raw.get(d.get("same_as", ""), {}).get("port_cages"))
        if cages:
            out[key] = int(cages)
    return out


# Host-side cages, from the node catalog (nodes.yaml `port_cages`): DGX H100/H200 and B200 carry
# their eight ConnectX-7 ports in four twin-port OSFP cages (DGX SuperPOD H100 RA: 508 DGX-side
# transceivers for 127 nodes). Others: one port per cage.
NODE_PORTS_PER_CAGE = _node_ports_per_cage()
