"""The intent: pydantic models of the one YAML file every artifact is rendered from.

One module per section of the file (`cluster`, `topology`, `qos`, `infiniband`, `network`,
`operations`), the field types they share in `fields`, and the root `Intent` here. Every model
is re-exported, so `from fabgen.intent.models import X` names any of them. `Intent`'s fields
are in the order the JSON Schema and the README reference list them: keep it.
"""

from __future__ import annotations

from pydantic import ConfigDict

from fabgen.intent.models.cluster import (
    IB_GENERATION_SPEED,
    MAX_HOST_PORTS,
    ClusterSpec,
    FabricSpec,
    HostsSpec,
    NcclSpec,
    NodeSpec,
)
from fabgen.intent.models.fields import (
    Bytes,
    Dscp,
    Prefix,
    Priority,
    Ratio,
    SafeName,
    SafeText,
    SpeedGbps,
    StrictModel,
    device_names,
)
from fabgen.intent.models.infiniband import (
    AR_GENERATIONS,
    SHARP_UCX_DEFAULT_FROM,
    Guid,
    HostPattern,
    IbIpoibSpec,
    IbManagementHost,
    IbManagementSpec,
    IbPartition,
    IbTrafficClass,
    InfinibandSpec,
    OpenSMBuild,
    adaptive_routing_on,
    sharp_release,
    sharp_transport,
)
from fabgen.intent.models.network import (
    AddressingSpec,
    AsnSpec,
    BfdSpec,
    BgpTimersSpec,
    HashField,
    LoadBalancingSpec,
    Platform,
    PlatformsSpec,
    UnderlaySpec,
)
from fabgen.intent.models.operations import (
    LabelKey,
    MonitoringSpec,
    NodeLabelKeys,
    SchedulingSpec,
)
from fabgen.intent.models.qos import (
    CableLength,
    ClassMark,
    EcnSpec,
    ExtraClass,
    PfcWatchdogSpec,
    QosSpec,
    SchedulerSpec,
)
from fabgen.intent.models.topology import (
    ExtraFabricSpec,
    Oversubscription,
    StorageTargetsSpec,
    SwitchSpec,
    TopologySpec,
)

__all__ = [
    "AR_GENERATIONS",
    "IB_GENERATION_SPEED",
    "MAX_HOST_PORTS",
    "SHARP_UCX_DEFAULT_FROM",
    "AddressingSpec",
    "AsnSpec",
    "BfdSpec",
    "BgpTimersSpec",
    "Bytes",
    "CableLength",
    "ClassMark",
    "ClusterSpec",
    "Dscp",
    "EcnSpec",
    "ExtraClass",
    "ExtraFabricSpec",
    "FabricSpec",
    "Guid",
    "HashField",
    "HostPattern",
    "HostsSpec",
    "IbIpoibSpec",
    "IbManagementHost",
    "IbManagementSpec",
    "IbPartition",
    "IbTrafficClass",
    "InfinibandSpec",
    "Intent",
    "LabelKey",
    "LoadBalancingSpec",
    "MonitoringSpec",
    "NcclSpec",
    "NodeLabelKeys",
    "NodeSpec",
    "OpenSMBuild",
    "Oversubscription",
    "PfcWatchdogSpec",
    "Platform",
    "PlatformsSpec",
    "Prefix",
    "Priority",
    "QosSpec",
    "Ratio",
    "SafeName",
    "SafeText",
    "SchedulerSpec",
    "SchedulingSpec",
    "SpeedGbps",
    "StorageTargetsSpec",
    "StrictModel",
    "SwitchSpec",
    "TopologySpec",
    "UnderlaySpec",
    "adaptive_routing_on",
    "device_names",
    "sharp_release",
    "sharp_transport",
]

# --- the intent -----------------------------------------------------------------------------

class Intent(StrictModel):
    """A GPU-cluster fabric: what to build, from which every artifact is rendered."""

    model_config = ConfigDict(title="fabgen intent")

    name: SafeName
    """Cluster/fabric name, used in file names and descriptions."""
    description: SafeText = ""
    fabric: FabricSpec
    cluster: ClusterSpec
    topology: TopologySpec
    qos: QosSpec = QosSpec()
    """RoCE QoS plan inputs (ignored for InfiniBand, which uses service levels)."""
    infiniband: InfinibandSpec = InfinibandSpec()
    platforms: PlatformsSpec = PlatformsSpec()
    """Configuration target per switch role (RoCE only)."""
    addressing: AddressingSpec = AddressingSpec()
    hosts: HostsSpec = HostsSpec()
    nccl: NcclSpec = NcclSpec()
    underlay: UnderlaySpec = UnderlaySpec()
    """BGP timers and BFD of the RoCE underlay, the same on every switch platform."""
    load_balancing: LoadBalancingSpec = LoadBalancingSpec()
    """ECMP hashing or adaptive load balancing of the RoCE fabric."""
    monitoring: MonitoringSpec = MonitoringSpec()
    """Day-two checks and alerts: thresholds for `fabgen verify`, ANTA and Prometheus."""
    scheduling: SchedulingSpec = SchedulingSpec()
    """What job schedulers are told about the fabric (Slurm needs no settings)."""
