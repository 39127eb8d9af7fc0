"""Point-to-point springs and dampers (:mod:`flexmb.elements.force_elements`): tangents against
finite differences, the mid-point energy identities, energy bookkeeping in time integration,
statics reactions and frequencies against hand calculations, and input errors."""
from __future__ import annotations

import re

import numpy as np
import pytest

import flexmb as fm
from flexmb.elements.force_elements import PointSpringDamper
from flexmb.model_forces import ForceElement
from flexmb.rotations import cayley_between, cayley_compose, compose

N_EL = 6


def _group(rng: np.random.Generator, dim: int, n_nodes: int, rotations: bool) -> tuple[PointSpringDamper, np.ndarray]:
    """Random spring-dampers with preload (k 1..10 N/m, c 1..3 N s/m) and their reference X."""
    X = rng.uniform(-1.0, 1.0, (N_EL, n_nodes, dim))
    offsets = rng.uniform(-0.5, 0.5, (N_EL, n_nodes, dim)) if rotations else None
    anchor = rng.uniform(-1.0, 1.0, (N_EL, dim)) if n_nodes == 1 else None
    group = PointSpringDamper(np.zeros((N_EL, n_nodes), dtype=int), dim, k=rng.uniform(1.0, 10.0, N_EL),
                              rest_length=rng.uniform(0.5, 2.0, N_EL), preload=rng.uniform(-1.0, 1.0, N_EL),
                              c=rng.uniform(1.0, 3.0, N_EL), offsets=offsets, anchor=anchor, has_rotations=rotations)
    return group, X


def _moved(g: PointSpringDamper, u: np.ndarray, du: np.ndarray, rule: str) -> np.ndarray:
    """u moved by du: added, except at 3D rotations, composed as a spin or a Cayley increment."""
    out = u + du
    if g.dim == 3 and g.has_rotations:
        for k in range(g.n_nodes):
            r = slice(k * g.dofs_per_node + 3, k * g.dofs_per_node + 6)
            out[:, r] = compose(du[:, r], u[:, r]) if rule == "spin" else cayley_compose(du[:, r], u[:, r])
    return out


def _increment(g: PointSpringDamper, u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
    d = u1 - u0
    if g.dim == 3 and g.has_rotations:
        for k in range(g.n_nodes):
            r = slice(k * g.dofs_per_node + 3, k * g.dofs_per_node + 6)
            d[:, r] = cayley_between(u0[:, r], u1[:, r])
    return d


def _fd(fun, g: PointSpringDamper, x: np.ndarray, rule: str, h: float = 1e-6) -> np.ndarray:
    """Central-difference Jacobian (n_el, ne, ne) of fun(x) (n_el, ne), x moved by ``rule``."""
    out = np.zeros((N_EL, g.ndof, g.ndof))
    for j in range(g.ndof):
        dx = np.zeros_like(x)
        dx[:, j] = h
        out[:, :, j] = (fun(_moved(g, x, dx, rule) if rule != "add" else x + dx)
                        - fun(_moved(g, x, -dx, rule) if rule != "add" else x - dx)) / (2 * h)
    return out


def _relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / np.abs(b).max())


KINDS = [(dim, nn, rot) for dim in (2, 3) for nn in (1, 2) for rot in (False, True)]
KIND_IDS = [f"{d}D-{'ground' if n == 1 else 'two nodes'}-{'offsets' if r else 'nodes'}" for d, n, r in KINDS]


@pytest.mark.parametrize("dim, n_nodes, rotations", KINDS, ids=KIND_IDS)
def test_tangents_match_finite_differences(dim, n_nodes, rotations):
    rng = np.random.default_rng(10 * dim + 2 * n_nodes + rotations)
    g, X = _group(rng, dim, n_nodes, rotations)
    u = 0.5 * rng.normal(size=(N_EL, g.ndof))
    q, K = g.force_and_tangent(X, u)
    # the force is the gradient of the strain energy, the tangent the derivative of the force (spins)
    V = np.zeros_like(q)
    for j in range(g.ndof):
        dx = np.zeros_like(u)
        dx[:, j] = 1e-6
        V[:, j] = (g.strain_energy(X, _moved(g, u, dx, "spin")) - g.strain_energy(X, _moved(g, u, -dx, "spin"))) / 2e-6
    assert _relative(q, V) < 1e-6, f"force vs dV/du off by {_relative(q, V):.2e}"
    assert _relative(K, _fd(lambda x: g.internal_force(X, x), g, u, "spin")) < 1e-6
    # mid-point spring and damper: derivative w.r.t. the step increment (Cayley parameters in 3D)
    u1 = _moved(g, u, 0.3 * rng.normal(size=u.shape), "spin")
    d, dt = _increment(g, u, u1), 0.1
    Km = g.mid_point_force_and_tangent(X, u, u1)[1]
    Kd = g.mid_point_damping(X, u, u1, dt, True)[1]
    fd_m = _fd(lambda dd: g.mid_point_force(X, u, _moved(g, u, dd, "cayley")), g, d, "add")
    fd_d = _fd(lambda dd: g.mid_point_damping(X, u, _moved(g, u, dd, "cayley"), dt, False)[0], g, d, "add")
    assert _relative(Km, fd_m) < 1e-6, f"mid-point spring tangent off by {_relative(Km, fd_m):.2e}"
    assert _relative(Kd, fd_d) < 1e-6, f"mid-point damper tangent off by {_relative(Kd, fd_d):.2e}"
    # end-point damper (Newmark, linearize): at fixed v, and along v
    v = rng.normal(size=u.shape)
    K0 = g.damping_force(X, u, v, 0.0, True)[1]
    K1 = g.damping_force(X, u, v, 1.0, True)[1]
    fd_u = _fd(lambda x: g.damping_force(X, x, v, 0.0, False)[0], g, u, "spin")
    fd_v = _fd(lambda x: g.damping_force(X, u, x, 0.0, False)[0], g, v, "add")
    assert _relative(K0, fd_u) < 1e-6 and _relative(K1 - K0, fd_v) < 1e-6


@pytest.mark.parametrize("dim, n_nodes, rotations", KINDS, ids=KIND_IDS)
def test_mid_point_energy_identities(dim, n_nodes, rotations):
    """q_m . d = V(l1) - V(l0) (spring) and q_d . d = c (l1 - l0)^2 / dt (damper), for large steps."""
    rng = np.random.default_rng(7 + dim + n_nodes + rotations)
    g, X = _group(rng, dim, n_nodes, rotations)
    u0 = 0.5 * rng.normal(size=(N_EL, g.ndof))
    u1 = _moved(g, u0, 0.8 * rng.normal(size=u0.shape), "spin")
    d, dt = _increment(g, u0, u1), 0.05
    work = np.einsum("ni,ni->n", g.mid_point_force(X, u0, u1), d)
    dV = g.strain_energy(X, u1) - g.strain_energy(X, u0)
    assert np.abs(work - dV).max() < 1e-12 * np.abs(dV).max()
    l0, l1 = g.lengths(X, u0), g.lengths(X, u1)
    dissipated = np.einsum("ni,ni->n", g.mid_point_damping(X, u0, u1, dt, False)[0], d)
    expected = g.c * (l1 - l0) ** 2 / dt
    assert np.abs(dissipated - expected).max() < 1e-12 * expected.max()


def _bodies_3d(c: float) -> fm.Model:
    """Two free rigid bodies joined by a spring(-damper) between offset points, one of them held
    by a preloaded spring to a ground point."""
    m = fm.Model(dim=3)
    b1 = m.add_rigid_body([0.0, 0.0, 0.0], 1.0, [0.1, 0.2, 0.15])
    b2 = m.add_rigid_body([1.0, 0.2, 0.0], 2.0, [0.2, 0.1, 0.25])
    m.add_spring_damper(b1, b2, k=100.0, c=c, rest_length=0.7, at_a=[0.1, 0.2, 0.1], at_b=[0.9, 0.0, -0.1])
    m.add_spring(None, b1, k=30.0, preload=5.0, at_a=[-1.0, 0.0, 0.0], at_b=[0.0, 0.1, 0.1])
    return m


def _planar_mass(c: float) -> tuple[fm.Model, ForceElement]:
    """A 2 kg point mass on a preloaded spring-damper to a ground point, under gravity (a 2D
    elastic pendulum)."""
    m = fm.Model(dim=2)
    n = m.add_node([1.0, 0.0])
    m.add_point_mass(n, 2.0)
    spring = m.add_spring_damper(None, n, k=50.0, c=c, rest_length=0.8, preload=3.0, at_a=[0.0, 0.0])
    m.set_gravity([0.0, -9.81])
    return m, spring


def test_springs_conserve_energy_in_the_mid_point_scheme():
    # energy errors are relative to K0: start with K0 comparable to the swings of V (else the
    # Newton tolerance on the much larger gravity and spring forces shows)
    for model, dt in ((_planar_mass(0.0)[0], 0.1), (_bodies_3d(0.0), 0.05)):
        asm = fm.Assembly(model)
        v0 = 4.0 * np.random.default_rng(0).normal(size=asm.n_dof)
        history = fm.integrate(asm, dt=dt, t_end=3.0, v0=v0)
        assert history.energy_error().max() < 1e-8, f"{model.dim}D: energy error {history.energy_error().max():.2e}"
        assert np.ptp(history.strain) > 0.1 * history.kinetic[0], "the springs were hardly stretched"


@pytest.mark.parametrize("dim", [2, 3])
def test_damper_dissipation_equals_integral_of_c_ldot_squared(dim):
    """Mid-point: the booked dissipation is sum c (l_{n+1} - l_n)^2 / dt (the mid-point rule of the
    integral of c ldot^2, from the recorded lengths) to 1e-8 of K0, and K + V + D - W is constant."""
    model = _planar_mass(0.7)[0] if dim == 2 else _bodies_3d(2.0)
    asm = fm.Assembly(model)
    v0 = np.random.default_rng(1).normal(size=asm.n_dof)
    dt = 0.05
    history = fm.integrate(asm, dt=dt, t_end=3.0, v0=v0)
    group = next(g for g in model.groups if isinstance(g, PointSpringDamper) and g.damped)
    gi = model.groups.index(group)
    lengths = np.array(history.element(gi, "length"))                 # (n_steps, n_el)
    integral = np.cumsum(np.sum(group.c * np.diff(lengths, axis=0) ** 2 / dt, axis=1))
    K0 = history.kinetic[0]
    miss = np.abs(history.dissipated[1:] - integral).max() / K0
    assert miss < 1e-8, f"dissipation vs integral of c ldot^2: off by {miss:.2e} K0"
    assert history.dissipated[-1] > 0.1 * K0, "the damper hardly dissipated"
    assert history.energy_error().max() < 1e-8, f"K + V + D - W drifts by {history.energy_error().max():.2e}"


def test_newmark_damping_converges_to_the_mid_point_dissipation():
    """The two schemes are second order: at dt = 2 ms their dissipated energies agree to 1e-3."""
    model = _planar_mass(0.7)[0]
    asm = fm.Assembly(model)
    v0 = np.array([0.3, 2.0])
    runs = [fm.integrate(asm, dt=0.002, t_end=2.0, v0=v0, scheme=s) for s in ("mid-point", "newmark")]
    D = [r.dissipated[-1] for r in runs]
    assert abs(D[1] - D[0]) < 1e-3 * D[0], f"mid-point {D[0]:.6g} J, Newmark {D[1]:.6g} J"
    assert runs[1].energy_error().max() < 1e-3


def test_static_spring_force_and_reaction_by_hand():
    """Node 1 pulled by F along a spring (k, rest length L0, preload P) from the fixed node 0:
    k (l - L0) + P = F, so u = L0 + (F - P)/k - L; the support takes -F."""
    k, L, L0, P, F = 400.0, 1.5, 1.2, 30.0, 250.0
    m = fm.Model(dim=2)
    a, b = m.add_node([0.0, 0.0]), m.add_node([L, 0.0])
    m.add_point_mass(b, 1.0)
    spring = m.add_spring(a, b, k=k, rest_length=L0, preload=P)
    m.fix(a)
    m.fix(b, "uy")
    m.add_load(b, "ux", F)
    path = fm.load_control(m, 4)
    u = path.u[-1][path.layout.index(b, "ux")]
    assert abs(u - (L0 + (F - P) / k - L)) < 1e-10
    assert abs(path.reactions[-1][path.layout.index(a, "ux")] + F) < 1e-8
    assert abs(path.element(spring.group, "force")[-1][spring.index] - F) < 1e-8


def test_spring_frequencies_in_natural_modes_and_linearize():
    """A 3 kg mass between two springs to the ground (k1 along x, k2 along y): omega = sqrt(k/m);
    with a damper c along x, linearize gives zeta = c / (2 sqrt(k1 m))."""
    m = fm.Model(dim=2)
    n = m.add_node([0.0, 0.0])
    m.add_point_mass(n, 3.0)
    m.add_spring(None, n, k=300.0, at_a=[-1.0, 0.0])
    m.add_spring(None, n, k=75.0, at_a=[0.0, 2.0])
    modes = fm.natural_modes(m, 2)
    assert np.allclose(np.sqrt(modes.eigenvalues), [5.0, 10.0], rtol=1e-12, atol=0), modes.eigenvalues
    m.add_damper(None, n, c=6.0, at_a=[-2.0, 0.0])
    modes = fm.linearize(m).eigen()
    zeta = 6.0 / (2 * np.sqrt(300.0 * 3.0))
    assert np.allclose(modes.damping_ratios, [0.0, zeta], rtol=0, atol=1e-12), modes.damping_ratios
    assert np.allclose(np.abs(modes.eigenvalues.imag), [5.0, 10.0 * np.sqrt(1 - zeta**2)], rtol=1e-12, atol=0)


def test_offset_point_on_a_rigid_body_gives_the_moment_by_hand():
    """A planar body held at its centre; a horizontal spring at the offset (0, h) pulled by a
    ground point: the moment about the centre is -h F (statics, reaction of the held body)."""
    m = fm.Model(dim=2)
    body = m.add_rigid_body([0.0, 0.0], 1.0, 0.1)
    h, k, stretch = 0.3, 200.0, 0.05
    m.add_spring(None, body, k=k, rest_length=1.0 - stretch, at_a=[1.0, h], at_b=[0.0, h])
    m.fix(body.node)
    path = fm.load_control(m, 1)
    r = path.reactions[-1]
    F = k * stretch                                                  # tension, pulls the body towards +x
    assert abs(r[path.layout.index(body.node, "ux")] + F) < 1e-10
    assert abs(r[path.layout.index(body.node, "rz")] - h * F) < 1e-10


@pytest.mark.parametrize("call, words", [
    (lambda m: m.add_spring(0, 1, k=-1.0), ["spring", "k (N/m)", "-1"]),
    (lambda m: m.add_damper(0, 1, c=float("nan")), ["damper", "c (N s/m)", "nan"]),
    (lambda m: m.add_spring(None, 1, k=1.0), ["side a is the ground", "at_a"]),
    (lambda m: m.add_spring(None, None, k=1.0, at_a=[0, 0], at_b=[1, 0]), ["both sides are the ground"]),
    (lambda m: m.add_spring(None, 1, k=1.0, at_a=[1.0, 0.0]), ["coincide", "[1.0, 0.0]"]),
    (lambda m: m.add_spring(0, 1, k=1.0, at_b=[1.0, 0.5]), ["at_b", "off node 1", "no rotations"]),
    (lambda m: m.add_spring(0, 7, k=1.0), ["node 7"]),
    (lambda m: m.add_spring(0, 1, k=1.0, stiffness=2.0), ["stiffness"]),
])
def test_bad_input_names_the_item(call, words):
    m = fm.Model(dim=2)
    m.add_nodes([[0.0, 0.0], [1.0, 0.0]])
    with pytest.raises(fm.ModelError, match=".*".join(re.escape(w) for w in words)):
        call(m)


# ------------------------------------------------------------------ joint spring-dampers
def _two_bodies_hinged(c: float) -> tuple[fm.Model, fm.Assembly]:
    """A planar double pendulum of two rigid bodies, a rotational spring-damper in each revolute
    joint (one to the ground, one between the bodies), under gravity."""
    m = fm.Model(dim=2)
    b1 = m.add_rigid_body([0.0, -0.5], 1.0, 0.02)
    b2 = m.add_rigid_body([0.3, -1.0], 0.5, 0.01)
    m.add_joint_spring_damper(m.add_joint("revolute", None, b1, at=[0.0, 0.0]), k=20.0, c=c, rest=0.1, preload=1.0)
    m.add_joint_spring_damper(m.add_joint("revolute", b1, b2, at=[0.0, -1.0]), k=5.0, c=0.5 * c)
    m.set_gravity([0.0, -9.81])
    return m, fm.Assembly(m)


def test_joint_springs_conserve_and_dampers_book_their_dissipation():
    for c in (0.0, 0.3):
        m, asm = _two_bodies_hinged(c)
        v0 = np.zeros(asm.n_dof)
        v0[asm.dofs.index(m.bodies[0].node, "rz")] = 3.0
        v0[asm.dofs.index(m.bodies[0].node, "ux")] = 1.5
        v0[asm.dofs.index(m.bodies[1].node, "ux")] = 3.0
        v0[asm.dofs.index(m.bodies[1].node, "uy")] = 0.9            # both bodies spin at 3 rad/s as one
        v0[asm.dofs.index(m.bodies[1].node, "rz")] = 3.0
        history = fm.integrate(asm, dt=0.01, t_end=2.0, v0=v0)
        assert history.energy_error().max() < 1e-8, f"c = {c}: K + V + D - W drifts {history.energy_error().max():.2e}"
        gi = next(i for i, g in enumerate(m.groups) if g.name == "joint springs")
        q = np.array(history.element(gi, "coordinate"))[:, 0]         # theta_2 - theta_1
        rz = [asm.dofs.index(b.node, "rz") for b in m.bodies]
        u = np.array(history.u)
        assert np.allclose(q, u[:, rz[1]] - u[:, rz[0]], rtol=0, atol=1e-14)
        if c:
            assert history.dissipated[-1] > 0.05 * history.kinetic[0]


def test_prismatic_spring_frequency_by_linearize():
    """A 4 kg slider on a prismatic joint along (3, 4)/5 with a spring k = 100 N/m and a damper
    c = 4 N s/m on the slide: omega_n = 5 rad/s and zeta = c / (2 sqrt(k m)) = 0.1."""
    m = fm.Model(dim=2)
    slider = m.add_rigid_body([0.0, 0.0], 4.0, 0.1)
    joint = m.add_joint("prismatic", None, slider, x_axis=[3.0, 4.0])
    spring = m.add_joint_spring_damper(joint, k=100.0, c=4.0)
    modes = fm.linearize(m).eigen()
    assert modes.eigenvalues.size == 1
    s = modes.eigenvalues[0]
    assert abs(abs(s) - 5.0) < 1e-10 and abs(modes.damping_ratios[0] - 0.1) < 1e-12, s
    asm = fm.Assembly(m)
    u0 = np.zeros(asm.n_dof)
    u0[asm.dofs.index(slider.node, "ux")], u0[asm.dofs.index(slider.node, "uy")] = 0.03, 0.04
    history = fm.integrate(asm, dt=0.01, t_end=0.5, u0=u0)
    assert abs(history.element(spring.group, "coordinate")[0][spring.index] - 0.05) < 1e-14
    assert abs(history.element(spring.group, "force")[0][spring.index] - 5.0) < 1e-12


def test_joint_spring_bad_input():
    m = fm.Model(dim=2)
    body = m.add_rigid_body([0.0, 0.0], 1.0, 0.1)
    other = m.add_rigid_body([1.0, 0.0], 1.0, 0.1)
    slide = m.add_joint("prismatic", body, other)
    with pytest.raises(fm.ModelError, match=r"joint 'prismatic 0'.*between two moving sides"):
        m.add_joint_spring_damper(slide, k=1.0)
    hinge = m.add_joint("revolute", None, body)
    with pytest.raises(fm.ModelError, match=r"joint 'revolute 1'.*c .*-2"):
        m.add_joint_spring_damper(hinge, c=-2.0)
    with pytest.raises(fm.ModelError, match="not a joint of this model"):
        fm.Model(dim=2).add_joint_spring_damper(hinge, k=1.0)


def test_result_files_restart_and_export_carry_springs_and_dissipation(tmp_path):
    """The dissipated energy is written step by step and a restart continues it; a model with
    springs and bushings to the ground (one-node groups) exports to VTU."""
    from flexmb.io.export import write_vtu_series

    m, _ = _planar_mass(0.7)
    body = m.add_rigid_body([0.0, -1.0], 1.0, 0.1)
    m.add_bushing(None, body, k=100.0, k_rot=10.0, c=1.0, c_rot=0.1)
    asm = fm.Assembly(m)
    v0 = np.zeros(asm.n_dof)
    v0[:2] = [1.0, 4.0]
    v0[asm.dofs.index(body.node, "rz")] = 2.0
    whole = fm.integrate(asm, dt=0.05, t_end=1.0, v0=v0)
    fm.integrate(asm, dt=0.05, t_end=0.5, v0=v0, save_to=tmp_path / "run.h5")
    restarted = fm.integrate(asm, dt=0.05, t_end=1.0, restart_from=tmp_path / "run.h5")
    assert np.allclose(restarted.dissipated, whole.dissipated, rtol=1e-12, atol=0.0)
    assert np.allclose(fm.load_result(tmp_path / "run.h5").dissipated, whole.dissipated)
    assert restarted.energy_error().max() < 1e-8
    pvd = write_vtu_series(whole, tmp_path / "vtu", every=10)
    assert len(list(pvd.parent.glob("*.vtu"))) == 3 and pvd.stat().st_size > 0


# ------------------------------------------------------------------ user force curves
def _hardening(length: np.ndarray) -> np.ndarray:
    """A hardening spring with preload: 3 + 50 s + 400 s^3 N, s = l - 0.8 m."""
    s = length - 0.8
    return 3.0 + 50.0 * s + 400.0 * s**3


def _hardening_slope(length: np.ndarray) -> np.ndarray:
    return 50.0 + 1200.0 * (length - 0.8) ** 2


@pytest.mark.parametrize("slope", [_hardening_slope, None], ids=["given slope", "difference slope"])
def test_force_curve_spring(slope):
    rng = np.random.default_rng(4)
    X = rng.uniform(-1.0, 1.0, (N_EL, 2, 3))
    g = PointSpringDamper(np.zeros((N_EL, 2), dtype=int), 3, 0.0, 0.8, 0.0, 0.0, curve=_hardening, curve_slope=slope)
    u0 = 0.3 * rng.normal(size=(N_EL, 6))
    q, K = g.force_and_tangent(X, u0)
    assert _relative(K, _fd(lambda x: g.internal_force(X, x), g, u0, "add")) < 1e-6
    u1 = u0 + 0.3 * rng.normal(size=u0.shape)
    Km = g.mid_point_force_and_tangent(X, u0, u1)[1]
    assert _relative(Km, _fd(lambda x: g.mid_point_force(X, u0, x), g, u1, "add")) < 1e-6
    # a cubic curve: the 4-point rule is exact, so the mid-point identity is exact
    work = np.einsum("ni,ni->n", g.mid_point_force(X, u0, u1), u1 - u0)
    dV = g.strain_energy(X, u1) - g.strain_energy(X, u0)
    assert np.abs(work - dV).max() < 1e-12 * np.abs(dV).max()
    # the potential is the integral of the curve: V(l) = 3 s + 25 s^2 + 100 s^4
    s = g.lengths(X, u0) - 0.8
    assert np.allclose(g.strain_energy(X, u0), 3.0 * s + 25.0 * s**2 + 100.0 * s**4, rtol=1e-12, atol=0.0)
    # in a model: energy conserved, the curve springs batched in one group
    m = fm.Model(dim=2)
    n = m.add_node([1.0, 0.0])
    m.add_point_mass(n, 2.0)
    first = m.add_spring(None, n, at_a=[0.0, 0.0], curve=_hardening, curve_slope=slope, rest_length=0.8)
    second = m.add_spring(None, n, at_a=[1.0, 1.0], curve=_hardening, curve_slope=slope, rest_length=0.8)
    assert first.group == second.group and second.index == 1
    m.set_gravity([0.0, -9.81])
    history = fm.integrate(m, dt=0.05, t_end=2.0, v0=np.array([1.0, 4.0]))
    assert history.energy_error().max() < 1e-8


def test_force_curve_errors_name_the_spring():
    m = fm.Model(dim=2)
    n = m.add_node([1.0, 0.0])
    with pytest.raises(fm.ModelError, match="either k .* or curve"):
        m.add_spring(None, n, k=1.0, curve=_hardening, at_a=[0.0, 0.0])
    with pytest.raises(fm.UserFunctionError, match=r"force curve of spring 'wobbly'.*returned \[1.0, 1.0\]"):
        m.add_spring(None, n, at_a=[0.0, 0.0], curve=lambda length: [1.0, 1.0], name="wobbly")
    assert not m.groups, "a refused spring must not stay in the model"


def test_linear_buckling_sees_a_spring_support():
    """A stiff column (EI = 1e9 N m^2, 4 beam elements, L = 2 m) pinned at its foot, held at its
    top by a lateral spring k = 300 N/m, under an axial load P: the rigid-bar mode buckles at
    P_cr = k L = 600 N (bending lowers it by k L^3 / (3 EI) = 8e-7 relative)."""
    L, k = 2.0, 300.0
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.zeros(5), np.linspace(0.0, L, 5)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e12, EI=1e9)
    m.fix(nodes[0], ["ux", "uy"])
    m.add_spring(None, nodes[-1], k=k, at_a=[-1.0, L])
    m.add_load(nodes[-1], "uy", -1.0)
    result = fm.linear_buckling(m, n_modes=1)
    assert abs(result.load_factors[0] - k * L) < 1e-4 * k * L, result.load_factors


def test_partitioned_integration_applies_the_joint_damper():
    """The pendulum-spring case run through ConstrainedSystem.from_assembly and coordinate
    partitioning (an explicit ODE solver): the damped small oscillation matches the closed form
    (measured 1e-5 of the amplitude, the amplitude's own nonlinearity)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "validation" / "pendulum_spring.py"
    spec = importlib.util.spec_from_file_location("pendulum_spring_case", path)
    case = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(case)
    model, body = case.build()
    asm = fm.Assembly(model)
    free = asm.dofs.free
    system = fm.ConstrainedSystem.from_assembly(asm)
    q0 = case.initial_state(asm, body)[free]
    run = fm.integrate_partitioned(system, q0, np.zeros_like(q0), 3 * 2 * np.pi / case.OMEGA_D, rtol=1e-10,
                                   progress=False)
    t, phi = np.array(run.t), np.array(run.q)[:, list(free).index(asm.dofs.index(body.node, "rz"))]
    zeta, wn, wd = case.ZETA, case.OMEGA_N, case.OMEGA_D
    exact = case.PHI0 * np.exp(-zeta * wn * t) * (np.cos(wd * t) + zeta / np.sqrt(1 - zeta**2) * np.sin(wd * t))
    assert np.abs(phi - exact).max() < 1e-4 * case.PHI0


def test_a_scheme_without_the_damping_hook_refuses_a_damped_model(monkeypatch):
    from flexmb.integrators.schemes import Newmark
    from flexmb.integrators.time_stepping import ALL_SCHEMES

    class Undamped(Newmark):
        name = "undamped"

        def residual(self, s, dt, u1, tangent=True):
            res = super().residual(s, dt, u1, tangent)
            res.damping = None                      # as a scheme written before the hook would
            return res

    monkeypatch.setitem(ALL_SCHEMES, "undamped", Undamped)
    with pytest.raises(fm.ModelError, match="undamped scheme does not apply damping forces"):
        fm.integrate(_planar_mass(0.7)[0], dt=0.1, t_end=0.5, scheme="undamped")


# ------------------------------------------------------------------ spatial revolute joint springs
@pytest.mark.parametrize("n_nodes", [1, 2], ids=["ground", "two bodies"])
def test_revolute_spring_3d_tangents_and_identity(n_nodes):
    from flexmb.elements.revolute_spring import RevoluteSpring
    from flexmb.rotations import exp_map

    rng = np.random.default_rng(20 + n_nodes)
    frames = np.array([exp_map(rng.normal(size=3)) for _ in range(N_EL)])
    g = RevoluteSpring(np.zeros((N_EL, n_nodes), dtype=int), frames, rng.uniform(1, 3, N_EL), rng.uniform(1, 2, N_EL),
                       rng.uniform(-0.3, 0.3, N_EL), rng.uniform(-1, 1, N_EL))
    X = rng.uniform(-1.0, 1.0, (N_EL, n_nodes, 3))
    u = 0.4 * rng.normal(size=(N_EL, g.ndof))
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
    assert _relative(g.mid_point_force_and_tangent(X, u, u1)[1],
                     _fd(lambda dd: g.mid_point_force(X, u, _moved(g, u, dd, "cayley")), g, d, "add")) < 1e-6
    assert _relative(g.mid_point_damping(X, u, u1, dt, True)[1],
                     _fd(lambda dd: g.mid_point_damping(X, u, _moved(g, u, dd, "cayley"), dt, False)[0],
                         g, d, "add")) < 1e-6
    work = np.einsum("ni,ni->n", g.mid_point_force(X, u, u1), d)
    dV = g.strain_energy(X, u1) - g.strain_energy(X, u)
    assert np.abs(work - dV).max() < 1e-12 * np.abs(dV).max()
    dphi = g.angle(X, u1) - g.angle(X, u)
    dissipated = np.einsum("ni,ni->n", g.mid_point_damping(X, u, u1, dt, False)[0], d)
    assert np.abs(dissipated - g.c * dphi**2 / dt).max() < 1e-12 * dissipated.max()
    v = rng.normal(size=u.shape)
    K0, K1 = g.damping_force(X, u, v, 0.0, True)[1], g.damping_force(X, u, v, 1.0, True)[1]
    assert _relative(K0, _fd(lambda x: g.damping_force(X, x, v, 0.0, False)[0], g, u, "spin")) < 1e-6
    assert _relative(K1 - K0, _fd(lambda x: g.damping_force(X, u, x, 0.0, False)[0], g, v, "add")) < 1e-6


def test_revolute_spring_3d_frequency_and_energy():
    """A rigid body on a skew revolute joint with a rotational spring-damper (k = 5 N m/rad,
    c = 0.2 N m s/rad), no gravity: omega_n = sqrt(k / J_O), J_O the inertia about the axis
    (J_axis + m d^2); linearize to 1e-10, mid-point energy balance to 1e-8."""
    from flexmb.rotations import exp_map

    axis = np.array([1.0, 2.0, 2.0]) / 3.0
    J, mass, centre, k, c = np.diag([0.2, 0.3, 0.4]), 2.0, np.array([0.3, -0.4, 0.25]), 5.0, 0.2
    m = fm.Model(dim=3)
    body = m.add_rigid_body(centre, mass, J)
    spring = m.add_joint_spring_damper(m.add_joint("revolute", None, body, at=[0.0, 0.0, 0.0], axis=axis), k=k, c=c)
    asm = fm.Assembly(m)
    d = centre - (centre @ axis) * axis
    J_O = axis @ J @ axis + mass * d @ d
    zeta = c / (2.0 * np.sqrt(k * J_O))
    modes = fm.linearize(asm).eigen()
    assert modes.eigenvalues.size == 1
    assert abs(abs(modes.eigenvalues[0]) - np.sqrt(k / J_O)) < 1e-10 * np.sqrt(k / J_O)
    assert abs(modes.damping_ratios[0] - zeta) < 1e-10
    v0 = np.zeros(asm.n_dof)
    rot, tr = asm.dofs.index(body.node, "rx"), asm.dofs.index(body.node, "ux")
    v0[rot:rot + 3], v0[tr:tr + 3] = 0.5 * axis, np.cross(0.5 * axis, centre)
    history = fm.integrate(asm, dt=0.01, t_end=3.0, v0=v0)
    assert history.energy_error().max() < 1e-8
    assert history.dissipated[-1] > 0.2 * history.kinetic[0]
    angle = np.array(history.element(spring.group, "angle"))[:, spring.index]
    R = exp_map(np.array(history.u)[:, rot:rot + 3])
    # the body's rotation is the turn about the axis by the spring's angle
    assert np.abs(R - exp_map(angle[:, None] * axis[None, :])).max() < 1e-8


def _hung_body(dim: int, shift: float, kind: str) -> fm.Assembly:
    """A rigid body hung from the ground by a spring-damper or a bushing at the point o = shift
    (1, 1, 1), swinging under gravity from rest."""
    m = fm.Model(dim=dim)
    o = np.full(dim, shift)
    body = m.add_rigid_body(o + [0.5, -1.0, 0.2][:dim], mass=2.0, inertia=0.1 if dim == 2 else [0.1, 0.12, 0.08])
    if kind == "spring":
        m.add_spring_damper(None, body, k=1e4, c=0.5, at_a=o)
    else:
        m.add_bushing(None, body, at=o, k=1e4, k_rot=1e2, c=0.5, c_rot=0.01)
    m.set_gravity([0.0, -9.81, 0.0][:dim])
    return fm.Assembly(m)


@pytest.mark.parametrize("kind", ["spring", "bushing"])
@pytest.mark.parametrize("dim", [2, 3])
def test_a_model_far_from_the_origin_moves_and_converges_as_at_the_origin(dim, kind):
    """Force elements form their chord from the reference chord plus displacements: hung 1e6 m
    from the origin, the body's motion equals the one at the origin to 1e-9 m and every Newton
    solve ends on the residual test, as at the origin (absolute positions ended them by
    stagnation there, with 2.7x the iterations and 1e-8 energy error)."""
    runs = {shift: fm.integrate(_hung_body(dim, shift, kind), 0.01, 0.5, progress=False, keep_newton_logs=True)
            for shift in (0.0, 1e6)}
    near, far = runs[0.0], runs[1e6]
    assert np.abs(np.asarray(far.u) - np.asarray(near.u)).max() < 1e-9
    assert {log.criterion for log in far.newton_logs} == {"residual"}
    assert sum(log.iterations for log in far.newton_logs) <= sum(log.iterations for log in near.newton_logs) + 5
    assert far.energy_error().max() < 1e-9 and far.cutbacks == 0
