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

Singular Jacobians (:class:`SingularJacobian`). The Jacobian is equilibrated before it is
factorised (:class:`Factorization`: every row scaled to a largest entry of 1, then every
column), which makes its LU pivots comparable whatever the units and stiffness of the unknowns
(translations and rotations, stiff bars and soft springs, joint multipliers). It counts as
singular when SuperLU meets an exactly zero pivot, when the smallest equilibrated pivot is at
the round-off level (:func:`pivot_tolerance`: 1e3 eps sqrt(n); measured: models without
supports and mechanisms give 1e-17..3e-14 up to n = 6000, the stiff validation models 1e-8 and
above), or when the correction is not finite or longer than ``ABSURD_CORRECTION`` length scales.
The callers decide whether that is structural (a mechanism, a DOF without mass and stiffness:
:mod:`flexmb.analysis.diagnostics`) or a singular point a smaller step can pass.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
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

    def __post_init__(self) -> None:
        from flexmb.checks import integer, real       # flexmb.checks imports this module lazily

        for name in ("residual_tol", "increment_tol", "increment_gate", "stagnation_tol"):
            setattr(self, name, real(getattr(self, name), f"NewtonSettings: {name}", low=0.0))
        self.max_iterations = integer(self.max_iterations, "NewtonSettings: max_iterations", low=1)


@dataclass
class NewtonLog:
    """Residual and correction norms of every iteration of one solve."""

    residual_norms: list[float] = field(default_factory=list)
    increment_norms: list[float] = field(default_factory=list)
    force_scale: float = 0.0
    force_scales: list[float] = field(default_factory=list)   # per iteration, N
    converged: bool = False
    criterion: str = ""
    #: per factorised Jacobian: the sign of its determinant (+1, -1) and its smallest pivot
    #: after equilibration (see :class:`Factorization`)
    tangent_signs: list[int] = field(default_factory=list)
    smallest_pivots: list[float] = field(default_factory=list)

    @property
    def iterations(self) -> int:
        return len(self.increment_norms)

    def relative_residuals(self) -> np.ndarray:
        """|r| / F of every iteration, (n_iterations + 1,)."""
        scales = [self.force_scales[k] if k < len(self.force_scales) else self.force_scale
                  for k in range(len(self.residual_norms))]
        return np.array(self.residual_norms) / np.maximum(scales, np.finfo(float).tiny)

    def summary(self) -> str:
        """One line: iterations, the first, smallest and last |r|/F and the trend of the last ones."""
        r = self.relative_residuals()
        if r.size == 0:
            return "no iteration"
        best = int(np.nanargmin(r)) if np.any(np.isfinite(r)) else 0
        return (f"{self.iterations} iterations, |r|/F {r[0]:.2e} -> {r[-1]:.2e} (smallest {r[best]:.2e} at "
                f"iteration {best}), {_trend(r)}")

    def format(self) -> str:
        """One line per iteration: k, |r|/scale, |dx|."""
        lines = []
        for k, rn in enumerate(self.residual_norms):
            dx = f"{self.increment_norms[k]:10.3e}" if k < len(self.increment_norms) else f"{'-':>10s}"
            scale = self.force_scales[k] if k < len(self.force_scales) else self.force_scale
            lines.append(f"  it {k:2d}  |r|/F = {rn / scale:10.3e}  |dx| = {dx}")
        return "\n".join(lines)


def _trend(relative_residuals: np.ndarray) -> str:
    """How the last (up to four) residuals moved: decreasing, diverging, oscillating, stagnating."""
    r = relative_residuals
    tail = r[-4:]
    if not np.all(np.isfinite(tail)):
        return "not finite at the end"
    if tail.size < 2:
        return "stopped at the first evaluation"
    steps = np.sign(np.diff(np.log(np.maximum(tail, np.finfo(float).tiny))))
    if r[-1] > 100.0 * np.nanmin(r) or np.all(steps > 0):
        return "diverging"
    if np.all(steps < 0):
        return "still decreasing at the end"
    if steps.size > 1 and np.all(steps[1:] * steps[:-1] < 0):
        return "oscillating"
    return "stagnating"


class NewtonFailure(RuntimeError):
    """Newton did not converge (or met a singular tangent); carries the iteration log
    (``log.summary()`` says in one line how it went)."""

    def __init__(self, message: str, log: NewtonLog) -> None:
        super().__init__(message)
        self.log = log


class SingularJacobian(NewtonFailure):
    """Newton met a singular Jacobian: an exactly zero pivot, an equilibrated pivot at the
    round-off level (:func:`pivot_tolerance`), or a non-finite or absurdly long correction.

    ``matrix`` is the Jacobian (n, n), ``iteration`` the iteration it was met at (0: at the start
    point ``x0``), ``smallest_pivot`` its smallest equilibrated pivot (0 for an exact zero, nan
    when SuperLU stopped before the end), and ``direction`` (n,) the correction when that was
    the symptom (it then points along the near null space), else None.
    """

    def __init__(self, message: str, log: NewtonLog, matrix: sp.spmatrix, iteration: int,
                 smallest_pivot: float, direction: np.ndarray | None = None) -> None:
        super().__init__(message, log)
        self.matrix = matrix
        self.iteration = iteration
        self.smallest_pivot = smallest_pivot
        self.direction = direction


#: a Newton correction longer than this many length scales counts as a singular Jacobian: no
#: model moves by 1e8 times its size in one iteration, a stiffness at round-off level asks for it
ABSURD_CORRECTION = 1e8


def pivot_tolerance(n: int) -> float:
    """Smallest equilibrated LU pivot (see :class:`Factorization`) of an (n, n) matrix below
    which the matrix counts as singular: round-off of entries of size 1 accumulated over about
    sqrt(n) operations, with a margin of 1e3."""
    return 1e3 * np.finfo(float).eps * np.sqrt(max(n, 1))


def _permutation_sign(perm: np.ndarray) -> int:
    """Sign (+1 or -1) of the permutation ``perm`` (n,): (-1)^(n - number of cycles).

    Each index learns the smallest index of its cycle by pointer doubling (log2 n array steps).
    """
    n = perm.size
    smallest, jump = np.arange(n), np.asarray(perm, dtype=np.int64)
    for _ in range(max(int(np.ceil(np.log2(max(n, 2)))), 1)):
        smallest = np.minimum(smallest, smallest[jump])
        jump = jump[jump]
    cycles = int(np.count_nonzero(smallest == np.arange(n)))
    return -1 if (n - cycles) % 2 else 1


def equilibrate(matrix: sp.spmatrix) -> tuple[sp.csc_matrix, np.ndarray, np.ndarray]:
    """``B = D_r A D_c`` (CSC) and the diagonals ``D_r``, ``D_c`` (n,): every row of A scaled to a
    largest entry of 1, then every column of the result (zero rows and columns stay zero).

    Works on the CSC arrays directly: it runs at every Newton iteration, where sparse-matrix
    arithmetic would cost more than the factorisation of a small system.
    """
    A = matrix if matrix.format == "csc" else matrix.tocsc()
    n = A.shape[0]
    magnitude = np.abs(A.data)
    rows = np.zeros(n)
    np.maximum.at(rows, A.indices, magnitude)                                   # (n,)
    row_scale = 1.0 / np.where(rows > 0.0, rows, 1.0)
    scaled = magnitude * row_scale[A.indices]
    counts = np.diff(A.indptr)
    cols = np.zeros(A.shape[1])
    filled = counts > 0
    if filled.any():
        cols[filled] = np.maximum.reduceat(scaled, A.indptr[:-1][filled])      # empty columns skipped
    col_scale = 1.0 / np.where(cols > 0.0, cols, 1.0)
    B = A.copy()
    B.data = A.data * row_scale[A.indices] * np.repeat(col_scale, counts)
    return B, row_scale, col_scale


class Factorization:
    """Sparse LU of a square matrix A after equilibration, ``B = D_r A D_c``.

    ``D_r`` scales every row of A to a largest entry of 1, then ``D_c`` every column of the
    result; B's pivots are then comparable with 1 whatever the units of the unknowns, and a
    pivot at round-off level (:func:`pivot_tolerance`) marks a singular A. ``solve`` returns
    A^-1 b. Raises RuntimeError (SuperLU's "Factor is exactly singular") for an exactly zero pivot.

    With ``pivots=False`` A is factorised as it is (the fast path of later Newton iterations):
    ``smallest_pivot`` is then nan, ``is_singular`` false and the determinant sign unknown.

    Attributes
    ----------
    smallest_pivot : smallest |U_ii| of B's factors.
    determinant_sign : sign of det A (+1 or -1): the product of the signs of U's diagonal and of
        the row and column permutations (the positive scalings do not change it).
    """

    def __init__(self, matrix: sp.spmatrix, pivots: bool = True) -> None:
        if pivots:
            B, self.row_scale, self.col_scale = equilibrate(matrix)
        else:                                   # a plain LU: no pivot test, no determinant sign
            B, self.row_scale, self.col_scale = (matrix if matrix.format == "csc" else matrix.tocsc()), None, None
        self.lu = spla.splu(B)
        self._pivots = self.lu.U.diagonal() if pivots else None
        self.smallest_pivot = float(np.abs(self._pivots).min(initial=np.inf)) if pivots else float("nan")

    @cached_property
    def determinant_sign(self) -> int:
        negative = int(np.count_nonzero(self._pivots < 0.0))
        return (-1 if negative % 2 else 1) * _permutation_sign(self.lu.perm_r) * _permutation_sign(self.lu.perm_c)

    @property
    def shape(self) -> tuple[int, int]:
        return self.lu.shape

    def solve(self, b: np.ndarray) -> np.ndarray:
        """A^-1 b for b (n,) or (n, k)."""
        b = np.asarray(b, dtype=float)
        rs, cs = self.row_scale, self.col_scale
        if rs is None:
            return self.lu.solve(b)
        if b.ndim == 2:
            rs, cs = rs[:, None], cs[:, None]
        return cs * self.lu.solve(rs * b)

    def is_singular(self) -> bool:
        """Whether the smallest pivot is at round-off level (see :func:`pivot_tolerance`)."""
        return self.smallest_pivot <= pivot_tolerance(self.shape[0])


ResidualFunction = Callable[[np.ndarray], tuple[np.ndarray, sp.csc_matrix, float]]


def newton_solve(residual_and_jacobian: ResidualFunction, x0: np.ndarray, length_scale: float,
                 settings: NewtonSettings | None = None,
                 update: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
                 determinant_signs: bool = False) -> tuple[np.ndarray, NewtonLog]:
    """Solve r(x) = 0 from ``x0``.

    ``residual_and_jacobian(x)`` returns ``(r, J, force_scale)`` with r (n,), J a sparse (n, n)
    matrix and force_scale (N) the magnitude the residual is compared with. The last call is
    always made at the returned solution, so callers may keep what it computed.
    ``update(x, dx)`` applies a correction (default ``x + dx``); spatial rotations compose
    multiplicatively, and J must then be the derivative with respect to that correction.
    ``determinant_signs`` records the sign of det J of every iteration in ``log.tangent_signs``
    (statics watches it for limit points).
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
        dx = _correction(J, r, log, k, length_scale, determinant_signs)
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
                        f"(|r|/F = {log.residual_norms[-1] / log.force_scale:.3e}, "
                        f"{_trend(log.relative_residuals())})", log)


def _correction(J: sp.spmatrix, r: np.ndarray, log: NewtonLog, k: int, length_scale: float,
                determinant_signs: bool) -> np.ndarray:
    """Newton correction -J^-1 r at iteration k; raises SingularJacobian for a singular J."""
    n = J.shape[0]
    try:
        # the equilibrated pivots tell a structural singularity at the start point (iteration 0);
        # later iterations take the plain LU unless the determinant signs are watched (statics)
        lu = Factorization(J, pivots=k == 0 or determinant_signs)
    except RuntimeError as exc:                          # SuperLU: "Factor is exactly singular"
        raise SingularJacobian(f"singular tangent at iteration {k}: {exc}", log, J, k, 0.0) from exc
    if determinant_signs:
        log.tangent_signs.append(lu.determinant_sign)
    log.smallest_pivots.append(lu.smallest_pivot)
    if lu.is_singular():
        raise SingularJacobian(f"singular tangent at iteration {k}: smallest pivot {lu.smallest_pivot:.1e} of the "
                               f"equilibrated matrix, round-off level (below {pivot_tolerance(n):.1e})",
                               log, J, k, lu.smallest_pivot)
    dx = lu.solve(-r)
    if not np.all(np.isfinite(dx)):
        raise SingularJacobian(f"singular tangent at iteration {k}: non-finite Newton correction", log, J, k,
                               lu.smallest_pivot)
    size = float(np.linalg.norm(dx))
    if size > ABSURD_CORRECTION * length_scale:
        raise SingularJacobian(f"singular tangent at iteration {k}: the Newton correction |dx| = {size:.2e} is "
                               f"{size / length_scale:.1e} times the model size", log, J, k, lu.smallest_pivot, dx)
    return dx


def _stagnated(log: NewtonLog, s: NewtonSettings, length_scale: float) -> bool:
    """The last three residuals are at the round-off level and none of the last two halved the
    smallest before them, while the last two corrections were tiny."""
    r, f, d = log.residual_norms, log.force_scales, log.increment_norms
    if len(r) < 3 or len(d) < 2:
        return False
    tiny = all(dn <= s.stagnation_tol * length_scale for dn in d[-2:])
    low = all(rk <= s.increment_gate * fk for rk, fk in zip(r[-3:], f[-3:]))
    return tiny and low and min(r[-2:]) > 0.5 * r[-3]

