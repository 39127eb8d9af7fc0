"""User forces (:mod:`flexmb.elements.user_force`, ``Model.add_user_force``): tangents against
finite differences, equivalence with add_spring and add_damper, energy bookkeeping of a
nonlinear drag, statics with a position-dependent load, and the errors of broken functions."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.checks import ModelError, UserFunctionError
from flexmb.elements.user_force import UserForce

A, C, K = 3.0, 0.7, 5.0      # cubic stiffness (N/m^3), quadratic drag (N s^2/m^2), coupling (N/m)


def _nonlinear(t: float, x: np.ndarray, v: np.ndarray) -> np.ndarray:
    """A cubic spring of each point to the origin, a quadratic drag and a linear coupling of the points."""
    r = np.linalg.norm(x, axis=1, keepdims=True)
    speed = np.linalg.norm(v, axis=1, keepdims=True)
    coupling = K * (x[::-1] - x)
    return -A * r**2 * x - C * speed * v + coupling


def _nonlinear_jacobian(t: float, x: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n, d = x.shape
    dx, dv = np.zeros((n * d, n * d)), np.zeros((n * d, n * d))
    eye = np.eye(d)
    for i in range(n):
        s = slice(i * d, (i + 1) * d)
        r2, speed = x[i] @ x[i], np.linalg.norm(v[i])
        dx[s, s] = -A * (r2 * eye + 2.0 * np.outer(x[i], x[i])) - K * eye
        dx[s, slice((n - 1 - i) * d, (n - i) * d)] += K * eye
        dv[s, s] = -C * (speed * eye + (np.outer(v[i], v[i]) / speed if speed > 0 else 0.0))
    return dx, dv


def _fd(fun, u: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central-difference Jacobian (1, ne, ne) of fun(u) (1, ne)."""
    out = np.zeros((1, u.shape[1], u.shape[1]))
    for j in range(u.shape[1]):
        du = np.zeros_like(u)
        du[0, j] = h
        out[0, :, j] = (fun(u + du) - fun(u - du))[0] / (2.0 * h)
    return out


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("given", [True, False], ids=["user jacobian", "finite-difference jacobian"])
def test_tangents_match_finite_differences(dim, given):
    rng = np.random.default_rng(dim)
    g = UserForce([0, 1], dim, _nonlinear, _nonlinear_jacobian if given else None, 1.0, "test")
    X = rng.uniform(-1.0, 1.0, (1, 2, dim))
    u0, u1, v = (0.3 * rng.normal(size=(1, g.ndof)) for _ in range(3))
    dt = 0.05
    if not given:   # the built-in central differences against the analytic derivatives
        x, vel = X[0] + u1[0].reshape(2, dim), v[0].reshape(2, dim)
        for mine, exact in zip(g.derivatives(x, vel), _nonlinear_jacobian(0.0, x, vel)):
            assert _relative(mine, exact) < 1e-6
    statics = _fd(lambda u: g.internal_force(X, u), u1)
    assert _relative(g.force_and_tangent(X, u1)[1], statics) < 1e-6
    mid = _fd(lambda u: g.mid_point_damping(X, u0, u, dt, False)[0], u1)
    assert _relative(g.mid_point_damping(X, u0, u1, dt, True)[1], mid) < 1e-6
    dv_du = 2.0 / dt        # Newmark-like: the velocity moves with u
    end = _fd(lambda u: g.damping_force(X, u, v + dv_du * (u - u1), dv_du, False)[0], u1)
    assert _relative(g.damping_force(X, u1, v, dv_du, True)[1], end) < 1e-6


def test_mid_point_work_is_booked_exactly():
    """q_d . d = -F(x_m, v_m) . (x1 - x0): the booked dissipation is minus the user force's work."""
    rng = np.random.default_rng(5)
    g = UserForce([0, 1], 2, _nonlinear, None, 1.0, "test")
    X = rng.uniform(-1.0, 1.0, (1, 2, 2))
    u0, u1 = rng.normal(size=(1, 4)), rng.normal(size=(1, 4))
    dt = 0.1
    x_m = X[0] + 0.5 * (u0 + u1)[0].reshape(2, 2)
    work = float(np.sum(_nonlinear(0.0, x_m, (u1 - u0)[0].reshape(2, 2) / dt) * (u1 - u0)[0].reshape(2, 2)))
    assert abs(float(g.mid_point_damping(X, u0, u1, dt, False)[0][0] @ (u1 - u0)[0]) + work) < 1e-13 * abs(work)


def _two_bodies(user: bool) -> fm.Model:
    """Two free 3D rigid bodies under gravity, joined by a zero-rest-length spring (k = 50 N/m) and
    one tied by another to a fixed point: as add_spring or as the user force F = -k (x - anchor)."""
    k, anchor = 50.0, np.array([0.2, 0.1, 0.0])
    m = fm.Model(dim=3)
    b1 = m.add_rigid_body([0.0, 0.0, 0.0], 1.0, [0.1, 0.2, 0.15])
    b2 = m.add_rigid_body([1.0, 0.2, 0.0], 2.0, [0.2, 0.1, 0.25])
    if user:
        m.add_user_force([b1, b2], lambda t, x, v: np.array([k * (x[1] - x[0]), -k * (x[1] - x[0])]), name="coupling")
        m.add_user_force([b1], lambda t, x, v: -k * (x - anchor))
    else:
        m.add_spring(b1, b2, k=k, rest_length=0.0)
        m.add_spring(None, b1, k=k, rest_length=0.0, at_a=anchor)
    m.set_gravity([0.0, 0.0, -9.81])
    return m


def test_linear_user_spring_moves_as_add_spring_and_keeps_the_balance():
    """A zero-rest-length spring is linear in x, so its energy-consistent mid-point force equals
    F(x_m): the same motion to 1e-10 m; the user force's work is booked, K + V + D - W constant."""
    runs = []
    for user in (False, True):
        asm = fm.Assembly(_two_bodies(user))
        v0 = np.random.default_rng(0).normal(size=asm.n_dof)
        runs.append(fm.integrate(asm, dt=0.05, t_end=2.0, v0=v0))
    assert np.abs(np.array(runs[0].u) - np.array(runs[1].u)).max() < 1e-10
    assert runs[1].energy_error().max() < 1e-8
    # what the springs store, the user forces book as (negative) dissipation
    stored = np.array(runs[0].strain) - runs[0].strain[0]
    assert np.abs(runs[1].dissipated - stored).max() < 1e-8 * np.abs(stored).max()
    assert np.abs(stored).max() > 0.1 * runs[0].kinetic[0], "the springs were hardly stretched"


def _oscillator(user_damper: bool, c: float = 0.8) -> fm.Model:
    """A 2 kg mass sliding along x on a spring (k = 100 N/m) with a damper to the wall at x = 0."""
    m = fm.Model(dim=2)
    n = m.add_node([1.0, 0.0])
    m.add_point_mass(n, 2.0)
    m.fix(n, "uy")
    m.add_spring(None, n, k=100.0, at_a=[0.0, 0.0])
    if user_damper:
        m.add_user_force([n], lambda t, x, v: -c * v, jacobian=lambda t, x, v: (np.zeros((2, 2)), -c * np.eye(2)))
    else:
        m.add_damper(None, n, c=c, at_a=[0.0, 0.0])
    return m


@pytest.mark.parametrize("scheme", ["mid-point", "newmark"])
def test_user_damper_matches_add_damper(scheme):
    runs = [fm.integrate(fm.Assembly(_oscillator(user)), dt=0.01, t_end=2.0, v0=np.array([1.5, 0.0]), scheme=scheme)
            for user in (False, True)]
    assert np.abs(np.array(runs[0].u) - np.array(runs[1].u)).max() < 1e-10
    D = [r.dissipated for r in runs]
    assert np.abs(D[0] - D[1]).max() < 1e-10 * D[0][-1]
    assert D[0][-1] > 0.3 * runs[0].kinetic[0], "the damper hardly dissipated"


def test_quadratic_drag_on_a_pendulum_dissipates_monotonically():
    """A 2D rigid pendulum under gravity with an aerodynamic-like drag F = -c |v| v at its centre:
    the booked dissipation grows at every step and closes the balance K + V + D = const."""
    c = 0.5
    m = fm.Model(dim=2)
    body = m.add_rigid_body([0.0, -1.0], 1.0, 0.05)
    m.add_joint("revolute", None, body, at=[0.0, 0.0])
    m.set_gravity([0.0, -9.81])
    m.add_user_force([body], lambda t, x, v: -c * np.linalg.norm(v, axis=1, keepdims=True) * v, name="drag")
    asm = fm.Assembly(m)
    v0 = np.zeros(asm.n_dof)
    v0[asm.dofs.translations()[body.node][0]] = 4.0
    v0[asm.dofs.first[body.node] + 2] = 4.0      # omega = v / r, consistent with the hinge
    history = fm.integrate(asm, dt=0.01, t_end=3.0, v0=v0)
    # K + V (gravity is booked as the work W of the loads): the drag's mid-point dissipation per step,
    # c |v_m|^3 dt, is >= 0 exactly; K + V follows it to the Newton tolerance (measured 4e-13 J)
    mechanical = np.array(history.kinetic) + np.array(history.strain) - np.array(history.work)
    D = history.dissipated
    assert np.all(np.diff(D) >= 0.0)
    assert np.all(np.diff(mechanical) < 1e-9 * mechanical[0])
    assert abs(D[-1] - (mechanical[0] - mechanical[-1])) < 1e-8 * mechanical[0]
    assert D[-1] > 0.5 * mechanical[0], "the drag hardly dissipated"       # measured 0.90
    assert history.energy_error().max() < 1e-8


def test_statics_tip_force_normal_to_the_chord_converges():
    """A cantilever (2D beam, L = 1 m, EI = 10 N m^2) under a dead tip load W = 2 N (-y, scaled by
    the load factor) and a user tip force of P = 6 N normal to the root-to-tip chord (a
    follower-like load given as a function of the tip position; not scaled). Check equilibrium:
    the root reaction is minus the tip forces at the converged tip position, and the user and the
    finite-difference Jacobians give the same tip position."""
    P, W, L, EI = 6.0, 2.0, 1.0, 10.0

    def normal(t, x, v):
        return P * np.array([[-x[0, 1], x[0, 0]]]) / np.linalg.norm(x[0])

    def normal_jacobian(t, x, v):
        r = np.linalg.norm(x[0])
        J = np.array([[0.0, -1.0], [1.0, 0.0]])
        return P * (J / r - np.outer(J @ x[0], x[0]) / r**3), np.zeros((2, 2))

    tips = []
    for jac in (normal_jacobian, None):
        m = fm.Model(dim=2)
        nodes = m.add_nodes(np.column_stack([np.linspace(0.0, L, 9), np.zeros(9)]))
        m.add_beam2d(np.column_stack([nodes[:-1], nodes[1:]]), EA=1e5, EI=EI)
        m.fix(int(nodes[0]))
        m.add_user_force([int(nodes[-1])], normal, jacobian=jac, name="tip")
        m.add_load(int(nodes[-1]), "uy", -W)
        path = fm.load_control(m, 3)
        ix, iy = path.layout.index(int(nodes[-1]), "ux"), path.layout.index(int(nodes[-1]), "uy")
        tip = np.array([L + path.u[-1][ix], path.u[-1][iy]])
        reaction = np.array([path.reactions[-1][path.layout.index(int(nodes[0]), d)] for d in ("ux", "uy")])
        assert np.abs(reaction + normal(1.0, tip[None], None)[0] + [0.0, -W]).max() < 1e-8 * P
        assert tip[1] > 0.05 * L, "the beam hardly bent"
        tips.append(tip)
    assert np.abs(tips[0] - tips[1]).max() < 1e-8 * L


@pytest.mark.parametrize("force, words", [
    (lambda t, x, v: 1 / 0, ["user force 'bad'", "ZeroDivisionError", "x = "]),
    (lambda t, x, v: np.zeros(3), ["user force 'bad'", "shape (3,)", "(1, 2)"]),
    (lambda t, x, v: np.full_like(x, np.nan) if np.any(v) else np.zeros_like(x), ["user force 'bad'", "non-finite",
                                                                               "v = [[0.5, 0.0]]"]),
])
def test_broken_functions_name_the_user_force(force, words):
    m = fm.Model(dim=2)
    n = m.add_node([1.0, 0.0])
    m.add_point_mass(n, 1.0)
    with pytest.raises(UserFunctionError) as caught:
        m.add_user_force([n], force, name="bad")
        fm.integrate(fm.Assembly(m), dt=0.1, t_end=0.1, v0=np.array([0.5, 0.0]), scheme="newmark")
    for word in words:
        assert word in str(caught.value), str(caught.value)


def test_bad_input_names_the_item():
    m = fm.Model(dim=2)
    n = m.add_node([1.0, 0.0])
    with pytest.raises(ModelError, match="user force 'u'.*functions"):
        m.add_user_force([n], 3.0, name="u")
    with pytest.raises(ModelError, match="user force 'u'.*twice"):
        m.add_user_force([n, n], lambda t, x, v: -x, name="u")
    with pytest.raises(ModelError, match="user force 'u'.*node"):
        m.add_user_force([7], lambda t, x, v: -x, name="u")
    with pytest.raises(UserFunctionError, match="jacobian function of user force 'u'.*pair"):
        m.add_user_force([n], lambda t, x, v: -x, jacobian=lambda t, x, v: np.eye(2), name="u")


def test_user_spring_and_damper_in_natural_modes_and_linearize():
    """A 3 kg mass held by the user force F = -diag(300, 75) x - diag(6, 0) v (N): omega = 5 and
    10 rad/s (sqrt(k/m)) from natural_modes; linearize gives zeta = c / (2 sqrt(k m)) along x."""
    k, c = np.diag([300.0, 75.0]), np.diag([6.0, 0.0])
    m = fm.Model(dim=2)
    n = m.add_node([0.0, 0.0])
    m.add_point_mass(n, 3.0)
    m.add_user_force([n], lambda t, x, v: -(x @ k.T) - v @ c.T)
    modes = fm.natural_modes(m, 2)
    assert np.allclose(np.sqrt(modes.eigenvalues), [5.0, 10.0], rtol=1e-8, atol=0), modes.eigenvalues
    modes = fm.linearize(m).eigen()
    zeta = 6.0 / (2 * np.sqrt(300.0 * 3.0))
    assert np.allclose(modes.damping_ratios, [0.0, zeta], rtol=0, atol=1e-8), modes.damping_ratios


def test_time_dependent_user_force_equals_the_same_nodal_load():
    """force(t, x, v) with t: a user force F(t) = 3 sin(5 t) on a mass-spring moves it exactly as the same
    function given to add_load (mid-point: both at t_m, the load averaged over the step's ends differs
    by O(dt^2), so compare Newmark, where both act at t_{n+1}); the time in statics is the load factor."""
    def model(user: bool) -> fm.Model:
        m = fm.Model(dim=2)
        a, b = m.add_nodes([[0.0, 0.0], [1.0, 0.0]])
        m.add_truss([[a, b]], EA=100.0)
        m.add_point_mass(b, 2.0)
        m.fix(a)
        m.fix(b, "uy")
        if user:
            m.add_user_force([b], lambda t, x, v: np.array([[3.0 * np.sin(5.0 * t), 0.0]]))
        else:
            m.add_load(b, "ux", lambda t: 3.0 * np.sin(5.0 * t))
        return m
    runs = [fm.integrate(model(user), dt=0.01, t_end=1.0, scheme="newmark") for user in (True, False)]
    assert np.abs(runs[0].u - runs[1].u).max() < 1e-12 * np.abs(runs[1].u).max() + 1e-15
    assert np.abs(runs[1].u).max() > 1e-3
    path = fm.load_control(model(True), [0.5, 1.0])
    ux = path.u[-1][2]
    assert abs(ux - 3.0 * np.sin(5.0) / 100.0) < 1e-6 * 0.03, ux


def test_statics_with_user_forces_alone_converges():
    """A cantilever loaded only by a user tip force F = (0, -P t), t the load factor: statics converges
    (the user force counts in the force scale) to the small-deflection tip value P L^3 / (3 EI)."""
    P, L, EI = 1e-3, 1.0, 10.0
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.column_stack([np.linspace(0.0, L, 9), np.zeros(9)]))
    m.add_beam2d(np.column_stack([nodes[:-1], nodes[1:]]), EA=1e5, EI=EI)
    m.fix(int(nodes[0]))
    m.add_user_force([int(nodes[-1])], lambda t, x, v: np.array([[0.0, -P * t]]), name="tip")
    path = fm.load_control(m, [0.5, 1.0])
    tip = path.u[-1][path.layout.index(int(nodes[-1]), "uy")]
    assert abs(tip / (-P * L**3 / (3.0 * EI)) - 1.0) < 1e-4, tip
