#!/usr/bin/env bash
# Every gate and every test vmlab has, in order, stopping at the first failure:
#   1. cargo fmt --check; clippy with warnings as errors lints during the build of step 2 (the
#      Python crate's in step 4); the Python venv is set up beside that build;
#   2. Rust unit, integration and property tests, the CLI tests — under cargo nextest when it is
#      installed, else cargo test, a line per test either way;
#   3. the long tests from the same build, two at a time: the golden hashes of every seed's and
#      every example×profile's JSON (crates/vmlab-cli/tests/golden.rs), a minute of the scenario
#      fuzzer, the full-scale seed reproductions that pass (their must-shows checked on the
#      golden test's own runs of the seeds);
#   4. when the Python package is present, its pytest suite.
# Everything is built once, in the `ci` profile (Cargo.toml): optimised as release, so the
# seed-scale tests run in seconds, with debug assertions on, so page conservation is still
# asserted after every simulated quantum. The outputs are release's (the golden hashes hold).
# Needs only Rust, Python 3.11 and pip. Everything is printed as it happens; a step that runs a
# long time says so every 50 s, so the log is never silent for a minute. The time of each step
# is summed up at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${VMLAB_TEST_PROFILE:-ci}

timings=()
total_start=$(date +%s)

summary() {
    echo "== time by step"
    for t in "${timings[@]}"; do
        echo "   $t"
    done
    echo "   $(printf '%-56s %5d s' total $(($(date +%s) - total_start)))"
}

# step LABEL CMD...: run CMD with its output as it comes, a heartbeat line every 50 s, and its
# wall time recorded; stop the script if it fails.
step() {
    local label=$1
    shift
    echo "== $label: $*"
    local t0 status
    t0=$(date +%s)
    (
        n=0
        while sleep 5; do
            n=$((n + 5))
            if [ $((n % 50)) -eq 0 ]; then
                echo "   ... $label still running ($n s)"
            fi
        done
    ) &
    local beat=$!
    set +e
    "$@"
    status=$?
    set -e
    kill "$beat" 2>/dev/null || true
    wait "$beat" 2>/dev/null || true
    local dt=$(($(date +%s) - t0))
    timings+=("$(printf '%-56s %5d s' "$label" "$dt")")
    if [ "$status" -ne 0 ]; then
        echo "== FAILED: $label (exit $status) after $dt s"
        summary
        exit "$status"
    fi
    echo "== $label: ok in $dt s"
}

step "rustfmt" cargo fmt --all --check

# Two cores, and the long steps below are mostly one rustc or one simulation at a time: what
# does not need the build runs beside it, each in the background with its output kept in a
# log printed when it is collected (`collect`), so the foreground never stops printing.
logs=target/test-all
mkdir -p "$logs"
declare -A bg_pid bg_t0
# A failed step or ^C ends what still runs beside it (each in its own process group).
end_background() {
    local p
    for p in "${bg_pid[@]}"; do
        kill -- -"$p" 2>/dev/null || true
    done
}
trap end_background EXIT
trap 'exit 130' INT TERM

# background LABEL CMD...: start CMD with its output in $logs/LABEL.log.
background() {
    local label=$1
    shift
    echo "== $label: started beside the build: $*"
    bg_t0[$label]=$(date +%s)
    setsid "$@" >"$logs/$label.log" 2>&1 &
    bg_pid[$label]=$!
}

# collect LABEL: wait for it (a heartbeat every 50 s), print its log, stop the script if it failed.
collect() {
    local label=$1 status n=0
    while kill -0 "${bg_pid[$label]}" 2>/dev/null; do
        sleep 1
        n=$((n + 1))
        if [ $((n % 50)) -eq 0 ]; then
            echo "   ... waiting for $label ($n s)"
        fi
    done
    set +e
    wait "${bg_pid[$label]}"
    status=$?
    set -e
    local dt=$(($(date +%s) - ${bg_t0[$label]}))
    echo "== $label (ran beside the build):"
    sed 's/^/   /' "$logs/$label.log"
    timings+=("$(printf '%-56s %5d s' "$label (beside the build)" "$dt")")
    if [ "$status" -ne 0 ]; then
        echo "== FAILED: $label (exit $status) after $dt s"
        summary
        exit "$status"
    fi
    echo "== $label: ok in $dt s"
}

# Clippy lints while the build compiles: clippy-driver is the compiler of vmlab's own crates
# (as `cargo clippy` runs it, through RUSTC_WORKSPACE_WRAPPER), so the code is parsed and
# type-checked once for both, instead of a second, check-only build of every crate beside it.
# -D warnings makes a lint an error (other people's crates are built with --cap-lints allow).
# Every cargo command below runs with the same two variables, so nothing is built twice; the
# Python crate (pyo3) is linted when the Python step builds it.
if clippy_driver=$(rustup which clippy-driver 2>/dev/null) || clippy_driver=$(command -v clippy-driver); then
    export RUSTC_WORKSPACE_WRAPPER=$clippy_driver
    export RUSTFLAGS="${RUSTFLAGS:+$RUSTFLAGS }-D warnings"
    echo "== clippy: linting during the build (RUSTC_WORKSPACE_WRAPPER=$clippy_driver, RUSTFLAGS=$RUSTFLAGS)"
else
    step "clippy" cargo clippy --workspace --all-targets --locked -- -D warnings
fi
have_python=0
if [ -x scripts/python-test.sh ]; then
    have_python=1
    # The venv and its requirements: mostly downloads.
    background python-setup env VMLAB_PYTHON_SETUP_ONLY=1 scripts/python-test.sh
fi

if cargo nextest --version >/dev/null 2>&1; then
    # nextest runs no doctests; vmlab has none (`cargo test --doc` would add a build for nothing).
    step "tests (nextest, $profile)" cargo nextest run --cargo-profile "$profile" --workspace --locked --no-fail-fast
    # The long tests below run from the same build (one `--workspace` resolution of features),
    # two at a time.
    long_tests() {
        local filter="" entry package target name
        for entry in "$@"; do
            read -r package target name <<<"$entry"
            filter+="${filter:+ | }(binary_id($package::$target) & test(=$name))"
        done
        # Not --no-capture: nextest runs tests one at a time with it. Each test's output is
        # printed when it ends; until then nextest says which are SLOW, and the heartbeat runs.
        cargo nextest run --cargo-profile "$profile" --workspace --locked --no-fail-fast --run-ignored only \
            --success-output immediate --failure-output immediate -E "$filter"
    }
else
    step "tests (cargo test, $profile)" cargo test --profile "$profile" --workspace --locked --no-fail-fast
    long_tests() {
        local entry package target name
        for entry in "$@"; do
            read -r package target name <<<"$entry"
            cargo test --profile "$profile" --locked -p "$package" --test "$target" -- --ignored --exact "$name" --nocapture
        done
    }
fi

# The long tests, all ignored by a plain `cargo test`, in two steps:
# 1. what runs its own simulations, two at a time:
#    - every seed's and every example×profile's JSON against crates/vmlab-cli/tests/golden/hashes.txt,
#      each run printed as it finishes (the outputs stay in target/tmp/golden);
#    - a minute of the scenario fuzzer (crates/vmlab-fuzz, fuzz/README.md): mutated scenarios and
#      --sets through the loader, the compiler and short simulations; a panic, an abort, a stack
#      overflow or an input over its time limit fails it and is saved under fuzz/findings/;
#    - the full-scale seed tests whose runs the reproduce does not make;
# 2. the full-scale seed must-shows checked on the reproduce's runs the golden test has just
#    written and found byte-identical to their blessed hashes (VMLAB_SEED_REPORTS; run by hand,
#    each test simulates its own).
# A full-scale test is listed once it passes; the ones that do not reproduce yet stay #[ignore]d
# with the reason. Each is "PACKAGE TEST-BINARY TEST".
long=(
    "vmlab golden outputs_match_the_golden_hashes"
    "vmlab-fuzz ci a_minute_of_fuzzing_finds_nothing"
    "vmlab-core it seed_shm_big_iron::scaled_down_does_not_storm"
    "vmlab-core it seed_kswapd_mailserver::full_scale_mailserver_machine_is_the_reporters"
)
on_golden_outputs=(
    "vmlab-core it seed_kswapd_high_order::full_scale_2638_settles_near_the_high_watermarks"
    "vmlab-core it seed_kswapd_mailserver::full_scale_mailserver_2638_settles_near_the_watermarks"
    "vmlab-core it seed_google_mlock::full_scale_must_shows"
)
step "long tests: golden hashes, fuzzing, full-scale seeds" long_tests "${long[@]}"
on_golden_runs() (
    export VMLAB_SEED_REPORTS="$PWD/target/tmp/golden"
    long_tests "$@"
)
step "full-scale seed must-shows on the golden runs" on_golden_runs "${on_golden_outputs[@]}"

if [ "$have_python" = 1 ]; then
    collect python-setup
    step "python" env VMLAB_CARGO_PROFILE="$profile" VMLAB_PYTHON_CARGO_BUILD=1 scripts/python-test.sh
fi

summary
