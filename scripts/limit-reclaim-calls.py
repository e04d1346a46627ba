#!/usr/bin/env python3
"""What each limit-reclaim call costs, from an ftrace text trace (docs/REAL.md, limit29).

    scripts/limit-reclaim-calls.py HOST.trace [SIM.trace [--entry NS --charged NS]]

A trace holds `mm_vmscan_memcg_reclaim_begin`/`_end`, on the host the reclaimer's
`sched_switch` events, and if asked `mm_vmscan_lru_shrink_inactive` (a call's passes: the
priority levels it reached) (`scripts/trace-limit-reclaim.sh` records them in a tracefs instance of its
own; `vmlab run --trace F --events mm_vmscan_memcg_reclaim_begin,mm_vmscan_memcg_reclaim_end`
writes the simulated one). Per call: wall (begin to end), time on the CPU (wall minus the time
switched out), time switched out while runnable (state R: preempted) or asleep. With a
simulated trace as well it prints the per-call on-CPU time the simulation lacks, which is what
`machine.cost.shrink_node` is fitted to when each call makes one pass (stream-hotset's do);
`--entry NS --charged NS` (the simulation's entry and its `shrink_node` row, ns) checks that.
"""
import re
import statistics
import sys

LINE = re.compile(r"^\s*(.+)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+):\s+(\w+):\s?(.*)$")


def calls(path):
    open_calls, done, out = {}, [], {}
    for line in open(path):
        m = LINE.match(line)
        if not m:
            continue
        _, pid, _, t, ev, rest = m.groups()
        pid, t = int(pid), float(t)
        if ev == "mm_vmscan_memcg_reclaim_begin":
            out.pop(pid, None)
            open_calls[pid] = {
                "t0": t, "on": 0.0, "since": t, "preempted": 0.0, "asleep": 0.0, "switches": 0, "prios": set()
            }
        elif ev == "mm_vmscan_memcg_reclaim_end":
            c = open_calls.pop(pid, None)
            if c:
                if pid in out:
                    # Its switch-in was filtered out: the stretch since it left is counted as
                    # off the CPU, so that the parts add up to the wall.
                    t0, st = out.pop(pid)
                    c["preempted" if st.startswith("R") else "asleep"] += t - t0
                else:
                    c["on"] += t - c["since"]
                c["wall"] = t - c["t0"]
                done.append(c)
        elif ev == "mm_vmscan_lru_shrink_inactive" and pid in open_calls:
            # One node: each priority level a call reaches is one shrink_node pass.
            open_calls[pid]["prios"].add(re.search(r"priority=(\d+)", rest).group(1))
        elif ev == "sched_switch":
            prev = int(re.search(r"prev_pid=(\d+)", rest).group(1))
            nxt = int(re.search(r"next_pid=(\d+)", rest).group(1))
            state = re.search(r"prev_state=(\S+)", rest).group(1)
            # A switch-in the filter missed (the task's priority boosted away from the filter's)
            # leaves the task marked out: its next switch-out does not count that stretch again.
            if prev in open_calls and prev not in out:
                c = open_calls[prev]
                c["on"] += t - c["since"]
                c["switches"] += 1
                out[prev] = (t, state)
            if nxt in open_calls and nxt in out:
                t0, st = out.pop(nxt)
                c = open_calls[nxt]
                c["preempted" if st.startswith("R") else "asleep"] += t - t0
                c["since"] = t
    return done


def summary(name, cs):
    if not cs:
        sys.exit(f"{name}: no limit-reclaim call")
    total = lambda k: sum(c[k] for c in cs)
    on = [c["on"] for c in cs]
    switched = sum(1 for c in cs if c["switches"])
    print(
        f"{name}: {len(cs)} calls, wall {total('wall'):.4f} s, on the CPU {total('on'):.4f} s "
        f"(mean {statistics.mean(on) * 1e6:.2f} us, median {statistics.median(on) * 1e6:.1f} us), "
        f"preempted {total('preempted'):.4f} s, asleep {total('asleep'):.4f} s, {switched} calls switched out"
    )
    passes = sum(len(c["prios"]) for c in cs)
    if passes:
        print(f"{name}: {passes} passes (priority levels with shrink_inactive events), {passes / len(cs):.3f} a call")
    return len(cs), total("on")


def main():
    import argparse

    ap = argparse.ArgumentParser(description="What each limit-reclaim call costs (docs/REAL.md, limit29).")
    ap.add_argument("host", help="the host's trace (tracefs text)")
    ap.add_argument("sim", nargs="?", help="the simulation's trace (vmlab run --trace)")
    ap.add_argument("--entry", type=int, help="the simulation's machine.cost.shrink_node, ns")
    ap.add_argument("--charged", type=int, help="the simulation's shrink_node row, ns")
    a = ap.parse_args()
    n_host, on_host = summary("host", calls(a.host))
    if not a.sim:
        return
    n_sim, on_sim = summary("simulated", calls(a.sim))
    print(f"on the CPU per call, host minus simulated: {(on_host / n_host - on_sim / n_sim) * 1e9:.0f} ns")
    if a.entry and a.charged is not None:
        passes = a.charged / a.entry
        print(f"passes charged {passes:.0f} for {n_sim} calls: {passes / n_sim:.3f} a call")


if __name__ == "__main__":
    main()
