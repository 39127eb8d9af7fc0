"""The compiled band LU (:mod:`flexmb.compiled.banded_lu`) and its place among the sparse solvers
(:class:`flexmb.integrators.sparse_lu.BandedLU`): it solves band matrices that need row exchanges
as a dense LU does, recovers a scrambled band by its reverse Cuthill-McKee ordering, gives the
determinant's sign, and ``"auto"`` takes it for slender models only."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import flexmb as fm
from flexmb.compiled.banded_lu import band_lu, band_solve, equilibrated_band_fill
from flexmb.integrators import sparse_lu
from flexmb.integrators.newton import Factorization


def _band_matrix(rng: np.random.Generator, n: int, kl: int, ku: int) -> np.ndarray:
    """Random non-symmetric band matrix (n, n) with zero diagonal entries in every third row:
    partial pivoting must exchange rows."""
    A = np.zeros((n, n))
    for i in range(n):
        for j in range(max(0, i - kl), min(n, i + ku + 1)):
            A[i, j] = rng.standard_normal()
    A[::3, :] -= np.diag(np.diag(A))[::3, :]
    return A


@pytest.mark.parametrize("kl, ku", [(1, 1), (3, 1), (1, 4), (5, 5), (7, 2)])
def test_band_lu_solves_like_a_dense_lu(rng, kl, ku):
    n = 60
    A = _band_matrix(rng, n, kl, ku)
    b = rng.standard_normal(n)
    C = sp.csc_matrix(A)
    ab = np.empty((n, 2 * kl + ku + 1))
    pivots = np.empty(n, dtype=np.int64)
    row_scale, col_scale = np.empty(n), np.empty(n)
    equilibrated_band_fill(C.indptr, C.indices, C.data, np.arange(n), kl, ku, ab, row_scale, col_scale)
    assert band_lu(ab, kl, ku, pivots) > 0.0
    assert np.any(pivots != np.arange(n)), "no row was exchanged: the test does not test pivoting"
    y = row_scale * b
    band_solve(ab, kl, ku, pivots, y)
    x = col_scale * y
    reference = np.linalg.solve(A, b)
    assert np.linalg.norm(x - reference) <= 1e-10 * np.linalg.norm(reference)


def test_scrambled_band_is_recovered_and_solved(rng):
    """A band matrix (kl = ku = 4) renumbered at random: the reverse Cuthill-McKee ordering finds a
    band of at most twice the original bandwidths, and the solve (one and several right-hand
    sides) equals the dense one."""
    n = 300
    A = _band_matrix(rng, n, 4, 4)
    shuffle = rng.permutation(n)
    S = sp.csc_matrix(A[np.ix_(shuffle, shuffle)])
    pattern = sparse_lu.band_pattern(S)
    assert pattern.kl <= 8 and pattern.ku <= 8, (pattern.kl, pattern.ku)
    lu = Factorization(S, solver="banded")
    assert lu.lu.name == "banded"
    b = rng.standard_normal((n, 3))
    reference = np.linalg.solve(S.toarray(), b)
    assert np.linalg.norm(lu.solve(b) - reference) <= 1e-10 * np.linalg.norm(reference)
    assert np.linalg.norm(lu.solve(b[:, 1]) - reference[:, 1]) <= 1e-10 * np.linalg.norm(reference[:, 1])
    assert lu.determinant_sign == np.linalg.slogdet(S.toarray())[0]


def test_determinant_sign_of_both_signs(rng):
    n = 200
    A = _band_matrix(rng, n, 3, 2)
    for flip in (1.0, -1.0):
        B = A.copy()
        B[5, :] *= flip
        expected = np.linalg.slogdet(B)[0]
        assert expected != 0.0
        assert Factorization(sp.csc_matrix(B), solver="banded").determinant_sign == expected


def test_a_zero_column_is_exactly_singular(rng):
    A = _band_matrix(rng, 200, 2, 2)
    A[:, 17] = 0.0
    with pytest.raises(RuntimeError, match="exactly singular"):
        Factorization(sp.csc_matrix(A), solver="banded")


def test_auto_takes_the_band_lu_for_a_chain_and_not_for_a_plate():
    """Simo's spin-up beam of 64 elements (192 unknowns, band 11 wide) goes to the band LU; a
    shell plate of 12 x 12 cells (band about 170 wide) does not."""
    from flexmb.io.shell_mesh import rectangle
    from flexmb.validation.spin_up import build

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validation"))
    from spin_up_simo import PARAMETERS

    asm, _ = build(PARAMETERS, 64)
    K = asm.free_matrix(asm.force_and_tangent(np.zeros(asm.n_dof))[1]).tocsc()
    assert sparse_lu.band_pattern(K).width == 11
    assert sparse_lu.backend("auto", K.shape[0], K) == "banded"
    assert sparse_lu.backend("superlu", K.shape[0], K) == "superlu"

    xyz, triangles = rectangle(0.12, 0.12, 12, 12)
    model = fm.Model(dim=3)
    nodes = model.add_nodes(xyz)
    model.add_shell(nodes[triangles], E=2.1e11, nu=0.3, thickness=0.005, rho=7850.0)
    for node in nodes[np.abs(xyz[:, 0]) < 1e-12]:
        model.fix(int(node))
    plate = fm.Assembly(model)
    P = plate.free_matrix(plate.force_and_tangent(np.zeros(plate.n_dof))[1]).tocsc()
    assert sparse_lu.band_pattern(P).width > sparse_lu.BANDED_WIDTH
    assert sparse_lu.backend("auto", P.shape[0], P) in ("superlu", "pardiso")


def test_a_spatial_beam_chain_runs_on_the_band_lu_as_on_superlu():
    """A Beam3D chain (180 unknowns, spatial rotations, band 23 wide) shaken at its tip under
    gravity: ``"auto"`` factorises with the band LU, and 25 mid-point steps end where SuperLU's do."""
    def chain() -> fm.Assembly:
        m = fm.Model(dim=3)
        nodes = m.add_nodes(np.c_[np.linspace(0.0, 2.0, 31), np.zeros(31), np.zeros(31)])
        m.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=1e7, GJ=1e3, EI_y=2e3, EI_z=3e3, rho_A=2.0,
                     rho_I=(2e-3, 1e-3, 1e-3), y_axis=(0.0, 1.0, 0.0))
        m.fix(int(nodes[0]))
        m.set_gravity([0.0, 0.0, -9.81])
        m.add_load(int(nodes[-1]), "uy", shake)
        return fm.Assembly(m)

    asm = chain()
    K = asm.jacobian_matrix(asm.mass_data).tocsc()
    assert sparse_lu.backend("auto", asm.n_free, K) == "banded"
    runs = {solver: fm.integrate(chain(), 2e-3, 0.05, progress=False, newton=fm.NewtonSettings(solver=solver))
            for solver in ("superlu", "auto")}
    u_ref, u = np.array(runs["superlu"].u[-1]), np.array(runs["auto"].u[-1])
    assert np.abs(u_ref).max() > 1e-3, "the chain hardly moved"
    assert np.abs(u - u_ref).max() <= 1e-10 * np.abs(u_ref).max()


def shake(t: float) -> float:
    """A tip load (N) shaking the chain sideways."""
    return 50.0 * np.sin(8.0 * t)
