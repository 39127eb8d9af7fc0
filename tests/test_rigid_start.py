"""consistent_initial_state(start="rigid"): a driven mechanism with flexible parts starts in its
rigid motion (the elements' deformation rates those of the guess, zero without one), in 2D and
3D, for beams, shells and modal bodies; an impossible rigid start warns; start="least-kinetic-
energy" keeps the old field (the least kinetic-energy change, which makes the flexible coupler of
a four-bar spin at -48 rad/s at one end)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import flexmb as fm
from flexmb.cms.modal_body import ModalBodyData
from flexmb.checks import FlexmbWarning

OMEGA = 2.0 * np.pi          # crank speed of the four-bar (rad/s)
STEEL = dict(E=210e9, rho=7800.0)


def _four_bar(n: int = 8, drive=lambda t: OMEGA * t) -> tuple[fm.Model, np.ndarray, dict[str, np.ndarray]]:
    """The issue-29 four-bar: ground pivots (0, 0) and (0.3, 0) m, rigid crank 0.1 m (0.2 kg) from
    90 deg, coupler 0.35 m of n cubic-mass Beam2D (steel strip 20 x 5 mm), rigid rocker 0.3 m
    (0.5 kg), revolute joints, gravity; returns the model, the coupler nodes and the points
    A (crank-coupler), B (coupler-rocker), O4 of the closed loop (the analytic position analysis)."""
    O4, A = np.array([0.3, 0.0]), np.array([0.0, 0.1])
    d = np.linalg.norm(O4 - A)
    th3 = np.arctan2(*(O4 - A)[::-1]) + np.arccos((0.35**2 + d**2 - 0.3**2) / (2 * 0.35 * d))
    B = A + 0.35 * np.array([np.cos(th3), np.sin(th3)])
    m = fm.Model(dim=2)
    crank = m.add_rigid_body(A / 2, 0.2, 0.2 * 0.1**2 / 12, name="crank")
    rocker = m.add_rigid_body((B + O4) / 2, 0.5, 0.5 * 0.3**2 / 12, name="rocker")
    nodes = m.add_nodes(A + np.linspace(0, 1, n + 1)[:, None] * (B - A))
    b, h = 0.02, 0.005
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=STEEL["E"] * b * h, EI=STEEL["E"] * b * h**3 / 12,
                 rho_A=STEEL["rho"] * b * h, rho_I=STEEL["rho"] * b * h**3 / 12, mass="cubic", second_order=True,
                 name="coupler")
    m.add_joint("revolute", None, crank, at=(0.0, 0.0), drive=drive, name="crank pivot")
    m.add_joint("revolute", crank, int(nodes[0]), at=A, name="crank-coupler")
    m.add_joint("revolute", int(nodes[-1]), rocker, at=B, name="coupler-rocker")
    m.add_joint("revolute", None, rocker, at=O4, name="rocker pivot")
    m.set_gravity([0.0, -9.81])
    return m, nodes, {"A": A, "B": B, "O4": O4}


def _perp(r: np.ndarray) -> np.ndarray:
    """e_z x r for planar vectors r (..., 2)."""
    return np.stack([-r[..., 1], r[..., 0]], axis=-1)


def _velocity_residual(asm: fm.Assembly, u: np.ndarray, v: np.ndarray, t0: float = 0.0) -> float:
    """max |C v + dPhi/dt| over the joints' velocity equations."""
    cs = asm.constraints
    return float(np.abs(cs.evaluate(u, t0, np.zeros(cs.n)).C @ v + cs.time_derivative(u, t0)).max())


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


def test_four_bar_starts_with_the_rigid_coupler():
    """Analytic velocity analysis of the loop: v_B = v_A + w3 e_z x (B - A) = w4 e_z x (B - O4) with
    v_A = OMEGA e_z x A; every coupler node moves at v_A + w3 e_z x (x - A) and turns at w3."""
    m, nodes, p = _four_bar()
    asm = fm.Assembly(m)
    u, v = fm.consistent_initial_state(asm)
    # the crank's rate as the joints give it (the drive's rate is a difference quotient, ~1e-11 off)
    crank = m.bodies[0]
    omega = v[asm.dofs.index(crank.node, "rz")]
    assert abs(omega - OMEGA) < 1e-9 * OMEGA
    v_A = omega * _perp(p["A"])
    w3, w4 = np.linalg.solve(np.c_[_perp(p["B"] - p["A"]), -_perp(p["B"] - p["O4"])], -v_A)
    x = m.coordinates[nodes] + u[asm.dofs.translations()[nodes]]
    expected = v_A + w3 * _perp(x - p["A"])                                     # (n + 1, 2)
    got = v[asm.dofs.translations()[nodes]]
    rates = v[[asm.dofs.index(int(k), "rz") for k in nodes]]
    assert _rel(got, expected) < 1e-12, f"node velocities off the rigid coupler's by {_rel(got, expected):.2g}"
    # the rotation rates, relative to the speeds' scale OMEGA (w3 itself is small, -0.089 rad/s)
    assert np.abs(rates - w3).max() < 1e-12 * omega, \
        f"rotation rates off w3 = {w3:.6g} by {np.abs(rates - w3).max():.2g}"
    speed = float(np.abs(v).max())
    assert _velocity_residual(asm, u, v) < 1e-13 * speed
    # the old default puts an impulsive deformation there: the crank-end node spins at about -48 rad/s
    _, v_old = fm.consistent_initial_state(asm, start="least-kinetic-energy")
    assert v_old[asm.dofs.index(int(nodes[0]), "rz")] < -40.0


def test_least_kinetic_energy_start_is_the_kkt_solution():
    """start="least-kinetic-energy": min (v - v0)^T M (v - v0) subject to C v + dPhi/dt = 0 with the
    crank's rotation given by its drive, here solved as one dense KKT system (all DOFs of the
    cubic-mass coupler have mass)."""
    m, nodes, _ = _four_bar()
    asm = fm.Assembly(m)
    u, v = fm.consistent_initial_state(asm, start="least-kinetic-energy")
    free = asm.dofs.free
    M = asm.free_matrix(asm.mass_data_at(u)).toarray()
    cs = asm.constraints
    C = cs.evaluate(u, 0.0, np.zeros(cs.n)).C.toarray()[:, free]
    a = cs.time_derivative(u, 0.0)
    # the drive's equation repeats the pivot's rotation row: keep independent rows (the crank's
    # pivot gives 2 + 1 equations on a free body, 3 ranks)
    q, r = np.linalg.qr(C.T)
    keep = np.abs(np.diag(r)) > 1e-10 * np.abs(r).max()
    n_f, n_c = free.size, int(keep.sum())
    K = np.block([[M, C[keep].T], [C[keep], np.zeros((n_c, n_c))]])
    x = np.linalg.solve(K, np.r_[np.zeros(n_f), -a[keep]])[:n_f]
    assert _rel(v[free], x) < 1e-9, f"least-kinetic-energy start off the KKT solution by {_rel(v[free], x):.2g}"


def _rigid_coupler_axial_force(t_end: float, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """The same four-bar with a rigid coupler (mass and inertia of the strip): its axial force at
    the crank end (N, tension positive) from the crank-coupler joint's reaction, with the times."""
    O4, A = np.array([0.3, 0.0]), np.array([0.0, 0.1])
    d = np.linalg.norm(O4 - A)
    th3 = np.arctan2(*(O4 - A)[::-1]) + np.arccos((0.35**2 + d**2 - 0.3**2) / (2 * 0.35 * d))
    B = A + 0.35 * np.array([np.cos(th3), np.sin(th3)])
    m = fm.Model(dim=2)
    crank = m.add_rigid_body(A / 2, 0.2, 0.2 * 0.1**2 / 12, name="crank")
    mass = STEEL["rho"] * 0.02 * 0.005 * 0.35
    coupler = m.add_rigid_body((A + B) / 2, mass, mass * 0.35**2 / 12, name="coupler")
    rocker = m.add_rigid_body((B + O4) / 2, 0.5, 0.5 * 0.3**2 / 12, name="rocker")
    m.add_joint("revolute", None, crank, at=(0.0, 0.0), drive=lambda t: OMEGA * t, name="crank pivot")
    m.add_joint("revolute", crank, coupler, at=A, name="crank-coupler")
    m.add_joint("revolute", coupler, rocker, at=B, name="coupler-rocker")
    m.add_joint("revolute", None, rocker, at=O4, name="rocker pivot")
    m.set_gravity([0.0, -9.81])
    asm = fm.Assembly(m)
    u0, v0 = fm.consistent_initial_state(asm)
    h = fm.integrate(asm, dt, t_end, u0=u0, v0=v0, progress=False)
    U = np.array(h.u)
    force, _ = h.joint_reaction("crank-coupler")          # on the coupler, in the crank's frame
    a2, a3 = U[:, asm.dofs.index(crank.node, "rz")], U[:, asm.dofs.index(coupler.node, "rz")]
    global_force = np.c_[np.cos(a2) * force[:, 0] - np.sin(a2) * force[:, 1],
                         np.sin(a2) * force[:, 0] + np.cos(a2) * force[:, 1]]
    axis = np.c_[np.cos(th3 + a3), np.sin(th3 + a3)]
    return np.array(h.t), -np.sum(global_force * axis, axis=1)


def test_four_bar_run_from_the_rigid_start_has_the_rigid_coupler_force():
    """Mid-point run, dt = 1 ms, 0.5 s: the coupler's axial force after 0.1 s stays near the rigid
    coupler's (about 6 N: inertia and weight); from the least-kinetic-energy start it chatters at
    kN (the start's impact)."""
    m, _, _ = _four_bar()
    asm = fm.Assembly(m)
    u0, v0 = fm.consistent_initial_state(asm)
    h = fm.integrate(asm, 1e-3, 0.5, u0=u0, v0=v0, progress=False)
    t, N = np.array(h.t), np.array(h.element("coupler", "N"))                     # (n_t,), (n_t, 8)
    t_r, N_r = _rigid_coupler_axial_force(0.5, 1e-3)
    flexible, rigid = np.abs(N[t > 0.1]).max(), np.abs(N_r[t_r > 0.1]).max()
    assert 0.5 * rigid < flexible < 1.5 * rigid, f"max |N| {flexible:.3g} N, rigid coupler {rigid:.3g} N"


def test_guess_deformation_rates_are_kept():
    """A guess with a bending velocity of the coupler: the result differs from it by a rigid motion
    of the whole coupler (a translation and one rotation rate w, the nodes' rz rates changed by w)."""
    m, nodes, _ = _four_bar()
    asm = fm.Assembly(m)
    guess = np.zeros(asm.n_dof)
    s = np.linspace(0.0, 1.0, nodes.size)
    guess[[asm.dofs.index(int(k), "uy") for k in nodes]] = 0.3 * np.sin(np.pi * s)
    guess[[asm.dofs.index(int(k), "rz") for k in nodes]] = 0.3 * np.pi / 0.35 * np.cos(np.pi * s)
    u, v = fm.consistent_initial_state(asm, v0=guess)
    x = m.coordinates[nodes] + u[asm.dofs.translations()[nodes]]
    dv = (v - guess)[asm.dofs.translations()[nodes]]                                # (n + 1, 2)
    w = (v - guess)[[asm.dofs.index(int(k), "rz") for k in nodes]]
    rigid = dv[0] + w[0] * _perp(x - x[0])
    scale = float(np.abs(v).max())
    assert np.abs(w - w[0]).max() < 1e-11 * scale / 0.35, "rotation-rate change differs along the coupler"
    assert np.abs(dv - rigid).max() < 1e-11 * scale, f"change off a rigid motion by {np.abs(dv - rigid).max():.2g}"
    assert _velocity_residual(asm, u, v) < 1e-12 * scale
    # the bending velocity is really there: the result is not the rigid start
    _, v_rigid = fm.consistent_initial_state(asm)
    assert np.abs(v - v_rigid).max() > 0.1


def test_undriven_model_without_guess_starts_at_rest():
    m, _, _ = _four_bar(drive=None)
    asm = fm.Assembly(m)
    _, v = fm.consistent_initial_state(asm)
    assert not np.any(v)


def _node_velocities(asm: fm.Assembly, v: np.ndarray, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Translation and rotation (spatial angular) velocities (n, 3) of 3D ``nodes``."""
    first = asm.dofs.first[nodes][:, None]
    return v[first + np.arange(3)], v[first + 3 + np.arange(3)]


def _check_turns_with(asm: fm.Assembly, u: np.ndarray, v: np.ndarray, body, nodes: np.ndarray,
                      spin: np.ndarray) -> None:
    """The body turns at ``spin`` (3,) about its fixed centre (to the drive's difference-quotient
    rate) and ``nodes`` move rigidly with it: v_body + w x (x - x_body), rotation rates w."""
    (v_b,), (w_b,) = _node_velocities(asm, v, np.array([body.node]))
    assert np.abs(w_b - spin).max() < 1e-9 * np.abs(spin).max() and np.abs(v_b).max() < 1e-12
    x = asm.model.coordinates[nodes] + u[asm.dofs.translations()[nodes]]
    x_b = asm.model.coordinates[body.node] + u[asm.dofs.translations()[body.node]]
    x_dot, w = _node_velocities(asm, v, nodes)
    expected = v_b + np.cross(w_b, x - x_b)
    assert _rel(x_dot, expected) < 1e-12, f"node velocities off the rigid turn by {_rel(x_dot, expected):.2g}"
    assert np.abs(w - w_b).max() < 1e-12 * np.abs(spin).max(), f"rotation rates off by {np.abs(w - w_b).max():.2g}"
    assert _velocity_residual(asm, u, v) < 1e-12 * np.abs(v).max()


def test_spatial_beam_arm_on_a_driven_hub():
    """A Beam3D arm, tilted out of the hub's plane, welded to a hub turned about z at 3 rad/s: every
    node moves at w x (x - p) and turns at w (spatial angular velocity)."""
    m = fm.Model(dim=3)
    hub = m.add_rigid_body([0.0, 0.0, 0.0], 2.0, [0.1, 0.1, 0.1], name="hub")
    nodes = m.add_nodes(np.linspace(0.0, 1.0, 6)[:, None] * np.array([0.8, 0.2, 0.5]))
    m.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, GJ=50.0, EI_y=80.0, EI_z=80.0, rho_A=2.0,
                 rho_I=(1e-4, 5e-5, 5e-5), name="arm")
    m.add_joint("revolute", None, hub, axis=[0.0, 0.0, 1.0], drive=lambda t: 3.0 * t, name="motor")
    m.add_joint("fixed", hub, int(nodes[0]), name="weld")
    asm = fm.Assembly(m)
    u, v = fm.consistent_initial_state(asm)
    _check_turns_with(asm, u, v, hub, nodes, np.array([0.0, 0.0, 3.0]))
    _, v_old = fm.consistent_initial_state(asm, start="least-kinetic-energy")
    # the old start leaves the arm behind the hub: its tip does not follow at w x x
    tip = _node_velocities(asm, v_old, nodes[-1:])[0][0]
    assert np.abs(tip - np.cross([0.0, 0.0, 3.0], m.coordinates[nodes[-1]])).max() > 1e-3


def test_shell_plate_on_a_driven_body():
    """A steel plate of 8 Shell3 triangles welded at one corner to a body turned about a tilted axis:
    the plate turns rigidly with the body."""
    m = fm.Model(dim=3)
    body = m.add_rigid_body([0.0, 0.0, 0.0], 1.0, [0.01, 0.01, 0.01], name="carrier")
    g = np.linspace(0.0, 0.2, 3)
    nodes = m.add_nodes(np.c_[np.repeat(g, 3) + 0.05, np.tile(g, 3), np.zeros(9)]).reshape(3, 3)
    tris = [[nodes[i, j], nodes[i + 1, j], nodes[i + 1, j + 1]] for i in range(2) for j in range(2)]
    tris += [[nodes[i, j], nodes[i + 1, j + 1], nodes[i, j + 1]] for i in range(2) for j in range(2)]
    m.add_shell(np.array(tris), E=STEEL["E"], nu=0.3, thickness=2e-3, rho=STEEL["rho"], name="plate")
    axis = np.array([0.3, -0.2, 1.0]) / np.linalg.norm([0.3, -0.2, 1.0])
    m.add_joint("revolute", None, body, axis=axis, drive=lambda t: 5.0 * t, name="motor")
    m.add_joint("fixed", body, int(nodes[0, 0]), name="weld")
    asm = fm.Assembly(m)
    u, v = fm.consistent_initial_state(asm)
    _check_turns_with(asm, u, v, body, nodes.ravel(), 5.0 * axis)


@pytest.fixture(scope="module")
def arm_data() -> ModalBodyData:
    """A planar free beam (1 m, 8 lumped-mass elements, tip mass), 3 free-interface modes, frame at its root."""
    b = fm.Model(dim=2)
    nodes = b.add_nodes(np.c_[np.linspace(0.0, 1.0, 9), np.zeros(9)])
    b.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=2e3, EI=3.0, rho_A=1.5, rho_I=1e-3)
    b.add_point_mass(int(nodes[-1]), 0.2, 1e-3)
    return ModalBodyData.from_model(b, 0, 3, basis="free-interface")


def test_modal_body_on_a_drive_keeps_zero_modal_rates(arm_data):
    """A modal body turned at its frame by a drive: the frame turns at the drive's rate and the
    modal coordinate rates are zero (the guess's); the least-kinetic-energy start gives them the
    inertial coupling's values."""
    m = fm.Model(dim=2)
    arm = m.add_modal_body(arm_data, name="arm")
    frame = int(arm.connectivity[0, 0])
    m.add_joint("revolute", None, frame, drive=lambda t: 4.0 * t, name="motor")
    asm = fm.Assembly(m)
    q = asm.dofs.internal_dofs(arm)
    u, v = fm.consistent_initial_state(asm)
    assert np.abs(v[q]).max() < 1e-12 * 4.0 and abs(v[asm.dofs.index(frame, "rz")] - 4.0) < 1e-12 * 4.0
    _, v_old = fm.consistent_initial_state(asm, start="least-kinetic-energy")
    assert np.abs(v_old[q]).max() > 1e-3
    guess = np.zeros(asm.n_dof)
    guess[q] = [0.0, 0.2, -0.1]
    _, v_guess = fm.consistent_initial_state(asm, v0=guess)
    assert np.abs(v_guess[q] - guess[q]).max() < 1e-12 and abs(v_guess[asm.dofs.index(frame, "rz")] - 4.0) < 1e-11


def test_forced_deformation_warns_and_takes_the_least_deformation_rate():
    """A beam welded at both ends to two sliders driven apart at 1 m/s each: no rigid start exists;
    a FlexmbWarning names the beam, the joints hold, and the beam stretches uniformly (its nodes'
    x velocities linear from -1 to 1 m/s, the least mass-weighted deformation rate)."""
    m = fm.Model(dim=2)
    left = m.add_rigid_body([0.0, 0.0], 1.0, 0.01, name="left")
    right = m.add_rigid_body([1.0, 0.0], 1.0, 0.01, name="right")
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 5), np.zeros(5)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=100.0, rho_A=1.0, rho_I=1e-4, name="strut")
    m.add_joint("prismatic", None, left, x_axis=[1.0, 0.0], drive=lambda t: -t, name="pull left")
    m.add_joint("prismatic", None, right, x_axis=[1.0, 0.0], drive=lambda t: t, name="pull right")
    m.add_joint("fixed", left, int(nodes[0]), name="weld left")
    m.add_joint("fixed", right, int(nodes[-1]), name="weld right")
    asm = fm.Assembly(m)
    with pytest.warns(FlexmbWarning, match="'strut'"):
        u, v = fm.consistent_initial_state(asm)
    assert _velocity_residual(asm, u, v) < 1e-12
    vx = v[[asm.dofs.index(int(k), "ux") for k in nodes]]
    assert np.abs(vx - np.linspace(-1.0, 1.0, 5)).max() < 1e-6, f"x velocities {vx}"
    with warnings.catch_warnings():                      # the old start has nothing to warn about
        warnings.simplefilter("error")
        fm.consistent_initial_state(asm, start="least-kinetic-energy")


def test_start_choice_is_checked():
    m, _, _ = _four_bar()
    with pytest.raises(fm.ModelError, match="start must be one of 'rigid', 'least-kinetic-energy'.*'rigid body'"):
        fm.consistent_initial_state(fm.Assembly(m), start="rigid body")


def test_truss_triangle_pinned_to_a_driven_arm():
    """A pin-jointed truss triangle (3 bars) pinned at two corners to an arm turned at 2 rad/s about
    the origin: its free corner moves at w x x (the bars keep their lengths); the least-kinetic-
    energy start leaves it at rest (its bars then stretch at the start)."""
    m = fm.Model(dim=2)
    arm = m.add_rigid_body([0.5, 0.0], 1.0, 0.1, name="arm")
    corners = m.add_nodes([[0.4, 0.0], [0.8, 0.0], [0.6, 0.3]])
    m.add_truss([[corners[0], corners[1]], [corners[1], corners[2]], [corners[2], corners[0]]], EA=1e6, rho_A=1.0,
                name="triangle")
    m.add_joint("revolute", None, arm, at=[0.0, 0.0], drive=lambda t: 2.0 * t, name="motor")
    m.add_joint("revolute", arm, int(corners[0]), name="pin 0")
    m.add_joint("revolute", arm, int(corners[1]), name="pin 1")
    asm = fm.Assembly(m)
    u, v = fm.consistent_initial_state(asm)
    omega = v[asm.dofs.index(arm.node, "rz")]
    x = m.coordinates[corners] + u[asm.dofs.translations()[corners]]
    got = v[asm.dofs.translations()[corners]]
    assert _rel(got, omega * _perp(x)) < 1e-12, f"truss corners off the rigid turn by {_rel(got, omega * _perp(x)):.2g}"
    _, v_old = fm.consistent_initial_state(asm, start="least-kinetic-energy")
    assert np.abs(v_old[asm.dofs.translations()[corners[2]]]).max() < 1e-12


def test_spatial_modal_body_welded_to_a_driven_hub():
    """A 3D modal body (free Beam3D arm, 3 free-interface modes) welded at its frame node to a hub
    turned about z at 3 rad/s: the frame turns with the hub, the modal rates stay zero (the old
    start gives them the inertial coupling's values, of order 1 kg^1/2 m/s)."""
    b = fm.Model(dim=3)
    nodes = b.add_nodes(np.c_[np.linspace(0.0, 1.0, 7), np.zeros(7), np.zeros(7)])
    b.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=1e5, GJ=20.0, EI_y=30.0, EI_z=30.0, rho_A=1.5,
                 rho_I=(1e-3, 5e-4, 5e-4))
    m = fm.Model(dim=3)
    hub = m.add_rigid_body([0.0, 0.0, 0.0], 2.0, [0.1, 0.1, 0.1], name="hub")
    arm = m.add_modal_body(ModalBodyData.from_model(b, 0, 3, basis="free-interface"), name="arm")
    frame = int(arm.connectivity[0, 0])
    m.add_joint("revolute", None, hub, axis=[0.0, 0.0, 1.0], drive=lambda t: 3.0 * t, name="motor")
    m.add_joint("fixed", hub, frame, name="weld")
    asm = fm.Assembly(m)
    q = asm.dofs.internal_dofs(arm)
    u, v = fm.consistent_initial_state(asm)
    assert np.abs(v[q]).max() < 1e-12
    (x_dot,), (w,) = _node_velocities(asm, v, np.array([frame]))          # the frame sits on the axis
    assert np.abs(x_dot).max() < 1e-12 and np.abs(w - [0.0, 0.0, 3.0]).max() < 1e-9 * 3.0
    _, v_old = fm.consistent_initial_state(asm, start="least-kinetic-energy")
    assert np.abs(v_old[q]).max() > 0.1
