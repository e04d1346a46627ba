#!/usr/bin/env bash
# Calibrate vmlab's CPU cost table against this host, for `vmlab run --host` (docs/REAL.md,
# "The cost table against the host").
#
# Micro-workloads (scenarios/calibrate/*.toml) each exercise one kernel path; each is run RUNS
# times on the host (`vmlab real`, as root, one at a time under flock /tmp/vmlab-real.lock) and
# simulated with `vmlab run --host`. Both report the workload's system time (`metrics.sys_s`: the
# processes' ru_stime on the host, their simulated kernel time in vmlab) and its memory stall
# (`pressure.some.total`: the group's memory.pressure on the host, vmlab's PSI). A workload's
# figure is linear in the cost entries, so one simulation with the solved entries as they stand
# and one with each of them 1,000 ns dearer give how many times each workload charges each entry;
# the script then solves for the entries that make the simulated figures equal the host's, every
# other entry staying as the table has it. PAIRS says which (workload:entry:figure, figure `sys`
# or `stall`); by default eleven, solved together (each workload charges the others' entries
# too):
#
#   fault-anon    system time → clear_page     (first-touch anonymous faults: what a swap-in
#                                               fault does not do)
#   read-reported system time → reported_touch (a 512 MiB file read from disk 8 s after the
#                                               set-up dropped it: its large folios take blocks
#                                               the guest has reported free by then, whose first
#                                               touch faults in the hypervisor; every probe is
#                                               simulated from the free memory its real runs met,
#                                               params.host_unreported_*. fault-reported, 3 GiB of
#                                               anonymous faults, is a check: order-0 faults use
#                                               the blocks below the reporting order first, and a
#                                               busy host has gigabytes of those)
#   read-cached   system time → copy_user_page (read() of pages in the cache: the per-page
#                                               lookup and copy to user; its least run, not
#                                               the median: see below)
#   read-tree     system time → read_pages     (read() of 2,048 small files from disk, one
#                                               readahead request each: the read path's
#                                               per-request CPU beyond the per-page copy, spent
#                                               before the device sees the request)
#   open-cached   system time → path_openat    (read() of 4,096 one-page files, once from disk
#                                               and fifteen times from the cache: what a file
#                                               costs apart from its pages — open, fstat, the
#                                               read call's setup, close)
#   read-tree-large system time → readahead_folio (read() of 2,048 files of 256 KiB from
#                                               disk: four times read-tree's pages and folios
#                                               for the same requests, so the pair separates
#                                               what a readahead batch costs per folio — its
#                                               insertion, the file system's bio building, its
#                                               completion — from what it costs per request)
#   write-new     system time → write_new_folio (write() of new files that fit, no fsync, on
#                                               a 4 KiB-folio file system, SMALLDIR: each
#                                               folio's write_begin — buffer head, delayed-block
#                                               reservation — and first dirtying in write_end)
#   read-around   system time → readaround_folio (mmap of two files touched once every
#                                               8 MiB: read-around of folios no read() consumes)
#   reclaim-around system time → remove_mapping (the same through 256 MiB: each of those
#                                               folios reclaimed again, clean and unmapped)
#   swap          memory stall → rmap_one      (512 MiB written twice through 256 MiB: reclaim's
#                                               unmapping, inside the stall)
#   swap          system time → do_swap_page   (the same probe: the swap-in fault, outside it; on
#                                               the development host after its restart of
#                                               2026-11-28 swap cost 3× vmlab's system time, and
#                                               neither entry alone fitted both figures)
#
# write_new_folio replaces dirty19's perform_write pair (write-cached → perform_write, every page
# written) since dirty27 (docs/REAL.md, "Where dirty-writer's kernel time goes"): the host's
# write path costs per folio it adds — a profile of dirty-writer's writer on a 4 KiB-folio ext4
# puts ~1,000 ns a page in write_begin's buffer head and reservation and block_commit_write's
# first dirtying, where a write over cached dirty pages (rewrite-cached) costs less than the read
# copy — and write-cached, on the development host's ext4 (large folios since 6.16), writes
# 1 MiB in a few folios, so no per-page entry fits there (its 20 runs spread 0.19–0.47 s).
# write-new is write-cached's work on SMALLDIR, a file system that takes 4 KiB folios (an ext4
# image made with `-O encrypt`, mounted from a loop device; see docs/REAL.md). Without SMALLDIR
# the pair is left out and write_new_folio keeps vmlab's 0. perform_write is not fitted by
# default; PAIRS can still name write-cached:perform_write:sys.
#
# and then simulates every workload (reclaim-file: limit reclaim of clean file pages; swap:
# swap-out and swap-in; rewrite-cached: write() over pages already in the cache; write-cached;
# the ones above)
# with the fitted table and prints simulated ÷ real, system time and memory stall. On the
# development host (docs/REAL.md, "seed 004's job") a file read from disk costs ~1 µs a page
# and ~20–30 µs a file: fitting the per-page entries alone to a small-file tree would charge a
# large file's every page its files' cost. Not
# fitted (docs/REAL.md): the system time of swap (`rmap_one`) — the swap workload's simulation
# is bimodal in its swap-ins; and reclaim-file's stall (`lru_scan`) — on a shared host that
# stall is mostly the reclaimer waiting for a CPU (0.15–0.17 s with 0.15–0.20 s of CPU wait,
# 0.012 s with 0.005 s), which is no cost of the kernel's. reclaim-file's system time stays a
# check: a page read cold and reclaimed costs this host less than one read from the cache.
#
# read-around and reclaim-around are pairs since zipf25 (docs/REAL.md, "Where zipf-file's kernel
# time goes"): on the development host 6.18 reads around in order-0 folios, and such a page costs
# its insertion (`filemap_add_folio`, the memcg charge, the workingset test, the LRU batch,
# ext4's bio building) but none of read()'s per-folio lookup, wait and put that read-tree-large's
# `readahead_folio` also holds — charged `readahead_folio`, a read-around page cost vmlab 2.8×
# the host's; and its reclaim costs per small folio what reclaim-file's large folios do not show
# (the LRU lock's isolation and putback, `__remove_mapping`, the uncharge), 2.6× what vmlab
# charged for it.
#
# rewrite-cached is no pair: it was made to fit perform_write where the copy and nothing else
# shares a page's time with it (no allocation, insertion or block reservation), but on the
# development host a write over a cached page costs 0.45–0.62 µs in all, less than the
# copy_user_page that read-cached fits and vmlab charges for it (0.64 µs), so perform_write solves
# negative there (docs/notes/history/era-6.8-dirty.md, dirty23). As a check it says how far
# vmlab's write path overcharges a cached page; write-cached's surplus is a new page's.
#
# Each solved entry absorbs whatever else its path costs on the host that vmlab does not charge
# separately: it is a fit to this host, not a measurement of one kernel function.
#
# How the fit holds up on a shared host (docs/REAL.md, "The cost table, calibrated against the
# host"):
# - Each workload runs RUNS times (default 6), the workloads in turn round by round, and each
#   probe's host figure is the median of its runs (STAT=median), as the real runs the fitted
#   table is compared with are means of runs under the same shared load; STAT=min takes the
#   least, the floor (other sessions' load only adds system time). On the development host a
#   probe's runs spread by up to 2× and its floor drifts by ~30 % within the hour, so two
#   calibrations' entries differ by 5–40 % either way (docs/REAL.md).
# - A pair may name its own statistic, `W:E:FIG:min` or `:median`, over STAT. read-cached's is
#   `min`: on the development host since its restart of 2026-11-28 its runs fall in two modes,
#   0.09-0.12 s and 0.29-0.51 s, by process (a reader of the same cached pages right after a
#   slow run copies them at the fast mode's speed; stream-hotset's hot reader, whose copies are
#   its system time, was in the fast mode in every host run), so a median falls on whichever
#   mode has four of six runs (docs/REAL.md, "The host's copy of a cached page"). A `min` pair's
#   spread is its floor's: the gap between its two least runs.
# - An entry the host's run-to-run spread does not determine is not fitted: its solution is
#   carried with the spread of every probe's runs (half their range) through the solve, and an
#   entry below 1 ns or within that uncertainty of 0 keeps vmlab's table value, its probe a
#   check; the rest are solved without it. read-tree's `read_pages` is the case on the
#   development host: a cold 16-page file's CPU beyond its folios and its open, a few µs of ~30.
# - The simulations run with a cache directory of their own holding only the disk measurement:
#   `run --host` would otherwise apply an installed calibration's entries that this fit leaves
#   alone.
# It prints the table (`entry = ns # ± ns from probe`) and writes it where `run --host` takes it
# ($VMLAB_CACHE_DIR, else ~/.cache/vmlab, host-costs.json, with each entry's probe and
# uncertainty); WRITE=0 only prints. OUT keeps the runs: a second call with the same OUT re-fits
# without running the host again.
#
# One entry is not fitted but traced (TRACED, default end_writeback): the host's own worker is timed
# in a trace, so the entry is a measured time, not a fit to a system time.
#
#   end_writeback  the ext4-rsv-conversion worker's release of an io_end, per folio (dw40's
#                  page_writeback::release_io_end charges it for each page of an io_end). Each
#                  round writes dirty-writer's 1 GiB (TRACED_HEAP, default 128 MiB) through its v1
#                  limit onto a fresh `mkfs.ext4 -O encrypt` image of IMAGE_SIZE in DIR behind
#                  `losetup --direct-io=on` (4 KiB folios, 2,048-page io_ends), with a tracefs
#                  instance of its own recording workqueue_execute_start/end of
#                  ext4_end_io_rsv_work (its address from /proc/kallsyms) and
#                  ext4_ext_handle_unwritten_extents on that loop device. Over the executions that
#                  converted exactly one io_end of 1,024+ pages, (execution end − the conversion's
#                  event) ÷ the io_end's pages (dw41's measure, docs/REAL.md "An io_end's folios end
#                  last bio first"); the entry is the pooled median of every run's releases, its
#                  uncertainty half the quartile range, and host-costs.json's `probes` line says how
#                  and when. It fails with the reason where the host lacks what it needs (root,
#                  tracefs, the events, the symbol or its address, ext4's encrypt feature); TRACED=
#                  leaves it out. The image, mount, loop device and instance are removed on every
#                  exit, Ctrl-C too. Traces are kept in OUT (end_writeback.traceI, the runs' times
#                  and loads in end_writeback.log). With PAIRS= CHECK= only the traced probe runs,
#                  and its entry is written into the table already in the cache.
#
# MAXLOAD=1.5 waits (at most MAXLOAD_WAIT s, default 600) before each real run for a 1-min load
# below it.
#
#   sudo SMALLDIR=/mnt/small HOLD="shrink_node=13482" scripts/calibrate-costs.sh   # VMLAB=target/ci/vmlab DIR=/var/tmp RUNS=6 STAT=median OUT=... CHECK="workload ..."
#   sudo VMLAB_CACHE_DIR=/tmp/copy PAIRS= CHECK= RUNS=3 MAXLOAD=1.5 scripts/calibrate-costs.sh   # end_writeback alone
set -euo pipefail
cd "$(dirname "$0")/.."
VMLAB=${VMLAB:-target/ci/vmlab}
DIR=${DIR:-/var/tmp}
RUNS=${RUNS:-6}
OUT=${OUT:-$(mktemp -d /tmp/vmlab-calibrate.XXXXXX)}
WRITE=${WRITE:-1}
LOCK=${LOCK:-/tmp/vmlab-real.lock}
PAIRS=${PAIRS-"fault-anon:clear_page:sys read-reported:reported_touch:sys read-cached:copy_user_page:sys:min read-tree:read_pages:sys open-cached:path_openat:sys read-tree-large:readahead_folio:sys write-new:write_new_folio:sys read-around:readaround_folio:sys reclaim-around:remove_mapping:sys swap:rmap_one:stall swap:do_swap_page:sys"}
# Entries held at a value in every simulation (and written with the table), not fitted: "entry=ns ...".
# shrink_node has no probe here; it is fitted from traced limit-reclaim calls (scripts/trace-limit-reclaim.sh,
# docs/REAL.md "What a limit-reclaim call costs"), and it takes part of reclaim-around's and swap's stall.
HOLD=${HOLD:-}
CHECK=${CHECK-"fault-anon fault-reported read-reported read-cached read-tree read-tree-large open-cached write-cached write-new rewrite-cached reclaim-file swap read-around reclaim-around"}
# Probes that must run on a 4 KiB-folio file system, and where that is.
SMALL=${SMALL:-"write-new"}
SMALLDIR=${SMALLDIR:-}
if [ -z "$SMALLDIR" ]; then
  for w in $SMALL; do
    case " $PAIRS $CHECK " in *" $w"[:\ ]*)
      echo "calibrate-costs: SMALLDIR not set: $w (a 4 KiB-folio file system's probe) left out" >&2 ;;
    esac
    PAIRS=$(for p in $PAIRS; do [ "${p%%:*}" = "$w" ] || printf '%s ' "$p"; done)
    CHECK=$(for c in $CHECK; do [ "$c" = "$w" ] || printf '%s ' "$c"; done)
  done
fi
# The free memory by reporting state at the probe's real runs' starts, as --sets: the simulation
# starts from the host's moment, not from the host as it is when the fit runs. Their mean; for a
# probe fitted to its least run (a `:min` pair), that run's own.
moments_of() {
  local least=0
  case " $PAIRS " in *" $1:"*":min "*) least=1 ;; esac
  python3 - "$OUT" "$1" "$least" <<'PY'
import json, sys
from pathlib import Path
docs = [json.loads(p.read_text()) for p in sorted(Path(sys.argv[1]).glob(f"{sys.argv[2]}.real*.json"))]
keys = ("host_unreported_small", "host_unreported_large", "host_reported")
runs = [d.get("params", {}) for d in docs]
if runs and all(isinstance(r.get(k), int) for r in runs for k in keys):
    if sys.argv[3] == "1":
        i = min(range(len(docs)), key=lambda i: docs[i].get("metrics", {}).get("sys_s", float("inf")))
        m = [runs[i][k] for k in keys]
    else:
        m = [round(sum(r[k] for r in runs) / len(runs)) for k in keys]
    print(f"--set machine.reported_at_start=true --set machine.unreported_small={m[0]} --set machine.unreported_large={m[1]} --set machine.reported_free={m[2]}")
PY
}
# The directory a probe runs in (real) and is simulated for (--disk-dir).
dir_of() { case " $SMALL " in *" $1 "*) echo "$SMALLDIR" ;; *) echo "$DIR" ;; esac; }
FIT="python3 scripts/calibrate_costs.py"
CACHE=${VMLAB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vmlab}
mkdir -p "$OUT" "$OUT/simcache"
echo "calibrate-costs: outputs in $OUT" >&2
# The disk as `run --host` knows it, without a calibration (measured into simcache if the cache
# has none).
cp "$CACHE"/host-disk-*.json "$OUT/simcache/" 2>/dev/null || true
# The held entries as an installed table of their own: `run --host` applies it before the fit's --sets.
rm -f "$OUT/simcache/host-costs.json"
if [ -n "$HOLD" ]; then
  # shellcheck disable=SC2086 # HOLD is a list of entry=ns words
  python3 - "$OUT/simcache/host-costs.json" $HOLD <<'PY'
import json, sys
cost = {}
for kv in sys.argv[2:]:
    k, _, v = kv.partition("=")
    if not v.isdigit() or int(v) <= 0:
        sys.exit(f"calibrate-costs: HOLD {kv!r}: not entry=ns with a positive whole number of ns")
    cost[k] = int(v)
json.dump({"schema": "vmlab.host-costs/1", "cost": cost}, open(sys.argv[1], "w"))
PY
fi

MAXLOAD=${MAXLOAD:-}
MAXLOAD_WAIT=${MAXLOAD_WAIT:-600}
# Before a real run: wait for a 1-min load below MAXLOAD (if set), at most MAXLOAD_WAIT s.
wait_load() {
  [ -n "$MAXLOAD" ] || return 0
  local t=0
  while awk -v m="$MAXLOAD" '{ exit !($1 >= m) }' /proc/loadavg; do
    if [ "$t" -ge "$MAXLOAD_WAIT" ]; then
      echo "calibrate-costs: 1-min load still $(cut -d' ' -f1 /proc/loadavg) after ${MAXLOAD_WAIT} s; running anyway" >&2
      return 0
    fi
    sleep 5; t=$((t + 5))
  done
}

TRACED=${TRACED-end_writeback}
TRACED_HEAP=${TRACED_HEAP:-128MiB}
export TRACED_HEAP
IMAGE_SIZE=${IMAGE_SIZE:-3G}
TRACEFS=${TRACEFS:-/sys/kernel/tracing}
TRACE_KB=${TRACE_KB:-4096}
case "$TRACED" in "" | end_writeback) ;; *)
  echo "calibrate-costs: TRACED=$TRACED: the traced probe known is end_writeback (or TRACED= for none)" >&2; exit 2 ;;
esac
traced_fail() { echo "calibrate-costs: end_writeback: $*; TRACED= leaves the traced probe out" >&2; exit 1; }
traced_missing() {
  [ -n "$TRACED" ] || return 1
  for i in $(seq 1 "$RUNS"); do [ -s "$OUT/end_writeback.trace$i" ] || return 0; done
  return 1
}
# What the probe needs of the host, checked before any run so that a kernel without it fails here,
# with the reason, and never leaves a 0 in the table.
traced_preflight() {
  [ "$(id -u)" = 0 ] || traced_fail "needs root (a loop device, a mount, a tracefs instance)"
  [ -d "$TRACEFS/instances" ] || traced_fail "no tracefs at $TRACEFS (mount -t tracefs nodev $TRACEFS, or TRACEFS=DIR)"
  local e
  for e in workqueue/workqueue_execute_start workqueue/workqueue_execute_end ext4/ext4_ext_handle_unwritten_extents; do
    [ -d "$TRACEFS/events/$e" ] || traced_fail "the kernel has no trace event $e"
  done
  grep -qw mono "$TRACEFS/trace_clock" || traced_fail "tracefs has no mono trace clock"
  RSV=$(awk '$3 == "ext4_end_io_rsv_work" { print $1; exit }' /proc/kallsyms)
  [ -n "$RSV" ] || traced_fail "no ext4_end_io_rsv_work in /proc/kallsyms (ext4 not loaded, or an ext4 that converts io_ends elsewhere)"
  [ -n "${RSV//0/}" ] || traced_fail "/proc/kallsyms shows ext4_end_io_rsv_work at 0 (kernel.kptr_restrict $(cat /proc/sys/kernel/kptr_restrict)): its address is the events' filter"
  [ -e /sys/fs/ext4/features/encryption ] || traced_fail "this kernel's ext4 has no encrypt feature (/sys/fs/ext4/features/encryption): no 4 KiB-folio image"
  for e in truncate mkfs.ext4 losetup mount umount flock setsid; do
    command -v "$e" >/dev/null || traced_fail "$e not found"
  done
}
IMG="" MNT="" LOOPDEV="" INST=""
# Undone in reverse on every exit; a run interrupted by Ctrl-C goes on in its own session, so the
# unmount waits for it (up to a minute).
traced_cleanup() {
  local -  # errexit off here only
  set +e
  if [ -n "$MNT" ]; then
    for _ in $(seq 60); do umount "$MNT" 2>/dev/null && break; sleep 1; done
    mountpoint -q "$MNT" && echo "calibrate-costs: $MNT still mounted (busy); $LOOPDEV detaches when it is unmounted" >&2
    rmdir "$MNT" 2>/dev/null
  fi
  [ -n "$INST" ] && [ -d "$INST" ] && { echo 0 >"$INST/tracing_on"; rmdir "$INST"; }
  [ -n "$LOOPDEV" ] && losetup -d "$LOOPDEV"
  [ -n "$IMG" ] && rm -f "$IMG"
  IMG="" MNT="" LOOPDEV="" INST=""
}
trap traced_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
traced_setup() {
  IMG="$DIR/vmlab-calibrate-$$.img"
  truncate -s "$IMAGE_SIZE" "$IMG" || traced_fail "truncate -s $IMAGE_SIZE $IMG failed"
  mkfs.ext4 -q -F -O encrypt "$IMG" || traced_fail "mkfs.ext4 -O encrypt $IMG failed"
  LOOPDEV=$(losetup -f --show --direct-io=on "$IMG") || traced_fail "losetup --direct-io=on $IMG failed"
  MNT=$(mktemp -d /mnt/vmlab-calibrate.XXXXXX)
  mount "$LOOPDEV" "$MNT" || traced_fail "mount $LOOPDEV $MNT failed"
  local mm
  read -r mm < "/sys/block/${LOOPDEV#/dev/}/dev"
  # dev_t as the kernel's events carry it: major << 20 | minor
  local ldev=$(( (${mm%%:*} << 20) | ${mm##*:} ))
  INST="$TRACEFS/instances/vmlab-calibrate-$$"
  mkdir "$INST" || traced_fail "mkdir $INST failed"
  echo 0 >"$INST/tracing_on"
  echo mono >"$INST/trace_clock"
  echo "$TRACE_KB" >"$INST/buffer_size_kb"
  echo "function == 0x$RSV" >"$INST/events/workqueue/workqueue_execute_start/filter"
  echo "function == 0x$RSV" >"$INST/events/workqueue/workqueue_execute_end/filter"
  echo "dev == $ldev" >"$INST/events/ext4/ext4_ext_handle_unwritten_extents/filter"
  for e in workqueue/workqueue_execute_start workqueue/workqueue_execute_end ext4/ext4_ext_handle_unwritten_extents; do
    echo 1 >"$INST/events/$e/enable"
  done
  echo "calibrate-costs: end_writeback: $IMG on $LOOPDEV ($mm) at $MNT, tracefs instance $INST" >&2
}
# Run I of the traced probe: the trace is on only while the run holds the lock, and the log's
# start line (time, load) is written once the lock is taken.
traced_run() {
  local i=$1 rc lost
  [ -n "$INST" ] || traced_setup
  : >"$INST/trace"
  wait_load
  # shellcheck disable=SC2016 # the inner shell expands them
  T="$INST" L="$OUT/end_writeback.log" I="$i" flock "$LOCK" setsid -w bash -c '
    echo "$(date -u "+%F %T") start $I load $(cut -d" " -f1-3 /proc/loadavg)" >>"$L"
    echo 1 >"$T/tracing_on"
    echo -20 >/proc/self/autogroup
    nice -n -20 "$@"; rc=$?
    echo 0 >"$T/tracing_on"
    echo "$(date -u "+%F %T") end   $I rc $rc load $(cut -d" " -f1-3 /proc/loadavg)" >>"$L"
    exit $rc' _ "$VMLAB" real scenarios/real/dirty-writer.toml --set "vars.heap=$TRACED_HEAP" --dir "$MNT" \
    --json "$OUT/end_writeback.real$i.json" >"$OUT/end_writeback.out$i" 2>&1 && rc=0 || rc=$?
  [ "$rc" = 0 ] || traced_fail "run $i: vmlab real exit $rc (see $OUT/end_writeback.out$i)"
  lost=$(awk '/^overrun/ { s += $2 } END { print s + 0 }' "$INST"/per_cpu/cpu*/stats)
  [ "$lost" = 0 ] || traced_fail "run $i: the trace lost $lost events (TRACE_KB=$TRACE_KB a CPU; set it higher)"
  cp "$INST/trace" "$OUT/end_writeback.trace$i.part" && mv "$OUT/end_writeback.trace$i.part" "$OUT/end_writeback.trace$i"
  echo "calibrate-costs: end_writeback run $i: $(tail -n 1 "$OUT/end_writeback.log")" >&2
}
if traced_missing; then traced_preflight; fi

for i in $(seq 1 "$RUNS"); do
  for w in $CHECK; do
    [ -s "$OUT/$w.real$i.json" ] && continue
    wait_load
    # In a session of its own whose autogroup has nice -20, as docs/REAL.md's runs: other
    # sessions' builds would otherwise take the CPU from the workload's reclaim.
    flock "$LOCK" setsid -w bash -c 'echo -20 > /proc/self/autogroup; exec nice -n -20 "$@"' _ \
      "$VMLAB" real "scenarios/calibrate/$w.toml" --dir "$(dir_of "$w")" --json "$OUT/$w.real$i.json" >/dev/null
  done
  if [ -n "$TRACED" ] && [ ! -s "$OUT/end_writeback.trace$i" ]; then traced_run "$i"; fi
done
traced_cleanup
# The traced entry first: a probe that timed nothing stops the script before the fit's simulations.
if [ -n "$TRACED" ]; then $FIT release "$OUT" | tee "$OUT/release.txt"; fi

ITERS=${ITERS:-2}
# PAIRS= fits nothing: no step, no table (the cache's table keeps its entries; a traced one is
# written into it below).
[ -n "$PAIRS" ] || ITERS=0
# The entries' values in vmlab's table (machine.rs, CostTable::for_mhz at the scenarios' 3 GHz):
# the first step's linearisation point.
default_ns() { case $1 in clear_page) echo 300 ;; reported_touch) echo 1 ;; lru_scan) echo 60 ;; copy_user_page) echo 400 ;; rmap_one) echo 90 ;; fault) echo 700 ;; read_pages) echo 1 ;; readahead_folio) echo 1 ;; readaround_folio) echo 1 ;; remove_mapping) echo 1 ;; path_openat) echo 1 ;; perform_write) echo 1 ;; write_new_folio) echo 1 ;; do_swap_page) echo 1 ;; *) echo 100 ;; esac; }
entries() { for p in $1; do q=${p#*:}; printf '%s ' "${q%%:*}"; done; }
# Newton steps: the simulated figures are linear in the entries only while the timing they
# change leaves the work done alone, so a further step measures the charges again around the
# entries of the step before (ITERS=2 or more). An entry dropped in a step stays dropped, its
# pair out of the solve.
fitting=$PAIRS
dropped=""
cur=""; for e in $(entries "$fitting"); do cur="$cur $e=$(default_ns "$e")"; done
unc=""
for it in $(seq 1 "$ITERS"); do
  sets() { for kv in $cur; do k=${kv%%=*}; v=${kv#*=}; [ "$k" = "$1" ] && v=$((v + 1000)); printf -- '--set machine.cost.%s=%sns ' "$k" "$v"; done; }
  for pair in $fitting; do
    w=${pair%%:*}
    for e in base $(entries "$fitting"); do
      # shellcheck disable=SC2046
      VMLAB_CACHE_DIR="$OUT/simcache" "$VMLAB" run --host --disk-dir "$(dir_of "$w")" "scenarios/calibrate/$w.toml" $(sets "$e") $(moments_of "$w") \
        --json "$OUT/$w.sim.$e.json" >/dev/null
    done
  done
  res=$($FIT solve "$OUT" "$fitting" "$cur")
  cur=$(sed -n 's/^fit //p' <<<"$res")
  unc=$(sed -n 's/^unc //p' <<<"$res")
  drop=$(sed -n 's/^drop //p' <<<"$res")
  if [ -n "$drop" ]; then
    dropped="$dropped $drop"
    keep=""; for p in $fitting; do q=${p#*:}; case " $drop " in *" ${q%%:*} "*) ;; *) keep="$keep $p" ;; esac; done
    fitting=$keep
  fi
  [ -n "$cur" ] || { echo "calibrate-costs: no entry could be fitted on this host" >&2; exit 1; }
  echo "step $it: $cur (± $unc)${dropped:+; not fitted:$dropped}" >&2
done
if [ -n "$PAIRS" ]; then
  $FIT table "$OUT" "$PAIRS" "$cur" "$unc" "$dropped" "$([ "$WRITE" = 1 ] && echo "$CACHE")" >"$OUT/fit.txt"
  cat "$OUT/fit.txt"
  if [ -n "$HOLD" ]; then
    echo "# held, not fitted (HOLD): $HOLD"
    if [ "$WRITE" = 1 ]; then
      # shellcheck disable=SC2086 # HOLD is a list of entry=ns words
      python3 - "$CACHE/host-costs.json" $HOLD <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for kv in sys.argv[2:]:
    k, _, v = kv.partition("=")
    d["cost"][k] = int(v)
    d.setdefault("probes", {})[k] = "held (HOLD)"
json.dump(d, open(sys.argv[1], "w"), indent=2)
PY
    fi
  fi
fi
if [ -n "$TRACED" ] && [ "$WRITE" = 1 ]; then $FIT install "$OUT" "$CACHE"; fi
fitted=$(for kv in $cur; do printf -- '--set machine.cost.%s=%sns ' "${kv%%=*}" "${kv#*=}"; done)
[ -z "$CHECK" ] || echo "# simulated with the fitted entries ÷ real (${STAT:-median} of $RUNS): the workload's system time, memory stall"
for w in $CHECK; do
  # shellcheck disable=SC2086
  VMLAB_CACHE_DIR="$OUT/simcache" "$VMLAB" run --host --disk-dir "$(dir_of "$w")" "scenarios/calibrate/$w.toml" $fitted $(moments_of "$w") \
    --json "$OUT/$w.sim.fit.json" >/dev/null
  $FIT check "$OUT" "$w" "$PAIRS"
done
