"""OpenSM target: each subnet manager's files, and the files they share.

Per plane (each InfiniBand plane is its own subnet with its own subnet managers; a fabric of
several planes gets infiniband/plane<N>/; an InfiniBand storage network, a subnet of its own,
infiniband/storage/):

- plain OpenSM hosts (`infiniband.management.kind: opensm`, `sm_host`, several planes):
  `<sm host>/opensm.conf` for each host that runs a subnet manager, binding its port by `guid`
  with priorities master > standby (a plain `opensm.conf` when the intent plans no SM host),
  and beside them `partitions.conf`, `qos-policy.conf`, with SHARP `sharp_am.cfg` (master
  only), for /etc/opensm;
- a UFM HA pair (`kind: ufm`, the default): `ufm/` holds one configuration for both nodes at
  UFM's paths (fabgen.targets.ufm): the options for UFM's opensm.conf, the tenants as
  partitions.conf.user_ext, qos-policy.conf, ib-node-name-map, with SHARP sharp_am.cfg's
  options, and `ufm-setup.sh`, which writes them (and gv.cfg's settings) into UFM's tree and
  checks them;
- `check-routing.sh`, run on the master once the subnet is up: did OpenSM route with the
  planned engine (no silent fallback), is the planned port master, are SL2VL/VLArb as planned;
- with real GUIDs only (`infiniband.guids_file`, an ibnetdiscover of the fabric): the
  `root_guids.txt` OpenSM's ftree and updn read, ftree's `cn_guids.txt`, and the node-name
  map. Without them no GUID file is written at all, and the report's bring-up section says how
  to discover the fabric and re-render.

Values come from opensm_files.opensm_data(); the templates under templates/opensm/ only lay
them out. Paths inside opensm.conf are the deployment paths.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from fabgen import templating
from fabgen.targets.base import Artifacts, RenderContext
from fabgen.targets.ibnetdiscover import GuidPlan, guid_plan, render_topology
from fabgen.targets.opensm_files import opensm_data
from fabgen.targets.opensm_partitions import Partition, partitions
from fabgen.targets.opensm_plan import OpenSMSettings, settings_from_intent
from fabgen.targets.opensm_sms import (
    DEPLOY_DIR,
    OUT_DIR,
    SmPort,
    deploy_dir,
    guid_plan_for,
    log_file,
    out_dir,
    real_guids,
    sm_ports,
    ufm_layout,
)
from fabgen.topology.build import extra_intent
from fabgen.topology.index import FabricIndex
from fabgen.topology.model import Fabric

__all__ = [
    "DEPLOY_DIR",
    "OUT_DIR",
    "TARGET",
    "TOPOLOGY_TARGET",
    "IbTopologyTarget",
    "OpenSMTarget",
    "Partition",
    "SmPort",
    "deploy_dir",
    "guid_plan_for",
    "log_file",
    "opensm_data",
    "out_dir",
    "partitions",
    "plane_files",
    "real_guids",
    "render_opensm",
    "render_topologies",
    "sm_ports",
    "ufm_layout",
]

# Another subnet's directory inside this one's (infiniband/storage/, infiniband/plane2/).
_DEEPER = re.compile(r"^(storage|plane[0-9]+)/")

_TEMPLATES = {
    "opensm.conf": "opensm/opensm.conf.j2",
    "root_guids.txt": "opensm/guids.txt.j2",
    "cn_guids.txt": "opensm/guids.txt.j2",
    "partitions.conf": "opensm/partitions.conf.j2",
    "qos-policy.conf": "opensm/qos-policy.conf.j2",
    "node-name-map": "opensm/node-name-map.j2",
    "sharp_am.cfg": "opensm/sharp_am.cfg.j2",
    "check-routing.sh": "opensm/check-routing.sh.j2",
    "ufm-setup.sh": "opensm/ufm-setup.sh.j2",
    "appliance.cli": "opensm/appliance.cli.j2",
}


def _render_plane(data: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    ufm = data["ufm"]
    at = "ufm/" if ufm else ""
    for conf in data["confs"]:
        out[conf["path"]] = templating.render(_TEMPLATES["opensm.conf"], **data,
                                              sections=conf["sections"], host=conf["host"])
    if data["roots"]:
        out[f"{at}root_guids.txt"] = templating.render(
            _TEMPLATES["root_guids.txt"], **data,
            what="root switch node GUIDs (ftree/updn roots)", guids=data["roots"])
    if data["compute_nodes"]:
        out[f"{at}cn_guids.txt"] = templating.render(
            _TEMPLATES["cn_guids.txt"], **data,
            what="compute-node port GUIDs (ftree cn_guid_file)", guids=data["compute_nodes"])
    if not ufm:
        out["partitions.conf"] = templating.render(_TEMPLATES["partitions.conf"], **data)
    elif data["partitions"]:
        out["ufm/partitions.conf.user_ext"] = templating.render(
            _TEMPLATES["partitions.conf"], **data)
    out[f"{at}qos-policy.conf"] = templating.render(_TEMPLATES["qos-policy.conf"], **data)
    if data["node_names"]:
        out["ufm/ib-node-name-map" if ufm else "node-name-map"] = templating.render(
            _TEMPLATES["node-name-map"], **data)
    if data["sharp"]:
        out[f"{at}sharp_am.cfg"] = templating.render(_TEMPLATES["sharp_am.cfg"], **data)
    if data["setup"]:
        out["ufm/ufm-setup.sh"] = templating.render(_TEMPLATES["ufm-setup.sh"], **data)
    if data["appliance"]:
        out["ufm/appliance.cli"] = templating.render(_TEMPLATES["appliance.cli"], **data,
                                                     hosts=data["appliance"]["hosts"],
                                                     blocks=data["appliance"]["blocks"])
    out["check-routing.sh"] = templating.render(_TEMPLATES["check-routing.sh"], **data)
    return out


def render_opensm(index: FabricIndex, guids: GuidPlan | None, settings: OpenSMSettings
                  ) -> Artifacts:
    """Every plane's OpenSM files, {"infiniband[/plane<N>]/<file>": text}.

    index: the render's index of the fabric. guids: the real fabric's GUIDs (from an
    ibnetdiscover), or None when they are not known: then no file names a GUID the intent does
    not give.
    """
    fabric = index.fabric
    if fabric.transport != "infiniband":
        raise ValueError(f"fabric {fabric.name!r} is {fabric.transport}, not infiniband")
    files: Artifacts = {}
    for plane in range(max(fabric.planes, 1)):
        prefix = out_dir(fabric, plane)
        for name, text in _render_plane(opensm_data(index, guids, settings, plane)).items():
            files[f"{prefix}/{name}"] = text
    return files


def render_topologies(fabric: Fabric, guids: GuidPlan | None = None) -> Artifacts:
    """The ibnetdiscover-format topology of each plane (what ibsim loads): with the real GUIDs
    when known, else fabgen's simulation plan (said so in the file's header)."""
    plan = guids if guids is not None else guid_plan(fabric)
    real = guids is not None
    if fabric.planes <= 1:
        return {f"{out_dir(fabric, 0)}/topology.ibnet": render_topology(fabric, plan,
                                                                        real_guids=real)}
    return {f"{out_dir(fabric, p)}/topology.ibnet": render_topology(fabric, plan, plane=p,
                                                                    real_guids=real)
            for p in range(fabric.planes)}


# --------------------------------------------------------------------------- targets


def _ib_storage(ctx: RenderContext) -> Fabric | None:
    """The separate InfiniBand storage network, a subnet of its own, if the intent has one."""
    return next((x for x in ctx.fabric.extras
                 if x.role == "storage" and x.transport == "infiniband"), None)


class OpenSMTarget:
    name = "opensm"
    description = ("infiniband/: UFM's files (ufm/) or each OpenSM host's opensm.conf, "
                   "partitions, qos-policy.conf, check-routing.sh, sharp_am.cfg; root/cn GUID "
                   "files and node-name map from real GUIDs (per plane); infiniband/storage/ "
                   "for an InfiniBand storage network")

    def applies(self, ctx: RenderContext) -> bool:
        return ctx.fabric.transport == "infiniband" or _ib_storage(ctx) is not None

    def render(self, ctx: RenderContext) -> Artifacts:
        files: Artifacts = {}
        if ctx.fabric.transport == "infiniband":
            files.update(render_opensm(ctx.index, real_guids(ctx),
                                       settings_from_intent(ctx.intent)))
        storage = _ib_storage(ctx)
        if storage is not None:
            # Its own SM hosts and settings (no tenants, no SHARP); GUIDs not known: no
            # guids_file names the storage subnet's.
            files.update(render_opensm(ctx.index.extras["storage"], None,
                                       settings_from_intent(extra_intent(ctx.intent,
                                                                         "storage"))))
        return files


class IbTopologyTarget:
    name = "ibtopology"
    description = ("infiniband/topology.ibnet: the planned fabric in ibnetdiscover format "
                   "(ibsim); infiniband/storage/topology.ibnet for an InfiniBand storage network")

    def applies(self, ctx: RenderContext) -> bool:
        return ctx.fabric.transport == "infiniband" or _ib_storage(ctx) is not None

    def render(self, ctx: RenderContext) -> Artifacts:
        files: Artifacts = {}
        if ctx.fabric.transport == "infiniband":
            files.update(render_topologies(ctx.fabric, real_guids(ctx)))
        storage = _ib_storage(ctx)
        if storage is not None:
            files.update(render_topologies(storage))
        return files


TARGET = OpenSMTarget()
TOPOLOGY_TARGET = IbTopologyTarget()


def plane_files(files: Mapping[str, str], fabric: Fabric, plane: int) -> dict[str, str]:
    """One plane's rendered files by their path under the plane's directory
    ({"ufm01/opensm.conf": ..., "partitions.conf": ...}), e.g. to install them; a deeper
    directory's (plane<N>/, storage/) are not the plane's."""
    prefix = out_dir(fabric, plane) + "/"
    return {path[len(prefix):]: text for path, text in files.items() if path.startswith(prefix)
            and not _DEEPER.match(path[len(prefix):])}
