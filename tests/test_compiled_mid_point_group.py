"""The one-call paths of a small planar model's mid-point step against the separate calls they
replace (:mod:`flexmb.compiled.mid_point_group`): they compose the same kernels in the same order,
so the comparisons are exact (bit for bit), also when a step's later calls reuse the quantities of
its start, and the whole compiled Newton solve gives the iterates, logs, cut-backs and errors of
``newton_solve``. Also the smaller fused helpers of the step loop
(the residual's force scale, the dense LU in one call with its scaled solve, the recorded energy
and momentum, the cached reference mass).
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.compiled import dense_lu, sparse_ops
from flexmb.compiled.scatter import equilibrated_dense
from flexmb.integrators import time_stepping
from flexmb.integrators.newton import Factorization, NewtonSettings, SingularJacobian
from flexmb.integrators.schemes import MidPoint
from flexmb.validation.slider_crank import build as slider_crank


def _spinning_beam(mass: str = "cubic", second_order: bool = True) -> tuple[fm.Assembly, np.ndarray]:
    """Three cubic-mass beam elements on a hub with a prescribed spin-up (the hub's rotation is
    prescribed, so one director DOF is not free), and start velocities (n_dof,)."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 6.0, 4), np.zeros(4)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=2.8e7, EI=1.4e4, rho_A=1.2, rho_I=2e-3, mass=mass, name="beam",
                 second_order=second_order)
    m.fix(nodes[0], ["ux", "uy"])
    m.prescribe(nodes[0], "rz", lambda t: 0.4 * t**2)
    asm = fm.Assembly(m)
    return asm, np.zeros(asm.n_dof)


def _models() -> list[tuple[str, fm.Assembly, np.ndarray, float]]:
    crank, v0, _ = slider_crank(2, 124.8)
    spin, w0 = _spinning_beam()
    lumped, z0 = _spinning_beam("lumped", second_order=False)
    return [("slider-crank", crank, v0, 8.0 / 124.8 / 640), ("spin-up", spin, w0, 0.05),
            ("lumped", lumped, z0, 0.05)]


def _state_and_iterate(asm: fm.Assembly, v0: np.ndarray, dt: float, rng: np.random.Generator):
    """A state after a few steps and an iterate near the next step's solution."""
    h = fm.integrate(asm, dt, 12 * dt, v0=v0, progress=False)
    scheme = MidPoint(asm)
    s = scheme.initial_state(h.t[-1], h.u[-1], h.v[-1])
    s.stretch = h.stretch[-1].copy() if np.size(h.stretch[-1]) else None
    u1 = scheme.predict(s, dt)
    u1[asm.dofs.free] += 1e-4 * rng.standard_normal(asm.n_free)
    return scheme, s, u1


def _same(a, b) -> bool:
    return (a is None and b is None) or np.array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("index", range(3))
def test_fused_group_call_equals_the_separate_kernels(index, rng):
    name, asm, v0, dt = _models()[index]
    scheme, s, u1 = _state_and_iterate(asm, v0, dt, rng)
    stretch = s.stretch if s.stretch is not None else np.zeros(asm.n_dof)
    assert asm.fused_groups[0] is not None
    for tangent in (True, False):
        data = asm.scaled_mass_data(3.0) if tangent else None
        q_m, f_c, d_c = asm.mid_point_forces_and_inertia(s.u, u1, s.v, stretch, dt, data)
        if tangent:
            q_ref, k_ref = asm.mid_point_force_and_tangent(s.u, u1, out=asm.scaled_mass_data(3.0))
            assert np.array_equal(data, k_ref), name
        else:
            q_ref = asm.mid_point_force(s.u, u1)
        assert np.array_equal(q_m, q_ref), name
        if asm.configuration_masses:
            f_ref, d_ref = asm.mid_point_inertia(s.u, u1, s.v, stretch, dt, tangent)
            assert np.array_equal(f_c, f_ref) and _same(d_c, d_ref), name
        else:
            assert not f_c.any()


@pytest.mark.parametrize("index", range(3))
def test_one_call_residual_equals_the_python_residual(index, rng):
    name, asm, v0, dt = _models()[index]
    scheme, s, u1 = _state_and_iterate(asm, v0, dt, rng)
    assert scheme._compiled_plan() is not None
    separate = MidPoint(asm)
    separate._plan = None                                   # the residual from the separate calls
    for tangent in (True, False):
        fast = scheme.residual(s, dt, u1, tangent)
        slow = separate.residual(s, dt, u1, tangent)
        for field in ("g", "jacobian_data", "force_scale", "f_ext", "increment", "velocity", "acceleration",
                      "director"):
            assert _same(getattr(fast, field), getattr(slow, field)), (name, tangent, field)


@pytest.mark.parametrize("index", range(3))
def test_start_of_step_quantities_kept_for_a_step_equal_fresh_ones(index, rng):
    """The one-call residual computes what it takes from the step's start once and keeps it for the
    step's later calls: over iterations, a cut-back (the same start, a smaller dt), a restart from
    another state and back, a State given new arrays, with and without tangent, every call equals
    bit for bit a fresh scheme's first call (which computes them) and the separate kernels; so does
    a call after the State was given a new velocity array."""
    name, asm, v0, dt = _models()[index]
    scheme, s, u1 = _state_and_iterate(asm, v0, dt, rng)
    other = scheme.initial_state(s.t, s.u + 1e-3 * rng.standard_normal(asm.n_dof), 1.1 * s.v)
    other.stretch = None if s.stretch is None else 0.9 * s.stretch
    renewed = scheme.initial_state(s.t, s.u.copy(), s.v.copy())      # s's values in a new State
    renewed.stretch = None if s.stretch is None else s.stretch.copy()
    calls = [(s, dt), (s, dt), (s, dt), (s, 0.5 * dt), (s, 0.25 * dt), (other, dt), (other, 0.5 * dt), (s, dt),
             (renewed, dt), (s, dt)]
    for k, (state, step) in enumerate(calls):
        iterate = u1.copy()
        iterate[asm.dofs.free] += 1e-5 * k * rng.standard_normal(asm.n_free)
        tangent = k % 3 != 1
        kept = scheme.residual(state, step, iterate, tangent)
        fresh = MidPoint(asm).residual(state, step, iterate, tangent)
        separate = MidPoint(asm)
        separate._plan = None
        slow = separate.residual(state, step, iterate, tangent)
        for field in ("g", "jacobian_data", "force_scale", "increment", "velocity", "acceleration", "director"):
            assert _same(getattr(kept, field), getattr(fresh, field)), (name, k, field)
            assert _same(getattr(kept, field), getattr(slow, field)), (name, k, field)
    s.v = 1.1 * s.v                                  # the same State given a new array: another start
    assert _same(scheme.residual(s, dt, u1).g, MidPoint(asm).residual(s, dt, u1).g), name
    # a step's later calls read the kept quantities: spoiled, they spoil its residual (not another step's)
    start = scheme._compiled_plan()[2]
    for array in start:
        array[:] = np.nan
    assert np.isnan(scheme.residual(s, dt, u1).g).any()
    assert np.isfinite(scheme.residual(other, dt, u1).g).all()


def _run(asm, v0, dt, steps, python_newton: bool, monkeypatch, **kw):
    """integrate with the compiled Newton solve or (python_newton) with newton_solve; returns the
    history or the raised exception."""
    with monkeypatch.context() as patch:
        if python_newton:
            patch.setattr(MidPoint, "solve_step", lambda self, *args: None)
        try:
            return fm.integrate(asm, dt, steps * dt, v0=v0, progress=False, keep_newton_logs=True, **kw)
        except time_stepping.TimeIntegrationError as exc:
            return exc


def log_record(log) -> tuple:
    """What a Newton log holds, comparable with ``==`` (the pivots not tested, nan, as None); the
    generalized-alpha tests take it too."""
    return (log.residual_norms, log.increment_norms, log.force_scales, log.force_scale, log.converged, log.criterion,
            log.factorizations, [None if np.isnan(p) else p for p in log.smallest_pivots])


@pytest.mark.filterwarnings("ignore::flexmb.FlexmbWarning")        # the cut-backs' branch-change warnings
@pytest.mark.parametrize("case", ["plain", "cut-backs", "failure", "round-off", "force-tol"])
def test_compiled_newton_solve_equals_newton_solve(case, monkeypatch):
    asm, v0 = _spinning_beam()
    # "round-off": no residual or increment test can pass, so every step ends by the round-off test
    kw = {"plain": dict(), "cut-backs": dict(newton=NewtonSettings(max_iterations=3), cutback_check="warn"),
          "failure": dict(newton=NewtonSettings(max_iterations=1), max_cutbacks=1),
          "round-off": dict(newton=NewtonSettings(residual_tol=0.0, increment_tol=0.0, stagnation_tol=0.0)),
          "force-tol": dict(newton=NewtonSettings(force_tol=1e-4))}[case]
    dt = {"plain": 0.05, "cut-backs": 0.4, "failure": 0.05, "round-off": 0.05, "force-tol": 0.05}[case]
    fast = _run(asm, v0, dt, 20, False, monkeypatch, **kw)
    slow = _run(asm, v0, dt, 20, True, monkeypatch, **kw)
    if case == "failure":
        assert isinstance(fast, time_stepping.TimeIntegrationError) and type(fast) is type(slow)
        assert str(fast) == str(slow)
        fast, slow = fast.history, slow.history
    for series in ("t", "u", "v", "a", "reactions", "work", "kinetic", "stretch", "newton_iterations"):
        assert np.array_equal(np.array(getattr(fast, series)), np.array(getattr(slow, series))), series
    assert [log_record(x) for x in fast.newton_logs] == [log_record(x) for x in slow.newton_logs]
    assert [(e.at, e.kind, e.message) for e in fast.events] == [(e.at, e.kind, e.message) for e in slow.events]
    if case == "cut-backs":
        assert fast.cutbacks > 0
    if case == "round-off":
        assert {log.criterion for log in fast.newton_logs} == {"round-off"}
    if case == "force-tol":          # the absolute test ends steps the relative one would not end
        ended = [log for log in fast.newton_logs if log.criterion == "residual"]
        assert any(1e-10 * log.force_scale < log.residual_norms[-1] <= 1e-4 for log in ended)


@pytest.mark.filterwarnings("ignore::flexmb.FlexmbWarning")        # the cut-backs' branch-change warnings
def test_runs_with_kept_start_quantities_equal_runs_with_the_separate_kernels(monkeypatch):
    """newton_solve over steps with cut-backs (dt halved within a step) and modified Newton: the
    one-call residual, which keeps a step's start quantities for its later calls, gives the run
    of the separate kernels bit for bit."""
    asm, v0 = _spinning_beam()
    kw = dict(newton=NewtonSettings(max_iterations=6), cutback_check="warn")
    runs = []
    for separate in (False, True):
        with monkeypatch.context() as patch:
            patch.setattr(MidPoint, "solve_step", lambda self, *args: None)
            patch.setattr(time_stepping, "MODIFIED_NEWTON_MIN_SIZE", 1)        # tangent-free calls too
            if separate:
                patch.setattr(MidPoint, "_compiled_plan", lambda self: None)
            runs.append(fm.integrate(asm, 0.4, 20 * 0.4, v0=v0, progress=False, keep_newton_logs=True, **kw))
    fast, slow = runs
    assert fast.cutbacks > 0
    for series in ("t", "u", "v", "a", "work", "kinetic", "stretch", "newton_iterations"):
        assert np.array_equal(np.array(getattr(fast, series)), np.array(getattr(slow, series))), series
    assert [log_record(x) for x in fast.newton_logs] == [log_record(x) for x in slow.newton_logs]


def test_compiled_newton_solve_reports_a_singular_jacobian_as_newton_solve(monkeypatch):
    """A free beam without mass: its Jacobian at the start is singular (rigid-body modes); the
    step raises the same error on both paths (the structural diagnosis of iteration 0)."""
    m = fm.Model(dim=2)
    m.add_nodes([[0.0, 0.0], [1.0, 0.0]])
    m.add_beam2d([[0, 1]], EA=1e6, EI=1e3)
    m.add_load(1, "uy", 10.0)
    asm = fm.Assembly(m)
    scheme = MidPoint(asm)
    s = scheme.initial_state(0.0, np.zeros(asm.n_dof), np.zeros(asm.n_dof))
    with pytest.raises(SingularJacobian) as fast:
        scheme.solve_step(s, 0.1, scheme.predict(s, 0.1), NewtonSettings(), 1.0)
    assert fast.value.iteration == 0 and fast.value.matrix.shape == (asm.n_free, asm.n_free)
    raised = []
    for python_newton in (True, False):
        with monkeypatch.context() as patch:
            if python_newton:
                patch.setattr(MidPoint, "solve_step", lambda self, *args: None)
            with pytest.raises(Exception) as error:
                time_stepping._step(MidPoint(asm), s, 0.1, NewtonSettings(), fm.TimeHistory("mid-point", 0.1), False)
        raised.append(error.value)
    assert type(raised[0]) is type(raised[1]) and str(raised[0]) == str(raised[1])


def models_outside_the_one_call_steps() -> list[fm.Assembly]:
    """Two element groups (a beam and a bar) and a spatial beam: no one-call compiled step (the
    generalized-alpha tests take them too)."""
    m = fm.Model(dim=2)
    m.add_nodes([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    m.add_beam2d([[0, 1]], EA=1e6, EI=1e3, rho_A=1.0)
    m.add_truss([[1, 2]], EA=1e6, rho_A=1.0)
    m.fix(0)
    m3 = fm.Model(dim=3)
    m3.add_nodes([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    m3.add_beam3d([[0, 1]], EA=1e6, GJ=1e3, EI_y=1e3, EI_z=1e3, rho_A=1.0)
    m3.fix(0)
    return [fm.Assembly(m), fm.Assembly(m3)]


def test_no_compiled_step_outside_its_models():
    """Two element groups, joints or spatial rotations take newton_solve."""
    for asm in models_outside_the_one_call_steps():
        scheme = MidPoint(asm)
        s = scheme.initial_state(0.0, np.zeros(asm.n_dof), np.zeros(asm.n_dof))
        assert scheme._compiled_plan() is None
        assert scheme.solve_step(s, 0.01, scheme.predict(s, 0.01), NewtonSettings(), 1.0) is None


def test_residual_scale_equals_the_python_maximum(rng):
    asm, _ = _spinning_beam()
    free, M = asm.dofs.free, asm.mass
    for _ in range(5):
        v1, a, b, c = (rng.standard_normal(asm.n_dof) * 10.0 ** rng.uniform(-3, 3) for _ in range(4))
        p0_norm = float(rng.uniform(0.0, 5.0))
        expected = max(max(p0_norm, asm.free_norm(asm.mass_times(v1))) / 0.01, *(asm.free_norm(x) for x in (a, b, c)))
        assert sparse_ops.residual_scale(M.indptr, M.indices, M.data, v1, free, p0_norm, 0.01, a, b, c) == expected


def test_dense_lu_in_one_call_and_its_scaled_solve(rng):
    import scipy.sparse as sp

    A = sp.random(30, 30, density=0.2, random_state=np.random.RandomState(3), format="csc") + 10.0 * sp.eye(30)
    A = A.tocsc()
    n = A.shape[0]
    lu, pivots, rs, cs = np.empty((n, n)), np.empty(n, dtype=np.int64), np.empty(n), np.empty(n)
    smallest = dense_lu.equilibrated_lu(A.indptr, A.indices, A.data, lu, pivots, rs, cs)
    lu2, pivots2, rs2, cs2 = np.empty((n, n)), np.empty(n, dtype=np.int64), np.empty(n), np.empty(n)
    equilibrated_dense(A.indptr, A.indices, A.data, lu2, rs2, cs2)
    assert smallest == dense_lu.lu_factor(lu2, pivots2)
    assert np.array_equal(lu, lu2) and np.array_equal(pivots, pivots2)
    b = rng.standard_normal(n)
    x = dense_lu.scaled_solve(lu, pivots, rs, cs, b)
    y = rs * b
    dense_lu.lu_solve(lu2, pivots2, y)
    assert np.array_equal(x, cs * y)
    assert np.allclose(A @ x, b, rtol=1e-12, atol=1e-12 * np.abs(b).max())
    assert np.array_equal(Factorization(A).solve(b), x)


def test_recorded_energy_and_momentum_equal_the_separate_methods(rng):
    asm, v0 = _spinning_beam()
    h = fm.integrate(asm, 0.05, 0.5, v0=v0, progress=False)
    for k in (0, 5, 10):
        u, v, stretch = h.u[k], h.v[k], h.stretch[k]
        T, L = asm.energy_and_momentum(u, v, stretch)
        assert T == asm.kinetic_energy(v, u, stretch)
        assert np.array_equal(L, asm.angular_momentum(u, v, stretch))
        assert h.kinetic[k] == T and np.array_equal(h.angular_momentum[k], L)


def test_reference_configuration_mass_is_computed_once_and_copied(rng):
    asm, _ = _spinning_beam()
    zero = np.zeros(asm.n_dof)
    first = asm.configuration_mass_data(zero)
    first[:] = -1.0                                          # the caller's copy: the cache stays intact
    again = asm.configuration_mass_data(zero)
    fresh = fm.Assembly(asm.model).configuration_mass_data(zero)
    assert np.array_equal(again, fresh) and again.any()
    u = 0.1 * rng.standard_normal(asm.n_dof)
    assert not np.array_equal(asm.configuration_mass_data(u), fresh)
