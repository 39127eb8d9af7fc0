"""Static equilibrium of a model with joints, rigid bodies and drives: the state a run can start from.

:func:`equilibrium` solves, at a time t, the augmented equilibrium of everything ``integrate``
takes (elements, rigid bodies, force elements, loads, gravity, joints and ties)

    q(u) - f(t, u) + C(u)^T lambda = 0,    Phi(u, t) = 0,

by Newton on (u_free, lambda) with the matrix ``[[K + K_c, C^T], [C, 0]]`` (K the tangent of the
elements with the load stiffness, K_c = d(C^T lambda)/du the joints' curvature times the
multipliers), solved by the equilibrated sparse LU of the shared Newton driver
(:func:`~flexmb.integrators.newton.newton_solve`), not symmetrised. Drives and prescribed DOFs are
held at their values at t, loads are those of t in full (not ramped: a mechanism has no stiffness
without them, see below). Spatial rotations are updated by composition.

A mechanism (rigid links on joints) carries its loads through the multipliers only: K vanishes on
its motions, and only the multipliers' curvature K_c stiffens them. Newton therefore starts from
the multipliers that balance the loads at the start state in the least-squares sense, C^T lambda_0
~ f - q, not from zero (where the matrix of a hanging pendulum would be singular). An equilibrium
may be unstable (the pendulum upright): the second-order test on the joints' tangent space,
the smallest eigenvalue of Z^T (K + K_c) Z with Z a basis of the null space of C on the free DOFs,
is reported as :attr:`Equilibrium.stable` (models up to ``STABILITY_CHECK_SIZE`` free DOFs) and a
:class:`~flexmb.checks.FlexmbWarning` says when it is negative; a start nearer the wanted
equilibrium finds that one.

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
import scipy.sparse.linalg as spla

from flexmb.assembly import Assembly
from flexmb.checks import FlexmbWarning, ModelError, real
from flexmb.integrators.newton import (MAX_ROTATION_CORRECTION, NewtonFailure, NewtonLog, NewtonSettings,
                                       SingularJacobian, newton_solve)
from flexmb.model import Model

#: the stability test (a dense null space and eigenvalues) runs on models up to this many free DOFs
STABILITY_CHECK_SIZE = 3000


class EquilibriumError(RuntimeError):
    """Newton found no equilibrium; ``log`` is its last Newton log."""

    def __init__(self, message: str, log: NewtonLog | None = None) -> None:
        super().__init__(message)
        self.log = log


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


def equilibrium(model: Model | Assembly, t: float = 0.0, u0: np.ndarray | None = None,
                newton: NewtonSettings | None = None) -> Equilibrium:
    """Static equilibrium at time ``t`` (s) from the start ``u0`` (n_dof,; default the reference
    configuration), with joints, drives (held at their value at t), rigid bodies, gravity and
    loads (see the module docstring). Raises :class:`EquilibriumError` if Newton finds none,
    ModelError for bad input."""
    asm = model if isinstance(model, Assembly) else Assembly(model)
    t = real(t, "equilibrium: t (s)")
    n, free, presc = asm.n_dof, asm.dofs.free, asm.dofs.prescribed
    if u0 is None:
        u = np.zeros(n)
    else:
        u = np.array(u0, dtype=float)
        if u.shape != (n,) or not np.all(np.isfinite(u)):
            raise ModelError(f"equilibrium: u0 must be {n} finite numbers (one per DOF), got shape {u.shape}")
    settings = newton or NewtonSettings()
    cs = asm.constraints
    nf = free.size
    u[presc] = asm.prescribed_values(t)
    length = asm.characteristic_length
    last: dict = {}

    #: pseudo-transient term mu M (u - anchor) of the continuation (see below), mu in 1/s^2
    relax = {"mu": 0.0, "anchor": u.copy()}

    def forces(u_now: np.ndarray, tangent: bool):
        asm.set_time(t)
        mu = relax["mu"]
        q, k_data = asm.force_and_tangent(u_now, out=asm.scaled_mass_data(mu) if mu else None)
        f = asm.external_force(t, u=u_now)
        if asm.configuration_loads and tangent:
            k_data = k_data - asm.load_stiffness_data(u_now, t)
        scale = max(float(np.linalg.norm(q[free])), float(np.linalg.norm(f[free])))
        if mu:
            q = q + mu * asm.mass_times(u_now - relax["anchor"])
        return q - f, k_data, scale

    lam_scale = 1.0
    if cs is not None:
        g0, _, scale0 = forces(u, False)
        C0 = cs.evaluate(u, t, np.zeros(cs.n)).C[:, free]
        # sparse least squares: C has a few entries per row, and the model may be large
        lam_first = spla.lsqr(C0.T.tocsr(), -g0[free], atol=1e-14, btol=1e-14)[0] if cs.n else np.zeros(0)
        lam_scale = float(np.abs(lam_first).max(initial=0.0)) or scale0 or 1.0

    def residual(x: np.ndarray, tangent: bool = True):
        u[free] = x[:nf]
        g, k_data, scale = forces(u, tangent)
        jac = asm.jacobian_matrix(k_data) if tangent else None
        if cs is None:
            last["g"] = g
            return g[free], jac, scale
        lam = x[nf:] * lam_scale
        ct = last["ct"] = cs.evaluate(u, t, lam)
        g = last["g"] = g + ct.force
        scale = max(scale, float(np.linalg.norm(ct.force[free]))) or asm.inertia_scale * length
        kappa = 100.0 * scale / length                  # |r| <= tol F means |Phi| <= 1e-2 tol L
        J = cs.augmented(ct, jac, asm.dofs.free_position, lam_scale, kappa) if tangent else None
        return np.concatenate([g[free], kappa * ct.phi]), J, scale

    capped = asm.rotation_dofs.ravel() if asm.rotation_dofs.size else asm.planar_rotations

    def update(x: np.ndarray, dx: np.ndarray) -> np.ndarray:
        du = np.zeros(n)
        du[free] = dx[:nf]
        u[free] = x[:nf]
        if capped.size:
            largest = np.abs(du[capped]).max()
            if largest > MAX_ROTATION_CORRECTION:       # far from the solution a rotation may be asked for radians
                du *= MAX_ROTATION_CORRECTION / largest
                dx = dx * (MAX_ROTATION_CORRECTION / largest)
        return np.concatenate([asm.update(u, du)[free], x[nf:] + dx[nf:]])

    x0 = u[free] if cs is None else np.concatenate([u[free], lam_first / lam_scale])
    magnitudes = asm.round_off_lengths[free]
    if cs is not None:
        magnitudes = np.concatenate([magnitudes, np.ones(cs.n)])
    try:
        try:
            x, log = newton_solve(residual, x0, length, settings, update, magnitudes=magnitudes)
        except NewtonFailure:
            x, log = _continuation(asm, residual, update, x0, relax, lam_scale, length, settings, magnitudes)
    except NewtonFailure as exc:
        if isinstance(exc, SingularJacobian) and exc.iteration == 0:
            raise EquilibriumError(f"equilibrium at t = {t:g} s: the tangent is singular at the start: a motion that "
                                   "no stiffness, load or joint resists (a body free to spin about a spherical "
                                   "joint's axis, a mechanism without a drive or load along its motion); "
                                   "add the joint, drive or support that holds it", exc.log) from exc
        raise EquilibriumError(f"equilibrium at t = {t:g} s: Newton found none ({exc}); start nearer the "
                               "equilibrium you want (u0), or check that the loads can be carried (a free "
                               f"mechanism under a load it cannot balance has no equilibrium)\n{exc.log.format()}",
                               exc.log) from exc
    u[free] = x[:nf]
    lam = x[nf:] * lam_scale if cs is not None else np.zeros(0)
    residual(x, tangent=True)
    reaction = last["g"].copy()
    reaction[free] = 0.0
    names = [j.name for j in asm.model.joints] if cs is not None else []
    reactions = cs.joint_reactions(u, lam, t, asm.dofs) if cs is not None else []
    smallest = _smallest_stiffness(asm, u, t, lam) if nf <= STABILITY_CHECK_SIZE else None
    if smallest is not None and smallest < 0.0:
        warnings.warn(f"equilibrium at t = {t:g} s is unstable: the tangent on the joints' free motions has a "
                      f"negative eigenvalue ({smallest:.3g}); a run started here departs from it. Start Newton "
                      "nearer the stable equilibrium (u0)", FlexmbWarning, stacklevel=2)
    return Equilibrium(float(t), u.copy(), lam, reaction, names, [f for f, _ in reactions],
                       [m for _, m in reactions], smallest, log)


#: pseudo-transient continuation: mu_0 = CONTINUATION_START F / (m L), divided by 10 per stage
CONTINUATION_START = 1.0
CONTINUATION_STAGES = 8


def _continuation(asm: Assembly, residual, update, x0: np.ndarray, relax: dict, lam_scale: float, length: float,
                  settings: NewtonSettings, magnitudes: np.ndarray) -> tuple[np.ndarray, NewtonLog]:
    """Newton from x0 failed (a flexible mechanism: its unstressed elements and straight joints give
    no stiffness to its motions at the start). Pseudo-transient continuation: solve
    ``r(u) + mu M (u - u_k) = 0`` from the previous solution u_k for mu falling by 10 per stage
    (each stage an implicit step of a heavily damped motion towards equilibrium; M regularises the
    motions without stiffness), then the plain equilibrium from the last stage."""
    free = asm.dofs.free
    nf = free.size
    force = residual(x0, tangent=False)[2]
    mass = float(asm.mass.diagonal()[free].sum()) or asm.inertia_scale
    mu = CONTINUATION_START * (force or asm.inertia_scale * length) / (mass * length)
    x = x0
    for _ in range(CONTINUATION_STAGES):
        relax["mu"] = mu
        u_anchor = relax["anchor"]
        u_anchor[free] = x[:nf]
        x, _ = newton_solve(residual, x, length, settings, update, magnitudes=magnitudes)
        mu *= 0.1
    relax["mu"] = 0.0
    return newton_solve(residual, x, length, settings, update, magnitudes=magnitudes)


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
