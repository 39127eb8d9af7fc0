"""Unit tests of the planar co-rotational Euler-Bernoulli beam kernel.

Random batches (fixed seed) with chord rotations of any angle, nodal rotations of several
radians (extra turns included) and local rotations up to 1.2 rad; closed-form cantilever
deflection and Euler buckling through the public Model / load_control / Assembly API.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq

import flexmb
from flexmb import Beam2D

N_EL = 400
TB_MAX = 1.2           # rad, |local rotation| kept well below pi


def _rot(phi: float) -> np.ndarray:
    return np.array([[np.cos(phi), -np.sin(phi)], [np.sin(phi), np.cos(phi)]])


def _reference(rng: np.random.Generator, n: int) -> np.ndarray:
    """Reference coordinates X (n, 2, 2): random position, any direction, length 0.5..3 m."""
    X1 = rng.uniform(-2.0, 2.0, (n, 2))
    a = rng.uniform(-np.pi, np.pi, n)
    l0 = rng.uniform(0.5, 3.0, n)
    return np.stack([X1, X1 + l0[:, None] * np.stack([np.cos(a), np.sin(a)], axis=1)], axis=1)


def _configuration(rng: np.random.Generator, X: np.ndarray, alpha: np.ndarray, turns: np.ndarray,
                   strain: float = 0.2) -> np.ndarray:
    """Element DOFs (n, 6) whose chord is rotated by ``alpha`` from the reference chord.

    Nodal rotations theta_i = alpha + tb_i + 2 pi turns_i with local rotations |tb_i| <= TB_MAX.
    """
    n = len(X)
    X21 = X[:, 1] - X[:, 0]
    l = np.linalg.norm(X21, axis=1) * (1.0 + rng.uniform(-strain, strain, n))
    e = np.einsum("eij,ej->ei", np.stack([_rot(a) for a in alpha]), X21 / np.linalg.norm(X21, axis=1)[:, None])
    d1 = rng.uniform(-3.0, 3.0, (n, 2))
    d2 = X[:, 0] + d1 + l[:, None] * e - X[:, 1]
    theta = alpha[:, None] + rng.uniform(-TB_MAX, TB_MAX, (n, 2)) + 2.0 * np.pi * turns
    return np.concatenate([d1, theta[:, :1], d2, theta[:, 1:]], axis=1)


def _deformed(rng: np.random.Generator, X: np.ndarray) -> np.ndarray:
    n = len(X)
    return _configuration(rng, X, rng.uniform(-np.pi, np.pi, n), rng.integers(-1, 2, (n, 2)))


def _step_pair(rng: np.random.Generator, X: np.ndarray, max_dalpha: float = 2.0):
    """Two configurations whose chords differ by a rotation up to ``max_dalpha`` (< pi) rad.

    The nodal rotations keep their turn count, so theta_1 - theta_0 is the physical rotation
    increment (the mid-point force works on increments, the strain energy on angles mod 2 pi).
    """
    n = len(X)
    alpha0 = rng.uniform(-np.pi, np.pi, n)
    turns = rng.integers(-1, 2, (n, 2))
    dalpha = rng.uniform(-max_dalpha, max_dalpha, n)
    return _configuration(rng, X, alpha0, turns), _configuration(rng, X, alpha0 + dalpha, turns)


def _group(rng: np.random.Generator, n: int, **kw) -> Beam2D:
    return Beam2D(np.zeros((n, 2), dtype=int), EA=10.0 ** rng.uniform(3.0, 5.0, n),
                  EI=10.0 ** rng.uniform(1.0, 3.0, n), **kw)


def _T(R: np.ndarray) -> np.ndarray:
    """diag(R, 1, R, 1) acting on the element DOFs (6, 6)."""
    T = np.eye(6)
    T[0:2, 0:2] = T[3:5, 3:5] = R
    return T


def _rigid(X: np.ndarray, phi: float, c: np.ndarray) -> np.ndarray:
    """DOFs (n, 6) of a rigid rotation by phi about the origin plus a translation c."""
    x = X @ _rot(phi).T + c
    d = x - X
    th = np.full((len(X), 1), phi)
    return np.concatenate([d[:, 0], th, d[:, 1], th], axis=1)


# -------------------------------------------------------------------------- kinematics
def test_local_rotations_are_the_generated_ones(rng):
    X = _reference(rng, N_EL)
    alpha = rng.uniform(-np.pi, np.pi, N_EL)
    u = _configuration(rng, X, alpha, rng.integers(-2, 3, (N_EL, 2)))
    tb = np.mod(u[:, [2, 5]] - alpha[:, None] + np.pi, 2.0 * np.pi) - np.pi
    err = np.abs(Beam2D(np.zeros((N_EL, 2), dtype=int), 1.0, 1.0).local_rotations(X, u) - tb).max()
    assert err < 1e-12, f"local rotations off by {err:.2e} rad"


# ------------------------------------------------------------------------- derivatives
def test_tangent_matches_central_fd(rng, assert_tangent_matches_fd):
    X = _reference(rng, N_EL)
    u = _deformed(rng, X)
    el = _group(rng, N_EL)
    q, K = el.force_and_tangent(X, u)
    assert_tangent_matches_fd(K, lambda v: el.internal_force(X, v), u, "beam tangent")
    np.testing.assert_array_equal(q, el.internal_force(X, u))
    asym = (np.linalg.norm(K - K.transpose(0, 2, 1), axis=(1, 2)) / np.linalg.norm(K, axis=(1, 2))).max()
    assert asym < 1e-12, f"static beam tangent (Hessian of the energy) is not symmetric: {asym:.2e}"


def test_internal_force_is_gradient_of_strain_energy(rng, central_fd, relative_error):
    X = _reference(rng, N_EL)
    u = _deformed(rng, X)
    el = _group(rng, N_EL)
    q_fd = central_fd(lambda v: el.strain_energy(X, v)[:, None], u, 1e-6)[:, 0, :]
    err = relative_error(el.internal_force(X, u), q_fd)
    assert err.max() < 1e-6, f"beam force vs FD of strain energy: worst relative error {err.max():.2e}"


@pytest.mark.parametrize("max_dalpha", [2.0, 1e-3])
def test_mid_point_tangent_matches_central_fd(max_dalpha, rng, assert_tangent_matches_fd):
    """Large chord-rotation steps, and small ones that use the series branch of d_alpha/sin(d_alpha)."""
    X = _reference(rng, N_EL)
    u0, u1 = _step_pair(rng, X, max_dalpha)
    el = _group(rng, N_EL)
    q, K = el.mid_point_force_and_tangent(X, u0, u1)
    assert_tangent_matches_fd(K, lambda v: el.mid_point_force(X, u0, v), u1,
                              f"beam mid-point tangent (|d_alpha| <= {max_dalpha})")
    np.testing.assert_array_equal(q, el.mid_point_force(X, u0, u1))


def test_mid_point_force_of_zero_step_is_internal_force(rng, relative_error):
    X = _reference(rng, N_EL)
    u = _deformed(rng, X)
    el = _group(rng, N_EL)
    q_m, K_m = el.mid_point_force_and_tangent(X, u, u)
    q, K = el.force_and_tangent(X, u)
    err_q = relative_error(q_m, q).max()
    err_K = relative_error(K_m, 0.5 * K).max()
    assert err_q < 1e-12, f"mid-point force at u0 = u1 differs from the internal force by {err_q:.2e}"
    assert err_K < 1e-12, f"mid-point tangent at u0 = u1 differs from K/2 by {err_K:.2e}"


# ------------------------------------------------------------------------------ energy
@pytest.mark.parametrize("max_dalpha", [2.0, 1e-3])
def test_mid_point_force_gives_exact_energy_increment(max_dalpha, rng):
    X = _reference(rng, N_EL)
    u0, u1 = _step_pair(rng, X, max_dalpha)
    el = _group(rng, N_EL)
    work = np.einsum("ei,ei->e", el.mid_point_force(X, u0, u1), u1 - u0)
    phi0, phi1 = el.strain_energy(X, u0), el.strain_energy(X, u1)
    err = np.abs(work - (phi1 - phi0)) / (phi0 + phi1)
    worst = int(np.argmax(err))
    assert err[worst] < 1e-12, (f"beam (|d_alpha| <= {max_dalpha}): q_m.(u1 - u0) misses Phi(u1) - Phi(u0) at "
                                f"element {worst} by {err[worst]:.2e} of the energy scale")


def test_mid_point_force_of_exact_zero_chord_rotation(rng):
    """d_alpha = 0 exactly (pure stretch and bending): the series branch of gamma."""
    X = _reference(rng, 50)
    el = _group(rng, 50)
    alpha, turns = rng.uniform(-np.pi, np.pi, 50), rng.integers(-1, 2, (50, 2))
    u0, u1 = _configuration(rng, X, alpha, turns), _configuration(rng, X, alpha, turns)
    work = np.einsum("ei,ei->e", el.mid_point_force(X, u0, u1), u1 - u0)
    phi0, phi1 = el.strain_energy(X, u0), el.strain_energy(X, u1)
    err = (np.abs(work - (phi1 - phi0)) / (phi0 + phi1)).max()
    assert err < 1e-12, f"beam, zero chord rotation: energy increment missed by {err:.2e}"


# ----------------------------------------------------------------- invariance, objectivity
@pytest.mark.parametrize("phi", [0.0, 0.7, 3.0, -5.0, np.pi, 3.0 + 4.0 * np.pi, -5.0 - 6.0 * np.pi, 40.0])
def test_rigid_motion_gives_no_force_and_no_energy(phi, rng):
    X = _reference(rng, N_EL)
    el = _group(rng, N_EL)
    u = _rigid(X, phi, rng.uniform(-5.0, 5.0, 2))
    l0 = np.linalg.norm(X[:, 1] - X[:, 0], axis=1)
    q, K = el.force_and_tangent(X, u)
    force = np.abs(q).max(axis=1) / (el.EA + el.EI / l0)
    energy = el.strain_energy(X, u) / (el.EA * l0)
    assert force.max() < 1e-12, f"rigid rotation {phi:.3f} rad: internal force {force.max():.2e} (EA + EI/l0)"
    assert energy.max() < 1e-24, f"rigid rotation {phi:.3f} rad: strain energy {energy.max():.2e} EA l0"
    tb = np.abs(el.local_rotations(X, u)).max()
    assert tb < 1e-12, f"rigid rotation {phi:.3f} rad: local rotations {tb:.2e} rad, expected 0"
    # the unstressed tangent annihilates the infinitesimal rigid modes (two translations, one rotation)
    x = X + u[:, [[0, 1], [3, 4]]]                                      # (n, 2, 2) current positions
    modes = np.zeros((N_EL, 6, 3))
    modes[:, [0, 3], 0] = modes[:, [1, 4], 1] = 1.0
    modes[:, [0, 3], 2] = -x[:, :, 1]
    modes[:, [1, 4], 2] = x[:, :, 0]
    modes[:, [2, 5], 2] = 1.0
    res = np.linalg.norm(K @ modes, axis=1) / np.linalg.norm(K, axis=(1, 2))[:, None] \
        / np.linalg.norm(modes, axis=1)
    assert res.max() < 1e-12, f"rigid rotation {phi:.3f} rad: K times rigid mode is {res.max():.2e} (relative)"


def test_force_and_tangent_rotate_with_the_element(rng, relative_error):
    X = _reference(rng, N_EL)
    u = _deformed(rng, X)
    el = _group(rng, N_EL)
    q, K = el.force_and_tangent(X, u)
    phi0, tb0 = el.strain_energy(X, u), el.local_rotations(X, u)
    for phi in [3.0, -5.0, 2.0 * np.pi + 1.0, -9.0]:
        R, T = _rot(phi), _T(_rot(phi))
        x = (X + u[:, [[0, 1], [3, 4]]]) @ R.T + rng.uniform(-5.0, 5.0, 2)
        d = x - X
        u_rot = np.concatenate([d[:, 0], u[:, 2:3] + phi, d[:, 1], u[:, 5:6] + phi], axis=1)
        q_rot, K_rot = el.force_and_tangent(X, u_rot)
        err_q = relative_error(q_rot, q @ T.T)
        err_m = np.abs(q_rot[:, [2, 5]] - q[:, [2, 5]]).max() / np.abs(q).max()
        err_K = relative_error(K_rot, T[None] @ K @ T.T[None])
        err_phi = (np.abs(el.strain_energy(X, u_rot) - phi0) / phi0).max()
        err_tb = np.abs(el.local_rotations(X, u_rot) - tb0).max()
        assert err_q.max() < 1e-11, f"rotation {phi}: forces do not rotate with the beam, off by {err_q.max():.2e}"
        assert err_m < 1e-11, f"rotation {phi}: nodal moments change by {err_m:.2e}"
        assert err_K.max() < 1e-11, f"rotation {phi}: tangent is not T K T^T, off by {err_K.max():.2e}"
        assert err_phi < 1e-11, f"rotation {phi}: strain energy changes by {err_phi:.2e} (relative)"
        assert err_tb < 1e-11, f"rotation {phi}: local rotations change by {err_tb:.2e} rad"


# --------------------------------------------------------------------------------- mass
@pytest.mark.parametrize("kind", ["lumped", "consistent"])
def test_mass_matrix(kind, rng):
    X = _reference(rng, N_EL)
    rho_A, rho_I = rng.uniform(0.1, 10.0, N_EL), rng.uniform(0.01, 1.0, N_EL)
    el = _group(rng, N_EL, rho_A=rho_A, rho_I=rho_I, mass=kind)
    M = el.mass_matrix(X)                                               # (n, 6, 6)
    l0 = np.linalg.norm(X[:, 1] - X[:, 0], axis=1)
    m = rho_A * l0
    pattern = np.diag([0.5, 0.5]) if kind == "lumped" else np.array([[2.0, 1.0], [1.0, 2.0]]) / 6.0
    expected = np.zeros_like(M)
    for a in range(2):
        for b in range(2):
            for k in range(2):
                expected[:, 3 * a + k, 3 * b + k] = m * pattern[a, b]
    expected[:, 2, 2] = expected[:, 5, 5] = 0.5 * rho_I * l0
    err = np.abs(M - expected).max() / m.max()
    assert err < 1e-14, f"{kind} beam mass matrix differs from the hand pattern by {err:.2e}"
    for k in range(2):
        total = M[:, [k, 3 + k]][:, :, [k, 3 + k]].sum(axis=(1, 2))
        err = (np.abs(total - m) / m).max()
        assert err < 1e-14, f"{kind} beam: translational mass in direction {k} off by {err:.2e} (relative)"
    assert np.array_equal(M, M.transpose(0, 2, 1)), f"{kind} beam mass matrix is not symmetric"
    assert np.linalg.eigvalsh(M).min() > 0.0, f"{kind} beam mass with rho_I > 0 is not positive definite"
    M_moved = el.mass_matrix(X @ _rot(2.5).T + np.array([1.0, -4.0]))
    assert np.abs(M_moved - M).max() <= 1e-14 * m.max(), f"{kind} beam mass changes under a rigid motion of X"
    M0 = _group(rng, N_EL, rho_A=rho_A, mass=kind).mass_matrix(X)
    assert np.linalg.eigvalsh(M0).min() > -1e-14 * m.max(), f"{kind} beam mass (rho_I = 0) is not semidefinite"


# ----------------------------------------------------------------------------- analytic
def _cantilever(n: int, L: float, EA: float, EI: float, angle: float = 0.0):
    """Cantilever of n elements along direction ``angle``, clamped at node 0; (model, tip node)."""
    model = flexmb.Model(dim=2)
    s = np.linspace(0.0, L, n + 1)
    nodes = model.add_nodes(np.stack([s * np.cos(angle), s * np.sin(angle)], axis=1))
    model.add_beam2d(np.stack([nodes[:-1], nodes[1:]], axis=1), EA=EA, EI=EI)
    model.fix(int(nodes[0]))
    return model, int(nodes[-1])


@pytest.mark.parametrize("n", [1, 4, 7])
def test_cantilever_tip_load_small_deflection(n):
    """Euler-Bernoulli: w = P L^3 / (3 EI), theta = P L^2 / (2 EI); cubic Hermite is nodally exact."""
    L, EA, EI = 2.0, 1e8, 50.0
    P = 1e-6 * 3.0 * EI / L**2                                          # tip deflection 1e-6 L
    model, tip = _cantilever(n, L, EA, EI)
    model.add_load(tip, "uy", P)
    u = flexmb.load_control(model, 1).u[-1]
    dofs = flexmb.Assembly(model).dofs
    w, th = u[dofs.index(tip, "uy")], u[dofs.index(tip, "rz")]
    w_exact, th_exact = P * L**3 / (3.0 * EI), P * L**2 / (2.0 * EI)
    assert abs(w / w_exact - 1.0) < 1e-6, f"{n} elements: tip deflection {w:.9e} vs {w_exact:.9e} " \
                                          f"({w / w_exact - 1:+.2e} relative)"
    assert abs(th / th_exact - 1.0) < 1e-6, f"{n} elements: tip rotation {th:.9e} vs {th_exact:.9e} " \
                                            f"({th / th_exact - 1:+.2e} relative)"


@pytest.mark.parametrize("case", ["moment", "axial"])
def test_cantilever_tip_moment_or_axial_load_small_deflection(case):
    """Inclined cantilever. Tip moment: theta = M L / EI, w = M L^2 / (2 EI); axial load: u = F L / EA.

    The two loads are applied separately: an axial force of 1e-6 EA together with the moment
    would stiffen the bending by N L^2 / (3 EI) ~ 1.5 % (beam-column effect), which the
    co-rotational beam rightly reproduces.
    """
    L, EA, EI, angle = 3.0, 1e5, 20.0, 0.6
    model, tip = _cantilever(5, L, EA, EI, angle)
    if case == "moment":
        M = 1e-6 * EI / L
        model.add_load(tip, "rz", M)
        expected = {"rotation": M * L / EI, "deflection": M * L**2 / (2 * EI), "elongation": 0.0}
    else:
        F = 1e-6 * EA
        model.add_load(tip, "ux", F * np.cos(angle))
        model.add_load(tip, "uy", F * np.sin(angle))
        expected = {"rotation": 0.0, "deflection": 0.0, "elongation": F * L / EA}
    u = flexmb.load_control(model, 1).u[-1]
    dofs = flexmb.Assembly(model).dofs
    d = np.array([u[dofs.index(tip, "ux")], u[dofs.index(tip, "uy")]])
    got = {"rotation": u[dofs.index(tip, "rz")], "deflection": d @ [-np.sin(angle), np.cos(angle)],
           "elongation": d @ [np.cos(angle), np.sin(angle)]}
    scale = max(abs(v) for v in expected.values())
    for name, exact in expected.items():
        miss = abs(got[name] - exact) / (abs(exact) if exact else scale)
        assert miss < 1e-6, f"{case} load: tip {name} {got[name]:.9e} vs {exact:.9e} (missed by {miss:.2e})"


def test_euler_buckling_load_of_cantilever():
    """Tangent at the straight, axially compressed state is singular at P_cr = pi^2 EI / (4 L^2).

    The co-rotational beam's geometric stiffness comes from the chord rotation only (no
    shallow-arch term), so P_cr converges from above as O(h^2): +5.2 % with 2 elements,
    +1.3 % with 4, +0.32 % with 8 (measured 2026-11-21), hence the 1 % tolerance at n = 8.
    """
    n, L, EA, EI = 8, 2.0, 1e8, 10.0
    model, tip = _cantilever(n, L, EA, EI)
    asm = flexmb.Assembly(model)
    x = model.coordinates[:, 0]
    ux = np.array([asm.dofs.index(i, "ux") for i in range(model.n_nodes)])

    def smallest_eigenvalue(P: float) -> float:
        u = np.zeros(asm.n_dof)
        u[ux] = -P * x / EA                                             # exact compressed equilibrium
        q, data = asm.force_and_tangent(u)
        return float(np.linalg.eigvalsh(asm.free_matrix(data).toarray())[0])

    P_exact = np.pi**2 * EI / (4.0 * L**2)
    assert smallest_eigenvalue(0.0) > 0.0, "unloaded cantilever tangent is not positive definite"
    P_cr = brentq(smallest_eigenvalue, 0.5 * P_exact, 1.5 * P_exact, xtol=1e-10 * P_exact)
    err = P_cr / P_exact - 1.0
    assert abs(err) < 0.01, f"{n}-element cantilever buckles at {P_cr:.6g} N, Euler {P_exact:.6g} N ({err:+.2%})"


# ------------------------------------------------------------------------------- errors
@pytest.mark.parametrize("kw, bad, index", [
    (dict(EA=[1.0, 0.0], EI=1.0), "EA", 1),
    (dict(EA=1.0, EI=[-1.0, 1.0]), "EI", 0),
    (dict(EA=1.0, EI=[1.0, np.nan]), "EI", 1),
    (dict(EA=1.0, EI=1.0, rho_A=[0.0, -2.0]), "rho_A", 1),
    (dict(EA=1.0, EI=1.0, rho_I=[-1e-3, 1.0]), "rho_I", 0),
])
def test_bad_section_values_name_the_element(kw, bad, index):
    with pytest.raises(ValueError, match=rf"{bad} of element {index}\b"):
        Beam2D(np.array([[0, 1], [1, 2]]), **kw)


def test_bad_mass_kind_raises():
    with pytest.raises(ValueError, match="mass must be"):
        Beam2D(np.array([[0, 1]]), 1.0, 1.0, mass="hermitian")


# ------------------------------------------------------- second-order (bowing) strain
def test_second_order_force_tangent_and_mid_point_energy(rng, assert_tangent_matches_fd, central_fd,
                                                         relative_error):
    """With Meijaard's bowing term: q = dPhi/du, K = dq/du, K_m = dq_m/du1, q_m . du = dPhi."""
    X = _reference(rng, N_EL)
    u0, u1 = _step_pair(rng, X, 1.0)
    el = _group(rng, N_EL, second_order=True)
    q, K = el.force_and_tangent(X, u1)
    assert_tangent_matches_fd(K, lambda v: el.internal_force(X, v), u1, "second-order beam tangent")
    q_fd = central_fd(lambda v: el.strain_energy(X, v)[:, None], u1, 1e-6)[:, 0, :]
    assert relative_error(q, q_fd).max() < 1e-6
    qm, Km = el.mid_point_force_and_tangent(X, u0, u1)
    assert_tangent_matches_fd(Km, lambda v: el.mid_point_force(X, u0, v), u1, "second-order mid-point tangent")
    work = np.einsum("ei,ei->e", qm, u1 - u0)
    phi0, phi1 = el.strain_energy(X, u0), el.strain_energy(X, u1)
    assert (np.abs(work - (phi1 - phi0)) / (phi0 + phi1)).max() < 1e-12
    u = _rigid(X, 2.3, rng.uniform(-5, 5, 2))
    assert np.abs(el.internal_force(X, u)).max() < 1e-9 and el.strain_energy(X, u).max() < 1e-20


def test_second_order_term_gives_the_consistent_buckling_load():
    """One element cantilever: P_cr = 2.4860 EI/L^2 with the consistent geometric stiffness
    (N l0/30 [[4, -1], [-1, 4]]), against 3 EI/L^2 from the chord rotation alone; 4 elements
    within 0.01 % of Euler's pi^2/4 = 2.4674."""
    for n, expected, tol in ((1, 2.4860, 2e-4), (4, np.pi**2 / 4, 1e-4)):
        m = flexmb.Model(dim=2)
        nodes = m.add_nodes(np.c_[np.linspace(0.0, 2.0, n + 1), np.zeros(n + 1)])
        m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e8, EI=10.0, second_order=True)
        m.fix(nodes[0])
        m.add_load(nodes[-1], "ux", -1.0)
        ratio = flexmb.linear_buckling(m, n_modes=1).critical / (10.0 / 2.0**2)
        assert abs(ratio / expected - 1) < tol, f"{n} element(s): P_cr = {ratio:.5f} EI/L^2, expected {expected:.5f}"


# --------------------------------------------------------------------- cubic mass
def test_cubic_mass_kinetic_energy_of_rigid_motion_and_bending_vibration():
    """Rigid rotation: T = I_O w^2 / 2 exactly; pinned-pinned rod: the first bending frequency
    with 2 cubic elements is within 0.5 % of pi^2 sqrt(EI / (rho A L^4))."""
    from flexmb.elements.hermite_mass2d import HermiteMass2D

    kernels = HermiteMass2D(np.array([[[0.0, 0.0], [2.0, 0.0]]]), np.array([3.0]))
    w = 1.7
    v = np.array([[0.0, 0.0, w, 0.0, 2.0 * w, w]])
    assert np.isclose(kernels.kinetic_energy(np.zeros((1, 6)), v)[0], 0.5 * 3.0 * 2.0 * 4.0 / 3.0 * w**2, rtol=1e-14)
    m = flexmb.Model(dim=2)
    L, EI, rho_A = 1.0, 10.0, 2.0
    nodes = m.add_nodes(np.c_[np.linspace(0.0, L, 3), np.zeros(3)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=EI, rho_A=rho_A, mass="cubic")
    m.fix(nodes[0], ["ux", "uy"])
    m.fix(nodes[-1], "uy")
    asm = flexmb.Assembly(m)
    u = np.zeros(asm.n_dof)
    K = asm.free_matrix(asm.force_and_tangent(u)[1]).toarray()
    M = asm.free_matrix(asm.mass_data + asm.configuration_mass_data(u)).toarray()
    from scipy.linalg import eigh
    omega = np.sqrt(eigh(K, M, eigvals_only=True)[0])
    exact = np.pi**2 * np.sqrt(EI / (rho_A * L**4))
    assert abs(omega / exact - 1) < 5e-3, f"first frequency {omega:.4f} vs {exact:.4f} rad/s"


def test_cubic_mass_free_flight_conserves_energy_and_nearly_angular_momentum():
    """A free-flying, spinning 3-element cubic-mass beam: energy and angular momentum constant."""
    m = flexmb.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 3.0, 4), np.zeros(4)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e5, EI=50.0, rho_A=1.0, mass="cubic", second_order=True)
    asm = flexmb.Assembly(m)
    v0 = np.zeros(asm.n_dof)
    x = m.coordinates
    w = 2.0
    v0[asm.dofs.translations()] = w * np.c_[-(x[:, 1] - 0.0), x[:, 0] - 1.5] + np.array([0.3, 0.1])
    v0[[asm.dofs.index(i, "rz") for i in nodes]] = w
    v0[asm.dofs.index(3, "uy")] += 0.5                                  # and a bending vibration
    h = flexmb.integrate(asm, 0.05, 4.0, v0=v0)
    assert h.energy_error().max() < 1e-9, f"energy error {h.energy_error().max():.2e}"
    L = np.array(h.angular_momentum)[:, 0]
    assert np.abs(L - L[0]).max() < 1e-3 * abs(L[0]), "angular momentum drifts by more than O(dt^2)"
