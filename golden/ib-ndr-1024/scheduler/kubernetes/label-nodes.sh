#!/bin/sh
# shellcheck disable=SC2086  # $KUBECTL is split on purpose: it may carry flags
# Label the compute nodes of ib-ndr-1024 with their network tiers (rendered by fabgen), for
# topology-aware scheduling: kueue-topology.yaml, kai-topology.yaml and the HyperNodes read them.
#   network.topology.nvidia.com/spine: the node's spine tier
#   network.topology.nvidia.com/leaf: the node's leaf tier
# One command per leaf group: its nodes share every value. --overwrite replaces older values.
# KUBECTL picks another binary or adds flags, e.g. KUBECTL="kubectl --context prod".
set -eu
KUBECTL="${KUBECTL:-kubectl}"

# su1 (under spines)
$KUBECTL label --overwrite node dgx001 dgx002 dgx003 dgx004 dgx005 dgx006 dgx007 dgx008 dgx009 dgx010 dgx011 dgx012 dgx013 dgx014 dgx015 dgx016 dgx017 dgx018 dgx019 dgx020 dgx021 dgx022 dgx023 dgx024 dgx025 dgx026 dgx027 dgx028 dgx029 dgx030 dgx031 \
    network.topology.nvidia.com/spine=spines network.topology.nvidia.com/leaf=su1

# su2 (under spines)
$KUBECTL label --overwrite node dgx032 dgx033 dgx034 dgx035 dgx036 dgx037 dgx038 dgx039 dgx040 dgx041 dgx042 dgx043 dgx044 dgx045 dgx046 dgx047 dgx048 dgx049 dgx050 dgx051 dgx052 dgx053 dgx054 dgx055 dgx056 dgx057 dgx058 dgx059 dgx060 dgx061 dgx062 dgx063 \
    network.topology.nvidia.com/spine=spines network.topology.nvidia.com/leaf=su2

# su3 (under spines)
$KUBECTL label --overwrite node dgx064 dgx065 dgx066 dgx067 dgx068 dgx069 dgx070 dgx071 dgx072 dgx073 dgx074 dgx075 dgx076 dgx077 dgx078 dgx079 dgx080 dgx081 dgx082 dgx083 dgx084 dgx085 dgx086 dgx087 dgx088 dgx089 dgx090 dgx091 dgx092 dgx093 dgx094 dgx095 \
    network.topology.nvidia.com/spine=spines network.topology.nvidia.com/leaf=su3

# su4 (under spines)
$KUBECTL label --overwrite node dgx096 dgx097 dgx098 dgx099 dgx100 dgx101 dgx102 dgx103 dgx104 dgx105 dgx106 dgx107 dgx108 dgx109 dgx110 dgx111 dgx112 dgx113 dgx114 dgx115 dgx116 dgx117 dgx118 dgx119 dgx120 dgx121 dgx122 dgx123 dgx124 dgx125 dgx126 dgx127 \
    network.topology.nvidia.com/spine=spines network.topology.nvidia.com/leaf=su4
