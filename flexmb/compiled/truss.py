"""Compiled kernels of the co-rotational truss in 2D and 3D (:class:`flexmb.elements.truss.Truss`).

Each kernel loops over the elements of a batch: X (n_el, 2, dim) reference nodes (m), u, u0, u1
(n_el, 2 dim) element DOFs ``[d1, d2]``, EA (n_el,) axial stiffness (N). The formulas are those
of the module docstring of :mod:`flexmb.elements.truss` (Crisfield & Shi 1993, eqs. 4, 8, 9, 12,
20); the ``reference_*`` methods of ``Truss`` are their specification, against which
``tests/test_compiled_truss.py`` checks these kernels to 1e-12 (and their tangents against
central differences). Element matrices are ``[[B, -B], [-B, B]]`` for a (dim, dim) block B.
"""
from __future__ import annotations

import numba
import numpy as np

from flexmb.compiled.corotational import chord

jit = numba.njit(cache=True, error_model="numpy")


@jit
def _spread(K, e: int, B) -> None:
    """K[e] (2 dim, 2 dim) = [[B, -B], [-B, B]]."""
    dim = B.shape[0]
    for i in range(dim):
        for j in range(dim):
            K[e, i, j] = K[e, dim + i, dim + j] = B[i, j]
            K[e, i, dim + j] = K[e, dim + i, j] = -B[i, j]


@jit
def _static(X, u, EA, tangent: bool, q, K) -> None:
    """q = N [-e; e] into q (n_el, 2 dim) and, with ``tangent``, K_t into K (n_el, 2 dim, 2 dim):
    material EA/l0 e e^T plus geometric N/l (I - e e^T)."""
    dim = X.shape[2]
    X21, x21 = np.empty(dim), np.empty(dim)
    B = np.empty((dim, dim))
    for e in range(X.shape[0]):
        l0, l, stretch = chord(X, u, e, dim, X21, x21)
        N = EA[e] * stretch / l0
        for k in range(dim):
            f = N * (x21[k] / l)
            q[e, k], q[e, dim + k] = -f, f
        if not tangent:
            continue
        axial, chord_force = EA[e] / l0, N / l
        for i in range(dim):
            for j in range(dim):
                ee = (x21[i] / l) * (x21[j] / l)
                B[i, j] = axial * ee + chord_force * ((1.0 if i == j else 0.0) - ee)
        _spread(K, e, B)


@jit
def forces(X: np.ndarray, u: np.ndarray, EA: np.ndarray, tangent: bool) -> tuple[np.ndarray, np.ndarray]:
    """Internal force q (n_el, 2 dim), N, and with ``tangent`` its symmetric tangent dq/du
    (n_el, 2 dim, 2 dim), else an empty array (one entry point: one compilation)."""
    n_el, ne = X.shape[0], 2 * X.shape[2]
    q, K = np.empty((n_el, ne)), np.empty((n_el if tangent else 0, ne, ne))
    _static(X, u, EA, tangent, q, K)
    return q, K


@jit
def _mid_point(X, u0, u1, EA, tangent: bool, q, K) -> None:
    """q_m = c x21_m [-1; 1], c = (N_n + N_{n+1}) / (l_n + l_{n+1}), into q (n_el, 2 dim) and,
    with ``tangent``, dq_m/du1 into K: blocks x21_m g^T + c/2 I with
    g = (EA/l0 - c) e_{n+1} / (l_n + l_{n+1})."""
    dim = X.shape[2]
    X21, x21_0, x21_1 = np.empty(dim), np.empty(dim), np.empty(dim)
    B = np.empty((dim, dim))
    for e in range(X.shape[0]):
        l0, l_0, stretch0 = chord(X, u0, e, dim, X21, x21_0)
        _, l_1, stretch1 = chord(X, u1, e, dim, X21, x21_1)
        l_sum = l_0 + l_1
        coef = (EA[e] * stretch0 / l0 + EA[e] * stretch1 / l0) / l_sum
        for k in range(dim):
            f = coef * (0.5 * (x21_0[k] + x21_1[k]))
            q[e, k], q[e, dim + k] = -f, f
        if not tangent:
            continue
        g = (EA[e] / l0 - coef) / l_sum
        for i in range(dim):
            for j in range(dim):
                B[i, j] = 0.5 * (x21_0[i] + x21_1[i]) * (g * (x21_1[j] / l_1)) + (0.5 * coef if i == j else 0.0)
        _spread(K, e, B)


@jit
def mid_point_forces(X: np.ndarray, u0: np.ndarray, u1: np.ndarray, EA: np.ndarray, tangent: bool
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Energy-conserving mid-point force q_m (n_el, 2 dim) and with ``tangent`` its derivative
    with respect to u1 (n_el, 2 dim, 2 dim), else an empty array."""
    n_el, ne = X.shape[0], 2 * X.shape[2]
    q, K = np.empty((n_el, ne)), np.empty((n_el if tangent else 0, ne, ne))
    _mid_point(X, u0, u1, EA, tangent, q, K)
    return q, K


@jit
def section_state(X: np.ndarray, u: np.ndarray, EA: np.ndarray) -> np.ndarray:
    """Per element (n_el, 3): axial strain (l - l0)/l0, axial force N = EA (l - l0)/l0 (N) and
    strain energy EA (l - l0)^2 / (2 l0) (J)."""
    dim = X.shape[2]
    X21, x21 = np.empty(dim), np.empty(dim)
    out = np.empty((X.shape[0], 3))
    for e in range(X.shape[0]):
        l0, _, stretch = chord(X, u, e, dim, X21, x21)
        out[e, 0] = stretch / l0
        out[e, 1] = EA[e] * stretch / l0
        out[e, 2] = 0.5 * EA[e] * stretch * stretch / l0
    return out
