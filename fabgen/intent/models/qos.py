"""RoCE QoS inputs: traffic classes and their marks, ECN, PFC watchdog, scheduler weights,
MTUs and the cable lengths PFC headroom is sized for."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    Field,
    model_validator,
)

from fabgen.intent.models.fields import (
    Bytes,
    Dscp,
    Priority,
    SafeName,
    StrictModel,
)

# --- QoS (RoCE) -----------------------------------------------------------------------------

class ClassMark(StrictModel):
    dscp: Dscp
    priority: Priority


class ExtraClass(StrictModel):
    name: SafeName
    dscp: list[Dscp] = Field(min_length=1)
    priority: Priority
    weight: int = Field(10, ge=1, le=100)
    """DWRR weight of this class's queue."""


class CableLength(StrictModel):
    """One measured cable: named by its cable id (the `id` column of fabgen's cabling sheet)
    or by one end, a device and its port as the sheet prints them."""

    cable: SafeName | None = None
    """Cable id from cabling/cabling.csv (`c-su1-r0-033`: the switch port it plugs into)."""
    device: SafeName | None = None
    """A switch or host at either end of the cable."""
    port: SafeName | None = None
    """That device's port: a switch interface (`Ethernet8`, `swp3s1`, `Ethernet2/1`) or a
    host's RDMA device or netdev (`mlx5_0`, `enp24s0np0`)."""
    length_m: float = Field(gt=0, le=2000)
    """Measured length, metres; a fraction (a 2.5 m DAC) is rounded up to the next metre."""

    @model_validator(mode="after")
    def _one_name(self) -> CableLength:
        if (self.cable is None) == (self.device is None and self.port is None):
            raise ValueError("name the cable by `cable`, or by `device` and `port`, not both")
        if self.cable is None and (self.device is None or self.port is None):
            raise ValueError("`device` and `port` go together")
        return self


class EcnSpec(StrictModel):
    enabled: bool = True
    min: Bytes = 150_000
    """Queue depth where ECN marking starts (bytes; `150KB`)."""
    max: Bytes = 1_500_000
    """Queue depth where marking reaches `probability`."""
    probability: int = Field(100, ge=1, le=100)
    """Marking probability at `max`, percent."""

    @model_validator(mode="after")
    def _ordered(self) -> EcnSpec:
        if self.min >= self.max:
            raise ValueError(f"min ({self.min} B) must be below max ({self.max} B)")
        return self


class PfcWatchdogSpec(StrictModel):
    enabled: bool = True
    detection_ms: int = Field(200, ge=200, le=5000)
    """Stuck-queue detection time; at least 200 ms so the 100 ms poll (Cumulus' floor) sees a
    storm twice before acting."""
    restoration_ms: int = Field(400, ge=100, le=60000)
    action: Literal["drop", "forward", "alert"] = "drop"


class SchedulerSpec(StrictModel):
    rdma_weight: int = Field(50, ge=1, le=100)
    """DWRR weight of the lossless RDMA queue."""
    default_weight: int = Field(50, ge=1, le=100)
    """DWRR weight of the default (best-effort) queue."""


class QosSpec(StrictModel):
    rdma: ClassMark = ClassMark(dscp=26, priority=3)
    """RoCE data: the only lossless (PFC) priority."""
    cnp: ClassMark = ClassMark(dscp=48, priority=6)
    """Congestion notification packets: strict priority, not lossless."""
    classes: list[ExtraClass] = []
    """Other traffic classes (storage, control...); never on the RDMA or CNP priority."""
    ecn: EcnSpec = EcnSpec()
    pfc_watchdog: PfcWatchdogSpec = PfcWatchdogSpec()
    scheduler: SchedulerSpec = SchedulerSpec()
    mtu: int = Field(9216, ge=1500, le=9216)
    """Switch port MTU (L2 frame payload), the same on every hop. Not set: the largest every
    switch platform of the fabric takes (9216 on SONiC and NVUE, 9214 with EOS)."""
    host_mtu: int = Field(9000, ge=1500, le=9216)
    """NIC netdev MTU; must fit inside the switch MTU. Not set: 9000, or the switch MTU when
    that is lower."""
    cable_length_m: int = Field(5, ge=1, le=2000)
    """Longest host-to-leaf cable, metres (of those `cable_lengths` does not measure): PFC
    headroom on NICs (`mlnx_qos --cable_len`) and leaf host ports. Not set: 5, with a warning
    (measure it)."""
    fabric_cable_length_m: int = Field(100, ge=1, le=2000)
    """Longest leaf-to-spine cable, metres (of those `cable_lengths` does not measure): PFC
    headroom on those ports (row-to-row fibre runs are tens of metres; Cumulus' RoCE default
    is 100). Not set: 100, with a warning."""
    core_cable_length_m: int | None = Field(None, ge=1, le=2000)
    """Longest spine-to-core cable, metres (3 tiers). Not set: `fabric_cable_length_m`."""
    cable_lengths: list[CableLength] = Field([], max_length=1000)
    """Measured lengths of single cables, overriding their class's length (the three fields
    above) on both ends of that cable: the switch port's headroom and the NIC's
    `mlnx_qos --cable_len`. Longer lists belong in `cable_lengths_file`."""
    cable_lengths_file: str | None = None
    """CSV of measured cable lengths, relative to the intent's directory (inside it): a header
    row, a `length_m` column, and per row the cable's `id`, or one end as `a_device`+`a_port`,
    `z_device`+`z_port` or `device`+`port`. fabgen's own cabling/cabling.csv with its
    `length_m` column filled in is such a file; other columns are ignored, a row with an empty
    `length_m` keeps its class's length."""
    buffer_model: Literal["auto", "traditional", "dynamic"] = "auto"
    """SONiC buffer model. `auto`: the platform vendor's default (dynamic on NVIDIA Spectrum,
    as NVIDIA builds SONiC; traditional elsewhere). `traditional`: fabgen writes every lossless
    profile from the vendor's lookup table; `dynamic`: SONiC's buffermgrd computes headroom
    from the cable lengths."""
