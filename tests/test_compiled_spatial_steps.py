"""Runs of fixed mid-point steps of small spatial models in one compiled call
(:mod:`flexmb.integrators.spatial_step_loop`, :mod:`flexmb.compiled.spatial_step_loop`: 3D modal bodies,
rigid bodies, joints with drives) against the Python step loop they replace: the same states bit for bit
(displacements, velocities, accelerations, reactions, multipliers, the joints' force and reactions,
work, the drives' work, iterations), the same run log, also where the compiled loop hands steps back
(the run's first step, cut-backs, the first convergence at the round-off floor, failures, a drive that
raises) and with several chunks.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import flexmb as fm
from flexmb.checks import UserFunctionError
from flexmb.integrators import spatial_step_loop, step_loop, time_stepping
from flexmb.integrators.newton import NewtonSettings
from flexmb.validation.registry import load_module
from models import cantilever_body_3d, modal_blade_on_hub, spatial_double_pendulum

CASES = Path(__file__).resolve().parents[1] / "validation"
SERIES = ("t", "u", "v", "a", "reactions", "work", "joint_work", "multipliers", "constraint_force",
          "constraint_residual", "joint_forces", "joint_moments", "kinetic", "strain", "newton_iterations",
          "dissipated", "angular_momentum")


@pytest.fixture(scope="module")
def data():
    return cantilever_body_3d(5, 4)


def _spin_up(data, tip: bool = False, raise_after: float | None = None) -> fm.Assembly:
    """The modal body on a hub driven by the spin-up angle of ``spin-up-simo`` (the drive of
    ``validation/spin_up_modal_spatial.py``), here sped up 10 times, raising a ValueError after ``raise_after``
    s; with ``tip`` also a rigid tip body (a second joint). No weight: the modal body's would depend on its
    configuration (not a model of the one-call step)."""
    beam = load_module(CASES / "spin_up_simo.py").PARAMETERS

    def angle(t: float) -> float:
        if raise_after is not None and t > raise_after:
            raise ValueError("beyond the drive's table")
        return beam.psi(10.0 * t)

    return modal_blade_on_hub(data, angle, tip_at=[1.2, 0.0, -0.1] if tip else None)


def _free_top() -> tuple[fm.Assembly, np.ndarray]:
    """A rigid body without joints spinning about a tilted axis (no multipliers) and its start velocities."""
    m = fm.Model(dim=3)
    top = m.add_rigid_body([0.0, 0.0, 0.5], 1.0, [0.02, 0.03, 0.05])
    asm = fm.Assembly(m)
    v0 = np.zeros(asm.n_dof)
    v0[asm.rotation_dofs[0]] = [1.0, 2.0, 30.0]
    v0[asm.dofs.index(top.node, "ux")] = 0.2
    return asm, v0


def _model(name: str, data) -> tuple[fm.Assembly, np.ndarray | None]:
    if name == "free top":
        return _free_top()
    return {"spin-up": lambda: _spin_up(data), "double pendulum": spatial_double_pendulum,
            "modal and rigid": lambda: _spin_up(data, tip=True)}[name](), None


def _runs(asm, dt, steps, monkeypatch, v0=None, **kw):
    """(compiled loop, Python steps, steps the compiled loop took): the histories or the raised errors."""
    out, taken = [], [0]
    run = spatial_step_loop.SpatialSteps.run

    def counted(self, fixed_run, t0, dt, first, last):
        k = run(self, fixed_run, t0, dt, first, last)
        taken[0] += k - first
        return k

    for compiled in (True, False):
        with monkeypatch.context() as patch:
            patch.setattr(spatial_step_loop.SpatialSteps, "run", counted)
            if not compiled:
                patch.setattr(spatial_step_loop.SpatialSteps, "for_run", classmethod(lambda cls, *args: None))
            try:
                out.append(fm.integrate(asm, dt, steps * dt, v0=v0, progress=False, **kw))
            except (time_stepping.TimeIntegrationError, UserFunctionError) as exc:
                out.append(exc)
    return (*out, taken[0])


def _assert_same(fast, slow) -> None:
    for series in SERIES:
        assert np.array_equal(np.array(getattr(fast, series)), np.array(getattr(slow, series))), series
    assert [(e.at, e.kind, e.message) for e in fast.events] == [(e.at, e.kind, e.message) for e in slow.events]
    assert fast.cutbacks == slow.cutbacks
    assert np.array_equal(fast.step_sizes, slow.step_sizes)


#: (model, case) run by both loops. Newton's failures and round-off floor come where the models have them:
#: the modal bodies' steps at dt = 0.03 s need more than two iterations from the 5th and 12th step on (the
#: double pendulum's every step, which the Python path then takes from its second predictor, and the
#: free top's every step alike), and only the spin-up and the top converge at the round-off floor with
#: zero tolerances (the others stagnate above it and fail in both loops alike)
CASES_RUN = ([(name, case) for name in ("spin-up", "double pendulum", "modal and rigid", "free top")
              for case in ("plain", "output-every")]
             + [(name, case) for name in ("spin-up", "modal and rigid") for case in ("cut-backs", "failure")]
             + [("spin-up", "round-off"), ("free top", "round-off")])


@pytest.mark.filterwarnings("ignore::flexmb.FlexmbWarning")        # the cut-backs' branch-change warnings
@pytest.mark.parametrize("name, case", CASES_RUN)
def test_compiled_steps_equal_the_python_steps(name, case, data, monkeypatch):
    asm, v0 = _model(name, data)
    dt, steps = 0.01, 20
    kw = {"cut-backs": dict(newton=NewtonSettings(max_iterations=2), cutback_check="warn"),
          "round-off": dict(newton=NewtonSettings(residual_tol=0.0, increment_tol=0.0, stagnation_tol=0.0)),
          "failure": dict(newton=NewtonSettings(max_iterations=2), max_cutbacks=0),
          "output-every": dict(output_every=3)}.get(case, {})
    if case in ("cut-backs", "failure"):
        dt = 0.03
    scheme = time_stepping.ALL_SCHEMES["mid-point"](asm)
    assert spatial_step_loop.SpatialSteps.for_run(scheme, NewtonSettings(), False,
                                                  time_stepping.MODIFIED_NEWTON_MIN_SIZE) is not None
    fast, slow, taken = _runs(asm, dt, steps, monkeypatch, v0, **kw)
    assert type(fast) is type(slow)
    assert isinstance(fast, time_stepping.TimeIntegrationError) == (case == "failure") or case == "cut-backs"
    if isinstance(fast, time_stepping.TimeIntegrationError):
        assert str(fast) == str(slow)
        fast, slow = fast.history, slow.history
    _assert_same(fast, slow)
    assert taken > 0, "the compiled loop took no step"
    if case == "cut-backs":
        assert fast.cutbacks > 0
    if case == "round-off":
        assert [e.kind for e in fast.events] == ["round-off"]
    if case == "output-every":
        assert fast.n_steps == steps // 3 + 2        # the start, every third step and the last
    if asm.constraints is not None:                  # the drive and the joints do work and carry load
        assert np.abs(np.array(fast.multipliers[1:])).min(axis=1).max() > 0.0


@pytest.mark.filterwarnings("ignore::flexmb.FlexmbWarning")
def test_several_chunks(data, monkeypatch):
    """A run over three compiled calls: each resumes from the state the last one handed back."""
    asm = _spin_up(data, tip=True)
    steps = 2 * step_loop.CHUNK + 5
    fast, slow, taken = _runs(asm, 0.002, steps, monkeypatch)
    _assert_same(fast, slow)
    assert taken == steps - 1                        # all but the first (no multipliers yet to scale by)
    # the physics of what they agree on: the drive's work is the energy the bodies took up
    energy = np.array(fast.kinetic) + np.array(fast.strain) - np.array(fast.work)
    assert abs(energy[-1] - energy[0]) < 1e-6 * max(fast.kinetic), energy[-1] - energy[0]
    assert fast.joint_work[-1] > 0.0


@pytest.mark.filterwarnings("ignore::flexmb.FlexmbWarning")        # the model's lambdas are not stored
def test_a_drive_that_raises_ends_the_run_after_the_same_steps(data, monkeypatch, tmp_path):
    """The steps before the drive raised are computed and written; the error is the Python step's."""
    asm = _spin_up(data, raise_after=0.135)
    errors, taken = [], [0]
    run = spatial_step_loop.SpatialSteps.run

    def counted(self, fixed_run, t0, dt, first, last):
        k = run(self, fixed_run, t0, dt, first, last)
        taken[0] += k - first
        return k

    for compiled, name in ((True, "fast.h5"), (False, "slow.h5")):
        with monkeypatch.context() as patch:
            patch.setattr(spatial_step_loop.SpatialSteps, "run", counted)
            if not compiled:
                patch.setattr(spatial_step_loop.SpatialSteps, "for_run", classmethod(lambda cls, *args: None))
            with pytest.raises((UserFunctionError, ValueError)) as error:
                fm.integrate(asm, 0.01, 0.3, progress=False, save_to=tmp_path / name)
            errors.append(str(error.value))
    assert errors[0] == errors[1] and "beyond the drive's table" in errors[0]
    assert taken[0] == 12                                    # steps 2 .. 13; the first and the 14th in Python
    fast, slow = fm.load_result(tmp_path / "fast.h5"), fm.load_result(tmp_path / "slow.h5")
    assert fast.n_steps == slow.n_steps == 14                # t = 0 .. 0.13 s
    for series in ("u", "v", "a", "multipliers", "work", "joint_work"):
        assert np.array_equal(np.array(getattr(fast, series)), np.array(getattr(slow, series))), series


def test_no_compiled_loop_where_steps_take_another_path(data, monkeypatch):
    """Newton logs kept, a patched solve or predictor, modified Newton, another scheme, a model without
    the one-call step (a Beam3D group): the Python steps."""
    asm = _spin_up(data)
    scheme = time_stepping.ALL_SCHEMES["mid-point"](asm)
    size = time_stepping.MODIFIED_NEWTON_MIN_SIZE
    loop = spatial_step_loop.SpatialSteps
    assert loop.for_run(scheme, NewtonSettings(), False, size) is not None
    assert loop.for_run(scheme, NewtonSettings(), True, size) is None
    assert loop.for_run(scheme, NewtonSettings(), False, asm.n_free) is None
    for name in ("solve_step", "solve_joint_step", "predict"):
        with monkeypatch.context() as patch:
            patch.setattr(type(scheme), name, lambda self, *args: None)
            assert loop.for_run(scheme, NewtonSettings(), False, size) is None
    for other in ("composed-mid-point", "newmark"):
        assert loop.for_run(time_stepping.ALL_SCHEMES[other](asm), NewtonSettings(), False, size) is None
    m = fm.Model(dim=3)
    nodes = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 3), np.zeros(3), np.zeros(3)])
    m.add_beam3d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, GJ=50.0, EI_y=1e2, EI_z=2e2, rho_A=1.0,
                 rho_I=(2e-4, 1e-4, 1e-4), mass="consistent")
    m.add_joint("revolute", None, int(nodes[0]), axis=[0.0, 0.0, 1.0], drive=lambda t: t**2)
    assert loop.for_run(time_stepping.ALL_SCHEMES["mid-point"](fm.Assembly(m)), NewtonSettings(), False,
                        size) is None
