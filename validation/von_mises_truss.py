"""Snap-through of a shallow two-bar (von Mises) truss, traced by the arc-length method.

Two co-rotational bars, supports at (-a, 0) and (a, 0), apex at (0, h) with h / a = 0.2, EA
constant, a vertical load P = lam P_ref pushing the apex down; the apex ux is fixed (symmetry).
Exact equilibrium of the co-rotational bar (N = EA (l - l0) / l0, exact for any rotation): with
the apex deflection v (down) and z = h - v,

    l = sqrt(a^2 + z^2),    P(v) = -2 N z / l = 2 EA z (1 / l - 1 / l0).

P rises to the limit load P_max at z* = sqrt(l*^2 - a^2), l* = (a^2 l0)^(1/3) (where dP/dz = 0),
falls through zero at v = h (bars horizontal) to -P_max at v = h + z*, crosses zero again at the
stress-free inverted position v = 2 h and then stiffens. Load control cannot follow the curve
past the first limit point (it jumps to the stiffening branch); Crisfield's cylindrical arc length
(Crisfield 1981; Crisfield 1991, vol. 1, ch. 9) follows all of it. With one free DOF the
cylindrical constraint fixes each step to |dv| = dl, so the path points are evenly spaced in v
and the corrector only has to find lam (one iteration per step); the full two-vector corrector
through a snap-back is exercised in tests/test_arc_length.py.

Checked: at every path point (at least 50, from v = dl to 2.5 h) the load agrees with P(v) to
1e-6 of max |P|; lam turns twice along the path (both limit points passed); the path reaches
v >= 2 h; the limit loads +-P_max, located by a parabola through the three path points around
each turning point of lam, agree with the closed form to 1e-3.
"""
from __future__ import annotations

import numpy as np

import flexmb as fm
from flexmb.validation import CaseReport, Check, print_report

CASE = "von-mises-truss"
TITLE = "Shallow two-bar truss: snap-through traced by arc length"
SOURCE = "exact co-rotational truss equilibrium"

A_HALF = 1.0          # m, half span
RISE = 0.2            # m
EA = 1.0e7            # N
P_REF = 1.0e4         # N, load at lam = 1 (downward)
V_END = 2.5 * RISE    # m, apex deflection at the end of the path
ARC_LENGTH = {False: 0.0025, True: 0.01}      # m, by quick mode: 200 and 50 path points


def build() -> tuple[fm.Assembly, int]:
    model = fm.Model(dim=2)
    left, right = model.add_node([-A_HALF, 0.0]), model.add_node([A_HALF, 0.0])
    apex = model.add_node([0.0, RISE])
    model.add_truss([[left, apex], [right, apex]], EA=EA)
    model.fix(left)
    model.fix(right)
    model.fix(apex, "ux")
    model.add_load(apex, "uy", -P_REF)                              # scaled by the load factor
    return fm.Assembly(model), apex


def exact_load(v: np.ndarray) -> np.ndarray:
    """Apex load P (N, downward positive) in equilibrium with the apex deflection v (m, down)."""
    z = RISE - v
    return 2.0 * EA * z * (1.0 / np.hypot(A_HALF, z) - 1.0 / np.hypot(A_HALF, RISE))


def exact_limit_point() -> tuple[float, float]:
    """Deflection (m) and load (N) at the first limit point; the second is at (2h - v, -P)."""
    l0 = np.hypot(A_HALF, RISE)
    z = np.sqrt((A_HALF**2 * l0) ** (2.0 / 3.0) - A_HALF**2)
    return float(RISE - z), float(exact_load(RISE - z))


def _parabola_vertex(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Vertex (x, y) of the parabola through three equally spaced points."""
    curvature = y[0] - 2.0 * y[1] + y[2]
    shift = 0.5 * (y[0] - y[2]) / curvature                          # in spacings from x[1]
    return float(x[1] + shift * (x[2] - x[1])), float(y[1] - 0.25 * (y[0] - y[2]) * shift)


def run(quick: bool = False) -> CaseReport:
    asm, apex = build()
    dl = ARC_LENGTH[quick]
    # stop at the point nearest V_END; n_steps only guards against a run that never gets there
    path = fm.arc_length(asm, dl, n_steps=int(4 * V_END / dl), max_displacement=V_END - 0.5 * dl)
    iy = asm.dofs.index(apex, "uy")
    v = np.array([-u[iy] for u in path.u])                          # (n_points,) m, down
    P = P_REF * np.array(path.load_factors)                         # (n_points,) N
    P_exact = exact_load(v)
    error = np.abs(P - P_exact) / np.abs(P_exact).max()
    turns = np.flatnonzero(np.diff(np.sign(np.diff(P)))) + 1         # indices of lam's turning points

    report = CaseReport(CASE, n_dof=asm.n_dof, n_steps=len(P))
    report.add(Check.at_least("path points", len(P), 50, "case definition"))
    report.add(Check.at_most("max |P - P(v)| / max |P(v)| over the path", error.max(), 1e-6, SOURCE))
    report.add(Check.close("turning points of lam (limit points passed)", turns.size, 2, 0.0,
                           "exact: max, then min of P(v)"))
    report.add(Check.at_least("final apex deflection / h", v[-1] / RISE, 2.0, "case definition"))
    v_lim, P_lim = exact_limit_point()
    limits = [_parabola_vertex(v[k - 1:k + 2], P[k - 1:k + 2]) for k in turns]
    for (v_k, P_k), sign, name in zip(limits, (1.0, -1.0), ("first", "second")):
        report.add(Check.close(f"{name} limit load (N), parabola through path", P_k, sign * P_lim, 1e-3,
                               "exact: P_max = 2 EA z* (1/l* - 1/l0)"))
    report.info.update({
        "arc_length_m": dl,
        "cutbacks": path.cutbacks,
        "corrector_iterations": [log.iterations for log in path.newton_logs],
        "limit_points_path_v_P": limits,
        "limit_points_exact_v_P": [(v_lim, P_lim), (2.0 * RISE - v_lim, -P_lim)],
        "largest_relative_error": float(error.max()),
    })
    report.figure = _figure(v, P, error, limits)
    return report


def _figure(v: np.ndarray, P: np.ndarray, error: np.ndarray, limits: list[tuple[float, float]]):
    from flexmb.viz.plots import panels

    fig, (ax, ax2) = panels(2, f"von Mises truss (h/a = {RISE / A_HALF:g}), cylindrical arc length")
    vv = np.linspace(0.0, V_END, 400)
    ax.plot(vv / RISE, exact_load(vv) / 1e3, "k-", lw=1, label="closed form P(v)")
    ax.plot(v / RISE, P / 1e3, "o", ms=3, mfc="none", label=f"arc length ({v.size} points)")
    ax.plot([vk / RISE for vk, _ in limits], [Pk / 1e3 for _, Pk in limits], "rx", ms=8,
            label="limit points (parabola)")
    ax.axhline(0.0, color="0.6", lw=0.5)
    ax.set_xlabel("apex deflection v / h")
    ax.set_ylabel("apex load P (kN)")
    ax.legend(fontsize=8)
    ax2.semilogy(v / RISE, np.maximum(error, 1e-17), "o-", ms=3)
    ax2.set_xlabel("apex deflection v / h")
    ax2.set_ylabel("|P - P(v)| / max |P(v)|")
    ax2.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig


def main() -> None:
    print_report(run())


if __name__ == "__main__":
    main()
