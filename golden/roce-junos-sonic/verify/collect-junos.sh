#!/usr/bin/env bash
# The user's shell writes the files; sudo only runs the command that needs root.
# shellcheck disable=SC2024
# fabgen: save the Juniper Junos OS Evolved show outputs `fabgen verify` reads, on the switch itself:
#   bash collect-junos.sh [DIR]    # writes DIR/<hostname>/ (default DIR: ./saved)
# then copy DIR/<hostname>/ of every switch into one directory and run
#   fabgen verify roce-junos-sonic.yaml DIR
# Clear the counters before the test traffic so the PFC counts cover that run:
#   cli -c 'clear interfaces statistics all'
set -euo pipefail

dir="${1:-saved}/$(hostname)"
mkdir -p "$dir"
# BGP sessions
if ! cli -c 'show bgp summary | display json' > "$dir/bgp.json"; then
  echo "collect-junos: BGP sessions failed; $dir/bgp.json is incomplete" >&2
fi
# BFD sessions
if ! cli -c 'show bfd session | display json' > "$dir/bfd.json"; then
  echo "collect-junos: BFD sessions failed; $dir/bfd.json is incomplete" >&2
fi
# port state, speed, MTU
if ! cli -c 'show interfaces et-* | display json' > "$dir/interfaces.json"; then
  echo "collect-junos: port state, speed, MTU failed; $dir/interfaces.json is incomplete" >&2
fi
# LLDP neighbours
if ! cli -c 'show lldp neighbors | display json' > "$dir/lldp.json"; then
  echo "collect-junos: LLDP neighbours failed; $dir/lldp.json is incomplete" >&2
fi
# PFC and the PFC watchdog of each congestion notification profile
if ! cli -c 'show class-of-service congestion-notification | display json' > "$dir/cos.json"; then
  echo "collect-junos: PFC and the PFC watchdog of each congestion notification profile failed; $dir/cos.json is incomplete" >&2
fi
# the congestion notification profile of each port
if ! cli -c 'show class-of-service interface | display json' > "$dir/cos-interfaces.json"; then
  echo "collect-junos: the congestion notification profile of each port failed; $dir/cos-interfaces.json is incomplete" >&2
fi
echo "saved 6 outputs in $dir"
