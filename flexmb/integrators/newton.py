"""Newton-Raphson driver shared by the time integration schemes and statics.

The Jacobian is factorised by a compiled dense LU for small systems and by a sparse LU for larger
ones (:class:`Factorization`, threshold ``DENSE_LIMIT`` measured): SuperLU (through
``scipy.sparse.linalg.splu``, fill-reducing ordering ``SPARSE_ORDERING``) or PARDISO,
``NewtonSettings.solver`` (:mod:`flexmb.integrators.sparse_lu`); the mid-point tangent is
non-symmetric and is never symmetrised. Large models reuse a factorisation within a solve while
the residual contracts fast enough (modified Newton, ``newton_solve(..., modified=True)``).

Convergence, tested after every correction in this order: ``|r| <= residual_tol * force_scale``
(force_scale is the largest of the force terms in the residual, supplied by the caller) or, when
the user gives an absolute tolerance, ``|r| <= force_tol`` (N); or, once
the residual has reached the level where round-off dominates (stiff bars: ``|r| <= 1e-6
force_scale``), the correction ``|dx| <= increment_tol * length_scale``; or (**round-off**) the
correction is below the round-off of the unknowns themselves,
``|dx| <= round_off_factor * eps * | m + |x| |``, with ``m`` (n,) the size of each unknown that
its value does not show (:attr:`flexmb.assembly.Assembly.round_off_lengths`: the length of the
elements at a node for its translations, 1 rad for rotations); or (stagnation) the residual stopped
decreasing for two iterations while the corrections stay below ``stagnation_tol * length_scale``
and the residual is at the round-off level: below ``increment_gate`` force scales or below the
bound of its round-off floor, ``eps | |J| (m + |x|) |`` (:func:`residual_floor`).

The round-off test is what makes the iteration independent of mesh size and load level. A
residual cannot fall below its round-off floor: each element's force carries about eps EA of
round-off whatever it carries physically, and a fine mesh under small inertia forces, or a shell
under a small load, has that floor far above ``residual_tol * force_scale`` (a spinning beam of
1024 elements: 1.2e-6 of the force scale, of 4096 elements 1.2e-5). The correction then tells
what the residual cannot: once it is below the spacing of the floating-point numbers around the
solution, no further iteration can change the iterate, which is then as accurate as the
arithmetic allows (|r| <= |J| |dx| is at the floor). Measured on that beam: the correction after
the first iteration is 0.2-0.5 of that spacing, the next 1e-7 of it.

Singular Jacobians (:class:`SingularJacobian`). The Jacobian is equilibrated before it is
factorised (:class:`Factorization`: every row scaled to a largest entry of 1, then every
column), which makes its LU pivots comparable whatever the units and stiffness of the unknowns
(translations and rotations, stiff bars and soft springs, joint multipliers). It counts as
singular when the LU meets an exactly zero pivot, when the smallest equilibrated pivot is at
the round-off level (:func:`pivot_tolerance`: 1e3 eps sqrt(n); measured: models without
supports and mechanisms give 1e-17..3e-14 up to n = 6000, the stiff validation models 1e-8 and
above), or when the correction is not finite or longer than ``ABSURD_CORRECTION`` length scales.
The callers decide whether that is structural (a mechanism, a DOF without mass and stiffness:
:mod:`flexmb.analysis.diagnostics`) or a singular point a smaller step can pass.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

import numpy as np
import scipy.sparse as sp


@dataclass
class NewtonSettings:
    """Tolerances of the Newton iteration (relative, dimensionless, but ``force_tol``)."""

    residual_tol: float = 1e-10
    #: an absolute residual tolerance (N, N m for moment rows): a residual norm at or below it
    #: converges whatever the force scale. 0 (the default) switches it off: the iteration then
    #: goes on to the round-off of the unknowns, which the mid-point scheme's energy statement
    #: relies on. A tolerance like Exudyn's ``absoluteTolerance`` saves one to three iterations a
    #: step where the residual cannot reach ``residual_tol`` (a fine mesh turning slowly) and
    #: trades the energy balance to round-off for it (docs/speed.md has the measurements)
    force_tol: float = 0.0
    increment_tol: float = 1e-12
    max_iterations: int = 40
    #: the residual must be at least this small (relative) before the increment criterion counts
    increment_gate: float = 1e-6
    #: corrections (relative to the length scale) below which a stalled residual counts as converged
    stagnation_tol: float = 1e-9
    #: corrections below this many times the round-off of the unknowns, ``eps |m + |x||``, end the
    #: iteration whatever the residual (it is then at its round-off floor; 0 switches the test off)
    round_off_factor: float = 8.0
    #: sparse LU of Jacobians above DENSE_LIMIT unknowns (:mod:`flexmb.integrators.sparse_lu`):
    #: "auto" (the band LU for a narrow band, ``sparse_lu.BANDED_WIDTH``, else PARDISO from
    #: ``sparse_lu.PARDISO_FROM`` unknowns when installed, else SuperLU), "banded", "superlu" or
    #: "pardiso" (``pip install flexmb[pardiso]``); statics watching the sign of the determinant
    #: factorise with SuperLU or the band LU (large symmetric tangents: PARDISO and its L D L^T)
    solver: str = "auto"

    def __post_init__(self) -> None:
        from flexmb.checks import ModelError, integer, real       # flexmb.checks imports this module lazily
        from flexmb.integrators import sparse_lu

        for name in ("residual_tol", "force_tol", "increment_tol", "increment_gate", "stagnation_tol",
                     "round_off_factor"):
            setattr(self, name, real(getattr(self, name), f"NewtonSettings: {name}", low=0.0))
        self.max_iterations = integer(self.max_iterations, "NewtonSettings: max_iterations", low=1)
        try:
            sparse_lu.backend(self.solver, 0)
        except (ValueError, TypeError, sparse_lu.SolverNotInstalled) as exc:
            raise ModelError(f"NewtonSettings: solver: {exc}") from exc


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
    #: Jacobians factorised (fewer than the iterations in modified Newton)
    factorizations: int = 0

    @property
    def iterations(self) -> int:
        return len(self.increment_norms)

    def relative_residuals(self) -> np.ndarray:
        """``|r|`` / F of every iteration, (n_iterations + 1,)."""
        scales = [self.force_scales[k] if k < len(self.force_scales) else self.force_scale
                  for k in range(len(self.residual_norms))]
        return np.array(self.residual_norms) / np.maximum(scales, np.finfo(float).tiny)

    def summary(self) -> str:
        """One line: iterations, the first, smallest and last ``|r|``/F and the trend of the last ones."""
        r = self.relative_residuals()
        if r.size == 0:
            return "no iteration"
        best = int(np.nanargmin(r)) if np.any(np.isfinite(r)) else 0
        return (f"{self.iterations} iterations, |r|/F {r[0]:.2e} -> {r[-1]:.2e} (smallest {r[best]:.2e} at "
                f"iteration {best}), {_trend(r)}")

    def round_off_note(self) -> str:
        """The run-log text of a solve that ended at the residual's round-off floor (criterion
        "round-off" or "stagnation", see the module docstring)."""
        why = ("its correction fell below the round-off of the unknowns" if self.criterion == "round-off" else
               "its residual stalled at the round-off level with corrections of "
               f"{self.increment_norms[-1]:.1e}")
        return (f"Newton stopped at the residual's round-off floor, |r|/F = {self.relative_residuals()[-1]:.2e} after "
                f"{self.iterations} iterations ({self.criterion}: {why}); the solution is as accurate as the "
                "arithmetic allows (fine meshes and small loads end so; further such ends are not logged)")

    def format(self) -> str:
        """One line per iteration: k, ``|r|``/scale, ``|dx|``."""
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


#: largest rotation correction (rad) of one Newton iteration in time integration (the step
#: scales a correction down to it; :func:`flexmb.integrators.time_stepping.integrate`)
MAX_ROTATION_CORRECTION = 0.5

#: a Newton correction longer than this many length scales counts as a singular Jacobian: no
#: model moves by 1e8 times its size in one iteration, a stiffness at round-off level asks for it
ABSURD_CORRECTION = 1e8


_EPS, _TINY = float(np.finfo(float).eps), float(np.finfo(float).tiny)


_VECTOR_KERNELS: tuple | None = None


def _vector_kernels() -> tuple:
    """(norm, dot) of :mod:`flexmb.compiled.sparse_ops`, imported on first use (numba is not
    imported with flexmb) and kept."""
    global _VECTOR_KERNELS
    from flexmb.compiled.sparse_ops import dot, norm

    _VECTOR_KERNELS = (norm, dot)
    return _VECTOR_KERNELS


def _norm(x: np.ndarray) -> float:
    """Euclidean norm of a vector (n,) without BLAS (:func:`flexmb.compiled.sparse_ops.norm`: its
    threads stall on busy cores), the norm the compiled Newton loops take too."""
    return float((_VECTOR_KERNELS or _vector_kernels())[0](x))


def dot_product(x: np.ndarray, y: np.ndarray) -> float:
    """x . y of two vectors (n,) without BLAS (:func:`flexmb.compiled.sparse_ops.dot`), for the
    work sums of a time step (a BLAS dot of a large model's vectors stalls on busy cores)."""
    return float((_VECTOR_KERNELS or _vector_kernels())[1](x, y))


def at_round_off(correction_norm: float, x: np.ndarray, magnitudes: np.ndarray | None, factor: float) -> bool:
    """Whether a correction of norm ``correction_norm`` is below ``factor`` times the round-off of
    the unknowns x (n,), ``eps |m + |x||`` with ``magnitudes`` m (n,) (None: zero), so that no
    further Newton iteration can change them beyond the arithmetic's resolution."""
    size = np.abs(x) if magnitudes is None else magnitudes + np.abs(x)
    return correction_norm <= factor * _EPS * _norm(size)


def _equilibrated_norm1(A: sp.csc_matrix, row_scale: np.ndarray, col_scale: np.ndarray) -> float:
    """||D_r A D_c||_1, the largest absolute column sum of the equilibrated CSC matrix."""
    scaled = np.abs(A.data) * row_scale[A.indices]
    sums = np.add.reduceat(scaled, A.indptr[:-1]) if scaled.size else np.zeros(0)
    sums[np.diff(A.indptr) == 0] = 0.0                    # reduceat's value for empty columns
    return float((sums * col_scale).max(initial=0.0))


def residual_floor(J: sp.spmatrix, x: np.ndarray, magnitudes: np.ndarray | None) -> float:
    """An upper bound of the round-off floor of a residual with Jacobian J (n, n) at x (n,):
    ``eps | |J| (m + |x|) |``, what the residual changes by when every unknown is off by its own
    round-off (``magnitudes`` m as in :func:`at_round_off`). Loose (the floors met are 1e-4 to 1e-6
    of it), but it holds: a stalled residual above it is not round-off."""
    from flexmb.compiled.sparse_ops import csc_abs_product_norm      # numba is not imported with flexmb

    A = J if J.format == "csc" else J.tocsc()
    size = np.abs(x) if magnitudes is None else magnitudes + np.abs(x)
    return _EPS * csc_abs_product_norm(A.indptr, A.indices, A.data, size)


def pivot_tolerance(n: int) -> float:
    """Smallest equilibrated LU pivot (see :class:`Factorization`) of an (n, n) matrix below
    which the matrix counts as singular: round-off of entries of size 1 accumulated over about
    sqrt(n) operations, with a margin of 1e3."""
    return 1e3 * _EPS * max(n, 1) ** 0.5


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


#: systems with up to this many unknowns are factorised densely by the compiled LU
#: (:mod:`flexmb.compiled.dense_lu`), larger ones by SuperLU. Measured (CPU time of equilibration,
#: LU and solve; benchmarks/bench_newton_iteration.py --solvers): on planar frame Jacobians the
#: dense LU costs 0.07 / 0.14 / 0.27 / 0.76 ms at n = 90 / 126 / 168 / 270 against SuperLU's
#: 0.11-0.22 / 0.27 / 0.33 / 0.57 ms, on beam chains 7 / 30 / 115 / 450 us at n = 9 / 48 / 99 / 198
#: against 290 / 370 / 540 / 920 us; SuperLU's plain LU of the later iterations (no equilibration)
#: costs about 60 % of that, so the dense path stops at 150.
DENSE_LIMIT = 150
#: SuperLU's fill-reducing column ordering (``permc_spec``) for the larger systems. Measured on
#: planar frames (same benchmark): 1.6 / 35 / 835 ms at n = 918 / 9918 / 99918 against COLAMD's
#: (SuperLU's default) 2.0 / 67 / 1850 ms, MMD_ATA's 2.6 / 67 / 2190 ms.
SPARSE_ORDERING = "MMD_AT_PLUS_A"
#: SuperLU's threshold partial pivoting (``diag_pivot_thresh``): the diagonal entry is kept as
#: pivot unless it is below this fraction of the largest in its column. The symmetric ordering
#: above assumes diagonal pivots; a shell's rotation rows have diagonals far below their
#: membrane couplings, so strict partial pivoting (1.0) leaves the ordering and fills in: on the
#: equilibrated tangent of a cylinder of Shell3 triangles (n = 5291) 6.4 s and 12.1e6 factor
#: entries at 1.0 against 0.06 s and 0.65e6 at 0.1, with a smaller residual of the solve.
DIAGONAL_PIVOT_THRESHOLD = 0.1


_DENSE_KERNELS: tuple | None = None


def _dense_kernels() -> tuple:
    """(equilibrated_lu, lu_solve, scaled_solve, lu_solve_transposed, scaled_transposed_solve),
    compiled; imported on first use (numba is not imported with flexmb) and kept, so the
    per-iteration calls pay no import."""
    global _DENSE_KERNELS
    if _DENSE_KERNELS is None:
        from flexmb.compiled.dense_lu import (equilibrated_lu, lu_solve, lu_solve_transposed, scaled_solve,
                                              scaled_transposed_solve)

        _DENSE_KERNELS = (equilibrated_lu, lu_solve, scaled_solve, lu_solve_transposed, scaled_transposed_solve)
    return _DENSE_KERNELS


class Factorization:
    """LU of a square matrix A after equilibration, ``B = D_r A D_c``.

    ``D_r`` scales every row of A to a largest entry of 1, then ``D_c`` every column of the
    result; B's pivots are then comparable with 1 whatever the units of the unknowns, and a
    pivot at round-off level (:func:`pivot_tolerance`) marks a singular A. ``solve`` returns
    A^-1 b, or A^-T b on the same factors. Raises RuntimeError ("Factor is exactly singular", as
    SuperLU says it) for an exactly zero pivot.

    Up to :data:`DENSE_LIMIT` unknowns B is factorised densely by the compiled LU with partial
    pivoting (:mod:`flexmb.compiled.dense_lu`; equilibration and densification in one compiled
    pass, :func:`flexmb.compiled.scatter.equilibrated_dense`), larger matrices by SuperLU with
    the column ordering :data:`SPARSE_ORDERING`, or by the sparse backend ``solver`` names
    (:mod:`flexmb.integrators.sparse_lu`: "superlu", "pardiso", "banded", "auto"; SuperLU and the
    band LU give the determinant's sign with the LU, :func:`signed_factorization` gets it for PARDISO, given as
    ``determinant_sign``; ``lasting``: a PARDISO LU that later ones of the same pattern do not
    supersede, :func:`sparse_lu.factorize`). With ``pivots=False`` (the later factorisations of
    modified Newton) the pivots are not kept: ``smallest_pivot`` is then nan, ``is_singular``
    false and the determinant sign unknown. The matrix is never
    symmetrised.

    Attributes
    ----------
    smallest_pivot : smallest |U_ii| of B's factors.
    determinant_sign : sign of det A (+1 or -1): the product of the signs of U's diagonal and of
        the row and column permutations (the positive scalings do not change it).
    """

    def __init__(self, matrix: sp.spmatrix, pivots: bool = True, solver: str = "superlu",
                 determinant_sign: int | None = None, lasting: bool = False) -> None:
        if determinant_sign is not None:          # known from elsewhere (signed_factorization)
            self.__dict__["determinant_sign"] = determinant_sign
        A = matrix if matrix.format == "csc" else matrix.tocsc()
        n = A.shape[0]
        self.dense = n <= DENSE_LIMIT
        if self.dense:
            equilibrated_lu = (_DENSE_KERNELS or _dense_kernels())[0]
            self._lu = np.empty((n, n))
            self._row_pivots = np.empty(n, dtype=np.int64)
            self.row_scale, self.col_scale = np.empty(n), np.empty(n)
            smallest = equilibrated_lu(A.indptr, A.indices, A.data, self._lu, self._row_pivots, self.row_scale,
                                       self.col_scale)
            if smallest == 0.0:
                raise RuntimeError("Factor is exactly singular")
            self.smallest_pivot = smallest if pivots else float("nan")
        else:
            # equilibrated also without the pivot test: unscaled, a shell's small rotation rows make
            # SuperLU leave its ordering (30 x 30 plate, n = 5580: 6.1 s and 1.85e7 factor entries
            # against 0.07 s and 1.1e6 equilibrated; equilibration costs 0.4 s at n = 1e5)
            from flexmb.integrators import sparse_lu      # scipy.sparse.linalg, MKL: not for dense models

            if sparse_lu.backend(solver, n, A) == "banded":
                # equilibrated in the compiled pass that fills the band (equilibrate costs more than its LU)
                self.lu = sparse_lu.BandedLU(A, pivots)
                self.row_scale, self.col_scale = self.lu.row_scale, self.lu.col_scale
            else:
                B, self.row_scale, self.col_scale = equilibrate(A)
                self.lu = sparse_lu.factorize(B, solver, SPARSE_ORDERING, DIAGONAL_PIVOT_THRESHOLD, pivots, lasting)
            self._pivots = self.lu.diagonal
            self.smallest_pivot = float(np.abs(self._pivots).min(initial=np.inf)) if pivots else float("nan")
        self._n = n
        # the band LU's partial pivoting can keep every pivot above the tolerance for a singular
        # matrix (a pinned chain of 4096 Beam2D elements: 3.1e-11 against 2.5e-11, SuperLU's
        # diagonal-preferring pivots 1e-13): its pivots do not gate the singular value test
        self._pivot_gate = self.dense or self.lu.name != "banded"
        # ||B||_1, the scale of B's singular values, for is_singular; only where the pivot test asks
        self._norm1 = (_equilibrated_norm1(A, self.row_scale, self.col_scale)
                       if self.smallest_pivot <= pivot_tolerance(n) or (pivots and not self._pivot_gate)
                       else math.nan)

    @cached_property
    def determinant_sign(self) -> int:
        pivots = np.diagonal(self._lu) if self.dense else self._pivots
        negative = int(np.count_nonzero(pivots < 0.0))
        sign = -1 if negative % 2 else 1
        if self.dense:                          # every k with pivots[k] != k is one transposition
            swaps = int(np.count_nonzero(self._row_pivots != np.arange(self._n)))
            return sign * (-1 if swaps % 2 else 1)
        if self.lu.name == "banded":
            return self.lu.determinant_sign
        if self.lu.name != "superlu":
            raise NotImplementedError(f"the sparse solver {self.lu.name!r} does not give the determinant's sign")
        return sign * _permutation_sign(self.lu.perm_r) * _permutation_sign(self.lu.perm_c)

    @property
    def shape(self) -> tuple[int, int]:
        return (self._n, self._n)

    def solve(self, b: np.ndarray, transpose: bool = False) -> np.ndarray:
        """x (n,) or (n, k) solving A x = b, or with ``transpose`` A^T x = b, for b (n,) or (n, k).

        A is the matrix the factorisation was made of (Newton's: the free-DOF Jacobian, with joints
        augmented by their rows and columns). A = D_r^-1 B D_c^-1 gives A^-1 b = D_c B^-1 (D_r b)
        and A^-T b = D_r B^-T (D_c b): the transposed solve uses the same factors of B, with the
        scalings' places traded (dense and band LU: their transposed triangular solves; SuperLU:
        ``trans='T'``; PARDISO: its transposed solve, ``iparm[11]``). Measured (CPU time, mid-point
        Jacobians of 1e4 unknowns: a cubic-mass Beam2D chain and a Shell3 plate): with one right-hand
        side it costs 0.5-1.2 times the plain solve on every backend; with 8, SuperLU's costs 1.4-2.5
        times its plain one (its transposed solve takes the columns one at a time), the band LU's
        0.2-0.4 times (one compiled call, where the plain solve loops over the columns), PARDISO's 1.0-1.1.
        """
        b = np.asarray(b, dtype=float)
        if transpose:
            return self._solve_transposed(b)
        rs, cs = self.row_scale, self.col_scale
        if self.dense and b.ndim == 1:
            return _DENSE_KERNELS[2](self._lu, self._row_pivots, rs, cs, b)
        if b.ndim == 2:
            rs, cs = rs[:, None], cs[:, None]
        if self.dense:
            x = np.multiply(rs, b, order="C")                # a new array, rows contiguous
            _dense_kernels()[1](self._lu, self._row_pivots, x)
            return cs * x
        if self.lu.name == "banded":
            return self.lu.solve(b)                          # scaled inside its compiled solve
        return cs * self.lu.solve(rs * b)

    def _solve_transposed(self, b: np.ndarray) -> np.ndarray:
        """A^-T b = D_r B^-T (D_c b) for b (n,) or (n, k) (:meth:`solve`)."""
        rs, cs = self.row_scale, self.col_scale
        if self.dense and b.ndim == 1:
            return _DENSE_KERNELS[4](self._lu, self._row_pivots, rs, cs, b)
        if b.ndim == 2:
            rs, cs = rs[:, None], cs[:, None]
        if self.dense:
            x = np.multiply(cs, b, order="C")                # a new array, rows contiguous
            _DENSE_KERNELS[3](self._lu, self._row_pivots, x)
            return rs * x
        if self.lu.name == "banded":
            return self.lu.solve(b, transpose=True)          # scaled inside its compiled solve
        return rs * self.lu.solve(cs * b, transpose=True)

    def is_singular(self) -> bool:
        """Whether the matrix is singular to round-off: its smallest equilibrated pivot is at the
        round-off level (:func:`pivot_tolerance`; the band LU: any pivot, see ``__init__``), and B's
        smallest singular value (:attr:`smallest_singular_value`) is below eps ||B||_1 / 2: B's condition number exceeds
        2 / eps, where a solve with it has no correct digit left.

        The pivot alone cannot tell on fine meshes: the pivots of a fourth-order operator fall
        with the element size and reach those of mechanisms (Beam2D cantilever of 4096 elements:
        smallest pivot 1.5e-11 to 2.6e-11 against a tolerance of 2.5e-11; the same beam free to
        slide or to turn about a pin: 2e-15 to 3e-13). Relative to ||B||_1 its smallest singular
        value is 1.6 eps to 1.9 eps, those of the mechanisms 1e-4 eps to 0.06 eps (64 to 65536
        elements, four orientations). The cantilever is at the edge of double precision: its
        condition grows as n^4, and 16384 elements are singular in it (1e-3 eps to 0.06 eps).
        """
        if not (self.smallest_pivot <= pivot_tolerance(self._n)
                or (self.smallest_pivot < math.inf and not self._pivot_gate)):      # nan: pivots not kept
            return False
        return self.smallest_singular_value <= 0.5 * _EPS * self._norm1

    @cached_property
    def smallest_singular_value(self) -> float:
        """An estimate from above of the smallest singular value of the equilibrated matrix B: two
        steps of inverse iteration from a fixed random vector, ``1 / |B^-1 z|`` with z the unit
        vector of the step before. From above because ``|B^-1 z| <= 1 / sigma_min``; two steps
        bring it within a small factor of sigma_min when the gap to the next one is large."""
        z = np.random.default_rng(0).standard_normal(self._n)
        for _ in range(2):
            z = z / _norm(z)
            if self.dense:
                _dense_kernels()[1](self._lu, self._row_pivots, z)          # in place: B^-1 z
            elif self.lu.name == "banded":
                z = self.lu.solve(z, equilibrated=True)
            else:
                z = self.lu.solve(z)
        size = _norm(z)
        return 1.0 / size if size > 0.0 else math.inf


def signed_factorization(matrix: sp.spmatrix, pivots: bool = True, solver: str = "auto") -> Factorization:
    """A :class:`Factorization` whose determinant sign is watched (statics, arc length): SuperLU or, for a
    narrow band (``solver`` "auto" or "banded"), the band LU, which give the sign with the LU, or,
    for a symmetric sparse matrix of at least :data:`~flexmb.integrators.sparse_lu.PARDISO_FROM`
    unknowns when ``solver`` allows PARDISO and it is installed, PARDISO's LU with the sign from its
    symmetric indefinite L D L^T (:func:`~flexmb.integrators.sparse_lu.symmetric_inertia`:
    (-1)^(negative eigenvalues)), two factorisations that cost a quarter of SuperLU's one on 3D
    meshes (61 000 tet10 unknowns: 3.9 + 1.6 s against 14 s + 4.5 s of its wrapping). A matrix
    PARDISO finds (nearly) singular, or a non-symmetric one, goes to SuperLU, whose pivots say so as
    before. The PARDISO LU is a lasting one (its own symbolic analysis): statics keeps the tangents
    of the increments' ends."""
    A = matrix if matrix.format == "csc" else matrix.tocsc()
    n = A.shape[0]
    if n > DENSE_LIMIT:
        from flexmb.integrators import sparse_lu

        name = sparse_lu.backend(solver, n, A)
        if name == "banded":
            return Factorization(A, pivots, "banded")
        if name == "pardiso" and _symmetric(A):
            inertia = sparse_lu.symmetric_inertia(A)
            if inertia is not None:
                return Factorization(A, pivots, "pardiso", determinant_sign=-1 if inertia[1] % 2 else 1,
                                     lasting=True)
    return Factorization(A, pivots, "superlu")


def _symmetric(A: sp.csc_matrix) -> bool:
    """Whether A equals its transpose to 1e-12 of its largest entry."""
    largest = float(np.abs(A.data).max(initial=0.0))
    difference = (A - A.T).tocsc()
    return float(np.abs(difference.data).max(initial=0.0)) <= 1e-12 * largest


#: modified Newton (``newton_solve(..., modified=True)``) keeps a factorisation while every
#: iteration reduces the residual at least by this factor; after an iteration that did not, the
#: solve continues as full Newton. Measured on a spinning planar frame (9918 DOFs, 7 iterations
#: per step): 0.1 costs 10 % more than full Newton there and reaches the same solution; 0.5 let
#: the stale Jacobian run into cut-backs and another solution, so the rule stays strict.
REUSE_CONTRACTION = 0.1
#: ... but once the residual is below NEAR_SOLUTION force scales, a factorisation is kept while every
#: iteration reduces the residual by NEAR_CONTRACTION: there a stale Jacobian cannot lead astray, and a
#: few more residual evaluations cost less than an LU. Measured on the 1e5-DOF shell plate (12 steps
#: of 1 ms): the kept LU reduced the residual 1.9e-6 -> 2.8e-7 of F (0.15) at the third iteration and a
#: new LU was made one iteration before convergence, 0.75 LUs per step, 1.53 s per step; with this rule
#: 0.25 LUs and 4.9 iterations per step, 1.02-1.04 s. The 48 validation cases print the same digits.
NEAR_SOLUTION = 1e-4
NEAR_CONTRACTION = 0.5
#: modified Newton is switched on for the time steps of models with at least this many unknowns
#: (:func:`flexmb.integrators.time_stepping.integrate`), where a factorisation costs more than the
#: extra residual evaluations. Measured (CPU per step, planar frames falling under gravity,
#: dt = 0.01 s, 2-3 full Newton iterations per step): 126 DOFs 0.79 / 0.88 ms (full / modified),
#: 270 DOFs 2.43 / 1.81 ms, 918 DOFs 8.3 / 5.6 ms; a frame spinning at 1 rad/s, whose steps
#: contract slowly, 9918 DOFs 356 / 412 ms (no gain, same solution). With the factorisation kept
#: across steps (:class:`KeptFactorization`) it pays from the sparse LU on: Simo's spin-up beam,
#: dt = 0.01 s, 156 / 192 unknowns: 1.0 / 1.0 ms per step full Newton, 0.35 / 0.38 ms modified
#: (0.01 LU per step); below, the compiled dense LU makes a factorisation cheap.
MODIFIED_NEWTON_MIN_SIZE = DENSE_LIMIT + 1

ResidualFunction = Callable[..., tuple[np.ndarray, "sp.csc_matrix | None", float]]


class KeptFactorization:
    """The last factorisation of modified Newton, kept from one solve to the next (the time steps
    of one run, :attr:`flexmb.integrators.schemes.Scheme.kept_factorization`).

    A solve given it starts with that LU instead of the Jacobian at its start point and keeps it
    under the same contraction rule as its own (:data:`REUSE_CONTRACTION`); a converged solve
    leaves its last factorisation here, a failed one leaves nothing. ``key`` is what the
    Jacobian depends on besides the unknowns, the time step (s): an LU made under another key is
    not taken. Keys within 1e-9 relative are the same: a run's fixed steps differ by round-off
    (t_end - t).
    """

    def __init__(self) -> None:
        self.key: float = math.nan
        self.lu: Factorization | None = None
        self.matrix: sp.spmatrix | None = None          # the matrix lu factorises

    def take(self, key: float) -> tuple[Factorization | None, sp.spmatrix | None]:
        """The kept LU and its matrix if made under ``key``, else (None, None); either way none is
        kept any more until :meth:`keep`."""
        same = math.isclose(key, self.key, rel_tol=1e-9)
        lu, matrix = (self.lu, self.matrix) if same else (None, None)
        self.key, self.lu, self.matrix = key, None, None
        return lu, matrix

    def keep(self, lu: Factorization | None, matrix: sp.spmatrix | None) -> None:
        """Keep ``lu``, the factorisation of ``matrix``, under the key of the last :meth:`take`."""
        self.lu, self.matrix = lu, matrix


def newton_solve(residual_and_jacobian: ResidualFunction, x0: np.ndarray, length_scale: float,
                 settings: NewtonSettings | None = None,
                 update: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
                 determinant_signs: bool = False, modified: bool = False,
                 magnitudes: np.ndarray | None = None,
                 check_singular: bool = True, kept: KeptFactorization | None = None,
                 kept_key: float = math.nan, last: KeptFactorization | None = None) -> tuple[np.ndarray, NewtonLog]:
    """Solve r(x) = 0 from ``x0``.

    ``residual_and_jacobian(x)`` returns ``(r, J, force_scale)`` with r (n,), J a sparse (n, n)
    matrix and force_scale (N) the magnitude the residual is compared with. The last call is
    always made at the returned solution, so callers may keep what it computed.
    ``update(x, dx)`` applies a correction (default ``x + dx``); spatial rotations compose
    multiplicatively, and J must then be the derivative with respect to that correction.
    ``determinant_signs`` records the sign of det J of every iteration in ``log.tangent_signs``
    (statics watches it for limit points).

    ``modified``: modified Newton. The factorisation of the first Jacobian is reused while every
    iteration reduces the residual norm by at least :data:`REUSE_CONTRACTION` (near the solution by
    :data:`NEAR_CONTRACTION`); after one that
    did not (and whose correction was above the stagnation level), the Jacobian at the current
    iterate is evaluated and the solve continues as full Newton (a step hard enough to contract
    slowly gets Newton's quadratic convergence back), from the iterate before that correction if
    it made the residual grow. The
    function is then called as ``residual_and_jacobian(x, tangent)`` and may return J = None
    when ``tangent`` is false (the residual alone is needed). The tolerances are the same, so
    the solution is the same to them; only the number of iterations changes.

    ``magnitudes`` (n,): the size of every unknown beyond its value, for the round-off test (see
    the module docstring; default zero, the unknowns' values alone).

    ``check_singular``: raise SingularJacobian for a Jacobian singular to round-off
    (:meth:`Factorization.is_singular`). Callers whose Jacobian cannot be singular by its
    structure switch it off (a time step of a model whose every unknown has inertia, see
    :attr:`flexmb.integrators.schemes.Scheme.regular_inertia`): there a tiny pivot is the
    conditioning of a fine mesh, which Newton's iteration overcomes, not a mechanism. Exactly
    zero pivots and absurd corrections are singular either way.

    ``kept`` (modified Newton): a factorisation kept from the solve before
    (:class:`KeptFactorization`, taken if made under ``kept_key``) replaces the first Jacobian and
    is kept under the same contraction rule; the solve leaves its last factorisation there when it
    converges. Its first correction is then tested like a later one: an iteration that does not
    contract by :data:`REUSE_CONTRACTION` goes on as full Newton (from the start point if the
    residual grew). Not with ``check_singular``, whose pivot test belongs to the start point's
    Jacobian.

    A sparse Jacobian equal to the one last factorised (same pattern and values: a linear model)
    keeps that factorisation. ``last``: a converged solve leaves there its last sparse
    factorisation and a copy of the matrix it factorised (:func:`same_matrix` tells a caller
    whether a matrix of its own is that one; statics reuses it for the tangent at the solution).
    """
    s = settings or NewtonSettings()
    x = np.array(x0, dtype=float)
    log = NewtonLog()
    tiny = _TINY
    reusable = modified                  # the function takes the tangent flag
    lu = factored = factored_data = None
    if modified and kept is not None and not check_singular:
        lu, factored = kept.take(kept_key)
    else:
        kept = None
    if lu is not None:                   # the kept LU stands for the start point's Jacobian
        r, J, scale = residual_and_jacobian(x, False)
    else:
        r, J, scale = residual_and_jacobian(x, True) if modified else residual_and_jacobian(x)
    for k in range(s.max_iterations + 1):
        scale = max(scale, tiny)
        rn = _norm(r)
        log.residual_norms.append(rn)
        log.force_scale = scale
        log.force_scales.append(scale)
        if not rn < math.inf:                                 # nan or inf
            raise NewtonFailure(f"residual is not finite at iteration {k}", log)
        if rn <= s.residual_tol * scale or rn <= s.force_tol:
            log.converged, log.criterion = True, "residual"
            return _converged(x, log, kept, lu, factored, last, factored_data)
        if k == s.max_iterations:
            break
        # near the solution a kept factorisation may contract more slowly before a new one pays
        contraction = REUSE_CONTRACTION if rn > NEAR_SOLUTION * scale else NEAR_CONTRACTION
        if (modified and J is None and k > 0 and rn > contraction * log.residual_norms[-2]
                and log.increment_norms[-1] > s.stagnation_tol * length_scale):
            # the kept factorisation stopped paying; not when the last correction was already at
            # the stagnation level: the residual is then round-off, which a new LU cannot reduce
            # (a 130 x 130 plate of shells spent one LU of its two per step, 2.5 s, there)
            modified = False
            if rn > log.residual_norms[-2]:
                # its correction made things worse: full Newton goes on from the iterate before it
                # (spin-up beam, 4096 elements, t = 11.15 s: the second correction with the first
                # Jacobian went 0.83 m astray where full Newton's was 0.054 m, and Newton never
                # came back); the log keeps the discarded iterate's residual
                x = previous
            r, J, scale = residual_and_jacobian(x, True)
        if J is not None:
            if factored_data is not None and same_matrix(J, factored, factored_data):
                # a Jacobian equal to the one factorised (a linear model: solids, linear shells,
                # imported matrices) keeps its factorisation; the log repeats that LU's sign
                if determinant_signs:
                    log.tangent_signs.append(lu.determinant_sign)
            else:
                lu, factored = _factorize(J, log, k, determinant_signs, check_singular, s.solver), J
                factored_data = J.data.copy() if J.shape[0] > DENSE_LIMIT else None
            J = None
        dx, dn = _correction(lu, factored, r, log, k, length_scale)
        previous = x
        x = x + dx if update is None else update(x, dx)
        if modified:
            r, J, scale = residual_and_jacobian(x, False)
        elif reusable:                                        # a modified solve gone full Newton
            r, J, scale = residual_and_jacobian(x, True)
        else:
            r, J, scale = residual_and_jacobian(x)
        log.increment_norms.append(dn)
        if dn <= s.increment_tol * length_scale and rn <= s.increment_gate * scale:
            log.converged, log.criterion = True, "increment"
            return _converged(x, log, kept, lu, factored, last, factored_data)
        if at_round_off(dn, x, magnitudes, s.round_off_factor):
            log.converged, log.criterion = True, "round-off"
            return _converged(x, log, kept, lu, factored, last, factored_data)
        if _stagnated(log, s, length_scale, lambda: residual_floor(factored if J is None else J, x, magnitudes)):
            log.converged, log.criterion = True, "stagnation"
            return _converged(x, log, kept, lu, factored, last, factored_data)
    raise NewtonFailure(f"no convergence in {s.max_iterations} iterations "
                        f"(|r|/F = {log.residual_norms[-1] / log.force_scale:.3e}, "
                        f"{_trend(log.relative_residuals())})", log)


def same_matrix(J: sp.spmatrix, factored: sp.spmatrix, data: np.ndarray | None = None) -> bool:
    """Whether sparse J equals the matrix ``factored`` (same format, pattern and values), whose
    data were ``data`` when it was factorised (default its data now: its arrays may have been
    reused since)."""
    data = factored.data if data is None else data
    return (J.format == factored.format and J.shape == factored.shape and J.nnz == data.size
            and np.array_equal(J.indptr, factored.indptr) and np.array_equal(J.indices, factored.indices)
            and np.array_equal(J.data, data))


def _converged(x: np.ndarray, log: NewtonLog, kept: KeptFactorization | None, lu: Factorization | None,
               factored: sp.spmatrix | None, last: KeptFactorization | None = None,
               factored_data: np.ndarray | None = None) -> tuple[np.ndarray, NewtonLog]:
    """newton_solve's return at convergence; its last factorisation goes to ``kept``, and with
    the matrix it factorised (a copy) to ``last``."""
    if kept is not None:
        kept.keep(lu, factored)
    if last is not None and factored_data is not None:
        last.keep(lu, sp.csc_matrix((factored_data, factored.indices.copy(), factored.indptr.copy()),
                                    shape=factored.shape) if factored.format == "csc" else None)
    return x, log


#: the convergence criteria by the compiled solve's outcome codes (0, 1, 2, 3)
CRITERIA = ("residual", "increment", "stagnation", "round-off")

_OUTCOMES = None


def _outcomes():
    """flexmb.compiled.dense_newton (its outcome constants), imported on first use and kept."""
    global _OUTCOMES
    from flexmb.compiled import dense_newton

    _OUTCOMES = dense_newton
    return _OUTCOMES


def compiled_solve_log(outcome: int, iteration: int, counts: tuple[int, int, int],
                       residual_norms: np.ndarray, force_scales: np.ndarray, increment_norms: np.ndarray,
                       smallest_pivots: np.ndarray, correction: np.ndarray, matrix: Callable[[], sp.csc_matrix],
                       settings: NewtonSettings, length_scale: float) -> NewtonLog:
    """The log of a Newton solve run as one compiled call
    (:func:`flexmb.compiled.mid_point_group.beam2d_mid_point_newton`) from its outcome and arrays;
    raises what :func:`newton_solve` raises at the same point, with the same message (``matrix()``
    gives the Jacobian the exceptions carry)."""
    compiled = _OUTCOMES or _outcomes()
    n_norms, n_increments, n_factorizations = counts
    log = NewtonLog(residual_norms[:n_norms].tolist(), increment_norms[:n_increments].tolist(),
                    float(force_scales[n_norms - 1]), force_scales[:n_norms].tolist(),
                    smallest_pivots=smallest_pivots[:n_factorizations].tolist(), factorizations=n_factorizations)
    if outcome >= 0:
        log.converged = True
        log.criterion = CRITERIA[outcome]
        return log
    k = iteration
    if outcome == compiled.NOT_FINITE_RESIDUAL:
        raise NewtonFailure(f"residual is not finite at iteration {k}", log)
    if outcome == compiled.NO_CONVERGENCE:
        raise NewtonFailure(f"no convergence in {settings.max_iterations} iterations "
                            f"(|r|/F = {log.residual_norms[-1] / log.force_scale:.3e}, "
                            f"{_trend(log.relative_residuals())})", log)
    if outcome == compiled.EXACTLY_SINGULAR:
        raise SingularJacobian(f"singular tangent at iteration {k}: Factor is exactly singular", log, matrix(), k,
                               0.0)
    pivot = log.smallest_pivots[-1]
    if outcome == compiled.SINGULAR_PIVOT:
        raise SingularJacobian(f"singular tangent at iteration {k}: smallest pivot {pivot:.1e} of the equilibrated "
                               f"matrix, round-off level (below {pivot_tolerance(correction.size):.1e})",
                               log, matrix(), k, pivot)
    if outcome == compiled.NOT_FINITE_CORRECTION:
        raise SingularJacobian(f"singular tangent at iteration {k}: non-finite Newton correction", log, matrix(), k,
                               pivot)
    size = _norm(correction)
    raise SingularJacobian(f"singular tangent at iteration {k}: the Newton correction |dx| = {size:.2e} is "
                           f"{size / length_scale:.1e} times the model size", log, matrix(), k, pivot,
                           correction.copy())


def _factorize(J: sp.spmatrix, log: NewtonLog, k: int, determinant_signs: bool,
               check_singular: bool = True, solver: str = "auto") -> Factorization:
    """Factorisation of the Jacobian J of iteration k by the sparse solver ``solver`` (SuperLU
    when the determinant signs are watched); raises SingularJacobian for a singular J (an exactly
    zero pivot always; one singular to round-off with ``check_singular``)."""
    try:
        # the equilibrated pivots tell a structural singularity at the start point (iteration 0);
        # later iterations take the plain LU unless the determinant signs are watched (statics).
        # A sparse LU's pivots are read only for the test (reading SuperLU's costs 0.4 s at n = 1e5)
        pivots = determinant_signs or (k == 0 and (check_singular or J.shape[0] <= DENSE_LIMIT))
        lu = signed_factorization(J, pivots, solver) if determinant_signs else Factorization(J, pivots, solver)
    except RuntimeError as exc:                          # "Factor is exactly singular"
        raise SingularJacobian(f"singular tangent at iteration {k}: {exc}", log, J.copy(), k, 0.0) from exc
    log.factorizations += 1
    if determinant_signs:
        log.tangent_signs.append(lu.determinant_sign)
    log.smallest_pivots.append(lu.smallest_pivot)
    if check_singular and lu.is_singular():
        raise SingularJacobian(f"singular tangent at iteration {k}: smallest pivot {lu.smallest_pivot:.1e} of the "
                               f"equilibrated matrix (round-off level: {pivot_tolerance(J.shape[0]):.1e}), its "
                               f"condition number above 2 / eps", log, J.copy(), k, lu.smallest_pivot)
    return lu


def _correction(lu: Factorization, J: sp.spmatrix, r: np.ndarray, log: NewtonLog, k: int,
                length_scale: float) -> tuple[np.ndarray, float]:
    """Newton correction -J^-1 r at iteration k from the factorisation lu of J, and its norm;
    raises SingularJacobian for a non-finite or absurdly long correction."""
    dx = lu.solve(-r)
    size = _norm(dx)
    if not size < math.inf:                                   # nan or inf
        raise SingularJacobian(f"singular tangent at iteration {k}: non-finite Newton correction", log, J.copy(), k,
                               lu.smallest_pivot)
    if size > ABSURD_CORRECTION * length_scale:
        raise SingularJacobian(f"singular tangent at iteration {k}: the Newton correction |dx| = {size:.2e} is "
                               f"{size / length_scale:.1e} times the model size", log, J.copy(), k,
                               lu.smallest_pivot, dx)
    return dx, size


def _stagnated(log: NewtonLog, s: NewtonSettings, length_scale: float, floor: Callable[[], float]) -> bool:
    """None of the last two residuals halved the one before them while the last two corrections
    were tiny (``stagnation_tol`` length scales), and the last three residuals are at the round-off
    level: below ``increment_gate`` force scales or below ``floor()``, the bound of their round-off
    floor (:func:`residual_floor`, evaluated only here). A fine mesh's Newton corrections can stall
    above the round-off of the unknowns (:func:`at_round_off`) when its Jacobian amplifies the
    residual's round-off (a Beam2D cantilever of 1024 elements turned by 0.7 rad: corrections of
    1e-13 m, twice that spacing, at a residual of 7.7e-6 of the force scale); this test ends it."""
    r, f, d = log.residual_norms, log.force_scales, log.increment_norms
    if len(r) < 3 or len(d) < 2:
        return False
    if not (all(dn <= s.stagnation_tol * length_scale for dn in d[-2:]) and min(r[-2:]) > 0.5 * r[-3]):
        return False
    if all(rk <= s.increment_gate * fk for rk, fk in zip(r[-3:], f[-3:])):
        return True
    level = floor()
    return all(rk <= level for rk in r[-3:])
