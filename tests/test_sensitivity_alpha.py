"""Direct differentiation of generalized-alpha and Newmark runs (:mod:`flexmb.sensitivity.alpha`): the
derivatives of every state (u, v and the scheme's acceleration a, the consistent start acceleration
included) with respect to design parameters against central differences of re-runs of the changed model
(:meth:`~flexmb.sensitivity.parameters.TransientParameter.apply`, its own consistent a_0) over the same step
list (:func:`~flexmb.sensitivity.transient.replay`), with a step study that shows the differences'
truncation (~ h^2) and round-off (~ eps / h) branches about the DDM; on a damped truss under gravity, a
lumped Beam2D cantilever with a point mass, a damped cubic-mass cantilever under gravity, and slider-crank
A's cubic-mass rod at the benchmark's 40 generalized-alpha steps over 8 rad with its mid-span deflection
(first peak and last step); the slider-crank's scaling identity; kept and replayed states; the refusals."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.checks import ModelError
from flexmb.cms import design
from flexmb.sensitivity import parameters as P
from flexmb.sensitivity import responses as R
from flexmb.sensitivity.alpha import balance_derivative, direct_sensitivities
from flexmb.sensitivity.transient import record, replay, scheme_for
from flexmb.validation.slider_crank import ROD, ROD_MASS
from flexmb.validation.slider_crank import build as slider_crank
from models import damped_truss

#: the brief's accuracy of the DDM against the best central difference (relative)
TOL = 1e-6
#: slider-crank A's crank speed (rad/s) and the benchmark's steps over 8 rad of crank rotation
OMEGA, STEPS = 124.8, 40


def _cantilever() -> fm.Model:
    """A lumped-mass Beam2D cantilever of four elements with a tip point mass, under gravity and a tip load
    of 150 N at the start (a start acceleration that depends on the masses) ramped up to 300 N."""
    m = fm.Model(dim=2)
    n = m.add_nodes(np.c_[np.linspace(0.0, 2.0, 5), np.zeros(5)])
    m.add_beam2d(np.c_[n[:-1], n[1:]], EA=1e6, EI=5e2, rho_A=3.0, rho_I=1e-3, mass="lumped", name="beam")
    m.fix(n[0])
    m.add_point_mass(n[-1], 0.4)
    m.set_gravity([0.0, -9.81])
    m.add_load(n[-1], "uy", lambda t: -150.0 * (1.0 + min(t / 0.01, 1.0)))
    return m


def _cubic_cantilever() -> fm.Model:
    """A cubic-mass Beam2D cantilever of three elements (second-order elongation), Rayleigh-damped, falling
    under its own weight from rest: the configuration-dependent inertia, its weight and damping."""
    m = fm.Model(dim=2)
    n = m.add_nodes(np.c_[np.linspace(0.0, 2.0, 4), np.zeros(4)])
    m.add_beam2d(np.c_[n[:-1], n[1:]], EA=1e6, EI=5e2, rho_A=3.0, rho_I=1e-3, mass="cubic", name="beam",
                 second_order=True)
    m.fix(n[0])
    m.set_rayleigh_damping("beam", 0.2, 1e-4)
    m.set_gravity([0.0, -9.81])
    return m


#: label: builder, scheme, rho_inf, step (s), steps, parameters
CASES = {
    "truss, generalized-alpha": (damped_truss, "generalized-alpha", 0.8, 2e-3, 20,
                                 lambda m: [P.parameter(design.stiffness_scale("truss")),
                                            P.parameter(design.density_scale("truss")), P.rayleigh("truss", "beta")]),
    "truss, Newmark": (damped_truss, "newmark", None, 2e-3, 20,
                       lambda m: [P.parameter(design.density_scale("truss")), P.rayleigh("truss", "alpha")]),
    "cantilever, generalized-alpha": (_cantilever, "generalized-alpha", 0.3, 2e-3, 20,
                                      lambda m: [P.parameter(design.section_property("beam", "EI")),
                                                 P.parameter(design.density_scale("beam")),
                                                 P.parameter(design.point_mass(4, 0.4))]),
    "cubic cantilever, generalized-alpha": (_cubic_cantilever, "generalized-alpha", 0.6, 5e-3, 20,
                                            lambda m: [P.parameter(design.section_property("beam", "EI")),
                                                       P.parameter(design.density_scale("beam")),
                                                       P.rayleigh("beam", "alpha")]),
    "cubic cantilever, Newmark": (_cubic_cantilever, "newmark", None, 5e-3, 20,
                                  lambda m: [P.parameter(design.density_scale("beam")), P.rayleigh("beam", "beta")]),
}


def _slider_crank(n_steps: int = STEPS, keep_every: int = 1):
    """Slider-crank A (2 cubic-mass rod elements, massless slider) on generalized-alpha (rho_inf 0.8) with
    the benchmark's step 8 rad / omega / 40, over n_steps; its parameters (rod EI and rho_A multipliers, a
    point mass at the slider about 0 kg), their FD steps and the rod's nodes."""
    asm, v0, nodes = slider_crank(2, OMEGA, 0.0, "cubic")
    dt = 8.0 / OMEGA / STEPS
    run = record(asm, dt, n_steps * dt, v0=v0, scheme="generalized-alpha", keep_every=keep_every)
    params = [P.parameter(design.section_property("rod", "EI")), P.parameter(design.section_property("rod", "rho_A")),
              P.parameter(design.point_mass(int(nodes[-1]), 0.0))]
    # the slider mass moves the deflection little (normalised by the rod's mass, 1e-3 of the rod's EI): the
    # re-runs' round-off branch starts at larger steps, and the best step is 3e-4 of the rod's mass
    return run, params, np.array([1e-5, 1e-5, 3e-4 * ROD_MASS]), [int(n) for n in nodes]


def _rerun(run, model: fm.Model) -> tuple[R.Trajectory, np.ndarray]:
    """The trajectory and accelerations (N+1, n_dof) of ``model`` stepped from the run's start (u_0, v_0;
    the changed model's own consistent a_0) over the run's step list."""
    asm = fm.Assembly(model)
    stepper = scheme_for(asm, run.stepper.name, getattr(run.stepper, "rho_inf", None))
    s0 = run.states[0]
    start = stepper.initial_state(s0.t, s0.u.copy(), s0.v.copy())
    states = [start] + replay(asm, stepper, start, run.steps, run.settings)
    traj = R.Trajectory([s.t for s in states], [s.u for s in states], [s.v for s in states], asm)
    return traj, np.array([s.a for s in states])


def _central(run, model: fm.Model, p: P.TransientParameter, h: float):
    p0 = p.value(model)
    return _rerun(run, p.apply(model, p0 + h)), _rerun(run, p.apply(model, p0 - h))


def _errors(sens, j: int, plus, minus, h: float) -> dict:
    """Relative error of the DDM column j against the central difference, per state field (u, v, a), over
    all steps (Frobenius norms of the (N+1, n_dof) series)."""
    out = {}
    for name in ("u", "v", "a"):
        hi, lo = ((plus[1], minus[1]) if name == "a" else (getattr(plus[0], name), getattr(minus[0], name)))
        fd = (hi - lo) / (2.0 * h)
        ddm = getattr(sens, "d" + name)[:, :, j]
        out[name] = float(np.linalg.norm(ddm - fd) / np.linalg.norm(fd))
    return out


@pytest.mark.parametrize("label", list(CASES))
def test_ddm_matches_central_differences_of_re_runs(label):
    build, scheme, rho_inf, dt, n, make = CASES[label]
    model = build()
    params = make(model)
    run = record(fm.Assembly(model), dt, n * dt, scheme=scheme, rho_inf=rho_inf)
    sens = direct_sensitivities(run, params)
    assert sens.du.shape == sens.da.shape == (n + 1, run.asm.n_dof, len(params))
    assert np.array_equal(sens.u[-1], run.final.u) and np.array_equal(sens.a[-1], run.final.a)
    # u_0 and v_0 are given (the consistent a_0 depends on p)
    assert not sens.du[0].any() and not sens.dv[0].any()
    for j, p in enumerate(params):
        # damping moves the states little: the re-runs' round-off branch starts at larger relative steps
        h = (1e-3 if p.kind.startswith("rayleigh") else 1e-5) * abs(p.value(model))
        err = _errors(sens, j, *_central(run, model, p, h), h)
        assert max(err.values()) < TOL, f"{label}, {p.name}: DDM against central differences (h = {h:g}) {err}"


def test_start_acceleration_depends_on_the_mass():
    """The cantilever starts loaded, so its consistent start acceleration (M a_0 = f - q at rest) falls
    with the density: the DDM's da_0/dp (M da_0 = -dM/dp a_0) against the re-runs' a_0."""
    model = _cantilever()
    run = record(fm.Assembly(model), 2e-3, 2e-3, scheme="generalized-alpha")
    p = P.parameter(design.section_property("beam", "rho_A"))
    sens = direct_sensitivities(run, [p])
    (_, a_plus), (_, a_minus) = _central(run, model, p, 1e-5)
    fd = (a_plus[0] - a_minus[0]) / 2e-5
    assert np.abs(fd).max() > 1.0
    assert np.allclose(sens.da[0, :, 0], fd, rtol=1e-6, atol=1e-6 * np.abs(fd).max())


def test_balance_derivative_matches_differences_of_the_changed_models_balance():
    """dE/dp of the end-point balance at a fixed state (the cubic-mass rod, moving) equals the central
    difference of the balance of the changed models, each model's E = q - f + M a + f_c + q_d."""
    run, params, steps, _ = _slider_crank(6)
    s = run.final
    model = run.asm.model

    def balance(m: fm.Model) -> np.ndarray:
        asm = fm.Assembly(m)
        return (asm.internal_force(s.u) - asm.external_force(s.t, u=s.u) + asm.mass_times(s.a)
                + asm.end_point_inertia(s.u, s.v, s.a)[0])

    for p, h in zip(params, steps):
        exact = balance_derivative(p, run.asm, s.u, s.v, s.a)
        fd = (balance(p.apply(model, p.value(model) + h)) - balance(p.apply(model, p.value(model) - h))) / (2.0 * h)
        assert np.linalg.norm(exact - fd) < 1e-7 * np.linalg.norm(fd), p.name


def test_slider_crank_states_and_mid_span_deflection_gradients():
    """Slider-crank A, generalized-alpha, 40 steps over 8 rad: du/dp, dv/dp, da/dp of every state and the
    gradients of the first peak and of the last step's mid-span deflection (chord distance / L) with
    respect to the rod's EI, rho_A and the slider mass, against central differences of re-runs."""
    run, params, steps, nodes = _slider_crank()
    model = run.asm.model
    sens = direct_sensitivities(run, params)
    traj = sens.trajectory()
    deflection = R.chord_deflection(run.asm, *nodes, scale=ROD)
    window = 2.0 / OMEGA                                    # the validation's first 2 rad
    responses = [lambda tr: R.first_peak(deflection, tr, window=window), lambda tr: R.final(deflection, tr)]
    values = [f(traj) for f in responses]
    assert 5e-3 < values[0].value < 2e-2                     # the first maximum (0.009762 converged)
    assert min(values[0].info["margins"]) > 0.0
    for j, p in enumerate(params):
        h = steps[j]
        plus, minus = _central(run, model, p, h)
        err = _errors(sens, j, plus, minus, h)
        assert max(err.values()) < TOL, f"{p.name}: states' derivatives off the FD by {err}"
        for f, value in zip(responses, values):
            fd = (f(plus[0]).value - f(minus[0]).value) / (2.0 * h)
            ddm = sens.gradient(value)[j]
            assert abs(ddm - fd) < TOL * abs(fd), f"{p.name}: dF/dp {ddm:.9g} against FD {fd:.9g}"


def test_slider_crank_scaling_identity():
    """The crank motion is prescribed and nothing loads the mechanism, so scaling all its stiffness and all
    its mass by one factor leaves the discrete solution (the consistent a_0 included) unchanged: with a
    slider mass m_s (half the rod's), the derivatives with respect to the rod's EA, EI, rho_A and rho_I
    multipliers plus m_s times the one with respect to m_s sum to zero (measured 2e-12 of the largest
    term), an identity free of finite differences."""
    m_s = 0.5 * ROD_MASS
    asm, v0, nodes = slider_crank(2, OMEGA, m_s, "cubic")
    dt = 8.0 / OMEGA / STEPS
    run = record(asm, dt, STEPS * dt, v0=v0, scheme="generalized-alpha")
    params = [P.parameter(design.section_property("rod", prop)) for prop in ("EA", "EI", "rho_A", "rho_I")]
    params.append(P.parameter(design.point_mass(int(nodes[-1]), m_s)))
    sens = direct_sensitivities(run, params)
    weights = np.array([1.0, 1.0, 1.0, 1.0, m_s])
    for name in ("du", "dv", "da"):
        d = getattr(sens, name) * weights
        assert np.abs(d.sum(axis=2)).max() < 1e-10 * np.abs(d).max(), name


def _assert_two_branches(errors: np.ndarray, steps: np.ndarray, what: str) -> None:
    """errors(h) falls as h^2 on the large steps (truncation), reaches TOL, and rises again on the
    smallest steps (round-off of the re-runs, ~ eps / h)."""
    best = int(np.argmin(errors))
    table = ", ".join(f"{h:.0e}: {e:.2e}" for h, e in zip(steps, errors))
    assert errors[best] < TOL, f"{what}: best central difference {errors[best]:.2e} from the DDM ({table})"
    slope = np.polyfit(np.log10(steps[1:4]), np.log10(errors[1:4]), 1)[0]
    assert 1.8 < slope < 2.2, f"{what}: truncation branch of slope {slope:.2f}, not 2 ({table})"
    assert 0 < best < steps.size - 1 and errors[-1] > 10.0 * errors[best], f"{what}: no round-off branch ({table})"


def test_slider_crank_step_study_of_the_rod_stiffness():
    """The step study of the EI multiplier (measured, the largest of u, v and a over all steps: 3.9e-3 at
    h = 1e-2, 3.9e-5 at 1e-3, 3.9e-7 at 1e-4, 2.3e-7 at 1e-5 (u: 4.7e-8), 3.1e-6 at 1e-6, 2.9e-4 at 1e-8):
    both branches about the DDM."""
    run, params, _, _ = _slider_crank()
    sens = direct_sensitivities(run, params[:1])
    steps = 10.0 ** -np.arange(1.0, 9.0)
    errors = np.array([max(_errors(sens, 0, *_central(run, run.asm.model, params[0], h), h).values())
                       for h in steps])
    _assert_two_branches(errors, steps, "slider-crank rod EI, generalized-alpha")


def test_replayed_segments_give_the_kept_states_derivatives_bit_for_bit():
    """A run that keeps every 7th state is replayed between them: the same states and derivatives as the
    run that keeps them all."""
    every, params, _, _ = _slider_crank(20)
    some = _slider_crank(20, keep_every=7)[0]
    a, b = direct_sensitivities(every, params), direct_sensitivities(some, params)
    for name in ("u", "v", "a", "du", "dv", "da"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


def test_refusals_name_the_reason():
    pendulum = fm.Model(dim=2)
    bob = pendulum.add_rigid_body([0.0, -1.0], 1.0, 0.1, name="bob")
    pendulum.add_joint("revolute", None, bob, at=[0.0, 0.0], name="hinge")
    pendulum.set_gravity([0.0, -9.81])
    with pytest.raises(ModelError, match="joint 'hinge'"):
        direct_sensitivities(record(fm.Assembly(pendulum), 0.01, 0.02, scheme="generalized-alpha"),
                             [P.body_mass(bob)])
    bar = fm.Model(dim=3)
    n = bar.add_nodes(np.c_[np.linspace(0.0, 1.0, 3), np.zeros(3), np.zeros(3)])
    bar.add_beam3d(np.c_[n[:-1], n[1:]], EA=1e5, GJ=50.0, EI_y=80.0, EI_z=90.0, rho_A=2.0, rho_I=[0.01, 0.005, 0.005],
                   name="b3")
    bar.fix(n[0], "all")
    with pytest.raises(ModelError, match="has spatial"):
        direct_sensitivities(record(fm.Assembly(bar), 0.01, 0.02, scheme="generalized-alpha"),
                             [P.parameter(design.density_scale("b3"))])
    model = damped_truss()
    mid = record(fm.Assembly(model), 2e-3, 4e-3)
    with pytest.raises(ModelError, match="'mid-point' is not one of generalized-alpha, newmark"):
        direct_sensitivities(mid, [P.parameter(design.density_scale("truss"))])
    alpha = record(fm.Assembly(model), 2e-3, 4e-3, scheme="generalized-alpha")
    with pytest.raises(ModelError, match="at least one parameter"):
        direct_sensitivities(alpha, [])
