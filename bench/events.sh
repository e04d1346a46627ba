#!/usr/bin/env bash
# Simulated page events per wall second for the benchmark scenarios, release build.
# Usage: bench/events.sh   (from the repository root)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p vmlab
printf '%-18s %12s %9s %14s %10s\n' scenario events wall_s events/s peak_MB
run() {
    local name=$1 file=$2; shift 2
    local peak
    /usr/bin/time -f '%M' -o /tmp/vmlab-bench.time \
        ./target/release/vmlab run "$file" "$@" --timing --json - 2>/dev/null >/tmp/vmlab-bench.json
    peak=$(($(tail -1 /tmp/vmlab-bench.time) / 1024))
    python3 - "$name" "$peak" <<'PY'
import json, sys
r = json.load(open("/tmp/vmlab-bench.json"))
ev, w = r["events"], r["wall_s"]
print(f"{sys.argv[1]:18} {ev:12d} {w:9.2f} {ev / w:14,.0f} {sys.argv[2]:>10}")
PY
}
run seq-anon scenarios/bench/seq-anon.toml
run anon-overcommit scenarios/examples/anon-overcommit.toml
run zipf-file scenarios/examples/zipf-file.toml
