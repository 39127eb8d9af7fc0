"""Compiled dense LU with partial pivoting for the small Newton systems (a few hundred unknowns).

For the Jacobians of small models (the spin-up's 9 DOFs, a slider-crank's 20) SuperLU's set-up
and the scipy wrappers cost far more than the factorisation itself: this LU (Doolittle, row
pivoting by the largest magnitude in the column, the algorithm of LAPACK's ``dgetf2``) runs in
one compiled call. The reference is ``scipy.linalg.lu_factor`` (LAPACK ``dgetrf``): same
pivoting rule, factors equal to round-off. Which size goes which way is decided in
:class:`flexmb.integrators.newton.Factorization` (measured threshold ``DENSE_LIMIT``). The same
factors solve with the transpose, A^T x = b (:func:`lu_solve_transposed`: the adjoint of a step
solves with its Jacobian's transpose), as LAPACK's ``dgetrs`` with ``trans='T'``.
"""
from __future__ import annotations

import numba
import numpy as np

from flexmb.compiled.scatter import equilibrated_dense


@numba.njit(cache=True)
def lu_factor(a: np.ndarray, pivots: np.ndarray) -> float:
    """Factorise a (n, n) in place into P A = L U (L unit lower, U upper, both stored in a).

    pivots (n,) receives the row interchanged with row k at step k (as LAPACK's ipiv, 0-based).
    Returns the smallest pivot magnitude min |U[k, k]|; 0.0 for an exactly zero pivot, where
    the factorisation stops (inf for n = 0).
    """
    n = a.shape[0]
    smallest = np.inf
    for k in range(n):
        p = k
        largest = abs(a[k, k])
        for i in range(k + 1, n):
            if abs(a[i, k]) > largest:
                largest = abs(a[i, k])
                p = i
        pivots[k] = p
        if largest == 0.0:
            return 0.0
        smallest = min(smallest, largest)
        if p != k:
            for j in range(n):
                a[k, j], a[p, j] = a[p, j], a[k, j]
        inverse = 1.0 / a[k, k]
        for i in range(k + 1, n):
            a[i, k] *= inverse
        for i in range(k + 1, n):
            lik = a[i, k]
            if lik != 0.0:
                for j in range(k + 1, n):
                    a[i, j] -= lik * a[k, j]
    return smallest


@numba.njit(cache=True)
def lu_solve(lu: np.ndarray, pivots: np.ndarray, b: np.ndarray) -> None:
    """Overwrite b (n,) or (n, m) with A^-1 b from the factors of :func:`lu_factor`."""
    n = lu.shape[0]
    x = b.reshape((n, -1))
    m = x.shape[1]
    for k in range(n):
        p = pivots[k]
        if p != k:
            for c in range(m):
                x[k, c], x[p, c] = x[p, c], x[k, c]
    for i in range(n):                                   # L y = P b (unit diagonal)
        for k in range(i):
            lik = lu[i, k]
            if lik != 0.0:
                for c in range(m):
                    x[i, c] -= lik * x[k, c]
    for i in range(n - 1, -1, -1):                       # U x = y
        for k in range(i + 1, n):
            uik = lu[i, k]
            if uik != 0.0:
                for c in range(m):
                    x[i, c] -= uik * x[k, c]
        inverse = 1.0 / lu[i, i]
        for c in range(m):
            x[i, c] *= inverse


@numba.njit(cache=True)
def scaled_solve(lu: np.ndarray, pivots: np.ndarray, row_scale: np.ndarray, col_scale: np.ndarray,
                 b: np.ndarray) -> np.ndarray:
    """x = D_c B^-1 D_r b (n,) = A^-1 b for the factors of B = D_r A D_c (:func:`lu_factor`) and
    b (n,): the solve of :class:`flexmb.integrators.newton.Factorization` in one call."""
    x = row_scale * b
    lu_solve(lu, pivots, x)
    return col_scale * x


@numba.njit(cache=True)
def lu_solve_transposed(lu: np.ndarray, pivots: np.ndarray, b: np.ndarray) -> None:
    """Overwrite b (n,) or (n, m), C-contiguous, with A^-T b from the factors P A = L U of
    :func:`lu_factor`: A^T = U^T L^T P, so U^T y = b (forward), L^T z = y (backward, unit
    diagonal) and x = P^T z (the row exchanges undone, last first). Both triangles are read by
    rows of ``lu`` (contiguous), as in :func:`lu_solve`."""
    n = lu.shape[0]
    x = b.reshape((n, -1))
    m = x.shape[1]
    for k in range(n):                                   # U^T y = b: row k of U is column k of U^T
        inverse = 1.0 / lu[k, k]
        for c in range(m):
            x[k, c] *= inverse
        for i in range(k + 1, n):
            uki = lu[k, i]
            if uki != 0.0:
                for c in range(m):
                    x[i, c] -= uki * x[k, c]
    for k in range(n - 1, -1, -1):                       # L^T z = y: row k of L is column k of L^T
        for i in range(k):
            lki = lu[k, i]
            if lki != 0.0:
                for c in range(m):
                    x[i, c] -= lki * x[k, c]
    for k in range(n - 1, -1, -1):                       # x = P^T z
        p = pivots[k]
        if p != k:
            for c in range(m):
                x[k, c], x[p, c] = x[p, c], x[k, c]


@numba.njit(cache=True)
def scaled_transposed_solve(lu: np.ndarray, pivots: np.ndarray, row_scale: np.ndarray, col_scale: np.ndarray,
                            b: np.ndarray) -> np.ndarray:
    """x = D_r B^-T D_c b (n,) = A^-T b for the factors of B = D_r A D_c (:func:`lu_factor`) and
    b (n,): A^T = D_c^-1 B^T D_r^-1, the transposed solve of
    :class:`flexmb.integrators.newton.Factorization` in one call."""
    x = col_scale * b
    lu_solve_transposed(lu, pivots, x)
    return row_scale * x


@numba.njit(cache=True)
def equilibrated_lu(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, lu: np.ndarray, pivots: np.ndarray,
                    row_scale: np.ndarray, col_scale: np.ndarray) -> float:
    """:func:`flexmb.compiled.scatter.equilibrated_dense` of a CSC matrix into lu (n, n), then
    :func:`lu_factor` of it, in one call; returns the smallest pivot (0.0: exactly singular)."""
    equilibrated_dense(indptr, indices, data, lu, row_scale, col_scale)
    return lu_factor(lu, pivots)
