"""Timeline plots labelled as a reader of vmstat and sar expects: each column under its
kernel or tool name with its unit, one y axis per unit, and runs told apart by what differs
between them (the labels of :func:`vmlab.compare`)."""

from __future__ import annotations

# column -> (label, unit, scale applied to the column's values)
COLUMNS = {
    "free_kb": ("MemFree", "MiB", 1 / 1024),
    "cached_kb": ("Cached", "MiB", 1 / 1024),
    "dirty_kb": ("Dirty", "MiB", 1 / 1024),
    "buff_kb": ("Buffers", "MiB", 1 / 1024),
    "cache_kb": ("cache (vmstat)", "MiB", 1 / 1024),
    "swpd_kb": ("swpd", "MiB", 1 / 1024),
    "swap_used_kb": ("swap used", "MiB", 1 / 1024),
    "si": ("swap in (si)", "KiB/s", 1),
    "so": ("swap out (so)", "KiB/s", 1),
    "bi": ("blocks in (bi)", "KiB/s", 1),
    "bo": ("blocks out (bo)", "KiB/s", 1),
    "in": ("interrupts (in)", "per second", 1),
    "cs": ("context switches (cs)", "per second", 1),
    "us": ("user (us)", "% CPU", 1),
    "sy": ("system (sy)", "% CPU", 1),
    "id": ("idle (id)", "% CPU", 1),
    "wa": ("iowait (wa)", "% CPU", 1),
    "kswapd_cpu_pct": ("kswapd", "% of one CPU", 1),
    "pgscank_s": ("pgscank/s", "pages/s", 1),
    "pgscand_s": ("pgscand/s", "pages/s", 1),
    "pgsteal_s": ("pgsteal/s", "pages/s", 1),
    "majflt_s": ("majflt/s", "faults/s", 1),
    "r": ("runnable (r)", "tasks", 1),
    "b": ("blocked (b)", "tasks", 1),
}


def describe(column: str) -> tuple:
    """(label, unit, scale) of a timeline column; unknown columns keep their name, no unit."""
    return COLUMNS.get(column, (column, "", 1))


# What ``out=`` may be: matplotlib picks the writer from the extension.
OUT_FORMATS = ("png", "svg", "pdf")


def plot(runs, columns, ax=None, labels=None, out=None):
    """Plot ``columns`` of each run's timeline against simulated time. Columns sharing a unit
    share a y axis; a second unit gets a twin axis on the right; more units than two are refused
    (plot them in separate calls). With ``out``, the figure is also written to that file, as
    PNG, SVG or PDF by its extension. Returns the left Axes."""
    from . import _compare

    if out is not None:
        ext = str(out).rsplit(".", 1)[-1].lower() if "." in str(out) else ""
        if ext not in OUT_FORMATS:
            raise ValueError(f"out={out!r}: name the file .png, .svg or .pdf (the format follows the extension)")
    if isinstance(columns, str):
        columns = (columns,)
    columns = list(columns)
    for r in runs:
        missing = [c for c in columns if c not in r.timeline.columns]
        if missing:
            raise KeyError(f"no timeline column {missing}; columns: {list(r.timeline.columns)}")
    units = []
    for c in columns:
        u = describe(c)[1]
        if u not in units:
            units.append(u)
    if len(units) > 2:
        raise ValueError(f"columns in {len(units)} units ({', '.join(units)}): at most two per plot, one axis each")
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots()
    axes = {units[0]: ax}
    if len(units) == 2:
        axes[units[1]] = ax.twinx()
    if labels is None:
        differ = _compare.labels([r.data for r in runs])
        labels = [d if d is not None else r.profile for d, r in zip(differ, runs)]
    styles = ["-", "--", ":", "-."]
    handles = []
    for i, (r, run_label) in enumerate(zip(runs, labels)):
        for c in columns:
            name, unit, scale = describe(c)
            line_label = f"{run_label}: {name}" if len(runs) > 1 else name
            (h,) = axes[unit].plot(
                r.timeline.index, r.timeline[c] * scale, styles[i % len(styles)], label=line_label
            )
            handles.append(h)
    for unit, a in axes.items():
        a.set_ylabel(unit or "value")
    ax.set_xlabel("simulated time (s)")
    # One legend for both axes, each line once.
    ax.legend(handles, [h.get_label() for h in handles], fontsize="small")
    if len(runs) == 1:
        ax.set_title(f"{runs[0].scenario} — {runs[0].profile}")
    else:
        scen = sorted({r.scenario for r in runs})
        ax.set_title(", ".join(scen))
    if out is not None:
        # Room for the right axis' label, and a raster size readable on a slide.
        ax.figure.savefig(out, dpi=150, bbox_inches="tight")
    return ax
