"""A transient run as a system of steps (:mod:`flexmb.sensitivity.transient`): the recorded forward run
and its replay from stored states against ``integrate`` bit for bit (a planar beam model on the compiled
step loop, a jointed flexible double pendulum, a run with cut-backs, the composed and dissipative schemes),
the step Jacobian at the solution against central differences of the step's residual (with joints the
physical augmented residual, and Newton's scaled matrix against its scalings), its transposed solves, and
the refusals."""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.checks import ModelError
from flexmb.integrators import step_loop, time_stepping
from flexmb.integrators.newton import NewtonSettings, equilibrate
from flexmb.sensitivity.transient import Step, record, replay, step_jacobian, sub_steps
from flexmb.validation.slider_crank import build as slider_crank
from models import sagging_beam, spinning_hub_beam

FIELDS = ("u", "v", "a", "reaction", "lam", "stretch")


def _slider_crank() -> tuple[fm.Assembly, np.ndarray, float, int]:
    """Slider-crank A with two cubic-mass rod elements (no joints: the compiled step loop's model)."""
    asm, v0, _ = slider_crank(2, 124.8, 0.5 * 0.0331, "cubic")
    return asm, v0, 8.0 / 124.8 / 40, 30


def _double_pendulum(drive: bool = False) -> fm.Assembly:
    """Two flexible links of two Beam2D elements each, hinged to the ground at the origin and to
    each other by revolute joints, under gravity (optionally the lower hinge driven)."""
    m = fm.Model(dim=2)
    a = m.add_nodes(np.c_[np.linspace(0.0, 1.0, 3), np.zeros(3)])
    b = m.add_nodes(np.c_[np.linspace(1.0, 1.8, 3), np.zeros(3)])
    for name, nodes in (("upper", a), ("lower", b)):
        m.add_beam2d(np.c_[nodes[:-1], nodes[1:]], EA=1e6, EI=2e2, rho_A=2.0, rho_I=1e-3, mass="consistent", name=name)
    m.add_joint("revolute", None, int(a[0]), name="pivot")
    m.add_joint("revolute", int(a[-1]), int(b[0]), name="elbow", drive=(lambda t: 0.3 * t**2) if drive else None)
    m.set_gravity([0.0, -9.81])
    return fm.Assembly(m)


def _history_state(h, k: int, name: str) -> np.ndarray:
    series = {"reaction": "reactions", "lam": "multipliers"}.get(name, name)
    return np.asarray(getattr(h, series))[k]


def _assert_same_states(states, history, first: int | list[int] = 0) -> None:
    """states (list of State) are history's steps first, first + 1, ... (or the steps listed) bit for bit."""
    steps = first if isinstance(first, list) else range(first, first + len(states))
    for s, k in zip(states, steps, strict=True):
        assert s.t == history.t[k], f"t at step {k}"
        for name in FIELDS:
            ours = getattr(s, name)
            if ours is None or not np.size(_history_state(history, k, name)):
                assert ours is None or not ours.size, f"{name} at step {k}"
                continue
            assert np.array_equal(ours, _history_state(history, k, name)), f"{name} at step {k}"
        assert s.work == history.work[k], f"work at step {k}"


@pytest.mark.parametrize("scheme", ["mid-point", "generalized-alpha", "composed-mid-point"])
def test_the_recorded_run_and_its_replay_are_integrate_bit_for_bit_on_the_compiled_loop_model(scheme):
    asm, v0, dt, n = _slider_crank()
    if scheme != "composed-mid-point":                    # integrate takes the compiled step loop
        stepper = time_stepping.ALL_SCHEMES[scheme](asm)
        assert step_loop.CompiledSteps.for_run(stepper, NewtonSettings(), False,
                                               time_stepping.MODIFIED_NEWTON_MIN_SIZE) is not None
    history = fm.integrate(asm, dt, n * dt, v0=v0, scheme=scheme, progress=False)
    run = record(asm, dt, n * dt, v0=v0, scheme=scheme, keep_every=7)
    assert sorted(run.states) == [0, 7, 14, 21, 28, 30]
    assert [s.t for s in run.steps] == list(history.t[:-1]) and run.steps[-1].t_end == history.t[-1]
    assert all(len(s.sizes) == 1 for s in run.steps)
    _assert_same_states([run.states[k] for k in sorted(run.states)], history, sorted(run.states))
    for k in (0, 14, 28):                                # from the start and from kept states
        _assert_same_states(run.replay(k), history, k + 1)


@pytest.mark.parametrize("scheme", ["mid-point", "generalized-alpha", "energy-decaying"])
def test_a_jointed_mechanism_replays_bit_for_bit_multipliers_included(scheme):
    asm = _double_pendulum(drive=True)
    dt, n = 0.01, 25
    history = fm.integrate(asm, dt, n * dt, scheme=scheme, progress=False)
    run = record(asm, dt, n * dt, scheme=scheme, keep_every=10)
    assert np.abs(history.multipliers[-1]).max() > 1.0         # the joints carry load
    _assert_same_states([run.final], history, n)
    _assert_same_states(run.replay(10), history, 11)
    # a new scheme object of the same name (as checkpointing in another process would)
    _assert_same_states(replay(asm, scheme, run.states[20], run.steps[20:]), history, 21)
    assert np.array_equal(run.states[20].constraint_force, history.constraint_force[20])


@pytest.mark.filterwarnings("ignore::flexmb.FlexmbWarning")        # the cut-backs' branch-change warnings
def test_a_run_with_cut_backs_records_the_half_steps_and_replays_them():
    _, asm, v0, _ = spinning_hub_beam()
    kw = dict(newton=NewtonSettings(max_iterations=3), cutback_check="warn")
    history = fm.integrate(asm, 0.4, 1.6, v0=v0, progress=False, **kw)
    run = record(asm, 0.4, 1.6, v0=v0, **kw)
    assert history.cutbacks > 0 and run.log.cutbacks == history.cutbacks
    split = [s for s in run.steps if len(s.sizes) > 1]
    assert split and all(abs(sum(s.sizes) - s.dt) <= 1e-15 for s in split)
    assert [e.kind for e in run.log.events] == [e.kind for e in history.events]
    _assert_same_states(run.replay(0), history, 1)
    # the Newton solves of a cut step: its pieces, each ending where the next begins
    k = run.steps.index(split[0])
    start = run.replay(0, k)[-1] if k else run.states[0]
    pieces = sub_steps(run.stepper, start, run.steps[k], run.settings)
    assert len(pieces) == len(run.steps[k].sizes)
    assert np.array_equal(pieces[-1][2].u, history.u[k + 1])
    assert all(np.array_equal(a[2].u, b[0].u) for a, b in zip(pieces[:-1], pieces[1:]))


def test_modified_newton_models_start_fresh_at_stored_states_and_replay_bit_for_bit():
    """A model of MODIFIED_NEWTON_MIN_SIZE unknowns and more keeps Newton's factorisation from step to
    step: the run starts each kept state's next step without it, and so does the replay; replayed
    with the factorisation of the step before instead, the states differ."""
    _, asm = sagging_beam()
    assert asm.n_free >= time_stepping.MODIFIED_NEWTON_MIN_SIZE
    history = fm.integrate(asm, 0.005, 0.1, progress=False)
    run = record(asm, 0.005, 0.1, keep_every=5)
    assert [k for k, s in enumerate(run.steps) if s.fresh] == [0, 5, 10, 15]
    # the same run to Newton's tolerance (the sag is 0.06 m)
    assert np.abs(run.final.u - history.u[-1]).max() < 1e-10
    replayed = run.replay(5, 10)
    assert np.array_equal(replayed[4].u, run.states[10].u) and np.array_equal(replayed[9].u, run.states[15].u)
    stale = [Step(s.t, s.sizes, s.t_end) for s in run.steps[:10]]      # no reset at step 5
    assert not np.array_equal(replay(asm, run.stepper, run.states[0], stale)[-1].u, run.states[10].u)


def _central_differences(jac, h: np.ndarray) -> np.ndarray:
    """dR/dy (n, n) by central differences of the step residual, column j with step h[j]."""
    n = h.size
    out = np.empty((n, n))
    for j in range(n):
        dy = np.zeros(n)
        dy[j] = h[j]
        out[:, j] = (jac.residual(dy) - jac.residual(-dy)) / (2.0 * h[j])
    return out


def _backward_error(A, x: np.ndarray, b: np.ndarray, transpose: bool) -> float:
    """The normwise backward error of x (n, k) solving A x = b (or A^T x = b) in the equations and
    unknowns of the equilibrated B = D_r A D_c, the largest over the columns: the physical A mixes
    N/m, N per N and m per m (condition 1e11 to 1e12 with joints here, 1e3 to 1e4 of Newton's scaled
    matrix), so its plain residual ``|A x - b| / |b|`` (1e-10 with joints) measures the units, not
    the solve. Measured: 2e-17 to 4e-17."""
    B, row_scale, col_scale = equilibrate(A)
    M, left, right = (B.T, col_scale, row_scale) if transpose else (B, row_scale, col_scale)
    w, c = x / right[:, None], left[:, None] * b
    norm = abs(M).sum(axis=1).max()
    return float((np.abs(M @ w - c).max(axis=0) / (norm * np.abs(w).max(axis=0) + np.abs(c).max(axis=0))).max())


def _assert_jacobian(jac, length: float) -> None:
    """A against central differences (relative to its largest entry, per block row: the force rows
    in N/m, the constraint rows dimensionless), and A x = b, A^T x = b."""
    A = jac.physical().toarray()
    nf = jac.n_free
    h = np.r_[np.full(nf, 1e-6 * length), np.full(jac.n_c, 1e-6 * jac.lam_scale)]
    fd = _central_differences(jac, h)
    for rows, what in ((slice(0, nf), "force rows"), (slice(nf, None), "constraint rows")):
        if A[rows].size:
            miss = np.abs(fd[rows] - A[rows]).max() / np.abs(A[rows]).max()
            assert miss < 1e-7, f"{what}: the Jacobian misses central differences by {miss:.2e} of its largest entry"
    assert np.linalg.norm(jac.residual()) <= 1e-8 * np.abs(A).max() * length
    b = np.random.default_rng(3).standard_normal((A.shape[0], 2))
    for transpose in (True, False):
        error = _backward_error(jac.physical(), jac.solve(b, transpose=transpose), b, transpose)
        assert error < 1e-12, f"solve (transpose={transpose}) misses by {error:.2e} (backward error)"
    x1 = jac.solve(b[:, 0], transpose=True)
    assert np.allclose(x1, jac.solve(b, transpose=True)[:, 0], rtol=1e-14, atol=0.0)


@pytest.mark.parametrize("scheme", ["mid-point", "generalized-alpha", "composed-mid-point"])
def test_the_step_jacobian_equals_central_differences_of_the_step_residual(scheme):
    asm, v0, dt, n = _slider_crank()
    run = record(asm, dt, 6 * dt, v0=v0, scheme=scheme)
    for start, size, end in sub_steps(run.stepper, run.states[4], run.steps[4], run.settings):
        _assert_jacobian(step_jacobian(run.stepper, start, size, end), asm.characteristic_length)


@pytest.mark.parametrize("scheme", ["mid-point", "generalized-alpha"])
def test_the_augmented_step_jacobian_of_a_mechanism_and_its_scalings(scheme):
    asm = _double_pendulum(drive=True)
    run = record(asm, 0.01, 0.05, scheme=scheme)
    [(start, size, end)] = sub_steps(run.stepper, run.states[3], run.steps[3], run.settings)
    assert np.array_equal(end.u, run.states[4].u)
    jac = step_jacobian(run.stepper, start, size, end)
    assert jac.n_c == asm.constraints.n > 0 and jac.kappa > 0 and jac.lam_scale == np.abs(start.lam).max()
    _assert_jacobian(jac, asm.characteristic_length)
    # Newton's matrix is the physical one scaled: J = D_r A D_c
    A = jac.physical()
    J = jac.matrix.toarray()
    assert np.allclose(J, jac.equation_scale[:, None] * A.toarray() * jac.unknown_scale, rtol=1e-14, atol=0.0)
    y = np.random.default_rng(1).standard_normal(A.shape[0])
    assert np.allclose(jac.to_physical(jac.to_newton(y)), y, rtol=1e-15, atol=0.0)
    # and the first step: the mid-point scheme starts from multipliers of zero, whose scale is then
    # the force scale at the predictor; generalized-alpha from the consistent start's multipliers
    [(start, size, end)] = sub_steps(run.stepper, run.states[0], run.steps[0], run.settings)
    jac = step_jacobian(run.stepper, start, size, end)
    at_predictor = run.stepper.residual(start, size, run.stepper.predict(start, size)).force_scale
    assert jac.lam_scale == (at_predictor if scheme == "mid-point" else np.abs(start.lam).max()) > 0
    _assert_jacobian(jac, asm.characteristic_length)


@pytest.mark.parametrize("scheme", ["mid-point", "generalized-alpha"])
def test_the_step_jacobian_at_spatial_rotations_is_with_respect_to_the_schemes_update(scheme):
    """A spinning Beam3D on a spherical joint: the columns at the rotation DOFs are the derivatives
    along the scheme's correction (Cayley parameters of the step), which StepJacobian.residual
    applies; the replay is integrate's bit for bit here too."""
    m = fm.Model(dim=3)
    x = np.linspace(0.0, 1.0, 4)
    n = m.add_nodes(np.c_[x, 0.1 * x, np.zeros(4)])
    m.add_beam3d(np.c_[n[:-1], n[1:]], EA=8e4, GJ=10.0, EI_y=14.0, EI_z=22.0, rho_A=3.0, rho_I=(1e-4, 5e-5, 5e-5))
    m.add_joint("spherical", None, int(n[0]), name="ball")
    m.set_gravity([0.0, 0.0, -9.81])
    asm = fm.Assembly(m)
    v0 = np.zeros(asm.n_dof)
    v0[asm.rotation_dofs[:, 2]], v0[asm.rotation_dofs[:, 0]] = 3.0, 1.0
    history = fm.integrate(asm, 0.01, 0.08, v0=v0, scheme=scheme, progress=False)
    run = record(asm, 0.01, 0.08, v0=v0, scheme=scheme)
    _assert_same_states(run.replay(0), history, 1)
    [(start, size, end)] = sub_steps(run.stepper, run.states[6], run.steps[6], run.settings)
    _assert_jacobian(step_jacobian(run.stepper, start, size, end), asm.characteristic_length)


def test_refusals_name_what_is_not_supported():
    asm, v0, dt, n = _slider_crank()
    with pytest.raises(ModelError, match="error-controlled"):
        record(asm, None, n * dt, v0=v0)
    with pytest.raises(ModelError, match="'leapfrog'"):
        record(asm, dt, n * dt, v0=v0, scheme="leapfrog")
    run = record(asm, dt, 4 * dt, v0=v0)
    with pytest.raises(ModelError, match="step 0 starts at t"):
        replay(asm, run.stepper, run.states[2], run.steps[3:])
    with pytest.raises(ModelError, match="not stored"):
        record(asm, dt, 4 * dt, v0=v0, keep_every=3).replay(1)
    with pytest.raises(ModelError, match="not the solution"):
        step_jacobian(run.stepper, run.states[1], dt, run.states[3])
