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
if [ -x scripts/python-test.sh ]; then
    echo "== python"
    scripts/python-test.sh
fi
