"""The compiled helpers of the Newton loop against their numpy references (to 1e-12 relative):
the scatter of element vectors and matrices into the global vector and the CSC data
(:mod:`flexmb.compiled.scatter`) and the gather of element vectors, the equilibrated dense copy of a CSC matrix, the CSR product
and the free-DOF norm (:mod:`flexmb.compiled.sparse_ops`), and the dense LU
(:mod:`flexmb.compiled.dense_lu`) against LAPACK's.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.sparse as sp

import flexmb as fm
from flexmb.compiled import dense_lu, scatter, sparse_ops
from flexmb.integrators.newton import equilibrate

REL = 1e-12


def _mixed_frame() -> fm.Assembly:
    """A planar frame of two beam groups with varied sections, a truss group bracing it, a point
    mass, one clamped and one pinned support and a prescribed DOF (entries dropped by the scatter)."""
    m = fm.Model(dim=2)
    xy = np.array([[0.0, 0.0], [0.0, 3.0], [4.0, 3.0], [4.0, 0.0], [2.0, 5.0], [8.0, 3.0]])
    m.add_nodes(xy)
    m.add_beam2d([[0, 1], [1, 2], [2, 3]], EA=[1e9, 2e9, 3e9], EI=[1e6, 3e6, 2e6], rho_A=[10.0, 20.0, 15.0],
                 name="columns")
    m.add_beam2d([[1, 4], [4, 2], [2, 5]], EA=5e8, EI=4e5, rho_A=8.0, mass="consistent", name="roof")
    m.add_truss([[0, 2], [1, 3], [4, 5]], EA=2e8, rho_A=3.0, name="braces")
    m.add_point_mass(5, 40.0)
    m.fix(0)
    m.fix(3, ["ux", "uy"])
    m.prescribe(5, "uy", lambda t: 0.01 * t)
    return fm.Assembly(m)


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / max(np.abs(b).max(), np.finfo(float).tiny))


def test_scatter_matches_bincount_reference(rng):
    asm = _mixed_frame()
    Ke = [rng.standard_normal((g.n_elements, g.ndof, g.ndof)) * 10.0 ** rng.uniform(-3, 9)
          for g in asm.groups]
    fe = [rng.standard_normal((g.n_elements, g.ndof)) for g in asm.groups]
    data = asm.matrix_data(Ke)
    reference = asm.reference_matrix_data(Ke)
    assert _relative(data, reference) < REL, f"matrix data off by {_relative(data, reference):.1e}"
    start = rng.standard_normal(asm.nnz)
    added = asm.matrix_data(Ke, out=start.copy())
    assert _relative(added, start + reference) < REL
    vector = asm.vector(fe)
    expected = np.zeros(asm.n_dof)
    for f, ed in zip(fe, asm._edofs):
        np.add.at(expected, ed, f)
    assert _relative(vector, expected) < REL, f"vector off by {_relative(vector, expected):.1e}"


def test_gather_is_the_indexing_the_scatter_undoes(rng):
    asm = _mixed_frame()
    u = rng.standard_normal(asm.n_dof)
    for ed in asm._edofs:
        assert np.array_equal(scatter.gather_vector(u, ed), u[ed])
    # gathered and scattered back: each DOF times the number of element entries at it
    counts = np.bincount(np.concatenate([ed.ravel() for ed in asm._edofs]), minlength=asm.n_dof)
    back = np.zeros(asm.n_dof)
    for ed in asm._edofs:
        scatter.scatter_vector(back, scatter.gather_vector(u, ed), ed)
    assert _relative(back, counts * u) < REL


def test_scatter_reproduces_the_assembled_tangent(rng):
    """The whole path: element tangents of a deformed frame scattered, against the dense global
    tangent built entry by entry from the DOF map."""
    asm = _mixed_frame()
    u = 0.05 * rng.standard_normal(asm.n_dof)
    q, data = asm.force_and_tangent(u)
    K = asm.free_matrix(data).toarray()
    dense = np.zeros((asm.n_dof, asm.n_dof))
    for g, X, ed in zip(asm.groups, asm._X, asm._edofs):
        _, Ke = g.force_and_tangent(X, u[ed])
        for e in range(g.n_elements):
            dense[np.ix_(ed[e], ed[e])] += Ke[e]
    free = asm.dofs.free
    assert _relative(K, dense[np.ix_(free, free)]) < REL


def test_equilibrated_dense_matches_equilibrate(rng):
    n = 12
    A = sp.random(n, n, density=0.4, random_state=1, format="csc") * 1e6
    A = (A + sp.diags(10.0 ** rng.uniform(-4, 4, n))).tolil()
    A[3, :] = 0.0                                         # a zero row keeps a scale of 1
    A = A.tocsc()
    B, rows, cols = equilibrate(A)
    out, rs, cs = np.empty((n, n)), np.empty(n), np.empty(n)
    scatter.equilibrated_dense(A.indptr, A.indices, A.data, out, rs, cs)
    assert _relative(out, B.toarray()) < REL
    assert _relative(rs, rows) < REL and _relative(cs, cols) < REL


def test_csr_product_and_free_norm(rng):
    asm = _mixed_frame()
    v = rng.standard_normal(asm.n_dof)
    assert _relative(asm.mass_times(v), asm.mass @ v) < REL
    free = asm.dofs.free
    assert abs(asm.free_norm(v) - np.linalg.norm(v[free])) < REL * np.linalg.norm(v[free])
    M = sp.random(7, 5, density=0.5, random_state=2, format="csr")
    x = rng.standard_normal(5)
    assert _relative(sparse_ops.csr_matvec(M.indptr, M.indices, M.data, x), M @ x) < REL


@pytest.mark.parametrize("n", [1, 2, 7, 40])
def test_dense_lu_matches_lapack(rng, n):
    A = rng.standard_normal((n, n)) * 10.0 ** rng.uniform(-3, 3, (n, 1))
    lu, pivots = A.copy(), np.empty(n, dtype=np.int64)
    smallest = dense_lu.lu_factor(lu, pivots)
    lapack_lu, lapack_pivots = sla.lu_factor(A)
    assert np.array_equal(pivots, lapack_pivots), "row interchanges differ from LAPACK's"
    assert _relative(lu, lapack_lu) < 1e-10
    assert smallest == pytest.approx(np.abs(np.diag(lapack_lu)).min(), rel=1e-10)
    b = rng.standard_normal((n, 3))
    x = b.copy()
    dense_lu.lu_solve(lu, pivots, x)
    assert _relative(A @ x, b) < 1e-10
    x1 = b[:, 0].copy()
    dense_lu.lu_solve(lu, pivots, x1)
    assert _relative(x1, x[:, 0]) < REL


def test_dense_lu_reports_an_exactly_zero_pivot():
    A = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 0.0]])
    assert dense_lu.lu_factor(A.copy(), np.empty(3, dtype=np.int64)) == 0.0
