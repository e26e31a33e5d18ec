"""Telemetry target: what each platform streams for a lossless fabric, and to whom.

- RoCE: each switch platform's collector files (its `telemetry`: gnmic configs, an
  OpenTelemetry collector...), from fabgen/platforms/<os>/telemetry.py, for the fabric's
  switches of that platform, in output order.
- InfiniBand: `telemetry/infiniband_exporter.sysconfig` per plane, the options of
  treydock/infiniband_exporter naming switches from OpenSM's node-name-map.

Every collector serves Prometheus; the metric names they produce are each platform's alert
`Signals`, over which alerts.py renders the alerting rules. Credentials and certificate paths
are never written: a collector reads them from its environment.
"""

from __future__ import annotations

from fabgen.platforms.registry import outputs as platforms
from fabgen.targets import opensm, opensm_plan
from fabgen.targets.base import Artifacts, RenderContext
from fabgen.targets.ufm import UFM_NODE_NAME_MAP
from fabgen.topology.model import Fabric

__all__ = ["TARGET", "TelemetryTarget", "prometheus_ports"]


class TelemetryTarget:
    name = "telemetry"
    description = "each switch platform's telemetry collectors, InfiniBand exporter options"

    def applies(self, ctx: RenderContext) -> bool:
        return True

    def render(self, ctx: RenderContext) -> Artifacts:
        fabric = ctx.fabric
        if fabric.transport == "infiniband":
            # OpenSM's node-name-map exists only once the real GUIDs are known (guids_file)
            ufm = opensm.ufm_layout(fabric, opensm_plan.settings_from_intent(ctx.intent))
            return _infiniband(fabric, named=bool(ctx.intent.infiniband.guids_file), ufm=ufm)
        out: Artifacts = {}
        for outputs in platforms.all():
            switches = [s for s in fabric.switches if s.platform == outputs.facts.name]
            if switches:
                out.update(outputs.telemetry(ctx, switches))
        return out


TARGET = TelemetryTarget()


def prometheus_ports() -> dict[str, int]:
    """Where each platform's collector serves Prometheus."""
    return {o.facts.name: o.prometheus_port for o in platforms.all()
            if o.prometheus_port is not None}


def _infiniband(fabric: Fabric, named: bool = True, ufm: bool = False) -> Artifacts:
    """infiniband_exporter options per plane: switch and HCA port counters, with switch and
    HCA names from the plane's node-name-map as installed by the OpenSM files (UFM's
    ib-node-name-map with a UFM pair). `named`: the OpenSM target writes a node-name-map (it
    does once infiniband.guids_file names the real GUIDs); without one the exporter names
    nodes by their node description."""
    out: Artifacts = {}
    for plane in range(max(fabric.planes, 1)):
        names = UFM_NODE_NAME_MAP if ufm else f"{opensm.deploy_dir(fabric, plane)}/node-name-map"
        directory = "telemetry" if fabric.planes <= 1 else f"telemetry/plane{plane + 1}"
        head = ("# fabgen: /etc/sysconfig/infiniband_exporter for treydock/infiniband_exporter "
                "(systemd/infiniband_exporter@.service\n"
                f"# reads OPTIONS), on a host with a port in {fabric.name}"
                + (" (a UFM node: the map is UFM's)" if ufm else "")
                + (f" plane {plane + 1}" if fabric.planes > 1 else "") + ". ")
        if named:
            out[f"{directory}/infiniband_exporter.sysconfig"] = (
                head + "The node-name-map names switches\n# (infiniband_switch_info{switch=...}) "
                "and HCAs (infiniband_hca_info{hca=...}) as in the plan.\n"
                f'OPTIONS="--collector.switch --collector.hca '
                f'--ibnetdiscover.node-name-map={names}"\n')
        else:
            out[f"{directory}/infiniband_exporter.sysconfig"] = (
                head + "No node-name-map yet: OpenSM's is\n# written once "
                "infiniband.guids_file names the real GUIDs (add --ibnetdiscover.node-name-map="
                f"{names}\n# then); until then nodes carry their node "
                "descriptions.\n"
                'OPTIONS="--collector.switch --collector.hca"\n')
    return out
