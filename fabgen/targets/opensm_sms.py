"""Where a subnet's managers run and where their files go: the real GUIDs (from
`infiniband.guids_file`), each subnet manager's port, and the output and deployment paths of
plain OpenSM hosts and of a UFM HA pair.

A UFM pair is not two OpenSM hosts: UFM's HA keeps one configuration, replicated to the standby
(UFM Enterprise User Manual, Configure General Settings in gv.cfg: "When running UFM in HA mode,
the gv.cfg file is replicated to the standby server"; /opt/ufm/files sits on the DRBD volume
UFM-HA replicates, `ha_data_drbd` in `show ufm status`), and UFM and its SM run on the active
node only (pacemaker's `ufm-enterprise` resource, started on the DRBD master), so the standby
runs no SM. `ufm_layout` says when fabgen renders that one configuration (fabgen.targets.ufm)
instead of one opensm.conf per host.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fabgen import user_files
from fabgen.errors import FabgenError
from fabgen.targets.base import RenderContext
from fabgen.targets.ibnetdiscover import MAX_BYTES as IBND_MAX_BYTES
from fabgen.targets.ibnetdiscover import GuidPlan, guids_from_ibnetdiscover
from fabgen.targets.opensm_plan import OpenSMSettings, settings_from_intent
from fabgen.targets.ufm import UFM_OPENSM_DIR, UFM_SM_LOG
from fabgen.topology.index import FabricIndex
from fabgen.topology.model import Fabric, Host, HostPort

__all__ = [
    "DEFAULT_LOG",
    "DEPLOY_DIR",
    "OUT_DIR",
    "SmPort",
    "deploy_dir",
    "guid_plan_for",
    "log_file",
    "out_dir",
    "real_guids",
    "sm_ports",
    "ufm_layout",
]

# Where the operator installs the files on plain subnet-manager hosts (Debian's and NVIDIA's
# OpenSM configuration directory); a fabric of several planes gets DEPLOY_DIR/plane<N>.
DEPLOY_DIR = "/etc/opensm"
OUT_DIR = "infiniband"
# OpenSM's default log (opensm(8) -f), where check-routing.sh looks unless told otherwise.
DEFAULT_LOG = "/var/log/opensm.log"


def ufm_layout(fabric: Fabric, settings: OpenSMSettings) -> bool:
    """Whether the subnet's SM is a UFM HA pair fabgen renders as UFM (one configuration at
    UFM's paths): dedicated `ufm` hosts on a one-plane subnet. Each plane of a multi-plane fabric
    is a subnet of its own; there the SM hosts keep one OpenSM configuration per host and
    plane."""
    return settings.management == "ufm" and bool(fabric.sm_hosts) and fabric.planes <= 1


# --------------------------------------------------------------------------- GUIDs


def guid_plan_for(fabric: Fabric, settings: OpenSMSettings, *,
                  base: Path | None = None) -> GuidPlan | None:
    """The real GUIDs, read from settings.guids_files, or None when the intent names none.

    Relative file names are taken from `base` (the intent's directory) when given. fabgen's
    deterministic plan (ibnetdiscover.guid_plan) never reaches an OpenSM file: it only numbers
    the simulated fabric of topology.ibnet.
    """
    if not settings.guids_files:
        return None
    texts = []
    inside = base if base is not None else Path(".")
    for i, name in enumerate(settings.guids_files):
        path = Path(name)
        if base is not None and not path.is_absolute():
            path = base / path
        # Bounded, not a FIFO or device, UTF-8, and not through a link out of the directory.
        texts.append(user_files.read_text(path, what="an ibnetdiscover output",
                                          limit=IBND_MAX_BYTES, inside=inside,
                                          loc=("infiniband", "guids_file", i)))
    try:
        return guids_from_ibnetdiscover("\n".join(texts), fabric)
    except ValueError as exc:
        raise FabgenError.single(str(exc), loc=("infiniband", "guids_file")) from None


def real_guids(ctx: RenderContext) -> GuidPlan | None:
    """The render's real GUIDs (guid_plan_for): the OpenSM, topology, ibdm and bring-up
    targets all need them, and the files are read and parsed once per render."""
    return ctx.derived(_read_real_guids)


def _read_real_guids(ctx: RenderContext) -> GuidPlan | None:
    return guid_plan_for(ctx.fabric, settings_from_intent(ctx.intent), base=ctx.base_dir)


# --------------------------------------------------------------------------- subnet managers


@dataclass(frozen=True, slots=True)
class SmPort:
    """One subnet manager of a plane: its host, the port it binds, where that port is cabled."""

    host: str
    port: HostPort
    leaf: str  # the leaf its port is cabled to
    leaf_port: int
    priority: int  # sm_priority: the master's is the highest
    guid: int | None  # the port GUID it binds (`guid`), None when nothing names it yet
    dedicated: bool  # a management host, not a compute node


def _port_on(host: Host, plane: int | None) -> HostPort | None:
    return next((hp for hp in host.ports if plane is None or hp.plane == plane), None)


def sm_ports(index: FabricIndex, guids: GuidPlan | None, settings: OpenSMSettings,
             plane: int | None = None) -> tuple[SmPort, ...]:
    """The subnet managers of a plane, master first: the dedicated management hosts (priority
    sm_priority, one less for each standby, so the election never falls back to comparing
    GUIDs), else the compute host `sm_host`, else none. Each binds its first port on the plane;
    its GUID comes from the discovered fabric, else from the intent's `port_guids`. `index`:
    the render's index of the fabric, which says where each host port is cabled."""
    fabric = index.fabric
    if fabric.sm_hosts:
        hosts: list[tuple[Host, bool]] = [(h, True) for h in fabric.sm_hosts]
    elif settings.sm_host is not None:
        host = next((h for h in fabric.hosts if h.name == settings.sm_host), None)
        if host is None:
            raise FabgenError.single(f"sm_host {settings.sm_host!r} is not a host of the fabric",
                                     loc=("infiniband", "sm_host"))
        hosts = [(host, False)]
    else:
        return ()
    given = {h.name: h.port_guids for h in settings.sm_hosts}
    out = []
    for i, (host, dedicated) in enumerate(hosts):
        port = _port_on(host, plane)
        if port is None:
            raise FabgenError.single(f"{host.name} has no port on plane {(plane or 0) + 1}",
                                     loc=("infiniband", "sm_host"))
        if guids is not None:
            guid: int | None = guids.port_guids[(host.name, port.dev)]
        else:
            known = given.get(host.name, ())
            guid = known[port.dev] if port.dev < len(known) else None
        leaf, leaf_port = next((link.z_device, link.z_port) for link in index.links(host.name)
                               if link.a_device == host.name and link.a_port == port.dev)
        out.append(SmPort(host.name, port, leaf, leaf_port, max(settings.sm_priority - i, 0),
                          guid, dedicated))
    return tuple(out)


# --------------------------------------------------------------------------- paths


def out_dir(fabric: Fabric, plane: int) -> str:
    """Where a plane's files go in the output: infiniband/ or infiniband/plane<N>/ (1-based);
    a separate InfiniBand storage network's under infiniband/storage/."""
    base = OUT_DIR if fabric.role == "compute" else f"{OUT_DIR}/{fabric.role}"
    return base if fabric.planes <= 1 else f"{base}/plane{plane + 1}"


def deploy_dir(fabric: Fabric, plane: int, base: str = DEPLOY_DIR, *, ufm: bool = False) -> str:
    """Where a plane's files are installed: /etc/opensm or /etc/opensm/plane<N>; UFM's own
    OpenSM directory for a UFM pair."""
    if ufm:
        return UFM_OPENSM_DIR
    return base if fabric.planes <= 1 else f"{base}/plane{plane + 1}"


def log_file(fabric: Fabric, plane: int, *, ufm: bool = False) -> str:
    """The OpenSM log of a plane: UFM's, the default one, or one per plane when SMs share a
    host."""
    if ufm:
        return UFM_SM_LOG
    return DEFAULT_LOG if fabric.planes <= 1 else f"/var/log/opensm-plane{plane + 1}.log"
