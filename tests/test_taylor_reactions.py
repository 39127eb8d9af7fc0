"""Huang et al. (2001) joint-reaction formulation: the linearized joint conditions against finite
differences of the full Taylor prediction, Phi_q against finite differences, reactions and motion
of pendulums against closed forms and an ODE solver, the order of both velocity updates, joint
drift and energy in 3D, and the reaction matrix at the two kinds of singularity of Huang's Fig. 1."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from flexmb.multibody.taylor_reactions import (
    BodyStates, SingularReactionMatrix, TaylorSystem, constraint_jacobian, integrate_taylor, joint_conditions,
    predicted_conditions, reaction_equations, reaction_wrench_map, solve_reactions)
from flexmb.rotations import exp_map

GRAVITY = 9.81


def two_bodies(kind: str, dim: int, rng: np.random.Generator) -> TaylorSystem:
    """Two spinning bodies joined by ``kind``, body 0 also jointed to the ground (with a motor)."""
    if dim == 3:
        s = TaylorSystem(3, gravity=[0.0, 0.0, -GRAVITY])
        i = s.add_body("A", 2.0, [0.1, 0.2, 0.3], [0.1, 0.2, 0.3], exp_map(rng.normal(size=3)),
                       rng.normal(size=3), 2.0 * rng.normal(size=3))
        j = s.add_body("B", 1.0, np.diag([0.1, 0.15, 0.2]), [1.0, -0.2, 0.4], exp_map(rng.normal(size=3)),
                       rng.normal(size=3), 2.0 * rng.normal(size=3))
        s.add_joint(kind, i, j, at=[0.5, 0.1, 0.2], axis=None if kind == "spherical" else [0.3, 0.4, 1.0],
                    motor=(lambda t: 3.0 + t) if kind == "revolute" else None)
        s.add_joint("revolute", None, i, at=[0.0, 0.0, 0.1], axis=[1.0, 0.0, 0.2], motor=lambda t: -2.0)
    else:
        s = TaylorSystem(2, gravity=[0.0, -GRAVITY])
        i = s.add_body("A", 2.0, 0.1, [0.1, 0.2], 0.3, [1.0, 2.0], 3.0)
        j = s.add_body("B", 1.0, 0.2, [1.0, -0.2], -0.2, [0.5, -1.0], -2.0)
        s.add_joint("revolute", i, j, at=[0.5, 0.1])
        s.add_joint("revolute", None, i, at=[0.0, 0.0], motor=lambda t: 2.0)
    return s


def drifted(s: TaylorSystem, rng: np.random.Generator) -> BodyStates:
    """The initial state with the joints opened by ~1e-3 m and rad (the drift term of eq. 23)."""
    state = s.initial_state()
    state.position[:, :s.dim] += 1e-3 * rng.normal(size=(s.n_bodies, s.dim))
    spin = 1e-3 * rng.normal(size=(s.n_bodies, 3))
    if s.dim == 2:
        spin[:, :2] = 0.0
    state.rotation = exp_map(spin) @ state.rotation
    return state


@pytest.mark.parametrize("kind, dim", [("spherical", 3), ("revolute", 3), ("cylindrical", 3), ("prismatic", 3),
                                       ("revolute", 2)])
def test_linearized_conditions_equal_the_taylor_prediction_and_its_derivative(kind, dim, rng):
    s = two_bodies(kind, dim, rng)
    state, t, dt = drifted(s, rng), 0.3, 0.01
    eq = reaction_equations(s, state, t, dt)
    n = s.n_unknowns
    assert eq.matrix.shape == (n, n)
    at_zero = predicted_conditions(s, state, t, dt, np.zeros(n))
    err_c = np.abs(eq.constant - at_zero).max() / np.abs(at_zero).max()
    assert err_c < 1e-12, f"{kind} {dim}D: Q-free part off the prediction at Q = 0 by {err_c:.1e} (relative)"
    # the prediction is quadratic in Q (products of two reaction parts): central differences are exact
    h = 10.0                                                          # N, N m: reactions of this size
    fd = np.column_stack([(predicted_conditions(s, state, t, dt, h * e) - predicted_conditions(s, state, t, dt, -h * e))
                          / (2.0 * h) for e in np.eye(n)])
    err_G = np.abs(eq.matrix - fd).max() / np.abs(fd).max()
    assert err_G < 1e-6, f"{kind} {dim}D: G off the derivative of the prediction by {err_G:.1e} (relative)"
    # and what is dropped is second order in Q: the linear model's error scales with |Q|^2
    Q = rng.normal(size=n)
    gap = [np.abs(predicted_conditions(s, state, t, dt, x * Q) - eq.constant - eq.matrix @ (x * Q)).max()
           for x in (100.0, 200.0)]
    if kind in ("revolute", "cylindrical", "prismatic") and dim == 3:    # point conditions are exactly linear
        assert 3.9 < gap[1] / gap[0] < 4.1, f"{kind}: dropped terms scale as |Q|^{np.log2(gap[1] / gap[0]):.2f}"


@pytest.mark.parametrize("kind, dim", [("spherical", 3), ("revolute", 3), ("cylindrical", 3), ("prismatic", 3),
                                       ("revolute", 2)])
def test_constraint_jacobian_equals_finite_differences(kind, dim, rng):
    s = two_bodies(kind, dim, rng)
    state = drifted(s, rng)
    Phi_q = constraint_jacobian(s, state)
    per_body = 6 if dim == 3 else 3

    def conditions(dq: np.ndarray) -> np.ndarray:
        moved = state.copy()
        dq = dq.reshape(s.n_bodies, per_body)
        spin = np.zeros((s.n_bodies, 3))
        if dim == 3:
            moved.position += dq[:, :3]
            spin = dq[:, 3:]
        else:
            moved.position[:, :2] += dq[:, :2]
            spin[:, 2] = dq[:, 2]
        moved.rotation = exp_map(spin) @ moved.rotation
        return joint_conditions(s, moved)

    h = 1e-6
    fd = np.column_stack([(conditions(h * e) - conditions(-h * e)) / (2.0 * h) for e in np.eye(Phi_q.shape[1])])
    err = np.abs(Phi_q - fd).max() / np.abs(fd).max()
    assert err < 1e-6, f"{kind} {dim}D: Phi_q off central differences by {err:.1e} (relative)"


def test_reactions_sum_to_zero_on_the_system_and_conserve_momentum(rng):
    """Joint forces are action-reaction pairs (eqs. 34-35): without ground joints and gravity the
    total momentum is constant to round-off."""
    s = TaylorSystem(3)
    bodies = [s.add_body(f"b{k}", 1.0 + k, [0.1, 0.2, 0.3], rng.normal(size=3), exp_map(rng.normal(size=3)),
                         rng.normal(size=3), 3.0 * rng.normal(size=3)) for k in range(3)]
    state0 = s.initial_state()
    s.add_joint("spherical", bodies[0], bodies[1], at=0.5 * (state0.position[0] + state0.position[1]))
    s.add_joint("revolute", bodies[1], bodies[2], at=0.5 * (state0.position[1] + state0.position[2]), axis=[0, 1, 1])
    state = s.initial_state()
    wrench = reaction_wrench_map(s, state) @ rng.normal(size=s.n_unknowns)          # (n_b, 6)
    total_moment = np.sum(wrench[:, 3:] + np.cross(state.position, wrench[:, :3]), axis=0)
    assert np.abs(wrench[:, :3].sum(0)).max() < 1e-14 and np.abs(total_moment).max() < 1e-13
    h = integrate_taylor(s, 1e-3, 0.2)
    p = np.einsum("b,kbi->ki", s.masses, h.velocity)
    drift = np.abs(p - p[0]).max() / np.abs(p[0]).max()
    assert drift < 1e-12, f"momentum changed by {drift:.1e} (relative)"


# ---------------------------------------------------------------------- planar physical pendulum
ROD_MASS, ROD_LENGTH = 1.0, 1.0                                      # kg, m; pinned at one end
ROD_J = ROD_MASS * ROD_LENGTH**2 / 12.0
ROD_ARM = ROD_LENGTH / 2.0
ROD_J_PIN = ROD_J + ROD_MASS * ROD_ARM**2


def pendulum(theta: float, omega: float, gravity: float = GRAVITY) -> TaylorSystem:
    """A uniform rod hanging from a pin at the origin, at angle theta from the downward vertical."""
    s = TaylorSystem(2, gravity=[0.0, -gravity])
    d = ROD_ARM * np.array([np.sin(theta), -np.cos(theta)])          # pin -> centre of mass
    s.add_body("rod", ROD_MASS, ROD_J, d, theta, omega * np.array([-d[1], d[0]]), omega)
    s.add_joint("revolute", None, 0, at=[0.0, 0.0], name="pin")
    return s


def pendulum_reference(theta0: float, t: np.ndarray) -> np.ndarray:
    sol = solve_ivp(lambda _, y: [y[1], -ROD_MASS * GRAVITY * ROD_ARM * np.sin(y[0]) / ROD_J_PIN], (0.0, t[-1]),
                    [theta0, 0.0], method="DOP853", rtol=1e-12, atol=1e-12, dense_output=True)
    return sol.sol(t)[0]


def test_pendulum_reaction_equals_the_newton_euler_value():
    """At a consistent state the pin must not accelerate: the Taylor conditions (eq. 23) give the
    exact reaction F = m (a_c - g), a_c = -omega^2 d + alpha k x d, for any dt (to round-off, which
    grows like eps |p| / (|a| dt^2): the conditions compare positions, the reactions move them by
    a dt^2/2)."""
    theta, omega = 0.7, 2.5
    alpha = -ROD_MASS * GRAVITY * ROD_ARM * np.sin(theta) / ROD_J_PIN
    d = ROD_ARM * np.array([np.sin(theta), -np.cos(theta)])
    exact = ROD_MASS * (-omega**2 * d + alpha * np.array([-d[1], d[0]]) - np.array([0.0, -GRAVITY]))
    for dt in (1e-2, 1e-3):
        h = integrate_taylor(pendulum(theta, omega), dt, dt)
        err = np.abs(h.reaction_force[0, 0] - exact).max() / np.linalg.norm(exact)
        assert err < 1e-10, f"dt = {dt}: pin reaction off Newton-Euler by {err:.1e} (relative)"


@pytest.mark.parametrize("velocity_update, order", [("euler", 1.0), ("rattle", 2.0)])
def test_pendulum_motion_converges_at_the_expected_order(velocity_update, order):
    """Huang's v += a dt is first order (Euler for the velocities); the RATTLE-type update is
    second order. Errors of the angle against DOP853 over 0.5 s, fitted on three step sizes."""
    theta0, steps = 1.0, np.array([4e-3, 2e-3, 1e-3])
    errors = []
    for dt in steps:
        h = integrate_taylor(pendulum(theta0, 0.0), dt, 0.5, velocity_update=velocity_update)
        errors.append(np.abs(h.angle[:, 0] - pendulum_reference(theta0, h.t)).max())
    rate = np.polyfit(np.log(steps), np.log(errors), 1)[0]
    assert abs(rate - order) < 0.3, f"{velocity_update}: measured order {rate:.2f}, expected {order}"
    bound = {"euler": 3e-3, "rattle": 4e-6}[velocity_update]           # rad at dt = 1e-3 (measured 1.7e-3, 2.2e-6)
    assert errors[-1] < bound, f"{velocity_update}: angle error {errors[-1]:.1e} rad at dt = 1e-3"


@pytest.mark.parametrize("velocity_update", ["euler", "rattle"])
def test_external_force_acts_like_gravity_and_its_work_is_counted(velocity_update):
    """The rod with gravity switched off and m g applied by the external-load callback moves as
    with gravity, and the callback's work equals the drop of the gravity run's potential energy
    (a constant force: the work sum is exact for both updates)."""
    weight = np.array([[0.0, -ROD_MASS * GRAVITY]])

    def loads(t: float, state: BodyStates) -> tuple[np.ndarray, np.ndarray]:
        return weight, np.zeros(1)

    with_gravity = integrate_taylor(pendulum(1.0, 0.0), 2e-3, 0.2, velocity_update=velocity_update)
    loaded = integrate_taylor(pendulum(1.0, 0.0, gravity=0.0), 2e-3, 0.2, external_loads=loads,
                              velocity_update=velocity_update)
    assert np.abs(loaded.position - with_gravity.position).max() < 1e-14
    drop = with_gravity.potential[0] - with_gravity.potential
    assert np.abs(loaded.work - drop).max() < 1e-12 * ROD_MASS * GRAVITY * ROD_LENGTH


def test_euler_update_has_a_growing_alternating_mode_that_rattle_removes():
    """A rod spinning about its pin at 10 rad/s without gravity (exact: uniform rotation). With
    v += a dt the joint-velocity mismatch flips sign every step and here grows (by about 2 %
    per step at dt = 1e-3); the RATTLE-type update keeps the rotation uniform."""
    spin = {}
    for update in ("euler", "rattle"):
        h = integrate_taylor(pendulum(0.0, 10.0, gravity=0.0), 1e-3, 0.3, velocity_update=update)
        spin[update] = np.abs(h.angular_velocity[:, 0] - 10.0).max()
    assert spin["rattle"] < 1e-4, f"RATTLE-type update: spin changed by {spin['rattle']:.1e} rad/s"
    assert spin["euler"] > 100.0 * spin["rattle"], f"Euler update: spin error only {spin['euler']:.1e} rad/s"


# ---------------------------------------------------------------------- spatial
def spherical_pendulum() -> TaylorSystem:
    """A box pinned by a spherical joint at a corner-ish point, spinning, under gravity."""
    s = TaylorSystem(3, gravity=[0.0, 0.0, -GRAVITY])
    A = exp_map(np.array([0.4, -0.3, 0.2]))
    arm = A @ np.array([0.0, 0.0, -0.5])                              # pivot -> centre of mass
    omega = np.array([1.0, 2.0, 4.0])
    s.add_body("box", 2.0, [0.2, 0.15, 0.05], arm, A, np.cross(omega, arm), omega)
    s.add_joint("spherical", None, 0, at=[0.0, 0.0, 0.0])
    return s


def revolute_chain() -> TaylorSystem:
    """Two links, ground-link 1 about x, link 1-link 2 about a skew axis, under gravity."""
    s = TaylorSystem(3, gravity=[0.0, 0.0, -GRAVITY])
    s.add_body("link 1", 1.0, [0.01, 0.1, 0.1], [0.0, 0.3, 0.0], angular_velocity=[2.0, 0.0, 0.0],
               velocity=np.cross([2.0, 0.0, 0.0], [0.0, 0.3, 0.0]))
    s.add_body("link 2", 0.5, [0.02, 0.05, 0.04], [0.0, 0.6, 0.3], angular_velocity=[2.0, 0.0, 0.0],
               velocity=np.cross([2.0, 0.0, 0.0], [0.0, 0.6, 0.3]))
    s.add_joint("revolute", None, 0, at=[0.0, 0.0, 0.0], axis=[1.0, 0.0, 0.0])
    s.add_joint("revolute", 0, 1, at=[0.0, 0.6, 0.0], axis=[1.0, 0.0, 1.0], motor=lambda t: 0.5)
    return s


@pytest.mark.parametrize("build", [spherical_pendulum, revolute_chain])
def test_spatial_joints_stay_closed_and_the_energy_error_shrinks_with_dt(build):
    balance = {}
    for dt in (2e-3, 1e-3):
        h = integrate_taylor(build(), dt, 0.5)
        if dt == 1e-3:
            assert h.position_residual.max() < 1e-6, f"joint point mismatch {h.position_residual.max():.1e} m"
            assert h.angle_residual.max() < 1e-6, f"axis misalignment {h.angle_residual.max():.1e} rad"
        balance[dt] = np.abs(h.energy_balance - h.energy_balance[0]).max()
    ratio = balance[2e-3] / balance[1e-3]
    assert 1.6 < ratio < 2.5, f"energy-balance error ratio {ratio:.2f} for dt halved (first order: 2)"


@pytest.mark.parametrize("kind", ["cylindrical", "prismatic"])
def test_body_slides_down_an_inclined_axis_as_in_closed_form(kind):
    """A body on a fixed inclined axis under gravity: it slides with a = (g . e) e and keeps
    spinning about the axis (cylindrical) or not at all (prismatic); constant accelerations make
    the Taylor update exact."""
    axis = np.array([1.0, 0.0, 1.0]) / np.sqrt(2.0)
    spin = 3.0 if kind == "cylindrical" else 0.0
    s = TaylorSystem(3, gravity=[0.0, 0.0, -GRAVITY])
    s.add_body("slider", 2.0, [0.3, 0.3, 0.1], [0.0, 0.0, 0.0], exp_map(np.array([0.0, np.pi / 4, 0.0])),
               0.5 * axis, spin * axis)
    s.add_joint(kind, None, 0, at=[0.0, 0.0, 0.0], axis=axis)
    t_end = 0.2
    h = integrate_taylor(s, 1e-3, t_end, velocity_update="rattle")
    a = (s.gravity @ axis) * axis
    exact = 0.5 * axis * t_end + 0.5 * a * t_end**2
    err = np.abs(h.position[-1, 0] - exact).max()
    assert err < 1e-12, f"{kind}: slider off the closed form by {err:.1e} m"
    assert np.abs(h.angular_velocity[-1, 0] - spin * axis).max() < 1e-12


# ---------------------------------------------------------------------- Huang's Fig. 1
def bar(s: TaylorSystem, name: str, p: np.ndarray, q: np.ndarray, omega: float, velocity_p: np.ndarray) -> int:
    """A uniform bar (1 kg/m) from p to q, turning at omega with point p moving at velocity_p."""
    length = np.linalg.norm(q - p)
    c = 0.5 * (p + q)
    v = velocity_p + omega * np.array([-(c - p)[1], (c - p)[0]])
    angle = np.arctan2(*(q - p)[::-1])
    return s.add_body(name, length, length**3 / 12.0, c, angle, v, omega)


def four_bar(crank: float, coupler: float, rocker: float, ground: float, A: np.ndarray, B: np.ndarray,
             omega_crank: float, omega_coupler: float, omega_rocker: float) -> TaylorSystem:
    s = TaylorSystem(2)
    O4 = np.array([ground, 0.0])
    vA = omega_crank * np.array([-A[1], A[0]])
    b2 = bar(s, "crank", np.zeros(2), A, omega_crank, np.zeros(2))
    b3 = bar(s, "coupler", A, B, omega_coupler, vA)
    b4 = bar(s, "rocker", O4, B, omega_rocker, np.zeros(2))
    s.add_joint("revolute", None, b2, at=[0.0, 0.0], name="O2")
    s.add_joint("revolute", b2, b3, at=A, name="A")
    s.add_joint("revolute", b3, b4, at=B, name="B")
    s.add_joint("revolute", None, b4, at=O4, name="O4")
    return s


def test_reaction_matrix_is_regular_where_only_a_minimal_coordinate_jacobian_is_singular():
    """Huang's Fig. 1(a): a four-bar (crank 0.1, coupler 0.35, rocker 0.3, ground 0.3 m) at its
    toggle, crank and coupler in line: with the rocker angle as the input, the closure Jacobian
    d(loop)/d(crank angle, coupler angle) is singular, but Phi_q of the absolute coordinates has
    full rank and G is regular. The run through the toggle keeps the joints closed."""
    a, b, c, d = 0.1, 0.35, 0.3, 0.3
    phi = np.arccos(((a + b)**2 + d**2 - c**2) / (2.0 * (a + b) * d))
    u = np.array([np.cos(phi), np.sin(phi)])
    omega = 5.0
    s = four_bar(a, b, c, d, a * u, (a + b) * u, omega, -a * omega / b, 0.0)   # rocker at rest at the toggle
    state = s.initial_state()
    assert np.abs(joint_conditions(s, state)).max() < 1e-15
    closure = np.column_stack([a * np.array([-u[1], u[0]]), b * np.array([-u[1], u[0]])])
    assert np.linalg.svd(closure, compute_uv=False)[-1] < 1e-15        # singular input-output map
    sv = np.linalg.svd(constraint_jacobian(s, state), compute_uv=False)
    assert sv[-1] / sv[0] > 1e-2, f"Phi_q nearly rank-deficient: sigma_min / sigma_max = {sv[-1] / sv[0]:.1e}"
    cond = np.linalg.cond(reaction_equations(s, state, 0.0, 1e-3).matrix)
    assert cond < 1e3, f"reaction matrix condition number {cond:.1e} at the toggle"
    h = integrate_taylor(s, 1e-3, 0.1)                                 # through the toggle
    assert h.position_residual.max() < 1e-6 and h.condition_number.max() < 1e3


def test_reaction_matrix_is_singular_where_a_self_stress_exists():
    """Huang's Fig. 1(b): a parallelogram four-bar folded flat (all links on one line) can carry a
    tension in all links in equilibrium: Phi_q loses rank, the self-stress Q0 gives Z^T Q0 = 0,
    so G Q0 = 0 for any dt. The integrator refuses with the time and the condition number."""
    a, b = 0.2, 0.5
    omega = 4.0
    s = four_bar(a, b, a, b, np.array([a, 0.0]), np.array([a + b, 0.0]), omega, 0.0, omega)
    state = s.initial_state()
    sv = np.linalg.svd(constraint_jacobian(s, state), compute_uv=False)
    assert sv[-1] / sv[0] < 1e-15
    G = reaction_equations(s, state, 0.0, 1e-3).matrix
    Q0 = np.linalg.svd(G)[2][-1]
    assert np.abs(reaction_wrench_map(s, state) @ Q0).max() < 1e-12   # a self-stress: no body feels it
    with pytest.raises(SingularReactionMatrix, match=r"t = 0\.25 s: the reaction matrix is singular, "
                                                     r"condition number .*'O2', 'A', 'B', 'O4'"):
        solve_reactions(s, reaction_equations(s, state, 0.25, 1e-3), 0.25)


# ---------------------------------------------------------------------- input errors
def test_bad_input_is_reported_with_the_body_or_joint():
    s = TaylorSystem(2)
    s.add_body("rod", 1.0, 0.1, [0.0, 0.0])
    with pytest.raises(ValueError, match=r"joint 'J': body_j = 3 is not a body index"):
        s.add_joint("revolute", None, 3, at=[0.0, 0.0], name="J")
    with pytest.raises(ValueError, match=r"joint 'C': kind 'cylindrical' is not supported in 2D"):
        s.add_joint("cylindrical", None, 0, at=[0.0, 0.0], name="C")
    with pytest.raises(ValueError, match=r"body 'bad': mass must be positive"):
        s.add_body("bad", 0.0, 0.1, [0.0, 0.0])
    s3 = TaylorSystem(3)
    s3.add_body("box", 1.0, [0.1, 0.1, 0.1], [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"joint 'R': the axis \[0. 0. 0.\] has zero length"):
        s3.add_joint("revolute", None, 0, at=[0.0, 0.0, 0.0], axis=[0.0, 0.0, 0.0], name="R")
    with pytest.raises(ValueError, match=r"joint 'P': a motor needs a revolute joint"):
        s3.add_joint("prismatic", None, 0, at=[0.0, 0.0, 0.0], axis=[0, 0, 1], motor=lambda t: 1.0, name="P")
    with pytest.raises(ValueError, match=r"body 'flat': inertia must be symmetric positive definite"):
        s3.add_body("flat", 1.0, [0.1, 0.1, 0.0], [0.0, 0.0, 0.0])


def test_a_refused_step_keeps_the_states_computed_before_it():
    """A singular (here: above max_condition) reaction matrix ends the run with the history up to
    the failing step attached to the exception, nothing lost."""
    s = TaylorSystem(2, gravity=[0.0, -9.81])
    half, theta = 0.61, (0.5, -0.5)
    along = [np.array([np.sin(t), -np.cos(t)]) for t in theta]
    link1 = s.add_body("link 1", 14.59, 1.36, half * along[0], theta[0] - np.pi / 2)
    link2 = s.add_body("link 2", 14.59, 1.36, 2 * half * along[0] + half * along[1], theta[1] - np.pi / 2)
    s.add_joint("revolute", None, link1, at=[0.0, 0.0], name="pivot")
    s.add_joint("revolute", link1, link2, at=2 * half * along[0], name="elbow")
    # cond G grows from about 14 at the start to 29.8 at the alignment (t = 0.29 s)
    with pytest.raises(SingularReactionMatrix, match=r"condition number .* > 2\.5e\+01") as info:
        integrate_taylor(s, 1e-3, 0.5, max_condition=25.0)
    history = info.value.history
    assert history is not None and 0.1 < history.t[-1] < 0.29
    assert history.n_steps == len(history.t) - 1 and history.condition_number.max() <= 25.0
