"""scripts/refault-passes.py on made-up input: `vmlab run --refaults` lines cut into passes of a
4-page file set, and /proc/vmstat samples with foreign refaults skipped."""

from scripts_util import load_script


def load():
    return load_script("refault-passes.py")


def test_sim_passes_count_pages_and_stretches():
    m = load()
    # t file nr distance workingset activated restored ia aa if af
    lines = [
        "# header\n",
        "1.0 1 2 10 20 1 0 0 0 0 0\n",
        "1.1 1 1 30 20 0 0 0 0 0 0\n",
        "1.2 1 1 15 20 1 1 0 0 0 0\n",
        "1.3 1 2 25 20 0 0 0 0 0 0\n",
        "1.4 1 2 5 20 1 1 0 0 0 0\n",
    ]
    p = m.sim_passes(lines, 4)
    assert sorted(p) == [0, 1]
    assert (p[0]["ref"], p[0]["act"], p[0]["rest"]) == (4, 3, 1)
    assert (p[1]["ref"], p[1]["act"], p[1]["rest"]) == (4, 2, 2)
    assert m.regions(p[0]["spans"]) == ["A0-2", "n2-3", "A3-4"]
    assert m.regions(p[1]["spans"]) == ["n0-2", "A2-4"]
    assert m.pct(p[0]["dist"], 0.5) == 10


def test_host_passes_skip_foreign_refaults():
    m = load()
    # refault, activate, restore, pgdeactivate, pgscan_anon (cumulative, host-wide)
    rows = [
        (0.0, [100, 50, 40, 0, 0]),
        (0.1, [103, 50, 40, 0, 0]),  # 3 refaults before the reader: skipped
        (0.2, [105, 52, 41, 0, 0]),
        (0.3, [107, 52, 41, 5, 1]),
        (0.4, [111, 56, 45, 5, 1]),
    ]
    p = m.host_passes(rows, 4, 3)
    assert p[0]["d"][:3] == [4, 2, 1]
    assert m.regions(p[0]["spans"]) == ["A0-2", "n2-4"]
    assert p[1]["d"][:3] == [4, 4, 4]
