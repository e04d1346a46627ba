#!/usr/bin/env python3
"""How a 4 KiB O_DIRECT random read's latency grows with O_DIRECT writes in flight beside it.

Usage: probe-read-under-writes.py DIR [SECONDS_PER_LEVEL]

A scratch file of 512 MiB in DIR (written once, so its extents are real and reads reach the
device): the first half is read, 4 KiB at random offsets by one thread, one read at a time; the
second half is overwritten by K writer threads, each with one write of W bytes in flight,
sequential in its own slice (a swap-out stream). For each (W, K) it prints the reads' mean,
median and 90th percentile latency, the writes' mean latency and the write rate, as JSON lines.
The file is removed. Used for `run --host`'s disk (docs/notes/history/era-6.8-blk.md, wbt25).
"""
import json, mmap, os, random, statistics, sys, threading, time

KIB = 1024
MIB = 1 << 20
HALF = 256 * MIB


def aligned(n):
    return mmap.mmap(-1, n)  # page-aligned, as O_DIRECT needs


def main():
    d = sys.argv[1]
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 1.5
    path = os.path.join(d, f"wbt25-probe-{os.getpid()}")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_DIRECT, 0o600)
    try:
        buf = aligned(4 * MIB)
        buf.write(bytes(range(256)) * (4 * MIB // 256))
        for off in range(0, 2 * HALF, 4 * MIB):
            os.pwritev(fd, [buf], off)
        os.fsync(fd)
        levels = [(512 * KIB, k) for k in (0, 1, 2, 4, 8, 16)] + [(128 * KIB, k) for k in (4, 16)]
        for wsize, k in levels:
            print(json.dumps(level(fd, secs, wsize, k)), flush=True)
    finally:
        os.close(fd)
        os.unlink(path)


def level(fd, secs, wsize, k):
    stop = threading.Event()
    wlat = []
    lock = threading.Lock()

    def writer(i):
        b = aligned(wsize)
        b.write(b"\x5a" * wsize)
        slice_ = HALF // max(k, 1) // wsize * wsize
        base = HALF + i * slice_
        pos, mine = 0, []
        while not stop.is_set():
            t = time.perf_counter_ns()
            os.pwritev(fd, [b], base + pos)
            mine.append(time.perf_counter_ns() - t)
            pos = (pos + wsize) % slice_
        with lock:
            wlat.extend(mine)

    ts = [threading.Thread(target=writer, args=(i,)) for i in range(k)]
    for t in ts:
        t.start()
    time.sleep(0.2)  # the writers reach their steady state
    with lock:
        pass
    rb = aligned(4 * KIB)
    rng = random.Random(25)
    lat = []
    t0 = time.perf_counter_ns()
    w0 = None
    while time.perf_counter_ns() - t0 < secs * 1e9:
        off = rng.randrange(HALF // (4 * KIB)) * 4 * KIB
        t = time.perf_counter_ns()
        os.preadv(fd, [rb], off)
        lat.append(time.perf_counter_ns() - t)
    took = time.perf_counter_ns() - t0
    stop.set()
    for t in ts:
        t.join()
    lat.sort()
    q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))] / 1000
    return {
        "write_kib": wsize // KIB,
        "writers": k,
        "reads": len(lat),
        "read_mean_us": round(statistics.fmean(lat) / 1000, 1),
        "read_p50_us": round(q(0.5), 1),
        "read_p90_us": round(q(0.9), 1),
        "read_p99_us": round(q(0.99), 1),
        "write_mean_us": round(statistics.fmean(wlat) / 1000, 1) if wlat else None,
        "write_mb_s": round(len(wlat) * wsize / ((took + 0.2e9) / 1e9) / 1e6, 1) if wlat else 0,
    }


if __name__ == "__main__":
    main()
