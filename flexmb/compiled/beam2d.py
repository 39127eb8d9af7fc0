"""Compiled kernels of the planar co-rotational beam (:class:`flexmb.elements.beam2d.Beam2D`).

Each kernel loops over the elements of a batch: X (n_el, 2, 2) reference nodes (m), u, u0, u1
(n_el, 6) element DOFs ``[u1, v1, theta1, u2, v2, theta2]``, EA, EI (n_el,) sections, and
``second_order`` switches Meijaard's bowing term. The formulas, symbols and equation numbers
are those of the module docstring of :mod:`flexmb.elements.beam2d`; the ``reference_*``
methods of ``Beam2D`` are their specification, against which ``tests/test_compiled_beam2d.py``
checks these kernels to 1e-12 (and their tangents against central differences).

Per element, the B rows are kept as scalars and six-vectors: ``r = [-e, 0, e, 0]``, the
bending rows ``b_i = z + e_theta_i`` with ``z = [n, 0, -n, 0] / l``, and products with the
chord-increment map J (dx21 = J dp) are written out through the node signs -1, +1.

The mid-point force is split into what comes from the start of the step alone
(:func:`mid_point_start`), which a step's Newton iterations share, and the rest
(:func:`mid_point_from_start`); :func:`mid_point_forces` runs both.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from flexmb.compiled.corotational import chord

jit = numba.njit(cache=True, error_model="numpy")

SERIES_BELOW = 1e-3     # |d_alpha| (rad) below which gamma = d_alpha / sin(d_alpha) is a series
_TRANSLATIONS = (0, 1, 3, 4)     # element DOFs of the chord increment dx21 = J dp ...
_NODE_SIGN = (-1.0, -1.0, 1.0, 1.0)   # ... with J[c, dof] = sign for component c = dof % 3


@jit
def _local_rotation(e0x: float, e0y: float, ex: float, ey: float, theta: float) -> float:
    """tb = theta - alpha: angle from the current chord e to the reference chord e0 turned by theta."""
    c, s = math.cos(theta), math.sin(theta)
    dx = c * e0x - s * e0y
    dy = s * e0x + c * e0y
    return math.atan2(ex * dy - ey * dx, ex * dx + ey * dy)


@jit
def _local_state(X, u, e: int, EA: float, EI: float, second_order: bool, X21, x21):
    """l0, l, stretch (m), local rotations tb1, tb2 (rad), N (N), M1, M2 (N m) and the bowing
    factor h = l0/30 (zero without the second-order term) of element e."""
    l0, l, stretch = chord(X, u, e, 3, X21, x21)
    tb1 = _local_rotation(X21[0] / l0, X21[1] / l0, x21[0] / l, x21[1] / l, u[e, 2])
    tb2 = _local_rotation(X21[0] / l0, X21[1] / l0, x21[0] / l, x21[1] / l, u[e, 5])
    h = l0 / 30.0 if second_order else 0.0
    bow = 0.5 * (tb1 * (4.0 * h * tb1 - h * tb2) + tb2 * (4.0 * h * tb2 - h * tb1))
    N = EA * (stretch + bow) / l0
    k = EI / l0
    return l0, l, stretch, tb1, tb2, N, 4.0 * k * tb1 + 2.0 * k * tb2, 2.0 * k * tb1 + 4.0 * k * tb2, h


@jit
def _b_rows(ex: float, ey: float, l: float, r, b) -> None:
    """r (6,) and bending rows b (2, 6) at a chord of direction (ex, ey) and length l."""
    nx, ny = -ey, ex                                                   # e turned by +90 degrees
    r[0], r[1], r[2], r[3], r[4], r[5] = -ex, -ey, 0.0, ex, ey, 0.0
    for i in range(2):
        b[i, 0], b[i, 1], b[i, 2] = nx / l, ny / l, 0.0
        b[i, 3], b[i, 4], b[i, 5] = -nx / l, -ny / l, 0.0
    b[0, 2] = 1.0
    b[1, 5] = 1.0


@jit
def _static(X, u, EA, EI, second_order: bool, tangent: bool, q, K) -> None:
    """q = N r + M_eff . b into q (n_el, 6) and, with ``tangent``, K_t = dq/du into K (n_el, 6, 6)."""
    X21, x21 = np.empty(2), np.empty(2)
    r, a, zl = np.empty(6), np.empty(6), np.empty(6)
    b, Cb = np.empty((2, 6)), np.empty((2, 6))
    for e in range(X.shape[0]):
        l0, l, _, tb1, tb2, N, M1, M2, h = _local_state(X, u, e, EA[e], EI[e], second_order, X21, x21)
        ex, ey = x21[0] / l, x21[1] / l
        _b_rows(ex, ey, l, r, b)
        grad1, grad2 = 4.0 * h * tb1 - h * tb2, 4.0 * h * tb2 - h * tb1
        M1_eff, M2_eff = M1 + N * grad1, M2 + N * grad2
        for i in range(6):
            q[e, i] = N * r[i] + M1_eff * b[0, i] + M2_eff * b[1, i]
        if not tangent:
            continue
        for i in range(6):
            a[i] = r[i] + grad1 * b[0, i] + grad2 * b[1, i]            # de/dp
            zl[i] = b[0, i] * l                                        # z = [n, 0, -n, 0]
        zl[2] = 0.0
        k = EI[e] / l0
        diagonal, off_diagonal = 4.0 * k + 4.0 * N * h, 2.0 * k - N * h   # C = k + N H
        for j in range(6):                                             # C b, (2, 6)
            Cb[0, j] = diagonal * b[0, j] + off_diagonal * b[1, j]
            Cb[1, j] = off_diagonal * b[0, j] + diagonal * b[1, j]
        axial = EA[e] / l0
        chord_force = N / l                                            # N dr/dp = N/l z z^T
        moment_sum = (M1_eff + M2_eff) / (l * l)                       # (M1 + M2) d(z/l)/dp
        for i in range(6):                                             # symmetric: fill j >= i
            for j in range(i, 6):
                K[e, i, j] = K[e, j, i] = (axial * a[i] * a[j] + b[0, i] * Cb[0, j] + b[1, i] * Cb[1, j]
                                           + chord_force * zl[i] * zl[j]
                                           - moment_sum * (r[i] * zl[j] + zl[i] * r[j]))


@jit
def forces(X: np.ndarray, u: np.ndarray, EA: np.ndarray, EI: np.ndarray, second_order: bool,
           tangent: bool) -> tuple[np.ndarray, np.ndarray]:
    """Internal force q (n_el, 6), N and N m, and with ``tangent`` its symmetric tangent dq/du
    (n_el, 6, 6), else an empty (0, 6, 6) array (one entry point: one compilation)."""
    n_el = X.shape[0]
    q, K = np.empty((n_el, 6)), np.empty((n_el if tangent else 0, 6, 6))
    _static(X, u, EA, EI, second_order, tangent, q, K)
    return q, K


@jit
def _sinc_ratio(a: float, s: float, c: float) -> tuple[float, float]:
    """gamma(a) = a / sin(a) and its derivative from s = sin a, c = cos a, with series below
    SERIES_BELOW."""
    if abs(a) < SERIES_BELOW:
        return 1.0 + a * a / 6.0 + 7.0 * a**4 / 360.0, a / 3.0 + 7.0 * a**3 / 90.0
    return a / s, (s - a * c) / (s * s)


#: per element, the start-of-step quantities of the mid-point force (:func:`mid_point_start`)
MID_POINT_START = 8


@jit
def mid_point_start(X, u0, EA, EI, second_order: bool, start) -> None:
    """What the mid-point force takes from the start of the step only, per element into start
    (n_el, MID_POINT_START): the chord x21_n (2, m), its length l_n (m), the local rotations
    tb_n (2, rad), N_n (N) and M_n (2, N m). A step's Newton iterations share them
    (:mod:`flexmb.compiled.mid_point_group`)."""
    X21, x21 = np.empty(2), np.empty(2)
    for e in range(X.shape[0]):
        _, l, _, tb1, tb2, N, M1, M2, _ = _local_state(X, u0, e, EA[e], EI[e], second_order, X21, x21)
        start[e, 0], start[e, 1], start[e, 2] = x21[0], x21[1], l
        start[e, 3], start[e, 4], start[e, 5], start[e, 6], start[e, 7] = tb1, tb2, N, M1, M2


@jit
def _mid_point(X, u0, u1, EA, EI, second_order: bool, tangent: bool, q, K) -> None:
    """Averaged-B mid-point force (eq. 38 made exact, module docstring of beam2d) into q (n_el, 6)
    and, with ``tangent``, its derivative with respect to u1 into K (n_el, 6, 6)."""
    start = np.empty((X.shape[0], MID_POINT_START))
    mid_point_start(X, u0, EA, EI, second_order, start)
    mid_point_from_start(X, start, u0, u1, EA, EI, second_order, tangent, q, K)


@jit
def mid_point_from_start(X, start, u0, u1, EA, EI, second_order: bool, tangent: bool, q, K) -> None:
    """:func:`_mid_point` from the step's :func:`mid_point_start` quantities start (n_el,
    MID_POINT_START) of u0: the same values."""
    X21, x21_1 = np.empty(2), np.empty(2)
    r_m, b_m, a_m = np.empty(6), np.empty((2, 6)), np.empty(6)
    r1, b1, a1 = np.empty(6), np.empty((2, 6)), np.empty(6)
    Cb1, D = np.empty((2, 6)), np.empty((2, 2))
    for e in range(X.shape[0]):
        l0, l_1, stretch1 = chord(X, u1, e, 3, X21, x21_1)              # l0 from X alone: u0's too
        x0x, x0y, l_0 = start[e, 0], start[e, 1], start[e, 2]          # x21_n, l_n
        tb0_1, tb0_2, N0, M0_1, M0_2 = start[e, 3], start[e, 4], start[e, 5], start[e, 6], start[e, 7]
        h = l0 / 30.0 if second_order else 0.0
        # exact chord-rotation increment d_alpha from x21_n x x21_{n+1} = l_n l_{n+1} sin(d_alpha)
        cross01 = x0x * x21_1[1] - x0y * x21_1[0]
        dot01 = x0x * x21_1[0] + x0y * x21_1[1]
        dalpha = math.atan2(cross01, dot01)
        # end-of-step local rotations continue the start-of-step ones (not re-wrapped)
        tb1_1 = tb0_1 + (u1[e, 2] - u0[e, 2]) - dalpha
        tb1_2 = tb0_2 + (u1[e, 5] - u0[e, 5]) - dalpha
        grad1_1, grad1_2 = 4.0 * h * tb1_1 - h * tb1_2, 4.0 * h * tb1_2 - h * tb1_1
        bow1 = 0.5 * (tb1_1 * grad1_1 + tb1_2 * grad1_2)
        N1 = EA[e] * (stretch1 + bow1) / l0
        k = EI[e] / l0
        N_av = 0.5 * (N0 + N1)
        # the bowing term is quadratic: its mid-point gradient is its exact discrete gradient
        tbm_1, tbm_2 = 0.5 * (tb0_1 + tb1_1), 0.5 * (tb0_2 + tb1_2)
        gradm_1, gradm_2 = 4.0 * h * tbm_1 - h * tbm_2, 4.0 * h * tbm_2 - h * tbm_1
        M_av1 = 0.5 * (M0_1 + (4.0 * k * tb1_1 + 2.0 * k * tb1_2)) + N_av * gradm_1
        M_av2 = 0.5 * (M0_2 + (2.0 * k * tb1_1 + 4.0 * k * tb1_2)) + N_av * gradm_2
        xm, ym = 0.5 * (x0x + x21_1[0]), 0.5 * (x0y + x21_1[1])          # x21_m
        l_av = 0.5 * (l_0 + l_1)
        # sin and cos of d_alpha from the chords' cross and dot products (no trigonometric call)
        gamma, dgamma = _sinc_ratio(dalpha, cross01 / (l_0 * l_1), dot01 / (l_0 * l_1))
        kappa = gamma / (l_0 * l_1)
        nsx, nsy = -ym, xm                                             # n*_m, x21_m turned by +90 deg
        wx, wy = kappa * nsx, kappa * nsy                              # d_alpha = w . dx21
        r_m[0], r_m[1], r_m[2], r_m[3], r_m[4], r_m[5] = -xm / l_av, -ym / l_av, 0.0, xm / l_av, ym / l_av, 0.0
        for i in range(2):                                             # z_m = [w, 0, -w, 0]
            b_m[i, 0], b_m[i, 1], b_m[i, 2], b_m[i, 3], b_m[i, 4], b_m[i, 5] = wx, wy, 0.0, -wx, -wy, 0.0
        b_m[0, 2] = 1.0
        b_m[1, 5] = 1.0
        for i in range(6):
            q[e, i] = N_av * r_m[i] + M_av1 * b_m[0, i] + M_av2 * b_m[1, i]
        if not tangent:
            continue
        e1x, e1y = x21_1[0] / l_1, x21_1[1] / l_1
        n1x, n1y = -e1y, e1x
        _b_rows(e1x, e1y, l_1, r1, b1)
        # d N_av = EA/(2 l0) a1 dp, d M_av = (k + N_av H)/2 b1 dp; force rows a_m = r_m + b_m^T grad_m
        for i in range(6):
            a1[i] = r1[i] + grad1_1 * b1[0, i] + grad1_2 * b1[1, i]
            a_m[i] = r_m[i] + gradm_1 * b_m[0, i] + gradm_2 * b_m[1, i]
        diagonal, off_diagonal = 0.5 * (4.0 * k + 4.0 * N_av * h), 0.5 * (2.0 * k - N_av * h)
        for j in range(6):                                             # (k + N_av H)/2 b1, (2, 6)
            Cb1[0, j] = diagonal * b1[0, j] + off_diagonal * b1[1, j]
            Cb1[1, j] = off_diagonal * b1[0, j] + diagonal * b1[1, j]
        axial = 0.5 * EA[e] / l0
        for i in range(6):
            for j in range(6):
                K[e, i, j] = axial * a_m[i] * a1[j] + b_m[0, i] * Cb1[0, j] + b_m[1, i] * Cb1[1, j]
        # d r_m = J^T A J dp / (2 l_av), A = I - x21_m e1^T / l_av;
        # d w / d x21 = n*_m g^T + kappa/2 R90, g = (gamma' n1 - gamma e1) / (l_n l1^2), and
        # z_m = -J^T w contributes -(M_av,1 + M_av,2) J^T dw J: D = N_av/(2 l_av) A - (M1 + M2) dw
        gx = (dgamma * n1x - gamma * e1x) / (l_0 * l_1 * l_1)
        gy = (dgamma * n1y - gamma * e1y) / (l_0 * l_1 * l_1)
        chord_force = N_av / (2.0 * l_av)
        moment_sum = M_av1 + M_av2
        D[0, 0] = chord_force * (1.0 - xm * e1x / l_av) - moment_sum * (nsx * gx)
        D[0, 1] = chord_force * (-xm * e1y / l_av) - moment_sum * (nsx * gy - 0.5 * kappa)
        D[1, 0] = chord_force * (-ym * e1x / l_av) - moment_sum * (nsy * gx + 0.5 * kappa)
        D[1, 1] = chord_force * (1.0 - ym * e1y / l_av) - moment_sum * (nsy * gy)
        for i in range(4):
            for j in range(4):
                K[e, _TRANSLATIONS[i], _TRANSLATIONS[j]] += _NODE_SIGN[i] * _NODE_SIGN[j] * D[i % 2, j % 2]


@jit
def mid_point_forces(X: np.ndarray, u0: np.ndarray, u1: np.ndarray, EA: np.ndarray, EI: np.ndarray,
                     second_order: bool, tangent: bool) -> tuple[np.ndarray, np.ndarray]:
    """Energy-conserving mid-point force q_m (n_el, 6) and with ``tangent`` its derivative with
    respect to u1 (n_el, 6, 6), else an empty (0, 6, 6) array."""
    n_el = X.shape[0]
    q, K = np.empty((n_el, 6)), np.empty((n_el if tangent else 0, 6, 6))
    _mid_point(X, u0, u1, EA, EI, second_order, tangent, q, K)
    return q, K


@jit
def section_state(X: np.ndarray, u: np.ndarray, EA: np.ndarray, EI: np.ndarray, second_order: bool) -> np.ndarray:
    """Per element (n_el, 7): axial strain (l - l0)/l0, local rotations tb1, tb2 (rad), axial
    force N (N), end moments M1, M2 (N m) and strain energy N^2 l0 / (2 EA) + tb . M / 2 (J)."""
    X21, x21 = np.empty(2), np.empty(2)
    out = np.empty((X.shape[0], 7))
    for e in range(X.shape[0]):
        l0, _, stretch, tb1, tb2, N, M1, M2, _ = _local_state(X, u, e, EA[e], EI[e], second_order, X21, x21)
        out[e, 0], out[e, 1], out[e, 2] = stretch / l0, tb1, tb2
        out[e, 3], out[e, 4], out[e, 5] = N, M1, M2
        out[e, 6] = 0.5 * N * N * l0 / EA[e] + 0.5 * (tb1 * M1 + tb2 * M2)
    return out
