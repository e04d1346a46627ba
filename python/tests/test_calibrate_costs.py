"""The host calibration's arithmetic (scripts/calibrate_costs.py) runs in the suite, so a change
to the solver cannot land with `selftest` broken; the script itself needs root and real runs."""

import json
import statistics
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


# The traced probe's parse (calibrate-costs.sh's TRACED=end_writeback): lines as tracefs prints them.
def _exec(pid, cpu, t0, conv_t, end_t, pages=(2048,), cpu_end=None):
    w = f"    kworker/u8:2-{pid}   [{cpu:03d}] ....."
    lines = [f"{w} {t0:.6f}: workqueue_execute_start: work struct 0000000012345678: function ext4_end_io_rsv_work"]
    for k, n in enumerate(pages):
        lines.append(
            f"{w} {conv_t + k * 1e-4:.6f}: ext4_ext_handle_unwritten_extents: dev 7,0 ino 15 m_lblk 0 "
            f"m_pblk 100352 m_len {n} flags CREATE|UNWRIT|CONVERT allocated {n} newblock 100352"
        )
    we = f"    kworker/u8:2-{pid}   [{(cpu if cpu_end is None else cpu_end):03d}] ....."
    lines.append(f"{we} {end_t:.6f}: workqueue_execute_end: work struct 0000000012345678: function ext4_end_io_rsv_work")
    return lines


def test_a_release_is_timed_from_the_conversion_to_the_executions_end():
    mod = _module()
    a = _exec(101, 1, 10.000000, 10.000010, 10.001034)  # 1,024 µs for 2,048 pages: 500 ns a folio
    b = _exec(102, 1, 10.000500, 10.000600, 10.001828)  # interleaved on the same CPU: 600 ns
    moved = _exec(103, 0, 11.0, 11.000010, 11.001444, cpu_end=1)  # migrated inside: 700 ns
    two = _exec(104, 0, 12.0, 12.000010, 12.003000, pages=(2048, 2048))  # two io_ends: not timed
    short = _exec(105, 0, 13.0, 13.000010, 13.000500, pages=(512,))  # the file's last: not timed
    stray = ["    flush-7:0-99   [000] ..... 9.000000: ext4_ext_handle_unwritten_extents: dev 7,0 m_len 2048"]
    lines = stray + a[:2] + b[:2] + a[2:] + b[2:] + moved + two + short + ["garbage"]
    n, xs = mod.release_per_folio(lines)
    assert n == 5
    assert [round(x) for x in xs] == [500, 600, 700]
    med, q1, q3 = mod.release_summary(xs)
    assert round(med) == 600 and q1 < med < q3


def test_the_release_entry_and_its_install(tmp_path, monkeypatch):
    mod = _module()
    out = tmp_path / "out"
    out.mkdir()
    ends = [0.001024, 0.001126, 0.001229, 0.001331, 0.001434]  # 500, 550, 600, 650, 700 ns a folio
    for i, chunk in enumerate((ends[:3], ends[3:]), 1):
        lines = []
        for k, d in enumerate(chunk):
            lines += _exec(200 + k, 0, 20.0 + k, 20.0 + k, 20.0 + k + d)
        (out / f"end_writeback.trace{i}").write_text("\n".join(lines) + "\n")
    (out / "end_writeback.log").write_text(
        "2026-11-29 10:20:01 start 1 load 0.91 1.02 1.30\n2026-11-29 10:20:05 end   1 rc 0 load 0.9 1 1.3\n"
        "2026-11-29 10:21:01 start 2 load 1.21 1.10 1.30\n"
    )
    mod.cmd_release(str(out))
    rel = json.loads((out / "release.json").read_text())
    assert rel["cost"]["end_writeback"] == 600
    q = statistics.quantiles([500, 550, 600, 650, 700], n=4)
    assert rel["uncertainty_ns"]["end_writeback"] == round((q[2] - q[0]) / 2)
    assert "10:20-10:21 UTC" in rel["probes"]["end_writeback"] and "0.91-1.21" in rel["probes"]["end_writeback"]
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "host-costs.json").write_text(json.dumps(
        {"schema": "vmlab.host-costs/1", "cost": {"clear_page": 1704, "end_writeback": 561},
         "probes": {"clear_page": "fault-anon"}, "uncertainty_ns": {"clear_page": 160},
         "not_fitted": {"remove_mapping": "reclaim-around"}}))
    mod.cmd_install(str(out), str(cache))
    doc = json.loads((cache / "host-costs.json").read_text())
    assert doc["cost"] == {"clear_page": 1704, "end_writeback": 600}
    assert doc["probes"]["clear_page"] == "fault-anon" and doc["probes"]["end_writeback"].startswith("traced")
    assert doc["not_fitted"] == {"remove_mapping": "reclaim-around"}


def test_a_trace_that_times_no_release_fails_rather_than_write_0(tmp_path):
    out = subprocess.run([sys.executable, str(SCRIPT), "release", str(tmp_path)], capture_output=True, text=True,
                         check=False)
    assert out.returncode != 0 and "no trace in" in out.stderr
    (tmp_path / "end_writeback.trace1").write_text("\n".join(_exec(7, 0, 1.0, 1.0, 1.01, pages=(2048, 2048))) + "\n")
    out = subprocess.run([sys.executable, str(SCRIPT), "release", str(tmp_path)], capture_output=True, text=True,
                         check=False)
    assert out.returncode != 0 and "0 release(s) timed" in out.stderr
    assert not (tmp_path / "release.json").exists()
