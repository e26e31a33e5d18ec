#!/usr/bin/env bash
# fabgen: check the EOS switches after a window of traffic: counters compared, then the catalog.
#   FABGEN_INTENT=INTENT.yaml bash verify/anta-check.sh INVENTORY [TRAFFIC COMMAND ...]
# 1. snapshots the counters of every EOS switch of INVENTORY with ANTA's `anta exec snapshot`
#    (the commands of anta-counters.yaml: PFC frames, lossless-queue drops, and ECN marks when bounded);
# 2. runs TRAFFIC COMMAND (the runbook's RoCE test, an NCCL all-reduce...) or, without one,
#    waits 300 s (monitoring.verify_window_s) while production traffic flows;
# 3. snapshots again and runs `fabgen verify-counters` on the two snapshots with the seconds
#    from the start of the first to the end of the second: per port, the increase of PFC frames
#    each way within 1192/s x those seconds (the PfcPauseRate alert's rate), no packet
#    dropped by the lossless queue; no counter needs clearing, and any window length holds;
# 4. runs the catalog (`anta nrfu`). Exit status: 0 when both passed, else the first failure's.
set -euo pipefail

inventory="${1:?usage: FABGEN_INTENT=INTENT.yaml anta-check.sh INVENTORY [TRAFFIC COMMAND ...]}"
shift
intent="${FABGEN_INTENT:?set FABGEN_INTENT to the intent this render was made from}"
here="$(cd "$(dirname "$0")" && pwd)"
snap="$(mktemp -d)"
trap 'rm -rf "$snap"' EXIT

start="$(date +%s)"
anta exec snapshot --inventory "$inventory" --commands-list "$here/anta-counters.yaml" --output "$snap/before"
if [ "$#" -gt 0 ]; then
  "$@"
else
  sleep 300
fi
anta exec snapshot --inventory "$inventory" --commands-list "$here/anta-counters.yaml" --output "$snap/after"
elapsed=$(( $(date +%s) - start + 1 ))

rc=0
fabgen verify-counters "$intent" "$snap/before" "$snap/after" --elapsed "$elapsed" || rc=$?
anta nrfu --catalog "$here/anta-catalog.yaml" --inventory "$inventory" table || {
  status=$?
  [ "$rc" -ne 0 ] || rc=$status
}
exit "$rc"
