"""Rigid bodies and joints: constraint Jacobians and tangents against finite differences, the
mid-point discrete gradient, energy and momentum with joints, reactions, initial conditions."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import flexmb as fm
from flexmb.integrators import NewtonSettings

H = 1e-6


def every_joint(dim: int) -> fm.Model:
    """Two bodies joined by every joint type (and a driven revolute and prismatic), plus a beam
    node attached to a body: a model for derivative checks, not for motion."""
    m = fm.Model(dim=dim)
    if dim == 3:
        A = m.add_rigid_body([0.1, 0.2, 0.3], 2.0, np.diag([0.1, 0.2, 0.3]))
        B = m.add_rigid_body([1.0, -0.2, 0.4], 1.0, np.diag([0.1, 0.1, 0.2]))
        n = m.add_nodes(np.array([[2.0, 0, 0], [2.5, 0.3, 0.1]]))
        m.add_beam3d([n[0], n[1]], 1e6, 1e3, 1e3, 1e3, rho_A=1.0)
        p = [0.5, 0.1, 0.2]
        for kind in ("revolute", "spherical", "cylindrical", "prismatic", "fixed", "point-on-line"):
            m.add_joint(kind, A, B, at=p, axis=[0.3, 0.4, 1.0])
        m.add_joint("universal", A, B, at=p, axis=[0, 1, 0], x_axis=[1, 0, 0])
        m.add_joint("revolute", None, A, at=[0, 0, 0], axis=[0, 0, 1], drive=lambda t: 0.3 * t**2)
        m.add_joint("prismatic", A, B, at=p, axis=[1, 0, 0], drive=lambda t: 0.1 * t)
    else:
        A = m.add_rigid_body([0.1, 0.2], 2.0, 0.1)
        B = m.add_rigid_body([1.0, -0.2], 1.0, 0.2)
        n = m.add_nodes(np.array([[2.0, 0], [2.5, 0.3]]))
        m.add_beam2d([n[0], n[1]], 1e6, 1e3, rho_A=1.0)
        p = [0.5, 0.1]
        for kind in ("revolute", "prismatic", "fixed", "point-on-line"):
            m.add_joint(kind, A, B, at=p, x_axis=[0.6, 0.8])
        m.add_joint("revolute", None, A, at=[0, 0], drive=lambda t: 0.3 * t**2)
        m.add_joint("prismatic", A, B, at=p, drive=lambda t: 0.1 * t)
    m.attach(n[0], B)
    return m


def random_states(asm: fm.Assembly, rng: np.random.Generator):
    u0 = rng.normal(size=asm.n_dof) * 0.3
    d = rng.normal(size=asm.n_dof) * 0.2
    return u0, d, asm.cayley_update(u0, d)


def relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-30))


@pytest.mark.parametrize("dim", [2, 3])
def test_end_point_jacobian_and_tangent_equal_finite_differences(dim, rng):
    asm = fm.Assembly(every_joint(dim))
    cs = asm.constraints
    _, _, u = random_states(asm, rng)
    lam, t = rng.normal(size=cs.n), 0.35
    ct = cs.evaluate(u, t, lam)
    C_fd, K_fd = np.zeros((cs.n, asm.n_dof)), np.zeros((asm.n_dof, asm.n_dof))
    for j in range(asm.n_dof):                     # spins at 3D rotations, sums elsewhere
        e = np.zeros(asm.n_dof)
        e[j] = H
        up, um = asm.update(u, e), asm.update(u, -e)
        C_fd[:, j] = (cs.values(up, t) - cs.values(um, t)) / (2 * H)
        K_fd[:, j] = (cs.evaluate(up, t, lam).force - cs.evaluate(um, t, lam).force) / (2 * H)
    assert relative(ct.C.toarray(), C_fd) < 1e-6, f"C vs FD: {relative(ct.C.toarray(), C_fd):.2e}"
    assert relative(ct.K.toarray(), K_fd) < 1e-6, f"K vs FD: {relative(ct.K.toarray(), K_fd):.2e}"
    assert np.allclose(ct.force, ct.C.T @ lam, rtol=1e-14, atol=0)


@pytest.mark.parametrize("dim", [2, 3])
def test_mid_point_discrete_gradient_is_exact_and_its_derivatives_match(dim, rng):
    asm = fm.Assembly(every_joint(dim))
    cs = asm.constraints
    u0, d, u1 = random_states(asm, rng)
    lam, t0, t1 = rng.normal(size=cs.n), 0.2, 0.35
    ct = cs.evaluate(u1, t1, lam, u0=u0, d=d, t0=t0)
    # G_m d = Phi(u1) - Phi(u0) exactly (time frozen): constraint forces do no work
    same_time = cs.evaluate(u1, t0, lam, u0=u0, d=d, t0=t0)
    jump = cs.values(u1, t0) - cs.values(u0, t0)
    assert np.abs(same_time.G @ d - jump).max() < 1e-14 * max(1.0, np.abs(jump).max())
    C_fd, K_fd = np.zeros((cs.n, asm.n_dof)), np.zeros((asm.n_dof, asm.n_dof))
    for j in range(asm.n_dof):                     # derivatives w.r.t. the step increment d
        e = np.zeros(asm.n_dof)
        e[j] = H
        up, um = asm.cayley_update(u0, d + e), asm.cayley_update(u0, d - e)
        C_fd[:, j] = (cs.values(up, t1) - cs.values(um, t1)) / (2 * H)
        K_fd[:, j] = (cs.evaluate(up, t1, lam, u0=u0, d=d + e, t0=t0).force
                      - cs.evaluate(um, t1, lam, u0=u0, d=d - e, t0=t0).force) / (2 * H)
    assert relative(ct.C.toarray(), C_fd) < 1e-6, f"C vs FD: {relative(ct.C.toarray(), C_fd):.2e}"
    assert relative(ct.K.toarray(), K_fd) < 1e-6, f"K vs FD: {relative(ct.K.toarray(), K_fd):.2e}"


def test_joints_hold_in_the_reference_configuration():
    for dim in (2, 3):
        asm = fm.Assembly(every_joint(dim))
        assert np.abs(asm.constraints.values(np.zeros(asm.n_dof), 0.0)).max() < 1e-15


def compound_pendulum() -> tuple[fm.Model, float, float, float]:
    """A 1 m, 2 kg rod pinned at one end (rigid body), horizontal at rest, under gravity."""
    m = fm.Model(dim=2)
    length, mass = 1.0, 2.0
    body = m.add_rigid_body([length / 2, 0.0], mass, mass * length**2 / 12)
    m.add_joint("revolute", None, body, at=[0.0, 0.0], name="pivot")
    m.set_gravity([0.0, -9.81])
    return m, length, mass, mass * length**2 / 3


def test_rigid_pendulum_conserves_energy_and_follows_the_exact_motion():
    m, length, mass, I_pivot = compound_pendulum()
    h = fm.integrate(m, 0.01, 2.0)
    energy = np.abs(h.total - h.total[0]).max() / max(h.kinetic)
    assert energy < 1e-9, f"energy error {energy:.2e}"
    assert max(h.constraint_residual) < 1e-12, f"joint residual {max(h.constraint_residual):.2e}"
    # the exact motion: I theta'' = -m g (L/2) cos(theta), theta from the horizontal
    exact = solve_ivp(lambda t, y: [y[1], -mass * 9.81 * length / 2 * np.cos(y[0]) / I_pivot], (0, 2.0),
                      [0.0, 0.0], t_eval=h.t, rtol=1e-12, atol=1e-12)
    theta = np.array(h.u)[:, 2]
    err = np.abs(theta - exact.y[0]).max()
    assert err < 2e-3, f"angle differs from the exact motion by {err:.2e} rad at dt = 0.01 s"
    # second-order accuracy: halving the step divides the error by ~4
    h2 = fm.integrate(m, 0.005, 2.0)
    err2 = np.abs(np.array(h2.u)[::2, 2] - exact.y[0]).max()
    assert 3.5 < err / err2 < 4.5, f"error ratio {err / err2:.2f} for dt/2 (second order: 4)"


def test_joint_reaction_balances_gravity_and_centripetal_force():
    """At the bottom of the swing the pivot pulls up with m g + m omega^2 L/2 (joint frame = ground)."""
    m, length, mass, I_pivot = compound_pendulum()
    h = fm.integrate(m, 0.001, 0.6)
    theta = np.array(h.u)[:, 2]
    k = int(np.argmin(np.abs(theta + np.pi / 2)))                  # rod hanging down
    omega = np.array(h.v)[k, 2]
    force, moment = h.joint_reaction("pivot")
    expected = mass * 9.81 + mass * omega**2 * length / 2
    # the nearest output step is within 1 ms of the bottom: the tangential part is small
    assert abs(force[k, 1] - expected) < 1e-3 * expected, f"{force[k, 1]:.6g} vs {expected:.6g} N"
    assert abs(moment[k, 0]) < 1e-9, "a revolute joint transmits no moment about its axis"


def heavy_top() -> tuple[fm.Assembly, np.ndarray]:
    m = fm.Model(dim=3)
    body = m.add_rigid_body([0.0, 0.3, 0.4], 1.5, np.diag([0.05, 0.05, 0.02]))
    m.add_joint("spherical", None, body, at=[0.0, 0.0, 0.0])
    m.set_gravity([0, 0, -9.81])
    asm = fm.Assembly(m)
    w, r = np.array([0.5, -1.0, 8.0]), np.array([0.0, 0.3, 0.4])
    v0 = np.zeros(asm.n_dof)
    v0[0:3], v0[3:6] = np.cross(w, r), w
    return asm, v0


def test_heavy_top_conserves_energy_and_vertical_angular_momentum():
    asm, v0 = heavy_top()
    h = fm.integrate(asm, 0.05, 3.0, v0=v0, newton=NewtonSettings(residual_tol=1e-13))
    energy = np.abs(h.total - h.total[0]).max() / h.kinetic[0]
    Lz = np.array(h.angular_momentum)[:, 2]
    assert energy < 1e-11, f"energy error {energy:.2e}"
    assert np.abs(Lz - Lz[0]).max() < 1e-11 * abs(Lz[0]), "L_z about the fixed point is not conserved"
    assert max(h.constraint_residual) < 1e-12
    # Newmark (end-point constraint forces) converges to the same motion, but does not conserve
    fine = fm.integrate(asm, 0.001, 0.5, v0=v0)
    newmark = fm.integrate(asm, 0.001, 0.5, v0=v0, scheme="newmark")
    assert np.abs(newmark.positions(-1) - fine.positions(-1)).max() < 1e-4


def test_inconsistent_initial_conditions_are_named_and_can_be_projected():
    m, *_ = compound_pendulum()
    asm = fm.Assembly(m)
    u0 = np.zeros(asm.n_dof)
    u0[1] = 0.01                                       # body moved off the pivot
    with pytest.raises(fm.ModelError, match="initial positions violate joint 'pivot'"):
        fm.integrate(asm, 0.01, 0.1, u0=u0)
    v0 = np.zeros(asm.n_dof)
    v0[0] = 1.0                                        # sliding along the rod: not a rotation
    with pytest.raises(fm.ModelError, match="initial velocities violate joint 'pivot'"):
        fm.integrate(asm, 0.01, 0.1, v0=v0)
    u, v = fm.consistent_initial_state(asm, u0, v0 + np.array([0.0, 0.5, 1.0]))
    assert np.abs(asm.constraints.values(u, 0.0)).max() < 1e-12
    C = asm.constraints.evaluate(u, 0.0, np.zeros(2)).C
    assert np.abs(C @ v).max() < 1e-12
    fm.integrate(asm, 0.01, 0.1, u0=u, v0=v)          # accepted


def test_driven_joint_needs_its_velocity_and_does_work():
    """A crank body driven at 2 rad/s about the ground: the drive's work is the kinetic energy."""
    m = fm.Model(dim=2)
    crank = m.add_rigid_body([0.5, 0.0], 1.0, 0.1)
    m.add_joint("revolute", None, crank, at=[0.0, 0.0], drive=lambda t: 2.0 * t, name="motor")
    asm = fm.Assembly(m)
    with pytest.raises(fm.ModelError, match="initial velocities violate joint 'motor'"):
        fm.integrate(asm, 0.01, 0.1)
    u, v = fm.consistent_initial_state(asm)
    assert np.isclose(v[2], 2.0) and np.allclose(v[:2], [0.0, 1.0])
    h = fm.integrate(asm, 0.05, 1.0, u0=u, v0=v)
    assert np.allclose(np.array(h.u)[:, 2], 2.0 * np.array(h.t), atol=1e-12)
    assert np.abs(h.total - h.total[0]).max() < 1e-9


def test_joint_input_errors_name_the_joint():
    m = fm.Model(dim=2)
    body = m.add_rigid_body([1.0, 0.0], 1.0, 0.1)
    with pytest.raises(fm.ModelError, match="joint 'bad': unknown kind 'hinge'"):
        m.add_joint("hinge", None, body, name="bad")
    with pytest.raises(fm.ModelError, match="spherical joint needs a 3D model"):
        m.add_joint("spherical", None, body)
    with pytest.raises(fm.ModelError, match="only revolute and prismatic joints can be driven"):
        m.add_joint("fixed", None, body, drive=lambda t: t)
    with pytest.raises(fm.ModelError, match="side b must be a node or body different"):
        m.add_joint("revolute", body, None)
    with pytest.raises(fm.ModelError, match="rigid body 'heavy': mass -1"):
        m.add_rigid_body([0, 0], -1.0, 1.0, name="heavy")
    n = m.add_node([2.0, 0.0])
    m.add_point_mass(n, 1.0)
    m.add_joint("fixed", body, n, name="weld to a bare node")
    with pytest.raises(fm.ModelError, match="joint 'weld to a bare node': node 1 has no rotation DOF 'rz'"):
        fm.Assembly(m)


def test_buckling_with_joints_is_refused_clearly():
    m, *_ = compound_pendulum()
    with pytest.raises(fm.ModelError, match="linear_buckling does not take them; fm.integrate, fm.load_control"):
        fm.linear_buckling(m)


def test_docs_multibody_example_runs():
    """The slider-crank of the documentation's bodies-and-joints chapter: joints hold, energy balance
    with the motor's work."""
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / "docs" / "bodies-joints.md").read_text()
    block = next(b for b in text.split("```python\n")[1:] if 'force, moment = h.joint_reaction(' in b).split("```")[0]
    namespace: dict = {"fm": fm, "np": np}
    exec(compile(block, "docs/bodies-joints.md multibody example", "exec"), namespace)
    h = namespace["h"]
    assert max(h.constraint_residual) < 1e-12
    assert np.abs(h.total - h.total[0]).max() < 1e-8 * max(h.kinetic)
    assert namespace["force"].shape == (len(h.t), 2)


@pytest.mark.parametrize("scheme", ["mid-point", "newmark"])
@pytest.mark.parametrize("dim", [2, 3])
def test_step_jacobian_with_bodies_and_joints_equals_finite_differences(dim, scheme, rng):
    """The whole Newton matrix of a step: rigid-body inertia (3D: Simo-Wong / Simo-Vu-Quoc),
    beams and the joints' force tangent, at a random state, against finite differences of the
    residual with respect to the scheme's own increments."""
    from flexmb.integrators.schemes import SCHEMES, State

    m = every_joint(dim)
    m.set_gravity([0.0, -9.81] if dim == 2 else [0.0, 0.0, -9.81])
    asm = fm.Assembly(m)
    stepper = SCHEMES[scheme](asm)
    cs = asm.constraints
    n, dt = asm.n_dof, 0.01
    u0, d, _ = random_states(asm, rng)
    s = State(0.2, u0, rng.normal(size=n), rng.normal(size=n), np.zeros(n), lam=np.zeros(cs.n),
              constraint_force=np.zeros(n))
    u1 = asm.cayley_update(u0, d) if scheme == "mid-point" else asm.update(u0, d)
    lam = rng.normal(size=cs.n) * 10.0

    def total(u: np.ndarray) -> np.ndarray:
        res = stepper.residual(s, dt, u)
        return res.g + stepper.constraint_terms(s, dt, u, lam, res).force

    res = stepper.residual(s, dt, u1)
    ct = stepper.constraint_terms(s, dt, u1, lam, res)
    free = asm.dofs.free
    J = asm.free_matrix(res.jacobian_data).toarray() + ct.K.toarray()[np.ix_(free, free)]
    J_fd = np.zeros_like(J)
    for k, j in enumerate(free):
        e = np.zeros(n)
        e[j] = H
        J_fd[:, k] = (total(stepper.update(s, u1, e)) - total(stepper.update(s, u1, -e)))[free] / (2 * H)
    assert relative(J, J_fd) < 1e-6, f"step Jacobian vs FD: {relative(J, J_fd):.2e}"


@pytest.mark.parametrize("dim, kind, rows", [
    (2, "revolute", 2), (2, "prismatic", 2), (2, "fixed", 3), (2, "point-on-line", 1),
    (3, "revolute", 5), (3, "spherical", 3), (3, "universal", 4), (3, "cylindrical", 4),
    (3, "prismatic", 5), (3, "fixed", 6), (3, "point-on-line", 2)])
def test_each_joint_removes_the_degrees_of_freedom_of_the_table(dim, kind, rows):
    """The rank of the joint's Jacobian between two free bodies is the number of DOFs it removes."""
    m = fm.Model(dim=dim)
    inertia = 0.1 if dim == 2 else np.eye(3) * 0.1
    A = m.add_rigid_body([0.0] * dim, 1.0, inertia)
    B = m.add_rigid_body([1.0] + [0.0] * (dim - 1), 1.0, inertia)
    extra = {"axis": [0, 1, 0], "x_axis": [1, 0, 0]} if kind == "universal" else {}
    m.add_joint(kind, A, B, at=[0.5] + [0.0] * (dim - 1), **extra)
    cs = fm.Assembly(m).constraints
    C = cs.evaluate(np.zeros(cs.n_dof), 0.0, np.zeros(cs.n)).C.toarray()
    assert cs.n == rows and np.linalg.matrix_rank(C) == rows, f"{kind}: {cs.n} rows, rank {np.linalg.matrix_rank(C)}"


def test_redundant_joints_are_named():
    m = fm.Model(dim=2)
    crank = m.add_rigid_body([0.5, 0.0], 1.0, 0.1)
    m.add_joint("revolute", None, crank, at=[0.0, 0.0], name="bearing")
    m.add_joint("revolute", None, crank, at=[0.0, 0.0], drive=lambda t: 2.0 * t, name="motor")
    with pytest.raises(fm.ModelError, match="redundant at the start .* '(bearing|motor)'"):
        fm.integrate(m, 0.01, 0.1)


def test_joint_work_is_recorded_zero_for_fixed_joints_and_the_drive_work_for_driven_ones():
    """``joint_work``: the part of the work done by the joint forces. A chain of rigid bodies on
    time-independent revolute joints: zero to round-off (the discrete gradient does no work, which the
    energy balance cannot show since that work is inside ``work``); a driven crank: the drive's work,
    equal to the change of K + V."""
    def chain(driven: bool) -> fm.Model:
        m = fm.Model(dim=2)
        a = m.add_rigid_body([0.5, 0.0], 1.0, 1.0 / 12, name="a")
        b = m.add_rigid_body([1.5, 0.0], 1.0, 1.0 / 12, name="b")
        m.add_joint("revolute", None, a, at=[0.0, 0.0], drive=(lambda t: 2.0 * t * t) if driven else None)
        m.add_joint("revolute", a, b, at=[1.0, 0.0])
        m.set_gravity([0.0, -9.81])
        return m
    free = fm.integrate(chain(False), dt=0.01, t_end=1.0)
    scale = np.abs(free.kinetic).max()
    assert np.abs(free.joint_work).max() < 1e-10 * scale
    driven = fm.integrate(chain(True), dt=0.01, t_end=1.0)
    gravity_work = driven.work - driven.joint_work
    change = driven.kinetic + driven.strain - gravity_work
    assert np.abs(driven.joint_work).max() > 0.1 * np.abs(driven.kinetic).max()
    assert np.abs(driven.joint_work - (change - change[0])).max() < 1e-8 * np.abs(driven.kinetic).max()


def _far_pendulum(shift: float, kind: str) -> fm.Assembly:
    """A body on a revolute joint to the ground, or on a prismatic one inclined 30 degrees with a
    spring, at o = shift (1, 1, 1), moving under gravity."""
    m = fm.Model(dim=3)
    o = np.full(3, shift)
    body = m.add_rigid_body(o + [0.5, -1.0, 0.2], mass=2.0, inertia=[0.1, 0.12, 0.08])
    if kind == "revolute":
        m.add_joint("revolute", None, body, at=o, axis=[0.0, 0.0, 1.0])
    else:
        m.add_joint("prismatic", None, body, at=o + [0.5, -1.0, 0.2], axis=[np.cos(0.5), -np.sin(0.5), 0.0])
        m.add_spring(None, body, k=50.0, at_a=o)
    m.set_gravity([0.0, -9.81, 0.0])
    return fm.Assembly(m)


@pytest.mark.parametrize("kind", ["revolute", "prismatic"])
def test_a_mechanism_far_from_the_origin_moves_and_converges_as_at_the_origin(kind):
    """Joint equations take points relative to an origin near the model (they hold points in
    differences): 1e6 m from the origin the motion equals the one at the origin to 1e-9 m, every
    Newton solve ends on the residual test and no step is cut back (1e4 m away the pendulum
    needed 6 cut-backs before, its residual stalled at 2e-10 of the force scale)."""
    runs = {shift: fm.integrate(_far_pendulum(shift, kind), 0.01, 0.5, progress=False, keep_newton_logs=True)
            for shift in (0.0, 1e4, 1e6)}
    for shift in (1e4, 1e6):
        far = runs[shift]
        assert np.abs(np.asarray(far.u) - np.asarray(runs[0.0].u)).max() < 1e-9, shift
        assert {log.criterion for log in far.newton_logs} == {"residual"} and far.cutbacks == 0, shift
        # the energy balance itself sums terms of m g |x| (2e7 J at 1e6 m): its round-off, eps m g |x|,
        # is 1e-9 of this run's kinetic energy (measured 7.7e-10 for the slider)
        assert far.energy_error().max() < 1e-8
