"""Compiled SO(3) maps, batched over rotations: the kernels behind :mod:`flexmb.rotations`.

Each batched kernel takes arrays (n, 3) or (n, 3, 3) and loops over the n rotations; the
per-rotation helpers (``*_into``, names without ``batch``) are compiled functions that other
compiled modules (joints, rigid-body inertia) call inside their own loops. The formulas are
those of the ``reference_*`` functions of :mod:`flexmb.rotations` (their specification, with
the same series branches below ``SMALL`` rad), against which ``tests/test_compiled_rotations.py``
checks them to 1e-12.

``error_model="numpy"``: a half turn gives infinite Cayley parameters (as in numpy, no
exception), which the callers treat as a failed iterate.
"""
from __future__ import annotations

import math

import numba
import numpy as np

SMALL = 1e-4        # below this angle (rad) the series expansions are used (flexmb.rotations._SMALL)

jit = numba.njit(cache=True, error_model="numpy")


# ------------------------------------------------------------------ one rotation
@jit
def coefficients(theta: float) -> tuple[float, float, float]:
    """sin(t)/t, (1 - cos t)/t^2, (t - sin t)/t^3 with series below SMALL."""
    t2 = theta * theta
    if theta < SMALL:
        return (1.0 - t2 / 6.0 + t2 * t2 / 120.0, 0.5 - t2 / 24.0 + t2 * t2 / 720.0,
                1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0)
    h = math.sin(0.5 * theta) / (0.5 * theta)
    return math.sin(theta) / theta, 0.5 * h * h, (theta - math.sin(theta)) / (theta * t2)


@jit
def norm3(v) -> float:
    return math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])


@jit
def _identity_plus(v, a: float, b: float, out, identity: float = 1.0) -> None:
    """out (3, 3) = identity I + a hat(v) + b hat(v)^2; hat(v)^2 = v v^T - |v|^2 I, its diagonal
    written as -(v_j^2 + v_k^2) (no cancellation near an axis)."""
    for i in range(3):
        for j in range(3):
            out[i, j] = b * (v[i] * v[j])
    out[0, 0] = identity + b * -(v[1] * v[1] + v[2] * v[2])
    out[1, 1] = identity + b * -(v[0] * v[0] + v[2] * v[2])
    out[2, 2] = identity + b * -(v[0] * v[0] + v[1] * v[1])
    out[0, 1] -= a * v[2]
    out[0, 2] += a * v[1]
    out[1, 0] += a * v[2]
    out[1, 2] -= a * v[0]
    out[2, 0] -= a * v[1]
    out[2, 1] += a * v[0]


@jit
def exp_map_into(psi, R) -> None:
    """R (3, 3) = exp(hat(psi)) (Rodrigues)."""
    a, b, _ = coefficients(norm3(psi))
    _identity_plus(psi, a, b, R)


@jit
def exp_map_minus_identity_into(psi, W) -> None:
    """W (3, 3) = exp(hat(psi)) - I, without the cancellation of forming R and subtracting I: its
    round-off is that of the rotation, not of 1 (the shell's director changes)."""
    a, b, _ = coefficients(norm3(psi))
    _identity_plus(psi, a, b, W, 0.0)


@jit
def tangent_operator_into(psi, T) -> None:
    """T (3, 3) = I + (1 - cos t)/t^2 hat(psi) + (t - sin t)/t^3 hat(psi)^2."""
    _, b, c = coefficients(norm3(psi))
    _identity_plus(psi, b, c, T)


@jit
def cayley_into(w, R) -> None:
    """R (3, 3) = cay(w) = I + 4/(4 + |w|^2) (hat(w) + hat(w)^2 / 2)."""
    f = 4.0 / (4.0 + (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]))
    _identity_plus(w, f, 0.5 * f, R)


@jit
def cayley_resolvent_into(w, G) -> None:
    """G (3, 3) = (I + hat(w)/2 + w w^T / 4) / (1 + |w|^2 / 4)."""
    f = 1.0 / (1.0 + 0.25 * (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]))
    for i in range(3):
        for j in range(3):
            G[i, j] = 0.25 * w[i] * w[j] * f
        G[i, i] += f
    G[0, 1] -= 0.5 * w[2] * f
    G[0, 2] += 0.5 * w[1] * f
    G[1, 0] += 0.5 * w[2] * f
    G[1, 2] -= 0.5 * w[0] * f
    G[2, 0] -= 0.5 * w[1] * f
    G[2, 1] += 0.5 * w[0] * f


@jit
def cayley_from_matrix_into(R, w) -> None:
    """w (3,) = 4 axial(R) / (1 + tr R): Cayley parameters of a rotation by less than pi."""
    f = 2.0 / (1.0 + (R[0, 0] + R[1, 1] + R[2, 2]))            # 4 * (1/2 of axial)
    w[0] = f * (R[2, 1] - R[1, 2])
    w[1] = f * (R[0, 2] - R[2, 0])
    w[2] = f * (R[1, 0] - R[0, 1])


@jit
def matrix_to_quaternion_into(R, q) -> None:
    """q (4,), q0 >= 0, unit quaternion of R by Shepperd's method (largest of 4 q_k^2 first)."""
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    sq = (1.0 + tr, 1.0 + 2.0 * R[0, 0] - tr, 1.0 + 2.0 * R[1, 1] - tr, 1.0 + 2.0 * R[2, 2] - tr)
    k = 0
    for i in range(1, 4):
        if sq[i] > sq[k]:
            k = i
    big = 0.5 * math.sqrt(max(sq[k], 0.0))
    w0, w1, w2 = R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]       # 4 q0 q
    s01, s02, s12 = R[0, 1] + R[1, 0], R[0, 2] + R[2, 0], R[1, 2] + R[2, 1]    # 4 qi qj
    d = 4.0 * big
    if k == 0:
        q[0], q[1], q[2], q[3] = big, w0 / d, w1 / d, w2 / d
    elif k == 1:
        q[0], q[1], q[2], q[3] = w0 / d, big, s01 / d, s02 / d
    elif k == 2:
        q[0], q[1], q[2], q[3] = w1 / d, s01 / d, big, s12 / d
    else:
        q[0], q[1], q[2], q[3] = w2 / d, s02 / d, s12 / d, big
    if q[0] < 0.0:
        for i in range(4):
            q[i] = -q[i]
    n = math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3])
    for i in range(4):
        q[i] /= n


@jit
def quaternion_to_vector_into(q, psi) -> None:
    """psi (3,), the principal rotation vector (|psi| <= pi) of the unit quaternion q (4,)."""
    sign = -1.0 if q[0] < 0.0 else 1.0
    q0, q1, q2, q3 = sign * q[0], sign * q[1], sign * q[2], sign * q[3]
    vn = math.sqrt(q1 * q1 + q2 * q2 + q3 * q3)
    if vn < 1e-12:
        factor = 2.0 / max(q0, 1e-300)
    else:
        factor = 2.0 * math.atan2(vn, q0) / vn
    psi[0], psi[1], psi[2] = factor * q1, factor * q2, factor * q3


@jit
def log_map_into(R, psi) -> None:
    """psi (3,), the principal rotation vector of R (3, 3)."""
    q = np.empty(4)
    matrix_to_quaternion_into(R, q)
    quaternion_to_vector_into(q, psi)


@jit
def quaternion_from_vector_into(psi, q) -> None:
    """q (4,), the unit quaternion of the rotation vector psi."""
    theta = norm3(psi)
    if theta < SMALL:
        s = 0.5 - theta * theta / 48.0
    else:
        s = math.sin(0.5 * theta) / theta
    q[0] = math.cos(0.5 * theta)
    q[1], q[2], q[3] = s * psi[0], s * psi[1], s * psi[2]


@jit
def compose_into(spin, psi, out) -> None:
    """out (3,): principal rotation vector of exp(hat(spin)) exp(hat(psi)) (by quaternions)."""
    p = np.empty(4)
    q = np.empty(4)
    quaternion_from_vector_into(spin, p)
    quaternion_from_vector_into(psi, q)
    r = np.empty(4)
    r[0] = p[0] * q[0] - (p[1] * q[1] + p[2] * q[2] + p[3] * q[3])
    r[1] = p[0] * q[1] + q[0] * p[1] + (p[2] * q[3] - p[3] * q[2])
    r[2] = p[0] * q[2] + q[0] * p[2] + (p[3] * q[1] - p[1] * q[3])
    r[3] = p[0] * q[3] + q[0] * p[3] + (p[1] * q[2] - p[2] * q[1])
    quaternion_to_vector_into(r, out)


@jit
def matmul3_into(A, B, out) -> None:
    """out (3, 3) = A B (out must not alias A or B)."""
    for i in range(3):
        for j in range(3):
            out[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]


# ------------------------------------------------------------------ batched kernels
@jit
def exp_map_batch(psi: np.ndarray) -> np.ndarray:
    """(n, 3) -> (n, 3, 3)."""
    out = np.empty((psi.shape[0], 3, 3))
    for k in range(psi.shape[0]):
        exp_map_into(psi[k], out[k])
    return out


@jit
def tangent_operator_batch(psi: np.ndarray) -> np.ndarray:
    """(n, 3) -> (n, 3, 3)."""
    out = np.empty((psi.shape[0], 3, 3))
    for k in range(psi.shape[0]):
        tangent_operator_into(psi[k], out[k])
    return out


@jit
def cayley_batch(w: np.ndarray) -> np.ndarray:
    """(n, 3) -> (n, 3, 3)."""
    out = np.empty((w.shape[0], 3, 3))
    for k in range(w.shape[0]):
        cayley_into(w[k], out[k])
    return out


@jit
def cayley_resolvent_batch(w: np.ndarray) -> np.ndarray:
    """(n, 3) -> (n, 3, 3)."""
    out = np.empty((w.shape[0], 3, 3))
    for k in range(w.shape[0]):
        cayley_resolvent_into(w[k], out[k])
    return out


@jit
def cayley_from_matrix_batch(R: np.ndarray) -> np.ndarray:
    """(n, 3, 3) -> (n, 3)."""
    out = np.empty((R.shape[0], 3))
    for k in range(R.shape[0]):
        cayley_from_matrix_into(R[k], out[k])
    return out


@jit
def log_map_batch(R: np.ndarray) -> np.ndarray:
    """(n, 3, 3) -> (n, 3)."""
    out = np.empty((R.shape[0], 3))
    for k in range(R.shape[0]):
        log_map_into(R[k], out[k])
    return out


@jit
def compose_batch(spin: np.ndarray, psi: np.ndarray) -> np.ndarray:
    """(n, 3), (n, 3) -> (n, 3)."""
    out = np.empty((psi.shape[0], 3))
    for k in range(psi.shape[0]):
        compose_into(spin[k], psi[k], out[k])
    return out


@jit
def cayley_update_batch(w: np.ndarray, psi0: np.ndarray) -> np.ndarray:
    """Rotation vectors (n, 3) of cay(w) exp(hat(psi0)): the mid-point scheme's end of step."""
    out = np.empty((psi0.shape[0], 3))
    C = np.empty((3, 3))
    R0 = np.empty((3, 3))
    R1 = np.empty((3, 3))
    for k in range(psi0.shape[0]):
        cayley_into(w[k], C)
        exp_map_into(psi0[k], R0)
        matmul3_into(C, R0, R1)
        log_map_into(R1, out[k])
    return out


@jit
def cayley_increment_batch(psi0: np.ndarray, psi1: np.ndarray) -> np.ndarray:
    """Cayley parameters (n, 3) of exp(hat(psi1)) exp(hat(psi0))^T: the step from psi0 to psi1."""
    out = np.empty((psi0.shape[0], 3))
    R0 = np.empty((3, 3))
    R1 = np.empty((3, 3))
    D = np.empty((3, 3))
    for k in range(psi0.shape[0]):
        exp_map_into(psi0[k], R0)
        exp_map_into(psi1[k], R1)
        for i in range(3):
            for j in range(3):
                D[i, j] = R1[i, 0] * R0[j, 0] + R1[i, 1] * R0[j, 1] + R1[i, 2] * R0[j, 2]
        cayley_from_matrix_into(D, out[k])
    return out


@jit
def spatial_inertia_batch(psi: np.ndarray, J: np.ndarray) -> np.ndarray:
    """R J R^T (n, 3, 3) with R = exp(hat(psi)), psi (n, 3), J (n, 3, 3)."""
    out = np.empty((psi.shape[0], 3, 3))
    R = np.empty((3, 3))
    RJ = np.empty((3, 3))
    for k in range(psi.shape[0]):
        exp_map_into(psi[k], R)
        matmul3_into(R, J[k], RJ)
        for i in range(3):
            for j in range(3):
                out[k, i, j] = RJ[i, 0] * R[j, 0] + RJ[i, 1] * R[j, 1] + RJ[i, 2] * R[j, 2]
    return out


@jit
def inverse3_into(A, out) -> None:
    """out (3, 3) = A^-1 by the adjugate (A regular, e.g. the tangent operator below 2 pi)."""
    c00 = A[1, 1] * A[2, 2] - A[1, 2] * A[2, 1]
    c01 = A[1, 2] * A[2, 0] - A[1, 0] * A[2, 2]
    c02 = A[1, 0] * A[2, 1] - A[1, 1] * A[2, 0]
    det = A[0, 0] * c00 + A[0, 1] * c01 + A[0, 2] * c02
    out[0, 0] = c00 / det
    out[1, 0] = c01 / det
    out[2, 0] = c02 / det
    out[0, 1] = (A[0, 2] * A[2, 1] - A[0, 1] * A[2, 2]) / det
    out[1, 1] = (A[0, 0] * A[2, 2] - A[0, 2] * A[2, 0]) / det
    out[2, 1] = (A[0, 1] * A[2, 0] - A[0, 0] * A[2, 1]) / det
    out[0, 2] = (A[0, 1] * A[1, 2] - A[0, 2] * A[1, 1]) / det
    out[1, 2] = (A[0, 2] * A[1, 0] - A[0, 0] * A[1, 2]) / det
    out[2, 2] = (A[0, 0] * A[1, 1] - A[0, 1] * A[1, 0]) / det
