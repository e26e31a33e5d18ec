#!/usr/bin/env bash
# The user's shell writes the files; sudo only runs the command that needs root.
# shellcheck disable=SC2024
# fabgen: save the SONiC show outputs `fabgen verify` reads, on the switch itself:
#   bash collect-sonic.sh [DIR]    # writes DIR/<hostname>/ (default DIR: ./saved)
# then copy DIR/<hostname>/ of every switch into one directory and run
#   fabgen verify roce-junos-sonic.yaml DIR
# Clear the counters before the test traffic so the PFC counts cover that run:
#   sonic-clear pfccounters; sonic-clear queuecounters; sonic-clear pfcwd
set -euo pipefail

dir="${1:-saved}/$(hostname)"
mkdir -p "$dir"
# LLDP neighbours
if ! show lldp table > "$dir/lldp.txt"; then
  echo "collect-sonic: LLDP neighbours failed; $dir/lldp.txt is incomplete" >&2
fi
# port state, speed, MTU
if ! show interfaces status > "$dir/interfaces.txt"; then
  echo "collect-sonic: port state, speed, MTU failed; $dir/interfaces.txt is incomplete" >&2
fi
# BGP sessions
if ! vtysh -c 'show ip bgp summary json' > "$dir/bgp.json"; then
  echo "collect-sonic: BGP sessions failed; $dir/bgp.json is incomplete" >&2
fi
# PFC frames per priority
if ! show pfc counters > "$dir/pfc.txt"; then
  echo "collect-sonic: PFC frames per priority failed; $dir/pfc.txt is incomplete" >&2
fi
# PFC watchdog storms
if ! show pfcwd stats > "$dir/pfcwd.txt"; then
  echo "collect-sonic: PFC watchdog storms failed; $dir/pfcwd.txt is incomplete" >&2
fi
# PFC watchdog settings
if ! show pfcwd config > "$dir/pfcwd-config.txt"; then
  echo "collect-sonic: PFC watchdog settings failed; $dir/pfcwd-config.txt is incomplete" >&2
fi
# BFD sessions
if ! vtysh -c 'show bfd peers json' > "$dir/bfd.json"; then
  echo "collect-sonic: BFD sessions failed; $dir/bfd.json is incomplete" >&2
fi
# routing mode and role (DEVICE_METADATA)
if ! sonic-cfggen -d --var-json DEVICE_METADATA > "$dir/device-metadata.json"; then
  echo "collect-sonic: routing mode and role (DEVICE_METADATA) failed; $dir/device-metadata.json is incomplete" >&2
fi
# the routing mode db_migrator keeps (golden_config_db.json)
if ! sudo cat /etc/sonic/golden_config_db.json > "$dir/golden.json"; then
  echo "collect-sonic: the routing mode db_migrator keeps (golden_config_db.json) failed; $dir/golden.json is incomplete" >&2
fi
# a TSA drain request (BGP_DEVICE_GLOBAL|STATE tsa_enabled)
if ! sonic-cfggen -d --var-json BGP_DEVICE_GLOBAL > "$dir/bgp-device-global.json"; then
  echo "collect-sonic: a TSA drain request (BGP_DEVICE_GLOBAL|STATE tsa_enabled) failed; $dir/bgp-device-global.json is incomplete" >&2
fi
echo "saved 10 outputs in $dir"
