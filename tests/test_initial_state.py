"""consistent_initial_state: held velocity components (DOFs, bodies, joint rates) kept exactly,
the rest projected in the kinetic-energy metric onto the joints' velocity equations."""
import numpy as np
import pytest
import scipy.linalg as sla

import flexmb as fm
from flexmb.multibody.initial import _joint_rate_row


def slider_crank(crank_angle: float = np.pi / 3, r: float = 0.15, l: float = 0.3):
    """Free planar slider-crank (no drive) at crank angle phi: crank (body pinned to the ground
    at the origin), rod, slider on the x axis; returns model, bodies, joints."""
    A = r * np.array([np.cos(crank_angle), np.sin(crank_angle)])         # crank pin
    B = np.array([A[0] + np.sqrt(l**2 - A[1]**2), 0.0])                  # slider pin
    m = fm.Model(dim=2)
    crank = m.add_rigid_body(A / 2, 0.4, 0.4 * r**2 / 12, name="crank")
    rod = m.add_rigid_body((A + B) / 2, 0.8, 0.8 * l**2 / 12, name="rod")
    slider = m.add_rigid_body(B, 0.5, 1e-4, name="slider")
    joints = [m.add_joint("revolute", None, crank, at=[0.0, 0.0], name="O"),
              m.add_joint("revolute", crank, rod, at=A, name="A"),
              m.add_joint("revolute", rod, slider, at=B, name="B"),
              m.add_joint("prismatic", None, slider, at=B, x_axis=[1.0, 0.0], name="slide")]
    return m, (crank, rod, slider), joints


def velocity_residual(asm, u, v, t=0.0):
    cs = asm.constraints
    return np.abs(cs.evaluate(u, t, np.zeros(cs.n)).C @ v + cs.time_derivative(u, t)).max()


def test_held_crank_speed_is_returned_exactly_and_joints_hold_to_1e12():
    """The case of issue 17: a free slider-crank, crank speed 150 rad/s held; before, the
    unweighted projection of v0 (crank speed only) returned a crank speed 12 % low."""
    m, (crank, _, _), _ = slider_crank()
    asm = fm.Assembly(m)
    crank_rz = asm.dofs.index(crank.node, "rz")
    u, v = fm.consistent_initial_state(asm, hold={(crank, "rz"): 150.0})
    assert v[crank_rz] == 150.0
    residual = velocity_residual(asm, u, v)
    assert residual < 1e-12 * 150.0, f"joint velocity residual {residual:.2e}"
    # the same by node index; and a guess with only the crank speed, projected without hold,
    # does not keep it (why hold exists)
    _, v_node = fm.consistent_initial_state(asm, hold={(crank.node, "rz"): 150.0})
    assert np.array_equal(v, v_node)
    guess = np.zeros(asm.n_dof)
    guess[crank_rz] = 150.0
    _, v_free = fm.consistent_initial_state(asm, v0=guess)
    assert abs(v_free[crank_rz] / 150.0 - 1.0) > 0.05


def test_projection_is_the_least_kinetic_energy_change():
    """Without holds, v - v0 is M-orthogonal to every velocity the joints allow (N^T M (v - v0)
    = 0, N the null space of C): the impulsive-reaction velocity. The unweighted minimum-norm
    change (the former projection) fails this check on the slider-crank."""
    m, _, _ = slider_crank(crank_angle=1.1)
    asm = fm.Assembly(m)
    v0 = np.random.default_rng(3).normal(size=asm.n_dof)
    u, v = fm.consistent_initial_state(asm, v0=v0)
    assert velocity_residual(asm, u, v) < 1e-12 * np.abs(v0).max()
    C = asm.constraints.evaluate(u, 0.0, np.zeros(asm.constraints.n)).C.toarray()
    N = sla.null_space(C)
    M = asm.mass.toarray()
    scale = np.abs(M).max() * np.abs(v0).max()
    assert np.abs(N.T @ M @ (v - v0)).max() < 1e-12 * scale
    unweighted = v0 - np.linalg.pinv(C) @ (C @ v0)
    assert np.abs(N.T @ M @ (unweighted - v0)).max() > 1e-3 * scale


def test_held_joint_rates_and_bodies():
    m, (crank, rod, slider), joints = slider_crank()
    asm = fm.Assembly(m)
    rz = [asm.dofs.index(b.node, "rz") for b in (crank, rod, slider)]
    u, v = fm.consistent_initial_state(asm, hold={"slide": 2.0})          # slider speed along x
    assert abs(v[asm.dofs.index(slider.node, "ux")] - 2.0) < 1e-14
    assert velocity_residual(asm, u, v) < 1e-12 * 2.0
    u, v = fm.consistent_initial_state(asm, hold={joints[1]: -7.0})       # rod relative to crank
    assert abs(v[rz[1]] - v[rz[0]] + 7.0) < 1e-13
    # a whole body held: a crank velocity consistent with the pivot (omega 10 rad/s)
    A = m.coordinates[crank.node]
    body_v = np.r_[10.0 * np.array([-A[1], A[0]]), 10.0]
    u, v = fm.consistent_initial_state(asm, hold={crank: body_v})
    assert np.array_equal(v[[asm.dofs.index(crank.node, d) for d in ("ux", "uy", "rz")]], body_v)
    assert velocity_residual(asm, u, v) < 1e-12 * 10.0


def test_inconsistent_or_bad_holds_are_refused_by_name():
    m, (crank, _, slider), _ = slider_crank()
    asm = fm.Assembly(m)
    _, v = fm.consistent_initial_state(asm, hold={(crank, "rz"): 150.0})
    slider_ux = v[asm.dofs.index(slider.node, "ux")]
    # two speeds of a one-DOF mechanism: accepted when they agree, refused when not
    _, v2 = fm.consistent_initial_state(asm, hold={(crank, "rz"): 150.0, (slider, "ux"): slider_ux})
    assert np.allclose(v2, v, atol=1e-10 * 150.0)
    with pytest.raises(fm.ModelError, match=r"body 'crank' rz, body 'slider' ux are inconsistent.*leave 1 "
                                            r"velocity component"):
        fm.consistent_initial_state(asm, hold={(crank, "rz"): 150.0, (slider, "ux"): 1.01 * slider_ux})
    with pytest.raises(fm.ModelError, match=r"hold\[body 'crank'\] needs 3 velocities"):
        fm.consistent_initial_state(asm, hold={crank: [1.0, 2.0]})
    with pytest.raises(fm.ModelError, match="joint 'O' .*is not understood|'nope' is not a joint"):
        fm.consistent_initial_state(asm, hold={"nope": 1.0})
    with pytest.raises(fm.ModelError, match="hold key 3.5 is not understood"):
        fm.consistent_initial_state(asm, hold={3.5: 1.0})
    with pytest.raises(fm.ModelError, match=r"hold\[node 0 rz\].*finite|hold\[node 0 rz\].*nan"):
        fm.consistent_initial_state(asm, hold={(0, "rz"): np.nan})


def test_held_fixed_dof_must_match_its_prescribed_velocity():
    m = fm.Model(dim=2)
    a, b = m.add_nodes([[0.0, 0.0], [1.0, 0.0]])
    m.add_truss([[a, b]], EA=1e6, rho_A=1.0)
    m.fix(a)
    asm = fm.Assembly(m)
    _, v = fm.consistent_initial_state(asm, hold={(a, "ux"): 0.0, (b, "uy"): 3.0})
    assert v[asm.dofs.index(b, "uy")] == 3.0
    with pytest.raises(fm.ModelError, match=r"hold\[node 0 ux\] = 1 but node 0 ux is prescribed"):
        fm.consistent_initial_state(asm, hold={(a, "ux"): 1.0})


def spatial_mechanism(drive_a=None, drive_b=None):
    """3D: body 1 turns about a skew revolute axis at the ground; body 2 slides on body 1 along
    a prismatic axis fixed in body 1 (the slide axis turns with body 1)."""
    m = fm.Model(dim=3)
    arm = m.add_rigid_body([0.3, 0.1, 0.0], 2.0, [0.01, 0.05, 0.05], name="arm")
    runner = m.add_rigid_body([0.6, 0.2, 0.1], 0.5, [0.002, 0.003, 0.004], name="runner")
    m.add_joint("revolute", None, arm, at=[0.0, 0.0, 0.0], axis=[0.2, 0.1, 1.0], drive=drive_a, name="hinge")
    m.add_joint("prismatic", arm, runner, at=[0.6, 0.2, 0.1], axis=[1.0, 0.3, -0.2], drive=drive_b, name="slide")
    return m


@pytest.mark.parametrize("dim", [2, 3])
def test_joint_rate_row_equals_the_drive_rate(dim):
    """The held joint rate is the rate of what a drive of that joint prescribes: the state made
    consistent with drives f(t) = f0 + w t gives h . v = w for both joints, and holding the two
    rates on the undriven model gives the same velocities (same metric, same equations)."""
    rates = (3.0, -0.7)
    if dim == 3:
        driven = spatial_mechanism(lambda t: 0.4 + rates[0] * t, lambda t: 0.05 + rates[1] * t)
        free = spatial_mechanism()
    else:
        def planar(drives=(None, None)):
            m = fm.Model(dim=2)
            arm = m.add_rigid_body([0.3, 0.1], 2.0, 0.05, name="arm")
            runner = m.add_rigid_body([0.6, 0.2], 0.5, 0.004, name="runner")
            m.add_joint("revolute", None, arm, at=[0.0, 0.0], drive=drives[0], name="hinge")
            m.add_joint("prismatic", arm, runner, at=[0.6, 0.2], x_axis=[1.0, 0.3], drive=drives[1], name="slide")
            return m
        driven = planar((lambda t: 0.4 + rates[0] * t, lambda t: 0.05 + rates[1] * t))
        free = planar()
    asm = fm.Assembly(driven)
    u, v = fm.consistent_initial_state(asm)
    for joint, rate in zip(driven.joints, rates):
        h = _joint_rate_row(asm, u, joint)
        assert abs(h @ v - rate) < 1e-9 * abs(rate), (joint.name, h @ v, rate)
    asm_free = fm.Assembly(free)
    u_f, v_f = fm.consistent_initial_state(asm_free, u0=u, hold={"hinge": rates[0], "slide": rates[1]})
    assert np.allclose(u_f, u, atol=1e-12)
    assert np.allclose(v_f, v, atol=1e-8 * np.abs(v).max()), np.abs(v_f - v).max()
    assert velocity_residual(asm_free, u_f, v_f) < 1e-12 * np.abs(v).max()


def test_joint_rate_hold_needs_a_revolute_or_prismatic_joint_between_rotating_sides():
    m = fm.Model(dim=3)
    body = m.add_rigid_body([0.2, 0.0, 0.0], 1.0, [0.01, 0.01, 0.01], name="bob")
    m.add_joint("spherical", None, body, at=[0.0, 0.0, 0.0], name="ball")
    with pytest.raises(fm.ModelError, match=r"hold\[joint 'ball'\].*needs a revolute .*this one is spherical"):
        fm.consistent_initial_state(fm.Assembly(m), hold={"ball": 1.0})
    m = fm.Model(dim=2)
    a, b = m.add_nodes([[0.0, 0.0], [1.0, 0.0]])
    m.add_truss([[a, b]], EA=1e6, rho_A=1.0)
    m.add_joint("revolute", None, a, name="pin")
    with pytest.raises(fm.ModelError, match=r"hold\[joint 'pin'\]: node 0 of the joint has no rotation DOFs"):
        fm.consistent_initial_state(fm.Assembly(m), hold={"pin": 1.0})
