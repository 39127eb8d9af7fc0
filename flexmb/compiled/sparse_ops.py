"""Compiled small linear-algebra steps of the Newton loop: the CSR product with the constant mass
matrix and norms over the free DOFs.

scipy's ``M @ v`` costs about 15 us in its Python layers whatever the size, and
``np.linalg.norm(x[free])`` two numpy calls and a temporary; a small model's Newton iteration
makes several of each. References: ``scipy.sparse.csr_matrix @ v`` and ``np.linalg.norm(x[free])``
(equal to round-off: the sums run in the same order, the norm without BLAS's rescaling).
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
