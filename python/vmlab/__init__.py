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
    - ``metrics``: dict of the workload's named figures; ``params``: the overrides of this run.
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

    def to_json(self, indent: Optional[int] = 2) -> str:
        """The report as ``vmlab.run/1`` JSON text (readable by ``vmlab compare``)."""
        return json.dumps(self.data, indent=indent)

    def plot(self, columns: Sequence[str] = ("free_kb", "cached_kb"), ax=None, **kwargs):
        """Plot timeline columns against simulated time; returns the matplotlib Axes.

        Pass ``ax`` to draw into an existing Axes. Works with any backend, including Agg.
        """
        if isinstance(columns, str):
            columns = (columns,)
        missing = [c for c in columns if c not in self.timeline.columns]
        if missing:
            raise KeyError(f"no timeline column {missing}; columns: {list(self.timeline.columns)}")
        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots()
        self.timeline[list(columns)].plot(ax=ax, **kwargs)
        ax.set_xlabel("simulated time (s)")
        ax.set_title(f"{self.scenario} — {self.profile}")
        return ax

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


def run(scenario, profile: Optional[str] = None, sets=None, interval: Optional[float] = None) -> Run:
    """Simulate a scenario and return its :class:`Run`.

    ``scenario`` is a path to a scenario TOML file or the TOML text itself. ``profile`` overrides the
    scenario's kernel profile (see :func:`profiles`); ``sets`` are ``"KEY=VALUE"`` overrides as
    ``vmlab run --set`` (a dict ``{"vm.swappiness": 100}`` also works); ``interval`` is the
    timeline interval in simulated seconds. Raises :class:`ScenarioError` (a ``ValueError``) with a
    ``file:line:col: ...`` message for bad input. The GIL is released while simulating.
    """
    text = _vmlab.run_json(profile=profile, sets=_sets(sets), interval=interval, **_scenario_args(scenario))
    return Run(json.loads(text))


def reproduce(seed: str, sets=None, root: Optional[str] = None) -> list:
    """Run a seed reproduction (``vmlab reproduce SEED``): a list of :class:`Run`, before then after.

    ``root`` is the directory holding ``scenarios/`` (default: found from the current directory
    or ``$VMLAB_ROOT``). Unknown seeds raise ``ValueError`` naming the known ones (see :func:`seeds`).
    """
    data = json.loads(_vmlab.reproduce_json(seed, _sets(sets), root))
    return [Run(r) for r in data["runs"]]


def seeds() -> list:
    """The seed reproductions this build knows: ``[{"name": ..., "summary": ...}, ...]``."""
    return json.loads(_vmlab.seeds_json())


def profiles() -> list:
    """The kernel profiles: dicts of mechanism choices and default ``tunables``."""
    return json.loads(_vmlab.profiles_json())


def compare(runs, names: Optional[Sequence[str]] = None, counters: Optional[Sequence[str]] = None) -> pd.DataFrame:
    """Runs side by side, MMTests style: one row per figure, one column per run plus a ``%``
    delta column against the first run for each other run.

    Rows are the metrics, ``elapsed_s``, and the ``vmstat`` counters (all of them, or those
    named in ``counters``). Column names are ``names`` or the runs' profiles (made unique).
    A figure missing from a run is NaN; a delta against 0 is NaN.
    """
    runs = list(runs)
    if not runs:
        raise ValueError("compare needs at least one run")
    runs = [r if isinstance(r, Run) else Run(r) for r in runs]
    names = list(names) if names is not None else _unique([r.profile for r in runs])
    if len(names) != len(runs):
        raise ValueError(f"{len(names)} names for {len(runs)} runs")
    cols = {}
    for name, r in zip(names, runs):
        fig = {f"metric:{k}": v for k, v in r.metrics.items()}
        fig["elapsed_s"] = r.elapsed_s
        vm = r.vmstat if counters is None else r.vmstat.reindex(list(counters))
        fig.update({f"vmstat:{k}": v for k, v in vm.items()})
        cols[name] = pd.Series(fig, dtype="float64")
    table = pd.DataFrame(cols)  # row order: first run's, then rows only later runs have
    base = table[names[0]]
    out = {names[0]: base}
    for name in names[1:]:
        out[name] = table[name]
        out[f"{name} %"] = (table[name] - base) / base.where(base != 0) * 100.0
    return pd.DataFrame(out)


def _unique(names: list) -> list:
    seen: dict = {}
    out = []
    for n in names:
        k = seen.get(n, 0)
        seen[n] = k + 1
        out.append(n if k == 0 else f"{n}#{k + 1}")
    return out
