"""One flexmb Model through every formulation: the DAE mid-point scheme (fm.integrate),
coordinate partitioning (ConstrainedSystem.from_assembly + integrate_partitioned) and the Taylor
reaction formulation (TaylorSystem.from_model + integrate_taylor) give the same motion and the
same joint reactions."""
import numpy as np
import pytest

import flexmb as fm
from flexmb.multibody.taylor_reactions import integrate_taylor, joint_residuals

# a four-bar of uniform steel bars (1.56 kg/m) in a vertical plane, released under gravity with
# the crank turning at 10 rad/s: crank O2-A 0.10 m, coupler A-B 0.35 m, rocker O4-B 0.30 m,
# ground O2-O4 0.30 m (the four-bar-rigid case's links, crank pointing up at the start)
LINE_MASS, OMEGA, T_END = 1.56, 10.0, 0.2
CRANK, COUPLER, ROCKER, GROUND = 0.10, 0.35, 0.30, 0.30


def four_bar(model_dim: int = 2):
    A, O4 = np.array([0.0, CRANK]), np.array([GROUND, 0.0])
    dist = np.linalg.norm(O4 - A)
    along = (COUPLER**2 - ROCKER**2 + dist**2) / (2.0 * dist)
    e = (O4 - A) / dist
    B = A + along * e + np.sqrt(COUPLER**2 - along**2) * np.array([-e[1], e[0]])
    m = fm.Model(dim=2)
    bodies = []
    for name, P, Q in (("crank", np.zeros(2), A), ("coupler", A, B), ("rocker", O4, B)):
        L = np.linalg.norm(Q - P)
        bodies.append(m.add_rigid_body((P + Q) / 2, LINE_MASS * L, LINE_MASS * L**3 / 12, name=name))
    m.add_joint("revolute", None, bodies[0], at=[0.0, 0.0], name="O2")
    m.add_joint("revolute", bodies[0], bodies[1], at=A, name="A")
    m.add_joint("revolute", bodies[1], bodies[2], at=B, name="B")
    m.add_joint("revolute", None, bodies[2], at=O4, name="O4")
    m.set_gravity([0.0, -9.81])
    return m, bodies


def global_forces(asm, model, angles_of, forces_of):
    """(n, n_joints, 2) forces on side b in global axes from forces in side a's joint frame."""
    out = []
    for joint in model.joints:
        f = forces_of(joint.name)
        if joint.a >= 0:
            th = angles_of(joint.a)
            c, s = np.cos(th), np.sin(th)
            f = np.stack([c * f[:, 0] - s * f[:, 1], s * f[:, 0] + c * f[:, 1]], axis=1)
        out.append(f)
    return np.stack(out, axis=1)


def test_four_bar_same_motion_and_reactions_in_three_formulations():
    model, bodies = four_bar()
    asm = fm.Assembly(model)
    u0, v0 = fm.consistent_initial_state(asm, hold={(bodies[0], "rz"): OMEGA})
    rz = np.array([asm.dofs.index(b.node, "rz") for b in bodies])
    # reference: coordinate partitioning with tight tolerances, sampled every 10 ms
    system = fm.ConstrainedSystem.from_assembly(asm)
    free = asm.dofs.free
    times = np.linspace(0.0, T_END, 21)
    part = fm.integrate_partitioned(system, u0[free], v0[free], T_END, rtol=1e-10, atol=1e-12, t_eval=times)
    q, qd = np.array(part.q), np.array(part.qd)
    assert np.allclose(part.t, times, atol=1e-12)
    angle_ref = q[:, asm.dofs.free_position[rz]]                                # (21, 3)
    # its reactions: C^T lambda of each joint's rows on body b's translations (global axes)
    cs = asm.constraints
    F_ref = np.zeros((len(times), len(model.joints), 2))
    for k, t in enumerate(times):
        lam = system.lagrange_accelerations(q[k], qd[k], t)[1]
        C = system.C(q[k], t)
        for j, (joint, rows) in enumerate(zip(model.joints, cs.joint_rows)):
            on_dofs = C[rows].T @ lam[rows]                                      # (n_free,)
            F_ref[k, j] = on_dofs[asm.dofs.free_position[asm.dofs.translations()[joint.b]]]
    scale = np.abs(F_ref).max()

    # the DAE mid-point scheme at dt = 0.5 ms; reactions: a step's multipliers act at its mid-time,
    # the mean of two consecutive steps' is at the step time between them
    h = fm.integrate(asm, dt=5e-4, t_end=T_END, u0=u0, v0=v0, progress=False)
    at = np.searchsorted(h.t, times - 1e-12)
    mid_angle_error = np.abs(h.u[at][:, rz] - angle_ref).max()
    F_mid = global_forces(asm, model, lambda node: h.u[:, asm.dofs.index(node, "rz")],
                          lambda name: h.joint_reaction(name)[0])
    F_mid = 0.5 * (F_mid[at[1:-1]] + F_mid[at[1:-1] + 1])
    mid_force_error = np.abs(F_mid - F_ref[1:-1]).max() / scale

    # the Taylor reaction formulation (RATTLE velocities) at dt = 0.2 ms, from the same model
    taylor = fm.TaylorSystem.from_model(asm, u0, v0)
    assert [b.name for b in taylor.bodies] == ["crank", "coupler", "rocker"]
    ht = integrate_taylor(taylor, 2e-4, T_END, velocity_update="rattle", output_every=50)
    assert np.allclose(ht.t, times, atol=1e-12)
    taylor_angle_error = np.abs(ht.angle - angle_ref).max()
    taylor_force_error = np.abs(ht.reaction_force - F_ref).max() / scale

    # measured (2026-11): mid-point 5.2e-5 rad and 2.9e-4 of the largest force (81 N), O(dt^2);
    # Taylor 1.2e-5 rad (O(dt^2)) and 2.0e-3 (O(dt): the reaction of the step starting at t_k
    # closes the joints at t_k + dt; 4.0e-3 and 1.0e-3 at dt = 0.4 and 0.1 ms)
    assert mid_angle_error < 2e-4, f"mid-point angles off by {mid_angle_error:.2e} rad"
    assert mid_force_error < 1e-3, f"mid-point reactions off by {mid_force_error:.2e} of the largest"
    assert taylor_angle_error < 4e-5, f"Taylor angles off by {taylor_angle_error:.2e} rad"
    assert taylor_force_error < 6e-3, f"Taylor reactions off by {taylor_force_error:.2e} of the largest"
    # energy K + V of the free mechanism: the mid-point scheme conserves it to its Newton tolerance
    # (measured 5.2e-8 of K(0)), Taylor's second-order update to O(dt^2) (1.1e-5 of max K)
    assert h.energy_error().max() < 2e-7, h.energy_error().max()
    energy = ht.kinetic + ht.potential
    assert np.abs(energy - energy[0]).max() < 4e-5 * ht.kinetic.max()


def test_what_the_taylor_formulation_cannot_take_is_refused_by_name():
    model, _ = four_bar()
    model.add_nodes([[0.0, 1.0], [1.0, 1.0]])
    model.add_truss([[3, 4]], EA=1.0, name="tie")
    with pytest.raises(fm.ModelError, match=r"element groups 'tie' \(Truss\) are flexible parts"):
        fm.TaylorSystem.from_model(model)
    m = fm.Model(dim=2)
    crank = m.add_rigid_body([0.05, 0.0], 1.0, 1e-3, name="crank")
    m.add_joint("revolute", None, crank, at=[0.0, 0.0], drive=lambda t: 2.0 * t, name="motor")
    with pytest.raises(fm.ModelError, match="joint 'motor' is driven.*motor torques"):
        fm.TaylorSystem.from_model(m)
    m = fm.Model(dim=2)
    slider = m.add_rigid_body([0.0, 0.0], 1.0, 1e-3, name="slider")
    m.add_joint("prismatic", None, slider, name="guide")
    with pytest.raises(fm.ModelError, match="joint 'guide' is prismatic.*takes revolute joints in 2D"):
        fm.TaylorSystem.from_model(m)
    m = fm.Model(dim=2)
    body = m.add_rigid_body([0.0, 0.0], 1.0, 1e-3)
    m.add_load(body.node, "uy", 1.0)
    with pytest.raises(fm.ModelError, match="load on node 0 .*external_loads"):
        fm.TaylorSystem.from_model(m)
    with pytest.raises(fm.ModelError, match="needs a flexmb Model or Assembly, got str"):
        fm.TaylorSystem.from_model("model")


def test_spatial_model_translates_frames_and_rotations():
    """3D: a body on a skew revolute axis and a second body on a spherical joint, started from a
    turned, moving state; the Taylor system's joint conditions hold at the start and its motion
    follows the mid-point scheme's."""
    m = fm.Model(dim=3)
    arm = m.add_rigid_body([0.2, 0.0, 0.1], 1.5, [0.004, 0.02, 0.02], name="arm")
    bob = m.add_rigid_body([0.5, 0.1, 0.1], 0.8, [0.002, 0.003, 0.004], name="bob")
    m.add_joint("revolute", None, arm, at=[0.0, 0.0, 0.1], axis=[0.3, 0.2, 1.0], name="hinge")
    m.add_joint("spherical", arm, bob, at=[0.4, 0.0, 0.1], name="ball")
    m.set_gravity([0.0, 0.0, -9.81])
    asm = fm.Assembly(m)
    guess = np.zeros(asm.n_dof)
    guess[asm.dofs.index(bob.node, "rx")] = 0.3
    u0, v0 = fm.consistent_initial_state(asm, u0=guess, hold={"hinge": 4.0, (bob, "rx"): 2.0, (bob, "uz"): 0.5})
    taylor = fm.TaylorSystem.from_model(asm, u0, v0)
    position, angle = joint_residuals(taylor, taylor.initial_state())
    assert position.max() < 1e-12 and angle.max() < 1e-12
    ht = integrate_taylor(taylor, 1e-4, 0.1, velocity_update="rattle", output_every=100)
    h = fm.integrate(asm, dt=2e-4, t_end=0.1, u0=u0, v0=v0, progress=False)
    at = np.searchsorted(h.t, ht.t - 1e-12)
    # measured (2026-11): 5.2e-8 m (arm) and 7.6e-7 m (bob) over 0.1 s
    for k, body in enumerate((arm, bob)):
        x = m.coordinates[body.node] + h.u[at][:, asm.dofs.translations()[body.node]]
        miss = np.abs(ht.position[:, k] - x).max()
        assert miss < 3e-6, f"{body.name}: positions differ by {miss:.2e} m"
