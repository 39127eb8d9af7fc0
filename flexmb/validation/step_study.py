"""The step study of a derivative check by central differences, shared by the sensitivity cases.

A central difference of re-runs misses a derivative by its truncation error, which falls as h^2,
until round-off, which grows as eps / h, takes over. The reference the cases compare with is the
difference at the *most stable step*: the step whose difference agrees best with its two
neighbours', chosen from the differences alone, never by their distance to the derivative checked.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def most_stable_step(differences: np.ndarray) -> int:
    """The index of the most stable step (module docstring) among central differences (n_h,) taken
    at decreasing steps: the interior step whose larger difference to its two neighbours is the
    smallest."""
    fd = np.asarray(differences, dtype=float)
    spread = np.maximum(np.abs(fd[1:-1] - fd[:-2]), np.abs(fd[1:-1] - fd[2:]))
    return 1 + int(np.argmin(spread))


def draw_step_study_axes(ax: Any, tolerance: float) -> None:
    """The tolerance line, labels, title and grid of a step study's plot (matplotlib axes with the
    differences' relative errors against the relative step, log-log; the chosen steps marked +)."""
    ax.axhline(tolerance, color="k", lw=0.7, ls=":", label=f"tolerance {tolerance:g}")
    ax.set_xlabel("relative step h of the central difference")
    ax.set_ylabel("|FD - direct| / |direct|")
    ax.set_title("step study: truncation (h^2) and round-off (eps / h) branches; +: h*", fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
