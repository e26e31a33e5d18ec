"""What fabgen knows about Junos OS Evolved on the QFX5240, as data, each fact with its source.

`FACTS` is what the core asks (contract/facts.py); nothing here renders. Sources, cited as
[tag] below and beside each constant:

  [JVD]   Juniper AI/ML multitenancy backend JVD, the QFX5240-64OD configurations Juniper
          validated: github.com/Juniper/jvd, commit 005ab344aea79475ef81c1880430a2f99808c28b,
          data_center/aidc/aiml_multitenancy_backend/configuration/conf/leaf1_qfx5240-64od.conf
          (and spine1_...), Junos OS Evolved 23.4X100-D31 (documentation/datasheet.md).
  [APSTRA] Juniper's Apstra AI-cluster JVD example, github.com/Juniper/terraform-apstra-examples
          commit 28d884d38a64fe8388b3976eed033a5a6a554490, ai-cluster-jvd/configlet_dcqcn.tf and
          configlet_dlb.tf.
  [YANG]  Juniper's published YANG for Junos OS Evolved 23.4R2 (github.com/Juniper/yang commit
          2a696d624fe5dae221cb54f7a5d131d29087d038, 23.4/23.4R2-EVO/native/conf-and-rpcs/conf/
          models): the statements, their types and ranges.
  [PFCWD] Juniper "PFC Watchdog" (Junos OS Evolved AI-ML guide, ai-ml-evo/topics/topic-map/
          pfc-watchdog.html and cos-pfc-watchdog-configure.html): QFX5240-64OD/64QD from 23.4R2;
          actions drop or forward, drop by default, one action for every port; defaults poll
          100 ms, detection 2 polls, recovery 200 ms.
  [MTU]   Juniper "Configuring the Media MTU": the interface `mtu` is the media MTU, which counts
          the Ethernet header (14 bytes untagged) and not the FCS; the protocol (`family inet`)
          MTU is the media MTU less that overhead.
  [COS]   Juniper "Class of Service" in QFX5220/QFX5230/QFX5240/QFX5241 Configuration Essentials:
          QFX5240 165.2 MB buffer, 8 unicast queues per port, 64 DSCP classifier profiles.
  [DSCP-PFC] Juniper "Configuring DSCP-based PFC for Layer 3 Untagged Traffic": a no-loss
          forwarding class with `pfc-priority`, a congestion notification profile with `input
          dscp code-point ... pfc`, and a DSCP classifier on the interface.
  [OC]    Juniper's OpenConfig models for Junos OS Evolved 23.4R2, with Juniper's augments and
          deviations (github.com/Juniper/yang 2a696d62, 23.4/23.4R2-EVO/openconfig/models,
          augments/jnx-aug-openconfig-interfaces.yang, deviations/jnx-openconfig-dev.yang):
          the gNMI paths telemetry.py subscribes.
  [PFE-LEAF] Juniper "Leaf-Level Support for PFE Sensors" (juniper.net/documentation/us/en/
          software/junos/interfaces-telemetry/topics/concept/leaf-level-support-AFT-PFE-
          sensors.html): a leaf path may be subscribed instead of a whole container or list.
  [GNMI-SUB] Juniper "gNMI Subscription" (juniper.net/documentation/us/en/software/junos/
          interfaces-telemetry/topics/concept/subscribe-rpc.html): the initial sync sends Packet
          Forwarding Engine sensors' zero counters "that would normally not show in streamed
          data due to zero suppression"; [YANG] junos-conf-services `services analytics
          zero-suppression no-zero-suppression` ("Disable zero suppression").
"""

from __future__ import annotations

from dataclasses import dataclass

from fabgen.platforms.contract.facts import FIVE_TUPLE, Capabilities, EcmpLimit, Facts, RunsOn

__all__ = [
    "BFD_MIN_INTERVAL_MS",
    "CAPABILITIES",
    "ECMP_STEPS",
    "ETHERNET_OVERHEAD",
    "FACTS",
    "GNMI_PORT",
    "HARDWARE",
    "MAX_ECMP",
    "MAX_IP_MTU",
    "MAX_MEDIA_MTU",
    "OWNED",
    "PLATFORM",
    "WATCHDOG_ACTIONS",
    "Hardware",
    "JunosFacts",
    "parent_port",
    "port_name",
]

PLATFORM = "junos"


@dataclass(frozen=True, slots=True)
class Hardware:
    """A switch model this platform renders, with what differs per model."""

    model: str  # fabgen catalog key
    name: str
    lanes: int  # electrical lanes of one native cage (OSFP: 8)
    source: str


# The switches the builder renders. QFX5240-64QD (QSFP-DD) runs the same software, but no
# QSFP-DD breakout configuration from Juniper was found, so it is not listed [JVD, COS].
HARDWARE: dict[str, Hardware] = {
    "qfx5240-64od": Hardware("qfx5240-64od", "Juniper QFX5240-64OD", 8,
                             "Juniper QFX5240 datasheet; [JVD] leaf1_qfx5240-64od.conf"),
}

# --- port names -----------------------------------------------------------------------------
# Junos OS Evolved names a QFX5240 port et-0/0/<cage> from cage 0, and a channelized (broken
# out) port et-0/0/<cage>:<sub-port> from sub-port 0; the parent et-0/0/<cage> carries
# `number-of-sub-ports N` and `speed` [JVD: et-0/0/0 `number-of-sub-ports 2; speed 400g`,
# et-0/0/0:0 and et-0/0/0:1; APSTRA: et-0/0/N:0..3 for four 200G servers].
FPC_PIC = "et-0/0/"


def _split(port: int, breakout: int) -> tuple[int, int]:
    if port < 1 or breakout < 1:
        raise ValueError(f"logical ports and breakouts count from 1, got {port}, {breakout}")
    return divmod(port - 1, breakout)


def port_name(port: int, breakout: int = 1) -> str:
    """Interface name of logical port `port` (1..radix) split `breakout` ways."""
    cage, sub = _split(port, breakout)
    return f"{FPC_PIC}{cage}" if breakout == 1 else f"{FPC_PIC}{cage}:{sub}"


def parent_port(port: int, breakout: int) -> str:
    """The channelized parent of a logical port (its cage's et-0/0/<cage>)."""
    cage, _ = _split(port, breakout)
    return f"{FPC_PIC}{cage}"


# Port speed keywords of `interfaces et-0/0/N speed` [YANG junos-conf-interfaces: enum 800g,
# 400g, 200g, 100g, ...; JVD `speed 400g`].
SPEEDS = {800: "800g", 400: "400g", 200: "200g", 100: "100g"}

# --- MTU ------------------------------------------------------------------------------------
# The largest media MTU Juniper configures on QFX5240 fabric ports [JVD: `mtu 9216` on every
# et- interface]. No Juniper document found gives the QFX5240's own maximum: 9216 is the
# largest validated value, so it is the ceiling fabgen uses.
MAX_MEDIA_MTU = 9216
ETHERNET_OVERHEAD = 14  # untagged Ethernet header, counted in the media MTU [MTU]
MAX_IP_MTU = MAX_MEDIA_MTU - ETHERNET_OVERHEAD  # 9202: the fabric (IP) MTU fabgen plans

# --- PFC watchdog ---------------------------------------------------------------------------
WATCHDOG_ACTIONS = ("drop", "forward")  # [PFCWD]; [YANG] pfc-watchdog watchdog-action enum
WATCHDOG_DEFAULT_POLL_MS = 100  # [PFCWD]
WATCHDOG_DEFAULT_DETECTION_POLLS = 2  # [PFCWD]
WATCHDOG_DEFAULT_RECOVERY_MS = 200  # [PFCWD]
# poll-interval and recovery are uint16 milliseconds, detection a uint32 count of polls
# [YANG]. Juniper documents no narrower range for the QFX5240 that was found here.
WATCHDOG_MAX_MS = 65535

# --- underlay -------------------------------------------------------------------------------
# `routing-options maximum-ecmp` takes these values only [YANG enum 16 .. 512]. Juniper
# publishes no QFX5240 ECMP group limit that was found; 512 is the schema's ceiling, not a
# measured hardware limit (the package docstring says so).
ECMP_STEPS = (16, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448, 480, 512)
MAX_ECMP = ECMP_STEPS[-1]
# BFD on the fabric BGP group: Juniper's AI JVD runs `bfd-liveness-detection minimum-interval
# 1000; multiplier 3` on the underlay [JVD]. fabgen takes the intent's timers; this is the
# interval below which no Juniper QFX5240 configuration was found, kept for the report.
BFD_MIN_INTERVAL_MS = 1000

# --- telemetry ------------------------------------------------------------------------------
# gRPC (gNMI dial-in) port: Juniper's AI JVD serves `system services extension-service
# request-response grpc ssl port 32767` [JVD]. Junos has no default for it that was found
# documented: the port is whatever that statement sets, and 32767 is Juniper's own choice.
GNMI_PORT = 32767

# --- what fabgen owns in a running configuration -------------------------------------------
# The statements fabgen's render replaces on a switch; everything else (system login,
# services, the management interface and instance, SNMP, syslog, ...) is the operator's and
# is carried over from the running configuration. Paths of statement names; `*` matches the
# rest of a name. A backup or diff of "fabgen's part" is these sections.
OWNED: tuple[tuple[str, ...], ...] = (
    ("system", "host-name"),
    ("services", "analytics", "zero-suppression"),
    ("interfaces", "et-*"),
    ("interfaces", "lo0"),
    ("class-of-service",),
    ("forwarding-options", "hash-key"),
    ("forwarding-options", "enhanced-hash-key"),
    ("policy-options", "policy-statement fabgen-*"),
    ("policy-options", "prefix-list fabgen-*"),
    ("routing-options", "router-id"),
    ("routing-options", "autonomous-system"),
    ("routing-options", "forwarding-table"),
    ("routing-options", "maximum-ecmp"),
    ("protocols", "bgp"),
    ("protocols", "lldp"),
)


# The QFX5240's limits as the core asks them (contract/facts.py).
CAPABILITIES = Capabilities(
    "junos", MAX_IP_MTU, WATCHDOG_ACTIONS,
    # The plan's detection time becomes a whole number of polls (`detection`), so it must be
    # a multiple of the poll interval; 1 ms is the unit of `poll-interval` [YANG].
    1, 1,
    # Junos schedules a strict-high queue before the others whatever its number [JVD: CNP on
    # queue 3 strict-high below NO-LOSS on queue 4].
    False,
    True,  # `recovery` [PFCWD]
    # `commit confirmed <minutes>` then `commit` (napalm junos: revert_in in whole minutes).
    True,
    "Juniper AI JVD QFX5240-64OD configs (Juniper/jvd 005ab344); Juniper 23.4R2-EVO YANG; "
    "Juniper PFC watchdog and media MTU documentation")


class JunosFacts(Facts):
    name = PLATFORM
    title = "Juniper Junos OS Evolved"
    short = "Junos"
    words = ("junos",)
    runs_on = RunsOn(("Juniper",), "Juniper QFX switches",
                     "Junos OS Evolved runs on Juniper's own switches (QFX5240 datasheet)")
    capabilities = CAPABILITIES
    ecmp = EcmpLimit(MAX_ECMP, "the 23.4R2-EVO YANG's `maximum-ecmp` ceiling (no QFX5240 "
                               "ECMP group limit is published)")
    # `forwarding-options hash-key family inet layer-3; layer-4` [JVD]: the 5-tuple; Junos
    # selects header layers, not single fields, so fabgen offers exactly the 5-tuple.
    hash_fields = frozenset(FIVE_TUPLE)
    # `forwarding-options enhanced-hash-key ecmp-dlb flowlet` [JVD, APSTRA configlet_dlb.tf]:
    # flowlet dynamic load balancing keeps a flow's packets in order.
    adaptive = "flowlet dynamic load balancing (ecmp-dlb flowlet)"
    adaptive_reorders = False

    def port_name(self, port: int, breakout: int, lanes: int) -> str:
        """et-0/0/<cage>[:<sub-port>]; the lanes of a cage do not enter Junos's names."""
        return port_name(port, breakout)


FACTS = JunosFacts()
