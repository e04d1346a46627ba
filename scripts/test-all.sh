#!/usr/bin/env bash
# Every test vmlab has: Rust unit, integration and property tests (debug build: page
# conservation is asserted after every simulated quantum), the CLI tests, and — when the Python
# package is present — its pytest suite. Needs only Rust, Python 3.11 and pip.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
echo "== cargo test --workspace"
set +e
cargo test --workspace --locked >"$log" 2>&1
status=$?
set -e
grep -E "^(test result|     Running)|FAILED|panicked" "$log" || true
if [ "$status" -ne 0 ]; then
    echo "cargo test failed (exit $status); last lines:"
    tail -60 "$log"
    exit "$status"
fi
# Full-scale seed reproductions that pass, in a release build (each runs a seed at its original
# size, too slow for a debug build). Failing ones stay #[ignore]d with the reason; add a test here
# once it passes.
full_scale=(
    "seed_kswapd_high_order full_scale_2638_settles_near_the_high_watermarks"
)
for entry in "${full_scale[@]}"; do
    read -r target name <<<"$entry"
    echo "== full scale (release): $target $name"
    set +e
    cargo test --release --locked -p vmlab-core --test "$target" -- --ignored --exact "$name" >"$log" 2>&1
    status=$?
    set -e
    grep -E "^test |test result|panicked|FAILED" "$log" || true
    if [ "$status" -ne 0 ]; then
        echo "full-scale test $target::$name failed (exit $status); last lines:"
        tail -40 "$log"
        exit "$status"
    fi
done
if [ -x scripts/python-test.sh ]; then
    echo "== python"
    scripts/python-test.sh
fi
