"""scripts/limit-reclaim-calls.py on a made-up tracefs text: a call preempted once, a call that
sleeps, a call whose switch-in the priority filter missed, and the passes a call's
shrink_inactive events show."""

from scripts_util import load_script
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "limit-reclaim-calls.py"


def load():
    return load_script("limit-reclaim-calls.py")


def line(comm, pid, t, event, rest):
    return f"{comm:>16}-{pid:<7} [001] d..2.  {t:.6f}: {event}: {rest}\n"


def switch(t, prev, prev_state, nxt):
    rest = (
        f"prev_comm=x prev_pid={prev} prev_prio=100 prev_state={prev_state} ==> "
        f"next_comm=y next_pid={nxt} next_prio=120"
    )
    return line("x", prev, t, "sched_switch", rest)


def trace(tmp_path):
    r = 7  # the reclaimer
    text = "# tracer: nop\n"
    # Call 1: 10 µs on the CPU, preempted for 100 µs (R+), 5 µs more; two passes (12, 11).
    text += line("streamer", r, 1.000000, "mm_vmscan_memcg_reclaim_begin", "order=0 gfp_flags=GFP_NOFS")
    text += line("streamer", r, 1.000004, "mm_vmscan_lru_shrink_inactive", "nid=0 nr_scanned=32 priority=12")
    text += switch(1.000010, r, "R+", 40)
    text += switch(1.000110, 40, "I", r)
    text += line("streamer", r, 1.000112, "mm_vmscan_lru_shrink_inactive", "nid=0 nr_scanned=32 priority=11")
    text += line("streamer", r, 1.000115, "mm_vmscan_memcg_reclaim_end", "nr_reclaimed=32")
    # Call 2: asleep (D) for 50 µs in the middle of 20 µs on the CPU; one pass.
    text += line("streamer", r, 2.000000, "mm_vmscan_memcg_reclaim_begin", "order=0 gfp_flags=GFP_NOFS")
    text += line("streamer", r, 2.000001, "mm_vmscan_lru_shrink_inactive", "nid=0 nr_scanned=32 priority=12")
    text += switch(2.000010, r, "D", 0)
    text += switch(2.000060, 0, "R", r)
    text += line("streamer", r, 2.000070, "mm_vmscan_memcg_reclaim_end", "nr_reclaimed=32")
    # Call 3: switched out at 10 µs, its switch-in filtered out, switched out again, back at 300.
    text += line("streamer", r, 3.000000, "mm_vmscan_memcg_reclaim_begin", "order=0 gfp_flags=GFP_NOFS")
    text += switch(3.000010, r, "R+", 41)
    text += switch(3.000200, r, "R+", 41)
    text += switch(3.000300, 41, "S", r)
    text += line("streamer", r, 3.000310, "mm_vmscan_memcg_reclaim_end", "nr_reclaimed=32")
    p = tmp_path / "host.trace"
    p.write_text(text)
    return p


def test_each_call_splits_into_cpu_preempted_and_asleep(tmp_path):
    calls = load().calls(trace(tmp_path))
    assert len(calls) == 3
    one, two, three = calls
    assert abs(one["on"] - 15e-6) < 1e-9 and abs(one["preempted"] - 100e-6) < 1e-9
    assert one["prios"] == {"12", "11"}
    assert abs(two["on"] - 20e-6) < 1e-9 and abs(two["asleep"] - 50e-6) < 1e-9 and two["preempted"] == 0
    # The stretch between the two switch-outs is not counted on the CPU twice.
    assert abs(three["on"] - 20e-6) < 1e-9 and abs(three["preempted"] - 290e-6) < 1e-9
    for c in calls:
        assert abs(c["on"] + c["preempted"] + c["asleep"] - c["wall"]) < 1e-9


def test_host_against_simulated_prints_the_difference_a_call(tmp_path):
    host = trace(tmp_path)
    sim = tmp_path / "sim.trace"
    sim.write_text(
        line("streamer", 4, 1.0, "mm_vmscan_memcg_reclaim_begin", "order=0 gfp_flags=GFP_HIGHUSER_MOVABLE")
        + line("streamer", 4, 1.000005, "mm_vmscan_memcg_reclaim_end", "nr_reclaimed=32")
    )
    out = subprocess.run([sys.executable, str(SCRIPT), str(host), str(sim)], capture_output=True, text=True, check=True).stdout
    assert "host: 3 calls" in out and "host: 3 passes" in out
    # Host 55 µs on the CPU over 3 calls, simulated 5 µs a call: 13,333 ns a call more.
    assert "host minus simulated: 13333 ns" in out
