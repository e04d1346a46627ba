#!/usr/bin/env bash
# Record a `vmlab real` run's limit-reclaim calls for scripts/limit-reclaim-calls.py (docs/REAL.md,
# limit29): a tracefs instance of its own holding `mm_vmscan_memcg_reclaim_begin`/`_end` and the
# `sched_switch` events of nice -20 tasks (prio 100: the workload, as the run is started), so the
# trace costs the reclaimer two events a call and a filtered switch, not perf's. As root; the run
# alone under flock /tmp/vmlab-real.lock, in its own autogroup at nice -20; the instance is
# removed afterwards.
#
#   scripts/trace-limit-reclaim.sh SCENARIO OUT [--set K=V ...]
#   # writes OUT.json (vmlab real's), OUT.out, OUT.trace; VMLAB=target/ci/vmlab DIR=/var/tmp
#   # EVENTS="vmscan/mm_vmscan_lru_shrink_inactive ..." adds events (each pass's priority);
#   # BUFFER_KB (per CPU, default 16384) for runs of many calls
set -eu
[ $# -ge 2 ] || { sed -n '2,10p' "$0"; exit 2; }
SCEN=$1 OUT=$2
shift 2
VMLAB=${VMLAB:-target/ci/vmlab} DIR=${DIR:-/var/tmp} EVENTS=${EVENTS:-} BUFFER_KB=${BUFFER_KB:-16384}
I=/sys/kernel/tracing/instances/vmlab-limit-$$
echo "$(date -u +%T) start load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
flock /tmp/vmlab-real.lock bash -c '
  set -e
  I=$1 OUT=$2 EVENTS=$3 BUFFER_KB=$4; shift 4
  mkdir "$I"
  trap "echo 0 > $I/tracing_on; echo 0 > $I/events/enable; rmdir $I" EXIT
  echo mono > "$I/trace_clock"
  echo "$BUFFER_KB" > "$I/buffer_size_kb"
  echo "prev_prio == 100 || next_prio == 100" > "$I/events/sched/sched_switch/filter"
  for e in sched/sched_switch vmscan/mm_vmscan_memcg_reclaim_begin vmscan/mm_vmscan_memcg_reclaim_end $EVENTS; do
    echo 1 > "$I/events/$e/enable"
  done
  echo 1 > "$I/tracing_on"
  setsid -w bash -c "echo -20 > /proc/self/autogroup; exec nice -n -20 \"\$@\"" _ "$@" > "$OUT.out"
  echo 0 > "$I/tracing_on"
  cat "$I/trace" > "$OUT.trace"
  if grep -q "overrun: [1-9]" "$I"/per_cpu/cpu*/stats; then echo "the trace buffer overran" >&2; exit 1; fi
' _ "$I" "$OUT" "$EVENTS" "$BUFFER_KB" "$VMLAB" real "$SCEN" --dir "$DIR" --json "$OUT.json" "$@"
echo "$(date -u +%T) end load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
