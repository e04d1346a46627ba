"""The host calibration's arithmetic (scripts/calibrate_costs.py) runs in the suite, so a change
to the solver cannot land with `selftest` broken; the script itself needs root and real runs."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "calibrate_costs.py"


def test_the_solver_recovers_known_costs():
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "selftest"], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    assert "selftest: ok" in out.stdout


def test_an_unknown_command_fails():
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "no-such-command"], capture_output=True, text=True, check=False
    )
    assert out.returncode != 0
    assert "expected one of solve" in out.stderr
