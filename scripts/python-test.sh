#!/usr/bin/env bash
# Build the vmlab Python package into .venv and run its tests.
# Needs only Rust, Python 3 (>= 3.9) with venv and pip. Safe to rerun: the venv is kept, the
# requirements are installed again only when python/requirements-dev.txt changes, and cargo
# rebuilds only what changed.
#   scripts/python-test.sh [PYTEST ARGS...]      e.g. scripts/python-test.sh -k sweep
# Environment: PYTHON (interpreter for the venv, default python3), VENV (default .venv),
# VMLAB_CARGO_PROFILE (the Cargo profile of the extension, default release; test-all.sh passes
# its own so the extension reuses the crates it already built), VMLAB_PYTHON_SETUP_ONLY=1 (make
# the venv and install the requirements, nothing else: test-all.sh does it beside its build),
# VMLAB_PYTHON_CARGO_BUILD=1 (build the extension with cargo instead of maturin; see below).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}

if [ ! -x "$VENV/bin/python" ]; then
    echo "== creating $VENV"
    "$PYTHON" -m venv "$VENV"
fi
export VIRTUAL_ENV="$PWD/$VENV"
export PATH="$VIRTUAL_ENV/bin:$PATH"
unset PYTHONHOME CONDA_PREFIX

stamp="$VENV/.requirements-dev.sha256"
want=$(sha256sum python/requirements-dev.txt | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "== installing python/requirements-dev.txt"
    python -m pip install --disable-pip-version-check -q -r python/requirements-dev.txt
    echo "$want" > "$stamp"
fi
if [ -n "${VMLAB_PYTHON_SETUP_ONLY:-}" ]; then
    exit 0
fi

cargo_profile=${VMLAB_CARGO_PROFILE:-release}
if [ -n "${VMLAB_PYTHON_CARGO_BUILD:-}" ]; then
    # test-all.sh: the extension from the suite's own build. maturin would build vmlab-py alone,
    # and Cargo resolves a lone package's features without the dev-dependencies the tests
    # enabled, so it would compile vmlab-core again. Built with the tests' target selection, only
    # vmlab-py itself is left to compile; the module is then imported from python/ directly.
    echo "== building the extension (cargo build --profile $cargo_profile --workspace --lib --tests)"
    cargo build --profile "$cargo_profile" --workspace --lib --tests --locked
    dir=$cargo_profile
    [ "$dir" = dev ] && dir=debug
    cp "target/$dir/lib_vmlab.so" python/vmlab/_vmlab.abi3.so
    export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
else
    echo "== building the extension (maturin develop --profile $cargo_profile)"
    # Puts vmlab/_vmlab.abi3.so beside the Python sources in python/ and installs them editable.
    (cd python && maturin develop --profile "$cargo_profile")
fi

echo "== pytest"
exec python -m pytest python/tests -q "$@"
