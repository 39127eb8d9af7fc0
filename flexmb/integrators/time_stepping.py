"""Fixed-step time integration with automatic step cut-back and energy/momentum bookkeeping.

``integrate`` advances a model with a :mod:`scheme <flexmb.integrators.schemes>` and the shared
Newton driver. A step whose Newton iteration fails is retried as two half steps (recursively,
up to ``max_cutbacks`` halvings); output is still recorded at the requested step times, and
every cut-back is entered in the run log (:attr:`~flexmb.results.Result.events`). With
``save_to`` each output step is written to the result file as soon as it is computed; if a step
cannot be completed, the history computed so far is attached to the :class:`TimeIntegrationError`.
"""
from __future__ import annotations

import logging
from contextlib import closing
from pathlib import Path

import numpy as np

from flexmb.assembly import Assembly
from flexmb.integrators.newton import NewtonFailure, NewtonSettings, newton_solve
from flexmb.integrators.schemes import SCHEMES, Scheme, State
from flexmb.model import Model, ModelError
from flexmb.multibody.initial import check_initial_state
from flexmb.progress import Progress
from flexmb.results import ModelLayout, TimeHistory

logger = logging.getLogger("flexmb")

#: largest rotation correction (rad) of one Newton iteration in time integration
MAX_ROTATION_CORRECTION = 0.5


class TimeIntegrationError(RuntimeError):
    """A step failed even after cut-back; ``history`` holds everything computed before it."""

    def __init__(self, message: str, history: TimeHistory) -> None:
        super().__init__(message)
        self.history = history


def integrate(model: Model | Assembly, dt: float, t_end: float, scheme: str = "mid-point",
              u0: np.ndarray | None = None, v0: np.ndarray | None = None, t0: float = 0.0,
              newton: NewtonSettings | None = None, max_cutbacks: int = 6, output_every: int = 1,
              progress: bool | None = None, save_to: str | Path | None = None,
              keep_newton_logs: bool = False) -> TimeHistory:
    """Integrate from ``t0`` to ``t_end`` with steps ``dt`` (s).

    Parameters
    ----------
    model : the model, or an :class:`~flexmb.assembly.Assembly` built from it (reused).
    scheme : ``"mid-point"`` (energy conserving) or ``"newmark"`` (trapezoidal baseline).
    u0, v0 : initial displacements and velocities over all DOFs (n_dof,); default zero.
        Prescribed DOFs take the value and velocity of their prescribed functions at t0. At the
        rotation DOFs of 3D nodes, u0 is the rotation vector and v0 the spatial angular velocity.
    output_every : record every k-th step.
    progress : show a progress bar (default: when stderr is a terminal, see :mod:`flexmb.progress`).
    save_to : result file (HDF5, ``.h5``) that receives every output step as soon as it is
        computed (:mod:`flexmb.io.result_file`); read it with :func:`flexmb.load_result`.
    keep_newton_logs : keep every step's Newton log in ``history.newton_logs``.

    Returns
    -------
    The :class:`~flexmb.results.TimeHistory` at the output steps.

    Raises
    ------
    TimeIntegrationError : a step failed after ``max_cutbacks`` halvings; its ``history`` holds
        every step before it (also in ``save_to``).
    """
    asm = model if isinstance(model, Assembly) else Assembly(model)
    if scheme not in SCHEMES:
        raise ModelError(f"unknown scheme {scheme!r}; choose one of {', '.join(SCHEMES)}")
    if not (dt > 0 and t_end > t0):
        raise ModelError(f"need dt > 0 and t_end > t0, got dt={dt}, t0={t0}, t_end={t_end}")
    n_steps = int(round((t_end - t0) / dt))
    if abs(n_steps * dt - (t_end - t0)) > 1e-9 * (t_end - t0):
        raise ModelError(f"t_end - t0 = {t_end - t0} is not a whole number of steps dt = {dt}")
    if asm.model.vector_loads:
        load = asm.model.vector_loads[0]
        raise ModelError(f"{load.kind} load at node {load.node}: configuration-dependent loads are "
                         "supported in statics and buckling only, not yet in time integration")
    n = asm.n_dof
    u0 = np.zeros(n) if u0 is None else np.array(u0, dtype=float)
    v0 = np.zeros(n) if v0 is None else np.array(v0, dtype=float)
    if u0.shape != (n,) or v0.shape != (n,):
        raise ModelError(f"u0 and v0 must have shape ({n},), got {u0.shape} and {v0.shape}")
    u0[asm.dofs.prescribed] = asm.prescribed_values(t0)
    v0[asm.dofs.prescribed] = asm.prescribed_velocities(t0)
    check_initial_state(asm, u0, v0, t0)

    stepper: Scheme = SCHEMES[scheme](asm)
    state = stepper.initial_state(t0, u0, v0)
    history = TimeHistory(scheme, dt, ModelLayout.from_assembly(asm))
    settings = newton or NewtonSettings()
    with history.recording(save_to), closing(Progress(t_end - t0, f"{scheme} dt={dt:g}", "s", progress)) as bar:
        history.record(asm, state, 0)
        try:
            for k in range(1, n_steps + 1):
                t_target = t0 + k * dt
                cutbacks = history.cutbacks
                state, its = _advance(stepper, state, t_target - state.t, settings, max_cutbacks, history,
                                      keep_newton_logs)
                state.t = t_target                               # no drift of the output times
                if k % output_every == 0 or k == n_steps:
                    history.record(asm, state, its)
                bar.update(state.t - t0, dt=f"{dt:.3g}", newton=its, cutbacks=history.cutbacks - cutbacks)
        except NewtonFailure as exc:
            message = (f"{scheme}: step to t = {state.t + dt:.6g} s failed after {max_cutbacks} "
                       f"cut-backs: {exc}")
            history.log_event(state.t, "error", message)
            if save_to is not None:
                message += f"\nresults up to t = {state.t:.6g} s are in {Path(save_to)}"
            raise TimeIntegrationError(message + f"\n{exc.log.format()}", history) from exc
    return history


def _advance(stepper: Scheme, s: State, dt: float, settings: NewtonSettings, cutbacks_left: int,
             history: TimeHistory, keep_logs: bool) -> tuple[State, int]:
    """One step of size dt; on failure two half steps. Returns the new state and Newton iterations."""
    try:
        return _step(stepper, s, dt, settings, history, keep_logs)
    except NewtonFailure:
        if cutbacks_left == 0:
            raise
        history.cutbacks += 1
        history.log_event(s.t, "cutback", f"step dt = {dt:.4g} s did not converge; two steps of dt/2")
        logger.info("step at t = %.6g s, dt = %.3g s failed; retrying with dt/2", s.t, dt)
        half, its1 = _advance(stepper, s, 0.5 * dt, settings, cutbacks_left - 1, history, keep_logs)
        end, its2 = _advance(stepper, half, 0.5 * dt, settings, cutbacks_left - 1, history, keep_logs)
        return end, its1 + its2


def _step(stepper: Scheme, s: State, dt: float, settings: NewtonSettings, history: TimeHistory,
          keep_logs: bool) -> tuple[State, int]:
    asm = stepper.asm
    free, presc = asm.dofs.free, asm.dofs.prescribed
    nf = free.size
    cs = asm.constraints
    u1 = stepper.predict(s, dt)
    # fixed spatial rotations stay fixed through zero spins; the rest take their prescribed value
    set_presc = ~np.isin(presc, asm.rotation_dofs)
    u1[presc[set_presc]] = asm.prescribed_values(s.t + dt)[set_presc]
    length = asm.model.characteristic_length

    last = {}                                   # Newton's last evaluation is at its solution
    lam_scale = [1.0]

    def residual(x: np.ndarray):
        u1[free] = x[:nf]
        res = last["res"] = stepper.residual(s, dt, u1)
        jac = asm.free_matrix(res.jacobian_data)
        if cs is None:
            return res.g[free], jac, res.force_scale
        # with joints, Newton solves for (u_free, lambda / lambda_scale) the augmented system
        # [g + G^T lambda; kappa Phi] = 0; kappa = 100 F / L makes |r| <= tol F mean
        # |Phi| <= 1e-2 tol L, and it does not change the Newton correction
        lam = x[nf:] * lam_scale[0]
        ct = last["ct"] = stepper.constraint_terms(s, dt, u1, lam, res)
        res.g = res.g + ct.force
        scale = max(res.force_scale, float(np.linalg.norm(ct.force[free])))
        kappa = 100.0 * scale / length
        J = cs.augmented(ct, jac, asm.dofs.free_position, lam_scale[0], kappa)
        return np.concatenate([res.g[free], kappa * ct.phi]), J, scale

    def update(x: np.ndarray, dx: np.ndarray) -> np.ndarray:
        du = np.zeros(asm.n_dof)
        du[free] = dx[:nf]
        u1[free] = x[:nf]
        if asm.rotation_dofs.size:
            # a nearly free spin mode (a slender beam about its own axis) can ask for several
            # radians from a small residual far from the solution: cap rotation corrections
            largest = np.abs(du[asm.rotation_dofs]).max()
            if largest > MAX_ROTATION_CORRECTION:
                du *= MAX_ROTATION_CORRECTION / largest
                dx = dx * (MAX_ROTATION_CORRECTION / largest)
        return np.concatenate([stepper.update(s, u1, du)[free], x[nf:] + dx[nf:]])

    x0 = u1[free]
    if cs is not None:
        # Newton works on lambda / lambda_scale: the last multipliers' size, or at the start
        # (no multipliers yet) the force scale of the step's first residual
        largest = float(np.abs(s.lam).max(initial=0.0))
        lam_scale[0] = largest if largest > 0 else max(stepper.residual(s, dt, u1).force_scale,
                                                        np.finfo(float).tiny)
        x0 = np.concatenate([x0, s.lam / lam_scale[0]])
    x, log = newton_solve(residual, x0, length, settings, update)
    u1[free] = x[:nf]
    if keep_logs:
        history.newton_logs.append(log)
    logger.debug("t = %.6g s: %d Newton iterations (%s)\n%s", s.t + dt, log.iterations, log.criterion,
                 log.format())
    res = last["res"]
    v1, a1 = stepper.kinematics(s, dt, u1)
    work = s.work + stepper.work_increment(s, res, u1)
    if cs is None:
        return State(s.t + dt, u1, v1, a1, stepper.reaction(res), work), log.iterations
    force = last["ct"].force
    work += stepper.constraint_work(s, force, u1)
    return State(s.t + dt, u1, v1, a1, stepper.reaction(res), work, x[nf:] * lam_scale[0], force), log.iterations
