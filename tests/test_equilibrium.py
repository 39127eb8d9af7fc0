"""Static equilibrium with joints, bodies and drives (flexmb.analysis.equilibrium) against
hand-derived equilibria, Newton-Euler reactions, and runs started from it."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import flexmb as fm

L, G, P = 1.0, 9.81, 3.0
MASSES = (1.0, 2.0, 0.5)


def chain(shift: tuple[float, float] = (0.0, 0.0)):
    """Three rigid links (1 m) hanging from a ground pivot, a horizontal force P at the tip."""
    o = np.asarray(shift)
    m = fm.Model(dim=2)
    bodies = [m.add_rigid_body(o + [0.0, -(k + 0.5) * L], mk, mk * L**2 / 12, name=f"link{k}")
              for k, mk in enumerate(MASSES)]
    m.add_joint("revolute", None, bodies[0], at=o, name="j0")
    for k in (1, 2):
        m.add_joint("revolute", bodies[k - 1], bodies[k], at=o + [0.0, -k * L], name=f"j{k}")
    m.add_body_load(bodies[2], force=[P, 0.0], at=o + [0.0, -3 * L])
    m.set_gravity([0.0, -G])
    return fm.Assembly(m), bodies


@pytest.mark.parametrize("shift", [(0.0, 0.0), (1e3, -2e2)])
def test_hanging_chain_angles_and_reactions_by_hand(shift) -> None:
    # each link: top force (-P, W_k), bottom force (P, -W_{k+1}), W_k = g sum_{j>=k} m_j; moments
    # about its centre vanish when tan(theta_k) = 2 P / (W_k + W_{k+1}) (theta from the vertical)
    asm, bodies = chain(shift)
    eq = fm.equilibrium(asm)
    W = [G * sum(MASSES[k:]) for k in range(3)] + [0.0]
    for k, b in enumerate(bodies):
        theta = eq.u[asm.dofs.index(b.node, "rz")]
        assert theta == pytest.approx(np.arctan(2 * P / (W[k] + W[k + 1])), abs=1e-10)
    force, _ = eq.joint_reaction("j0")                              # ground frame
    np.testing.assert_allclose(force, [-P, W[0]], atol=1e-10 * W[0])
    for k in (1, 2):                                                # in link k-1's frame: turn to global
        angle = eq.u[asm.dofs.index(bodies[k - 1].node, "rz")]
        c, s = np.cos(angle), np.sin(angle)
        f = eq.joint_reaction(f"j{k}")[0]
        np.testing.assert_allclose([c * f[0] - s * f[1], s * f[0] + c * f[1]], [-P, W[k]], atol=1e-10 * W[0])
    assert eq.stable


def test_run_from_the_equilibrium_stays_at_rest() -> None:
    asm, _ = chain()
    eq = fm.equilibrium(asm)
    h = fm.integrate(asm, 0.01, 1.0, u0=eq.u)
    assert np.abs(np.array(h.v)).max() < 1e-11                      # m/s, rad/s: round-off
    released = fm.integrate(asm, 0.01, 1.0)                          # hanging straight: the force swings it
    assert np.abs(np.array(released.v)).max() > 0.1


def test_upright_pendulum_is_an_unstable_equilibrium() -> None:
    m = fm.Model(dim=2)
    bob = m.add_rigid_body([0.0, 0.5], 1.0, 1.0 / 12, name="rod")
    m.add_joint("revolute", None, bob, at=[0.0, 0.0], name="pivot")
    m.set_gravity([0.0, -G])
    with pytest.warns(fm.FlexmbWarning, match="unstable"):
        eq = fm.equilibrium(m)
    assert eq.stable is False
    assert abs(eq.u[2]) < 1e-12


def slider_crank(phi: float, crank_mass: float = 1.0, rod_mass: float = 2.0, flexible: bool = False):
    """Crank r = 0.1 m held at phi by a drive, rod l = 0.3 m (rigid, or 4 Beam2D), slider 0.5 kg on
    a horizontal prismatic joint; gravity -y."""
    r, l = 0.1, 0.3
    A = r * np.array([np.cos(phi), np.sin(phi)])
    B = np.array([A[0] + np.sqrt(l**2 - A[1] ** 2), 0.0])
    m = fm.Model(dim=2)
    crank = m.add_rigid_body(A / 2, crank_mass, crank_mass * r**2 / 12, name="crank")
    slider = m.add_rigid_body(B, 0.5, 1e-3, name="slider")
    m.add_joint("revolute", None, crank, at=[0.0, 0.0], drive=lambda t: 0.0 * t, name="motor")
    if flexible:
        nodes = m.add_nodes(A + np.linspace(0.0, 1.0, 5)[:, None] * (B - A))
        m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e7, EI=50.0, rho_A=rod_mass / l, mass="consistent",
                     name="rod")
        m.add_joint("revolute", crank, nodes[0], at=A, name="crank pin")
        m.add_joint("revolute", nodes[-1], slider, at=B, name="wrist pin")
    else:
        rod = m.add_rigid_body((A + B) / 2, rod_mass, rod_mass * l**2 / 12, name="rod")
        m.add_joint("revolute", crank, rod, at=A, name="crank pin")
        m.add_joint("revolute", rod, slider, at=B, name="wrist pin")
    m.add_joint("prismatic", None, slider, x_axis=[1.0, 0.0], name="slide")
    m.set_gravity([0.0, -G])
    return fm.Assembly(m), (r, l, A, B)


@pytest.mark.parametrize("phi", [np.pi / 3, 2.0])
def test_driven_slider_crank_at_rest_by_hand(phi: float) -> None:
    # virtual work: V = g sin(phi) r (m_c + m_r) / 2 (crank and rod centres at y_A / 2), so the motor
    # holds tau = dV/dphi = g r cos(phi) (m_c + m_r) / 2; the slide carries the slider's weight plus
    # the rod's share at B: rod moments about A give B_y l_x = m_r g l_x / 2 (l_x = B_x - A_x), i.e. m_r g / 2
    asm, (r, l, A, B) = slider_crank(phi)
    eq = fm.equilibrium(asm)
    tau = eq.joint_reaction("motor")[1][0]
    assert tau == pytest.approx(G * r * np.cos(phi) * (1.0 + 2.0) / 2, abs=1e-10)
    slide_force = eq.joint_reaction("slide")[0]
    assert slide_force[1] == pytest.approx((0.5 + 2.0 / 2) * G, abs=1e-10)
    assert slide_force[0] == pytest.approx(0.0, abs=1e-10)
    # the rod (side A of the wrist pin, rotation zero at rest) pulls the slider horizontally by the
    # rod's axial force's x part: Newton-Euler of the slider, x: F_wrist_x + F_slide_x = 0
    wrist = eq.joint_reaction("wrist pin")[0]
    assert wrist[0] == pytest.approx(-slide_force[0], abs=1e-10)
    assert wrist[1] + slide_force[1] == pytest.approx(0.5 * G, abs=1e-10)
    assert np.abs(eq.u).max() < 1e-12                                # the drive holds the start position


def test_flexible_slider_crank_equilibrium_then_rest() -> None:
    asm, (r, l, A, B) = slider_crank(np.pi / 3, flexible=True)
    eq = fm.equilibrium(asm)
    tau = eq.joint_reaction("motor")[1][0]
    # the rod sags (about 1.4e-4 m, 5 q l^4 / (384 EI)), which moves the pin forces by its slope:
    # the rigid value to that order (measured 1.0e-4 relative)
    assert tau == pytest.approx(G * r * np.cos(np.pi / 3) * 3.0 / 2, rel=1e-3)
    assert np.abs(eq.u).max() > 0.0                                 # it sags
    h = fm.integrate(asm, 1e-3, 0.05, u0=eq.u)
    assert np.abs(np.array(h.v)).max() < 1e-9


def test_spatial_pendulum_on_a_revolute_joint() -> None:
    # a 3D rigid rod on a revolute joint (axis x) with a force along y at its end: tan(theta) = P / (m g / 2)
    # (on a spherical joint its spin about its own axis would be a motion nothing resists: singular)
    m = fm.Model(dim=3)
    rod = m.add_rigid_body([0.0, 0.0, -0.5], 2.0, [2.0 / 12, 2.0 / 12, 1e-3], name="rod")
    m.add_joint("revolute", None, rod, at=[0.0, 0.0, 0.0], axis=[1.0, 0.0, 0.0], name="ball")
    m.add_body_load(rod, force=[0.0, 4.0, 0.0], at=[0.0, 0.0, -1.0])
    m.set_gravity([0.0, 0.0, -G])
    eq = fm.equilibrium(m, u0=np.r_[0.0, 0.1, 0.0, -0.1, 0.0, 0.0])
    asm = fm.Assembly(m)
    x = asm.positions(eq.u)[rod.node]
    theta = np.arctan2(x[1], -x[2])
    assert theta == pytest.approx(np.arctan(4.0 / (2.0 * G / 2)), abs=1e-10)
    force = eq.joint_reaction("ball")[0]                            # in the joint frame (z_j: the axis)
    assert np.linalg.norm(force) == pytest.approx(np.hypot(4.0, 2.0 * G), abs=1e-9)
    assert force[2] == pytest.approx(0.0, abs=1e-9)


def test_no_equilibrium_is_a_clear_error() -> None:
    # a free pendulum pushed by a force larger than any angle balances: a horizontal force on a
    # vertical slider with no stiffness
    m = fm.Model(dim=2)
    block = m.add_rigid_body([0.0, 0.0], 1.0, 0.1, name="block")
    m.add_joint("prismatic", None, block, x_axis=[1.0, 0.0], name="rail")
    m.add_body_load(block, force=[1.0, 0.0])
    with pytest.raises((fm.EquilibriumError, fm.SingularSystemError, fm.ModelError)) as info:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fm.equilibrium(m)
    assert "equilibrium" in str(info.value) or "singular" in str(info.value).lower()
