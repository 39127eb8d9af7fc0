"""Compiled chord kinematics of two-node co-rotational elements (truss, planar beam).

The per-element helper that the compiled truss and beam kernels call inside their element loops;
its specification is :func:`flexmb.elements.corotational.chord` (the stretch ``l - l0`` without
cancellation, Crisfield & Shi 1993, eq. 11 rearranged).
"""
from __future__ import annotations

import math

import numba
import numpy as np

jit = numba.njit(cache=True, error_model="numpy")


@jit
def chord(X: np.ndarray, u: np.ndarray, e: int, second_node: int, X21: np.ndarray, x21: np.ndarray
          ) -> tuple[float, float, float]:
    """Chord of element ``e``: reference length l0, current length l and stretch l - l0 (m).

    X (n_el, 2, dim) reference nodes; u (n_el, ndof_el) element DOFs whose translations start at
    0 (first node) and ``second_node`` (second node). Writes the reference chord into X21 (dim,)
    and the current chord into x21 (dim,).
    """
    dim = X.shape[2]
    l0_sq = 0.0
    l_sq = 0.0
    X21_d21 = 0.0
    d21_sq = 0.0
    for k in range(dim):
        ref = X[e, 1, k] - X[e, 0, k]
        d21 = u[e, second_node + k] - u[e, k]
        cur = ref + d21
        X21[k] = ref
        x21[k] = cur
        l0_sq += ref * ref
        l_sq += cur * cur
        X21_d21 += ref * d21
        d21_sq += d21 * d21
    l0 = math.sqrt(l0_sq)
    l = math.sqrt(l_sq)
    return l0, l, (2.0 * X21_d21 + d21_sq) / (l + l0)
