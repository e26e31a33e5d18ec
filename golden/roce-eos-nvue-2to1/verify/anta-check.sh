#!/usr/bin/env bash
# fabgen: run verify/anta-catalog.yaml over a window of traffic on freshly cleared counters.
#   bash verify/anta-check.sh INVENTORY [TRAFFIC COMMAND ...]
# 1. clears the counters of every EOS switch of INVENTORY with ANTA's `anta exec
#    clear-counters` (`clear counters`, and `clear hardware counter drop` on hardware);
# 2. runs TRAFFIC COMMAND (the runbook's RoCE test, an NCCL all-reduce...) or, without one,
#    waits 300 s (monitoring.verify_window_s) while production traffic flows;
# 3. runs the catalog: no drop on the lossless queue, at most 357600 PFC frames per port
#    (the PfcPauseRate alert's rate over 300 s; monitoring.verify_pfc_frames_max sets
#    another budget for a longer test). Exit status: anta nrfu's (1 when a test failed).
set -euo pipefail

inventory="${1:?usage: anta-check.sh INVENTORY [TRAFFIC COMMAND ...]}"
shift
here="$(cd "$(dirname "$0")" && pwd)"

anta exec clear-counters --inventory "$inventory"
start="$(date +%s)"
if [ "$#" -gt 0 ]; then
  "$@"
else
  sleep 300
fi
elapsed=$(( $(date +%s) - start ))
if [ "$elapsed" -gt 300 ]; then
  echo "anta-check: the traffic ran ${elapsed} s; the PFC budget is for 300 s" >&2
fi
exec anta nrfu --catalog "$here/anta-catalog.yaml" --inventory "$inventory" table
