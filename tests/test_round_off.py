"""Newton at the round-off floor: fine meshes and small loads converge with default settings, a
translated model takes the same iterations, and fine meshes are not taken for mechanisms."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import flexmb as fm
from flexmb.integrators.newton import Factorization, NewtonFailure, NewtonSettings, at_round_off, newton_solve
from flexmb.integrators.schemes import MidPoint
from flexmb.validation.spin_up import build

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validation"))
from spin_up_simo import PARAMETERS as SIMO  # noqa: E402

EPS = np.finfo(float).eps


def cantilever(n: int, shift: float = 0.0, angle: float = 0.0, load: float = 1.0) -> tuple[fm.Model, int]:
    """A Beam2D cantilever of n elements (10 m, Simo's section) along the direction ``angle``,
    moved by ``shift`` in x and y; tip load ``load`` (N) normal to it. Returns the model and its tip."""
    model = fm.Model(dim=2)
    s = np.linspace(0.0, 10.0, n + 1)
    axis, normal = np.array([np.cos(angle), np.sin(angle)]), np.array([-np.sin(angle), np.cos(angle)])
    nodes = model.add_nodes(shift + s[:, None] * axis)
    model.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=SIMO.EA, EI=SIMO.EI, name="beam")
    model.fix(nodes[0])
    model.add_load(nodes[-1], "ux", load * normal[0])
    model.add_load(nodes[-1], "uy", load * normal[1])
    return model, int(nodes[-1])


# ------------------------------------------------------------------ dynamics on fine meshes
@pytest.mark.parametrize("n, dt, steps", [(4096, 0.01, 16), (16384, 0.04, 3)])
def test_fine_spin_up_meshes_run_without_cutback(n, dt, steps):
    """Simo's spin-up beam: 1024 elements used to stop at t = 0.15 s and 4096 at the first step
    (residual at its round-off floor, 1.2e-6 and 1.2e-5 of the force scale); 16384 elements at
    dt = 0.04 s were refused as a mechanism (step Jacobian with condition 1e15). Now every step
    converges without cut-back, ends at the round-off floor (entered once in the run log) and
    keeps the mid-point scheme's energy balance."""
    asm, nodes = build(SIMO, n)
    h = fm.integrate(asm, dt, steps * dt, progress=False, max_cutbacks=0, keep_newton_logs=True)
    assert h.n_steps == steps + 1 and h.cutbacks == 0
    assert {log.criterion for log in h.newton_logs} <= {"residual", "increment", "round-off", "stagnation"}
    notes = [e for e in h.events if e.kind == "round-off"]
    assert len(notes) == 1 and "round-off floor" in notes[0].message
    # the work of the driven root balances the energy to round-off of the largest kinetic energy
    assert np.abs(h.total - h.total[0]).max() <= 1e-6 * max(np.max(h.kinetic), 1e-30)


def test_fine_mesh_steps_end_where_the_coarse_meshes_converge_to():
    """The tip of the fine-mesh spin-up at t = 0.3 s agrees with the coarser meshes' limit: a
    Newton that stops at the round-off floor stops at the solution."""
    tips = {}
    for n in (64, 256, 1024):
        asm, nodes = build(SIMO, n)
        h = fm.integrate(asm, 0.01, 0.3, progress=False, max_cutbacks=0)
        tips[n] = h.positions()[-1, nodes[-1]]
    # mesh convergence of the cubic element is fast: the differences shrink by ~16x per refinement
    coarse, middle = np.linalg.norm(tips[64] - tips[1024]), np.linalg.norm(tips[256] - tips[1024])
    assert middle <= 0.2 * coarse + 1e-12, (coarse, middle)


# ------------------------------------------------------------------ statics: small loads, moved models
@pytest.mark.parametrize("load", [1e-6, 1.0])
def test_fine_cantilever_statics_at_small_loads_equal_the_linear_solution(load):
    """1024 elements, tip load 1e-6 N and 1 N: converged with default settings, equal to the
    linear tip deflection P L^3 / (3 EI) (the shear-free cubic element is exact for it) to the
    geometric nonlinearity, which is O((P L^2 / EI)^2) = 5e-7 at 1 N."""
    model, tip = cantilever(1024, load=load)
    path = fm.load_control(model, 1, progress=False)
    w = path.u[-1][fm.Assembly(model).dofs.index(tip, "uy")]
    exact = load * 10.0**3 / (3.0 * SIMO.EI)
    assert w == pytest.approx(exact, rel=1e-9 if load < 1e-3 else 1e-5)


@pytest.mark.parametrize("n", [16, 1024])
def test_a_moved_model_converges_in_the_same_iterations_and_a_turned_one_to_the_same_answer(n):
    """The cantilever moved by (1e4, 1e4) m: the same Newton iterations and the same displacements
    as at the origin. Turned by 0.7 rad (and moved): the same displacements in the beam's axes, in
    at most one iteration more (along the axes the axial force has no round-off; turned it has
    eps EA = 6e-9 N, above residual_tol times the 1 N load, so the last iteration ends at the floor)."""
    logs, tips = [], []
    for shift, angle in ((0.0, 0.0), (1e4, 0.0), (1e4, 0.7)):
        model, tip = cantilever(n, shift, angle)
        asm = fm.Assembly(model)
        path = fm.load_control(asm, 1, progress=False)
        logs.append([log.iterations for log in path.newton_logs])
        u = path.u[-1][asm.dofs.translations()[tip]]
        c, s = np.cos(angle), np.sin(angle)
        tips.append(np.array([[c, s], [-s, c]]) @ u)                  # in the beam's own axes
    assert logs[1] == logs[0]
    assert len(logs[2]) == len(logs[0]) and all(b - a in (0, 1) for a, b in zip(logs[0], logs[2])), logs
    for other in tips[1:]:
        assert np.allclose(other, tips[0], rtol=1e-9, atol=1e-9 * np.abs(tips[0]).max())


# ------------------------------------------------------------------ the round-off test itself
def test_round_off_test_ends_a_stall_at_the_floor_and_only_there():
    """r(x) = K x - f plus noise of eps |K| m (an element kernel's round-off) on a stiff system with
    a small load: the residual cannot fall below 1e-3 of the force scale. Newton stops at that
    floor (its corrections stall above the unknowns' round-off: K's condition 1e3 amplifies the
    noise), at the solution to the noise; with the floor tests off it fails. A Jacobian ten times too
    soft makes corrections that do not stall: it fails, with no false end at the floor."""
    n = 50
    K = (sp.diags([-np.ones(n - 1), 2.0 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1]) * 1e12).tocsc()
    f = np.full(n, 1e-2)
    m = np.full(n, 1e-2)                                        # the elements' length, m
    noise_level = EPS * 4e12 * m[0]                             # eps |K| m per row, N

    def residual(x):
        # a function of x's bits: erratic under any change of x, the same for the same x
        noise = noise_level * np.random.default_rng(list(x.view(np.uint32))).uniform(-1.0, 1.0, n)
        return K @ x - f + noise, K, float(np.linalg.norm(f))

    x, log = newton_solve(residual, np.zeros(n), 1.0, magnitudes=m)
    assert log.converged and log.criterion == "stagnation" and log.iterations <= 6
    assert log.relative_residuals()[-1] > 1e-6                  # the floor stays far above residual_tol
    exact = sp.linalg.spsolve(K, f)
    assert np.linalg.norm(x - exact) <= 1e-3 * np.linalg.norm(exact)
    with pytest.raises(NewtonFailure, match="no convergence"):
        newton_solve(residual, np.zeros(n), 1.0, NewtonSettings(round_off_factor=0.0, stagnation_tol=0.0),
                     magnitudes=m)

    def soft(x):
        r, J, scale = residual(x)
        return r, 0.1 * J, scale
    with pytest.raises(NewtonFailure):                          # its corrections overshoot, then diverge
        newton_solve(soft, np.zeros(n), 1.0, magnitudes=m)


def test_at_round_off_compares_with_the_spacing_of_the_unknowns():
    x, m = np.array([3.0, -4.0]), np.array([0.0, 0.0])
    assert at_round_off(8.0 * EPS * 5.0, x, m, 8.0) and not at_round_off(9.0 * EPS * 5.0, x, m, 8.0)
    assert at_round_off(0.0, np.zeros(2), None, 8.0)                     # nothing left to correct
    assert not at_round_off(1e-30, np.zeros(2), None, 8.0)


def test_round_off_lengths_are_the_element_extents_and_one_radian():
    model = fm.Model(dim=2)
    nodes = model.add_nodes([[0.0, 0.0], [1.0, 0.0], [4.0, 0.0], [4.0, 4.0]])
    model.add_beam2d([[0, 1], [1, 2]], EA=1.0, EI=1.0, name="beam")
    model.add_truss([[2, 3]], EA=1.0, name="bar")
    asm = fm.Assembly(model)
    lengths = asm.round_off_lengths
    tr = asm.dofs.translations()
    assert np.array_equal(lengths[tr[:, 0]], [1.0, 3.0, 4.0, 4.0]) and np.array_equal(lengths[tr[:, 1]],
                                                                                        [1.0, 3.0, 4.0, 4.0])
    rotations = np.setdiff1d(np.arange(asm.n_dof), tr.ravel())
    assert rotations.size == 3 and np.all(lengths[rotations] == 1.0)
    moved = fm.Model(dim=2)
    moved.add_nodes(model.coordinates + 1e4)
    moved.add_beam2d([[0, 1], [1, 2]], EA=1.0, EI=1.0, name="beam")
    moved.add_truss([[2, 3]], EA=1.0, name="bar")
    assert np.allclose(fm.Assembly(moved).round_off_lengths, lengths, rtol=1e-12)


# ------------------------------------------------------------------ fine meshes are not mechanisms
@pytest.mark.parametrize("solver", ["superlu", "banded"])
def test_a_fine_clamped_beam_is_regular_and_a_fine_mechanism_singular(solver):
    """The tangent of a clamped Beam2D cantilever of 4096 elements has equilibrated pivots below
    the pivot tolerance, like a mechanism's; its smallest singular value tells them apart, with
    SuperLU and with the band LU ("auto" takes for this chain)."""
    for support, singular in (("clamped", False), ("slider", True), ("pin", True)):
        model, _ = cantilever(4096)
        if support != "clamped":                               # free to slide along y or to turn
            model.clamped.clear()
            model.fix(0, ["ux", "rz"] if support == "slider" else ["ux", "uy"])
        asm = fm.Assembly(model)
        K = asm.free_matrix(asm.force_and_tangent(np.zeros(asm.n_dof))[1])
        try:
            lu = Factorization(K, solver=solver)
        except RuntimeError:                                   # an exactly zero pivot: singular too
            assert singular, support
            continue
        assert lu.is_singular() == singular, (support, lu.smallest_pivot, lu.smallest_singular_value)


# ------------------------------------------------------------------ starts of a step
def test_a_step_that_fails_from_the_rigid_predictor_gets_a_second_start(monkeypatch):
    """Newton that fails from the rigid-motion predictor is started again from the acceleration
    predictor before any cut-back; the run log says so. (Here the rigid predictor is spoiled on
    purpose: 1 m off at every translation.)"""
    asm, _ = build(SIMO, 8)
    predict = MidPoint.predict

    def spoiled(self, s, dt, rigid=True):
        u = predict(self, s, dt, rigid)
        if rigid:
            u[self.asm.dofs.translations()] += 1.0
        return u

    monkeypatch.setattr(MidPoint, "predict", spoiled)
    h = fm.integrate(asm, 0.05, 0.5, progress=False, max_cutbacks=0, newton=NewtonSettings(max_iterations=8))
    retries = [e for e in h.events if e.kind == "retry"]
    assert h.cutbacks == 0 and len(retries) == 10 and "acceleration predictor" in retries[0].message
    reference = fm.integrate(build(SIMO, 8)[0], 0.05, 0.5, progress=False, max_cutbacks=0)
    assert np.allclose(h.u[-1], reference.u[-1], rtol=1e-8, atol=1e-12)


def test_inertia_at_every_free_dof_makes_a_step_jacobian_regular_by_structure():
    asm, _ = build(SIMO, 4)
    assert MidPoint(asm).regular_inertia                          # cubic mass and rotary inertia everywhere
    model = fm.Model(dim=2)
    nodes = model.add_nodes([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    model.add_truss([[0, 1], [1, 2]], EA=1e3, rho_A=0.0, name="bars")
    model.add_point_mass(nodes[1], 1.0)
    model.fix(0)
    assert not MidPoint(fm.Assembly(model)).regular_inertia       # node 2 has no mass
