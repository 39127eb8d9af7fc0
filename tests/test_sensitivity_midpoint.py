"""Direct differentiation of mid-point runs (:mod:`flexmb.sensitivity.midpoint`): the derivatives of every
state of a run with respect to design parameters against central differences of re-runs of the changed
model (:meth:`~flexmb.sensitivity.parameters.TransientParameter.apply`) over the same step list, with a
step study that shows the differences' truncation branch (error ~ h^2) and round-off branch (~ eps / h)
about the DDM; on a damped truss and a lumped Beam2D cantilever, slider-crank A's cubic-mass rod with
responses (the mid-span deflection at the last step, the integral of the kinetic energy with its explicit
partials), the composed mid-point scheme, and a spinning cubic-mass beam with a driven director DOF and
cut-back steps; the kept-state and replayed paths agree bit for bit; a planar mechanism with joints
(multipliers' derivatives, joint reactions, a joint spring-damper's rates and a drive's amplitude); spatial
rotations (free Beam3D, Shell3 and 3D modal bodies, a 3D joint, the composed scheme; differences of the
rotations taken in the tangent space); the refusals."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import flexmb as fm
from flexmb.checks import ModelError
from flexmb.cms import design
from flexmb.integrators.newton import NewtonSettings
from flexmb.integrators.time_stepping import MODIFIED_NEWTON_MIN_SIZE
from flexmb.sensitivity import parameters as P
from flexmb.sensitivity import responses as R
from flexmb.sensitivity.adjoint import trajectory
from flexmb.sensitivity.constraints import ConstraintStartDerivatives, drive_amplitude
from flexmb.sensitivity.midpoint import direct_sensitivities
from flexmb.sensitivity.transient import record, replay, scheme_for
from flexmb.validation.slider_crank import ROD, ROD_MASS
from flexmb.validation.slider_crank import build as slider_crank
from models import damped_truss, sagging_beam, spinning_hub_beam

#: the brief's accuracy of DDM against the best central difference (relative)
TOL = 1e-6


def _cantilever() -> fm.Model:
    """A lumped-mass Beam2D cantilever of four elements with a tip point mass, kicked by a tip load."""
    m = fm.Model(dim=2)
    n = m.add_nodes(np.c_[np.linspace(0.0, 2.0, 5), np.zeros(5)])
    m.add_beam2d(np.c_[n[:-1], n[1:]], EA=1e6, EI=5e2, rho_A=3.0, rho_I=1e-3, mass="lumped", name="beam")
    m.fix(n[0])
    m.add_point_mass(n[-1], 0.4)
    m.add_load(n[-1], "uy", lambda t: -300.0 * min(t / 0.01, 1.0))
    return m


#: model (a): builder, step (s), steps, parameters
LINEAR_CASES = {
    "truss": (damped_truss, 2e-3, 20, lambda: [P.parameter(design.stiffness_scale("truss")),
                                          P.parameter(design.density_scale("truss")), P.rayleigh("truss", "beta")]),
    "lumped Beam2D": (_cantilever, 2e-3, 20, lambda: [P.parameter(design.section_property("beam", "EI")),
                                                       P.parameter(design.density_scale("beam"))]),
}


def _slider_crank(scheme: str = "mid-point", n_steps: int = 20):
    """Slider-crank A (2 cubic-mass rod elements, 124.8 rad/s, massless slider) over n_steps of
    8 rad / 124.8 rad/s / 320 (20 steps: 0.5 rad of crank), its parameters (rod EI and rho_A
    multipliers, a point mass at the slider about 0 kg), its FD scales (1, 1, the rod's mass) and
    its rod nodes."""
    asm, v0, nodes = slider_crank(2, 124.8, 0.0, "cubic")
    dt = 8.0 / 124.8 / 320
    run = record(asm, dt, n_steps * dt, v0=v0, scheme=scheme)
    params = [P.parameter(design.section_property("rod", "EI")), P.parameter(design.section_property("rod", "rho_A")),
              P.parameter(design.point_mass(int(nodes[-1]), 0.0))]
    return run, params, np.array([1.0, 1.0, ROD_MASS]), [int(n) for n in nodes]


def _rerun(run, model: fm.Model, newton: NewtonSettings | None = None) -> R.Trajectory:
    """The trajectory of ``model`` stepped from the run's start state over the run's step list (the
    same discrete map as the run, at the changed parameter)."""
    asm = fm.Assembly(model)
    stepper = scheme_for(asm, run.stepper.name)
    s0 = run.states[0]
    start = stepper.initial_state(s0.t, s0.u.copy(), s0.v.copy())
    states = [start] + replay(asm, stepper, start, run.steps, newton or run.settings)
    stretch = None if start.stretch is None else [s.stretch for s in states]
    return R.Trajectory([s.t for s in states], [s.u for s in states], [s.v for s in states], asm, stretch)


def _central(run, model: fm.Model, p: P.TransientParameter, h: float, newton: NewtonSettings | None = None
             ) -> tuple[R.Trajectory, R.Trajectory]:
    p0 = p.value(model)
    return _rerun(run, p.apply(model, p0 + h), newton), _rerun(run, p.apply(model, p0 - h), newton)


def _errors(sens, j: int, plus: R.Trajectory, minus: R.Trajectory, h: float, fields=("u", "v")) -> dict:
    """Relative error of the DDM column j against the central difference, per state field, over all
    steps (Frobenius norms of the (N+1, n_dof) series)."""
    out = {}
    for name in fields:
        fd = (getattr(plus, name) - getattr(minus, name)) / (2.0 * h)
        ddm = getattr(sens, "d" + name)[:, :, j]
        out[name] = float(np.linalg.norm(ddm - fd) / np.linalg.norm(fd))
    return out


@pytest.mark.parametrize("label", list(LINEAR_CASES))
def test_ddm_matches_central_differences_of_re_runs(label):
    build, dt, n, make = LINEAR_CASES[label]
    model, params = build(), make()
    run = record(fm.Assembly(model), dt, n * dt)
    sens = direct_sensitivities(run, params)
    assert sens.du.shape == sens.dv.shape == (n + 1, run.asm.n_dof, len(params))
    # the states are the run's, and the start does not depend on p
    assert np.array_equal(sens.u[-1], run.final.u) and np.array_equal(sens.v[-1], run.final.v)
    assert not sens.du[0].any() and not sens.dv[0].any()
    for j, p in enumerate(params):
        h = 1e-5 * max(abs(p.value(model)), 1e-3 if p.kind.startswith("rayleigh") else 1.0)
        err = _errors(sens, j, *_central(run, model, p, h), h)
        assert max(err.values()) < TOL, f"{label}, {p.name}: DDM against central differences (h = {h:g}) {err}"


def _step_study(sens, j: int, run, model, p, scale: float, steps: np.ndarray, newton=None) -> np.ndarray:
    """The largest relative error (u and v) of the DDM against central differences of step h = scale * steps."""
    return np.array([max(_errors(sens, j, *_central(run, model, p, scale * h, newton), scale * h).values())
                     for h in steps])


def _assert_two_branches(errors: np.ndarray, steps: np.ndarray, what: str) -> None:
    """errors(h) falls as h^2 on the large steps (truncation: the DDM is the limit), reaches TOL, and rises
    again on the smallest steps (round-off of the re-runs, ~ eps / h)."""
    best = int(np.argmin(errors))
    table = ", ".join(f"{h:.0e}: {e:.2e}" for h, e in zip(steps, errors))
    assert errors[best] < TOL, f"{what}: best central difference {errors[best]:.2e} from the DDM ({table})"
    slope = np.polyfit(np.log10(steps[:3]), np.log10(errors[:3]), 1)[0]
    assert 1.8 < slope < 2.2, f"{what}: truncation branch of slope {slope:.2f}, not 2 ({table})"
    assert 0 < best < steps.size - 1 and errors[-1] > 10.0 * errors[best], f"{what}: no round-off branch ({table})"


def test_step_study_shows_truncation_and_round_off_branches_about_the_ddm():
    """Truss, stiffness scale: the central differences converge to the DDM as h^2 down to 4e-10 relative
    (measured, u and v of all steps: 1.4e-2 at h = 1e-1, 1.4e-6 at 1e-3, 4.0e-10 at 1e-5), then drift away
    as eps / h (4.8e-7 at 1e-8)."""
    build, dt, n, make = LINEAR_CASES["truss"]
    model, params = build(), make()[:1]
    run = record(fm.Assembly(model), dt, n * dt)
    sens = direct_sensitivities(run, params)
    steps = 10.0 ** -np.arange(1.0, 9.0)
    errors = _step_study(sens, 0, run, model, params[0], 1.0, steps)
    _assert_two_branches(errors, steps, "truss stiffness scale")


def test_slider_crank_rod_and_slider_mass_ddm_and_mid_span_deflection_gradient():
    """Slider-crank A, 2 cubic-mass elements, 20 steps: du/dp, dv/dp and the director stretch rates'
    derivatives of every state, and the gradient of two responses -- the mid-span deflection (chord
    distance / L) at the last step, and the time integral of the kinetic energy, whose explicit partial
    in rho_A the gradient adds -- against central differences of re-runs."""
    run, params, scales, nodes = _slider_crank()
    model = run.asm.model
    sens = direct_sensitivities(run, params)
    traj = sens.trajectory()
    deflection = R.chord_deflection(run.asm, *nodes, scale=ROD)
    # the kinetic energy of each trajectory's own model (a re-run's masses are the changed ones)
    responses = [lambda tr, ps=(): R.final(deflection, tr, parameters=ps),
                 lambda tr, ps=(): R.integral(R.kinetic_energy(tr.asm), tr, parameters=ps)]
    values = [f(traj, params) for f in responses]
    assert values[0].value > 1e-3                     # the rod bends (0.7 % of L at 0.5 rad)
    assert values[1].parameter_gradient[1] > 0.0      # the kinetic energy's explicit share of rho_A
    for j, p in enumerate(params):
        h = 1e-5 * scales[j]
        plus, minus = _central(run, model, p, h)
        err = _errors(sens, j, plus, minus, h, ("u", "v", "stretch"))
        assert err["u"] < TOL and err["v"] < TOL, f"{p.name}: states' derivatives off the FD by {err}"
        assert err["stretch"] < 10 * TOL, f"{p.name}: stretch rates' derivatives off the FD by {err}"
        for f, value in zip(responses, values):
            fd = (f(plus).value - f(minus).value) / (2.0 * h)
            ddm = sens.gradient(value)[j]
            assert abs(ddm - fd) < TOL * abs(fd), f"{p.name}: dF/dp {ddm:.9g} against FD {fd:.9g}"


def test_slider_crank_step_study_of_the_rod_stiffness():
    """The step study on the cubic-mass model (measured, u and v of all steps: 1.0e-2 at h = 1e-1, 1.1e-6 at
    1e-3, 6.5e-9 at 1e-5, 1.2e-5 at 1e-8): both branches about the DDM."""
    run, params, _, _ = _slider_crank()
    sens = direct_sensitivities(run, params[:1])
    steps = 10.0 ** -np.arange(1.0, 9.0)
    errors = _step_study(sens, 0, run, run.asm.model, params[0], 1.0, steps)
    _assert_two_branches(errors, steps, "slider-crank rod EI")


def test_composed_mid_point_runs_are_differentiated_through_their_five_sub_steps():
    """Slider-crank A on the composed scheme (each step five mid-point solves, the third backward),
    10 steps: the states' and the mid-span deflection's derivatives against central differences."""
    run, params, scales, nodes = _slider_crank("composed-mid-point", 10)
    model = run.asm.model
    sens = direct_sensitivities(run, params)
    deflection = R.chord_deflection(run.asm, *nodes, scale=ROD)
    value = R.final(deflection, sens.trajectory())
    for j, p in enumerate(params):
        h = 1e-5 * scales[j]
        plus, minus = _central(run, model, p, h)
        err = _errors(sens, j, plus, minus, h)
        assert max(err.values()) < TOL, f"{p.name}: composed scheme's DDM off the FD by {err}"
        fd = (R.final(deflection, plus).value - R.final(deflection, minus).value) / (2.0 * h)
        assert abs(sens.gradient(value)[j] - fd) < TOL * abs(fd), f"{p.name}: dF/dp against FD {fd:.9g}"


@pytest.mark.filterwarnings("ignore::flexmb.FlexmbWarning")        # the cut-backs' branch-change warnings
def test_cut_back_steps_and_a_driven_director_dof():
    """A spinning cubic-mass beam with a prescribed hub rotation (a driven director DOF) and Newton held to 4
    iterations, so its two steps of 0.4 s are taken in halves and quarters: the derivatives go through each
    piece. The re-runs take the same pieces with the default Newton settings (the same discrete map)."""
    m, asm, v0, nodes = spinning_hub_beam()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = record(asm, 0.4, 0.8, v0=v0, newton=NewtonSettings(max_iterations=4), cutback_check="warn")
    assert all(len(s.sizes) > 1 for s in run.steps)
    params = [P.parameter(design.section_property("beam", "EI")), P.parameter(design.density_scale("beam"))]
    sens = direct_sensitivities(run, params)
    hub = asm.dofs.index(int(nodes[0]), "rz")
    assert not sens.du[:, hub].any() and not sens.dv[:, hub].any()       # the drive depends on no parameter
    for j, p in enumerate(params):
        err = _errors(sens, j, *_central(run, m, p, 1e-5, NewtonSettings()), 1e-5)
        assert max(err.values()) < TOL, f"{p.name}: DDM through cut-backs off the FD by {err}"


def test_replayed_segments_give_the_kept_states_derivatives_bit_for_bit():
    """A run that keeps every 7th state is replayed between them: the same states and derivatives as
    the run that keeps them all."""
    run, params, _, _ = _slider_crank()
    sparse = record(run.asm, run.steps[0].dt, run.steps[-1].t_end, v0=run.states[0].v, keep_every=7)
    every, some = direct_sensitivities(run, params), direct_sensitivities(sparse, params)
    for name in ("u", "v", "stretch", "du", "dv", "dstretch"):
        assert np.array_equal(getattr(every, name), getattr(some, name)), name


def test_refusals_name_the_reason():
    pendulum = fm.Model(dim=2)
    bob = pendulum.add_rigid_body([0.0, -1.0], 1.0, 0.1, name="bob")
    pendulum.add_joint("revolute", None, bob, at=[0.0, 0.0], name="hinge")
    pendulum.set_gravity([0.0, -9.81])
    wheel = pendulum.add_nodes(np.array([[2.0, 0.0]]))[0]
    pendulum.add_point_mass(int(wheel), 1.0)
    pendulum.prescribe(int(wheel), "uy", lambda t: 0.1 * t**2)
    jointed = record(fm.Assembly(pendulum), 0.01, 0.02)
    with pytest.raises(ModelError, match="amplitude of node 1 uy.*prescribed motion is not covered"):
        direct_sensitivities(jointed, [P.body_mass(bob), drive_amplitude(node=int(wheel), dof="uy")])
    with pytest.raises(ModelError, match="joint 'hinge' is not driven"):
        direct_sensitivities(jointed, [drive_amplitude("hinge")])
    with pytest.raises(ModelError, match="drive amplitudes, got 'k'"):
        direct_sensitivities(jointed, ["k"])
    bar = fm.Model(dim=3)
    n = bar.add_nodes(np.c_[np.linspace(0.0, 1.0, 3), np.zeros(3), np.zeros(3)])
    bar.add_beam3d(np.c_[n[:-1], n[1:]], EA=1e5, GJ=50.0, EI_y=80.0, EI_z=90.0, rho_A=2.0, rho_I=[0.01, 0.005, 0.005],
                   name="b3")
    bar.fix(n[0], ["ux", "uy", "uz", "rx"])
    with pytest.raises(ModelError, match="node 0 has some of its spatial rotations prescribed and some free"):
        direct_sensitivities(record(fm.Assembly(bar), 0.01, 0.02), [P.parameter(design.density_scale("b3"))])
    model = damped_truss()
    alpha = record(fm.Assembly(model), 2e-3, 4e-3, scheme="generalized-alpha")
    with pytest.raises(ModelError, match="generalized-alpha"):
        direct_sensitivities(alpha, [P.parameter(design.density_scale("truss"))])
    run = record(fm.Assembly(model), 2e-3, 4e-3)
    with pytest.raises(ModelError, match="at least one parameter"):
        direct_sensitivities(run, [])
    params = [P.parameter(design.density_scale("truss"))]
    sens = direct_sensitivities(run, params)
    energy = R.integral(R.kinetic_energy(run.asm), sens.trajectory(), parameters=params * 2)
    with pytest.raises(ModelError, match="explicit partials of 2 parameters"):
        sens.gradient(energy)


def test_modified_newton_models_replayed_between_kept_states():
    """A beam of 154 free DOFs runs on modified Newton (a step's iterates depend on the factorisation the
    step before kept) and keeps every 5th state: the recursion replays the steps between them in the
    run's order and differentiates the run's own states (the kept ones equal bit for bit); against
    central differences."""
    m, asm = sagging_beam()
    assert asm.n_free >= MODIFIED_NEWTON_MIN_SIZE
    run = record(asm, 0.005, 0.1, keep_every=5)
    params = [P.parameter(design.section_property("beam", "EI")), P.parameter(design.density_scale("beam"))]
    sens = direct_sensitivities(run, params)
    assert all(np.array_equal(sens.u[k], s.u) and np.array_equal(sens.v[k], s.v) for k, s in run.states.items())
    for j, p in enumerate(params):
        err = _errors(sens, j, *_central(run, m, p, 1e-5), 1e-5)
        assert max(err.values()) < TOL, f"{p.name}: DDM on modified Newton off the FD by {err}"


# ---------------------------------------------------------------- joints (planar)
#: the jointed mechanism's steps: 0.01 s, 30 of them (the links swing about 0.5 rad)
JOINT_DT, JOINT_STEPS = 0.01, 30


def _jointed_mechanism() -> tuple[fm.Model, dict]:
    """A double pendulum released from the horizontal under gravity: a flexible upper link (two
    consistent-mass Beam2D elements) on a revolute joint to the ground that carries a rotational
    spring-damper, and a rigid lower link on a revolute joint at the upper link's tip, driven to
    ``0.3 t^2`` rad (the drive's value and rate are zero at the start, so the given start state is
    consistent at any amplitude). Returns the model and its parameters: the spring and damper rates,
    the lower link's mass, the upper link's EI multiplier and the drive's amplitude."""
    m = fm.Model(dim=2)
    a = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 3), np.zeros(3)])
    upper = m.add_beam2d(np.c_[a[:-1], a[1:]], EA=1e5, EI=2e2, rho_A=2.0, rho_I=1e-3, mass="consistent",
                         name="upper")
    body = m.add_rigid_body([1.5, 0.0], 1.5, 0.05, name="lower")
    pivot = m.add_joint("revolute", None, int(a[0]), at=[0.0, 0.0], name="pivot")
    m.add_joint("revolute", int(a[-1]), body, at=[1.0, 0.0], name="elbow", drive=lambda t: 0.3 * t**2)
    spring = m.add_joint_spring_damper(pivot, k=40.0, c=3.0, name="pivot spring")
    m.set_gravity([0.0, -9.81])
    params = {"k": P.spring_rate(spring), "c": P.damper_rate(spring), "mass": P.body_mass(body),
              "EI": P.parameter(design.section_property(upper, "EI")), "drive": drive_amplitude("elbow")}
    return m, params


def _jointed_run(model: fm.Model, scheme: str = "mid-point", steps: int = JOINT_STEPS, keep_every: int = 1):
    return record(fm.Assembly(model), JOINT_DT, steps * JOINT_DT, scheme=scheme, keep_every=keep_every)


def _jointed_responses(asm, traj: R.Trajectory, params=()) -> list[R.ResponseValue]:
    """The lower link's vertical displacement at the last step, the pivot's vertical reaction (in its
    frame) at a third of the run, the elbow's second multiplier at two thirds and the integral of the
    upper link's tip rotation over the run."""
    tip, n = int(asm.model.bodies[0].node), traj.n_states - 1
    return [R.final(R.dof(asm, tip, "uy"), traj, parameters=params),
            R.at(R.joint_reaction(asm, "pivot", 1), traj, step=n // 3, parameters=params),
            R.at(R.multiplier(3), traj, step=2 * n // 3, parameters=params),
            R.integral(R.dof(asm, 2, "rz"), traj, parameters=params)]


def _jointed_errors(sens, j: int, plus, minus, h: float) -> dict:
    """Relative errors (Frobenius norms over all steps) of the DDM column j of u, v and the
    multipliers against central differences of the re-runs' trajectories."""
    out = {}
    for name, ddm in (("u", sens.du), ("v", sens.dv), ("multipliers", sens.dmultipliers)):
        fd = (getattr(plus, name) - getattr(minus, name)) / (2.0 * h)
        out[name] = float(np.linalg.norm(ddm[:, :, j] - fd) / np.linalg.norm(fd))
    return out


def _jointed_central(model, p, h: float, scheme: str = "mid-point", steps: int = JOINT_STEPS):
    p0 = p.value(model)
    return [trajectory(_jointed_run(p.apply(model, p0 + sign * h), scheme, steps)) for sign in (1.0, -1.0)]


#: relative steps of the parameters' central differences (times the parameter's value)
JOINT_STEPS_STUDY = 10.0 ** -np.arange(2.0, 8.0)


@pytest.mark.parametrize("scheme", ["mid-point", "composed-mid-point"])
def test_jointed_mechanism_ddm_against_central_differences_of_re_runs(scheme):
    """The double pendulum with joints (augmented unknowns u_free and lambda): du/dp, dv/dp and the
    multipliers' dlambda/dp at every step, and the gradients of a DOF at the last step, a joint reaction
    and a multiplier at a step and an integral, against central differences of re-runs of the re-built
    model (the best of relative steps 1e-3, 1e-4, 1e-5: relative 1e-6). Measured at the best step over
    the five parameters: mid-point u 5e-11 .. 2e-9, v 1e-9 .. 4e-8, multipliers 1e-8 .. 5e-8, responses
    7e-11 .. 4e-8; composed (10 steps) u 1e-10 .. 2e-9, v 8e-9 .. 4e-8, multipliers 5e-8 .. 4e-7 (the
    multipliers' round-off branch), responses 4e-11 .. 2e-8."""
    model, params = _jointed_mechanism()
    steps = JOINT_STEPS if scheme == "mid-point" else 10
    run = _jointed_run(model, scheme, steps)
    plist = list(params.values())
    sens = direct_sensitivities(run, plist)
    n_c = run.asm.constraints.n
    assert sens.dmultipliers.shape == (steps + 1, n_c, len(plist))
    assert np.array_equal(sens.multipliers[-1], run.final.lam) and not sens.dmultipliers[0].any()
    traj = sens.trajectory()
    values = _jointed_responses(run.asm, traj, plist)
    assert abs(values[1].value) > 1.0 and abs(values[2].value) > 1.0          # reactions of newtons
    for j, (label, p) in enumerate(params.items()):
        scale = abs(p.value(model))
        studies = []
        for h in scale * JOINT_STEPS_STUDY[1:4]:
            plus, minus = _jointed_central(model, p, h, scheme, steps)
            fd_values = [(a.value - b.value) / (2.0 * h) for a, b in
                         zip(_jointed_responses(run.asm, plus), _jointed_responses(run.asm, minus))]
            studies.append((_jointed_errors(sens, j, plus, minus, h), fd_values))
        for name in ("u", "v", "multipliers"):
            best = min(e[name] for e, _ in studies)
            assert best < TOL, f"{scheme}, {label}: {name} off the FD by {[e[name] for e, _ in studies]}"
        for r, value in enumerate(values):
            ddm = sens.gradient(value)[j]
            best = min(abs(ddm - fd[r]) for _, fd in studies)
            assert best < TOL * max(abs(ddm), 1e-12), f"{scheme}, {label}: response {r} {ddm:.9g} against FD " \
                                                       f"{[fd[r] for _, fd in studies]}"


def test_jointed_mechanism_step_study_and_the_joint_terms_weight(monkeypatch):
    """The spring rate's step study: the central differences converge to the DDM as h^2 (truncation) and
    drift away on the smallest steps (round-off), states and multipliers; with the joints' start derivative
    left out of the recursion (taken at zero multipliers) the best central difference misses the DDM by
    5e-4 (u) to 2e-3 (multipliers)."""
    model, params = _jointed_mechanism()
    run = _jointed_run(model)
    p = params["k"]
    sens = direct_sensitivities(run, [p])
    scale = p.value(model)
    steps = 10.0 ** -np.arange(1.0, 9.0)
    errors = []
    for h in steps:
        plus, minus = _jointed_central(model, p, scale * h)
        errors.append(max(_jointed_errors(sens, 0, plus, minus, scale * h).values()))
    _assert_two_branches(np.array(errors), steps, "jointed mechanism spring rate")
    # the joint force's start derivative taken at zero multipliers: the recursion without it
    original = ConstraintStartDerivatives.force
    monkeypatch.setattr(ConstraintStartDerivatives, "force",
                        lambda self, u0, u1, lam, t0, t1: original(self, u0, u1, 0.0 * lam, t0, t1))
    wrong = direct_sensitivities(run, [p])
    best = int(np.argmin(errors))
    plus, minus = _jointed_central(model, p, scale * steps[best])
    assert max(_jointed_errors(wrong, 0, plus, minus, scale * steps[best]).values()) > 1e3 * TOL


class ModalTip(R.Signal):
    """The lateral tip deflection of a modal body in its frame, ``basis_row . q`` (m): linear in the
    modal coordinates ``dofs``."""

    unit = "m"

    def __init__(self, dofs: np.ndarray, basis_row: np.ndarray) -> None:
        self.dofs, self.row = np.asarray(dofs), np.asarray(basis_row, dtype=float)

    def evaluate(self, traj, steps):
        return traj.u[steps][:, self.dofs] @ self.row, {"u": (self.dofs, np.tile(self.row, (steps.size, 1)))}


def modal_spin_up(n_steps: int = 40, dt: float = 0.01, keep_every: int = 1):
    """A 1 m beam (6 consistent-mass elements, 3 stiffened modes, modal damping) as a planar modal body
    on a hub spun up as 3 t^2 rad, under gravity: its recorded mid-point run (every ``keep_every``-th
    state kept), the body's stiffness and density scales and the tip-deflection signal."""
    from flexmb.cms.modal_body import ModalBodyData

    beam = fm.Model(dim=2)
    n = beam.add_nodes(np.c_[np.linspace(0.0, 1.0, 7), np.zeros(7)])
    beam.add_beam2d(np.c_[n[:-1], n[1:]], EA=1e5, EI=50.0, rho_A=2.0, rho_I=1e-3, mass="consistent", name="fe")
    data = ModalBodyData.from_model(beam, 0, 3)
    m = fm.Model(dim=2)
    body = m.add_modal_body(data, name="arm", damping_ratios=0.01)
    frame = int(body.connectivity[0, 0])
    m.fix(frame, ["ux", "uy"])
    m.prescribe(frame, "rz", lambda t: 3.0 * t**2)
    m.set_gravity([0.0, -9.81])
    asm = fm.Assembly(m)
    run = record(asm, dt, n_steps * dt, keep_every=keep_every)
    params = [P.parameter(design.stiffness_scale("arm")), P.parameter(design.density_scale("arm"))]
    tip = ModalTip(asm.dofs.internal_dofs(body), data.basis[data.component.assembly.dofs.index(int(n[-1]), "uy")])
    return run, params, tip


def test_planar_modal_body_ddm_matches_central_differences_of_re_runs():
    """A spun-up planar modal body (stiffening, modal damping, weight): the direct derivatives of every
    state with respect to its stiffness and density scales against central differences of re-runs (h =
    1e-5, relative error of u and v over all steps), and the tip deflection's gradient against the
    differences of the signal. Without gravity and damping the two would sum to zero (scaling identity:
    the validation case sensitivity-spin-up); here the weight does not scale with the stiffness."""
    run, params, tip = modal_spin_up()
    model = run.asm.model
    sens = direct_sensitivities(run, params)
    assert np.abs(sens.du[-1]).max() > 0.0
    final = R.final(tip, sens.trajectory())
    for j, p in enumerate(params):
        h = 1e-5
        plus, minus = _central(run, model, p, h)
        err = _errors(sens, j, plus, minus, h)
        assert max(err.values()) < TOL, f"{p.name}: DDM against central differences {err}"
        fd = (R.final(tip, plus).value - R.final(tip, minus).value) / (2.0 * h)
        ddm = sens.gradient(final)[j]
        assert abs(ddm - fd) < TOL * abs(fd), f"{p.name}: tip deflection gradient {ddm:.9g} against FD {fd:.9g}"


# ------------------------------------------------------------------ spatial rotations
def _spinning_velocities(asm: fm.Assembly, omega=(0.5, 3.0, 8.0)) -> np.ndarray:
    """Start velocities (n_dof,): a rigid spin omega (rad/s) about the origin plus a bending rate
    growing along x (translations 2 x^2 m/s in z, rotations -x rad/s about y)."""
    X = asm.model.coordinates
    v0 = np.zeros(asm.n_dof)
    first = asm.dofs.first
    for node, x in enumerate(X):
        v0[first[node]:first[node] + 3] = np.cross(omega, x) + [0.0, 0.0, 2.0 * x[0] ** 2]
        if asm.dofs.has_rotations[node]:
            v0[first[node] + 3:first[node] + 6] = np.asarray(omega) + [0.0, -x[0], 0.0]
    return v0


def _free_beam3d():
    m = fm.Model(dim=3)
    x = np.linspace(0.0, 1.0, 5)
    n = m.add_nodes(np.c_[x, 0.1 * x, np.zeros(5)])
    m.add_beam3d(np.c_[n[:-1], n[1:]], EA=8e4, GJ=10.0, EI_y=14.0, EI_z=22.0, rho_A=3.0, rho_I=(1e-3, 5e-4, 5e-4),
                 name="beam")
    asm = fm.Assembly(m)
    return m, _spinning_velocities(asm), [P.parameter(design.stiffness_scale("beam")),
                                          P.parameter(design.density_scale("beam"))]


def _free_shell():
    from flexmb.io.shell_mesh import rectangle

    X, triangles = rectangle(1.0, 0.8, 2, 2)
    m = fm.Model(dim=3)
    m.add_nodes(np.c_[X[:, :2], 0.05 * X[:, 0] * X[:, 1]])
    m.add_shell(triangles, E=1e6, nu=0.3, thickness=0.01, rho=100.0, name="plate")
    asm = fm.Assembly(m)
    return m, _spinning_velocities(asm), [P.parameter(design.stiffness_scale("plate")),
                                          P.parameter(design.density_scale("plate"))]


def _modal_body_3d():
    from models import cantilever_body_3d

    m = fm.Model(dim=3)
    m.add_modal_body(cantilever_body_3d(4, 3), name="arm")
    v0 = np.zeros(fm.Assembly(m).n_dof)
    v0[:3], v0[3:6], v0[6:] = [0.1, 0.2, 0.3], [0.5, 3.0, 8.0], [0.3, -0.2, 0.1]
    return m, v0, [P.parameter(design.stiffness_scale("arm")), P.parameter(design.density_scale("arm"))]


def _jointed_3d():
    """A rigid body on a spherical joint to the ground with a Beam3D hanging from it, under gravity."""
    m = fm.Model(dim=3)
    body = m.add_rigid_body([0.4, 0.1, 0.0], 2.0, [0.02, 0.03, 0.04], name="A")
    m.add_joint("spherical", None, body, at=[0.0, 0.0, 0.0], name="ball")
    n = m.add_nodes(np.array([[0.9, 0.1, 0.0], [1.4, 0.1, 0.0]]))
    m.add_beam3d(np.array([[body.node, n[0]], [n[0], n[1]]]), EA=8e4, GJ=10.0, EI_y=14.0, EI_z=22.0, rho_A=3.0,
                 rho_I=(1e-3, 5e-4, 5e-4), name="beam")
    m.set_gravity([0.0, 0.0, -9.81])
    asm = fm.Assembly(m)
    v0 = np.zeros(asm.n_dof)
    omega = np.array([0.5, 0.0, 2.0])                   # rad/s: a rigid turn about the ball
    for node, x in enumerate(m.coordinates):
        v0[asm.dofs.first[node]:asm.dofs.first[node] + 6] = np.r_[np.cross(omega, x), omega]
    return m, v0, [P.parameter(design.stiffness_scale("beam")), P.body_mass(body)]


#: builder (model, v0, parameters) and step (s) of the spatial cases, 20 steps each; Newton goes on to
#: the round-off of the unknowns (residual_tol 1e-15): the shell's rotations, stiff against their tiny
#: rotary inertia, stop at 4e-10 rad under the default 1e-10 of the force scale, and the re-runs'
#: differences then miss the DDM by 4e-7 for any h (their Newton error, not the derivative's)
SPATIAL_CASES = {"free Beam3D": (_free_beam3d, 2e-3), "Shell3 plate": (_free_shell, 2e-3),
                 "3D modal body": (_modal_body_3d, 2e-3), "3D joint": (_jointed_3d, 5e-3)}
SPATIAL_NEWTON = NewtonSettings(residual_tol=1e-15)


def spatial_run(label: str, keep_every: int = 1):
    """The recorded run (20 steps) of a spatial case, its model and parameters."""
    build, dt = SPATIAL_CASES[label]
    model, v0, params = build()
    return record(fm.Assembly(model), dt, 20 * dt, v0=v0, newton=SPATIAL_NEWTON, keep_every=keep_every), model, params


def _spatial_errors(sens, j: int, plus: R.Trajectory, minus: R.Trajectory, h: float) -> dict:
    """As _errors, the rotations' differences taken in the tangent space (spins: log(R+ R-^T) / 2h)."""
    from flexmb.sensitivity.rotations import spin_difference

    rd = sens.asm.rotation_dofs
    fd_u = (plus.u - minus.u) / (2.0 * h)
    for k in range(fd_u.shape[0]):
        fd_u[k][rd] = spin_difference(plus.u[k][rd], minus.u[k][rd], h)
    fd_v = (plus.v - minus.v) / (2.0 * h)
    return {name: float(np.linalg.norm(getattr(sens, "d" + name)[:, :, j] - fd) / np.linalg.norm(fd))
            for name, fd in (("u", fd_u), ("v", fd_v))}


@pytest.mark.parametrize("label", list(SPATIAL_CASES))
def test_spatial_rotations_ddm_matches_central_differences_in_the_tangent_space(label):
    """Free Beam3D and Shell3 bodies and a free 3D modal body spinning at up to 8 rad/s (rotations to 0.35
    rad), and a rigid body with a Beam3D on a spherical joint: the derivatives of every state (spins at the
    rotations) against central differences of re-runs (h = 1e-5 relative) to 1e-6; the scaling identity
    of a free body without load (stiffness and density scales' derivatives opposite)."""
    run, model, params = spatial_run(label)
    sens = direct_sensitivities(run, params)
    assert np.abs(sens.u[-1][run.asm.rotation_dofs]).max() > 0.05
    for j, p in enumerate(params):
        h = 1e-5 * p.value(model)
        err = _spatial_errors(sens, j, *_central(run, model, p, h), h)
        assert max(err.values()) < TOL, f"{label}, {p.name}: DDM against central differences (h = {h:g}) {err}"
    if label != "3D joint":
        scale = np.abs(sens.du).max()
        assert np.abs(sens.du[:, :, 0] + sens.du[:, :, 1]).max() < 1e-10 * scale


def test_spatial_rotation_maps_are_needed(monkeypatch):
    """Without the end-spin and end-rate maps (the solve's changes of w taken as spins, the planar
    velocity rule) the free beam's derivatives miss the differences by far more than the tolerance:
    the comparison can tell."""
    from flexmb.sensitivity.rotations import StepRotations

    monkeypatch.setattr(StepRotations, "forward", staticmethod(lambda maps, z, theta0, omega0: (
        z, (2.0 / 2e-3) * (z - theta0) - omega0)))
    run, model, params = spatial_run("free Beam3D")
    sens = direct_sensitivities(run, params)
    h = 1e-5
    err = _spatial_errors(sens, 0, *_central(run, model, params[0], h), h)
    assert max(err.values()) > 1e-3, err


def test_spatial_rotations_through_the_composed_mid_point_stages():
    """The free Beam3D on the composed mid-point scheme (five sub-steps, the third backward: the maps
    take each sub-step's w and dt): DDM against central differences of re-runs to 1e-6."""
    model, v0, params = _free_beam3d()
    run = record(fm.Assembly(model), 2e-3, 10 * 2e-3, v0=v0, newton=SPATIAL_NEWTON, scheme="composed-mid-point")
    sens = direct_sensitivities(run, params)
    for j, p in enumerate(params):
        h = 1e-5
        err = _spatial_errors(sens, j, *_central(run, model, p, h), h)
        assert max(err.values()) < TOL, f"{p.name}: DDM against central differences {err}"
