"""Compiled scatter of element vectors and matrices into global vectors and CSC data arrays.

The assembly (:mod:`flexmb.assembly`) computes once per model, for every element-matrix entry
(e, i, j), its position in the data array of the free-free CSC matrix (-1: a prescribed row or
column, dropped), and for every element-vector entry (e, i) its global DOF. A Newton iteration
then adds the element arrays into the global arrays in one pass over the elements, without the
temporary arrays of ``np.bincount``. The references are
:meth:`flexmb.assembly.Assembly.reference_matrix_data` (``np.bincount`` over the same positions)
and ``np.add.at``: the sums agree to round-off (the same element order per entry), and
:func:`flexmb.integrators.newton.equilibrate` for :func:`equilibrated_dense`.

The dense path of the linear solver (:mod:`flexmb.compiled.dense_lu`) starts from the CSC arrays
directly (:func:`equilibrated_dense`).
"""
from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def scatter_vector(out: np.ndarray, element_vectors: np.ndarray, element_dofs: np.ndarray) -> None:
    """out[element_dofs[e, i]] += element_vectors[e, i]; out (n_dof,), the others (n_el, ne)."""
    n_el, ne = element_dofs.shape
    for e in range(n_el):
        for i in range(ne):
            out[element_dofs[e, i]] += element_vectors[e, i]


@numba.njit(cache=True)
def gather_vector(values: np.ndarray, element_dofs: np.ndarray) -> np.ndarray:
    """values[element_dofs] (n_el, ne) for a vector values (n_dof,): the element vectors at their DOFs."""
    out = np.empty(element_dofs.shape)
    for e in range(element_dofs.shape[0]):
        for i in range(element_dofs.shape[1]):
            out[e, i] = values[element_dofs[e, i]]
    return out


@numba.njit(cache=True)
def scatter_matrix(data: np.ndarray, element_matrices: np.ndarray, positions: np.ndarray) -> None:
    """data[positions[e, i, j]] += element_matrices[e, i, j] where positions >= 0; data (nnz,),
    element_matrices and positions (n_el, ne, ne)."""
    n_el, ne, _ = positions.shape
    for e in range(n_el):
        for i in range(ne):
            for j in range(ne):
                p = positions[e, i, j]
                if p >= 0:
                    data[p] += element_matrices[e, i, j]


@numba.njit(cache=True)
def equilibrated_dense(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, out: np.ndarray,
                       row_scale: np.ndarray, col_scale: np.ndarray) -> None:
    """Dense ``B = D_r A D_c`` (n, n) from a CSC matrix A, with the scalings of
    :func:`flexmb.integrators.newton.equilibrate`: every row of A scaled to a largest entry of 1,
    then every column of the result (zero rows and columns keep a scale of 1).

    out (n, n) is overwritten; row_scale, col_scale (n,) receive D_r and D_c.
    """
    n = out.shape[0]
    for i in range(n):
        for j in range(n):
            out[i, j] = 0.0
    equilibration_scales(indptr, indices, data, row_scale, col_scale)
    for j in range(n):
        for p in range(indptr[j], indptr[j + 1]):
            i = indices[p]
            out[i, j] += data[p] * row_scale[i] * col_scale[j]


@numba.njit(cache=True)
def equilibration_scales(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, row_scale: np.ndarray,
                         col_scale: np.ndarray) -> None:
    """D_r, D_c (n,) of :func:`equilibrated_dense` of the CSC matrix A into row_scale, col_scale:
    every row of A scaled to a largest entry of 1, then every column of the result (zero rows and
    columns keep a scale of 1)."""
    n = row_scale.size
    row_scale[:] = 0.0
    for j in range(n):
        for p in range(indptr[j], indptr[j + 1]):
            a = abs(data[p])
            if a > row_scale[indices[p]]:
                row_scale[indices[p]] = a
    for i in range(n):
        row_scale[i] = 1.0 / row_scale[i] if row_scale[i] > 0.0 else 1.0
    for j in range(n):
        largest = 0.0
        for p in range(indptr[j], indptr[j + 1]):
            a = abs(data[p]) * row_scale[indices[p]]
            if a > largest:
                largest = a
        col_scale[j] = 1.0 / largest if largest > 0.0 else 1.0
