"""Which switch hardware each network OS runs on, by the catalog's `vendor` (switches.yaml).

One line per OS, each with its source, so a later restructure can move each line into its
platform's own folder (fabgen/platforms/<os>/). The intent's loader refuses a switch model an
OS does not run on (EOS on an NVIDIA SN5600, NVUE on an Arista 7060X6), placing the error at
the platform (or the model) and suggesting what would run.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RUNS_ON", "RunsOn", "platforms_for", "runs_on"]


@dataclass(frozen=True, slots=True)
class RunsOn:
    vendors: tuple[str, ...]  # catalog vendors (switches.yaml `vendor`) whose switches it runs on
    what: str  # the hardware, as the error says it
    source: str


RUNS_ON: dict[str, RunsOn] = {
    "sonic": RunsOn(
        ("NVIDIA", "Arista", "generic"),
        "NVIDIA Spectrum, Arista and white-box switches with a SONiC platform",
        "sonic-buildimage device/<vendor>/<platform>/ (github.com/sonic-net/sonic-buildimage): "
        "device/mellanox/x86_64-mlnx_msn4600c-r0, x86_64-mlnx_msn4700-r0, "
        "x86_64-nvidia_sn5600-r0; device/arista/x86_64-arista_7060x6_64pe; Broadcom "
        "Tomahawk white boxes ship their ODM's SONiC platform (generic)"),
    "nvue": RunsOn(
        ("NVIDIA",),
        "NVIDIA Spectrum switches",
        "Cumulus Linux 5.x (NVUE) runs on NVIDIA Spectrum switches only: its image carries "
        "NVIDIA's switch SDK (sx-sdk-eth) and Spectrum-1 to Spectrum-4 firmware and nothing "
        "for another ASIC (Cumulus Linux 5.10 Packages, docs.nvidia.com/networking-ethernet-"
        "software/cumulus-linux-510/Whats-New/foss)"),
    "eos": RunsOn(
        ("Arista",),
        "Arista switches",
        "Arista EOS runs on Arista's own switches (one EOS image for every Arista platform; "
        "the 7060X6 datasheet lists EOS as its OS); cEOS/vEOS are lab images, not for "
        "another vendor's switch"),
}


def runs_on(platform: str, vendor: str) -> bool:
    """Whether `platform` runs on a switch of catalog vendor `vendor`."""
    entry = RUNS_ON.get(platform)
    return entry is not None and vendor in entry.vendors


def platforms_for(vendor: str) -> list[str]:
    """The platforms that run on `vendor`'s switches, in table order."""
    return [name for name, entry in RUNS_ON.items() if vendor in entry.vendors]
