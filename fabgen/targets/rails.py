"""Rails table: which adapter port of which compute node lands on which leaf, for rail validation.

A rail-optimized fabric works only when rail r of every node of a unit is on rail leaf r; a node
with two cables swapped still links up and routes, just slower and across the spines. During
bring-up the table is checked against what each port sees (ibnetdiscover / ibdiagnet on
InfiniBand, LLDP on Ethernet): one row per compute port, in node order, with the leaf port by the
name the leaf's platform gives it (the cabling sheet's names) and, on InfiniBand, by panel name
(the ibdm topology file's names). `host_panel` and `leaf_cage` are where the cable plugs in on
each chassis, as the cabling sheet's a_panel and z_panel (`OSFP4 P2`, `cage 1 port 1`; empty
where unknown). Plane and rail are 0-based as in cabling.csv.
"""

from __future__ import annotations

import csv
import io

from fabgen.catalog.ports import switch_panel
from fabgen.targets.base import Artifacts, RenderContext
from fabgen.targets.ibdm import panel_name
from fabgen.topology.groups import compute_hosts
from fabgen.topology.index import FabricIndex

__all__ = ["COLUMNS", "PATH", "TARGET", "RailsTarget", "rails_csv", "rails_rows"]

PATH = "bringup/rails.csv"
COLUMNS = ("host", "leaf_group", "nic", "nic_port", "rdma_device", "netdev", "host_panel",
           "rail", "plane", "leaf", "leaf_port", "leaf_panel", "leaf_cage")


def rails_rows(index: FabricIndex) -> list[tuple[str | int, ...]]:
    group_of = index.groups.group_of()
    ib = index.fabric.transport == "infiniband"
    rows: list[tuple[str | int, ...]] = []
    for host in compute_hosts(index.fabric):
        ends = {link.a_port: (link.z_device, link.z_port) for link in index.links(host.name)
                if link.kind == "node-leaf" and link.a_device == host.name}
        for hp in host.ports:
            leaf_name, port = ends[hp.dev]
            leaf = index.switches[leaf_name]
            rows.append((host.name, group_of[host.name].name, hp.nic, hp.port, hp.rdma_device,
                         hp.netdev, hp.panel, hp.rail, hp.plane, leaf.name,
                         index.port_name(leaf, port), panel_name(leaf, port) if ib else "",
                         switch_panel(leaf, port)))
    return rows


def rails_csv(index: FabricIndex) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows(rails_rows(index))
    return out.getvalue()


class RailsTarget:
    name = "rails"
    description = "bringup/rails.csv: every compute port's rail, plane and leaf port"

    def applies(self, ctx: RenderContext) -> bool:
        return bool(ctx.fabric.hosts)

    def render(self, ctx: RenderContext) -> Artifacts:
        return {PATH: rails_csv(ctx.index)}


TARGET = RailsTarget()
