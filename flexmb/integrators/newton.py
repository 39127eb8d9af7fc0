"""Newton-Raphson driver shared by the time integration schemes and statics.

The Jacobian is factorised with a sparse LU (SuperLU through ``scipy.sparse.linalg.splu``); the
mid-point tangent is non-symmetric and is never symmetrised.

Convergence: ``|r| <= residual_tol * force_scale`` (force_scale is the largest of the force
terms in the residual, supplied by the caller), or, once the residual has reached the level
where round-off dominates (stiff bars: ``|r| <= 1e-6 force_scale``), the correction
``|dx| <= increment_tol * length_scale``, or (stagnation at that level) the residual stopped
decreasing for two iterations while the corrections stay below ``stagnation_tol * length_scale``:
the residual has reached its round-off floor (about eps EA for stiff members), where further
iterations only move round-off around.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla


@dataclass
class NewtonSettings:
    """Tolerances of the Newton iteration (relative, dimensionless)."""

    residual_tol: float = 1e-10
    increment_tol: float = 1e-12
    max_iterations: int = 40
    #: the residual must be at least this small (relative) before the increment criterion counts
    increment_gate: float = 1e-6
    #: corrections (relative to the length scale) below which a stalled residual counts as converged
    stagnation_tol: float = 1e-9


@dataclass
class NewtonLog:
    """Residual and correction norms of every iteration of one solve."""

    residual_norms: list[float] = field(default_factory=list)
    increment_norms: list[float] = field(default_factory=list)
    force_scale: float = 0.0
    force_scales: list[float] = field(default_factory=list)   # per iteration, N
    converged: bool = False
    criterion: str = ""

    @property
    def iterations(self) -> int:
        return len(self.increment_norms)

    def format(self) -> str:
        """One line per iteration: k, |r|/scale, |dx|."""
        lines = []
        for k, rn in enumerate(self.residual_norms):
            dx = f"{self.increment_norms[k]:10.3e}" if k < len(self.increment_norms) else f"{'-':>10s}"
            scale = self.force_scales[k] if k < len(self.force_scales) else self.force_scale
            lines.append(f"  it {k:2d}  |r|/F = {rn / scale:10.3e}  |dx| = {dx}")
        return "\n".join(lines)


class NewtonFailure(RuntimeError):
    """Newton did not converge (or met a singular tangent); carries the iteration log."""

    def __init__(self, message: str, log: NewtonLog) -> None:
        super().__init__(message)
        self.log = log


ResidualFunction = Callable[[np.ndarray], tuple[np.ndarray, sp.csc_matrix, float]]


def newton_solve(residual_and_jacobian: ResidualFunction, x0: np.ndarray, length_scale: float,
                 settings: NewtonSettings | None = None,
                 update: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None
                 ) -> tuple[np.ndarray, NewtonLog]:
    """Solve r(x) = 0 from ``x0``.

    ``residual_and_jacobian(x)`` returns ``(r, J, force_scale)`` with r (n,), J a sparse (n, n)
    matrix and force_scale (N) the magnitude the residual is compared with. The last call is
    always made at the returned solution, so callers may keep what it computed.
    ``update(x, dx)`` applies a correction (default ``x + dx``); spatial rotations compose
    multiplicatively, and J must then be the derivative with respect to that correction.
    """
    s = settings or NewtonSettings()
    x = np.array(x0, dtype=float)
    log = NewtonLog()
    r, J, scale = residual_and_jacobian(x)
    for k in range(s.max_iterations + 1):
        scale = max(scale, np.finfo(float).tiny)
        rn = float(np.linalg.norm(r))
        log.residual_norms.append(rn)
        log.force_scale = scale
        log.force_scales.append(scale)
        if not np.isfinite(rn):
            raise NewtonFailure(f"residual is not finite at iteration {k}", log)
        if rn <= s.residual_tol * scale:
            log.converged, log.criterion = True, "residual"
            return x, log
        if k == s.max_iterations:
            break
        try:
            dx = spla.splu(sp.csc_matrix(J)).solve(-r)
        except RuntimeError as exc:                      # SuperLU: "Factor is exactly singular"
            raise NewtonFailure(f"singular tangent at iteration {k}: {exc}", log) from exc
        if not np.all(np.isfinite(dx)):
            raise NewtonFailure(f"non-finite Newton correction at iteration {k}", log)
        x = x + dx if update is None else update(x, dx)
        r, J, scale = residual_and_jacobian(x)
        dn = float(np.linalg.norm(dx))
        log.increment_norms.append(dn)
        if dn <= s.increment_tol * length_scale and rn <= s.increment_gate * scale:
            log.converged, log.criterion = True, "increment"
            return x, log
        if _stagnated(log, s, length_scale):
            log.converged, log.criterion = True, "stagnation"
            return x, log
    raise NewtonFailure(f"no convergence in {s.max_iterations} iterations "
                        f"(|r|/F = {log.residual_norms[-1] / log.force_scale:.3e})", log)


def _stagnated(log: NewtonLog, s: NewtonSettings, length_scale: float) -> bool:
    """The last three residuals are at the round-off level and none of the last two halved the
    smallest before them, while the last two corrections were tiny."""
    r, f, d = log.residual_norms, log.force_scales, log.increment_norms
    if len(r) < 3 or len(d) < 2:
        return False
    tiny = all(dn <= s.stagnation_tol * length_scale for dn in d[-2:])
    low = all(rk <= s.increment_gate * fk for rk, fk in zip(r[-3:], f[-3:]))
    return tiny and low and min(r[-2:]) > 0.5 * r[-3]

