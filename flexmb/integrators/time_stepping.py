"""Time integration with fixed or error-controlled steps, automatic step cut-back and energy/momentum
bookkeeping.

``integrate`` advances a model with a :mod:`scheme <flexmb.integrators.schemes>` and the shared
Newton driver, with fixed steps ``dt`` or with steps chosen from a local error estimate
(``dt=None`` or ``rtol``, :mod:`flexmb.integrators.step_control`). A step whose Newton iteration
fails is retried as two half steps (recursively, up to ``max_cutbacks`` halvings); output is
still recorded at the requested step times, and
every cut-back is entered in the run log (:attr:`~flexmb.results.Result.events`). With
``save_to`` each output step is written to the result file as soon as it is computed; if a step
cannot be completed, the history computed so far is attached to the :class:`TimeIntegrationError`.
``restart_from`` continues a run from the last complete step of its result file: every output
step holds the scheme's whole state (displacements, velocities, the scheme's acceleration,
reactions, work, multipliers and constraint forces), so the continuation equals the run that
was never interrupted. A run that fails says in its error which likely causes it can see and what
flexmb offers against them (:mod:`flexmb.integrators.advice`).
"""
from __future__ import annotations

import dataclasses
import logging
import warnings
from contextlib import closing
from pathlib import Path

import numpy as np

from flexmb.assembly import Assembly
from flexmb.checks import MAX_STEPS, FlexmbWarning, check_integrate, keywords_listed
from flexmb.integrators.advice import diagnose
from flexmb.integrators.newton import (MAX_ROTATION_CORRECTION, MODIFIED_NEWTON_MIN_SIZE, NewtonFailure, NewtonLog,
                                       NewtonSettings, SingularJacobian, newton_solve)
from flexmb.integrators.dissipative import DISSIPATIVE_SCHEMES
from flexmb.integrators.schemes import SCHEMES, MidPoint, Scheme, State
from flexmb.integrators.step_loop import CompiledSteps
from flexmb.integrators.spatial_step_loop import SpatialSteps
from flexmb.integrators.step_control import FIRST_STEP, MAX_STEP, MIN_STEP, ORDER, StepControl, error_norm
from flexmb.model import Model, ModelError
from flexmb.model_digest import changed_parts
from flexmb.multibody.initial import check_initial_state
from flexmb.progress import Progress
from flexmb.results import ModelLayout, TimeHistory, load_result

logger = logging.getLogger("flexmb")

#: every time integration scheme by name; the dissipative ones take ``rho_inf``
ALL_SCHEMES = {**SCHEMES, **DISSIPATIVE_SCHEMES}



class TimeIntegrationError(RuntimeError):
    """A step failed even after cut-back; ``history`` holds everything computed before it."""

    def __init__(self, message: str, history: TimeHistory) -> None:
        super().__init__(message)
        self.history = history


class BranchChangeError(TimeIntegrationError):
    """A cut-back's half steps and the full step lead to different solutions (see
    :func:`_verify_cutback`): the step size does not resolve the motion; ``history`` holds every
    step before it."""


@keywords_listed
def integrate(model: Model | Assembly, dt: float | None = None, t_end: float | None = None,
              scheme: str = "mid-point",
              u0: np.ndarray | None = None, v0: np.ndarray | None = None, t0: float = 0.0,
              newton: NewtonSettings | None = None, max_cutbacks: int = 6, output_every: int = 1,
              progress: bool | None = None, save_to: str | Path | None = None,
              keep_newton_logs: bool = False, max_steps: int | None = None, overwrite: bool = False,
              restart_from: str | Path | None = None, cutback_check: str = "error",
              rho_inf: float | None = None, allow_changed: bool = False, rtol: float | None = None,
              dt_min: float | None = None, dt_max: float | None = None) -> TimeHistory:
    """Integrate from ``t0`` to ``t_end`` (s) with fixed steps ``dt`` (s), or with error-controlled
    steps (``dt=None`` or ``rtol`` given).

    Parameters
    ----------
    model : the model, or an :class:`~flexmb.assembly.Assembly` built from it (reused).
    dt : the fixed step (s), a whole fraction of t_end - t0; with ``rtol`` the first step (within
        dt_min .. dt_max). None: error-controlled steps (``rtol`` default 1e-3), the first step
        1e-3 (t_end - t0).
    t_end : the end of the run (s), required.
    rtol : error-controlled steps: the largest local error of a step relative to its motion
        (dimensionless; see :mod:`flexmb.integrators.step_control`). Each pair of steps is also
        taken as one step of their length, and their difference estimates the error; a pair above
        rtol is rejected (run log entry "rejected") and taken again with smaller steps. The steps
        are in ``history.step_sizes``; output is every ``output_every``-th step and at t_end, at
        non-uniform times. Three solves per pair of steps. Not with ``restart_from``.
    dt_min, dt_max : bounds of the error-controlled steps (s); default 1e-10 and 0.1 of
        t_end - t0. A step that needs less than dt_min ends the run with TimeIntegrationError.
    scheme : ``"mid-point"`` (energy conserving), ``"composed-mid-point"`` (the same composed to
        fourth order: five mid-point sub-steps per step, see
        :class:`~flexmb.integrators.schemes.ComposedMidPoint`), ``"newmark"`` (trapezoidal baseline),
        ``"generalized-alpha"`` (Chung & Hulbert 1993, second order, numerical dissipation),
        ``"energy-decaying"`` (the mid-point scheme with strain-based numerical dissipation:
        energy decays monotonically, momenta conserved, first order in the strain rate; trusses
        and planar beams) or ``"energy-decaying-velocity"`` (the same with dissipation in the
        kinematics too); see :mod:`flexmb.integrators.dissipative`.
    u0, v0 : initial displacements and velocities over all DOFs (n_dof,); default zero.
        Prescribed DOFs take the value and velocity of their prescribed functions at t0. At the
        rotation DOFs of 3D nodes, u0 is the rotation vector and v0 the spatial angular velocity.
    output_every : record every k-th step.
    progress : show a progress bar (default: when stderr is a terminal, see :mod:`flexmb.progress`).
    save_to : result file (HDF5, ``.h5``) that receives every output step as soon as it is
        computed (:mod:`flexmb.io.result_file`); read it with :func:`flexmb.load_result`. With
        ``restart_from`` and no ``save_to``, the restarted file itself.
    keep_newton_logs : keep every step's Newton log in ``history.newton_logs`` (small planar beam
        models and small spatial models of rigid and 3D modal bodies, whose fixed steps otherwise run in
        one compiled loop, :mod:`flexmb.integrators.step_loop`, :mod:`flexmb.integrators.spatial_step_loop`,
        then take the Python step loop: the same states, 1.5-2 times the time per step).
    max_steps : more time steps than this are refused as a likely unit mistake (default
        :data:`flexmb.checks.MAX_STEPS`, one million); error-controlled steps stop with
        TimeIntegrationError when they reach it before t_end.
    overwrite : replace an existing ``save_to`` file (otherwise the run refuses to start).
    restart_from : result file of an earlier run of this model (finished, failed or killed) to
        continue from its last complete step up to ``t_end``: the model must have the file's
        nodes, DOFs, element groups and joints, and ``scheme`` and ``dt`` must be the file's;
        ``t0``, ``u0`` and ``v0`` come from the file. The steps are appended to that file (or,
        with ``save_to`` naming another file, all steps are written there), the run log records
        the restart, and the work (so the total energy) continues. The returned history holds
        every step from the file's start.
    allow_changed : continue ``restart_from`` with a model whose data (coordinates, element
        properties, masses, supports, loads, ...) differ from the run that wrote the file, which
        is refused otherwise (the file stores a hash of the model's data, :mod:`flexmb.model_digest`).
    cutback_check : what to do when a cut-back's two half steps and the full step, solved again
        from their result, lead to different solutions (:func:`_verify_cutback`: they let in
        different work, or end apart): ``"error"`` stops the run with :class:`BranchChangeError`,
        ``"warn"`` enters a warning in the run log and carries on with the half steps, ``"off"``
        skips the check.
    rho_inf : spectral radius at infinite frequency in [0, 1] of the dissipative schemes (default
        0.8): 1 is no numerical dissipation, 0 removes the highest modes in one step. Not taken
        by ``"mid-point"`` and ``"newmark"``; a restart takes the file's.

    Returns
    -------
    The :class:`~flexmb.results.TimeHistory` at the output steps.

    Raises
    ------
    TimeIntegrationError : a step failed after ``max_cutbacks`` halvings (or, with error-controlled
        steps, needed less than dt_min or more than max_steps); its ``history`` holds every step
        before it (also in ``save_to``). The message names the likely causes the run can see and
        flexmb's remedies (:func:`flexmb.integrators.advice.diagnose`).
    BranchChangeError : a cut-back changed the solution (see ``cutback_check``); its ``history``
        holds every step before the step that needed it.
    ResultFileError : the result file could not be written (disk full, no permission); the
        file keeps every step written before, the error's ``result`` holds all computed steps.
    FileExistsError : ``save_to`` exists and ``overwrite`` is false.
    """
    asm = model if isinstance(model, Assembly) else Assembly(model)
    adaptive = dt is None or rtol is not None
    if adaptive and restart_from is not None:
        raise ModelError(f"restart_from {restart_from}: a restart continues fixed steps only; to continue with "
                         "error-controlled steps, start a new run from the file's last state (u0=r.u[-1], "
                         "v0=r.v[-1], t0=r.t[-1] of r = flexmb.load_result(file))")
    restarted: tuple[TimeHistory, State] | None = None
    if restart_from is not None:
        restarted = _restart_point(asm, Path(restart_from), scheme, dt, t0, u0, v0, rho_inf, allow_changed)
        t0 = restarted[0].meta["t0"]
    check_integrate(asm, dt, t_end, t0, u0, v0, newton, max_cutbacks, output_every, max_steps, rtol, dt_min, dt_max)
    if scheme not in ALL_SCHEMES:
        raise ModelError(f"integrate: unknown scheme {scheme!r}; choose one of {', '.join(ALL_SCHEMES)}")
    if rho_inf is not None and scheme not in DISSIPATIVE_SCHEMES:
        raise ModelError(f"integrate: rho_inf = {rho_inf!r} is a parameter of {' and '.join(DISSIPATIVE_SCHEMES)}, "
                         f"not of scheme {scheme!r}")
    if cutback_check not in CUTBACK_CHECKS:
        raise ModelError(f"integrate: cutback_check must be one of {', '.join(map(repr, CUTBACK_CHECKS))}, "
                         f"got {cutback_check!r}")
    if asm.model.vector_loads:
        load = asm.model.vector_loads[0]
        raise ModelError(f"{load.kind} load at node {load.node}: configuration-dependent loads are "
                         "supported in statics and buckling only, not yet in time integration")
    if restarted is not None and rho_inf is None:
        rho_inf = restarted[0].meta.get("rho_inf")              # a restart continues with the file's
    stepper: Scheme = ALL_SCHEMES[scheme](asm) if rho_inf is None else ALL_SCHEMES[scheme](asm, rho_inf=rho_inf)
    target = Path(save_to) if save_to is not None else None
    control = None
    if adaptive:
        span = t_end - t0
        rtol = DEFAULT_RTOL if rtol is None else float(rtol)
        dt_min = MIN_STEP * span if dt_min is None else float(dt_min)
        dt_max = MAX_STEP * span if dt_max is None else float(dt_max)
        dt = min(dt_max, max(dt_min, FIRST_STEP * span if dt is None else float(dt)))
        # the controller sizes pairs of steps (step_control (1)): twice the steps' bounds
        control = StepControl(rtol, 2.0 * dt_min, 2.0 * dt_max, ORDER[scheme])
    if restarted is None:
        state = start_state(stepper, t0, u0, v0)
        history = TimeHistory(scheme, dt, ModelLayout.from_assembly(asm))
        history.meta["t0"] = float(t0)
        if scheme in DISSIPATIVE_SCHEMES:
            history.meta["rho_inf"] = stepper.rho_inf
        if control is not None:
            history.meta.update(rtol=control.rtol, dt_min=dt_min, dt_max=dt_max)
        k_done, resume, restart_note = 0, False, ""
        start = state
    else:
        history, state = restarted
        k_done = int(round((state.t - t0) / dt))
        if k_done >= int(round((t_end - t0) / dt)):
            raise ModelError(f"restart_from {restart_from}: the run already reaches t = {state.t:.6g} s; "
                             f"ask for a t_end after it (got {t_end:g} s)")
        resume = target is None or (target.exists() and target.samefile(restart_from))
        target = Path(restart_from) if resume else target
        restart_note = (f"continued from step {k_done} (t = {state.t:.6g} s) of {restart_from} "
                        f"(status {history.meta['status']}) to t_end = {t_end:g} s")
        start = State(float(history.t[0]), history.u[0].copy(), history.v[0].copy(), history.a[0].copy(),
                      history.reactions[0].copy())
    settings = newton or NewtonSettings()
    run = _Run(stepper, history, settings, max_cutbacks, keep_newton_logs, cutback_check, output_every)
    label = f"{scheme} rtol={control.rtol:g}" if control is not None else f"{scheme} dt={dt:g}"
    with history.recording(target, overwrite, resume), closing(Progress(t_end - t0, label, "s", progress)) as bar:
        if restarted is None:
            history.record(asm, state, 0)
        else:
            history.log_event(state.t, "restart", restart_note)
        try:
            if control is None:
                run.fixed(state, t0, dt, t_end, k_done, bar)
            else:
                run.adaptive(state, 2.0 * dt, t_end, control, MAX_STEPS if max_steps is None else int(max_steps), bar)
        except (NewtonFailure, _StepLimit) as exc:
            at, step = run.state.t, run.dt
            if isinstance(exc, NewtonFailure):
                message = f"{scheme}: step to t = {at + step:.6g} s failed after {max_cutbacks} cut-backs: {exc}"
            else:
                message = f"{scheme}: {exc}"
            message += "\n" + diagnose(asm, scheme, start, run.state, step)
            history.log_event(at, "error", message)
            if target is not None:
                message += f"\nresults up to t = {at:.6g} s are in {target}"
            if isinstance(exc, NewtonFailure):
                message += f"\n{exc.log.format()}"
            raise TimeIntegrationError(message, history) from exc
        except BranchChangeError as exc:
            message = str(exc) + "\n" + diagnose(asm, scheme, start, run.state, run.dt)
            exc.args = (message,)
            raise
    return history


def start_state(stepper: Scheme, t0: float, u0: np.ndarray | None, v0: np.ndarray | None) -> State:
    """The state a run starts from at t0: u0, v0 (n_dof,; default zero) with the prescribed DOFs'
    values and velocities at t0, checked (:func:`~flexmb.multibody.initial.check_initial_state`),
    and the scheme's start quantities (initial accelerations, reactions, multipliers)."""
    asm = stepper.asm
    n = asm.n_dof
    u0 = np.zeros(n) if u0 is None else np.array(u0, dtype=float)
    v0 = np.zeros(n) if v0 is None else np.array(v0, dtype=float)
    u0[asm.dofs.prescribed] = asm.prescribed_values(t0)
    v0[asm.dofs.prescribed] = asm.prescribed_velocities(t0)
    check_initial_state(asm, u0, v0, t0)
    return stepper.initial_state(t0, u0, v0)


#: rtol of error-controlled steps when neither dt nor rtol is given
DEFAULT_RTOL = 1e-3


class _StepLimit(RuntimeError):
    """An error-controlled run needs a step below dt_min, or more steps than max_steps."""


class _Run:
    """The step loops of one run: fixed steps and error-controlled steps. ``state`` and ``dt`` are
    the last complete state and the step being taken (for the failure message)."""

    def __init__(self, stepper: Scheme, history: TimeHistory, settings: NewtonSettings, max_cutbacks: int,
                 keep_logs: bool, cutback_check: str, output_every: int) -> None:
        self.stepper, self.history, self.settings = stepper, history, settings
        self.max_cutbacks, self.keep_logs, self.cutback_check = max_cutbacks, keep_logs, cutback_check
        self.output_every = output_every
        self.state: State | None = None
        self.dt = 0.0

    def _advance(self, dt: float) -> tuple[State, int]:
        self.dt = dt
        return _advance(self.stepper, self.state, dt, self.settings, self.max_cutbacks, self.history,
                        self.keep_logs, self.cutback_check)

    def fixed(self, state: State, t0: float, dt: float, t_end: float, k_done: int, bar: Progress) -> None:
        """Steps of dt from step k_done to t_end, output every ``output_every``-th; runs of steps
        in one compiled call where the model's steps take one (:mod:`flexmb.integrators.step_loop`),
        the same states."""
        history = self.history
        self.state = state
        n_steps = int(round((t_end - t0) / dt))
        self._fixed = (t0, dt, n_steps, bar)
        compiled = (CompiledSteps.for_run(self.stepper, self.settings, self.keep_logs, MODIFIED_NEWTON_MIN_SIZE)
                    or SpatialSteps.for_run(self.stepper, self.settings, self.keep_logs, MODIFIED_NEWTON_MIN_SIZE))
        k = k_done + 1
        while k <= n_steps:
            if compiled is not None:
                k = compiled.run(self, t0, dt, k, n_steps)
                if k > n_steps:
                    break
            t_target = t0 + k * dt
            cutbacks = history.cutbacks
            new, its = self._advance(t_target - self.state.t)
            new.t = t_target                                     # no drift of the output times
            self.accept(new, its, k, history.cutbacks - cutbacks)
            k += 1

    def accept(self, new: State, iterations: int, k: int, cutbacks: int = 0) -> None:
        """Step k of :meth:`fixed` ended in ``new`` after ``iterations`` Newton iterations and
        ``cutbacks`` cut-backs: the run goes on from it; its size noted, recorded at output steps."""
        t0, dt, n_steps, bar = self._fixed
        self.state = new
        self.history.note_step(dt)
        if k % self.output_every == 0 or k == n_steps:
            self.history.record(self.stepper.asm, new, iterations)
        if bar.enabled:
            bar.update(new.t - t0, dt=f"{dt:.3g}", newton=iterations, cutbacks=cutbacks)

    def adaptive(self, state: State, pair: float, t_end: float, control: StepControl, max_steps: int,
                 bar: Progress) -> None:
        """Error-controlled steps, the first pair of steps of ``pair`` s (see
        :mod:`flexmb.integrators.step_control`): each pair of steps is checked against one step of
        their length; a pair whose error norm exceeds 1 is rejected (run log "rejected") and taken
        again with the smaller pair the controller proposes. Both steps of an accepted pair are
        recorded (output every ``output_every``-th step)."""
        asm, history = self.stepper.asm, self.history
        self.state, t0 = state, state.t
        # the last pair ends at t_end; a remainder below this is absorbed by the pair before
        close = 1e-9 * (t_end - t0)
        taken = 0
        while t_end - self.state.t > close:
            remaining = t_end - self.state.t
            # rather than a sliver after the last pair, two equal pairs
            if pair >= remaining - close:
                pair = remaining
            elif pair > 0.5 * remaining:
                pair = 0.5 * remaining
            start, cutbacks = self.state, history.cutbacks
            try:
                # the whole step only measures the error: without cut-back, and its failure is a rejection
                self.dt = pair
                whole = _step(self.stepper, start, pair, self.settings, history, False)[0]
            except NewtonFailure:
                whole = None
            first, its1 = self._advance(0.5 * pair)
            self.state = first
            second, its2 = self._advance(0.5 * pair)
            self.state = start
            err, dof = (error_norm(asm, control.rtol, control.order, start, whole, second, pair)
                        if whole is not None else (np.inf, -1))
            cut_back = history.cutbacks > cutbacks
            if err > 1.0:
                if pair <= control.dt_min * (1.0 + 1e-9):
                    raise _StepLimit(
                        f"at t = {start.t:.6g} s the local error estimate is {err:.3g} rtol at "
                        f"{asm.dofs.label(dof)} with the smallest step dt_min = {0.5 * control.dt_min:.3g} s")
                proposed = control.next_step(pair, err, cut_back)
                why = (f"local error {err:.3g} rtol at {asm.dofs.label(dof)}" if whole is not None
                       else f"the step of {pair:.4g} s that checks them did not converge")
                history.log_event(start.t, "rejected",
                                  f"steps of {0.5 * pair:.4g} s: {why}; again with {0.5 * proposed:.4g} s")
                pair = proposed
                continue
            if t_end - second.t <= close:
                second.t = t_end
            for new, its in ((first, its1), (second, its2)):
                self.state = new
                taken += 1
                history.note_step(0.5 * pair)
                if taken % self.output_every == 0 or new.t == t_end:
                    history.record(asm, new, its)
            if bar.enabled:
                bar.update(second.t - t0, dt=f"{0.5 * pair:.3g}", newton=its1 + its2,
                           cutbacks=history.cutbacks - cutbacks)
            if taken >= max_steps and second.t < t_end:
                raise _StepLimit(f"{taken} steps (max_steps) reached t = {second.t:.6g} s only, with steps "
                                    f"down to {history.step_sizes.min():.3g} s")
            pair = control.next_step(pair, err, cut_back)


def _restart_point(asm: Assembly, path: Path, scheme: str, dt: float, t0: float, u0: np.ndarray | None,
                   v0: np.ndarray | None, rho_inf: float | None = None,
                   allow_changed: bool = False) -> tuple[TimeHistory, State]:
    """The history in result file ``path`` (every complete step) and the scheme's state at its
    last step; refuses a file that does not belong to this model (its nodes, DOFs, groups and
    joints; and, unless ``allow_changed``, the data of its parts by the hashes in the file),
    scheme and dt."""
    where = f"restart_from {path}"
    if u0 is not None or v0 is not None:
        raise ModelError(f"{where}: the initial state comes from the file; do not pass u0 or v0")
    history = load_result(path)
    if not isinstance(history, TimeHistory):
        raise ModelError(f"{where}: holds a {history.kind} result, not a time integration")
    if history.n_steps == 0:
        raise ModelError(f"{where}: the file holds no complete step to continue from")
    if "t0" not in history.meta or np.size(history.a[-1]) == 0:
        raise ModelError(f"{where}: the file was written by an older flexmb (format version 1) without the "
                         "accelerations a restart needs; run again from the start")
    stored, layout = history.layout, ModelLayout.from_assembly(asm)
    if stored.digest and stored.coordinates.shape == layout.coordinates.shape:
        # moved nodes are a change of the model's data (below), not of its numbering
        differences = stored.differences(dataclasses.replace(layout, coordinates=stored.coordinates))
    else:
        differences = stored.differences(layout)
    if differences:
        raise ModelError(f"{where}: the model differs from the one that wrote the file (file vs model): "
                         + "; ".join(differences[:4]))
    changed = (changed_parts(stored.digest, layout.model_digest(), [g.name for g in layout.groups])
               if stored.digest else [])
    if changed and not allow_changed:
        listed = ", ".join(changed[:-1]) + " and " + changed[-1] if len(changed) > 1 else changed[0]
        raise ModelError(f"{where}: the model differs from the one that wrote the file in its {listed}; pass "
                         "allow_changed=True to continue with the changed model (its energy then jumps at the restart)")
    if "rtol" in history.meta:
        raise ModelError(f"{where}: the run took error-controlled steps (rtol = {history.meta['rtol']:g}); a restart "
                         "continues fixed steps only. Start a new run from the file's last state (u0=r.u[-1], "
                         "v0=r.v[-1], t0=r.t[-1] of r = flexmb.load_result(file))")
    if scheme != history.scheme:
        raise ModelError(f"{where}: the run used scheme {history.scheme!r}; a restart continues it with the same "
                         f"scheme (got {scheme!r})")
    if rho_inf is not None and rho_inf != history.meta.get("rho_inf"):
        raise ModelError(f"{where}: the run used rho_inf = {history.meta.get('rho_inf')!r}; a restart continues with "
                         f"it (got rho_inf = {rho_inf!r}; leave rho_inf out)")
    if dt != history.dt:
        raise ModelError(f"{where}: the run used dt = {history.dt!r} s; a restart continues with the same step "
                         f"(got dt = {dt!r} s). To change the step, start a new run from the file's last state "
                         "(u0=r.u[-1], v0=r.v[-1], t0=r.t[-1] of r = flexmb.load_result(file)); its work and "
                         "energy bookkeeping then start anew")
    if t0 not in (0.0, history.meta["t0"]):
        raise ModelError(f"{where}: the run started at t0 = {history.meta['t0']:g} s (got t0 = {t0:g} s); leave t0 "
                         "out, a restart takes it from the file")
    cs = asm.constraints
    stretch = history.stretch[-1].copy() if np.size(history.stretch[-1]) else None
    if issubclass(ALL_SCHEMES[scheme], MidPoint) and asm.director_dofs.size and stretch is None:
        raise ModelError(f"{where}: the file holds no director stretch rates for the model's cubic-mass beams "
                         "(written by an older flexmb); run again from the start")
    state = State(float(history.t[-1]), history.u[-1].copy(), history.v[-1].copy(), history.a[-1].copy(),
                  history.reactions[-1].copy(), float(history.work[-1]), history.multipliers[-1].copy(),
                  history.constraint_force[-1].copy() if cs is not None else None, stretch=stretch,
                  dissipated=float(history.dissipated[-1]), joint_work=float(history.joint_work[-1]))
    return history, state


def _advance(stepper: Scheme, s: State, dt: float, settings: NewtonSettings, cutbacks_left: int,
             history: TimeHistory, keep_logs: bool, cutback_check: str = "error") -> tuple[State, int]:
    """One step of size dt; on failure two half steps, verified against the full step
    (:func:`_verify_cutback`). Returns the new state and the Newton iterations."""
    try:
        return _step(stepper, s, dt, settings, history, keep_logs)
    except NewtonFailure as exc:
        if cutbacks_left == 0:
            raise NewtonFailure(f"sub-step t = {s.t:.8g} .. {s.t + dt:.8g} s (dt = {dt:.4g} s): {exc}",
                                exc.log) from exc
    history.cutbacks += 1
    history.log_event(s.t, "cutback", f"step dt = {dt:.4g} s did not converge; two steps of dt/2")
    logger.info("step at t = %.6g s, dt = %.3g s failed; retrying with dt/2", s.t, dt)
    half, its1 = _advance(stepper, s, 0.5 * dt, settings, cutbacks_left - 1, history, keep_logs, cutback_check)
    end, its2 = _advance(stepper, half, 0.5 * dt, settings, cutbacks_left - 1, history, keep_logs, cutback_check)
    if cutback_check != "off":
        mismatch = _verify_cutback(stepper, s, dt, end, settings, history)
        if mismatch is not None:
            message = (f"{stepper.name}: branch change detected in the cut-back of the step t = {s.t:.8g} .. "
                       f"{s.t + dt:.8g} s (dt = {dt:.4g} s): {mismatch}. The step does not resolve the motion "
                       "here, and continuing from the half steps would follow another solution branch; "
                       "reduce dt")
            if cutback_check == "error":
                history.log_event(s.t, "error", message)
                raise BranchChangeError(message, history)
            history.log_event(s.t, "warning", message)
            warnings.warn(message, FlexmbWarning, stacklevel=2)
    return end, its1 + its2


#: answers to a cut-back that changed the solution (``integrate(..., cutback_check=...)``)
CUTBACK_CHECKS = ("error", "warn", "off")
#: a cut-back's half steps and its full step exchange different energy with loads, supports and
#: drives: by more than this fraction of the step's energy scale (see :func:`_verify_cutback`) ...
CUTBACK_ENERGY_TOL = 0.1
#: ... or end apart by more than this fraction of the step's own increment
CUTBACK_MOTION_TOL = 0.5


def _verify_cutback(stepper: Scheme, s: State, dt: float, end: State, settings: NewtonSettings,
                    history: TimeHistory) -> str | None:
    """Solve the full step again, starting Newton from the two half steps' result, and compare.

    A cut-back is meant as a globalisation of Newton: the half steps should reach, up to the
    scheme's local error, the state the full step's equations have near them. Two findings say
    they changed the solution instead, and are returned as text (None: confirmed):

    * energy: the mechanical energy K + U after the half steps and after the full step differs
      by more than CUTBACK_ENERGY_TOL of the step's energy scale (the largest strain energy of
      the three states plus the larger work of loads, supports and drives over the step). Both
      paths balance K + U - W exactly in the mid-point scheme, so this is the difference of the
      work they let in: exactly zero for a closed conservative system, whatever the step size
      resolves, but large when a drive pumps energy into an unresolved motion (the cubic-mass
      spin-up at dt = 0.04 s) or the two paths fall into different wells of the potential;
    * configuration: the two end more than CUTBACK_MOTION_TOL of the step's own increment apart
      (a mechanism changing its assembly mode).

    A full step without a solution near the half steps cannot be compared; it is entered in the
    run log as unconfirmed.
    """
    asm = stepper.asm
    try:
        full, _ = _step(stepper, s, dt, settings, history, False, guess=end)
    except NewtonFailure:
        history.log_event(s.t, "warning", f"cut-back of the step t = {s.t:.8g} .. {s.t + dt:.8g} s unconfirmed: "
                                          "the full step has no solution near the two half steps")
        return None
    strain = [asm.strain_energy(x.u) for x in (s, end, full)]
    mechanical = [asm.kinetic_energy(x.v, x.u, x.stretch) + u for x, u in zip((end, full), strain[1:])]
    scale = max(strain) + max(abs(end.work - s.work), abs(full.work - s.work))
    if abs(mechanical[0] - mechanical[1]) > CUTBACK_ENERGY_TOL * scale:
        return (f"K + U = {mechanical[0]:.8g} J after the two half steps but {mechanical[1]:.8g} J after the "
                f"full step (work over the step {end.work - s.work:.4g} J against {full.work - s.work:.4g} J; "
                f"strain energy {strain[1]:.4g} J against {strain[2]:.4g} J)")
    weight = np.ones(asm.n_dof)
    weight[~np.isin(np.arange(asm.n_dof), asm.dofs.translations())] = asm.model.characteristic_length
    free = asm.dofs.free
    apart = float(np.linalg.norm((weight * (full.u - end.u))[free]))
    step = float(np.linalg.norm((weight * (end.u - s.u))[free]))
    if apart > CUTBACK_MOTION_TOL * step:
        return (f"the full step ends {apart:.3g} m away from the two half steps, which moved {step:.3g} m "
                "(rotations times the model size)")
    return None


def _step(stepper: Scheme, s: State, dt: float, settings: NewtonSettings, history: TimeHistory,
          keep_logs: bool, guess: State | None = None) -> tuple[State, int]:
    """One step of size dt from s: the scheme's sub-steps (:attr:`Scheme.stages`) in order.
    Returns the end state and the Newton iterations of all sub-steps. ``guess`` starts Newton
    of a single-stage scheme; a composed step's sub-steps start from the predictor (their
    intermediate states have nothing to compare with)."""
    if len(stepper.stages) == 1:
        return _sub_step(stepper, s, dt, settings, history, keep_logs, guess)
    iterations = 0
    for fraction in stepper.stages:
        s, its = _sub_step(stepper, s, fraction * dt, settings, history, keep_logs)
        iterations += its
    return s, iterations


def _sub_step(stepper: Scheme, s: State, dt: float, settings: NewtonSettings, history: TimeHistory,
              keep_logs: bool, guess: State | None = None) -> tuple[State, int]:
    """One step of size dt (negative for a composed scheme's backward sub-step) from s by
    Newton, started from the scheme's predictor or from ``guess``."""
    asm = stepper.asm
    free, presc = asm.dofs.free, asm.dofs.prescribed
    nf = free.size
    cs = asm.constraints
    u1 = stepper.predict(s, dt) if guess is None else guess.u.copy()
    # fixed spatial rotations stay fixed through zero spins; the rest take their prescribed value
    set_presc = asm.prescribed_by_value
    u1[presc[set_presc]] = asm.prescribed_values(s.t + dt)[set_presc]
    u1_start = u1.copy()
    length = asm.characteristic_length

    last = {}                                   # Newton's last evaluation is at its solution
    lam_scale = [1.0]
    # a model at rest under no force has a force scale of zero, and |kappa Phi| <= tol F would
    # then hold for any Phi: a driven joint that must set it moving was silently ignored. Its
    # scale is then the inertia force of moving the model's size within the step.
    idle_scale = asm.inertia_scale * length / dt**2 if cs is not None else 0.0

    def residual(x: np.ndarray, tangent: bool = True):
        u1[free] = x[:nf]
        res = last["res"] = stepper.residual(s, dt, u1, tangent)
        jac = asm.jacobian_matrix(res.jacobian_data) if tangent else None
        if cs is None:
            return res.g[free], jac, res.force_scale
        # with joints, Newton solves for (u_free, lambda / lambda_scale) the augmented system
        # [g + G^T lambda; kappa Phi] = 0; kappa = 100 F / L makes |r| <= tol F mean
        # |Phi| <= 1e-2 tol L, and it does not change the Newton correction
        lam = x[nf:] * lam_scale[0]
        ct = last["ct"] = stepper.constraint_terms(s, dt, u1, lam, res)
        res.g = res.g + ct.force
        scale = max(res.force_scale, float(np.linalg.norm(ct.force[free]))) or idle_scale
        kappa = 100.0 * scale / length
        J = cs.augmented(ct, jac, asm.dofs.free_position, lam_scale[0], kappa) if tangent else None
        return np.concatenate([res.g[free], kappa * ct.phi]), J, scale

    # the rotations whose Newton corrections are capped (spatial, else planar); without rotations
    # every unknown (and multiplier) is corrected additively
    capped = asm.rotation_dofs.ravel() if asm.rotation_dofs.size else asm.planar_rotations

    def update(x: np.ndarray, dx: np.ndarray) -> np.ndarray:
        du = np.zeros(asm.n_dof)
        du[free] = dx[:nf]
        u1[free] = x[:nf]
        # a nearly free spin mode (a slender beam about its own axis) can ask for several
        # radians from a small residual far from the solution, and a coarse planar beam
        # spinning 0.5 rad per step 1.3 rad at its tip: cap rotation corrections
        largest = np.abs(du[capped]).max()
        if largest > MAX_ROTATION_CORRECTION:
            du *= MAX_ROTATION_CORRECTION / largest
            dx = dx * (MAX_ROTATION_CORRECTION / largest)
        return np.concatenate([stepper.update(s, u1, du)[free], x[nf:] + dx[nf:]])

    if cs is not None:
        # Newton works on lambda / lambda_scale: the last multipliers' size, or at the start
        # (no multipliers yet) the force scale of the step's first residual
        largest = float(np.abs(s.lam).max(initial=0.0))
        lam_scale[0] = largest if largest > 0 else (stepper.residual(s, dt, u1).force_scale or idle_scale)
    lam0 = (s.lam if guess is None else guess.lam) / lam_scale[0]
    # a small model of one planar beam group, or of rigid and 3D modal bodies (joints too), solves the
    # whole step in one compiled call (the same iterates); u1 then holds the solution and the
    # residual terms at it come along
    modified = nf + lam0.size >= MODIFIED_NEWTON_MIN_SIZE
    check_singular = not stepper.regular_inertia

    def newton_update():
        """newton_solve's update: :func:`update` with spatial rotations; without them, where every
        scheme's update adds, the planar rotations' cap and the sum on Newton's unknowns (the same
        values, without the scatter into all DOFs); None without rotations."""
        if asm.rotation_dofs.size or not capped.size:
            return update if capped.size else None
        at = asm.free_planar_rotations                             # Newton's unknowns among them

        def add_capped(x: np.ndarray, dx: np.ndarray) -> np.ndarray:
            largest = np.abs(dx[at]).max(initial=0.0)
            if largest > MAX_ROTATION_CORRECTION:
                dx = dx * (MAX_ROTATION_CORRECTION / largest)
            return x + dx

        return add_capped

    def solve() -> tuple[np.ndarray, NewtonLog]:
        """Newton from u1 (and lam0); u1 receives the solution."""
        x0 = u1[free] if cs is None else np.concatenate([u1[free], lam0])
        solved = (None if modified else stepper.solve_step(s, dt, u1, settings, length, check_singular) if cs is None
                  else stepper.solve_joint_step(s, dt, u1, lam0, lam_scale[0], idle_scale, settings, length,
                                                check_singular))
        if solved is not None:
            log, last["res"], *joint = solved
            if joint:                             # with joints: their terms at the solution, and x
                last["ct"], x0 = joint
            return x0, log
        magnitudes = asm.round_off_lengths[free]
        if cs is not None:                                         # the multipliers, scaled to about 1
            magnitudes = np.concatenate([magnitudes, np.ones(lam0.size)])
        x, log = newton_solve(residual, x0, length, settings, newton_update(), modified=modified,
                              magnitudes=magnitudes, check_singular=check_singular, kept=stepper.kept_factorization,
                              kept_key=dt)
        u1[free] = x[:nf]
        return x, log

    try:
        try:
            x, log = solve()
        except NewtonFailure as exc:
            # a second start from the other predictor (accelerations, no rigid motion of the rotating
            # nodes) before a cut-back: where the step Jacobian is near the limit of double precision
            # (Simo's beam of 16384 elements at dt = 0.04 s: condition 1e15 to 1e17) Newton's fate
            # depends on its start, and the two starts fail at different steps
            other = stepper.predict(s, dt, rigid=False) if guess is None else None
            if other is None or (isinstance(exc, SingularJacobian) and exc.iteration == 0):
                raise
            other[presc[set_presc]] = u1_start[presc[set_presc]]
            if np.array_equal(other, u1_start):
                raise
            u1[:] = other
            try:
                x, log = solve()
            except NewtonFailure:
                raise exc from None
            history.log_event(s.t, "retry", f"Newton failed from the rigid-motion predictor ({exc.log.summary()}) "
                                              "and converged from the acceleration predictor")
    except SingularJacobian as exc:
        if exc.iteration == 0:
            # singular at the predictor: structural (no smaller step changes it) unless mass
            # regularises it; imported here, the diagnostics sit above the integrators
            from flexmb.analysis.diagnostics import SingularSystemError, raise_if_structural_in_dynamics

            try:
                raise_if_structural_in_dynamics(asm, exc.matrix, stepper.name, s.t, dt, u1_start)
            except SingularSystemError as error:
                history.log_event(s.t, "error", str(error))
                error.result = history
                raise
        raise
    if keep_logs:
        history.newton_logs.append(log)
    history.note_round_off(s.t, log)
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug("t = %.6g s: %d Newton iterations (%s)\n%s", s.t + dt, log.iterations, log.criterion,
                     log.format())
    res = last["res"]
    # Newton's last residual was evaluated at its solution u1: its kinematics are the step's
    v1, a1 = (res.velocity, res.acceleration) if res.velocity is not None else stepper.kinematics(s, dt, u1)
    reaction = stepper.reaction(res)
    work = s.work + stepper.work_increment(s, res, u1, reaction)
    dissipated = s.dissipated + stepper.dissipation_increment(s, res, u1)
    stretch = stepper.end_stretch(s, u1, dt, res)
    if cs is None:
        return State(s.t + dt, u1, v1, a1, reaction, work, stretch=stretch, dissipated=dissipated), log.iterations
    force = last["ct"].force
    joint_work = stepper.constraint_work(s, force, u1)
    return (State(s.t + dt, u1, v1, a1, reaction, work + joint_work, x[nf:] * lam_scale[0], force, stretch=stretch,
                  dissipated=dissipated, joint_work=s.joint_work + joint_work), log.iterations)
