"""Runs of fixed steps in one compiled call (:mod:`flexmb.integrators.step_loop`,
:mod:`flexmb.compiled.step_loop`) against the Python step loop they replace: the same states bit for
bit (displacements, velocities, accelerations, reactions, work, director stretch rates, iterations),
the same run log, also where the compiled loop hands steps back (cut-backs, the first convergence
at the round-off floor, failures, a load function that raises) and with several chunks.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.checks import UserFunctionError
from flexmb.integrators import step_loop, time_stepping
from flexmb.integrators.newton import NewtonSettings
from flexmb.validation.slider_crank import build as slider_crank

SERIES = ("t", "u", "v", "a", "reactions", "work", "kinetic", "strain", "stretch", "newton_iterations", "dissipated")


def _spinning_beam(mass: str = "cubic", raise_after: float | None = None, load: float = 2.0,
                   placed: bool = False) -> tuple[fm.Assembly, np.ndarray]:
    """Three beam elements on a hub with a prescribed spin-up, a tip load ``load`` sin(3 t) N (raising a
    ValueError after ``raise_after`` s) and start velocities; ``placed``: the beam turned by 0.7 rad
    and moved by (30, -20) m."""
    def tip_load(t: float) -> float:
        if raise_after is not None and t > raise_after:
            raise ValueError("beyond the table")
        return load * np.sin(3.0 * t)

    m = fm.Model(dim=2)
    x = np.c_[np.linspace(0.0, 6.0, 4), np.zeros(4)]
    if placed:
        c, s = np.cos(0.7), np.sin(0.7)
        x = x @ np.array([[c, s], [-s, c]]) + [30.0, -20.0]
    nodes = m.add_nodes(x)
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=2.8e7, EI=1.4e4, rho_A=1.2, rho_I=2e-3, mass=mass, name="beam",
                 second_order=True)
    m.fix(nodes[0], ["ux", "uy"])
    m.prescribe(nodes[0], "rz", lambda t: 0.4 * t**2)
    m.add_load(nodes[-1], "uy", tip_load)
    asm = fm.Assembly(m)
    v0 = np.zeros(asm.n_dof)
    v0[asm.dofs.index(int(nodes[-1]), "uy")] = 0.3
    return asm, v0


def _runs(asm, v0, dt, steps, monkeypatch, **kw):
    """(compiled loop, Python steps): the histories or the raised errors of the same run."""
    out = []
    for compiled in (True, False):
        with monkeypatch.context() as patch:
            if not compiled:
                patch.setattr(step_loop.CompiledSteps, "for_run", classmethod(lambda cls, *args: None))
            try:
                out.append(fm.integrate(asm, dt, steps * dt, v0=v0, progress=False, **kw))
            except (time_stepping.TimeIntegrationError, UserFunctionError) as exc:
                out.append(exc)
    return out


def _assert_same(fast, slow) -> None:
    for series in SERIES:
        assert np.array_equal(np.array(getattr(fast, series)), np.array(getattr(slow, series))), series
    assert [(e.at, e.kind, e.message) for e in fast.events] == [(e.at, e.kind, e.message) for e in slow.events]
    assert fast.cutbacks == slow.cutbacks
    assert np.array_equal(fast.step_sizes, slow.step_sizes)


@pytest.mark.filterwarnings("ignore::flexmb.FlexmbWarning")        # the cut-backs' branch-change warnings
@pytest.mark.parametrize("scheme", ["mid-point", "generalized-alpha"])
@pytest.mark.parametrize("case", ["plain", "lumped", "slider-crank", "chunks", "cut-backs", "round-off", "failure",
                                  "output-every", "placed", "tiny-load", "large-load"])
def test_compiled_steps_equal_the_python_steps(scheme, case, monkeypatch):
    asm, v0 = _spinning_beam("lumped" if case == "lumped" else "cubic", placed=case == "placed",
                             load={"tiny-load": 1e-9, "large-load": 2e4}.get(case, 2.0))
    dt, steps = 0.05, 20
    kw = {"cut-backs": dict(newton=NewtonSettings(max_iterations=3), cutback_check="warn"),
          "round-off": dict(newton=NewtonSettings(residual_tol=0.0, increment_tol=0.0, stagnation_tol=0.0)),
          "failure": dict(newton=NewtonSettings(max_iterations=6), max_cutbacks=0),
          "output-every": dict(output_every=3)}.get(case, {})
    if case == "slider-crank":
        asm, v0, _ = slider_crank(2, 124.8, 0.5 * 0.0331, "cubic")
        dt, steps = 8.0 / 124.8 / 40, 40
    if case == "cut-backs":
        dt, steps = 0.4, 4                           # (the fifth step fails after six cut-backs)
    if case == "failure":
        dt = 0.1                                     # (fails at the 5th or 15th step)
    if case == "chunks":
        steps = 2 * step_loop.CHUNK + 5
        dt = 0.01
    assert step_loop.CompiledSteps.for_run(time_stepping.ALL_SCHEMES[scheme](asm), NewtonSettings(), False,
                                           time_stepping.MODIFIED_NEWTON_MIN_SIZE) is not None
    fast, slow = _runs(asm, v0, dt, steps, monkeypatch, scheme=scheme, **kw)
    # "failure" fails after 4 or 14 steps; "large-load" mid-point sees a branch change at t = 0.75 s
    assert isinstance(fast, time_stepping.TimeIntegrationError) == (case == "failure" or
                                                                    (case, scheme) == ("large-load", "mid-point"))
    if isinstance(fast, time_stepping.TimeIntegrationError):
        assert type(fast) is type(slow) and str(fast) == str(slow)
        fast, slow = fast.history, slow.history
        assert fast.n_steps > 1                      # the compiled loop took steps before the failure
    _assert_same(fast, slow)
    if case == "cut-backs":
        assert fast.cutbacks > 0
    if case == "round-off":
        assert [e.kind for e in fast.events] == ["round-off"]
    if case == "output-every":
        assert fast.n_steps == steps // 3 + 2        # the start, every third step and the last


@pytest.mark.filterwarnings("ignore::flexmb.FlexmbWarning")        # the model's lambdas are not stored
@pytest.mark.parametrize("scheme", ["mid-point", "generalized-alpha"])
def test_a_load_function_that_raises_ends_the_run_after_the_same_steps(scheme, monkeypatch, tmp_path):
    """The steps before the load function raised are computed and written; the error is the
    Python step's."""
    asm, v0 = _spinning_beam(raise_after=0.32)
    errors = []
    for compiled, name in ((True, "fast.h5"), (False, "slow.h5")):
        with monkeypatch.context() as patch:
            if not compiled:
                patch.setattr(step_loop.CompiledSteps, "for_run", classmethod(lambda cls, *args: None))
            with pytest.raises(UserFunctionError) as error:
                fm.integrate(asm, 0.05, 1.0, v0=v0, scheme=scheme, progress=False, save_to=tmp_path / name)
            errors.append(str(error.value))
    assert errors[0] == errors[1] and "beyond the table" in errors[0]
    fast, slow = fm.load_result(tmp_path / "fast.h5"), fm.load_result(tmp_path / "slow.h5")
    assert fast.n_steps == slow.n_steps == 7                 # t = 0 .. 0.30 s
    assert np.array_equal(fast.u, slow.u) and np.array_equal(fast.v, slow.v)


def test_no_compiled_loop_where_steps_take_another_path(monkeypatch):
    """Joints, Newton logs kept, a patched solve or predictor, modified Newton: the Python steps."""
    asm, _ = _spinning_beam()
    scheme = time_stepping.ALL_SCHEMES["mid-point"](asm)
    size = time_stepping.MODIFIED_NEWTON_MIN_SIZE
    assert step_loop.CompiledSteps.for_run(scheme, NewtonSettings(), True, size) is None
    assert step_loop.CompiledSteps.for_run(scheme, NewtonSettings(), False, 1) is None
    for name in ("solve_step", "predict"):
        with monkeypatch.context() as patch:
            patch.setattr(type(scheme), name, lambda self, *args: None)
            assert step_loop.CompiledSteps.for_run(scheme, NewtonSettings(), False, size) is None
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 4), np.zeros(4)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=1e2, rho_A=1.0, rho_I=1e-4, mass="consistent")
    m.add_joint("revolute", None, int(nodes[0]))
    jointed = time_stepping.ALL_SCHEMES["generalized-alpha"](fm.Assembly(m))
    assert jointed._compiled_plan() is not None
    assert step_loop.CompiledSteps.for_run(jointed, NewtonSettings(), False, size) is None
    composed = time_stepping.ALL_SCHEMES["composed-mid-point"](asm)
    assert step_loop.CompiledSteps.for_run(composed, NewtonSettings(), False, size) is None


def _fine_beam(elements: int, spin: bool, load: float, kick: float = 0.0) -> tuple[fm.Assembly, np.ndarray]:
    """A beam of ``elements`` cubic-mass elements (3 unknowns a node: beyond the dense LU from 50 on),
    6 m long: on a hub spun up as 0.4 t^2 rad (``spin``) or clamped (a cantilever), with a tip load
    ``load`` sin(3 t) N, and ``kick`` N more from t = 0.3 s on, and a tip start velocity of 0.3 m/s."""
    m = fm.Model(dim=2)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 6.0, elements + 1), np.zeros(elements + 1)])
    m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=2.8e7, EI=1.4e4, rho_A=1.2, rho_I=2e-3, mass="cubic", name="beam",
                 second_order=True)
    if spin:
        m.fix(nodes[0], ["ux", "uy"])
        m.prescribe(nodes[0], "rz", lambda t: 0.4 * t**2)
    else:
        m.fix(nodes[0])
    m.add_load(nodes[-1], "uy", lambda t: load * np.sin(3.0 * t) + (kick if t > 0.3 else 0.0))
    asm = fm.Assembly(m)
    v0 = np.zeros(asm.n_dof)
    v0[asm.dofs.index(int(nodes[-1]), "uy")] = 0.3
    return asm, v0


@pytest.mark.filterwarnings("ignore::flexmb.FlexmbWarning")        # the cut-backs' branch-change warnings
@pytest.mark.parametrize("scheme", ["mid-point", "generalized-alpha"])
@pytest.mark.parametrize("case", ["spin-up", "round-off", "tolerance", "tiny-load", "large-load", "retries",
                                  "cut-backs", "failure"])
def test_kept_band_lu_steps_equal_the_python_steps(scheme, case, monkeypatch):
    """Beyond the dense LU (modified Newton with the band LU kept from step to step): the same states,
    run log, errors and numbers of LUs as the Python steps, over several chunks, with the kept LU
    refactorised inside chunks, the first round-off convergence and failed steps handed back to
    the Python path (which then leaves its LU to the compiled loop again)."""
    from flexmb.integrators import newton

    spin = case not in ("tiny-load", "large-load")
    asm, v0 = _fine_beam(64 if spin else 60, spin, {"tiny-load": 1e-9, "large-load": 2e4}.get(case, 2.0),
                         {"cut-backs": 5e3, "failure": 2e4}.get(case, 0.0))
    assert asm.n_free > newton.DENSE_LIMIT
    dt, steps = 0.02, 20                    # 6-10 iterations a step to the round-off floor
    kw = {"round-off": dict(newton=NewtonSettings(residual_tol=0.0, increment_tol=0.0, stagnation_tol=0.0)),
          "tolerance": dict(newton=NewtonSettings(force_tol=1e-3)),
          "retries": dict(newton=NewtonSettings(max_iterations=9), cutback_check="warn"),
          "cut-backs": dict(newton=NewtonSettings(force_tol=1e-3, max_iterations=8), cutback_check="warn"),
          "failure": dict(newton=NewtonSettings(force_tol=1e-3, max_iterations=8), max_cutbacks=0)}.get(case, {})
    monkeypatch.setattr(step_loop, "CHUNK", 8)
    loops, lus = [], [0]
    for_run, factorize = step_loop.CompiledSteps.for_run.__func__, newton._factorize

    def counted(*args, **kwargs):
        lus[0] += 1
        return factorize(*args, **kwargs)

    monkeypatch.setattr(step_loop.CompiledSteps, "for_run", classmethod(lambda cls, *a: loops.append(for_run(cls, *a))
                                                                         or loops[-1]))
    monkeypatch.setattr(newton, "_factorize", counted)
    out, counts = [], []
    for compiled in (True, False):
        with monkeypatch.context() as patch:
            if not compiled:
                patch.setattr(step_loop.CompiledSteps, "for_run", classmethod(lambda cls, *args: None))
            lus[0] = 0
            try:
                out.append(fm.integrate(asm, dt, steps * dt, v0=v0, progress=False, scheme=scheme, **kw))
            except time_stepping.TimeIntegrationError as exc:
                out.append(exc)
            counts.append(lus[0] + (sum(loop.factorizations for loop in loops if loop is not None) if compiled else 0))
    fast, slow = out
    assert loops and all(loop is not None and loop.bank is not None for loop in loops)
    assert isinstance(fast, time_stepping.TimeIntegrationError) == isinstance(slow, time_stepping.TimeIntegrationError)
    if case == "failure":
        assert isinstance(fast, time_stepping.TimeIntegrationError)
    if isinstance(fast, time_stepping.TimeIntegrationError):        # "large-load" too: a branch change
        assert str(fast) == str(slow)
        fast, slow = fast.history, slow.history
        assert fast.n_steps > 10                     # the compiled loop took steps before the failure
    _assert_same(fast, slow)
    assert counts[0] == counts[1]
    # the compiled loop factorised, more often than it was called: inside its chunks too
    assert sum(loop.factorizations for loop in loops) > -(-steps // step_loop.CHUNK)
    if case == "round-off":
        assert [e.kind for e in fast.events] == ["round-off"]
    if case == "retries":
        assert "retry" in [e.kind for e in fast.events]
    if case == "cut-backs":
        assert fast.cutbacks > 0


def test_the_kept_lu_is_taken_under_the_keys_kept_factorization_takes():
    """The compiled loop's test of a step size against the kept LU's is KeptFactorization.take's
    (``math.isclose`` to 1e-9 relative): fixed steps differ by round-off, cut-backs by halves."""
    import math

    from flexmb.compiled.kept_newton import same_key

    for a, b in [(0.01, 0.01), (0.01, 0.01 * (1 + 2e-16)), (0.01, 0.01 * (1 + 9e-10)), (0.01, 0.01 * (1 + 1.1e-9)),
                 (0.01, 0.005), (0.01, math.nan), (math.nan, math.nan), (math.inf, math.inf), (0.0, 0.0),
                 (0.0, 1e-300), (-0.01, -0.01 * (1 + 5e-10))]:
        assert same_key(a, b) == math.isclose(a, b, rel_tol=1e-9) == same_key(b, a), (a, b)
