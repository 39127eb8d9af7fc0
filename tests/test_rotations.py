"""Unit tests of flexmb.rotations: exp/log maps, tangent operator, quaternions, Cayley parameters.

Every test runs on a batch of random rotations drawn with a fixed seed: large ones (angles up to pi
and, where the map is defined there, beyond), tiny ones (1e-9 ... 1e-5 rad, inside the series
branches) and ones at or next to pi (pi - 1e-9, exactly pi). Failures name the worst sample and
by how much it missed.
"""
from __future__ import annotations

from math import factorial

import numpy as np
import pytest
import scipy.linalg

from flexmb.rotations import (_SMALL, axial, cayley, cayley_from_matrix, cayley_resolvent, compose, exp_map,
                              log_map, matrix_to_quaternion, quaternion_from_vector, quaternion_multiply,
                              quaternion_to_matrix, quaternion_to_vector, skew, tangent_operator, unwrap)

N = 400
NEAR_PI = (np.pi - 1e-9, np.pi)


# ------------------------------------------------------------------------------ helpers
def _axes(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.normal(size=(n, 3))
    return v / np.linalg.norm(v, axis=1)[:, None]                      # (n, 3)


def _vectors(rng: np.random.Generator, angles: np.ndarray) -> np.ndarray:
    """Rotation vectors (n, 3) with the given angles (n,) about random axes."""
    return np.asarray(angles, dtype=float)[:, None] * _axes(rng, len(angles))


def _large(rng: np.random.Generator, n: int = N, hi: float = np.pi) -> np.ndarray:
    return _vectors(rng, rng.uniform(0.0, hi, n))


def _tiny(rng: np.random.Generator, n: int = N) -> np.ndarray:
    return _vectors(rng, 10.0 ** rng.uniform(-9.0, -5.0, n))


def _near_pi(rng: np.random.Generator, n: int = 20) -> np.ndarray:
    return _vectors(rng, np.repeat(NEAR_PI, n))


def _norm(v: np.ndarray) -> np.ndarray:
    return np.linalg.norm(v, axis=-1)


def _same_rotation_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|a - b| (n,), or |a - b'| with b' = b - 2 pi b/|b| (the same rotation) when that is smaller.

    Only matters at angle pi, where +pi n and -pi n are both principal values.
    """
    t = np.maximum(_norm(b), 1e-300)[:, None]
    return np.minimum(_norm(a - b), _norm(a - (b - 2.0 * np.pi * b / t)))


def _worst(err: np.ndarray) -> tuple[int, float]:
    i = int(np.argmax(err))
    return i, float(err[i])


def _shepperd_branch(R: np.ndarray) -> np.ndarray:
    """Which of 4 q0^2, 4 q1^2, 4 q2^2, 4 q3^2 is largest for each matrix (n,): Shepperd's pivot."""
    tr = np.trace(R, axis1=1, axis2=2)
    d = np.diagonal(R, axis1=1, axis2=2)
    return np.argmax(np.column_stack([1.0 + tr, 1.0 + 2.0 * d - tr[:, None]]), axis=1)


def _quaternions(angles: np.ndarray, axes: np.ndarray) -> np.ndarray:
    half = 0.5 * np.asarray(angles)
    return np.concatenate([np.cos(half)[:, None], np.sin(half)[:, None] * axes], axis=1)   # (n, 4)


def _reference_coefficients(t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """sin t/t, (1 - cos t)/t^2, (t - sin t)/t^3 free of cancellation, independently of the module.

    The second in half-angle form 2 sin^2(t/2)/t^2; the third as a 12-term Taylor sum below t = 1
    (remainder < 1e-25) and in closed form above, where t - sin t loses no more than a digit.
    """
    a = np.sin(t) / t
    b = 0.5 * (np.sin(0.5 * t) / (0.5 * t)) ** 2
    k = np.arange(12)
    inv_fact = np.array([1.0 / factorial(2 * j + 3) for j in k])
    series = np.sum((-1.0) ** k * t[:, None] ** (2 * k) * inv_fact, axis=1)
    c = np.where(t < 1.0, series, (t - np.sin(t)) / t**3)
    return a, b, c


def _spin_jacobian_fd(central_fd, psi: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central-difference T(psi) (n, 3, 3): column j is axial(dR/dpsi_j R^T)."""
    n = len(psi)
    dR = central_fd(lambda p: exp_map(p).reshape(n, 9), psi, h).reshape(n, 3, 3, 3)   # [n, i, k, j] = dR_ik/dpsi_j
    W = np.einsum("nikj,nlk->njil", dR, exp_map(psi))                                 # (n, j, 3, 3) = dR_j R^T
    return axial(W).transpose(0, 2, 1)                                                 # (n, 3, 3)


# --------------------------------------------------------------------------- skew, axial
def test_skew_is_cross_product_and_axial_inverts_it(rng):
    v = rng.normal(size=(N, 3)) * 10.0 ** rng.uniform(-9.0, 3.0, (N, 1))
    a = rng.normal(size=(N, 3))
    S = skew(v)                                                          # (N, 3, 3)
    err = _norm(np.einsum("nij,nj->ni", S, a) - np.cross(v, a)) / (_norm(v) * _norm(a))
    i, e = _worst(err)
    assert e < 1e-15, f"skew(v) a differs from v x a at sample {i} by {e:.2e} (relative)"
    np.testing.assert_array_equal(S, -S.transpose(0, 2, 1), err_msg="skew(v) is not antisymmetric")
    np.testing.assert_array_equal(axial(S), v, err_msg="axial(skew(v)) != v")
    A = rng.normal(size=(N, 3, 3))
    np.testing.assert_allclose(axial(A), axial(0.5 * (A - A.transpose(0, 2, 1))), rtol=0, atol=1e-15,
                               err_msg="axial(A) is not the axial vector of the skew part of A")


# ---------------------------------------------------------------------------- exp / log
def test_exp_map_is_proper_orthogonal_and_matches_expm(rng):
    psi = np.concatenate([_large(rng, N, 4.0 * np.pi), _tiny(rng), _near_pi(rng)])
    R = exp_map(psi)                                                     # (n, 3, 3)
    orth = np.abs(R.transpose(0, 2, 1) @ R - np.eye(3)).max(axis=(1, 2))
    i, e = _worst(orth)
    assert e < 1e-14, f"exp_map not orthogonal at |psi| = {_norm(psi[i]):.6g}: |R^T R - I| = {e:.2e}"
    det = np.abs(np.linalg.det(R) - 1.0)
    i, e = _worst(det)
    assert e < 1e-14, f"det exp_map(psi) differs from 1 at |psi| = {_norm(psi[i]):.6g} by {e:.2e}"
    err = np.abs(R - scipy.linalg.expm(skew(psi))).max(axis=(1, 2))
    i, e = _worst(err)                          # expm itself is off by 1e-13 at |psi| ~ 8 (vs 40-digit mpmath)
    assert e < 1e-12, f"exp_map differs from scipy expm(hat(psi)) at |psi| = {_norm(psi[i]):.6g} by {e:.2e}"


def _across_the_series_switch(rng: np.random.Generator) -> np.ndarray:
    """Angles (n,) from 1e-9 to 3.2 rad, log-uniform, plus ones on either side of _SMALL."""
    return np.concatenate([10.0 ** rng.uniform(-9.0, 0.5, N),
                           _SMALL * (1.0 + np.array([-1e-3, -1e-9, 0.0, 1e-9, 1e-3, 1e-1, 1.0]))])


def test_series_branches_match_closed_forms(rng):
    """exp_map, tangent_operator and quaternion_from_vector on both sides of the series switch.

    The skew part of R and the vector part of q carry the first-order terms at full relative
    precision even at 1e-9 rad, so they are compared relative to themselves: axial(R) = sin t/t psi,
    q = [cos(t/2), sin(t/2)/t psi].
    """
    t = _across_the_series_switch(rng)
    psi = _vectors(rng, t)
    a, b, c = _reference_coefficients(t)
    S = skew(psi)
    R = exp_map(psi)
    err = _norm(axial(R) - a[:, None] * psi) / (a * t)
    i, e = _worst(err)
    assert e < 1e-14, f"axial(exp_map(psi)) at |psi| = {t[i]:.3e} differs from sin t/t psi by {e:.2e} (relative)"
    err = np.abs(R - (np.eye(3) + a[:, None, None] * S + b[:, None, None] * S @ S)).max(axis=(1, 2))
    i, e = _worst(err)                                                  # a few ulps of |b S^2| <= 5
    assert e < 1e-14, f"exp_map at |psi| = {t[i]:.3e} differs from the closed form by {e:.2e}"
    err = np.abs(tangent_operator(psi) - (np.eye(3) + b[:, None, None] * S + c[:, None, None] * S @ S)).max(axis=(1, 2))
    i, e = _worst(err)
    assert e < 1e-12, f"tangent_operator at |psi| = {t[i]:.3e} differs from the closed form by {e:.2e}"
    q = quaternion_from_vector(psi)
    half_sinc = 0.5 * np.sin(0.5 * t) / (0.5 * t)                       # sin(t/2)/t
    err = _norm(q[:, 1:] - half_sinc[:, None] * psi) / (half_sinc * t)
    i, e = _worst(err)
    assert e < 1e-14, f"quaternion vector part at |psi| = {t[i]:.3e} off by {e:.2e} (relative)"
    err = np.abs(q[:, 0] - np.cos(0.5 * t)).max()
    assert err < 1e-15, f"quaternion scalar part differs from cos(t/2) by {err:.2e}"


def test_tangent_operator_first_order_term_keeps_full_precision(rng):
    """axial(T) = (1 - cos t)/t^2 psi, the spin of a small dpsi along psi x ., relative to itself."""
    t = _across_the_series_switch(rng)
    psi = _vectors(rng, t)
    _, b, _ = _reference_coefficients(t)
    err = _norm(axial(tangent_operator(psi)) - b[:, None] * psi) / (b * t)
    i, e = _worst(err)
    assert e < 1e-12, f"axial(tangent_operator(psi)) at |psi| = {t[i]:.6e} off by {e:.2e} (relative)"


def test_log_inverts_exp_for_principal_vectors(rng):
    psi = np.concatenate([_large(rng), _tiny(rng), _vectors(rng, np.full(20, NEAR_PI[0])),
                          _vectors(rng, 10.0 ** rng.uniform(-14.0, -12.0, 20))])   # last: below q's 1e-12 switch
    back = log_map(exp_map(psi))
    err = _norm(back - psi) / _norm(psi)
    i, e = _worst(err)
    assert e < 1e-12, (f"log_map(exp_map(psi)) at |psi| = {_norm(psi[i]):.17g} returned {back[i]}, "
                       f"expected {psi[i]}: off by {e:.2e} (relative)")
    assert np.all(log_map(np.broadcast_to(np.eye(3), (3, 3, 3))) == 0.0), "log_map(I) is not zero"


def test_log_at_exactly_pi_gives_one_of_the_two_principal_vectors(rng):
    axes = np.concatenate([np.eye(3), -np.eye(3), _axes(rng, 40)])
    psi = np.pi * axes
    back = log_map(exp_map(psi))
    err = _same_rotation_distance(back, psi)
    i, e = _worst(err)
    assert e < 1e-12, f"log_map at angle pi about {axes[i]} returned {back[i]}, expected +-{psi[i]} (off {e:.2e})"
    err = np.abs(_norm(back) - np.pi).max()
    assert err < 1e-14, f"|log_map| at angle pi differs from pi by {err:.2e}"


def test_log_of_rotation_beyond_pi_is_the_equivalent_principal_vector(rng):
    t = rng.uniform(np.pi + 1e-3, 3.0 * np.pi - 1e-3, N)
    psi = _vectors(rng, t)
    expected = psi - 2.0 * np.pi * psi / t[:, None]                      # angle t - 2 pi in (-pi, pi)
    back = log_map(exp_map(psi))
    err = _norm(back - expected)
    i, e = _worst(err)
    assert e < 1e-12, (f"log_map(exp_map(psi)) at |psi| = {t[i]:.6f}: got {back[i]}, expected {expected[i]} "
                       f"(off by {e:.2e} rad)")
    assert _norm(back).max() <= np.pi, "log_map returned a vector longer than pi"


# ----------------------------------------------------------------------- tangent operator
@pytest.mark.parametrize("size", ["large", "small"])
def test_tangent_operator_matches_central_fd_of_spatial_spin(size, rng, central_fd, relative_error):
    psi = _large(rng, N, 3.0) if size == "large" else _vectors(rng, 10.0 ** rng.uniform(-9.0, -3.0, N))
    T = tangent_operator(psi)
    err = relative_error(T, _spin_jacobian_fd(central_fd, psi))
    i, e = _worst(err)
    assert e < 1e-6, f"tangent_operator at |psi| = {_norm(psi[i]):.3e} vs central FD of axial(dR R^T): off by {e:.2e}"


# ---------------------------------------------------------------------------- quaternions
def test_quaternion_from_vector_matches_exp_map(rng):
    psi = np.concatenate([_large(rng, N, 3.0 * np.pi), _tiny(rng), _near_pi(rng)])
    q = quaternion_from_vector(psi)
    err = np.abs(_norm(q) - 1.0).max()
    assert err < 1e-15, f"quaternion_from_vector is not a unit quaternion: | |q| - 1 | = {err:.2e}"
    err = np.abs(quaternion_to_matrix(q) - exp_map(psi)).max(axis=(1, 2))
    i, e = _worst(err)
    assert e < 1e-14, (f"quaternion_to_matrix(quaternion_from_vector(psi)) vs exp_map at |psi| = "
                       f"{_norm(psi[i]):.6g}: off by {e:.2e}")
    principal = np.concatenate([_large(rng), _tiny(rng), _vectors(rng, np.full(20, NEAR_PI[0]))])
    back = quaternion_to_vector(quaternion_from_vector(principal))
    err = _norm(back - principal) / _norm(principal)
    i, e = _worst(err)
    assert e < 1e-12, f"quaternion_to_vector(quaternion_from_vector(psi)) at |psi| = {_norm(principal[i]):.6g}: {e:.2e}"
    q = quaternion_from_vector(principal[:2 * N])                       # angles < pi: q and -q, one vector
    err = _norm(quaternion_to_vector(-q) - quaternion_to_vector(q)) / _norm(principal[:2 * N])
    i, e = _worst(err)
    assert e < 1e-14, f"q and -q give different rotation vectors at |psi| = {_norm(principal[i]):.3e}: {e:.2e}"


def test_quaternion_multiply_is_matrix_product(rng):
    p, q = rng.normal(size=(2, N, 4))
    p, q = p / _norm(p)[:, None], q / _norm(q)[:, None]                 # any sign of q0
    pq = quaternion_multiply(p, q)
    err = np.abs(_norm(pq) - 1.0).max()
    assert err < 1e-15, f"product of unit quaternions has norm off by {err:.2e}"
    err = np.abs(quaternion_to_matrix(pq) - quaternion_to_matrix(p) @ quaternion_to_matrix(q)).max(axis=(1, 2))
    i, e = _worst(err)
    assert e < 1e-14, f"R(p q) != R(p) R(q) at sample {i}: off by {e:.2e}"
    err = np.abs(quaternion_multiply(pq, np.concatenate([q[:, :1], -q[:, 1:]], 1)) - p).max()
    assert err < 1e-15, f"(p q) q^-1 differs from p by {err:.2e}"


def test_matrix_to_quaternion_round_trip_on_all_four_branches(rng):
    axes, angles = [], []
    for e in np.concatenate([np.eye(3), -np.eye(3)]):                  # about +-x, +-y, +-z ...
        for tilt in (0.0, 1e-6, 1e-3):                                  # ... and slightly off them
            for angle in (np.pi, np.pi - 1e-9, np.pi - 1e-3, np.pi + 1e-3):
                n = e + tilt * rng.normal(size=3)
                axes.append(n / np.linalg.norm(n))
                angles.append(angle)
    axes, angles = np.array(axes), np.array(angles)
    generic = rng.normal(size=(N, 4))
    q = np.concatenate([_quaternions(angles, axes),
                        generic / _norm(generic)[:, None],              # any angle, q0 of either sign
                        _quaternions(10.0 ** rng.uniform(-9.0, -5.0, 50), _axes(rng, 50))])
    R = quaternion_to_matrix(q)
    covered = np.bincount(_shepperd_branch(R), minlength=4)
    assert np.all(covered > 0), f"test set no longer exercises every pivot of Shepperd's method: {covered}"

    back = matrix_to_quaternion(R)
    assert np.all(back[:, 0] >= 0.0), "matrix_to_quaternion returned q0 < 0"
    expected = np.where(q[:, :1] < 0.0, -q, q)
    err = np.where(np.abs(q[:, 0]) < 1e-12, np.minimum(_norm(back - expected), _norm(back + expected)),
                   _norm(back - expected))                               # at angle pi, q and -q both have q0 = 0
    i, e = _worst(err)
    assert e < 1e-13, (f"matrix_to_quaternion(quaternion_to_matrix(q)) for q = {q[i]} "
                       f"(pivot {_shepperd_branch(R[i:i + 1])[0]}) returned {back[i]}: off by {e:.2e}")
    err = np.abs(quaternion_to_matrix(back) - R).max(axis=(1, 2))
    i, e = _worst(err)
    assert e < 1e-14, f"quaternion_to_matrix(matrix_to_quaternion(R)) != R at sample {i}: off by {e:.2e}"


def test_matrix_to_quaternion_of_random_orthogonal_matrices(rng):
    Q, Rq = np.linalg.qr(rng.normal(size=(N, 3, 3)))
    Q = Q * np.sign(np.diagonal(Rq, axis1=1, axis2=2))[:, None, :]
    Q = Q * np.sign(np.linalg.det(Q))[:, None, None]                    # proper rotations
    err = np.abs(quaternion_to_matrix(matrix_to_quaternion(Q)) - Q).max(axis=(1, 2))
    i, e = _worst(err)
    assert e < 1e-14, f"quaternion round trip of a QR rotation matrix off by {e:.2e} at sample {i}"
    err = np.abs(exp_map(log_map(Q)) - Q).max(axis=(1, 2))
    i, e = _worst(err)
    assert e < 1e-14, f"exp_map(log_map(R)) != R for a QR rotation matrix: off by {e:.2e} at sample {i}"


# --------------------------------------------------------------------------------- compose
def test_compose_is_log_of_matrix_product(rng):
    spin = np.concatenate([_large(rng), _tiny(rng), _large(rng, 40), _tiny(rng, 40), _near_pi(rng)])
    psi = np.concatenate([_large(rng), _large(rng), _near_pi(rng), _tiny(rng, 40), _large(rng, 40)])
    got = compose(spin, psi)
    ref = log_map(exp_map(spin) @ exp_map(psi))
    err = _same_rotation_distance(got, ref) / np.minimum(1.0, _norm(ref))   # relative for small results
    i, e = _worst(err)
    assert e < 1e-12, (f"compose(spin={spin[i]}, psi={psi[i]}) returned {got[i]}, expected {ref[i]}: "
                       f"off by {e:.2e}")
    assert _norm(got).max() <= np.pi, "compose returned a vector longer than pi"


def test_compose_derivative_in_the_spin_is_inverse_tangent_operator(rng, central_fd, relative_error):
    """d compose(spin, psi)/d spin at spin = 0 is T(psi)^-1: a Newton spin maps to dpsi = T^-1 dtheta."""
    psi = np.concatenate([_large(rng, N, 3.0), _tiny(rng, 50)])
    J = central_fd(lambda s: compose(s, psi), np.zeros_like(psi), 1e-6)
    err = relative_error(J, np.linalg.inv(tangent_operator(psi)))
    i, e = _worst(err)
    assert e < 1e-6, f"d compose/d spin at |psi| = {_norm(psi[i]):.3e} differs from T(psi)^-1 by {e:.2e}"


# ---------------------------------------------------------------------------------- unwrap
def test_unwrap_recovers_continuous_angle(rng):
    """Sweep out to 6 pi and back to 2.5 pi in random steps (never landing on a multiple of 2 pi)."""
    for n in np.concatenate([np.eye(3)[:1], -np.eye(3)[2:], _axes(rng, 4)]):
        up = np.cumsum(rng.uniform(0.0, 0.1, 400))
        up = np.concatenate([[0.0], up[up < 6.0 * np.pi], [6.0 * np.pi - 1e-3]])
        down = up[-1] - np.cumsum(rng.uniform(0.0, 0.1, 200))
        angles = np.concatenate([up, down[down > 2.5 * np.pi]])
        wrapped = log_map(exp_map(angles[:, None] * n))
        assert _norm(wrapped).max() <= np.pi
        err = _norm(unwrap(wrapped) - angles[:, None] * n)
        i, e = _worst(err)
        assert e < 1e-12, (f"unwrap about {n}: sample {i} (angle {angles[i]:.6f}) returned "
                           f"{unwrap(wrapped)[i]}, expected {angles[i] * n}: off by {e:.2e} rad")


def test_unwrap_of_uniform_sweep_through_multiples_of_two_pi(rng):
    n = _axes(rng, 1)[0]
    angles = np.linspace(0.0, 6.0 * np.pi, 601)                          # samples 200, 400, 600 are 2, 4, 6 pi
    err = _norm(unwrap(log_map(exp_map(angles[:, None] * n))) - angles[:, None] * n)
    i, e = _worst(err)
    assert e < 1e-12, f"unwrap of a uniform 0..6 pi sweep: sample {i} (angle {angles[i]:.6f}) off by {e:.3f} rad"


# ---------------------------------------------------------------------------------- Cayley
def _cayley_vectors(rng: np.random.Generator, max_angle: float) -> np.ndarray:
    """Cayley parameters w = 2 tan(angle/2) n (n, 3): large angles, tiny ones and ones next to max_angle."""
    angles = np.concatenate([rng.uniform(0.0, max_angle, N), 10.0 ** rng.uniform(-9.0, -5.0, N),
                             np.full(10, max_angle)])
    return 2.0 * np.tan(0.5 * angles)[:, None] * _axes(rng, len(angles))


def test_cayley_is_rotation_by_two_arctan(rng):
    w = _cayley_vectors(rng, np.pi - 1e-6)                               # |w| up to 4e6
    R = cayley(w)
    orth = np.abs(R.transpose(0, 2, 1) @ R - np.eye(3)).max(axis=(1, 2))
    i, e = _worst(orth)
    assert e < 1e-14, f"cayley(w) not orthogonal at |w| = {_norm(w[i]):.3e}: |R^T R - I| = {e:.2e}"
    det = np.abs(np.linalg.det(R) - 1.0)
    i, e = _worst(det)
    assert e < 1e-14, f"det cayley(w) differs from 1 at |w| = {_norm(w[i]):.3e} by {e:.2e}"
    t = _norm(w)
    psi = (2.0 * np.arctan(0.5 * t) / t)[:, None] * w
    err = np.abs(R - exp_map(psi)).max(axis=(1, 2))
    i, e = _worst(err)
    assert e < 1e-14, f"cayley(w) != exp_map(2 atan(|w|/2) w/|w|) at |w| = {t[i]:.3e}: off by {e:.2e}"
    err = np.abs(cayley(-w) - R.transpose(0, 2, 1)).max()
    assert err < 1e-15, f"cayley(-w) != cayley(w)^T: off by {err:.2e}"


def test_cayley_from_matrix_inverts_cayley_below_pi(rng):
    w = _cayley_vectors(rng, 3.0)                                        # |w| up to 28
    back = cayley_from_matrix(cayley(w))
    err = _norm(back - w) / _norm(w)
    i, e = _worst(err)
    assert e < 1e-13, f"cayley_from_matrix(cayley(w)) at |w| = {_norm(w[i]):.3e}: off by {e:.2e} (relative)"
    psi = _large(rng, N, 3.0)                                            # from the rotation-vector side
    w_exp = (2.0 * np.tan(0.5 * _norm(psi)) / _norm(psi))[:, None] * psi
    err = _norm(cayley_from_matrix(exp_map(psi)) - w_exp) / _norm(w_exp)
    i, e = _worst(err)
    assert e < 1e-13, (f"cayley_from_matrix(exp_map(psi)) != 2 tan(|psi|/2) psi/|psi| at |psi| = "
                       f"{_norm(psi[i]):.3f}: off by {e:.2e} (relative)")


def test_cayley_mid_point_identity(rng):
    """e1 - e0 = w x (e0 + e1)/2 for e1 = cay(w) e0, to round-off relative to |e0|."""
    w = _cayley_vectors(rng, 3.0)
    e0 = rng.normal(size=w.shape) * 10.0 ** rng.uniform(-3.0, 3.0, (len(w), 1))
    e1 = np.einsum("nij,nj->ni", cayley(w), e0)
    err = _norm((e1 - e0) - np.cross(w, 0.5 * (e0 + e1))) / _norm(e0)
    i, e = _worst(err)
    assert e < 1e-13, (f"mid-point identity at |w| = {_norm(w[i]):.3e}: e1 - e0 misses w x e_m by {e:.2e} |e0|")


def test_cayley_resolvent_is_inverse_and_gives_derivative(rng, central_fd, relative_error):
    w = _cayley_vectors(rng, 3.0)
    G = cayley_resolvent(w)
    err = relative_error(G, np.linalg.inv(np.eye(3) - 0.5 * skew(w)))
    i, e = _worst(err)
    assert e < 1e-13, f"cayley_resolvent(w) != inv(I - hat(w)/2) at |w| = {_norm(w[i]):.3e}: off by {e:.2e}"
    e0 = rng.normal(size=w.shape)
    e1 = np.einsum("nij,nj->ni", cayley(w), e0)
    J = -G @ skew(0.5 * (e0 + e1))                                       # (n, 3, 3) = d e1 / d w
    J_fd = central_fd(lambda v: np.einsum("nij,nj->ni", cayley(v), e0), w, 1e-6)
    err = relative_error(J, J_fd)
    i, e = _worst(err)
    assert e < 1e-6, f"d e1/dw = -G hat(e_m) vs central FD at |w| = {_norm(w[i]):.3e}: off by {e:.2e}"


# ----------------------------------------------------------------------------- batching
@pytest.mark.parametrize("fun, kind", [
    (skew, "v"), (axial, "M"), (exp_map, "v"), (tangent_operator, "v"), (quaternion_from_vector, "v"),
    (quaternion_to_vector, "q"), (quaternion_to_matrix, "q"), (matrix_to_quaternion, "M"), (log_map, "M"),
    (cayley, "v"), (cayley_from_matrix, "M"), (cayley_resolvent, "v"),
    (quaternion_multiply, "qq"), (compose, "vv"),
])
def test_every_function_is_batched_over_leading_axes(fun, kind, rng):
    """A (2, 5) batch and a single unbatched input give the same numbers as a flat batch of 10."""
    psi = [_large(rng, 10) for _ in kind]
    args = [p if k == "v" else quaternion_from_vector(p) if k == "q" else exp_map(p) for k, p in zip(kind, psi)]
    flat = fun(*args)
    grid = fun(*[a.reshape((2, 5) + a.shape[1:]) for a in args])
    np.testing.assert_array_equal(grid.reshape(flat.shape), flat, err_msg=f"{fun.__name__} on a (2, 5) batch")
    single = fun(*[a[3] for a in args])
    np.testing.assert_allclose(single, flat[3], rtol=0, atol=1e-15, err_msg=f"{fun.__name__} on one input")
