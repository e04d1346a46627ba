import json
import re

import pandas as pd
import pytest

import vmlab


def test_overcommit_swaps_and_has_a_timeline(overcommit_runs):
    r = overcommit_runs[0]
    assert r.profile == "linux-6.8"
    assert r.elapsed_s > 0
    for col in ("free_kb", "cached_kb", "swpd_kb", "si", "so", "us", "sy", "kswapd_cpu_pct"):
        assert col in r.timeline.columns, col
    assert r.timeline.index.name == "t_s"
    assert r.timeline.index.is_monotonic_increasing
    assert len(r.timeline) >= 2
    # 1.5x RAM of anon written twice cannot stay resident: it goes to swap and comes back.
    assert r.vmstat["pswpout"] > 0
    assert r.vmstat["pswpin"] > 0
    assert r.timeline["so"].max() > 0
    assert r.timeline["swpd_kb"].max() > 0
    assert 0 < r.meminfo["MemTotal"] * 1024 <= r.data["machine"]["memory_bytes"]
    assert isinstance(r.vmstat, pd.Series) and isinstance(r.meminfo, pd.Series)
    assert list(r.tasks.columns) == ["pid", "name", "cpu_s", "cpu_pct", "kthread"]
    assert r.tasks["name"].str.startswith("kswapd").any()
    assert list(r.kernel_profile.columns) == ["function", "cpu_s"]
    assert (r.kernel_profile["cpu_s"] >= 0).all()
    assert isinstance(r.metrics, dict)


def test_overrides_change_the_machine(overcommit_runs):
    big, small = overcommit_runs
    assert big.params == {}
    assert small.data["machine"]["memory_bytes"] == 768 << 20
    assert small.params == {"machine.memory": "768MiB"}
    # The same 1536 MiB on less RAM: more of it must be pushed out.
    assert small.vmstat["pswpout"] > big.vmstat["pswpout"]


def test_deterministic(small):
    a = vmlab.run(small)
    b = vmlab.run(small)
    a.data["wall_s"] = b.data["wall_s"] = 0
    assert a.to_json() == b.to_json()
    assert a.vmstat["pswpout"] > 0  # the small scenario does overcommit


def test_text_and_path_give_the_same_run(overcommit, overcommit_runs):
    with open(overcommit) as f:
        text = f.read()
    a = dict(overcommit_runs[0].data)
    b = vmlab.run(text).data
    for d in (a, b):
        d["wall_s"] = 0
        d["scenario"] = None
    assert a == b


def test_interval_and_profile_options(small):
    r = vmlab.run(small, interval=0.25, profile="linux-6.8")
    steps = r.timeline.index.to_series().diff().dropna()
    assert steps.iloc[0] == pytest.approx(0.25)
    with pytest.raises(vmlab.ScenarioError, match="no-such-kernel"):
        vmlab.run(small, profile="no-such-kernel")
    with pytest.raises(vmlab.ScenarioError, match="interval"):
        vmlab.run(small, interval=-1)
    # The scenario's own bounds (issue 19: 1e-5 grew to 2.5 GB; 1e20 overflowed).
    with pytest.raises(vmlab.ScenarioError, match="finest interval"):
        vmlab.run(small, interval=1e-5)
    with pytest.raises(vmlab.ScenarioError, match="longer than a year"):
        vmlab.run(small, interval=1e20)


def test_bad_scenario_names_file_line_col(tmp_path, small):
    bad = tmp_path / "bad.toml"
    bad.write_text(small.replace('memory = "192MiB"', 'memroy = "192MiB"'))
    line = 1 + small.splitlines().index('memory = "192MiB"')
    with pytest.raises(vmlab.ScenarioError) as ei:
        vmlab.run(str(bad))
    msg = str(ei.value)
    assert re.match(rf"^{re.escape(str(bad))}:{line}:\d+: ", msg), msg
    assert "memroy" in msg and "memory" in msg
    assert isinstance(ei.value, ValueError)


def test_bad_program_in_text_scenario(small):
    with pytest.raises(vmlab.ScenarioError, match=r"^<string>:\d+:\d+: .*mlokc"):
        vmlab.run(small.replace("touch heap read", "mlokc heap"))


def test_bad_set_names_the_set(small):
    with pytest.raises(vmlab.ScenarioError, match=r"--set machine.memory=lots"):
        vmlab.run(small, sets=["machine.memory=lots"])


def test_missing_file_is_a_scenario_error(tmp_path):
    with pytest.raises(vmlab.ScenarioError, match="cannot read"):
        vmlab.run(str(tmp_path / "nope.toml"))


def test_profiles():
    ps = vmlab.profiles()
    assert ps and all("name" in p and "tunables" in p for p in ps)
    assert "linux-6.8" in [p["name"] for p in ps]


def test_unknown_seed():
    with pytest.raises(ValueError, match="unknown seed"):
        vmlab.reproduce("no-such-seed")
    assert isinstance(vmlab.seeds(), list)


def test_compare(overcommit_runs):
    a, b = overcommit_runs
    t = vmlab.compare([a, b], names=["1g", "768m"])
    assert list(t.columns) == ["better", "1g", "768m", "768m gain %"]
    row = t.loc["vmstat:pswpout"]
    assert row["1g"] == a.vmstat["pswpout"] and row["768m"] == b.vmstat["pswpout"]
    # More swapping is worse: MMTests' pndiff, positive when the later run is better.
    assert row["better"] == "lower"
    assert row["768m gain %"] == pytest.approx(100 - b.vmstat["pswpout"] * 100 / a.vmstat["pswpout"])
    assert t.loc["elapsed_s", "1g"] == a.elapsed_s
    # default names: what differs between the runs, else the profiles made unique
    assert list(vmlab.compare([a, b]).columns)[1:3] == ["linux-6.8", "machine.memory=768MiB"]
    assert list(vmlab.compare([a, a]).columns) == ["better", "linux-6.8", "linux-6.8#2", "linux-6.8#2 gain %"]


def test_run_roundtrips_json(small):
    r = vmlab.run(small)
    again = vmlab.Run(json.loads(r.to_json()))
    assert again.vmstat.equals(r.vmstat)
    with pytest.raises(ValueError, match="vmlab.run/1"):
        vmlab.Run({"schema": "vmlab.run/9"})


def test_low_level_module_checks_its_arguments():
    from vmlab import _vmlab

    with pytest.raises(TypeError, match="exactly one"):
        _vmlab.run_json()
    assert _vmlab.version() == vmlab.__version__
