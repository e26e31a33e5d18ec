"""Day two: verification and alert thresholds, and the labels job schedulers are given."""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    Field,
    model_validator,
)

from fabgen.intent.models.fields import (
    SafeName,
    StrictModel,
)

# --- day two: verification and alert thresholds ---------------------------------------------

class MonitoringSpec(StrictModel):
    """Thresholds of the day-two pack: `fabgen verify`, the ANTA catalog and the Prometheus
    alerting rules. These are operational choices, not hardware facts: tune them against a
    healthy baseline of your own fabric."""

    pfc_storm_pps: int | None = Field(None, ge=1)
    """PFC pause frames per second received on the lossless priority that count as a storm
    when they last `pfc_storm_for_s`. Not set: the rate that keeps the link paused without a
    gap (link speed / (65535 quanta x 512 bit times), IEEE 802.1Qbb), 11,921/s at 400G."""
    pfc_storm_for_s: int = Field(60, ge=10, le=3600)
    """How long the storm rate must last before `PfcStorm` fires (the PFC watchdog acts within
    its detection time; this alert is for a storm the watchdog did not end)."""
    pause_rate_pps: int | None = Field(None, ge=1)
    """Sustained pause frames per second on a port and the lossless priority that `PfcPauseRate`
    warns about. Not set: a tenth of the storm rate (the link paused about 10% of the time)."""
    pause_rate_for_s: int = Field(300, ge=10, le=86400)
    """How long the pause rate must stay above `pause_rate_pps`."""
    bgp_down_for_s: int = Field(30, ge=0, le=3600)
    """How long a planned BGP session may be down before `BgpSessionDown` fires (the underlay
    hold time is 9 s)."""
    link_flaps: int = Field(3, ge=1, le=1000)
    """Carrier transitions of one port in `link_flap_window_s` that make `LinkFlapping` fire."""
    link_flap_window_s: int = Field(600, ge=60, le=86400)
    verify_window_s: int = Field(300, ge=10, le=86400)
    """How long `verify/anta-check.sh` waits between its two snapshots of the EOS counters when
    it is given no traffic command (the budgets are rates over the time actually elapsed)."""
    verify_pfc_frames_max: int | None = Field(None, ge=0)
    """`fabgen verify` (SONiC: since the counters were cleared) and `fabgen verify-counters`
    (EOS: between two snapshots): PFC frames a port may send or receive. Not set:
    verify-counters allows the `PfcPauseRate` alert's rate times the elapsed seconds (a port
    that paused less than the alert warns about passes, so normal RoCE traffic passes and a
    storm fails, whatever the window); `fabgen verify` (SONiC) allows 0, for a fabric checked
    idle after clearing the counters."""
    verify_ecn_marks_max: int | None = Field(None, ge=0)
    """ECN-marked packets the RoCE queue may gain between `verify/anta-check.sh`'s two
    snapshots (`fabgen verify-counters`, EOS). Not set: not checked, because marks on the RoCE
    queue are DCQCN working as designed, not a fault. Marks on any other queue are SONiC's
    `EcnMarksOnNonRoceQueue` alert; EOS counts marks only where `random-detect ecn count` is
    configured (the RoCE queue), so its ANTA catalog checks instead that no other queue has
    ECN configured."""
    ib_symbol_errors: int = Field(10, ge=0)
    """InfiniBand: symbol errors of one port per hour that make `IbSymbolErrors` fire."""
    ib_xmit_wait_per_s: int = Field(1_000_000, ge=1)
    """InfiniBand: PortXmitWait ticks per second (sustained 5 min) that flag a congested port.
    The tick length is device-specific (IBTA leaves it to the implementation)."""
    host_lldp: bool = False
    """Check the hosts' LLDP neighbours on leaf host ports (needs lldpd on every host sending its
    netdev name as the port ID: `lldpcli configure lldp portidsubtype ifname`)."""
    otlp_destination: SafeName | None = None
    """Cumulus NVUE: host name or IPv4 address of the OpenTelemetry collector the switches
    export to (`nv set system telemetry export otlp grpc destination`)."""
    otlp_port: int = Field(4317, ge=1, le=65535)
    """OTLP/gRPC port of that collector (4317 is OTLP's registered gRPC port)."""
    gnmi_port: int = Field(8080, ge=1, le=65535)
    """gNMI port gnmic dials on SONiC switches (sonic-gnmi's default, CONFIG_DB `GNMI|gnmi`
    `port`)."""
    eos_gnmi_port: int = Field(6030, ge=1, le=65535)
    """gNMI port of the EOS switches: the EOS config sets `management api gnmi` / `transport
    grpc` on it and gnmic dials it (6030 is EOS's default gNMI port)."""
    eos_gnmi_vrf: SafeName | None = None
    """VRF the EOS gNMI server listens in (`transport grpc` `vrf`), the management VRF when the
    collector reaches the switches over the management network. Not set: the default VRF."""
    eos_gnmi_ssl_profile: SafeName | None = None
    """EOS `management security` SSL profile (certificate and key on the switch) the gNMI server
    uses: gnmic then dials with TLS and checks the switch's certificate. Not set: EOS serves
    gNMI without TLS and gnmic dials in clear text (the report warns)."""


# --- job schedulers -------------------------------------------------------------------------

# A Kubernetes label key: an optional DNS-subdomain prefix and a name of at most 63 characters
# (the nodeLabel pattern of the Kueue and KAI Topology CRDs).
_LABEL_KEY = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?" \
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
LabelKey = Annotated[str, Field(pattern=_LABEL_KEY, max_length=316)]


class NodeLabelKeys(StrictModel):
    """Kubernetes node label keys, one per network tier. The defaults are the keys NVIDIA
    topograph writes (network.topology.nvidia.com/*), which Kueue and KAI setups already use."""

    leaf: LabelKey = "network.topology.nvidia.com/leaf"
    """The node's leaf group: its scalable unit's rail group, or its leaf (rail-unaware)."""
    spine: LabelKey = "network.topology.nvidia.com/spine"
    """The node's spine set (its pod in a 3-tier fabric; one value for all in 2 tiers)."""
    core: LabelKey = "network.topology.nvidia.com/core"
    """The node's core tier (3-tier fabrics only)."""

    @model_validator(mode="after")
    def _distinct(self) -> NodeLabelKeys:
        keys = [self.leaf, self.spine, self.core]
        if len(set(keys)) != len(keys) or "kubernetes.io/hostname" in keys:
            raise ValueError("the leaf, spine and core label keys must differ from each other "
                             "and from kubernetes.io/hostname")
        return self


class SchedulingSpec(StrictModel):
    labels: NodeLabelKeys = NodeLabelKeys()
    """Node label keys of the Kubernetes files (Kueue/KAI Topology levels, label-nodes.sh)."""
