"""vmlab: the Linux memory manager as a deterministic simulated machine, from Python.

The simulator is the Rust core (``vmlab._vmlab``); this package turns its JSON reports
(schema ``vmlab.run/1``, see docs/JSON.md) into pandas objects and adds comparisons, plots and
parameter sweeps.

>>> import vmlab
>>> r = vmlab.run("scenarios/examples/anon-overcommit.toml", sets=["vm.swappiness=100"])
>>> int(r.vmstat["pswpout"]) > 0
True
>>> r.timeline[["free_kb", "so"]].head()            # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from typing import Iterable, Optional, Sequence

import pandas as pd

from . import _vmlab
from ._vmlab import ScenarioError
from .sweep import sweep

__all__ = [
    "Run",
    "ScenarioError",
    "compare",
    "plot",
    "profiles",
    "reproduce",
    "run",
    "seeds",
    "sweep",
    "__version__",
]

__version__ = _vmlab.version()


class Run:
    """One simulated run: a ``vmlab.run/1`` report with pandas views of its parts.

    ``data`` is the report as a dict; the other attributes are built from it:

    - ``timeline``: DataFrame, one row per sample, indexed by ``t_s`` (simulated seconds), columns
      as vmstat/sar (``free_kb``, ``cached_kb``, ``si``, ``so``, ``kswapd_cpu_pct``, ...).
    - ``vmstat``, ``meminfo``: Series of ``/proc/vmstat`` counters and ``/proc/meminfo`` fields (kB)
      at the end of the run, in the kernel's order.
    - ``tasks``: DataFrame of per-task CPU (``pid``, ``name``, ``cpu_s``, ``cpu_pct``, ``kthread``).
    - ``kernel_profile``: DataFrame of simulated kernel CPU by kernel function (``function``, ``cpu_s``).
    - ``metrics``: dict of the workload's named figures; ``params``: the overrides of this run;
      ``notes``: what a real run's figures cover.
    """

    def __init__(self, data: dict):
        if not isinstance(data, dict) or data.get("schema") != "vmlab.run/1":
            raise ValueError("not a vmlab.run/1 report (known schema: vmlab.run/1)")
        self.data = data
        tl = pd.DataFrame(data.get("timeline") or [])
        self.timeline = tl.set_index("t_s") if "t_s" in tl.columns else tl
        self.vmstat = pd.Series(data.get("vmstat") or {}, dtype="int64", name="vmstat")
        self.meminfo = pd.Series(data.get("meminfo") or {}, dtype="int64", name="meminfo")
        # One set of counter names for every era (6.x's); `vmstat` is the era's own file.
        self.counters = pd.Series(data.get("counters") or data.get("vmstat") or {}, dtype="int64", name="counters")
        self.tasks = pd.DataFrame(data.get("tasks") or [], columns=["pid", "name", "cpu_s", "cpu_pct", "kthread"])
        self.kernel_profile = pd.DataFrame(data.get("kernel_profile") or [], columns=["function", "cpu_s"])
        # null is how the schema writes a non-finite metric
        self.metrics = {k: (float("nan") if v is None else v) for k, v in (data.get("metrics") or {}).items()}

    @property
    def profile(self) -> str:
        """Kernel profile the run used, e.g. ``"linux-6.8"``."""
        return self.data["profile"]

    @property
    def scenario(self) -> str:
        """Scenario name (or path)."""
        return self.data["scenario"]

    @property
    def elapsed_s(self) -> float:
        """Simulated seconds until the workload ended."""
        return self.data["elapsed_s"]

    @property
    def wall_s(self) -> float:
        """Wall-clock seconds the simulation took (the one non-deterministic field)."""
        return self.data.get("wall_s", 0.0)

    @property
    def params(self) -> dict:
        """The ``KEY=VALUE`` overrides this run was made with."""
        return dict(self.data.get("params") or {})

    @property
    def notes(self) -> dict:
        """What the figures mean, in words: a ``vmlab real`` run's emulation and the scope of its
        counters (``vmstat_scope``, ``pressure_scope``, ...); empty for a simulated run."""
        return dict(self.data.get("notes") or {})

    def to_json(self, indent: Optional[int] = 2) -> str:
        """The report as ``vmlab.run/1`` JSON text (readable by ``vmlab compare``)."""
        return json.dumps(self.data, indent=indent)

    def plot(self, columns: Sequence[str] = ("free_kb", "cached_kb"), ax=None, out: Optional[str] = None, **kwargs):
        """Plot timeline columns against simulated time; returns the matplotlib Axes.

        Each column is shown under its kernel/tool name with its unit (``free_kb`` as MemFree in
        MiB); columns of a second unit get a second y axis. Pass ``ax`` to draw into an existing
        Axes, ``out`` to also write the figure to a ``.png``, ``.svg`` or ``.pdf`` file. Works
        with any backend, including Agg. See :func:`vmlab.plot` to overlay runs.
        """
        from . import _plot

        return _plot.plot([self], columns, ax=ax, out=out)

    def __repr__(self) -> str:
        return f"<vmlab.Run {self.scenario!r} profile={self.profile} elapsed_s={self.elapsed_s:g}>"


def _scenario_args(scenario) -> dict:
    """Keyword arguments of ``_vmlab.run_json`` naming a scenario given as a path or as TOML text."""
    if isinstance(scenario, os.PathLike):
        return {"scenario_path": os.fspath(scenario)}
    if not isinstance(scenario, str):
        raise TypeError(f"scenario must be a path or TOML text, not {type(scenario).__name__}")
    # TOML text always has a `=` or a newline; a file name practically never does.
    if not os.path.exists(scenario) and ("\n" in scenario or "=" in scenario):
        return {"scenario_text": scenario, "name": "<string>"}
    return {"scenario_path": scenario}


def _sets(sets: Optional[Iterable[str]]) -> list:
    if sets is None:
        return []
    if isinstance(sets, str):
        return [sets]
    if isinstance(sets, dict):
        return [f"{k}={_set_value(v)}" for k, v in sets.items()]
    return [str(s) for s in sets]


def _set_value(v) -> str:
    """A Python value as the TOML-ish text that ``--set`` expects (``True`` -> ``true``)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def run(scenario, profile: Optional[str] = None, sets=None, interval: Optional[float] = None, progress=None) -> Run:
    """Simulate a scenario and return its :class:`Run`.

    ``scenario`` is a path to a scenario TOML file or the TOML text itself. ``profile`` overrides the
    scenario's kernel profile (see :func:`profiles`); ``sets`` are ``"KEY=VALUE"`` overrides as
    ``vmlab run --set`` (a dict ``{"vm.swappiness": 100}`` also works); ``interval`` is the
    timeline interval in simulated seconds. Raises :class:`ScenarioError` (a ``ValueError``) with a
    ``file:line:col: ...`` message for bad input. The GIL is released while simulating.

    ``progress``: None shows a progress bar in a notebook or on a terminal and nothing otherwise;
    True always, False never; a callable is called as ``progress(k, n, profile, sets, now_s, end_s)``.
    """
    from . import _progress

    text = _progress.call_with(
        progress, _vmlab.run_json, profile=profile, sets=_sets(sets), interval=interval, **_scenario_args(scenario)
    )
    return Run(json.loads(text))


def reproduce(seed, sets=None, root: Optional[str] = None, progress=None) -> list:
    """Run a seed reproduction (``vmlab reproduce SEED``): a list of :class:`Run`, in the seed's order.

    ``seed`` is a name (``"mmap-sem"``) or a number (``"004"`` or ``4``). The seeds' scenarios
    are built into the module; ``root`` (or ``$VMLAB_ROOT``) names a directory holding
    ``scenarios/seeds/`` to read them from instead. ``progress`` is as for :func:`run`, with
    ``k`` of ``n`` counting the runs. Unknown seeds raise ``ValueError`` naming the known ones
    (see :func:`seeds`).
    """
    from . import _progress

    if isinstance(seed, int):
        seed = f"{seed:03}"
    text = _progress.call_with(progress, _vmlab.reproduce_json, seed=str(seed), sets=_sets(sets), root=root)
    return [Run(r) for r in json.loads(text)["runs"]]


def seeds() -> list:
    """The seed reproductions this build knows: ``[{"name": ..., "number": "004", "summary": ...}, ...]``."""
    return json.loads(_vmlab.seeds_json())


def profiles() -> list:
    """The kernel profiles: dicts of mechanism choices and default ``tunables``."""
    return json.loads(_vmlab.profiles_json())


def compare(runs, names: Optional[Sequence[str]] = None, counters: Optional[Sequence[str]] = None) -> pd.DataFrame:
    """Runs side by side as ``vmlab compare`` (MMTests' compare-kernels) shows them: one row per
    figure, a ``better`` column saying which way the figure is better, one column per run and,
    for each later run, a ``NAME gain %`` column: its gain over the first run, positive when it
    is better (MMTests' ``pdiff`` where higher is better, ``pndiff`` where lower is).

    Rows are the metrics, ``elapsed_s``, the memory stall times ``psi:memory_some_s`` and
    ``psi:memory_full_s`` of a run that has PSI, and the ``vmstat:`` counters that are not 0 in every run
    (or those named in ``counters``). Columns are named by ``names``, else by what differs between
    the runs (profile, scenario, ``key=value`` of a parameter), else by profile, made unique. A
    figure missing from a run is NaN. The gains are ``vmlab compare``'s to the digit.
    """
    from . import _compare

    runs = list(runs)
    if not runs:
        raise ValueError("compare needs at least one run")
    runs = [r if isinstance(r, Run) else Run(r) for r in runs]
    if names is None:
        differ = _compare.labels([r.data for r in runs])
        names = _unique([d if d is not None else r.profile for d, r in zip(differ, runs)])
    names = list(names)
    if len(names) != len(runs):
        raise ValueError(f"{len(names)} names for {len(runs)} runs")
    cols = {}
    for name, r in zip(names, runs):
        fig = dict(r.metrics)
        fig.setdefault("elapsed_s", r.elapsed_s)
        pressure = r.data.get("pressure")
        if pressure:
            # /proc/pressure/memory's totals are microseconds; the rows are seconds, as the CLI's.
            fig["psi:memory_some_s"] = pressure["some"]["total"] / 1e6
            fig["psi:memory_full_s"] = pressure["full"]["total"] / 1e6
        vm = r.vmstat if counters is None else r.vmstat.reindex(list(counters))
        fig.update({f"vmstat:{k}": v for k, v in vm.items()})
        cols[name] = pd.Series(fig, dtype="float64")
    table = pd.DataFrame(cols)  # row order: first run's, then rows only later runs have
    if counters is None:
        zero = [k for k in table.index if k.startswith("vmstat:") and (table.loc[k].fillna(0) == 0).all()]
        table = table.drop(index=zero)
    direction = pd.Series([_compare.better(k) for k in table.index], index=table.index, dtype="object")
    base = table[names[0]]
    out = {"better": direction, names[0]: base}
    for name in names[1:]:
        out[name] = table[name]
        out[f"{name} gain %"] = pd.Series(
            [_compare.gain(x, b, d) for x, b, d in zip(table[name], base, direction)], index=table.index, dtype="float64"
        )
    return pd.DataFrame(out)


def plot(
    runs,
    columns: Sequence[str] = ("free_kb", "cached_kb"),
    ax=None,
    labels: Optional[Sequence[str]] = None,
    out: Optional[str] = None,
):
    """Overlay the timelines of several runs: each line named ``RUN: COLUMN`` where RUN is what
    differs between the runs (as :func:`compare` labels its columns) or ``labels``; one y axis
    per unit (at most two). With ``out``, the figure is also written to that ``.png``, ``.svg``
    or ``.pdf`` file. Returns the left Axes."""
    from . import _plot

    runs = [r if isinstance(r, Run) else Run(r) for r in runs]
    return _plot.plot(runs, columns, ax=ax, labels=list(labels) if labels is not None else None, out=out)


def _unique(names: list) -> list:
    seen: dict = {}
    out = []
    for n in names:
        k = seen.get(n, 0)
        seen[n] = k + 1
        out.append(n if k == 0 else f"{n}#{k + 1}")
    return out
