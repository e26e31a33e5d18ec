#!/usr/bin/env bash
# The user's shell writes the files; sudo only runs the command that needs root.
# shellcheck disable=SC2024
# fabgen: save the Cumulus NVUE show outputs `fabgen verify` reads, on the switch itself:
#   bash collect-nvue.sh [DIR]    # writes DIR/<hostname>/ (default DIR: ./saved)
# then copy DIR/<hostname>/ of every switch into one directory and run
#   fabgen verify roce-mixed-2to1.yaml DIR
# Clear the counters before the test traffic so the PFC counts cover that run:
#   nv action clear interface counters
set -euo pipefail

dir="${1:-saved}/$(hostname)"
mkdir -p "$dir"
# port state, speed, MTU
if ! nv show interface -o json > "$dir/interfaces.json"; then
  echo "collect-nvue: port state, speed, MTU failed; $dir/interfaces.json is incomplete" >&2
fi
# LLDP neighbours
if ! sudo lldpctl -f json > "$dir/lldp.json"; then
  echo "collect-nvue: LLDP neighbours failed; $dir/lldp.json is incomplete" >&2
fi
# BGP sessions
if ! sudo vtysh -c 'show ip bgp summary json' > "$dir/bgp.json"; then
  echo "collect-nvue: BGP sessions failed; $dir/bgp.json is incomplete" >&2
fi
# BFD sessions
if ! sudo vtysh -c 'show bfd peers json' > "$dir/bfd.json"; then
  echo "collect-nvue: BFD sessions failed; $dir/bfd.json is incomplete" >&2
fi
echo "saved 4 outputs in $dir"
