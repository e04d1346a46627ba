"""Progress reports, seeds by number, compare's gains (the CLI's to the digit) and plot labels."""

import json
import math
import os
import pathlib
import subprocess
import sys

import pytest

import vmlab
from vmlab import _compare, _progress

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_progress_callable_hears_every_run(small):
    heard = []
    vmlab.run(small, progress=lambda *a: heard.append(a))
    assert heard, "no progress report from a run"
    k, n, profile, sets, now_s, end_s = heard[-1]
    assert (k, n) == (1, 1)
    assert now_s >= 0 and (end_s is None or now_s <= end_s)


def test_progress_off_when_not_interactive(small, capfd):
    # pytest's stderr is not a terminal and this is no notebook: the default draws nothing.
    assert not sys.stderr.isatty()
    assert _progress.make(None)[0] is None
    vmlab.run(small)
    assert capfd.readouterr().err == ""


def test_progress_forced_draws_a_bar(monkeypatch, capsys):
    monkeypatch.setattr(_progress, "_QUIET_S", 0.0)
    cb, close = _progress.make(True)
    cb(3, 30, "linux-6.8", ["vars.threads=4"], 5.0, 10.0)
    close()
    err = capsys.readouterr().err
    assert "run 3/30 linux-6.8 vars.threads=4" in err and "ETA" in err and "[" in err


def test_progress_text_matches_the_cli():
    # The CLI's own unit test holds this same line (crates/vmlab-cli/src/progress.rs).
    _, text = _progress.describe(3, 4, "linux-6.8", ["vars.threads=4"], 5.0, 10.0, 5.0)
    assert text == "run 3/4 linux-6.8 vars.threads=4  simulated 5.0 s of 10 s (50%)  wall 0:05  ETA 0:03"


def test_seeds_have_numbers():
    numbers = {s["number"]: s["name"] for s in vmlab.seeds()}
    assert numbers["004"] == "mmap-sem"


def test_gain_is_positive_for_the_better_run():
    assert _compare.gain(10 / 4.3, 10, "lower") == pytest.approx(100 - 100 / 4.3)
    assert _compare.gain(4.3, 1, "higher") == pytest.approx(330)
    assert _compare.gain(1, 4.3, "higher") < 0
    assert _compare.better("transactions_per_s") == "higher"
    assert _compare.better("vmstat:allocstall") == "lower"


def test_a_real_runs_descriptions_and_objects_do_not_label_columns():
    sim = {"scenario": "s", "profile": "linux-6.8", "params": {}}
    new = {"scenario": "s", "profile": "real-6.18", "params": {"real": True, "cgroup": {"limit_bytes": 1}},
           "notes": {"vmstat_scope": "host-wide deltas"}}
    old = {"scenario": "s", "profile": "real-6.18", "params": {"real": True, "vmstat_scope": "host-wide deltas"}}
    assert _compare.labels([sim, new]) == ["linux-6.8", "real-6.18 real=true"]
    assert _compare.labels([sim, old]) == _compare.labels([sim, new])


def _vmlab_bin():
    # test-all.sh builds everything in its own profile (`ci`) and says so in VMLAB_CARGO_PROFILE;
    # there the binary must exist, or the CLI's half of these tests would be skipped unseen.
    profile = os.environ.get("VMLAB_CARGO_PROFILE")
    dirs = [{"dev": "debug"}.get(profile, profile)] if profile else []
    for d in dirs + ["release", "debug"]:
        b = ROOT / "target" / d / "vmlab"
        if b.exists():
            return str(b)
    if os.environ.get("VMLAB_PYTHON_CARGO_BUILD"):
        pytest.fail(f"test-all.sh built no vmlab binary in target/{dirs[0] if dirs else 'release'}/")
    pytest.skip("no vmlab binary built (cargo build --release -p vmlab)")


@pytest.fixture(scope="module")
def mmap_sem(tmp_path_factory):
    """Seed 004 from Python (by number, from a directory outside the tree) and from the CLI."""
    cwd = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("elsewhere"))
    try:
        runs = vmlab.reproduce("004", progress=False)
    finally:
        os.chdir(cwd)
    out = tmp_path_factory.mktemp("cli") / "mmap-sem.json"
    subprocess.run([_vmlab_bin(), "reproduce", "004", "--json", str(out)], check=True, capture_output=True)
    return runs, out


def test_mmap_sem_16_thread_mmap_gain_is_positive_and_the_cli_agrees(mmap_sem):
    runs, cli_json = mmap_sem
    picked = [
        r
        for r in runs
        if r.params.get("threads") == 16 and r.params.get("mode") == "mmap" and r.profile in ("linux-2.6.26", "linux-6.8")
    ]
    assert [r.profile for r in picked] == ["linux-2.6.26", "linux-6.8"]
    t = vmlab.compare(picked)
    assert list(t.columns) == ["better", "linux-2.6.26", "linux-6.8", "linux-6.8 gain %"]
    g = t.loc["elapsed_s", "linux-6.8 gain %"]
    assert t.loc["elapsed_s", "better"] == "lower"
    assert g > 0, t.loc["elapsed_s"]
    sel = ["--select", "threads=16", "--select", "mode=mmap", "--select", "profile=linux-2.6.26,linux-6.8"]
    doc = json.loads(
        subprocess.run([_vmlab_bin(), "compare", str(cli_json), *sel, "--json", "-"], check=True, capture_output=True).stdout
    )
    assert doc["columns"] == ["linux-2.6.26", "linux-6.8"]
    assert sorted(row["name"] for row in doc["rows"]) == sorted(t.index)
    for row in doc["rows"]:
        py = t.loc[row["name"], "linux-6.8 gain %"]
        col = row["columns"][1]
        cli = col["gain_pct"] if col else None
        if cli is None:
            # A counter one release has and the other has not (each era its own /proc/vmstat):
            # no gain on either side.
            assert math.isnan(py), row["name"]
            continue
        assert f"{cli:.2f}" == f"{py:.2f}", row["name"]
        assert cli == pytest.approx(py, rel=1e-12, abs=1e-12), row["name"]
    text = subprocess.run([_vmlab_bin(), "compare", str(cli_json), *sel], check=True, capture_output=True, text=True)
    line = next(l for l in text.stdout.splitlines() if "elapsed_s" in l)
    assert f"{g:7.2f}%" in line, line


def test_plot_labels_units_and_runs(overcommit_runs):
    import matplotlib.pyplot as plt

    a, b = overcommit_runs
    ax = vmlab.plot([a, b], ["free_kb", "so"])
    assert ax.get_xlabel() == "simulated time (s)"
    assert ax.get_ylabel() == "MiB"
    twin = [o for o in ax.figure.axes if o is not ax]
    assert [t.get_ylabel() for t in twin] == ["KiB/s"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [
        "linux-6.8: MemFree",
        "linux-6.8: swap out (so)",
        "machine.memory=768MiB: MemFree",
        "machine.memory=768MiB: swap out (so)",
    ], legend
    with pytest.raises(ValueError, match="units"):
        a.plot(["free_kb", "so", "cs"])
    plt.close("all")
