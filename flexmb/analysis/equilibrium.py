"""Static equilibrium of a model with joints, rigid bodies and drives: the state a run can start from.

:func:`equilibrium` solves, at a time t, the augmented equilibrium of everything ``integrate``
takes (elements, rigid bodies, force elements, loads, gravity, joints and ties to modal bodies)

    q(u) - f(t, u) + C(u)^T lambda = 0,    Phi(u, t) = 0,

by Newton on (u_free, lambda) with the matrix ``[[K + K_c, C^T], [C, 0]]`` (K the tangent of the
elements with the load stiffness, K_c = d(C^T lambda)/du the joints' curvature times the
multipliers), solved by the equilibrated sparse LU of the shared Newton driver, not symmetrised
(the equations, scaling and start: :mod:`flexmb.analysis.static_system`). Drives and prescribed
DOFs are held at their values at t, loads are those of t in full (not ramped: a mechanism has no
stiffness without them). Spatial rotations are updated by composition, and a Newton correction
is cut to rotations of ``MAX_ROTATION_CORRECTION`` (0.5 rad) when it asks for more.

A mechanism (rigid links on joints) carries its loads through the multipliers only: K vanishes on
its motions, and only K_c stiffens them. Newton therefore starts from the multipliers that
balance the loads at the start state in the least-squares sense, not from zero. A flexible
mechanism whose elements carry no load at the start, where even those give its motions no
stiffness, is solved by pseudo-transient continuation.

An equilibrium must be isolated: if the matrix is singular at the solution (a free mechanism
that no load, drive or support holds, a rod free to spin about its own axis on a spherical
joint) a :class:`~flexmb.analysis.diagnostics.SingularSystemError` names the free DOFs. It may be
unstable (the pendulum upright): the second-order test on the joints' tangent space, the
smallest eigenvalue of Z^T (K + K_c) Z with Z a basis of the null space of C on the free DOFs, is
reported as :attr:`Equilibrium.stable` (models up to ``STABILITY_CHECK_SIZE`` free DOFs) and a
:class:`~flexmb.checks.FlexmbWarning` says when it is negative; a start ``u0`` nearer the wanted
equilibrium finds that one.

:func:`linear_static` is the small-displacement solution: one Newton step from u0 with the
multipliers starting at zero, ``[[K, C^T], [C, 0]] (du, lambda) = -(g, Phi)``.

Start a run from it: ``eq = fm.equilibrium(asm, t=0.0)`` then
``fm.integrate(asm, dt, t_end, u0=eq.u)``; zero velocities are consistent when the drives' rates
at t are zero (a drive that starts from rest), otherwise take the velocities of
``fm.consistent_initial_state(asm, u0=eq.u)`` (the rigid start).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla

from flexmb.analysis.diagnostics import statics_error
from flexmb.analysis.static_system import StaticSystem
from flexmb.assembly import Assembly
from flexmb.checks import FlexmbWarning, ModelError, keywords_listed, methods_keywords_listed, real
from flexmb.integrators.newton import Factorization, NewtonFailure, NewtonLog, NewtonSettings, SingularJacobian
from flexmb.model import Model

#: the stability test (a dense null space and eigenvalues) runs on models up to this many free DOFs
STABILITY_CHECK_SIZE = 3000


class EquilibriumError(RuntimeError):
    """Newton found no equilibrium; ``log`` is its last Newton log."""

    def __init__(self, message: str, log: NewtonLog | None = None) -> None:
        super().__init__(message)
        self.log = log


@methods_keywords_listed
@dataclass
class Equilibrium:
    """A static equilibrium at time ``t`` (s): displacements ``u`` (n_dof,), the joints'
    multipliers (n_c,), support ``reaction`` (n_dof,, N and N m, zero at free DOFs), and the joint
    reactions in the convention of :meth:`~flexmb.results.TimeHistory.joint_reaction`."""

    t: float
    u: np.ndarray
    multipliers: np.ndarray
    reaction: np.ndarray
    joint_names: list[str]
    joint_forces: list[np.ndarray]
    joint_moments: list[np.ndarray]
    #: smallest eigenvalue of the tangent on the joints' tangent space (N/m, N m/rad mixed), None if not checked
    smallest_stiffness: float | None
    log: NewtonLog = field(repr=False)

    @property
    def stable(self) -> bool | None:
        """True if the equilibrium is stable (second-order test), None if not checked."""
        return None if self.smallest_stiffness is None else self.smallest_stiffness >= 0.0

    def joint_reaction(self, joint: str | int) -> tuple[np.ndarray, np.ndarray]:
        """Force (dim,) in N and moment in N m that the joint (name or index) exerts on its side B at
        the joint point, in the joint frame carried by side A."""
        k = self.joint_names.index(joint) if isinstance(joint, str) and joint in self.joint_names else joint
        if not isinstance(k, (int, np.integer)) or not 0 <= k < len(self.joint_names):
            raise ModelError(f"no joint {joint!r}; joints: {', '.join(self.joint_names) or 'none'}")
        return self.joint_forces[k], self.joint_moments[k]


def _system(model: Model | Assembly, t: float, u0: np.ndarray | None, what: str, cap_rotations: bool
            ) -> tuple[StaticSystem, np.ndarray]:
    """The equations at time t (loads of t in full) and the start configuration (n_dof,)."""
    asm = model if isinstance(model, Assembly) else Assembly(model)
    t = real(t, f"{what}: t (s)")
    n = asm.n_dof
    if u0 is None:
        u = np.zeros(n)
    else:
        u = np.array(u0, dtype=float)
        if u.shape != (n,) or not np.all(np.isfinite(u)):
            raise ModelError(f"{what}: u0 must be {n} finite numbers (one per DOF), got shape {u.shape}")
    u[asm.dofs.prescribed] = asm.prescribed_values(t)
    free = asm.dofs.free

    def forces(u_now: np.ndarray, load: float, tangent: bool):
        asm.set_time(t)
        q, k_data = asm.force_and_tangent(u_now)
        f = asm.external_force(t, u=u_now)
        if asm.configuration_loads and tangent:
            k_data = k_data - asm.load_stiffness_data(u_now, t)
        return q - f, k_data, max(float(np.linalg.norm(q[free])), float(np.linalg.norm(f[free])))

    return StaticSystem(asm, forces, t, cap_rotations), u


def _result(system: StaticSystem, x: np.ndarray, log: NewtonLog, smallest: float | None) -> Equilibrium:
    """The equilibrium of the unknowns x, evaluated there (reactions, joint reactions)."""
    asm, cs, t = system.asm, system.cs, system.t
    system.residual(x, tangent=False)
    u, lam = system.state(x)
    names = [j.name for j in asm.model.joints] if cs is not None else []
    reactions = cs.joint_reactions(u, lam, t, asm.dofs) if cs is not None else []
    return Equilibrium(t, u, lam, system.reaction(), names, [f for f, _ in reactions], [m for _, m in reactions],
                       smallest, log)


def _regular(matrix) -> bool:
    try:
        return not Factorization(matrix).is_singular()
    except RuntimeError:                                  # SuperLU: "Factor is exactly singular"
        return False


@keywords_listed
def equilibrium(model: Model | Assembly, t: float = 0.0, u0: np.ndarray | None = None,
                newton: NewtonSettings | None = None) -> Equilibrium:
    """Static equilibrium at time ``t`` (s) from the start ``u0`` (n_dof,; default the reference
    configuration), with joints, drives (held at their value at t), ties to modal bodies, rigid
    bodies, gravity and loads (see the module docstring).

    Raises :class:`EquilibriumError` if Newton finds none,
    :class:`~flexmb.analysis.diagnostics.SingularSystemError` (a ModelError) naming the free DOFs
    if the equilibrium is not isolated (a free mechanism), ModelError for bad input."""
    system, u = _system(model, t, u0, "equilibrium", cap_rotations=True)
    asm, t = system.asm, system.t
    settings = newton or NewtonSettings()
    x0 = system.start(u)
    where = f"t = {t:g} s"
    try:
        try:
            x, log = system.solve(x0, settings)
        except NewtonFailure:
            x, log = system.solve_by_continuation(x0, settings)
    except NewtonFailure as exc:
        if isinstance(exc, SingularJacobian) and exc.iteration == 0:
            raise statics_error(asm, exc.matrix, "equilibrium", 1.0, system.state(x0)[0],
                                f"{where}: a motion that no stiffness, load, drive or joint resists",
                                direction=exc.direction) from exc
        raise EquilibriumError(f"equilibrium at {where}: Newton found none ({exc}); start nearer the "
                               "equilibrium you want (u0), or check that the loads can be carried (a free "
                               f"mechanism under a load it cannot balance has no equilibrium)\n{exc.log.format()}",
                               exc.log) from exc
    matrix = system.matrix(x)
    u_end = system.state(x)[0]
    if not _regular(matrix):
        raise statics_error(asm, matrix, "equilibrium", 1.0, u_end, f"{where}, at the equilibrium found: it is not "
                            "isolated (add the drive, support or load that holds the free motion)")
    lam = system.state(x)[1]
    smallest = _smallest_stiffness(asm, u_end, t, lam) if system.nf <= STABILITY_CHECK_SIZE else None
    if smallest is not None and smallest < 0.0:
        warnings.warn(f"equilibrium at {where} is unstable: the tangent on the joints' free motions has a "
                      f"negative eigenvalue ({smallest:.3g}); a run started here departs from it. Start Newton "
                      "nearer the stable equilibrium (u0)", FlexmbWarning, stacklevel=2)
    return _result(system, x, log, smallest)


@keywords_listed
def linear_static(model: Model | Assembly, t: float = 0.0, u0: np.ndarray | None = None) -> Equilibrium:
    """The small-displacement static solution at time ``t`` (s) about ``u0`` (n_dof,; default the
    reference configuration): one Newton step with the multipliers starting at zero,

        [[K, C^T], [C, 0]] (du, lambda) = -(q(u0) - f(t), Phi(u0, t))

    (K the tangent at u0 with its geometric and load stiffness, C the joints' Jacobian), loads,
    drives and prescribed DOFs of t as in :func:`equilibrium`. The reactions and joint reactions
    are evaluated at the displaced state (they differ from the linear ones by terms of second order
    in the displacements); ``stable`` is None. A mechanism has no linear solution (its matrix is
    singular at zero multipliers): a SingularSystemError names its free DOFs; use
    :func:`equilibrium`."""
    system, u = _system(model, t, u0, "linear_static", cap_rotations=False)
    x0 = system.start(u, np.zeros(system.n_c))
    r, matrix, scale = system.residual(x0)
    matrix = matrix.copy()
    if not _regular(matrix):
        raise statics_error(system.asm, matrix, "linear statics", 1.0, u, f"t = {system.t:g} s (a mechanism has no "
                            "small-displacement solution: fm.equilibrium solves it with the loads' stiffness)")
    dx = Factorization(matrix).solve(-r)
    x = system.update(x0, dx)
    log = NewtonLog(residual_norms=[float(np.linalg.norm(r))], increment_norms=[float(np.linalg.norm(dx))],
                    force_scale=scale, force_scales=[scale], converged=True, criterion="linear")
    return _result(system, x, log, None)


def _smallest_stiffness(asm: Assembly, u: np.ndarray, t: float, lam: np.ndarray) -> float:
    """Smallest eigenvalue of Z^T (K + K_c) Z, Z an orthonormal basis of null(C) on the free DOFs
    (all free DOFs without joints), relative to the largest |eigenvalue| of the same matrix."""
    free = asm.dofs.free
    asm.set_time(t)
    _, k_data = asm.force_and_tangent(u)
    if asm.configuration_loads:
        k_data = k_data - asm.load_stiffness_data(u, t)
    K = asm.free_matrix(k_data).toarray()
    cs = asm.constraints
    Z = np.eye(free.size)
    if cs is not None and cs.n:
        ct = cs.evaluate(u, t, lam)
        pos = asm.dofs.free_position
        rows, cols, vals = ct.k
        keep = (pos[rows] >= 0) & (pos[cols] >= 0)
        np.add.at(K, (pos[rows[keep]], pos[cols[keep]]), vals[keep])
        Z = sla.null_space(ct.C[:, free].toarray())
    if Z.shape[1] == 0:
        return 0.0
    H = Z.T @ (0.5 * (K + K.T)) @ Z                   # the second variation is symmetric at equilibrium
    values = np.linalg.eigvalsh(H)
    top = float(np.abs(values).max())
    return float(values[0]) if top == 0.0 or values[0] < -1e-9 * top else max(float(values[0]), 0.0)
