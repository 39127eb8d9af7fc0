"""Solves with the transpose of a factorised matrix, A^T x = b on the factors of A
(:meth:`flexmb.integrators.newton.Factorization.solve` with ``transpose=True``): the solve a discrete
adjoint makes with every step's Jacobian (issue 33). Every backend: the compiled dense LU (up to
``DENSE_LIMIT`` unknowns), SuperLU (the first factorisation of a pattern, with its own ordering, and
a later one on the kept ordering), the compiled band LU, and PARDISO where it is installed.

Matrices: (a) the mid-point step Jacobian of a flexible slider-crank with joints (a driven crank
hinge, the crank pin, the slider on its line), augmented with the joints' rows and columns as
Newton factorises it; (b) a random non-symmetric band matrix that needs row exchanges, its rows
and columns scaled over six decades (well conditioned once equilibrated, so a scaling applied on
the wrong side shows). The accuracy measure is the relative residual of the equilibrated system
the factors solve (:func:`backward_error`): the Jacobian's equations and unknowns have mixed units
(forces and constraint values times kappa; displacements, rotations and multipliers), so A's own
||A x - b|| / ||b|| measures those units (2e-12 to 6e-12 for the plain solve of the 222-unknown
Jacobian, whose condition number is 1.7e8), not the solve.
"""
from __future__ import annotations

from functools import cache

import numpy as np
import pytest
import scipy.sparse as sp

import flexmb as fm
from flexmb.integrators import sparse_lu
from flexmb.integrators.newton import DENSE_LIMIT, Factorization, equilibrate
from flexmb.integrators.schemes import MidPoint

#: "superlu-kept": SuperLU on the ordering kept from an earlier matrix of the same pattern
BACKENDS = ("dense", "superlu", "superlu-kept") + tuple(name for name in sparse_lu.available() if name != "superlu")
MATRICES = ("jacobian", "band")
#: backward error allowed (measured: 2e-17 to 1.2e-16 on every backend and matrix)
BACKWARD_TOL = 1e-12
EPS = np.finfo(float).eps


def slider_crank(n_crank: int, n_rod: int) -> fm.Assembly:
    """A flexible crank (0.3 m) driven at its ground hinge, angle 100 t^2 rad, and a flexible rod
    (0.8 m) pinned to it, whose end slides along the x axis with a 0.5 kg slider; gravity along -y.
    The crank starts at 30 degrees (away from the dead points)."""
    m = fm.Model(dim=2)
    pin = 0.3 * np.array([np.cos(np.pi / 6.0), np.sin(np.pi / 6.0)])
    slider = np.array([pin[0] + np.sqrt(0.8**2 - pin[1] ** 2), 0.0])
    crank = m.add_nodes(np.linspace([0.0, 0.0], pin, n_crank + 1))
    rod = m.add_nodes(np.linspace(pin, slider, n_rod + 1))
    m.add_beam2d(np.c_[crank[:-1], crank[1:]], EA=2e6, EI=50.0, rho_A=0.6, rho_I=1e-4, name="crank")
    m.add_beam2d(np.c_[rod[:-1], rod[1:]], EA=1e6, EI=5.0, rho_A=0.3, rho_I=1e-5, name="rod")
    m.add_joint("revolute", None, int(crank[0]), at=[0.0, 0.0], drive=lambda t: 100.0 * t**2, name="crank hinge")
    m.add_joint("revolute", int(crank[-1]), int(rod[0]), at=pin, name="crank pin")
    m.add_joint("point-on-line", None, int(rod[-1]), at=slider, x_axis=[1.0, 0.0], name="slider")
    m.add_point_mass(int(rod[-1]), 0.5)
    m.set_gravity([0.0, -9.81])
    return fm.Assembly(m)


@cache
def step_jacobian(n_crank: int, n_rod: int, dt: float = 2e-3) -> sp.csc_matrix:
    """The mid-point step Jacobian (n_free + n_c, n_free + n_c) after 10 steps of the slider-crank,
    at the predictor of the 11th: [[J + K_c, s G^T], [kappa C, 0]] with Newton's multiplier scale
    s and constraint weight kappa (:func:`flexmb.integrators.time_stepping._sub_step`)."""
    asm = slider_crank(n_crank, n_rod)
    history = fm.integrate(asm, dt, 10 * dt, progress=False)
    scheme = MidPoint(asm)
    s = scheme.initial_state(history.t[-1], np.array(history.u[-1]), np.array(history.v[-1]))
    s.lam = np.array(history.multipliers[-1])
    u1 = scheme.predict(s, dt)
    res = scheme.residual(s, dt, u1, True)
    ct = scheme.constraint_terms(s, dt, u1, s.lam, res)
    kappa = 100.0 * res.force_scale / asm.characteristic_length
    A = asm.constraints.augmented(ct, asm.jacobian_matrix(res.jacobian_data), asm.dofs.free_position,
                                  float(np.abs(s.lam).max()), kappa).tocsc()
    assert np.abs(A - A.T).max() > 1e-3 * np.abs(A).max(), "the step Jacobian is symmetric: no test of the transpose"
    return A


@cache
def scaled_band(n: int, seed: int = 5) -> sp.csc_matrix:
    """D_1 P M D_2 (n, n): M a random diagonally dominant band matrix (kl = 3, ku = 2), P the exchange
    of the rows 3k and 3k + 1 (partial pivoting must undo it; cond(P M) = cond(M)), D_1, D_2 random
    positive diagonals from 1e-3 to 1e3."""
    rng = np.random.default_rng(seed)
    M = np.zeros((n, n))
    for k in range(-3, 3):
        M += np.diag(rng.standard_normal(n - abs(k)), k)
    M += np.diag(np.sign(rng.standard_normal(n)) * (2.0 + np.abs(M).sum(axis=1)))
    order = np.arange(n)
    order[0:n - 1:3], order[1::3] = np.arange(1, n, 3), np.arange(0, n - 1, 3)
    scales = 10.0 ** rng.uniform(-3.0, 3.0, (2, n))
    return sp.csc_matrix(scales[0][:, None] * M[order] * scales[1])


def matrix(kind: str, backend: str) -> sp.csc_matrix:
    """The test matrix ``kind`` at a size the backend takes: at most DENSE_LIMIT unknowns for the
    dense LU (39 and 90), above it for the sparse ones (222 and 400)."""
    dense = backend == "dense"
    if kind == "jacobian":
        A = step_jacobian(3, 6) if dense else step_jacobian(20, 50)
    else:
        A = scaled_band(90 if dense else 400)
    assert (A.shape[0] <= DENSE_LIMIT) == dense
    return A


def factorise(A: sp.csc_matrix, backend: str) -> Factorization:
    """A's Factorization by ``backend``, checked to have taken that path."""
    if backend == "dense":
        lu = Factorization(A)
        assert lu.dense
        return lu
    if backend == "superlu":
        sparse_lu._SUPERLU_PATTERNS.clear()          # forget kept orderings: SuperLU orders A itself
        lu = Factorization(A, solver="superlu")
        assert lu.lu.q is None
        return lu
    if backend == "superlu-kept":
        other = A.copy()
        other.data = other.data * np.random.default_rng(1).uniform(0.5, 2.0, other.nnz)
        Factorization(other, solver="superlu")       # the pattern's ordering, made on another matrix
        lu = Factorization(A, solver="superlu")
        assert lu.lu.q is not None
        return lu
    lu = Factorization(A, solver=backend)
    assert lu.lu.name == backend
    return lu


def backward_error(A: sp.csc_matrix, x: np.ndarray, b: np.ndarray, transpose: bool) -> float:
    """The normwise backward error of x (n,) or (n, k) solving A x = b, or with ``transpose``
    A^T x = b, in the equations and unknowns of the equilibrated B = D_r A D_c
    (:func:`~flexmb.integrators.newton.equilibrate`): A x = b is B w = D_r b with w = x / D_c, and
    A^T x = b is B^T z = D_c b with z = x / D_r; ||B w - c|| / (||B|| ||w|| + ||c||) (infinity
    norms, the largest over the columns)."""
    B, row_scale, col_scale = equilibrate(A)
    M, left, right = (B.T, col_scale, row_scale) if transpose else (B, row_scale, col_scale)
    w, c = x.reshape(x.shape[0], -1) / right[:, None], left[:, None] * b.reshape(b.shape[0], -1)
    norm = abs(M).sum(axis=1).max()
    return float((np.abs(M @ w - c).max(axis=0) / (norm * np.abs(w).max(axis=0) + np.abs(c).max(axis=0))).max())


def test_every_built_in_backend_is_tested():
    assert {"dense", "superlu", "superlu-kept", "banded"} <= set(BACKENDS), BACKENDS


@pytest.mark.parametrize("kind", MATRICES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_transposed_solve_solves_with_the_transpose(backend, kind):
    """A^T x = b to round-off for one and three right-hand sides; the plain solve, made after it on
    the same factors, still solves A x = b (PARDISO's solve setting is restored)."""
    A = matrix(kind, backend)
    n = A.shape[0]
    lu = factorise(A, backend)
    b = np.random.default_rng(2).standard_normal((n, 3)) * np.abs(A).max(axis=0).toarray().T
    for rhs in (b[:, 0], b):
        x = lu.solve(rhs, transpose=True)
        assert x.shape == rhs.shape
        error = backward_error(A, x, rhs, transpose=True)
        assert error <= BACKWARD_TOL, f"{backend}, {kind}, rhs {rhs.shape}: A^T x = b to {error:.1e} (backward error)"
    columns = np.stack([lu.solve(b[:, k], transpose=True) for k in range(3)], axis=1)
    x = lu.solve(b, transpose=True)
    assert np.abs(x - columns).max() <= 1e-13 * np.abs(x).max(), "several right-hand sides differ from one at a time"
    y = lu.solve(b)
    error = backward_error(A, y, b, transpose=False)
    assert error <= BACKWARD_TOL, f"{backend}, {kind}: the plain solve after the transposed one, A y = b to {error:.1e}"
    apart = np.linalg.norm(x - y) / np.linalg.norm(y)
    assert apart > 1e-3, f"A^-T b and A^-1 b {apart:.1e} apart: the test cannot tell the transpose"


@pytest.mark.parametrize("kind", MATRICES)
@pytest.mark.parametrize("backend", BACKENDS)
def test_transposed_solve_equals_a_factorisation_of_the_transpose(backend, kind):
    """x = A^-T b from A's factors against the solve with an LU of A^T made explicitly (the same
    backend; a lasting PARDISO LU, which does not supersede A's): both are backward stable on the
    equilibrated matrices, so they agree to a few eps times the equilibrated condition number,
    in the unknowns of the equilibrated transposed system (x / D_r: A^T = D_c^-1 B^T D_r^-1)."""
    A = matrix(kind, backend)
    lu = factorise(A, backend)
    solver = "superlu" if backend in ("dense", "superlu-kept") else backend     # dense: by its size
    reference = Factorization(A.T.tocsc(), solver=solver, lasting=True)
    B = equilibrate(A)[0].toarray()
    condition = np.linalg.cond(B)
    b = np.random.default_rng(3).standard_normal((A.shape[0], 2))
    x, y = lu.solve(b, transpose=True), reference.solve(b)
    miss = np.linalg.norm((x - y) / lu.row_scale[:, None]) / np.linalg.norm(y / lu.row_scale[:, None])
    allowed = 100.0 * EPS * condition
    assert miss <= allowed, \
        f"{backend}, {kind}: {miss:.1e} off the LU of A^T (allowed {allowed:.1e}, cond(B) {condition:.1e})"
