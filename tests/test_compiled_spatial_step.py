"""The one-call mid-point step of small spatial models with joints (:mod:`flexmb.compiled.spatial_group`:
3D modal bodies and rigid bodies) against the Python path it replaces: the scheme's residual with the
joints' terms and the augmented system of the step loop (``_sub_step``'s ``residual``), and
``newton_solve`` around them. The same kernels in the same order, so the residuals, Jacobians, whole
runs and Newton logs are compared exactly (bit for bit); the augmented Jacobian also against central
differences of the residual along Newton's update.
"""
from __future__ import annotations

import numpy as np
import pytest

import flexmb as fm
from flexmb.integrators import newton, time_stepping
from flexmb.integrators.newton import NewtonSettings
from flexmb.integrators.schemes import MidPoint
from models import cantilever_body_3d, modal_blade_on_hub, spatial_double_pendulum
from test_compiled_mid_point_group import log_record


@pytest.fixture(scope="module")
def data():
    return cantilever_body_3d(5, 4)


def _spin_up(data, rigid: bool = False) -> fm.Assembly:
    """The cantilever body driven by a spin-up angle; with ``rigid`` also a rigid tip body (a second joint)."""
    return modal_blade_on_hub(data, lambda t: 3.0 * t**2, tip_at=[1.2, 0.0, 0.0] if rigid else None)


def _model(name: str, data) -> fm.Assembly:
    return {"spin-up": lambda: _spin_up(data), "double pendulum": spatial_double_pendulum,
            "modal and rigid": lambda: _spin_up(data, rigid=True)}[name]()


MODELS = ("spin-up", "double pendulum", "modal and rigid")


def _python_residual(asm: fm.Assembly, s, dt: float, u1: np.ndarray, y: np.ndarray, lam_scale: float,
                     idle_scale: float, tangent: bool):
    """The specification: ``_sub_step``'s augmented residual around the Python residual of the scheme."""
    scheme = MidPoint(asm)
    state = scheme.initial_state(s.t, s.u, s.v)
    free, cs = asm.dofs.free, asm.constraints
    res = scheme.residual(state, dt, u1.copy(), tangent)
    ct = scheme.constraint_terms(state, dt, u1, y * lam_scale, res)
    res.g = res.g + ct.force
    scale = max(res.force_scale, float(np.linalg.norm(ct.force[free]))) or idle_scale
    kappa = 100.0 * scale / asm.characteristic_length
    J = (cs.augmented(ct, asm.jacobian_matrix(res.jacobian_data), asm.dofs.free_position, lam_scale, kappa)
         if tangent else None)
    return res, ct, np.concatenate([res.g[free], kappa * ct.phi]), J, scale


def _state_and_iterate(asm: fm.Assembly, dt: float, rng: np.random.Generator):
    """A state after a few steps (with its multipliers) and an iterate (u1, y) near the next step's solution."""
    h = fm.integrate(asm, dt, 6 * dt, progress=False)
    scheme = MidPoint(asm)
    s = scheme.initial_state(h.t[-1], h.u[-1], h.v[-1])
    s.lam = np.array(h.multipliers[-1])
    u1 = scheme.predict(s, dt)
    u1[asm.dofs.free] += 1e-4 * rng.standard_normal(asm.n_free)
    lam_scale = float(np.abs(s.lam).max())
    y = s.lam / lam_scale + 1e-3 * rng.standard_normal(s.lam.size)
    return scheme, s, u1, y, lam_scale


FIELDS = ("g", "jacobian_data", "force_scale", "f_ext", "increment", "velocity", "acceleration")


@pytest.mark.parametrize("name", MODELS)
def test_one_call_residual_equals_the_python_residual(name, data, rng):
    asm = _model(name, data)
    scheme, s, u1, y, lam_scale = _state_and_iterate(asm, 0.01, rng)
    assert scheme._spatial_plan() is not None
    for tangent in (True, False):
        res, ct, r, J, scale = scheme._joint_residual(s, 0.01, u1, y, lam_scale, 2.0, tangent)
        spec = _python_residual(asm, s, 0.01, u1, y, lam_scale, 2.0, tangent)
        for field in FIELDS:
            fast, slow = getattr(res, field), getattr(spec[0], field)
            assert (fast is None and slow is None) or np.array_equal(fast, slow), (name, tangent, field)
        for part in ("phi", "force"):
            assert np.array_equal(getattr(ct, part), getattr(spec[1], part)), (name, part)
        for part in ("g", "c", "k"):
            for fast, slow in zip(getattr(ct, part), getattr(spec[1], part)):
                assert np.array_equal(fast, slow), (name, part)
        assert np.array_equal(r, spec[2]) and scale == spec[4], name
        assert (J is None and spec[3] is None) or np.array_equal(J.toarray(), spec[3].toarray()), name
    assert np.abs(ct.force).max() > 0.0 and np.abs(res.g[asm.rotation_dofs]).max() > 0.0


def test_idle_scale_takes_over_at_rest(data):
    """A model at rest under no force: the augmented system's force scale is the idle scale."""
    asm = _spin_up(data)
    scheme = MidPoint(asm)
    s = scheme.initial_state(0.0, np.zeros(asm.n_dof), np.zeros(asm.n_dof))
    u1 = np.zeros(asm.n_dof)
    *_, scale = scheme._joint_residual(s, 1e-9, u1, np.zeros(asm.constraints.n), 1.0, 3.5, False)
    assert scale == _python_residual(asm, s, 1e-9, u1, np.zeros(asm.constraints.n), 1.0, 3.5, False)[4] == 3.5


@pytest.mark.parametrize("name", MODELS)
def test_augmented_jacobian_matches_finite_differences(name, data, rng):
    """The augmented Jacobian against central differences of the augmented residual along Newton's
    variables: the scheme's update of u1 (Cayley parameters at the rotations) and the scaled multipliers."""
    asm = _model(name, data)
    dt = 0.01
    scheme, s, u1, y, lam_scale = _state_and_iterate(asm, dt, rng)
    free, nf = asm.dofs.free, asm.n_free
    length = asm.characteristic_length
    _, _, _, jacobian, scale = scheme._joint_residual(s, dt, u1, y, lam_scale, 1.0)
    J = jacobian.toarray()
    J[nf:] /= 100.0 * scale / length                       # the constraint rows: dPhi (kappa held by Newton)

    def residual(dx: np.ndarray) -> np.ndarray:
        du = np.zeros(asm.n_dof)
        du[free] = dx[:nf]
        *_, r, _, scale = scheme._joint_residual(s, dt, scheme.update(s, u1, du), y + dx[nf:], lam_scale, 1.0, False)
        r[nf:] /= 100.0 * scale / length
        return r

    numeric = np.zeros_like(J)
    for j in range(J.shape[1]):
        h = np.zeros(J.shape[1])
        h[j] = 1e-6
        numeric[:, j] = (residual(h) - residual(-h)) / 2e-6
    for rows, what in ((slice(None, nf), "equilibrium"), (slice(nf, None), "constraint")):
        error = np.abs(J[rows] - numeric[rows]).max() / np.abs(J[rows]).max()
        assert error < 1e-6, f"{name}: the {what} rows off finite differences by {error:.2e} of their largest entry"


def _run(asm, dt: float, steps: int, compiled: bool, monkeypatch, **kw):
    """integrate with the compiled Newton solve or with newton_solve around the Python residual; the
    history or the raised error."""
    with monkeypatch.context() as patch:
        if not compiled:
            patch.setattr(MidPoint, "solve_joint_step", lambda self, *args: None)
        try:
            return fm.integrate(asm, dt, steps * dt, progress=False, keep_newton_logs=True, **kw)
        except time_stepping.TimeIntegrationError as exc:
            return exc


SERIES = ("t", "u", "v", "a", "reactions", "work", "kinetic", "multipliers", "joint_work", "newton_iterations")


def _same_runs(fast, slow) -> None:
    for series in SERIES:
        assert np.array_equal(np.array(getattr(fast, series)), np.array(getattr(slow, series))), series
    assert [log_record(x) for x in fast.newton_logs] == [log_record(x) for x in slow.newton_logs]
    assert [(e.at, e.kind, e.message) for e in fast.events] == [(e.at, e.kind, e.message) for e in slow.events]


@pytest.mark.filterwarnings("ignore::flexmb.FlexmbWarning")        # the cut-backs' branch-change warnings
@pytest.mark.parametrize("case", [*MODELS, "cut-backs", "failure", "force-tol", "composed"])
def test_compiled_newton_solve_equals_newton_solve(case, data, monkeypatch):
    asm = _model(case if case in MODELS else "modal and rigid", data)
    dt = 0.05 if case == "cut-backs" else 0.01
    kw = {"cut-backs": dict(newton=NewtonSettings(max_iterations=2), cutback_check="warn"),
          "failure": dict(newton=NewtonSettings(max_iterations=1), max_cutbacks=1),
          "force-tol": dict(newton=NewtonSettings(force_tol=1e-3)),
          "composed": dict(scheme="composed-mid-point")}.get(case, {})              # its backward sub-step too
    calls = []
    solve = MidPoint.solve_joint_step

    def counted(self, *args):
        calls.append(True)                          # a compiled solve that raises ran too
        out = solve(self, *args)
        calls[-1] = out is not None
        return out

    monkeypatch.setattr(MidPoint, "solve_joint_step", counted)
    fast = _run(asm, dt, 15, True, monkeypatch, **kw)
    slow = _run(asm, dt, 15, False, monkeypatch, **kw)
    assert calls and all(calls)
    if case == "failure":
        assert isinstance(fast, time_stepping.TimeIntegrationError) and type(fast) is type(slow)
        assert str(fast) == str(slow)
        fast, slow = fast.history, slow.history
    if case == "cut-backs":
        assert fast.cutbacks > 0
    _same_runs(fast, slow)


def test_converged_pass_forms_no_jacobian(data, monkeypatch):
    """The compiled solve evaluates a pass that the one before predicts converged without the Jacobian
    (the same iterates and logs: test_compiled_newton_solve_equals_newton_solve); where it converged
    there, the step's residual says it holds no Jacobian. The spin-up's steps converge in two or three
    passes, most of their last ones without the Jacobian."""
    asm = _spin_up(data)
    last = []
    solve = MidPoint.solve_joint_step

    def kept(self, *args):
        out = solve(self, *args)
        last.append((out[0].iterations, out[1].jacobian_data is None))
        return out

    monkeypatch.setattr(MidPoint, "solve_joint_step", kept)
    history = fm.integrate(asm, 0.01, 0.15, progress=False, keep_newton_logs=True)
    assert len(last) == 15 and all(log.converged for log in history.newton_logs)
    assert sum(without for _, without in last) >= 10
    assert all(iterations >= 1 for iterations, without in last if without)    # never at the predictor


def test_unconfirmed_singular_pivot_falls_back_to_newton_solve(data, monkeypatch):
    """A start point's pivot below the tolerance that the singular-value test does not confirm: the
    compiled solve returns None before its first correction and newton_solve runs the step (here every
    step, by a pivot tolerance of 1), with the results of the Python path."""
    asm = _spin_up(data, rigid=True)
    slow = _run(asm, 0.01, 10, False, monkeypatch)
    outcomes = []
    solve = MidPoint.solve_joint_step

    def counted(self, *args):
        outcomes.append(solve(self, *args))
        return outcomes[-1]

    with monkeypatch.context() as patch:
        patch.setattr(newton, "pivot_tolerance", lambda n: 1.0)
        patch.setattr(MidPoint, "solve_joint_step", counted)
        fast = _run(asm, 0.01, 10, True, monkeypatch)
    assert len(outcomes) == 10 and all(out is None for out in outcomes)
    assert np.array_equal(np.array(fast.u), np.array(slow.u))
    assert np.array_equal(np.array(fast.newton_iterations), np.array(slow.newton_iterations))


def test_no_compiled_spatial_step_outside_its_models(data):
    """Gravity on a modal body (a configuration-dependent load), modal damping, a Beam3D or a tie take
    the Python residual and newton_solve."""
    def spin(**kw) -> fm.Model:
        m = fm.Model(dim=3)
        body = m.add_modal_body(data, **kw)
        m.add_joint("revolute", None, int(body.connectivity[0, 0]), axis=(0.0, 0.0, 1.0))
        return m, body

    weighed, _ = spin()
    weighed.set_gravity([0.0, 0.0, -9.81])
    damped, _ = spin(damping_ratios=0.01)
    tied, body = spin()
    tied.tie(tied.add_node([1.0, 0.0, 0.0]), body, data.component.model.n_nodes - 1)
    beam = fm.Model(dim=3)
    nodes = beam.add_nodes([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    beam.add_beam3d([nodes], EA=1e6, GJ=1e3, EI_y=1e3, EI_z=1e3, rho_A=1.0)
    beam.add_joint("spherical", None, int(nodes[0]))
    for model in (weighed, damped, tied, beam):
        asm = fm.Assembly(model)
        scheme = MidPoint(asm)
        s = scheme.initial_state(0.0, np.zeros(asm.n_dof), np.zeros(asm.n_dof))
        assert scheme._spatial_plan() is None
        n_c = asm.constraints.n if asm.constraints else 0
        assert scheme.solve_joint_step(s, 0.01, scheme.predict(s, 0.01), np.zeros(n_c), 1.0, 1.0, NewtonSettings(),
                                       1.0) is None


def _free_flight(data) -> tuple[fm.Assembly, np.ndarray]:
    """The cantilever body and a rigid body flying free, no joint: spinning about a tilted axis,
    the modal body's modes excited (its frame translating)."""
    m = fm.Model(dim=3)
    body = m.add_modal_body(data, name="blade")
    top = m.add_rigid_body([2.0, 0.0, 0.0], 1.0, [0.02, 0.03, 0.04])
    asm = fm.Assembly(m)
    v0 = np.zeros(asm.n_dof)
    v0[asm.dofs.internal_dofs(body)] = 0.3
    frame = asm.dofs.first[int(body.connectivity[0, 0])]
    v0[frame:frame + 6] = [0.1, 0.0, 0.2, 0.5, 1.0, 2.0]
    node = asm.dofs.first[top.node]
    v0[node:node + 6] = [0.0, 0.1, 0.0, 3.0, -1.0, 0.5]
    return asm, v0


def test_compiled_solve_without_joints_equals_newton_solve(data, monkeypatch):
    """Free flight (no joint): the one-call step through :meth:`MidPoint.solve_step`, the same runs and
    logs as newton_solve around the Python residual."""
    asm, v0 = _free_flight(data)
    assert MidPoint(asm)._spatial_plan() is not None and asm.constraints is None
    solve = MidPoint.solve_step
    calls = []

    def counted(self, *args):
        calls.append(True)
        out = solve(self, *args)
        calls[-1] = out is not None
        return out

    monkeypatch.setattr(MidPoint, "solve_step", counted)
    fast = fm.integrate(asm, 0.01, 0.15, v0=v0, progress=False, keep_newton_logs=True)
    with monkeypatch.context() as patch:
        patch.setattr(MidPoint, "_spatial_plan", lambda self: None)
        slow = fm.integrate(asm, 0.01, 0.15, v0=v0, progress=False, keep_newton_logs=True)
    assert len(calls) >= 15 and all(calls[:15])
    for series in ("t", "u", "v", "a", "reactions", "work", "kinetic", "newton_iterations"):
        assert np.array_equal(np.array(getattr(fast, series)), np.array(getattr(slow, series))), series
    assert [log_record(x) for x in fast.newton_logs] == [log_record(x) for x in slow.newton_logs]
