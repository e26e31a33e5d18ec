#!/usr/bin/env bash
# fabgen: did OpenSM bring up ib-ndr-1024 as planned? The UFM appliances
# (ufm01 or ufm02) run no shell: run it on a node of the subnet, dgx001, through its port
# mlx5_0, with UFM's OpenSM log (/opt/ufm/files/log/opensm.log on the master) copied beside it, once OpenSM
# has swept the fabric:
#   bash check-routing.sh [OPENSM_LOG]    (default opensm.log; CA=<device> to query another port)
# Read-only: it reads the OpenSM log and asks the subnet with sminfo and smpquery
# (infiniband-diags). One OK/FAIL line per check; exit 1 on any FAIL. SUBNET UP alone proves
# nothing: when ar_updn refuses the fabric, OpenSM routes it with the next engine
# (or minhop) and still comes up.
set -u

log="${1:-opensm.log}"
ca="${CA:-mlx5_0}"
via=(-P 1)
if [ -n "$ca" ]; then
    via=(-C "$ca" -P 1)
fi
engine="ar_updn"
# The tables opensm.conf asks for: VL of SL 0..15, and the low-priority VL arbitration entries.
sl2vl="0 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
vlarb_vls="0x0 0x1"
vlarb_weights="0x40 0x40"
# The port(s) the master SM may bind: either UFM node's fabric interface (empty: GUIDs not known yet).
master_guids=()
master_hosts=()
failures=0

ok() { printf 'OK    %s\n' "$*"; }
fail() { printf 'FAIL  %s\n' "$*"; failures=$((failures + 1)); }

if [ ! -r "$log" ]; then
    fail "cannot read the OpenSM log $log (give its path as the first argument)"
    exit 1
fi
if grep -q 'SUBNET UP' "$log"; then
    ok "OpenSM reported SUBNET UP"
else
    fail "no SUBNET UP in $log"
fi

# osm_ucast_mgr_process() logs "<engine> tables configured on all switches" for the engine
# that routed; the last sweep counts.
used=$(grep -o '[A-Za-z0-9_-]* tables configured on all switches' "$log" | tail -n 1 | cut -d' ' -f1)
if [ "$used" = "$engine" ]; then
    ok "routed with $engine"
else
    fail "routed with ${used:-no engine}, not $engine (routing_engine ar_updn,updn)"
fi
unknown=$(grep -o "cannot find or setup routing engine '[^']*'" "$log" | sort -u | tr '\n' ' ')
if [ -n "$unknown" ]; then
    fail "this OpenSM does not know an engine it was given (another build?): $unknown"
fi

# The master SM, as this host's port sees it.
if info=$(sminfo "${via[@]}" 2>&1); then
    case "$info" in
        *SMINFO_MASTER*) ok "master SM: ${info#sminfo: }" ;;
        *) fail "no master SM: $info" ;;
    esac
    if [ "${#master_guids[@]}" -gt 0 ]; then        found=""
        for i in "${!master_guids[@]}"; do
            case "$info" in
                *"sm guid ${master_guids[$i]},"*) found="${master_hosts[$i]} (${master_guids[$i]})" ;;
            esac
        done
        if [ -n "$found" ]; then
            ok "the master SM binds the planned port of $found"
        else
            fail "the master SM is not the planned port of ufm01 or ufm02 (${master_guids[*]})"
        fi
    fi
else
    fail "sminfo failed (${ca:-first CA} port 1): $info"
fi


# $1: what is checked; the rest: smpquery's address arguments (sl2vl, then vlarb).
check_sl2vl() {
    local what=$1 out row got rows=0
    shift
    if ! out=$(smpquery "${via[@]}" -D sl2vl "$@" 2>&1); then
        fail "smpquery sl2vl $what failed: $out"
        return
    fi
    while IFS= read -r row; do
        case "$row" in
            ports:*)
                rows=$((rows + 1))
                got=$(printf '%s' "${row#*:*:}" | tr -d '|' | tr -s ' ' | sed 's/^ //; s/ $//')
                if [ "$got" != "$sl2vl" ]; then
                    fail "SL2VL of $what, ${row%%: |*}: $got, planned $sl2vl"
                    return
                fi
                ;;
        esac
    done <<< "$out"
    if [ "$rows" -eq 0 ]; then
        fail "SL2VL of $what: no table in the reply"
    else
        ok "SL2VL of $what as planned ($rows table(s))"
    fi
}

check_vlarb() {
    local what=$1 out i
    local -a got_vls got_weights want_vls want_weights
    shift
    if ! out=$(smpquery "${via[@]}" -D vlarb "$@" 2>&1); then
        fail "smpquery vlarb $what failed: $out"
        return
    fi
    # The first VL/WEIGHT rows are the low-priority table.
    read -ra got_vls <<< "$(printf '%s\n' "$out" | awk -F'|' '/^VL /{for (i = 2; i < NF; i++) printf "%s ", $i; exit}')"
    read -ra got_weights <<< "$(printf '%s\n' "$out" | awk -F'|' '/^WEIGHT/{for (i = 2; i < NF; i++) printf "%s ", $i; exit}')"
    read -ra want_vls <<< "$vlarb_vls"
    read -ra want_weights <<< "$vlarb_weights"
    for i in "${!got_weights[@]}"; do
        if [ "$i" -lt "${#want_weights[@]}" ]; then
            if [ "${got_vls[$i]:-}" != "${want_vls[$i]}" ] || [ "${got_weights[$i]}" != "${want_weights[$i]}" ]; then
                fail "VL arbitration of $what, low entry $i: VL ${got_vls[$i]:-?} weight ${got_weights[$i]}, planned VL ${want_vls[$i]} weight ${want_weights[$i]}"
                return
            fi
        elif [ "${got_weights[$i]}" != "0x0" ]; then
            fail "VL arbitration of $what, low entry $i: weight ${got_weights[$i]}, planned none"
            return
        fi
    done
    if [ "${#got_weights[@]}" -lt "${#want_weights[@]}" ]; then
        fail "VL arbitration of $what: ${#got_weights[@]} low entries, planned ${#want_weights[@]}"
    else
        ok "VL arbitration of $what as planned (low: VLs $vlarb_vls)"
    fi
}

# -D 0 is this host's port; -D 0,1 is the switch at the other end of its cable.
check_sl2vl "this host's port" 0
check_vlarb "this host's port" 0
check_sl2vl "leaf-su1-r0 port 32" 0,1 32
check_vlarb "leaf-su1-r0 port 32" 0,1 32

if [ "$failures" -gt 0 ]; then
    printf '%d check(s) failed\n' "$failures"
    exit 1
fi
echo "all checks passed"
