"""Skew (local-frame) supports, Model.add_skew_support: constraint rows to the ground.

Physics: an inclined roller under a truss bar against its closed-form displacement and reaction;
a plate on skew supports turned by a rotation R and moved 1e3 m away against the same plate with
global supports (Model.fix): equal frequencies, displacements equal after rotation, in linear and
nonlinear statics and in dynamics; a rigid body on a skew hinge (r1, r2 fixed) turned far about the
tilted axis e_3. Errors: bad frames, DOF names and nodes, DOFs fixed both ways, the analyses that
refuse the support.
"""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import flexmb as fm
from flexmb.cms import components_from_groups
from flexmb.io.shell_mesh import rectangle

R_TILT = Rotation.from_euler("zyx", [0.4, -0.7, 1.1]).as_matrix()       # a general rotation, no axis special
SHIFT = 1e3                                                               # m, the turned model's offset


def _roller(alpha: float, P: float, L: float = 2.0, EA: float = 1e6) -> tuple[fm.Model, object]:
    """A bar from the pinned node 0 at the origin to node 1 at (L, 0) on a roller whose track makes
    the angle alpha with x (local e_1 along the track, u2 along its normal fixed), load P (N) along y."""
    m = fm.Model(dim=2)
    m.add_nodes([[0.0, 0.0], [L, 0.0]])
    m.add_truss([[0, 1]], EA=EA)
    m.fix(0)
    joint = m.add_skew_support(1, alpha, "u2")
    m.add_load(1, "uy", P)
    return m, joint


def test_inclined_roller_displacement_and_reaction():
    alpha, P, L, EA = np.radians(30.0), 100.0, 2.0, 1e6
    m, joint = _roller(alpha, P, L, EA)
    t = np.array([np.cos(alpha), np.sin(alpha)])            # track
    n = np.array([-np.sin(alpha), np.cos(alpha)])           # its normal, e_2
    k = EA / L
    # along the track the bar (stiffness k along x) balances P: k t_x^2 s = P t_y
    s = P * t[1] / (k * t[0] ** 2)
    # normal: the roller's force R n balances P y and the bar's pull -k s t_x x
    reaction = -P * n[1] + k * s * t[0] * n[0]
    eq = fm.linear_static(m)
    u = eq.u[2:4]
    assert np.allclose(u, s * t, rtol=1e-12, atol=0.0), f"roller displacement {u} vs {s * t}"
    force, _ = eq.joint_reaction(joint.name)
    assert abs(force[1] - reaction) < 1e-10 * abs(reaction), f"normal reaction {force[1]} vs {reaction} N"
    assert abs(force[0]) < 1e-10 * abs(reaction), f"the roller pushes along its track: {force[0]} N"
    # nonlinear statics keeps the node on the track exactly, and its small-load answer is the linear one
    path = fm.load_control(m, 2)
    u_nl = np.asarray(path.u[-1])[2:4]
    assert abs(u_nl @ n) < 1e-14 * L, f"node left the track by {u_nl @ n:.3g} m"
    assert np.linalg.norm(u_nl - s * t) < 1e-3 * s, f"nonlinear {u_nl} vs linear {s * t}"


def test_2d_skew_clamp_is_a_clamp():
    """u1 u2 r3 in any planar frame clamp the node: a cantilever's tip deflection P L^3 / (3 EI)."""
    L, EI, P = 2.0, 1e4, 10.0
    c, s = np.cos(0.3), np.sin(0.3)
    m = fm.Model(dim=2)
    m.add_nodes(np.column_stack([np.linspace(0.0, L, 5), np.zeros(5)]))
    m.add_beam2d(np.column_stack([np.arange(4), np.arange(1, 5)]), EA=1e8, EI=EI)
    joint = m.add_skew_support(0, [[c, -s], [s, c]], "u1 u2 r3")
    m.add_load(4, "uy", P)
    eq = fm.linear_static(m)
    tip, exact = eq.u[fm.Assembly(m).dofs.index(4, "uy")], P * L**3 / (3.0 * EI)
    assert abs(tip / exact - 1.0) < 1e-10, f"tip deflection {tip} vs {exact} m"
    force, moment = eq.joint_reaction(joint.name)
    assert np.allclose(force, [-P * s, -P * c], rtol=1e-10, atol=0.0), f"clamp force {force} N in the local frame"
    assert abs(moment[0] + P * L) < 1e-10 * P * L, f"clamp moment {moment[0]} vs {-P * L} N m (P L clockwise)"


def _plate(R: np.ndarray, shift: float, skew: bool, P: float = 500.0) -> fm.Model:
    """A 1 m x 0.6 m steel plate (10 mm) clamped along x = 0, its edge x = 1 m held normal to the
    plate, a load P (N) normal to the plate at (0.5, 0.6); turned by R and moved by ``shift`` (m).
    The supports are skew supports in the frame R (``skew``) or global fixes (R must then be I)."""
    X, triangles = rectangle(1.0, 0.6, 4, 3)
    m = fm.Model(dim=3)
    m.add_nodes(X @ R.T + shift)
    m.add_shell(triangles, E=2.1e11, nu=0.3, thickness=0.01, rho=7800.0)
    for i in np.flatnonzero(np.isclose(X[:, 0], 0.0)).tolist():
        if skew:
            m.add_skew_support(i, R, "u1 u2 u3 r1 r2 r3")
        else:
            m.fix(i)
    for i in np.flatnonzero(np.isclose(X[:, 0], 1.0)).tolist():
        if skew:
            m.add_skew_support(i, R, ["u3"])
        else:
            m.fix(i, "uz")
    loaded = int(np.flatnonzero(np.isclose(X[:, 0], 0.5) & np.isclose(X[:, 1], 0.6))[0])
    for dof, f in zip(("ux", "uy", "uz"), R @ [0.0, 0.0, P]):
        m.add_load(loaded, dof, f)
    return m


def _turned_back(u: np.ndarray, R: np.ndarray, n_nodes: int) -> np.ndarray:
    """Node translations and rotation vectors (n_nodes, 2, 3) of the turned model in the unturned axes."""
    return (np.asarray(u)[:6 * n_nodes].reshape(n_nodes, 2, 3)) @ R


def _compare(ua: np.ndarray, ub: np.ndarray, n_nodes: int, tol: float, what: str) -> None:
    a = np.asarray(ua)[:6 * n_nodes].reshape(n_nodes, 2, 3)
    b = _turned_back(ub, R_TILT, n_nodes)
    for k, name in ((0, "translations"), (1, "rotations")):
        miss = np.abs(a[:, k] - b[:, k]).max() / np.abs(a[:, k]).max()
        assert miss < tol, f"{what}: turned plate's {name} differ by {miss:.3g} (relative), tolerance {tol}"


def test_turned_plate_on_skew_supports_equals_global_supports():
    ma, mb = _plate(np.eye(3), 0.0, False), _plate(R_TILT, SHIFT, True)
    n = ma.n_nodes
    wa, wb = fm.natural_modes(ma, 6).omega, fm.natural_modes(mb, 6).omega
    miss = np.abs(wb / wa - 1.0).max()
    assert miss < 1e-9, f"frequencies differ by {miss:.3g} (relative): {wa} vs {wb} rad/s"
    _compare(fm.linear_static(ma).u, fm.linear_static(mb).u, n, 1e-9, "linear statics")
    # linearize sees the same stiffness on the constraint null space
    la, lb = fm.linearize(_plate(R_TILT, SHIFT, True, P=0.0)).eigen(4).omega, wb[:4]
    assert np.abs(la / lb - 1.0).max() < 1e-9, f"linearize {la} vs natural_modes {lb} rad/s"


def test_turned_plate_nonlinear_statics_and_dynamics():
    # a load that bends the plate by about its thickness: membrane action, a nonlinear path
    ma, mb = _plate(np.eye(3), 0.0, False, P=2e4), _plate(R_TILT, SHIFT, True, P=2e4)
    n = ma.n_nodes
    pa, pb = fm.load_control(ma, 4), fm.load_control(mb, 4)
    w_nl = np.abs(np.asarray(pa.u[-1])[:6 * n].reshape(n, 6)[:, 2]).max()
    w_lin = np.abs(fm.linear_static(ma).u[:6 * n].reshape(n, 6)[:, 2]).max()
    assert abs(w_nl / w_lin - 1.0) > 1e-3, f"the load path is not nonlinear: {w_nl} vs {w_lin} m"
    _compare(pa.u[-1], pb.u[-1], n, 1e-9, "nonlinear statics")
    ha, hb = fm.integrate(ma, dt=2e-4, t_end=2e-3), fm.integrate(mb, dt=2e-4, t_end=2e-3)
    _compare(ha.u[-1], hb.u[-1], n, 1e-9, "dynamics (step load)")
    # the clamped edge's reaction in its local frame is the global one turned
    force_a = sum(ha.reaction(i, "uz")[-1] for i in range(n) if np.isclose(ma.coordinates[i, 0], 0.0))
    force_b = sum(hb.joint_reaction(j.name)[0][-1][2] for j in mb.joints if j.fixed[0] == "u1")
    assert abs(force_b - force_a) < 1e-6 * abs(force_a), f"clamped edge reaction {force_b} vs {force_a} N"


def test_skew_hinge_turns_far_about_its_tilted_axis():
    """r1, r2 fixed (and the translations) leave the rotation about e_3 free: a rigid body with an
    anisotropic inertia under a moment M about e_3 turns by phi = M t^2 / (2 e_3.J e_3) (the hinge
    takes the gyroscopic moments), its axis e_3 staying put."""
    e3 = R_TILT[:, 2]
    J = np.diag([1.0, 2.0, 3.0])                            # kg m^2
    M = 2.0                                                  # N m
    m = fm.Model(dim=3)
    body = m.add_rigid_body([SHIFT] * 3, 5.0, J)
    m.add_skew_support(body.node, R_TILT, "u1 u2 u3 r1 r2")
    for dof, moment in zip(("rx", "ry", "rz"), M * e3):
        m.add_load(body.node, dof, moment)
    m.add_sensor("rotation_matrix", body, name="R")
    misses = []
    for dt in (0.01, 0.005):
        h = fm.integrate(m, dt=dt, t_end=2.0)
        R = np.asarray(h.sensor("R")).reshape(-1, 3, 3)
        drift = np.abs(R @ e3 - e3).max()
        assert drift < 1e-10, f"the hinge axis moved by {drift:.3g}"
        phi = M * 2.0 ** 2 / (2.0 * e3 @ J @ e3)
        assert phi > 2.0, "the test must turn the body far (beyond 90 degrees)"
        misses.append(abs(Rotation.from_matrix(R[-1]).as_rotvec() @ e3 - phi))
    assert misses[0] < 1e-4, f"angle after 2 s missed by {misses[0]:.3g} rad"
    rate = np.log2(misses[0] / misses[1])
    assert 1.8 < rate < 2.2, f"angle error should fall as dt^2, fell with rate {rate:.3f}"


def test_bad_input_is_named():
    m = fm.Model(dim=3)
    m.add_nodes([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    m.add_truss([[0, 1]], EA=1.0)
    with pytest.raises(fm.ModelError, match="not a rotation matrix"):
        m.add_skew_support(1, 2.0 * np.eye(3), "u1")
    with pytest.raises(fm.ModelError, match="reflection"):
        m.add_skew_support(1, np.diag([1.0, 1.0, -1.0]), "u1")
    with pytest.raises(fm.ModelError, match=r"rotation matrix \(3, 3\)"):
        m.add_skew_support(1, 0.3, "u1")
    with pytest.raises(fm.ModelError, match="unknown local DOF 'ux'"):
        m.add_skew_support(1, np.eye(3), "u1 ux")
    with pytest.raises(fm.ModelError, match="node"):
        m.add_skew_support(7, np.eye(3), "u1")
    m.fix(1, "ux")
    # u1 along x is fixed globally already; u1 along (1, 1, 0)/sqrt2 still acts on uy
    with pytest.raises(fm.ModelError, match="ux is already fixed globally"):
        m.add_skew_support(1, np.eye(3), "u1")
    m.fix(0)
    with pytest.raises(fm.ModelError, match="already fixed globally"):
        m.add_skew_support(0, R_TILT, "u3")
    m.add_skew_support(1, Rotation.from_rotvec([0.0, 0.0, np.pi / 4]).as_matrix(), "u1 r2")
    with pytest.raises(fm.ModelError, match="has a skew support already"):
        m.add_skew_support(1, np.eye(3), "u2")
    with pytest.raises(fm.ModelError, match="node 1 has no rotations"):        # a truss node
        fm.Assembly(m)


def test_global_fix_after_the_skew_support_is_refused():
    m, joint = _roller(np.radians(30.0), 1.0)
    m.fix(1, "ux")
    m.fix(1, "uy")
    with pytest.raises(fm.ModelError, match=f"{joint.name}.*already fixed globally"):
        fm.linear_static(m)


def test_buckling_and_components_refuse_skew_supports():
    m = _plate(R_TILT, 0.0, True)
    with pytest.raises(fm.ModelError, match="linear_buckling: skew support .* Model.fix"):
        fm.linear_buckling(m)
    with pytest.raises(fm.ModelError, match="skew support .* Model.fix"):
        components_from_groups(m, {"plate": [m.groups[0]]})
