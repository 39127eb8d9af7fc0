"""Pictures of a study (matplotlib, files only): responses, scatter matrix, sensitivity bars.

* ``responses.png``: each quantity against each parameter, points, and for a grid a line
  through the points that share the other parameters' levels;
* ``scatter_matrix.png`` (sampled spaces): every pair of parameters and quantities;
* ``sensitivity.png``: standardised regression coefficients (Saltelli et al. 2008, sec. 1.2.5)
  of each quantity on the parameters, :func:`sensitivity`.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    from flexmb.studies.result import StudyResult

#: at most this many quantity columns are drawn (the first ones)
MAX_QUANTITIES = 6
#: a grid's lines get a legend (the other parameters' levels) up to this many lines
MAX_LEGEND = 8


def sensitivity(result: StudyResult) -> pd.DataFrame:
    """Standardised regression coefficients: the least-squares fit ``(y - mean y) / std y =
    sum_j b_j (x_j - mean x_j) / std x_j`` over the computed variants, per quantity column (rows)
    and parameter (columns). For a linear ``y`` with independent parameters, ``b_j^2`` are the
    shares of the variance of ``y`` (they sum to 1). Parameters that do not vary get NaN;
    quantities that do not vary get 0. Needs more computed variants than varying parameters."""
    import pandas as pd

    ok = result.table[result.table["error"] == ""]
    x = ok[result.parameters].to_numpy(float)                      # (n, n_parameters)
    sx = x.std(axis=0)
    varying = sx > 0
    coefficients = np.full((len(result.quantity_columns), len(result.parameters)), np.nan)
    if len(ok) > varying.sum():
        zx = (x[:, varying] - x[:, varying].mean(axis=0)) / sx[varying]
        for i, column in enumerate(result.quantity_columns):
            y = ok[column].to_numpy(float)
            sy = y.std()
            if not np.all(np.isfinite(y)):
                continue
            coefficients[i, varying] = (np.linalg.lstsq(zx, (y - y.mean()) / sy, rcond=None)[0] if sy > 0 else 0.0)
    return pd.DataFrame(coefficients, index=result.quantity_columns, columns=result.parameters)


def write_plots(result: StudyResult, folder: Path) -> list[Path]:
    """The study's pictures in ``folder``; none when fewer than two variants were computed."""
    import matplotlib
    matplotlib.use("Agg")

    ok = result.table[result.table["error"] == ""]
    quantities = result.quantity_columns[:MAX_QUANTITIES]
    if len(ok) < 2 or not quantities:
        return []
    written = [_responses(result, ok, quantities, folder / "responses.png")]
    if result.space.kind != "grid":
        written.append(_scatter_matrix(result, ok, quantities, folder / "scatter_matrix.png"))
    table = sensitivity(result).loc[quantities]
    if np.isfinite(table.to_numpy()).any():
        written.append(_sensitivity_bars(result, table, folder / "sensitivity.png"))
    return written


def _responses(result: StudyResult, ok: pd.DataFrame, quantities: list[str], path: Path) -> Path:
    import matplotlib.pyplot as plt

    names = result.parameters
    fig, axes = plt.subplots(len(quantities), len(names), figsize=(3.2 * len(names), 2.6 * len(quantities)),
                             squeeze=False, constrained_layout=True)
    for j, name in enumerate(names):
        others = [n for n in names if n != name]
        groups = ok.groupby(others, sort=True) if result.space.kind == "grid" and others else [(None, ok)]
        for i, q in enumerate(quantities):
            ax = axes[i, j]
            for key, group in groups:
                group = group.sort_values(name)
                style = "o-" if result.space.kind == "grid" else "o"
                label = None if key is None else ", ".join(f"{n} = {v:.4g}" for n, v in zip(others, np.atleast_1d(key)))
                ax.plot(group[name], group[q], style, ms=3, lw=1, alpha=0.8, label=label)
            if i == 0 and 1 < len(groups) <= MAX_LEGEND:
                ax.legend(fontsize="x-small")
            ax.set_xlabel(result.label(name))
            ax.set_ylabel(result.label(q))
            ax.grid(alpha=0.3)
    fig.suptitle(f"{result.name}: quantities against parameters")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _scatter_matrix(result: StudyResult, ok: pd.DataFrame, quantities: list[str], path: Path) -> Path:
    import matplotlib.pyplot as plt
    from pandas.plotting import scatter_matrix

    columns = result.parameters + quantities
    size = 1.8 * len(columns) + 1
    labelled = ok[columns].rename(columns={c: result.label(c) for c in columns})
    fig = scatter_matrix(labelled, figsize=(size, size), diagonal="hist", s=8, alpha=0.7)[0, 0].figure
    fig.suptitle(f"{result.name}: scatter matrix of {len(ok)} variants")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _sensitivity_bars(result: StudyResult, table: pd.DataFrame, path: Path) -> Path:
    import matplotlib.pyplot as plt

    n_q, n_p = table.shape
    fig, ax = plt.subplots(figsize=(max(4.0, 2.0 + 0.5 * n_q * n_p), 3.5), constrained_layout=True)
    width = 0.8 / n_p
    for j, name in enumerate(table.columns):
        ax.bar(np.arange(n_q) + (j - (n_p - 1) / 2) * width, table[name].fillna(0.0), width, label=result.label(name))
    ax.axhline(0.0, color="k", lw=0.8)
    ax.set_xticks(np.arange(n_q), [result.label(q) for q in table.index])
    ax.set_ylabel("standardised regression coefficient (-)")
    ax.legend(title="parameter", fontsize="small")
    ax.grid(axis="y", alpha=0.3)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
