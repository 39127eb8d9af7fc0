"""The dissipative schemes (flexmb.integrators.dissipative) with spatial rotations and cubic masses:
the Lie-group generalized-alpha (Arnold & Bruls 2007) and the energy-decaying mid-point scheme on
rigid bodies, Beam3D, Shell3, 3D modal bodies and cubic-mass Beam2D.

References: the closed-form amplification matrices of both schemes on a linear oscillator (their
oscillating eigenvalue's damping ratio), the energy-decaying scheme's exact dissipation identity,
momentum conservation of free bodies, generalized-alpha's second order (fitted), the
energy-conserving mid-point solution of slow motions.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.cms.modal_body import ModalBodyData
from flexmb.integrators.dissipative import AlphaParameters, energy_decaying_parameter
from flexmb.integrators.schemes import State
from flexmb.integrators.time_stepping import ALL_SCHEMES
from flexmb.rotations import exp_map, log_map


# ------------------------------------------------------------------ closed-form spectra
def amplification(name: str, rho_inf: float, omega_dt: float) -> np.ndarray:
    """The scheme's amplification matrix on ``m x'' + k x = 0`` with omega dt = omega_dt, in
    (x, dt v[, dt^2 a]), from its defining equations (not from the code): A = A1^-1 A0.

    generalized-alpha (Chung & Hulbert 1993, eqs. 1-3): ``(1 - am) a1 + am a0 + W^2 ((1 - af) x1
    + af x0) = 0`` with Newmark's kinematics; energy-decaying (chi = 0): ``x1 - x0 = (dt v0 +
    dt v1) / 2``, ``dt v1 - dt v0 + W^2 ((x0 + x1) / 2 + xi (x1 - x0)) = 0``."""
    W2 = omega_dt**2
    if name == "generalized-alpha":
        p = AlphaParameters.from_rho_inf(rho_inf)
        A1 = np.array([[(1 - p.alpha_f) * W2, 0.0, 1 - p.alpha_m], [1.0, 0.0, -p.beta], [0.0, 1.0, -p.gamma]])
        A0 = np.array([[-p.alpha_f * W2, 0.0, -p.alpha_m], [1.0, 1.0, 0.5 - p.beta], [0.0, 1.0, 1 - p.gamma]])
    else:
        xi = energy_decaying_parameter(rho_inf)
        A1 = np.array([[1.0, -0.5], [W2 * (0.5 + xi), 1.0]])
        A0 = np.array([[1.0, 0.5], [-W2 * (0.5 - xi), 1.0]])
    return np.linalg.solve(A1, A0)


def damping_ratio(root: complex) -> float:
    """Algorithmic damping ratio of an oscillating root lambda = exp(dt (-zeta + i sqrt(1 - zeta^2)) omega_d):
    ``-ln|lambda| / |ln lambda|`` (the log decrement per radian of phase, normalized)."""
    log = np.log(complex(root))
    return -log.real / abs(log)


def oscillating_root(roots: np.ndarray) -> complex:
    return complex(roots[np.argmax(np.asarray(roots).imag)])


def fitted_root(x: np.ndarray, order: int) -> complex:
    """The oscillating root of the linear recurrence of the given order fitted (least squares) to
    the sequence x (Prony): exact for the output of a linear one-step scheme of that order."""
    rows = np.array([x[k:k + order] for k in range(x.size - order)])
    c = np.linalg.lstsq(rows, x[order:], rcond=None)[0]
    return oscillating_root(np.roots(np.r_[1.0, -c[::-1]]))


#: the schemes' recurrence order on a single oscillator: generalized-alpha's acceleration is a state
ORDER = {"generalized-alpha": 3, "energy-decaying": 2}


def spinning_oscillator(omega: float, mass: float = 2.0, length: float = 1.5) -> tuple[fm.Assembly, int, np.ndarray]:
    """A 3D axial oscillator (a Beam3D along x, its far node carrying a point mass with rotary inertia,
    free along x only) beside a free rigid body tumbling about all axes in the same model: the
    spatial rotations are stepped, the oscillator is linear. Returns the assembly, the oscillator's
    DOF and the start velocity (the body's spin)."""
    m = fm.Model(dim=3)
    a, b = m.add_nodes([[0.0, 0.0, 0.0], [length, 0.0, 0.0]])
    m.add_beam3d([[a, b]], EA=omega**2 * mass * length, GJ=1.0, EI_y=1.0, EI_z=1.0, y_axis=(0.0, 1.0, 0.0))
    m.add_point_mass(b, mass, 0.01)
    m.fix(a)
    m.fix(b, ["uy", "uz"])
    body = m.add_rigid_body([0.0, 3.0, 0.0], 1.0, [0.5, 1.0, 1.5], name="tumbler")
    asm = fm.Assembly(m)
    v0 = np.zeros(asm.n_dof)
    v0[asm.dofs.first[body.node] + 3:asm.dofs.first[body.node] + 6] = (0.2, 3.0, 0.3)     # rad/s
    return asm, asm.dofs.index(b, "ux"), v0


@pytest.mark.parametrize("name", ["generalized-alpha", "energy-decaying"])
@pytest.mark.parametrize("rho_inf, omega_dt", [(0.0, 1.0), (0.5, 0.6), (0.8, 1.5)])
def test_decrement_matches_the_closed_form_with_spatial_rotations(name, rho_inf, omega_dt):
    """Axial oscillator beside a tumbling rigid body: the damping ratio of the oscillation's root,
    fitted to 60 steps of ux, within 1 % of the closed-form amplification matrix's (measured
    <= 4e-13 relative: the oscillator is linear, the tumbling body uncoupled)."""
    omega, dt = 10.0, omega_dt / 10.0
    asm, k, v0 = spinning_oscillator(omega)
    u0 = np.zeros(asm.n_dof)
    u0[k] = 1e-4
    h = fm.integrate(asm, dt, 60 * dt, scheme=name, rho_inf=rho_inf, u0=u0, v0=v0)
    zeta = damping_ratio(fitted_root(np.asarray(h.u)[:, k], ORDER[name]))
    expected = damping_ratio(oscillating_root(np.linalg.eigvals(amplification(name, rho_inf, omega_dt))))
    assert expected > 1e-3 or rho_inf == 0.8
    miss = abs(zeta - expected) / expected
    assert miss < 0.01, f"{name} rho_inf={rho_inf} omega dt={omega_dt}: zeta {zeta:.5g} vs {expected:.5g} ({miss:.1e})"
    assert np.ptp(np.asarray(h.u)[:, asm.rotation_dofs[-1]]) > 1.0            # the body did tumble


@pytest.mark.parametrize("name", ["generalized-alpha", "energy-decaying"])
def test_decrement_of_a_cubic_mass_bar(name):
    """One cubic-mass Beam2D stretched along its axis (its mass is then constant): the fitted damping
    ratio within 1 % of the closed form at omega dt = 0.8, rho_inf = 0.3, omega from the model's
    mass and stiffness (measured 6e-14 relative)."""
    m = fm.Model(dim=2)
    a, b = m.add_nodes([[0.0, 0.0], [2.0, 0.0]])
    m.add_beam2d([[a, b]], EA=1e4, EI=10.0, rho_A=3.0, mass="cubic")
    m.fix(a)
    m.fix(b, ["uy", "rz"])
    asm = fm.Assembly(m)
    k = asm.dofs.index(b, "ux")
    omega = np.sqrt(1e4 / 2.0 / asm.free_matrix(asm.mass_data_at()).toarray()[0, 0])
    dt = 0.8 / omega
    u0 = np.zeros(asm.n_dof)
    u0[k] = 1e-5
    h = fm.integrate(asm, dt, 60 * dt, scheme=name, rho_inf=0.3, u0=u0)
    zeta = damping_ratio(fitted_root(np.asarray(h.u)[:, k], ORDER[name]))
    expected = damping_ratio(oscillating_root(np.linalg.eigvals(amplification(name, 0.3, 0.8))))
    miss = abs(zeta - expected) / expected
    assert miss < 0.01, f"{name}: zeta {zeta:.5g} vs {expected:.5g} ({miss:.1e})"


# ------------------------------------------------------------------ free-flying structures
def free_frame(offset: float = 0.0, turn: np.ndarray | None = None) -> tuple[fm.Assembly, np.ndarray]:
    """An L-frame of four stiff Beam3D elements (lumped mass, rotary inertia), free, thrown spinning
    about a skew axis and kicked at two nodes (its axial and bending modes vibrate); optionally
    moved by ``offset`` m along (1, 2, 3)/|.| and turned by the rotation matrix ``turn``."""
    m = fm.Model(dim=3)
    R = np.eye(3) if turn is None else turn
    X = np.array([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.5, 0.1], [1.0, 1.0, 0.2]]) @ R.T
    X += offset * np.array([1.0, 2.0, 3.0]) / np.sqrt(14.0)
    nodes = m.add_nodes(X)
    m.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, GJ=50.0, EI_y=80.0, EI_z=100.0, rho_A=2.0,
                 rho_I=(1e-3, 5e-4, 5e-4), y_axis=R @ [0.0, 0.0, 1.0], name="frame")
    asm = fm.Assembly(m)
    w = R @ [0.5, -1.0, 3.0]
    v0 = np.zeros(asm.n_dof)
    v0[asm.dofs.translations()] = np.cross(w, X - X.mean(axis=0)) + R @ [0.5, -0.2, 0.1]
    v0[asm.rotation_dofs] = w
    v0[asm.dofs.translations()[nodes[1]]] += R @ [0.0, 2.0, 0.0]
    v0[asm.dofs.translations()[nodes[3]]] += R @ [1.0, 0.0, 0.0]
    return asm, v0


def free_plate() -> tuple[fm.Assembly, np.ndarray]:
    """A 1 m x 0.6 m steel-like plate of 8 Shell3 triangles, free, thrown spinning and kicked in its
    plane and across it."""
    m = fm.Model(dim=3)
    x, y = np.meshgrid(np.linspace(0.0, 1.0, 3), np.linspace(0.0, 0.6, 3))
    X = np.c_[x.ravel(), y.ravel(), 0.1 * x.ravel() * y.ravel()]
    nodes = m.add_nodes(X)
    grid = nodes.reshape(3, 3)
    tri = []
    for i in range(2):
        for j in range(2):
            tri += [[grid[i, j], grid[i, j + 1], grid[i + 1, j + 1]], [grid[i, j], grid[i + 1, j + 1], grid[i + 1, j]]]
    m.add_shell(np.array(tri), E=2e9, nu=0.3, thickness=0.01, rho=1000.0, name="plate")
    asm = fm.Assembly(m)
    w = np.array([1.0, 2.0, -0.5])
    v0 = np.zeros(asm.n_dof)
    v0[asm.dofs.translations()] = np.cross(w, X - X.mean(axis=0)) + [0.1, 0.3, -0.2]
    v0[asm.rotation_dofs] = w
    v0[asm.dofs.index(grid[1, 1], "ux")] += 1.0
    v0[asm.dofs.index(grid[2, 2], "uz")] += 1.0
    return asm, v0


FREE = {"beam3d": free_frame, "shell3": free_plate}


def linear_momentum(asm: fm.Assembly, v: np.ndarray) -> np.ndarray:
    return asm.mass_times(v)[asm.dofs.translations()].sum(axis=0)             # (3,), kg m/s (lumped masses)


@pytest.mark.parametrize("structure", list(FREE))
def test_energy_decaying_free_structure_books_its_dissipation_and_keeps_momenta(structure):
    """Free-flying Beam3D frame / Shell3 plate, rho_inf = 0.2, dt over the axial (membrane) period:
    every step E_{n+1} - E_n = -numerical_dissipation(u_n, u_{n+1}) to 1e-8 of the largest kinetic
    energy (E = K + V), so E never rises, and it falls; linear momentum to 1e-12 and angular
    momentum to 1e-10 (relative). Measured: identity 1.4e-12 / 5.7e-14, momenta 1.5e-14 and
    2e-13 / 2e-14; the energy fell by 0.24 % / 20 % of K_max."""
    asm, v0 = FREE[structure]()
    dt = 2e-3 if structure == "beam3d" else 2e-4
    h = fm.integrate(asm, dt, 60 * dt, scheme="energy-decaying", rho_inf=0.2, v0=v0)
    scheme = ALL_SCHEMES["energy-decaying"](asm, rho_inf=0.2)
    E, scale = h.total, max(h.kinetic)
    loss = np.array([scheme.numerical_dissipation(a, b) for a, b in zip(h.u[:-1], h.u[1:])])
    miss = np.abs(np.diff(E) + loss).max() / scale
    assert miss < 1e-8, f"{structure}: dissipation identity missed by {miss:.2e} of K_max"
    assert np.diff(E).max() < 1e-9 * scale
    assert E[0] - E[-1] > 1e-4 * scale, f"{structure}: energy fell by {(E[0] - E[-1]) / scale:.1e} of K_max only"
    P = np.array([linear_momentum(asm, v) for v in h.v])
    p_miss = np.abs(P - P[0]).max() / np.linalg.norm(P[0])
    assert p_miss < 1e-12, f"{structure}: linear momentum changed by {p_miss:.1e}"
    L_miss = h.angular_momentum_error().max()
    assert L_miss < 1e-10, f"{structure}: angular momentum changed by {L_miss:.1e}"


@pytest.mark.parametrize("structure", list(FREE))
def test_generalized_alpha_free_structure_keeps_linear_momentum(structure):
    """The same free structures with generalized-alpha (rho_inf = 0.2): linear momentum to 1e-12
    (relative); angular momentum is not conserved by the scheme: it changes by less than 1 %
    (measured 1.1e-4 frame, 1.0e-5 plate) and the energy falls."""
    asm, v0 = FREE[structure]()
    dt = 2e-3 if structure == "beam3d" else 2e-4
    h = fm.integrate(asm, dt, 60 * dt, scheme="generalized-alpha", rho_inf=0.2, v0=v0)
    P = np.array([linear_momentum(asm, v) for v in h.v])
    p_miss = np.abs(P - P[0]).max() / np.linalg.norm(P[0])
    assert p_miss < 1e-12, f"{structure}: linear momentum changed by {p_miss:.1e}"
    assert h.angular_momentum_error().max() < 0.01
    assert h.total[-1] < h.total[0]


def test_energy_decaying_far_from_the_origin_and_turned():
    """The free frame moved 1e4 m away and turned: the energy identity per step to 1e-8 of K_max,
    linear momentum to 1e-12, and the run's kinetic energy equals the frame's at the origin to
    1e-6 (relative): the dissipation depends on chord lengths only. Measured 3e-12, 7e-15, 6e-13."""
    turn = exp_map(np.array([0.4, -1.1, 0.7]))
    far, v_far = free_frame(1e4, turn)
    near, v_near = free_frame()
    h = fm.integrate(far, 2e-3, 0.06, scheme="energy-decaying", rho_inf=0.2, v0=v_far)
    h0 = fm.integrate(near, 2e-3, 0.06, scheme="energy-decaying", rho_inf=0.2, v0=v_near)
    scheme = ALL_SCHEMES["energy-decaying"](far, rho_inf=0.2)
    E, scale = h.total, max(h.kinetic)
    loss = np.array([scheme.numerical_dissipation(a, b) for a, b in zip(h.u[:-1], h.u[1:])])
    miss = np.abs(np.diff(E) + loss).max() / scale
    assert miss < 1e-8, f"far frame: dissipation identity missed by {miss:.2e} of K_max"
    P = np.array([linear_momentum(far, v) for v in h.v])
    assert np.abs(P - P[0]).max() < 1e-12 * np.linalg.norm(P[0])
    change = np.abs(np.asarray(h.kinetic) - np.asarray(h0.kinetic)).max() / scale
    assert change < 1e-6, f"far frame: kinetic energy differs from the frame's at the origin by {change:.1e}"


# ------------------------------------------------------------------ rigid bodies
def asymmetric_top() -> tuple[fm.Assembly, np.ndarray]:
    """A free rigid body spinning near its unstable intermediate axis (it tumbles), drifting."""
    m = fm.Model(dim=3)
    body = m.add_rigid_body([0.3, -0.2, 0.5], 2.0, [0.5, 1.0, 1.5], name="top")
    asm = fm.Assembly(m)
    v0 = np.zeros(asm.n_dof)
    first = asm.dofs.first[body.node]
    v0[first:first + 3] = (0.3, -0.1, 0.2)
    v0[first + 3:first + 6] = (0.2, 3.0, 0.3)
    return asm, v0


@pytest.mark.parametrize("rho_inf", [0.0, 0.5])
def test_generalized_alpha_is_second_order_on_a_tumbling_body(rho_inf):
    """Torque-free asymmetric top over 1 s against the composed mid-point scheme at 1 ms: the
    rotation error |log(R R_ref^T)| at dt = 50, 25, 12.5 ms falls at a fitted rate >= 1.85
    (measured 1.93 at rho_inf = 0, 1.99 at 0.5; the former spatially averaged inertia gave 1.04).
    Linear momentum is kept to round-off."""
    asm, v0 = asymmetric_top()
    rd = asm.rotation_dofs
    reference = exp_map(np.asarray(fm.integrate(asm, 1e-3, 1.0, scheme="composed-mid-point", v0=v0).u)[-1][rd])
    steps, errors = [0.05, 0.025, 0.0125], []
    for dt in steps:
        h = fm.integrate(asm, dt, 1.0, scheme="generalized-alpha", rho_inf=rho_inf, v0=v0)
        R = exp_map(np.asarray(h.u)[-1][rd])
        errors.append(np.linalg.norm(log_map(R @ reference.transpose(0, 2, 1))))
        P = np.array([linear_momentum(asm, v) for v in h.v])
        assert np.abs(P - P[0]).max() < 1e-13 * np.linalg.norm(P[0])
    rate = np.polyfit(np.log(steps), np.log(errors), 1)[0]
    assert rate > 1.85, f"rho_inf={rho_inf}: order {rate:.2f} (errors {errors})"


def test_energy_decaying_rigid_body_keeps_energy_and_angular_momentum():
    """With no chords to damp, the energy-decaying scheme is the conserving one: the tumbling top
    at dt = 50 ms keeps energy to 1e-10 of K and angular momentum to 1e-8 (the Newton tolerance;
    measured 2.2e-10)."""
    asm, v0 = asymmetric_top()
    h = fm.integrate(asm, 0.05, 2.0, scheme="energy-decaying", rho_inf=0.0, v0=v0)
    assert np.abs(h.total - h.total[0]).max() < 1e-10 * h.kinetic[0]
    assert h.angular_momentum_error().max() < 1e-8


def heavy_top() -> tuple[fm.Assembly, np.ndarray]:
    """A symmetric top (1 kg, centre of mass 0.5 m from its tip) on a spherical joint at the origin,
    tilted 0.3 rad, spinning at 40 rad/s about its axis, under gravity."""
    tilt = 0.3
    axis = np.array([np.sin(tilt), 0.0, np.cos(tilt)])
    m = fm.Model(dim=3)
    R = exp_map(np.array([0.0, tilt, 0.0]))
    body = m.add_rigid_body(0.5 * axis, 1.0, R @ np.diag([0.02, 0.02, 0.008]) @ R.T, name="top")
    m.add_joint("spherical", None, body, at=[0.0, 0.0, 0.0], name="tip")
    m.set_gravity([0.0, 0.0, -9.81])
    asm = fm.Assembly(m)
    v0 = np.zeros(asm.n_dof)
    first = asm.dofs.first[body.node]
    v0[first + 3:first + 6] = 40.0 * axis
    v0[first:first + 3] = np.cross(40.0 * axis, 0.5 * axis)                  # zero: spin about the axis
    return asm, v0


def test_heavy_top_on_a_spherical_joint_runs_at_large_steps():
    """Generalized-alpha (rho_inf = 0.6) over 1 s. At dt = 20 ms (0.8 rad of spin per step; Newmark
    stops there with a branch change) the joint holds to 1e-9 m and the energy stays between
    E0 - 5 % and E0 + 0.1 % of the spin's kinetic energy (measured: -3.3 %, the spin mode's
    algorithmic damping at omega dt = 0.8). The centre of mass converges to the mid-point
    scheme's at 1 ms at second order: the miss at 5 ms is below 0.35 of that at 10 ms (measured
    1.5e-2 m and 3.4e-3 m)."""
    asm, v0 = heavy_top()
    h = fm.integrate(asm, 0.02, 1.0, scheme="generalized-alpha", rho_inf=0.6, v0=v0)
    assert np.max(h.constraint_residual) < 1e-9
    change = (h.total - h.total[0]) / h.kinetic[0]
    assert -0.05 < change.min() and change.max() < 1e-3, \
        f"energy changed by {change.min():.1e} .. {change.max():.1e} of K0"
    reference = fm.integrate(asm, 1e-3, 1.0, v0=v0)
    t = asm.dofs.translations()[-1]
    misses = [np.linalg.norm(np.asarray(fm.integrate(asm, dt, 1.0, scheme="generalized-alpha", rho_inf=0.6,
                                                     v0=v0).u)[-1][t] - np.asarray(reference.u)[-1][t])
              for dt in (0.01, 0.005)]
    assert misses[1] < 0.35 * misses[0], f"centre of mass misses {misses} m"


# ------------------------------------------------------------------ cubic mass, modal body
def cubic_pendulum() -> fm.Assembly:
    """Three cubic-mass Beam2D elements pinned at one end, released horizontal under gravity."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 4), np.zeros(4)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e4, EI=50.0, rho_A=2.0, rho_I=1e-3, mass="cubic", name="arm")
    m.fix(nodes[0], ["ux", "uy"])
    m.set_gravity([0.0, -9.81])
    return fm.Assembly(m)


def test_energy_decaying_cubic_mass_books_its_dissipation():
    """Cubic-mass pendulum beam, dt = 5 ms, rho_inf = 0.2: E_{n+1} - E_n = -numerical_dissipation to
    1e-8 of K_max every step (the director kinetic energy included), E never rises and falls."""
    asm = cubic_pendulum()
    h = fm.integrate(asm, 0.005, 0.6, scheme="energy-decaying", rho_inf=0.2)
    scheme = ALL_SCHEMES["energy-decaying"](asm, rho_inf=0.2)
    E, scale = h.total, max(h.kinetic)
    loss = np.array([scheme.numerical_dissipation(a, b) for a, b in zip(h.u[:-1], h.u[1:])])
    miss = np.abs(np.diff(E) + loss).max() / scale
    assert miss < 1e-8, f"cubic mass: dissipation identity missed by {miss:.2e} of K_max"
    assert np.diff(E).max() < 1e-9 * scale
    assert loss.sum() > 1e-6 * scale


def test_generalized_alpha_cubic_pendulum_follows_the_mid_point_solution():
    """The cubic-mass pendulum with generalized-alpha (rho_inf = 0.6) at dt = 5 ms: its tip after
    0.6 s within 1 % of the length of the mid-point scheme's, its energy within 1 % of K_max."""
    asm = cubic_pendulum()
    h = fm.integrate(asm, 0.005, 0.6, scheme="generalized-alpha", rho_inf=0.6)
    reference = fm.integrate(asm, 0.005, 0.6)
    tip = [asm.dofs.index(3, "ux"), asm.dofs.index(3, "uy")]
    assert np.linalg.norm(np.asarray(h.u)[-1][tip] - np.asarray(reference.u)[-1][tip]) < 0.01
    assert np.abs(h.total - h.total[0]).max() < 0.01 * max(h.kinetic)


def test_generalized_alpha_modal_body_matches_the_mid_point_scheme():
    """A free 3D modal body (a 6-element Beam3D cantilever, 4 modes) tumbling slowly (0.5 rad/s) while
    its modes vibrate: generalized-alpha (rho_inf = 0.8) at dt = 10 ms ends within 1e-3 of the
    mid-point scheme's state at 2.5 ms (frame position, rotation vector, modal coordinates), and its
    linear momentum is kept."""
    body_model = fm.Model(dim=3)
    x = np.linspace(0.0, 1.0, 7)
    nodes = body_model.add_nodes(np.c_[x, np.zeros(7), np.zeros(7)])
    body_model.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=2e3, GJ=1.5, EI_y=3.0, EI_z=2.0, rho_A=0.5,
                          rho_I=(1e-4, 0.0, 0.0), mass="consistent", y_axis=(0.0, 1.0, 0.0))
    data = ModalBodyData.from_model(body_model, frame_node=int(nodes[0]), n_modes=4, name="blade")
    m = fm.Model(dim=3)
    body = m.add_modal_body(data, name="blade")
    asm = fm.Assembly(m)
    v0 = np.zeros(asm.n_dof)
    frame = asm.dofs.first[body.connectivity[0, 0]]
    v0[frame:frame + 3] = (0.1, -0.05, 0.02)
    v0[frame + 3:frame + 6] = (0.1, 0.2, 0.4)
    v0[asm.dofs.internal_dofs(body)] = 0.01
    h = np.asarray(fm.integrate(asm, 0.01, 0.5, scheme="generalized-alpha", rho_inf=0.8, v0=v0, progress=False).u)
    reference = np.asarray(fm.integrate(asm, 0.01, 0.5, v0=v0, progress=False).u)
    miss = np.abs(h - reference).max() / np.abs(reference - reference[0]).max()
    assert miss < 0.01, f"modal body: {miss:.1e} of the motion off the mid-point solution"


# ------------------------------------------------------------------ Jacobians
def spatial_model() -> fm.Assembly:
    """A Beam3D cantilever with a shell flap and a tip point inertia under gravity."""
    m = fm.Model(dim=3)
    nodes = m.add_nodes([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [1.0, 0.0, 0.0], [0.75, 0.4, 0.0]])
    m.add_beam3d([[nodes[0], nodes[1]], [nodes[1], nodes[2]]], EA=1e4, GJ=20.0, EI_y=30.0, EI_z=40.0,
                 rho_A=2.0, rho_I=(1e-3, 5e-4, 5e-4), y_axis=(0.0, 1.0, 0.0))
    m.add_shell([[nodes[1], nodes[2], nodes[3]]], E=1e7, nu=0.3, thickness=0.01, rho=500.0)
    m.add_point_mass(nodes[2], 0.5, 0.01)
    m.fix(nodes[0])
    m.set_gravity([0.0, 0.0, -9.81])
    return fm.Assembly(m)


@pytest.mark.parametrize("name", ["generalized-alpha", "energy-decaying"])
def test_jacobians_with_spatial_rotations_match_finite_differences(name):
    """dg/du1 on the free DOFs, the scheme's own correction rule (spins or Cayley increments at the
    rotations), against central differences at a random state: relative error < 1e-6."""
    asm = spatial_model()
    scheme = ALL_SCHEMES[name](asm, rho_inf=0.4)
    rng = np.random.default_rng(2)
    n, free = asm.n_dof, asm.dofs.free
    u, v, a = (np.where(np.isin(np.arange(n), free), rng.normal(0.0, 0.05, n), 0.0) for _ in range(3))
    s = State(0.0, u, v, a, np.zeros(n), constraint_force=np.zeros(n))
    dt = 0.01
    u1 = scheme.update(s, scheme.predict(s, dt), np.where(np.isin(np.arange(n), free), rng.normal(0.0, 0.02, n), 0.0))
    J = asm.free_matrix(scheme.residual(s, dt, u1).jacobian_data).toarray()
    h = 1e-6
    J_fd = np.zeros_like(J)
    for j, dof in enumerate(free):
        e = np.zeros(n)
        e[dof] = h
        J_fd[:, j] = (scheme.residual(s, dt, scheme.update(s, u1, e), False).g[free]
                      - scheme.residual(s, dt, scheme.update(s, u1, -e), False).g[free]) / (2 * h)
    error = np.abs(J - J_fd).max() / np.abs(J).max()
    assert error < 1e-6, f"{name}: Jacobian off finite differences by {error:.2e}"
