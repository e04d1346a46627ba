"""MMTests' comparison arithmetic, as ``vmlab compare`` does it (crates/vmlab-core/src/stats/
compare/kernels.rs): a gain is positive when the later run is better, whichever way "better"
points for the figure — ``pdiff`` where higher is better, ``pndiff`` where lower is (MMTests,
bin/lib/MMTests/Stat.pm)."""

from __future__ import annotations

_HIGHER = ("_per_s", "per_second", "_mb_s", "throughput", "speedup", "transactions", "ops", "bandwidth")


def better(name: str) -> str:
    """``"higher"`` or ``"lower"``: which way the figure ``name`` is better (rates and
    throughputs higher; times, waits and the kernel's work counters lower)."""
    n = name.lower()
    if n.startswith("vmstat:"):
        n = n[len("vmstat:"):]
    return "higher" if any(h in n for h in _HIGHER) else "lower"


def pdiff(x: float, base: float) -> float:
    """How much higher ``x`` is than ``base``, in percent of ``base`` (MMTests' pdiff)."""
    if x == base or x == 0:
        return 0.0
    if base == 0:
        return 100.0
    return x * 100.0 / base - 100.0


def pndiff(x: float, base: float) -> float:
    """How much lower ``x`` is than ``base``, in percent of ``base`` (MMTests' pndiff)."""
    if x == base:
        return 0.0
    if x == 0:
        return 100.0
    if base == 0:
        return -99.0
    return 100.0 - x * 100.0 / base


def gain(x: float, base: float, direction: str) -> float:
    """The gain of ``x`` over ``base``: positive is better."""
    if x != x or base != base:  # NaN: a figure one of the runs does not have
        return float("nan")
    return pdiff(x, base) if direction == "higher" else pndiff(x, base)


# What `vmlab real` wrote into ``params`` before runs had ``notes``: descriptions, not settings.
_NOTES_ONCE_IN_PARAMS = {"machine_emulation", "vmstat_scope", "timeline_scope", "pressure_scope", "stopped_by"}


def config(data: dict) -> list:
    """What tells a run from others: scenario, profile and params (not the seed, not an
    object or a list such as a real run's ``cgroup``, not an older file's descriptions), as
    ``vmlab compare`` reads them."""
    items = [("scenario", data.get("scenario")), ("profile", data.get("profile"))]
    for k, v in (data.get("params") or {}).items():
        if k == "seed" or isinstance(v, (dict, list)):
            continue
        if k in _NOTES_ONCE_IN_PARAMS and isinstance(v, str):
            continue
        items.append((k, v if isinstance(v, str) else _json_text(v)))
    return items


def _json_text(v) -> str:
    import json

    return json.dumps(v)


def labels(datas: list) -> list:
    """Column labels as ``vmlab compare`` makes them: the values that differ between runs
    (a parameter as ``key=value``); None where nothing differs."""
    cfgs = [dict(config(d)) for d in datas]
    keys: list = []
    for c in cfgs:
        for k in c:
            if k not in keys:
                keys.append(k)
    differ = [k for k in keys if any(c.get(k) != cfgs[0].get(k) for c in cfgs)]
    out = []
    for c in cfgs:
        parts = [c[k] if k in ("profile", "scenario") else f"{k}={c[k]}" for k in differ if k in c]
        out.append(" ".join(parts) if parts else None)
    return out
