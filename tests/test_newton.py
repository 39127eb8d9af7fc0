"""Tests of the shared Newton driver: quadratic convergence, failures and their logs.

Quadratic convergence is checked on the residual sequence r_k (relative to the force scale):
near the solution ``r_{k+1} ~ C r_k^2``, so the slope of log r_{k+1} against log r_k is 2.
Only pairs with r_k below ``NEAR`` (inside the basin) and r_{k+1} above ``ROUND_OFF`` (before
round-off dominates) are fitted.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import flexmb as fm
from models import clamped_tet10_bar, truss_bays
from flexmb.integrators import NewtonFailure, NewtonLog, NewtonSettings, newton_solve
from flexmb.integrators.newton import Factorization

NEAR = 0.1                      # relative residual below which the iterate is "near the solution"
ROUND_OFF = 1e3 * np.finfo(float).eps
MIN_SLOPE = 1.8


def _convergence_pairs(relative_residuals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (r_k, r_{k+1}) near the solution and above round-off."""
    r = np.asarray(relative_residuals)
    keep = (r[:-1] <= NEAR) & (r[1:] >= ROUND_OFF) & (r[1:] < r[:-1])
    return r[:-1][keep], r[1:][keep]


def _fitted_order(logs: list[NewtonLog]) -> tuple[float, int, float]:
    """Slope of log r_{k+1} vs log r_k over all logs, number of pairs, largest r_{k+1}/r_k^2."""
    rk, rk1 = [], []
    for log in logs:
        a, b = _convergence_pairs(np.array(log.residual_norms) / log.force_scale)
        rk.append(a)
        rk1.append(b)
    rk, rk1 = np.concatenate(rk), np.concatenate(rk1)
    if rk.size < 2:
        pytest.fail(f"only {rk.size} residual pair(s) between round-off and {NEAR}: nothing to fit")
    slope = np.polyfit(np.log(rk), np.log(rk1), 1)[0]
    return float(slope), rk.size, float(np.max(rk1 / rk**2))


# ------------------------------------------------------------ analytic system
def _circle_and_exponential(x: np.ndarray) -> tuple[np.ndarray, sp.csc_matrix, float]:
    """r = [x^2 + y^2 - 4, exp(x) + y - 1]; roots near (1.004, -1.730) and (-1.816, 0.837)."""
    r = np.array([x[0] ** 2 + x[1] ** 2 - 4.0, np.exp(x[0]) + x[1] - 1.0])
    J = sp.csc_matrix(np.array([[2.0 * x[0], 2.0 * x[1]], [np.exp(x[0]), 1.0]]))
    return r, J, 4.0


def test_newton_solve_converges_quadratically_on_analytic_system():
    settings = NewtonSettings(residual_tol=1e-15, increment_tol=0.0, max_iterations=30)
    x, log = newton_solve(_circle_and_exponential, np.array([1.0, -1.0]), 1.0, settings)
    r, _, _ = _circle_and_exponential(x)
    assert log.converged and np.linalg.norm(r) <= 1e-14 * 4.0, \
        f"root not found: |r| = {np.linalg.norm(r):.3e}, log:\n{log.format()}"
    slope, n_pairs, C = _fitted_order([log])
    assert slope > MIN_SLOPE, (f"convergence order {slope:.3f} < {MIN_SLOPE} over {n_pairs} pairs "
                               f"(missed by {MIN_SLOPE - slope:.3f}); log:\n{log.format()}")
    assert C < 10.0, f"r_k+1 <= C r_k^2 needs C = {C:.3g} (> 10); log:\n{log.format()}"


def _von_mises_truss(P: float = 200.0, EA: float = 1e4) -> fm.Model:
    """Shallow two-bar truss (half span 1 m, rise 0.5 m), apex loaded down and sideways."""
    m = fm.Model(dim=2)
    left, right, apex = m.add_node([-1.0, 0.0]), m.add_node([1.0, 0.0]), m.add_node([0.0, 0.5])
    m.add_truss([[left, apex], [right, apex]], EA=EA)
    m.fix(left)
    m.fix(right)
    m.add_load(apex, "uy", -P)
    m.add_load(apex, "ux", 0.1 * P)
    return m


def _truss_cantilever(n_bays: int = 4, P: float = 3e3, EA: float = 1e5) -> fm.Model:
    """Plane truss cantilever of square bays (1 m) with diagonals, large tip load."""
    m, bottom, top = truss_bays(n_bays, EA)
    m.fix(bottom[0])
    m.fix(top[0])
    m.add_load(top[-1], "uy", -P)
    return m


@pytest.mark.parametrize("builder", [_von_mises_truss, _truss_cantilever], ids=["von-mises", "cantilever"])
def test_load_control_newton_converges_quadratically(builder):
    settings = NewtonSettings(residual_tol=1e-15, max_iterations=30)
    path = fm.load_control(builder(), 5, newton=settings)
    assert path.cutbacks == 0, f"{path.cutbacks} cut-backs: the test problem is meant to be benign"
    tip = np.max(np.abs(path.u[-1]))
    assert tip > 0.05, f"largest displacement {tip:.3g} m: problem too linear to test Newton"
    slope, n_pairs, C = _fitted_order(path.newton_logs)
    logs = "\n\n".join(log.format() for log in path.newton_logs)
    assert slope > MIN_SLOPE, (f"convergence order {slope:.3f} < {MIN_SLOPE} over {n_pairs} pairs "
                               f"(missed by {MIN_SLOPE - slope:.3f}); logs:\n{logs}")
    assert C < 100.0, f"r_k+1 <= C r_k^2 needs C = {C:.3g} (> 100); logs:\n{logs}"


# ------------------------------------------------------------------- failures
def _flat_string() -> fm.Model:
    """Two collinear bars without pre-tension, middle node loaded sideways: a mechanism at u = 0."""
    m = fm.Model(dim=2)
    a, b, c = m.add_node([0.0, 0.0]), m.add_node([1.0, 0.0]), m.add_node([2.0, 0.0])
    m.add_truss([[a, b], [b, c]], EA=1e3)
    m.fix(a)
    m.fix(c)
    m.add_load(b, "uy", -1.0)
    return m


def test_singular_tangent_raises_newton_failure_with_log():
    asm = fm.Assembly(_flat_string())
    free = asm.dofs.free
    f = asm.external_force(1.0, statics=True)

    def residual(x):
        u = np.zeros(asm.n_dof)
        u[free] = x
        q, k_data = asm.force_and_tangent(u)
        return (q - f)[free], asm.free_matrix(k_data), float(np.linalg.norm(f))

    with pytest.raises(NewtonFailure, match="singular tangent") as info:
        newton_solve(residual, np.zeros(free.size), 2.0)
    log = info.value.log
    assert not log.converged
    assert len(log.residual_norms) == 1 and log.increment_norms == [], \
        f"expected the failure at iteration 0, log has {len(log.residual_norms)} residuals"
    assert "it  0" in log.format()


def test_statics_of_mechanism_reports_singular_tangent():
    with pytest.raises(fm.SingularSystemError, match="mechanism.*node 1 uy") as info:
        fm.load_control(_flat_string(), 2, max_cutbacks=2)
    cause = info.value.__cause__
    assert isinstance(cause, NewtonFailure), f"cause is {cause!r}, expected a NewtonFailure"
    assert cause.log.residual_norms, "the Newton log of the failed solve is empty"
    assert info.value.result.n_steps == 0, "no load factor can have converged"
    assert info.value.result.cutbacks == 0, "a singular start tangent must not be cut back"


def test_non_convergence_raises_with_log_listing_every_iteration():
    settings = NewtonSettings(max_iterations=2)
    with pytest.raises(NewtonFailure, match="no convergence in 2 iterations") as info:
        newton_solve(_circle_and_exponential, np.array([1.0, -1.0]), 1.0, settings)
    log = info.value.log
    assert not log.converged
    assert len(log.residual_norms) == 3 and len(log.increment_norms) == 2, \
        f"log has {len(log.residual_norms)} residuals and {len(log.increment_norms)} increments, expected 3 and 2"
    lines = log.format().splitlines()
    assert len(lines) == 3, f"format() gave {len(lines)} lines, expected one per residual:\n{log.format()}"
    for k, line in enumerate(lines):
        assert line.strip().startswith(f"it {k:2d}".strip()), f"line {k} does not list iteration {k}: {line!r}"
        rel = log.residual_norms[k] / log.force_scale
        assert f"{rel:10.3e}".strip() in line, f"line {k} lacks |r|/F = {rel:.3e}: {line!r}"


def test_non_finite_residual_raises():
    def residual(x):
        with np.errstate(invalid="ignore"):
            r = np.log(x) - 5.0
        return r, sp.csc_matrix(np.array([[1.0 / x[0]]])), 5.0

    # Newton on log x = 5 maps x to x (6 - log x): from x = 1000 it lands at x < 0, where log is NaN
    with pytest.raises(NewtonFailure, match="not finite") as info:
        newton_solve(residual, np.array([1000.0]), 1.0)
    assert len(info.value.log.residual_norms) == 2


def test_residual_stalled_at_round_off_counts_as_converged_only_when_small():
    """A residual with a noise floor: converged ("stagnation") when the floor is below the
    increment gate and the corrections are tiny, a failure when the floor is large."""
    import scipy.sparse as sp

    from flexmb.integrators.newton import NewtonFailure, NewtonSettings, newton_solve

    for floor, should_converge in ((5e-9, True), (1e-3, False)):
        calls = [0]

        def residual(x, floor=floor, calls=calls):
            calls[0] += 1
            noise = floor * (1.0 if calls[0] % 2 else -1.0)         # round-off that does not go away
            # a stiff DOF (1e3 N/m) with force scale 1 N: the floor's corrections are 1e-3 of it
            return np.array([1e3 * (x[0] - 1.0) + noise]), sp.csc_matrix([[1e3]]), 1.0

        settings = NewtonSettings(residual_tol=1e-10, increment_tol=1e-16, max_iterations=10)
        if should_converge:
            x, log = newton_solve(residual, np.array([0.0]), 1.0, settings)
            assert log.criterion == "stagnation" and abs(x[0] - 1.0) < 1e-8
        else:
            with pytest.raises(NewtonFailure, match="no convergence"):
                newton_solve(residual, np.array([0.0]), 1.0, settings)


# ------------------------------------------------------------ absolute tolerance
def test_absolute_force_tolerance_ends_the_iteration_early_on_an_analytic_system():
    """|r| of the circle-exponential system: 2.1, 0.86, 0.040, 1.0e-4, 8e-10, 0. With force_tol =
    1e-3 the iteration stops at the first residual below it, by the residual criterion."""
    x0 = np.array([1.0, -1.0])
    _, full = newton_solve(_circle_and_exponential, x0, 1.0, NewtonSettings())
    _, early = newton_solve(_circle_and_exponential, x0, 1.0, NewtonSettings(force_tol=1e-3))
    assert early.criterion == "residual" and early.residual_norms[-1] <= 1e-3 < early.residual_norms[-2]
    assert early.iterations < full.iterations
    assert early.residual_norms == full.residual_norms[:len(early.residual_norms)]


def _spinning_fine_beam(n: int) -> fm.Assembly:
    """A 10 m beam of n cubic-mass elements (EA = 2.8e7 N, EI = 1.4e4 N m^2) spun up from rest by
    its prescribed root angle (0.4 t^2, then 0.8 rad/s), the kind of model whose residual cannot
    reach residual_tol: its Newton iterations end by the round-off test by default."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 10.0, n + 1), np.zeros(n + 1)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=2.8e7, EI=1.4e4, rho_A=1.2, rho_I=2e-3, mass="cubic")
    m.fix(nodes[0], ["ux", "uy"])
    m.prescribe(nodes[0], "rz", lambda t: 0.4 * t**2 if t < 1.0 else 0.4 + 0.8 * (t - 1.0))
    return fm.Assembly(m)


def test_absolute_force_tolerance_trades_iterations_for_the_energy_balance():
    """200 elements (600 unknowns, the sparse path), dt 0.01 s, 2 s. Measured: 962 iterations,
    energy error 2e-13 by default; with force_tol = 1e-3 N 615 iterations, energy error 7.5e-8 of
    the kinetic energy, tip 3e-8 m from the default run's. Checked with margins of 10x and more:
    at most 80 % of the iterations, energy error below 1e-6, tip within 1e-6 m."""
    asm = _spinning_fine_beam(200)
    runs = {tol: fm.integrate(asm, 0.01, 2.0, progress=False, keep_newton_logs=True,
                              newton=NewtonSettings(force_tol=tol)) for tol in (0.0, 1e-3)}
    its = {tol: sum(log.iterations for log in h.newton_logs) for tol, h in runs.items()}
    assert {log.criterion for log in runs[0.0].newton_logs} <= {"increment", "round-off", "stagnation"}
    assert {log.criterion for log in runs[1e-3].newton_logs} == {"residual"}
    assert its[1e-3] <= 0.8 * its[0.0], its
    errors = {tol: float(np.max(h.energy_error())) for tol, h in runs.items()}
    assert errors[0.0] < 1e-11 and errors[1e-3] < 1e-6, errors
    tip = asm.dofs.index(asm.model.n_nodes - 1, "uy")
    assert abs(runs[1e-3].u[-1][tip] - runs[0.0].u[-1][tip]) < 1e-6


def test_negative_force_tolerance_is_refused():
    with pytest.raises(fm.ModelError, match="force_tol"):
        NewtonSettings(force_tol=-1.0)


def test_a_linear_model_is_factorised_once_per_load_step(monkeypatch):
    """A linear model's Jacobian does not change: Newton keeps its factorisation for the second
    iteration, and load control's check of the tangent at both ends of the increment takes it
    too, so a load step of a linear solid (above the dense limit) makes one LU, not three or
    four (measured: 61 000 unknowns of tet10 with SuperLU, 56.7 s before, 18-20 s after); the displacement is
    K^-1 f to 1e-10."""
    import scipy.sparse.linalg as spla

    import flexmb.analysis.statics as statics

    m, X = clamped_tet10_bar()
    tip = np.flatnonzero(X[:, 0] == 1.0)
    for node in tip:
        m.add_load(int(node), "uz", -100.0 / tip.size)
    made = []
    monkeypatch.setattr(statics, "Factorization", lambda K: made.append(K) or Factorization(K))
    path = fm.load_control(m, [0.5, 1.0], progress=False)
    assert [log.factorizations for log in path.newton_logs] == [1, 1] and not made
    asm = fm.Assembly(m)
    K = asm.free_matrix(asm.force_and_tangent(np.zeros(asm.n_dof))[1])
    f = asm.external_force(1.0, statics=True)[asm.dofs.free]
    u = spla.spsolve(K.tocsc(), f)
    assert np.abs(np.asarray(path.u[-1])[asm.dofs.free] - u).max() <= 1e-10 * np.abs(u).max()
