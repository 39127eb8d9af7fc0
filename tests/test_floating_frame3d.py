"""Tests of the 3D modal body's configuration-mass kernels (:mod:`flexmb.cms.floating_frame3d`) and of
the 3D velocity fields (:class:`~flexmb.cms.velocity_fields.BodyVelocityFields`).

References: the invariants' generalized mass ``ModalBodyData.mass_matrix`` (without stiffening); the
kinetic energy 1/2 nu^T M nu of the FE nodal velocities, differentiated from the nodal positions of
the moving body; finite differences of the Cayley map, of the force kernels and of the potential;
Lagrange's equations along a trajectory with a closed-form angular velocity; the exact discrete
energy and linear momentum balances of the mid-point construction.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from models import cantilever_body_3d
from flexmb.cms.floating_frame3d import FloatingFrameMass3D, _cayley_differential
from flexmb.cms.modal_body import ModalBodyData
from flexmb.cms.velocity_fields import BodyVelocityFields
from flexmb.rotations import cayley, cayley_compose, compose, exp_map, skew

N_EL, N_MODES = 5, 3
X_FRAME = np.array([[[0.3, -0.2, 0.5]]])                       # m, the frame node's reference position
G_FIELD = np.array([0.4, -9.81, 1.3])                          # m/s^2
DT = 0.05                                                      # s


@pytest.fixture(scope="module")
def data() -> ModalBodyData:
    """A cantilever along x with unequal bending stiffnesses and rotary inertia, frame at the root."""
    return cantilever_body_3d(N_EL, N_MODES)


@pytest.fixture(scope="module", params=[False, True], ids=["linear", "stiffened"])
def kernels(request, data: ModalBodyData) -> FloatingFrameMass3D:
    return FloatingFrameMass3D(BodyVelocityFields(data, request.param), X_FRAME)


def _states(seed: int, n: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random large states u0, u1 (rotations ~ 1 rad apart, |q| ~ 0.1 kg^1/2 m) and velocities v0."""
    rng = np.random.default_rng(seed)
    nx = 6 + N_MODES
    u0, v0 = rng.normal(size=(n, nx)), rng.normal(size=(n, nx))
    u0[:, 6:] *= 0.1
    v0[:, 6:] *= 0.5
    u1 = u0 + rng.normal(size=(n, nx))
    u1[:, 3:6] = cayley_compose(rng.uniform(-0.6, 0.6, (n, 3)), u0[:, 3:6])
    u1[:, 6:] = u0[:, 6:] + 0.1 * rng.normal(size=(n, N_MODES))
    return u0, u1, v0


def _close(a: np.ndarray, b: np.ndarray, rel: float, what: str) -> None:
    err = np.abs(a - b).max() / np.abs(b).max()
    assert err < rel, f"{what}: relative error {err:.2e} > {rel:.0e}"


# ------------------------------------------------------------------------ velocity fields, mass
def test_body_mass_is_the_invariants_mass_matrix(data: ModalBodyData) -> None:
    k = FloatingFrameMass3D(BodyVelocityFields(data, False), X_FRAME)
    q = np.array([[0.4, -0.3, 0.2]])
    _close(k.body_mass(q)[0], data.mass_matrix(q[0]), 1e-13, "Mt(q) vs ModalBodyData.mass_matrix")


def test_stiffened_body_mass_stays_positive_definite(data: ModalBodyData) -> None:
    k = FloatingFrameMass3D(BodyVelocityFields(data, True), X_FRAME)
    q = np.random.default_rng(3).normal(size=(20, N_MODES)) * np.linspace(0.1, 2.0, 20)[:, None]
    lam = np.linalg.eigvalsh(k.body_mass(q))
    assert lam.min() > 0.0, f"Mt lost definiteness: smallest eigenvalue {lam.min():.3e}"


def test_kinetic_energy_of_the_fe_nodal_velocities(data: ModalBodyData) -> None:
    """T from the kernels equals 1/2 nu^T M nu with the FE velocities differentiated from the nodal
    positions r + R (X_i + Phi_i q) of a moving body (no stiffening: w2 is not part of the mesh)."""
    k = FloatingFrameMass3D(BodyVelocityFields(data, False), X_FRAME)
    comp = data.component
    dofs = comp.assembly.dofs
    tr = dofs.translations()
    rot = dofs.first[dofs.has_rotations][:, None] + np.arange(3, 6)
    a, b = np.array([0.7, -1.1, 0.4]), np.array([0.2, 0.9, -1.3])
    q0, qd = np.array([0.2, -0.1, 0.15]), np.array([0.5, 0.3, -0.8])
    r0, rd = np.array([0.1, 0.4, -0.2]), np.array([1.0, -0.5, 0.3])

    def frame(t: float) -> np.ndarray:
        return exp_map(a * t) @ exp_map(b)

    def positions(t: float) -> np.ndarray:
        local = data.positions + (data.basis @ (q0 + t * qd))[tr]
        return r0 + t * rd + local @ frame(t).T

    t, h = 0.3, 1e-4
    xdot = (positions(t + h) - positions(t - h)) / (2 * h) - (positions(t + 2 * h) - positions(t - 2 * h)
                                                              - 2 * (positions(t + h) - positions(t - h))) / (12 * h)
    R = frame(t)
    nu = np.zeros(comp.n_dof)
    nu[tr] = xdot @ R                                                              # body frame R^T xdot
    nu[rot] = R.T @ a + (data.basis @ qd)[rot]                                    # Omega + Phi_rot qdot
    T_fe = 0.5 * nu @ (comp.M @ nu)
    u = np.concatenate([r0 + t * rd, compose(a * t, b), q0 + t * qd])[None]
    v = np.concatenate([rd, a, qd])[None]                                          # omega = a (spatial)
    T = k.kinetic_energy(u, v)[0]
    assert abs(T - T_fe) < 1e-9 * T_fe, f"T = {T!r}, FE 1/2 nu M nu = {T_fe!r}"
    _close(k.mass_matrix(u)[0] @ v[0], k.momentum(u, v)[0], 1e-14, "Mg v vs momentum")


def test_cayley_chart_differential() -> None:
    """d cay(w) cay(w)^T = hat(D(w) dw), by central differences of the compiled Cayley map."""
    w, dw, h = np.array([0.8, -0.6, 1.1]), np.array([0.3, 0.5, -0.2]), 1e-6
    dR = (cayley(w + h * dw) - cayley(w - h * dw)) / (2 * h)
    _close(dR @ cayley(w).T, skew(_cayley_differential(w[None])[0] @ dw), 1e-8, "spatial differential of cay")


# ------------------------------------------------------------------------------- mid-point
def test_mid_point_energy_and_linear_momentum_are_exact(kernels: FloatingFrameMass3D) -> None:
    u0, u1, v0 = _states(1)
    F, _ = kernels.mid_point_inertia(u0, u1, v0, None, DT, tangent=False)
    z1 = kernels.chart_increment(u0, u1)
    v1 = kernels.mid_point_velocity(u0, u1, v0, DT)
    T0, T1 = kernels.kinetic_energy(u0, v0), kernels.kinetic_energy(u1, v1)
    err = np.abs(np.einsum("bi,bi->b", F, z1) - (T1 - T0)) / np.maximum(T0, T1)
    assert err.max() < 1e-12, f"F . z1 - (T1 - T0): relative {err.max():.2e}"
    P0, P1 = kernels.momentum(u0, v0)[:, :3], kernels.momentum(u1, v1)[:, :3]
    _close(F[:, :3], (P1 - P0) / DT, 1e-13, "F_r vs (P1 - P0)/dt")


def test_mid_point_gradient_is_the_form_gradient(kernels: FloatingFrameMass3D) -> None:
    """The analytic gradient of phi = za^T Mz(z) zb against complex steps (Gonzalez's correction
    would hide an error in it from the energy test)."""
    u0, u1, v0 = _states(2)
    R0, q0, z = exp_map(u0[:, 3:6]), u0[:, 6:], kernels.chart_increment(u0, u1)
    zb = np.random.default_rng(5).normal(size=z.shape)
    _, grad = kernels._chart_form(R0, q0, z, v0, zb)
    h, cs = 1e-30, np.zeros_like(grad)
    for j in range(z.shape[1]):
        cs[:, j] = kernels._chart_form(R0, q0, z + 1j * h * np.eye(z.shape[1])[j], v0, zb)[0].imag / h
    _close(grad, cs, 1e-12, "d phi/dz")


def test_mid_point_velocity_is_the_chart_velocity(kernels: FloatingFrameMass3D) -> None:
    """v1 = (rdot1, G(w1) wdot1, qdot1) with zdot1 = 2 z1/dt - v0: omega1 from cay's differential."""
    u0, u1, v0 = _states(6, 1)
    z1 = kernels.chart_increment(u0, u1)
    v1 = kernels.mid_point_velocity(u0, u1, v0, DT)
    wdot = 2.0 * z1[0, 3:6] / DT - v0[0, 3:6]
    h = 1e-6
    dR = (cayley(z1[0, 3:6] + h * wdot) - cayley(z1[0, 3:6] - h * wdot)) / (2 * h)
    W = dR @ cayley(z1[0, 3:6]).T
    _close(v1[0, 3:6], np.array([W[2, 1], W[0, 2], W[1, 0]]), 1e-8, "omega1")
    _close(np.delete(v1, [3, 4, 5], 1), np.delete(2.0 * z1 / DT - v0, [3, 4, 5], 1), 1e-15, "rdot1, qdot1")


def _chart_fd(fun, z: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """dF/dz (B, n, n) by central differences of fun(z) (B, n)."""
    n = z.shape[1]
    return np.stack([(fun(z + h * e) - fun(z - h * e)) / (2 * h) for e in np.eye(n)], axis=-1)


def _end_of_chart(u0: np.ndarray, z: np.ndarray) -> np.ndarray:
    u = u0 + z
    u[:, 3:6] = cayley_compose(z[:, 3:6], u0[:, 3:6])
    return u


def test_mid_point_tangents_match_finite_differences(kernels: FloatingFrameMass3D) -> None:
    u0, u1, v0 = _states(3, 2)
    z1 = kernels.chart_increment(u0, u1)
    _, J = kernels.mid_point_inertia(u0, u1, v0, None, DT)
    fd = _chart_fd(lambda z: kernels.mid_point_inertia(u0, _end_of_chart(u0, z), v0, None, DT, False)[0], z1)
    _close(J, fd, 1e-6, "mid-point inertia tangent")
    _, Jg = kernels.mid_point_gravity(u0, u1, G_FIELD)
    fd = _chart_fd(lambda z: kernels.mid_point_gravity(u0, _end_of_chart(u0, z), G_FIELD)[0], z1)
    _close(Jg, fd, 1e-6, "mid-point gravity tangent")


def test_mid_point_gravity_is_exact(kernels: FloatingFrameMass3D) -> None:
    u0, u1, _ = _states(4)
    F, _ = kernels.mid_point_gravity(u0, u1, G_FIELD)
    dV = kernels.gravity_potential(u0, G_FIELD) - kernels.gravity_potential(u1, G_FIELD)
    z1 = kernels.chart_increment(u0, u1)
    err = np.abs(np.einsum("bi,bi->b", F, z1) - dV).max()
    assert err < 1e-12 * np.abs(dV).max(), f"F . z1 - (V0 - V1) = {err:.2e}"
    _close(F[:, :3], np.broadcast_to(kernels.mass * G_FIELD, (3, 3)), 1e-15, "weight on r")


# ------------------------------------------------------------------------------- end point
def _spin_fd(fun, u: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """d fun/d(r, spin, q) (B, n, n) by central differences, the rotation moved by a spin."""
    def moved(e: np.ndarray) -> np.ndarray:
        out = u + e
        out[:, 3:6] = compose(np.broadcast_to(e[3:6], (len(u), 3)), u[:, 3:6])
        return out
    return np.stack([(fun(moved(h * e)) - fun(moved(-h * e))) / (2 * h) for e in np.eye(u.shape[1])], axis=-1)


def test_gravity_force_is_minus_the_potential_gradient(kernels: FloatingFrameMass3D) -> None:
    u, _, _ = _states(7)
    F, J = kernels.gravity_force(u, G_FIELD)
    dV = _spin_fd(lambda x: kernels.gravity_potential(x, G_FIELD)[:, None], u)[:, 0]
    _close(F, -dV, 1e-8, "F vs -dV/d(r, spin, q)")
    _close(J, _spin_fd(lambda x: kernels.gravity_force(x, G_FIELD)[0], u), 1e-7, "gravity tangent")


def test_end_point_tangent_matches_finite_differences(kernels: FloatingFrameMass3D) -> None:
    u, _, v = _states(8, 2)
    a = np.random.default_rng(9).normal(size=u.shape)
    dv_du, da_du = 40.0, 1600.0
    _, J = kernels.end_point_inertia(u, v, a, dv_du, da_du)
    fd = _spin_fd(lambda x: kernels.end_point_inertia(x, v, a, tangent=False)[0], u)
    for j, e in enumerate(np.eye(u.shape[1])):
        h = 1e-6
        fd[:, :, j] += dv_du * (kernels.end_point_inertia(u, v + h * e, a, tangent=False)[0]
                                - kernels.end_point_inertia(u, v - h * e, a, tangent=False)[0]) / (2 * h)
        fd[:, :, j] += da_du * (kernels.end_point_inertia(u, v, a + h * e, tangent=False)[0]
                                - kernels.end_point_inertia(u, v, a - h * e, tangent=False)[0]) / (2 * h)
    _close(J, fd, 1e-6, "end-point inertia tangent")


_SPIN, _TILT = np.array([0.9, -1.4, 0.6]), np.array([0.5, 1.0, -0.7])   # rad/s, rad


def _trajectory(t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """u, v, a (1, n_x) at time t of R(t) = exp(hat(a t)) exp(hat(b)) (omega = a, omegadot = 0 in
    closed form), r(t), q(t) smooth."""
    r = np.array([np.sin(t), t ** 2, 0.5 * t])
    rd, rdd = np.array([np.cos(t), 2 * t, 0.5]), np.array([-np.sin(t), 2.0, 0.0])
    k = np.arange(1, N_MODES + 1)
    q, qd, qdd = 0.2 * np.sin(k * t), 0.2 * k * np.cos(k * t), -0.2 * k ** 2 * np.sin(k * t)
    u = np.concatenate([r, compose(_SPIN * t, _TILT), q])[None]
    return u, np.concatenate([rd, _SPIN, qd])[None], np.concatenate([rdd, np.zeros(3), qdd])[None]


def _rate(fun, t: float, h: float = 1e-3) -> np.ndarray:
    """d/dt fun(t) by the fourth-order central difference."""
    return (fun(t - 2 * h) - 8 * fun(t - h) + 8 * fun(t + h) - fun(t + 2 * h)) / (12 * h)


def test_end_point_inertia_is_lagranges(kernels: FloatingFrameMass3D) -> None:
    """F = (dP/dt, dPi/dt + rdot x P, dp_q/dt - dT/dq) along the trajectory, with the time derivatives
    of the kernels' momenta and dT/dq at fixed v by finite differences."""
    t = 0.4
    u, v, acc = _trajectory(t)
    F, _ = kernels.end_point_inertia(u, v, acc, tangent=False)
    expected = _rate(lambda s: kernels.momentum(*_trajectory(s)[:2])[0], t)
    expected[3:6] += np.cross(v[0, :3], kernels.momentum(u, v)[0, :3])
    for k in range(N_MODES):
        e = np.zeros(u.shape[1])
        e[6 + k] = 1e-6
        expected[6 + k] -= (kernels.kinetic_energy(u + e, v) - kernels.kinetic_energy(u - e, v))[0] / 2e-6
    _close(F[0], expected, 1e-8, "end-point inertia vs Lagrange")


def test_angular_momentum_rate_is_the_moment_of_the_inertia_forces(kernels: FloatingFrameMass3D) -> None:
    """L = r x P + R p_Omega about the global origin: dL/dt = r x F_r + F_rot along the trajectory."""
    t = 0.7
    u, v, acc = _trajectory(t)
    F, _ = kernels.end_point_inertia(u, v, acc, tangent=False)
    rate = _rate(lambda s: kernels.energy_and_angular_momentum(*_trajectory(s)[:2])[1], t)
    _close(rate, np.cross(X_FRAME[0, 0] + u[0, :3], F[0, :3]) + F[0, 3:6], 1e-8, "dL/dt")
    T, _ = kernels.energy_and_angular_momentum(u, v)
    assert abs(T - kernels.kinetic_energy(u, v)[0]) < 1e-14 * T


def test_weight_is_the_fe_models(data: ModalBodyData) -> None:
    """V = -g . (m r + R S(q)) equals the FE model's -(M L g_b) . (X + Phi q) - m g . r (g_b = R^T g,
    X on the translations; no stiffening: w2 is not part of the mesh)."""
    k = FloatingFrameMass3D(BodyVelocityFields(data, False), X_FRAME)
    comp = data.component
    tr = comp.assembly.dofs.translations()
    u = np.concatenate([[0.2, -0.4, 0.1], [0.5, -1.2, 0.8], [0.3, -0.2, 0.1]])[None]
    R = exp_map(u[0, 3:6])
    field = data.basis @ u[0, 6:]
    field[tr] += data.positions
    g_body = np.zeros(comp.n_dof)
    g_body[tr] = R.T @ G_FIELD
    V_fe = -(comp.M @ g_body) @ field - k.mass * G_FIELD @ (X_FRAME[0, 0] + u[0, :3])
    V = k.gravity_potential(u, G_FIELD)[0]
    assert abs(V - V_fe) < 1e-13 * abs(V_fe), f"V = {V!r}, FE {V_fe!r}"


def test_2d_velocity_fields_are_refused(data: ModalBodyData) -> None:
    body = fm.Model(dim=2)
    nodes = body.add_nodes(np.c_[np.linspace(0.0, 1.0, 4), np.zeros(4)])
    body.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=2e3, EI=2.0, rho_A=0.5, rho_I=0.0, mass="consistent")
    data2 = ModalBodyData.from_model(body, frame_node=0, n_modes=2)
    with pytest.raises(fm.ModelError, match="2D"):
        FloatingFrameMass3D(BodyVelocityFields(data2, False), X_FRAME)
