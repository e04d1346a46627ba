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
# or `stall`); by default six, solved together (each workload charges the others' entries
# too):
#
#   fault-anon    system time → clear_page     (first-touch anonymous faults: what a swap-in
#                                               fault does not do)
#   read-cached   system time → copy_user_page (read() of pages in the cache: the per-page
#                                               lookup and copy to user)
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
#   write-cached  system time → perform_write  (write() of new files that fit, no fsync: a
#                                               page's write_begin, copy into a new page and
#                                               write_end beyond the read copy)
#
# perform_write is fitted by default since dirty19: 6.8's generic_perform_write (mm/filemap.c)
# spends it on every page of every buffered write — `write_begin` (ext4: the folio lookup or
# creation with FGP_WRITEBEGIN and the block mapping), `write_end` (block_write_end →
# mark_buffer_dirty → __folio_mark_dirty, folio_account_dirtied; i_size) and
# balance_dirty_pages_ratelimited — none of which copy_user_page (fitted to read()'s filemap_read)
# or any other entry charges; left at 0 it undercharges every write (docs/REAL.md, "dirty-writer").
#
# and then simulates every workload (reclaim-file: limit reclaim of clean file pages; swap:
# swap-out and swap-in; write-cached; the ones above)
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
# Each solved entry absorbs whatever else its path costs on the host that vmlab does not charge
# separately: it is a fit to this host, not a measurement of one kernel function. It prints the
# table and writes it where `run --host` takes it ($VMLAB_CACHE_DIR, else ~/.cache/vmlab,
# host-costs.json); WRITE=0 only prints.
#
#   sudo scripts/calibrate-costs.sh            # VMLAB=target/ci/vmlab DIR=/var/tmp RUNS=2 OUT=... CHECK="workload ..."
set -euo pipefail
cd "$(dirname "$0")/.."
VMLAB=${VMLAB:-target/ci/vmlab}
DIR=${DIR:-/var/tmp}
RUNS=${RUNS:-2}
OUT=${OUT:-$(mktemp -d /tmp/vmlab-calibrate.XXXXXX)}
WRITE=${WRITE:-1}
LOCK=${LOCK:-/tmp/vmlab-real.lock}
PAIRS=${PAIRS:-"fault-anon:clear_page:sys read-cached:copy_user_page:sys read-tree:read_pages:sys open-cached:path_openat:sys read-tree-large:readahead_folio:sys write-cached:perform_write:sys"}
ENTRIES=$(for p in $PAIRS; do q=${p#*:}; printf '%s ' "${q%%:*}"; done)
CHECK=${CHECK:-"fault-anon read-cached read-tree read-tree-large open-cached write-cached reclaim-file swap"}
mkdir -p "$OUT"
echo "calibrate-costs: outputs in $OUT" >&2

for w in $CHECK; do
  for i in $(seq 1 "$RUNS"); do
    [ -s "$OUT/$w.real$i.json" ] && continue
    # In a session of its own whose autogroup has nice -20, as docs/REAL.md's runs: other
    # sessions' builds would otherwise take the CPU from the workload's reclaim.
    flock "$LOCK" setsid -w bash -c 'echo -20 > /proc/self/autogroup; exec nice -n -20 "$@"' _ \
      "$VMLAB" real "scenarios/calibrate/$w.toml" --dir "$DIR" --json "$OUT/$w.real$i.json" >/dev/null
  done
done

ITERS=${ITERS:-2}
# The entries' values in vmlab's table (machine.rs, CostTable::for_mhz at the scenarios' 3 GHz):
# the first step's linearisation point.
default_ns() { case $1 in clear_page) echo 300 ;; lru_scan) echo 60 ;; copy_user_page) echo 400 ;; rmap_one) echo 90 ;; fault) echo 700 ;; read_pages) echo 1 ;; readahead_folio) echo 1 ;; path_openat) echo 1 ;; perform_write) echo 1 ;; *) echo 100 ;; esac; }
# Newton steps: the simulated figures are linear in the entries only while the timing they
# change leaves the work done alone, so a further step measures the charges again around the
# entries of the step before (ITERS=2 or more).
cur=""; for e in $ENTRIES; do cur="$cur $e=$(default_ns "$e")"; done
for it in $(seq 1 "$ITERS"); do
  sets() { for kv in $cur; do k=${kv%%=*}; v=${kv#*=}; [ "$k" = "$1" ] && v=$((v + 1000)); printf -- '--set machine.cost.%s=%sns ' "$k" "$v"; done; }
  for pair in $PAIRS; do
    w=${pair%%:*}
    for e in base $ENTRIES; do
      # shellcheck disable=SC2046
      "$VMLAB" run --host --disk-dir "$DIR" "scenarios/calibrate/$w.toml" $(sets "$e") \
        --json "$OUT/$w.sim.$e.json" >/dev/null
    done
  done
  cur=$(python3 - "$OUT" "$RUNS" "$PAIRS" "$cur" <<'EOF'
import json, os, sys
out, runs, pairs, cur = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split()
c0 = {kv.split("=")[0]: float(kv.split("=")[1]) for kv in cur}
work = [p.split(":")[0] for p in pairs]
ents = [p.split(":")[1] for p in pairs]
obs = [p.split(":")[2] for p in pairs]
def fig(f, what):
    r = json.load(open(os.path.join(out, f)))
    return r["metrics"]["sys_s"] if what == "sys" else r["pressure"]["some"]["total"] / 1e6
k = len(ents)
a = []
for w, o in zip(work, obs):
    real = sum(fig(f"{w}.real{i}.json", o) for i in range(1, runs + 1)) / runs
    b = fig(f"{w}.sim.base.json", o)
    # charges of each entry: the time one more µs of it adds, in µs
    a.append([(fig(f"{w}.sim.{e}.json", o) - b) / 1e-6 for e in ents] + [(real - b) / 1e-9])
# n · Δc = real − sim(c0), by Gaussian elimination with partial pivoting
for col in range(k):
    piv = max(range(col, k), key=lambda r: abs(a[r][col]))
    a[col], a[piv] = a[piv], a[col]
    if abs(a[col][col]) < 1e-9:
        sys.exit(f"calibrate-costs: `{ents[col]}` is not charged by its workload: cannot solve")
    for r in range(k):
        if r != col:
            f = a[r][col] / a[col][col]
            a[r] = [x - f * y for x, y in zip(a[r], a[col])]
new = {e: c0[e] + a[i][k] / a[i][i] for i, e in enumerate(ents)}
bad = [e for e in ents if new[e] < 1]
if bad:
    sys.exit(f"calibrate-costs: no positive fit for {', '.join(bad)}: the other entries already exceed the host")
print(" ".join(f"{e}={round(new[e])}" for e in ents))
EOF
)
  echo "step $it: $cur" >&2
done
python3 - "$OUT" "$RUNS" "$WRITE" "$PAIRS" "$cur" >"$OUT/fit.txt" <<'EOF'
import json, os, sys
out, runs, write, pairs, cur = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4].split(), sys.argv[5].split()
cost = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in cur}
def fig(f, what):
    r = json.load(open(os.path.join(out, f)))
    return r["metrics"]["sys_s"] if what == "sys" else r["pressure"]["some"]["total"] / 1e6
print("# [machine.cost] fitted to this host (scripts/calibrate-costs.sh)")
for p in pairs:
    w, e, o = p.split(":")
    real = [fig(f"{w}.real{i}.json", o) for i in range(1, runs + 1)]
    print(f"{e} = {cost[e]}    # from {w}: real {o} {' '.join(f'{x:.3f}' for x in real)} s")
if write:
    d = os.environ.get("VMLAB_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.environ["HOME"], ".cache"), "vmlab")
    os.makedirs(d, exist_ok=True)
    kernel = open("/proc/sys/kernel/osrelease").read().strip()
    doc = {"schema": "vmlab.host-costs/1", "kernel": kernel, "cost": cost}
    with open(os.path.join(d, "host-costs.json"), "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    print(f"calibrate-costs: wrote {os.path.join(d, 'host-costs.json')}", file=sys.stderr)
EOF
cat "$OUT/fit.txt"
fitted=$(sed -n 's/^\([a-z_]*\) = \([0-9]*\) .*/--set machine.cost.\1=\2ns/p' "$OUT/fit.txt")
echo "# simulated with the fitted entries ÷ real (mean of $RUNS): the workload's system time, memory stall"
for w in $CHECK; do
  # shellcheck disable=SC2086
  "$VMLAB" run --host --disk-dir "$DIR" "scenarios/calibrate/$w.toml" $fitted --json "$OUT/$w.sim.fit.json" >/dev/null
  python3 - "$OUT" "$w" "$RUNS" <<'EOF'
import json, os, sys
out, w, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
def fig(f, what):
    r = json.load(open(os.path.join(out, f)))
    return r["metrics"]["sys_s"] if what == "sys" else r["pressure"]["some"]["total"] / 1e6
line = f"{w:13}"
for o in ("sys", "stall"):
    real = [fig(f"{w}.real{i}.json", o) for i in range(1, runs + 1)]
    m, s = sum(real) / len(real), fig(f"{w}.sim.fit.json", o)
    ratio = f"{s / m:.2f}" if m > 0 else "-"
    line += f"  {o} sim {s:.3f} real {' '.join(f'{x:.3f}' for x in real)} ({ratio})"
print(line)
EOF
done
