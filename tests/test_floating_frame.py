"""Tests of the modal body on a floating frame (:mod:`flexmb.cms.floating_frame`), 2D.

References: Lagrange's equations of T = 1/2 xdot^T Mg(x) xdot (inertia force = d/dt dT/dxdot - dT/dx,
here by central differences along a trajectory); the gravity force -dV/dx; the steady-spin
linearization of the modal coordinates, ``ModalBodyData.spin_matrices`` (built from the invariants
and the unit-load geometric stiffness independently of the kinetic energy used here); exact
invariants of the mid-point scheme: F . dx = T1 - T0 and V0 - V1 for any step, linear momentum of a
free body, total energy of a free tumbling body over many large steps.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import flexmb as fm
from flexmb.cms.floating_frame import ModalBody
from flexmb.cms.modal_body import ModalBodyData, _load_geometric_stiffness
from flexmb.model import ModelError

FD_BOUND = 1e-6                 # common brief: tangents vs finite differences, relative
ENERGY_BOUND = 1e-8             # issue 16: modal body energy constant to 1e-8 (mid-point)
ROUND_OFF = 1e-11               # identities that hold exactly, relative to their terms
ORIGIN = np.array([0.3, -0.2])  # frame node's reference position in the main model (m)
GRAVITY = np.array([0.4, -9.81])


def _beam(mass: str) -> fm.Model:
    """A free planar beam, 8 elements along x, L = 1 m, with a tip point mass."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 9), np.zeros(9)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=2e3, EI=3.0, rho_A=1.5, rho_I=1e-3, mass=mass)
    m.add_point_mass(int(nodes[-1]), 0.2, 1e-3)
    return m


@pytest.fixture(scope="module")
def data_sets() -> dict[str, ModalBodyData]:
    """Lumped mass (no translation-rotation coupling) and cubic mass (coupled), 3 modes, frame at the root."""
    return {mass: ModalBodyData.from_model(_beam(mass), 0, 3, basis="free-interface") for mass in ("lumped", "cubic")}


def _kernels(data: ModalBodyData, stiffening: bool):
    body = ModalBody(data, 0, stiffening=stiffening)
    return body, body.configuration_mass(ORIGIN[None, None, :])


def _state(rng: np.random.Generator, n: int, scale: float = 1.0) -> np.ndarray:
    """A random (1, n) vector: frame motion of order 1, modal coordinates of order 0.05 * scale."""
    x = rng.normal(size=(1, n))
    x[:, 3:] *= 0.05 * scale
    return x


def _fd_jacobian(f, x: np.ndarray, h: float) -> np.ndarray:
    """Central differences of f: (1, n) -> (1, m) at x, (m, n)."""
    cols = []
    for j in range(x.shape[1]):
        e = np.zeros_like(x)
        e[0, j] = h
        cols.append((f(x + e) - f(x - e))[0] / (2.0 * h))
    return np.array(cols).T


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


CASES = [(mass, stiff) for mass in ("lumped", "cubic") for stiff in (True, False)]


# ---------------------------------------------------------------- inertia and gravity forces
@pytest.mark.parametrize("mass,stiffening", CASES)
def test_end_point_inertia_is_lagrange_force_and_its_tangent_matches_fd(data_sets, mass, stiffening):
    body, k = _kernels(data_sets[mass], stiffening)
    n = body.ndof
    rng = np.random.default_rng(3)
    for _ in range(3):
        u, v, a = _state(rng, n), _state(rng, n, 20.0), _state(rng, n, 40.0)
        F, J = k.end_point_inertia(u, v, a, 0.7, 3.1)
        # d/dt (dT/dxdot) along x(t) = u + v t + a t^2/2, minus dT/dx, by central differences
        h = 1e-5
        dp = (k.momentum(u + h * v + 0.5 * h**2 * a, v + h * a)
              - k.momentum(u - h * v + 0.5 * h**2 * a, v - h * a)) / (2.0 * h)
        dT = _fd_jacobian(lambda x, v=v: k.kinetic_energy(x, v)[:, None], u, 1e-6)[0]
        assert _rel(F[0], dp[0] - dT) < FD_BOUND, f"Lagrange force off by {_rel(F[0], dp[0] - dT):.1e}"
        fd = _fd_jacobian(lambda x, u=u, v=v, a=a: k.end_point_inertia(x, v + 0.7 * (x - u), a + 3.1 * (x - u),
                                                                         tangent=False)[0], u, 1e-6)
        assert _rel(J[0], fd) < FD_BOUND, f"end-point tangent off by {_rel(J[0], fd):.1e}"
        # the momentum is Mg v with a symmetric Mg
        Mg = k.mass_matrix(u)[0]
        assert np.abs(Mg - Mg.T).max() < ROUND_OFF * np.abs(Mg).max()
        assert _rel(k.momentum(u, v)[0], Mg @ v[0]) < ROUND_OFF


@pytest.mark.parametrize("mass,stiffening", CASES)
def test_gravity_force_is_minus_gradient_of_potential_and_tangent_matches_fd(data_sets, mass, stiffening):
    body, k = _kernels(data_sets[mass], stiffening)
    rng = np.random.default_rng(4)
    u = _state(rng, body.ndof)
    F, dF = k.gravity_force(u, GRAVITY)
    grad = _fd_jacobian(lambda x: k.gravity_potential(x, GRAVITY)[:, None], u, 1e-6)[0]
    assert _rel(F[0], -grad) < FD_BOUND, f"gravity force off by {_rel(F[0], -grad):.1e}"
    fd = _fd_jacobian(lambda x: k.gravity_force(x, GRAVITY)[0], u, 1e-6)
    assert _rel(dF[0], fd) < FD_BOUND, f"gravity tangent off by {_rel(dF[0], fd):.1e}"


def test_weight_on_modes_equals_fe_gravity_load_and_total_weight(data_sets):
    """At q = 0, theta = 0 the modal gravity force is Phi^T (M g) of the FE model (consistent mass
    included) and the frame force is the total weight m g."""
    for data in data_sets.values():
        body, k = _kernels(data, True)
        F, _ = k.gravity_force(np.zeros((1, body.ndof)), GRAVITY)
        comp = data.component
        field = np.zeros(comp.n_dof)
        field[comp.assembly.dofs.translations()] = GRAVITY
        fe = data.basis.T @ (comp.M @ field)
        assert _rel(F[0, 3:], fe) < ROUND_OFF
        total = float(field @ (comp.M @ field)) / float(GRAVITY @ GRAVITY)          # kg
        assert _rel(F[0, :2], total * GRAVITY) < ROUND_OFF


# -------------------------------------------------------------------- mid-point kernels
@pytest.mark.parametrize("mass,stiffening", CASES)
def test_mid_point_inertia_exact_energy_momentum_and_tangent(data_sets, mass, stiffening):
    body, k = _kernels(data_sets[mass], stiffening)
    n = body.ndof
    rng = np.random.default_rng(5)
    for dt, step in ((0.1, 1.0), (0.5, 3.0), (1e-3, 1e-9)):     # large steps (3 rad) and a tiny one
        u0, v0 = _state(rng, n), _state(rng, n, 20.0)
        u1 = u0 + step * _state(rng, n)
        F, J = k.mid_point_inertia(u0, u1, v0, None, dt)
        v1 = 2.0 * (u1 - u0) / dt - v0
        T0, T1 = k.kinetic_energy(u0, v0)[0], k.kinetic_energy(u1, v1)[0]
        work = float(F[0] @ (u1 - u0)[0])
        assert abs(work - (T1 - T0)) < ROUND_OFF * max(T0, T1), f"F.dx - dT = {work - (T1 - T0):.1e} (T ~ {T1:.1e})"
        # linear momentum: the frame force is exactly the change of the global momentum
        dp = k.momentum(u1, v1)[0, :2] - k.momentum(u0, v0)[0, :2]
        assert np.abs(F[0, :2] * dt - dp).max() < ROUND_OFF * np.abs(k.momentum(u1, v1)[0, :2]).max()
        if step < 1e-6:
            continue                             # FD steps would cross the correction's floor
        fd = _fd_jacobian(lambda x, u0=u0, v0=v0, dt=dt: k.mid_point_inertia(u0, x, v0, None, dt, tangent=False)[0],
                          u1, 1e-6)
        assert _rel(J[0], fd) < FD_BOUND, f"mid-point tangent off by {_rel(J[0], fd):.1e}"


@pytest.mark.parametrize("stiffening", [True, False])
def test_mid_point_inertia_tends_to_lagrange_force_at_second_order(data_sets, stiffening):
    """Along x(t) = u + v t + a t^2/2 (for which v1 = 2 dx/dt - v0 is exact), F of the step -> the
    Lagrange force at the mid-time with an O(dt^2) error: the discrete gradient is consistent."""
    body, k = _kernels(data_sets["lumped"], stiffening)
    rng = np.random.default_rng(6)
    u, v, a = _state(rng, body.ndof), _state(rng, body.ndof, 20.0), _state(rng, body.ndof, 40.0)
    errors = []
    for dt in (0.02, 0.01, 0.005):
        u1 = u + dt * v + 0.5 * dt**2 * a
        F, _ = k.mid_point_inertia(u, u1, v, None, dt, tangent=False)
        tm = 0.5 * dt
        exact, _ = k.end_point_inertia(u + tm * v + 0.5 * tm**2 * a, v + tm * a, a, tangent=False)
        errors.append(np.abs(F - exact).max())
    rates = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(np.abs(rates - 2.0) < 0.2), f"convergence rates {rates}, expected 2"


@pytest.mark.parametrize("mass,stiffening", CASES)
def test_mid_point_gravity_exact_work_and_tangent(data_sets, mass, stiffening):
    body, k = _kernels(data_sets[mass], stiffening)
    rng = np.random.default_rng(7)
    for step in (3.0, 0.1):
        u0 = _state(rng, body.ndof)
        u1 = u0 + step * _state(rng, body.ndof)
        F, dF = k.mid_point_gravity(u0, u1, GRAVITY)
        dV = k.gravity_potential(u0, GRAVITY)[0] - k.gravity_potential(u1, GRAVITY)[0]
        scale = abs(k.gravity_potential(u0, GRAVITY)[0]) + abs(dV)
        assert abs(F[0] @ (u1 - u0)[0] - dV) < ROUND_OFF * scale
        fd = _fd_jacobian(lambda x, u0=u0: k.mid_point_gravity(u0, x, GRAVITY)[0], u1, 1e-6)
        assert _rel(dF[0], fd) < FD_BOUND, f"mid-point gravity tangent off by {_rel(dF[0], fd):.1e}"


# ---------------------------------------------------- compiled kernels vs their numpy specification
REF_TOL = 1e-12                 # compiled vs numpy reference, relative to the largest entry


@pytest.mark.parametrize("mass,stiffening", CASES)
def test_compiled_kernels_equal_reference(data_sets, mass, stiffening):
    """Every compiled kernel (:mod:`flexmb.compiled.floating_frame`) against its ``reference_*``
    method, with and without tangent, at large and small steps and one 2-element batch.

    The mid-point weight's tangent is compared at the large step only: Gonzalez's correction divides
    the remainder V0 - V1 - F . dx (terms O(|dx|), itself O(|dx|^3)) by dx^T W dx, so the round-off
    of either code enters its derivative amplified about as 1/|dx|^2 (the two differed by 3e-12 at
    |dx| ~ 0.05, 2.6e-10 at 0.01, 3e-8 at 0.001; below 1e-15 at |dx| ~ 1); the compiled tangent is
    checked against finite differences at both steps of test_mid_point_gravity_exact_work_and_tangent."""
    body, k = _kernels(data_sets[mass], stiffening)
    n = body.ndof
    rng = np.random.default_rng(8)
    for dt, step in ((0.1, 1.0), (0.01, 0.05)):
        u0, v0, a = _state(rng, n), _state(rng, n, 20.0), _state(rng, n, 40.0)
        u1 = u0 + step * _state(rng, n)
        pairs = {
            "mid-point inertia": (k.mid_point_inertia(u0, u1, v0, None, dt),
                                  k.reference_mid_point_inertia(u0, u1, v0, dt)),
            "end-point inertia": (k.end_point_inertia(u0, v0, a, 2.0 / dt, 4.0 / dt**2),
                                  k.reference_end_point_inertia(u0, v0, a, 2.0 / dt, 4.0 / dt**2)),
            "end-point inertia (v, a fixed)": (k.end_point_inertia(u0, v0, a),
                                               k.reference_end_point_inertia(u0, v0, a)),
            "gravity": (k.gravity_force(u0, GRAVITY), k.reference_gravity_force(u0, GRAVITY)),
            "mid-point gravity": (k.mid_point_gravity(u0, u1, GRAVITY), k.reference_mid_point_gravity(u0, u1, GRAVITY)),
        }
        for name, ((F, J), (F_ref, J_ref)) in pairs.items():
            assert _rel(F, F_ref) < REF_TOL, f"{name}: compiled force off by {_rel(F, F_ref):.1e}"
            if name != "mid-point gravity" or step >= 1.0:
                assert _rel(J, J_ref) < REF_TOL, f"{name}: compiled tangent off by {_rel(J, J_ref):.1e}"
        F, J = k.mid_point_inertia(u0, u1, v0, None, dt, tangent=False)
        assert J is None and _rel(F, pairs["mid-point inertia"][1][0]) < REF_TOL
        F, J = k.end_point_inertia(u0, v0, a, tangent=False)
        assert J is None and _rel(F, pairs["end-point inertia (v, a fixed)"][1][0]) < REF_TOL
        T, L = k.energy_and_angular_momentum(u0, v0)
        T_ref, L_ref = k.reference_energy_and_angular_momentum(u0, v0)
        assert abs(T - T_ref) < REF_TOL * T_ref and abs(L - L_ref) < REF_TOL * abs(L_ref)
    # two elements in one call: each its own (the kernels loop over elements)
    u0, v0 = np.vstack([_state(rng, n), _state(rng, n)]), np.vstack([_state(rng, n, 20.0), _state(rng, n, 20.0)])
    u1 = u0 + 0.1 * np.vstack([_state(rng, n), _state(rng, n)])
    pair = body.configuration_mass(np.tile(ORIGIN, (2, 1))[:, None, :])
    F, J = pair.mid_point_inertia(u0, u1, v0, None, 0.1)
    for e in range(2):
        F_e, J_e = k.reference_mid_point_inertia(u0[e:e + 1], u1[e:e + 1], v0[e:e + 1], 0.1)
        assert _rel(F[e], F_e[0]) < REF_TOL and _rel(J[e], J_e[0]) < REF_TOL


# --------------------------------------------------------------------- steady spin
def _fe_centrifugal_stiffness(data: ModalBodyData) -> np.ndarray:
    """K_G of the centrifugal load of the FE velocity field, Jhat_t^T M Theta_0 (n_m, n_m), built from
    the FE model node by node (Theta_0: e_z x X_i on translations, 1 on rotations)."""
    comp = data.component
    dofs = comp.assembly.dofs
    theta0 = np.zeros(comp.n_dof)
    for node, (x, y) in enumerate(comp.model.coordinates - comp.model.coordinates[data.frame_node]):
        theta0[dofs.index(node, "ux")], theta0[dofs.index(node, "uy")] = -y, x
        if dofs.has_rotations[node]:
            theta0[dofs.index(node, "rz")] = 1.0
    p = comp.M @ theta0
    load = np.zeros(comp.n_dof)
    for node in range(comp.model.n_nodes):
        ix, iy = dofs.index(node, "ux"), dofs.index(node, "uy")
        load[ix], load[iy] = p[iy], -p[ix]                                 # Jhat^T (p_x, p_y) = (p_y, -p_x)
    KG = _load_geometric_stiffness(comp, data.frame_node, data.basis, load[None])[0]
    return 0.5 * (KG + KG.T)


@pytest.mark.parametrize("mass,stiffening", CASES)
def test_steady_spin_linearization_equals_spin_matrices(data_sets, mass, stiffening):
    """Frame origin at rest, theta = Omega t: the modal rows of the Lagrange force plus K_e q,
    linearized about q = 0, give q'' + G q' + K(Omega) q of ModalBodyData.spin_matrices (lumped mass;
    with the cubic mass's translation-rotation coupling the stiffening is that of the FE velocity
    field's centrifugal load Jhat_t^T M Theta_0 instead of -M a_ww: module docstring)."""
    data = data_sets[mass]
    body, k = _kernels(data, stiffening)
    n, Omega = body.ndof, 7.0
    u = np.array([[0.0, 0.0, 0.4, 0.0, 0.0, 0.0]])
    v = np.array([[0.0, 0.0, Omega, 0.0, 0.0, 0.0]])
    a = np.zeros((1, n))

    def modal_rows(x, xd, xdd):
        return k.end_point_inertia(x, xd, xdd, tangent=False)[0][:, 3:] + body.internal_force(None, x)[:, 3:]

    K = _fd_jacobian(lambda x: modal_rows(x, v, a), u, 1e-6)[:, 3:]
    G = _fd_jacobian(lambda xd: modal_rows(u, xd, a), v, 1e-6)[:, 3:]
    M = _fd_jacobian(lambda xdd: modal_rows(u, v, xdd), a, 1e-3)[:, 3:]
    G_ref, K_ref = data.spin_matrices(np.array([0.0, 0.0, Omega]), stiffening=stiffening)
    if mass == "cubic" and stiffening:
        K_ref = data.spin_matrices(np.array([0.0, 0.0, Omega]), stiffening=False)[1] \
            + Omega**2 * _fe_centrifugal_stiffness(data)
    assert _rel(M, np.eye(3)) < FD_BOUND
    assert _rel(K, K_ref) < FD_BOUND, f"K(Omega) off by {_rel(K, K_ref):.1e}"
    G_error = np.abs(G - G_ref).max()
    assert G_error < FD_BOUND * max(np.abs(G_ref).max(), Omega), f"G off by {G_error:.1e}"
    # the stiffening is not negligible here (so the comparison tells the switches apart)
    K_other = data.spin_matrices(np.array([0.0, 0.0, Omega]), stiffening=not stiffening)[1]
    assert _rel(K, K_other) > 1e-2


@pytest.mark.parametrize("mass", ["lumped", "cubic"])
def test_modal_equation_holds_run_time_scaled_unit_load_stiffness(data_sets, mass):
    """At q = q' = q'' = 0 and any frame motion, d(modal rows of the Lagrange force)/dq =
    a_R . (K_ax, K_ay) + alpha K_alpha + omega^2 K_ww - omega^2 J_2 (a_R = A^T rddot the body-frame
    acceleration of the frame origin, alpha = thetaddot, omega = thetadot) + alpha C_r1 (the linear
    body's tangential inertia of the deformed shape, d/dt of C_r(q) omega): the unit-load geometric
    stiffness scaled by the run-time kinematic scalars (K_ww of the FE velocity field for the cubic mass)."""
    data = data_sets[mass]
    _, k = _kernels(data, True)
    theta, omega, alpha = 0.7, 2.5, -4.0
    rdot, rddot = np.array([1.5, -0.8]), np.array([3.0, 2.0])
    u = np.array([[0.1, 0.2, theta, 0.0, 0.0, 0.0]])
    v = np.array([[*rdot, omega, 0.0, 0.0, 0.0]])
    a = np.array([[*rddot, alpha, 0.0, 0.0, 0.0]])
    K = _fd_jacobian(lambda x: k.end_point_inertia(x, v, a, tangent=False)[0][:, 3:], u, 1e-6)[:, 3:]
    c, s = np.cos(theta), np.sin(theta)
    a_R = np.array([[c, s], [-s, c]]) @ rddot
    KG = dict(zip(data.load_cases, data.geometric_stiffness))
    K_ww = KG["ww_zz"] if mass == "lumped" else _fe_centrifugal_stiffness(data)
    softening = data.modal_stiffness - data.spin_matrices(np.array([0.0, 0.0, omega]), stiffening=False)[1]
    expected = (a_R[0] * KG["a_x"] + a_R[1] * KG["a_y"] + alpha * KG["alpha_z"] + omega**2 * K_ww - softening
                + alpha * data.rotation_coupling1[:, :, 2])
    assert _rel(K, expected) < FD_BOUND, f"modal stiffness off by {_rel(K, expected):.1e}"


# -------------------------------------------------------------- standalone time loop
def _mid_point_run(body, k, u0, v0, dt, n_steps, gravity):
    """Newton on the element residual K_e q_m + F_inertia - F_gravity = 0, step by step; returns the
    total energies and the linear momenta per step."""
    Ke = body.data.modal_stiffness
    energies, momenta = [], []
    u, v = u0.copy(), v0.copy()

    def energy(x, xd):
        E = k.kinetic_energy(x, xd)[0] + body.strain_energy(None, x)[0]
        return E + (k.gravity_potential(x, gravity)[0] if gravity is not None else 0.0)

    for _ in range(n_steps):
        energies.append(energy(u, v))
        momenta.append(k.momentum(u, v)[0, :2])
        u1 = u + dt * v
        for _it in range(30):
            q, dq = body.mid_point_force_and_tangent(None, u, u1)
            F, J = k.mid_point_inertia(u, u1, v, None, dt)
            R, dR = q + F, dq + J
            if gravity is not None:
                Fg, dFg = k.mid_point_gravity(u, u1, gravity)
                R, dR = R - Fg, dR - dFg
            du = np.linalg.solve(dR[0], -R[0])
            u1 = u1 + du
            if np.abs(du).max() < 1e-14 * (1.0 + np.abs(u1).max()):
                break
        else:
            raise AssertionError("Newton did not converge")
        v = 2.0 * (u1 - u) / dt - v
        u = u1
    energies.append(energy(u, v))
    momenta.append(k.momentum(u, v)[0, :2])
    return np.array(energies), np.array(momenta), Ke


@pytest.mark.parametrize("stiffening", [True, False])
def test_free_tumbling_body_conserves_energy_and_momentum_over_large_steps(data_sets, stiffening):
    """Spin 3 rad/s (0.75 of omega_1), modal velocities, dt = 0.05 s (omega dt = 5.7 for the highest
    free-body frequency, 115 rad/s), 120 steps."""
    body, k = _kernels(data_sets["lumped"], stiffening)
    u0 = np.zeros((1, body.ndof))
    v0 = np.array([[0.2, -0.1, 3.0, 0.5, -0.2, 0.1]])
    E, p, _ = _mid_point_run(body, k, u0, v0, 0.05, 120, None)
    drift = np.abs(E - E[0]).max() / E[0]
    assert drift < ENERGY_BOUND, f"energy drift {drift:.1e}"
    assert np.abs(p - p[0]).max() < 1e-12 * np.abs(p[0]).max()
    # the body did tumble and vibrate: several turns
    assert abs(p[0]).max() > 0.0


@pytest.mark.parametrize("stiffening", [True, False])
def test_falling_tumbling_body_conserves_total_energy(data_sets, stiffening):
    """1.5 s of free fall (cubic mass: coupled translation-rotation mass), dt = 0.05 s. (Longer falls
    at large steps pump energy from the fall into the tumbling: the floating-frame coordinates are not
    invariant under the growing fall speed, see the module docstring; not checked here.)"""
    body, k = _kernels(data_sets["cubic"], stiffening)
    u0 = np.zeros((1, body.ndof))
    v0 = np.array([[1.0, 2.0, -2.0, 0.3, 0.1, -0.05]])
    E, _, _ = _mid_point_run(body, k, u0, v0, 0.05, 30, GRAVITY)
    kinetic = k.kinetic_energy(u0, v0)[0]
    drift = np.abs(E - E[0]).max() / kinetic
    assert drift < ENERGY_BOUND, f"energy drift {drift:.1e} of the initial kinetic energy"


def test_stiffened_body_mass_stays_positive_definite(data_sets):
    """The frame clamped at the root makes Mt(0) nearly singular (the first cantilever mode is almost a
    rotation about the root); the stiffened kinetic energy must stay positive definite at any
    deflection (truncations of it lost this at |q| = 0.005 and 0.2 kg^1/2 m: module docstring);
    checked at |q| = 0.05, 0.2 and 1 kg^1/2 m (tip deflections to about 1.3 m of the 1 m beam)."""
    for data in data_sets.values():
        _, k = _kernels(data, True)
        spectrum0 = np.linalg.eigvalsh(k.body_mass(np.zeros((1, 3))))[0]
        assert 0.0 < spectrum0[0] < 1e-2 * spectrum0[-1]
        rng = np.random.default_rng(9)
        directions = rng.normal(size=(300, 3))
        directions /= np.linalg.norm(directions, axis=1)[:, None]
        for size in (0.05, 0.2, 1.0):
            lowest = np.linalg.eigvalsh(k.body_mass(size * directions))[:, 0]
            assert lowest.min() > 0.5 * spectrum0[0], f"|q| = {size}: lowest eigenvalue {lowest.min():.1e}"


def test_unstiffened_body_mass_is_modal_body_data_mass(data_sets):
    for data in data_sets.values():
        _, k = _kernels(data, False)
        q = np.random.default_rng(10).normal(size=(4, 3)) * 0.1
        for qi, Mt in zip(q, k.body_mass(q)):
            assert _rel(Mt, data.mass_matrix(qi)) < ROUND_OFF


# ------------------------------------------------------------------ elastic kernels
def test_elastic_kernels(data_sets):
    body = ModalBody(data_sets["lumped"], 0)
    rng = np.random.default_rng(8)
    u0, u1 = _state(rng, body.ndof), _state(rng, body.ndof)
    f, K = body.force_and_tangent(None, u1)
    grad = _fd_jacobian(lambda x: body.strain_energy(None, x)[:, None], u1, 1e-6)[0]
    assert _rel(f[0], grad) < FD_BOUND
    assert _rel(K[0], _fd_jacobian(lambda x: body.internal_force(None, x), u1, 1e-6)) < FD_BOUND
    fm_, Km = body.mid_point_force_and_tangent(None, u0, u1)
    dU = body.strain_energy(None, u1)[0] - body.strain_energy(None, u0)[0]
    assert abs(fm_[0] @ (u1 - u0)[0] - dU) < ROUND_OFF * body.strain_energy(None, u1)[0]
    assert _rel(Km[0], _fd_jacobian(lambda x: body.mid_point_force(None, u0, x), u1, 1e-6)) < FD_BOUND
    out = body.element_outputs(None, u1)
    assert out["q2"][0] == u1[0, 4] and out["Q2"][0] == f[0, 4]
    assert not body.mass_matrix(None).any()


def test_deformed_positions_follow_frame_and_modes(data_sets):
    data = data_sets["cubic"]
    body = ModalBody(data, 0)
    comp = data.component
    u_e = np.array([0.1, -0.3, 0.7, 0.02, -0.01, 0.005])
    x = body.deformed_positions(ORIGIN, u_e)
    u_f = data.basis @ u_e[3:]
    c, s = np.cos(0.7), np.sin(0.7)
    for node in (0, 4, 8):
        local = comp.model.coordinates[node] - comp.model.coordinates[0] + np.array(
            [u_f[comp.assembly.dofs.index(node, "ux")], u_f[comp.assembly.dofs.index(node, "uy")]])
        expected = ORIGIN + u_e[:2] + np.array([c * local[0] - s * local[1], s * local[0] + c * local[1]])
        assert np.abs(x[node] - expected).max() < 1e-14
    rot = body.node_rotations(u_e)
    assert rot[0] == 0.7 and abs(rot[8] - 0.7 - u_f[comp.assembly.dofs.index(8, "rz")]) < 1e-15


# --------------------------------------------------------------------- input checks
def test_bad_input_is_refused_naming_the_body(data_sets):
    data = data_sets["lumped"]
    with pytest.raises(ModelError, match="'arm'.*2D, the model is 3D"):
        fm.Model(dim=3).add_modal_body(data, name="arm")
    with pytest.raises(ModelError, match="'arm'.*no modes"):
        ModalBody(dataclasses.replace(data, basis=data.basis[:, :0]), 0, name="arm")
    with pytest.raises(ModelError, match="'arm'.*ModalBodyData.*dict"):
        ModalBody({}, 0, name="arm")
    with pytest.raises(ModelError, match="'arm'.*stiffening.*'yes'"):
        ModalBody(data, 0, stiffening="yes", name="arm")
    with pytest.raises(ModelError, match="'arm'.*frame_node.*1.5"):
        ModalBody(data, 1.5, name="arm")


# --------------------------------------------------------------- in a model, integrate
def _model(data: ModalBodyData, stiffening: bool, pinned: bool) -> tuple[fm.Assembly, ModalBody, np.ndarray]:
    """The body alone (free) or on a revolute joint to ground at its frame node under gravity, with
    a spin of 3 rad/s and a velocity of its second mode; returns the assembly, the body and v0."""
    model = fm.Model(dim=2)
    body = model.add_modal_body(data, stiffening=stiffening, name="arm")
    node = int(body.connectivity[0, 0])
    if pinned:
        model.add_joint("revolute", None, node)
        model.set_gravity(GRAVITY)
    asm = fm.Assembly(model)
    v0 = np.zeros(asm.n_dof)
    v0[asm.dofs.index(node, "rz")] = 3.0
    v0[asm.dofs.internal_dofs(body)[1]] = 0.3
    if not pinned:
        v0[asm.dofs.index(node, "ux")] = 0.5
    return asm, body, v0


@pytest.mark.parametrize("stiffening", [True, False])
@pytest.mark.parametrize("pinned", [False, True])
def test_integrate_mid_point_conserves_energy(data_sets, stiffening, pinned):
    """Through the model, the assembly and the Newton driver: 40 steps of 0.05 s."""
    asm, body, v0 = _model(data_sets["cubic"], stiffening, pinned)
    history = fm.integrate(asm, dt=0.05, t_end=2.0, v0=v0)
    error = history.energy_error().max()
    assert error < ENERGY_BOUND, f"energy error {error:.1e}"
    node = int(body.connectivity[0, 0])
    u_end = history.u[-1]
    swing = np.abs(np.array(history.u)[:, asm.dofs.index(node, "rz")]).max()
    assert swing > 0.5, f"the body turned only {swing:.2f} rad"         # it moved: 0.9 rad swing, 6 rad free
    if pinned:
        frame = u_end[[asm.dofs.index(node, "ux"), asm.dofs.index(node, "uy")]]
        assert np.abs(frame).max() < 1e-10, f"the pinned frame node moved {np.abs(frame).max():.1e} m"


def test_integrate_newmark_runs_and_agrees_with_mid_point(data_sets):
    """The Newmark baseline (end-point inertia) on the pinned body: both schemes are second order, so at
    dt = 0.02 s their tip positions after 0.5 s agree closely (measured 6e-5 m; 2e-4 m at dt = 0.01 s,
    2e-5 m at 0.005 s: the frame angle carries a fast, light motion against the first mode)."""
    asm, body, v0 = _model(data_sets["cubic"], True, True)
    element = asm.dofs.element_dofs(body)[0]
    origin = asm.model.coordinates[body.connectivity[0, 0]]
    tips = []
    for scheme in ("mid-point", "newmark"):
        history = fm.integrate(asm, dt=0.02, t_end=0.5, v0=v0, scheme=scheme)
        tips.append(body.deformed_positions(origin, history.u[-1][element])[-1])
    gap = np.abs(tips[0] - tips[1]).max()
    assert gap < 1e-3, f"mid-point and Newmark tips differ by {gap:.1e} m"
    assert tips[0][1] < -0.05, f"the tip did not swing down: {tips[0]}"


def test_modal_damping_decays_each_mode_at_its_ratio_and_books_the_dissipation() -> None:
    """damping_ratios: the clamped body rings in mode 1 with the logarithmic decrement
    2 pi zeta / sqrt(1 - zeta^2) (closed form), K + V + dissipated constant, linearize's damping ratios
    equal the given ones; the frame's rigid motion is not damped; Rayleigh damping is refused."""
    from flexmb.analysis.signals import logarithmic_decrement

    beam = fm.Model(dim=2)
    beam.add_nodes(np.c_[np.linspace(0.0, 1.0, 21), np.zeros(21)])
    beam.add_beam2d([[i, i + 1] for i in range(20)], EA=1e4, EI=1.0, rho_A=1.0, mass="consistent")
    data = ModalBodyData.from_model(beam, frame_node=0, n_modes=3)
    zeta = np.array([0.02, 0.05, 0.08])
    model = fm.Model(dim=2)
    body = model.add_modal_body(data, damping_ratios=zeta, name="damped")
    model.fix(int(body.connectivity[0, 0]))
    asm = fm.Assembly(model)
    q = asm.dofs.internal_dofs(body)
    v0 = np.zeros(asm.n_dof)
    v0[q[0]] = 0.1
    h = fm.integrate(asm, dt=0.005, t_end=8.0, v0=v0)
    assert np.abs(h.energy_error()).max() < 1e-10
    assert h.dissipated[-1] > 0.5 * 0.5 * 0.1**2, "most of K0 is dissipated in 8 s"
    decrement = logarithmic_decrement(np.asarray(h.u)[:, q[0]])
    exact = 2.0 * np.pi * zeta[0] / np.sqrt(1.0 - zeta[0] ** 2)
    assert abs(decrement / exact - 1.0) < 1e-2, f"decrement {decrement:.5f} vs {exact:.5f}"
    assert np.allclose(fm.linearize(model).eigen(3).damping_ratios, zeta, rtol=1e-8)
    # a free body translating and turning at constant rates: no modal rate, nothing dissipated
    free = fm.Model(dim=2)
    floating = free.add_modal_body(data, damping_ratios=0.1)
    asm = fm.Assembly(free)
    v0 = np.zeros(asm.n_dof)
    v0[asm.dofs.index(int(floating.connectivity[0, 0]), "ux")] = 1.0
    h = fm.integrate(asm, dt=0.05, t_end=1.0, v0=v0)
    assert h.dissipated[-1] < 1e-12
    with pytest.raises(ModelError, match="damping_ratios"):
        fm.Model(dim=2).add_modal_body(data, damping_ratios=[0.1, -0.1, 0.0])
    model.set_rayleigh_damping(body, alpha=0.1, beta=0.0)
    with pytest.raises(ModelError, match="Rayleigh damping does not apply to a modal body"):
        fm.integrate(model, dt=0.01, t_end=0.02)
