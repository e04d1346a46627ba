#!/usr/bin/env python3
"""Sample the memory cgroup of a `vmlab real` run every ~50 ms.

    scripts/memcg-series.py OUT.csv [--every SECONDS] -- vmlab real SCENARIO ...

Runs the command, waits for the `vmlab-real-*` group it creates (cgroup v1 under
/sys/fs/cgroup/memory, v2 under /sys/fs/cgroup), and writes its memory.stat as CSV in pages with
the header of `vmlab run --cgroup-series` (t_s,group,inactive_anon,active_anon,inactive_file,
active_file,dirty,writeback), t_s counted from the group's appearance. Take the host-wide lock
and the priority around this script as docs/REAL.md says (`flock /tmp/vmlab-real.lock setsid
bash -c 'echo -20 > /proc/self/autogroup; exec nice -n -20 "$@"' _ scripts/memcg-series.py …`):
the command inherits them. The sampler only reads; a sample takes a few hundred µs of one CPU.
"""
import glob
import os
import subprocess
import sys
import time

FIELDS = ["inactive_anon", "active_anon", "inactive_file", "active_file", "dirty", "writeback"]
# v2 names where they differ from v1's.
V2 = {"dirty": "file_dirty", "writeback": "file_writeback"}
ROOTS = ["/sys/fs/cgroup/memory", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"]


def groups():
    return {p for r in ROOTS for p in glob.glob(os.path.join(r, "vmlab-real-*"))}


def read_stat(path):
    out = {}
    with open(os.path.join(path, "memory.stat")) as f:
        for line in f:
            k, _, v = line.partition(" ")
            out[k] = int(v)
    return out


def main(argv):
    if "--" not in argv or argv.index("--") < 1:
        sys.exit(__doc__)
    sep = argv.index("--")
    opts, cmd = argv[:sep], argv[sep + 1 :]
    out = opts[0]
    every = float(opts[opts.index("--every") + 1]) if "--every" in opts else 0.05
    before = groups()
    proc = subprocess.Popen(cmd)
    path = None
    t0 = time.monotonic()
    while path is None and proc.poll() is None:
        new = groups() - before
        if new:
            path = sorted(new)[0]
            t0 = time.monotonic()
        else:
            time.sleep(0.002)
    rows = [",".join(["t_s", "group"] + FIELDS)]
    v2 = path is not None and not os.path.exists(os.path.join(path, "memory.limit_in_bytes"))
    nxt = time.monotonic()
    while path is not None and proc.poll() is None:
        try:
            st = read_stat(path)
        except OSError:
            break
        t = time.monotonic() - t0
        vals = [st.get(V2.get(k, k) if v2 else k, 0) // 4096 for k in FIELDS]
        rows.append(",".join([f"{t:.3f}", "real"] + [str(v) for v in vals]))
        nxt += every
        time.sleep(max(0.0, nxt - time.monotonic()))
    rc = proc.wait()
    with open(out, "w") as f:
        f.write("\n".join(rows) + "\n")
    sys.exit(rc)


if __name__ == "__main__":
    main(sys.argv[1:])
