"""Nonlinear statics by load control on the shared Newton driver.

Solves ``q(u) = lam f`` for a sequence of load factors ``lam``: constant loads, gravity and
constant prescribed displacements are scaled by ``lam``; loads and prescribed values given as
functions are evaluated at ``lam`` (pseudo-time). A failed increment is retried as two half
increments, up to ``max_cutbacks`` halvings. Follower and semi-tangential loads enter with
their load stiffness; spatial rotations are updated by composition (:meth:`Assembly.update`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from flexmb.assembly import Assembly
from flexmb.integrators.newton import NewtonFailure, NewtonLog, NewtonSettings, newton_solve
from flexmb.model import Model, ModelError


@dataclass
class StaticPath:
    """Equilibrium states along the load path."""

    load_factors: list[float] = field(default_factory=list)
    u: list[np.ndarray] = field(default_factory=list)           # (n_dof,) each
    reactions: list[np.ndarray] = field(default_factory=list)   # (n_dof,) each, zero at free DOFs
    newton_logs: list[NewtonLog] = field(default_factory=list)
    cutbacks: int = 0


class StaticSolveError(RuntimeError):
    """An increment failed even after cut-back; ``path`` holds the converged states before it."""

    def __init__(self, message: str, path: StaticPath) -> None:
        super().__init__(message)
        self.path = path


def load_control(model: Model | Assembly, load_factors: Sequence[float] | int = 10,
                 newton: NewtonSettings | None = None, max_cutbacks: int = 6,
                 u0: np.ndarray | None = None) -> StaticPath:
    """Trace equilibrium for increasing load factors (an int n means n equal steps to 1)."""
    asm = model if isinstance(model, Assembly) else Assembly(model)
    lams = np.linspace(0.0, 1.0, int(load_factors) + 1)[1:] if isinstance(load_factors, (int, np.integer)) \
        else np.asarray(load_factors, dtype=float)
    if lams.size == 0:
        raise ModelError("load_control needs at least one load factor")
    settings = newton or NewtonSettings()
    u = np.zeros(asm.n_dof) if u0 is None else np.array(u0, dtype=float)
    path = StaticPath()
    lam = 0.0
    for target in lams:
        try:
            u, lam = _increment(asm, u, lam, float(target), settings, max_cutbacks, path)
        except NewtonFailure as exc:
            raise StaticSolveError(f"load control: no equilibrium found between load factors "
                                   f"{lam:.6g} and {target:.6g} after {max_cutbacks} cut-backs: "
                                   f"{exc}\n{exc.log.format()}", path) from exc
    return path


def _increment(asm: Assembly, u: np.ndarray, lam: float, target: float, settings: NewtonSettings,
               cutbacks_left: int, path: StaticPath) -> tuple[np.ndarray, float]:
    try:
        return _solve_at(asm, u, target, settings, path), target
    except NewtonFailure:
        if cutbacks_left == 0:
            raise
        path.cutbacks += 1
        mid = 0.5 * (lam + target)
        u_mid, _ = _increment(asm, u, lam, mid, settings, cutbacks_left - 1, path)
        return _increment(asm, u_mid, mid, target, settings, cutbacks_left - 1, path)


def _solve_at(asm: Assembly, u_start: np.ndarray, lam: float, settings: NewtonSettings,
              path: StaticPath) -> np.ndarray:
    free, presc = asm.dofs.free, asm.dofs.prescribed
    u = u_start.copy()
    u[presc] = asm.prescribed_values(lam, statics=True)

    last = {}                                   # Newton's last evaluation is at its solution

    def residual(x_free: np.ndarray):
        u[free] = x_free
        r, k_data, scale = asm.static_residual(u, lam)
        last["r"] = r
        return r[free], asm.free_matrix(k_data), scale

    def update(x_free: np.ndarray, dx_free: np.ndarray) -> np.ndarray:
        du = np.zeros(asm.n_dof)
        du[free] = dx_free
        u[free] = x_free
        return asm.update(u, du)[free]

    x, log = newton_solve(residual, u[free], asm.model.characteristic_length, settings, update)
    u[free] = x
    reaction = last["r"]
    reaction[free] = 0.0
    path.load_factors.append(lam)
    path.u.append(u.copy())
    path.reactions.append(reaction)
    path.newton_logs.append(log)
    return u
