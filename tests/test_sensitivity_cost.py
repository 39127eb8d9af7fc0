"""The adjoint's parameter terms at a cost that does not grow with the number of parameters (issue 33,
brief Q7; flexmb/sensitivity/adjoint.py ``_ParameterTerms``): 50 parameters of a slider-crank rod --
its rho_I, stiffness scale and density scale, the slider mass and multipliers on single elements and
on overlapping pairs of elements (``element_property``) -- through the adjoint equal the direct
differentiation of the same run; the per-element parameters sum to their group's parameter and the
property parameters to the stiffness and density scales (linearity); and per solve the sweep
evaluates each section property of the rod once, not once per parameter. No timing here: the cost
is measured by benchmarks/bench_sensitivity.py."""
from __future__ import annotations

import numpy as np
import pytest

from flexmb.cms import design
from flexmb.sensitivity import parameters as P
from flexmb.sensitivity import responses as R
from flexmb.sensitivity.adjoint import adjoint_gradient, trajectory
from flexmb.sensitivity.midpoint import direct_sensitivities
from flexmb.sensitivity.transient import record
from flexmb.validation.slider_crank import ROD, build

N_EL = 8
OMEGA = 124.8                   # rad/s, slider-crank A
SLIDER_MASS = 0.0378126         # kg, case B's slider: its derivative is not zero
DT = 8.0 / OMEGA / 640
STEPS = 24
#: adjoint against direct differentiation (the brief's 1e-10), relative to each response's largest entry
TOL = 1e-10
#: linear identities between parameters, relative to the largest of the terms (round-off)
SUM_TOL = 1e-12


def _parameters(rod: list[int]) -> list[P.TransientParameter]:
    """50 parameters: 4 of the rod and the slider, EI, rho_A, EA and rho_I of each of the 8 elements
    (32), EI and rho_A of the 7 overlapping pairs of neighbours (14)."""
    params = [P.parameter(design.section_property("rod", "rho_I")), P.parameter(design.stiffness_scale("rod")),
              P.parameter(design.density_scale("rod")), P.parameter(design.point_mass(rod[-1], SLIDER_MASS))]
    for prop in ("EI", "rho_A", "EA", "rho_I"):
        params += [P.element_property("rod", prop, e) for e in range(N_EL)]
    for prop in ("EI", "rho_A"):
        params += [P.element_property("rod", prop, (e, e + 1)) for e in range(N_EL - 1)]
    assert len(params) == 50
    return params


@pytest.fixture(scope="module")
def crank():
    """The recorded run (every 5th state kept: the sweep recomputes the others), the 50 parameters,
    two responses with explicit partials (the final mid-span deflection / L and the time integral of
    the kinetic energy) and the deflection's signal."""
    asm, v0, nodes = build(N_EL, OMEGA, SLIDER_MASS, "cubic")
    rod = [int(n) for n in nodes]
    run = record(asm, DT, STEPS * DT, v0=v0, keep_every=5)
    params = _parameters(rod)
    traj = trajectory(run)
    signal = R.chord_deflection(asm, rod[0], rod[N_EL // 2], rod[-1], scale=ROD)
    responses = [R.final(signal, traj, parameters=params),
                 R.integral(R.kinetic_energy(asm), traj, parameters=params)]
    return run, params, responses, signal


def test_fifty_parameter_adjoint_equals_direct_differentiation_of_the_same_run(crank):
    run, params, responses, _ = crank
    adjoint = adjoint_gradient(run, params, responses)
    sens = direct_sensitivities(run, params)
    assert adjoint.solves == STEPS and adjoint.recomputed > 0
    for r, response in enumerate(responses):
        ddm = sens.gradient(response)
        scale = np.abs(ddm).max()
        assert scale > 0.0 and np.count_nonzero(ddm) == len(params), f"response {r}: a zero derivative {ddm}"
        err = np.abs(adjoint.gradient[r] - ddm).max() / scale
        assert err < TOL, f"response {r}: adjoint against DDM {err:.2e} (relative to {scale:.3e})"


def test_element_parameters_sum_to_their_group_parameter(crank):
    """By linearity: the elements' EI multipliers sum to the rod's EI multiplier, the pairs' to twice
    it less the two end elements', EA + EI to the stiffness scale and rho_A + rho_I to the density
    scale (each group multiplier evaluated here as a parameter of its own)."""
    run, params, _, signal = crank
    group = [P.parameter(design.section_property("rod", prop)) for prop in ("EI", "rho_A", "EA")]
    response = R.final(signal, trajectory(run), parameters=params + group)
    g = adjoint_gradient(run, params + group, [response]).gradient[0]
    single = {prop: g[4 + k * N_EL:4 + (k + 1) * N_EL] for k, prop in enumerate(("EI", "rho_A", "EA", "rho_I"))}
    pairs = {prop: g[36 + k * (N_EL - 1):36 + (k + 1) * (N_EL - 1)] for k, prop in enumerate(("EI", "rho_A"))}
    whole = dict(zip(("EI", "rho_A", "EA"), g[50:]))
    whole["rho_I"] = g[0]
    checks = [(single[p].sum(), whole[p], f"sum of the elements' {p}") for p in ("EI", "rho_A", "EA", "rho_I")]
    checks += [(pairs[p].sum(), 2.0 * whole[p] - single[p][0] - single[p][-1], f"sum of the pairs' {p}")
               for p in ("EI", "rho_A")]
    checks += [(whole["EA"] + whole["EI"], g[1], "EA + EI against the stiffness scale"),
               (whole["rho_A"] + whole["rho_I"], g[2], "rho_A + rho_I against the density scale")]
    for got, expected, label in checks:
        scale = max(abs(got), abs(expected))
        assert scale > 0.0
        assert abs(got - expected) <= SUM_TOL * scale, f"{label}: {got!r} against {expected!r}"


def residual_share_calls(monkeypatch) -> list[tuple[str, str | None]]:
    """The (kind, property) of every parameter's residual-share evaluation from now on (a list that grows)."""
    calls = []
    original = P.TransientParameter.residual_shares

    def counted(self, *args, **kwargs):
        calls.append((self.kind, self.prop))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(P.TransientParameter, "residual_shares", counted)
    return calls


def test_each_property_is_evaluated_once_per_solve_whatever_the_number_of_parameters(crank, monkeypatch):
    """The sweep's parameter terms evaluate the rod's EA, EI, rho_A and rho_I and the slider mass
    once per solve: 5 evaluations for all 50 parameters (the stiffness and density scales are
    their properties' sums, not evaluations of their own). The numpy path: the compiled one evaluates
    none of them by their residual shares (tests/test_sensitivity_compiled.py)."""
    run, params, responses, _ = crank
    monkeypatch.setattr("flexmb.sensitivity.adjoint._COMPILED_BEAMS", False)
    calls = residual_share_calls(monkeypatch)
    result = adjoint_gradient(run, params, responses)
    per_solve = set(calls)
    assert len(calls) == 5 * result.solves, f"{len(calls)} evaluations in {result.solves} solves: {sorted(per_solve)}"
    assert per_solve == {("section property", p) for p in ("EA", "EI", "rho_A", "rho_I")} | {("point mass", None)}
