#!/bin/sh
# shellcheck disable=SC2086  # $KUBECTL is split on purpose: it may carry flags
# Label the compute nodes of roce-256 with their network tiers (rendered by fabgen), for
# topology-aware scheduling: kueue-topology.yaml, kai-topology.yaml and the HyperNodes read them.
#   network.topology.nvidia.com/spine: the node's spine tier
#   network.topology.nvidia.com/leaf: the node's leaf tier
# One command per leaf group: its nodes share every value. --overwrite replaces older values.
# KUBECTL picks another binary or adds flags, e.g. KUBECTL="kubectl --context prod".
set -eu
KUBECTL="${KUBECTL:-kubectl}"

# su1 (under spines)
$KUBECTL label --overwrite node gpu0001 gpu0002 gpu0003 gpu0004 gpu0005 gpu0006 gpu0007 gpu0008 gpu0009 gpu0010 gpu0011 gpu0012 gpu0013 gpu0014 gpu0015 gpu0016 gpu0017 gpu0018 gpu0019 gpu0020 gpu0021 gpu0022 gpu0023 gpu0024 gpu0025 gpu0026 gpu0027 gpu0028 gpu0029 gpu0030 gpu0031 gpu0032 \
    network.topology.nvidia.com/spine=spines network.topology.nvidia.com/leaf=su1
