"""Cumulus Linux NVUE's facts: names, QoS and underlay limits, the hardware it runs on, port
names."""

from __future__ import annotations

from fabgen.platforms.contract.facts import (
    FIVE_TUPLE,
    Capabilities,
    EcmpLimit,
    Facts,
    RunsOn,
    split_port,
)

__all__ = ["ADAPTIVE_MODELS", "ADAPTIVE_SPEEDS", "FACTS", "NvueFacts"]

# Cumulus adaptive routing: Spectrum-4 switches at 400G and 200G (Cumulus Linux 5.12, "Equal
# Cost Multipath Load Sharing", Adaptive Routing).
ADAPTIVE_MODELS = frozenset({"sn5600"})
ADAPTIVE_SPEEDS = frozenset({200, 400})


class NvueFacts(Facts):
    name = "nvue"
    title = "Cumulus NVUE"
    short = "Cumulus"
    words = ("nvue", "cumulus")
    runs_on = RunsOn(
        ("NVIDIA",),
        "NVIDIA Spectrum switches",
        "Cumulus Linux 5.x (NVUE) runs on NVIDIA Spectrum switches only: its image carries "
        "NVIDIA's switch SDK (sx-sdk-eth) and Spectrum-1 to Spectrum-4 firmware and nothing "
        "for another ASIC (Cumulus Linux 5.10 Packages, docs.nvidia.com/networking-ethernet-"
        "software/cumulus-linux-510/Whats-New/foss)")
    # Cumulus Linux: MTU up to 9216; the PFC watchdog only drops (NVUE `qos pfc-watchdog`).
    capabilities = Capabilities("nvue", 9216, ("drop",), 100, 1, False, False, True,
                                "Cumulus Linux 5.x user guide, RoCE and PFC watchdog pages",
                                "NVUE restores after its own polling/robustness cycle")
    # `nv set vrf <vrf> router bgp address-family ipv4-unicast multipaths ebgp 1-128`
    # (Cumulus Linux 5.12 user guide, NVUE command list).
    ecmp = EcmpLimit(128, "NVUE `router bgp address-family ipv4-unicast multipaths ebgp "
                          "1-128`, Cumulus Linux 5.12 user guide")
    # NVUE `system forwarding ecmp-hash` (Cumulus Linux 5.12, "Equal Cost Multipath Load
    # Sharing", ECMP Hashing table: ip-protocol, source-ip, destination-ip, source-port,
    # destination-port, all on by default).
    hash_fields = frozenset(FIVE_TUPLE)
    # `nv set interface <swp> router adaptive-routing enable on` on the ECMP ports; per-packet,
    # Spectrum-4 at 400G and 200G only (same page, Adaptive Routing).
    adaptive = "per-packet adaptive routing (Spectrum-4, 200G/400G ports)"
    adaptive_reorders = True

    def port_name(self, port: int, breakout: int, lanes: int) -> str:
        """`swp<native>`, split ports `swp<native>s<k>` with k from 0 (Cumulus Linux swp
        naming)."""
        native, k, _ = split_port(port, breakout, lanes)
        return f"swp{native}" if breakout == 1 else f"swp{native}s{k}"


FACTS = NvueFacts()
