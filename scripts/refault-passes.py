#!/usr/bin/env python3
"""Refaults, activations and restores per pass of a reader that re-reads one file set, in vmlab
and on the host, and where in each pass refaults stop being activated.

    scripts/refault-passes.py sim FILE.refaults --pages N
    scripts/refault-passes.py sample OUT [--every S] -- CMD ...
    scripts/refault-passes.py host OUT --pages N [--skip K]
    scripts/refault-passes.py dives TRACE --reader PID

`sim` reads `vmlab run --refaults FILE`'s lines (one per refaulting folio). `sample` runs CMD
(e.g. `target/ci/vmlab real ...`) while it reads /proc/vmstat every S seconds (default 0.004),
writing a row whenever a counter moved: it reads no memory.stat, which would flush the memcg
statistics the refault test reads. `host` cuts such a file into passes. N is the file set's
pages (384 MiB: 98,304); a pass is N refaulted pages, counted from the first refault (`--skip K`
first drops K host-wide refaults that are not the reader's). Positions are pages into the pass.
The host's counters are host-wide: another process's refaults fall into the passes.
`dives` reads a tracefs `trace` of memcg:memcg_flush_stats, vmscan:mm_vmscan_memcg_reclaim_begin/
_end, vmscan:mm_vmscan_lru_shrink_active and filemap:mm_filemap_add_to_page_cache, and prints the
memcg statistics flushes' cadence while the reader (PID) adds pages, and for each of its limit
reclaims that deactivated more than 10,000 pages (a dive): its duration, the flushes before and
after it, and the pages the reader added between its end and the next flush (tested against the
lists as flushed before the dive).
"""
import argparse
import re
import subprocess
import sys
import time

COUNTERS = [
    "workingset_refault_file",
    "workingset_activate_file",
    "workingset_restore_file",
    "pgdeactivate",
    "pgscan_anon",
]


def pct(pairs, p):
    """The p-quantile of (value, weight) pairs."""
    pairs = sorted(pairs)
    total = sum(w for _, w in pairs)
    acc = 0
    for v, w in pairs:
        acc += w
        if acc >= p * total:
            return v
    return 0


def regions(spans):
    """Runs of (activated, start, end) merged from consecutive spans."""
    out = []
    for a, s, e in spans:
        if out and out[-1][0] == a and out[-1][2] == s:
            out[-1][2] = e
        else:
            out.append([a, s, e])
    return ["%s%d-%d" % ("A" if a else "n", s, e) for a, s, e in out]


def sim_passes(lines, pages):
    """Per pass: refaulted, activated and restored pages, distance quantiles, the workingset
    size's range and the activated ('A') and not activated ('n') stretches."""
    passes = {}
    done = 0
    for line in lines:
        if line.startswith("#") or not line.strip():
            continue
        f = line.split()
        nr, dist, ws, act, rest = int(f[2]), int(f[3]), int(f[4]), int(f[5]), int(f[6])
        p = passes.setdefault(done // pages, {"ref": 0, "act": 0, "rest": 0, "dist": [], "ws": [], "spans": []})
        pos = done % pages
        p["ref"] += nr
        p["act"] += nr * act
        p["rest"] += nr * rest
        p["dist"].append((dist, nr))
        p["ws"].append(ws)
        p["spans"].append((act, pos, pos + nr))
        done += nr
    return passes


def host_passes(rows, pages, skip):
    """Per pass from /proc/vmstat samples: counter deltas, and the stretches where refaults rose
    without activations ('n') or with ('A'), to the sample."""
    base = None
    passes = {}
    prev = None
    for t, v in rows:
        if base is None:
            base = v
        if v[0] - base[0] <= skip or prev is None:
            prev = v
            continue
        done = max(0, prev[0] - base[0] - skip)
        p = passes.setdefault(done // pages, {"d": [0] * len(COUNTERS), "spans": []})
        d = [a - b for a, b in zip(v, prev)]
        p["d"] = [a + b for a, b in zip(p["d"], d)]
        if d[0]:
            pos = done % pages
            p["spans"].append((d[1] * 2 >= d[0], pos, pos + d[0]))
        prev = v
    return passes


def read_samples(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            x = line.split()
            rows.append((float(x[0]), [int(v) for v in x[1:]]))
    return rows


TRACE_LINE = re.compile(r"\s*(\S+)-(\d+)\s+\[\d+\]\s+\S+\s+([\d.]+): (\w+): (.*)")


def dives(lines, reader):
    """The reader's dives and the flushes around them, from a tracefs text."""
    ev = []
    for line in lines:
        m = TRACE_LINE.match(line)
        if m:
            ev.append((float(m.group(3)), int(m.group(2)), m.group(4), m.group(5)))
    ev.sort()
    adds = [
        (t, 1 << int(re.search(r"order=(\d+)", r).group(1)))
        for t, p, n, r in ev
        if p == reader and n == "mm_filemap_add_to_page_cache"
    ]
    if not adds:
        return None
    t0, t1 = adds[0][0], adds[-1][0]
    flushes = [
        t
        for t, _, n, r in ev
        if n == "memcg_flush_stats" and t0 <= t <= t1 and ("needs_flush=1" in r or "force=1" in r)
    ]
    calls, cur = [], None
    for t, p, n, r in ev:
        if p != reader:
            continue
        if n == "mm_vmscan_memcg_reclaim_begin":
            cur = [t, None, 0]
        elif n == "mm_vmscan_lru_shrink_active" and cur:
            cur[2] += int(re.search(r"nr_deactivated=(\d+)", r).group(1))
        elif n == "mm_vmscan_memcg_reclaim_end" and cur:
            cur[1] = t
            calls.append(cur)
            cur = None
    out = []
    for b, e, d in calls:
        if d <= 10000:
            continue
        before = [t for t in flushes if t < b]
        after = [t for t in flushes if t > e]
        inside = sum(1 for t in flushes if b <= t <= e)
        nxt = after[0] if after else None
        pages = sum(n for t, n in adds if e < t and (nxt is None or t < nxt))
        out.append(
            {
                "start": b,
                "ms": (e - b) * 1e3,
                "deactivated": d,
                "flushes_inside": inside,
                "last_before_ms": (b - before[-1]) * 1e3 if before else None,
                "next_after_ms": (nxt - e) * 1e3 if nxt else None,
                "pages_before_flush": pages,
            }
        )
    gaps = sorted(b - a for a, b in zip(flushes, flushes[1:]))
    return {"flushes": len(flushes), "gap_ms": [gaps[len(gaps) // 2] * 1e3, gaps[-1] * 1e3] if gaps else None, "dives": out}


def sample(out_path, every, cmd):
    with open(out_path, "w") as out:
        out.write("# t " + " ".join(COUNTERS) + "\n")
        proc = subprocess.Popen(cmd)
        last = None
        while True:
            v = {}
            with open("/proc/vmstat") as f:
                for line in f:
                    k, x = line.split()
                    if k in COUNTERS:
                        v[k] = x
            row = " ".join(v[k] for k in COUNTERS)
            if row != last:
                out.write("%.4f %s\n" % (time.time(), row))
                last = row
            if proc.poll() is not None:
                return proc.returncode
            time.sleep(every)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("sim")
    s.add_argument("file")
    s.add_argument("--pages", type=int, required=True)
    h = sub.add_parser("host")
    h.add_argument("file")
    h.add_argument("--pages", type=int, required=True)
    h.add_argument("--skip", type=int, default=0)
    d = sub.add_parser("dives")
    d.add_argument("file")
    d.add_argument("--reader", type=int, required=True)
    m = sub.add_parser("sample")
    m.add_argument("out")
    m.add_argument("--every", type=float, default=0.004)
    m.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args(argv)
    if a.mode == "sample":
        cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
        if not cmd:
            ap.error("sample: no command after --")
        return sample(a.out, a.every, cmd)
    if a.mode == "dives":
        with open(a.file) as f:
            r = dives(f, a.reader)
        if r is None:
            print("no page added by pid %d" % a.reader)
            return 1
        print("flushes while the reader adds pages: %d, gap median %.1f ms, max %.1f ms" % (r["flushes"], *r["gap_ms"]))
        for x in r["dives"]:
            print(
                "dive at %.4f: %.1f ms, %d deactivated, %d flushes inside, last flush %.1f ms before, next %.1f ms "
                "after; %d pages added before it"
                % (
                    x["start"],
                    x["ms"],
                    x["deactivated"],
                    x["flushes_inside"],
                    x["last_before_ms"] if x["last_before_ms"] is not None else -1,
                    x["next_after_ms"] if x["next_after_ms"] is not None else -1,
                    x["pages_before_flush"],
                )
            )
        return 0
    if a.mode == "sim":
        with open(a.file) as f:
            passes = sim_passes(f, a.pages)
        tot = [0, 0, 0]
        for i in sorted(passes):
            p = passes[i]
            tot = [tot[0] + p["ref"], tot[1] + p["act"], tot[2] + p["rest"]]
            q = "/".join(str(pct(p["dist"], x)) for x in (0.1, 0.5, 0.9))
            ws = p["ws"]
            print(
                "pass %d: refault %d activate %d restore %d; distance p10/50/90 %s; workingset %d-%d; %s"
                % (i + 1, p["ref"], p["act"], p["rest"], q, min(ws), max(ws), " ".join(regions(p["spans"])))
            )
        print("total: refault %d activate %d restore %d" % tuple(tot))
        return 0
    passes = host_passes(read_samples(a.file), a.pages, a.skip)
    for i in sorted(passes):
        p = passes[i]
        d = ", ".join("%s %d" % (k, x) for k, x in zip(COUNTERS, p["d"]))
        print("pass %d: %s; %s" % (i + 1, d, " ".join(regions(p["spans"]))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
