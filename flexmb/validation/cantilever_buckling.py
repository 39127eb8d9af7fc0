"""Cantilever buckling studies of Meijaard (1993, section 3), shared by two validation cases.

A straight cantilever along x, clamped at x = 0, divided into n equal Beam3D elements with and
without the second-order strain terms; :func:`critical_ratio` returns the lowest critical load
factor whose mode involves the buckling DOFs of interest (lateral displacement uy and the
rotations rx, rz for lateral buckling; the transverse DOFs for the shaft), divided by the
theoretical value. Modes that do not involve them (in-plane modes of the stretching-bending
coupling, at loads proportional to EA) are reported separately, as they are not the paper's
buckling mode.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import flexmb as fm
from flexmb.analysis import linear_buckling
from flexmb.validation.report import CaseReport, Check


@dataclass
class BucklingRow:
    """One row of a table: number of elements, second-order terms on/off, ratio to theory."""

    n_elements: int
    second_order: bool
    ratio: float                                   # inf when no mode of interest exists
    n_dof: int
    other_modes: list[float] = field(default_factory=list)   # ratios of modes not of interest


def critical_ratio(build: Callable[[int, bool], fm.Model], n_elements: int, second_order: bool,
                   mode_dofs: tuple[str, ...], theory: float, n_modes: int = 6) -> BucklingRow:
    """Lowest critical load of a mode involving ``mode_dofs``, divided by ``theory``."""
    model = build(n_elements, second_order)
    asm = fm.Assembly(model)
    result = linear_buckling(asm, n_modes=n_modes)
    trans = asm.dofs.translations().ravel()
    length = model.characteristic_length
    ratio, others = np.inf, []
    for lam, mode in zip(result.load_factors, result.modes):
        scaled = mode.copy()
        rot = np.setdiff1d(np.arange(asm.n_dof), trans)
        scaled[rot] *= length                                   # rotations as displacements
        of_interest = [asm.dofs.index(n, d) for n in range(model.n_nodes) for d in mode_dofs]
        share = np.linalg.norm(scaled[of_interest]) / np.linalg.norm(scaled)
        if share > 1e-6 and ratio == np.inf:
            ratio = lam / theory
        elif share <= 1e-6:
            others.append(float(lam / theory))
    return BucklingRow(n_elements, second_order, float(ratio), asm.n_dof, others)


def table_study(case: str, build: Callable[[int, bool], fm.Model], mode_dofs: tuple[str, ...],
                theory: float, symbol: str, table: dict[tuple[int, bool], float], source: str,
                counts: tuple[int, ...], finest_bounds: dict[bool, float], theory_source: str) -> CaseReport:
    """Rows for ``counts`` elements, with and without second-order terms, checked against the
    paper's table (1 %; ``inf`` means no mode of interest at all) and, at the finest mesh,
    against theory (``ratio - 1 <= finest_bounds[second_order]``)."""
    rows = [critical_ratio(build, n, so, mode_dofs, theory) for so in (False, True) for n in counts]
    report = CaseReport(case, n_dof=max(r.n_dof for r in rows), n_steps=len(rows))
    for r in rows:
        label = f"{symbol}, {r.n_elements} el., {'with' if r.second_order else 'without'} 2nd-order"
        ref = table.get((r.n_elements, r.second_order))
        if ref is None:
            continue
        if np.isinf(ref):
            report.add(Check.at_most(label + ": buckling modes found", float(np.isfinite(r.ratio)), 0.0,
                                     source + " (infinite)"))
        else:
            report.add(Check.close(label, r.ratio, ref, 1e-2, source))
    finest = max(counts)
    for so, bound in finest_bounds.items():
        r = next(r for r in rows if r.n_elements == finest and r.second_order == so)
        report.add(Check.at_most(f"{finest} el., {'with' if so else 'without'}: {symbol} - 1",
                                 r.ratio - 1.0, bound, theory_source))
    report.info["rows"] = [{"n_elements": r.n_elements, "second_order": r.second_order,
                            "ratio": r.ratio if np.isfinite(r.ratio) else "infinite",
                            "ratios_of_other_modes": r.other_modes} for r in rows]
    report.figure = convergence_figure(f"{case} ({source})", rows, table)
    return report


def convergence_figure(title: str, rows: list[BucklingRow], table: dict[tuple[int, bool], float]):
    """Ratio - 1 against the number of elements, with the paper's table values."""
    from flexmb.viz.plots import panels

    fig, (ax,) = panels(1, title, width=6.0, height=4.2)
    for so, marker in ((False, "o"), (True, "s")):
        pts = [(r.n_elements, r.ratio - 1.0) for r in rows if r.second_order == so and np.isfinite(r.ratio)]
        if pts:
            n, e = np.array(pts).T
            ax.loglog(n, e, marker + "-", label=f"flexmb, {'with' if so else 'without'} second-order terms")
        ref = [(n, v - 1.0) for (n, s), v in table.items() if s == so and np.isfinite(v)]
        if ref:
            n, e = np.array(ref).T
            ax.loglog(n, e, marker, mfc="none", ms=11, color="k",
                      label=f"Meijaard 1993, {'with' if so else 'without'}")
    ax.set_xlabel("number of elements")
    ax.set_ylabel("critical load / theory - 1")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
