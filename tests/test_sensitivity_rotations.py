"""The spatial-rotation maps of a mid-point step's derivative (:mod:`flexmb.sensitivity.rotations`) against
central differences in the tangent space (rotations moved by spins, ``R <- exp(h hat(e)) R``, compared
through ``log``): the Cayley increment's dependence on the step's end and start spins, the end angular
velocity's on the increment and the start rate (ordinary nodes and 3D modal-body frames, each against the
scheme's own rule), the step Jacobian's columns as derivatives w.r.t. the end spin (``A T_c^-1``) on a
rigid body, a Beam3D element and a Shell3 plate with rotations of 0.2-0.4 rad, and the rotation-vector
map for responses."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.integrators.schemes import MidPoint, State
from flexmb.io.shell_mesh import rectangle
from flexmb.rotations import cayley, cayley_between, exp_map, log_map
from flexmb.sensitivity import rotations as rot
from models import cantilever_body_3d

DT = 0.01                                   # s


def _spins(rng: np.random.Generator, n: int, low: float = 0.2, high: float = 0.4) -> np.ndarray:
    """n rotation vectors (n, 3) of random axes and angles in [low, high] rad."""
    axes = rng.normal(size=(n, 3))
    return axes / np.linalg.norm(axes, axis=1)[:, None] * rng.uniform(low, high, n)[:, None]


def _turned(psi: np.ndarray, spin: np.ndarray) -> np.ndarray:
    """Rotation vectors (n, 3) of exp(hat(spin)) exp(hat(psi))."""
    return log_map(exp_map(spin) @ exp_map(psi))


def test_increment_maps_against_spins_of_the_ends():
    """dw/dtheta_{n+1} = T_c^-1 and dw/dtheta_n = -T_c^-1 cay(w) of w = cay^-1(R_{n+1} R_n^T), by central
    differences of spins of either end, to 1e-9 (h = 1e-5 rad)."""
    rng = np.random.default_rng(1)
    psi0, psi1 = _spins(rng, 4), _spins(rng, 4)
    w = cayley_between(psi0, psi1)
    d_end, d_start = rot.increment_maps(w)
    h = 1e-5
    for k in range(3):
        e = np.zeros((4, 3))
        e[:, k] = h
        fd_end = (cayley_between(psi0, _turned(psi1, e)) - cayley_between(psi0, _turned(psi1, -e))) / (2 * h)
        fd_start = (cayley_between(_turned(psi0, e), psi1) - cayley_between(_turned(psi0, -e), psi1)) / (2 * h)
        assert np.abs(fd_end - d_end[:, :, k]).max() < 1e-9
        assert np.abs(fd_start - d_start[:, :, k]).max() < 1e-9
    # T_c maps a change of w to the spin of cay(w) R: end_spins inverts dw/dtheta_{n+1}
    theta = rng.normal(size=(4, 3))
    assert np.abs(rot.end_spins(w, np.einsum("nij,nj->ni", d_end, theta)) - theta).max() < 1e-14


def _rigid_end_rate(w: np.ndarray, omega0: np.ndarray, dt: float) -> np.ndarray:
    """omega_{n+1} = R_{n+1} Omega_{n+1} of the scheme (MidPoint._motion) for R_n = I (the rule is
    cay(w) (2 w / dt - omega_n) for any R_n)."""
    return np.einsum("nij,nj->ni", cayley(w), 2.0 / dt * w - omega0)


def test_end_rate_maps_of_ordinary_nodes_against_the_scheme():
    """omega_{n+1} of a rotating Beam3D node equals cay(w) (2 w/dt - omega_n) for turned starts (the rule the
    maps differentiate), and the maps agree with central differences to 1e-7 relative."""
    rng = np.random.default_rng(2)
    m = fm.Model(dim=3)
    n = m.add_nodes(np.array([[0.0, 0.0, 0.0], [1.0, 0.1, 0.0]]))
    m.add_beam3d(np.array([[n[0], n[1]]]), EA=8e4, GJ=10.0, EI_y=14.0, EI_z=22.0, rho_A=3.0, rho_I=(1e-3, 5e-4, 5e-4))
    asm = fm.Assembly(m)
    scheme, rd = MidPoint(asm), asm.rotation_dofs
    u0, d, v0 = rng.normal(0.0, 0.05, asm.n_dof), rng.normal(0.0, 0.05, asm.n_dof), rng.normal(0.0, 2.0, asm.n_dof)
    u0[rd], d[rd] = _spins(rng, 2), _spins(rng, 2)
    u1 = asm.update(u0, d)
    state = State(0.0, u0, v0, np.zeros(asm.n_dof), np.zeros(0))
    w = cayley_between(u0[rd], u1[rd])
    assert np.allclose(scheme.kinematics(state, DT, u1)[0][rd], _rigid_end_rate(w, v0[rd], DT), rtol=1e-13, atol=0)
    _check_rate_maps(w, v0[rd], _rigid_end_rate, None)


def _check_rate_maps(w, omega0, rule, frames) -> None:
    d_w, d_omega = rot.end_rate_maps(w, omega0, DT, frames)
    h = 1e-6
    for k in range(3):
        e = np.zeros_like(w)
        e[:, k] = h
        fd_w = (rule(w + e, omega0, DT) - rule(w - e, omega0, DT)) / (2 * h)
        # linear in omega_n: a unit step is exact up to round-off
        fd_o = (rule(w, omega0 + e / h, DT) - rule(w, omega0 - e / h, DT)) / 2.0
        assert np.abs(fd_w - d_w[:, :, k]).max() < 1e-7 * np.abs(d_w).max()
        assert np.abs(fd_o - d_omega[:, :, k]).max() < 1e-12


def test_end_rate_maps_of_modal_frames_against_the_body_rule():
    """The frame of a 3D modal body takes omega_{n+1} = T_c(w) (2 w/dt - omega_n) (its chart's rule, as
    Assembly.set_modal_frame_velocities sets it), and the maps with ``frames`` differentiate that rule."""
    rng = np.random.default_rng(3)
    m = fm.Model(dim=3)
    m.add_modal_body(cantilever_body_3d(4, 3))
    asm = fm.Assembly(m)
    rd = asm.rotation_dofs
    u0, d, v0 = rng.normal(0.0, 0.05, asm.n_dof), rng.normal(0.0, 0.05, asm.n_dof), rng.normal(0.0, 2.0, asm.n_dof)
    u0[rd], d[rd] = _spins(rng, 1), _spins(rng, 1)
    u1 = asm.update(u0, d)
    v1 = np.zeros(asm.n_dof)
    asm.set_modal_frame_velocities(u0, u1, v0, DT, v1)
    w = cayley_between(u0[rd], u1[rd])

    def frame_rule(w_, omega0, dt):
        return rot.end_spins(w_, 2.0 / dt * w_ - omega0)

    assert np.allclose(v1[rd], frame_rule(w, v0[rd], DT), rtol=1e-12, atol=0)
    _check_rate_maps(w, v0[rd], frame_rule, np.array([True]))
    # the two rules differ (the test can tell them apart)
    assert not np.allclose(frame_rule(w, v0[rd], DT), _rigid_end_rate(w, v0[rd], DT), rtol=1e-3)


def _rigid() -> fm.Model:
    m = fm.Model(dim=3)
    m.add_rigid_body([0.0, 0.0, 0.0], 2.0, [[0.1, 0.01, 0.0], [0.01, 0.2, 0.02], [0.0, 0.02, 0.15]])
    return m


def _beam3d() -> fm.Model:
    m = fm.Model(dim=3)
    n = m.add_nodes(np.array([[0.0, 0.0, 0.0], [1.0, 0.1, 0.05]]))
    m.add_beam3d(np.array([[n[0], n[1]]]), EA=8e4, GJ=10.0, EI_y=14.0, EI_z=22.0, rho_A=3.0, rho_I=(1e-3, 5e-4, 5e-4))
    m.set_rayleigh_damping("beam3d", alpha=0.3, beta=1e-3)
    return m


def _shell() -> fm.Model:
    X, triangles = rectangle(1.0, 0.8, 1, 1)
    m = fm.Model(dim=3)
    m.add_nodes(np.c_[X[:, :2], 0.05 * X[:, 0] * X[:, 1]])
    m.add_shell(triangles, E=1e6, nu=0.3, thickness=0.01, rho=100.0)
    return m


@pytest.mark.parametrize("build", [_rigid, _beam3d, _shell], ids=["rigid body", "Beam3D", "Shell3"])
def test_step_jacobian_is_the_end_spin_derivative_times_the_cayley_map(build):
    """dg/dtheta_{n+1} at fixed R_n (u_{n+1} moved by spins) equals the scheme's tangent (w.r.t. the Cayley
    parameters of the step) times dw/dtheta_{n+1} = T_c(w)^-1, to 1e-7 of its largest entry (h = 1e-6),
    with rotations and steps of 0.2-0.4 rad; without the map the columns miss by far more."""
    asm = fm.Assembly(build())
    scheme, rd = MidPoint(asm), asm.rotation_dofs
    rng = np.random.default_rng(4)
    u0, d, v0 = rng.normal(0.0, 0.02, asm.n_dof), rng.normal(0.0, 0.02, asm.n_dof), rng.normal(0.0, 2.0, asm.n_dof)
    u0[rd], d[rd] = _spins(rng, len(rd)), _spins(rng, len(rd))
    u1 = asm.update(u0, d)
    state = State(0.0, u0, v0, np.zeros(asm.n_dof), np.zeros(0))
    res = scheme.residual(state, DT, u1.copy(), tangent=True)
    A = asm.jacobian_matrix(res.jacobian_data).toarray()                 # (n_free, n_free), w-columns
    # column map at free rotation DOFs: T_c(w)^-1 per node
    T_inv = np.eye(asm.n_dof)
    w = cayley_between(u0[rd], u1[rd])
    for r, block in zip(rd, rot.increment_maps(w)[0]):
        T_inv[np.ix_(r, r)] = block
    free = asm.dofs.free
    expected = A @ T_inv[np.ix_(free, free)]
    h = 1e-6
    fd = np.zeros_like(A)
    for c, j in enumerate(free):
        e = np.zeros(asm.n_dof)
        e[j] = h
        g = [scheme.residual(state, DT, asm.update(u1, s * e), tangent=False).g[free] for s in (1.0, -1.0)]
        fd[:, c] = (g[0] - g[1]) / (2 * h)
    scale = np.abs(expected).max()
    assert np.abs(fd - expected).max() < 1e-7 * scale, np.abs(fd - expected).max() / scale
    assert np.abs(fd - A).max() > 1e-3 * scale


def test_rotation_vector_derivative_and_spin_difference():
    """A spin theta moves the rotation vector by T(psi)^-1 theta, and the spin difference of rotations
    turned by +-h theta recovers theta, to 1e-9."""
    rng = np.random.default_rng(5)
    psi, theta = _spins(rng, 3, 0.5, 2.0), rng.normal(size=(3, 3))
    h = 1e-5
    plus, minus = _turned(psi, h * theta), _turned(psi, -h * theta)
    assert np.abs((plus - minus) / (2 * h) - rot.rotation_vector_derivative(psi, theta)).max() < 1e-9
    assert np.abs(rot.spin_difference(plus, minus, h) - theta).max() < 1e-9
    # columns (n, 3, k) as the state derivatives hold them
    stacked = rot.rotation_vector_derivative(psi, np.stack([theta, 2 * theta], axis=2))
    assert np.allclose(stacked[:, :, 1], 2 * rot.rotation_vector_derivative(psi, theta), rtol=1e-14)
