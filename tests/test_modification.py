"""Forward and inverse structural modification: exactness where the theory says so (a density
change of one component keeps span(T); all modes of a full model; a uniform scaling), closed-form
targets (tip mass), the minimum-norm choice, and bad input."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar

import flexmb as fm
from flexmb.analysis.modes import natural_modes
from flexmb.cms import (components_from_groups, density_scale, forward_modification, free_interface,
                        inverse_modification, point_mass, reanalyse, spring, stiffness_scale, synthesize)

N_EL = 12                           # elements of the cantilever, 3 per quarter
QUARTERS = ["q1", "q2", "q3", "q4"]
RHO_A, LENGTH = 1.0, 1.0            # kg/m, m


def cantilever(n_el: int = N_EL) -> fm.Model:
    """Clamped uniform beam (EI = 1 N m^2, EA = 1e4 N, rho A = 1 kg/m, L = 1 m, Hermitian mass)
    in four groups q1 (root) .. q4 (tip)."""
    m = fm.Model(dim=2)
    n = m.add_nodes(np.c_[np.linspace(0.0, LENGTH, n_el + 1), np.zeros(n_el + 1)])
    q = n_el // 4
    for j, name in enumerate(QUARTERS):
        s = slice(j * q, (j + 1) * q)
        m.add_beam2d(np.c_[n[:-1][s], n[1:][s]], EA=1e4, EI=1.0, rho_A=RHO_A, mass="cubic", name=name)
    m.fix(0)
    return m


@pytest.fixture(scope="module")
def full():
    asm = fm.Assembly(cantilever())
    return asm, natural_modes(asm, 8)


@pytest.fixture(scope="module")
def cms():
    comps = components_from_groups(cantilever(), {f"c{j + 1}": [g] for j, g in enumerate(QUARTERS)})
    return synthesize([free_interface(c, n_elastic_modes=3) for c in comps])


def test_density_change_of_one_component_equals_cms_reanalysis(cms) -> None:
    """span(T) does not change when one component's density is scaled (Hutton & Smith: a mass
    change gives the result of a full CMS re-analysis)."""
    change = {density_scale("q2"): 0.8}
    predicted = forward_modification(cms, change, n_modes=5)
    again = reanalyse(cms, change, n_modes=5)
    err = np.max(np.abs(predicted.frequencies_hz / again.frequencies_hz - 1.0))
    assert err < 1e-10, f"forward vs CMS re-analysis: frequencies differ by {err:.2e}"
    assert np.all(predicted.frequencies_hz < predicted.baseline_hz), "more mass must lower every frequency"
    mac = np.einsum("ki,ki->k", predicted.modes, again.modes) ** 2 / (
        np.einsum("ki,ki->k", predicted.modes, predicted.modes) * np.einsum("ki,ki->k", again.modes, again.modes))
    assert np.all(mac > 1.0 - 1e-8), f"mode shapes differ: MAC {mac}"


def test_stiffness_change_is_close_but_not_exact(cms) -> None:
    change = {stiffness_scale("q1"): 0.5}
    predicted = forward_modification(cms, change, n_modes=4)
    again = reanalyse(cms, change, n_modes=4)
    diff = predicted.frequencies_hz / again.frequencies_hz - 1.0
    assert 1e-7 < np.max(np.abs(diff)) < 1e-2, f"relative differences {diff}"


def test_all_modes_of_a_full_model_give_the_exact_modified_modes() -> None:
    asm = fm.Assembly(cantilever(8))
    modes = natural_modes(asm, asm.n_free)
    change = {stiffness_scale("q3"): 0.7, density_scale("q1"): -0.3, point_mass(8): 0.2, spring(4, "uy"): 5.0}
    predicted = forward_modification(modes, change, n_modes=6, assembly=asm)
    again = reanalyse(modes, change, n_modes=6, assembly=asm)
    err = np.max(np.abs(predicted.eigenvalues / again.eigenvalues - 1.0))
    assert err < 1e-9, f"all-mode linear equivalent vs full re-analysis: {err:.2e}"


def test_all_modes_with_joints_give_the_exact_modified_modes() -> None:
    """Joints: the re-analysis solves on the constraint null space; with every mode held the
    linear equivalent must agree with it."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.zeros(7), -np.linspace(0.0, 1.0, 7)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e4, EI=2.0, rho_A=1.0, rho_I=1e-3, mass="cubic", name="rod")
    m.add_joint("revolute", None, int(nodes[0]), at=[0.0, 0.0])
    m.attach(int(nodes[-1]), m.add_rigid_body([0.3, -1.0], 1.0, 0.01))
    asm = fm.Assembly(m)
    modes = natural_modes(asm, fm.system_matrices(asm).n_unknowns)
    change = {stiffness_scale("rod"): -0.2, point_mass(int(nodes[3])): 0.5}
    predicted = forward_modification(modes, change, n_modes=5)
    again = reanalyse(modes, change, n_modes=5)
    assert again.eigenvalues[0] == 0.0 and abs(predicted.eigenvalues[0]) < 1e-9 * predicted.eigenvalues[1], \
        "the swing about the joint stays a zero-frequency mode"
    err = np.max(np.abs(predicted.eigenvalues[1:] / again.eigenvalues[1:] - 1.0))
    assert err < 1e-9, f"with joints, all-mode linear equivalent vs re-analysis: {err:.2e}"


def test_few_modes_give_upper_bounds(full) -> None:
    """With a subset of the modes the linear equivalent is a Rayleigh-Ritz approximation."""
    asm, modes = full
    change = {point_mass(N_EL): 0.4, stiffness_scale("q2"): 0.3}
    predicted = forward_modification(modes, change, n_modes=3, basis_modes=[0, 1, 2, 3, 4], assembly=asm)
    again = reanalyse(modes, change, n_modes=3, assembly=asm)
    gap = predicted.eigenvalues / again.eigenvalues - 1.0
    assert np.all(gap > -1e-12) and np.max(gap) > 1e-6, f"Ritz gaps {gap}"


@pytest.mark.parametrize("base_kind", ["full", "cms"])
def test_uniform_scaling_returns_the_eigenvalue_ratio(base_kind, full, cms) -> None:
    asm, modes = full
    base, kw = (modes, {"assembly": asm}) if base_kind == "full" else (cms, {})
    lam = (base.eigenvalues if base_kind == "full" else cms.modes(3).eigenvalues)[1]
    target = 1.3 * np.sqrt(lam) / (2 * np.pi)
    stiff = inverse_modification(base, stiffness_scale(QUARTERS), 1, target, refine=False, **kw)
    dense = inverse_modification(base, density_scale(QUARTERS), 1, target, refine=False, **kw)
    assert abs(stiff.alpha[0] - (1.3**2 - 1.0)) < 1e-10, stiff.summary()
    assert abs(dense.alpha[0] - (1.3**-2 - 1.0)) < 1e-10, dense.summary()
    assert abs(stiff.achieved_hz[0] / target - 1.0) < 1e-10


def test_tip_mass_reaches_the_closed_form(full) -> None:
    """omega_1 lowered to 0.7 of the bare cantilever's needs mu = m_tip / (rho A L) = 0.256215
    (references README, Wave 2 A, derived from 1 + cos b cosh b + mu b (cos b sinh b - sin b cosh b) = 0)."""
    asm, modes = full
    result = inverse_modification(modes, point_mass(N_EL), 0, 0.7 * modes.frequencies_hz[0], assembly=asm)
    mu = result.alpha[0] / (RHO_A * LENGTH)
    assert abs(mu - 0.256215) < 1e-4, result.summary()
    assert abs(result.achieved_hz[0] / (0.7 * modes.frequencies_hz[0]) - 1.0) < 1e-9
    chosen = [r for r in result.roots if r["chosen"]]
    assert len(chosen) == 1 and chosen[0]["dominance"] > 0.9 and len(result.roots) >= 2
    assert abs(result.alpha_linear[0] - result.alpha[0]) < 1e-2 * result.alpha[0]


def test_refinement_stops_at_the_round_off_floor_of_the_reanalysis(full) -> None:
    """rtol below what a re-analysis can resolve: Newton stops where its error stagnates (below
    ROUND_OFF_FLOOR) instead of failing, and says how many iterations it took."""
    asm, modes = full
    target = 0.8 * modes.frequencies_hz[0]
    result = inverse_modification(modes, [density_scale("q4"), stiffness_scale("q1")], 0, target, rtol=1e-17,
                                  assembly=asm)
    assert abs(result.achieved_hz[0] / target - 1.0) < 1e-9
    assert 1 <= result.iterations < 30


def test_two_variables_one_target_gives_the_minimum_norm_change(full) -> None:
    asm, modes = full
    variables = [density_scale("q4"), stiffness_scale("q1")]
    target = 0.85 * modes.frequencies_hz[0]
    result = inverse_modification(modes, variables, 0, target, assembly=asm)
    assert abs(result.achieved_hz[0] / target - 1.0) < 1e-9 and "minimum-norm" in result.rule

    def lam1(alpha) -> float:
        return reanalyse(modes, dict(zip(variables, alpha)), n_modes=1, assembly=asm).eigenvalues[0]

    lam_t = (2 * np.pi * target) ** 2

    def radius(theta: float) -> float:          # the change of norm r along direction theta that hits the target
        d = np.array([np.cos(theta), np.sin(theta)])
        return brentq(lambda r: lam1(r * d) - lam_t, 0.0, 0.9)

    theta = np.arctan2(result.alpha[1], result.alpha[0])
    best = minimize_scalar(radius, bounds=(theta - 0.5, theta + 0.5), method="bounded", options={"xatol": 1e-7})
    gap = best.fun / result.weighted_norm() - 1.0
    assert abs(gap) < 1e-6, f"the scan's minimum norm differs from the Gauss-Newton choice by {gap:.2e}"


def test_two_variables_two_targets_newton(cms) -> None:
    f = cms.modes(2).frequencies_hz
    result = inverse_modification(cms, [density_scale("q4"), stiffness_scale("q2")], [0, 1],
                                  [0.95 * f[0], 1.05 * f[1]])
    np.testing.assert_allclose(result.achieved_hz, [0.95 * f[0], 1.05 * f[1]], rtol=1e-9)
    assert "Newton" in result.rule and result.iterations >= 1


def test_bad_input(full, cms) -> None:
    asm, modes = full
    f1 = modes.frequencies_hz[0]
    with pytest.raises(fm.ModelError, match="not reachable with 'point mass node 12'"):
        inverse_modification(modes, point_mass(N_EL), 0, 1.2 * f1, assembly=asm)
    with pytest.raises(fm.ModelError, match="2 mode\\(s\\) and 1 target"):
        inverse_modification(modes, point_mass(N_EL), [0, 1], f1, assembly=asm)
    with pytest.raises(fm.ModelError, match="overdetermined"):
        inverse_modification(modes, point_mass(N_EL), [0, 1], [f1, 2 * f1], assembly=asm)
    with pytest.raises(fm.ModelError, match="positive and finite"):
        inverse_modification(modes, point_mass(N_EL), 0, -1.0, assembly=asm)
    with pytest.raises(fm.ModelError, match="mode 9 does not exist"):
        inverse_modification(modes, point_mass(N_EL), 9, f1, assembly=asm)
    with pytest.raises(fm.ModelError, match="'rho scale q1' would become -0.5"):
        forward_modification(cms, {density_scale("q1"): -1.5})
    with pytest.raises(fm.ModelError, match="non-empty dict"):
        forward_modification(cms, [density_scale("q1")])
    with pytest.raises(fm.ModelError, match="must be a number"):
        forward_modification(cms, {density_scale("q1"): "x"})
    with pytest.raises(fm.ModelError, match="n_modes = 99 is more than"):
        forward_modification(cms, {density_scale("q1"): 0.1}, n_modes=99)
    with pytest.raises(fm.ModelError, match="weights must be 2 positive numbers"):
        inverse_modification(modes, [point_mass(N_EL), stiffness_scale("q1")], 0, f1, weights=[1, 0], assembly=asm)
    with pytest.raises(fm.ModelError, match="acts on no component"):
        reanalyse(cms, {stiffness_scale("roof"): 0.1})


@pytest.mark.parametrize("method", ["forward", "reanalyse"])
def test_modified_modes_are_mode_shapes_with_the_baseline_sign(method, full, cms) -> None:
    """mode_shapes() draws the modified modes on the parent model, each with the sign of the
    baseline mode it follows (positive projection), so before/after pictures do not flip."""
    change = {density_scale("q4"): 0.5}
    for base, baseline in ((full[1], full[1].modes), (cms, cms.modes(6).full_modes())):
        run = forward_modification if method == "forward" else reanalyse
        modified = run(base, change, n_modes=4)
        shapes = modified.mode_shapes()
        assert len(shapes.u) == 4 and shapes.meta["what"] == "frequency (Hz)"
        np.testing.assert_allclose(shapes.parameter, modified.frequencies_hz)
        projections = np.einsum("kd,kd->k", modified.modes, baseline[modified.tracking])
        assert np.all(projections > 0), projections
