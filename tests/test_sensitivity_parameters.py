"""Transient design parameters (flexmb.sensitivity.parameters): the mid-point residual's and the
mass's derivatives against central differences of models changed with ``apply``, and the
linearity that makes them exact."""
import numpy as np
import pytest

import flexmb as fm
from flexmb.checks import ModelError
from flexmb.cms import design
from flexmb.integrators.schemes import MidPoint, State
from flexmb.io.shell_mesh import rectangle
from flexmb.sensitivity import parameters as P

DT = 1e-3


def _rod(mass="cubic"):
    """Three planar beam elements (the slider-crank rod's kind: second order, cubic mass),
    pinned at node 0, a point mass at the free end, Rayleigh damping, gravity."""
    m = fm.Model(dim=2)
    n = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 4), np.zeros(4)])
    m.add_beam2d(np.c_[n[:-1], n[1:]], EA=1e6, EI=2e2, rho_A=3.0, rho_I=0.01, mass=mass, name="rod",
                 second_order=True)
    m.fix(n[0], ["ux", "uy"])
    m.add_point_mass(n[-1], 0.5)
    m.set_rayleigh_damping("rod", 0.3, 1e-3)
    m.set_gravity([0.0, -9.81])
    params = [P.parameter(design.section_property("rod", p)) for p in ("EA", "EI", "rho_A", "rho_I")]
    params += [P.parameter(design.stiffness_scale("rod")), P.parameter(design.density_scale("rod")),
               P.parameter(design.point_mass(n[-1], 0.5)), P.rayleigh("rod", "alpha"), P.rayleigh("rod", "beta"),
               P.element_property("rod", "EI", [1]), P.element_property("rod", "rho_A", [0, 2])]
    return m, params


def _mechanism():
    """Rigid bodies: a slider on a prismatic joint held by a spring-damper to the ground, and a
    pendulum bob with a spring-damper on its revolute joint."""
    m = fm.Model(dim=2)
    m.set_gravity([0.0, -9.81])
    slider = m.add_rigid_body([1.0, 0.0], 2.0, 0.1, name="slider")
    m.add_joint("prismatic", None, slider, x_axis=[1.0, 0.0])
    spring = m.add_spring_damper(None, slider, k=50.0, c=0.7, at_a=[0.0, 0.0])
    bob = m.add_rigid_body([0.0, -0.5], 1.5, 0.05, name="bob")
    hinge = m.add_joint("revolute", None, bob, at=[0.0, 0.0])
    torsion = m.add_joint_spring_damper(hinge, k=3.0, c=0.2)
    return m, [P.spring_rate(spring), P.damper_rate(spring), P.body_mass(slider), P.body_inertia(slider),
               P.spring_rate(torsion), P.damper_rate(torsion), P.body_mass(bob), P.body_inertia(bob)]


def _shell():
    """A free plate of Shell3 elements (3D rotations, rotary inertia) with Rayleigh damping."""
    xyz, tri = rectangle(1.0, 0.6, 3, 2)
    m = fm.Model(dim=3)
    nodes = m.add_nodes(xyz)
    m.set_gravity([0.0, 0.0, -9.81])
    m.add_shell(nodes[tri], E=2e9, nu=0.3, thickness=0.01, rho=1000.0, name="plate")
    m.set_rayleigh_damping("plate", 0.5, 1e-4)
    return m, [P.parameter(design.section_property("plate", "E")), P.parameter(design.section_property("plate", "rho")),
               P.rayleigh("plate", "alpha"), P.rayleigh("plate", "beta"), P.element_property("plate", "rho", [0, 3])]


def _frame3d():
    """A Beam3D cantilever welded to a 3D rigid body (full inertia tensor)."""
    m = fm.Model(dim=3)
    m.set_gravity([0.0, 0.0, -9.81])
    n = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 3), np.zeros(3), np.zeros(3)])
    m.add_beam3d(np.c_[n[:-1], n[1:]], EA=1e5, GJ=50.0, EI_y=80.0, EI_z=90.0, rho_A=2.0,
                 rho_I=[0.01, 0.005, 0.005], name="b3")
    box = m.add_rigid_body([1.5, 0.0, 0.0], 3.0, [[0.1, 0.01, 0.0], [0.01, 0.2, 0.0], [0.0, 0.0, 0.25]], name="box")
    m.add_joint("fixed", n[-1], box, at=[1.0, 0.0, 0.0])
    m.fix(n[0], "all")
    params = [P.parameter(design.section_property("b3", q)) for q in ("EA", "GJ", "EI_y", "EI_z", "rho_A", "rho_I")]
    return m, params + [P.body_mass(box), P.body_inertia(box, "xx"), P.body_inertia(box, "xy"),
                        P.element_property("b3", "rho_I", [1])]


MODELS = {"rod cubic": lambda: _rod("cubic"), "rod lumped": lambda: _rod("lumped"),
          "rod consistent": lambda: _rod("consistent"), "mechanism": _mechanism, "shell": _shell, "frame3d": _frame3d}


def _step(asm, seed):
    """A step's start state (u, v, director stretch rates) and end displacements, random."""
    rng = np.random.default_rng(seed)
    n = asm.n_dof
    u0 = 0.05 * rng.standard_normal(n)
    s = State(0.0, u0, rng.standard_normal(n), np.zeros(n), np.zeros(n))
    if asm.director_dofs.size:
        s.stretch = np.zeros(n)
        s.stretch[asm.director_dofs] = rng.standard_normal(asm.director_dofs.size)
    return s, u0 + 0.02 * rng.standard_normal(n)


def _residual(model, s, u1):
    return MidPoint(fm.Assembly(model)).residual(s, DT, u1, tangent=False).g


def _residual_scale(model, s, u1):
    """Size of the residual's terms (N): the round-off of a difference of residuals is eps times it."""
    res = MidPoint(fm.Assembly(model)).residual(s, DT, u1, tangent=False)
    return res.force_scale + np.linalg.norm(res.g)


@pytest.mark.parametrize("label", list(MODELS))
def test_residual_derivative_matches_central_differences(label):
    model, params = MODELS[label]()
    asm = fm.Assembly(model)
    scheme = MidPoint(asm)
    s, u1 = _step(asm, 3)
    scale = _residual_scale(model, s, u1)
    for p in params:
        p0 = p.value(model)
        h = 1e-2 * max(abs(p0), 1.0)
        fd = (_residual(p.apply(model, p0 + h), s, u1) - _residual(p.apply(model, p0 - h), s, u1)) / (2.0 * h)
        exact = p.residual_derivative(scheme, s, DT, u1)
        assert np.linalg.norm(exact) > 0.0, f"{label}, {p.name}: no derivative"
        # the residual is linear in p: the central difference has no truncation error, only the
        # round-off of the residuals' terms, eps * scale / h
        floor = 1e3 * np.finfo(float).eps * scale / h
        err = np.linalg.norm(exact - fd)
        assert err <= 1e-7 * np.linalg.norm(fd) + floor, (f"{label}, {p.name} ({p.unit}): dg/dp off by {err:.3g} "
                                                          f"(|dg/dp| {np.linalg.norm(fd):.3g}, floor {floor:.3g})")


@pytest.mark.parametrize("label", ["rod cubic", "mechanism", "shell", "frame3d"])
def test_mass_derivative_matches_central_differences(label):
    model, params = MODELS[label]()
    asm = fm.Assembly(model)
    s, u1 = _step(asm, 5)
    free = asm.dofs.free
    for p in params:
        p0 = p.value(model)
        h = 1e-2 * max(abs(p0), 1.0)
        plus, minus = fm.Assembly(p.apply(model, p0 + h)), fm.Assembly(p.apply(model, p0 - h))
        fd = asm.free_matrix((plus.mass_data_at(u1) - minus.mass_data_at(u1)) / (2.0 * h)).toarray()
        exact = p.mass_derivative(asm, u1)[free][:, free].toarray()
        err = np.abs(exact - fd).max()
        assert err <= 1e-9 * max(np.abs(fd).max(), 1.0), f"{label}, {p.name}: dM/dp off by {err:.3g}"
        if p.kind in ("section property", "density scale", "point mass", "body mass", "body inertia") and \
                p.prop not in design.STIFFNESS_PROPERTIES.get(type(model.groups[0]).__name__, ()) + ("E",):
            assert np.abs(exact).max() > 0.0, f"{label}, {p.name}: a mass parameter with no dM/dp"


def test_residual_is_linear_in_each_parameter():
    """g(p0 + 2h) - 2 g(p0 + h) + g(p0) = 0 and g(p0 + 1) - g(p0) = dg/dp, to round-off: the
    derivative is exact (a nonlinear property slipping in would break this)."""
    for build in (MODELS["rod cubic"], _mechanism):
        model, params = build()
        asm = fm.Assembly(model)
        s, u1 = _step(asm, 7)
        scale = _residual_scale(model, s, u1)
        for p in params:
            p0 = p.value(model)
            h = max(abs(p0), 1.0)
            g0, g1, g2 = (_residual(p.apply(model, p0 + k * h), s, u1) for k in (0, 1, 2))
            second = np.linalg.norm(g2 - 2.0 * g1 + g0)
            assert second <= 1e-12 * scale, f"{p.name}: second difference {second:.3g} (scale {scale:.3g})"
            exact = p.residual_derivative(MidPoint(asm), s, DT, u1)
            err = np.linalg.norm((g1 - g0) / h - exact)
            assert err <= 1e-12 * scale / h, f"{p.name}: one-sided difference off by {err:.3g}"


def test_stiffness_and_mass_shares_add_up():
    """The section properties' derivatives add up to the whole-group scales' (EA + EI = stiffness
    scale, rho_A + rho_I = density scale), and scaling all stiffness, mass and the point mass by a
    common factor c scales the residual by c (its derivative sums to g, the slider-crank's check)."""
    model, params = _rod("cubic")
    byname = {p.name: p for p in params}
    asm = fm.Assembly(model)
    scheme = MidPoint(asm)
    s, u1 = _step(asm, 9)
    d = {name: p.residual_derivative(scheme, s, DT, u1) for name, p in byname.items()}
    scale = _residual_scale(model, s, u1)
    assert np.linalg.norm(d["EA scale rod"] + d["EI scale rod"] - d["E scale rod"]) <= 1e-13 * scale
    assert np.linalg.norm(d["rho_A scale rod"] + d["rho_I scale rod"] - d["rho scale rod"]) <= 1e-13 * scale
    # per-element shares add up to the group's
    rest = {"EI": [0, 2], "rho_A": [1]}
    for prop, named in (("EI", "EI scale rod elements 1"), ("rho_A", "rho_A scale rod elements 0,2")):
        other = P.element_property("rod", prop, rest[prop]).residual_derivative(scheme, s, DT, u1)
        assert np.linalg.norm(d[named] + other - d[f"{prop} scale rod"]) <= 1e-13 * scale, prop
        assert np.linalg.norm(d[named]) > 1e-3 * np.linalg.norm(d[f"{prop} scale rod"]), prop
    # g is homogeneous of degree 1 in (stiffness, masses) at fixed alpha and beta (the damping
    # alpha M + beta K and the weight scale with them): sum_p p dg/dp = g
    total = sum(p.value(model) * d[p.name] for p in params
                if p.kind in ("stiffness scale", "density scale", "point mass"))
    g = _residual(model, s, u1)
    assert np.linalg.norm(total - g) <= 1e-12 * scale, f"Euler sum off by {np.linalg.norm(total - g):.3g}"


@pytest.mark.parametrize("label, group, prop", [("rod cubic", "rod", "EI"), ("rod cubic", "rod", "rho_A"),
                                                ("rod lumped", "rod", "rho_I"), ("shell", "plate", "rho"),
                                                ("frame3d", "b3", "rho_I")])
def test_element_shares_are_the_single_elements_derivatives(label, group, prop):
    """A group multiplier's share of element e is the derivative for element e alone: the
    adjoint weighs these shares for per-element parameters instead of evaluating each."""
    model, _ = MODELS[label]()
    asm = fm.Assembly(model)
    scheme = MidPoint(asm)
    s, u1 = _step(asm, 11)
    scale = _residual_scale(model, s, u1)
    (ed, shares), = P.parameter(design.section_property(group, prop)).residual_shares(scheme, s, DT, u1)
    assert shares.shape == ed.shape
    for e in range(ed.shape[0]):
        single = P.element_property(group, prop, [e]).residual_derivative(scheme, s, DT, u1)
        scattered = np.zeros(asm.n_dof)
        np.add.at(scattered, ed[e], shares[e])
        assert np.linalg.norm(single - scattered) <= 1e-13 * scale, f"element {e}"
        assert np.linalg.norm(single) > 0.0, f"element {e}: no share"


def test_apply_changes_only_the_copy():
    model, params = _mechanism()
    before = [p.value(model) for p in params]
    for p, p0 in zip(params, before):
        changed = p.apply(model, 2.0 * p0 + 1.0)
        assert p.value(changed) == pytest.approx(2.0 * p0 + 1.0, rel=1e-15)
        assert p.value(model) == p0
    rod, rod_params = _rod("cubic")
    ei = rod_params[1]
    changed = ei.apply(rod, 1.5)
    np.testing.assert_allclose(changed.groups[0].EI, 1.5 * rod.groups[0].EI, rtol=1e-15)
    np.testing.assert_array_equal(changed.groups[0].EA, rod.groups[0].EA)
    segment = P.element_property("rod", "EI", [1]).apply(rod, 2.0)
    np.testing.assert_allclose(segment.groups[0].EI, rod.groups[0].EI * [1.0, 2.0, 1.0], rtol=1e-15)


def test_refusals_name_the_parameter():
    model, _ = _shell()
    h = P.thickness("plate")
    thinner = h.apply(model, 0.5)                              # finite differences of re-runs work
    np.testing.assert_allclose(thinner.groups[0].thickness, 0.5 * model.groups[0].thickness)
    asm = fm.Assembly(model)
    s, u1 = _step(asm, 1)
    with pytest.raises(ModelError, match="thickness scale plate.*not linear"):
        h.residual_derivative(MidPoint(asm), s, DT, u1)
    m = fm.Model(dim=3)
    n = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 3), np.zeros(3), np.zeros(3)])
    m.add_beam3d(np.c_[n[:-1], n[1:]], EA=1e5, GJ=50.0, EI_y=80.0, EI_z=90.0, GA_ky=1e4, GA_kz=1e4, rho_A=1.0,
                 name="timoshenko")
    bending = P.parameter(design.section_property("timoshenko", "EI_y"))
    asm = fm.Assembly(m)
    s, u1 = _step(asm, 2)
    with pytest.raises(ModelError, match="EI_y scale timoshenko.*not linear"):
        bending.residual_derivative(MidPoint(asm), s, DT, u1)
    with pytest.raises(ModelError, match="spring"):
        P.parameter(design.spring(n[1], "uz"))
    with pytest.raises(ModelError, match="group 'nope'"):
        P.rayleigh("nope", "alpha").value(m)


def _modal_body(n_modes: int = 3):
    """A free planar modal body (a consistent-mass beam of six elements, stiffened, modal damping)
    under gravity, and its stiffness and density scales (flexmb.cms design variables of the body)."""
    from flexmb.cms.modal_body import ModalBodyData

    beam = fm.Model(dim=2)
    n = beam.add_nodes(np.c_[np.linspace(0.0, 1.0, 7), np.zeros(7)])
    beam.add_beam2d(np.c_[n[:-1], n[1:]], EA=1e5, EI=50.0, rho_A=2.0, rho_I=1e-3, mass="consistent", name="fe")
    m = fm.Model(dim=2)
    m.add_modal_body(ModalBodyData.from_model(beam, 0, n_modes), name="arm", damping_ratios=0.02)
    m.set_gravity([0.0, -9.81])
    return m, [P.parameter(design.stiffness_scale("arm")), P.parameter(design.density_scale("arm"))]


def _modal_body_3d():
    """A free 3D modal body (3 modes of a Beam3D cantilever, stiffened) without weight."""
    from models import cantilever_body_3d

    m = fm.Model(dim=3)
    m.add_modal_body(cantilever_body_3d(4, 3), name="arm", damping_ratios=0.02)
    return m, [P.parameter(design.stiffness_scale("arm")), P.parameter(design.density_scale("arm"))]


@pytest.mark.parametrize("build", [_modal_body, _modal_body_3d], ids=["2D", "3D"])
def test_modal_body_scales_derivatives_match_central_differences_and_are_linear(build):
    """A modal body's stiffness scale (K_e q) and density scale (all of its inertia and weight, the
    stiffening terms included) enter the mid-point residual, the mass and the energies linearly:
    their derivatives equal central differences of re-built models to round-off, and second
    differences vanish. The modal damping is held (not scaled)."""
    model, params = build()
    asm = fm.Assembly(model)
    scheme = MidPoint(asm)
    s, u1 = _step(asm, 13)
    scale = _residual_scale(model, s, u1)
    free = asm.dofs.free
    for p in params:
        assert p.value(model) == 1.0
        g0, g1, g2 = (_residual(p.apply(model, 1.0 + k), s, u1) for k in (0, 1, 2))
        assert np.linalg.norm(g2 - 2.0 * g1 + g0) <= 1e-12 * scale, f"{p.name}: not linear"
        exact = p.residual_derivative(scheme, s, DT, u1)
        assert np.linalg.norm(exact) > 1e-5 * scale, f"{p.name}: no derivative"
        err = np.linalg.norm(g1 - g0 - exact)
        assert err <= 1e-12 * scale, f"{p.name}: dg/dp off by {err:.3g} of {np.linalg.norm(exact):.3g}"
        h = 1e-3
        plus, minus = fm.Assembly(p.apply(model, 1.0 + h)), fm.Assembly(p.apply(model, 1.0 - h))
        fd = asm.free_matrix((plus.mass_data_at(u1) - minus.mass_data_at(u1)) / (2.0 * h)).toarray()
        dM = p.mass_derivative(asm, u1)[free][:, free].toarray()
        assert np.abs(dM - fd).max() <= 1e-9 * max(np.abs(fd).max(), 1.0), f"{p.name}: dM/dp off"
        assert (np.abs(dM).max() > 0.0) == (p.kind == "density scale"), p.name
        dT, dV = p.energy_derivatives(asm, u1, s.v)
        fd_T = (plus.kinetic_energy(s.v, u1) - minus.kinetic_energy(s.v, u1)) / (2.0 * h)
        fd_V = (plus.strain_energy(u1) - minus.strain_energy(u1)) / (2.0 * h)
        assert dT == pytest.approx(fd_T, rel=1e-9, abs=1e-12) and dV == pytest.approx(fd_V, rel=1e-9, abs=1e-12), \
            f"{p.name}: (dT, dV) = {(dT, dV)} against {(fd_T, fd_V)}"
        assert (dT != 0.0) == (p.kind == "density scale") and (dV != 0.0) == (p.kind == "stiffness scale")
    changed = params[0].apply(model, 2.0).groups[0]
    np.testing.assert_array_equal(changed.modal_damping, model.groups[0].modal_damping)
    np.testing.assert_allclose(changed.data.modal_stiffness, 2.0 * model.groups[0].data.modal_stiffness, rtol=1e-15)


@pytest.mark.parametrize("stiffening", [True, False])
def test_modal_body_density_scale_is_the_fe_density_with_the_modes_held(stiffening):
    """``apply`` of a density scale r multiplies the body's velocity-field Gram matrix and first
    moments by r. That is the FE model's mass r M with the modes held: the fields re-derived from r M
    (the second-order field's unit loads r M U and their geometric stiffness included) give the same
    step inertia and weight; and their central difference in r at r = 1 is the baseline's (the
    plan's FD check that the stiffening terms are linear in the density)."""
    import copy
    import dataclasses

    from flexmb.elements.floating_frame import FloatingFrameMass
    from flexmb.elements.velocity_fields import BodyVelocityFields

    model, params = _modal_body()
    body = model.groups[0]
    body.stiffening = stiffening
    body.velocity_fields = BodyVelocityFields(body.data, stiffening)
    data, X = body.data, model.coordinates[body.connectivity]
    rng = np.random.default_rng(17)
    u0 = 0.1 * rng.standard_normal((4, body.ndof))
    u1, v0 = u0 + 0.05 * rng.standard_normal(u0.shape), rng.standard_normal(u0.shape)
    g = np.array([0.3, -9.81])

    def forces(kernels):
        return np.concatenate([kernels.reference_mid_point_inertia(u0, u1, v0, 0.01, False)[0],
                               kernels.reference_mid_point_gravity(u0, u1, g)[0].reshape(u0.shape)], axis=1)

    def fe_density(r):
        comp = copy.copy(data.component)
        comp.M = r * data.component.M
        scaled = dataclasses.replace(data, component=comp, mass=r * data.mass, first_moment0=r * data.first_moment0,
                                     translation_coupling=r * data.translation_coupling)
        return FloatingFrameMass(BodyVelocityFields(scaled, stiffening), X)

    base = forces(FloatingFrameMass(body.velocity_fields, X))
    size = np.abs(base).max()
    # r a power of two scales every float exactly, so the re-derivation must match to round-off; other
    # r meet the rounding of the re-derived fields, which the nearly dependent unit loads amplify (the
    # second-order field's coefficients reach 1e4 here): measured 1e-9 to 6e-9 of the force
    for r, tol in ((0.5, 1e-13), (2.0, 1e-13), (0.9, 1e-7), (1.1, 1e-7)):
        applied = params[1].apply(model, r).groups[0]
        err = np.abs(forces(applied.configuration_mass(X)) - forces(fe_density(r))).max()
        assert err <= tol * r * size, f"r = {r}: applied density scale against the FE model's r M: {err:.3g}"
    h = 0.1                  # linear in r: no truncation error, and the rounding above over a larger step
    fd = (forces(fe_density(1.0 + h)) - forces(fe_density(1.0 - h))) / (2.0 * h)
    err = np.abs(fd - base).max()
    assert err <= 1e-7 * size, f"d/dr of the FE-derived forces misses the baseline by {err:.3g} of {size:.3g}"


def test_modal_body_refuses_other_kinds():
    model, _ = _modal_body(2)
    with pytest.raises(ModelError, match="rho_A scale arm.*modal body.*stiffness scale and density scale"):
        P.parameter(design.section_property("arm", "rho_A")).value(model)
    with pytest.raises(ModelError, match="Rayleigh alpha arm.*modal body"):
        P.rayleigh("arm", "alpha").value(model)
