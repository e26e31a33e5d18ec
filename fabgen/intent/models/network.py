"""The RoCE switches' network: platform per role, address pools and ASNs, the eBGP underlay's
timers and BFD, and how ECMP spreads flows."""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import TYPE_CHECKING, Literal, TypeAlias

from pydantic import (
    Field,
    field_validator,
    model_validator,
)

from fabgen.intent.models.fields import (
    Prefix,
    StrictModel,
)
from fabgen.platforms.registry import facts as registry

# --- platforms, addressing, hosts -----------------------------------------------------------

# The registered platforms (fabgen/platforms/registry/facts.py), in the enum's frozen order.
if TYPE_CHECKING:
    Platform: TypeAlias = str  # mypy cannot read a Literal built from a tuple
else:
    Platform = Literal[registry.INTENT_NAMES]


class PlatformsSpec(StrictModel):
    leaf: Platform = registry.DEFAULT
    """Each role's OS must run on its switch model: EOS on Arista, NVUE (Cumulus Linux) on
    NVIDIA Spectrum, Junos (Junos OS Evolved) on Juniper QFX5240, SONiC on Arista, NVIDIA
    and white boxes (each platform's facts list the models it runs on)."""
    spine: Platform | None = None
    """Defaults to the leaf platform."""
    core: Platform | None = None
    """Defaults to the spine platform."""


class AsnSpec(StrictModel):
    spine: int = Field(65000, ge=1, le=4294967294)
    """ASN shared by the spines of a 2-tier fabric (of pod 1 in a 3-tier)."""
    core: int = Field(64900, ge=1, le=4294967294)
    leaf_start: int = Field(65101, ge=1, le=4294967294)
    """First leaf ASN; each leaf gets its own (RFC 7938): leaf_start plus the leaf's number,
    counted unit by unit, so a new unit's leaves follow every existing one."""


class AddressingSpec(StrictModel):
    p2p: Prefix = IPv4Network("10.254.0.0/16")
    """Pool of /31 switch-to-switch links: from its bottom a block per leaf, unit by unit
    (the power of two at or above the leaf's uplink ports: the n-th /31 is the n-th uplink's),
    from its top down a block per spine of a 3-tier fabric; growth never moves one."""
    loopbacks: Prefix = IPv4Network("10.255.0.0/22")
    """Pool of /32 switch loopbacks (router ids): leaves from the bottom, unit by unit; spines
    and cores from the top down, in the order growth adds them."""
    hosts: Prefix = IPv4Network("10.100.0.0/16")
    """Pool of /31 leaf-to-NIC links (RoCE): node i's n-th port takes /31 number
    i x ports + n, the leaf the even address."""
    asn: AsnSpec = AsnSpec()


# --- underlay and load balancing (RoCE) -----------------------------------------------------

class BgpTimersSpec(StrictModel):
    keepalive_s: int = Field(3, ge=1, le=3600)
    """BGP keepalive, seconds, on every switch platform. 3 s is FRR's `datacenter` profile and
    Cumulus' default; EOS would otherwise keep 60 s."""
    hold_s: int = Field(9, ge=3, le=3600)
    """BGP hold time, seconds (FRR datacenter and Cumulus default 9; EOS default 180). At least
    three keepalives (RFC 4271 §10 suggests hold = 3 x keepalive)."""

    @model_validator(mode="after")
    def _three_keepalives(self) -> BgpTimersSpec:
        if self.hold_s < 3 * self.keepalive_s:
            raise ValueError(f"hold_s ({self.hold_s}) must be at least 3 x keepalive_s "
                             f"({self.keepalive_s}): one lost keepalive would drop the session")
        return self


class BfdSpec(StrictModel):
    enabled: bool = True
    """BFD on every underlay BGP session (FRR bfdd on SONiC, EOS, NVUE): a dead link is
    withdrawn in interval x multiplier instead of the BGP hold time."""
    interval_ms: int = Field(300, ge=50, le=60000)
    """Transmit and minimum receive interval, ms. 300 is the default of FRR bfdd, Cumulus and
    EOS; 50-60000 is the range all three accept."""
    multiplier: int = Field(3, ge=3, le=50)
    """Missed packets before the session is down (default 3 on all three; EOS takes 3-50)."""


class UnderlaySpec(StrictModel):
    """The eBGP underlay's failure detection, the same on every platform."""

    bgp: BgpTimersSpec = BgpTimersSpec()
    bfd: BfdSpec = BfdSpec()


HashField = Literal["src-ip", "dst-ip", "ip-protocol", "src-port", "dst-port", "roce-dest-qp"]


class LoadBalancingSpec(StrictModel):
    """How the switches spread RoCE flows over the equal-cost uplinks."""

    mode: Literal["hash", "adaptive"] = "hash"
    """`hash`: each flow stays on the uplink a hash of `hash_fields` picks (every platform).
    `adaptive`: the switch moves traffic to less-loaded uplinks: flowlet dynamic load balancing
    on EOS, per-packet adaptive routing on Cumulus (Spectrum-4 at 200G/400G; the NICs must
    reorder, NCCL_IB_ADAPTIVE_ROUTING=1); SONiC has no such setting and refuses it."""
    hash_fields: list[HashField] = Field(
        ["src-ip", "dst-ip", "ip-protocol", "src-port", "dst-port"], min_length=1)
    """Packet fields the ECMP hash reads. The default 5-tuple is Cumulus' default: a RoCEv2
    NIC gives each queue pair its own UDP source port, so more QPs are more flows.
    `roce-dest-qp` (the BTH destination QP) exists on EOS Tomahawk switches only."""

    @field_validator("hash_fields")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        dupes = sorted({f for f in v if v.count(f) > 1})
        if dupes:
            raise ValueError(f"hash field {dupes[0]!r} is listed twice")
        return v
