"""scripts/real-table.py simulating each real run at its own moment figures (issue 17): a stand-in
`vmlab` whose simulated pgactivate is made of the moment --sets it was given, so each check can
tell which figures reached which simulation. No build, no real run."""

import json
import subprocess
import sys
from pathlib import Path

from scripts_util import load_script

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "real-table.py"


def host_run(pgactivate, inodes=None, dirty_kb=None, elapsed=1.0):
    r = {"elapsed_s": elapsed, "sys_s": 0.5, "psi_some_s": 0.1, "psi_full_s": 0.1, "vmstat": {"pgactivate": pgactivate}}
    if inodes is not None:
        r["inodes_in_use"] = inodes
    if dirty_kb is not None:
        r["host_dirty_kb"] = dirty_kb
    return r


def fake_vmlab(tmp_path):
    """pgactivate = inodes in use + the other writers' dirty KiB; exit 2 (bad input, as vmlab's
    loader) for more than 1 GiB of them, and exit 1 where the row's --set asks it to crash."""
    fake = tmp_path / "vmlab"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import sys, json, pathlib\n"
        "a = sys.argv[1:]\n"
        "if a == ['--version']:\n"
        "    print('vmlab fake'); sys.exit(0)\n"
        f"pathlib.Path({str(tmp_path)!r}, 'calls.txt').open('a').write(json.dumps(a) + '\\n')\n"
        "sets = dict(a[i + 1].split('=', 1) for i, x in enumerate(a) if x == '--set')\n"
        "if 'vars.crash' in sets:\n"
        "    print('thread panicked', file=sys.stderr); sys.exit(1)\n"
        "inodes, dirty = int(sets.get('machine.inodes_in_use', 0)), int(sets.get('machine.foreign_dirty', 0))\n"
        "if dirty > 1 << 30:\n"
        "    print(f'--set machine.foreign_dirty={dirty}: too much', file=sys.stderr); sys.exit(2)\n"
        "psi = {k: {'total': 100000} for k in ('some', 'full')}\n"
        "doc = {'schema': 'vmlab.run/1', 'elapsed_s': 1.0, 'metrics': {'sys_s': 0.5}, 'pressure': psi,\n"
        "       'vmstat': {'pgactivate': inodes + dirty // 1024}}\n"
        "pathlib.Path(a[a.index('--json') + 1]).write_text(json.dumps(doc))\n"
    )
    fake.chmod(0o755)
    return fake


def record(tmp_path, rows):
    rec = {"schema": "vmlab.real-record/1", "rows": rows, "pairs": [], "speedup": None}
    (tmp_path / "rec.json").write_text(json.dumps(rec))


def row(rid, runs, moment_sets, sets=()):
    return {"id": rid, "workload": rid, "scenario": "tiny.toml", "sets": [f"vars.v={rid}", *sets], "disk": "var-tmp", "elapsed": "elapsed_s", "runs": runs, "moment_sets": moment_sets}


def table(tmp_path, *extra):
    out = subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "rec.json"), "--vmlab", str(tmp_path / "vmlab"), "--json", str(tmp_path / "t.json"), *extra],
        capture_output=True,
        text=True,
        check=False,
    )
    doc = json.loads((tmp_path / "t.json").read_text()) if out.returncode == 0 else None
    return out, doc


def calls(tmp_path):
    out = []
    for line in (tmp_path / "calls.txt").read_text().splitlines():
        a = json.loads(line)
        out.append([a[i + 1] for i, x in enumerate(a) if x == "--set"])
    return out


def cells(doc, rid):
    return {c["figure"]: c for r in doc["rows"] if r["id"] == rid for c in r["cells"]}


def test_runs_with_different_moments_get_one_simulation_each_and_identical_ones_share(tmp_path):
    fake_vmlab(tmp_path)
    # Runs 1 and 3 met 1 MB of the host's other writers' dirty data, run 2 900 MB (29d's
    # dirty-writer runs met 0.4 MB to 1.15 GB). The row's moment_sets is their mean, which none met.
    runs = [host_run(1_000, 100_000, 1_000), host_run(9_000, 100_000, 900_000), host_run(2_000, 100_000, 1_000)]
    record(tmp_path, [row("dw", runs, ["machine.inodes_in_use=100000", "machine.foreign_dirty=307883008"])])
    out, doc = table(tmp_path)
    assert out.returncode == 0, out.stderr
    got = sorted(calls(tmp_path))
    assert got == sorted(
        [
            ["machine.inodes_in_use=100000", "machine.foreign_dirty=1024000", "machine.reported_at_start=false", "vars.v=dw"],
            ["machine.inodes_in_use=100000", "machine.foreign_dirty=921600000", "machine.reported_at_start=false", "vars.v=dw"],
        ]
    ), "one simulation for runs 1 and 3, one for run 2; never the mean"
    c = cells(doc, "dw")["pgactivate"]
    # Per run 101,000 / 1,000,000 / 101,000: their mean is compared with the host's (4,000).
    assert c["sim_runs"] == [101_000, 1_000_000, 101_000]
    assert c["sim"] == (101_000 + 1_000_000 + 101_000) / 3 and c["mean"] == 4_000
    assert "| dw | elapsed_s | 1.000 |" in out.stdout, "a figure every run's simulation agrees on is printed once"
    assert "| 400,667 (101,000 / 1,000,000 / 101,000) | 1,000 / 9,000 / 2,000 | 4,000 |" in out.stdout
    head = out.stdout.splitlines()[0]
    assert "each real run simulated at its own moment figures" in head and "dw 2/3" in head
    sims = {s["id"]: s["runs"] for s in doc["moments"]["rows"]["dw"]["simulations"]}
    assert sims == {"dw-1": [1, 3], "dw-2": [2]}
    assert "start dw-2" in out.stderr and "[2/2]" in out.stderr
    # Asked for the row's way, the same record gives one simulation at moment_sets.
    (tmp_path / "calls.txt").unlink()
    out, doc = table(tmp_path, "--moments", "row")
    assert out.returncode == 0, out.stderr
    assert calls(tmp_path) == [["machine.inodes_in_use=100000", "machine.foreign_dirty=307883008", "machine.reported_at_start=false", "vars.v=dw"]]
    assert cells(doc, "dw")["pgactivate"]["sim"] == 400_667 and "sim_runs" not in cells(doc, "dw")["pgactivate"]
    assert "each row simulated once at its record's moment_sets" in out.stdout.splitlines()[0]


def test_a_record_without_per_run_figures_uses_its_moment_sets(tmp_path):
    fake_vmlab(tmp_path)
    old = [host_run(1_000), host_run(3_000)]
    # Identical figures in every run: one simulation, named as the row, as before per-run figures.
    same = [host_run(1_000, 5, 10), host_run(1_000, 5, 10)]
    record(tmp_path, [row("old", old, ["machine.inodes_in_use=104417", "machine.foreign_dirty=304640"]), row("same", same, ["machine.inodes_in_use=5", "machine.foreign_dirty=10240"])])
    out, doc = table(tmp_path)
    assert out.returncode == 0, out.stderr
    assert sorted(calls(tmp_path)) == [
        ["machine.inodes_in_use=104417", "machine.foreign_dirty=304640", "machine.reported_at_start=false", "vars.v=old"],
        ["machine.inodes_in_use=5", "machine.foreign_dirty=10240", "machine.reported_at_start=false", "vars.v=same"],
    ]
    assert cells(doc, "old")["pgactivate"]["sim"] == 104_417 + 297
    m = doc["moments"]["rows"]
    assert m["old"]["per_run"] is False and m["same"]["per_run"] is True and [s["id"] for s in m["same"]["simulations"]] == ["same"]
    assert "row whose runs lack them at the record's moment_sets: old" in out.stdout.splitlines()[0]


def test_a_figure_only_some_runs_have_comes_from_moment_sets():
    rt = load_script("real-table.py")
    r = row("x", [host_run(0, 7, 1), host_run(0, 8)], ["machine.inodes_in_use=8", "machine.foreign_dirty=2048"])
    # Every run has its inodes, not every one its dirty KiB: the inodes per run, the dirty pinned.
    assert rt.run_moment_sets(r) == [
        ["machine.inodes_in_use=7", "machine.foreign_dirty=2048"],
        ["machine.inodes_in_use=8", "machine.foreign_dirty=2048"],
    ]
    r["runs"] = [host_run(0), host_run(0, 8)]
    assert rt.run_moment_sets(r) is None
    plan = rt.sim_plan([r], "runs")
    assert [(s["id"], s["moment_sets"], s["runs"], s["per_run"]) for s in plan] == [("x", r["moment_sets"], [0, 1], False)]


def test_a_run_whose_moment_vmlab_refuses_is_left_out_of_both_means_and_named(tmp_path):
    """29d's dw384-7 met 1.15 GB of other writers' dirty data, more than the simulated machine's
    memory: `vmlab run` refuses it as bad input. That run is left out of the simulated and the
    host's means, its host figures bracketed and the reason printed; any other failure stops."""
    fake_vmlab(tmp_path)
    runs = [host_run(1_000, 10, 0), host_run(50_000, 10, 2 << 20), host_run(3_000, 10, 2_000)]
    record(tmp_path, [row("dw", runs, ["machine.inodes_in_use=10", "machine.foreign_dirty=716800000"])])
    out, doc = table(tmp_path)
    assert out.returncode == 0, out.stderr
    c = cells(doc, "dw")["pgactivate"]
    assert c["left_out"] == [2] and c["sim_runs"] == [10, None, 2_010]
    assert c["sim"] == 1_010 and c["mean"] == 2_000 and c["host"] == [1_000, 50_000, 3_000]
    assert "| 1,010 (10 / — / 2,010) | 1,000 / [50,000] / 3,000 | 2,000 |" in out.stdout
    assert "dw: run 2 not simulated, left out of both means" in out.stdout and "too much" in out.stdout
    assert doc["not_simulated"] == [{"row": "dw", "runs": [2], "error": "--set machine.foreign_dirty=2147483648: too much"}]
    assert "REFUSED" in out.stderr
    # A crash is no moment figure's fault: the table stops, as it does for a row simulated once.
    record(tmp_path, [row("dw", runs[:1] + runs[2:], [], ["vars.crash=1"])])
    out, _ = table(tmp_path)
    assert out.returncode == 2 and "exited 1" in out.stderr and "thread panicked" in out.stderr


def test_each_run_gets_its_own_free_page_reporting_state_and_no_false_pin(tmp_path):
    fake_vmlab(tmp_path)
    runs = [host_run(1_000, 5, 10), host_run(1_000, 5, 10)]
    for r, (small, large, rep) in zip(runs, [(100, 200, 300), (400, 500, 600)]):
        r.update(host_unreported_small=small, host_unreported_large=large, host_reported=rep)
    pool = ["machine.reported_at_start=true", "machine.unreported_small=250", "machine.unreported_large=350", "machine.reported_free=450"]
    record(tmp_path, [row("fp", runs, ["machine.inodes_in_use=5", "machine.foreign_dirty=10240", *pool])])
    out, _ = table(tmp_path)
    assert out.returncode == 0, out.stderr
    got = sorted(calls(tmp_path))
    assert got == sorted(
        [
            ["machine.inodes_in_use=5", "machine.foreign_dirty=10240", "machine.reported_at_start=true", f"machine.unreported_small={s}", f"machine.unreported_large={l}", f"machine.reported_free={r}", "vars.v=fp"]
            for s, l, r in [(100, 200, 300), (400, 500, 600)]
        ]
    ), "each run its own pool, never the mean, and no reported_at_start=false beside it"
