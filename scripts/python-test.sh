#!/usr/bin/env bash
# Build the vmlab Python package into .venv and run its tests.
# Needs only Rust, Python 3 (>= 3.9) with venv and pip. Safe to rerun: the venv is kept, the
# requirements are installed again only when python/requirements-dev.txt changes, and cargo
# rebuilds only what changed.
#   scripts/python-test.sh [PYTEST ARGS...]      e.g. scripts/python-test.sh -k sweep
# Environment: PYTHON (interpreter for the venv, default python3), VENV (default .venv),
# VMLAB_CARGO_PROFILE (the Cargo profile of the extension, default release; test-all.sh passes
# its own so the extension reuses the crates it already built).
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

cargo_profile=${VMLAB_CARGO_PROFILE:-release}
echo "== building the extension (maturin develop --profile $cargo_profile)"
# Puts vmlab/_vmlab.abi3.so beside the Python sources in python/ and installs them editable.
(cd python && maturin develop --profile "$cargo_profile")

echo "== pytest"
exec python -m pytest python/tests -q "$@"
