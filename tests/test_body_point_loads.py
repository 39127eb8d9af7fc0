"""Constant forces at points of rigid bodies (Model.add_body_load): statics of a pendulum by hand,
exact energy balance in the mid-point scheme, equality with a node attached at the point, and
the load stiffness against finite differences."""
import numpy as np
import pytest

import flexmb as fm
from flexmb.elements.body_load import BodyPointLoad
from flexmb.multibody.constrained_system import ConstrainedSystem
from flexmb.multibody.partitioning import partition
from flexmb.rotations import cayley_between, cayley_compose, compose

L, MASS, G, PUSH, ARM = 1.0, 2.0, 9.81, 3.0, 0.8


def pushed_pendulum() -> fm.Model:
    """A 1 m, 2 kg rod hanging from a pivot at the origin, pushed sideways by 3 N at 0.8 m below it."""
    m = fm.Model(dim=2)
    body = m.add_rigid_body([0.0, -L / 2], MASS, MASS * L**2 / 12)
    m.add_joint("revolute", None, body, at=[0.0, 0.0])
    m.add_body_load(body, force=[PUSH, 0.0], at=[0.0, -ARM])
    m.set_gravity([0.0, -G])
    return m


def test_pendulum_pushed_off_its_centre_rests_at_the_angle_by_hand():
    """Moments about the pivot: F a cos(phi) = m g (L/2) sin(phi), so tan(phi) = F a / (m g L/2);
    the generalized force along the joint's free motion vanishes there and only there."""
    system = ConstrainedSystem.from_assembly(fm.Assembly(pushed_pendulum()))
    phi_eq = np.arctan(PUSH * ARM / (MASS * G * L / 2))

    def free_force(phi: float) -> float:
        q = np.array([L / 2 * np.sin(phi), L / 2 * (1 - np.cos(phi)), phi])     # centre moved, angle
        part = partition(system.C(q, 0.0), [2])
        return float((part.D @ system.h(q, np.zeros(3), 0.0))[0])               # N m about the pivot

    scale = PUSH * ARM
    assert abs(free_force(phi_eq)) < 1e-12 * scale, f"residual moment {free_force(phi_eq):.2e} N m at equilibrium"
    assert free_force(phi_eq - 0.05) > 0.0 > free_force(phi_eq + 0.05), "equilibrium is not stable"
    moment = PUSH * ARM * np.cos(0.3) - MASS * G * L / 2 * np.sin(0.3)
    assert abs(free_force(0.3) - moment) < 1e-12 * scale, f"moment {free_force(0.3)} vs {moment} N m at 0.3 rad"


def test_pushed_pendulum_conserves_discrete_energy_and_swings_about_the_equilibrium():
    h = fm.integrate(pushed_pendulum(), 0.01, 2.0, newton=fm.NewtonSettings(residual_tol=1e-13))
    E = np.asarray(h.total)
    drift = np.abs(E - E[0]).max() / max(h.kinetic)
    assert drift < 1e-10, f"K + V - work drifts by {drift:.2e} of the largest kinetic energy"
    theta = np.array(h.u)[:, 2]
    phi_eq = np.arctan(PUSH * ARM / (MASS * G * L / 2))
    assert 0.9 * 2 * phi_eq < theta.max() < 1.1 * 2 * phi_eq, f"swing to {theta.max():.4f} rad, 2 phi_eq = {2 * phi_eq:.4f}"


def spatial_body(point_load: bool) -> fm.Model:
    """A 3D body hanging from a spherical joint, tumbled by a constant force at an off-centre point:
    either as a body load or on a massless node attached (pinned) to the body there."""
    m = fm.Model(dim=3)
    body = m.add_rigid_body([0.1, -0.5, 0.05], 3.0, [0.2, 0.05, 0.18])
    m.add_joint("spherical", None, body, at=[0.0, 0.0, 0.0])
    point, force = [0.3, -0.7, -0.1], [2.0, 1.0, -4.0]
    if point_load:
        m.add_body_load(body, force=force, at=point)
    else:
        node = int(np.atleast_1d(m.add_nodes([point]))[0])
        m.attach(node, body)
        for dof, value in zip(("ux", "uy", "uz"), force):
            m.add_load(node, dof, value)
    m.set_gravity([0.0, -9.81, 0.0])
    return m


def test_3d_force_at_a_point_moves_the_body_as_a_load_on_an_attached_node():
    newton = fm.NewtonSettings(residual_tol=1e-13)
    loaded = fm.integrate(spatial_body(True), 0.01, 0.8, newton=newton)
    attached = fm.integrate(spatial_body(False), 0.01, 0.8, newton=newton)
    u1, u2 = np.array(loaded.u), np.array(attached.u)[:, :6]
    assert np.abs(u1).max() > 0.5, "the body hardly moved: the comparison would prove nothing"
    diff = np.abs(u1 - u2).max()
    assert diff < 1e-10, f"body motion differs by {diff:.2e} between the point load and the attached node"
    E = np.asarray(loaded.total)
    assert np.abs(E - E[0]).max() < 1e-10 * max(loaded.kinetic), "energy balance not closed in 3D"


@pytest.mark.parametrize("dim", [2, 3])
def test_load_stiffness_and_mid_point_tangent_match_finite_differences(dim):
    rng = np.random.default_rng(7)
    n_el, ne = 3, 3 * (dim - 1)
    group = BodyPointLoad(np.arange(n_el)[:, None], dim, rng.normal(size=(n_el, dim)), rng.normal(size=(n_el, dim)))
    X = rng.normal(size=(n_el, 1, dim))
    u0, u1 = 0.4 * rng.normal(size=(n_el, ne)), 0.4 * rng.normal(size=(n_el, ne))
    h = 1e-6

    def spun(u, k, e):                     # u moved by e along DOF k (a spin at 3D rotations)
        v = u.copy()
        if dim == 3 and k >= 3:
            v[:, 3:6] = compose(np.eye(3)[k - 3] * e, u[:, 3:6])
        else:
            v[:, k] += e
        return v

    q, K = group.force_and_tangent(X, u1)
    fd = np.stack([(group.internal_force(X, spun(u1, k, h)) - group.internal_force(X, spun(u1, k, -h))) / (2 * h)
                   for k in range(ne)], axis=-1)
    assert np.abs(K - fd).max() < 1e-7 * np.abs(K).max(), f"load stiffness off by {np.abs(K - fd).max():.2e}"
    # the internal force is the gradient of V = -F . (p - p_ref) (spins: the moment (R s) x F)
    dV = np.stack([(group.strain_energy(X, spun(u1, k, h)) - group.strain_energy(X, spun(u1, k, -h))) / (2 * h)
                   for k in range(ne)], axis=-1)
    assert np.abs(q - dV).max() < 1e-7, f"force is not the gradient of the potential ({np.abs(q - dV).max():.2e})"

    def stepped(d, k, e):                  # the step's end moved by e along increment k (Cayley at 3D)
        v = d.copy()
        if dim == 3 and k >= 3:
            w = cayley_between(u0[:, 3:6], d[:, 3:6]) + np.eye(3)[k - 3] * e
            v[:, 3:6] = cayley_compose(w, u0[:, 3:6])
        else:
            v[:, k] += e
        return v

    qm, Km = group.mid_point_force_and_tangent(X, u0, u1)
    fd = np.stack([(group.mid_point_force(X, u0, stepped(u1, k, h)) - group.mid_point_force(X, u0, stepped(u1, k, -h)))
                   / (2 * h) for k in range(ne)], axis=-1)
    assert np.abs(Km - fd).max() < 1e-7 * np.abs(Km).max(), f"mid-point tangent off by {np.abs(Km - fd).max():.2e}"
    # the discrete gradient: its work over the step is exactly minus the change of V
    if dim == 2:
        work = np.einsum("ni,ni->n", qm, u1 - u0)
    else:
        incr = np.concatenate([u1[:, :3] - u0[:, :3], cayley_between(u0[:, 3:6], u1[:, 3:6])], axis=1)
        work = np.einsum("ni,ni->n", qm, incr)
    dV = group.strain_energy(X, u1) - group.strain_energy(X, u0)
    assert np.abs(work - dV).max() < 1e-13, f"mid-point work misses the potential change by {np.abs(work - dV).max():.2e}"


def test_a_time_function_force_books_its_work_and_matches_the_constant_force():
    """f(t) = const moves the body as the constant force (the same mid-point force, booked as
    work instead of potential); a ramped push keeps K + V + dissipated - work constant."""
    def pendulum_with(force) -> fm.Model:
        m = fm.Model(dim=2)
        body = m.add_rigid_body([0.0, -L / 2], MASS, MASS * L**2 / 12)
        m.add_joint("revolute", None, body, at=[0.0, 0.0])
        m.add_body_load(body, force=force, at=[0.0, -ARM])
        m.set_gravity([0.0, -G])
        return m

    newton = fm.NewtonSettings(residual_tol=1e-13)
    timed = fm.integrate(pendulum_with(lambda t: [PUSH, 0.0]), 0.01, 1.0, newton=newton)
    constant = fm.integrate(pendulum_with([PUSH, 0.0]), 0.01, 1.0, newton=newton)
    diff = np.abs(np.array(timed.u) - np.array(constant.u)).max()
    assert diff < 1e-11, f"f(t) = F and the constant F differ by {diff:.2e}"
    ramp = fm.integrate(pendulum_with(lambda t: [PUSH * min(t / 0.5, 1.0), -PUSH * t]), 0.01, 1.0, newton=newton)
    E = np.asarray(ramp.total)
    drift = np.abs(E - E[0]).max() / max(ramp.kinetic)
    assert drift < 1e-10, f"energy balance of a time-function body load off by {drift:.2e}"
    assert np.array(ramp.u)[:, 2].max() > 0.1, "the ramped push hardly turned the pendulum"


def test_newmark_converges_to_the_mid_point_motion_with_a_body_load():
    fine = fm.integrate(pushed_pendulum(), 0.002, 0.5)
    newmark = fm.integrate(pushed_pendulum(), 0.002, 0.5, scheme="newmark")
    diff = np.abs(np.array(fine.u) - np.array(newmark.u)).max()
    assert 0 < diff < 1e-6, f"Newmark and mid-point differ by {diff:.2e} at dt = 2 ms"


def test_a_second_run_records_the_time_function_load_at_its_own_start():
    """The recorded force of a time-function body load at a run's first output is f(t0) of that
    run, also when the assembly ran before (the group kept the last run's time)."""
    m = fm.Model(dim=2)
    body = m.add_rigid_body([0.0, -L / 2], MASS, MASS * L**2 / 12)
    m.add_joint("revolute", None, body, at=[0.0, 0.0])
    m.add_body_load(body, force=lambda t: [PUSH * (1.0 + t), 0.0], at=[0.0, -ARM])
    asm = fm.Assembly(m)
    group = next(i for i, g in enumerate(asm.groups) if isinstance(g, BodyPointLoad))
    for run in range(2):
        h = fm.integrate(asm, 0.01, 0.5, progress=False)
        force = h.element(group, "force")
        assert force[0, 0] == pytest.approx(PUSH, rel=1e-14), f"run {run}: {force[0, 0]} N at t = 0"
        assert force[-1, 0] == pytest.approx(1.5 * PUSH, rel=1e-14)
