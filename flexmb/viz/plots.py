"""Matplotlib helpers shared by examples and validation cases (pyplot is imported on call)."""
from __future__ import annotations

from typing import Iterable

import numpy as np


def panels(n: int, title: str, width: float = 5.0, height: float = 3.8):
    """A figure with ``n`` side-by-side axes; returns (figure, list of axes)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, n, figsize=(width * n, height), squeeze=False)
    fig.suptitle(title)
    return fig, list(axes[0])


def energy_drift(ax, runs: Iterable[tuple[str, np.ndarray, np.ndarray]], floor: float = 1e-17) -> None:
    """Semilog plot of |E(t) - E(0)| / K(0) for several (label, t, error) runs."""
    for label, t, err in runs:
        ax.semilogy(t, np.maximum(err, floor), label=label)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("|E(t) - E(0)| / K(0)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
