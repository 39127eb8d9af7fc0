"""Time integration schemes: the energy-conserving mid-point scheme and trapezoidal Newmark.

A scheme knows how the end-of-step velocity and acceleration follow from the end-of-step
displacement, and which residual and Jacobian Newton has to zero. It does not loop over time
(:mod:`flexmb.integrators.time_stepping` does) and does not solve (:mod:`.newton` does).

Residual sign convention: ``g = q_int - f_ext + M a`` (internal minus external plus inertia).
At prescribed DOFs ``g`` is the reaction the supports exert on the structure.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np
import scipy.sparse.linalg as spla

from flexmb.assembly import Assembly


@dataclass
class State:
    """Displacements, velocities, accelerations (n_dof,) and support reactions at time t."""

    t: float
    u: np.ndarray
    v: np.ndarray
    a: np.ndarray
    reaction: np.ndarray
    work: float = 0.0        # work of loads and reactions since the start, J


@dataclass
class StepResidual:
    """What Newton needs at one iterate, plus what the step bookkeeping needs afterwards."""

    g: np.ndarray            # (n_dof,) residual over all DOFs, N
    jacobian_data: np.ndarray  # (nnz,) values of dg_free/du1_free on the assembly pattern
    force_scale: float       # N
    f_ext: np.ndarray        # (n_dof,) external force acting over the step (scheme's average), N


class Scheme(ABC):
    """A one-step implicit scheme for M a + q(u) = f(t)."""

    name: str = ""

    def __init__(self, assembly: Assembly) -> None:
        self.asm = assembly

    def initial_state(self, t0: float, u0: np.ndarray, v0: np.ndarray) -> State:
        return State(t0, u0.copy(), v0.copy(), np.zeros_like(u0), np.zeros_like(u0))

    def predict(self, s: State, dt: float) -> np.ndarray:
        """Start value of u_{n+1} for Newton: constant-velocity extrapolation."""
        return s.u + dt * s.v

    @abstractmethod
    def kinematics(self, s: State, dt: float, u1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """End-of-step velocity and acceleration (n_dof,) implied by u1."""

    @abstractmethod
    def residual(self, s: State, dt: float, u1: np.ndarray) -> StepResidual:
        """Residual and Jacobian data at the iterate u1."""

    def reaction(self, res: StepResidual) -> np.ndarray:
        """Support reactions (n_dof,), zero at free DOFs, from a converged residual."""
        r = np.zeros_like(res.g)
        p = self.asm.dofs.prescribed
        r[p] = res.g[p]
        return r

    @abstractmethod
    def work_increment(self, s: State, res: StepResidual, u1: np.ndarray) -> float:
        """Work of loads and support reactions over the step (J), consistent with the scheme."""

    @staticmethod
    def _scale(free: np.ndarray, *terms: np.ndarray) -> float:
        return max(float(np.linalg.norm(t[free])) for t in terms)


class MidPoint(Scheme):
    """Energy-conserving mid-point scheme (Crisfield & Shi 1993, eqs. 1, 6-9, 38-40).

    ``u_{n+1} = u_n + dt (v_n + v_{n+1}) / 2``, ``a_m = (v_{n+1} - v_n) / dt`` and mid-point
    equilibrium ``g_m = q_m - f_m + M a_m = 0`` with the elements' averaged (energy-conserving)
    internal force q_m and ``f_m = (f_n + f_{n+1}) / 2``. Then
    ``dK + dPhi - f_m . du = du . g_m`` (their eq. 21/43): with constant loads the total energy is
    conserved to the Newton tolerance for any dt. Jacobian ``dq_m/du_{n+1} + 2 M / dt^2``
    (their eq. 23) is non-symmetric.
    """

    name = "mid-point"

    def kinematics(self, s: State, dt: float, u1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v1 = 2.0 * (u1 - s.u) / dt - s.v
        return v1, (v1 - s.v) / dt

    def residual(self, s: State, dt: float, u1: np.ndarray) -> StepResidual:
        asm = self.asm
        v1, a_m = self.kinematics(s, dt, u1)
        q_m, k_data = asm.mid_point_force_and_tangent(s.u, u1)
        f_m = 0.5 * (asm.external_force(s.t) + asm.external_force(s.t + dt))
        inertia = asm.mass @ a_m
        g = q_m - f_m + inertia
        data = k_data + (2.0 / dt**2) * asm.mass_data
        return StepResidual(g, data, self._scale(asm.dofs.free, q_m, f_m, inertia), f_m)

    def work_increment(self, s: State, res: StepResidual, u1: np.ndarray) -> float:
        return float((res.f_ext + self.reaction(res)) @ (u1 - s.u))


class Newmark(Scheme):
    """Trapezoidal Newmark (average acceleration, beta = 1/4, gamma = 1/2), end-point equilibrium.

    ``a_{n+1} = 4 (u_{n+1} - u_n) / dt^2 - 4 v_n / dt - a_n``, ``v_{n+1} = v_n + dt (a_n + a_{n+1}) / 2``,
    ``q(u_{n+1}) - f_{n+1} + M a_{n+1} = 0``. Unconditionally stable for linear problems only: with
    stiff co-rotational bars it can lock onto axial vibration (Crisfield & Shi 1993, Figs. 2-4).
    """

    name = "newmark"

    def initial_state(self, t0: float, u0: np.ndarray, v0: np.ndarray) -> State:
        """Initial acceleration from equilibrium at t0 (prescribed DOFs start with zero acceleration)."""
        asm = self.asm
        free = asm.dofs.free
        rhs = asm.external_force(t0) - asm.internal_force(u0)
        a0 = np.zeros_like(u0)
        a0[free] = spla.splu(asm.free_matrix(asm.mass_data)).solve(rhs[free])
        reaction = asm.internal_force(u0) - asm.external_force(t0) + asm.mass @ a0
        reaction[free] = 0.0
        return State(t0, u0.copy(), v0.copy(), a0, reaction)

    def kinematics(self, s: State, dt: float, u1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a1 = 4.0 * (u1 - s.u) / dt**2 - 4.0 * s.v / dt - s.a
        return s.v + 0.5 * dt * (s.a + a1), a1

    def residual(self, s: State, dt: float, u1: np.ndarray) -> StepResidual:
        asm = self.asm
        _, a1 = self.kinematics(s, dt, u1)
        q1, k_data = asm.force_and_tangent(u1)
        f1 = asm.external_force(s.t + dt)
        inertia = asm.mass @ a1
        g = q1 - f1 + inertia
        data = k_data + (4.0 / dt**2) * asm.mass_data
        # external force over the step for the work balance: trapezoidal average
        f_avg = 0.5 * (asm.external_force(s.t) + f1)
        return StepResidual(g, data, self._scale(asm.dofs.free, q1, f1, inertia), f_avg)

    def work_increment(self, s: State, res: StepResidual, u1: np.ndarray) -> float:
        return float((res.f_ext + 0.5 * (s.reaction + self.reaction(res))) @ (u1 - s.u))


SCHEMES = {"mid-point": MidPoint, "newmark": Newmark}
