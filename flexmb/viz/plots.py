"""Matplotlib helpers shared by examples and validation cases (pyplot is imported on call).

Figures people read: a reference (literature, closed form, exact) curve is drawn with
:data:`REFERENCE_STYLE`, black, dashed and on top of the computed curves, so it stays visible
where they coincide; computed curves are slightly transparent; legends go below the axes
(:func:`legend_outside`), never over the data. An energy panel shows kinetic, potential and total
energy and, on a second axis, the total's change E(t) - E(0), whose scale shows the balance.
"""
from __future__ import annotations

from typing import Callable, Iterable, Sequence

import numpy as np


#: a reference curve: on top of the computed ones (zorder), dashed so that they show through
REFERENCE_STYLE = dict(color="black", linestyle="--", linewidth=1.4, zorder=10)
#: computed curves: opaque enough to read, transparent enough to see what they cross
COMPUTED_ALPHA = 0.85
#: energies drawn in one panel by :func:`plot_history`, with the total's change on a second axis
ENERGIES = ("kinetic", "strain", "potential", "work", "total")


def legend_outside(ax, fontsize: float = 7, ncol: int | None = None, handles=None, labels=None) -> None:
    """Legend below the axes, out of the data (one to three columns, by the number of entries)."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.17), fontsize=fontsize,
              ncol=ncol or min(3, len(handles)), frameon=False)


def panels(n: int, title: str, width: float = 5.0, height: float = 4.4):
    """A figure with ``n`` side-by-side axes; returns (figure, list of axes)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, n, figsize=(width * n, height), squeeze=False)
    fig.suptitle(title)
    return fig, list(axes[0])


def energy_drift(ax, runs: Iterable[tuple[str, np.ndarray, np.ndarray]], floor: float = 1e-17) -> None:
    """Semilog plot of |E(t) - E(0)| / K(0) for several (label, t, error) runs."""
    for label, t, err in runs:
        ax.semilogy(t, np.maximum(err, floor), label=label, alpha=COMPUTED_ALPHA)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("|E(t) - E(0)| / K(0)")
    ax.grid(True, which="both", alpha=0.3)
    legend_outside(ax)


def dynamics_overview(title: str, runs: dict, displacement: Callable, displacement_label: str,
                      diagnostic: Callable, diagnostic_label: str,
                      exact: tuple[np.ndarray, np.ndarray] | None = None):
    """Three panels for a set of time histories ``{label: TimeHistory}``: a displacement vs time
    (with an optional exact curve), the energy drift, and a diagnostic on a log scale.

    ``displacement(h)`` and ``diagnostic(h)`` map a history to an array (n_out,).
    """
    fig, (ax1, ax2, ax3) = panels(3, title, height=4.4)
    for label, h in runs.items():
        # a Newmark baseline drawn thin and behind: its wild motion must not hide the scheme under test
        style = dict(linewidth=0.8, zorder=1) if getattr(h, "scheme", "") == "newmark" else {}
        ax1.plot(h.t, displacement(h), label=label, alpha=COMPUTED_ALPHA, **style)
        ax3.semilogy(h.t, np.maximum(diagnostic(h), 1e-16), label=label, alpha=COMPUTED_ALPHA, **style)
    if exact is not None:
        ax1.plot(*exact, label="exact", **REFERENCE_STYLE)
    ax1.set_xlabel("time (s)")
    ax1.set_ylabel(displacement_label)
    ax1.grid(True, alpha=0.3)
    legend_outside(ax1)
    energy_drift(ax2, [(label, np.array(h.t), h.energy_error()) for label, h in runs.items()])
    ax3.set_xlabel("time (s)")
    ax3.set_ylabel(diagnostic_label)
    ax3.grid(True, which="both", alpha=0.3)
    legend_outside(ax3)
    fig.tight_layout()
    return fig


#: units of Campbell diagrams: name -> factor from rad/s
FREQUENCY_UNITS = {"Hz": 1.0 / (2.0 * np.pi), "rad/s": 1.0, "rpm": 60.0 / (2.0 * np.pi)}


def campbell_plot(diagram, ax=None, kind: str = "frequency", unit: str = "Hz", orders: Sequence[int] = (1, 2)):
    """Campbell diagram (:class:`~flexmb.analysis.linearized.CampbellDiagram`): the tracked modes'
    frequencies |Im s| (``kind="frequency"``) or real parts Re s in 1/s (``kind="real"``) against
    the rotation speed, speed and frequency in one ``unit`` ("Hz", "rad/s" or "rpm"), with the
    lines of the speed's multiples ``orders`` (1P: frequency = speed, 2P: twice the speed, ...; a
    mode crossing nP is excited in resonance by a load that repeats n times a revolution), grey and
    dashed. Returns the axes."""
    from flexmb.checks import ModelError

    if kind not in ("frequency", "real"):
        raise ModelError(f"Campbell plot: kind must be 'frequency' or 'real', got {kind!r}")
    if unit not in FREQUENCY_UNITS:
        raise ModelError(f"Campbell plot: unit must be one of {', '.join(FREQUENCY_UNITS)}, got {unit!r}")
    orders = [int(n) for n in orders]
    if any(n < 1 for n in orders):
        raise ModelError(f"Campbell plot: orders must be whole numbers >= 1 (1P, 2P, ...), got {orders}")
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots()
    factor = FREQUENCY_UNITS[unit]
    speed = factor * np.asarray(diagram.speeds, dtype=float)                      # (n_speeds,)
    y = factor * np.abs(diagram.eigenvalues.imag) if kind == "frequency" else diagram.eigenvalues.real
    for k in range(y.shape[1]):
        ax.plot(speed, y[:, k], label=f"mode {k + 1}", alpha=COMPUTED_ALPHA)
    if kind == "frequency":
        ends = np.array([min(speed.min(), 0.0), speed.max()])
        for n in orders:
            ax.plot(ends, n * ends, color="0.45", linestyle="--", linewidth=0.9, label=f"{n}P", zorder=0)
    ax.set_xlabel(f"rotation speed ({unit})")
    ax.set_ylabel(f"frequency ({unit})" if kind == "frequency" else "real part (1/s)")
    ax.grid(True, alpha=0.3)
    legend_outside(ax, 8)
    return ax


def plot_history(result, quantities: Sequence[str], x: str = "parameter", ax=None, title: str | None = None):
    """Plot histories of a :class:`~flexmb.results.Result` against its step parameter (or ``x``).

    ``quantities`` are names as in :meth:`Result.series` (``"uy@12"``, ``"total"``,
    ``"N@beams:3"``, a sensor's name for all its components); quantities with the same unit share an axis, a second unit gets its own
    panel. A panel of energies that holds ``total`` with another energy (``kinetic``,
    ``potential``, ...) also draws the total's change E(t) - E(0) on a second axis at the right:
    on the energies' scale the total looks constant whatever its error. A trajectory, positions
    in m against a position ``x`` in m (``x="ux@4"``, ``["uy@4"]``), is drawn with equal axes, so a
    circle looks round. Legends are below the axes. Returns the figure.
    """
    from flexmb.checks import ModelError
    from flexmb.results import Result

    if not isinstance(result, Result):
        raise ModelError("plot_history needs a flexmb result (a TimeHistory, StaticPath or "
                         f"flexmb.load_result(path)), got {result!r:.80} ({type(result).__name__})")
    if isinstance(quantities, str):                   # its letters would be taken for quantity names
        raise ModelError(f"plot_history: quantities must be a list of names, e.g. [{quantities!r}], got the string "
                         f"{quantities!r}")
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
        fig, axes = panels(len(by_unit), title or _default_title(result), width=6.0, height=4.6)
    else:
        if len(by_unit) > 1:
            raise ValueError(f"plot_history: quantities with {len(by_unit)} different units need "
                             "their own panels; leave ax=None")
        fig, axes = ax.figure, [ax]
    for axis, (unit, names) in zip(axes, by_unit.items()):
        for q in names:
            axis.plot(xs, result.series(q), label=q, alpha=COMPUTED_ALPHA)
        axis.set_xlabel(xlabel)
        axis.set_ylabel(result.label(names[0]) if len(names) == 1 else f"value {unit}".strip())
        if unit == "(m)" and xlabel.endswith("(m)"):            # a trajectory: one metre is one metre both ways
            axis.set_aspect("equal", adjustable="datalim")
        axis.grid(True, alpha=0.3)
        handles, labels = axis.get_legend_handles_labels()
        if "total" in names and len(set(names) & set(ENERGIES)) > 1:
            handles, labels = _energy_balance(axis, xs, result.series("total"), handles, labels)
        legend_outside(axis, 8, handles=handles, labels=labels)
    if ax is None:
        fig.tight_layout()
    return fig


def _energy_balance(axis, xs: np.ndarray, total: np.ndarray, handles: list, labels: list) -> tuple[list, list]:
    """Draw E(t) - E(0) of the total on a second axis at the right of ``axis`` (grey, dotted);
    returns the legend entries of both axes."""
    twin = axis.twinx()
    (line,) = twin.plot(xs, total - total[0], color="0.3", linestyle=":", linewidth=1.2, label="total - total(0)")
    twin.set_ylabel("total - total(0) (J)", color="0.3")
    twin.tick_params(axis="y", colors="0.3")
    twin.ticklabel_format(axis="y", style="sci", scilimits=(-3, 3))
    return handles + [line], labels + [line.get_label()]


def _default_title(result) -> str:
    source = result.meta.get("file")
    what = {"dynamic": f"{result.meta.get('scheme', '')} dt = {result.meta.get('dt', '')} s",
            "static": result.meta.get("method", "statics"), "modes": result.meta.get("what", "modes")}
    return f"{what.get(result.kind, result.kind)}" + (f" ({source})" if source else "")
