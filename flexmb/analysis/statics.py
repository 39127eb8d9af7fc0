"""Nonlinear statics by load control on the shared Newton driver.

Solves ``q(u) = lam f`` for a sequence of load factors ``lam``: constant loads, gravity and
constant prescribed displacements are scaled by ``lam``; loads and prescribed values given as
functions are evaluated at ``lam`` (pseudo-time). A failed increment is retried as two half
increments, up to ``max_cutbacks`` halvings. Follower and semi-tangential loads enter with
their load stiffness; spatial rotations are updated by composition (:meth:`Assembly.update`).
"""
from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import Sequence

import numpy as np

from flexmb.assembly import Assembly
from flexmb.integrators.newton import NewtonFailure, NewtonSettings, newton_solve
from flexmb.model import Model, ModelError
from flexmb.multibody.initial import refuse_joints
from flexmb.progress import Progress
from flexmb.results import ModelLayout, StaticPath


class StaticSolveError(RuntimeError):
    """An increment failed even after cut-back; ``path`` holds the converged states before it."""

    def __init__(self, message: str, path: StaticPath) -> None:
        super().__init__(message)
        self.path = path


def load_control(model: Model | Assembly, load_factors: Sequence[float] | int = 10,
                 newton: NewtonSettings | None = None, max_cutbacks: int = 6,
                 u0: np.ndarray | None = None, progress: bool | None = None,
                 save_to: str | Path | None = None) -> StaticPath:
    """Trace equilibrium for increasing load factors (an int n means n equal steps to 1).

    ``save_to`` names a result file (HDF5) that receives each converged state at once;
    ``progress`` shows a bar (default: when stderr is a terminal). Cut-backs are entered in the
    run log (``path.events``).
    """
    asm = model if isinstance(model, Assembly) else Assembly(model)
    refuse_joints(asm, "load_control")
    lams = np.linspace(0.0, 1.0, int(load_factors) + 1)[1:] if isinstance(load_factors, (int, np.integer)) \
        else np.asarray(load_factors, dtype=float)
    if lams.size == 0:
        raise ModelError("load_control needs at least one load factor")
    settings = newton or NewtonSettings()
    u = np.zeros(asm.n_dof) if u0 is None else np.array(u0, dtype=float)
    path = StaticPath(ModelLayout.from_assembly(asm), "load control")
    lam = 0.0
    with path.recording(save_to), closing(Progress(float(lams[-1]), "load control", "", progress)) as bar:
        for target in lams:
            try:
                u, lam = _increment(asm, u, lam, float(target), settings, max_cutbacks, path)
            except NewtonFailure as exc:
                message = (f"load control: no equilibrium found between load factors {lam:.6g} and "
                           f"{target:.6g} after {max_cutbacks} cut-backs: {exc}")
                path.log_event(lam, "error", message)
                raise StaticSolveError(message + f"\n{exc.log.format()}", path) from exc
            bar.update(lam, newton=path.newton_logs[-1].iterations, cutbacks=path.cutbacks)
    return path


def _increment(asm: Assembly, u: np.ndarray, lam: float, target: float, settings: NewtonSettings,
               cutbacks_left: int, path: StaticPath) -> tuple[np.ndarray, float]:
    try:
        return _solve_at(asm, u, target, settings, path), target
    except NewtonFailure:
        if cutbacks_left == 0:
            raise
        path.cutbacks += 1
        path.log_event(lam, "cutback", f"increment to {target:.6g} did not converge; two half increments")
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
    path.record(asm, lam, u, reaction, log)
    return u
