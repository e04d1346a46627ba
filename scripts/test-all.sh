#!/usr/bin/env bash
# Every test vmlab has: Rust unit, integration and property tests (debug build: page
# conservation is asserted after every simulated quantum), the CLI tests, the full-scale seed
# reproductions that pass (release build), and — when the Python package is present — its pytest
# suite. Needs only Rust, Python 3.11 and pip.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)

# Run a cargo command quietly: print the test lines, and the tail of the log if it fails.
run_cargo() {
    local status
    set +e
    "$@" >"$log" 2>&1
    status=$?
    set -e
    grep -E "^(test result|     Running)|FAILED|panicked" "$log" || true
    if [ "$status" -ne 0 ]; then
        echo "$* failed (exit $status); last lines:"
        tail -60 "$log"
        exit "$status"
    fi
}

echo "== cargo test --workspace"
run_cargo cargo test --workspace --locked

# Full-scale seed reproductions that pass: each runs a seed at its original size, too slow for a
# debug build. The ones that do not reproduce yet stay #[ignore]d with the reason; list a test
# here once it passes.
full_scale=(
    "seed_kswapd_high_order full_scale_2638_settles_near_the_high_watermarks"
    "seed_google_mlock full_scale_must_shows"
)
for entry in "${full_scale[@]}"; do
    read -r target name <<<"$entry"
    echo "== full scale (release): $target::$name"
    run_cargo cargo test --release --locked -p vmlab-core --test "$target" -- --ignored --exact "$name"
done

if [ -x scripts/python-test.sh ]; then
    echo "== python"
    scripts/python-test.sh
fi
