"""Rayleigh damping on every element type (issue 29): the beta part on the deformation rates of
Truss (2D, 3D), Beam2D (plain, second_order, every mass), Beam3D and Shell3, and the alpha part
with the cubic mass, in the mid-point and end-point forms.

Kernels: tangents against finite differences (spins and Cayley increments at 3D rotations), zero
force for rigid motion at a moved configuration, beta K_0 v about the undeformed state, positive
mid-point dissipation, the exact dissipation of the cubic alpha part. Dynamics (mid-point,
Newmark, generalized-alpha): logarithmic decrement of a cantilever's first mode
against zeta = alpha / (2 omega) + beta omega / 2, the energy balance with the booked dissipated
energy, and linear and angular momentum of a free, spinning, vibrating structure.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.elements.beam2d import Beam2D
from flexmb.elements.beam3d import Beam3D
from flexmb.elements.rayleigh import RayleighDamping
from flexmb.elements.shell3 import Shell3
from flexmb.elements.truss import Truss
from flexmb.rotations import cayley_between, cayley_compose, compose, exp_map, skew

N_EL = 5
BETA = 0.02
KINDS = ["truss2d", "truss3d", "beam2d", "beam2d_second_order", "beam2d_cubic", "beam3d", "beam3d_first_order",
         "shell3"]


def _group(kind: str, rng: np.random.Generator, alpha: float = 0.0):
    dim = 2 if kind == "truss2d" or kind.startswith("beam2d") else 3
    X = np.stack([rng.uniform(-1, 1, (N_EL, dim)), rng.uniform(-1, 1, (N_EL, dim)) + np.eye(dim)[0] * 2.0], axis=1)
    EA = rng.uniform(100, 300, N_EL)
    if kind == "shell3":
        corner = rng.uniform(-1, 1, (N_EL, 1, 3))
        X = corner + np.eye(3)[None] * [[0.0], [1.0], [1.0]] + 0.2 * rng.uniform(-1, 1, (N_EL, 3, 3))
        g = Shell3(np.zeros((N_EL, 3), int), E=rng.uniform(1e3, 3e3, N_EL), nu=0.3, thickness=0.1, rho=10.0)
    elif kind.startswith("truss"):
        g = Truss(np.zeros((N_EL, 2), int), dim, EA=EA, rho_A=1.0)
    elif kind.startswith("beam2d"):
        g = Beam2D(np.zeros((N_EL, 2), int), EA=EA, EI=rng.uniform(1, 3, N_EL), rho_A=1.0, rho_I=0.01,
                   mass="cubic" if kind == "beam2d_cubic" else "consistent",
                   second_order=kind.endswith("second_order"))
    else:
        g = Beam3D(np.zeros((N_EL, 2), int), EA=EA, GJ=rng.uniform(1, 2, N_EL), EI_y=rng.uniform(1, 3, N_EL),
                   EI_z=rng.uniform(1, 3, N_EL), GA_ky=rng.uniform(200, 400, N_EL), rho_A=1.0,
                   second_order=kind == "beam3d")
    g.rayleigh = RayleighDamping(alpha, BETA)
    return g, X


def _spatial(g) -> bool:
    return g.has_rotations and g.dim == 3


def _rotation_slots(g) -> list[slice]:
    return [slice(6 * k + 3, 6 * k + 6) for k in range(g.ndof // 6)] if _spatial(g) else []


def _step(g, u0: np.ndarray, d: np.ndarray) -> np.ndarray:
    """u1 from u0 and the increment d (Cayley parameters at spatial rotations)."""
    u1 = u0 + d
    for s in _rotation_slots(g):
        u1[:, s] = cayley_compose(d[:, s], u0[:, s])
    return u1


def _increment(g, u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
    d = u1 - u0
    for s in _rotation_slots(g):
        d[:, s] = cayley_between(u0[:, s], u1[:, s])
    return d


def _spun(g, u: np.ndarray, du: np.ndarray) -> np.ndarray:
    """u moved by du (spatial spins at 3D rotations)."""
    out = u + du
    for s in _rotation_slots(g):
        out[:, s] = compose(du[:, s], u[:, s])
    return out


def _fd(fun, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    out = np.zeros(x.shape + x.shape[1:])
    for j in range(x.shape[1]):
        e = np.zeros_like(x)
        e[:, j] = h
        out[:, :, j] = (fun(x + e) - fun(x - e)) / (2 * h)
    return out


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


def _state(g, rng: np.random.Generator, size: float) -> np.ndarray:
    return size * rng.normal(size=(N_EL, g.ndof))


@pytest.mark.parametrize("kind", KINDS)
def test_tangents_match_finite_differences(kind):
    rng = np.random.default_rng(11)
    g, X = _group(kind, rng, alpha=0.3)
    u0 = _state(g, rng, 0.2)
    d0 = _state(g, rng, 0.2)
    u1 = _step(g, u0, d0)
    dt = 0.1
    K = g.mid_point_damping(X, u0, u1, dt, True)[1]
    fd = _fd(lambda d: g.mid_point_damping(X, u0, _step(g, u0, d), dt, False)[0], d0)
    assert _relative(K, fd) < 1e-6, f"{kind}: mid-point tangent off by {_relative(K, fd):.2e}"
    v = rng.normal(size=u0.shape)
    for dv_du in (0.0, 3.0):
        K = g.damping_force(X, u0, v, dv_du, True)[1]
        fd = _fd(lambda du: g.damping_force(X, _spun(g, u0, du), v + dv_du * du, 0.0, False)[0], np.zeros_like(u0))
        assert _relative(K, fd) < 1e-6, f"{kind}: end-point tangent (dv/du = {dv_du}) off by {_relative(K, fd):.2e}"


def _rigid(g, X: np.ndarray, u0: np.ndarray, rng: np.random.Generator):
    """u1 after a rigid turn and shift of the configuration u0, and a rigid velocity field
    (spin omega about the origin plus a drift) at u0."""
    n, dim, nodes = X.shape[0], g.dim, X.shape[1]
    per = g.ndof // nodes
    x0 = X + u0.reshape(n, nodes, per)[:, :, :dim]
    if dim == 2:
        angle, spin = 0.7, 1.3
        Q = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
        W = np.array([[0.0, -spin], [spin, 0.0]])
        turn, omega = np.array([angle]), np.array([spin])
    else:
        turn, omega = np.array([0.5, -0.9, 0.4]), np.array([1.1, 0.3, -0.8])
        Q, W = exp_map(turn), skew(omega)
    moved = x0 @ Q.T + rng.normal(size=dim) - X                           # (n, 2, dim)
    vel = x0 @ W.T + rng.normal(size=dim)
    u1 = u0.reshape(n, nodes, per).copy()
    v = np.zeros_like(u1)
    u1[:, :, :dim], v[:, :, :dim] = moved, vel
    if g.has_rotations:
        rot = u0.reshape(n, nodes, per)[:, :, dim:]
        u1[:, :, dim:] = rot + angle if dim == 2 else compose(np.broadcast_to(turn, rot.shape), rot)
        v[:, :, dim:] = omega
    return u1.reshape(n, -1), v.reshape(n, -1)


@pytest.mark.parametrize("offset", [0.0, 1e4])
@pytest.mark.parametrize("kind", KINDS)
def test_beta_part_is_objective_and_is_beta_K0_v_about_the_reference(kind, offset):
    """Also with the elements 1e4 m from the origin, where a rigid turn about the origin moves them
    by ~1e4 m: the floor is then the round-off of those displacements, eps 1e4 per m of element."""
    rng = np.random.default_rng(12)
    g, X = _group(kind, rng)
    X = X + offset
    u0 = _state(g, rng, 0.2)
    u1, v = _rigid(g, X, u0, rng)
    zero = np.zeros_like(u0)
    K0 = g.force_and_tangent(X, zero)[1]
    scale = BETA * float(np.abs(K0).max()) / 0.1                         # N per m of motion
    floor = (1e-12 + 64.0 * np.finfo(float).eps * offset) * scale
    rigid_mid = np.abs(g.mid_point_damping(X, u0, u1, 0.1, False)[0]).max()
    rigid_end = np.abs(g.damping_force(X, u0, v, 0.0, False)[0]).max()
    assert rigid_mid < floor, f"{kind}: mid-point force {rigid_mid:.1e} N in a rigid motion (floor {floor:.1e} N)"
    assert rigid_end < floor, f"{kind}: end-point force {rigid_end:.1e} N in a rigid motion (floor {floor:.1e} N)"
    w = rng.normal(size=u0.shape)
    miss = _relative(g.damping_force(X, zero, w, 0.0, False)[0], BETA * np.einsum("nij,nj->ni", K0, w))
    assert miss < 1e-12, f"{kind}: end-point force differs from beta K0 v by {miss:.1e}"
    # a small mid-point step from the reference: beta K0 d / dt to first order in d
    d = 1e-6 * w
    mid = g.mid_point_damping(X, zero, _step(g, zero, d), 0.1, False)[0]
    miss = _relative(mid, BETA / 0.1 * np.einsum("nij,nj->ni", K0, d))
    assert miss < 1e-5, f"{kind}: mid-point force differs from beta K0 d / dt by {miss:.1e}"


@pytest.mark.parametrize("kind", KINDS)
def test_mid_point_dissipation_is_positive_for_large_steps(kind):
    """q_d . d >= 0 for any step (beta Deps . D Deps / dt with D positive definite)."""
    rng = np.random.default_rng(13)
    g, X = _group(kind, rng, alpha=0.3)
    u0 = _state(g, rng, 0.3)
    u1 = _step(g, u0, _state(g, rng, 0.5))
    dissipated = np.einsum("ni,ni->n", g.mid_point_damping(X, u0, u1, 0.05, False)[0], _increment(g, u0, u1))
    assert np.all(dissipated > 0), f"{kind}: dissipation {dissipated.min():.2e} J < 0"


def test_alpha_with_the_cubic_mass_dissipates_exactly():
    """alpha part of the cubic mass over a large step: q . d = alpha dQ . (rho_A l0 m) dQ / dt in
    the Hermite coordinates Q = [x_p, d_p, x_q, d_q] (directors d = l0 (cos phi, sin phi))."""
    from flexmb.elements.hermite_mass2d import HERMITE
    rng = np.random.default_rng(14)
    g, X = _group("beam2d_cubic", rng)
    alpha, dt = 0.7, 0.05
    g.rayleigh = RayleighDamping(alpha, 0.0)
    u0 = _state(g, rng, 0.3)
    u1 = u0 + _state(g, rng, 0.8)
    l0 = np.linalg.norm(X[:, 1] - X[:, 0], axis=1)
    angle0 = np.arctan2(X[:, 1, 1] - X[:, 0, 1], X[:, 1, 0] - X[:, 0, 0])

    def hermite(u):
        phi = angle0[:, None] + u[:, [2, 5]]
        d = l0[:, None, None] * np.stack([np.cos(phi), np.sin(phi)], axis=-1)
        x = X + u[:, [[0, 1], [3, 4]]]
        return np.stack([x[:, 0], d[:, 0], x[:, 1], d[:, 1]], axis=1)     # (n_el, 4, 2)

    dQ = hermite(u1) - hermite(u0)
    rotary = np.einsum("ni,nij,nj->n", u1 - u0, g.mass_matrix(X), u1 - u0)    # lumped rho_I part
    expected = alpha / dt * (l0 * np.einsum("ab,nai,nbi->n", HERMITE, dQ, dQ) + rotary)
    dissipated = np.einsum("ni,ni->n", g.mid_point_damping(X, u0, u1, dt, False)[0], u1 - u0)
    miss = np.abs(dissipated - expected).max() / expected.max()
    assert miss < 1e-12, f"cubic alpha dissipation off by {miss:.1e}"
    # about a state, alpha M(q) v with the configuration mass
    v = rng.normal(size=u0.shape)
    M = g.configuration_mass(X).mass_matrix(u0) + g.mass_matrix(X)
    end = g.damping_force(X, u0, v, 0.0, False)[0]
    miss = _relative(end, alpha * np.einsum("nij,nj->ni", M, v))
    assert miss < 1e-12, f"cubic alpha end-point force differs from alpha M(q) v by {miss:.1e}"


# ------------------------------------------------------------------ dynamics
ZETA = 0.02                                 # target damping ratio of the first mode
STEPS_PER_PERIOD, PERIODS = 200, 3
DYNAMIC_KINDS = ["truss2d", "truss3d", "beam2d_lumped", "beam2d_consistent", "beam2d_second_order",
                 "beam2d_cubic", "beam3d", "shell3"]


def _strip(m: fm.Model, n_cells: int, width: float, thickness: float, rho: float) -> np.ndarray:
    """A 1 m x width strip of 2 n_cells triangles along x with Shell3 (E = 1e6 Pa); its nodes (2, n_cells + 1)."""
    x = np.linspace(0.0, 1.0, n_cells + 1)
    nodes = np.stack([m.add_nodes(np.c_[x, np.full_like(x, y), np.zeros_like(x)]) for y in (0.0, width)])
    a, b, c, d = nodes[0, :-1], nodes[0, 1:], nodes[1, 1:], nodes[1, :-1]
    m.add_shell(np.r_[np.c_[a, b, c], np.c_[a, c, d]], E=1e6, nu=0.3, thickness=thickness, rho=rho,
                mass="consistent")
    return nodes


def _cantilever(kind: str) -> tuple[fm.Model, object]:
    """A small clamped structure: a bar with one free axial DOF, or a four-element cantilever."""
    dim = 2 if kind in ("truss2d",) or kind.startswith("beam2d") else 3
    m = fm.Model(dim=dim)
    if kind == "shell3":
        nodes = _strip(m, 4, 0.2, 0.01, 100.0)
        m.fix(nodes[0, 0])
        m.fix(nodes[1, 0])
        return m, m.groups[0]
    n = 2 if kind.startswith("truss") else 5
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 1.0, n), np.zeros((n, dim - 1))])
    conn = np.c_[nodes[:-1], nodes[1:]]
    if kind.startswith("truss"):
        g = m.add_truss(conn, EA=100.0, rho_A=1.0)
        m.fix(nodes[1], ["uy", "uz"] if dim == 3 else "uy")
    elif kind.startswith("beam2d"):
        mass = "consistent" if kind == "beam2d_second_order" else kind.split("_")[1]
        g = m.add_beam2d(conn, EA=1e4, EI=1.0, rho_A=1.0, rho_I=1e-4, mass=mass,
                         second_order=kind == "beam2d_second_order")
    else:
        g = m.add_beam3d(conn, EA=1e4, GJ=1.0, EI_y=1.0, EI_z=2.0, rho_A=1.0, rho_I=(2e-4, 1e-4, 1e-4))
    m.fix(nodes[0])
    return m, g


def _coefficients(kind: str, omega: float) -> tuple[float, float]:
    """alpha, beta sharing ZETA at omega."""
    return ZETA * omega, ZETA / omega


def _free_decay(kind: str, scheme: str, **options):
    model, group = _cantilever(kind)
    modes = fm.natural_modes(model, 1)
    omega = float(np.sqrt(modes.eigenvalues[0]))
    alpha, beta = _coefficients(kind, omega)
    model.set_rayleigh_damping(group, alpha=alpha, beta=beta)
    zeta = alpha / (2.0 * omega) + beta * omega / 2.0
    asm = fm.Assembly(model)
    shape = modes.modes[0]
    u0 = 1e-4 * shape / np.abs(shape).max()
    omega_d = omega * np.sqrt(1.0 - zeta**2)
    dt = 2.0 * np.pi / omega_d / STEPS_PER_PERIOD
    history = fm.integrate(asm, dt=dt, t_end=PERIODS * STEPS_PER_PERIOD * dt, u0=u0, scheme=scheme, **options)
    q = np.array(history.u) @ (asm.mass @ shape)                          # modal coordinate (n_steps,)
    return history, q, zeta


def _decrement_zeta(q: np.ndarray) -> float:
    from flexmb.analysis.signals import logarithmic_decrement
    delta = logarithmic_decrement(q)
    return float(delta / np.sqrt(4.0 * np.pi**2 + delta**2))


@pytest.mark.parametrize("kind", DYNAMIC_KINDS)
def test_mid_point_decrement_and_energy_balance(kind):
    history, q, zeta = _free_decay(kind, "mid-point")
    measured = _decrement_zeta(q)
    assert abs(measured / zeta - 1.0) < 0.01, f"{kind}: zeta {measured:.5f} from the decrement, closed form {zeta:.5f}"
    E = np.array(history.kinetic) + np.array(history.strain)
    balance = np.abs(E + np.array(history.dissipated) - E[0] - np.array(history.work)).max() / E[0]
    assert balance < 1e-8, f"{kind}: energy balance off by {balance:.1e} of E(0)"
    # the run dissipates (a few periods at 2 %: a sizeable share of E(0))
    assert history.dissipated[-1] > 0.3 * E[0]


@pytest.mark.parametrize("scheme, options", [("newmark", {}), ("generalized-alpha", {"rho_inf": 0.9})])
@pytest.mark.parametrize("kind", ["truss3d", "beam2d_second_order", "beam2d_cubic", "beam3d", "shell3"])
def test_end_point_decrement(kind, scheme, options):
    """The end-point form (beta B^T D B v at the step's end) in Newmark and generalized-alpha."""
    history, q, zeta = _free_decay(kind, scheme, **options)
    measured = _decrement_zeta(q)
    assert abs(measured / zeta - 1.0) < 0.01, \
        f"{kind}, {scheme}: zeta {measured:.5f} from the decrement, closed form {zeta:.5f}"
    if scheme == "newmark":                 # trapezoidal: the booked dissipation closes the balance
        E = np.array(history.kinetic) + np.array(history.strain)
        balance = np.abs(E + np.array(history.dissipated) - E[0]).max() / E[0]
        assert balance < 1e-8, f"{kind}: Newmark energy balance off by {balance:.1e} of E(0)"


def _free_structure(kind: str) -> tuple[fm.Assembly, np.ndarray]:
    """An unsupported, bent structure thrown spinning, drifting and vibrating, with
    beta damping only; its initial velocities (n_dof,)."""
    dim = 2 if kind in ("truss2d", "beam2d_second_order") else 3
    m = fm.Model(dim=dim)
    if kind == "shell3":                                    # a strip of four triangles
        nodes = _strip(m, 2, 0.3, 0.02, 100.0).ravel()
        g = m.groups[0]
    else:
        nodes = m.add_nodes(np.array([[0.0, 0.0, 0.0], [0.4, 0.1, 0.05], [0.8, -0.05, 0.1],
                                      [1.2, 0.1, -0.05]])[:, :dim])
        conn = np.c_[nodes[:-1], nodes[1:]]
        if kind.startswith("truss"):                        # a chain braced by two diagonals
            g = m.add_truss(np.r_[conn, [[0, 2], [1, 3]]], EA=1e3, rho_A=1.0)
        elif kind == "beam2d_second_order":
            g = m.add_beam2d(conn, EA=1e4, EI=10.0, rho_A=1.0, rho_I=1e-4, mass="consistent", second_order=True)
        else:
            g = m.add_beam3d(conn, EA=1e4, GJ=5.0, EI_y=10.0, EI_z=8.0, rho_A=1.0, rho_I=(2e-4, 1e-4, 1e-4),
                             mass="consistent")
    X = m.coordinates
    m.set_rayleigh_damping(g, beta=0.01)
    asm = fm.Assembly(m)
    rng = np.random.default_rng(21)
    v0 = np.zeros(asm.n_dof)
    omega = np.array([0.0, 0.0, 2.0]) if dim == 2 else np.array([0.7, -0.5, 2.0])
    centred = X - X.mean(axis=0)
    for n in nodes:
        r = np.zeros(3)
        r[:dim] = centred[n]
        vel = np.cross(omega, r)[:dim] + [0.3, -0.2, 0.1][:dim] + 0.2 * rng.normal(size=dim)   # rigid + bend
        for k, name in enumerate(["ux", "uy", "uz"][:dim]):
            v0[asm.dofs.index(n, name)] = vel[k]
        if g.has_rotations:
            spins = [omega[2]] if dim == 2 else omega + 0.2 * rng.normal(size=3)
            for k, name in enumerate(["rz"] if dim == 2 else ["rx", "ry", "rz"]):
                v0[asm.dofs.index(n, name)] = spins[k]
    return asm, v0


def _linear_momentum(asm: fm.Assembly, history) -> np.ndarray:
    """Sum of M v over each translation direction (n_steps, dim)."""
    Mv = np.array(history.v) @ asm.mass
    names = ["ux", "uy", "uz"][:asm.model.dim]
    return np.stack([Mv[:, [asm.dofs.index(n, name) for n in range(asm.model.n_nodes)]].sum(axis=1)
                     for name in names], axis=1)


@pytest.mark.parametrize("kind", ["truss2d", "truss3d", "beam2d_second_order", "beam3d", "shell3"])
def test_free_flying_structure_keeps_its_momenta(kind):
    """beta damping acts on no rigid motion: the linear and angular momenta of a free structure
    stay, while the vibration is damped."""
    asm, v0 = _free_structure(kind)
    # Newton to its round-off floor: with the default residual_tol the momenta move by ~1e-10
    # (measured, damped or not) through the unconverged residual, not through the damping
    tight = fm.NewtonSettings(residual_tol=1e-14, increment_tol=1e-15)
    history = fm.integrate(asm, dt=0.005, t_end=1.0, v0=v0, newton=tight)
    P = _linear_momentum(asm, history)
    L = np.array(history.angular_momentum)
    P_drift = np.abs(P - P[0]).max() / np.linalg.norm(P[0])
    L_drift = np.abs(L - L[0]).max() / np.linalg.norm(L[0])
    E = np.array(history.kinetic) + np.array(history.strain)
    assert history.dissipated[-1] > 1e-3 * E[0], f"{kind}: the vibration was not damped"
    balance = np.abs(E + np.array(history.dissipated) - E[0]).max() / E[0]
    assert balance < 1e-8, f"{kind}: energy balance off by {balance:.1e} of E(0)"
    assert P_drift < 1e-11, f"{kind}: linear momentum drifted by {P_drift:.1e}"
    if kind == "beam2d_second_order":
        # the planar beam's own mid-point force keeps L only to O(d_alpha^3) per step (beam2d
        # docstring): the damped run may drift no more than the undamped one, plus round-off
        asm.model.set_rayleigh_damping(asm.model.groups[0], beta=0.0)
        free = np.array(fm.integrate(fm.Assembly(asm.model), dt=0.005, t_end=1.0, v0=v0, newton=tight).angular_momentum)
        limit = 2.0 * np.abs(free - free[0]).max() / np.linalg.norm(free[0]) + 1e-11
    else:
        limit = 1e-11
    assert L_drift < limit, f"{kind}: angular momentum drifted by {L_drift:.1e} (limit {limit:.1e})"


@pytest.mark.parametrize("kind", ["beam2d_second_order", "beam2d_cubic", "beam3d", "shell3"])
def test_linearize_gives_the_closed_form_zeta(kind):
    """fm.linearize takes the end-point form's derivatives (at fixed v and along v): the first
    mode's zeta is alpha / (2 omega) + beta omega / 2 to round-off. beta alone at spatial
    rotations: alpha acts on the group's translational mass, not on the nodes' rotary inertia
    (measured: zeta 2e-5 low with the cantilever's rotary inertia), so alpha M is not exactly
    proportional to their mass there."""
    model, group = _cantilever(kind)
    omega = float(np.sqrt(fm.natural_modes(model, 1).eigenvalues[0]))
    alpha, beta = _coefficients(kind, omega)
    if model.dim == 3:
        alpha, beta = 0.0, 2.0 * ZETA / omega
    model.set_rayleigh_damping(group, alpha=alpha, beta=beta)
    s = fm.linearize(fm.Assembly(model)).eigen().eigenvalues
    s1 = s[np.argmin(np.abs(s))]
    zeta = alpha / (2.0 * omega) + beta * omega / 2.0
    measured = -s1.real / abs(s1)
    assert abs(measured / zeta - 1.0) < 1e-8, f"{kind}: linearized zeta {measured:.10f}, closed form {zeta:.10f}"


@pytest.mark.parametrize("kind", KINDS)
def test_outputs_and_strain_energy_at_once_equal_the_two_calls(kind, rng):
    """What a time step records, element outputs and strain energy from one section state
    (``outputs_and_strain_energy``), equals ``element_outputs`` and ``strain_energy`` to the bit at
    a deformed configuration."""
    g, X = _group(kind, rng)
    u = 0.05 * rng.standard_normal((N_EL, g.ndof))
    outputs, energy = g.outputs_and_strain_energy(X, u)
    expected = g.element_outputs(X, u)
    assert outputs.keys() == expected.keys()
    assert all(np.array_equal(outputs[name], expected[name]) for name in expected)
    assert np.array_equal(energy, g.strain_energy(X, u)) and np.all(np.isfinite(energy))
