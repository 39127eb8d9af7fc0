"""Start-of-step derivatives of the mid-point inertia terms (:mod:`flexmb.sensitivity.inertia`): the
reversal and affinity identities they rest on, each kind's derivatives w.r.t. u_n, v_n and the
director stretch rates s_n against central differences of the scheme's residual, the products with
vectors against the matrices, the whole residual's start derivative (the force terms of
:mod:`flexmb.sensitivity.matrices` and these; cubic Beam2D, planar and 3D modal bodies, rigid bodies and
Beam3D at spatial rotations) and the refusals."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import flexmb as fm
from flexmb.checks import ModelError
from flexmb.elements.hermite_mass2d import HermiteMass2D, director_step
from flexmb.integrators.schemes import (MidPoint, State, reference_mid_point_body_rates,
                                       reference_mid_point_rotary_terms)
from flexmb.rotations import cayley_between
from flexmb.sensitivity.inertia import InertiaDerivatives, InertiaMatrix
from flexmb.sensitivity.matrices import StartDerivatives, StartMatrix
from models import cantilever_body_3d

DT = 0.01                                   # s
T0 = 0.3                                    # s, the step's start time


def _cubic(damped: bool = True) -> fm.Model:
    """Three cubic-mass beams on a slope with a point mass and inertia at the tip; damped and under
    gravity (the scheme's generic path), or clamped at the root without either (the one-call
    compiled residual)."""
    m = fm.Model(dim=2)
    x = np.linspace(0.0, 1.5, 4)
    n = m.add_nodes(np.c_[x, 0.2 * x])
    m.add_beam2d(np.c_[n[:-1], n[1:]], EA=1e4, EI=10.0, rho_A=2.0, rho_I=0.01, mass="cubic")
    m.add_point_mass(n[-1], 0.5, 0.02)
    if damped:
        m.set_rayleigh_damping("beam2d", alpha=0.3, beta=1e-3)
        m.set_gravity([0.3, -9.81])
    else:
        m.fix(n[0])
    return m


def _lumped() -> fm.Model:
    """Planar beams with a lumped mass and a rigid body: the constant mass alone."""
    m = fm.Model(dim=2)
    n = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 3), np.zeros(3)])
    m.add_beam2d(np.c_[n[:-1], n[1:]], EA=1e4, EI=10.0, rho_A=2.0, rho_I=0.01, mass="lumped")
    body = m.add_rigid_body([1.5, 0.2], 2.0, 0.1)
    m.add_spring_damper(n[-1], body, k=50.0, c=2.0)
    return m


def _modal() -> fm.Model:
    """A free planar modal body (3 modes of a beam, stiffened, modal damping) under gravity."""
    from flexmb.cms.modal_body import ModalBodyData

    beam = fm.Model(dim=2)
    nodes = beam.add_nodes(np.c_[np.linspace(0.0, 1.0, 5), np.zeros(5)])
    beam.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=2e3, EI=3.0, rho_A=1.5, rho_I=1e-3, mass="cubic")
    m = fm.Model(dim=2)
    m.add_modal_body(ModalBodyData.from_model(beam, 0, 3, basis="free-interface"), damping_ratios=0.05)
    m.set_gravity([0.4, -9.81])
    return m


def _modal_3d() -> fm.Model:
    """A free 3D modal body (3 modes of a cantilever, modal damping) and beside it a lumped Beam3D
    without rotary inertia (its rotations' terms vanish); no weight (the force terms refuse a 3D modal
    body's: not symmetric in the step's ends)."""
    m = fm.Model(dim=3)
    m.add_modal_body(cantilever_body_3d(4, 3), damping_ratios=0.05)
    n = m.add_nodes(np.array([[1.5, 0.2, 0.1], [2.0, 0.3, 0.0]]))
    m.add_beam3d(np.c_[n[:-1], n[1:]], EA=8e4, GJ=10.0, EI_y=14.0, EI_z=22.0, rho_A=3.0, mass="lumped")
    return m


def _rigid_3d() -> fm.Model:
    """Two rigid bodies (full inertia tensors) joined by a spring-damper and a bushing, and a Beam3D
    with rotary inertia (consistent mass) and Rayleigh damping hanging from one of them: the rotary terms."""
    m = fm.Model(dim=3)
    a = m.add_rigid_body([0.0, 0.0, 0.0], 2.0, [[0.1, 0.01, 0.0], [0.01, 0.2, 0.02], [0.0, 0.02, 0.15]])
    b = m.add_rigid_body([1.0, 0.3, 0.2], 1.0, [0.05, 0.04, 0.06])
    m.add_spring_damper(a, b, k=50.0, c=2.0, at_a=[0.1, 0.2, 0.0], at_b=[1.1, 0.1, 0.3])
    m.add_bushing(a, b, k=[100.0, 200.0, 150.0], k_rot=[5.0, 6.0, 7.0], c=[1.0, 2.0, 3.0], c_rot=0.3,
                  at=[0.6, 0.2, 0.1])
    n = m.add_nodes(np.array([[1.0, 0.8, 0.2], [1.0, 1.3, 0.2]]))
    m.add_beam3d(np.array([[b.node, n[0]], [n[0], n[1]]]), EA=8e4, GJ=10.0, EI_y=14.0, EI_z=22.0, rho_A=3.0,
                 rho_I=(1e-3, 5e-4, 5e-4))
    m.set_rayleigh_damping("beam3d", alpha=0.3, beta=1e-3)
    return m


MODELS = {"cubic": _cubic, "cubic compiled": lambda: _cubic(False), "lumped": _lumped, "modal": _modal,
          "modal 3D": _modal_3d, "rigid 3D": _rigid_3d}


def _setup(name: str, dt: float = DT, seed: int = 0):
    """Assembly, scheme and a step: u0, u1 (displacements 0.05 m, rotations 0.3 rad and steps of
    about 0.3 rad), v0 (0.5 m/s or rad/s) and s0 (0.2 1/s at the director DOFs, else 0)."""
    asm = fm.Assembly(MODELS[name]())
    rng = np.random.default_rng(seed)
    u0, d = rng.normal(0.0, 0.05, asm.n_dof), rng.normal(0.0, 0.05, asm.n_dof)
    for rot in (asm.planar_rotations, asm.rotation_dofs.ravel()):
        u0[rot], d[rot] = rng.normal(0.0, 0.3, rot.size), rng.normal(0.0, 0.3, rot.size)
    v0 = rng.normal(0.0, 0.5, asm.n_dof)
    s0 = np.zeros(asm.n_dof)
    s0[asm.director_dofs] = rng.normal(0.0, 0.2, asm.director_dofs.size)
    return asm, MidPoint(asm), u0, asm.update(u0, d), v0, s0


def _residual(asm: fm.Assembly, scheme: MidPoint, u1: np.ndarray, dt: float = DT):
    """g(u_n, v_n, s_n) of the scheme's residual at fixed u_{n+1} (n_dof,)."""
    def g(u: np.ndarray, v: np.ndarray, s: np.ndarray) -> np.ndarray:
        state = State(T0, u, v, np.zeros(asm.n_dof), np.zeros(asm.dofs.prescribed.size),
                      stretch=s if asm.director_dofs.size else None)
        return scheme.residual(state, dt, u1, tangent=False).g
    return g


def _central_difference(g, x: list[np.ndarray], which: int, h: float, columns: np.ndarray,
                        asm: fm.Assembly) -> np.ndarray:
    """dg/dx[which] (n_dof, n_dof) by central differences of step h at the given columns (zero
    elsewhere); u_n (which = 0) moved as Assembly.update moves it (spins at 3D rotations)."""
    n = x[0].size
    out = np.zeros((n, n))
    for j in columns:
        e = np.zeros(n)
        e[j] = h
        plus, minus = list(x), list(x)
        if which == 0:
            plus[0], minus[0] = asm.update(x[0], e), asm.update(x[0], -e)
        else:
            plus[which], minus[which] = x[which] + e, x[which] - e
        out[:, j] = (g(*plus) - g(*minus)) / (2.0 * h)
    return out


def _fd_error(g, x, which, D, columns, asm) -> dict[float, float]:
    """Relative error (of D's largest entry) of D against central differences, per step h."""
    scale = np.abs(D).max()
    return {h: np.abs(_central_difference(g, x, which, h, columns, asm) - D).max() / scale for h in (1e-4, 1e-5, 1e-6)}


def _kind_terms(name: str) -> list[str]:
    """The inertia kinds present in a model (the names of the test's terms)."""
    kinds = {"cubic": ["constant mass", "directors", "cubic masses"], "lumped": ["constant mass"],
             "modal": ["modal bodies"], "modal 3D": ["constant mass", "modal bodies"],
             "rigid 3D": ["constant mass", "rotary terms"]}
    return kinds["cubic" if name.startswith("cubic") else name]


@pytest.mark.parametrize("name", MODELS)
def test_whole_inertia_against_central_differences(name):
    """Inertia + force terms: the start derivative of the whole mid-point residual w.r.t. u_n
    (StartDerivatives.residual + InertiaDerivatives.residual), v_n and s_n agrees with central
    differences of MidPoint.residual to 1e-7 of its largest entry at the best of h = 1e-4..1e-6
    (u_n: truncation falls as h^2 to ~1e-11; v_n and s_n enter affinely or nearly so: round-off only)."""
    asm, scheme, u0, u1, v0, s0 = _setup(name)
    if name == "cubic compiled":
        assert scheme._compiled_plan() is not None, "the model should take the one-call compiled residual"
    g = _residual(asm, scheme, u1)
    inertia = InertiaDerivatives(asm).residual(u0, u1, v0, s0, DT)
    whole = StartDerivatives(asm).residual(u0, u1, DT) + inertia.u
    assert isinstance(whole, InertiaMatrix)
    x = [u0, v0, s0]
    every = np.arange(asm.n_dof)
    cases = [("u_n", 0, whole, every), ("v_n", 1, inertia.v, every)]
    if asm.director_dofs.size:
        cases.append(("s_n", 2, inertia.stretch, asm.director_dofs))
    for label, which, D, columns in cases:
        errors = _fd_error(g, x, which, D.matrix().toarray(), columns, asm)
        assert min(errors.values()) < 1e-7, f"{name}: dg/d{label} off central differences by {errors} (relative)"


@pytest.mark.parametrize("name", ["cubic", "modal", "modal 3D", "rigid 3D"])
@pytest.mark.parametrize("dt", [1e-3, 0.1])
def test_each_kind_against_central_differences(name, dt):
    """Each kind's own contribution (the residual with the other kinds' terms removed: the constant
    mass M a_m off D, F_D at D, f_c of the configuration-dependent masses, the rotary terms at
    spatial rotations by their numpy specification) against central differences, at a small and a
    large step (0.1 s: about 3 rad/s of spin per 0.3 rad step)."""
    asm, _, u0, u1, v0, s0 = _setup(name, dt)
    der = InertiaDerivatives(asm)
    dd = asm.director_dofs

    def constant(u, v, s):
        a_m = (2.0 * (u1 - u) / dt - 2.0 * v) / dt
        out = asm.mass_times(a_m)
        out[dd] = 0.0
        return out

    def directors(u, v, s):
        out = np.zeros(asm.n_dof)
        out[dd] = director_step(u1[dd] - u[dd], v[dd], s[dd], asm.director_inertia, dt)[3]
        return out

    def masses(u, v, s):                     # f_c: the model's one kind of configuration-dependent mass
        return asm.mid_point_inertia(u, u1, v, s, dt, tangent=False)[0]

    def rotary(u, v, s):
        rd, out = asm.rotation_dofs, np.zeros(asm.n_dof)
        w = cayley_between(u[rd], u1[rd])
        rates = reference_mid_point_body_rates(u[rd], u1[rd], w, v[rd], dt)
        out[rd] = reference_mid_point_rotary_terms(*rates, asm.rotary_inertia, v[rd], w, dt)[0]
        return out

    terms = {"constant mass": (constant, der.constant_mass(u0, u1, dt)),
             "rotary terms": (rotary, der.rotary_terms(u0, u1, v0, dt)),
             "directors": (directors, der.directors(u0, u1, v0, s0, dt)),
             "cubic masses": (masses, der.cubic_masses(u0, u1, v0, s0, dt)),
             "modal bodies": (masses, der.modal_bodies(u0, u1, v0, dt))}
    for kind in _kind_terms(name):
        fun, result = terms[kind]
        for label, which, D in (("u_n", 0, result.u), ("v_n", 1, result.v), ("s_n", 2, result.stretch)):
            D = D.matrix().toarray()
            columns = dd if which == 2 else np.arange(asm.n_dof)
            if not np.any(D):
                fd = _central_difference(fun, [u0, v0, s0], which, 1e-5, columns, asm)
                assert np.abs(fd).max() < 1e-9 * max(np.abs(fun(u0, v0, s0)).max(), 1.0), \
                    f"{name}, {kind}: FD sees a d/d{label} the derivative misses"
                continue
            errors = _fd_error(fun, [u0, v0, s0], which, D, columns, asm)
            assert min(errors.values()) < 1e-7, f"{name} dt={dt}, {kind}: d/d{label} off by {errors} (relative)"


def test_cubic_mass_reversal_and_affinity():
    """F2: the cubic mass's step inertia is time-reversible, F(u0, u1, v0, s0; dt) = F(u1, u0, v1, s1;
    -dt) with the end rates of the director rule; so is F_D. F3: F is affine in (v0, s0) at fixed ends,
    2 F(r) - F(2 r) - F(0) = 0. Both to 1e-13 of F."""
    asm, _, u0, u1, v0, s0 = _setup("cubic", 0.05)
    dt, dd = 0.05, asm.director_dofs
    der = InertiaDerivatives(asm)
    v1, s1, step = der._director_rates(u0, u1, v0, s0, dt)
    forward = asm.mid_point_inertia(u0, u1, v0, s0, dt, tangent=False)[0]
    reversed_ = asm.mid_point_inertia(u1, u0, v1, s1, -dt, tangent=False)[0]
    scale = np.abs(forward).max()
    assert np.abs(forward - reversed_).max() < 1e-13 * scale, "cubic mass: the step is not reversible"
    F_rev = director_step(u0[dd] - u1[dd], v1[dd], s1[dd], asm.director_inertia, -dt)[3]
    assert np.abs(step[3] - F_rev).max() < 1e-13 * np.abs(step[3]).max(), "F_D: the step is not reversible"
    # the director rule itself: the reversed step returns to the start rates
    back = director_step(u0[dd] - u1[dd], v1[dd], s1[dd], asm.director_inertia, -dt)
    assert np.allclose(back[0], v0[dd], rtol=0.0, atol=1e-13 * np.abs(v0).max())
    assert np.allclose(back[1], s0[dd], rtol=0.0, atol=1e-13 * np.abs(v0).max())

    def F(v, s):
        return asm.mid_point_inertia(u0, u1, v, s, dt, tangent=False)[0]

    affine = 2.0 * F(v0, s0) - F(2.0 * v0, 2.0 * s0) - F(0.0 * v0, 0.0 * s0)
    assert np.abs(affine).max() < 1e-13 * scale, f"cubic mass not affine in the rates: {np.abs(affine).max():.1e}"


def test_modal_body_reversal_not_affine():
    """The planar modal body's step inertia is reversible (1e-13 of F) but not affine in v0 (its
    quadratic velocity terms): the reason its rate derivative takes complex steps."""
    asm, _, u0, u1, v0, s0 = _setup("modal", 0.05)
    dt = 0.05
    v1 = 2.0 * (u1 - u0) / dt - v0
    forward = asm.mid_point_inertia(u0, u1, v0, None, dt, tangent=False)[0]
    reversed_ = asm.mid_point_inertia(u1, u0, v1, None, -dt, tangent=False)[0]
    scale = np.abs(forward).max()
    assert np.abs(forward - reversed_).max() < 1e-13 * scale
    affine = 2.0 * forward - asm.mid_point_inertia(u0, u1, 2.0 * v0, None, dt, tangent=False)[0] \
        - asm.mid_point_inertia(u0, u1, 0.0 * v0, None, dt, tangent=False)[0]
    assert np.abs(affine).max() > 1e-6 * scale


def test_modal_body_3d_not_reversible():
    """The 3D modal body's step inertia (in the chart of the start) is not time-reversible: the
    reversed step (end rates of its velocity rule, -dt) misses the force by percents, so its start
    derivative takes complex steps, not the reversal."""
    asm, _, u0, u1, v0, _ = _setup("modal 3D", 0.05)
    dt = 0.05
    v1 = 2.0 * asm.cayley_increment(u0, u1) / dt - v0
    asm.set_modal_frame_velocities(u0, u1, v0, dt, v1)
    forward = asm.mid_point_inertia(u0, u1, v0, None, dt, tangent=False)[0]
    reversed_ = asm.mid_point_inertia(u1, u0, v1, None, -dt, tangent=False)[0]
    assert np.abs(forward - reversed_).max() > 1e-3 * np.abs(forward).max()


@pytest.mark.parametrize("name", ["cubic", "modal", "modal 3D"])
def test_products_equal_the_matrix(name):
    """matvec and rmatvec (a vector and a block of three) of the inertia derivatives, alone and added
    to the force terms', equal the sparse matrices' products."""
    asm, _, u0, u1, v0, s0 = _setup(name)
    inertia = InertiaDerivatives(asm).residual(u0, u1, v0, s0, DT)
    forces = StartDerivatives(asm).residual(u0, u1, DT)
    rng = np.random.default_rng(1)
    for D in (inertia.u, inertia.v, inertia.stretch, forces + inertia.u, inertia.u + forces):
        A = D.matrix()
        for x in (rng.normal(size=asm.n_dof), rng.normal(size=(asm.n_dof, 3))):
            scale = max(abs(A).max(), 1e-300) * np.abs(x).max() * asm.n_dof
            assert np.abs(D.matvec(x) - A @ x).max() < 1e-14 * scale
            assert np.abs(D.rmatvec(x) - A.T @ x).max() < 1e-14 * scale
    total = (forces + inertia.u).matrix() - forces.matrix() - inertia.u.matrix()
    assert abs(total).max() < 1e-14 * abs(inertia.u.matrix()).max()


def test_sum_of_kinds():
    """residual() = constant mass + directors + cubic masses + modal bodies of the same step."""
    asm, _, u0, u1, v0, s0 = _setup("cubic")
    der = InertiaDerivatives(asm)
    total = der.residual(u0, u1, v0, s0, DT)
    parts = der.constant_mass(u0, u1, DT) + der.directors(u0, u1, v0, s0, DT) + der.cubic_masses(u0, u1, v0, s0, DT) \
        + der.modal_bodies(u0, u1, v0, DT)
    for a, b in ((total.u, parts.u), (total.v, parts.v), (total.stretch, parts.stretch)):
        assert abs(a.matrix() - b.matrix()).max() < 1e-14 * abs(a.matrix()).max()


def test_stretch_needed_with_directors():
    """A model with cubic-mass nodes needs the start's stretch rates."""
    asm, _, u0, u1, v0, _ = _setup("cubic")
    with pytest.raises(ValueError, match="stretch rates"):
        InertiaDerivatives(asm).directors(u0, u1, v0, None, DT)


def test_unsupported_mass_refused():
    """A configuration-dependent mass of another kind is refused with a ModelError naming the group."""
    asm = fm.Assembly(_cubic())
    i, kernels = asm.configuration_masses[0]

    class LoggedMass(HermiteMass2D):
        pass

    asm.configuration_masses[0] = (i, LoggedMass(kernels.X, kernels.mass / kernels.l0))
    with pytest.raises(ModelError, match="element group 'beam2d' has a LoggedMass mass"):
        InertiaDerivatives(asm)


def test_plain_start_matrix_sums():
    """A StartMatrix added to an InertiaMatrix from either side keeps the constant sparse part."""
    asm, _, u0, u1, v0, s0 = _setup("lumped")
    constant = InertiaDerivatives(asm).constant_mass(u0, u1, DT).u
    empty = StartMatrix(asm.n_dof)
    for total in (empty + constant, constant + empty):
        assert isinstance(total, InertiaMatrix)
        assert abs(total.matrix() + 2.0 / DT**2 * asm.mass).max() < 1e-14 * abs(asm.mass).max() / DT**2


def test_constant_mass_at_spatial_rotations_refused():
    """A constant mass at spatial rotations (flexmb's elements keep rotary inertia in the rotary terms;
    here put into the assembly's mass by hand) is refused with a ModelError naming the group and node."""
    asm = fm.Assembly(_rigid_3d())
    r = int(asm.rotation_dofs[-1, 0])
    asm.mass = (asm.mass + sp.csr_matrix(([0.1], ([r], [r])), shape=asm.mass.shape)).tocsr()
    node = int(asm.rotation_nodes[-1])
    with pytest.raises(ModelError, match=f"element group 'beam3d' at node {node} has a constant mass"):
        InertiaDerivatives(asm)
