"""A platform's facts: what it is called, what it can express, which hardware it runs on and how
it names ports. Data and pure functions over plain values, with the source of every value beside
it in the platform's `facts.py`.

The core reads them at the bottom layers: the intent's `platforms` enum (the registry's names),
`catalog.ports` (port names), `qos` (MTU and PFC watchdog limits), `underlay` (ECMP, hash and
adaptive limits) and the loader's OS-on-hardware check. So this module imports nothing of
fabgen's but the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FIVE_TUPLE", "Capabilities", "EcmpLimit", "Facts", "RunsOn", "split_port"]

# The RoCEv2 5-tuple in the intent's hash-field names (`load_balancing.hash_fields`): its
# default, which every platform's ECMP hash reads. A RoCEv2 NIC varies the UDP source port per
# queue pair (InfiniBand Architecture Specification, Annex A17 RoCEv2, "UDP source port ...
# used for ECMP entropy"); the destination port is always 4791.
FIVE_TUPLE = ("src-ip", "dst-ip", "ip-protocol", "src-port", "dst-port")


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a switch platform can express; the plan is checked against it before rendering."""

    platform: str
    max_mtu: int
    pfc_watchdog_actions: tuple[str, ...]
    min_watchdog_ms: int
    watchdog_step_ms: int  # timers must be whole multiples of this
    strict_above_dwrr: bool  # strict-priority queues must be numbered above round-robin ones
    watchdog_restoration: bool  # the watchdog's restoration time can be set
    commit_confirm: bool
    source: str
    # Why restoration_ms does not apply where watchdog_restoration is False: the warning's
    # parenthesis ("" for none).
    restoration_note: str = ""


@dataclass(frozen=True, slots=True)
class EcmpLimit:
    """The most equal-cost paths a platform installs for one prefix, and where that is written."""

    paths: int
    source: str


@dataclass(frozen=True, slots=True)
class RunsOn:
    """The switch hardware a network OS runs on, by the catalog's `vendor` (switches.yaml)."""

    vendors: tuple[str, ...]  # catalog vendors whose switches it runs on
    what: str  # the hardware, as the loader's error says it
    source: str


class Facts:
    """One network OS as the bottom layers see it. A platform subclasses this in its
    `facts.py` and sets every attribute, each with its source beside it; `FACTS` is the
    instance the registry lists."""

    name: str
    """The intent's word (`platforms.leaf: <name>`), its render folder and its target's name."""
    title: str
    """Product name in tables and headers (vendor and OS)."""
    short: str
    """Name inside sentences (the OS's usual short name)."""
    words: tuple[str, ...]
    """Words that name this OS: no module outside fabgen/platforms/ may contain them (its name
    is always one; add its own vocabulary: a config file or a tool only it has)."""
    runs_on: RunsOn
    """Hardware it runs on; the loader refuses it on another vendor's switch."""
    capabilities: Capabilities
    """QoS limits qos.check holds the plan to, with their source."""
    ecmp: EcmpLimit
    """Most equal-cost paths it installs per prefix, with the source."""
    hash_fields: frozenset[str]
    """Intent hash-field names (`load_balancing.hash_fields`) its ECMP hash can read."""
    adaptive: str | None
    """Its adaptive load balancing in words (the report); None: it has none."""
    adaptive_reorders: bool = False
    """Adaptive mode sprays one flow's packets over several paths: the NICs must reorder
    (NCCL_IB_ADAPTIVE_ROUTING=1)."""

    def port_name(self, port: int, breakout: int, lanes: int) -> str:
        """Interface name of logical port `port` (1..radix) split `breakout` ways from native
        ports of `lanes` electrical lanes."""
        raise NotImplementedError

    def device_sku(self, model: str, breakout: int) -> str | None:
        """The hardware SKU name its config declares for this model and split, which the
        running switch must report too (`fabgen verify` compares them); None: it names none."""
        return None

    def lldp_port_ids(self, model: str, breakout: int, port: int, name: str) -> tuple[str, ...]:
        """The LLDP port IDs a switch of this OS may send on logical port `port` named `name`
        (of a `model` split `breakout` ways): the interface name, unless the OS sends
        something else too."""
        return (name,)


def split_port(port: int, breakout: int, lanes: int) -> tuple[int, int, int]:
    """(native port 1-based, sub-port k 0-based, lanes per sub-port) of a logical port."""
    if port < 1:
        raise ValueError(f"logical ports are numbered from 1, got {port}")
    if breakout < 1 or lanes % breakout:
        raise ValueError(f"a {lanes}-lane port cannot be split {breakout} ways")
    native, k = divmod(port - 1, breakout)
    return native + 1, k, lanes // breakout
