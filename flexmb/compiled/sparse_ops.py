"""Compiled small linear-algebra steps of the Newton loop: the CSR product with the constant mass
matrix, norms and dot products.

scipy's ``M @ v`` costs about 15 us in its Python layers whatever the size, and
``np.linalg.norm(x[free])`` two numpy calls and a temporary; a small model's Newton iteration
makes several of each. References: ``scipy.sparse.csr_matrix @ v`` and ``np.linalg.norm(x[free])``
(equal to round-off: the sums run in the same order, the norm without BLAS's rescaling).

:func:`norm` and :func:`dot` replace BLAS's dot product in the step loop: OpenBLAS splits a dot
product of more than 10 000 entries over its threads, which stall when the cores are busy (on this
project's 2-core machine under a load of 2, Simo's spin-up beam of 4096 elements took 27-49 ms per
step with OpenBLAS's default threads and 6 ms with one); their four partial sums in a fixed order
give the same value on every machine and thread count.
"""
from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def csr_matvec(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, x: np.ndarray) -> np.ndarray:
    """A x (n_rows,) for a CSR matrix A given by its arrays and x (n_cols,)."""
    n = indptr.size - 1
    out = np.zeros(n)
    for i in range(n):
        acc = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            acc += data[p] * x[indices[p]]
        out[i] = acc
    return out


@numba.njit(cache=True)
def free_norm(x: np.ndarray, free: np.ndarray) -> float:
    """Euclidean norm of x[free]; x (n,), free (n_f,) indices."""
    acc = 0.0
    for k in range(free.size):
        acc += x[free[k]] * x[free[k]]
    return np.sqrt(acc)


@numba.njit(cache=True)
def residual_scale(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, v1: np.ndarray, free: np.ndarray,
                   momentum_norm0: float, dt: float, term1: np.ndarray, term2: np.ndarray, term3: np.ndarray) -> float:
    """Force scale of a step's residual without spatial rotations (``Scheme._scale``): the largest
    of max(momentum_norm0, |(M v1)_free|) / |dt| (a composed scheme's sub-steps may run backwards)
    and the free norms of the three terms, taken in that order as Python's ``max`` takes them (the
    first of equal or incomparable values stays)."""
    largest = max(momentum_norm0, free_norm(csr_matvec(indptr, indices, data, v1), free)) / abs(dt)
    for norm in (free_norm(term1, free), free_norm(term2, free), free_norm(term3, free)):
        if norm > largest:
            largest = norm
    return largest


@numba.njit(cache=True)
def csc_abs_product_norm(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, v: np.ndarray) -> float:
    """| |A| v | for a square CSC matrix A given by its arrays and v (n,) >= 0: the bound of the
    round-off of A x when every x_j is off by v_j (Newton's residual floor, see
    :func:`flexmb.integrators.newton.residual_floor`)."""
    y = np.zeros(v.size)
    for j in range(v.size):
        for p in range(indptr[j], indptr[j + 1]):
            y[indices[p]] += abs(data[p]) * v[j]
    return norm(y)


@numba.njit(cache=True)
def dot(x: np.ndarray, y: np.ndarray) -> float:
    """x . y for x, y (n,): four partial sums of every fourth product, added in a fixed order."""
    n = x.size
    s0 = s1 = s2 = s3 = 0.0
    m = n - n % 4
    for i in range(0, m, 4):
        s0 += x[i] * y[i]
        s1 += x[i + 1] * y[i + 1]
        s2 += x[i + 2] * y[i + 2]
        s3 += x[i + 3] * y[i + 3]
    for i in range(m, n):
        s0 += x[i] * y[i]
    return (s0 + s1) + (s2 + s3)


@numba.njit(cache=True)
def norm(x: np.ndarray) -> float:
    """Euclidean norm of x (n,), sqrt(:func:`dot` (x, x))."""
    return np.sqrt(dot(x, x))
