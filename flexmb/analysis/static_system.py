"""Static equilibrium equations with joints and ties: the unknowns, residual, Newton matrix and
update shared by :func:`~flexmb.analysis.equilibrium.equilibrium`,
:func:`~flexmb.analysis.equilibrium.linear_static`, :func:`~flexmb.analysis.statics.load_control`
and :func:`~flexmb.analysis.arc_length.arc_length`.

Equilibrium of a model whose joints and ties (:mod:`flexmb.multibody.constraints`) hold
``Phi(u, t) = 0`` (n_c,) with Lagrange multipliers ``lambda`` (N, N m):

    g(u) + C(u)^T lambda = 0,    Phi(u, t) = 0,

``g = q(u) - f(u)`` the internal minus the external forces at the load level of the analysis
(a load factor or a time, :class:`ForceFunction`), C = dPhi/du. Drives (a joint's prescribed angle or
slide) are held at their value at the analysis time ``t``. Newton's unknowns are
``x = (u_free (n_f,), lambda / lambda_s (n_c,))`` and its residual and matrix

    r = [g_free + (C^T lambda)_free ; kappa Phi],
    J = [[K + K_c, lambda_s C_free^T], [kappa C_free, 0]],

with K = dg/du (element tangents and load stiffness), K_c = d(C^T lambda)/du (the joints'
curvature times the multipliers; spatial rotations by spins), the same matrix as the
mid-point scheme's without its inertia (:meth:`ConstraintSystem.augmented`), never symmetrised,
factorised by the equilibrated sparse LU of :func:`~flexmb.integrators.newton.newton_solve`.
``lambda_s`` scales the multipliers to order one (their least-squares start, below) and
``kappa = 100 F / L`` the constraint rows (F the force scale, L the model size), so that
``|r| <= tol F`` holds ``|Phi| <= 1e-2 tol L``.

Multipliers start from the least-squares balance of the loads at the start state,
``C^T lambda_0 ~ -g`` (sparse LSQR): a mechanism (rigid links on joints) has K = 0 on its
motions, and only K_c stiffens them; started from lambda = 0 its matrix would be singular.
Models without joints or ties have x = u_free and the plain static residual.

Flexible mechanisms whose elements carry no load at the start (links pinned at their end nodes)
have no stiffness along their motions even with lambda_0: :meth:`StaticSystem.solve_by_continuation`
then solves by pseudo-transient continuation (``g + mu M (u - u_k)``, mu falling by 10 per stage,
each stage an implicit step of a heavily damped motion), ending with the plain equations.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import scipy.sparse as sp

from flexmb.assembly import Assembly
from flexmb.integrators.newton import (MAX_ROTATION_CORRECTION, KeptFactorization, NewtonLog, NewtonSettings,
                                     newton_solve)

#: forces(u (n_dof,), load, tangent) -> (g = q - f (n_dof,), dg/du data (nnz,) or None, force
#: scale F in N); ``load`` is the load factor (statics) or unused (equilibrium at a time)
ForceFunction = Callable[[np.ndarray, float, bool], tuple[np.ndarray, np.ndarray | None, float]]

#: constraint rows are scaled by kappa = CONSTRAINT_WEIGHT F / L: |r| <= tol F holds |Phi| <= tol L / 100
CONSTRAINT_WEIGHT = 100.0

#: pseudo-transient continuation: mu_0 = CONTINUATION_START F / (m L) (1/s^2), divided by 10 per stage
CONTINUATION_START = 1.0
CONTINUATION_STAGES = 8


class StaticSystem:
    """The equations of one static analysis on ``x = (u_free, lambda / lambda_s)``.

    ``forces`` gives g = q - f at the current ``load`` (set the attribute before solving);
    ``t`` (s) is the time at which drives and ties are evaluated. ``cap_rotations`` scales a
    correction down to rotations of ``MAX_ROTATION_CORRECTION`` (a start far from the solution
    may ask for radians). After every :meth:`residual` call, ``last`` holds ``g`` (n_dof,, with the
    joint forces), the constraint terms ``ct`` and the matrix ``J`` (None without the tangent; the
    shared object); newton_solve's last call is at its solution.
    """

    def __init__(self, asm: Assembly, forces: ForceFunction, t: float = 0.0, cap_rotations: bool = False) -> None:
        self.asm = asm
        self.forces = forces
        self.t = float(t)
        self.load = 1.0
        self.cs = asm.constraints
        self.free = asm.dofs.free
        self.nf = self.free.size
        self.n_c = self.cs.n if self.cs is not None else 0
        self.n = self.nf + self.n_c
        #: multipliers per unknown (N or N m); set by the first :meth:`start`
        self.lam_scale: float | None = None
        self.u = np.zeros(asm.n_dof)                            # the working configuration
        self.length = asm.characteristic_length
        self.last: dict = {}
        self._capped = (asm.rotation_dofs.ravel() if asm.rotation_dofs.size else asm.planar_rotations) \
            if cap_rotations else np.zeros(0, dtype=np.int64)
        #: (n,) size of each unknown beyond its value, for Newton's round-off test
        self.magnitudes = np.concatenate([asm.round_off_lengths[self.free], np.ones(self.n_c)])
        #: mass term mu M (u - anchor) of the continuation (mu in 1/s^2), off at mu = 0
        self.mu = 0.0
        self.anchor = np.zeros(asm.n_dof)

    # ------------------------------------------------------------------ unknowns
    def least_squares_multipliers(self, u: np.ndarray) -> np.ndarray:
        """Multipliers (n_c,) that balance the loads at u best, C^T lambda ~ -g on the free DOFs
        (sparse LSQR: C has a few entries per row and the model may be large)."""
        import scipy.sparse.linalg as spla  # imported here: a run that never needs it skips its import

        if not self.n_c:
            return np.zeros(0)
        g = self.forces(u, self.load, False)[0]
        C = self.cs.evaluate(u, self.t, np.zeros(self.n_c)).C[:, self.free]
        return spla.lsqr(C.T.tocsr(), -g[self.free], atol=1e-14, btol=1e-14)[0]

    def start(self, u: np.ndarray, multipliers: np.ndarray | None = None) -> np.ndarray:
        """Unknowns x (n,) of the configuration u (n_dof,, copied into the working state, prescribed
        DOFs included) with the given multipliers (default: least squares, see the module docstring)."""
        self.u[:] = u
        if not self.n_c:
            return u[self.free].copy()
        lam = self.least_squares_multipliers(u) if multipliers is None else np.asarray(multipliers, dtype=float)
        if self.lam_scale is None:
            self.lam_scale = float(np.abs(lam).max(initial=0.0)) or self.forces(u, self.load, False)[2] or 1.0
        return np.concatenate([u[self.free], lam / self.lam_scale])

    def state(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Configuration (n_dof,) and multipliers (n_c,) of the unknowns x (copies)."""
        u = self.u.copy()
        u[self.free] = x[:self.nf]
        return u, x[self.nf:] * (self.lam_scale or 1.0)

    def pad(self, v_free: np.ndarray) -> np.ndarray:
        """A vector on the free DOFs (n_f,) as one on the unknowns (n,), zero at the multipliers."""
        return np.concatenate([v_free, np.zeros(self.n_c)])

    # ------------------------------------------------------------------ equations
    def residual(self, x: np.ndarray, tangent: bool = True) -> tuple[np.ndarray, sp.csc_matrix | None, float]:
        """r (n,), the Newton matrix J (n, n; the assembly's shared object: copy it to keep it) and
        the force scale F (N) at x, for newton_solve."""
        asm, free = self.asm, self.free
        self.u[free] = x[:self.nf]
        g, k_data, scale = self.forces(self.u, self.load, tangent)
        if self.mu:
            g = g + self.mu * asm.mass_times(self.u - self.anchor)
            if tangent:
                k_data = k_data + asm.scaled_mass_data(self.mu)
        jac = asm.jacobian_matrix(k_data) if tangent else None
        if not self.n_c:
            self.last = {"g": g, "ct": None, "J": jac}
            return g[free], jac, scale
        lam_s = self.lam_scale
        ct = self.cs.evaluate(self.u, self.t, x[self.nf:] * lam_s)
        g = g + ct.force
        scale = max(scale, float(np.linalg.norm(ct.force[free]))) or asm.inertia_scale * self.length
        kappa = CONSTRAINT_WEIGHT * scale / self.length
        J = self.cs.augmented(ct, jac, asm.dofs.free_position, lam_s, kappa) if tangent else None
        self.last = {"g": g, "ct": ct, "J": J}
        return np.concatenate([g[free], kappa * ct.phi]), J, scale

    def matrix(self, x: np.ndarray) -> sp.csc_matrix:
        """The Newton matrix at x, a copy."""
        return self.residual(x)[1].copy()

    def update(self, x: np.ndarray, dx: np.ndarray) -> np.ndarray:
        """x moved by the correction dx: spatial rotations compose (:meth:`Assembly.update`)."""
        du = np.zeros(self.asm.n_dof)
        du[self.free] = dx[:self.nf]
        self.u[self.free] = x[:self.nf]
        if self._capped.size:
            largest = float(np.abs(du[self._capped]).max())
            if largest > MAX_ROTATION_CORRECTION:
                du *= MAX_ROTATION_CORRECTION / largest
                dx = dx * (MAX_ROTATION_CORRECTION / largest)
        return np.concatenate([self.asm.update(self.u, du)[self.free], x[self.nf:] + dx[self.nf:]])

    def solve(self, x0: np.ndarray, settings: NewtonSettings, determinant_signs: bool = False,
              last: KeptFactorization | None = None) -> tuple[np.ndarray, NewtonLog]:
        """Newton from x0 (:func:`newton_solve`, which leaves its last factorisation in ``last``);
        raises its NewtonFailure."""
        return newton_solve(self.residual, x0, self.length, settings, self.update, determinant_signs=determinant_signs,
                            magnitudes=self.magnitudes, last=last)

    def solve_by_continuation(self, x0: np.ndarray, settings: NewtonSettings, determinant_signs: bool = False,
                              last: KeptFactorization | None = None) -> tuple[np.ndarray, NewtonLog]:
        """Newton from x0 found no stiffness (a flexible mechanism at rest: see the module
        docstring). Solve ``g + mu M (u - u_k) = 0`` from the previous solution u_k for mu falling
        by 10 per stage, then the plain equations from the last stage; the log is the last solve's."""
        mass = float(self.asm.mass.diagonal()[self.free].sum()) or self.asm.inertia_scale
        force = self.residual(x0, tangent=False)[2]
        mu = CONTINUATION_START * (force or self.asm.inertia_scale * self.length) / (mass * self.length)
        x = x0
        try:
            for _ in range(CONTINUATION_STAGES):
                self.mu = mu
                self.anchor[:] = self.u
                self.anchor[self.free] = x[:self.nf]
                x, _ = self.solve(x, settings)
                mu *= 0.1
        finally:
            self.mu = 0.0
        return self.solve(x, settings, determinant_signs, last)

    # ------------------------------------------------------------------ results
    def reaction(self) -> np.ndarray:
        """Support reactions (n_dof,, N and N m) of the last evaluation: g with the joint forces at
        the prescribed DOFs, zero at the free DOFs."""
        r = self.last["g"].copy()
        r[self.free] = 0.0
        return r
