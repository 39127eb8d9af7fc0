"""The discrete adjoint of mid-point runs (issue 33, piece P7, flexmb/sensitivity/adjoint.py): its
gradients equal the direct differentiation's (P5, itself checked against central differences of
re-runs in test_sensitivity_midpoint.py) to round-off, for several responses at once, with every
state kept or every 7th (the segments recomputed), on the plain and the composed mid-point scheme, and
with planar joints (responses on multipliers and joint reactions, a drive's amplitude), and with spatial
rotations."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.checks import ModelError
from flexmb.cms import design
from flexmb.sensitivity import parameters as P
from flexmb.sensitivity import responses as R
from flexmb.sensitivity.adjoint import adjoint_gradient, trajectory
from flexmb.sensitivity.constraints import drive_amplitude
from flexmb.sensitivity.midpoint import direct_sensitivities
from flexmb.sensitivity.transient import record
from flexmb.validation.slider_crank import ROD
from test_sensitivity_midpoint import (JOINT_STEPS, LINEAR_CASES, SPATIAL_CASES, _jointed_mechanism,
                                      _jointed_responses, _jointed_run, _slider_crank, spatial_run)

#: the brief's agreement of adjoint and direct differentiation (relative to each response's largest entry)
TOL = 1e-10


def _responses(run, signal, rho: float, params) -> list[R.ResponseValue]:
    """The signal at the last step, the time integral of the kinetic energy (explicit partials in the
    masses) and a KS maximum of the signal, on the run's states."""
    traj = trajectory(run)
    return [R.final(signal, traj, parameters=params),
            R.integral(R.kinetic_energy(run.asm), traj, parameters=params),
            R.ks_max(signal, traj, rho=rho, parameters=params)]


def _compare(run, params, responses):
    """The adjoint's result, its gradient asserted equal to the direct differentiation's, response by
    response."""
    sens = direct_sensitivities(run, params)
    adjoint = adjoint_gradient(run, params, responses)
    assert adjoint.gradient.shape == (len(responses), len(params))
    for r, response in enumerate(responses):
        ddm = sens.gradient(response)
        scale = np.abs(ddm).max()
        assert scale > 0.0
        err = np.abs(adjoint.gradient[r] - ddm).max() / scale
        assert err < TOL, f"response {r}: adjoint {adjoint.gradient[r]} against DDM {ddm} ({err:.2e})"
    assert np.array_equal(adjoint.values, [r.value for r in responses])
    return adjoint


def _record(build, dt: float, n: int, keep_every: int):
    return record(fm.Assembly(build()), dt, n * dt, keep_every=keep_every)


@pytest.mark.parametrize("label", list(LINEAR_CASES))
def test_adjoint_equals_ddm_on_truss_and_beam_with_every_and_every_7th_state_kept(label):
    build, dt, n, make = LINEAR_CASES[label]
    gradients = []
    for keep_every in (1, 7):
        run = _record(build, dt, n, keep_every)
        params = make()
        # the loaded tip's vertical displacement: truss node 7 (top right), beam node 4 (tip)
        signal = R.dof(run.asm, 7 if label == "truss" else 4, "uy")
        scale = float(np.abs(trajectory(run).u).max())
        result = _compare(run, params, _responses(run, signal, 50.0 / scale, params))
        gradients.append(result.gradient)
        assert result.solves == n
        # every 7th state and the last kept: the others' solves recomputed once, each
        kept = len(run.states)
        assert kept == (n + 1 if keep_every == 1 else n // keep_every + 2)
        assert result.recomputed == n + 1 - kept
        # the memory bound: the kept states and one segment's, each u, v, a and the reactions (n_dof floats;
        # the start state holds its constraint forces too)
        assert result.states_held == kept + keep_every
        per_state = 4 * run.asm.n_dof * 8
        held = result.states_held * per_state
        assert held <= result.memory_bytes <= held + run.asm.n_dof * 8
    # recomputed segments are the run's states bit for bit: the same gradients
    assert np.array_equal(gradients[0], gradients[1])


@pytest.mark.parametrize("scheme, n_steps", [("mid-point", 20), ("composed-mid-point", 8)])
def test_adjoint_equals_ddm_on_the_slider_crank_cubic_mass_rod(scheme, n_steps):
    """Slider-crank A (cubic-mass rod: director DOFs and stretch rates) on the rod's EI, rho_A and the
    slider's point mass: the mid-span deflection at the last step, the kinetic energy's integral and a
    KS maximum of the deflection; the composed scheme through its five solves a step."""
    gradients = []
    for keep_every in (1, 7):
        run, params, _, nodes = _slider_crank(scheme, n_steps)
        if keep_every > 1:
            s0 = run.states[0]
            run = record(run.asm, run.steps[0].dt, n_steps * run.steps[0].dt, v0=s0.v, scheme=scheme,
                         keep_every=keep_every)
        deflection = R.chord_deflection(run.asm, *nodes, scale=ROD)
        gradients.append(_compare(run, params, _responses(run, deflection, 5e3, params)).gradient)
    assert np.allclose(gradients[0], gradients[1], rtol=1e-13, atol=0.0)


def test_transposed_products_and_shared_kinematics_equal_each_matrix_on_its_own():
    """The sweep's one-pass transposed products (element blocks of the forces, the cubic masses and
    the directors, and the constant mass's sparse part, scattered together) equal each start
    derivative's assembled matrix transposed, for one and two responses; and the inertia's start
    derivatives from the step's kinematics (as the sweep passes them) equal those that evaluate
    the director rule themselves (slider-crank A's cubic-mass rod with case B's slider mass, a few
    steps in)."""
    from flexmb.sensitivity.adjoint import _ParameterTerms, _start_matrix
    from flexmb.sensitivity.midpoint import StepDerivative
    from flexmb.validation.slider_crank import build

    asm, v0, nodes = build(2, 124.8, 0.0378, "cubic")
    dt = 8.0 / 124.8 / 320
    run = record(asm, dt, 6 * dt, v0=v0)
    params = [P.parameter(design.section_property("rod", "EI")), P.parameter(design.point_mass(int(nodes[-1]), 0.0378))]
    start, end = run.states[4], run.states[5]
    derivative = StepDerivative(asm, params)
    D, inertia = derivative.start_matrix(start, dt, end)
    D_k, inertia_k = _start_matrix(derivative, start, dt, end, run.stepper._motion(start, dt, end.u))
    for a, b in ((D, D_k), (inertia.v, inertia_k.v), (inertia.stretch, inertia_k.stretch)):
        A, B = a.matrix().toarray(), b.matrix().toarray()
        assert np.abs(A).max() > 0.0
        assert np.abs(A - B).max() < 1e-12 * np.abs(A).max()
    assert inertia.stretch.blocks and all(S.nnz for _, S in D.sparse + inertia.v.sparse)   # the slider's mass
    terms = _ParameterTerms(asm, params)
    rng = np.random.default_rng(3)
    for n_r in (1, 2):
        y = rng.standard_normal((asm.n_dof, n_r))
        for got, M in zip(terms.transposed(inertia, D, y), (D, inertia.v, inertia.stretch)):
            want = M.matrix().T @ y
            assert got.shape == want.shape
            assert np.abs(got - want).max() < 1e-13 * np.abs(M.matrix()).max() * np.abs(y).max()


def test_element_parameters_share_their_group_evaluation():
    """Per-element EI multipliers of the cantilever (evaluated once over the group and summed by element)
    sum to the group's multiplier, and match the direct differentiation of each."""
    build, dt, n, _ = LINEAR_CASES["lumped Beam2D"]
    run = _record(build, dt, n, 1)
    params = [P.element_property("beam", "EI", [e]) for e in range(4)] + [
        P.element_property("beam", "EI", [1, 3]), P.parameter(design.section_property("beam", "EI"))]
    signal = R.dof(run.asm, 4, "uy")
    grad = _compare(run, params, [R.final(signal, trajectory(run), parameters=params)]).gradient[0]
    assert abs(grad[:4].sum() - grad[5]) < 1e-12 * abs(grad[5])
    assert abs(grad[1] + grad[3] - grad[4]) < 1e-12 * abs(grad[4])


def test_refusals_name_the_reason():
    build, dt, n, make = LINEAR_CASES["truss"]
    run = _record(build, dt, 3, 1)
    params = make()
    response = R.final(R.dof(run.asm, 7, "uy"), trajectory(run))
    with pytest.raises(ModelError, match="at least one parameter"):
        adjoint_gradient(run, [], [response])
    with pytest.raises(ModelError, match="response values"):
        adjoint_gradient(run, params, [1.0])
    longer = _record(build, dt, 5, 1)
    with pytest.raises(ModelError, match="names step 5"):
        adjoint_gradient(run, params, [R.final(R.dof(longer.asm, 7, "uy"), trajectory(longer))])
    pendulum = fm.Model(dim=2)
    body = pendulum.add_rigid_body([0.5, 0.0], 1.0, 0.1, name="bob")
    pendulum.add_joint("revolute", None, body, at=[0.0, 0.0], name="pin")
    pendulum.set_gravity([0.0, -9.81])
    cart = pendulum.add_nodes(np.array([[2.0, 0.0]]))[0]
    pendulum.add_point_mass(int(cart), 1.0)
    pendulum.prescribe(int(cart), "ux", lambda t: 0.1 * t**2)
    jointed = record(fm.Assembly(pendulum), 1e-2, 2e-2)
    with pytest.raises(ModelError, match="adjoint: parameter 'amplitude of node 1 ux'.*prescribed motion"):
        adjoint_gradient(jointed, [P.body_mass(body), drive_amplitude(node=int(cart), dof="ux")],
                         [R.final(R.dof(jointed.asm, body.node, "uy"), trajectory(jointed))])


@pytest.mark.parametrize("scheme, n_steps", [("mid-point", JOINT_STEPS), ("composed-mid-point", 10)])
def test_adjoint_equals_ddm_on_the_jointed_mechanism(scheme, n_steps):
    """The double pendulum with joints (test_sensitivity_midpoint: the DDM there against re-runs): the
    spring and damper rates of the pivot's spring-damper, the lower link's mass, the upper link's EI and
    the elbow drive's amplitude; a DOF at the last step, a joint reaction and a multiplier at a step (their
    seeds on the multipliers enter the transposed solves) and an integral, all in one sweep, every state
    or every 7th kept (the same bits)."""
    gradients = []
    for keep_every in (1, 7):
        model, params = _jointed_mechanism()
        run = _jointed_run(model, scheme, n_steps, keep_every)
        plist = list(params.values())
        responses = _jointed_responses(run.asm, trajectory(run), plist)
        assert "multipliers" in responses[1].gradient.parts and "multipliers" in responses[2].gradient.parts
        result = _compare(run, plist, responses)
        assert result.solves == n_steps * len(run.stepper.stages)
        gradients.append(result.gradient)
    assert np.array_equal(gradients[0], gradients[1])


def test_adjoint_multiplier_seeds_are_spent_by_their_solve():
    """A response on the multipliers of one state only (the elbow's second multiplier at step 12): its
    gradient comes from the transposed solve of step 12 alone and the steps before it; the same response
    at the start state (whose multipliers are zero and do not depend on p) has a zero gradient."""
    model, params = _jointed_mechanism()
    run = _jointed_run(model, "mid-point", 15)
    plist = list(params.values())
    traj = trajectory(run)
    at12 = R.at(R.multiplier(3), traj, step=12, parameters=plist)
    at0 = R.at(R.multiplier(3), traj, step=0, parameters=plist)
    result = _compare(run, plist, [at12])
    assert np.abs(result.gradient).min() > 0.0
    assert not adjoint_gradient(run, plist, [at0]).gradient.any()


def test_adjoint_equals_ddm_on_a_spun_up_planar_modal_body():
    """The modal spin-up of tests/test_sensitivity_midpoint.py (stiffness and density scale of the
    body, every 5th state kept): the tip deflection at the end, the time integral of the strain energy
    (explicit partial in the stiffness scale) and a KS maximum of the tip deflection."""
    from test_sensitivity_midpoint import modal_spin_up

    run, params, tip = modal_spin_up()
    traj = trajectory(run)
    responses = [R.final(tip, traj, parameters=params), R.integral(R.strain_energy(run.asm), traj, parameters=params),
                 R.ks_max(R.scaled(tip, -1.0), traj, rho=2e3, parameters=params)]
    adjoint = _compare(run, params, responses)
    assert responses[1].parameter_gradient[0] > 0.0 and responses[1].parameter_gradient[1] == 0.0
    # fewer kept states: the same gradient from the recomputed segments
    sparse, params, tip = modal_spin_up(keep_every=5)
    again = adjoint_gradient(sparse, params, [R.final(tip, trajectory(sparse), parameters=params)])
    assert np.abs(again.gradient[0] - adjoint.gradient[0]).max() <= TOL * np.abs(adjoint.gradient[0]).max()


@pytest.mark.parametrize("keep_every", [1, 7])
@pytest.mark.parametrize("label", list(SPATIAL_CASES))
def test_adjoint_equals_ddm_with_spatial_rotations(label, keep_every):
    """Free Beam3D, Shell3 and 3D modal bodies and a 3D jointed pendulum (test_sensitivity_midpoint.py's
    spatial cases, checked there against re-runs): an offset point of a rotating node at the last step
    (reads the spins), the time integral of its velocity (reads the angular velocities) and of the strain
    energy (explicit partials), and the ball joint's vertical reaction; adjoint equal to DDM to 1e-10."""
    run, model, params = spatial_run(label, keep_every)
    asm = run.asm
    node = int(asm.rotation_nodes[-1])
    traj = trajectory(run)
    responses = [R.final(R.point(asm, node, 2, offset=[0.1, 0.2, 0.05]), traj),
                 R.integral(R.point_velocity(asm, node, 1, offset=[0.1, 0.2, 0.05]), traj),
                 R.integral(R.strain_energy(asm), traj, parameters=params)]
    if asm.constraints is not None:
        responses.append(R.integral(R.joint_reaction(asm, "ball", 2), traj))
    adjoint = _compare(run, params, responses)
    assert adjoint.recomputed > 0 if keep_every > 1 else adjoint.recomputed == 0


def test_adjoint_equals_ddm_with_spatial_rotations_on_the_composed_scheme():
    """The free Beam3D of the spatial cases on the composed mid-point scheme (every 4th state kept: the
    stages and segments recomputed): adjoint equal to DDM to 1e-10."""
    model, v0, params = SPATIAL_CASES["free Beam3D"][0]()
    run = record(fm.Assembly(model), 2e-3, 10 * 2e-3, v0=v0, scheme="composed-mid-point", keep_every=4)
    asm = run.asm
    traj = trajectory(run)
    node = int(asm.rotation_nodes[-1])
    _compare(run, params, [R.final(R.point(asm, node, 2, offset=[0.1, 0.2, 0.05]), traj),
                           R.integral(R.kinetic_energy(asm), traj, parameters=params)])
