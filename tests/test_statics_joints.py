"""Statics with joints, bodies, drives and ties: ``load_control``, ``arc_length`` and
``linear_static`` with Lagrange multipliers (flexmb.analysis.static_system) against hand-derived
equilibria and Newton-Euler reactions; runs started from the equilibria stay at rest."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.cms.modal_body import ModalBodyData

G = 9.81                                                   # m/s^2


def hanging_chain(push, shift=(0.0, 0.0), masses=(1.0, 2.0, 0.5)):
    """Three rigid links of 1 m (centres of mass at mid-link) hanging from a ground pivot at
    ``shift``, revolute joints, gravity -y, a horizontal force ``push`` (N, or f(load factor)) at the
    tip."""
    o = np.asarray(shift, dtype=float)
    m = fm.Model(dim=2)
    bodies = [m.add_rigid_body(o + [0.0, -(k + 0.5)], mk, mk / 12, name=f"link{k}") for k, mk in enumerate(masses)]
    m.add_joint("revolute", None, bodies[0], at=o, name="j0")
    for k in (1, 2):
        m.add_joint("revolute", bodies[k - 1], bodies[k], at=o + [0.0, -k], name=f"j{k}")
    force = (lambda lam: [push * lam, 0.0]) if np.isscalar(push) else push
    m.add_body_load(bodies[2], force=force, at=o + [0.0, -3.0])
    m.set_gravity([0.0, -G])
    return fm.Assembly(m), bodies


@pytest.mark.parametrize("shift", [(0.0, 0.0), (1e4, -3e3)])
def test_load_control_of_a_hanging_chain_by_hand(shift) -> None:
    # link k carries the top force (-P, W_k) and the bottom force (P, -W_{k+1}), W_k = g sum_{j>=k} m_j;
    # its moments about its centre (mid-link) vanish when tan(theta_k) = 2 P / (W_k + W_{k+1}): the same
    # angle at every load factor of proportional loading, reactions growing with it
    P, masses = 3.0, (1.0, 2.0, 0.5)
    asm, bodies = hanging_chain(P, shift, masses)
    path = fm.load_control(asm, 4)                        # the first increment carries load: no singular start
    lam = path.load_factors
    W = [G * sum(masses[k:]) for k in range(3)] + [0.0]
    for k, body in enumerate(bodies):
        theta = path.u[:, asm.dofs.index(body.node, "rz")]
        np.testing.assert_allclose(theta, np.arctan(2 * P / (W[k] + W[k + 1])), rtol=0.0, atol=1e-10,
                                   err_msg=f"link {k} angle")
    force, moment = path.joint_reaction("j0")             # on link 0, ground frame
    np.testing.assert_allclose(force, lam[:, None] * [-P, W[0]], rtol=0.0, atol=1e-10 * W[0])
    np.testing.assert_allclose(moment, 0.0, atol=1e-10 * W[0])
    for k in (1, 2):                                      # in link k-1's frame: turned back to global
        angle = path.u[:, asm.dofs.index(bodies[k - 1].node, "rz")]
        f = path.joint_reaction(f"j{k}")[0]
        c, s = np.cos(angle), np.sin(angle)
        np.testing.assert_allclose(np.c_[c * f[:, 0] - s * f[:, 1], s * f[:, 0] + c * f[:, 1]],
                                   lam[:, None] * [-P, W[k]], rtol=0.0, atol=1e-10 * W[0])
    assert path.multipliers.shape == (4, asm.constraints.n)


def test_load_control_scales_a_constant_body_load_as_it_scales_gravity() -> None:
    # the same chain with the tip force a constant: statics scales it by the load factor (as nodal
    # loads and gravity), so the angles are those of the proportional loading at every load factor
    P, masses = 3.0, (1.0, 2.0, 0.5)
    asm, bodies = hanging_chain([P, 0.0], masses=masses)
    path = fm.load_control(asm, 4)
    W = [G * sum(masses[k:]) for k in range(3)] + [0.0]
    for k, body in enumerate(bodies):
        theta = path.u[:, asm.dofs.index(body.node, "rz")]
        np.testing.assert_allclose(theta, np.arctan(2 * P / (W[k] + W[k + 1])), rtol=0.0, atol=1e-10,
                                   err_msg=f"link {k} angle")
    np.testing.assert_allclose(path.joint_reaction("j0")[0], path.load_factors[:, None] * [-P, W[0]], rtol=0.0,
                               atol=1e-10 * W[0])
    with pytest.raises(fm.ModelError, match="add_body_load"):
        fm.arc_length(asm, 0.1, 3)


def test_load_control_warns_when_the_first_increment_turns_a_link_upside_down() -> None:
    # the tip force in full from the first increment (a function of the load factor that ignores it)
    # against a quarter of the weight: Newton from the hanging chain lands with the last link above its
    # joint, an unstable equilibrium
    asm, bodies = hanging_chain(lambda lam: [3.0, 0.0])
    with pytest.warns(fm.FlexmbWarning, match="unstable equilibrium"):
        path = fm.load_control(asm, 4)
    tip_angle = path.u[0, asm.dofs.index(bodies[2].node, "rz")]
    assert np.cos(tip_angle) < 0.0                        # upside down
    assert any(e.kind == "warning" for e in path.events)


def slider_crank(drive, crank_mass=1.0, rod_mass=2.0, slider_mass=0.5):
    """Crank r = 0.1 m on a driven revolute joint at the origin (reference angle 60 deg, drive = the
    angle added), rigid rod l = 0.3 m, slider on a horizontal prismatic joint through the origin,
    gravity -y."""
    r, l, phi0 = 0.1, 0.3, np.pi / 3
    A = r * np.array([np.cos(phi0), np.sin(phi0)])
    B = np.array([A[0] + np.sqrt(l**2 - A[1] ** 2), 0.0])
    m = fm.Model(dim=2)
    crank = m.add_rigid_body(A / 2, crank_mass, crank_mass * r**2 / 12, name="crank")
    rod = m.add_rigid_body((A + B) / 2, rod_mass, rod_mass * l**2 / 12, name="rod")
    slider = m.add_rigid_body(B, slider_mass, 1e-3, name="slider")
    m.add_joint("revolute", None, crank, at=[0.0, 0.0], drive=drive, name="motor")
    m.add_joint("revolute", crank, rod, at=A, name="crank pin")
    m.add_joint("revolute", rod, slider, at=B, name="wrist pin")
    m.add_joint("prismatic", None, slider, x_axis=[1.0, 0.0], name="slide")
    m.set_gravity([0.0, -G])
    return fm.Assembly(m), (r, l, phi0), (crank, rod, slider)


def test_driven_slider_crank_held_at_its_drive_time_by_hand() -> None:
    # load control at t = 2 s: the drive holds the crank at phi = phi0 + 0.25 t; gravity scaled by lam.
    # Virtual work (crank and rod centres at y_A / 2): tau = lam g r cos(phi) (m_c + m_r) / 2; rod moments
    # about A: the slider pin carries half the rod's weight, so the slide holds lam g (m_s + m_r / 2)
    asm, (r, l, phi0), (crank, rod, slider) = slider_crank(lambda t: 0.25 * t)
    path = fm.load_control(asm, [0.5, 1.0], t=2.0)
    lam = path.load_factors
    phi = phi0 + 0.5
    np.testing.assert_allclose(path.u[:, asm.dofs.index(crank.node, "rz")], 0.5, atol=1e-12)
    tau = path.joint_reaction("motor")[1][:, 0]
    np.testing.assert_allclose(tau, lam * G * r * np.cos(phi) * 3.0 / 2, rtol=0.0, atol=1e-10)
    slide = path.joint_reaction("slide")[0]                         # ground frame
    np.testing.assert_allclose(slide[:, 1], lam * G * (0.5 + 1.0), rtol=0.0, atol=1e-10)
    # Newton-Euler of the slider (its pin force, in the rod's frame, turned to global)
    wrist = path.joint_reaction("wrist pin")[0]
    beta = path.u[:, asm.dofs.index(rod.node, "rz")]
    c, s = np.cos(beta), np.sin(beta)
    on_slider = np.c_[c * wrist[:, 0] - s * wrist[:, 1], s * wrist[:, 0] + c * wrist[:, 1]]
    np.testing.assert_allclose(on_slider + slide, lam[:, None] * [0.0, 0.5 * G], rtol=0.0, atol=1e-10)
    # the same state as fm.equilibrium at t = 2 s (loads in full)
    eq = fm.equilibrium(asm, t=2.0)
    np.testing.assert_allclose(eq.u, path.u[-1], atol=1e-12)
    np.testing.assert_allclose(eq.multipliers, path.multipliers[-1], atol=1e-9)


def flexible_chain(push):
    """Two steel strips (0.5 m, 20 x 5 mm, 4 Beam2D each) pinned at their end nodes and a 1 kg rigid tip
    body hanging from a ground pivot, gravity -y, a horizontal force ``push`` 0.1 m below the tip body's
    centre."""
    E, b, h, rho = 210e9, 0.02, 0.005, 7800.0
    m = fm.Model(dim=2)
    ends = []
    for k in range(2):
        top, bottom = np.array([0.0, -0.5 * k]), np.array([0.0, -0.5 * (k + 1)])
        nodes = m.add_nodes(top + np.linspace(0.0, 1.0, 5)[:, None] * (bottom - top))
        m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=E * b * h, EI=E * b * h**3 / 12, rho_A=rho * b * h,
                     rho_I=rho * b * h**3 / 12, mass="consistent", name=f"link {k}")
        ends.append((int(nodes[0]), int(nodes[-1])))
    tip = m.add_rigid_body([0.0, -1.1], 1.0, 1.0 * 0.2**2 / 12, name="tip")
    m.add_joint("revolute", None, ends[0][0], at=[0.0, 0.0], name="pivot")
    m.add_joint("revolute", ends[0][1], ends[1][0], at=[0.0, -0.5], name="knee")
    m.add_joint("revolute", ends[1][1], tip, at=[0.0, -1.0], name="ankle")
    m.add_body_load(tip, force=push, at=[0.0, -1.2])
    m.set_gravity([0.0, -G])
    return fm.Assembly(m), tip


def test_flexible_chain_load_control_reaches_the_equilibrium_and_stays_at_rest() -> None:
    # the strips are pinned at unstressed end nodes: no stiffness along the chain's motions at the start,
    # solved by continuation in the first increment; the end agrees with fm.equilibrium, and the pivot
    # carries the whole weight and the push (Newton-Euler of the chain)
    asm, tip = flexible_chain(lambda lam: [2.0 * lam, 0.0])          # scaled in load control
    path = fm.load_control(asm, 4)
    asm = flexible_chain([2.0, 0.0])[0]                                  # its value at lam = 1, constant
    eq = fm.equilibrium(asm)
    assert np.abs(path.u[-1] - eq.u).max() < 1e-10                     # m, rad
    assert np.abs(eq.u).max() > 0.1                                      # the chain swung out
    weight = G * (2 * 7800.0 * 0.02 * 0.005 * 0.5 + 1.0)
    force = path.joint_reaction("pivot")[0][-1]
    np.testing.assert_allclose(force, [-2.0, weight], rtol=0.0, atol=1e-10 * weight)
    history = fm.integrate(asm, 1e-3, 0.01, u0=eq.u, progress=False)
    assert np.abs(np.array(history.v)).max() < 1e-9                     # m/s, rad/s: at rest to round-off


def test_spatial_chain_on_universal_joints_by_hand() -> None:
    # two rigid rods (1 m, 2 kg and 1 kg) on universal joints under gravity -z and a horizontal tip force
    # P: each rod's moment about its upper joint vanishes when it points along P + g (m_k / 2 + sum below)
    masses, P = (2.0, 1.0), np.array([4.0, -3.0, 0.0])
    m = fm.Model(dim=3)
    rods = [m.add_rigid_body([0.0, 0.0, -(k + 0.5)], mk, np.diag([mk / 12, mk / 12, 1e-3 * mk]), name=f"rod{k}")
            for k, mk in enumerate(masses)]
    m.add_joint("universal", None, rods[0], at=[0, 0, 0], axis=[0, 0, 1], x_axis=[1, 0, 0], name="u0")
    m.add_joint("universal", rods[0], rods[1], at=[0, 0, -1.0], axis=[0, 0, 1], x_axis=[1, 0, 0], name="u1")
    m.add_body_load(rods[1], force=P, at=[0, 0, -2.0])
    m.set_gravity([0, 0, -G])
    asm = fm.Assembly(m)
    eq = fm.equilibrium(asm)
    g = np.array([0.0, 0.0, -G])
    x, top = asm.positions(eq.u), np.zeros(3)
    for k, rod in enumerate(rods):
        e = P + g * (masses[k] / 2 + sum(masses[k + 1:]))
        e /= np.linalg.norm(e)
        np.testing.assert_allclose(x[rod.node], top + 0.5 * e, rtol=0.0, atol=1e-10, err_msg=f"rod {k}")
        top = top + e
    for name, below in (("u0", sum(masses)), ("u1", masses[1])):
        force, moment = eq.joint_reaction(name)                          # frame-independent: its size
        assert np.linalg.norm(force) == pytest.approx(np.linalg.norm(P + g * below), abs=1e-10)
        assert np.linalg.norm(moment) < 1e-10
    assert eq.stable
    path = fm.load_control(asm, 2)                                       # gravity ramped, P in full
    assert np.abs(path.u[-1] - eq.u).max() < 1e-10


def test_modal_body_hanging_from_a_pivot_with_a_tied_tip_body() -> None:
    # a modal cantilever (4 frame-clamped modes of 10 Beam2D, EI = 5 N m^2, 1 kg) pinned at its frame node,
    # a 0.5 kg body welded to its tip by a tie, gravity along +x, a tip force across: stiffened by its
    # weight. The pivot force balances all loads (Newton-Euler of the whole body); the tip position agrees
    # with the co-rotational FE model of the same beam (measured 1.2e-6 m: the modal truncation)
    def beam(m):
        nodes = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 11), np.zeros(11)])
        m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=5.0, rho_A=1.0, mass="consistent")
        return nodes

    fe = fm.Model(dim=2)
    beam(fe)
    data = ModalBodyData.from_model(fe, frame_node=0, n_modes=4, interface_nodes=(10,))
    tips = []
    for modal in (True, False):
        m = fm.Model(dim=2)
        tip = m.add_rigid_body([1.0, 0.0], 0.5, 1e-3, name="tip")
        if modal:
            frame = m.add_node([0.0, 0.0])
            m.tie(tip.node, m.add_modal_body(data, node=frame, name="arm"), 10, name="tip weld")
        else:
            nodes = beam(m)
            frame = int(nodes[0])
            m.add_joint("fixed", int(nodes[-1]), tip, name="tip weld")
        m.add_joint("revolute", None, frame, at=[0.0, 0.0], name="pivot")
        m.add_body_load(tip, force=[0.0, 2.0])
        m.set_gravity([G, 0.0])
        asm = fm.Assembly(m)
        eq = fm.equilibrium(asm)
        np.testing.assert_allclose(eq.joint_reaction("pivot")[0], [-1.5 * G, -2.0], rtol=0.0, atol=1e-10)
        assert eq.stable
        tips.append(asm.positions(eq.u)[tip.node])
        if modal:
            assert asm.positions(eq.u)[tip.node][1] > 0.1                # swung out by the force
            history = fm.integrate(asm, 1e-3, 0.01, u0=eq.u, progress=False)
            assert np.abs(np.array(history.v)).max() < 1e-8
            path = fm.load_control(asm, 1)                              # through the tie too, in one increment
            assert np.abs(path.u[-1] - eq.u).max() < 1e-10
    assert np.abs(tips[0] - tips[1]).max() < 1e-5


def test_arc_length_through_the_limit_points_of_a_truss_hinged_by_a_joint() -> None:
    # the shallow two-bar truss of validation/von_mises_truss.py with its bars meeting at two apex nodes
    # joined by a revolute joint: exact co-rotational equilibrium P(v) = 2 EA z (1/l - 1/l0) (z = h - v,
    # l = sqrt(a^2 + z^2)) at every path point through both limit points, and the joint carries the right
    # bar's axial force N = EA (l - l0) / l0 to its apex node: force on B = N (-a, z) / l
    EA, a, h, P_ref = 1e7, 1.0, 0.2, 1e4
    m = fm.Model(dim=2)
    left, right = m.add_node([-a, 0.0]), m.add_node([a, 0.0])
    A, B = m.add_node([0.0, h]), m.add_node([0.0, h])
    m.add_truss([[left, A], [right, B]], EA=EA)
    m.fix(left)
    m.fix(right)
    m.fix(A, "ux")
    m.add_joint("revolute", A, B, name="apex")
    m.add_load(A, "uy", -P_ref)
    asm = fm.Assembly(m)
    path = fm.arc_length(asm, 0.01, n_steps=200, max_displacement=2.2 * h)
    z = h + path.u[:, asm.dofs.index(A, "uy")]
    l, l0 = np.hypot(a, z), np.hypot(a, h)
    exact = 2 * EA * z * (1 / l - 1 / l0)
    peak = np.abs(exact).max()
    np.testing.assert_allclose(path.load_factors * P_ref, exact, rtol=0.0, atol=1e-10 * peak)
    assert np.count_nonzero(np.diff(np.sign(np.diff(path.load_factors)))) == 2  # both limit points passed
    N = EA * (l - l0) / l0
    np.testing.assert_allclose(path.joint_reaction("apex")[0], np.c_[-N * a / l, N * z / l], rtol=0.0,
                               atol=1e-10 * np.abs(N).max())


def test_linear_static_of_two_cantilevers_hinged_together() -> None:
    # two clamped cantilevers (L = 1 m, EI = 100 N m^2, 4 Beam2D each, exact for end loads) meeting at a
    # hinge (revolute joint between their tip nodes), P down at the hinge: equal tip deflections share P
    # equally, delta = (P / 2) L^3 / (3 EI); the hinge passes P / 2 (Euler-Bernoulli)
    P, EI = 0.01, 100.0
    m = fm.Model(dim=2)
    left = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 5), np.zeros(5)])
    right = m.add_nodes(np.c_[np.linspace(2.0, 1.0, 5), np.zeros(5)])
    for nodes in (left, right):
        m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e8, EI=EI, rho_A=1.0)
        m.fix(int(nodes[0]))
    m.add_joint("revolute", int(left[-1]), int(right[-1]), name="hinge")
    m.add_load(int(left[-1]), "uy", -P)
    asm = fm.Assembly(m)
    lin = fm.linear_static(asm)
    for tip in (left[-1], right[-1]):
        assert lin.u[asm.dofs.index(int(tip), "uy")] == pytest.approx(-P / 2 / (3 * EI), rel=1e-10, abs=0.0)
    force = lin.joint_reaction("hinge")[0]                               # on the right tip, left tip's frame
    angle = lin.u[asm.dofs.index(int(left[-1]), "rz")]
    c, s = np.cos(angle), np.sin(angle)
    assert s * force[0] + c * force[1] == pytest.approx(-P / 2, rel=1e-10)
    # the nonlinear equilibrium adds the bars' membrane force, N ~ EA delta^2 / (2 L^2), relative to the
    # bending stiffness EA delta^2 / (6 EI) = 5e-5 at this load (at P = 1 N it is 0.46)
    eq = fm.equilibrium(asm)
    assert eq.u[asm.dofs.index(int(left[-1]), "uy")] == pytest.approx(-P / 6 / EI, rel=2e-4)


def test_free_mechanism_without_load_is_a_clear_error_naming_it() -> None:
    # two links on revolute joints, nothing loads them: every configuration is an equilibrium
    m = fm.Model(dim=2)
    a = m.add_rigid_body([0.0, -0.5], 1.0, 0.1, name="upper")
    b = m.add_rigid_body([0.0, -1.5], 1.0, 0.1, name="lower")
    m.add_joint("revolute", None, a, at=[0.0, 0.0], name="j0")
    m.add_joint("revolute", a, b, at=[0.0, -1.0], name="j1")
    for solve in (fm.equilibrium, fm.linear_static):
        with pytest.raises(fm.SingularSystemError, match="body 'lower'") as info:
            solve(m)
        assert any("rz" in dof for dof in info.value.dofs)
    # loaded by gravity (hanging straight: no motion, a stable equilibrium) it is solved
    m.set_gravity([0.0, -G])
    assert fm.equilibrium(m).stable
    assert np.abs(fm.load_control(m, 2).u).max() < 1e-12
