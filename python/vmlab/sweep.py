"""Parameter sweeps: one simulation per (profile, parameter combination), run in parallel.

Every run is independent and deterministic, so a sweep is an embarrassingly parallel map; the
result rows come back in the order of the grid whatever the backend and whatever order the runs
finish in.
"""

from __future__ import annotations

import itertools
import json
import os
from typing import Mapping, Optional, Sequence

import pandas as pd

from . import _vmlab

# /proc/vmstat counters that summarise reclaim, swap and faults: the sweep's default columns.
KEY_VMSTAT = (
    "pgscan_kswapd",
    "pgscan_direct",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "allocstall",
    "pswpin",
    "pswpout",
    "pgmajfault",
    "workingset_refault_anon",
    "workingset_refault_file",
    "oom_kill",
)


def _run_job(kwargs: dict) -> str:
    """One simulation in a worker (process or Ray task); returns the ``vmlab.run/1`` JSON."""
    return _vmlab.run_json(**kwargs)


def _jobs(scenario, grid: Mapping[str, Sequence], profiles, sets, interval):
    # Deferred import: vmlab/__init__ imports this module.
    from . import _scenario_args, _set_value, _sets

    base = _scenario_args(scenario)
    if "scenario_path" in base:
        # Ship the text, named by the path, so workers need neither the file nor our cwd
        # (a Ray worker may be on another host); error messages still name the file.
        path = base["scenario_path"]
        try:
            with open(path, encoding="utf-8") as f:
                base = {"scenario_text": f.read(), "name": path}
        except OSError:
            pass  # let the core report the unreadable file
    for key, values in grid.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or len(values) == 0:
            raise ValueError(f"grid[{key!r}] must be a non-empty list of values")
    keys = list(grid.keys())
    combos = list(itertools.product(*(grid[k] for k in keys)))
    jobs, labels = [], []
    for profile in profiles:
        for combo in combos:
            s = _sets(sets) + [f"{k}={_set_value(v)}" for k, v in zip(keys, combo)]
            jobs.append(dict(base, profile=profile, sets=s, interval=interval))
            labels.append(dict(zip(keys, combo)))
    return jobs, labels


def _map_process(jobs, workers):
    if workers == 1 or len(jobs) <= 1:
        return [_run_job(j) for j in jobs]
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
        return list(pool.map(_run_job, jobs))  # map keeps submission order


def _map_ray(jobs, workers):
    try:
        import ray
    except ImportError as e:
        raise ImportError(
            "vmlab.sweep(backend='ray') needs Ray, which is not installed: "
            "pip install 'vmlab[ray]' (or pip install ray)"
        ) from e
    if not ray.is_initialized():
        # A local cluster unless RAY_ADDRESS points at one; `workers` caps local CPUs.
        ray.init(**({"num_cpus": workers} if workers else {}), ignore_reinit_error=True)
    task = ray.remote(_run_job)
    return ray.get([task.remote(j) for j in jobs])


def sweep(
    scenario,
    grid: Mapping[str, Sequence],
    profiles: Optional[Sequence[str]] = None,
    workers: Optional[int] = None,
    backend: str = "process",
    sets=None,
    interval: Optional[float] = None,
    counters: Sequence[str] = KEY_VMSTAT,
    return_runs: bool = False,
):
    """Run ``scenario`` for every combination of ``grid`` values under every profile.

    ``grid`` maps ``--set`` keys to lists of values, e.g.
    ``{"vm.swappiness": [0, 60, 100], "machine.memory": ["512MiB", "1GiB"]}``; combinations are
    taken in the order of the dict (the last key varies fastest), inside each profile of
    ``profiles`` (default: the scenario's own). ``sets`` are overrides common to every run.

    ``backend="process"`` runs on a local process pool of ``workers`` processes (default: the
    CPU count); ``backend="ray"`` runs each simulation as a Ray task (``pip install 'vmlab[ray]'``;
    connects to ``RAY_ADDRESS`` or starts a local Ray, whose workers must be able to import vmlab).

    Returns a DataFrame with one row per run, in grid order: ``profile``, the grid keys, the
    workload ``metrics``, ``elapsed_s``, the ``counters`` (``/proc/vmstat`` names, 0 when absent)
    and ``kswapd_cpu_pct``. With ``return_runs=True`` returns ``(DataFrame, [Run, ...])``.
    """
    from . import Run

    if backend not in ("process", "ray"):
        raise ValueError(f"backend must be 'process' or 'ray', not {backend!r}")
    if workers is not None and workers < 1:
        raise ValueError("workers must be at least 1")
    if isinstance(profiles, str):
        profiles = [profiles]
    profiles = list(profiles) if profiles else [None]
    jobs, labels = _jobs(scenario, grid, profiles, sets, interval)
    workers = workers or os.cpu_count() or 1
    texts = _map_ray(jobs, workers) if backend == "ray" else _map_process(jobs, workers)
    runs = [Run(json.loads(t)) for t in texts]
    rows = []
    for label, r in zip(labels, runs):
        row = {"profile": r.profile}
        row.update(label)
        row.update(r.metrics)
        row["elapsed_s"] = r.elapsed_s
        for c in counters:
            row[c] = int(r.vmstat.get(c, 0))
        kswapd = r.tasks[r.tasks["name"].str.startswith("kswapd")]
        row["kswapd_cpu_pct"] = float(kswapd["cpu_pct"].sum())
        rows.append(row)
    df = pd.DataFrame(rows)
    return (df, runs) if return_runs else df
