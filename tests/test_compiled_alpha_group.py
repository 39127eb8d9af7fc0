"""The one-call generalized-alpha step of a small planar beam model
(:mod:`flexmb.compiled.alpha_group`) against the Python residual it replaces
(``GeneralizedAlpha.residual`` without its plan) and against ``newton_solve``: the same kernels in the
same order, so the comparisons are exact (bit for bit), for the residual, its Jacobian, the step
constants kept over a step's iterations, and whole runs with their Newton logs, cut-backs and
failures. Also the Newton update of the step loop without spatial rotations (the planar rotations'
cap on Newton's unknowns).
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.integrators import time_stepping
from flexmb.integrators.dissipative import GeneralizedAlpha
from flexmb.integrators.newton import MAX_ROTATION_CORRECTION, NewtonSettings
from flexmb.validation.slider_crank import build as slider_crank
from test_compiled_mid_point_group import log_record, models_outside_the_one_call_steps

SCHEME = "generalized-alpha"


def _spinning_beam(mass: str = "cubic", second_order: bool = True) -> tuple[fm.Assembly, np.ndarray]:
    """Three beam elements on a hub with a prescribed spin-up, with a tip load; start velocities."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 6.0, 4), np.zeros(4)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=2.8e7, EI=1.4e4, rho_A=1.2, rho_I=2e-3, mass=mass, name="beam",
                 second_order=second_order)
    m.fix(nodes[0], ["ux", "uy"])
    m.prescribe(nodes[0], "rz", lambda t: 0.4 * t**2)
    m.add_load(nodes[-1], "uy", 2.0)
    asm = fm.Assembly(m)
    return asm, np.zeros(asm.n_dof)


def _pendulum() -> tuple[fm.Assembly, np.ndarray]:
    """A beam pinned to the ground by a revolute joint, falling under gravity (a joint with the
    one-call residual: Newton runs on the augmented system)."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 4), np.zeros(4)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=1e2, rho_A=1.0, rho_I=1e-4, mass="consistent")
    m.add_joint("revolute", None, int(nodes[0]))
    m.set_gravity([0.0, -9.81])
    asm = fm.Assembly(m)
    return asm, np.zeros(asm.n_dof)


def _models() -> list[tuple[str, fm.Assembly, np.ndarray, float]]:
    crank, v0, _ = slider_crank(2, 124.8, 0.5 * 0.0331)          # a slider mass: point mass in M
    spin, w0 = _spinning_beam()
    lumped, z0 = _spinning_beam("lumped", second_order=False)
    return [("slider-crank", crank, v0, 8.0 / 124.8 / 40), ("spin-up", spin, w0, 0.1), ("lumped", lumped, z0, 0.1)]


def _state_and_iterate(asm: fm.Assembly, v0: np.ndarray, dt: float, rng: np.random.Generator):
    """A state after a few steps (with its acceleration) and an iterate near the next step's solution."""
    h = fm.integrate(asm, dt, 6 * dt, v0=v0, scheme=SCHEME, progress=False)
    scheme = GeneralizedAlpha(asm)
    s = scheme.initial_state(h.t[-1], h.u[-1], h.v[-1])
    s.a = np.array(h.a[-1])
    s.reaction = np.array(h.reactions[-1])
    u1 = scheme.predict(s, dt)
    u1[asm.dofs.free] += 1e-4 * rng.standard_normal(asm.n_free)
    return scheme, s, u1


def _separate(asm: fm.Assembly) -> GeneralizedAlpha:
    """A fresh scheme whose residual takes the separate calls (the one-call forms' specification)."""
    scheme = GeneralizedAlpha(asm)
    scheme._plan = None
    return scheme


def _same(a, b) -> bool:
    return (a is None and b is None) or np.array_equal(np.asarray(a), np.asarray(b))


FIELDS = ("g", "jacobian_data", "force_scale", "f_ext", "velocity", "acceleration", "damping")


@pytest.mark.parametrize("index", range(3))
def test_one_call_residual_equals_the_python_residual(index, rng):
    name, asm, v0, dt = _models()[index]
    scheme, s, u1 = _state_and_iterate(asm, v0, dt, rng)
    assert scheme._compiled_plan() is not None
    assert np.abs(s.a[asm.dofs.free]).max() > 0.0                 # the start acceleration enters
    for tangent in (True, False):
        fast = scheme.residual(s, dt, u1, tangent)
        slow = _separate(asm).residual(s, dt, u1, tangent)
        for field in FIELDS:
            assert _same(getattr(fast, field), getattr(slow, field)), (name, tangent, field)


@pytest.mark.parametrize("index", range(3))
def test_step_constants_kept_for_a_step_equal_fresh_ones(index, rng):
    """The kinematics' step constants are computed at a step's first call and kept for its later
    ones: over iterations, a cut-back (the same start, a smaller dt), another state and back, and a
    State given a new array, every call equals a fresh scheme's reference residual."""
    name, asm, v0, dt = _models()[index]
    scheme, s, u1 = _state_and_iterate(asm, v0, dt, rng)
    other = scheme.initial_state(s.t, s.u + 1e-4 * rng.standard_normal(asm.n_dof), 1.1 * s.v)
    other.a = 0.9 * s.a
    calls = [(s, dt), (s, dt), (s, 0.5 * dt), (other, dt), (s, dt)]
    for k, (state, step) in enumerate(calls):
        iterate = u1.copy()
        iterate[asm.dofs.free] += 1e-5 * k * rng.standard_normal(asm.n_free)
        kept = scheme.residual(state, step, iterate, k % 2 == 0)
        slow = _separate(asm).residual(state, step, iterate, k % 2 == 0)
        for field in FIELDS:
            assert _same(getattr(kept, field), getattr(slow, field)), (name, k, field)
    s.a = 2.0 * s.a                                     # the same State given a new array: new constants
    fresh = _separate(asm).residual(s, dt, u1)
    assert _same(scheme.residual(s, dt, u1).acceleration, fresh.acceleration), name
    assert not _same(scheme.residual(s, dt, u1).g, scheme.residual(other, dt, u1).g)


def test_one_call_jacobian_matches_finite_differences(rng):
    """The compiled residual's Jacobian (slider-crank, cubic mass) against central differences of
    its residual."""
    _, asm, v0, dt = _models()[0]
    scheme, s, u1 = _state_and_iterate(asm, v0, dt, rng)
    free = asm.dofs.free
    J = asm.free_matrix(scheme.residual(s, dt, u1).jacobian_data).toarray()
    numeric = np.zeros_like(J)
    for j, dof in enumerate(free):
        h = 1e-7 * max(1.0, abs(u1[dof]))
        plus, minus = u1.copy(), u1.copy()
        plus[dof] += h
        minus[dof] -= h
        numeric[:, j] = (scheme.residual(s, dt, plus, False).g[free] - scheme.residual(s, dt, minus, False).g[free]) \
            / (2.0 * h)
    error = np.abs(J - numeric).max() / np.abs(J).max()
    assert error < 1e-7, f"Jacobian off finite differences by {error:.2e} of its largest entry"


def _run(asm, v0, dt, steps, path: str, monkeypatch, **kw):
    """integrate with the compiled Newton solve ("compiled"), with newton_solve around the one-call
    residual ("newton") or around the Python residual ("python"); the history or the raised error."""
    with monkeypatch.context() as patch:
        if path != "compiled":
            patch.setattr(GeneralizedAlpha, "solve_step", lambda self, *args: None)
        if path == "python":
            patch.setattr(GeneralizedAlpha, "_compiled_plan", lambda self: None)
        try:
            return fm.integrate(asm, dt, steps * dt, v0=v0, scheme=SCHEME, progress=False, keep_newton_logs=True,
                                **kw)
        except time_stepping.TimeIntegrationError as exc:
            return exc


@pytest.mark.filterwarnings("ignore::flexmb.FlexmbWarning")        # the cut-backs' branch-change warnings
@pytest.mark.parametrize("case", ["plain", "cut-backs", "failure", "force-tol", "slider-crank", "joint"])
def test_compiled_newton_solve_equals_newton_solve_and_the_python_residual(case, monkeypatch):
    if case == "slider-crank":
        _, asm, v0, dt = _models()[0]
    elif case == "joint":
        asm, v0 = _pendulum()
        dt = 0.01
        assert GeneralizedAlpha(asm)._compiled_plan() is not None and asm.constraints is not None
    else:
        asm, v0 = _spinning_beam()
        dt = 0.4 if case == "cut-backs" else 0.1
    kw = {"plain": dict(), "slider-crank": dict(), "joint": dict(),
          "cut-backs": dict(newton=NewtonSettings(max_iterations=3), cutback_check="warn"),
          "failure": dict(newton=NewtonSettings(max_iterations=1), max_cutbacks=1),
          "force-tol": dict(newton=NewtonSettings(force_tol=1e-4))}[case]
    runs = [_run(asm, v0, dt, 12, path, monkeypatch, **kw) for path in ("compiled", "newton", "python")]
    if case == "failure":
        assert all(isinstance(r, time_stepping.TimeIntegrationError) for r in runs)
        assert len({str(r) for r in runs}) == 1
        runs = [r.history for r in runs]
    fast = runs[0]
    if case == "cut-backs":
        assert fast.cutbacks > 0
    for slow in runs[1:]:
        for series in ("t", "u", "v", "a", "reactions", "work", "kinetic", "newton_iterations"):
            assert np.array_equal(np.array(getattr(fast, series)), np.array(getattr(slow, series))), series
        assert [log_record(x) for x in fast.newton_logs] == [log_record(x) for x in slow.newton_logs]
        assert [(e.at, e.kind, e.message) for e in fast.events] == [(e.at, e.kind, e.message) for e in slow.events]


def test_no_compiled_step_outside_its_models():
    """Two element groups, spatial rotations or damping take the Python residual and newton_solve."""
    md = fm.Model(dim=2)
    md.add_nodes([[0.0, 0.0], [1.0, 0.0]])
    md.add_beam2d([[0, 1]], EA=1e6, EI=1e3, rho_A=1.0, name="damped")
    md.fix(0)
    md.set_rayleigh_damping("damped", alpha=0.1)
    for asm in (*models_outside_the_one_call_steps(), fm.Assembly(md)):
        scheme = GeneralizedAlpha(asm)
        s = scheme.initial_state(0.0, np.zeros(asm.n_dof), np.zeros(asm.n_dof))
        assert scheme._compiled_plan() is None
        assert scheme.solve_step(s, 0.01, scheme.predict(s, 0.01), NewtonSettings(), 1.0) is None


def test_planar_rotation_corrections_are_capped_on_newtons_unknowns(monkeypatch):
    """The step loop's update without spatial rotations adds Newton's correction to its unknowns
    and scales a correction whose largest free planar rotation exceeds the cap down to it (the
    translations with it), as the general update through the scheme does."""
    asm, v0 = _spinning_beam("lumped", second_order=False)
    seen = []

    def newton_solve(residual, x0, length, settings, update, **kw):
        seen.append(update)
        raise time_stepping.NewtonFailure("stop", time_stepping.NewtonLog([], []))

    monkeypatch.setattr(time_stepping, "newton_solve", newton_solve)
    monkeypatch.setattr(GeneralizedAlpha, "solve_step", lambda self, *args: None)
    scheme = GeneralizedAlpha(asm)
    s = scheme.initial_state(0.0, np.zeros(asm.n_dof), v0)
    with pytest.raises(time_stepping.NewtonFailure):
        time_stepping._sub_step(scheme, s, 0.1, NewtonSettings(), fm.TimeHistory(SCHEME, 0.1), False)
    update = seen[0]
    free_rotations = asm.dofs.free_position[asm.planar_rotations]
    free_rotations = free_rotations[free_rotations >= 0]
    x = np.arange(asm.n_free, dtype=float)
    small = np.full(asm.n_free, 0.1)
    assert np.array_equal(update(x, small), x + small)
    large = small.copy()
    large[free_rotations[-1]] = -4.0 * MAX_ROTATION_CORRECTION
    capped = update(x, large)
    assert np.allclose(capped, x + large / 4.0, rtol=1e-15, atol=0.0)
    assert abs(capped[free_rotations[-1]] - x[free_rotations[-1]]) == pytest.approx(MAX_ROTATION_CORRECTION)
