"""The adjoint's compiled per-solve work on planar Beam2D groups (issue 33, brief Q11;
flexmb/compiled/adjoint_beam2d.py, ``_CompiledBeams`` and ``_ParameterTerms`` of
flexmb/sensitivity/adjoint.py) against the numpy path it replaces: the transposed start products
and the parameter terms on random states (director angles beyond pi, cubic, lumped and consistent
masses, joints, springs and gravity on their own paths), the closed-form rate columns of the cubic
mass against central differences, and whole adjoint gradients with and without the kernels against
each other and the direct differentiation. No timing here: benchmarks/bench_sensitivity.py."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import flexmb as fm
from flexmb.cms import design
from flexmb.compiled import hermite_mass2d as compiled_mass
from flexmb.sensitivity import adjoint as A
from flexmb.sensitivity import parameters as P
from flexmb.sensitivity import responses as R
from flexmb.sensitivity.inertia import InertiaDerivatives
from flexmb.sensitivity.midpoint import StepDerivative, direct_sensitivities
from flexmb.sensitivity.transient import record
from flexmb.validation.slider_crank import ROD
from flexmb.validation.slider_crank import build as slider_crank
from models import spinning_hub_beam
from test_sensitivity_cost import residual_share_calls
from test_sensitivity_midpoint import _cantilever, _jointed_mechanism, _jointed_run

#: compiled against numpy on one solve: the same terms summed in another order (relative to the
#: largest product)
ROUND_OFF = 1e-12
#: whole gradients: against each other and against the direct differentiation (the brief's 1e-10),
#: relative to each response's largest entry
TOL = 1e-10
OMEGA = 124.8                   # rad/s, slider-crank A
DT = 8.0 / OMEGA / 640


def _crank_parameters(rod: list[int], n_el: int) -> list:
    """The rod's rho_I multiplier, stiffness and density scales, the slider's mass and multipliers on
    some elements' EI, rho_A, EA and rho_I (overlapping sets)."""
    return [P.parameter(design.section_property("rod", "rho_I")), P.parameter(design.stiffness_scale("rod")),
            P.parameter(design.density_scale("rod")), P.parameter(design.point_mass(rod[-1], 0.0378)),
            P.element_property("rod", "EI", [0]), P.element_property("rod", "rho_A", [1, 2]),
            P.element_property("rod", "EA", [n_el - 1]), P.element_property("rod", "rho_I", [0, n_el - 1]),
            P.element_property("rod", "EI", [1, 2])]


def _random_step(run, rng, turns: float = 2.0):
    """A start state at random displacements (angles up to ``turns`` pi and beyond), rates and
    stretch rates, and an end state a realistic step away (the increment is not a solution: the
    products are evaluated at any two states)."""
    s = run.states[0]
    n = run.asm.n_dof
    u0 = rng.uniform(-1.0, 1.0, n) * 0.05
    angles = np.arange(2, n, 3) if run.asm.model.dim == 2 else np.zeros(0, dtype=int)
    u0[angles] = rng.uniform(-turns, turns, angles.size) * np.pi
    v0 = rng.standard_normal(n) * 20.0
    stretch = None if s.stretch is None else rng.standard_normal(n) * 5.0
    dt = run.steps[0].dt
    u1 = u0 + dt * v0 + rng.standard_normal(n) * 1e-4
    start = dataclasses.replace(s, u=u0, v=v0, stretch=stretch)
    end = dataclasses.replace(s, t=s.t + dt, u=u1)
    return start, dt, end


def _crank_run(n_el: int = 4, steps: int = 6, keep_every: int = 1):
    asm, v0, nodes = slider_crank(n_el, OMEGA, 0.0378, "cubic")
    return record(asm, DT, steps * DT, v0=v0, keep_every=keep_every), [int(n) for n in nodes]


def _runs():
    """(label, a recorded run, its parameters): the cubic-mass slider-crank rod, the lumped cantilever
    with a tip mass (tests/test_sensitivity_midpoint.py) and the jointed double pendulum (consistent
    mass, gravity, a joint spring-damper, a rigid body: those terms stay on the numpy path)."""
    crank, rod = _crank_run()
    cantilever = record(fm.Assembly(_cantilever()), 2e-3, 4 * 2e-3)
    model, joint_params = _jointed_mechanism()
    return [("cubic slider-crank", crank, _crank_parameters(rod, 4)),
            ("lumped cantilever", cantilever, [P.parameter(design.section_property("beam", "EI")),
                                               P.parameter(design.density_scale("beam")),
                                               P.element_property("beam", "rho_I", [1, 3])]),
            ("jointed pendulum", _jointed_run(model, steps=4), list(joint_params.values()))]


@pytest.fixture(scope="module")
def runs():
    return _runs()


def _assert_close(got: np.ndarray, want: np.ndarray, tol: float, what: str) -> None:
    scale = np.abs(want).max()
    assert scale > 0.0, f"{what}: zero reference"
    err = np.abs(got - want).max() / scale
    assert err < tol, f"{what}: compiled against numpy {err:.2e} (relative to {scale:.3e})"


def test_start_products_equal_the_numpy_path_on_random_states(runs):
    """(D^T psi, (dg/dv_n)^T psi, (dg/ds_n)^T psi) of the compiled path against the start derivatives'
    blocks applied transposed, for two responses, at random states with director angles beyond pi
    (and at a solved step of each run, the joints' multipliers included)."""
    rng = np.random.default_rng(11)
    for label, run, params in runs:
        asm = run.asm
        assert A._CompiledBeams.covers(asm), label
        beams, terms, derivative = A._CompiledBeams(asm), A._ParameterTerms(asm, params), StepDerivative(asm, params)
        steps = [_random_step(run, rng) for _ in range(3)] if asm.constraints is None else []
        steps.append((run.states[2], run.steps[2].dt, run.states[3]))
        for start, dt, end in steps:
            motion = run.stepper._motion(start, dt, end.u)
            psi = rng.standard_normal((asm.n_dof, 2))
            D, inertia = A._start_matrix(derivative, start, dt, end, motion)
            want = terms.transposed(inertia, D, psi)
            got = beams.transposed(derivative, start, dt, end, motion, psi)
            for name, g, w in zip(("D^T psi", "dg/dv_n^T psi", "dg/ds_n^T psi"), got, want):
                if name == "dg/ds_n^T psi" and not asm.director_dofs.size:
                    assert not np.any(g) and not np.any(w)
                    continue
                _assert_close(g, w, ROUND_OFF, f"{label}: {name}")


def test_parameter_terms_equal_the_numpy_path_on_random_states(runs, monkeypatch):
    """psi . dg/dp of all parameters: the compiled section properties and the nodal masses against
    each part's residual shares (the numpy path), at random states; the jointed pendulum's gravity
    keeps its section properties on the numpy path."""
    rng = np.random.default_rng(12)
    for label, run, params in runs:
        asm = run.asm
        new = A._ParameterTerms(asm, params)
        monkeypatch.setattr(A, "_COMPILED_BEAMS", False)
        old = A._ParameterTerms(asm, params)
        monkeypatch.setattr(A, "_COMPILED_BEAMS", True)
        assert bool(new.beams) == (asm.constraints is None), label
        assert not old.beams and not old.nodal
        derivative = StepDerivative(asm, params)
        steps = [_random_step(run, rng) for _ in range(3)] if asm.constraints is None else []
        steps.append((run.states[2], run.steps[2].dt, run.states[3]))
        for start, dt, end in steps:
            psi = rng.standard_normal((asm.n_dof, 2))
            psi_phi = rng.standard_normal((end.lam.size, 2))
            got = new(derivative, run.stepper, start, dt, end, psi, psi_phi, {})
            want = old(derivative, run.stepper, start, dt, end, psi, psi_phi, {})
            _assert_close(got, want, ROUND_OFF, f"{label}: parameter terms")


def test_cubic_mass_rate_columns_against_central_differences():
    """dF/dv_n and dF/ds_n of the cubic mass's step inertia in closed form (numpy and compiled) against
    central differences of the compiled inertia in each start rate (F is affine in them), at director
    angles beyond pi; and the two closed forms against each other."""
    asm, _, _ = slider_crank(4, OMEGA, 0.0, "cubic")
    i, kernels = asm.configuration_masses[0]
    ed = asm.dofs.element_dofs(asm.groups[i])
    rng = np.random.default_rng(5)
    a0 = rng.uniform(-1.0, 1.0, ed.shape) * 0.05
    a0[:, [2, 5]] = rng.uniform(-2.0, 2.0, (len(ed), 2)) * np.pi
    v0, s0 = rng.standard_normal(ed.shape) * 20.0, rng.standard_normal((len(ed), 2)) * 5.0
    a1 = a0 + DT * v0 + rng.standard_normal(ed.shape) * 1e-4
    Av, As = InertiaDerivatives._rate_coefficients(kernels, a0, a1, DT)
    cAv, cAs = np.empty(Av.shape), np.empty(As.shape)
    A.beam_kernels()._rate_columns(kernels.alpha0, kernels.l0, kernels.mass, a0, a1, DT, cAv, cAs)
    _assert_close(cAv, Av, 1e-14, "compiled dF/dv_n")
    _assert_close(cAs, As, 1e-14, "compiled dF/ds_n")

    def force(v, s):
        F = np.empty(a0.shape)
        compiled_mass.mid_point_inertia(kernels.alpha0, kernels.l0, kernels.mass, a0, a1, v, s, DT, F,
                                        np.empty((0, 6, 6)), False)
        return F

    h = 0.5
    for j in range(8):
        dv, ds = np.zeros(v0.shape), np.zeros(s0.shape)
        if j < 6:
            dv[:, j] = h
        else:
            ds[:, j - 6] = h
        central = (force(v0 + dv, s0 + ds) - force(v0 - dv, s0 - ds)) / (2.0 * h)
        exact = Av[:, :, j] if j < 6 else As[:, :, j - 6]
        # the differences lose the digits of F (2 (u1 - u0) / dt against a unit rate) to cancellation
        tol = 1e-13 * np.abs(force(v0, s0)).max() / h / np.abs(exact).max()
        _assert_close(central, exact, max(tol, 1e-12), f"rate column {j}")


def _gradients(run, params, responses, monkeypatch, compiled: bool) -> np.ndarray:
    monkeypatch.setattr(A, "_COMPILED_BEAMS", compiled)
    return A.adjoint_gradient(run, params, responses).gradient


def test_adjoint_gradients_with_and_without_the_kernels_equal_the_direct_differentiation(monkeypatch):
    """The slider-crank rod (8 elements, every 5th state kept) with its nine parameters, the spin-up of a
    cubic-mass beam with second-order strains (tests/models.py) and the lumped cantilever: the adjoint
    through the kernels equals the numpy path's and the direct differentiation's (the final mid-span
    deflection, tip deflection or tip displacement, and the kinetic energy's time integral)."""
    crank, rod = _crank_run(8, 20, keep_every=5)
    cases = [(crank, _crank_parameters(rod, 8), R.chord_deflection(crank.asm, rod[0], rod[4], rod[-1], scale=ROD))]
    _, hub, v0, nodes = spinning_hub_beam()
    spin_up = record(hub, 0.05, 1.0, v0=v0, keep_every=3)
    cases.append((spin_up, [P.parameter(design.section_property("beam", "EI")),
                            P.parameter(design.section_property("beam", "rho_A")),
                            P.element_property("beam", "rho_I", [1, 2]), P.element_property("beam", "EA", [0])],
                  R.dof(hub, int(nodes[-1]), "uy")))
    cantilever = record(fm.Assembly(_cantilever()), 2e-3, 20 * 2e-3, keep_every=7)
    cases.append((cantilever, [P.parameter(design.section_property("beam", "EI")),
                               P.element_property("beam", "rho_A", [0, 2]),
                               P.parameter(design.density_scale("beam"))], R.dof(cantilever.asm, 4, "uy")))
    for run, params, signal in cases:
        traj = A.trajectory(run)
        responses = [R.final(signal, traj, parameters=params), R.integral(R.kinetic_energy(run.asm), traj,
                                                                          parameters=params)]
        new = _gradients(run, params, responses, monkeypatch, True)
        old = _gradients(run, params, responses, monkeypatch, False)
        sens = direct_sensitivities(run, params)
        for r, response in enumerate(responses):
            ddm = sens.gradient(response)
            assert np.count_nonzero(ddm) == len(params)
            _assert_close(new[r], old[r], TOL, f"response {r}: compiled against numpy adjoint")
            _assert_close(new[r], ddm, TOL, f"response {r}: compiled adjoint against DDM")


def test_the_kernels_replace_the_residual_shares_of_beams_and_nodal_masses(monkeypatch):
    """On the slider-crank rod no part goes through its residual shares (the section properties are the
    kernel's, the slider mass a nodal mass); with the kernels off, all five parts do."""
    run, rod = _crank_run(4, 3)
    params = _crank_parameters(rod, 4)
    traj = A.trajectory(run)
    response = R.final(R.chord_deflection(run.asm, rod[0], rod[2], rod[-1], scale=ROD), traj, parameters=params)
    calls = residual_share_calls(monkeypatch)
    solves = A.adjoint_gradient(run, params, [response]).solves
    assert calls == []
    monkeypatch.setattr(A, "_COMPILED_BEAMS", False)
    A.adjoint_gradient(run, params, [response])
    assert len(calls) == 5 * solves
