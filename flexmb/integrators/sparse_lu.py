"""Sparse direct LU of the Newton matrix behind one interface, with exchangeable backends.

:class:`flexmb.integrators.newton.Factorization` factorises a Jacobian above
:data:`~flexmb.integrators.newton.DENSE_LIMIT` unknowns here, after equilibrating it. The matrix is
the non-symmetric mid-point (or statics) tangent and is never symmetrised. Backends:

* ``"superlu"``: SciPy's SuperLU (``scipy.sparse.linalg.splu``), always there; fill-reducing column
  ordering ``MMD_AT_PLUS_A`` with threshold pivoting (see :data:`~flexmb.integrators.newton.SPARSE_ORDERING`);
  gives the factor's diagonal and permutations, so the pivot test and the sign of the determinant.
* ``"pardiso"``: Intel MKL PARDISO (real non-symmetric, matrix type 11), located through the
  ``pypardiso`` package (``pip install flexmb[pardiso]``, which brings MKL). Its symbolic analysis
  (METIS ordering, weighted matching, symbolic factorisation) is made once per sparsity pattern and
  kept; every factorisation is then numeric only. Gives the factor's diagonal (pivot test) but not
  the sign of the determinant: statics that watch it factorise with SuperLU.
* ``"banded"``: the compiled band LU with partial pivoting (:mod:`flexmb.compiled.banded_lu`) of
  the matrix in reverse Cuthill-McKee order, for slender models (chains of beams), whose band
  stays narrow; its ordering and band are found once per pattern. Gives the factor's diagonal and
  the determinant's sign.
* ``"auto"``: the band LU where the pattern's band is at most :data:`BANDED_WIDTH` wide, else
  PARDISO from :data:`PARDISO_FROM` unknowns on when it is installed, else SuperLU.

Every backend's ``solve(b, transpose=True)`` solves with the transpose B^T on the same factors (a
discrete adjoint solves with the step Jacobian's transpose): SuperLU's ``trans='T'``, PARDISO's
``iparm[11]``, the band LU's transposed triangular solves.

Measured on this project's Jacobians (benchmarks/bench_solvers.py, docs/speed.md "Sparse solvers").
"""
from __future__ import annotations

import ctypes
import weakref
from functools import cached_property

import numpy as np
import scipy.sparse as sp

#: the backend names :func:`factorize` takes (``NewtonSettings(solver=...)``)
SOLVERS = ("auto", "superlu", "pardiso", "banded")
#: ``"auto"`` takes PARDISO (when installed) from this many unknowns on. Measured
#: (benchmarks/bench_solvers.py, docs/speed.md "Sparse solvers"): its numeric LU is 1.7-2x faster
#: than SuperLU's at 1e4 unknowns of Beam3D grillages and Shell3 plates, 2.2x at 1e5, as fast on
#: planar beams; loading MKL costs 0.45 s once per process, which a few LUs repay from here on.
PARDISO_FROM = 20_000

#: ``"auto"`` takes the band LU for patterns whose band, kl + ku + 1 diagonals after the reverse
#: Cuthill-McKee ordering, is at most this wide. Measured (benchmarks/bench_solvers.py, docs/speed.md
#: "Sparse solvers"): Simo's spin-up beam (cubic-mass Beam2D, kl = ku = 5) at 3072 / 12288 unknowns,
#: LU 0.33 / 1.4 ms and solve 0.06 / 0.24 ms against SuperLU's 2.0 / 7.9 and 0.16 / 0.68 ms; Shell3
#: strips of 1 / 2 / 3 / 4 / 6 cells' width at 2e4 unknowns (kl = ku = 17 / 23 / 29 / 35 / 47), LU 9 /
#: 15 / 22 / 31 / 49 ms and solve 1.0 / 1.3 / 1.5 / 4.2 / 9.5 ms against SuperLU's 23 / 32 / 38 / 41 /
#: 63 and 1.0 / 1.3 / 1.2 / 1.7 / 2.9 ms (PARDISO's 48-80 and 2.3-8 ms). Modified Newton makes
#: several solves per LU, so the band LU stops where its solve gets slower than SuperLU's.
BANDED_WIDTH = 47

#: symbolic analyses made, per backend (the tests count them; one per sparsity pattern)
ANALYSES = {"superlu": 0, "pardiso": 0, "banded": 0}
#: analysed patterns kept per backend, the newest (a run's Jacobian keeps one pattern)
_KEPT_PATTERNS = 2


class SolverNotInstalled(ImportError):
    """A sparse solver was asked for by name and its package is not installed."""


def available() -> tuple[str, ...]:
    """The installed backends among :data:`SOLVERS` (without ``"auto"``)."""
    names = ["superlu", "banded"]
    try:
        _mkl()
        names.append("pardiso")
    except SolverNotInstalled:
        pass
    return tuple(names)


def backend(solver: str, n: int, B: sp.csc_matrix | None = None) -> str:
    """The backend that ``solver`` (one of :data:`SOLVERS`) means for an (n, n) matrix, with B the
    matrix's pattern where known (``"auto"`` then looks at its band); raises ValueError for an
    unknown name and :class:`SolverNotInstalled` for a named backend that is not installed."""
    if solver == "auto":
        if B is not None and band_pattern(B).width <= BANDED_WIDTH:
            return "banded"
        return "pardiso" if n >= PARDISO_FROM and "pardiso" in available() else "superlu"
    if solver in ("superlu", "banded"):
        return solver
    if solver == "pardiso":
        _mkl()
        return solver
    raise ValueError(f"unknown sparse solver {solver!r}; choose one of {', '.join(map(repr, SOLVERS))}")


def factorize(B: sp.csc_matrix, solver: str, ordering: str, pivot_threshold: float,
              diagonal: bool, lasting: bool = False) -> "SuperLU | PardisoLU":
    """LU of the (equilibrated) CSC matrix B (n, n) by the backend ``solver`` means (:func:`backend`).
    ``ordering`` and ``pivot_threshold`` are SuperLU's column ordering and diagonal pivot threshold;
    ``diagonal``: keep the factor's diagonal (``.diagonal``, else None) for the pivot test;
    ``lasting``: PARDISO's factorisation gets a handle of its own, which later factorisations of
    the same pattern do not supersede (statics keeps tangents from one increment to the next)."""
    name = backend(solver, B.shape[0], B)
    if name == "pardiso":
        return PardisoLU(B, diagonal, lasting)
    if name == "banded":
        return BandedLU(B, diagonal)            # its own equilibration (of B: scales near 1)
    return SuperLU(B, ordering, pivot_threshold, diagonal)


class _SuperLUPattern:
    """SuperLU's fill-reducing ordering of one sparsity pattern, from its first factorisation,
    applied to the pattern's later matrices as a symmetric permutation ``B[q][:, q]`` with SuperLU's
    natural ordering: ``order`` (nnz,) takes B's CSC data to the permuted matrix's, whose index
    arrays are ``indptr``, ``indices``. Measured: the ordering is most of a factorisation
    (docs/speed.md "Sparse solvers")."""

    def __init__(self, B: sp.csc_matrix, perm_c: np.ndarray) -> None:
        self.keys = (B.indptr, B.indices)
        self.perm_c = perm_c
        ANALYSES["superlu"] += 1

    @cached_property
    def permutation(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """q (n,) new index -> old, order (nnz,), indptr, indices: made on the pattern's second
        matrix (a one-shot factorisation, a linear model's statics, pays nothing for them: 2-4 s
        at 61 000 unknowns)."""
        B_indptr, B_indices = self.keys
        n = B_indptr.size - 1
        q = np.argsort(self.perm_c)
        numbered = sp.csc_matrix((np.arange(B_indices.size, dtype=float), B_indices, B_indptr), shape=(n, n))
        permuted = numbered[q][:, q].tocsc()
        permuted.sort_indices()
        return q, permuted.data.astype(np.int64), permuted.indptr, permuted.indices


_SUPERLU_PATTERNS: list[_SuperLUPattern] = []


class SuperLU:
    """SciPy's SuperLU of B (n, n): the first matrix of a pattern with the fill-reducing column
    ordering ``ordering``, the later ones symmetrically permuted by it (:class:`_SuperLUPattern`).
    ``diagonal`` (n,): U's diagonal, or None; ``perm_r``, ``perm_c``: the row and column
    permutations of the factors (with the diagonal, the sign of B's determinant)."""

    name = "superlu"

    def __init__(self, B: sp.csc_matrix, ordering: str, pivot_threshold: float, diagonal: bool) -> None:
        import scipy.sparse.linalg as spla          # not imported by a model solved densely (start-up)

        pattern = next((p for p in _SUPERLU_PATTERNS if _same_pattern(B, *p.keys)), None)
        if pattern is None:
            self._lu = spla.splu(B, permc_spec=ordering, diag_pivot_thresh=pivot_threshold)
            self.q = None
            self.perm_r, self.perm_c = self._lu.perm_r, self._lu.perm_c
            _SUPERLU_PATTERNS.append(_SuperLUPattern(B, self._lu.perm_c))
            del _SUPERLU_PATTERNS[:-_KEPT_PATTERNS]
        else:
            q, order, indptr, indices = pattern.permutation
            permuted = sp.csc_matrix((B.data[order], indices, indptr), shape=B.shape)
            self._lu = spla.splu(permuted, permc_spec="NATURAL", diag_pivot_thresh=pivot_threshold)
            self.q = q
            # det B = det(P B P^T): the permuted matrix's permutations give B's determinant sign
            self.perm_r, self.perm_c = self._lu.perm_r, self._lu.perm_c
        # U is built as a matrix to read its diagonal: 0.4 s at n = 1e5 (shell plate), so only on request
        self.diagonal = self._lu.U.diagonal() if diagonal else None

    def solve(self, b: np.ndarray, transpose: bool = False) -> np.ndarray:
        """B^-1 b, or with ``transpose`` B^-T b, for b (n,) or (n, k). With the kept ordering the
        factors are those of Q B Q^T ((Q b)_i = b[q_i]), whose transpose is Q B^T Q^T: both solves
        permute alike."""
        trans = "T" if transpose else "N"
        if self.q is None:
            return self._lu.solve(b, trans=trans)
        x = np.empty_like(b)
        x[self.q] = self._lu.solve(b[self.q], trans=trans)
        return x


# ------------------------------------------------------------------ band LU
class _BandPattern:
    """The reverse Cuthill-McKee ordering of one sparsity pattern (of B + B^T) and the band it
    gives: ``new_index`` (n,) old index -> new, ``kl``, ``ku`` the lower and upper bandwidths of
    the permuted matrix, ``width`` = kl + ku + 1."""

    def __init__(self, B: sp.csc_matrix) -> None:
        from scipy.sparse.csgraph import reverse_cuthill_mckee

        self.keys = (B.indptr, B.indices)
        n = B.shape[0]
        order = reverse_cuthill_mckee(sp.csr_matrix((np.ones(B.indices.size), B.indices, B.indptr), shape=(n, n)),
                                      symmetric_mode=False)          # new -> old
        self.new_index = np.empty(n, dtype=np.int64)
        self.new_index[order] = np.arange(n)
        rows = self.new_index[B.indices]
        cols = np.repeat(self.new_index, np.diff(B.indptr))
        self.kl = int(max(0, (rows - cols).max(initial=0)))
        self.ku = int(max(0, (cols - rows).max(initial=0)))
        self.width = self.kl + self.ku + 1
        ANALYSES["banded"] += 1


_BAND_PATTERNS: list[_BandPattern] = []


def band_pattern(B: sp.csc_matrix) -> _BandPattern:
    """The band ordering of B's pattern: a kept one, else a new one (the newest kept)."""
    return _kept_pattern(_BAND_PATTERNS, B, _BandPattern)


def _kept_pattern(kept: list, B: sp.csc_matrix, analyse: type):
    """The analysis in ``kept`` of B's pattern, else ``analyse(B)``, kept as the newest of the
    :data:`_KEPT_PATTERNS` there."""
    for p in kept:
        if _same_pattern(B, *p.keys):
            return p
    p = analyse(B)
    kept.append(p)
    del kept[:-_KEPT_PATTERNS]
    return p


class BandedLU:
    """The compiled band LU (:mod:`flexmb.compiled.banded_lu`) of the matrix A (n, n) equilibrated,
    B = D_r A D_c (``row_scale``, ``col_scale``: the scalings of
    :func:`flexmb.integrators.newton.equilibrate`, made in the same compiled pass), in its pattern's
    reverse Cuthill-McKee order P (:func:`band_pattern`): P B P^T = L U with partial pivoting.
    ``diagonal`` (n,): U's diagonal, or None; ``determinant_sign``: the sign of det A (that of
    det(P B P^T): the scalings are positive and P symmetric; U's diagonal and the row exchanges)."""

    name = "banded"

    def __init__(self, A: sp.csc_matrix, diagonal: bool) -> None:
        from flexmb.compiled.banded_lu import band_lu, equilibrated_band_fill

        p = band_pattern(A)
        n = A.shape[0]
        self._pattern = p
        self._ab = np.empty((n, 2 * p.kl + p.ku + 1))
        self._pivots = np.empty(n, dtype=np.int64)
        self.row_scale, self.col_scale = np.empty(n), np.empty(n)
        equilibrated_band_fill(A.indptr, A.indices, A.data, p.new_index, p.kl, p.ku, self._ab, self.row_scale,
                               self.col_scale)
        if band_lu(self._ab, p.kl, p.ku, self._pivots) == 0.0:
            raise RuntimeError("Factor is exactly singular")
        u_diagonal = self._ab[:, p.kl + p.ku]
        self.diagonal = u_diagonal.copy() if diagonal else None
        negative = int(np.count_nonzero(u_diagonal < 0.0))
        swaps = int(np.count_nonzero(self._pivots != np.arange(n)))
        self.determinant_sign = -1 if (negative + swaps) % 2 else 1

    def solve(self, b: np.ndarray, equilibrated: bool = False, transpose: bool = False) -> np.ndarray:
        """A^-1 b, or with ``equilibrated`` B^-1 b, for b (n,) or (n, k); with ``transpose`` the
        solve with the transpose, A^-T b = D_r P^T (P B P^T)^-T P D_c b (or B^-T b), on the same
        factors in one compiled call (:func:`~flexmb.compiled.banded_lu.band_solve_transposed`)."""
        from flexmb.compiled.banded_lu import permuted_band_solve, permuted_band_solve_transposed

        p = self._pattern
        rs, cs = (np.ones(b.shape[0]),) * 2 if equilibrated else (self.row_scale, self.col_scale)
        if transpose:
            return permuted_band_solve_transposed(self._ab, p.kl, p.ku, self._pivots, p.new_index, rs, cs,
                                                  np.ascontiguousarray(b, dtype=float))
        if b.ndim == 1:
            return permuted_band_solve(self._ab, p.kl, p.ku, self._pivots, p.new_index, rs, cs,
                                       np.ascontiguousarray(b, dtype=float))
        return np.stack([permuted_band_solve(self._ab, p.kl, p.ku, self._pivots, p.new_index, rs, cs,
                                             np.ascontiguousarray(column, dtype=float)) for column in b.T], axis=1)


# ------------------------------------------------------------------ PARDISO
_MKL: ctypes.CDLL | None = None


def _mkl() -> ctypes.CDLL:
    """MKL's runtime library, found by pypardiso; raises SolverNotInstalled without pypardiso."""
    global _MKL
    if _MKL is None:
        try:
            import pypardiso
        except ImportError as exc:
            raise SolverNotInstalled("the sparse solver 'pardiso' needs the package pypardiso (with Intel MKL): "
                                     "pip install flexmb[pardiso]") from exc
        lib = pypardiso.PyPardisoSolver().libmkl
        i32, i64, vp = ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p
        lib.pardiso.argtypes = [i64, i32, i32, i32, i32, i32, vp, vp, vp, vp, i32, i32, i32, vp, vp, i32]
        lib.pardiso.restype = None
        lib.pardiso_getdiag.argtypes = [i64, vp, vp, i32, i32]
        lib.pardiso_getdiag.restype = None
        _MKL = lib
    return _MKL


#: PARDISO's control parameters (0-based ``iparm`` indices of the MKL manual) set here; the rest 0
_IPARM = {
    0: 1,       # these values, not the defaults
    1: 2,       # METIS nested-dissection ordering
    7: 0,       # iterative refinement: two steps when pivots were perturbed
    9: 13,      # small pivots perturbed to 1e-13 of the norm
    10: 1,      # non-symmetric scaling ...
    12: 1,      # ... and weighted matching (the matrix is non-symmetric, its diagonal may be small)
    11: 2,      # solve with the transpose: CSC arrays of B read as CSR are B^T
    17: -1,     # report the factor's non-zeros in iparm[17]
    34: 1,      # zero-based indices
    55: 1,      # keep the factor's diagonal for pardiso_getdiag
}
_ERRORS = {-1: "input inconsistent", -2: "not enough memory", -3: "reordering problem",
           -4: "zero pivot, numerical factorization or iterative refinement problem",
           -5: "unclassified (internal) error", -6: "reordering failed", -7: "diagonal matrix is singular",
           -8: "32-bit integer overflow problem", -9: "not enough memory for OOC", -10: "error opening OOC files",
           -11: "read/write error with OOC files"}


def _same_pattern(a: sp.csc_matrix, indptr: np.ndarray, indices: np.ndarray) -> bool:
    if a.indices is indices and a.indptr is indptr:     # the assembly keeps one matrix object per model
        return True
    return (a.indptr.shape == indptr.shape and a.indices.shape == indices.shape
            and np.array_equal(a.indptr, indptr) and np.array_equal(a.indices, indices))


class _PardisoPattern:
    """One PARDISO handle and its symbolic analysis for one sparsity pattern; the numeric
    factorisation in it is that of the last :class:`PardisoLU` made on the pattern
    (``generation``). Its memory is released when the object goes."""

    def __init__(self, B: sp.csc_matrix) -> None:
        if np.any(B.indptr[1:] == B.indptr[:-1]) or not np.bincount(B.indices, minlength=B.shape[0]).all():
            # PARDISO crashes on an empty row or column; SuperLU calls such a matrix singular so
            raise RuntimeError("Factor is exactly singular")
        self.indptr = B.indptr.astype(np.int32)            # (n + 1,)
        self.indices = B.indices.astype(np.int32)          # (nnz,)
        self.keys = (B.indptr, B.indices)                   # the caller's arrays, to recognise them
        self.n = B.shape[0]
        self.pt = np.zeros(64, dtype=np.int64)              # PARDISO's internal handle
        self.iparm = np.zeros(64, dtype=np.int32)
        for k, v in _IPARM.items():
            self.iparm[k] = v
        self.generation = 0
        self.call(11, B.data, np.zeros(1), np.zeros(1), 1)  # symbolic analysis
        ANALYSES["pardiso"] += 1
        weakref.finalize(self, _release, self.pt, self.iparm.copy(), self.n)

    def call(self, phase: int, data: np.ndarray, b: np.ndarray, x: np.ndarray, nrhs: int) -> None:
        error = ctypes.c_int32(0)
        _pardiso(self.pt, phase, self.n, data, self.indptr, self.indices, nrhs, self.iparm, b, x, error)
        if error.value != 0:
            raise RuntimeError(f"PARDISO phase {phase} failed, error {error.value}: "
                               f"{_ERRORS.get(error.value, 'unknown')}")


def _pardiso(pt, phase, n, data, indptr, indices, nrhs, iparm, b, x, error, mtype: int = 11) -> None:
    i32 = ctypes.c_int32
    one, perm = i32(1), np.zeros(1, dtype=np.int32)
    _mkl().pardiso(pt.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)), ctypes.byref(one), ctypes.byref(one),
                   ctypes.byref(i32(mtype)), ctypes.byref(i32(phase)), ctypes.byref(i32(n)), data.ctypes.data,
                   indptr.ctypes.data, indices.ctypes.data, perm.ctypes.data, ctypes.byref(i32(nrhs)),
                   iparm.ctypes.data_as(ctypes.POINTER(i32)), ctypes.byref(i32(0)), b.ctypes.data, x.ctypes.data,
                   ctypes.byref(error))


def _release(pt: np.ndarray, iparm: np.ndarray, n: int, mtype: int = 11) -> None:
    """Free the memory of a PARDISO handle (phase -1)."""
    empty = np.zeros(1)
    _pardiso(pt, -1, n, empty, np.zeros(n + 1, dtype=np.int32), np.zeros(1, dtype=np.int32), 1, iparm,
             empty, empty.copy(), ctypes.c_int32(0), mtype)


#: PARDISO's control parameters of :func:`symmetric_inertia` (real symmetric indefinite, type -2)
_IPARM_SYMMETRIC = {
    0: 1,       # these values, not the defaults
    1: 2,       # METIS nested-dissection ordering
    9: 8,       # small pivots perturbed to 1e-8 of the norm (then the count is not trusted)
    10: 1,      # symmetric scaling and ...
    12: 1,      # ... weighted matching, with 1x1 and 2x2 Bunch-Kaufman pivots
    34: 1,      # zero-based indices
}


def symmetric_inertia(A: sp.spmatrix) -> tuple[int, int] | None:
    """The numbers of positive and negative eigenvalues of the symmetric sparse matrix A (n, n)
    (Sylvester's law of inertia on PARDISO's L D L^T with 1x1 and 2x2 pivots, matrix type -2),
    or None when PARDISO perturbed a pivot (A singular or nearly so: the count is then not
    known). Only A's lower triangle is read. Raises :class:`SolverNotInstalled` without pypardiso."""
    _mkl()
    n = A.shape[0]
    # the CSC arrays of the lower triangle are the CSR arrays of the upper one, which PARDISO
    # reads for a symmetric matrix; every diagonal entry must be stored, zeros too
    lower = sp.coo_matrix(sp.tril(A))
    rows = np.r_[lower.row, np.arange(n)]
    cols = np.r_[lower.col, np.arange(n)]
    values = np.r_[lower.data.astype(float), np.zeros(n)]
    C = sp.csc_matrix((values, (rows, cols)), shape=(n, n))        # duplicates summed, zeros kept
    C.sort_indices()
    indptr, indices = C.indptr.astype(np.int32), C.indices.astype(np.int32)
    data = np.ascontiguousarray(C.data)
    pt, iparm = np.zeros(64, dtype=np.int64), np.zeros(64, dtype=np.int32)
    for k, v in _IPARM_SYMMETRIC.items():
        iparm[k] = v
    error = ctypes.c_int32(0)
    try:
        _pardiso(pt, 12, n, data, indptr, indices, 1, iparm, np.zeros(1), np.zeros(1), error, -2)
        if error.value != 0:
            raise RuntimeError(f"PARDISO (symmetric indefinite) failed, error {error.value}: "
                               f"{_ERRORS.get(error.value, 'unknown')}")
        positive, negative, perturbed = int(iparm[21]), int(iparm[22]), int(iparm[13])
    finally:
        _release(pt, iparm, n, -2)
    return None if perturbed else (positive, negative)


#: the PARDISO patterns analysed, the newest last (a model's Jacobian keeps one pattern per run)
_PATTERNS: list[_PardisoPattern] = []


def _pattern(B: sp.csc_matrix) -> _PardisoPattern:
    """The analysed pattern of B: a kept one if B has its pattern, else a new analysis."""
    return _kept_pattern(_PATTERNS, B, _PardisoPattern)


class PardisoLU:
    """PARDISO's numeric LU of B (n, n) on the kept symbolic analysis of B's pattern.

    One factorisation per pattern is alive: making another on the same pattern supersedes this
    one, whose ``solve`` then raises RuntimeError (Newton drops an LU when it makes the next);
    ``lasting`` gives it a handle and symbolic analysis of its own instead, never superseded.
    ``diagonal`` (n,): the factor's diagonal (after PARDISO's scaling and matching), or None.
    ``perturbed``: pivots PARDISO replaced by 1e-13 of the norm (a singular or nearly singular B).
    """

    name = "pardiso"

    def __init__(self, B: sp.csc_matrix, diagonal: bool, lasting: bool = False) -> None:
        self._pattern = p = _PardisoPattern(B) if lasting else _pattern(B)
        self._data = np.ascontiguousarray(B.data, dtype=float)   # PARDISO reads it again in the solves
        p.call(22, self._data, np.zeros(1), np.zeros(1), 1)
        p.generation += 1
        self._generation = p.generation
        self.perturbed = int(p.iparm[13])
        self.factor_entries = int(p.iparm[17])
        self.diagonal = None
        if diagonal:
            factor, original = np.zeros(p.n), np.zeros(p.n)
            error = ctypes.c_int32(0)
            _mkl().pardiso_getdiag(p.pt.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)), factor.ctypes.data,
                                       original.ctypes.data, ctypes.byref(ctypes.c_int32(1)), ctypes.byref(error))
            self.diagonal = factor

    def solve(self, b: np.ndarray, transpose: bool = False) -> np.ndarray:
        """B^-1 b, or with ``transpose`` B^-T b, for b (n,) or (n, k), on the same factors.

        PARDISO reads B's CSC arrays as the CSR arrays of B^T and its plain solve makes
        ``iparm[11] = 2`` the solve with the transpose of that, B; the transposed solve is PARDISO's
        solve with the matrix it factorised (``iparm[11] = 0``, for the one call)."""
        p = self._pattern
        if p.generation != self._generation:
            raise RuntimeError("this PARDISO factorisation was superseded by a later one of the same pattern")
        rhs = np.asfortranarray(b, dtype=float)
        x = np.zeros_like(rhs)
        if transpose:
            p.iparm[11] = 0
        try:
            p.call(33, self._data, rhs, x, 1 if rhs.ndim == 1 else rhs.shape[1])
        finally:
            p.iparm[11] = _IPARM[11]
        return x
