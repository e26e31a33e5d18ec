"""Node models: the RDMA device, netdev, GPU and NUMA node of every compute port of a server.

The data is fabgen/catalog/nodes.yaml, each model with the vendor table it was read from. The
intent's `cluster.node.model` selects one; `hosts.rdma_devices`, `hosts.netdevs` and
`hosts.bootstrap_interface` override it, and `problems()` reports an override that contradicts
a published map (an error: rendering either name would be a guess about the hardware) or an
interface the model does not have (a warning: a site may build bonds or rename interfaces).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING, Any, Literal

import yaml

from fabgen.intent.names import expand_device

if TYPE_CHECKING:
    from fabgen.intent.models import Intent

__all__ = [
    "PLACEHOLDER_NETDEV",
    "PLACEHOLDER_RDMA",
    "Bootstrap",
    "NodeModel",
    "NodePort",
    "PortFacts",
    "Problem",
    "bootstrap_interface",
    "extra_panels",
    "extra_ports",
    "mapped_ports",
    "model_of",
    "models",
    "problems",
]

# Names a model without a published map gets when the intent names none: obviously not real
# (rdma0 is no kernel's netdev name), so a host that lacks them fails nic-setup.sh up front.
PLACEHOLDER_RDMA = "mlx5_{dev}"
PLACEHOLDER_NETDEV = "rdma{dev}"
_BOND = re.compile(r"^bond\d+$")
# "OSFP4P2": a cage name glued to its port number.
_CAGE_PORT = re.compile(r"^(\S*?\d)(P\d+)$")


@dataclass(frozen=True, slots=True)
class NodePort:
    """One NIC port of a model, as the vendor's port table lists it."""

    port: str  # chassis label, e.g. OSFP4P2
    rdma: str  # RDMA device, e.g. mlx5_0
    infiniband: str  # netdev when the port runs InfiniBand (IPoIB), e.g. ibp24s0
    ethernet: str  # netdev when the port runs Ethernet, e.g. enp24s0np0
    pci: str = ""
    gpu: int | None = None  # compute ports: the GPU beside it
    numa: int | None = None  # compute ports: its CPU's NUMA node (one node per socket)
    use: str = "compute"  # compute | storage | in-band

    def netdev(self, transport: str) -> str:
        return self.infiniband if transport == "infiniband" else self.ethernet

    @property
    def panel(self) -> str:
        """The chassis label a crew cables by: the cage, then the port in it ("OSFP4P2" of the
        DGX H100 User Guide's Table 6 reads "OSFP4 P2"; "Slot1 P2" stays as it is)."""
        return _CAGE_PORT.sub(r"\1 \2", self.port)


@dataclass(frozen=True, slots=True)
class Bootstrap:
    interface: str
    members: tuple[str, ...]
    source: str


@dataclass(frozen=True, slots=True)
class NodeModel:
    key: str
    name: str
    verified: bool  # the compute map was read from the vendor's own table
    source: str
    cite: str = ""  # the source in a few words, for messages
    gpus: int | None = None
    nics: int | None = None
    numa_nodes: int | None = None
    nic: str | None = None
    nic_ports: int | None = None
    port_cages: int | None = None  # compute ports per host-side cage (twin-port OSFP: 2)
    compute: tuple[NodePort, ...] = ()  # GPU order; empty when not published
    storage: tuple[NodePort, ...] = ()
    other_interfaces: tuple[str, ...] = ()
    interfaces_complete: bool = False
    bootstrap: Bootstrap | None = None

    @property
    def has_map(self) -> bool:
        return bool(self.compute)

    def port(self, rdma: str) -> NodePort | None:
        return next((p for p in (*self.compute, *self.storage) if p.rdma == rdma), None)

    def interfaces(self) -> frozenset[str]:
        """Every netdev name the model's table gives (both link types), and its bootstrap."""
        names = {n for p in (*self.compute, *self.storage) for n in (p.infiniband, p.ethernet)}
        names.update(self.other_interfaces)
        if self.bootstrap is not None:
            names.add(self.bootstrap.interface)
        return frozenset(names)


def _port(d: dict[str, Any], use: str) -> NodePort:
    return NodePort(port=d["port"], rdma=d["rdma"], infiniband=d["infiniband"],
                    ethernet=d["ethernet"], pci=d.get("pci", ""), gpu=d.get("gpu"),
                    numa=d.get("numa"), use=d.get("use", use))


def _model(key: str, d: dict[str, Any]) -> NodeModel:
    compute = tuple(_port(p, "compute") for p in d.get("compute") or ())
    boot = d.get("bootstrap")
    return NodeModel(
        key=key, name=d["name"], verified=bool(d.get("verified", False)),
        source=" ".join(d["source"].split()), cite=d.get("cite", ""),
        gpus=d.get("gpus"), nics=d.get("nics", len(compute) or None),
        numa_nodes=d.get("numa_nodes"), nic=d.get("nic"), nic_ports=d.get("nic_ports"),
        port_cages=d.get("port_cages"), compute=compute,
        storage=tuple(_port(p, "storage") for p in d.get("storage") or ()),
        other_interfaces=tuple(d.get("other_interfaces") or ()),
        interfaces_complete=bool(d.get("interfaces_complete", False)),
        bootstrap=Bootstrap(boot["interface"], tuple(boot.get("members", ())),
                            " ".join(boot["source"].split())) if boot else None,
    )


@cache
def models() -> dict[str, NodeModel]:
    """Every node model of the catalog by key; `same_as` entries share their base's data."""
    raw = yaml.safe_load((files("fabgen.catalog") / "nodes.yaml").read_text(encoding="utf-8"))
    assert isinstance(raw, dict)
    out: dict[str, NodeModel] = {}
    for key, d in raw.items():
        base = raw[d["same_as"]] if "same_as" in d else {}
        out[key] = _model(key, {**base, **{k: v for k, v in d.items() if k != "same_as"}})
    return out


def model_of(intent: Intent) -> NodeModel:
    """The intent's node model (the semantic checks have rejected unknown keys)."""
    return models()[intent.cluster.node.model]


def _names(value: str | list[str] | None, default: str, intent: Intent) -> list[str]:
    node = intent.cluster.node
    value = default if value is None else value
    if isinstance(value, list):
        return list(value)
    return [expand_device(value, dev, node.nic_ports, intent.topology.planes)
            for dev in range(node.nics * node.nic_ports)]


@dataclass(frozen=True, slots=True)
class PortFacts:
    """What the fabric records for one compute port of a mapped model (index = dev)."""

    rdma: str
    netdev: str
    gpu: int
    numa: int
    panel: str = ""  # the chassis label (NodePort.panel)


def mapped_ports(intent: Intent) -> tuple[PortFacts, ...] | None:
    """RDMA device, netdev, GPU and NUMA node of each compute port (dev order) from the node
    model's published table; the intent may list a subset of its compute NICs.

    None for a model without a map, or an intent that contradicts its map (the semantic checks
    reject one read from a file; a test may build one in code): topology.build then lays the
    ports out generically (the intent's names or placeholders, NIC n beside GPU n*gpus/nics).
    """
    node = intent.cluster.node
    model = model_of(intent)
    if not model.has_map or _shape(intent, model) or _overrides(intent, model):
        return None
    hosts = intent.hosts
    gpus_per_numa = max(1, node.gpus // node.numa_nodes)
    devices = _names(hosts.rdma_devices, "", intent) if hosts.rdma_devices is not None \
        else [p.rdma for p in model.compute]
    out = []
    for dev, name in enumerate(devices):
        port = model.port(name)
        if port is None or port.gpu is None or port.numa is None:
            return None  # not one of its compute ports (the checks said so)
        netdev = port.netdev(intent.fabric.transport)
        if hosts.netdevs is not None:
            netdev = _names(hosts.netdevs, "", intent)[dev]
        # The table gives the CPU socket; that is the NUMA node while each socket is one node.
        # With sub-NUMA clustering (more nodes than sockets) the split is the generic one.
        numa = port.numa if node.numa_nodes == model.numa_nodes else \
            min(port.gpu // gpus_per_numa, node.numa_nodes - 1)
        out.append(PortFacts(port.rdma, netdev, port.gpu, numa, port.panel))
    return tuple(out)


# The extra networks' roles and the `use` of the storage-card ports that serve them.
_EXTRA_USE = {"storage": "storage", "management": "in-band"}


def extra_ports(intent: Intent, role: str, count: int,
                transport: str) -> tuple[list[str], list[str]] | None:
    """RDMA devices and netdevs of the node's ports on its storage or management network.

    The model's storage-card ports of that use (port 1 of each card for storage, port 2 for
    in-band management, as DGX BasePOD and SuperPOD cable them), when there are exactly
    `count`; None otherwise (the network is then planned with generic names).
    """
    model = models().get(intent.cluster.node.model)
    if model is None:
        return None
    ports = [p for p in model.storage if p.use == _EXTRA_USE.get(role)]
    if len(ports) != count:
        return None
    return [p.rdma for p in ports], [p.netdev(transport) for p in ports]


def extra_panels(intent: Intent, role: str, rdma_devices: Sequence[str]) -> list[str]:
    """The chassis labels of a node's storage or management ports named `rdma_devices` (the
    model's storage-card ports of that use), "" for a device the model does not list."""
    model = models().get(intent.cluster.node.model)
    ports = {p.rdma: p.panel for p in (model.storage if model else ())
             if p.use == _EXTRA_USE.get(role)}
    return [ports.get(rdma, "") for rdma in rdma_devices]


def bootstrap_interface(intent: Intent) -> str | None:
    """NCCL's bootstrap interface: the intent's, else the model's in-band interface, else none."""
    if intent.hosts.bootstrap_interface is not None:
        return intent.hosts.bootstrap_interface
    boot = model_of(intent).bootstrap
    return boot.interface if boot is not None else None


# --- checks --------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Problem:
    severity: Literal["error", "warning"]
    loc: tuple[str | int, ...]
    message: str
    hint: str | None = None


def _listing(ports: Sequence[NodePort]) -> str:
    return ", ".join(p.rdma for p in ports)


def problems(intent: Intent) -> list[Problem]:
    """Where the intent and its node model disagree; [] for an unknown model (reported apart)."""
    model = models().get(intent.cluster.node.model)
    if model is None:
        return []
    out = _shape(intent, model)
    if model.has_map:
        if not out:  # names are compared only once the shape matches
            out += _overrides(intent, model)
    elif model.key != "generic" and (intent.hosts.rdma_devices is None
                                     or intent.hosts.netdevs is None):
        out.append(Problem(
            "warning", ("cluster", "node", "model"),
            f"fabgen has no verified NIC map of the {model.name}: without hosts.rdma_devices "
            f"and hosts.netdevs the scripts use the placeholders {PLACEHOLDER_RDMA} and "
            f"{PLACEHOLDER_NETDEV}",
            "set both to the names `ibdev2netdev` prints on one of the hosts"))
    out += _bootstrap(intent, model)
    return out


_SHAPE_FIELDS = (("gpus", "GPUs"), ("nic", "as compute NIC model"),
                 ("nic_ports", "compute ports on each compute NIC"))


def _shape(intent: Intent, model: NodeModel) -> list[Problem]:
    node = intent.cluster.node
    out: list[Problem] = []
    for field, what in _SHAPE_FIELDS:
        want = getattr(model, field)
        if want is not None and getattr(node, field) != want:
            if field == "nic_ports":
                what = "compute port on each compute NIC" if want == 1 else what
            out.append(Problem("error", ("cluster", "node", field),
                               f"the {model.name} has {want} {what}, not "
                               f"{getattr(node, field)}",
                               "use cluster.node.model: generic for another server"))
    if model.nics is not None:
        subset = model.has_map and intent.hosts.rdma_devices is not None
        if node.nics > model.nics or (node.nics != model.nics and not subset):
            hint = ("to cable only some of them, list those in hosts.rdma_devices"
                    if model.has_map and node.nics < model.nics
                    else "use cluster.node.model: generic for another server")
            out.append(Problem("error", ("cluster", "node", "nics"),
                               f"the {model.name} has {model.nics} compute NICs, not "
                               f"{node.nics}", hint))
    return out


def _overrides(intent: Intent, model: NodeModel) -> list[Problem]:
    """Intent names that contradict the published map: errors naming both."""
    node = intent.cluster.node
    count = node.nics * node.nic_ports
    hosts = intent.hosts
    out: list[Problem] = []
    compute = {p.rdma for p in model.compute}
    devices: list[str] = []
    if hosts.rdma_devices is not None:
        devices = _names(hosts.rdma_devices, "", intent)
        wrong = [d for d in devices if d not in compute]
        if wrong and len(devices) == count:
            what = []
            for name in wrong:
                port = model.port(name)
                what.append(f"{name} is its {port.port} {port.use} port" if port
                            else f"{name} is none of its RDMA devices")
            out.append(Problem(
                "error", ("hosts", "rdma_devices"),
                f"not compute NICs of the {model.name}: {'; '.join(what)}. Its compute NICs, "
                f"GPU0 first, are {_listing(model.compute)} ({model.cite})",
                "leave hosts.rdma_devices unset to use them"))
            devices = []
    if hosts.netdevs is not None:
        netdevs = _names(hosts.netdevs, "", intent)
        rdma = devices or [p.rdma for p in model.compute]
        link = "InfiniBand" if intent.fabric.transport == "infiniband" else "Ethernet"
        pairs = [(d, n, p.netdev(intent.fabric.transport))
                 for d, n in zip(rdma, netdevs, strict=False)
                 if (p := model.port(d)) is not None and n != p.netdev(intent.fabric.transport)]
        if pairs and len(netdevs) == count:
            d, got, want = pairs[0]
            more = f" (and {len(pairs) - 1} more)" if len(pairs) > 1 else ""
            out.append(Problem(
                "error", ("hosts", "netdevs"),
                f"the {model.name} names {d}'s {link} netdev {want}, not {got}{more} "
                f"({model.cite})", "leave hosts.netdevs unset to use the model's names"))
    return out


def _bootstrap(intent: Intent, model: NodeModel) -> list[Problem]:
    name = intent.hosts.bootstrap_interface
    if name is None or not model.interfaces_complete:
        return []
    known = model.interfaces()
    base = name.split(".", 1)[0]  # a VLAN on a known interface exists where its base does
    if name in known or base in known or _BOND.match(base):
        return []
    boot = model.bootstrap
    inband = (f"; its in-band management is {boot.interface} "
              f"({' + '.join(boot.members)})" if boot else "")
    return [Problem(
        "warning", ("hosts", "bootstrap_interface"),
        f"the {model.name} has no interface {name!r}{inband}; NCCL fails at init when "
        "NCCL_SOCKET_IFNAME names an interface the host lacks",
        "leave hosts.bootstrap_interface unset to use the model's in-band interface")]
