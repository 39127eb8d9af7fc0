"""Matplotlib helpers shared by examples and validation cases (pyplot is imported on call)."""
from __future__ import annotations

from typing import Callable, Iterable, Sequence

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


def dynamics_overview(title: str, runs: dict, displacement: Callable, displacement_label: str,
                      diagnostic: Callable, diagnostic_label: str,
                      exact: tuple[np.ndarray, np.ndarray] | None = None):
    """Three panels for a set of time histories ``{label: TimeHistory}``: a displacement vs time
    (with an optional exact curve), the energy drift, and a diagnostic on a log scale.

    ``displacement(h)`` and ``diagnostic(h)`` map a history to an array (n_out,).
    """
    fig, (ax1, ax2, ax3) = panels(3, title)
    if exact is not None:
        ax1.plot(*exact, "k--", label="exact")
    for label, h in runs.items():
        ax1.plot(h.t, displacement(h), label=label)
        ax3.semilogy(h.t, np.maximum(diagnostic(h), 1e-16), label=label)
    ax1.set_xlabel("time (s)")
    ax1.set_ylabel(displacement_label)
    ax1.legend(fontsize=8)
    energy_drift(ax2, [(label, np.array(h.t), h.energy_error()) for label, h in runs.items()])
    ax3.set_xlabel("time (s)")
    ax3.set_ylabel(diagnostic_label)
    ax3.grid(True, which="both", alpha=0.3)
    ax3.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_history(result, quantities: Sequence[str], x: str = "parameter", ax=None, title: str | None = None):
    """Plot histories of a :class:`~flexmb.results.Result` against its step parameter (or ``x``).

    ``quantities`` are names as in :meth:`Result.series` (``"uy@12"``, ``"total"``,
    ``"N@beams:3"``, a sensor's name for all its components); quantities with the same unit share an axis, a second unit gets its own
    panel. Returns the figure.
    """
    if not quantities:
        raise ValueError("plot_history: name at least one quantity")
    quantities = [q for spec in quantities for q in result.sensor_quantities(spec)]   # a sensor: all components
    xs = result.series(x)
    xlabel = f"{result.parameter_name}" + (" (s)" if result.kind == "dynamic" else "") if x == "parameter" \
        else result.label(x)
    by_unit: dict[str, list[str]] = {}
    for q in quantities:
        label = result.label(q)
        unit = label[label.rfind("("):] if label.endswith(")") else ""
        by_unit.setdefault(unit, []).append(q)
    if ax is None:
        fig, axes = panels(len(by_unit), title or _default_title(result), width=6.0, height=4.0)
    else:
        if len(by_unit) > 1:
            raise ValueError(f"plot_history: quantities with {len(by_unit)} different units need "
                             "their own panels; leave ax=None")
        fig, axes = ax.figure, [ax]
    for axis, (unit, names) in zip(axes, by_unit.items()):
        for q in names:
            axis.plot(xs, result.series(q), label=q)
        axis.set_xlabel(xlabel)
        axis.set_ylabel(result.label(names[0]) if len(names) == 1 else f"value {unit}".strip())
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize=8)
    if ax is None:
        fig.tight_layout()
    return fig


def _default_title(result) -> str:
    source = result.meta.get("file")
    what = {"dynamic": f"{result.meta.get('scheme', '')} dt = {result.meta.get('dt', '')} s",
            "static": result.meta.get("method", "statics"), "modes": result.meta.get("what", "modes")}
    return f"{what.get(result.kind, result.kind)}" + (f" ({source})" if source else "")
