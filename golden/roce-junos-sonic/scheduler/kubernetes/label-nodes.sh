#!/bin/sh
# shellcheck disable=SC2086  # $KUBECTL is split on purpose: it may carry flags
# Label the compute nodes of roce-junos-sonic with their network tiers (rendered by fabgen), for
# topology-aware scheduling: kueue-topology.yaml, kai-topology.yaml and the HyperNodes read them.
#   network.topology.nvidia.com/spine: the node's spine tier
#   network.topology.nvidia.com/leaf: the node's leaf tier
# One command per leaf group: its nodes share every value. --overwrite replaces older values.
# KUBECTL picks another binary or adds flags, e.g. KUBECTL="kubectl --context prod".
set -eu
KUBECTL="${KUBECTL:-kubectl}"

# su1 (under spines)
$KUBECTL label --overwrite node node001 node002 node003 node004 node005 node006 node007 node008 node009 node010 node011 node012 node013 node014 node015 node016 node017 node018 node019 node020 node021 node022 node023 node024 node025 node026 node027 node028 node029 node030 node031 node032 \
    network.topology.nvidia.com/spine=spines network.topology.nvidia.com/leaf=su1
