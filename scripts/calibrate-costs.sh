#!/usr/bin/env bash
# Calibrate vmlab's CPU cost table against this host, for `vmlab run --host` (docs/REAL.md,
# "The cost table against the host").
#
# Four micro-workloads (scenarios/calibrate/*.toml) each exercise one kernel path; each is run
# RUNS times on the host (`vmlab real`, as root, one at a time under flock /tmp/vmlab-real.lock)
# and simulated with `vmlab run --host`. Both report the workload's system time (`metrics.sys_s`:
# the processes' ru_stime on the host, their simulated kernel time in vmlab). The simulated time
# is linear in the cost entries, so one simulation with the solved entries at 0 and one with each
# of them at 1,000 ns give how many times each workload charges each entry; the script then
# solves for the entries that make the simulated system time equal the host's, every other entry
# staying as it is:
#
#   fault-anon    → fault           (first-touch anonymous faults)
#   read-cached   → copy_user_page  (read() of cached pages)
#   reclaim-file  → lru_scan        (limit reclaim of clean file pages)
#   swap          → rmap_one        (swap-out and swap-in of anonymous pages)
#
# Each solved entry absorbs whatever else its path costs on the host that vmlab does not charge
# separately: it is a fit to this host, not a measurement of one kernel function. It prints the
# table and writes it where `run --host` takes it ($VMLAB_CACHE_DIR, else ~/.cache/vmlab,
# host-costs.json); WRITE=0 only prints.
#
#   sudo scripts/calibrate-costs.sh            # VMLAB=target/ci/vmlab DIR=/var/tmp RUNS=2 OUT=...
set -euo pipefail
cd "$(dirname "$0")/.."
VMLAB=${VMLAB:-target/ci/vmlab}
DIR=${DIR:-/var/tmp}
RUNS=${RUNS:-2}
OUT=${OUT:-$(mktemp -d /tmp/vmlab-calibrate.XXXXXX)}
WRITE=${WRITE:-1}
LOCK=${LOCK:-/tmp/vmlab-real.lock}
PAIRS="fault-anon:fault read-cached:copy_user_page reclaim-file:lru_scan swap:rmap_one"
ENTRIES="fault copy_user_page lru_scan rmap_one"
mkdir -p "$OUT"
echo "calibrate-costs: outputs in $OUT" >&2

zero_sets() { for e in $ENTRIES; do printf -- '--set machine.cost.%s=%sns ' "$e" "${1:-1}"; done; }

for pair in $PAIRS; do
  w=${pair%%:*}
  sc=scenarios/calibrate/$w.toml
  for i in $(seq 1 "$RUNS"); do
    [ -s "$OUT/$w.real$i.json" ] && continue
    flock "$LOCK" "$VMLAB" real "$sc" --dir "$DIR" --json "$OUT/$w.real$i.json" >/dev/null
  done
  # The solved entries at 1 ns (the table takes no 0), then each at 1,001 ns.
  # shellcheck disable=SC2046
  "$VMLAB" run --host --disk-dir "$DIR" "$sc" $(zero_sets 1) --json "$OUT/$w.sim.base.json" >/dev/null
  for e in $ENTRIES; do
    # shellcheck disable=SC2046
    "$VMLAB" run --host --disk-dir "$DIR" "$sc" $(zero_sets 1) --set "machine.cost.$e=1001ns" \
      --json "$OUT/$w.sim.$e.json" >/dev/null
  done
done

python3 - "$OUT" "$RUNS" "$WRITE" "$PAIRS" <<'EOF'
import json, os, sys
out, runs, write, pairs = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1", sys.argv[4].split()
work = [p.split(":")[0] for p in pairs]
ents = [p.split(":")[1] for p in pairs]
ld = lambda f: json.load(open(os.path.join(out, f)))
sys_s = lambda r: r["metrics"]["sys_s"]
real, base, n = [], [], []
for w in work:
    rs = [sys_s(ld(f"{w}.real{i}.json")) for i in range(1, runs + 1)]
    real.append(sum(rs) / len(rs))
    b = sys_s(ld(f"{w}.sim.base.json"))
    base.append(b)
    # charges of entry e per workload: (sys(e = 1001 ns) − sys(e = 1 ns)) / 1000 ns
    n.append([(sys_s(ld(f"{w}.sim.{e}.json")) - b) / 1000e-9 for e in ents])
    print(f"{w:13} real sys {' '.join(f'{x:.3f}' for x in rs)} s (mean {real[-1]:.3f}); "
          f"sim with the {len(ents)} entries at 1 ns {b:.3f} s", file=sys.stderr)
# Solve n · c = real − (base − Σ n·1 ns) by Gaussian elimination with partial pivoting.
k = len(ents)
a = [n[i][:] + [real[i] - base[i] + sum(n[i]) * 1e-9] for i in range(k)]
for col in range(k):
    piv = max(range(col, k), key=lambda r: abs(a[r][col]))
    a[col], a[piv] = a[piv], a[col]
    if abs(a[col][col]) < 1e-9:
        sys.exit(f"calibrate-costs: `{ents[col]}` is not charged by its workload: cannot solve")
    for r in range(k):
        if r != col:
            f = a[r][col] / a[col][col]
            a[r] = [x - f * y for x, y in zip(a[r], a[col])]
cost = {ents[i]: a[i][k] / a[i][i] * 1e9 for i in range(k)}
print("# [machine.cost] fitted to this host's system time (scripts/calibrate-costs.sh)")
for w, e in zip(work, ents):
    print(f"{e} = {max(1, round(cost[e]))}    # from {w}: charged {n[work.index(w)][ents.index(e)]:.0f} times")
bad = [e for e in ents if cost[e] < 1]
if bad:
    sys.exit(f"calibrate-costs: no positive fit for {', '.join(bad)}: the other entries already exceed the host")
if write:
    d = os.environ.get("VMLAB_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.environ["HOME"], ".cache"), "vmlab")
    os.makedirs(d, exist_ok=True)
    kernel = open("/proc/sys/kernel/osrelease").read().strip()
    doc = {"schema": "vmlab.host-costs/1", "kernel": kernel,
           "cost": {e: max(1, round(cost[e])) for e in ents}}
    with open(os.path.join(d, "host-costs.json"), "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    print(f"calibrate-costs: wrote {os.path.join(d, 'host-costs.json')}", file=sys.stderr)
EOF
