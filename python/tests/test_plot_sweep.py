import sys

import pytest

import vmlab


def test_plot_returns_axes(small):
    import matplotlib.axes
    import matplotlib.pyplot as plt

    r = vmlab.run(small)
    ax = r.plot()
    assert isinstance(ax, matplotlib.axes.Axes)
    assert [l.get_label() for l in ax.get_lines()] == ["MemFree", "Cached"]
    assert ax.get_ylabel() == "MiB"
    fig, ax2 = plt.subplots()
    assert r.plot(["so", "si"], ax=ax2) is ax2
    with pytest.raises(KeyError, match="nope"):
        r.plot(["nope"])
    plt.close("all")


def test_plot_writes_png_and_svg_by_extension(small, tmp_path):
    import struct

    import matplotlib.pyplot as plt

    r = vmlab.run(small)
    png = tmp_path / "t.png"
    ax = r.plot(["free_kb", "so"], out=str(png))
    # Both axes carry their unit, the x axis its own.
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("simulated time (s)", "MiB")
    assert [a.get_ylabel() for a in ax.figure.axes] == ["MiB", "KiB/s"]
    head = png.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    width, height = struct.unpack(">II", head[16:24])
    assert width > 400 and height > 300, (width, height)
    svg = tmp_path / "t.svg"
    vmlab.plot([r, r], ["free_kb"], labels=["a", "b"], out=str(svg))
    text = svg.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    with pytest.raises(ValueError, match=".png, .svg or .pdf"):
        r.plot(out=str(tmp_path / "t.jpeg"))
    assert not (tmp_path / "t.jpeg").exists()
    plt.close("all")


def test_sweep_two_swappiness_values_in_order(small):
    df = vmlab.sweep(small, {"vm.swappiness": [100, 0]}, workers=2)
    assert len(df) == 2
    assert list(df["vm.swappiness"]) == [100, 0]
    assert list(df["profile"]) == ["linux-6.8", "linux-6.8"]
    for c in ("elapsed_s", "pswpout", "pgscan_kswapd", "kswapd_cpu_pct"):
        assert c in df.columns
    # each row is exactly the run that a direct call gives
    for _, row in df.iterrows():
        r = vmlab.run(small, sets=[f"vm.swappiness={row['vm.swappiness']}"])
        assert row["pswpout"] == r.vmstat["pswpout"]
        assert row["elapsed_s"] == r.elapsed_s


def test_sweep_grid_and_profiles_order(small):
    df, runs = vmlab.sweep(
        small,
        {"machine.memory": ["160MiB", "224MiB"], "vm.swappiness": [60, 100]},
        profiles=["linux-6.8"],
        workers=2,
        return_runs=True,
    )
    assert list(zip(df["machine.memory"], df["vm.swappiness"])) == [
        ("160MiB", 60), ("160MiB", 100), ("224MiB", 60), ("224MiB", 100)
    ]
    assert [r.data["machine"]["memory_bytes"] for r in runs] == [160 << 20] * 2 + [224 << 20] * 2
    assert [r.params["vm.swappiness"] for r in runs] == ["60", "100", "60", "100"]


def test_sweep_serial_equals_parallel(small):
    grid = {"vm.swappiness": [0, 60, 100]}
    a = vmlab.sweep(small, grid, workers=1)
    b = vmlab.sweep(small, grid, workers=2)
    assert a.equals(b)


def test_sweep_error_propagates(small):
    with pytest.raises(vmlab.ScenarioError, match="memory"):
        vmlab.sweep(small, {"machine.memory": ["lots", "1GiB"]}, workers=2)
    with pytest.raises(ValueError, match="non-empty list"):
        vmlab.sweep(small, {"vm.swappiness": []})
    with pytest.raises(ValueError, match="backend"):
        vmlab.sweep(small, {"vm.swappiness": [1]}, backend="dask")


def test_sweep_ray_missing_is_a_clear_error(small, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(ImportError, match=r"vmlab\[ray\]"):
        vmlab.sweep(small, {"vm.swappiness": [0, 100]}, backend="ray")


def test_sweep_on_ray(small):
    ray = pytest.importorskip("ray")
    try:
        df = vmlab.sweep(small, {"vm.swappiness": [100, 0]}, backend="ray", workers=2)
    finally:
        ray.shutdown()
    local = vmlab.sweep(small, {"vm.swappiness": [100, 0]}, workers=1)
    assert df.equals(local)
