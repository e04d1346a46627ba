#!/usr/bin/env bash
# Calibrate vmlab's CPU cost table against this host, for `vmlab run --host` (docs/REAL.md,
# "The cost table against the host").
#
# Micro-workloads (scenarios/calibrate/*.toml) each exercise one kernel path; each is run RUNS
# times on the host (`vmlab real`, as root, one at a time under flock /tmp/vmlab-real.lock) and
# simulated with `vmlab run --host`. Both report the workload's system time (`metrics.sys_s`: the
# processes' ru_stime on the host, their simulated kernel time in vmlab). The simulated time is
# linear in the cost entries, so one simulation with the solved entries at 1 ns and one with each
# of them at 1,001 ns give how many times each workload charges each entry; the script then
# solves for the entries that make the simulated system time equal the host's, every other entry
# staying as the table has it:
#
#   fault-anon    → clear_page      (first-touch anonymous faults: what a swap-in fault does not do)
#   read-cached   → copy_user_page  (read() of cached pages)
#   swap          → rmap_one        (swap-out and swap-in of anonymous pages)
#
# and then simulates every workload (reclaim-file too: limit reclaim of clean file pages read
# once, fitted by nothing) with the fitted table and prints simulated ÷ real system time.
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
PAIRS="fault-anon:clear_page read-cached:copy_user_page swap:rmap_one"
ENTRIES="clear_page copy_user_page rmap_one"
CHECK="fault-anon read-cached reclaim-file swap"
mkdir -p "$OUT"
echo "calibrate-costs: outputs in $OUT" >&2

ITERS=${ITERS:-1}
# Newton steps: the simulated time is linear in the entries only while the timing they change
# leaves the work done alone, so a further step measures the charges again around the entries of
# the step before. One by default: on the development host the swap workload's simulation is
# bimodal (131 k or 37 k swap-ins, as the entries shift its timing), and further steps walked
# rmap_one away (758 → 1,257 → 2,090 ns) instead of converging.
cur=""; for e in $ENTRIES; do cur="$cur $e=1"; done
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
sys_s = lambda f: json.load(open(os.path.join(out, f)))["metrics"]["sys_s"]
k = len(ents)
a = []
for w in work:
    real = sum(sys_s(f"{w}.real{i}.json") for i in range(1, runs + 1)) / runs
    b = sys_s(f"{w}.sim.base.json")
    # charges of each entry: the time one more µs of it adds, in µs
    a.append([(sys_s(f"{w}.sim.{e}.json") - b) / 1e-6 for e in ents] + [(real - b) / 1e-9])
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
sys_s = lambda f: json.load(open(os.path.join(out, f)))["metrics"]["sys_s"]
print("# [machine.cost] fitted to this host's system time (scripts/calibrate-costs.sh)")
for p in pairs:
    w, e = p.split(":")
    real = [sys_s(f"{w}.real{i}.json") for i in range(1, runs + 1)]
    print(f"{e} = {cost[e]}    # from {w}: real sys {' '.join(f'{x:.3f}' for x in real)} s")
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
echo "# simulated with the fitted entries ÷ real (mean of $RUNS), system time of the workload"
for w in $CHECK; do
  # shellcheck disable=SC2086
  "$VMLAB" run --host --disk-dir "$DIR" "scenarios/calibrate/$w.toml" $fitted --json "$OUT/$w.sim.fit.json" >/dev/null
  python3 - "$OUT" "$w" "$RUNS" <<'EOF'
import json, os, sys
out, w, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = lambda f: json.load(open(os.path.join(out, f)))["metrics"]["sys_s"]
real = [s(f"{w}.real{i}.json") for i in range(1, runs + 1)]
m = sum(real) / len(real)
print(f"{w:13} sim {s(f'{w}.sim.fit.json'):.3f} s  real {' '.join(f'{x:.3f}' for x in real)} s  ratio {s(f'{w}.sim.fit.json') / m:.2f}")
EOF
done
