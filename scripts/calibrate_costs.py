#!/usr/bin/env python3
"""The arithmetic of scripts/calibrate-costs.sh (docs/REAL.md, "Calibrating the cost table").

  calibrate_costs.py solve OUT PAIRS CUR      one Newton step; prints `fit e=ns ...`, `drop e ...`
  calibrate_costs.py table OUT PAIRS CUR DROPPED WRITE_TO   the fitted table (fit.txt on stdout)
  calibrate_costs.py check OUT W              simulated with the fit ÷ the host, one workload
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
    cmds = {"solve": cmd_solve, "table": cmd_table, "check": cmd_check, "selftest": cmd_selftest}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        got = sys.argv[1] if len(sys.argv) > 1 else "nothing"
        sys.exit(f"calibrate_costs.py: expected one of {', '.join(cmds)}, got {got}\n{__doc__}")
    cmds[sys.argv[1]](*sys.argv[2:])
