"""Progress of long calls (``run``, ``reproduce``): a bar that a notebook updates in place, a
line that a terminal redraws, and nothing at all when neither is there to see it (a script
piped to a file, CI), so logs hold only what the caller prints.

The simulator calls ``callback(k, n, profile, sets, now_s, end_s)`` now and then: run ``k`` of
``n`` (counted from 1) has reached simulated second ``now_s`` of ``end_s`` (None when the
scenario has no ``duration``).
"""

from __future__ import annotations

import sys
import time
from typing import Callable, Optional

# Redraw at most this often, and not at all during the first moments: a quick call should
# not flicker.
_REDRAW_S = 0.1
_QUIET_S = 0.3
_BAR = 24


def _in_notebook() -> bool:
    ip = sys.modules.get("IPython")
    if ip is None:
        return False
    try:
        shell = ip.get_ipython()
    except Exception:
        return False
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


def _clock(s: float) -> str:
    s = max(0, int(round(s)))
    return f"{s // 3600}:{s // 60 % 60:02}:{s % 60:02}" if s >= 3600 else f"{s // 60}:{s % 60:02}"


def describe(k: int, n: int, profile: str, sets, now_s: float, end_s: Optional[float], wall_s: float) -> tuple:
    """(fraction done, text) of a progress report, as the CLI words it."""
    in_run = min(now_s / end_s, 1.0) if end_s else None
    done = ((k - 1) + (in_run or 0.0)) / max(n, 1)
    label = " ".join([profile or "", *sets]).strip()
    text = f"run {k}/{n} {label}  " if n > 1 else (f"{label}  " if label else "")
    text += f"simulated {now_s:.1f} s"
    if in_run is not None:
        text += f" of {end_s:.0f} s ({in_run * 100:.0f}%)"
    text += f"  wall {_clock(wall_s)}"
    if done > 0:
        text += f"  ETA {_clock(wall_s * (1 - done) / done)}"
    return done, text


class _Display:
    """Draws reports on a stream (a terminal) or in a notebook output area."""

    def __init__(self, stream=None, notebook: bool = False):
        self.stream = stream
        self.notebook = notebook
        self.start = time.monotonic()
        self.last = 0.0
        self.drawn = False
        self.handle = None

    def __call__(self, k, n, profile, sets, now_s, end_s):
        t = time.monotonic()
        wall = t - self.start
        if wall < _QUIET_S or t - self.last < _REDRAW_S:
            return
        self.last = t
        done, text = describe(k, n, profile, sets, now_s, end_s, wall)
        filled = int(done * _BAR)
        bar = "[" + "#" * filled + "." * (_BAR - filled) + "] "
        self.drawn = True
        if self.notebook:
            from IPython.display import display

            if self.handle is None:
                self.handle = display({"text/plain": bar + text}, raw=True, display_id=True)
            else:
                self.handle.update({"text/plain": bar + text}, raw=True)
        else:
            self.stream.write("\r\x1b[K" + bar + text)
            self.stream.flush()

    def close(self):
        if self.drawn and not self.notebook:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def make(progress) -> tuple:
    """(callback or None, closer) for a ``progress`` argument: None (the default) shows progress
    in a notebook or on a terminal's stderr and is silent otherwise; True always draws (on
    stderr, or in the notebook); False never does; a callable gets every report."""
    if progress is False:
        return None, lambda: None
    if callable(progress) and progress is not True:
        return progress, lambda: None
    if _in_notebook():
        d = _Display(notebook=True)
        return d, d.close
    if progress is True or sys.stderr.isatty():
        d = _Display(stream=sys.stderr)
        return d, d.close
    return None, lambda: None


def call_with(progress, fn: Callable, **kwargs):
    """``fn(progress=callback, **kwargs)``, the display closed afterwards whatever happens."""
    cb, close = make(progress)
    try:
        return fn(progress=cb, **kwargs)
    finally:
        close()
