"""Progress bars (tqdm) for dynamic and static runs.

A bar is shown when stderr is a terminal; ``progress=True/False`` on a run, or the environment
variable ``FLEXMB_PROGRESS=1/0``, forces it on or off (tests and batch jobs stay quiet).
"""
from __future__ import annotations

import os
import sys


def progress_enabled(enabled: bool | None = None) -> bool:
    """Whether to show a bar: the explicit choice, else ``FLEXMB_PROGRESS``, else stderr is a terminal."""
    if enabled is not None:
        return bool(enabled)
    env = os.environ.get("FLEXMB_PROGRESS", "").strip().lower()
    if env in ("0", "false", "no", "off"):
        return False
    if env in ("1", "true", "yes", "on"):
        return True
    return sys.stderr.isatty()


class Progress:
    """A bar over a continuous quantity (time in s, load factor) with run details after it."""

    def __init__(self, total: float, label: str, unit: str = "s", enabled: bool | None = None) -> None:
        self._bar = None
        if progress_enabled(enabled):
            from tqdm.auto import tqdm

            self._bar = tqdm(total=float(total), desc=label, file=sys.stderr, dynamic_ncols=True,
                             bar_format="{desc} {percentage:5.1f}%|{bar}| {n:.4g}/{total:.4g} "
                                        + unit + " [{elapsed}<{remaining}] {postfix}")

    @property
    def enabled(self) -> bool:
        """Whether the bar is shown (callers skip formatting their details when it is not)."""
        return self._bar is not None

    def update(self, done: float, **info: object) -> None:
        """Advance to ``done``; ``info`` (e.g. dt, Newton iterations) is shown after the bar."""
        if self._bar is None:
            return
        if info:
            self._bar.set_postfix(info, refresh=False)
        self._bar.update(float(done) - self._bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
