"""Modified Newton's factorisation kept from one solve to the next
(:class:`flexmb.integrators.newton.KeptFactorization`): the same solutions to the tolerances,
fewer factorisations, and a stale or foreign LU that cannot mislead the solve.

The algebraic system is a chain of nonlinear springs, r(x) = K x + c x^3 - b, solved for a
sequence of slowly changing loads b as a run solves its time steps (n = 300, the sparse LU).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import flexmb as fm
from flexmb.integrators import NewtonFailure, NewtonSettings, newton_solve
from flexmb.integrators.newton import KeptFactorization

N = 300
K = sp.diags([-np.ones(N - 1), 4.0 * np.ones(N), -np.ones(N - 1)], [-1, 0, 1], format="csc")
C = 0.5
SETTINGS = NewtonSettings()


def springs(b: np.ndarray, stiffness: sp.csc_matrix = K):
    """r(x) = K x + c x^3 - b with its Jacobian K + 3 c diag(x^2), in modified Newton's form."""
    def residual(x: np.ndarray, tangent: bool = True):
        r = stiffness @ x + C * x**3 - b
        J = (stiffness + sp.diags(3.0 * C * x**2)).tocsc() if tangent else None
        return r, J, float(np.abs(b).max())
    return residual


def loads(count: int) -> list[np.ndarray]:
    s = np.linspace(0.0, 1.0, N)
    return [(1.0 + 0.02 * k) * np.sin(3.0 * s) for k in range(count)]


def solve_all(kept: KeptFactorization | None, key: float = 0.01):
    x = np.zeros(N)
    solutions, factorizations = [], []
    for b in loads(8):
        x, log = newton_solve(springs(b), x, 1.0, SETTINGS, modified=True, check_singular=False, kept=kept,
                              kept_key=key)
        solutions.append(x.copy())
        factorizations.append(log.factorizations)
    return np.array(solutions), factorizations


def test_kept_lu_same_solutions_fewer_factorisations():
    fresh, lu_fresh = solve_all(None)
    kept, lu_kept = solve_all(KeptFactorization())
    # both converged to the residual tolerance: the solutions agree to it (K's inverse is O(1))
    tol = 10 * SETTINGS.residual_tol * np.abs(loads(1)[0]).max()
    assert np.abs(kept - fresh).max() <= tol
    for x, b in zip(kept, loads(8)):
        assert np.linalg.norm(springs(b)(x, False)[0]) <= SETTINGS.residual_tol * np.abs(b).max()
    # from x = 0 the first solve goes full Newton (several LUs) either way; after it one LU per
    # solve without the kept one, none with it (the first solve's last LU serves the later ones)
    assert lu_kept[0] == lu_fresh[0] >= 1
    assert lu_fresh[1:] == [1] * 7 and sum(lu_kept[1:]) == 0


def test_other_key_is_not_taken():
    kept = KeptFactorization()
    solve_all(kept, key=0.01)
    assert kept.lu is not None
    _, lus = solve_all(kept, key=0.005)                # another time step: a fresh LU first
    assert lus[0] >= 1
    # the same step up to round-off (t_end - t) is the same key
    _, lus = solve_all(kept, key=0.005 * (1.0 + 1e-14))
    assert lus[0] == 0


def test_foreign_lu_falls_back_to_full_newton():
    """An LU of a far stiffer system does not contract: the solve refactorises and still finds
    the solution of its own system."""
    kept = KeptFactorization()
    b = loads(1)[0]
    newton_solve(springs(b, 50.0 * K), np.zeros(N), 1.0, SETTINGS, modified=True, check_singular=False, kept=kept,
                 kept_key=1.0)
    x, log = newton_solve(springs(b), np.zeros(N), 1.0, SETTINGS, modified=True, check_singular=False, kept=kept,
                          kept_key=1.0)
    assert log.factorizations >= 1
    assert np.linalg.norm(springs(b)(x, False)[0]) <= SETTINGS.residual_tol * np.abs(b).max()


def test_failed_solve_keeps_nothing():
    kept = KeptFactorization()
    solve_all(kept)
    b = loads(1)[0]
    try:
        newton_solve(springs(b), np.zeros(N), 1.0, NewtonSettings(max_iterations=1, residual_tol=1e-300,
                                                                   increment_tol=0.0, round_off_factor=0.0),
                     modified=True, check_singular=False, kept=kept, kept_key=0.01)
    except NewtonFailure:
        pass
    else:
        raise AssertionError("the solve was to fail")
    assert kept.lu is None


def test_spin_up_beam_same_motion():
    """Simo's spin-up beam of 80 elements (240 unknowns: modified Newton), 30 steps of 0.01 s:
    the run that keeps LUs across steps factorises far less than once per step and reaches the
    same motion as steps that each start with their own LU, to the Newton tolerance."""
    import sys
    from pathlib import Path

    from flexmb.validation.spin_up import build

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validation"))
    from spin_up_simo import PARAMETERS

    asm = build(PARAMETERS, 80)[0]
    kept = fm.integrate(asm, 0.01, 0.3, progress=False, keep_newton_logs=True)
    original = KeptFactorization.take
    try:
        KeptFactorization.take = lambda self, key: (None, None)     # every step its own first LU
        fresh = fm.integrate(asm, 0.01, 0.3, progress=False, keep_newton_logs=True)
    finally:
        KeptFactorization.take = original
    lus_kept = sum(log.factorizations for log in kept.newton_logs)
    lus_fresh = sum(log.factorizations for log in fresh.newton_logs)
    assert lus_fresh >= 30 and lus_kept <= 10
    # tip motion: differences at the Newton tolerance's level, far below the tip's deflection
    tip = slice(-3, -1)
    deflection = np.abs(fresh.u[:, tip]).max()
    assert np.abs(kept.u[:, tip] - fresh.u[:, tip]).max() <= 1e-6 * deflection


def _stale_jacobian(b: np.ndarray, factor: float):
    """r(x) = K x - b whose Jacobian is given as about factor K: modified Newton with it contracts
    the residual by about |1 - 1/factor| per iteration, and a new factorisation is as stale (its
    values move with x, so that it is a new one: Newton keeps an LU of an unchanged matrix)."""
    def residual(x: np.ndarray, tangent: bool = True):
        J = (factor * K + sp.diags(1e-9 * x**2)).tocsc() if tangent else None
        return K @ x - b, J, float(np.abs(b).max())
    return residual


def test_near_the_solution_a_slower_contraction_keeps_the_factorisation():
    """A kept LU that contracts the residual by 0.2 per iteration: far from the solution that is
    slower than REUSE_CONTRACTION (0.1) and the solve goes on as full Newton (an LU every
    iteration, as stale here); once the residual is below NEAR_SOLUTION (1e-4) force scales,
    NEAR_CONTRACTION (0.5) holds and the one LU serves to the end (the 1e5-DOF shell plate's steps
    made their LU one iteration before converging)."""
    from flexmb.integrators import newton

    b = loads(1)[0]
    exact = np.linalg.solve(K.toarray(), b)
    for near, start in ((True, exact + 1e-6 * np.sin(np.arange(N))), (False, np.zeros(N))):
        x, log = newton_solve(_stale_jacobian(b, 1.25), start, 1.0, SETTINGS, modified=True, check_singular=False)
        assert log.converged and np.abs(x - exact).max() <= 1e-9
        relative = np.array(log.residual_norms) / log.force_scale
        assert (relative[0] < newton.NEAR_SOLUTION) == near
        assert np.all(relative[1:] / relative[:-1] > newton.REUSE_CONTRACTION)        # never contracts by 0.1
        assert (log.factorizations == 1) == near, (log.factorizations, relative)
