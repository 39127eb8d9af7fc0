"""Unit tests of the spatial co-rotational beam kernel (Meijaard 1993 generalized strains).

Random batches (fixed seed) of anisotropic elements (EI_y != EI_z, random y axes), with and
without shear deformation, first- and second-order strains. Configurations: a random rigid
rotation of any angle (nodal rotation vectors up to pi), random translations of several metres,
and on top of it local deformation (chord tilt, nodal rotations relative to the rigid one,
stretch). Rotation DOFs are perturbed as spins (``compose``) for the static tangent and through
Cayley parameters for the mid-point tangent, as the kernels' derivatives are defined.
Closed-form cantilever values and the textbook Timoshenko frame stiffness come through the
public Model / load_control API and the kernel itself.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest
from spin_steps import cayley_increment, cayley_update, spin_update

import flexmb
from flexmb.elements.beam3d import Beam3D
from flexmb.integrators import NewtonSettings
from flexmb.rotations import compose, exp_map, log_map, skew

N_EL = 300
ROT = (slice(3, 6), slice(9, 12))
TRANS = (slice(0, 3), slice(6, 9))
SECTIONS = [pytest.param(so, shear, id=f"{'2nd' if so else '1st'}-order-{'shear' if shear else 'rigid-shear'}")
            for so in (False, True) for shear in (False, True)]
# mid-point steps: (max rigid turn, local deformation in rad, stretch) of both ends, or a 1e-3 step
STEPS = {"large-turn": (2.0, 0.4, 0.1), "large-deformation": (1.4, 0.8, 0.3), "small-step": None}


# ------------------------------------------------------------------------------ helpers
def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.normal(size=(n, 3))
    return v / np.linalg.norm(v, axis=1)[:, None]                      # (n, 3)


def _rotations(rng: np.random.Generator, n: int, max_angle: float) -> np.ndarray:
    """Rotation matrices (n, 3, 3) about random axes by angles uniform in [0, max_angle]."""
    return exp_map(rng.uniform(0.0, max_angle, n)[:, None] * _unit(rng, n))


def _random_rotation(rng: np.random.Generator) -> np.ndarray:
    """Uniformly distributed proper rotation (3, 3): any angle up to pi."""
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q * np.sign(np.diag(R))[None, :]
    return Q if np.linalg.det(Q) > 0 else -Q


def _reference(rng: np.random.Generator, n: int) -> np.ndarray:
    """Reference coordinates X (n, 2, 3): random position and direction, length 0.5..3 m."""
    X1 = rng.uniform(-2.0, 2.0, (n, 3))
    return np.stack([X1, X1 + rng.uniform(0.5, 3.0, n)[:, None] * _unit(rng, n)], axis=1)


def _group(rng: np.random.Generator, n: int, second_order: bool = True, shear: bool = False, **kw) -> Beam3D:
    """Anisotropic sections: EI_y and EI_z drawn independently, random y axis hints."""
    ga = (lambda: 10.0 ** rng.uniform(2.0, 4.0, n)) if shear else (lambda: np.inf)
    return Beam3D(np.zeros((n, 2), dtype=int), EA=10.0 ** rng.uniform(3.0, 5.0, n),
                  GJ=10.0 ** rng.uniform(1.0, 3.0, n), EI_y=10.0 ** rng.uniform(1.0, 3.0, n),
                  EI_z=10.0 ** rng.uniform(1.0, 3.0, n), GA_ky=ga(), GA_kz=ga(),
                  y_axis=_unit(rng, n), second_order=second_order, **kw)


def _configuration(rng: np.random.Generator, X: np.ndarray, Q: np.ndarray, local: float = 0.4,
                   strain: float = 0.1) -> np.ndarray:
    """Element DOFs (n, 12): rigid rotation Q (n, 3, 3) plus local deformation.

    The chord is Q times the reference chord tilted by up to local/2 rad and stretched by up to
    +-strain; each nodal rotation is Q followed by a rotation of up to ``local`` rad; node p is
    translated by up to 3 m.
    """
    n = len(X)
    X21 = X[:, 1] - X[:, 0]
    l = np.linalg.norm(X21, axis=1) * (1.0 + rng.uniform(-strain, strain, n))
    chord = np.einsum("eij,ej->ei", _rotations(rng, n, 0.5 * local) @ Q, X21)
    chord *= (l / np.linalg.norm(chord, axis=1))[:, None]
    d_p = rng.uniform(-3.0, 3.0, (n, 3))
    d_q = X[:, 0] + d_p + chord - X[:, 1]
    psi_p = log_map(_rotations(rng, n, local) @ Q)
    psi_q = log_map(_rotations(rng, n, local) @ Q)
    return np.concatenate([d_p, psi_p, d_q, psi_q], axis=1)


def _deformed(rng: np.random.Generator, X: np.ndarray, **kw) -> np.ndarray:
    n = len(X)
    return _configuration(rng, X, np.stack([_random_rotation(rng) for _ in range(n)]), **kw)


def _step(rng: np.random.Generator, X: np.ndarray, kind: str):
    """Configurations u0, u1 (n, 12) of one step of the given kind (see STEPS).

    Large steps: the rigid parts differ by a rotation of up to ``max_turn`` rad, on top of
    independent local deformations of both ends; every nodal rotation increment stays below a
    half turn (max_turn + 2 local < pi). Small step: u1 = u0 moved by a random Cayley increment
    of 1e-3 (m, and Cayley parameters).
    """
    n = len(X)
    Q0 = np.stack([_random_rotation(rng) for _ in range(n)])
    if STEPS[kind] is None:
        u0 = _configuration(rng, X, Q0)
        return u0, cayley_update(u0, rng.uniform(-1e-3, 1e-3, (n, 12)))
    max_turn, local, strain = STEPS[kind]
    u0 = _configuration(rng, X, Q0, local, strain)
    u1 = _configuration(rng, X, _rotations(rng, n, max_turn) @ Q0, local, strain)
    return u0, u1


def _rotate_state(u: np.ndarray, X: np.ndarray, Q: np.ndarray, c: np.ndarray) -> np.ndarray:
    """DOFs (n, 12) of the configuration u followed by the rigid motion x -> Q x + c."""
    out = np.empty_like(u)
    spin = np.broadcast_to(log_map(Q), (len(u), 3))
    for t, r, node in zip(TRANS, ROT, (0, 1)):
        out[:, t] = (X[:, node] + u[:, t]) @ Q.T + c - X[:, node]
        out[:, r] = compose(spin, u[:, r])
    return out


def _rigid_modes(x: np.ndarray) -> np.ndarray:
    """Infinitesimal rigid motions (n, 12, 6) about the origin of elements with node positions x (n, 2, 3)."""
    n = len(x)
    modes = np.zeros((n, 12, 6))
    for node, (t, r) in enumerate(zip(TRANS, ROT)):
        modes[:, t, 0:3] = np.eye(3)
        modes[:, t, 3:6] = -skew(x[:, node])                           # omega x x = -hat(x) omega
        modes[:, r, 3:6] = np.eye(3)
    return modes


def _positions(X: np.ndarray, u: np.ndarray) -> np.ndarray:
    return X + u[:, [[0, 1, 2], [6, 7, 8]]]                           # (n, 2, 3)


def _worst(err: np.ndarray) -> tuple[int, float]:
    i = int(np.argmax(err))
    return i, float(err[i])


# ------------------------------------------------------------------------- derivatives
@pytest.mark.parametrize("second_order, shear", SECTIONS)
def test_tangent_matches_central_fd_of_spins(second_order, shear, rng, assert_tangent_matches_fd):
    X = _reference(rng, N_EL)
    u = _deformed(rng, X)
    el = _group(rng, N_EL, second_order, shear)
    assert np.abs(u[:, 3:6]).max() > 2.5, "the batch should contain nodal rotations near pi"
    q, K = el.force_and_tangent(X, u)
    assert_tangent_matches_fd(K, lambda du: el.internal_force(X, spin_update(u, du)), np.zeros_like(u),
                              f"beam3d tangent (second_order={second_order}, shear={shear})")
    np.testing.assert_array_equal(q, el.internal_force(X, u))
    np.testing.assert_array_equal(K, el.tangent_stiffness(X, u))


@pytest.mark.parametrize("second_order, shear", SECTIONS)
def test_internal_force_is_spin_gradient_of_strain_energy(second_order, shear, rng, central_fd, relative_error):
    X = _reference(rng, N_EL)
    u = _deformed(rng, X)
    el = _group(rng, N_EL, second_order, shear)
    q_fd = central_fd(lambda du: el.strain_energy(X, spin_update(u, du))[:, None], np.zeros_like(u), 1e-6)[:, 0]
    i, err = _worst(relative_error(el.internal_force(X, u), q_fd))
    assert err < 1e-6, f"beam3d force vs FD of strain energy: element {i} off by {err:.2e} (relative)"


@pytest.mark.parametrize("second_order, shear", SECTIONS)
@pytest.mark.parametrize("kind", list(STEPS))
def test_mid_point_tangent_matches_central_fd_of_cayley_step(kind, second_order, shear, rng,
                                                             assert_tangent_matches_fd):
    X = _reference(rng, N_EL)
    u0, u1 = _step(rng, X, kind)
    el = _group(rng, N_EL, second_order, shear)
    d = cayley_increment(u0, u1)
    roundtrip = np.abs(cayley_update(u0, d) - u1).max()
    assert roundtrip < 1e-12, f"test helper: Cayley increment does not reproduce u1 ({roundtrip:.2e})"
    q, K = el.mid_point_force_and_tangent(X, u0, u1)
    assert_tangent_matches_fd(K, lambda v: el.mid_point_force(X, u0, cayley_update(u0, v)), d,
                              f"beam3d mid-point tangent ({kind}, second_order={second_order}, "
                              f"shear={shear})")
    np.testing.assert_array_equal(q, el.mid_point_force(X, u0, u1))


@pytest.mark.parametrize("second_order, shear", SECTIONS)
def test_mid_point_force_of_zero_step_is_internal_force(second_order, shear, rng, relative_error):
    X = _reference(rng, N_EL)
    u = _deformed(rng, X)
    el = _group(rng, N_EL, second_order, shear)
    q_m, K_m = el.mid_point_force_and_tangent(X, u, u)
    q, K = el.force_and_tangent(X, u)
    i, err_q = _worst(relative_error(q_m, q))
    j, err_K = _worst(relative_error(K_m, 0.5 * K))
    assert err_q < 1e-12, f"mid-point force at u0 = u1 differs from the internal force by {err_q:.2e} (element {i})"
    # at a zero step d(d) = spin, and the averages move by half of it
    assert err_K < 1e-10, f"mid-point tangent at u0 = u1 differs from K/2 by {err_K:.2e} (element {j})"


# ------------------------------------------------------------------- energy, momentum
@pytest.mark.parametrize("second_order, shear", SECTIONS)
@pytest.mark.parametrize("kind", list(STEPS))
def test_mid_point_force_gives_exact_energy_increment(kind, second_order, shear, rng):
    X = _reference(rng, N_EL)
    u0, u1 = _step(rng, X, kind)
    el = _group(rng, N_EL, second_order, shear)
    d = cayley_increment(u0, u1)
    work = np.einsum("ei,ei->e", el.mid_point_force(X, u0, u1), d)
    phi0, phi1 = el.strain_energy(X, u0), el.strain_energy(X, u1)
    i, err = _worst(np.abs(work - (phi1 - phi0)) / (phi0 + phi1))
    assert err < 1e-12, (f"beam3d ({kind}): q_m . d misses Phi(u1) - Phi(u0) "
                         f"at element {i} by {err:.2e} of the energy scale")


@pytest.mark.parametrize("second_order, shear", SECTIONS)
def test_mid_point_force_system_is_self_equilibrated(second_order, shear, rng):
    """Zero resultant force and zero moment about the origin with the mid-point positions:
    the element neither creates linear nor angular momentum over a step."""
    X = _reference(rng, N_EL)
    u0, u1 = _step(rng, X, "large-deformation")
    el = _group(rng, N_EL, second_order, shear)
    q = el.mid_point_force(X, u0, u1)
    x_mid = X + 0.5 * (u0 + u1)[:, [[0, 1, 2], [6, 7, 8]]]             # (n, 2, 3)
    f = q[:, [[0, 1, 2], [6, 7, 8]]]                                   # (n, 2, 3) nodal forces
    m = q[:, [[3, 4, 5], [9, 10, 11]]]                                 # (n, 2, 3) nodal moments
    scale = np.abs(f).max(axis=(1, 2)) * np.linalg.norm(x_mid, axis=2).max(axis=1) + np.abs(m).max(axis=(1, 2))
    i, err_f = _worst(np.linalg.norm(f.sum(axis=1), axis=1) / np.abs(f).max(axis=(1, 2)))
    j, err_m = _worst(np.linalg.norm((np.cross(x_mid, f) + m).sum(axis=1), axis=1) / scale)
    assert err_f < 1e-12, f"mid-point forces do not sum to zero: element {i}, {err_f:.2e} of the largest force"
    assert err_m < 1e-12, f"mid-point moments about the origin do not sum to zero: element {j}, {err_m:.2e}"


# ----------------------------------------------------------------- invariance, objectivity
@pytest.mark.parametrize("second_order, shear", SECTIONS)
def test_rigid_motion_of_reference_gives_no_force_and_no_energy(second_order, shear, rng):
    X = _reference(rng, N_EL)
    el = _group(rng, N_EL, second_order, shear)
    l0 = np.linalg.norm(X[:, 1] - X[:, 0], axis=1)
    for Q in [_random_rotation(rng) for _ in range(4)] + [exp_map(np.pi * _unit(rng, 1)[0])]:
        u = _rotate_state(np.zeros((N_EL, 12)), X, Q, rng.uniform(-5.0, 5.0, 3))
        q = el.internal_force(X, u)
        force = np.abs(q).max(axis=1) / (el.EA + (el.EI_y + el.EI_z + el.GJ) / l0**2)
        energy = el.strain_energy(X, u) / (el.EA * l0)
        stresses = np.abs(el.generalized_stresses(X, u)).max(axis=1) / el.EA
        angle = np.linalg.norm(log_map(Q))
        assert force.max() < 1e-12, f"rigid rotation by {angle:.3f} rad: internal force {force.max():.2e} (relative)"
        assert energy.max() < 1e-24, f"rigid rotation by {angle:.3f} rad: strain energy {energy.max():.2e} EA l0"
        assert stresses.max() < 1e-12, f"rigid rotation by {angle:.3f} rad: stresses {stresses.max():.2e} EA"


@pytest.mark.parametrize("second_order, shear", SECTIONS)
def test_energy_stresses_and_forces_follow_a_superposed_rigid_rotation(second_order, shear, rng, relative_error):
    X = _reference(rng, N_EL)
    u = _deformed(rng, X, local=0.8, strain=0.2)
    el = _group(rng, N_EL, second_order, shear)
    q, K = el.force_and_tangent(X, u)
    phi, s = el.strain_energy(X, u), el.generalized_stresses(X, u)
    for _ in range(4):
        Q = _random_rotation(rng)
        T = np.kron(np.eye(4), Q)                                      # acts on [x_p, th_p, x_q, th_q]
        u_rot = _rotate_state(u, X, Q, rng.uniform(-5.0, 5.0, 3))
        q_rot, K_rot = el.force_and_tangent(X, u_rot)
        angle = np.linalg.norm(log_map(Q))
        i, err_phi = _worst(np.abs(el.strain_energy(X, u_rot) - phi) / phi)
        j, err_s = _worst(relative_error(el.generalized_stresses(X, u_rot), s))
        k, err_q = _worst(relative_error(q_rot, q @ T.T))
        m, err_K = _worst(relative_error(K_rot, T[None] @ K @ T.T[None]))
        assert err_phi < 1e-11, f"rotation by {angle:.3f} rad: strain energy of element {i} changes by {err_phi:.2e}"
        assert err_s < 1e-11, f"rotation by {angle:.3f} rad: stresses of element {j} change by {err_s:.2e}"
        assert err_q < 1e-11, f"rotation by {angle:.3f} rad: forces of element {k} are not Q f, Q m ({err_q:.2e})"
        assert err_K < 1e-11, f"rotation by {angle:.3f} rad: tangent of element {m} is not T K T^T ({err_K:.2e})"


def _frame(Q: np.ndarray, c: np.ndarray, second_order: bool):
    """3D portal frame with an out-of-plane cantilever arm, moved rigidly by x -> Q x + c.

    Two clamped columns (3 elements each), a beam between their tops (3 elements) and an arm
    from the beam's middle (2 elements); anisotropic sections with given y axes; tip loads in
    three directions and a moment, large enough for a clearly nonlinear response.
    Returns the model and the node list along the structure.
    """
    m = flexmb.Model(dim=3)
    P = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 2.0], [0.0, 0.0, 3.0],
                  [1.0, 0.0, 3.0], [2.0, 0.0, 3.0], [3.0, 0.0, 3.0],
                  [3.0, 0.0, 2.0], [3.0, 0.0, 1.0], [3.0, 0.0, 0.0],
                  [2.0, 1.0, 3.0], [2.0, 2.0, 3.0]])
    nodes = m.add_nodes(P @ Q.T + c)
    conn = np.array([[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [5, 6], [6, 7], [7, 8], [8, 9], [5, 10], [10, 11]])
    y = np.array([[1.0, 0.0, 0.0]] * 3 + [[0.0, 1.0, 0.3]] * 3 + [[1.0, 0.5, 0.0]] * 3 + [[0.2, 0.0, 1.0]] * 2)
    m.add_beam3d(nodes[conn], EA=1e6, GJ=300.0, EI_y=400.0, EI_z=900.0, GA_ky=5e4, GA_kz=8e4,
                 y_axis=y @ Q.T, second_order=second_order)
    m.fix(int(nodes[0]))
    m.fix(int(nodes[9]))
    for node, load in ((11, [30.0, -40.0, -60.0]), (3, [50.0, 20.0, 0.0])):
        for name, value in zip(("ux", "uy", "uz"), Q @ load):
            m.add_load(int(nodes[node]), name, value)
    for name, value in zip(("rx", "ry", "rz"), Q @ np.array([10.0, 25.0, -15.0])):
        m.add_load(int(nodes[6]), name, value)
    return m, nodes


@pytest.mark.parametrize("second_order", [False, True])
def test_frame_response_is_objective(second_order, rng):
    settings = NewtonSettings(residual_tol=1e-13)
    m0, nodes = _frame(np.eye(3), np.zeros(3), second_order)
    path0 = flexmb.load_control(m0, 4, newton=settings)
    Q, c = _random_rotation(rng), rng.uniform(-10.0, 10.0, 3)
    m1, _ = _frame(Q, c, second_order)
    path1 = flexmb.load_control(m1, 4, newton=settings)
    dofs = flexmb.Assembly(m0).dofs
    u0, u1 = path0.u[-1], path1.u[-1]
    r0, r1 = path0.reactions[-1], path1.reactions[-1]
    blocks = np.array([[dofs.first[n] + 3 * b + np.arange(3) for b in (0, 1)] for n in nodes])  # (n_nodes, 2, 3)
    tip = np.abs(u0[blocks[:, 0]]).max()
    assert tip > 0.05, f"frame deflects only {tip:.3e} m: not a nonlinear test"
    for name, a, b in (("displacements", u0, u1), ("reactions", r0, r1)):
        expected = a[blocks] @ Q.T                                      # (n_nodes, 2, 3)
        err = np.abs(b[blocks] - expected).max() / np.abs(a).max()
        assert err < 1e-9, f"rotated frame: {name} are not Q times the original ones, off by {err:.2e} (relative)"
    rot_angle = np.linalg.norm(u0[blocks[:, 1]], axis=1).max()
    assert rot_angle > 0.05, f"frame nodes turn only {rot_angle:.3e} rad"


# --------------------------------------------------------------------------- stiffness
def _timoshenko_frame_stiffness(EA, GJ, EI_y, EI_z, GA_ky, GA_kz, L):
    """Textbook linear 12x12 stiffness in the element frame (Przemieniecki 1968, Theory of Matrix
    Structural Analysis, the shear-deformable space frame element),
    DOFs [u, v, w, th_x, th_y, th_z] at both ends, shear parameters Phi = 12 EI / (GA_k L^2)."""
    k = np.zeros((12, 12))
    k[np.ix_([0, 6], [0, 6])] = EA / L * np.array([[1, -1], [-1, 1]])
    k[np.ix_([3, 9], [3, 9])] = GJ / L * np.array([[1, -1], [-1, 1]])
    for (w, th, sign), EI, GA in (((1, 5, 1.0), EI_z, GA_ky), ((2, 4, -1.0), EI_y, GA_kz)):
        phi = 12.0 * EI / (GA * L**2)
        c = EI / ((1.0 + phi) * L**3)
        idx = [w, th, w + 6, th + 6]
        k[np.ix_(idx, idx)] = c * np.array([
            [12.0, sign * 6 * L, -12.0, sign * 6 * L],
            [sign * 6 * L, (4 + phi) * L**2, -sign * 6 * L, (2 - phi) * L**2],
            [-12.0, -sign * 6 * L, 12.0, -sign * 6 * L],
            [sign * 6 * L, (2 - phi) * L**2, -sign * 6 * L, (4 + phi) * L**2]])
    return k


@pytest.mark.parametrize("second_order, shear", SECTIONS)
def test_reference_tangent_is_the_timoshenko_frame_stiffness(second_order, shear, rng, relative_error):
    X = _reference(rng, N_EL)
    el = _group(rng, N_EL, second_order, shear)
    K = el.tangent_stiffness(X, np.zeros((N_EL, 12)))
    E = el.section_frames(X)
    l0 = np.linalg.norm(X[:, 1] - X[:, 0], axis=1)
    k_local = np.stack([_timoshenko_frame_stiffness(*p) for p in
                        zip(el.EA, el.GJ, el.EI_y, el.EI_z, el.GA_ky, el.GA_kz, l0)])
    T = np.zeros((N_EL, 12, 12))                                       # global -> element frame
    for b in range(4):
        T[:, 3 * b:3 * b + 3, 3 * b:3 * b + 3] = E.transpose(0, 2, 1)
    i, err = _worst(relative_error(K, T.transpose(0, 2, 1) @ k_local @ T))
    assert err < 1e-12, f"K_t(0) differs from the Timoshenko frame stiffness at element {i} by {err:.2e}"


@pytest.mark.parametrize("second_order, shear", SECTIONS)
def test_unstressed_tangent_has_exactly_the_six_rigid_modes(second_order, shear, rng):
    X = _reference(rng, N_EL)
    el = _group(rng, N_EL, second_order, shear)
    K = el.tangent_stiffness(X, np.zeros((N_EL, 12)))
    asym = (np.linalg.norm(K - K.transpose(0, 2, 1), axis=(1, 2)) / np.linalg.norm(K, axis=(1, 2))).max()
    assert asym < 1e-14, f"K_t(0) is not symmetric: {asym:.2e}"
    lam = np.linalg.eigvalsh(K)                                        # (n, 12) ascending
    rel = lam / lam[:, -1:]
    i, zero = _worst(np.abs(rel[:, :6]).max(axis=1))
    j, seventh = int(np.argmin(rel[:, 6])), float(rel[:, 6].min())
    assert zero < 1e-12, f"K_t(0): six smallest eigenvalues reach {zero:.2e} of the largest (element {i})"
    assert seventh > 1e-8, f"K_t(0): seventh eigenvalue only {seventh:.2e} of the largest (element {j})"
    modes = _rigid_modes(X)
    res = np.linalg.norm(K @ modes, axis=1) / (lam[:, -1:] * np.linalg.norm(modes, axis=1))
    k, rigid = _worst(res.max(axis=1))
    assert rigid < 1e-12, f"K_t(0) strains an infinitesimal rigid motion: element {k}, {rigid:.2e}"


@pytest.mark.parametrize("second_order, shear", SECTIONS)
def test_geometric_stiffness_is_the_stress_linear_part(second_order, shear, rng, relative_error):
    X = _reference(rng, N_EL)
    u = _deformed(rng, X, local=0.6, strain=0.2)
    el = _group(rng, N_EL, second_order, shear)
    K = el.tangent_stiffness(X, u)
    s = el.generalized_stresses(X, u)
    # linear in the stresses
    s1, s2 = rng.normal(size=(2, N_EL, 6)) * np.abs(s).max(axis=1)[None, :, None]
    a, b = 1.7, -0.6
    combo = el.geometric_stiffness(X, u, a * s1 + b * s2)
    i, err_lin = _worst(relative_error(combo, a * el.geometric_stiffness(X, u, s1)
                                       + b * el.geometric_stiffness(X, u, s2)))
    assert err_lin < 1e-12, f"geometric stiffness is not linear in the stresses: element {i}, {err_lin:.2e}"
    zero = np.abs(el.geometric_stiffness(X, u, np.zeros_like(s))).max()
    assert zero == 0.0, f"geometric stiffness of zero stresses is {zero:.2e}"
    # what is left with the element's own stresses is the material part G^T (ds~/de) G at u:
    # symmetric, positive semi-definite of rank 6, blind to the rigid motions of the current state
    Km = K - el.geometric_stiffness(X, u, s)
    norm = np.linalg.norm(Km, axis=(1, 2))
    j, asym = _worst(np.linalg.norm(Km - Km.transpose(0, 2, 1), axis=(1, 2)) / norm)
    assert asym < 1e-12, f"K_t - K_g(own stresses) is not symmetric: element {j}, {asym:.2e}"
    lam = np.linalg.eigvalsh(0.5 * (Km + Km.transpose(0, 2, 1))) / norm[:, None]
    k, low = _worst(np.abs(lam[:, :6]).max(axis=1))
    assert low < 1e-12, f"K_t - K_g(own stresses) has rank > 6: element {k}, eigenvalue {low:.2e} (relative)"
    assert lam[:, 6].min() > 1e-9, f"K_t - K_g(own stresses) has rank < 6: {lam[:, 6].min():.2e}"
    modes = _rigid_modes(_positions(X, u))
    res = np.linalg.norm(Km @ modes, axis=1) / (norm[:, None] * np.linalg.norm(modes, axis=1))
    m, rigid = _worst(res.max(axis=1))
    assert rigid < 1e-12, f"K_t - K_g(own stresses) strains a rigid motion: element {m}, {rigid:.2e}"


# --------------------------------------------------------------------------------- mass
@pytest.mark.parametrize("kind", ["lumped", "consistent"])
def test_mass_matrix_and_rotary_inertia(kind, rng):
    X = _reference(rng, N_EL)
    rho_A, rho_I = rng.uniform(0.1, 10.0, N_EL), rng.uniform(0.01, 1.0, (N_EL, 3))
    el = _group(rng, N_EL, rho_A=rho_A, rho_I=rho_I, mass=kind)
    l0 = np.linalg.norm(X[:, 1] - X[:, 0], axis=1)
    M = el.mass_matrix(X)                                              # (n, 12, 12)
    for k in range(3):
        idx = [k, 6 + k]
        total = M[:, idx][:, :, idx].sum(axis=(1, 2))
        i, err = _worst(np.abs(total - rho_A * l0) / (rho_A * l0))
        assert err < 1e-14, f"{kind}: translational mass in direction {k} off by {err:.2e} (element {i})"
    rot = np.r_[3:6, 9:12]
    assert not np.any(M[:, rot, :]) and not np.any(M[:, :, rot]), f"{kind}: rotational rows of M are not zero"
    off = np.abs(M[:, 0:3, 0:3] - np.eye(3) * M[:, 0:1, 0:1]).max()
    assert off == 0.0, f"{kind}: translational blocks are not isotropic ({off:.2e})"
    J = el.rotary_inertia(X)                                           # (n, 2, 3, 3)
    E = el.section_frames(X)
    expected = l0[:, None, None] * E @ (rho_I[:, :, None] * E.transpose(0, 2, 1))
    i, err = _worst(np.abs(J.sum(axis=1) - expected).max(axis=(1, 2)) / rho_I.max(axis=1) / l0)
    assert err < 1e-14, f"rotary inertia summed over the nodes misses l0 E diag(rho_I) E^T by {err:.2e} (element {i})"
    np.testing.assert_array_equal(J[:, 0], J[:, 1], err_msg="rotary inertia not split evenly over the nodes")


def test_hermitian_mass_is_exact_for_rigid_motion_and_objective(rng):
    """mass="cubic": symmetric positive semi-definite; the kinetic energy of any rigid velocity
    field v(x) = v0 + w x x (linear along the element, so interpolated exactly by the cubic
    Hermite polynomials) is int rho A |v|^2 dx / 2 exactly; rotating the element rotates M."""
    X = _reference(rng, N_EL)
    rho_A = rng.uniform(0.1, 10.0, N_EL)
    el = _group(rng, N_EL, rho_A=rho_A, mass="cubic")
    M = el.mass_matrix(X)
    np.testing.assert_allclose(M, M.transpose(0, 2, 1), atol=1e-13 * np.abs(M).max())
    assert np.linalg.eigvalsh(M).min() > -1e-12 * np.abs(M).max(), "cubic mass not positive semi-definite"
    v0, w = rng.normal(size=(N_EL, 3)), rng.normal(size=(N_EL, 3))
    nodal = np.concatenate([v0 + np.cross(w, X[:, 0]), w, v0 + np.cross(w, X[:, 1]), w], axis=1)
    energy = 0.5 * np.einsum("ei,eij,ej->e", nodal, M, nodal)
    # exact: v(s) = a + s b along s in [0, 1], int_0^1 |a + s b|^2 ds = |a|^2 + a.b + |b|^2 / 3
    a = v0 + np.cross(w, X[:, 0])
    b = np.cross(w, X[:, 1] - X[:, 0])
    l0 = np.linalg.norm(X[:, 1] - X[:, 0], axis=1)
    exact = 0.5 * rho_A * l0 * (np.einsum("ei,ei->e", a, a) + np.einsum("ei,ei->e", a, b)
                                + np.einsum("ei,ei->e", b, b) / 3.0)
    i, err = _worst(np.abs(energy - exact) / exact)
    assert err < 1e-12, f"rigid-motion kinetic energy off by {err:.2e} (element {i})"
    R = exp_map(rng.normal(size=3))
    turned = copy.deepcopy(el)
    turned.y_axis = el.y_axis @ R.T                                    # the section axes turn too
    T = np.kron(np.eye(4), R)
    M_turned = turned.mass_matrix(X @ R.T)
    np.testing.assert_allclose(M_turned, T @ el.mass_matrix(X) @ T.T, atol=1e-12 * np.abs(M).max())


def test_cubic_beam3d_mass_is_refused_in_dynamics():
    model = flexmb.Model(dim=3)
    nodes = model.add_nodes(np.c_[np.linspace(0.0, 1.0, 3), np.zeros(3), np.zeros(3)])
    model.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, GJ=1e3, EI_y=1.0, EI_z=1.0, rho_A=3.0,
                     mass="cubic", name="arm")
    model.fix(0)
    with pytest.raises(flexmb.ModelError, match="'arm' has mass='cubic'.*natural modes"):
        flexmb.integrate(model, 0.01, 0.1)


def test_section_frames_are_right_handed_and_follow_y_axis(rng):
    X = _reference(rng, N_EL)
    el = _group(rng, N_EL)
    E = el.section_frames(X)
    orth = np.abs(E.transpose(0, 2, 1) @ E - np.eye(3)).max()
    det = np.abs(np.linalg.det(E) - 1.0).max()
    ex = (X[:, 1] - X[:, 0]) / np.linalg.norm(X[:, 1] - X[:, 0], axis=1)[:, None]
    along = np.abs(E[:, :, 0] - ex).max()
    y = el.y_axis - np.einsum("ei,ei->e", el.y_axis, ex)[:, None] * ex
    in_plane = np.abs(np.einsum("ei,ei->e", E[:, :, 1], y) - np.linalg.norm(y, axis=1)).max()
    assert orth < 1e-14 and det < 1e-14, f"section frames not orthonormal ({orth:.2e}) or not proper ({det:.2e})"
    assert along < 1e-14, f"e_x is not along the element: {along:.2e}"
    assert in_plane < 1e-14, f"e_y is not the projected y_axis: {in_plane:.2e}"


# ----------------------------------------------------------------------------- analytic
def _cantilever(n: int, L: float, axis: np.ndarray, y_axis: np.ndarray, section: dict):
    """Cantilever of n elements along ``axis``, clamped at node 0; (model, tip node)."""
    model = flexmb.Model(dim=3)
    nodes = model.add_nodes(np.linspace(0.0, L, n + 1)[:, None] * axis[None, :])
    model.add_beam3d(np.stack([nodes[:-1], nodes[1:]], axis=1), y_axis=y_axis, **section)
    model.fix(int(nodes[0]))
    return model, int(nodes[-1])


def _tip_response(model: flexmb.Model, tip: int) -> tuple[np.ndarray, np.ndarray]:
    u = flexmb.load_control(model, 1, newton=NewtonSettings(residual_tol=1e-13)).u[-1]
    dofs = flexmb.Assembly(model).dofs
    return (np.array([u[dofs.index(tip, d)] for d in ("ux", "uy", "uz")]),
            np.array([u[dofs.index(tip, d)] for d in ("rx", "ry", "rz")]))


@pytest.mark.parametrize("second_order", [False, True])
@pytest.mark.parametrize("shear", [False, True])
@pytest.mark.parametrize("n", [1, 4])
@pytest.mark.parametrize("direction", ["y", "z"])
def test_cantilever_tip_force(direction, n, shear, second_order):
    """Timoshenko: w = P L^3 / (3 EI) + P L / (GA k), section rotation P L^2 / (2 EI), exact for
    any number of elements (the shear-modified stiffness of Meijaard's eq. 6 is exact for
    end-loaded uniform beams). A force along e_y bends about z (EI_z, GA_ky), along e_z about y."""
    L = 2.0
    section = dict(EA=1e8, GJ=30.0, EI_y=40.0, EI_z=90.0, GA_ky=2e3 if shear else np.inf,
                   GA_kz=5e3 if shear else np.inf, second_order=second_order)
    axis = np.array([0.48, -0.6, 0.64])
    axis /= np.linalg.norm(axis)
    hint = np.array([0.3, 0.9, 0.2])
    ey = hint - (hint @ axis) * axis
    ey /= np.linalg.norm(ey)
    ez = np.cross(axis, ey)
    e_load, EI, GA, e_bend = ((ey, section["EI_z"], section["GA_ky"], ez) if direction == "y"
                              else (ez, section["EI_y"], section["GA_kz"], -ey))
    model, tip = _cantilever(n, L, axis, hint, section)
    P = 1e-6 * 3.0 * EI / L**2                                          # bending deflection 1e-6 L
    for name, value in zip(("ux", "uy", "uz"), P * e_load):
        model.add_load(tip, name, value)
    d, psi = _tip_response(model, tip)
    w_exact = P * L**3 / (3.0 * EI) + P * L / GA
    th_exact = P * L**2 / (2.0 * EI)
    w, th = d @ e_load, psi @ e_bend
    stray = max(np.linalg.norm(d - w * e_load), np.linalg.norm(psi - th * e_bend) * L)
    assert abs(w / w_exact - 1.0) < 1e-6, (f"force along e_{direction}, {n} element(s): tip deflection {w:.9e} "
                                           f"vs {w_exact:.9e} ({w / w_exact - 1:+.2e} relative)")
    assert abs(th / th_exact - 1.0) < 1e-6, (f"force along e_{direction}, {n} element(s): tip rotation {th:.9e} "
                                             f"vs {th_exact:.9e} ({th / th_exact - 1:+.2e} relative)")
    assert stray < 1e-6 * w_exact, f"force along e_{direction}: motion out of the loaded plane {stray:.2e} m"


@pytest.mark.parametrize("case", ["torque", "axial"])
def test_cantilever_tip_torque_and_axial_force(case):
    """Twist T L / GJ about the axis; elongation P L / EA."""
    L, n = 3.0, 3
    section = dict(EA=2e5, GJ=30.0, EI_y=40.0, EI_z=90.0, GA_ky=2e3, GA_kz=5e3)
    axis = np.array([-0.36, 0.48, 0.8])
    model, tip = _cantilever(n, L, axis, np.array([0.0, 0.0, 1.0]), section)
    if case == "torque":
        T = 1e-6 * section["GJ"] / L
        names, value, exact = ("rx", "ry", "rz"), T * axis, T * L / section["GJ"]
    else:
        F = 1e-6 * section["EA"]
        names, value, exact = ("ux", "uy", "uz"), F * axis, F * L / section["EA"]
    for name, v in zip(names, value):
        model.add_load(tip, name, v)
    d, psi = _tip_response(model, tip)
    got, other = (psi, d) if case == "torque" else (d, psi)
    along = got @ axis
    stray = max(np.linalg.norm(got - along * axis), np.linalg.norm(other) * (L if case == "torque" else 1.0))
    assert abs(along / exact - 1.0) < 1e-6, f"{case}: tip value {along:.9e} vs {exact:.9e} ({along / exact - 1:+.2e})"
    assert stray < 1e-6 * abs(exact) * (L if case == "torque" else 1.0), f"{case}: coupled motion {stray:.2e}"


# ------------------------------------------------------------------------------- errors
def test_y_axis_parallel_to_element_names_the_element():
    model = flexmb.Model(dim=3)
    nodes = model.add_nodes([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 2.0, 0.0]])
    with pytest.raises(flexmb.ModelError, match=r"y_axis of element 1\b.*parallel"):
        model.add_beam3d([[nodes[0], nodes[1]], [nodes[1], nodes[2]]], 1.0, 1.0, 1.0, 1.0,
                         y_axis=[[0.0, 0.0, 1.0], [0.0, -3.0, 0.0]])
    assert not model.groups, "a refused group must not stay in the model"


@pytest.mark.parametrize("kw, bad, index", [
    (dict(EA=[1.0, -1.0]), "EA", 1),
    (dict(GJ=[0.0, 1.0]), "GJ", 0),
    (dict(EI_y=[1.0, np.nan]), "EI_y", 1),
    (dict(EI_z=[-2.0, 1.0]), "EI_z", 0),
    (dict(GA_ky=[1.0, -5.0]), "GA_ky", 1),
    (dict(rho_A=[0.0, -1.0]), "rho_A", 1),
    (dict(rho_I=[[0.0, 0.0, 0.0], [1.0, -1.0, 1.0]]), "rho_I", 1),
])
def test_bad_section_values_name_the_element(kw, bad, index):
    section = dict(EA=1.0, GJ=1.0, EI_y=1.0, EI_z=1.0) | kw
    with pytest.raises(ValueError, match=rf"{bad} of element {index}\b"):
        Beam3D(np.array([[0, 1], [1, 2]]), **section)


@pytest.mark.parametrize("rho_I", [(1.0, 2.0), np.ones((3, 3)), np.ones((2, 2))])
def test_wrong_rho_I_shape_is_refused(rho_I):
    with pytest.raises(ValueError, match=r"rho_I must have shape \(3,\) or \(2, 3\)"):
        Beam3D(np.array([[0, 1], [1, 2]]), 1.0, 1.0, 1.0, 1.0, rho_I=rho_I)


def test_beam3d_on_a_2d_model_is_refused():
    model = flexmb.Model(dim=2)
    model.add_nodes([[0.0, 0.0], [1.0, 0.0]])
    with pytest.raises(flexmb.ModelError, match="add_beam3d needs a 3D model"):
        model.add_beam3d([[0, 1]], 1.0, 1.0, 1.0, 1.0)
