"""The host calibration's arithmetic (scripts/calibrate_costs.py) runs in the suite, so a change
to the solver cannot land with `selftest` broken; the script itself needs root and real runs."""

import subprocess
import sys
from pathlib import Path

from scripts_util import load_script

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


def _module():
    return load_script("calibrate_costs.py")


def test_a_pair_names_its_own_statistic(monkeypatch):
    mod = _module()
    monkeypatch.setenv("STAT", "median")
    pairs = mod.parse_pairs("read-cached:copy_user_page:sys:min fault-anon:clear_page:sys")
    assert [p[3] for p in pairs] == ["min", None]
    # read-cached's six host runs of the restarted development host: two modes by process.
    runs = [0.322, 0.119, 0.095, 0.497, 0.459, 0.224]
    assert mod.summary(runs, "min") == 0.095
    assert mod.summary(runs, None) == (0.224 + 0.322) / 2
    # A floor's spread is its gap to the next least run, not the modes' distance.
    assert abs(mod.run_spread(runs, "min") - 0.024) < 1e-12
    assert abs(mod.run_spread(runs, None) - (0.497 - 0.095) / 2) < 1e-12


def test_a_malformed_pair_is_refused():
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "solve", "/nonexistent", "read-cached:copy_user_page:sys:mean", "x=1"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode != 0
    assert "expected WORKLOAD:ENTRY:sys|stall[:median|min]" in out.stderr
