"""The shape of the fabric: switch models per tier, oversubscription, planes, scalable units,
and the separate storage and management networks."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    field_validator,
    model_validator,
)

from fabgen.intent import names
from fabgen.intent.models.fields import (
    Ratio,
    SpeedGbps,
    StrictModel,
)
from fabgen.intent.models.infiniband import IbIpoibSpec, IbManagementSpec

# --- topology -------------------------------------------------------------------------------

def _breakout(value: str) -> str:
    from fabgen.catalog import Breakout

    Breakout.parse(value)  # raises "expected a breakout like '2x400G', got ..."
    return value


class SwitchSpec(StrictModel):
    """A switch from the catalog (`model`), or a custom one (`ports` and `speed`)."""

    model: str | None = None
    """Catalog model: qm8700, qm9700, q3400, sn4600c, sn4700, sn5600, 7060x6-64pe, th5-51t."""
    ports: int | None = Field(None, ge=4, le=512)
    """Custom switch: native port count."""
    speed: SpeedGbps | None = None
    """Custom switch: native port speed."""
    breakout: Annotated[str, AfterValidator(_breakout)] | None = None
    """Split each native port, e.g. `2x400G` (the fabric speed picks one if omitted)."""

    @model_validator(mode="after")
    def _model_or_custom(self) -> SwitchSpec:
        if self.model is None and (self.ports is None or self.speed is None):
            raise ValueError("give a catalog `model`, or `ports` and `speed` for a custom switch")
        if self.model is not None and (self.ports is not None or self.speed is not None):
            raise ValueError("give either a catalog `model` or custom `ports`/`speed`, not both")
        return self


def _oversub(value: object) -> object:
    # A bare ratio is the leaf's down:up split, the number every design document quotes.
    if isinstance(value, str):
        return {"leaf": value}
    return value


class Oversubscription(StrictModel):
    leaf: Ratio = Field("1:1", validate_default=True)
    """Leaf downlink:uplink bandwidth, e.g. `1:1`, `2:1`, `8:7`."""
    spine: Ratio = Field("1:1", validate_default=True)
    """Spine downlink:uplink bandwidth in a 3-tier fabric."""


class StorageTargetsSpec(StrictModel):
    """The storage system's own ports on the storage network (its appliances or servers), cabled
    to the storage leaves like the nodes: consecutive ports of a target on different leaves."""

    count: int = Field(ge=1, le=512)
    """Storage targets (appliances or file servers)."""
    ports: int = Field(2, ge=1, le=64)
    """Network ports of each target on this network."""
    name: str = "stor{index:02d}"
    """Name template; placeholder `index` (1-based)."""

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return names.check_template(v, ("index",), names.SAFE_NAME,
                                    [{"index": 1}, {"index": 512}], "storage target name")


class ExtraFabricSpec(StrictModel):
    """A separate storage or management network from the reference architectures."""

    transport: Literal["ethernet", "infiniband"] = "ethernet"
    """DGX SuperPOD runs storage on InfiniBand and management on Ethernet."""
    generation: Literal["hdr", "ndr", "xdr"] | None = None
    """InfiniBand generation of this network (InfiniBand only)."""
    nics: int = Field(ge=1, le=8)
    """NICs (ports) per node on this network. An Ethernet management network with 2 is built
    as MLAG leaf pairs, each node's two ports (its in-band bond) on the two leaves of a pair
    (DGX BasePOD); other counts put a node's ports on one leaf, with a warning."""
    speed: SpeedGbps
    """Port speed of those NICs."""
    leaf: SwitchSpec
    spine: SwitchSpec | None = None
    oversubscription: Ratio = Field("1:1", validate_default=True)
    """Leaf downlink:uplink bandwidth (storage and management are often oversubscribed)."""
    scalable_unit: int | None = Field(None, ge=1)
    """Nodes per unit of this network, as `topology.scalable_unit` (default: as many as a
    leaf, or an MLAG pair, serves, or all the nodes when there are fewer: such a unit is
    re-sized as nodes are added, moving its leaves' uplinks; set it to grow without
    recabling)."""
    targets: StorageTargetsSpec | None = None
    """Storage network only: the storage system's ports, on reserved leaf ports after the nodes'."""
    subnet_manager: IbManagementSpec | None = None
    """InfiniBand storage network only: the hosts of its own subnet manager (a separate subnet
    from the compute fabric), on reserved leaf ports like the compute fabric's UFM hosts. Not
    set: none is planned and the report says the storage subnet has no SM."""
    ipoib: IbIpoibSpec | None = None
    """InfiniBand storage network only: IPoIB on its default partition, one address per storage
    port of every node (its subnet manager's fabric interfaces first), set by nic-setup.sh and
    checked by preflight.sh. Lustre's o2ib LNet names each peer by its IPoIB address (NID
    `<address>@o2ib`) and IBM Storage Scale's daemons talk TCP/IP, which on an InfiniBand-only
    storage network is IPoIB. The storage system's own ports are addressed by its vendor."""


class TopologySpec(StrictModel):
    style: Literal["rail-optimized", "rail-unaware"] = "rail-optimized"
    """`rail-optimized`: rail r of every node of a scalable unit on one leaf.
    `rail-unaware`: classic fat-tree, each node's ports on the same leaf."""
    planes: int = Field(1, ge=1, le=8)
    """Independent fabric planes; with 2, each NIC's two ports go to different planes."""
    scalable_unit: int | None = Field(None, ge=1)
    """Nodes per scalable unit (default: as many as one leaf's downlinks serve, or all the
    nodes when there are fewer: such a unit is re-sized as nodes are added, which moves every
    leaf's uplinks; set it to grow without recabling, as addresses and cable ids never move
    within a unit)."""
    oversubscription: Annotated[Oversubscription, BeforeValidator(_oversub)] = Oversubscription()
    """A ratio (leaf tier), or per tier: `{leaf: "2:1", spine: "1:1"}`."""
    leaf: SwitchSpec
    spine: SwitchSpec | None = None
    """Defaults to the leaf model."""
    core: SwitchSpec | None = None
    """Defaults to the spine model."""
    min_spines: int = Field(1, ge=1, le=512)
    """At least this many spines per plane (per pod in 3 tiers): with 2 spines one failure
    halves the bandwidth, with 8 it costs 12.5%."""
    tiers: Literal["auto", 2, 3] = "auto"
    """`auto` picks the smallest that fits; 2 or 3 forces it."""
    full_units: bool = True
    """Build a partial scalable unit's leaves and uplinks in full, so it grows without recabling."""
    storage: ExtraFabricSpec | None = None
    management: ExtraFabricSpec | None = None
