"""scripts/real-table.py on a fake record: two rows of made-up host runs, a stand-in `vmlab` that
writes one of two small simulated JSONs, no real run and no simulation."""

import json
import subprocess
import sys
from pathlib import Path

from scripts_util import load_script

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "real-table.py"
COUNTERS = ["pgscan_file", "pgsteal_file", "pswpin", "pgactivate", "nr_vmscan_immediate_reclaim"]


def run_json(elapsed, sys_s, some, vm, marks=None):
    """A vmlab.run/1 document with only what the table reads."""
    metrics = {"sys_s": sys_s, **(marks or {})}
    psi = {k: {"avg10": 0.0, "avg60": 0.0, "avg300": 0.0, "total": int(some * 1e6)} for k in ("some", "full")}
    return {"schema": "vmlab.run/1", "elapsed_s": elapsed, "metrics": metrics, "pressure": psi, "vmstat": vm}


def host_run(elapsed, sys_s, some, vm):
    r = run_json(elapsed, sys_s, some, vm)
    return {
        "elapsed_s": r["elapsed_s"],
        "sys_s": sys_s,
        "psi_some_s": some,
        "psi_full_s": some,
        "vmstat": vm,
    }


def setup(tmp_path):
    # Row "small": every figure inside but pgactivate (host 10,000 / 12,000, vmlab 20,000: ×1.82,
    # 9,000 pages over) and PSI (×2.0 on a thrashing example).
    # Row "big": elapsed ×0.5 and kernel CPU ×2.0 out; pgscan_file falls where the host's rises.
    small_host = [
        host_run(10.0, 1.0, 1.0, {"pgscan_file": 100_000, "pgsteal_file": 90_000, "pgactivate": 10_000, "pswpin": 100_000}),
        host_run(12.0, 1.2, 1.0, {"pgscan_file": 110_000, "pgsteal_file": 95_000, "pgactivate": 12_000, "pswpin": 100_100}),
    ]
    big_host = [
        host_run(20.0, 1.0, 2.0, {"pgscan_file": 200_000, "pgsteal_file": 180_000, "pgactivate": 11_000, "pswpin": 103_000}),
        host_run(22.0, 1.0, 2.0, {"pgscan_file": 210_000, "pgsteal_file": 190_000, "pgactivate": 11_500, "pswpin": 103_100}),
    ]
    sims = {
        "small": run_json(11.0, 1.1, 2.0, {"pgscan_file": 110_000, "pgsteal_file": 93_000, "pgactivate": 20_000, "pswpin": 100_000}),
        "big": run_json(10.5, 2.2, 2.0, {"pgscan_file": 100_000, "pgsteal_file": 185_000, "pgactivate": 11_000, "pswpin": 90_000}),
    }
    for k, d in sims.items():
        (tmp_path / f"canned-{k}.json").write_text(json.dumps(d))
    rec = {
        "schema": "vmlab.real-record/1",
        "counters": COUNTERS,
        "rows": [
            {"id": "small", "workload": "tiny small", "scenario": "tiny.toml", "sets": ["vars.v=small"], "disk": "var-tmp", "elapsed": "elapsed_s", "psi": True, "runs": small_host},
            {"id": "big", "workload": "tiny big", "scenario": "tiny.toml", "sets": ["vars.v=big"], "disk": "loop-x", "elapsed": "elapsed_s", "psi": False, "runs": big_host, "disk_sets": ["disk.sda.bandwidth=\"1GB/s\""]},
        ],
        "pairs": [["small", "big"]],
        "speedup": {"one": "big", "many": "small"},
    }
    (tmp_path / "rec.json").write_text(json.dumps(rec))
    # The stand-in binary: records its command line, writes the canned run the --set names.
    fake = tmp_path / "vmlab"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import sys, shutil, json, pathlib\n"
        "a = sys.argv[1:]\n"
        "if a == ['--version']:\n"
        "    print('vmlab fake'); sys.exit(0)\n"
        f"pathlib.Path({str(tmp_path)!r}, 'calls.txt').open('a').write(json.dumps(a) + '\\n')\n"
        "import os\n"
        f"pathlib.Path({str(tmp_path)!r}, 'env.txt').open('a').write(os.environ.get('VMLAB_CACHE_DIR', '-') + '\\n')\n"
        "v = [x for x in a if x.startswith('vars.v=')][0].split('=')[1]\n"
        f"shutil.copy(pathlib.Path({str(tmp_path)!r}, 'canned-' + v + '.json'), a[a.index('--json') + 1])\n"
    )
    fake.chmod(0o755)
    return fake


def table(tmp_path, *extra):
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "rec.json"), *extra],
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_table_marks_what_is_outside_and_only_that(tmp_path):
    fake = setup(tmp_path)
    out = table(tmp_path, "--vmlab", str(fake), "--json", str(tmp_path / "t.json"))
    assert out.returncode == 0, out.stderr
    doc = json.loads((tmp_path / "t.json").read_text())
    cells = {(r["id"], c["figure"]): c for r in doc["rows"] for c in r["cells"]}
    # Inside: the host mean is 11.0 s, 105,000 scanned.
    assert cells[("small", "elapsed_s")]["ok"] is True
    assert cells[("small", "pgscan_file")]["ok"] is True
    assert abs(cells[("small", "pgscan_file")]["ratio"] - 110_000 / 105_000) < 1e-9
    # Outside.
    assert cells[("small", "pgactivate")]["ok"] is False
    assert cells[("small", "psi_some_s")]["ok"] is False
    assert cells[("big", "elapsed_s")]["ok"] is False
    assert cells[("big", "sys_s")]["ok"] is False
    # -1,250 pages is ×0.89 and within 2,000 pages anyway; PSI is not bounded on a non-example.
    assert cells[("big", "pgactivate")]["ok"] is True
    assert cells[("big", "psi_some_s")]["ok"] is None
    # A counter zero on both sides is left out.
    assert ("small", "nr_vmscan_immediate_reclaim") not in cells
    # The pair: the host's pgscan_file rises (runs apart), vmlab's falls; pgsteal_file rises on both.
    pairs = {p["figure"]: p for p in doc["pairs"]}
    assert pairs["pgscan_file"]["ok"] is False and pairs["pgscan_file"]["host_way"] == "up"
    assert pairs["pgsteal_file"]["ok"] is True
    # pgactivate: the host's runs overlap (10,000-12,000 against 11,000-11,500): no direction.
    assert pairs["pgactivate"]["ok"] is None
    # pswpin: the host's runs are apart but +3 % is no move, so vmlab's fall is not checked.
    assert pairs["pswpin"]["host_way"] == "flat" and pairs["pswpin"]["ok"] is None
    assert pairs["pswpin"]["sim_way"] == "down"
    # Speedup: host 21 / 11 = 1.91, vmlab 10.5 / 11 = 0.95.
    assert doc["speedup"]["ok"] is False
    assert any("pgactivate" in x for x in doc["outside"])
    assert "✗" in out.stdout and "| tiny small | elapsed_s |" in out.stdout
    # The loop row replays its recorded disk --sets before its own; the other does not.
    calls = [json.loads(x) for x in (tmp_path / "calls.txt").read_text().splitlines()]
    big = next(c for c in calls if "vars.v=big" in c)
    small = next(c for c in calls if "vars.v=small" in c)
    assert big.index('disk.sda.bandwidth="1GB/s"') < big.index("vars.v=big")
    assert not any(x.startswith("disk.") for x in small)
    assert big[:4] == ["run", "--host", "--disk-dir", "/var/tmp"]
    assert "start small" in out.stderr and "[2/2]" in out.stderr


def test_a_live_disk_dir_replaces_the_recorded_sets(tmp_path):
    fake = setup(tmp_path)
    out = table(tmp_path, "--vmlab", str(fake), "--disk-dir", f"loop-x={tmp_path}", "--json", "-")
    assert out.returncode == 0, out.stderr
    calls = [json.loads(x) for x in (tmp_path / "calls.txt").read_text().splitlines()]
    big = next(c for c in calls if "vars.v=big" in c)
    assert big[3] == str(tmp_path) and not any(x.startswith("disk.") for x in big)
    assert json.loads(out.stdout)["schema"] == "vmlab.real-table/1"


def test_kept_simulations_are_not_run_again(tmp_path):
    fake = setup(tmp_path)
    sims = tmp_path / "sims"
    sims.mkdir()
    for k in ("small", "big"):
        (sims / f"{k}.json").write_text((tmp_path / f"canned-{k}.json").read_text())
    out = table(tmp_path, "--vmlab", str(fake), "--sims", str(sims))
    assert out.returncode == 0, out.stderr
    assert not (tmp_path / "calls.txt").exists()
    assert "Outside (" in out.stdout


def test_only_some_rows(tmp_path):
    fake = setup(tmp_path)
    out = table(tmp_path, "--vmlab", str(fake), "--only", "small", "--json", "-")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [r["id"] for r in doc["rows"]] == ["small"] and doc["pairs"] == [] and doc["speedup"] is None
    assert len((tmp_path / "calls.txt").read_text().splitlines()) == 1
    out = table(tmp_path, "--vmlab", str(fake), "--only", "nosuch")
    assert out.returncode == 2 and "no rows nosuch" in out.stderr


def test_bad_input_is_one_clear_line(tmp_path):
    (tmp_path / "rec.json").write_text('{"schema": "vmlab.run/1"}')
    out = table(tmp_path, "--vmlab", "/nonexistent")
    assert out.returncode == 2
    assert "not vmlab.real-record/1" in out.stderr
    (tmp_path / "rec.json").write_text("{")
    out = table(tmp_path)
    assert out.returncode == 2 and "not JSON" in out.stderr
    fake = setup(tmp_path)
    rec = json.loads((tmp_path / "rec.json").read_text())
    rec["pairs"] = [["small", "nosuch"]]
    (tmp_path / "rec.json").write_text(json.dumps(rec))
    out = table(tmp_path, "--vmlab", str(fake))
    assert out.returncode == 2 and "does not name two rows" in out.stderr
    rec["pairs"] = []
    (tmp_path / "rec.json").write_text(json.dumps(rec))
    out = table(tmp_path, "--vmlab", str(tmp_path / "no-such-vmlab"))
    assert out.returncode == 2 and "not an executable" in out.stderr


def test_the_hosts_cpu_wait_is_shown_beside_psi_and_never_bounded():
    """A host run's group cpu.pressure comes out as an unbounded host-only cell (psi28: the stall of a
    preempted reclaimer is memory stall too), and a run without it adds no cell."""
    rt = load_rt()
    vm = {c: 0 for c in rt.COUNTERS}
    sim = run_json(10.0, 1.0, 0.5, vm)
    runs = [host_run(10.0, 1.0, 1.0, vm), host_run(10.0, 1.0, 1.0, vm)]
    runs[0]["cpu_psi_some_s"], runs[1]["cpu_psi_some_s"] = 0.4, 0.6
    row = {"id": "x", "elapsed": "elapsed_s", "psi": True, "runs": runs}
    cells = {c["figure"]: c for c in rt.row_cells(row, sim)}
    wait = cells["host_cpu_psi_some_s"]
    assert wait["sim"] is None and wait["ok"] is None and abs(wait["mean"] - 0.5) < 1e-9
    assert cells["psi_some_s"]["ok"] is False  # ×0.5 on a thrashing example stays outside
    for r in runs:
        del r["cpu_psi_some_s"]
    assert "host_cpu_psi_some_s" not in {c["figure"] for c in rt.row_cells(row, sim)}


def test_a_named_cache_is_copied_and_handed_to_the_simulations(tmp_path):
    """--cache DIR (or the record's `cache`) reaches `run --host` as VMLAB_CACHE_DIR, through a copy,
    so the named directory (kept in the repository with a record) is never written to."""
    fake = setup(tmp_path)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "host-costs.json").write_text('{"schema": "vmlab.host-costs/1", "cost": {"clear_page": 3000}}')
    out = table(tmp_path, "--vmlab", str(fake), "--cache", str(cache))
    assert out.returncode == 0, out.stderr
    dirs = (tmp_path / "env.txt").read_text().split()
    assert len(dirs) == 2 and len(set(dirs)) == 1 and dirs[0] != str(cache)
    assert (Path(dirs[0]) / "host-costs.json").read_text() == (cache / "host-costs.json").read_text()
    assert "cost table and disk from" in out.stderr
    # Without one, the environment's (here none) is left to `run --host`.
    (tmp_path / "env.txt").unlink()
    out = table(tmp_path, "--vmlab", str(fake))
    assert out.returncode == 0 and (tmp_path / "env.txt").read_text().split() == ["-", "-"]
    # A cache without a cost table, and a record naming a cache outside the repository, are refused.
    out = table(tmp_path, "--vmlab", str(fake), "--cache", str(tmp_path / "nosuch"))
    assert out.returncode == 2 and "no host-costs.json" in out.stderr
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps({"rows": []}))
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "record", "--rows", str(rows), "--runs", str(tmp_path), "--cache", str(cache), "--out", str(tmp_path / "r.json")],
        capture_output=True, text=True, check=False,
    )
    assert out.returncode == 2 and "not inside the repository" in out.stderr


def load_rt():
    return load_script("real-table.py")


def test_the_workloads_own_counts_replace_the_host_wide_ones_where_every_run_has_them(tmp_path):
    """`own` of a real run (traced in the workload's tasks) is what a counter is compared with when
    every run of the row has it and it is complete; it is marked (own). Otherwise the host-wide delta."""
    rt = load_rt()
    vm = {"pgscan_anon": 120_000, "pgactivate": 40_000, "pswpout": 6_000}

    def real(own, complete=True):
        r = run_json(10.0, 1.0, 1.0, vm)
        r["params"] = {"real": True}
        if own is not None:
            r["own"] = {"complete": complete, "counters": own, "lost_events": 0 if complete else 9}
        return r

    own = {"pgscan_anon": 106_000, "pgactivate": 26_000, "pswpout": 0, "pgrotated_not_a_counter": 1}
    # figures(): a complete own kept (issue-17 counters only), an incomplete one dropped.
    assert rt.figures(real(own), "elapsed_s", "x")["own"] == {"pgscan_anon": 106_000, "pgactivate": 26_000, "pswpout": 0}
    assert "own" not in rt.figures(real(own, complete=False), "elapsed_s", "x")
    sim = run_json(10.0, 1.0, 1.0, {"pgscan_anon": 108_000, "pgactivate": 27_000, "pswpout": 0})
    both = [rt.figures(real(own), "elapsed_s", "a"), rt.figures(real(own), "elapsed_s", "b")]
    cells = {c["figure"]: c for c in rt.row_cells({"id": "o", "elapsed": "elapsed_s", "runs": both}, sim)}
    assert cells["pgactivate"]["scope"] == "own" and cells["pgactivate"]["host"] == [26_000, 26_000]
    assert cells["pgactivate"]["ok"] is True  # ×1.04 against the own count; ×0.68 host-wide
    assert cells["pgscan_anon"]["scope"] == "own" and cells["pgscan_anon"]["ok"] is True
    # pswpout: 0 own in both runs and 0 simulated: left out, though the host-wide delta is 6,000.
    assert "pswpout" not in cells
    # One run without own (an older build, or --no-trace): the whole row is host-wide.
    mixed = [both[0], rt.figures(real(None), "elapsed_s", "c")]
    cells_m = {c["figure"]: c for c in rt.row_cells({"id": "m", "elapsed": "elapsed_s", "runs": mixed}, sim)}
    assert cells_m["pgactivate"]["scope"] == "host-wide" and cells_m["pgactivate"]["host"] == [40_000, 40_000]
    assert cells_m["pgactivate"]["ok"] is False
    assert cells_m["pswpout"]["ok"] is False  # 0 simulated against 6,000 host-wide
    # A pair whose rows differ in scope gives no direction.
    rec = {"rows": [{"id": "o", "workload": "o"}, {"id": "m", "workload": "m"}], "pairs": [["o", "m"]]}
    pairs = {p["figure"]: p for p in rt.pair_checks(rec, {"o": list(cells.values()), "m": list(cells_m.values())})}
    assert pairs["pgactivate"]["host_way"] == "scopes differ" and pairs["pgactivate"]["ok"] is None
    # And in the printed table.
    fake = setup(tmp_path)
    rec = json.loads((tmp_path / "rec.json").read_text())
    for r in rec["rows"][0]["runs"]:
        r["own"] = {"pgactivate": 19_000, "pgscan_file": 105_000}
    (tmp_path / "rec.json").write_text(json.dumps(rec))
    out = table(tmp_path, "--vmlab", str(fake), "--json", str(tmp_path / "t.json"))
    assert out.returncode == 0, out.stderr
    assert "| pgactivate (own) | 20,000 | 19,000 / 19,000 |" in out.stdout
    assert "| pgsteal_file | 93,000 |" in out.stdout
    doc = json.loads((tmp_path / "t.json").read_text())
    c = {x["figure"]: x for x in doc["rows"][0]["cells"]}
    assert (c["pgactivate"]["scope"], c["pgactivate"]["ok"], c["pgsteal_file"]["scope"]) == ("own", True, "host-wide")


def test_the_runs_inode_count_is_pinned_in_the_record_and_handed_to_the_simulation(tmp_path):
    """`vmlab real` keeps the host's inodes in use (params.inodes_in_use), which 6.x's flusher counts
    as dirty pages; the record keeps their mean per row and the simulation gets it as a --set
    before the row's own, so the table does not follow the host's count at the time it is printed."""
    runs = tmp_path / "runs"
    runs.mkdir()
    for n, inodes, dirty in ((1, 100_000, 30_000), (2, 103_001, 31_000)):
        r = run_json(10.0, 1.0, 1.0, {"pgactivate": 10_000})
        r["params"] = {"real": True, "kernel": "6.18", "inodes_in_use": inodes, "host_dirty_kb": dirty}
        (runs / f"small-{n}.json").write_text(json.dumps(r))
    r = run_json(10.0, 1.0, 1.0, {"pgactivate": 10_000})
    r["params"] = {"real": True, "kernel": "6.18"}
    (runs / "big-1.json").write_text(json.dumps(r))
    rows = tmp_path / "rows.json"
    spec = [
        {"id": "small", "workload": "s", "scenario": "tiny.toml", "sets": ["vars.v=small"], "disk": "var-tmp", "elapsed": "elapsed_s", "psi": False},
        {"id": "big", "workload": "b", "scenario": "tiny.toml", "sets": ["vars.v=big"], "disk": "var-tmp", "elapsed": "elapsed_s", "psi": False},
    ]
    rows.write_text(json.dumps({"rows": spec}))
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "record", "--rows", str(rows), "--runs", str(runs), "--out", str(tmp_path / "r.json")],
        capture_output=True, text=True, check=False,
    )
    assert out.returncode == 0, out.stderr
    rec = {r["id"]: r for r in json.loads((tmp_path / "r.json").read_text())["rows"]}
    # And the other writers' dirty pages at the runs' starts (params.host_dirty_kb), in bytes.
    assert rec["small"]["moment_sets"] == ["machine.inodes_in_use=101500", "machine.foreign_dirty=31232000"]
    assert "moment_sets" not in rec["big"], "a run without the count: the simulation reads the host's"
    rt = load_rt()
    a = type("A", (), {"disk_dir": None, "vmlab": "vmlab"})()
    cmd = rt.sim_command(a, rec["small"], tmp_path / "o.json")
    sets = [cmd[i + 1] for i, x in enumerate(cmd) if x == "--set"]
    assert sets == ["machine.inodes_in_use=101500", "machine.foreign_dirty=31232000", "machine.reported_at_start=false", "vars.v=small"]
