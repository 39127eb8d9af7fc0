"""Unit tests of the co-rotational truss kernel (2D and 3D).

Every test runs on a batch of random elements drawn with a fixed seed, in large-displacement,
large-rotation configurations, and reports the worst element and by how much it missed.
"""
from __future__ import annotations

from decimal import Decimal, localcontext

import numpy as np
import pytest

from flexmb import Truss

N_EL = 400


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.normal(size=(n, dim))
    return v / np.linalg.norm(v, axis=1)[:, None]                      # (n, dim)


def _rotation(rng: np.random.Generator, dim: int) -> np.ndarray:
    """Random proper rotation (dim, dim); in 2D an angle of several turns."""
    if dim == 2:
        phi = rng.uniform(-12.0, 12.0)
        return np.array([[np.cos(phi), -np.sin(phi)], [np.sin(phi), np.cos(phi)]])
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q * np.sign(np.diag(R))[None, :]
    return Q if np.linalg.det(Q) > 0 else -Q


def _reference(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    """Reference coordinates X (n, 2, dim): random position and direction, length 0.5..3 m."""
    X1 = rng.uniform(-2.0, 2.0, (n, dim))
    l0 = rng.uniform(0.5, 3.0, n)
    return np.stack([X1, X1 + l0[:, None] * _unit(rng, n, dim)], axis=1)


def _deformed(rng: np.random.Generator, X: np.ndarray, strain: float = 0.3) -> np.ndarray:
    """Element DOFs u (n, 2 dim): any chord orientation, large translation, strain within +-strain."""
    n, _, dim = X.shape
    l0 = np.linalg.norm(X[:, 1] - X[:, 0], axis=1)
    l = l0 * (1.0 + rng.uniform(-strain, strain, n))
    d1 = rng.uniform(-3.0, 3.0, (n, dim))
    d2 = X[:, 0] + d1 + l[:, None] * _unit(rng, n, dim) - X[:, 1]
    return np.concatenate([d1, d2], axis=1)


def _group(rng: np.random.Generator, n: int, dim: int, **kw) -> Truss:
    return Truss(np.zeros((n, 2), dtype=int), dim, EA=10.0 ** rng.uniform(3.0, 6.0, n), **kw)


def _block_rotation(R: np.ndarray) -> np.ndarray:
    """T = diag(R, R) acting on the element DOFs, (2 dim, 2 dim)."""
    return np.kron(np.eye(2), R)


# --------------------------------------------------------------------------- derivatives
@pytest.mark.parametrize("dim", [2, 3])
def test_tangent_matches_central_fd(dim, rng, assert_tangent_matches_fd):
    X = _reference(rng, N_EL, dim)
    u = _deformed(rng, X)
    el = _group(rng, N_EL, dim)
    q, K = el.force_and_tangent(X, u)
    assert_tangent_matches_fd(K, lambda v: el.internal_force(X, v), u, f"{dim}D truss tangent")
    np.testing.assert_array_equal(q, el.internal_force(X, u))
    np.testing.assert_allclose(el.tangent_stiffness(X, u), K, rtol=0, atol=0)
    asym = np.abs(K - K.transpose(0, 2, 1)).max() / np.abs(K).max()
    assert asym < 1e-14, f"static truss tangent is not symmetric: {asym:.2e}"


@pytest.mark.parametrize("dim", [2, 3])
def test_internal_force_is_gradient_of_strain_energy(dim, rng, central_fd, relative_error):
    X = _reference(rng, N_EL, dim)
    u = _deformed(rng, X)
    el = _group(rng, N_EL, dim)
    q = el.internal_force(X, u)
    q_fd = central_fd(lambda v: el.strain_energy(X, v)[:, None], u, 1e-6)[:, 0, :]
    err = relative_error(q, q_fd)
    assert err.max() < 1e-6, f"{dim}D truss force vs FD of strain energy: worst relative error {err.max():.2e}"


@pytest.mark.parametrize("dim", [2, 3])
def test_mid_point_tangent_matches_central_fd(dim, rng, assert_tangent_matches_fd):
    X = _reference(rng, N_EL, dim)
    u0, u1 = _deformed(rng, X), _deformed(rng, X)                     # independent: any rotation between
    el = _group(rng, N_EL, dim)
    q, K = el.mid_point_force_and_tangent(X, u0, u1)
    assert_tangent_matches_fd(K, lambda v: el.mid_point_force(X, u0, v), u1, f"{dim}D truss mid-point tangent")
    np.testing.assert_array_equal(q, el.mid_point_force(X, u0, u1))


@pytest.mark.parametrize("dim", [2, 3])
def test_mid_point_force_of_zero_step_is_internal_force(dim, rng, relative_error):
    X = _reference(rng, N_EL, dim)
    u = _deformed(rng, X)
    el = _group(rng, N_EL, dim)
    q_m, K_m = el.mid_point_force_and_tangent(X, u, u)
    q, K = el.force_and_tangent(X, u)
    assert relative_error(q_m, q).max() < 1e-13, "mid-point force at u0 = u1 differs from the internal force"
    # d q_m / d u1 at u0 = u1 is half the tangent: q_m depends on the step through the averages
    err = relative_error(K_m, 0.5 * K)
    assert err.max() < 1e-12, f"mid-point tangent at u0 = u1 differs from K/2 by {err.max():.2e}"


# ------------------------------------------------------------------------------ energy
@pytest.mark.parametrize("dim", [2, 3])
def test_mid_point_force_gives_exact_energy_increment(dim, rng):
    X = _reference(rng, N_EL, dim)
    u0, u1 = _deformed(rng, X), _deformed(rng, X)
    el = _group(rng, N_EL, dim)
    work = np.einsum("ei,ei->e", el.mid_point_force(X, u0, u1), u1 - u0)
    phi0, phi1 = el.strain_energy(X, u0), el.strain_energy(X, u1)
    err = np.abs(work - (phi1 - phi0)) / (phi0 + phi1)
    worst = int(np.argmax(err))
    assert err[worst] < 1e-12, (f"{dim}D truss: q_m.(u1 - u0) misses Phi(u1) - Phi(u0) at element {worst} "
                                f"by {err[worst]:.2e} of the energy scale")


# ----------------------------------------------------------------- invariance, objectivity
RIGID_ANGLES = [0.0, 3.0, -5.0, 3.0 + 4.0 * np.pi, -5.0 - 6.0 * np.pi, np.pi, -np.pi]


@pytest.mark.parametrize("phi", RIGID_ANGLES)
def test_rigid_motion_2d_gives_no_force_and_no_energy(phi, rng):
    X = _reference(rng, N_EL, 2)
    el = _group(rng, N_EL, 2)
    R = np.array([[np.cos(phi), -np.sin(phi)], [np.sin(phi), np.cos(phi)]])
    c = rng.uniform(-5.0, 5.0, 2)
    x = X @ R.T + c                                                    # (n, 2, 2) rigidly moved
    u = (x - X).reshape(N_EL, 4)
    _assert_force_free(el, X, u, f"rigid rotation {phi:.3f} rad")


def test_rigid_motion_3d_gives_no_force_and_no_energy(rng):
    X = _reference(rng, N_EL, 3)
    el = _group(rng, N_EL, 3)
    for _ in range(5):
        R = _rotation(rng, 3)
        x = X @ R.T + rng.uniform(-5.0, 5.0, 3)
        _assert_force_free(el, X, (x - X).reshape(N_EL, 6), "random 3D rigid motion")


def _assert_force_free(el: Truss, X: np.ndarray, u: np.ndarray, what: str) -> None:
    l0 = np.linalg.norm(X[:, 1] - X[:, 0], axis=1)
    q = el.internal_force(X, u)
    force = np.abs(q).max(axis=1) / el.EA
    energy = el.strain_energy(X, u) / (el.EA * l0)
    assert force.max() < 1e-13, f"{what}: internal force {force.max():.2e} EA, expected 0"
    assert energy.max() < 1e-26, f"{what}: strain energy {energy.max():.2e} EA l0, expected 0"
    assert np.abs(el.axial_strain(X, u)).max() < 1e-13, f"{what}: axial strain not zero"


@pytest.mark.parametrize("dim", [2, 3])
def test_force_and_tangent_rotate_with_the_element(dim, rng, relative_error):
    X = _reference(rng, N_EL, dim)
    u = _deformed(rng, X)
    el = _group(rng, N_EL, dim)
    q, K = el.force_and_tangent(X, u)
    phi0 = el.strain_energy(X, u)
    for _ in range(4):
        R = _rotation(rng, dim)
        x = (X + u.reshape(N_EL, 2, dim)) @ R.T + rng.uniform(-5.0, 5.0, dim)
        u_rot = (x - X).reshape(N_EL, 2 * dim)
        T = _block_rotation(R)
        q_rot, K_rot = el.force_and_tangent(X, u_rot)
        err_q = relative_error(q_rot, q @ T.T)
        err_K = relative_error(K_rot, T[None] @ K @ T.T[None])
        err_phi = np.abs(el.strain_energy(X, u_rot) - phi0) / phi0
        assert err_q.max() < 1e-11, f"{dim}D truss force is not objective: off by {err_q.max():.2e}"
        assert err_K.max() < 1e-11, f"{dim}D truss tangent is not T K T^T: off by {err_K.max():.2e}"
        assert err_phi.max() < 1e-11, f"{dim}D truss energy changes under rotation by {err_phi.max():.2e}"


# ----------------------------------------------------------------------------- analytic
@pytest.mark.parametrize("dim", [2, 3])
def test_axial_force_of_stretched_bar(dim, rng):
    X = _reference(rng, N_EL, dim)
    u = _deformed(rng, X)
    el = _group(rng, N_EL, dim)
    x21 = X[:, 1] + u[:, dim:] - X[:, 0] - u[:, :dim]
    l, l0 = np.linalg.norm(x21, axis=1), np.linalg.norm(X[:, 1] - X[:, 0], axis=1)
    N_exact = el.EA * (l - l0) / l0
    q = el.internal_force(X, u)
    q_exact = np.concatenate([-N_exact[:, None] * x21 / l[:, None], N_exact[:, None] * x21 / l[:, None]], axis=1)
    err_N = np.abs(el.axial_force(X, u) - N_exact) / np.abs(N_exact)
    err_q = np.abs(q - q_exact).max(axis=1) / np.abs(N_exact)
    assert err_N.max() < 1e-12, f"N differs from EA (l - l0)/l0 by {err_N.max():.2e} (relative)"
    assert err_q.max() < 1e-12, f"q differs from N [-e; e] by {err_q.max():.2e} of |N|"
    err_eps = np.abs(el.axial_strain(X, u) - (l - l0) / l0).max()
    assert err_eps < 1e-14, f"axial strain off by {err_eps:.2e}"


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("stretch", [1e-9, -1e-9, 3e-12])
def test_stiff_bar_stretch_has_no_cancellation(dim, stretch):
    """EA = 1e10 N, l0 ~ 3 m, stretch 1e-9 m: l - l0 formed naively would lose ~7 digits.

    The reference is the exact strain energy of the given float inputs, in 60-digit decimals.
    """
    EA = 1e10
    direction = np.array([0.6, 0.8, 0.0][:dim]) if dim == 2 else np.array([0.48, 0.6, 0.64])
    X = np.stack([np.zeros(dim), 3.0 * direction])[None]                # X1 = 0: X21 is exact
    shift = np.array([0.7, -0.4, 0.9][:dim])                            # rigid translation on top
    d1, d2 = shift, shift + stretch * X[0, 1] / np.linalg.norm(X[0, 1])
    el = Truss(np.array([[0, 1]]), dim, EA=EA)
    with localcontext() as ctx:
        ctx.prec = 60
        X21 = [Decimal(float(a)) for a in X[0, 1]]
        d21 = [Decimal(float(b)) - Decimal(float(a)) for a, b in zip(d1, d2)]
        l0 = sum(a * a for a in X21).sqrt()
        l = sum((a + b) ** 2 for a, b in zip(X21, d21)).sqrt()
        s = l - l0
        energy = Decimal(EA) / 2 * s * s / l0
    u = np.concatenate([d1, d2])[None]
    got = el.strain_energy(X, u)[0]
    err = abs(got - float(energy)) / float(energy)
    assert err < 1e-12, (f"stiff bar (stretch {stretch:g} m): strain energy {got!r} vs exact {float(energy)!r}, "
                         f"relative error {err:.2e}")
    err_N = abs(el.axial_force(X, u)[0] - float(Decimal(EA) * s / l0)) / abs(float(Decimal(EA) * s / l0))
    assert err_N < 1e-12, f"stiff bar axial force off by {err_N:.2e} (relative)"


# --------------------------------------------------------------------------------- mass
@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("kind", ["lumped", "consistent"])
def test_mass_matrix(dim, kind, rng):
    X = _reference(rng, N_EL, dim)
    rho_A = rng.uniform(0.1, 10.0, N_EL)
    el = _group(rng, N_EL, dim, rho_A=rho_A, mass=kind)
    M = el.mass_matrix(X)                                               # (n, 2dim, 2dim)
    m = rho_A * np.linalg.norm(X[:, 1] - X[:, 0], axis=1)
    for k in range(dim):
        for j in range(dim):
            total = M[:, k::dim, j::dim].sum(axis=(1, 2))
            expected = m if j == k else np.zeros(N_EL)
            err = np.abs(total - expected).max() / m.max()
            assert err < 1e-14, f"{kind} mass, directions {k},{j}: total {total[0]:.6g} vs {expected[0]:.6g}"
    pattern = np.diag([0.5, 0.5]) if kind == "lumped" else np.array([[2.0, 1.0], [1.0, 2.0]]) / 6.0
    expected = m[:, None, None] * np.kron(pattern, np.eye(dim))[None]
    err = np.abs(M - expected).max() / m.max()
    assert err < 1e-14, f"{kind} mass matrix differs from the textbook pattern by {err:.2e}"
    assert np.array_equal(M, M.transpose(0, 2, 1)), f"{kind} mass matrix is not symmetric"
    eig_min = np.linalg.eigvalsh(M).min(axis=1) / m
    assert eig_min.min() > 0.1, f"{kind} mass matrix not positive definite: min eigenvalue {eig_min.min():.2e} m"
    # constant and invariant: it depends on the reference geometry only through the length
    R = _rotation(rng, dim)
    M_moved = el.mass_matrix(X @ R.T + rng.uniform(-3, 3, dim))
    err = np.abs(M_moved - M).max() / m.max()
    assert err < 1e-14, f"{kind} mass matrix changes under a rigid motion of X by {err:.2e}"


def test_zero_density_gives_zero_mass(rng):
    X = _reference(rng, 10, 3)
    assert not np.any(_group(rng, 10, 3).mass_matrix(X))


# ------------------------------------------------------------------------------- errors
@pytest.mark.parametrize("kw, bad, index", [
    (dict(EA=[1e3, 0.0, 2e3]), "EA", 1),
    (dict(EA=[1e3, 2e3, -5.0]), "EA", 2),
    (dict(EA=[np.nan, 1e3, 1e3]), "EA", 0),
    (dict(EA=1e3, rho_A=[1.0, -1.0, 1.0]), "rho_A", 1),
    (dict(EA=1e3, rho_A=[1.0, 1.0, np.inf]), "rho_A", 2),
])
def test_bad_section_values_name_the_element(kw, bad, index):
    with pytest.raises(ValueError, match=rf"{bad} of element {index}\b"):
        Truss(np.array([[0, 1], [1, 2], [2, 3]]), 2, **kw)


def test_bad_mass_kind_and_connectivity_raise():
    with pytest.raises(ValueError, match="mass must be"):
        Truss(np.array([[0, 1]]), 2, EA=1.0, mass="diagonal")
    with pytest.raises(ValueError, match="connectivity"):
        Truss(np.array([[0.0, 1.0]]), 2, EA=1.0)
    with pytest.raises(ValueError, match="connectivity"):
        Truss(np.array([[0, 1, 2]]), 2, EA=1.0)


def test_property_array_of_wrong_length_names_the_property():
    with pytest.raises(ValueError, match=r"EA must be a scalar or have one value per element \(2\)"):
        Truss(np.array([[0, 1], [1, 2]]), 2, EA=[1.0, 2.0, 3.0])
