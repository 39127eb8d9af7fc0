"""Bushings (:mod:`flexmb.elements.bushing`): tangents against finite differences, the mid-point
energy identities, energy bookkeeping in time integration, static deflections and reactions by
hand, small-rotation stiffness, and input errors."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.elements.bushing import Bushing
from flexmb.rotations import cayley_between, cayley_compose, compose, exp_map

N_EL = 4


def _group(rng: np.random.Generator, dim: int, n_nodes: int) -> tuple[Bushing, np.ndarray]:
    """Random bushings with random points and rotated axes, anisotropic stiffness and damping."""
    X = rng.uniform(-1.0, 1.0, (N_EL, n_nodes, dim))
    P = rng.uniform(-1.0, 1.0, (N_EL, dim))
    Q = np.linalg.qr(rng.normal(size=(dim, dim)))[0]
    Q[:, 0] *= np.sign(np.linalg.det(Q))
    k_r = rng.uniform(1.0, 3.0, N_EL if dim == 2 else (N_EL, 3))
    g = Bushing(np.zeros((N_EL, n_nodes), dtype=int), dim, P[:, None, :] - X, P if n_nodes == 1 else None,
                np.broadcast_to(Q, (N_EL, dim, dim)), rng.uniform(1.0, 5.0, (N_EL, dim)),
                rng.uniform(1.0, 2.0, (N_EL, dim)), k_r, 0.7 * k_r)
    return g, X


def _moved(g: Bushing, u: np.ndarray, du: np.ndarray, rule: str) -> np.ndarray:
    out = u + du
    if g.dim == 3:
        for k in range(g.n_nodes):
            r = slice(6 * k + 3, 6 * k + 6)
            out[:, r] = compose(du[:, r], u[:, r]) if rule == "spin" else cayley_compose(du[:, r], u[:, r])
    return out


def _increment(g: Bushing, u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
    d = u1 - u0
    if g.dim == 3:
        for k in range(g.n_nodes):
            r = slice(6 * k + 3, 6 * k + 6)
            d[:, r] = cayley_between(u0[:, r], u1[:, r])
    return d


def _fd(fun, g: Bushing, x: np.ndarray, rule: str, h: float = 1e-6) -> np.ndarray:
    out = np.zeros((N_EL, g.ndof, g.ndof))
    for j in range(g.ndof):
        dx = np.zeros_like(x)
        dx[:, j] = h
        plus = x + dx if rule == "add" else _moved(g, x, dx, rule)
        minus = x - dx if rule == "add" else _moved(g, x, -dx, rule)
        out[:, :, j] = (fun(plus) - fun(minus)) / (2 * h)
    return out


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


KINDS = [(2, 1), (2, 2), (3, 1), (3, 2)]
IDS = [f"{d}D-{'ground' if n == 1 else 'two sides'}" for d, n in KINDS]


@pytest.mark.parametrize("dim, n_nodes", KINDS, ids=IDS)
def test_tangents_match_finite_differences(dim, n_nodes):
    rng = np.random.default_rng(dim * 10 + n_nodes)
    g, X = _group(rng, dim, n_nodes)
    u = 0.4 * rng.normal(size=(N_EL, g.ndof))
    assert np.abs(g.internal_force(X, np.zeros_like(u))).max() == 0.0, "force in the reference state"
    q, K = g.force_and_tangent(X, u)
    dV = np.zeros_like(q)
    for j in range(g.ndof):
        dx = np.zeros_like(u)
        dx[:, j] = 1e-6
        dV[:, j] = (g.strain_energy(X, _moved(g, u, dx, "spin")) - g.strain_energy(X, _moved(g, u, -dx, "spin"))) / 2e-6
    assert _relative(q, dV) < 1e-6
    assert _relative(K, _fd(lambda x: g.internal_force(X, x), g, u, "spin")) < 1e-6
    u1 = _moved(g, u, 0.3 * rng.normal(size=u.shape), "spin")
    d, dt = _increment(g, u, u1), 0.1
    Km = g.mid_point_force_and_tangent(X, u, u1)[1]
    Kd = g.mid_point_damping(X, u, u1, dt, True)[1]
    assert _relative(Km, _fd(lambda dd: g.mid_point_force(X, u, _moved(g, u, dd, "cayley")), g, d, "add")) < 1e-6
    assert _relative(Kd, _fd(lambda dd: g.mid_point_damping(X, u, _moved(g, u, dd, "cayley"), dt, False)[0],
                             g, d, "add")) < 1e-6
    v = rng.normal(size=u.shape)
    K0, K1 = g.damping_force(X, u, v, 0.0, True)[1], g.damping_force(X, u, v, 1.0, True)[1]
    assert _relative(K0, _fd(lambda x: g.damping_force(X, x, v, 0.0, False)[0], g, u, "spin")) < 1e-6
    assert _relative(K1 - K0, _fd(lambda x: g.damping_force(X, u, x, 0.0, False)[0], g, v, "add")) < 1e-6


@pytest.mark.parametrize("dim, n_nodes", KINDS, ids=IDS)
def test_mid_point_energy_identity_and_dissipation(dim, n_nodes):
    rng = np.random.default_rng(3 + dim + n_nodes)
    g, X = _group(rng, dim, n_nodes)
    u0 = 0.4 * rng.normal(size=(N_EL, g.ndof))
    u1 = _moved(g, u0, 0.8 * rng.normal(size=u0.shape), "spin")
    d = _increment(g, u0, u1)
    work = np.einsum("ni,ni->n", g.mid_point_force(X, u0, u1), d)
    dV = g.strain_energy(X, u1) - g.strain_energy(X, u0)
    assert np.abs(work - dV).max() < 1e-12 * np.abs(dV).max()
    dissipated = np.einsum("ni,ni->n", g.mid_point_damping(X, u0, u1, 0.05, False)[0], d)
    assert np.all(dissipated > 0.0)


def test_small_rotation_stiffness_about_each_axis():
    """3D: a small rotation theta about bushing axis i stores k_i theta^2 / 2 (k = 1, 2, 5 N m/rad)."""
    m = fm.Model(dim=3)
    body = m.add_rigid_body([0.0, 0.0, 0.0], 1.0, [1.0, 1.0, 1.0])
    axes = exp_map(np.array([0.3, -0.2, 0.5]))
    m.add_bushing(None, body, k=0.0, k_rot=[1.0, 2.0, 5.0], axes=axes)
    asm = fm.Assembly(m)
    theta = 1e-4
    for i, k in enumerate((1.0, 2.0, 5.0)):
        u = np.zeros(asm.n_dof)
        u[3:6] = theta * axes[:, i]
        assert abs(asm.strain_energy(u) / (0.5 * k * theta**2) - 1.0) < 1e-7


def test_static_deflection_by_hand():
    """A planar body held only by a bushing to the ground at P = (0.5, 0), axes turned by 30
    degrees, loaded at its centre by F along the first axis (small: the linear range, where the
    geometric terms are below 1e-4 of the result): the bushing carries F, so b's point deflects
    by F/k_1 along axis 1 and 0 along axis 2; the moment of F about P, -0.5 F sin 30, turns the
    body by M/k_rot."""
    k1, k2, kr, F = 1e4, 3e4, 500.0, 0.02
    c, s = np.cos(np.pi / 6), np.sin(np.pi / 6)
    axes = np.array([[c, -s], [s, c]])
    m = fm.Model(dim=2)
    body = m.add_rigid_body([0.0, 0.0], 1.0, 0.1)
    bush = m.add_bushing(None, body, k=[k1, k2], k_rot=kr, at=[0.5, 0.0], axes=axes)
    m.add_load(body.node, "ux", F * c)
    m.add_load(body.node, "uy", F * s)
    path = fm.load_control(m, 1)
    phi = -0.5 * F * s / kr                                                # r_PC x F / k_rot, r_PC = (-0.5, 0)
    deflection = path.element(bush.group, "deflection")[-1][bush.index]
    assert abs(path.u[-1][path.layout.index(body.node, "rz")] - phi) < 1e-3 * abs(phi)
    assert abs(deflection[0] - F / k1) < 1e-3 * F / k1 and abs(deflection[1]) < 1e-3 * F / k1


def test_bushing_between_bodies_conserves_and_dissipates():
    for c in (0.0, 1.0):
        m = fm.Model(dim=3)
        b1 = m.add_rigid_body([0.0, 0.0, 0.0], 1.0, [0.1, 0.2, 0.15])
        b2 = m.add_rigid_body([1.0, 0.2, 0.0], 2.0, [0.2, 0.1, 0.25])
        m.add_bushing(b1, b2, k=[50.0, 80.0, 100.0], k_rot=[5.0, 8.0, 3.0], c=c, c_rot=0.1 * c, at=[0.5, 0.1, 0.05],
                      axes=exp_map(np.array([0.2, 0.1, -0.3])))
        m.add_bushing(None, b1, k=30.0, k_rot=2.0, c=c, c_rot=0.1 * c, at=[-0.2, 0.0, 0.0])
        asm = fm.Assembly(m)
        v0 = 3.0 * np.random.default_rng(0).normal(size=asm.n_dof)
        history = fm.integrate(asm, dt=0.02, t_end=2.0, v0=v0)
        assert history.energy_error().max() < 1e-8, f"c = {c}: {history.energy_error().max():.2e}"
        if c:
            assert history.dissipated[-1] > 0.2 * history.kinetic[0]
        else:
            assert np.ptp(history.strain) > 0.1 * history.kinetic[0]


@pytest.mark.parametrize("call, match", [
    (lambda m, b: m.add_bushing(None, b, k=-1.0, k_rot=1.0), r"bushing 'bushing 0': k \(N/m\) must be >= 0"),
    (lambda m, b: m.add_bushing(None, b, k=[1.0, 2.0, 3.0], k_rot=1.0), r"k \(N/m\) must be one value or 2"),
    (lambda m, b: m.add_bushing(None, b, k=1.0, k_rot=1.0, axes=[[1, 0], [0, 2]]), "orthonormal"),
    (lambda m, b: m.add_bushing(None, 0, k=1.0, k_rot=1.0), "node 0 has no rotations"),
    (lambda m, b: m.add_bushing(None, None, k=1.0, k_rot=1.0), "both sides are the ground"),
])
def test_bad_input(call, match):
    m = fm.Model(dim=2)
    m.add_node([3.0, 0.0])
    body = m.add_rigid_body([0.0, 0.0], 1.0, 0.1)
    with pytest.raises(fm.ModelError, match=match):
        call(m, body)
