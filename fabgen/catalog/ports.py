"""Port naming: the interface name each platform gives a logical switch port or a host port.

A logical port is what the topology numbers 1..radix after breakout; `breakout` is the number of
logical ports per native cage port (Switch.breakout). Each platform names a split port after the
first electrical lane it uses, so the name depends on how many lanes a native port carries.
"""

from __future__ import annotations

from functools import cache

from fabgen import catalog
from fabgen.platforms.contract.facts import split_port
from fabgen.platforms.registry import facts as registry
from fabgen.topology.model import HostPort, Switch

__all__ = [
    "DEFAULT_LANES",
    "PLATFORMS",
    "cage_of",
    "host_port_name",
    "native_lanes",
    "port_name",
    "switch_panel",
    "switch_panels",
    "switch_port_name",
]

# Every registered switch platform (fabgen/platforms/), and InfiniBand's port numbers.
PLATFORMS = (*registry.names(), "infiniband")
# OSFP and QSFP-DD carry 8 electrical lanes per native port (400G/800G generations).
DEFAULT_LANES = 8
# 4-lane cages: a port name counting lanes counts 4 per native port on them.
_FOUR_LANE_CAGES = ("QSFP28", "QSFP56", "QSFP+")


# Names and lane counts are pure functions of their arguments and of the catalog, which does
# not change while fabgen runs; cached, because targets ask for the same few hundred names of
# each port layout on every switch (hundreds of thousands of calls at 131k GPUs).
@cache
def native_lanes(model: str) -> int:
    """Electrical lanes of one native port of a catalog switch (8 unless it is a 4-lane QSFP)."""
    known = catalog.switches().get(model)
    if known is not None and known.cage.startswith(_FOUR_LANE_CAGES):
        return 4
    return DEFAULT_LANES


@cache
def port_name(platform: str, port: int, breakout: int = 1, *, lanes: int = DEFAULT_LANES) -> str:
    """Interface name of logical switch port `port` (1..radix) on `platform`: the platform's
    own naming (its facts' `port_name`, citing the OS's documents), or for InfiniBand the
    port number itself, which is what ibnetdiscover and OpenSM print."""
    if platform == "infiniband":
        split_port(port, breakout, lanes)  # the same checks of the port and the split
        return str(port)
    try:
        facts = registry.get(platform)
    except KeyError:
        raise ValueError(f"unknown platform {platform!r}; expected one of "
                         f"{', '.join(PLATFORMS)}") from None
    return facts.port_name(port, breakout, lanes)


def switch_port_name(switch: Switch, port: int) -> str:
    """Interface name of a logical port of `switch`, using its platform, breakout and cage."""
    return port_name(switch.platform, port, switch.breakout, lanes=native_lanes(switch.model))


def host_port_name(host_port: HostPort) -> str:
    """A host port is known by its RDMA device (mlx5_0), on InfiniBand and RoCE alike."""
    return host_port.rdma_device


def cage_of(switch: Switch, port: int) -> int:
    """0-based physical cage of a logical port: one cage holds ports_per_cage x breakout ports.

    A twin-port OSFP (QM9700) carries two native ports, a split native port several logical
    ones; the bill of materials needs one transceiver per cage, not per port.
    """
    known = catalog.switches().get(switch.model)
    per_cage = known.ports_per_cage if known is not None else 1
    return (port - 1) // (per_cage * switch.breakout)


@cache
def switch_panels(model: str, breakout: int, radix: int) -> tuple[str, ...]:
    """Where each logical port 1..radix sits on the front panel of a catalog switch, as a crew
    finds it: `cage <c>` (1-based physical cage, the catalog's `cages`), then `port <p>` where a
    cage holds several native ports (twin-port OSFP: QM9700 port 34 is cage 17 port 2, MLNX-OS
    IB1/17/2), then `split <s>` for a broken-out port (QM9700 NDR200 IB1/17/2/1 is cage 17 port 2
    split 1; SN5600 2x400G swp17s1 is cage 17 split 2). Native ports fill each cage in order, as
    the switch names them. Empty for a model outside the catalog: its panel is not known."""
    known = catalog.switches().get(model)
    if known is None:
        return ("",) * radix
    per_cage = known.ports_per_cage
    out = []
    for port in range(1, radix + 1):
        native, leg = divmod(port - 1, breakout)
        cage, slot = divmod(native, per_cage)
        label = f"cage {cage + 1}"
        if per_cage > 1:
            label += f" port {slot + 1}"
        if breakout > 1:
            label += f" split {leg + 1}"
        out.append(label)
    return tuple(out)


def switch_panel(switch: Switch, port: int) -> str:
    """The front-panel place of a logical port of `switch` (see switch_panels); "" unknown."""
    if not 1 <= port <= switch.radix:
        raise ValueError(f"{switch.name} has ports 1..{switch.radix}, not {port}")
    return switch_panels(switch.model, switch.breakout, switch.radix)[port - 1]
