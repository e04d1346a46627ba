#!/usr/bin/env python3
"""The host side of issue 17's table: `vmlab real` runs of every row, ready for `real-table.py record`.

    sudo scripts/real-runs.py --rows docs/real/issue17-rows.json --runs DIR [--rounds 2]
                              [--vmlab B] [--only ID,...] [--dir /var/tmp] [--image-size 3GiB]
                              [--lock /tmp/vmlab-real.lock] [--costs FILE] [--dry-run]

Runs every row of ROWS (`vmlab.real-rows/1`) ROUNDS times, the rows in turn round by round, as
docs/REAL.md's records were made: each run alone under LOCK (other measurements on the host take the
same lock), in a session of its own whose autogroup has nice -20, and at nice -20, so other
sessions' builds take no CPU from the workload's reclaim. The loop disk's measurements below run
the same way. Each run writes DIR/ID-N.json (its
`vmlab real --json`), DIR/ID-N.out and .err; DIR/log.txt gets `HH:MM:SS start ID-N load A B C` and
`HH:MM:SS end ID-N rc R load A B C` lines, which `record --log` reads.

A row whose `disk` is `loop-encrypt` runs on a fresh `mkfs.ext4 -O encrypt` image of IMAGE_SIZE in
DIR's file system behind `losetup --direct-io=on` (a file system that takes 4 KiB folios), made
before the first round and removed at the end, also on an error or Ctrl-C. That disk is measured
three times, before the rounds, between them and after (`vmlab run --host --disk-dir` with an empty
cache each time, DIR/disk-loop-encrypt-K.json), because on a shared host one measurement's write
time can be off by 10x; the median by write time is copied to DIR/disk-loop-encrypt.json for
`record --disk-sets loop-encrypt=...`. Since `host-disk/5` each measurement also times writes at
the flusher's depth into the image's new blocks, the disk's write ceiling
(`disk.sda.device_write_bandwidth` in its sets); the log line prints it. The first probe meets a
fresh image, the later ones blocks the runs have written.

Rows on DIR's own disk (var-tmp) get that disk measured at the same three moments, alone under the lock
(DIR/disk-var-tmp-K.json and the measurement itself, DIR/disk-var-tmp-K.host-disk.json); the median by
its large sequential read goes with the cost table (--costs, default the cache's host-costs.json) into
DIR/cache, the record's `--cache`: the host's virtio disk moves within the hour, and a record simulated
with a disk measured on another day compares unlike moments.

At the end it prints the `real-table.py record` command for these runs. `--dry-run` prints every
command instead of running it (no root needed). Python 3.11 standard library only.
"""
import argparse
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOOP = "loop-encrypt"


class Bad(Exception):
    pass


def now() -> str:
    return time.strftime("%H:%M:%S", time.gmtime())


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def alone(lock: str, inner: list[str]) -> list[str]:
    """INNER under LOCK, in a session of its own whose autogroup has nice -20, at nice -20."""
    return ["flock", lock, "setsid", "-w", "bash", "-c",
            'echo -20 > /proc/self/autogroup; exec nice -n -20 "$@"', "_", *inner]


def run_command(vmlab: str, row: dict, where: str, out: Path, lock: str) -> list[str]:
    sets = [x for s in row.get("sets", []) for x in ("--set", s)]
    return alone(lock, [vmlab, "real", str(ROOT / row["scenario"]), *sets, "--dir", where, "--json", str(out)])


def disk_probe_command(vmlab: str, row: dict, mnt: str, out: Path, lock: str) -> list[str]:
    """The disk measurement (and a simulation after it) alone under the lock as a run is: on
    2026-11-29 three probes taken beside other helpers' runs read 4 KiB in 186-3,706 us where
    the image takes 53 us alone (docs/notes/history/real-2026-11-28b.md, dw34)."""
    sets = [x for s in row.get("sets", []) for x in ("--set", s)]
    return alone(lock, [vmlab, "run", "--host", "--disk-dir", mnt, str(ROOT / row["scenario"]), *sets,
                        "--json", str(out)])


def depth_write_bps(sim: Path) -> str:
    """A disk measurement's writes at depth (`host-disk/5`), or `-` for an older one."""
    note = (json.loads(sim.read_text()).get("notes") or {}).get("host_disk") or ""
    m = re.search(r"writes (\d+) at once into new blocks (\d+) B/s", note)
    return f"{int(m.group(2)) / 1e9:.2f} GB/s at depth {m.group(1)}" if m else "-"


def write_us(sim: Path) -> float:
    """A disk measurement's 4 KiB write time, from `notes.host_disk` of a `run --host` JSON."""
    note = (json.loads(sim.read_text()).get("notes") or {}).get("host_disk") or ""
    m = re.search(r"write (\d+) us", note)
    if not m:
        raise Bad(f"{sim}: no `write N us` in notes.host_disk")
    return float(m.group(1))


class Host:
    """Runs commands, or prints them (--dry-run); keeps what it must undo."""

    def __init__(self, dry: bool, log: Path):
        self.dry, self.log, self.undo = dry, log, []

    def do(self, cmd: list[str], env=None, stdout=None, stderr=None) -> int:
        if self.dry:
            pre = " ".join(f"{k}={shlex.quote(v)}" for k, v in (env or {}).items())
            print((pre + " " if pre else "") + shlex.join(cmd))
            return 0
        e = dict(os.environ, **(env or {}))
        return subprocess.run(cmd, env=e, stdout=stdout, stderr=stderr, check=False).returncode

    def must(self, cmd: list[str]) -> str:
        if self.dry:
            print(shlex.join(cmd))
            return "/dev/loopN" if "--show" in cmd else ""
        p = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if p.returncode != 0:
            raise Bad(f"{shlex.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
        return p.stdout.strip()

    def note(self, line: str) -> None:
        if not self.dry:
            with self.log.open("a") as f:
                f.write(line + "\n")


def make_image(h: Host, where: str, size: str) -> str:
    img = Path(where) / f"vmlab-real-runs-{os.getpid()}.img"
    mnt = "/mnt/vmlab-real-runs-PID" if h.dry else tempfile.mkdtemp(prefix="vmlab-real-runs-", dir="/mnt")
    h.must(["truncate", "-s", size, str(img)])
    h.undo.append(["rm", "-f", str(img)])
    h.must(["mkfs.ext4", "-q", "-F", "-O", "encrypt", str(img)])
    dev = h.must(["losetup", "-f", "--show", "--direct-io=on", str(img)])
    h.undo.append(["losetup", "-d", dev])
    h.undo.append(["rmdir", mnt])
    h.must(["mount", dev, mnt])
    h.undo.append(["umount", mnt])
    return mnt


def read_us(sim: Path) -> float:
    """A disk measurement's large sequential read time (`N KiB read M us`, the second such figure of
    `notes.host_disk`), what the var-tmp rows' reads turn on."""
    note = (json.loads(sim.read_text()).get("notes") or {}).get("host_disk") or ""
    m = re.findall(r"(\d+) ?KiB read (\d+) us", note)
    if len(m) < 2:
        raise Bad(f"{sim}: no large `N KiB read M us` in notes.host_disk")
    return float(m[1][1])


def probe_disk(h: Host, a, row: dict, where: str, kind: str, k: int) -> Path:
    """Measures the disk under WHERE afresh (an empty cache) with ROW's scenario; keeps the `run --host`
    JSON as DIR/disk-KIND-K.json and, for var-tmp, the measurement itself (`host-disk-MAJ-MIN.json`)
    beside it as DIR/disk-KIND-K.host-disk.json, the file a record's cache directory holds."""
    out = Path(a.runs) / f"disk-{kind}-{k}.json"
    if h.dry:
        h.do(disk_probe_command(a.vmlab, row, where, out, a.lock), env={"VMLAB_CACHE_DIR": "EMPTY-TEMPORARY-DIR"})
        return out
    with tempfile.TemporaryDirectory(prefix="vmlab-disk-") as cache:
        rc = h.do(disk_probe_command(a.vmlab, row, where, out, a.lock), env={"VMLAB_CACHE_DIR": cache},
                  stdout=subprocess.DEVNULL)
        if rc != 0:
            raise Bad(f"the disk measurement of {where} failed (exit {rc})")
        if kind != LOOP:
            found = sorted(Path(cache).glob("host-disk-*.json"))
            if len(found) != 1:
                raise Bad(f"the disk measurement of {where} left {len(found)} host-disk files, not one")
            (Path(a.runs) / f"disk-{kind}-{k}.host-disk.json").write_text(
                json.dumps({"name": found[0].name, "measurement": json.loads(found[0].read_text())}))
    if kind == LOOP:
        what = f"write {write_us(out):.0f} µs, writes at depth {depth_write_bps(out)}"
    else:
        what = f"large read {read_us(out):.0f} µs"
    print(f"real-runs: {now()} {kind} disk measured ({out.name}: {what})", file=sys.stderr)
    return out


def record_cache(a, probes: list[Path]) -> Path:
    """DIR/cache: the cost table the runs are to be simulated with (--costs) and the median (by large
    read time) of the var-tmp disk's measurements, so that the record's simulations see the disk as
    it was while the runs ran: on 2026-11-29 this host's virtio disk served seed 004's job's reads
    in 398-474 ms at 12:06 UTC and 272-286 ms at 12:56, while the cached measurement stayed one of 28 Nov."""
    cache = Path(a.runs) / "cache"
    cache.mkdir(exist_ok=True)
    best = sorted(probes, key=read_us)[(len(probes) - 1) // 2]
    kept = json.loads(best.with_name(best.name.replace(".json", ".host-disk.json")).read_text())
    (cache / kept["name"]).write_text(json.dumps(kept["measurement"], indent=1) + "\n")
    costs = Path(a.costs)
    if not costs.is_file():
        raise Bad(f"--costs {costs}: no such file (scripts/calibrate-costs.sh writes it)")
    (cache / "host-costs.json").write_text(costs.read_text())
    times = ", ".join(f"{read_us(x):.0f}" for x in probes)
    print(f"real-runs: var-tmp large read times {times} µs; the median's measurement and {costs} are in {cache}",
          file=sys.stderr)
    return cache


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", required=True)
    p.add_argument("--runs", required=True, help="the directory the runs are written to (created)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--vmlab", default=str(ROOT / "target" / "ci" / "vmlab"))
    p.add_argument("--only", metavar="ID,...")
    p.add_argument("--dir", default="/var/tmp", help="where `vmlab real` puts the rows' files (var-tmp rows)")
    p.add_argument("--image-size", default="3GiB")
    p.add_argument("--lock", default="/tmp/vmlab-real.lock")
    p.add_argument("--costs", default=str(Path(os.environ.get("VMLAB_CACHE_DIR") or Path.home() / ".cache" / "vmlab")
                                          / "host-costs.json"),
                   help="the cost table copied into DIR/cache beside the var-tmp disk's measurement")
    p.add_argument("--dry-run", action="store_true")
    a = p.parse_args(argv)
    try:
        spec = json.loads(Path(a.rows).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise Bad(f"--rows {a.rows}: {e}") from None
    rows = spec.get("rows") or []
    if a.only:
        want = a.only.split(",")
        unknown = [i for i in want if i not in {r["id"] for r in rows}]
        if unknown:
            raise Bad(f"--only: no row {', '.join(unknown)} in {a.rows}")
        rows = [r for r in rows if r["id"] in want]
    kinds = {r.get("disk", "var-tmp") for r in rows} - {"var-tmp", LOOP}
    if kinds:
        raise Bad(f"{a.rows}: rows on {', '.join(sorted(kinds))}: only var-tmp and {LOOP} are known")
    if a.rounds < 1:
        raise Bad("--rounds: at least 1")
    if not a.dry_run:
        if os.geteuid() != 0:
            raise Bad("`vmlab real` needs root (or --dry-run)")
        if not Path(a.vmlab).is_file():
            raise Bad(f"--vmlab {a.vmlab}: no such file (cargo build --profile ci -p vmlab)")
        Path(a.runs).mkdir(parents=True, exist_ok=True)
    h = Host(a.dry_run, Path(a.runs) / "log.txt")
    loop_rows = [r for r in rows if r.get("disk") == LOOP]
    dir_rows = [r for r in rows if r.get("disk", "var-tmp") != LOOP]
    probes, dir_probes = [], []

    def measure(k: int) -> None:
        # Both disks at the same three moments, each alone under the lock: before the rounds,
        # between the first two, after the last.
        if mnt:
            probes.append(probe_disk(h, a, loop_rows[0], mnt, LOOP, k))
        if dir_rows:
            dir_probes.append(probe_disk(h, a, dir_rows[0], a.dir, "var-tmp", k))

    try:
        mnt = make_image(h, a.dir, a.image_size) if loop_rows else None
        measure(1)
        total, k = a.rounds * len(rows), 0
        for n in range(1, a.rounds + 1):
            for row in rows:
                k += 1
                rid = f"{row['id']}-{n}"
                where = mnt if row.get("disk") == LOOP else a.dir
                out = Path(a.runs) / f"{rid}.json"
                h.note(f"{now()} start {rid} load {load()}")
                t = time.monotonic()
                if a.dry_run:
                    rc = h.do(run_command(a.vmlab, row, where, out, a.lock))
                else:
                    with open(Path(a.runs) / f"{rid}.out", "w") as o, open(Path(a.runs) / f"{rid}.err", "w") as e:
                        rc = h.do(run_command(a.vmlab, row, where, out, a.lock), stdout=o, stderr=e)
                h.note(f"{now()} end   {rid} rc {rc} load {load()}")
                if not a.dry_run:
                    print(f"real-runs: {now()} [{k}/{total}] {rid} rc {rc} in {time.monotonic() - t:.1f} s",
                          file=sys.stderr)
            if n < a.rounds and max(len(probes), len(dir_probes)) < 2:
                measure(2)
        measure(max(len(probes), len(dir_probes)) + 1)
    finally:
        for cmd in reversed(h.undo):
            if a.dry_run:
                print(shlex.join(cmd))
            else:
                subprocess.run(cmd, capture_output=True, check=False)
    disk_arg = ""
    if probes:
        chosen = Path(a.runs) / f"disk-{LOOP}.json"
        if not a.dry_run:
            best = sorted(probes, key=write_us)[(len(probes) - 1) // 2]
            chosen.write_text(best.read_text())
            times = ", ".join(f"{write_us(x):.0f}" for x in probes)
            depth = ", ".join(depth_write_bps(x) for x in probes)
            print(f"real-runs: {LOOP} write times {times} µs (writes at depth {depth}); the median's measurement"
                  f" is {chosen}", file=sys.stderr)
        disk_arg = (f" --disk-sets {LOOP}={chosen}"
                    f" --disk-reset {LOOP}=disk.sda.ring_descriptors=4294967295")
    cache = "DIR"
    if dir_probes:
        cache = str(Path(a.runs) / "cache") if a.dry_run else str(record_cache(a, dir_probes))
    print(f"real-runs: now  scripts/real-table.py record --rows {a.rows} --runs {a.runs}"
          f" --log {Path(a.runs) / 'log.txt'}{disk_arg} --cache {cache} --out RECORD", file=sys.stderr)
    return 0


def _terminate(signum, frame):
    raise KeyboardInterrupt


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _terminate)
    try:
        sys.exit(main(sys.argv[1:]))
    except Bad as e:
        print(f"real-runs: {e}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("real-runs: interrupted; the image, loop device and mount were removed", file=sys.stderr)
        sys.exit(130)
