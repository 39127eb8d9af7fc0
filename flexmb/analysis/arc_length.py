"""Nonlinear statics by Crisfield's arc-length method: through limit points and snap-backs.

Equilibrium on the free DOFs, ``g(u, lam) = q(u) - lam f = 0``, with ``f`` the reference load
(all nodal loads and gravity at lam = 1; loading must be proportional). Load control fails at a
limit point, where lam passes a maximum; here lam is an unknown and every step is constrained
to a fixed length ``dl`` in displacement (and optionally load) space. With ``du``, ``dlam`` the
increments from the last converged state and ``W = diag(s^2)`` the DOF scaling:

    du^T W du + psi^2 dlam^2 f^T f = dl^2

(``psi = 0``: cylindrical arc length, the default; ``psi > 0``: spherical).

Predictor: ``K du_t = f`` and ``dlam = +-dl / sqrt(du_t^T W du_t + psi^2 f^T f)``,
``du = dlam du_t``, with the sign for which the step continues in the direction of the previous
converged increment, ``du_prev^T W du_t + psi^2 f^T f dlam_prev > 0`` (first step: lam grows).

Corrector (the two-vector split): at every iteration ``K du_bar = -g`` and ``K du_t = f``
with one factorisation of the current tangent K, and the correction is
``delta_u = du_bar + delta_lam du_t``. Putting ``du + delta_u``, ``dlam + delta_lam`` into the
constraint gives ``a1 delta_lam^2 + a2 delta_lam + a3 = 0`` with

    a1 = du_t^T W du_t + psi^2 f^T f
    a2 = 2 [du_t^T W (du + du_bar) + psi^2 f^T f dlam]
    a3 = (du + du_bar)^T W (du + du_bar) + psi^2 f^T f dlam^2 - dl^2.

Of the two roots the one is taken whose new increment makes the smaller angle with the
increment before the correction (largest ``du_old^T W du_new + psi^2 f^T f dlam_old dlam_new``),
which keeps the iteration from turning back along the path. A tangent that is singular at the
start of a step (a converged state; exactly or to round-off, see
:class:`~flexmb.integrators.newton.Factorization`) is structural, no shorter step changes it:
the run stops with a :class:`~flexmb.analysis.diagnostics.SingularSystemError` naming the free
nodes and DOFs. Complex roots, an exactly singular tangent inside the corrector (the path
passes a limit point, where the bordered system stays regular)
or no convergence within the Newton settings halve ``dl`` and restart the step (cut-back); after
a converged step in I iterations ``dl`` grows by ``(5 / I)^(1/2)`` (Crisfield's rule, here only
growth and at most a factor 2), never beyond the user's value. Convergence is judged as in
:func:`flexmb.integrators.newton.newton_solve`. The constraint uses the sum of the corrections
as the increment; configurations are moved by :meth:`Assembly.update`.

Joints and ties to modal bodies (Lagrange multipliers lambda, drives held at the time ``t``): the
unknowns are the free DOFs and the scaled multipliers, K is the matrix
``[[K + K_c, C^T], [C, 0]]`` and f is ``(f, 0)`` (:mod:`flexmb.analysis.static_system`), so that
``du_bar`` and ``du_t`` carry multiplier parts too; the constraint and the root choice measure the
DOFs only (W is zero at the multipliers). The multipliers of the start state are the least-squares
balance of its loads. A mechanism (rigid links) has no stiffness along its motions at zero load:
start it from a loaded equilibrium (``u0``, ``load_factor0``, e.g. the last point of a load-control path).

References
----------
M.A. Crisfield, A fast incremental/iterative solution procedure that handles "snap-through",
Computers & Structures 13 (1981) 55-62.
M.A. Crisfield, Non-linear finite element analysis of solids and structures, vol. 1, Wiley 1991,
ch. 9 (sec. 9.3: cylindrical and spherical arc length, choice of root).
"""
from __future__ import annotations

import logging
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from flexmb.analysis.diagnostics import statics_error
from flexmb.analysis.static_system import StaticSystem
from flexmb.analysis.statics import StaticPath, StaticSolveError, static_system
from flexmb.assembly import Assembly
from flexmb.checks import check_arc_length, keywords_listed, real
from flexmb.elements.body_load import BodyPointLoad
from flexmb.integrators.newton import (Factorization, NewtonFailure, NewtonLog, NewtonSettings, SingularJacobian,
                                       at_round_off, signed_factorization)
from flexmb.model import Model, ModelError
from flexmb.progress import Progress
from flexmb.results import ModelLayout

logger = logging.getLogger("flexmb")

#: corrector iterations a step should take; quicker steps let a cut-back arc length grow back
_DESIRED_ITERATIONS = 5


@dataclass
class _State:
    """A converged point with the evaluation made there (reused by the next predictor)."""

    x: np.ndarray               # (n_free + n_c,) free DOFs and scaled multipliers
    u: np.ndarray               # (n_dof,)
    lam: float
    q: np.ndarray               # (n_dof,) internal and joint forces, N
    matrix: sp.csc_matrix       # Newton matrix (n_free + n_c, n_free + n_c), a copy


@keywords_listed(renamed={"lam0": "load_factor0"})
def arc_length(model: Model | Assembly, increment: float, n_steps: int = 100,
               max_load_factor: float | None = None, max_displacement: float | None = None,
               newton: NewtonSettings | None = None, max_cutbacks: int = 6,
               u0: np.ndarray | None = None, load_factor0: float = 0.0, psi: float = 0.0,
               dof_scale: np.ndarray | None = None, progress: bool | None = None,
               save_to: str | Path | None = None, overwrite: bool = False, t: float = 0.0) -> StaticPath:
    """Trace the equilibrium path with Crisfield's arc-length method.

    Parameters
    ----------
    model : the model, or an :class:`~flexmb.assembly.Assembly` built from it (reused). All
        loads (and gravity) must be numbers, scaled by the load factor, and all prescribed
        values zero.
    increment : arc length dl of a step (m, in the scaled norm below); cut-backs shorten it.
    n_steps : number of converged steps at most.
    max_load_factor : stop after the first step with ``|lam|`` above it (unloading branches reach
        negative lam).
    max_displacement : stop after the first step in which a node has moved farther than this (m).
    newton : tolerances and iteration limit of the corrector.
    max_cutbacks : halvings of dl allowed within one step before the run fails.
    u0, load_factor0 : start state (n_dof,) and its load factor, an equilibrium (e.g. the last point of
        an earlier path); default the undeformed state at lam = 0.
    psi : weight of the load term (m/N); 0 gives the cylindrical arc length.
    dof_scale : (n_dof,) factor of each DOF in the constraint norm; default 1 for translations
        and the model's characteristic length (m/rad) for rotations, so that dl is a length.
    progress : show a progress bar over the steps (default: when stderr is a terminal).
    save_to : result file (HDF5) that receives each converged state at once.
    overwrite : replace an existing ``save_to`` file (otherwise the run refuses to start).
    t : time (s) at which joint drives are held.

    Returns
    -------
    The converged states (the start state is not included) with their reactions, joint
    multipliers and reactions, and corrector logs; ``cutbacks`` counts the halvings of dl.

    Raises
    ------
    ModelError : non-proportional loading, a zero reference load or invalid arguments.
    StaticSolveError : a step failed after ``max_cutbacks`` halvings; ``path`` holds the
        states converged before it.
    SingularSystemError : the tangent at the start of a step is singular (no supports, a
        mechanism); it names the free nodes and DOFs, its ``result`` holds the path so far.
    """
    asm = model if isinstance(model, Assembly) else Assembly(model)
    check_arc_length(asm, increment, n_steps, max_load_factor, max_displacement, newton, max_cutbacks, u0,
                     load_factor0, psi, dof_scale)
    t = real(t, "arc_length: t (s)")
    _check_proportional(asm.model)
    if asm.model.vector_loads:
        load = asm.model.vector_loads[0]
        raise ModelError(f"arc_length: {load.kind} load at node {load.node} depends on the "
                         "configuration; the arc-length method here scales dead loads only (use load_control)")
    body_loads = [g.name for g in asm.groups if isinstance(g, BodyPointLoad)]
    if body_loads:
        raise ModelError(f"arc_length: the group {body_loads[0]!r} holds forces at body points "
                         "(Model.add_body_load), which turn with the bodies; the arc-length method here scales "
                         "dead loads only (use load_control, or a nodal load with add_load)")
    if asm.configuration_loads:
        raise ModelError("arc_length: the weight of a cubic mass (Beam2D mass='cubic') turns with the nodes; "
                         "the arc-length method here scales dead loads only (use load_control, or "
                         "mass='consistent' for the weight)")
    free = asm.dofs.free
    f_ref = asm.external_force(1.0, statics=True)                      # (n_dof,), N
    if not np.any(f_ref[free]):
        raise ModelError("arc_length: the reference load (nodal loads and gravity at lam = 1) is "
                         "zero on every free DOF; there is nothing to scale")
    u = np.zeros(asm.n_dof) if u0 is None else np.array(u0, dtype=float)
    u[asm.dofs.prescribed] = 0.0                                       # all prescribed values are zero
    s_dof = _default_scale(asm) if dof_scale is None else np.asarray(dof_scale, dtype=float)

    system = static_system(asm, t)
    system.lam_scale = float(np.abs(f_ref[free]).max())                  # multipliers of the reference load's size
    corrector = _Corrector(system, f_ref, s_dof[free] ** 2, psi, newton or NewtonSettings())
    system.load = float(load_factor0)
    state = corrector.state(system.start(u), float(load_factor0))
    path = StaticPath(ModelLayout.from_assembly(asm), "arc length")
    previous: tuple[np.ndarray, float] | None = None
    dl = float(increment)
    with path.recording(save_to, overwrite), closing(Progress(n_steps, "arc length", "steps", progress)) as bar:
        while path.n_steps < n_steps:
            state, du, dlam, log, dl = _step_with_cutbacks(corrector, state, dl, previous, max_cutbacks, path)
            reaction = state.q - state.lam * f_ref
            reaction[free] = 0.0
            path.note_round_off(state.lam, log)
            path.record(asm, state.lam, state.u, reaction, log, system.state(state.x)[1], t)
            bar.update(path.n_steps, lam=f"{state.lam:.5g}", dl=f"{dl:.3g}", newton=log.iterations)
            logger.debug("arc-length step dl = %.4g: lam = %.8g, %d corrector iterations (%s)\n%s", dl,
                         state.lam, log.iterations, log.criterion, log.format())
            previous = (du, dlam)
            growth = np.sqrt(_DESIRED_ITERATIONS / max(log.iterations, 1))
            dl = min(float(increment), dl * float(np.clip(growth, 1.0, 2.0)))
            if max_load_factor is not None and abs(state.lam) > max_load_factor:
                break
            if max_displacement is not None and \
                    np.linalg.norm(state.u[asm.dofs.translations()], axis=1).max() > max_displacement:
                break
    return path


def _check_proportional(model: Model) -> None:
    """The method scales one load vector: no functions of lam, no non-zero prescribed values."""
    for load in model.loads:
        if callable(load.value):
            raise ModelError(f"arc_length needs proportional loading, but the load on node {load.node} "
                             f"{load.dof} is a function of the load factor; give it as a number")
    for (node, dof), value in model.prescribed.items():
        if callable(value.value) or value.value != 0.0:
            raise ModelError(f"arc_length needs proportional loading, but node {node} {dof} has the "
                             f"prescribed value {value.value!r}; only zero prescribed values are allowed")


def _default_scale(asm: Assembly) -> np.ndarray:
    """1 for translations, the characteristic length (m/rad) for rotations, (n_dof,)."""
    scale = np.full(asm.n_dof, asm.model.characteristic_length)
    scale[asm.dofs.translations()] = 1.0
    return scale


def _step_with_cutbacks(corrector: _Corrector, state: _State, dl: float,
                        previous: tuple[np.ndarray, float] | None, max_cutbacks: int, path: StaticPath
                        ) -> tuple[_State, np.ndarray, float, NewtonLog, float]:
    """One converged step from ``state``, halving dl on failure; also returns the dl used."""
    halvings = 0
    while True:
        try:
            return (*corrector.step(state, dl, previous), dl)
        except NewtonFailure as exc:
            if isinstance(exc, SingularJacobian) and exc.iteration == 0:
                error = statics_error(corrector.asm, exc.matrix, "arc length", state.lam, state.u,
                                      f"the start of step {path.n_steps + 1}", path.n_steps > 0, exc.direction)
                path.log_event(state.lam, "error", str(error))
                error.result = path
                raise error from exc
            if halvings == max_cutbacks:
                message = (f"arc length: no equilibrium found from lam = {state.lam:.6g} (step "
                           f"{len(path.u) + 1}) after {max_cutbacks} cut-backs to dl = {dl:.3g}: {exc}")
                path.log_event(state.lam, "error", message)
                raise StaticSolveError(message + f"\nlast corrector: {exc.log.summary()}\n{exc.log.format()}",
                                       path) from exc
            halvings += 1
            path.cutbacks += 1
            path.log_event(state.lam, "cutback", f"arc-length step dl = {dl:.4g} did not converge; dl/2")
            logger.info("arc-length step from lam = %.6g with dl = %.3g failed (%s); retrying with dl/2",
                        state.lam, dl, exc)
            dl *= 0.5


class _Corrector:
    """Predictor and augmented Newton corrector of one arc-length step, on the unknowns of
    ``system`` (the free DOFs, then the scaled joint multipliers).

    ``f_ref`` (n_dof,) is the reference load, ``f`` (n,) its free part padded with zeros at the
    multipliers, ``w2`` (n,) the squared DOF scale (zero at the multipliers); ``c`` is the weight
    psi^2 f^T f of the load term, so that the constraint metric is
    ``<(a, alpha), (b, beta)> = a^T W b + c alpha beta``.
    """

    def __init__(self, system: StaticSystem, f_ref: np.ndarray, w2: np.ndarray, psi: float,
                 settings: NewtonSettings) -> None:
        self.system = system
        self.asm = system.asm
        self.f_ref = f_ref
        self.f = system.pad(f_ref[system.free])
        self.w2 = system.pad(w2)
        self.c = psi**2 * float(self.f @ self.f)
        self.settings = settings

    def evaluate(self, x: np.ndarray, lam: float) -> tuple[np.ndarray, sp.csc_matrix, np.ndarray]:
        """Residual r = h(x) - lam f (n,), the Newton matrix (shared object) and the internal and
        joint forces q (n_dof,) at (x, lam)."""
        self.system.load = lam
        r, matrix, _ = self.system.residual(x)
        return r, matrix, self.system.last["g"] + lam * self.f_ref

    def state(self, x: np.ndarray, lam: float, evaluated: tuple | None = None) -> _State:
        """The converged point (x, lam) with :meth:`evaluate`'s output there (evaluated if None)."""
        _, matrix, q = self.evaluate(x, lam) if evaluated is None else evaluated
        return _State(x, self.system.state(x)[0], lam, q, matrix.copy())

    def inner(self, a: np.ndarray, alpha: float, b: np.ndarray, beta: float) -> float:
        return float(a @ (self.w2 * b)) + self.c * alpha * beta

    def _factor(self, K: sp.csc_matrix, log: NewtonLog, k: int | None) -> Factorization:
        """LU of the tangent at corrector iteration k, or (k None) at the step's start, where a
        tangent singular to round-off counts too; SingularJacobian with ``iteration`` 0 at the
        start, k + 1 in the corrector."""
        where = "at the start of the step" if k is None else f"at corrector iteration {k}"
        iteration = 0 if k is None else k + 1
        try:
            lu = signed_factorization(K, solver=self.settings.solver)
        except RuntimeError as exc:                          # SuperLU: "Factor is exactly singular"
            raise SingularJacobian(f"singular tangent {where}: {exc}", log, K.copy(), iteration, 0.0) from exc
        if k is None and lu.is_singular():
            raise SingularJacobian(f"singular tangent {where}: smallest equilibrated pivot "
                                   f"{lu.smallest_pivot:.1e}", log, K.copy(), iteration, lu.smallest_pivot)
        log.tangent_signs.append(lu.determinant_sign)
        log.smallest_pivots.append(lu.smallest_pivot)
        return lu

    def step(self, start: _State, dl: float, previous: tuple[np.ndarray, float] | None
             ) -> tuple[_State, np.ndarray, float, NewtonLog]:
        """Converged state, its increment from ``start`` (n,: free DOFs and scaled multipliers) and
        dlam, and the log.

        Raises NewtonFailure (with the log) on complex roots, a singular tangent, a non-finite
        residual or no convergence.
        """
        s, f, system = self.settings, self.f, self.system
        nf = system.nf
        length = self.asm.model.characteristic_length
        magnitudes = self.asm.round_off_lengths[system.free]
        log = NewtonLog()
        u_t = self._factor(start.matrix, log, None).solve(f)
        dlam = dl / np.sqrt(self.inner(u_t, 1.0, u_t, 1.0))
        if previous is not None and self.inner(*previous, u_t, 1.0) < 0.0:
            dlam = -dlam
        du = dlam * u_t
        x, lam = system.update(start.x, du), start.lam + dlam
        # force level of the whole step: the path may pass a stress-free state, where both the
        # internal force (reactions included) and the load vanish at the end of the step
        f_norm = float(np.linalg.norm(f))
        start_scale = max(float(np.linalg.norm(start.q)), abs(start.lam) * f_norm, np.finfo(float).tiny)
        r, matrix, q = self.evaluate(x, lam)
        for k in range(s.max_iterations + 1):
            scale = max(float(np.linalg.norm(q)), abs(lam) * f_norm, start_scale)
            rn = float(np.linalg.norm(r))
            log.residual_norms.append(rn)
            log.force_scale = scale
            if not np.isfinite(rn):
                raise NewtonFailure(f"residual is not finite at iteration {k}", log)
            if rn <= s.residual_tol * scale or rn <= s.force_tol:
                log.converged, log.criterion = True, "residual"
                return self.state(x, lam, (r, matrix, q)), du, dlam, log
            if k == s.max_iterations:
                break
            lu = self._factor(matrix, log, k)
            du_bar, u_t = lu.solve(-r), lu.solve(f)
            delta_lam = self._root(du, dlam, du_bar, u_t, dl, log, k)
            delta_x = du_bar + delta_lam * u_t
            if not np.all(np.isfinite(delta_x)):
                raise NewtonFailure(f"non-finite correction at iteration {k}", log)
            x, lam = system.update(x, delta_x), lam + delta_lam
            du, dlam = du + delta_x, dlam + delta_lam
            r, matrix, q = self.evaluate(x, lam)
            dn = float(np.linalg.norm(delta_x[:nf]))                         # the DOFs' correction
            log.increment_norms.append(dn)
            if dn <= s.increment_tol * length and rn <= s.increment_gate * scale:
                log.converged, log.criterion = True, "increment"
                return self.state(x, lam, (r, matrix, q)), du, dlam, log
            if at_round_off(dn, x[:nf], magnitudes, s.round_off_factor):
                log.converged, log.criterion = True, "round-off"
                return self.state(x, lam, (r, matrix, q)), du, dlam, log
        raise NewtonFailure(f"no convergence in {s.max_iterations} corrector iterations "
                            f"(|r|/F = {log.residual_norms[-1] / log.force_scale:.3e})", log)

    def _root(self, du: np.ndarray, dlam: float, du_bar: np.ndarray, u_t: np.ndarray, dl: float,
              log: NewtonLog, k: int) -> float:
        """delta_lam from the constraint quadratic, the root closest in direction to (du, dlam)."""
        v = du + du_bar
        a1 = self.inner(u_t, 1.0, u_t, 1.0)
        a2 = 2.0 * self.inner(u_t, 1.0, v, dlam)
        a3 = self.inner(v, dlam, v, dlam) - dl**2
        disc = a2**2 - 4.0 * a1 * a3
        if disc < 0.0:
            raise NewtonFailure(f"complex roots of the arc-length constraint at iteration {k} "
                                f"(discriminant {disc:.3e})", log)
        # roots without cancellation: -(a2 + sign(a2) sqrt(disc)) / 2 = a1 x1 = a3 / x2
        m = -0.5 * (a2 + np.copysign(np.sqrt(disc), a2))
        roots = (m / a1, a3 / m) if m != 0.0 else (0.0, 0.0)
        # <(du, dlam), (du + du_bar + x u_t, dlam + x)> is linear in x
        base, slope = self.inner(du, dlam, v, dlam), self.inner(du, dlam, u_t, 1.0)
        return max(roots, key=lambda x: base + slope * x)
