"""The sparse LU backends of the Newton matrix (:mod:`flexmb.integrators.sparse_lu`): every
installed backend solves a non-symmetric system and a short mid-point run as SuperLU does, its
symbolic analysis is made once per sparsity pattern, SuperLU's reused ordering keeps the
determinant's sign, and unknown or missing backends are refused with a message that says what to do.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import flexmb as fm
from models import clamped_tet10_bar
from flexmb.integrators import sparse_lu
from flexmb.integrators.newton import Factorization, NewtonSettings

INSTALLED = sparse_lu.available()


def _non_symmetric(rng: np.random.Generator, n: int, density: float = 0.02) -> sp.csc_matrix:
    """Random non-symmetric sparse matrix (n, n), diagonally dominant (well conditioned)."""
    A = sp.random(n, n, density=density, random_state=np.random.default_rng(rng.integers(1 << 30)), format="csc")
    A = A - 0.7 * A.T.tocsc() @ sp.diags(rng.uniform(0.5, 1.5, n))        # never symmetric
    return (A + sp.diags(2.0 + np.abs(A).sum(axis=1).A.ravel())).tocsc()


@pytest.mark.parametrize("solver", INSTALLED)
def test_backend_solves_like_superlu(solver, rng):
    A = _non_symmetric(rng, 400)
    b = rng.standard_normal((400, 2))
    reference = Factorization(A, solver="superlu").solve(b)
    lu = Factorization(A, solver=solver)
    x = lu.solve(b)
    assert lu.lu.name == solver
    miss = np.linalg.norm(x - reference) / np.linalg.norm(reference)
    assert miss < 1e-10, f"{solver} solution off SuperLU's by {miss:.1e} (relative)"
    residual = np.linalg.norm(A @ x - b) / np.linalg.norm(b)
    assert residual < 1e-12, f"{solver}: |A x - b| / |b| = {residual:.1e}"
    assert abs(lu.smallest_pivot / Factorization(A, solver="superlu").smallest_pivot - 1.0) < 0.9, \
        "the smallest equilibrated pivot is not of SuperLU's size"


@pytest.mark.parametrize("solver", INSTALLED)
def test_symbolic_analysis_once_per_pattern(solver, rng):
    A = _non_symmetric(rng, 300)
    before = sparse_lu.ANALYSES[solver]
    for scale in (1.0, 3.0, -2.0):                       # same pattern, other values
        B = A.copy()
        B.data = B.data * scale + 0.1 * rng.standard_normal(B.nnz)
        b = rng.standard_normal(300)
        x = Factorization(B, solver=solver).solve(b)
        assert np.linalg.norm(B @ x - b) < 1e-11 * np.linalg.norm(b)
    assert sparse_lu.ANALYSES[solver] == before + 1, "the pattern was analysed more than once"
    Factorization(_non_symmetric(rng, 300), solver=solver)  # another pattern
    assert sparse_lu.ANALYSES[solver] == before + 2


@pytest.mark.parametrize("solver", ["superlu", "banded"])
def test_reused_ordering_keeps_the_determinant_sign(solver, rng):
    A = _non_symmetric(rng, 200, density=0.05)
    for flip in (1.0, -1.0, -1.0):                      # the first analyses, the later reuse the ordering
        B = A.copy()
        B[0, :] = B[0, :] * flip                         # flips the sign of det B
        B = B.tocsc()
        sign = np.linalg.slogdet(B.toarray())[0]
        assert Factorization(B, solver=solver).determinant_sign == sign


def test_pardiso_factorisation_superseded_on_its_pattern_refuses_to_solve(rng):
    """PARDISO keeps one numeric factorisation per pattern: an older one refuses to solve. Where
    PARDISO is not installed (the plain install; CI's PARDISO probe installs it and runs this file
    again), naming it is refused with what to install."""
    if "pardiso" not in INSTALLED:
        with pytest.raises(fm.ModelError, match=r"pip install flexmb\[pardiso\]"):
            NewtonSettings(solver="pardiso")
        return
    A = _non_symmetric(rng, 300)
    first = Factorization(A, solver="pardiso")
    Factorization(A * 2.0, solver="pardiso")
    with pytest.raises(RuntimeError, match="superseded"):
        first.solve(np.ones(300))


@pytest.mark.parametrize("solver", INSTALLED)
def test_mid_point_run_above_the_dense_limit_is_the_same(solver):
    """Simo's spin-up beam, 64 elements (192 unknowns, modified Newton on the sparse LU), 200 steps (2 s)."""
    from flexmb.validation.spin_up import build

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validation"))
    from spin_up_simo import PARAMETERS

    runs = {}
    for name in ("superlu", solver):
        asm, _ = build(PARAMETERS, 64)
        assert asm.n_free > 150
        runs[name] = fm.integrate(asm, 0.01, 2.0, progress=False, newton=NewtonSettings(solver=name))
    u_ref, u = runs["superlu"].u[-1], runs[solver].u[-1]
    miss = np.linalg.norm(u - u_ref) / np.linalg.norm(u_ref)
    assert np.linalg.norm(u_ref) > 1.0, "the beam did not turn"
    assert miss < 1e-10, f"{solver}: end state off SuperLU's by {miss:.1e} (relative)"


def test_unknown_solver_is_refused():
    with pytest.raises(fm.ModelError, match=r"solver: unknown sparse solver 'umfpak'.*'superlu'"):
        NewtonSettings(solver="umfpak")


def test_missing_solver_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pypardiso", None)          # import pypardiso -> ImportError
    monkeypatch.setattr(sparse_lu, "_MKL", None)
    with pytest.raises(fm.ModelError, match=r"pip install flexmb\[pardiso\]"):
        NewtonSettings(solver="pardiso")
    assert sparse_lu.available() == ("superlu", "banded")
    assert sparse_lu.backend("auto", 10**6) == "superlu"


@pytest.mark.parametrize("solver", INSTALLED)
def test_structurally_singular_matrix_is_exactly_singular(solver, rng):
    A = _non_symmetric(rng, 200).tolil()
    A[:, 7] = 0.0                                        # an empty column
    A = A.tocsc()
    A.eliminate_zeros()
    with pytest.raises(RuntimeError, match="exactly singular"):
        Factorization(A, solver=solver)


def test_symmetric_inertia_counts_the_negative_eigenvalues(rng):
    """PARDISO's symmetric indefinite L D L^T (matrix type -2) gives Sylvester's inertia: a
    tridiagonal matrix with a known spectrum split, and a dense symmetric one with 40 of 300
    eigenvalues negative; a singular matrix (perturbed pivots) gives None. Without PARDISO the
    call says what to install."""
    d = np.linspace(-5.0, 5.0, 2001)
    d = d[d != 0.0]
    B = sp.diags([d, np.full(d.size - 1, 0.1), np.full(d.size - 1, 0.1)], [0, 1, -1], format="csc")
    if "pardiso" not in INSTALLED:
        with pytest.raises(sparse_lu.SolverNotInstalled, match=r"pip install flexmb\[pardiso\]"):
            sparse_lu.symmetric_inertia(B)
        return
    negative = int(np.sum(np.linalg.eigvalsh(B.toarray()) < 0.0))
    assert sparse_lu.symmetric_inertia(B) == (B.shape[0] - negative, negative)
    Q = np.linalg.qr(rng.normal(size=(300, 300)))[0]
    A = (Q * np.r_[-np.arange(1.0, 41.0), np.arange(1.0, 261.0)]) @ Q.T
    assert sparse_lu.symmetric_inertia(sp.csc_matrix(0.5 * (A + A.T))) == (260, 40)
    assert sparse_lu.symmetric_inertia(sp.csc_matrix((3, 3))) is None


def test_natural_modes_with_pardiso_equal_superlu(monkeypatch):
    """natural_modes of a large sparse model factorises K - sigma M and counts the eigenvalues
    below the zero band (Sylvester) with PARDISO when installed (from PARDISO_FROM unknowns: set
    low here), with SuperLU otherwise: the same frequencies to 1e-9 relative."""
    from flexmb.io.solid_mesh import box

    X, cells = box(1.0, 0.1, 0.1, 12, 2, 2, "tet10")
    m = fm.Model(dim=3)
    m.add_nodes(X)
    m.add_solid(cells, E=2.1e11, nu=0.3, rho=7850.0)
    for node in np.flatnonzero(X[:, 0] == 0.0):
        m.fix(int(node), ["ux", "uy", "uz"])
    monkeypatch.setattr(sparse_lu, "PARDISO_FROM", 10**9)
    reference = fm.natural_modes(m, 5).frequencies_hz
    monkeypatch.setattr(sparse_lu, "PARDISO_FROM", 100)
    modes = fm.natural_modes(m, 5, dense_limit=100)
    assert np.allclose(modes.frequencies_hz, reference, rtol=1e-9, atol=0.0)


def _shallow_arch(n: int = 80) -> fm.Model:
    """A pinned shallow circular arch (span 2 m, rise 0.1 m, n Beam2D elements) under a load at its
    crown: its path snaps through a limit point, where det K changes sign."""
    x = np.linspace(-1.0, 1.0, n + 1)
    radius = (1.0 + 0.1**2) / (2 * 0.1)
    y = np.sqrt(radius**2 - x**2) - (radius - 0.1)
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[x, y])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=2e8, EI=2e3)
    m.fix(int(nodes[0]), ["ux", "uy"])
    m.fix(int(nodes[-1]), ["ux", "uy"])
    m.add_load(int(nodes[n // 2]), "uy", -1e4)
    return m


def test_statics_watching_the_determinant_sign_with_pardiso(monkeypatch):
    """Statics and arc length watch the sign of det K; with PARDISO (installed, from PARDISO_FROM
    unknowns: set low here) a symmetric tangent is factorised by PARDISO and its sign taken from
    the symmetric indefinite L D L^T. The arch's path (arc length through its limit point) and a
    linear solid's load step give the same points and the same determinant signs as SuperLU."""
    def runs():
        arch = fm.arc_length(_shallow_arch(), 0.02, n_steps=40, progress=False)
        m, x = clamped_tet10_bar()
        m.add_load(int(np.argmax(x[:, 0] + x[:, 2])), "uz", -100.0)
        # load control of the arch over its limit point: the tangents kept from one increment to the
        # next (PARDISO's lasting LUs) tell the jump by the sign of det K
        with pytest.warns(fm.FlexmbWarning, match="jumped through a limit point"):
            jump = fm.load_control(_shallow_arch(), [0.02, 0.04, 0.06, 0.5], progress=False)
        return arch, fm.load_control(m, [1.0], progress=False), jump

    superlu = runs()
    monkeypatch.setattr(sparse_lu, "PARDISO_FROM", 100)
    pardiso = runs()
    for k in (0, 2):
        signs = [[s for log in path.newton_logs for s in log.tangent_signs] for path in (superlu[k], pardiso[k])]
        assert signs[0] == signs[1] and -1 in signs[0] and 1 in signs[0]       # through the limit point
    assert np.allclose(pardiso[0].load_factors, superlu[0].load_factors, rtol=1e-9, atol=1e-12)
    for a, b in zip(superlu, pardiso):
        scale = np.abs(np.asarray(a.u)).max()
        assert np.abs(np.asarray(b.u) - np.asarray(a.u)).max() <= 1e-9 * scale
