"""Nonlinear statics by load control on the shared Newton driver.

Solves ``q(u) = lam f`` for a sequence of load factors ``lam``: constant loads, gravity and
constant prescribed displacements are scaled by ``lam``; loads and prescribed values given as
functions are evaluated at ``lam`` (pseudo-time). A failed increment is retried as two half
increments, up to ``max_cutbacks`` halvings. Follower and semi-tangential loads enter with
their load stiffness; spatial rotations are updated by composition (:meth:`Assembly.update`).

Joints and ties to modal bodies enter with Lagrange multipliers, ``q(u) + C^T lambda = lam f``,
``Phi(u, t) = 0``, drives held at their value at the time ``t`` (not scaled by lam); the equations,
their scaling and the least-squares start of the multipliers of every increment are those of
:mod:`flexmb.analysis.static_system`. The path records the multipliers and each joint's force and
moment (``path.joint_reaction(name)``). A mechanism (rigid links) has stiffness along its motions
only through the multipliers of its loads: its first increment must carry load (it does from an
unloaded start) and it is solved directly at that load. A flexible mechanism whose tangent is
singular at the start even so (links pinned at unstressed end nodes) is solved by pseudo-transient
continuation (:meth:`~flexmb.analysis.static_system.StaticSystem.solve_by_continuation`); if the
equilibrium found is not isolated (a free mechanism that no load holds) the run stops with a
:class:`~flexmb.analysis.diagnostics.SingularSystemError` naming the free DOFs.

Singular tangents and limit points. A tangent that is singular at the start of an increment
(an equilibrium already reached, or the unloaded start) does not change with a smaller
increment: the run stops at once with a
:class:`~flexmb.analysis.diagnostics.SingularSystemError` naming the free nodes and DOFs (no
supports, a mechanism). Load control cannot pass a limit point (a load maximum): when the
increments fail there, the error says so (the tangent stiffness along the load has dropped
below ``LIMIT_STIFFNESS`` of its initial value, or its determinant changed sign while Newton
tried) and points to :func:`~flexmb.analysis.arc_length.arc_length`. When Newton instead jumps
through a limit point to a far equilibrium, the sign of the tangent's determinant differs
between the start and the end of the increment, or the state moved along the load far more than
the tangents at both ends explain (``JUMP_FACTOR``): a :class:`~flexmb.checks.FlexmbWarning` says
so, and the run log keeps it.
"""
from __future__ import annotations

import warnings
from contextlib import closing
from pathlib import Path
from typing import Sequence

import numpy as np
import scipy.sparse as sp

from flexmb.analysis.diagnostics import SingularSystemError, statics_error
from flexmb.analysis.static_system import StaticSystem
from flexmb.assembly import Assembly
from flexmb.checks import FlexmbWarning, check_load_control, keywords_listed, real
from flexmb.integrators.newton import (Factorization, KeptFactorization, NewtonFailure, NewtonLog, NewtonSettings,
                                     SingularJacobian, same_matrix, signed_factorization)
from flexmb.model import Model
from flexmb.progress import Progress
from flexmb.results import ModelLayout, StaticPath


class StaticSolveError(RuntimeError):
    """An increment failed even after cut-back; ``path`` holds the converged states before it."""

    def __init__(self, message: str, path: StaticPath) -> None:
        super().__init__(message)
        self.path = path


@keywords_listed
def load_control(model: Model | Assembly, load_factors: Sequence[float] | int = 10,
                 newton: NewtonSettings | None = None, max_cutbacks: int = 6,
                 u0: np.ndarray | None = None, progress: bool | None = None,
                 save_to: str | Path | None = None, overwrite: bool = False, t: float = 0.0) -> StaticPath:
    """Trace equilibrium for increasing load factors (an int n means n equal steps to 1).

    ``save_to`` names a result file (HDF5) that receives each converged state at once (an
    existing file is replaced only with ``overwrite=True``); ``progress`` shows a bar (default:
    when stderr is a terminal). Cut-backs are entered in the run log (``path.events``). ``t`` (s):
    the time at which joint drives are held (models with joints, see the module docstring).
    """
    asm = model if isinstance(model, Assembly) else Assembly(model)
    check_load_control(asm, load_factors, newton, max_cutbacks, u0)
    system = static_system(asm, real(t, "load_control: t (s)"))
    lams = np.linspace(0.0, 1.0, int(load_factors) + 1)[1:] if isinstance(load_factors, (int, np.integer)) \
        else np.asarray(load_factors, dtype=float)
    settings = newton or NewtonSettings()
    u = np.zeros(asm.n_dof) if u0 is None else np.array(u0, dtype=float)
    path = StaticPath(ModelLayout.from_assembly(asm), "load control")
    lam = 0.0
    u_initial = u.copy()
    tangents = _Tangents(system, settings.solver)
    with path.recording(save_to, overwrite), closing(Progress(float(lams[-1]), "load control", "", progress)) as bar:
        for target in lams:
            try:
                u, lam = _increment(system, u, lam, float(target), settings, max_cutbacks, path, tangents)
            except SingularSystemError as exc:
                path.log_event(exc.at, "error", str(exc))
                exc.result = path
                raise
            except NewtonFailure as exc:
                # converged half increments of the failed one are in the path already
                reached = path.load_factors[-1] if path.n_steps else lam
                message = (f"load control: no equilibrium found beyond load factor {reached:.6g} (increment "
                           f"{lam:.6g} -> {target:.6g}, {max_cutbacks} cut-backs): {exc}"
                           f"{_limit_point(system, path, u_initial, float(target), exc.log)}")
                path.log_event(reached, "error", message)
                raise StaticSolveError(f"{message}\nlast Newton iteration: {exc.log.summary()}\n"
                                       f"{exc.log.format()}", path) from exc
            bar.update(lam, newton=path.newton_logs[-1].iterations, cutbacks=path.cutbacks)
    return path


def static_system(asm: Assembly, t: float = 0.0) -> StaticSystem:
    """The statics equations at load factors (``system.load``): ``asm.static_residual`` plus the
    joints and ties, drives held at time t (s)."""
    return StaticSystem(asm, lambda u, load, tangent: asm.static_residual(u, load), t)


def _increment(system: StaticSystem, u: np.ndarray, lam: float, target: float, settings: NewtonSettings,
               cutbacks_left: int, path: StaticPath, tangents: _Tangents) -> tuple[np.ndarray, float]:
    try:
        return _solve_at(system, u, lam, target, settings, path, tangents), target
    except NewtonFailure as exc:
        if isinstance(exc, SingularJacobian) and exc.iteration == 0:
            # the tangent at the start of the increment: a smaller increment does not change it
            raise statics_error(system.asm, exc.matrix, "load control", lam, u, f"the start of the increment to "
                                f"{target:.6g}", path.n_steps > 0, exc.direction) from exc
        if cutbacks_left == 0:
            raise
        path.cutbacks += 1
        path.log_event(lam, "cutback", f"increment to {target:.6g} did not converge; two half increments")
        mid = 0.5 * (lam + target)
        u_mid, _ = _increment(system, u, lam, mid, settings, cutbacks_left - 1, path, tangents)
        return _increment(system, u_mid, mid, target, settings, cutbacks_left - 1, path, tangents)


def _solve_at(system: StaticSystem, u_start: np.ndarray, lam_start: float, lam: float, settings: NewtonSettings,
              path: StaticPath, tangents: _Tangents) -> np.ndarray:
    """Equilibrium at load factor lam from the equilibrium u_start at lam_start; recorded in path."""
    asm = system.asm
    u = u_start.copy()
    u[asm.dofs.prescribed] = asm.prescribed_values(lam, statics=True)
    system.load = lam
    x0 = system.start(u)
    tangents.newton = KeptFactorization()
    try:
        x, log = system.solve(x0, settings, determinant_signs=True, last=tangents.newton)
    except SingularJacobian as exc:
        if exc.iteration or not system.n_c:
            raise
        # a flexible mechanism: no stiffness along its motions at the start, whatever the increment
        try:
            x, log = system.solve_by_continuation(x0, settings, determinant_signs=True, last=tangents.newton)
        except NewtonFailure:
            raise exc from None
        end = system.matrix(x)
        if _factorization(end, settings.solver) is None:
            raise statics_error(asm, end, "load control", lam, system.state(x)[0], "the equilibrium found by "
                                "continuation is not isolated (add the drive, support or load that holds the free "
                                "motion)") from exc
    K_end = system.last["J"].copy()               # newton_solve's last evaluation is at its solution
    u, multipliers = system.state(x)
    path.note_round_off(lam, log)
    path.record(asm, lam, u, system.reaction(), log, multipliers, system.t)
    _warn_if_limit_point_passed(system, tangents, u_start, lam_start, u, lam, K_end, path)
    return u


#: load control that fails where the tangent stiffness along the load (the inverse of the
#: compliance f^T K^-1 f) has fallen below this fraction of its value at the start reports a
#: limit point
LIMIT_STIFFNESS = 0.1


#: a converged increment whose secant compliance along the load, f^T du / dlam, exceeds the
#: tangent compliance f^T K^-1 f at both its ends by more than this factor jumped: on a
#: continuous equilibrium path the secant value is the mean of the tangent values in between
JUMP_FACTOR = 3.0


def _factorization(K, solver: str = "auto") -> Factorization | None:
    """Equilibrated LU of K (with its determinant's sign: :func:`signed_factorization`, ``solver``
    as NewtonSettings names it), None if K is singular."""
    try:
        lu = signed_factorization(K, solver=solver)
    except RuntimeError:                                  # SuperLU: "Factor is exactly singular"
        return None
    return None if lu.is_singular() else lu


class _Tangents:
    """The factorised Newton matrix of the last converged state, reused at the start of the next
    increment (None where singular); with joints the matrix on the free DOFs and the multipliers.
    ``newton`` holds the last factorisation of the increment's Newton solve: a matrix equal to
    the one it factorised (a linear model's) takes it instead of a new LU."""

    def __init__(self, system: StaticSystem, solver: str = "auto") -> None:
        self.system = system
        self.solver = solver
        self.u: np.ndarray | None = None
        self.lam = 0.0
        self.lu: Factorization | None = None
        self.newton = KeptFactorization()

    def at(self, u: np.ndarray, lam: float) -> Factorization | None:
        if self.u is None or self.lam != lam or not np.array_equal(self.u, u):
            self.store(u, lam, _matrix(self.system, u, lam))
        return self.lu

    def store(self, u: np.ndarray, lam: float, K) -> None:
        known = self.newton.matrix
        same = known is not None and sp.issparse(K) and same_matrix(K, known)
        self.u, self.lam, self.lu = u.copy(), lam, self.newton.lu if same else _factorization(K, self.solver)


def _matrix(system: StaticSystem, u: np.ndarray, lam: float, multipliers: np.ndarray | None = None):
    """The Newton matrix at (u, lam) with the given multipliers (default: least squares at u)."""
    system.load = lam
    return system.matrix(system.start(u, multipliers))


def _sign_text(lu: Factorization | None) -> str:
    return "singular" if lu is None else "+" if lu.determinant_sign > 0 else "-"


def _warn_if_limit_point_passed(system: StaticSystem, tangents: _Tangents, u_start: np.ndarray, lam_start: float,
                                u: np.ndarray, lam: float, K_end, path: StaticPath) -> None:
    """Warn (FlexmbWarning, run log) if a converged increment jumped through a limit point: the
    sign of det K differs between its two states, or (increments of the loads alone) the state
    moved along the load far more than the tangents at both ends explain (JUMP_FACTOR). With
    joints K is the matrix with the multipliers (its determinant changes sign where that of the
    tangent on the joints' free motions does). A mechanism has no stiffness at zero load, so from
    load factor 0 the end's sign is compared with that of a stable state instead, (-1)^n_c:
    ``[[H, C^T], [C, 0]]`` has n_c negative eigenvalues plus those of H on the joints' free motions."""
    asm = system.asm
    start = tangents.at(u_start, lam_start)
    tangents.store(u, lam, K_end)
    end = tangents.lu
    reasons = []
    from_rest = system.n_c > 0 and lam_start == 0.0
    if from_rest and end is not None and end.determinant_sign != (-1) ** system.n_c:
        message = (f"load control from load factor 0 reached an unstable equilibrium at load factor {lam:.6g} (the "
                   "sign of the matrix's determinant shows a negative stiffness on the joints' free motions, e.g. a "
                   "link turned upside down); fm.equilibrium reports stability, and a start u0 nearer the stable "
                   "equilibrium or smaller first increments find that one")
        path.log_event(lam, "warning", message)
        warnings.warn(message, FlexmbWarning, stacklevel=4)
    if _sign_text(start) != _sign_text(end) and not from_rest:
        reasons.append(f"the sign of the tangent's determinant changed ({_sign_text(start)} at the start, "
                       f"{_sign_text(end)} at the end)")
    free = asm.dofs.free
    f = (asm.external_force(lam, statics=True, u=u) - asm.external_force(lam_start, statics=True, u=u))[free]
    # the secant test compares the response to loads alone: not with moving prescribed DOFs
    loads_only = np.array_equal(asm.prescribed_values(lam, statics=True),
                                asm.prescribed_values(lam_start, statics=True))
    if start is not None and end is not None and np.any(f) and lam != lam_start and loads_only:
        f = f / (lam - lam_start)                                            # load per unit load factor
        F = system.pad(f)
        compliances = (float(F @ start.solve(F)), float(F @ end.solve(F)))  # tangent f^T K^-1 f at both ends
        secant = float(f @ (u - u_start)[free]) / (lam - lam_start)
        if min(compliances) > 0.0 and secant > JUMP_FACTOR * max(compliances):
            reasons.append(f"the state moved along the load {secant / max(compliances):.3g} times farther than "
                           "the tangent stiffness at either end explains")
    if not reasons:
        return
    message = (f"load control jumped through a limit point between load factors {lam_start:.6g} and {lam:.6g}: "
               f"{' and '.join(reasons)}; the equilibrium path between the two states was not followed, and the "
               "new state may lie on another branch: trace the path with fm.arc_length")
    path.log_event(lam, "warning", message)
    warnings.warn(message, FlexmbWarning, stacklevel=4)


def _compliance(system: StaticSystem, u: np.ndarray, lam: float, f: np.ndarray,
                multipliers: np.ndarray | None = None) -> float | None:
    """f^T K^-1 f (m/N times N^2) of the tangent at (u, lam) for a load f on the free DOFs (with
    joints: of the matrix with the multipliers, the compliance on the joints' free motions); None
    if K is singular."""
    lu = _factorization(_matrix(system, u, lam, multipliers))
    F = system.pad(f)
    return None if lu is None else float(F @ lu.solve(F))


def _limit_point(system: StaticSystem, path: StaticPath, u_first: np.ndarray, target: float, log: NewtonLog) -> str:
    """Text for a failure at a limit point, with the advice to use arc length, or ""."""
    if not path.n_steps:
        return ""
    asm = system.asm
    u_last, lam_last = path.u[-1], path.load_factors[-1]
    free = asm.dofs.free
    f = (asm.external_force(target, statics=True, u=u_last)
         - asm.external_force(lam_last, statics=True, u=u_last))[free]
    evidence = []
    if any(sign != log.tangent_signs[0] for sign in log.tangent_signs):
        evidence.append("the tangent's determinant changed sign while Newton tried to go further")
    if np.any(f):
        first = _compliance(system, u_first, 0.0, f)
        if first is None:                                 # e.g. an unstressed string: from the first point
            first = _compliance(system, path.u[0], path.load_factors[0], f, path.multipliers[0])
        last = _compliance(system, u_last, lam_last, f, path.multipliers[-1])
        if first is not None and last is not None and first > 0.0:
            ratio = first / last
            if ratio < LIMIT_STIFFNESS:
                evidence.append("the tangent stiffness along the load is negative" if ratio <= 0.0 else
                                f"the tangent stiffness along the load has fallen to {100.0 * ratio:.2g} % of "
                                "its initial value")
    if not evidence:
        return ""
    weight = np.full(asm.n_dof, asm.model.characteristic_length)
    weight[asm.dofs.translations()] = 1.0
    dl = float(np.linalg.norm((weight * (u_last - u_first))[free])) / path.n_steps
    return (f"; the path has likely reached a limit point (a load maximum) near load factor {lam_last:.6g}: "
            f"{' and '.join(evidence)}. Load control cannot pass a limit point; fm.arc_length follows the path "
            f"through it (e.g. fm.arc_length(model, increment={dl:.3g}))")
