"""A transient run as a system of steps: its step list, an exact replay, and each step's Jacobian at
its solution (issue 33, piece P2; used by
:func:`~flexmb.sensitivity.transient_sensitivity`).

Direct differentiation and the adjoint differentiate the run's *discrete map*: per step, Newton
solves ``R(y; x_n) = 0`` for the step's unknowns y, and the derivatives go through the Jacobian
``A = dR/dy`` at the converged y. This module gives them the three things that takes:

* :func:`record` -- a forward run with fixed steps that keeps its **step list** (:class:`Step`: the
  start time, the sizes the scheme was called with -- one, or the halves of cut-backs -- and the time
  the end state carries) and the states at every ``keep_every``-th step. It takes the steps as
  :func:`~flexmb.integrators.time_stepping.integrate` takes them: the compiled step loop of small
  planar beam models (:mod:`flexmb.integrators.step_loop`), else the Python step
  (``time_stepping._step``) with the same cut-backs and their check, so its states are integrate's
  bit for bit.
* :func:`replay` -- the steps of a step list again from any stored state, the same states bit for
  bit (checkpointing recomputes segments of the run this way); :func:`sub_steps` -- one step's
  sub-steps (a cut-back's halves, a composed scheme's stages) with their start and end states, the
  units the Jacobian belongs to.
* :func:`step_jacobian` -- a sub-step's Jacobian at its converged end state, re-evaluated by the
  scheme's residual (a fresh tangent: modified Newton's last factorisation is stale) and
  factorised (:class:`~flexmb.integrators.newton.Factorization`, transposed solves included).

**Unknowns and scalings** (plan section 1.6). Without joints the unknowns are the free DOFs'
end values, ``y = u_{n+1}[free]``, and ``A = dg_free/du_{n+1,free}``, Newton's own matrix. With
joints Newton solves the augmented system built in ``time_stepping._sub_step``,
``r = [g + G^T lambda; kappa Phi] = 0`` in ``(u_free, lambda / ls)``, whose matrix is
``J = [[dg/du + K, ls G^T], [kappa C, 0]]``
(:meth:`~flexmb.multibody.constraints.ConstraintSystem.augmented`); ``ls`` (the multipliers' scale:
the start state's largest multiplier, else the force scale at the predictor, N) and ``kappa =
100 F / L`` (F the force scale at the solution, N; L the model's characteristic length, m) make its
blocks comparable. The physical unknowns ``y = (u_free, lambda)`` and residual ``R = (g_free +
(G^T lambda)_free, Phi)`` are related to Newton's by ``y = D_c y_N`` and ``r = D_r R`` with
``D_c = diag(1, ..., 1, ls, ..., ls)`` (:attr:`StepJacobian.unknown_scale`) and ``D_r = diag(1, ...,
1, kappa, ..., kappa)`` (:attr:`StepJacobian.equation_scale`), so ``A = D_r^-1 J D_c^-1``,
``A^-1 b = D_c J^-1 (D_r b)`` and ``A^-T c = D_r J^-T (D_c c)``: the factorisation is of J (the
matrix Newton factorises, equilibrated as it is), the solves are physical. Without joints both
scales are ones.

At spatial rotation DOFs (3D nodes with rotations) the unknown is, as for Newton, the scheme's
correction variable (:meth:`~flexmb.integrators.schemes.Scheme.update`: the Cayley parameters of
the step at the solution), not the stored rotation vector; :meth:`StepJacobian.residual` moves the
solution by that update, so central differences of it are the matrix's columns everywhere.

**Modified Newton** (models of ``newton.MODIFIED_NEWTON_MIN_SIZE`` = 151 unknowns and more, without
joints) keeps a factorisation from one step to the next
(:class:`~flexmb.integrators.newton.KeptFactorization`), so a step's iterates depend on the steps
before it. The forward run and the replay therefore start without a kept factorisation at every
step marked :attr:`Step.fresh`: the steps from a stored state and those after a cut-back (whose
check solves the full step again and would leave its factorisation). The replay then equals the
forward run bit for bit; for such models both differ from ``integrate``'s states at Newton's
tolerance (3e-13 m of a 0.06 m sag in the test). Models that keep none (fewer unknowns, joints): ``record``
gives ``integrate``'s states.

Not supported yet (refused with a :class:`~flexmb.checks.ModelError` naming it): error-controlled
steps (``dt=None``); a replay whose state or steps do not follow on from each other.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from flexmb.assembly import Assembly
from flexmb.checks import FlexmbWarning, ModelError, check_integrate
from flexmb.integrators.dissipative import DISSIPATIVE_SCHEMES
from flexmb.integrators.newton import Factorization, KeptFactorization, NewtonFailure, NewtonSettings
from flexmb.integrators.schemes import Scheme, State, StepResidual
from flexmb.integrators.step_loop import CompiledSteps
from flexmb.integrators.time_stepping import (ALL_SCHEMES, MODIFIED_NEWTON_MIN_SIZE, BranchChangeError,
                                              TimeIntegrationError, _step, _sub_step, _verify_cutback, start_state)
from flexmb.model import Model
from flexmb.multibody.constraints import ConstraintTerms
from flexmb.results import TimeHistory

#: the end state of a step must zero its residual to this fraction of the step's force scale
#: (Newton's tolerances are 1e-10 and below; a state of another step misses by far more)
CONVERGED = 1e-6
_TINY = np.finfo(float).tiny                # the force scale's floor (np.finfo costs a call per step)


@dataclass(frozen=True)
class Step:
    """One step of a run as the scheme took it.

    ``t`` (s): the time of its start state. ``sizes`` (s): the sizes of the scheme's steps
    (``time_stepping._step``) in order: one, or the pieces a cut-back split it into (halves,
    recursively); each piece's end carries the time ``start + size`` the scheme gives it.
    ``t_end`` (s): the time the end state carries (the run's step time, without drift).
    ``fresh``: modified Newton starts the step without a kept factorisation (module docstring).
    """

    t: float
    sizes: tuple[float, ...]
    t_end: float
    fresh: bool = False

    @property
    def dt(self) -> float:
        """The step's length (s), t_end - t."""
        return self.t_end - self.t


@dataclass
class RecordedRun:
    """A forward run of :func:`record`: its scheme object, Newton settings, step list (N,), the
    states kept (``states[k]``: after step k, k = 0 the start; every ``keep_every``-th and the
    last) and its run log (``log``: a :class:`~flexmb.results.TimeHistory` holding only events,
    cut-backs and Newton iterations; no states are recorded in it)."""

    stepper: Scheme
    settings: NewtonSettings
    steps: list[Step]
    states: dict[int, State]
    log: TimeHistory
    keep_every: int = 1

    @property
    def asm(self) -> Assembly:
        return self.stepper.asm

    @property
    def final(self) -> State:
        """The state after the last step."""
        return self.states[len(self.steps)]

    def replay(self, k: int, count: int | None = None) -> list[State]:
        """The states after steps k+1 .. k+count (all to the end by default) recomputed from the
        stored state k (:func:`replay`)."""
        if k not in self.states:
            raise ModelError(f"RecordedRun.replay: the state after step {k} is not stored (every "
                             f"{self.keep_every}-th step and the last are)")
        steps = self.steps[k:] if count is None else self.steps[k:k + count]
        return replay(self.asm, self.stepper, self.states[k], steps, self.settings)


def scheme_for(asm: Assembly, scheme: str | Scheme, rho_inf: float | None = None) -> Scheme:
    """The scheme object of ``scheme`` (a name of ``integrate``'s schemes, or an object, returned as
    it is) for ``asm``; ModelError for an unknown name or a rho_inf the scheme does not take."""
    if isinstance(scheme, Scheme):
        if scheme.asm is not asm:
            raise ModelError(f"scheme {scheme.name!r}: the scheme object belongs to another assembly")
        return scheme
    if scheme not in ALL_SCHEMES:
        raise ModelError(f"unknown scheme {scheme!r}; choose one of {', '.join(ALL_SCHEMES)}")
    if rho_inf is not None and scheme not in DISSIPATIVE_SCHEMES:
        raise ModelError(f"rho_inf = {rho_inf!r} is a parameter of {' and '.join(DISSIPATIVE_SCHEMES)}, not of "
                         f"scheme {scheme!r}")
    return ALL_SCHEMES[scheme](asm) if rho_inf is None else ALL_SCHEMES[scheme](asm, rho_inf=rho_inf)


def record(model: Model | Assembly, dt: float, t_end: float, scheme: str | Scheme = "mid-point",
           u0: np.ndarray | None = None, v0: np.ndarray | None = None, t0: float = 0.0,
           newton: NewtonSettings | None = None, max_cutbacks: int = 6, cutback_check: str = "error",
           rho_inf: float | None = None, keep_every: int = 1) -> RecordedRun:
    """A forward run of fixed steps ``dt`` (s) from ``t0`` to ``t_end`` (s) that records its step
    list; the arguments are ``integrate``'s (the same defaults and the same states, see the module
    docstring for modified Newton), ``keep_every``: keep the state after every k-th step (and the
    start and the last). Raises TimeIntegrationError (or BranchChangeError) as integrate does; its
    history then holds only the run log."""
    asm = model if isinstance(model, Assembly) else Assembly(model)
    if dt is None:
        raise ModelError("record: error-controlled steps (dt=None) are not supported yet; give a fixed dt")
    check_integrate(asm, dt, t_end, t0, u0, v0, newton, max_cutbacks, 1, None)
    if int(keep_every) != keep_every or keep_every < 1:
        raise ModelError(f"record: keep_every must be a whole number of steps >= 1, got {keep_every!r}")
    if asm.model.vector_loads:
        load = asm.model.vector_loads[0]
        raise ModelError(f"{load.kind} load at node {load.node}: configuration-dependent loads are not supported "
                         "in time integration")
    stepper = scheme_for(asm, scheme, rho_inf)
    recorder = _Recorder(stepper, newton or NewtonSettings(), max_cutbacks, cutback_check, int(keep_every))
    recorder.run(start_state(stepper, t0, u0, v0), t0, dt, t_end)
    return RecordedRun(stepper, recorder.settings, recorder.steps, recorder.states, recorder.log, int(keep_every))


class _Recorder:
    """The step loop of :func:`record`: ``_Run.fixed``'s (the compiled loop where it applies,
    else ``_advance``'s cut-backs), keeping the step list; ``state``, ``history`` and ``accept``
    are what :meth:`CompiledSteps.run` takes from a run."""

    def __init__(self, stepper: Scheme, settings: NewtonSettings, max_cutbacks: int, cutback_check: str,
                 keep_every: int) -> None:
        self.stepper, self.settings = stepper, settings
        self.max_cutbacks, self.cutback_check, self.keep_every = max_cutbacks, cutback_check, keep_every
        self.log = self.history = TimeHistory(stepper.name, 0.0)
        self.steps: list[Step] = []
        self.states: dict[int, State] = {}
        self.state: State | None = None
        self.fresh = True

    def run(self, state: State, t0: float, dt: float, t_end: float) -> None:
        self.state, self.states[0] = state, _copy(state)
        self.n_steps = n_steps = int(round((t_end - t0) / dt))
        self.stepper.kept_factorization = KeptFactorization()
        compiled = CompiledSteps.for_run(self.stepper, self.settings, False, MODIFIED_NEWTON_MIN_SIZE)
        if compiled is not None and compiled.bank is not None:
            compiled = None             # its LU kept across steps: the fresh starts below need the Python steps
        k = 1
        try:
            while k <= n_steps:
                if compiled is not None:
                    k = compiled.run(self, t0, dt, k, n_steps)
                    if k > n_steps:
                        break
                t_target = t0 + k * dt
                sizes: list[float] = []
                if self.fresh:
                    self.stepper.kept_factorization = KeptFactorization()
                new, its = self._advance(self.state, t_target - self.state.t, self.max_cutbacks, sizes)
                new.t = t_target
                self.accept(new, its, k, sizes)
                k += 1
        except NewtonFailure as exc:
            raise TimeIntegrationError(f"{self.stepper.name}: step to t = {self.state.t + dt:.6g} s failed after "
                                       f"{self.max_cutbacks} cut-backs: {exc}", self.log) from exc

    def accept(self, new: State, iterations: int, k: int, sizes: list[float] | None = None) -> None:
        """Step k ended in ``new``: entered in the step list (the compiled loop's steps are single
        steps of new.t - state.t, the size it took them with), kept at the kept steps."""
        start = self.state
        sizes = sizes or [new.t - start.t]
        self.steps.append(Step(start.t, tuple(sizes), new.t, self.fresh))
        self.log.note_step(new.t - start.t)
        self.state = new
        self.fresh = len(sizes) > 1
        if k % self.keep_every == 0 or k == self.n_steps:
            self.states[k] = _copy(new)
            self.fresh = True

    def _advance(self, s: State, dt: float, cutbacks_left: int, sizes: list[float]) -> tuple[State, int]:
        """``time_stepping._advance`` (the same calls, log entries and check of cut-backs), the sizes
        of the steps it took appended to ``sizes``."""
        stepper, settings, log = self.stepper, self.settings, self.log
        try:
            new, its = _step(stepper, s, dt, settings, log, False)
            sizes.append(dt)
            return new, its
        except NewtonFailure as exc:
            if cutbacks_left == 0:
                raise NewtonFailure(f"sub-step t = {s.t:.8g} .. {s.t + dt:.8g} s (dt = {dt:.4g} s): {exc}",
                                    exc.log) from exc
        log.cutbacks += 1
        log.log_event(s.t, "cutback", f"step dt = {dt:.4g} s did not converge; two steps of dt/2")
        half, its1 = self._advance(s, 0.5 * dt, cutbacks_left - 1, sizes)
        end, its2 = self._advance(half, 0.5 * dt, cutbacks_left - 1, sizes)
        if self.cutback_check != "off":
            mismatch = _verify_cutback(stepper, s, dt, end, settings, log)
            if mismatch is not None:
                message = (f"{stepper.name}: branch change detected in the cut-back of the step t = {s.t:.8g} .. "
                           f"{s.t + dt:.8g} s (dt = {dt:.4g} s): {mismatch}")
                if self.cutback_check == "error":
                    log.log_event(s.t, "error", message)
                    raise BranchChangeError(message, log)
                log.log_event(s.t, "warning", message)
                warnings.warn(message, FlexmbWarning, stacklevel=2)
        return end, its1 + its2


def _copy(s: State) -> State:
    """A copy of s whose arrays the caller may keep (the run goes on from s)."""
    force = None if s.constraint_force is None else s.constraint_force.copy()
    stretch = None if s.stretch is None else s.stretch.copy()
    return State(s.t, s.u.copy(), s.v.copy(), s.a.copy(), s.reaction.copy(), s.work, s.lam.copy(), force,
                 stretch=stretch, dissipated=s.dissipated, joint_work=s.joint_work)


def replay(asm: Assembly, scheme: str | Scheme, state: State, steps: list[Step],
           newton: NewtonSettings | None = None, rho_inf: float | None = None) -> list[State]:
    """The states after each of ``steps`` taken from ``state`` (not changed) by the scheme's Python
    step, with the Newton settings of the run that recorded them: the run's states bit for bit
    (module docstring). ``scheme``: a name (with ``rho_inf`` for the dissipative ones) or the
    run's scheme object (its kept factorisation is reset)."""
    stepper = scheme_for(asm, scheme, rho_inf)
    settings = newton or NewtonSettings()
    log = TimeHistory(stepper.name, 0.0)
    out: list[State] = []
    s = _copy(state)
    for i, step in enumerate(steps):
        if step.t != s.t:
            raise ModelError(f"replay: step {i} starts at t = {step.t!r} s but the state before it is at "
                             f"t = {s.t!r} s; give the steps that follow the state")
        if i == 0:
            stepper.kept_factorization = KeptFactorization()
        s = _take(stepper, s, step, settings, log)
        out.append(s)
    return out


def sub_steps(stepper: Scheme, state: State, step: Step,
              newton: NewtonSettings | None = None) -> list[tuple[State, float, State]]:
    """One step's Newton solves as (start state, size (s), end state): a cut-back's pieces and, of
    a composed scheme, each piece's stages (sizes negative for its backward stage), recomputed from
    ``state`` as :func:`replay` takes them (the last end state carries ``step.t_end``). These are
    the units of :func:`step_jacobian`. For models on modified Newton, call it in the order of the
    steps on the scheme object that took the step before (as in a replay): a step that is not
    :attr:`Step.fresh` starts from the factorisation that step kept."""
    if step.t != state.t:
        raise ModelError(f"sub_steps: the step starts at t = {step.t!r} s but the state is at t = {state.t!r} s")
    pieces: list[tuple[State, float, State]] = []
    _take(stepper, _copy(state), step, newton or NewtonSettings(), TimeHistory(stepper.name, 0.0), pieces)
    return pieces


def _take(stepper: Scheme, s: State, step: Step, settings: NewtonSettings, log: TimeHistory,
          pieces: list | None = None) -> State:
    """The end state of ``step`` from s: ``time_stepping._step`` for each of its sizes (a composed
    scheme's stages one by one, as ``_step`` takes them), each Newton solve's (start, size, end)
    appended to ``pieces``; the kept factorisation reset first for a fresh step."""
    if step.fresh:
        stepper.kept_factorization = KeptFactorization()
    for size in step.sizes:
        for fraction in stepper.stages:
            dt = size if len(stepper.stages) == 1 else fraction * size
            end = _sub_step(stepper, s, dt, settings, log, False)[0]
            if pieces is not None:
                pieces.append((s, dt, end))
            s = end
    s.t = step.t_end
    return s


@dataclass
class StepJacobian:
    """The Jacobian of one Newton solve (a sub-step of size ``dt`` from ``start`` to ``end``) at its
    solution, in physical unknowns ``y = (u_{n+1}[free], lambda_{n+1})`` and residual ``R =
    (g_free + (G^T lambda)_free, Phi)`` (N, and m or rad for Phi), (n, n) with n = n_free + n_c.

    :attr:`matrix`: Newton's matrix J at the solution (CSC; with joints the augmented one,
    scaled), built when asked for from ``arrays``, copies of its (data, indices, indptr, shape)
    (a scipy matrix costs more to build than a small model's factorisation); ``lu``: its
    factorisation; ``equation_scale`` (n,) and ``unknown_scale`` (n,) the diagonals of D_r and D_c
    (module docstring: ``A = D_r^-1 J D_c^-1``); ``kappa`` (N/m) and ``lam_scale`` (N) their values
    at the multipliers (1 without joints)."""

    stepper: Scheme
    start: State
    dt: float
    end: State
    arrays: tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]
    lu: Factorization
    kappa: float
    lam_scale: float
    equation_scale: np.ndarray
    unknown_scale: np.ndarray

    @cached_property
    def matrix(self) -> sp.csc_matrix:
        """Newton's matrix J (n, n) at the solution."""
        data, indices, indptr, shape = self.arrays
        return sp.csc_matrix((data, indices, indptr), shape=shape)

    @property
    def n_free(self) -> int:
        return self.stepper.asm.n_free

    @property
    def n_c(self) -> int:
        return self.end.lam.size

    def physical(self) -> sp.csc_matrix:
        """A = dR/dy, the unscaled Jacobian (n, n) as a sparse matrix (for tests and small models)."""
        return sp.csc_matrix(sp.diags(1.0 / self.equation_scale) @ self.matrix @ sp.diags(1.0 / self.unknown_scale))

    def solve(self, b: np.ndarray, transpose: bool = False) -> np.ndarray:
        """A^-1 b, or with ``transpose`` A^-T b, for b (n,) or (n, k) in the physical units."""
        b = np.asarray(b, dtype=float)
        rows, cols = self.equation_scale, self.unknown_scale
        if b.ndim == 2:
            rows, cols = rows[:, None], cols[:, None]
        if transpose:
            return rows * self.lu.solve(cols * b, transpose=True)
        return cols * self.lu.solve(rows * b)

    def to_newton(self, y: np.ndarray, residual: bool = False) -> np.ndarray:
        """Physical unknowns (n,) in Newton's, ``D_c^-1 y``; with ``residual``, a physical residual in
        Newton's, ``D_r R``."""
        return y * self.equation_scale if residual else y / self.unknown_scale

    def to_physical(self, y: np.ndarray, residual: bool = False) -> np.ndarray:
        """Newton's unknowns (n,) in physical ones, ``D_c y_N``; with ``residual``, ``D_r^-1 r``."""
        return y / self.equation_scale if residual else y * self.unknown_scale

    def residual(self, dy: np.ndarray | None = None) -> np.ndarray:
        """R (n,) at the solution moved by dy (n,) of the physical unknowns (the free DOFs by the
        scheme's update, the multipliers added); R(0) is zero to Newton's tolerance."""
        stepper, s, asm = self.stepper, self.start, self.stepper.asm
        free = asm.dofs.free
        u1, lam = self.end.u, self.end.lam
        if dy is not None:
            du = np.zeros(asm.n_dof)
            du[free] = dy[:free.size]
            u1 = stepper.update(s, u1.copy(), du)
            lam = lam + dy[free.size:]
        return _residual(stepper, s, self.dt, u1, lam)[0]


def _residual(stepper: Scheme, s: State, dt: float, u1: np.ndarray, lam: np.ndarray, tangent: bool = False
              ) -> tuple[np.ndarray, StepResidual, ConstraintTerms | None, float]:
    """The physical residual R (n,) of the step of dt from s at (u1, lam), and the scheme's residual,
    the joints' terms (None without) and the force scale (N) ``_sub_step`` forms at that point."""
    asm = stepper.asm
    free = asm.dofs.free
    res = stepper.residual(s, dt, u1.copy(), tangent)
    if asm.constraints is None:
        return res.g[free], res, None, res.force_scale
    ct = stepper.constraint_terms(s, dt, u1, lam, res)
    g = res.g + ct.force
    scale = max(res.force_scale, float(np.linalg.norm(ct.force[free])))
    return np.concatenate([g[free], ct.phi]), res, ct, scale


def step_jacobian(stepper: Scheme, start: State, dt: float, end: State, solver: str = "auto") -> StepJacobian:
    """The Jacobian of the step of ``dt`` (s) from ``start`` at its solution ``end`` (a sub-step of
    :func:`sub_steps`), with joints augmented and scaled as ``time_stepping._sub_step`` builds it,
    factorised by ``solver`` (:class:`~flexmb.integrators.newton.NewtonSettings`' names; "auto", as
    Newton's default: the band LU for a narrow band). ModelError if ``end`` does not zero the
    step's residual (to :data:`CONVERGED` of its force scale): a state of another step."""
    asm = stepper.asm
    cs = asm.constraints
    R, res, ct, scale = _residual(stepper, start, dt, end.u, end.lam, tangent=True)
    jac = asm.jacobian_matrix(res.jacobian_data)
    length = asm.characteristic_length
    if cs is not None and not scale:
        scale = asm.inertia_scale * length / dt**2                # _sub_step's idle scale
    size = np.sqrt(np.dot(R[:asm.n_free], R[:asm.n_free]))
    if size > CONVERGED * max(scale, _TINY):
        raise ModelError(f"step_jacobian: the state at t = {end.t:.6g} s is not the solution of the step of "
                         f"{dt:.6g} s from t = {start.t:.6g} s (|g| = {size:.3g} N "
                         f"against the force scale {scale:.3g} N)")
    nf = asm.n_free
    if cs is None:
        ones = np.ones(nf)
        # the factorisation reads the assembly's kept matrix now; the copies keep it for `matrix`
        return StepJacobian(stepper, start, dt, end, _arrays(jac), Factorization(jac, solver=solver), 1.0, 1.0,
                            ones, ones)
    kappa = 100.0 * scale / length
    lam_scale = _lam_scale(stepper, start, dt)
    aug = cs.augmented(ct, jac, asm.dofs.free_position, lam_scale, kappa)
    n_c = end.lam.size
    rows = np.concatenate([np.ones(nf), np.full(n_c, kappa)])
    cols = np.concatenate([np.ones(nf), np.full(n_c, lam_scale)])
    return StepJacobian(stepper, start, dt, end, _arrays(aug), Factorization(aug, solver=solver), kappa, lam_scale,
                        rows, cols)


def _arrays(matrix: sp.csc_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]:
    """Copies of a CSC matrix's data, indices and indptr, and its shape."""
    return matrix.data.copy(), matrix.indices.copy(), matrix.indptr.copy(), matrix.shape


def _lam_scale(stepper: Scheme, s: State, dt: float) -> float:
    """The multipliers' scale (N) of ``_sub_step``'s Newton unknowns: the start's largest
    multiplier, else the force scale of the residual at the predictor (else the idle scale)."""
    largest = float(np.abs(s.lam).max(initial=0.0))
    if largest > 0:
        return largest
    asm = stepper.asm
    u1 = stepper.predict(s, dt)
    presc, by_value = asm.dofs.prescribed, asm.prescribed_by_value
    u1[presc[by_value]] = asm.prescribed_values(s.t + dt)[by_value]
    return stepper.residual(s, dt, u1).force_scale or asm.inertia_scale * asm.characteristic_length / dt**2
