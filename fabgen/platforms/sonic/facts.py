"""SONiC's facts: names, QoS and underlay limits, the hardware it runs on, port names."""

from __future__ import annotations

from fabgen.platforms.contract.facts import (
    FIVE_TUPLE,
    Capabilities,
    EcmpLimit,
    Facts,
    RunsOn,
    split_port,
)
from fabgen.platforms.sonic.data import skus

__all__ = ["FACTS", "SonicFacts"]


class SonicFacts(Facts):
    name = "sonic"
    title = "SONiC"
    short = "SONiC"
    words = ("sonic", "config_db")
    runs_on = RunsOn(
        ("NVIDIA", "Arista", "generic"),
        "NVIDIA Spectrum, Arista and white-box switches with a SONiC platform",
        "sonic-buildimage device/<vendor>/<platform>/ (github.com/sonic-net/sonic-buildimage): "
        "device/mellanox/x86_64-mlnx_msn4600c-r0, x86_64-mlnx_msn4700-r0, "
        "x86_64-nvidia_sn5600-r0; device/arista/x86_64-arista_7060x6_64pe; Broadcom "
        "Tomahawk white boxes ship their ODM's SONiC platform (generic)")
    # SONiC YANG sonic-port: mtu 1312..9216; pfcwd actions drop|forward|alert (sonic-utilities).
    capabilities = Capabilities("sonic", 9216, ("drop", "forward", "alert"), 100, 1, False,
                                True, False, "sonic-port.yang, sonic-utilities pfcwd/main.py")
    # FRR's `maximum-paths (1-MULTIPATH_NUM)`: SONiC builds FRR with --enable-multipath=256
    # (FRR's debian/rules, as SONiC used it up to 2024) and 514 since sonic-buildimage
    # src/sonic-frr/patch/0016-SONiC-ONLY-Set-multipath-to-514... (Dec 2024). The lower value
    # is the limit, so the config loads on either image.
    ecmp = EcmpLimit(256, "FRR's MULTIPATH_NUM as SONiC builds it: --enable-multipath=256, "
                          "514 on images since Dec 2024 per sonic-buildimage src/sonic-frr "
                          "patch 0016")
    # SWITCH_HASH|GLOBAL ecmp_hash takes native fields only (sonic-hash.yang hash-field:
    # SRC_IP, DST_IP, IP_PROTOCOL, L4_SRC_PORT, L4_DST_PORT, ...); no payload bytes.
    hash_fields = frozenset(FIVE_TUPLE)
    # No adaptive-routing or DLB table exists in the SONiC YANG models (sonic-buildimage
    # src/sonic-yang-models), so config_db cannot ask for it.
    adaptive = None

    def port_name(self, port: int, breakout: int, lanes: int) -> str:
        """`Ethernet<N>` with N the first lane of the port, as SONiC's port_config.ini /
        platform.json name them (N = (native-1)*lanes + k*lanes/breakout: 2x on 8 lanes gives
        Ethernet0, Ethernet4; unsplit gives Ethernet0, Ethernet8)."""
        native, k, width = split_port(port, breakout, lanes)
        return f"Ethernet{(native - 1) * lanes + k * width}"

    def device_sku(self, model: str, breakout: int) -> str | None:
        """DEVICE_METADATA hwsku: the published SKU of the model and split (data/skus.py);
        the port, buffer and QoS tables are that SKU's."""
        known = skus.models().get(model)
        sku = known.for_split(breakout) if known is not None else None
        return sku.hwsku if sku is not None else None

    def lldp_port_ids(self, model: str, breakout: int, port: int, name: str) -> tuple[str, ...]:
        """The name, and the PORT alias: SONiC's lldpmgrd configures `lldp portidsubtype local
        <alias>` from CONFIG_DB PORT.alias (sonic-buildimage dockers/docker-lldp/lldpmgrd), so a
        SONiC peer shows its alias. The name is accepted too (an operator may have reconfigured
        lldpd). The alias is the published SKU's (data/skus.py, the one place the PORT alias of
        a logical port is decided)."""
        alias = skus.port_layout(model, breakout)[port - 1][2]
        return (name, alias) if alias != name else (name,)


FACTS = SonicFacts()
