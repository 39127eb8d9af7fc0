"""Start-of-step derivatives of the mid-point force terms (:mod:`flexmb.sensitivity.matrices`):
the symmetry (and antisymmetry) identities they rest on, the derivatives against central
differences in u_n (spins at 3D rotations), the products with vectors against the matrix, and the
refusal of element kinds that are not covered. One small model per element kind, built with the
public API."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.checks import ModelError
from flexmb.elements.truss import Truss
from flexmb.integrators.dissipative import EnergyDecayingMidPoint
from flexmb.integrators.schemes import MidPoint, State
from flexmb.io.shell_mesh import rectangle
from flexmb.io.solid_mesh import box
from flexmb.rotations import cayley, cayley_compose, exp_map, log_map
from flexmb.sensitivity.matrices import StartDerivatives, StartMatrix, cayley_spin_inverse
from models import cantilever_body_3d

DT = 0.01                                   # s, the step of the damping terms


def _truss(dim: int) -> fm.Model:
    """A braced square (2D) or a tetrahedron of bars (3D) with Rayleigh damping."""
    m = fm.Model(dim=dim)
    if dim == 2:
        m.add_nodes(np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]))
        bars = [[0, 1], [1, 2], [2, 3], [3, 0], [0, 2]]
    else:
        m.add_nodes(np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
        bars = [[0, 1], [0, 2], [0, 3], [1, 2], [2, 3], [3, 1]]
    m.add_truss(np.array(bars), EA=1e5, rho_A=2.0, mass="lumped" if dim == 2 else "consistent")
    m.set_rayleigh_damping("truss", alpha=0.3, beta=1e-3)
    return m


def _beam2d(mass: str, second_order: bool = False) -> fm.Model:
    """Three planar beams on a slope, Rayleigh damping, gravity (the cubic mass's weight)."""
    m = fm.Model(dim=2)
    x = np.linspace(0.0, 1.5, 4)
    n = m.add_nodes(np.c_[x, 0.2 * x])
    m.add_beam2d(np.c_[n[:-1], n[1:]], EA=1e4, EI=10.0, rho_A=2.0, rho_I=0.01, mass=mass, second_order=second_order)
    m.set_rayleigh_damping("beam2d", alpha=0.3, beta=1e-3)
    m.set_gravity([0.3, -9.81])
    return m


def _beam3d() -> fm.Model:
    m = fm.Model(dim=3)
    x = np.linspace(0.0, 1.0, 4)
    n = m.add_nodes(np.c_[x, 0.1 * x, np.zeros(4)])
    m.add_beam3d(np.c_[n[:-1], n[1:]], EA=8e4, GJ=10.0, EI_y=14.0, EI_z=22.0, rho_A=3.0, rho_I=(1e-4, 5e-5, 5e-5))
    m.set_rayleigh_damping("beam3d", alpha=0.3, beta=1e-3)
    return m


def _shell() -> fm.Model:
    """A slightly warped 1 x 0.8 m plate of 8 triangles."""
    X, triangles = rectangle(1.0, 0.8, 2, 2)
    m = fm.Model(dim=3)
    m.add_nodes(np.c_[X[:, :2], 0.05 * X[:, 0] * X[:, 1]])
    m.add_shell(triangles, E=1e6, nu=0.3, thickness=0.01, rho=100.0)
    m.set_rayleigh_damping("shell", alpha=0.3, beta=1e-3)
    return m


def _solid() -> fm.Model:
    X, cells = box(1.0, 0.5, 0.5, 1, 1, 1, "tet4")
    m = fm.Model(dim=3)
    m.add_nodes(X)
    m.add_solid(cells, E=1e6, nu=0.3, rho=10.0)
    m.set_rayleigh_damping("solid", alpha=0.3)
    return m


def _springs(dim: int, c_rot: float | list[float] = 0.3) -> fm.Model:
    """Two rigid bodies joined by spring-dampers with offsets (one linear, one to the ground, one a
    force curve in 2D), joint spring-dampers on revolute joints and bushings (body-body and ground)."""
    m = fm.Model(dim=dim)
    if dim == 2:
        a, b = m.add_rigid_body([0.0, 0.0], 2.0, 0.1), m.add_rigid_body([1.0, 0.3], 1.0, 0.05)
        m.add_spring_damper(a, b, k=50.0, c=2.0, preload=3.0, at_a=[0.1, 0.2], at_b=[1.1, 0.1])
        m.add_spring_damper(None, b, k=30.0, c=1.0, at_a=[2.0, 1.0], at_b=[0.9, 0.4])
        m.add_spring(a, b, curve=lambda l: 40.0 * (l - 1.0) + 5.0 * (l - 1.0) ** 3, rest_length=1.0, at_a=[0.0, -0.1])
        m.add_joint_spring_damper(m.add_joint("revolute", a, b, at=[0.5, 0.1]), k=20.0, c=0.5, rest=0.1, preload=0.2)
        m.add_bushing(a, b, k=[100.0, 200.0], k_rot=5.0, c=[1.0, 2.0], c_rot=c_rot, at=[0.6, 0.2])
        m.add_bushing(None, a, k=[100.0, 200.0], k_rot=5.0, c=[1.0, 2.0], c_rot=0.3, at=[-0.1, 0.0])
        return m
    a = m.add_rigid_body([0.0, 0.0, 0.0], 2.0, [0.1, 0.2, 0.15])
    b = m.add_rigid_body([1.0, 0.3, 0.2], 1.0, [0.05, 0.04, 0.06])
    m.add_spring_damper(a, b, k=50.0, c=2.0, preload=3.0, at_a=[0.1, 0.2, 0.0], at_b=[1.1, 0.1, 0.3])
    m.add_spring_damper(None, b, k=30.0, c=1.0, at_a=[2.0, 1.0, 0.5], at_b=[0.9, 0.4, 0.1])
    joint = m.add_joint("revolute", a, b, at=[0.5, 0.1, 0.1], axis=[0.0, 0.3, 1.0])
    m.add_joint_spring_damper(joint, k=20.0, c=0.5, rest=0.1, preload=0.2)
    ground = m.add_joint("revolute", None, a, at=[0.0, 0.0, 0.0], axis=[1.0, 0.0, 0.2])
    m.add_joint_spring_damper(ground, k=10.0, c=0.7, rest=-0.1, preload=0.1)
    m.add_bushing(a, b, k=[100.0, 200.0, 150.0], k_rot=[5.0, 6.0, 7.0], c=[1.0, 2.0, 3.0], c_rot=c_rot,
                  at=[0.6, 0.2, 0.1])
    m.add_bushing(None, a, k=[100.0, 200.0, 150.0], k_rot=[5.0, 6.0, 7.0], c=[1.0, 2.0, 3.0], c_rot=[0.3, 0.2, 0.1],
                  at=[-0.1, 0.0, 0.1])
    return m


def _applied(dim: int) -> fm.Model:
    """A user force (velocity- and position-dependent) and body loads (constant, with a moment, and
    a time function) on a rigid body and a node."""
    m = fm.Model(dim=dim)
    body = m.add_rigid_body(np.zeros(dim), 2.0, 0.1 if dim == 2 else [0.1, 0.2, 0.15])
    node = m.add_node(np.r_[1.0, 0.5, np.zeros(dim - 2)])
    m.add_point_mass(node, 1.0)
    m.add_user_force([body, node], lambda t, x, v: -0.3 * v * np.linalg.norm(v, axis=1)[:, None] + 0.1 * x**2 * t,
                     name="drag")
    m.add_body_load(body, force=np.r_[1.0, -2.0, 0.5][:dim], at=np.r_[0.3, 0.2, 0.1][:dim],
                    moment=0.5 if dim == 2 else [0.5, 0.1, -0.2])
    m.add_body_load(body, force=lambda t: np.r_[np.sin(t), 2.0, 1.0][:dim], at=np.r_[-0.2, 0.1, 0.3][:dim])
    return m


def _modal(dim: int, gravity: bool = True) -> fm.Model:
    """A free modal body (3 modes of a beam, modal damping), under gravity if asked."""
    from flexmb.cms.modal_body import ModalBodyData

    if dim == 2:
        beam = fm.Model(dim=2)
        nodes = beam.add_nodes(np.c_[np.linspace(0.0, 1.0, 5), np.zeros(5)])
        beam.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=2e3, EI=3.0, rho_A=1.5, rho_I=1e-3, mass="cubic")
        data = ModalBodyData.from_model(beam, 0, 3, basis="free-interface")
    else:
        data = cantilever_body_3d(4, 3)
    m = fm.Model(dim=dim)
    m.add_modal_body(data, damping_ratios=0.05)
    if gravity:
        m.set_gravity([0.4, -9.81, 1.0][:dim])
    return m


#: the models by name; the anisotropic rotational damping of the 3D body-body bushing exercises its
#: correction; the weight of a 3D modal body is not covered (test_unsupported_weight_refused)
MODELS = {"truss 2D": lambda: _truss(2), "truss 3D": lambda: _truss(3), "beam2d lumped": lambda: _beam2d("lumped"),
          "beam2d consistent second order": lambda: _beam2d("consistent", True),
          "beam2d cubic": lambda: _beam2d("cubic"), "beam3d": _beam3d, "shell": _shell, "solid": _solid,
          "springs 2D": lambda: _springs(2), "springs 3D": lambda: _springs(3, [0.3, 0.1, 0.05]),
          "applied 2D": lambda: _applied(2), "applied 3D": lambda: _applied(3), "modal 2D": lambda: _modal(2),
          "modal 3D without weight": lambda: _modal(3, gravity=False)}
#: the models whose groups all have chords in the energy-decaying schemes
CHORDS = ("truss 2D", "beam2d lumped", "beam3d", "shell")


def _setup(name: str, seed: int = 0):
    """Assembly (at t = 0.3 s) and a step u0 -> u1 of the model: random displacements (0.05 m) and
    rotations (0.3 rad, about 0.5 rad steps at 3D rotations, composed as spins)."""
    asm = fm.Assembly(MODELS[name]())
    asm.set_time(0.3)
    rng = np.random.default_rng(seed)
    u0, d = rng.normal(0.0, 0.05, asm.n_dof), rng.normal(0.0, 0.05, asm.n_dof)
    for rot in (asm.rotation_dofs.ravel(), asm.planar_rotations):
        u0[rot], d[rot] = rng.normal(0.0, 0.3, rot.size), rng.normal(0.0, 0.3, rot.size)
    return asm, u0, asm.update(u0, d)


def _terms(asm: fm.Assembly, u1: np.ndarray, chords: bool):
    """(name, residual contribution as a function of u0, its start derivative at u0) of each term."""
    sd = StartDerivatives(asm)
    terms = [("force", lambda u: asm.mid_point_force(u, u1), lambda u: sd.forces(u, u1)),
             ("damping", lambda u: asm.mid_point_damping(u, u1, DT), lambda u: sd.damping(u, u1, DT)),
             ("weight", lambda u: -asm.mid_point_external_force(0.3, 0.3 + DT, u, u1)[0],
              lambda u: sd.external(u, u1))]
    if chords:
        scheme = EnergyDecayingMidPoint(asm, rho_inf=0.5)
        terms.append(("chords", lambda u: scheme._dissipative_force(u, u1, None), lambda u: sd.chords(scheme, u, u1)))
    return terms


def start_central_difference(fun, asm: fm.Assembly, u0: np.ndarray, h: float) -> np.ndarray:
    """d fun / d u0 (n_dof, n_dof) by central differences of step h (m or rad), u0 moved as
    Assembly.update moves it (spins at 3D rotations); the joint terms' tests take it too."""
    columns = []
    for j in range(asm.n_dof):
        e = np.zeros(asm.n_dof)
        e[j] = h
        columns.append((fun(asm.update(u0, e)) - fun(asm.update(u0, -e))) / (2.0 * h))
    return np.array(columns).T


@pytest.mark.parametrize("name", MODELS)
def test_start_derivative_against_central_differences(name):
    """Every term's start derivative agrees with central differences in u_n to 1e-7 of its largest
    entry, at the best step of a small study (the truncation error falls as h^2 down to ~1e-10 at
    h = 1e-5, round-off grows below)."""
    asm, u0, u1 = _setup(name)
    checked = 0
    for term, fun, derivative in _terms(asm, u1, name in CHORDS):
        D = derivative(u0).matrix().toarray()
        scale = np.abs(D).max()
        if scale == 0.0:                      # no such term in this model (no weight of cubic masses)
            assert not np.any(start_central_difference(fun, asm, u0, 1e-5)), f"{name}, {term}: FD sees a term"
            continue
        errors = {h: np.abs(start_central_difference(fun, asm, u0, h) - D).max() / scale for h in (1e-4, 1e-5, 1e-6)}
        best = min(errors.values())
        assert best < 1e-7, f"{name}, {term}: start derivative off central differences by {errors} (relative)"
        checked += 1
    assert checked >= 2


@pytest.mark.parametrize("name, decaying", [("truss 2D", False), ("truss 2D", True), ("beam2d lumped", True),
                                            ("beam2d consistent second order", False), ("springs 2D", False),
                                            ("applied 2D", False), ("solid", False)])
def test_whole_mid_point_residual(name, decaying):
    """With a constant mass (no cubic masses, modal bodies or spatial rotations) the scheme's residual
    g(u_n; v_n, u_{n+1}) depends on u_n through its force terms and M a_m alone, a_m = (2 (u_{n+1} - u_n)
    / dt - 2 v_n) / dt: dg/du_n = D - 2 M / dt^2 with D = StartDerivatives.residual, against central
    differences of the residual of MidPoint (or EnergyDecayingMidPoint, rho_inf = 0.5), to 1e-7."""
    asm, u0, u1 = _setup(name)
    scheme = EnergyDecayingMidPoint(asm, rho_inf=0.5) if decaying else MidPoint(asm)
    v0 = np.random.default_rng(3).normal(0.0, 0.5, asm.n_dof)

    def residual(u: np.ndarray) -> np.ndarray:
        state = State(0.3, u, v0, np.zeros(asm.n_dof), np.zeros(asm.dofs.prescribed.size))
        return scheme.residual(state, DT, u1, tangent=False).g

    residual(u0)                                        # sets the groups' time to the step's middle
    D = StartDerivatives(asm).residual(u0, u1, DT, scheme).matrix() - 2.0 / DT**2 * asm.mass
    D = D.toarray()
    errors = {h: np.abs(start_central_difference(residual, asm, u0, h) - D).max() / np.abs(D).max()
              for h in (1e-5, 1e-6)}
    assert min(errors.values()) < 1e-7, f"{name}: dg/du_n off central differences by {errors} (relative)"


@pytest.mark.parametrize("name", MODELS)
def test_mid_point_forces_symmetric_in_the_step_ends(name):
    """q_m(u0, u1) = q_m(u1, u0), q_d(u0, u1; dt) = q_d(u1, u0; -dt) and the weight of cubic masses
    and planar modal bodies symmetric, to 1e-13 of the force (what makes the swapped tangents the
    start derivatives), except the rotational damper of the 3D body-body bushing (C_s taken at the
    start), which breaks it by percents: the closed-form correction is needed there."""
    asm, u0, u1 = _setup(name)
    model = asm.model
    for i, g in enumerate(asm.groups):
        X, ed = model.coordinates[g.connectivity], asm.dofs.element_dofs(g)
        pairs = [("force", g.mid_point_force(X, u0[ed], u1[ed]), g.mid_point_force(X, u1[ed], u0[ed]))]
        if g.damped:
            pairs.append(("damping", g.mid_point_damping(X, u0[ed], u1[ed], DT, False)[0],
                          g.mid_point_damping(X, u1[ed], u0[ed], -DT, False)[0]))
        for term, forward, reversed_ in pairs:
            miss = np.abs(forward - reversed_).max() / max(np.abs(forward).max(), 1e-300)
            if term == "damping" and g.name == "bushings" and model.dim == 3:
                assert miss > 1e-3, f"{name}: the 3D bushing's damper became symmetric ({miss:.1e})"
            else:
                assert miss < 1e-13, f"{name}, group {g.name!r}: {term} not symmetric, off by {miss:.1e}"
    for i, kernels in asm.configuration_masses if np.any(model.gravity) else []:
        ed = asm.dofs.element_dofs(asm.groups[i])
        forward = kernels.mid_point_gravity(u0[ed], u1[ed], model.gravity)[0]
        reversed_ = kernels.mid_point_gravity(u1[ed], u0[ed], model.gravity)[0]
        assert np.abs(forward - reversed_).max() < 1e-13 * np.abs(forward).max()


@pytest.mark.parametrize("name", CHORDS)
def test_chord_force_antisymmetric(name):
    """The energy-decaying chords' force flips sign when the ends are swapped (to 1e-13)."""
    asm, u0, u1 = _setup(name)
    scheme = EnergyDecayingMidPoint(asm, rho_inf=0.5)
    forward, reversed_ = scheme._dissipative_force(u0, u1, None), scheme._dissipative_force(u1, u0, None)
    assert np.abs(forward).max() > 0.0
    assert np.abs(forward + reversed_).max() < 1e-13 * np.abs(forward).max()


@pytest.mark.parametrize("name", ["truss 2D", "truss 3D", "beam2d cubic", "beam2d consistent second order"])
def test_rotation_equivariance(name):
    """Turning both ends of the step by the same rotation turns the mid-point forces with it,
    q_m(Q x0, Q x1) = Q q_m(x0, x1), so for a small turn omega about the origin (displacements
    omega x (X + u) at each end, planar rotation DOFs + omega_z) the start derivative and the tangent
    w.r.t. u_{n+1} add up to omega x q_m at the translations and zero at the planar rotations
    (to 1e-13): a check of D_n that uses the tangent, not differences. Co-rotational kinds only (the
    linear solid is not objective)."""
    asm, u0, u1 = _setup(name)
    dim, X = asm.model.dim, asm.model.coordinates
    tangent = StartMatrix(asm.n_dof)
    for g in asm.groups:
        ed = asm.dofs.element_dofs(g)
        tangent.blocks.append((ed, g.mid_point_force_and_tangent(X[g.connectivity], u0[ed], u1[ed])[1]))
    start = StartDerivatives(asm).forces(u0, u1)
    q = asm.mid_point_force(u0, u1)
    moves = []
    for u in (u0, u1):
        x = X + u[asm.dofs.translations()]                                    # (n_nodes, dim) positions, m
        du = np.zeros(asm.n_dof)
        du[asm.dofs.translations()] = np.c_[-x[:, 1], x[:, 0]] if dim == 2 else np.cross([0.3, -0.5, 0.8], x)
        du[asm.planar_rotations] = 1.0
        moves.append(du)
    expected = np.zeros(asm.n_dof)
    qt = q[asm.dofs.translations()]
    expected[asm.dofs.translations()] = np.c_[-qt[:, 1], qt[:, 0]] if dim == 2 else np.cross([0.3, -0.5, 0.8], qt)
    change = start.matvec(moves[0]) + tangent.matvec(moves[1])
    scale = abs(start.matrix()).max() * np.abs(moves[0]).max() * asm.n_dof
    assert np.abs(start.matvec(moves[0])).max() > 1e-3 * np.abs(expected).max(), "the test needs D_n at work"
    assert np.abs(change - expected).max() < 1e-13 * scale, \
        f"{name}: equivariance off by {np.abs(change - expected).max() / scale:.1e} (relative)"


@pytest.mark.parametrize("name", ["beam2d cubic", "springs 3D", "shell"])
def test_products_equal_the_matrix(name):
    """matvec and rmatvec (one vector and a block of three) equal the sparse matrix's products."""
    asm, u0, u1 = _setup(name)
    D = StartDerivatives(asm).residual(u0, u1, DT)
    A = D.matrix()
    rng = np.random.default_rng(1)
    for x in (rng.normal(size=asm.n_dof), rng.normal(size=(asm.n_dof, 3))):
        scale = abs(A).max() * np.abs(x).max() * asm.n_dof
        assert np.abs(D.matvec(x) - A @ x).max() < 1e-14 * scale
        assert np.abs(D.rmatvec(x) - A.T @ x).max() < 1e-14 * scale
    assert D.matvec(np.zeros(asm.n_dof)).shape == (asm.n_dof,)


def test_residual_sums_the_terms():
    """residual() = forces + damping + weight (+ chords) of the same step."""
    asm, u0, u1 = _setup("beam2d cubic")
    sd = StartDerivatives(asm)
    scheme = EnergyDecayingMidPoint(asm, rho_inf=0.5)
    total = sd.residual(u0, u1, DT, scheme).matrix()
    parts = sd.forces(u0, u1).matrix() + sd.damping(u0, u1, DT).matrix() + sd.external(u0, u1).matrix() \
        + sd.chords(scheme, u0, u1).matrix()
    assert abs(total - parts).max() < 1e-14 * abs(total).max()


def test_cayley_spin_map():
    """T_c(w)^{-1} inverts the spin of the Cayley map: R(w + h dw) R(w)^T = exp(h hat(T_c dw)) to O(h^2)."""
    rng = np.random.default_rng(2)
    w, dw, R0 = rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), exp_map(rng.normal(size=(4, 3)))
    h = 1e-6
    spin = (log_map(cayley(w + h * dw) @ R0 @ np.swapaxes(cayley(w - h * dw) @ R0, 1, 2))) / (2.0 * h)
    recovered = np.einsum("nij,nj->ni", cayley_spin_inverse(w), spin)
    assert np.abs(recovered - dw).max() < 1e-8 * np.abs(dw).max()
    psi = rng.normal(size=(4, 3))
    assert np.allclose(exp_map(cayley_compose(w, psi)), cayley(w) @ exp_map(psi), atol=1e-14)


def test_unsupported_group_refused():
    """A group of a type the derivative does not know (here a Truss subclass, whose kernels may
    differ) is refused with a ModelError naming the group."""
    class LoggedTruss(Truss):
        pass

    m = _truss(2)
    m.groups[0] = LoggedTruss(m.groups[0].connectivity, 2, 1e5, name="logged")
    asm = fm.Assembly(m)
    u = np.zeros(asm.n_dof)
    with pytest.raises(ModelError, match="'logged' is a LoggedTruss group"):
        StartDerivatives(asm).forces(u, u)


def test_unsupported_weight_refused():
    """The weight of a 3D modal body over a step is not symmetric in its ends: refused, naming the body."""
    asm = fm.Assembly(_modal(3))
    u = np.zeros(asm.n_dof)
    with pytest.raises(ModelError, match="weight of element group 'modal body 0'"):
        StartDerivatives(asm).external(u, u)
