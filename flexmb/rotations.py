"""Finite rotations in 3D: rotation vectors, quaternions, Cayley parameters and their tangents.

Used by the 3D beam, the time integrators, rigid bodies and joints. Every function is batched
over leading axes: a rotation vector has shape (..., 3), a rotation matrix (..., 3, 3), a
quaternion (..., 4) with the scalar part first, ``[q0, q1, q2, q3]``.

The maps the Newton iterations call (:func:`exp_map`, :func:`tangent_operator`, :func:`log_map`,
:func:`compose`, :func:`cayley`, :func:`cayley_from_matrix`, :func:`cayley_resolvent` and the
fused :func:`cayley_compose`, :func:`cayley_between`, :func:`rotated_inertia`) run compiled
kernels (:mod:`flexmb.compiled.rotations`, imported on first use); their numpy specifications are
the ``reference_*`` functions here, against which ``tests/test_compiled_rotations.py`` checks
them. :func:`skew`, :func:`axial` and the quaternion functions stay numpy, and so do the planar
helpers :func:`sinc` and :func:`sinc_derivative` (sin x / x, which turns the change of a planar
rotation over a step into a linear form: A(th1) - A(th0) = sinc(dth/2) dth A'(th_m)).

Conventions
-----------
* Rotation vector ``psi``: ``R = exp(hat(psi))`` (Rodrigues), angle ``|psi|`` about ``psi/|psi|``.
  :func:`log_map` returns the principal value ``|psi| <= pi``; :func:`unwrap` continues a
  history beyond pi for plots.
* Spin: a small rotation ``dtheta`` applied on the left, ``R <- exp(hat(dtheta)) R``, is the
  spatial spin; forces conjugate to it are the spatial moments. Newton corrections of 3D
  rotational DOFs are spins.
* :func:`tangent_operator` ``T(psi)``: ``dR R^T = hat(T(psi) dpsi)`` (spatial form of the
  derivative of the exponential map).
* Cayley parameters ``w``: ``R = cay(w) = (I - hat(w)/2)^-1 (I + hat(w)/2)``, |w| = 2 tan(angle/2).
  Their virtue for the mid-point scheme: ``R_{n+1} = cay(w) R_n`` gives
  ``e_{n+1} - e_n = w x (e_n + e_{n+1}) / 2`` exactly for any vector carried by the rotation.
"""
from __future__ import annotations

import numpy as np

_SMALL = 1e-4        # below this angle (rad) the series expansions are used


def sinc(x: np.ndarray) -> np.ndarray:
    """sin(x)/x, analytic (also for complex arguments of tiny imaginary part)."""
    small = np.abs(np.real(x)) < 1e-4
    xs = np.where(small, 1.0, x)
    return np.where(small, 1.0 - x**2 / 6.0 + x**4 / 120.0, np.sin(xs) / xs)


def sinc_derivative(x: np.ndarray) -> np.ndarray:
    """d/dx (sin(x)/x) = (cos x - sinc x) / x, with its series near x = 0."""
    small = np.abs(x) < 1e-4
    xs = np.where(small, 1.0, x)
    return np.where(small, -x / 3.0 + x**3 / 30.0, (np.cos(xs) - np.sin(xs) / xs) / xs)


def skew(v: np.ndarray) -> np.ndarray:
    """Skew-symmetric matrix hat(v) with ``hat(v) a = v x a``; (..., 3) -> (..., 3, 3)."""
    v = np.asarray(v, dtype=float)
    S = np.zeros(v.shape[:-1] + (3, 3))
    S[..., 0, 1], S[..., 0, 2] = -v[..., 2], v[..., 1]
    S[..., 1, 0], S[..., 1, 2] = v[..., 2], -v[..., 0]
    S[..., 2, 0], S[..., 2, 1] = -v[..., 1], v[..., 0]
    return S


def axial(A: np.ndarray) -> np.ndarray:
    """Axial vector of the skew part of A: ``axial(hat(v)) = v``; (..., 3, 3) -> (..., 3)."""
    return 0.5 * np.stack([A[..., 2, 1] - A[..., 1, 2], A[..., 0, 2] - A[..., 2, 0],
                           A[..., 1, 0] - A[..., 0, 1]], -1)


def _coefficients(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """sin(t)/t, (1 - cos t)/t^2, (t - sin t)/t^3 with series below _SMALL."""
    small = theta < _SMALL
    t = np.where(small, 1.0, theta)
    t2 = theta**2
    a = np.where(small, 1.0 - t2 / 6.0 + t2**2 / 120.0, np.sin(t) / t)
    b = np.where(small, 0.5 - t2 / 24.0 + t2**2 / 720.0, 0.5 * (np.sin(0.5 * t) / (0.5 * t))**2)
    c = np.where(small, 1.0 / 6.0 - t2 / 120.0 + t2**2 / 5040.0, (t - np.sin(t)) / t**3)
    return a, b, c


def reference_exp_map(psi: np.ndarray) -> np.ndarray:
    """Rotation matrix exp(hat(psi)) (Rodrigues); (..., 3) -> (..., 3, 3). Specification of
    :func:`exp_map` (compiled), kept for its tests."""
    psi = np.asarray(psi, dtype=float)
    a, b, _ = _coefficients(np.linalg.norm(psi, axis=-1))
    S = skew(psi)
    return np.eye(3) + a[..., None, None] * S + b[..., None, None] * (S @ S)


def reference_tangent_operator(psi: np.ndarray) -> np.ndarray:
    """T(psi) with ``d exp(hat(psi)) exp(hat(psi))^T = hat(T(psi) dpsi)``; (..., 3) -> (..., 3, 3).

    ``T = I + (1 - cos t)/t^2 hat(psi) + (t - sin t)/t^3 hat(psi)^2``, t = |psi|; singular at
    t = 2 pi, which is why rotations are stored as principal values. Specification of
    :func:`tangent_operator` (compiled), kept for its tests.
    """
    psi = np.asarray(psi, dtype=float)
    _, b, c = _coefficients(np.linalg.norm(psi, axis=-1))
    S = skew(psi)
    return np.eye(3) + b[..., None, None] * S + c[..., None, None] * (S @ S)


def quaternion_from_vector(psi: np.ndarray) -> np.ndarray:
    """Unit quaternion of the rotation vector psi; (..., 3) -> (..., 4)."""
    psi = np.asarray(psi, dtype=float)
    theta = np.linalg.norm(psi, axis=-1)
    small = theta < _SMALL
    t = np.where(small, 1.0, theta)
    s = np.where(small, 0.5 - theta**2 / 48.0, np.sin(0.5 * t) / t)     # sin(t/2)/t
    return np.concatenate([np.cos(0.5 * theta)[..., None], s[..., None] * psi], -1)


def quaternion_to_vector(q: np.ndarray) -> np.ndarray:
    """Principal rotation vector (|psi| <= pi) of a unit quaternion; (..., 4) -> (..., 3)."""
    q = np.asarray(q, dtype=float)
    q = np.where(q[..., :1] < 0.0, -q, q)                               # same rotation, q0 >= 0
    vn = np.linalg.norm(q[..., 1:], axis=-1)
    angle = 2.0 * np.arctan2(vn, q[..., 0])                             # in [0, pi]
    small = vn < 1e-12
    factor = np.where(small, 2.0 / np.maximum(q[..., 0], 1e-300), angle / np.where(small, 1.0, vn))
    return factor[..., None] * q[..., 1:]


def quaternion_multiply(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Product p q (rotation q first, then p); (..., 4) x (..., 4) -> (..., 4)."""
    p0, pv = p[..., :1], p[..., 1:]
    q0, qv = q[..., :1], q[..., 1:]
    return np.concatenate([p0 * q0 - np.sum(pv * qv, -1, keepdims=True),
                           p0 * qv + q0 * pv + np.cross(pv, qv)], -1)


def quaternion_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrix of a unit quaternion; (..., 4) -> (..., 3, 3)."""
    q0, v = q[..., 0], q[..., 1:]
    S = skew(v)
    return np.eye(3) + 2.0 * q0[..., None, None] * S + 2.0 * (S @ S)


def matrix_to_quaternion(R: np.ndarray) -> np.ndarray:
    """Unit quaternion (q0 >= 0) of a rotation matrix, robust for all angles; (..., 3, 3) -> (..., 4)."""
    R = np.asarray(R, dtype=float)
    tr = np.trace(R, axis1=-2, axis2=-1)
    diag = np.diagonal(R, axis1=-2, axis2=-1)
    # 4 q_k^2 for k = 0..3; build from the largest to avoid cancellation (Shepperd's method)
    sq = np.stack([1.0 + tr, 1.0 + 2.0 * diag[..., 0] - tr, 1.0 + 2.0 * diag[..., 1] - tr,
                   1.0 + 2.0 * diag[..., 2] - tr], -1)
    k = np.argmax(sq, axis=-1)
    w = axial(R) * 2.0                                                  # (R32 - R23, ...) = 4 q0 q
    sym = np.stack([R[..., 0, 1] + R[..., 1, 0], R[..., 0, 2] + R[..., 2, 0],
                    R[..., 1, 2] + R[..., 2, 1]], -1)                   # 4 q1q2, 4 q1q3, 4 q2q3
    big = 0.5 * np.sqrt(np.maximum(np.take_along_axis(sq, k[..., None], -1)[..., 0], 0.0))
    q = np.empty(R.shape[:-2] + (4,))
    cand = [np.stack([big, w[..., 0] / (4 * big), w[..., 1] / (4 * big), w[..., 2] / (4 * big)], -1),
            np.stack([w[..., 0] / (4 * big), big, sym[..., 0] / (4 * big), sym[..., 1] / (4 * big)], -1),
            np.stack([w[..., 1] / (4 * big), sym[..., 0] / (4 * big), big, sym[..., 2] / (4 * big)], -1),
            np.stack([w[..., 2] / (4 * big), sym[..., 1] / (4 * big), sym[..., 2] / (4 * big), big], -1)]
    for i in range(4):
        q = np.where((k == i)[..., None], cand[i], q)
    q = np.where(q[..., :1] < 0.0, -q, q)
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def reference_log_map(R: np.ndarray) -> np.ndarray:
    """Principal rotation vector (|psi| <= pi) of a rotation matrix; (..., 3, 3) -> (..., 3).
    Specification of :func:`log_map` (compiled), kept for its tests."""
    return quaternion_to_vector(matrix_to_quaternion(R))


def reference_compose(spin: np.ndarray, psi: np.ndarray) -> np.ndarray:
    """Principal rotation vector of ``exp(hat(spin)) exp(hat(psi))``; (..., 3) each -> (..., 3).
    Specification of :func:`compose` (compiled), kept for its tests."""
    return quaternion_to_vector(quaternion_multiply(quaternion_from_vector(spin), quaternion_from_vector(psi)))


def unwrap(psi: np.ndarray) -> np.ndarray:
    """Continue a history of principal rotation vectors (n, 3) beyond |psi| = pi, for plots.

    Each entry is replaced by the equivalent vector ``psi + 2 pi k psi/|psi|`` closest to the
    previous (already unwrapped) entry.
    """
    psi = np.array(psi, dtype=float)
    for i in range(1, len(psi)):
        t = np.linalg.norm(psi[i])
        prev = np.linalg.norm(psi[i - 1])
        if t < 1e-12 and prev < 1e-12:
            continue
        # a (near) identity has no axis of its own: continue along the previous one
        n = psi[i] / t if t >= 1e-12 else psi[i - 1] / prev
        k = np.round(n @ (psi[i - 1] - psi[i]) / (2.0 * np.pi))
        psi[i] = psi[i] + 2.0 * np.pi * k * n
    return psi


def reference_cayley(w: np.ndarray) -> np.ndarray:
    """Rotation matrix of Cayley parameters w; (..., 3) -> (..., 3, 3). Specification of
    :func:`cayley` (compiled), kept for its tests."""
    w = np.asarray(w, dtype=float)
    S = skew(w)
    f = 4.0 / (4.0 + np.sum(w * w, -1))
    return np.eye(3) + f[..., None, None] * (S + 0.5 * S @ S)


def reference_cayley_from_matrix(R: np.ndarray) -> np.ndarray:
    """Cayley parameters of a rotation by less than pi: ``w = 4 axial(R) / (1 + tr R)``.

    A half turn gives infinite parameters (no warning); callers treat them as a failed iterate.
    Specification of :func:`cayley_from_matrix` (compiled), kept for its tests.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return 4.0 * axial(R) / (1.0 + np.trace(R, axis1=-2, axis2=-1))[..., None]


def reference_cayley_resolvent(w: np.ndarray) -> np.ndarray:
    """G(w) = (I - hat(w)/2)^-1 = (I + hat(w)/2 + w w^T / 4) / (1 + |w|^2 / 4); (..., 3) -> (..., 3, 3).

    For ``e_{n+1} = cay(w) e_n``: ``d e_{n+1} = -G(w) hat(e_m) dw`` with e_m the average of e_n and
    e_{n+1}. Specification of :func:`cayley_resolvent` (compiled), kept for its tests.
    """
    w = np.asarray(w, dtype=float)
    ww = w[..., :, None] * w[..., None, :]
    with np.errstate(invalid="ignore", over="ignore"):
        return (np.eye(3) + 0.5 * skew(w) + 0.25 * ww) / (1.0 + 0.25 * np.sum(w * w, -1))[..., None, None]


# ------------------------------------------------------------------ compiled (public) maps
_compiled = None


def _kernels():
    """flexmb.compiled.rotations, imported on first use (numba stays out of ``import flexmb``)."""
    global _compiled
    if _compiled is None:
        from flexmb.compiled import rotations
        _compiled = rotations
    return _compiled


def _batched(kernel, x: np.ndarray, tail_in: int, tail_out: tuple[int, ...]) -> np.ndarray:
    """Apply a kernel on (n, *tail_in) arrays to x (..., *tail_in) -> (..., *tail_out)."""
    x = np.ascontiguousarray(x, dtype=float)
    lead = x.shape[:x.ndim - tail_in]
    return kernel(x.reshape((-1,) + x.shape[x.ndim - tail_in:])).reshape(lead + tail_out)


def exp_map(psi: np.ndarray) -> np.ndarray:
    """Rotation matrix exp(hat(psi)) (Rodrigues); (..., 3) -> (..., 3, 3)."""
    return _batched(_kernels().exp_map_batch, psi, 1, (3, 3))


def tangent_operator(psi: np.ndarray) -> np.ndarray:
    """T(psi) with ``d exp(hat(psi)) exp(hat(psi))^T = hat(T(psi) dpsi)``; (..., 3) -> (..., 3, 3).

    ``T = I + (1 - cos t)/t^2 hat(psi) + (t - sin t)/t^3 hat(psi)^2``, t = |psi|; singular at
    t = 2 pi, which is why rotations are stored as principal values.
    """
    return _batched(_kernels().tangent_operator_batch, psi, 1, (3, 3))


def log_map(R: np.ndarray) -> np.ndarray:
    """Principal rotation vector (|psi| <= pi) of a rotation matrix; (..., 3, 3) -> (..., 3)."""
    return _batched(_kernels().log_map_batch, R, 2, (3,))


def compose(spin: np.ndarray, psi: np.ndarray) -> np.ndarray:
    """Principal rotation vector of ``exp(hat(spin)) exp(hat(psi))``; (..., 3) each -> (..., 3)."""
    spin, psi = np.asarray(spin, dtype=float), np.asarray(psi, dtype=float)
    if spin.shape != psi.shape:
        spin, psi = np.broadcast_arrays(spin, psi)
    lead = psi.shape[:-1]
    out = _kernels().compose_batch(np.ascontiguousarray(spin).reshape(-1, 3),
                                   np.ascontiguousarray(psi).reshape(-1, 3))
    return out.reshape(lead + (3,))


def cayley(w: np.ndarray) -> np.ndarray:
    """Rotation matrix of Cayley parameters w; (..., 3) -> (..., 3, 3)."""
    return _batched(_kernels().cayley_batch, w, 1, (3, 3))


def cayley_from_matrix(R: np.ndarray) -> np.ndarray:
    """Cayley parameters of a rotation by less than pi: ``w = 4 axial(R) / (1 + tr R)``.

    A half turn gives infinite parameters (no warning); callers treat them as a failed iterate.
    """
    return _batched(_kernels().cayley_from_matrix_batch, R, 2, (3,))


def cayley_resolvent(w: np.ndarray) -> np.ndarray:
    """G(w) = (I - hat(w)/2)^-1 = (I + hat(w)/2 + w w^T / 4) / (1 + |w|^2 / 4); (..., 3) -> (..., 3, 3).

    For ``e_{n+1} = cay(w) e_n``: ``d e_{n+1} = -G(w) hat(e_m) dw`` with e_m the average of e_n and
    e_{n+1}.
    """
    return _batched(_kernels().cayley_resolvent_batch, w, 1, (3, 3))


def cayley_compose(w: np.ndarray, psi0: np.ndarray) -> np.ndarray:
    """Principal rotation vector of ``cay(w) exp(hat(psi0))`` (the mid-point scheme's end of a step
    with Cayley parameters w); (n, 3) each -> (n, 3). Specification:
    ``reference_log_map(reference_cayley(w) @ reference_exp_map(psi0))``."""
    return _kernels().cayley_update_batch(np.ascontiguousarray(w, dtype=float),
                                          np.ascontiguousarray(psi0, dtype=float))


def cayley_between(psi0: np.ndarray, psi1: np.ndarray) -> np.ndarray:
    """Cayley parameters w (n, 3) with ``exp(hat(psi1)) = cay(w) exp(hat(psi0))`` (rotations by
    less than pi between them); (n, 3) each. Specification:
    ``reference_cayley_from_matrix(reference_exp_map(psi1) @ reference_exp_map(psi0).T)``."""
    return _kernels().cayley_increment_batch(np.ascontiguousarray(psi0, dtype=float),
                                             np.ascontiguousarray(psi1, dtype=float))


def rotated_inertia(psi: np.ndarray, J: np.ndarray) -> np.ndarray:
    """``R J R^T`` (n, 3, 3) with R = exp(hat(psi)), psi (n, 3), J (n, 3, 3)."""
    return _kernels().spatial_inertia_batch(np.ascontiguousarray(psi, dtype=float),
                                            np.ascontiguousarray(J, dtype=float))
