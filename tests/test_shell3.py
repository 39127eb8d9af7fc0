"""Unit tests of the co-rotational triangular shell kernel (:class:`flexmb.elements.shell3.Shell3`).

Random batches (fixed seed) of triangles of different shapes, sizes and orientations in space,
with the membrane + DKT triangle of :mod:`flexmb.elements.shell_linear` and, to show that the
co-rotational machinery does not depend on which linear triangle it is given, a random symmetric
positive semi-definite local stiffness of rank 12 whose null space is the six rigid modes.
Configurations: a random rigid rotation of any angle and translations of metres, plus local
deformation (nodes moved by up to ``strain`` times the element size, nodal rotations of up to
``local`` rad relative to the rigid one). Rotation DOFs are perturbed as spins for the static
tangent and through Cayley parameters for the mid-point tangent, as the kernels define them.
"""
from __future__ import annotations

import numpy as np
import pytest
from spin_steps import cayley_increment, cayley_update, spin_update

from flexmb.checks import ModelError
from flexmb.elements.shell3 import Shell3
from flexmb.elements.shell_linear import linear_stiffness, local_frames
from flexmb.rotations import compose, exp_map, log_map, skew

N_EL = 40
ROT = (slice(3, 6), slice(9, 12), slice(15, 18))
TRANS = (slice(0, 3), slice(6, 9), slice(12, 15))
STIFFNESS = ["membrane-dkt", "membrane-cst", "random"]


# ------------------------------------------------------------------------------ helpers
def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.normal(size=(n, 3))
    return v / np.linalg.norm(v, axis=1)[:, None]                      # (n, 3)


def _random_rotation(rng: np.random.Generator) -> np.ndarray:
    """Uniformly distributed proper rotation (3, 3)."""
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q * np.sign(np.diag(R))[None, :]
    return Q if np.linalg.det(Q) > 0 else -Q


def _reference(rng: np.random.Generator, n: int) -> np.ndarray:
    """Reference triangles X (n, 3, 3): random shapes (angles above ~15 degrees), sizes 0.3..2 m,
    positions and orientations."""
    X = np.empty((n, 3, 3))
    for e in range(n):
        while True:
            xy = rng.uniform(-1.0, 1.0, (3, 2))
            a, b, c = xy[1] - xy[0], xy[2] - xy[1], xy[0] - xy[2]
            area = 0.5 * (a[0] * (-c[1]) - a[1] * (-c[0]))
            longest = max(np.linalg.norm(a), np.linalg.norm(b), np.linalg.norm(c))
            if area > 0.15 * longest ** 2:
                break
        flat = np.c_[xy, np.zeros(3)] * rng.uniform(0.3, 2.0)
        X[e] = flat @ _random_rotation(rng).T + rng.uniform(-2.0, 2.0, 3)
    return X


def _random_local_stiffness(rng: np.random.Generator, X: np.ndarray) -> np.ndarray:
    """Symmetric PSD local stiffnesses (n, 18, 18) of rank 12, null space = the local rigid modes."""
    _, xy, _ = local_frames(X)
    n = len(X)
    K = np.empty((n, 18, 18))
    for e in range(n):
        x = np.c_[xy[e], np.zeros(3)]
        modes = _rigid_modes(x[None])[0]                               # (18, 6)
        Q, _ = np.linalg.qr(modes)
        P = np.eye(18) - Q @ Q.T
        A = rng.normal(size=(18, 18))
        K[e] = 1e3 * P @ (A @ A.T) @ P
    return K


def _group(rng: np.random.Generator, X: np.ndarray, stiffness: str, **kw) -> Shell3:
    n = len(X)
    conn = np.zeros((n, 3), dtype=int)
    if stiffness == "random":
        return Shell3(conn, 1e6, 0.3, 0.05, local_stiffness=_random_local_stiffness(rng, X), **kw)
    return Shell3(conn, E=rng.uniform(1e5, 1e6, n), nu=rng.uniform(0.0, 0.45, n),
                  thickness=rng.uniform(0.01, 0.1, n), membrane="opt" if stiffness == "membrane-dkt" else "cst",
                  **kw)


def _global_linear_stiffness(el: Shell3, X: np.ndarray) -> np.ndarray:
    """The group's linear triangle in global axes, T^T K T (n, 18, 18), T = block diagonal of E^T."""
    E, xy, _ = local_frames(X)
    K = (linear_stiffness(xy, el.E, el.nu, el.thickness, el.membrane) if el.local_stiffness is None
         else el.local_stiffness)
    T = np.zeros((len(X), 18, 18))
    for k in range(6):
        T[:, 3 * k:3 * k + 3, 3 * k:3 * k + 3] = E.transpose(0, 2, 1)
    return T.transpose(0, 2, 1) @ K @ T


def _rigid_modes(x: np.ndarray) -> np.ndarray:
    """Infinitesimal rigid motions (n, 18, 6) about the origin of elements with node positions x (n, 3, 3)."""
    modes = np.zeros((len(x), 18, 6))
    for node, (t, r) in enumerate(zip(TRANS, ROT)):
        modes[:, t, 0:3] = np.eye(3)
        modes[:, t, 3:6] = -skew(x[:, node])                           # omega x x = -hat(x) omega
        modes[:, r, 3:6] = np.eye(3)
    return modes


def _configuration(rng: np.random.Generator, X: np.ndarray, Q: np.ndarray, local: float = 0.5,
                   strain: float = 0.1) -> np.ndarray:
    """Element DOFs (n, 18): rigid rotation Q (n, 3, 3) about the centroid, a translation of up to
    3 m, nodes moved by up to ``strain`` times the element size and nodal rotations of up to
    ``local`` rad after Q."""
    n = len(X)
    centre = X.mean(axis=1, keepdims=True)                            # (n, 1, 3)
    size = np.linalg.norm(X[:, 1] - X[:, 0], axis=1)[:, None, None]
    moved = X + strain * size * rng.uniform(-1.0, 1.0, X.shape)
    x = np.einsum("eij,enj->eni", Q, moved - centre) + centre + rng.uniform(-3.0, 3.0, (n, 1, 3))
    u = np.empty((n, 18))
    for node, (t, r) in enumerate(zip(TRANS, ROT)):
        u[:, t] = x[:, node] - X[:, node]
        turn = rng.uniform(0.0, local, n)[:, None] * _unit(rng, n)
        u[:, r] = log_map(exp_map(turn) @ Q)
    return u


def _deformed(rng: np.random.Generator, X: np.ndarray, **kw) -> np.ndarray:
    return _configuration(rng, X, np.stack([_random_rotation(rng) for _ in range(len(X))]), **kw)


def _step(rng: np.random.Generator, X: np.ndarray):
    """A large step: both ends deformed, their rigid parts differing by up to 1.5 rad (every nodal
    rotation increment below a half turn)."""
    n = len(X)
    Q0 = np.stack([_random_rotation(rng) for _ in range(n)])
    turn = exp_map(rng.uniform(0.0, 1.5, n)[:, None] * _unit(rng, n))
    return (_configuration(rng, X, Q0, 0.4, 0.1), _configuration(rng, X, turn @ Q0, 0.4, 0.1))


def _rotate_state(u: np.ndarray, X: np.ndarray, Q: np.ndarray, c: np.ndarray) -> np.ndarray:
    """DOFs (n, 18) of the configuration u followed by the rigid motion x -> Q x + c."""
    out = np.empty_like(u)
    spin = np.broadcast_to(log_map(Q), (len(u), 3))
    for node, (t, r) in enumerate(zip(TRANS, ROT)):
        out[:, t] = (X[:, node] + u[:, t]) @ Q.T + c - X[:, node]
        out[:, r] = compose(spin, u[:, r])
    return out


def _positions(X: np.ndarray, u: np.ndarray) -> np.ndarray:
    return X + u[:, [[0, 1, 2], [6, 7, 8], [12, 13, 14]]]             # (n, 3, 3)


def _spin_fd(fun, u: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central differences (n, m, 18) of a batched fun(u) (n, m) with the rotations moved by spins."""
    cols = []
    for j in range(18):
        du = np.zeros_like(u)
        du[:, j] = h
        cols.append((fun(spin_update(u, du)) - fun(spin_update(u, -du))) / (2.0 * h))
    return np.stack(cols, axis=-1)


def _worst(err: np.ndarray) -> tuple[int, float]:
    i = int(np.argmax(err))
    return i, float(err[i])


# ------------------------------------------------------------------------- derivatives
@pytest.mark.parametrize("stiffness", STIFFNESS)
def test_tangent_matches_central_fd_of_spins(stiffness, rng):
    X = _reference(rng, N_EL)
    el = _group(rng, X, stiffness)
    u = _deformed(rng, X, local=0.8, strain=0.15)
    _, K = el.force_and_tangent(X, u)
    fd = _spin_fd(lambda v: el.internal_force(X, v), u)
    i, err = _worst(np.linalg.norm(K - fd, axis=(1, 2)) / np.linalg.norm(fd, axis=(1, 2)))
    assert err < 1e-6, f"{stiffness}: tangent vs central FD along spins off by {err:.2e} (element {i})"


@pytest.mark.parametrize("stiffness", STIFFNESS)
def test_internal_force_is_spin_gradient_of_strain_energy(stiffness, rng):
    X = _reference(rng, N_EL)
    el = _group(rng, X, stiffness)
    u = _deformed(rng, X, local=0.8, strain=0.15)
    q = el.internal_force(X, u)
    grad = _spin_fd(lambda v: el.strain_energy(X, v), u)
    i, err = _worst(np.linalg.norm(q - grad, axis=1) / np.linalg.norm(grad, axis=1))
    assert err < 1e-6, f"{stiffness}: q vs FD of the strain energy along spins off by {err:.2e} (element {i})"


@pytest.mark.parametrize("step", ["large", "small"])
@pytest.mark.parametrize("stiffness", STIFFNESS)
def test_mid_point_tangent_matches_central_fd_of_cayley_step(stiffness, step, rng):
    X = _reference(rng, N_EL)
    el = _group(rng, X, stiffness)
    if step == "large":
        u0, u1 = _step(rng, X)
    else:                                                              # 1e-3 m and Cayley parameters
        u0 = _deformed(rng, X)
        u1 = cayley_update(u0, rng.uniform(-1e-3, 1e-3, (N_EL, 18)))
    d = cayley_increment(u0, u1)
    _, K = el.mid_point_force_and_tangent(X, u0, u1)
    h = 1e-6 if step == "large" else 1e-7
    fd = np.stack([(el.mid_point_force(X, u0, cayley_update(u0, d + h * ek))
                    - el.mid_point_force(X, u0, cayley_update(u0, d - h * ek))) / (2 * h)
                   for ek in np.eye(18)[:, None, :] * np.ones((1, N_EL, 1))], axis=2)
    i, err = _worst(np.linalg.norm(K - fd, axis=(1, 2)) / np.linalg.norm(fd, axis=(1, 2)))
    assert err < 1e-6, f"{stiffness}, {step} step: mid-point tangent vs FD of the Cayley step off by {err:.2e} " \
                       f"(element {i})"


@pytest.mark.parametrize("stiffness", STIFFNESS)
def test_mid_point_force_gives_exact_energy_increment_and_conserves_momenta(stiffness, rng):
    X = _reference(rng, N_EL)
    el = _group(rng, X, stiffness)
    u0, u1 = _step(rng, X)
    d = cayley_increment(u0, u1)
    q = el.mid_point_force(X, u0, u1)
    phi0, phi1 = el.strain_energy(X, u0), el.strain_energy(X, u1)
    work = np.einsum("ei,ei->e", q, d)
    i, err = _worst(np.abs(work - (phi1 - phi0)) / (phi0 + phi1))
    assert err < 1e-13, f"{stiffness}: q_m . d misses Phi1 - Phi0 by {err:.2e} of the energy (element {i})"
    scale = np.linalg.norm(q, axis=1)
    xm = 0.5 * (_positions(X, u0) + _positions(X, u1))                # (n, 3, 3)
    force = sum(q[:, t] for t in TRANS)
    moment = sum(np.cross(xm[:, node], q[:, t]) + q[:, r] for node, (t, r) in enumerate(zip(TRANS, ROT)))
    j, f_err = _worst(np.linalg.norm(force, axis=1) / scale)
    k, m_err = _worst(np.linalg.norm(moment, axis=1) / (scale * np.abs(xm).max(axis=(1, 2))))
    assert f_err < 1e-13, f"{stiffness}: mid-point forces do not sum to zero: {f_err:.2e} (element {j})"
    assert m_err < 1e-13, f"{stiffness}: mid-point moments about the mid-point positions: {m_err:.2e} (element {k})"


def _fresh_mid_point_force(rng_state: dict, X: np.ndarray, stiffness: str, u0: np.ndarray, u1: np.ndarray
                           ) -> np.ndarray:
    """The mid-point force of a new group (nothing kept) built from the same random state."""
    rng = np.random.default_rng()
    rng.bit_generator.state = rng_state
    return _group(rng, X, stiffness).mid_point_force(X, u0, u1)


@pytest.mark.parametrize("stiffness", STIFFNESS)
def test_mid_point_force_from_a_kept_start_state_is_the_fresh_force(stiffness, rng):
    """A step's start state is kept by the group (from the recording of the step before, and for
    the step's later iterations): the force must be the one computed from nothing, and a kept
    state of another configuration, or of an array changed in place, must not be used."""
    X = _reference(rng, N_EL)
    state = rng.bit_generator.state
    el = _group(rng, X, stiffness)
    u0, u1 = _step(rng, X)
    other = _deformed(rng, X)
    expected = _fresh_mid_point_force(state, X, stiffness, u0, u1)
    scale = np.linalg.norm(expected, axis=1)                          # (n,)

    def check(q: np.ndarray, what: str) -> None:
        i, err = _worst(np.linalg.norm(q - expected, axis=1) / scale)
        assert err < 1e-14, f"{stiffness}: {what} differs from the fresh force by {err:.2e} (element {i})"

    el.strain_energy(X, u0)                                           # a recording of u0 keeps its state
    check(el.mid_point_force(X, u0, u1), "the force from the recorded start state")
    check(el.mid_point_force(X, u0.copy(), u1), "the force of the step's next iteration")
    check(el.mid_point_force_and_tangent(X, u0, u1)[0], "the force of the tangent call")
    el.strain_energy(X, other)                                        # a state of another configuration
    check(el.mid_point_force(X, u0, u1), "the force after a recording of another configuration")
    start = other.copy()
    el.mid_point_force(X, start, u1)
    start[:] = u0                                                     # the same array, changed in place
    check(el.mid_point_force(X, start, u1), "the force from an array changed in place")


@pytest.mark.parametrize("stiffness", STIFFNESS)
def test_mid_point_force_of_vanishing_step_is_internal_force(stiffness, rng):
    X = _reference(rng, N_EL)
    el = _group(rng, X, stiffness)
    u = _deformed(rng, X)
    q = el.internal_force(X, u)
    i, err = _worst(np.linalg.norm(el.mid_point_force(X, u, u) - q, axis=1) / np.linalg.norm(q, axis=1))
    assert err < 1e-12, f"{stiffness}: mid-point force of a zero step differs from q by {err:.2e} (element {i})"


# ---------------------------------------------------------------------------- invariance
@pytest.mark.parametrize("stiffness", STIFFNESS)
def test_rigid_motion_by_several_turns_gives_no_force_and_no_energy(stiffness, rng):
    X = _reference(rng, N_EL)
    el = _group(rng, X, stiffness)
    axis = _unit(rng, 1)[0]
    u = _rotate_state(np.zeros((N_EL, 18)), X, exp_map(7.3 * axis), rng.uniform(-5.0, 5.0, 3))
    for node, r in enumerate(ROT):
        u[:, r] = 7.3 * axis                                           # several turns, not the principal vector
    scale = np.linalg.norm(_global_linear_stiffness(el, X), axis=(1, 2)) * np.abs(X).max()
    q = el.internal_force(X, u)
    i, err = _worst(np.linalg.norm(q, axis=1) / scale)
    assert err < 1e-13, f"{stiffness}: rigid motion gives a force of {err:.2e} (relative, element {i})"
    phi = el.strain_energy(X, u)
    k, e_err = _worst(phi / (scale * np.abs(X).max()))
    assert e_err < 1e-26, f"{stiffness}: rigid motion gives a strain energy of {e_err:.2e} (relative, element {k})"


@pytest.mark.parametrize("stiffness", STIFFNESS)
def test_small_deformation_far_from_the_origin_gives_the_linear_force(stiffness, rng):
    """Elements 1e4 m from the origin, deformed by 1e-9 of their size: the static and mid-point
    forces are the linear triangle's K u to the deformation's own round-off. Strains formed from
    absolute positions X + u carry eps |X| = 2e-12 m, 1e-3 of this deformation; at rest and under
    a rigid translation the force is exactly zero."""
    shift = np.full(3, 1e4)
    X = _reference(rng, N_EL) + shift
    at_origin = X - shift                                              # the same triangles, exactly
    el = _group(rng, at_origin, stiffness)
    K_lin = _global_linear_stiffness(el, at_origin)
    size = np.linalg.norm(X[:, 1] - X[:, 0], axis=1)[:, None]
    u0, u1 = (1e-9 * rng.uniform(-1.0, 1.0, (2, N_EL, 18))
              * np.where(np.arange(18) % 6 < 3, size, 1.0)[None])     # metres and rad
    for name, q, u in (("static", el.internal_force(X, u0), u0),
                       ("mid-point", el.mid_point_force(X, u0, u1), 0.5 * (u0 + u1))):
        q_lin = np.einsum("eij,ej->ei", K_lin, u)
        i, err = _worst(np.linalg.norm(q - q_lin, axis=1) / np.linalg.norm(q_lin, axis=1))
        assert err < 1e-6, f"{stiffness}: {name} force 1e4 m from the origin misses K u by {err:.2e} (element {i})"
    translated = np.tile(np.r_[rng.uniform(-1e4, 1e4, 3), 0.0, 0.0, 0.0], 3)[None].repeat(N_EL, axis=0)
    for u in (np.zeros((N_EL, 18)), translated):
        assert not np.any(el.internal_force(X, u)), f"{stiffness}: force at rest or under a rigid translation"
        assert not np.any(el.strain_energy(X, u)), f"{stiffness}: energy at rest or under a rigid translation"


@pytest.mark.parametrize("stiffness", STIFFNESS)
def test_energy_forces_and_tangent_follow_a_superposed_rigid_motion(stiffness, rng):
    X = _reference(rng, N_EL)
    el = _group(rng, X, stiffness)
    u = _deformed(rng, X, local=0.8, strain=0.15)
    Q, c = _random_rotation(rng), rng.uniform(-3.0, 3.0, 3)
    q, K = el.force_and_tangent(X, u)
    q_rot, K_rot = el.force_and_tangent(X, _rotate_state(u, X, Q, c))
    phi, phi_rot = el.strain_energy(X, u), el.strain_energy(X, _rotate_state(u, X, Q, c))
    i, err = _worst(np.abs(phi_rot - phi) / phi)
    assert err < 1e-12, f"{stiffness}: energy changes under a rigid motion by {err:.2e} (element {i})"
    T = np.kron(np.eye(6), Q)                                          # every 3-block rotates with Q
    j, f_err = _worst(np.linalg.norm(q_rot - q @ T.T, axis=1) / np.linalg.norm(q, axis=1))
    assert f_err < 1e-12, f"{stiffness}: forces are not rotated by the rigid motion: {f_err:.2e} (element {j})"
    k, k_err = _worst(np.linalg.norm(K_rot - T @ K @ T.T, axis=(1, 2)) / np.linalg.norm(K, axis=(1, 2)))
    assert k_err < 1e-12, f"{stiffness}: tangent is not rotated by the rigid motion: {k_err:.2e} (element {k})"


# --------------------------------------------------------------------- reference state
@pytest.mark.parametrize("stiffness", STIFFNESS)
def test_reference_tangent_is_the_linear_triangle(stiffness, rng):
    X = _reference(rng, N_EL)
    el = _group(rng, X, stiffness)
    K_lin = _global_linear_stiffness(el, X)
    q, K = el.force_and_tangent(X, np.zeros((N_EL, 18)))
    scale = np.linalg.norm(K_lin, axis=(1, 2)) * np.abs(X).max(axis=(1, 2))
    assert (np.linalg.norm(q, axis=1) / scale).max() < 1e-14, "the reference state is not free of force"
    i, err = _worst(np.linalg.norm(K - K_lin, axis=(1, 2)) / np.linalg.norm(K_lin, axis=(1, 2)))
    assert err < 1e-10, f"{stiffness}: reference tangent misses the linear triangle T^T K T by {err:.2e} (element {i})"
    sv = np.linalg.svd(K, compute_uv=False)                            # (n, 18)
    j, null = _worst(sv[:, 12] / sv[:, 0])
    assert null < 1e-12, f"{stiffness}: reference tangent has rank > 12 (element {j}, {null:.2e})"
    assert (sv[:, 11] / sv[:, 0]).min() > 1e-8, f"{stiffness}: reference tangent has rank < 12"


@pytest.mark.parametrize("stiffness", STIFFNESS)
def test_geometric_stiffness_is_the_stress_linear_part(stiffness, rng):
    X = _reference(rng, N_EL)
    el = _group(rng, X, stiffness)
    u = _deformed(rng, X, local=0.6, strain=0.15)
    K = el.tangent_stiffness(X, u)
    s = el.generalized_stresses(X, u)
    s1, s2 = rng.normal(size=(2, N_EL, 12)) * np.abs(s).max(axis=1)[None, :, None]
    combo = el.geometric_stiffness(X, u, 1.7 * s1 - 0.6 * s2)
    lin = 1.7 * el.geometric_stiffness(X, u, s1) - 0.6 * el.geometric_stiffness(X, u, s2)
    i, err = _worst(np.linalg.norm(combo - lin, axis=(1, 2)) / np.linalg.norm(lin, axis=(1, 2)))
    assert err < 1e-12, f"geometric stiffness is not linear in the stresses: {err:.2e} (element {i})"
    assert np.abs(el.geometric_stiffness(X, u, np.zeros_like(s))).max() == 0.0
    # K_t - K_g(own stresses) = (Ah G)^T S (Ah G), Ah G = d eh / d(spins) by finite differences
    AG = _spin_fd(lambda v: el.strains(X, v), u)                       # (n, 12, 18)
    Km = AG.transpose(0, 2, 1) @ el.reference(X).S @ AG
    j, m_err = _worst(np.linalg.norm(K - el.geometric_stiffness(X, u, s) - Km, axis=(1, 2))
                      / np.linalg.norm(Km, axis=(1, 2)))
    assert m_err < 1e-6, f"K_t - K_g(own stresses) is not the material part: {m_err:.2e} (element {j})"


# --------------------------------------------------------------------------------- mass
@pytest.mark.parametrize("kind", ["lumped", "consistent"])
def test_mass_matrix_and_rotary_inertia(kind, rng):
    X = _reference(rng, N_EL)
    rho = rng.uniform(100.0, 8000.0, N_EL)
    el = _group(rng, X, "membrane-dkt", rho=rho, mass=kind)
    E, _, area = local_frames(X)
    m = rho * el.thickness * area
    M = el.mass_matrix(X)
    for k in range(3):
        idx = [k, 6 + k, 12 + k]
        total = M[:, idx][:, :, idx].sum(axis=(1, 2))
        i, err = _worst(np.abs(total - m) / m)
        assert err < 1e-14, f"{kind}: translational mass in direction {k} off by {err:.2e} (element {i})"
    rot = np.r_[3:6, 9:12, 15:18]
    assert not np.any(M[:, rot, :]) and not np.any(M[:, :, rot]), f"{kind}: rotational rows of M are not zero"
    if kind == "consistent":
        np.testing.assert_allclose(M[:, 0, 6] / M[:, 0, 0], 0.5, rtol=1e-14)
    J = el.rotary_inertia(X)                                           # (n, 3, 3, 3)
    J_local = rho * el.thickness ** 3 * area / 36.0
    expected = J_local[:, None, None] * (np.eye(3)[None] + E[:, :, 2:3] @ E[:, :, 2:3].transpose(0, 2, 1))
    for node in range(3):
        j, err = _worst(np.abs(J[:, node] - expected).max(axis=(1, 2)) / J_local)
        assert err < 1e-13, f"rotary inertia at node {node} misses E J_local E^T by {err:.2e} (element {j})"


# ------------------------------------------------------------------------------- input
@pytest.mark.parametrize("kw, message", [
    ({"E": -1.0}, "Young's modulus E of element 0"),
    ({"nu": np.array([0.3, 0.5])}, "Poisson's ratio nu of element 1"),
    ({"nu": -1.0}, "Poisson's ratio nu of element 0"),
    ({"thickness": np.array([0.1, 0.0])}, "thickness of element 1"),
    ({"rho": -2.0}, "density rho of element 0"),
    ({"membrane": "andes"}, "membrane must be 'opt' or 'cst'"),
    ({"mass": "cubic"}, "mass must be 'lumped' or 'consistent'"),
    ({"thickness": np.ones(3)}, "one value per element"),
    ({"local_stiffness": np.zeros((2, 12, 12))}, "local_stiffness must be"),
])
def test_bad_input_names_group_and_element(kw, message):
    args = {"E": 1e6, "nu": 0.3, "thickness": 0.1} | kw
    with pytest.raises(ModelError, match="'plate'") as info:
        Shell3([[0, 1, 2], [1, 3, 2]], **args, name="plate")
    assert message in str(info.value)


def test_bad_connectivity_and_degenerate_triangle_are_refused():
    with pytest.raises(ModelError, match="'plate'.*shape"):
        Shell3([[0, 1], [1, 2]], 1e6, 0.3, 0.1, name="plate")
    el = Shell3([[0, 1, 2], [1, 3, 2]], 1e6, 0.3, 0.1, name="plate")
    X = np.array([[[0.0, 0, 0], [1, 0, 0], [0, 1, 0]], [[1.0, 0, 0], [2, 0, 0], [3, 0, 0]]])
    with pytest.raises(ModelError, match="'plate', element 1.*zero area"):
        el.internal_force(X, np.zeros((2, 18)))
    with pytest.raises(ModelError, match="'plate'.*stresses must have shape"):
        el.geometric_stiffness(X[:1].repeat(2, axis=0) + [[[0, 0, 0], [0, 0, 0], [0, 0, 1]]],
                               np.zeros((2, 18)), np.zeros((2, 6)))


def test_strain_tables_of_the_element_and_the_kernels_agree():
    from flexmb.compiled import shell3 as compiled
    from flexmb.elements import shell3 as element
    for name in ("_EDGE_I", "_EDGE_J", "_T_STRAIN", "_T_NODE", "_T_END", "_T_SLOT", "_T_SIGN"):
        np.testing.assert_array_equal(getattr(element, name), getattr(compiled, name), err_msg=name)


def test_drilling_strain_vanishes_for_cylindrical_bending_along_a_diagonal():
    """Nodes on a cylinder about y, nodal triads turned with the surface normal: the two-edge
    drilling strains c_i stay zero to round-off however far the element is bent, for edges whose
    projections on the bending direction are equal (here: a right triangle with legs along x, y)."""
    X = np.array([[[0.0, 0.0, 0.0], [0.3, 0.0, 0.0], [0.3, 0.2, 0.0]]])
    el = Shell3([[0, 1, 2]], 1e6, 0.3, 0.01)
    for radius in (10.0, 1.0, 0.3):
        angle = X[0, :, 0] / radius                                    # arc length along x
        x = np.stack([radius * np.sin(angle), X[0, :, 1], radius * (1.0 - np.cos(angle))], axis=1)
        u = np.zeros((1, 18))
        for node, (t, r) in enumerate(zip(TRANS, ROT)):
            u[0, t] = x[node] - X[0, node]
            u[0, r] = [0.0, -angle[node], 0.0]
        c = el.strains(X, u)[0, 9:12]
        assert np.abs(c).max() < 1e-15, f"bending to radius {radius}: drilling strains {c}"


def test_sliver_triangle_with_rank_deficient_strain_jacobian_is_refused():
    """A triangle of aspect ratio 1e7 passes the zero-area test of local_frames but its twelve strains
    are no longer independent to working precision."""
    X = np.array([[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.5, 1e-4, 0.0]],
                  [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.5, 1e-7, 0.0]]])
    el = Shell3([[0, 1, 2], [1, 3, 2]], 1e6, 0.3, 0.01, name="plate")
    with pytest.raises(ModelError, match="'plate', element 1: the strain Jacobian B has rank < 12"):
        el.internal_force(X, np.zeros((2, 18)))
