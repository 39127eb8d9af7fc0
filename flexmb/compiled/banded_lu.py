"""Compiled LU with partial pivoting of a band matrix, for Jacobians of slender models.

A chain of beams numbered along its length (after a reverse Cuthill-McKee ordering, any slender
model) has a Jacobian whose non-zeros lie within a few diagonals of the main one: Simo's spin-up
beam of 1024 cubic-mass Beam2D elements (3072 unknowns) has 5 diagonals either side. Its LU then
costs n kl (kl + ku) multiply-adds and stays in the band widened by the row exchanges (LAPACK's
``dgbtrf`` scheme, written out here), where a general sparse LU pays for its symbolic structure
and indirection at every entry (SuperLU's triangular solves of that matrix: 0.16 ms, these
0.02 ms).

Storage (``ab``, (n, w) with w = 2 kl + ku + 1, C order): row j of ``ab`` is column j of the
matrix, entry (i, j) at ``ab[j, i - j + kl + ku]`` for ``j - kl - ku <= i <= j + kl``; the top
kl slots of every column take the fill of the row exchanges. After :func:`band_lu`, U is in
slots 0 ... kl + ku (diagonal at kl + ku) and the multipliers of L below it. The same factors
solve with the matrix (:func:`band_solve`) and with its transpose (:func:`band_solve_transposed`).
"""
from __future__ import annotations

import numba
import numpy as np

from flexmb.compiled.scatter import equilibration_scales


@numba.njit(cache=True)
def equilibrated_band_fill(indptr, indices, data, new_index, kl, ku, ab, row_scale, col_scale) -> None:
    """Scatter B = D_r A D_c of the CSC matrix A (indptr, indices, data) symmetrically permuted,
    entry (r, c) to (new_index[r], new_index[c]), into the band storage ab (n, 2 kl + ku + 1),
    zeroing it first; row_scale, col_scale (n,) receive D_r, D_c, the scalings of
    :func:`flexmb.integrators.newton.equilibrate` (every row of A to a largest entry of 1, then
    every column of the result; zero rows and columns keep a scale of 1)."""
    offset = kl + ku
    ab[:, :] = 0.0
    equilibration_scales(indptr, indices, data, row_scale, col_scale)
    for c in range(indptr.size - 1):
        j = new_index[c]
        for k in range(indptr[c], indptr[c + 1]):
            r = indices[k]
            ab[j, new_index[r] - j + offset] += data[k] * row_scale[r] * col_scale[c]


@numba.njit(cache=True)
def band_lu(ab, kl, ku, pivots) -> float:
    """LU with partial pivoting of the band matrix in ab (module docstring), in place; pivots (n,)
    receives the row exchanged with row k at step k. Returns the smallest absolute pivot (0.0:
    exactly singular, the factorisation stopped there)."""
    n = ab.shape[0]
    offset = kl + ku                        # slot of the diagonal
    smallest = np.inf
    for k in range(n):
        last_row = min(n - 1, k + kl)
        p, largest = k, abs(ab[k, offset])
        for i in range(k + 1, last_row + 1):
            value = abs(ab[k, i - k + offset])
            if value > largest:
                p, largest = i, value
        pivots[k] = p
        if largest == 0.0:
            return 0.0
        smallest = min(smallest, largest)
        last_column = min(n - 1, k + offset)
        if p != k:
            for j in range(k, last_column + 1):
                a, b = k - j + offset, p - j + offset
                ab[j, a], ab[j, b] = ab[j, b], ab[j, a]
        inverse = 1.0 / ab[k, offset]
        for i in range(k + 1, last_row + 1):
            ab[k, i - k + offset] *= inverse
        for j in range(k + 1, last_column + 1):
            u_kj = ab[j, k - j + offset]
            if u_kj != 0.0:
                for i in range(k + 1, last_row + 1):
                    ab[j, i - j + offset] -= ab[k, i - k + offset] * u_kj
    return smallest


@numba.njit(cache=True)
def band_solve(ab, kl, ku, pivots, b) -> None:
    """Solve with the factors of :func:`band_lu`, b (n,) overwritten by the solution."""
    n = ab.shape[0]
    offset = kl + ku
    for k in range(n):
        p = pivots[k]
        if p != k:
            b[k], b[p] = b[p], b[k]
        bk = b[k]
        if bk != 0.0:
            for i in range(k + 1, min(n - 1, k + kl) + 1):
                b[i] -= ab[k, i - k + offset] * bk
    for k in range(n - 1, -1, -1):
        b[k] /= ab[k, offset]
        bk = b[k]
        if bk != 0.0:
            for i in range(max(0, k - offset), k):
                b[i] -= ab[k, i - k + offset] * bk


@numba.njit(cache=True)
def permuted_band_solve(ab, kl, ku, pivots, new_index, row_scale, col_scale, b) -> np.ndarray:
    """x = A^-1 b, b (n,), from the band LU of the permuted B = D_r A D_c
    (:func:`equilibrated_band_fill`, :func:`band_lu`): x = D_c P^T (P B P^T)^-1 P D_r b; unit
    scales give B^-1 b."""
    n = b.size
    y = np.empty(n)
    for i in range(n):
        y[new_index[i]] = row_scale[i] * b[i]
    band_solve(ab, kl, ku, pivots, y)
    x = np.empty(n)
    for i in range(n):
        x[i] = col_scale[i] * y[new_index[i]]
    return x


@numba.njit(cache=True)
def band_solve_transposed(ab, kl, ku, pivots, b) -> None:
    """Solve with the transpose of the matrix factorised by :func:`band_lu`, b (n,) or (n, m),
    C-contiguous, overwritten by the solution.

    The factorisation is M = P_0 L_0 P_1 L_1 ... P_{n-1} L_{n-1} U (P_k the row exchange of step
    k, L_k = I + l_k e_k^T its multipliers, not exchanged by later steps: LAPACK's ``dgbtrf``), so
    M^-T = P_0 L_0^-T ... P_{n-1} L_{n-1}^-T U^-T with L_k^-T = I - e_k l_k^T: U^T y = b forward,
    then for k = n-1 ... 0 first z_k -= l_k . z, then the exchange of step k. Column k of U and
    of L is row k of ``ab``: every sum here runs along a row (contiguous), as LAPACK's ``dgbtrs``
    with ``trans='T'``. One right-hand side goes to :func:`_band_solve_transposed_vector`."""
    n = ab.shape[0]
    offset = kl + ku
    x = b.reshape((n, -1))
    m = x.shape[1]
    if m == 1:
        _band_solve_transposed_vector(ab, kl, ku, pivots, b.reshape(n))
        return
    for k in range(n):                                   # U^T y = b: column k of U, entries above
        for i in range(max(0, k - offset), k):
            u_ik = ab[k, i - k + offset]
            if u_ik != 0.0:                              # the row exchanges' fill slots are mostly empty
                for c in range(m):
                    x[k, c] -= u_ik * x[i, c]
        for c in range(m):
            x[k, c] /= ab[k, offset]
    for k in range(n - 1, -1, -1):
        for i in range(k + 1, min(n - 1, k + kl) + 1):  # L_k^-T: the multipliers of column k
            l_ik = ab[k, i - k + offset]
            if l_ik != 0.0:
                for c in range(m):
                    x[k, c] -= l_ik * x[i, c]
        p = pivots[k]
        if p != k:
            for c in range(m):
                x[k, c], x[p, c] = x[p, c], x[k, c]


@numba.njit(cache=True)
def _band_solve_transposed_vector(ab, kl, ku, pivots, x) -> None:
    """:func:`band_solve_transposed` of one right-hand side x (n,), its sums in a register: the
    form for several right-hand sides costs 1.8x the plain solve (:func:`band_solve`) of one, this
    form 0.9x (CPU time, spin-up beam of 1e4 unknowns, kl = ku = 5)."""
    n = ab.shape[0]
    offset = kl + ku
    for k in range(n):
        total = x[k]
        for i in range(max(0, k - offset), k):
            total -= ab[k, i - k + offset] * x[i]
        x[k] = total / ab[k, offset]
    for k in range(n - 1, -1, -1):
        total = x[k]
        for i in range(k + 1, min(n - 1, k + kl) + 1):
            total -= ab[k, i - k + offset] * x[i]
        x[k] = total
        p = pivots[k]
        if p != k:
            x[k], x[p] = x[p], x[k]


@numba.njit(cache=True)
def permuted_band_solve_transposed(ab, kl, ku, pivots, new_index, row_scale, col_scale, b) -> np.ndarray:
    """x = A^-T b, b (n,) or (n, m), from the band LU of the permuted B = D_r A D_c of
    :func:`permuted_band_solve`: A^T = D_c^-1 P^T (P B P^T)^T P D_r^-1, so
    x = D_r P^T (P B P^T)^-T P D_c b (:func:`band_solve_transposed`); unit scales give B^-T b."""
    n = b.shape[0]
    rhs = b.reshape((n, -1))
    m = rhs.shape[1]
    y = np.empty((n, m))
    for i in range(n):
        for c in range(m):
            y[new_index[i], c] = col_scale[i] * rhs[i, c]
    band_solve_transposed(ab, kl, ku, pivots, y)
    x = np.empty((n, m))
    for i in range(n):
        for c in range(m):
            x[i, c] = row_scale[i] * y[new_index[i], c]
    return x.reshape(b.shape)
