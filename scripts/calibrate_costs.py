#!/usr/bin/env python3
"""The arithmetic of scripts/calibrate-costs.sh (docs/REAL.md, "Calibrating the cost table").

  calibrate_costs.py solve OUT PAIRS CUR      one Newton step; prints `fit e=ns ...`, `drop e ...`
  calibrate_costs.py table OUT PAIRS CUR DROPPED WRITE_TO   the fitted table (fit.txt on stdout)
  calibrate_costs.py check OUT W              simulated with the fit ÷ the host, one workload
  calibrate_costs.py release OUT              end_writeback from the traced probe's runs (OUT/release.json)
  calibrate_costs.py install OUT WRITE_TO     OUT/release.json into WRITE_TO/host-costs.json
  calibrate_costs.py selftest                 the solver on made-up charges

OUT holds `W.realI.json` (`vmlab real`, I = 1..) and `W.sim.E.json` (`vmlab run --host` with the
entries at CUR, E = `base`, or at CUR with entry E 1,000 ns dearer). PAIRS is `W:E:FIG ...`, FIG
`sys` (metrics.sys_s) or `stall` (the group's PSI some total).

Why the host's runs are summarised by their median (or the least), and why an entry can be left unfitted:
each entry is a per-operation cost, solved from its probe's system time after the other entries'
charges in that probe are taken out. Where an entry is a small remainder of large charges (a
cold small file's per-request CPU, after its folios and its open are paid), the host's spread
between runs of the probes moves the remainder more than its own size: on 2026-11-28 the same
real runs gave `read_pages` anywhere from -3.6 to +3 µs depending on which run of read-tree-large
was taken. Such an entry is not determined by this host's measurements, so it keeps vmlab's
table value and its probe becomes a check; the script says so rather than fail the whole fit.
"""
import json
import math
import os
import re
import statistics
import sys

STEP_NS = 1000.0


def fig(path, what):
    r = json.load(open(path))
    return r["metrics"]["sys_s"] if what == "sys" else r["pressure"]["some"]["total"] / 1e6


def real_runs(out, w, what):
    runs, i = [], 1
    while os.path.exists(os.path.join(out, f"{w}.real{i}.json")):
        runs.append(fig(os.path.join(out, f"{w}.real{i}.json"), what))
        i += 1
    if not runs:
        sys.exit(f"calibrate-costs: no real run of {w} in {out}")
    return runs


def median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def stat_name():
    return os.environ.get("STAT", "median")


def summary(xs, stat=None):
    """A probe's host figure from its runs: the median (STAT=median, the default: the runs it is
    compared with, docs/REAL.md's, are means of runs under the same shared load), or the least
    (STAT=min: the floor, since other sessions' load only adds system time; 20–30 % lower here).
    A pair's own fourth field (`W:E:FIG:min`) overrides STAT for that probe."""
    return min(xs) if (stat or stat_name()) == "min" else median(xs)


def run_spread(xs, stat=None):
    """How far a probe's figure moves with the choice of its runs: half their range for the median;
    for the least, the gap to the next least (how far the floor rises without its lowest run) —
    a probe whose runs fall in two modes (read-cached's on the development host since its
    restart of 2026-11-28, docs/REAL.md) keeps a floor that its slow mode's distance does not
    decide."""
    if (stat or stat_name()) == "min":
        s = sorted(xs)
        return s[1] - s[0] if len(s) > 1 else 0.0
    return (max(xs) - min(xs)) / 2


def invert(a):
    """The inverse of a square matrix (Gauss–Jordan, partial pivoting); None if singular."""
    k = len(a)
    m = [list(row) + [1.0 if i == j else 0.0 for j in range(k)] for i, row in enumerate(a)]
    for col in range(k):
        piv = max(range(col, k), key=lambda r: abs(m[r][col]))
        if abs(m[piv][col]) < 1e-9:
            return None
        m[col], m[piv] = m[piv], m[col]
        p = m[col][col]
        m[col] = [x / p for x in m[col]]
        for r in range(k):
            if r != col and m[r][col] != 0.0:
                f = m[r][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col])]
    return [row[k:] for row in m]


def fit(charges, gap, spread, c0):
    """Solve charges · Δ = gap for the entries, dropping those the host's spread does not determine.

    charges[i][j]: how many times probe i charges entry j; gap[i]: host − simulated, seconds; spread[i]: half the range of the probe's host
    runs, seconds; c0[j]: the entries where the charges were measured, ns. Probe i is entry i's.
    Returns ({j: (ns, ± ns)}, [(j, why)]): an entry whose solution is below 1 ns, or within its
    uncertainty of 0 (the spread of each probe carried through the inverse), is dropped with its
    probe, the worst first, and the rest solved again without it.
    """
    keep = list(range(len(c0)))
    dropped = []
    while keep:
        a = [[charges[i][j] for j in keep] for i in keep]
        inv = invert(a)
        if inv is None:
            # A singular system: some entry is charged by no kept probe (or two probes charge the
            # same mix). Drop the entry whose own probe charges it least.
            j = min(keep, key=lambda j: abs(charges[j][j]))
            dropped.append((j, "not charged apart from the other entries by its probe"))
            keep.remove(j)
            continue
        sol, unc = {}, {}
        for r, j in enumerate(keep):
            d = sum(inv[r][c] * gap[i] for c, i in enumerate(keep))
            sol[j] = c0[j] + d * 1e9
            unc[j] = math.sqrt(sum((inv[r][c] * spread[i]) ** 2 for c, i in enumerate(keep))) * 1e9
        bad = [j for j in keep if sol[j] < 1 or sol[j] <= unc[j]]
        if not bad:
            return {j: (sol[j], unc[j]) for j in keep}, dropped
        j = min(bad, key=lambda j: sol[j] / max(unc[j], 1e-9))
        why = (
            f"solved to {sol[j]:.0f} ± {unc[j]:.0f} ns: "
            + ("not positive" if sol[j] < 1 else "within the host's run-to-run spread of 0")
        )
        dropped.append((j, why))
        keep.remove(j)
    return {}, dropped


def parse_pairs(s):
    """`W:E:FIG[:STAT] ...` as (W, E, FIG, STAT or None); STAT is `median` or `min`."""
    out = []
    for p in s.split():
        f = p.split(":")
        if len(f) not in (3, 4) or f[2] not in ("sys", "stall") or (len(f) == 4 and f[3] not in ("median", "min")):
            sys.exit(f"calibrate-costs: pair {p!r}: expected WORKLOAD:ENTRY:sys|stall[:median|min]")
        out.append((f[0], f[1], f[2], f[3] if len(f) == 4 else None))
    return out


def parse_cur(s):
    return {kv.split("=")[0]: float(kv.split("=")[1]) for kv in s.split()}


def probe_rows(out, pairs):
    ents = [e for _, e, _, _ in pairs]
    charges, gap, spread, med = [], [], [], []
    for w, _, o, st in pairs:
        runs = real_runs(out, w, o)
        b = fig(os.path.join(out, f"{w}.sim.base.json"), o)
        # how many times the probe charges each entry: its figure's rise per ns of the entry
        charges.append([(fig(os.path.join(out, f"{w}.sim.{e}.json"), o) - b) / (STEP_NS * 1e-9) for e in ents])
        m = summary(runs, st)
        med.append(m)
        gap.append(m - b)
        spread.append(run_spread(runs, st))
    return ents, charges, gap, spread, med


def cmd_solve(out, pairs_s, cur_s):
    pairs = parse_pairs(pairs_s)
    cur = parse_cur(cur_s)
    ents, charges, gap, spread, _ = probe_rows(out, pairs)
    sol, dropped = fit(charges, gap, spread, [cur[e] for e in ents])
    for j, why in dropped:
        w = pairs[j][0]
        print(f"calibrate-costs: {ents[j]} not fitted from {w} ({why}); vmlab's table value kept, "
              f"{w} stays a check", file=sys.stderr)
    print("fit " + " ".join(f"{ents[j]}={round(v)}" for j, (v, _) in sorted(sol.items())))
    print("unc " + " ".join(f"{ents[j]}={round(u)}" for j, (_, u) in sorted(sol.items())))
    print("drop " + " ".join(ents[j] for j, _ in dropped))


def cmd_table(out, pairs_s, fit_s, unc_s, dropped_s, write_to):
    pairs = parse_pairs(pairs_s)
    cost = {k: int(v) for k, v in parse_cur(fit_s).items()}
    unc = {k: int(v) for k, v in parse_cur(unc_s).items()}
    dropped = dropped_s.split()
    print("# [machine.cost] fitted to this host (scripts/calibrate-costs.sh); ns per operation")
    probes, not_fitted = {}, {}
    for w, e, o, st in pairs:
        runs = real_runs(out, w, o)
        real = " ".join(f"{x:.3f}" for x in runs)
        if e in cost:
            probes[e] = w
            print(f"{e} = {cost[e]}    # ± {unc[e]} from {w}: real {o} {real} s ({st or stat_name()} {summary(runs, st):.3f})")
        elif e in dropped:
            not_fitted[e] = w
            print(f"# {e}: not fitted from {w} (real {o} {real} s): vmlab's table value kept")
    if write_to:
        os.makedirs(write_to, exist_ok=True)
        kernel = open("/proc/sys/kernel/osrelease").read().strip()
        doc = {"schema": "vmlab.host-costs/1", "kernel": kernel, "cost": cost,
               "probes": probes, "uncertainty_ns": unc, "not_fitted": not_fitted}
        dest = os.path.join(write_to, "host-costs.json")
        with open(dest, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
        print(f"calibrate-costs: wrote {dest}", file=sys.stderr)
    with open(os.path.join(out, "fit.json"), "w") as f:
        json.dump({"cost": cost, "uncertainty_ns": unc, "not_fitted": dropped}, f, indent=2)
        f.write("\n")


def cmd_check(out, w, pairs_s=""):
    """Simulated ÷ host for one workload; the host's figure by the statistic its pair names, if any."""
    stats = {(pw, o): st for pw, _, o, st in parse_pairs(pairs_s)} if pairs_s else {}
    line = f"{w:15}"
    for o in ("sys", "stall"):
        real = real_runs(out, w, o)
        m, s = summary(real, stats.get((w, o))), fig(os.path.join(out, f"{w}.sim.fit.json"), o)
        ratio = f"{s / m:.2f}" if m > 0 else "-"
        line += f"  {o} sim {s:.3f} real {' '.join(f'{x:.3f}' for x in real)} ({ratio})"
    print(line)


# The traced probe (calibrate-costs.sh's TRACED): not a fit, a time read off the host's own worker.
# ext4 ends an unwritten io_end's writeback in its `ext4-rsv-conversion` worker: ext4_end_io_rsv_work
# → ext4_do_flush_completed_IO, io_end by io_end → ext4_end_io_end, which converts the extent
# (ext4_convert_unwritten_io_end_vec → ... → ext4_ext_handle_unwritten_extents, whose tracepoint is
# at its head, fs/ext4/extents.c) and then ext4_release_io_end → ext4_finish_bio →
# end_page_writeback per folio (fs/ext4/page-io.c, GorilaMond/Linux6.2). So (workqueue_execute_end − the conversion's event) over an
# execution that converted exactly one io_end is that io_end's conversion and release, and ÷ its
# pages the per-folio figure vmlab's `end_writeback` charges (page_writeback::release_io_end).
TRACE_LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(?:\S+\s+)?([\d.]+): (\w+): (.*)$")
UNWRITTEN_LEN = re.compile(r"\bm_len (\d+)\b")
# io_ends below this many pages (the file's last) are not timed: their fixed costs weigh more.
MIN_IO_END_PAGES = 1024


def release_per_folio(lines):
    """(executions, [ns a folio]) from a trace's lines: the worker's executions are keyed by the
    worker's pid (an unbound worker may change CPU inside one), and only executions that converted
    exactly one io_end of at least MIN_IO_END_PAGES pages give a figure."""
    open_exec, out, executions = {}, [], 0
    for line in lines:
        m = TRACE_LINE.match(line)
        if not m:
            continue
        _, pid, _, ts, event, rest = m.groups()
        t = float(ts)
        if event == "workqueue_execute_start":
            open_exec[pid] = []
        elif event == "ext4_ext_handle_unwritten_extents" and pid in open_exec:
            n = UNWRITTEN_LEN.search(rest)
            if n:
                open_exec[pid].append((t, int(n.group(1))))
        elif event == "workqueue_execute_end" and pid in open_exec:
            convs = open_exec.pop(pid)
            executions += 1
            if len(convs) == 1 and convs[0][1] >= MIN_IO_END_PAGES:
                out.append((t - convs[0][0]) * 1e9 / convs[0][1])
    return executions, out


def release_summary(xs):
    """median, first and third quartile (statistics.quantiles' default, as dw41's release.py)."""
    if len(xs) < 2:
        return (xs[0], xs[0], xs[0]) if xs else None
    q = statistics.quantiles(xs, n=4)
    return statistics.median(xs), q[0], q[2]


def traced_runs(out):
    runs, i = [], 1
    while os.path.exists(os.path.join(out, f"end_writeback.trace{i}")):
        runs.append(os.path.join(out, f"end_writeback.trace{i}"))
        i += 1
    return runs


def run_log(out):
    """The probe's runs' `DATE HH:MM:SS start I load A B C` lines: (date, time, 1-min load) by run,
    the last start of each (a run interrupted and made again logs twice)."""
    starts = {}
    path = os.path.join(out, "end_writeback.log")
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            if len(f) >= 6 and f[2] == "start" and f[4] == "load":
                starts[f[3]] = (f[0], f[1], f[5])
    return sorted(starts.values())


def cmd_release(out):
    """Prints each run's and the pooled release per folio; writes OUT/release.json, or fails
    (exit 1) when the traces time no release: never a 0 in the table."""
    paths = traced_runs(out)
    if not paths:
        sys.exit(f"calibrate-costs: end_writeback: no trace in {out} (end_writeback.trace1 ...)")
    pooled = []
    for p in paths:
        with open(p, errors="replace") as f:
            n, xs = release_per_folio(f)
        pooled += xs
        s = release_summary(xs)
        got = f"median {s[0]:.0f} ns, quartiles {s[1]:.0f} / {s[2]:.0f}" if s else "none"
        print(f"end_writeback {os.path.basename(p)}: {n} executions of ext4_end_io_rsv_work, "
              f"{len(xs)} of one io_end: {got}")
    if len(pooled) < 2:
        sys.exit(f"calibrate-costs: end_writeback: {len(pooled)} release(s) timed in {len(paths)} trace(s) in {out}: "
                 "no ext4_end_io_rsv_work execution converted one io_end of "
                 f"{MIN_IO_END_PAGES}+ pages (was the file written through the traced loop device?)")
    med, q1, q3 = release_summary(pooled)
    unc = (q3 - q1) / 2
    starts = run_log(out)
    when = ""
    if starts:
        loads = sorted(float(x[2]) for x in starts)
        when = (f"{starts[0][0]} {starts[0][1][:5]}-{starts[-1][1][:5]} UTC, 1-min load "
                f"{loads[0]:.2f}-{loads[-1]:.2f} at the runs' starts; ")
    heap = os.environ.get("TRACED_HEAP", "128MiB")
    probe = (f"traced (scripts/calibrate-costs.sh, {when}{len(paths)} runs of vmlab real dirty-writer "
             f"{heap} on a -O encrypt loop image): the ext4-rsv-conversion worker's release per folio, "
             "(workqueue_execute_end - ext4_ext_handle_unwritten_extents) / the io_end's pages over the "
             f"ext4_end_io_rsv_work executions that converted one io_end; median of {len(pooled):,}; "
             f"uncertainty half the interquartile range {q1:.0f}-{q3:.0f}")
    print(f"end_writeback = {round(med)}    # ± {round(unc)} (pooled: median of {len(pooled):,}, "
          f"quartiles {q1:.0f} / {q3:.0f} ns)")
    with open(os.path.join(out, "release.json"), "w") as f:
        json.dump({"cost": {"end_writeback": round(med)}, "uncertainty_ns": {"end_writeback": round(unc)},
                   "probes": {"end_writeback": probe}}, f, indent=2)
        f.write("\n")


def cmd_install(out, write_to):
    """OUT/release.json's entry into WRITE_TO/host-costs.json: over the fitted table the script
    has just written, or, when it fitted nothing (PAIRS empty), over the table already there."""
    rel = json.load(open(os.path.join(out, "release.json")))
    dest = os.path.join(write_to, "host-costs.json")
    if os.path.exists(dest):
        doc = json.load(open(dest))
    else:
        os.makedirs(write_to, exist_ok=True)
        doc = {"schema": "vmlab.host-costs/1", "kernel": open("/proc/sys/kernel/osrelease").read().strip(),
               "cost": {}}
    for k in ("cost", "probes", "uncertainty_ns"):
        doc.setdefault(k, {}).update(rel[k])
    doc.get("not_fitted", {}).pop("end_writeback", None)
    with open(dest, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    print(f"calibrate-costs: end_writeback {rel['cost']['end_writeback']} ns written to {dest}", file=sys.stderr)


def cmd_selftest():
    # Three entries, three probes; the host's figures made from known costs.
    truth = [2000.0, 500.0, 4000.0]
    charges = [[262144, 0, 0], [0, 590000, 9], [0, 65536, 65536]]
    base = [0.1, 0.05, 0.02]  # simulated at c0, seconds
    c0 = [300.0, 400.0, 1.0]
    host = [base[i] + sum(charges[i][j] * (truth[j] - c0[j]) * 1e-9 for j in range(3)) for i in range(3)]
    gap = [host[i] - base[i] for i in range(3)]
    sol, dropped = fit(charges, gap, [0.001] * 3, c0)
    assert not dropped, dropped
    for j in range(3):
        assert abs(sol[j][0] - truth[j]) < 1e-6 * truth[j], (j, sol[j], truth[j])
    # An entry that is a remainder of larger charges, with a spread larger than itself, is
    # dropped; the others are solved without its probe.
    charges4 = [row + [0] for row in charges] + [[0, 32768, 2048, 2048]]
    for row, extra in zip(charges4[:3], [0, 64, 4096]):
        row[3] = extra
    truth4 = truth + [300.0]
    c04 = c0 + [1.0]
    host4 = [sum(charges4[i][j] * (truth4[j] - c04[j]) * 1e-9 for j in range(4)) for i in range(4)]
    sol4, dropped4 = fit(charges4, host4, [0.0005, 0.0005, 0.02, 0.004], c04)
    assert [j for j, _ in dropped4] == [3], dropped4
    assert set(sol4) == {0, 1, 2}, sol4
    # Without its spread it is determined.
    sol5, dropped5 = fit(charges4, host4, [0.0] * 4, c04)
    assert not dropped5 and abs(sol5[3][0] - 300.0) < 1e-6, (sol5, dropped5)
    print("calibrate_costs selftest: ok")


if __name__ == "__main__":
    cmds = {"solve": cmd_solve, "table": cmd_table, "check": cmd_check, "release": cmd_release,
            "install": cmd_install, "selftest": cmd_selftest}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        got = sys.argv[1] if len(sys.argv) > 1 else "nothing"
        sys.exit(f"calibrate_costs.py: expected one of {', '.join(cmds)}, got {got}\n{__doc__}")
    cmds[sys.argv[1]](*sys.argv[2:])
