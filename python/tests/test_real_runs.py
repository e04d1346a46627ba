"""scripts/real-runs.py, the host side of issue 17's table: its plan, checked without root by
--dry-run (the runs themselves need root and minutes of the host)."""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "real-runs.py"
ROWS = REPO / "docs" / "real" / "issue17-rows.json"


def dry(*args):
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--rows", str(ROWS), "--runs", "/nonexistent/runs", "--dry-run", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_each_run_is_alone_under_the_lock_at_nice_minus_20_round_by_round():
    out = dry("--rounds", "2", "--only", "sh,ao")
    assert out.returncode == 0, out.stderr
    runs = [line for line in out.stdout.splitlines() if " real " in line]
    assert [r.split("--json ")[1] for r in runs] == [
        "/nonexistent/runs/ao-1.json",
        "/nonexistent/runs/sh-1.json",
        "/nonexistent/runs/ao-2.json",
        "/nonexistent/runs/sh-2.json",
    ]
    for r in runs:
        assert r.startswith("flock /tmp/vmlab-real.lock setsid -w bash -c")
        assert "echo -20 > /proc/self/autogroup; exec nice -n -20" in r
    # No loop image for rows on /var/tmp, and the record command follows.
    assert "mkfs" not in out.stdout
    assert "real-table.py record --rows" in out.stderr


def test_a_loop_encrypt_row_gets_an_image_three_disk_measurements_and_a_clean_up():
    out = dry("--rounds", "2", "--only", "dw128")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert any(line.startswith("mkfs.ext4 -q -F -O encrypt") for line in lines)
    assert any("losetup -f --show --direct-io=on" in line for line in lines)
    probes = [line for line in lines if "run --host --disk-dir" in line]
    assert len(probes) == 3
    # Measured alone, as the runs are: a probe beside other runs reads the image 3-70x slower.
    for p in probes:
        assert "flock /tmp/vmlab-real.lock setsid -w bash -c" in p
        assert "echo -20 > /proc/self/autogroup; exec nice -n -20" in p
    runs = [line for line in lines if " real " in line]
    assert all("vars.heap=128MiB" in r and "--dir /mnt/" in r for r in runs)
    # Undone in reverse: unmount before the loop device goes, the image last.
    tail = lines[-4:]
    assert tail[0].startswith("umount") and tail[2].startswith("losetup -d") and tail[3].startswith("rm -f")
    assert "--disk-sets loop-encrypt=" in out.stderr


def test_an_unknown_row_is_refused():
    out = dry("--only", "nosuch")
    assert out.returncode == 2
    assert "--only: no row nosuch" in out.stderr


def test_a_probes_writes_at_depth_are_read_from_its_summary():
    from scripts_util import load_script

    rr = load_script("real-runs.py")
    import json
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        new, old = Path(d) / "new.json", Path(d) / "old.json"
        note = ("/mnt/x on 7:0 (6.18): 4KiB read 53 us, 1280 KiB read 998 us, write 364 us, 62785 IOPS at depth 32, "
                "1330878828 B/s at most at depth, 1280 KiB writes 16 at once into new blocks 1389925200 B/s => ...")
        new.write_text(json.dumps({"notes": {"host_disk": note}}))
        old.write_text(json.dumps({"notes": {"host_disk": note.split(", 1280 KiB writes")[0] + " => ..."}}))
        assert rr.depth_write_bps(new) == "1.39 GB/s at depth 16"
        assert rr.depth_write_bps(old) == "-"
        assert rr.write_us(new) == 364.0


def test_var_tmp_rows_get_their_disk_measured_three_times_into_the_records_cache():
    out = dry("--rounds", "2", "--only", "ao,sh")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    probes = [line for line in lines if "run --host --disk-dir /var/tmp" in line]
    assert len(probes) == 3
    # Alone under the lock, as the runs; before the rounds, between them, after them.
    assert all(p.startswith("VMLAB_CACHE_DIR=EMPTY-TEMPORARY-DIR flock /tmp/vmlab-real.lock") for p in probes)
    order = [("probe" if "--disk-dir" in line else "run") for line in lines if "--disk-dir" in line or " real " in line]
    assert order == ["probe", "run", "run", "probe", "run", "run", "probe"]
    assert "--cache /nonexistent/runs/cache --out RECORD" in out.stderr


def test_the_var_tmp_median_is_taken_by_its_large_read():
    from scripts_util import load_script

    rr = load_script("real-runs.py")
    import json
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "p.json"
        note = "/var/tmp on 254:0 (6.18): 4KiB read 41 us, 4096 KiB read 3708 us, write 1545 us, ..."
        f.write_text(json.dumps({"notes": {"host_disk": note}}))
        assert rr.read_us(f) == 3708.0
        f.write_text(json.dumps({"notes": {"host_disk": "4KiB read 41 us"}}))
        try:
            rr.read_us(f)
        except rr.Bad as e:
            assert "no large" in str(e)
        else:
            raise AssertionError("a summary without a large read was accepted")
