"""Generalized-alpha and the energy-decaying mid-point schemes (flexmb.integrators.dissipative):
spectral radius at infinity, order of accuracy, energy decay and momenta, joints, tangents, and
the errors they give."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.integrators.dissipative import (AlphaParameters, GeneralizedAlpha, EnergyDecayingMidPoint,
                                            EnergyDecayingVelocityMidPoint, chord_dissipative_force)
from flexmb.integrators.schemes import State
from flexmb.integrators.time_stepping import ALL_SCHEMES

from models import pendulum_chain

LENGTH, MASS = 10.0, 2.0        # m, kg of the oscillator


def oscillator(omega: float) -> fm.Assembly:
    """A mass on a bar along x, moving along it only: a linear 1-DOF oscillator k = omega^2 m
    (the co-rotational bar is exactly linear in its own direction)."""
    m = fm.Model(dim=2)
    a, b = m.add_node([0.0, 0.0]), m.add_node([LENGTH, 0.0])
    m.add_truss([[a, b]], EA=omega**2 * MASS * LENGTH)
    m.add_point_mass(b, MASS)
    m.fix(a)
    m.fix(b, "uy")
    return fm.Assembly(m)


def solve_step(scheme, s: State, dt: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """u, v, a at the end of one step of the scheme's residual, by plain Newton (dense)."""
    asm, free = scheme.asm, scheme.asm.dofs.free
    u1 = s.u.copy()
    for _ in range(3):
        res = scheme.residual(s, dt, u1)
        u1[free] -= np.linalg.solve(asm.free_matrix(res.jacobian_data).toarray(), res.g[free])
    res = scheme.residual(s, dt, u1)
    return u1, res.velocity, res.acceleration


def amplification_matrix(name: str, rho_inf: float, omega_dt: float, dt: float = 0.01) -> np.ndarray:
    """One step's amplification matrix of the oscillator in (u, v dt[, a dt^2]) from unit start
    states (3x3 for generalized-alpha, whose acceleration is a state; 2x2 for the mid-point family)."""
    asm = oscillator(omega_dt / dt)
    scheme = ALL_SCHEMES[name](asm, rho_inf=rho_inf)
    k = asm.dofs.index(1, "ux")
    n = 3 if name == "generalized-alpha" else 2
    A = np.zeros((n, n))
    for j in range(n):
        unit = np.eye(3)[j]
        u, v, a, zero = (np.zeros(asm.n_dof) for _ in range(4))
        u[k], v[k], a[k] = unit[0], unit[1] / dt, unit[2] / dt**2
        u1, v1, a1 = solve_step(scheme, State(0.0, u, v, a, zero, constraint_force=zero.copy()), dt)
        A[:, j] = [u1[k], v1[k] * dt, a1[k] * dt**2][:n]
    return A


#: the eigenvalues of the amplification matrix as omega dt -> infinity: generalized-alpha's three
#: coincide at -rho_inf (Chung & Hulbert 1993, eq. 25); the energy-decaying scheme's displacement
#: mode is at -rho_inf and its velocity-flip mode at -1; with velocity dissipation both at -rho_inf
LIMIT_ROOTS = {"generalized-alpha": lambda r: [-r, -r, -r], "energy-decaying": lambda r: [-r, -1.0],
               "energy-decaying-velocity": lambda r: [-r, -r]}


@pytest.mark.parametrize("name", list(LIMIT_ROOTS))
@pytest.mark.parametrize("rho_inf", [0.0, 0.3, 0.8, 1.0])
def test_spectral_radius_at_infinity_is_rho_inf(name, rho_inf):
    """At omega dt = 1e4 the characteristic polynomial of the measured amplification matrix equals
    the limit polynomial prod (lambda - lambda_i) within 1e-6 (measured <= 1.6e-7, it converges as
    (omega dt)^-2). The polynomial, not the eigenvalues, is compared: generalized-alpha's triple
    root is a Jordan block whose eigenvalues converge only as (omega dt)^(-2/3) (1.7e-3 away at 1e4)
    and cannot be computed closer than eps^(1/3) anyway. The spectral radius at infinity read from
    the trace (the roots' sum) equals rho_inf within 1e-6 as well."""
    A = amplification_matrix(name, rho_inf, 1e4)
    roots = LIMIT_ROOTS[name](rho_inf)
    coefficients = np.poly(A)
    miss = np.abs(coefficients - np.poly(roots)).max()
    assert miss < 1e-6, f"{name} rho_inf={rho_inf}: characteristic polynomial off the limit by {miss:.2e}"
    others = sum(roots) + rho_inf                     # the roots other than the first -rho_inf ...
    measured = -(np.trace(A) - others) if name == "energy-decaying" else -np.trace(A) / len(roots)
    assert abs(measured - rho_inf) < 1e-6, f"{name}: rho_inf measured {measured:.9f}, asked {rho_inf}"


def test_generalized_alpha_parameters():
    """Chung & Hulbert 1993, eq. 25: rho_inf = 1 is the trapezoidal rule, rho_inf = 0.5 gives
    alpha_m = 0, alpha_f = 1/3, gamma = 5/6, beta = 4/9."""
    p = AlphaParameters.from_rho_inf(1.0)
    assert (p.alpha_m, p.alpha_f, p.gamma, p.beta) == (0.5, 0.5, 0.5, 0.25)
    p = AlphaParameters.from_rho_inf(0.5)
    assert np.allclose([p.alpha_m, p.alpha_f, p.gamma, p.beta], [0.0, 1 / 3, 5 / 6, 4 / 9], rtol=0, atol=1e-15)


def oscillator_errors(name: str, rho_inf: float, steps: list[int]) -> np.ndarray:
    """Largest |u - u_exact| over one period of the oscillator (omega = 2 pi) started at 0.1 m."""
    asm = oscillator(2.0 * np.pi)
    k = asm.dofs.index(1, "ux")
    u0 = np.zeros(asm.n_dof)
    u0[k] = 0.1
    errors = []
    for n in steps:
        h = fm.integrate(asm, 1.0 / n, 1.0, scheme=name, rho_inf=rho_inf, u0=u0)
        errors.append(np.abs(h.dof(1, "ux") - 0.1 * np.cos(2.0 * np.pi * np.asarray(h.t))).max())
    return np.array(errors)


@pytest.mark.parametrize("name, rho_inf, order", [("generalized-alpha", 0.0, 2), ("generalized-alpha", 0.6, 2),
                                                  ("energy-decaying", 0.6, 1), ("energy-decaying-velocity", 0.6, 1)])
def test_order_of_accuracy(name, rho_inf, order):
    """Error over a period at 40-320 steps: slope of log(error) vs log(dt) fitted (generalized-alpha
    second order for every rho_inf, Chung & Hulbert 1993 eq. 17; the energy-decaying schemes first
    order, their dissipation O(dt)); within 0.15 of the order (measured 1.98, 2.00, 0.99, 0.97)."""
    steps = [40, 80, 160, 320]
    errors = oscillator_errors(name, rho_inf, steps)
    slope = np.polyfit(np.log(1.0 / np.array(steps)), np.log(errors), 1)[0]
    assert abs(slope - order) < 0.15, f"{name} rho_inf={rho_inf}: order {slope:.3f}, expected {order}"


def test_generalized_alpha_second_order_on_a_nonlinear_pendulum():
    """A two-bar pendulum (EA = 1e4 N: axial vibration resolved) falling from the horizontal: the
    tip at t = 0.5 s against the mid-point scheme at dt = 0.4 ms converges at order 2 (fitted over
    dt = 4, 2, 1 ms; measured 2.03) for rho_inf = 0.5."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    m.add_truss(np.c_[nodes[:-1], nodes[1:]], EA=1e4)
    for node in nodes[1:]:
        m.add_point_mass(node, 1.0)
    m.fix(nodes[0])
    m.set_gravity([0.0, -9.81])
    asm = fm.Assembly(m)
    reference = fm.integrate(asm, 4e-4, 0.5)
    tip = lambda h: np.array([h.dof(2, "ux")[-1], h.dof(2, "uy")[-1]])          # noqa: E731
    steps = np.array([0.004, 0.002, 0.001])
    errors = [np.linalg.norm(tip(fm.integrate(asm, dt, 0.5, scheme="generalized-alpha", rho_inf=0.5)) - tip(reference))
              for dt in steps]
    slope = np.polyfit(np.log(steps), np.log(errors), 1)[0]
    assert abs(slope - 2.0) < 0.15, f"generalized-alpha on the pendulum: order {slope:.3f}"


def test_rho_inf_one_reproduces_the_undamped_schemes():
    """rho_inf = 1: the energy-decaying scheme is the mid-point scheme (same steps to 1e-12 of
    the chain's size) and generalized-alpha on a linear model is trapezoidal Newmark."""
    asm = pendulum_chain(3)
    a = fm.integrate(asm, 0.01, 0.3)
    b = fm.integrate(asm, 0.01, 0.3, scheme="energy-decaying", rho_inf=1.0)
    assert np.abs(np.array(a.u) - np.array(b.u)).max() < 1e-12 * 3.0
    osc = oscillator(2.0 * np.pi)
    u0 = np.zeros(osc.n_dof)
    u0[osc.dofs.index(1, "ux")] = 0.1
    a = fm.integrate(osc, 0.05, 1.0, scheme="newmark", u0=u0)
    b = fm.integrate(osc, 0.05, 1.0, scheme="generalized-alpha", rho_inf=1.0, u0=u0)
    assert np.abs(np.array(a.u) - np.array(b.u)).max() < 1e-12


@pytest.mark.parametrize("name", ["energy-decaying", "energy-decaying-velocity"])
def test_energy_decays_monotonically_by_the_dissipation_identity(name):
    """Pendulum chain (3 stiff bars, gravity), its tip pulled outwards at 1 m/s (axial vibration),
    dt = 10 ms over the axial period: every step E_{n+1} - E_n = -(chi dv^T M dv
    + sum xi (N_{n+1} - N_n)(l_{n+1} - l_n)) to 1e-8 of the largest kinetic energy
    (E = K + Phi - work of gravity), so E never rises; it falls in total."""
    asm = pendulum_chain(3)
    v0 = np.zeros(asm.n_dof)
    v0[asm.dofs.index(3, "ux")] = 1.0
    h = fm.integrate(asm, 0.01, 1.5, scheme=name, rho_inf=0.3, v0=v0)
    scheme = ALL_SCHEMES[name](asm, rho_inf=0.3)
    E, scale = h.total, max(h.kinetic)
    N = h.element("links", "N")                                    # (n_out, n_el), N
    length = 1.0 + np.asarray(h.element("links", "axial_strain"))  # (n_out, n_el), m (l0 = 1 m)
    dv = np.diff(np.array(h.v), axis=0)
    kinematic = scheme.chi * np.einsum("ki,ki->k", dv, np.array([asm.mass_times(x) for x in dv]))
    strain = scheme.xi * (np.diff(N, axis=0) * np.diff(length, axis=0)).sum(axis=1)
    miss = np.abs(np.diff(E) + kinematic + strain).max() / scale
    assert miss < 1e-8, f"{name}: dissipation identity missed by {miss:.2e} of K_max"
    rise = np.diff(E).max() / scale
    assert rise < 1e-9, f"{name}: the energy rose by {rise:.2e} of K_max in a step"
    assert E[-1] < E[0] - 1e-3 * scale, f"{name}: energy fell by {(E[0] - E[-1]) / scale:.2e} of K_max only"


def free_chain(dim: int) -> tuple[fm.Assembly, np.ndarray]:
    """Three stiff bars in a zig-zag (2D or 3D), free, thrown spinning (no gravity)."""
    m = fm.Model(dim=dim)
    X = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.2], [1.5, 0.8, -0.1], [2.5, 0.6, 0.4]])[:, :dim]
    nodes = m.add_nodes(X)
    m.add_truss(np.c_[nodes[:-1], nodes[1:]], EA=1e6, name="links")
    for node, mass in zip(nodes, (1.0, 2.0, 1.5, 1.0)):
        m.add_point_mass(node, mass)
    asm = fm.Assembly(m)
    w = np.array([0.5, -1.0, 3.0]) if dim == 3 else np.array([0.0, 0.0, 3.0])
    v = np.cross(w, np.c_[X - X.mean(0), np.zeros((4, 3 - dim))])[:, :dim] + [0.5, -0.2, 0.1][:dim]  # spin, drift
    v[1] += [0.0, 2.0, -1.0][:dim]                                      # and a kick: the bars vibrate
    v0 = np.zeros(asm.n_dof)
    v0[asm.dofs.translations()] = v
    return asm, v0


@pytest.mark.parametrize("dim", [2, 3])
def test_energy_decaying_conserves_momenta(dim):
    """Free spinning chain at dt = 0.05 s: the energy-decaying scheme keeps linear and angular
    momentum to 1e-10 (relative; measured 1e-14 and 1e-11) while it removes energy (the bars'
    dissipative forces lie along their mid-point chords); with velocity dissipation the linear
    momentum is kept, angular momentum changes (by 20 % here, rho_inf = 0), as its docstring
    says."""
    asm, v0 = free_chain(dim)
    for name in ("energy-decaying", "energy-decaying-velocity"):
        h = fm.integrate(asm, 0.05, 2.0, scheme=name, rho_inf=0.0, v0=v0)
        P = np.array([asm.mass_times(v).reshape(-1, dim).sum(axis=0) for v in h.v])
        p_miss = np.abs(P - P[0]).max() / np.linalg.norm(P[0])
        assert p_miss < 1e-10, f"{name}: linear momentum changed by {p_miss:.2e}"
        assert h.total[-1] < h.total[0] - 1e-3 * h.kinetic[0]
        if name == "energy-decaying":
            L_miss = h.angular_momentum_error().max()
            assert L_miss < 1e-10, f"{name}: angular momentum changed by {L_miss:.2e}"


def revolute_pendulum() -> fm.Assembly:
    """Two stiff bars hinged to the ground by a revolute joint at their first node (1 kg there)
    and carrying 1 kg at each further node, released horizontal under gravity."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    m.add_truss(np.c_[nodes[:-1], nodes[1:]], EA=1e6, name="links")
    for node in nodes:
        m.add_point_mass(node, 1.0)
    m.add_joint("revolute", None, nodes[0])
    m.set_gravity([0.0, -9.81])
    return fm.Assembly(m)


@pytest.mark.parametrize("name", ["generalized-alpha", "energy-decaying"])
def test_constrained_pendulum_runs(name):
    """A pendulum held by a revolute joint: the joint holds to 1e-9 m every step; the tip after
    1 s is within 1 % of the length of the mid-point scheme's at the same step; the
    energy-decaying scheme's energy never rises (the joint does no work), generalized-alpha's
    stays within 1 % of the largest kinetic energy."""
    asm = revolute_pendulum()
    reference = fm.integrate(asm, 0.005, 1.0)
    h = fm.integrate(asm, 0.005, 1.0, scheme=name, rho_inf=0.5)
    assert np.max(h.constraint_residual) < 1e-9
    tip = np.array([h.dof(2, "ux")[-1], h.dof(2, "uy")[-1]])
    tip_ref = np.array([reference.dof(2, "ux")[-1], reference.dof(2, "uy")[-1]])
    assert np.linalg.norm(tip - tip_ref) < 0.01 * 2.0
    scale = max(h.kinetic)
    if name == "energy-decaying":
        assert np.diff(h.total).max() < 1e-9 * scale
    else:
        assert np.abs(h.total - h.total[0]).max() < 0.01 * scale


def finite_difference_jacobian(scheme, s: State, dt: float, u1: np.ndarray, h: float = 1e-6) -> np.ndarray:
    free = scheme.asm.dofs.free
    J = np.zeros((free.size, free.size))
    for j, dof in enumerate(free):
        plus, minus = u1.copy(), u1.copy()
        plus[dof] += h
        minus[dof] -= h
        J[:, j] = (scheme.residual(s, dt, plus, False).g[free] - scheme.residual(s, dt, minus, False).g[free]) / (2 * h)
    return J


def random_state(asm: fm.Assembly, rng: np.random.Generator, size: float) -> State:
    n = asm.n_dof
    u, v, a = (rng.normal(0.0, size, n) for _ in range(3))
    for x in (u, v, a):
        x[asm.dofs.prescribed] = 0.0
    return State(0.0, u, v, a, np.zeros(n), constraint_force=np.zeros(n))


@pytest.mark.parametrize("name", list(LIMIT_ROOTS))
def test_scheme_jacobians_match_finite_differences(name):
    """dg/du1 of each scheme on a loaded truss (random states) against central differences,
    relative error < 1e-6."""
    from models import truss_bays

    model, bottom, top = truss_bays(3, EA=1e5, rho_A=2.0)
    model.fix(bottom[0])
    model.fix(top[0])
    model.set_gravity([0.0, -9.81])
    asm = fm.Assembly(model)
    rng = np.random.default_rng(3)
    scheme = ALL_SCHEMES[name](asm, rho_inf=0.4)
    s = random_state(asm, rng, 0.05)
    u1 = s.u + rng.normal(0.0, 0.05, asm.n_dof) * (np.isin(np.arange(asm.n_dof), asm.dofs.free))
    J = asm.free_matrix(scheme.residual(s, 0.01, u1).jacobian_data).toarray()
    J_fd = finite_difference_jacobian(scheme, s, 0.01, u1)
    error = np.abs(J - J_fd).max() / np.abs(J).max()
    assert error < 1e-6, f"{name}: Jacobian off finite differences by {error:.2e}"


def test_generalized_alpha_jacobian_with_cubic_mass():
    """Generalized-alpha with configuration-dependent (cubic) beam masses under gravity (whose
    weight turns with the nodes, a configuration-dependent load): dg/du1 against central
    differences, relative error < 1e-6."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 4), np.zeros(4)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e5, EI=50.0, rho_A=2.0, mass="cubic")
    m.fix(nodes[0])
    m.set_gravity([0.0, -9.81])
    asm = fm.Assembly(m)
    scheme = GeneralizedAlpha(asm, rho_inf=0.6)
    rng = np.random.default_rng(5)
    s = random_state(asm, rng, 0.05)
    u1 = s.u + np.where(np.isin(np.arange(asm.n_dof), asm.dofs.free), rng.normal(0.0, 0.05, asm.n_dof), 0.0)
    J = asm.free_matrix(scheme.residual(s, 0.01, u1).jacobian_data).toarray()
    error = np.abs(J - finite_difference_jacobian(scheme, s, 0.01, u1)).max() / np.abs(J).max()
    assert error < 1e-6, f"cubic mass: Jacobian off finite differences by {error:.2e}"


def beam_frame() -> fm.Assembly:
    """An L-shaped frame of four Beam2D elements (lumped mass) swinging from a pin at one end
    under gravity, stiff axially (EA / EI = 1e4 / m^2)."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes([[0.0, 0.0], [0.5, 0.0], [1.0, 0.0], [1.0, -0.5], [1.0, -1.0]])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=100.0, rho_A=2.0, rho_I=1e-3, name="frame")
    m.fix(nodes[0], ["ux", "uy"])
    m.set_gravity([0.0, -9.81])
    return fm.Assembly(m)


def test_energy_decaying_planar_beams():
    """Beam2D frame swinging from a pin, dt = 5 ms (over its axial period): every step
    E_{n+1} - E_n = -sum xi EA/l0 (l_{n+1} - l_n)^2 to 1e-8 of the largest kinetic energy; the
    scheme's Jacobian against central differences (< 1e-6)."""
    asm = beam_frame()
    h = fm.integrate(asm, 0.005, 0.5, scheme="energy-decaying", rho_inf=0.2)
    scheme = EnergyDecayingMidPoint(asm, rho_inf=0.2)
    length = 0.5 * (1.0 + np.asarray(h.element("frame", "axial_strain")))      # (n_out, n_el), m
    loss = scheme.xi * 1e6 / 0.5 * (np.diff(length, axis=0) ** 2).sum(axis=1)
    E, scale = h.total, max(h.kinetic)
    miss = np.abs(np.diff(E) + loss).max() / scale
    assert miss < 1e-8, f"planar beams: dissipation identity missed by {miss:.2e} of K_max"
    assert np.diff(E).max() < 1e-9 * scale
    rng = np.random.default_rng(11)
    s = random_state(asm, rng, 0.02)
    u1 = s.u + np.where(np.isin(np.arange(asm.n_dof), asm.dofs.free), rng.normal(0.0, 0.02, asm.n_dof), 0.0)
    J = asm.free_matrix(scheme.residual(s, 0.005, u1).jacobian_data).toarray()
    error = np.abs(J - finite_difference_jacobian(scheme, s, 0.005, u1)).max() / np.abs(J).max()
    assert error < 1e-6, f"planar beams: Jacobian off finite differences by {error:.2e}"


def test_chord_dissipative_force_energy_momentum_and_tangent():
    """q_d . (d1 - d0) = xi (N1 - N0)(l1 - l0) >= 0 to 1e-12, no resultant and no moment about the
    mid-point configuration, tangent against central differences (< 1e-6)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(6, 2, 3))
    EA = rng.uniform(1e3, 1e4, 6)
    u0, u1 = rng.normal(0.0, 0.2, (6, 6)), rng.normal(0.0, 0.2, (6, 6))
    xi = 0.3
    q, K = chord_dissipative_force(X, u0, u1, EA, xi)
    l0 = np.linalg.norm(X[:, 1] - X[:, 0], axis=1)
    length = [np.linalg.norm(X[:, 1] + u[:, 3:] - X[:, 0] - u[:, :3], axis=1) for u in (u0, u1)]
    N = [EA * (l - l0) / l0 for l in length]
    work = np.einsum("ei,ei->e", q, u1 - u0)
    assert np.allclose(work, xi * (N[1] - N[0]) * (length[1] - length[0]), rtol=1e-12, atol=0)
    assert np.all(work >= 0)
    assert np.abs(q[:, :3] + q[:, 3:]).max() < 1e-12 * np.abs(q).max()
    x_mid = X + 0.5 * (u0 + u1).reshape(6, 2, 3)
    moment = np.cross(x_mid[:, 0], q[:, :3]) + np.cross(x_mid[:, 1], q[:, 3:])
    assert np.abs(moment).max() < 1e-12 * np.abs(q).max() * np.abs(x_mid).max()
    h = 1e-6
    K_fd = np.zeros_like(K)
    for j in range(6):
        plus, minus = u1.copy(), u1.copy()
        plus[:, j] += h
        minus[:, j] -= h
        K_fd[:, :, j] = (chord_dissipative_force(X, u0, plus, EA, xi, False)[0]
                         - chord_dissipative_force(X, u0, minus, EA, xi, False)[0]) / (2 * h)
    assert np.abs(K - K_fd).max() / np.abs(K).max() < 1e-6


@pytest.mark.parametrize("name", ["generalized-alpha", "energy-decaying"])
def test_restart_continues_the_run(tmp_path, name):
    """A run stopped and restarted from its file equals the uninterrupted one to 1e-12 m (the
    state holds everything the schemes need: u, v, a, reactions), and keeps its rho_inf; another
    rho_inf is refused."""
    asm = pendulum_chain(3)
    whole = fm.integrate(asm, 0.01, 0.2, scheme=name, rho_inf=0.3)
    fm.integrate(asm, 0.01, 0.1, scheme=name, rho_inf=0.3, save_to=tmp_path / "run.h5")
    continued = fm.integrate(asm, 0.01, 0.2, scheme=name, restart_from=tmp_path / "run.h5")
    assert continued.meta["rho_inf"] == 0.3
    assert np.abs(np.array(continued.u)[-1] - np.array(whole.u)[-1]).max() < 1e-12
    with pytest.raises(fm.ModelError, match="rho_inf = 0.3"):
        fm.integrate(asm, 0.01, 0.3, scheme=name, rho_inf=0.5, restart_from=tmp_path / "run.h5")


def test_bad_input_names_the_scheme_and_value():
    asm = pendulum_chain(2)
    with pytest.raises(fm.ModelError, match=r"'generalized-alpha'.*rho_inf must lie in \[0, 1\].*1.5"):
        fm.integrate(asm, 0.01, 0.1, scheme="generalized-alpha", rho_inf=1.5)
    with pytest.raises(fm.ModelError, match=r"'energy-decaying'.*number in \[0, 1\].*'high'"):
        fm.integrate(asm, 0.01, 0.1, scheme="energy-decaying", rho_inf="high")
    with pytest.raises(fm.ModelError, match="rho_inf = 0.5 is a parameter of generalized-alpha"):
        fm.integrate(asm, 0.01, 0.1, scheme="mid-point", rho_inf=0.5)
    with pytest.raises(fm.ModelError, match="unknown scheme 'alpha'.*generalized-alpha"):
        fm.integrate(asm, 0.01, 0.1, scheme="alpha")
    beam = fm.Model(dim=2)
    n = beam.add_nodes([[0.0, 0.0], [1.0, 0.0]])
    beam.add_beam2d([n], EA=1e5, EI=10.0, rho_A=1.0, mass="cubic", name="arm")
    beam.fix(n[0])
    with pytest.raises(fm.ModelError, match="'energy-decaying-velocity'.*group 'arm' has a configuration-dependent"):
        EnergyDecayingVelocityMidPoint(fm.Assembly(beam))
    spatial = fm.Model(dim=3)
    n = spatial.add_nodes([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    spatial.add_beam3d([n], EA=1e5, GJ=10.0, EI_y=10.0, EI_z=10.0, rho_A=1.0, rho_I=(1e-3, 1e-3, 1e-3),
                       name="shaft")
    spatial.fix(n[0])
    with pytest.raises(fm.ModelError, match="'energy-decaying-velocity'.*spatial \\(3D\\) rotations are not "
                                            "supported.*node 0"):
        EnergyDecayingVelocityMidPoint(fm.Assembly(spatial))
    sprung = fm.Model(dim=2)
    n = sprung.add_nodes([[0.0, 0.0], [1.0, 0.0]])
    sprung.add_spring(n[0], n[1], k=1e3)
    sprung.add_point_mass(n[1], 1.0)
    sprung.fix(n[0])
    EnergyDecayingMidPoint(fm.Assembly(sprung))             # taken, without numerical dissipation of the spring
    with pytest.raises(fm.ModelError, match="'energy-decaying-velocity'.*element group 'springs' is a "
                                            "PointSpringDamper.*Truss and Beam2D groups only"):
        EnergyDecayingVelocityMidPoint(fm.Assembly(sprung))
