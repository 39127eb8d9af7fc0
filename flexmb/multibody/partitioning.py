"""Coordinate partitioning: the algebra of Blajer, Schiehlen & Schirm (1994) and the choice of
independent coordinates.

With q split into k independent q_I and m dependent q_D (index arrays into q, in the original
coordinate order; the paper writes the split symbolically as q = [q_I; q_D], eq. (5)):

    A = -C_D^{-1} C_I,  eta = -C_D^{-1} a,  xi = -C_D^{-1} b                      (7), (8)
    D = [I  A^T]  (k x n),   D C^T = 0                                             (9)
    M_d = D M D^T,   h_d = D (h - M [0; xi]),   M_d q_I'' = h_d                  (12)-(14)

Projective criterion (section 3): the unit vector k_i along q_i' has the squared length
(M^{-1})_ii and its projection on the tangent subspace the squared length
D_i^T M_d^{-1} D_i, D_i the i-th column of D:

    cos^2 alpha_i = D_i^T M_d^{-1} D_i / (M^{-1})_ii                               (23a)
    cos^2 beta_i  = (C M^{-1})_i^T M_c^{-1} (C M^{-1})_i / (M^{-1})_ii,  M_c = C M^{-1} C^T   (23b)

and cos^2 alpha_i + cos^2 beta_i = 1. The tangent subspace does not depend on which
(non-singular) choice produced D, so cos^2 alpha_i is a property of the configuration.

For k > 1 the k coordinates with the largest cos^2 alpha_i need not form a valid set. The
choice here extends the criterion greedily: the normalised tangent Gram matrix
S = N D^T M_d^{-1} D N (N = diag((M^{-1})_ii^{-1/2}), diag S = cos^2 alpha) is factorised by a
pivoted Cholesky; the first pivot is the paper's best coordinate, each further pivot the best
coordinate given those chosen. A set I is singular exactly when S_II is, and its smallest
eigenvalue (cos^2 alpha_i itself when k = 1) is the set's criterion value.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flexmb.checks import ModelError

Array = np.ndarray

#: choices of independent coordinates
CHOICE_METHODS = ("projective", "lu", "svd")


class SingularChoiceError(ValueError):
    """The dependent block C_D of a choice of independent coordinates is singular."""


@dataclass(frozen=True)
class Partition:
    """A split of q into independent and dependent coordinates at one configuration."""

    independent: Array          # (k,) indices of q_I
    dependent: Array            # (m,) indices of q_D
    A: Array                    # (m, k) = -C_D^{-1} C_I, eq. (7)
    D: Array                    # (k, n) = [I A^T] in the coordinate order, eq. (9)
    eta: Array                  # (m,) = -C_D^{-1} a
    CD_inv: Array               # (m, m) inverse of the row-equilibrated C_D
    row_scale: Array            # (m,) the equilibration, C_D^{-1} = CD_inv diag(row_scale)

    def xi(self, b: Array) -> Array:
        """xi = -C_D^{-1} b, eq. (8)."""
        return -self.CD_inv @ (self.row_scale * b)

    def scatter_dependent(self, values: Array) -> Array:
        """The n-vector [0; values]: zeros at q_I, values at q_D."""
        out = np.zeros(self.D.shape[1])
        out[self.dependent] = values
        return out

    def velocities(self, v_independent: Array) -> Array:
        """q' = D^T v_I + [0; eta], eq. (9)."""
        return self.D.T @ v_independent + self.scatter_dependent(self.eta)


def _indices(independent, n: int) -> tuple[Array, Array]:
    ind = np.asarray(independent, dtype=np.int64).ravel()
    if ind.size and (ind.min() < 0 or ind.max() >= n or np.unique(ind).size != ind.size):
        raise ValueError(f"independent coordinates {ind.tolist()} must be distinct indices in 0..{n - 1}")
    return ind, np.setdiff1d(np.arange(n), ind)


def partition(C: Array, independent, a: Array | None = None, names: list[str] | None = None,
              rcond: float = 1e-13) -> Partition:
    """A, D, eta for the independent coordinates ``independent`` (eqs. 7, 9).

    Raises :class:`SingularChoiceError` naming the coordinates when C_D is singular (its
    reciprocal condition number below ``rcond``).
    """
    C = np.atleast_2d(np.asarray(C, dtype=float))
    m, n = C.shape
    ind, dep = _indices(independent, n)
    if dep.size != m:
        raise ValueError(f"{ind.size} independent coordinates for {n} coordinates and {m} constraints: "
                         f"need {n - m}")
    # rows equilibrated so that the singularity test does not depend on the constraints' units
    row_norm = np.abs(C).max(axis=1) if m else np.ones(0)
    row_scale = np.divide(1.0, row_norm, out=np.zeros(m), where=row_norm > 0.0)
    C = C * row_scale[:, None]
    CD = C[:, dep]
    label = [names[i] for i in ind] if names else ind.tolist()
    # explicit inverse: C_D is small, and numpy's inverse is much faster than scipy's LU
    # solve for such sizes; its 1-norm condition number comes for free
    try:
        CD_inv = np.linalg.inv(CD) if m else np.zeros((0, 0))
        cond = float(np.abs(CD).sum(0).max() * np.abs(CD_inv).sum(0).max()) if m else 1.0
    except np.linalg.LinAlgError:
        cond = np.inf
    if not np.isfinite(cond) or cond * rcond > 1.0:
        raise SingularChoiceError(f"independent coordinates {label}: the dependent block C_D is singular "
                                  f"(condition number {cond:.3g})")
    A = -CD_inv @ C[:, ind]
    D = np.zeros((ind.size, n))
    D[:, ind] = np.eye(ind.size)
    D[:, dep] = A.T
    eta = -CD_inv @ (row_scale * a) if (a is not None and m) else np.zeros(m)
    return Partition(ind, dep, A, D, eta, CD_inv, row_scale)


def tangent_mass(M: Array, D: Array) -> Array:
    """M_d = D M D^T, eq. (13)."""
    return D @ M @ D.T


def massless(M: Array) -> Array:
    """The coordinates without mass (sorted indices): M's rows that are zero to round-off
    (1e-14 of its largest entry), e.g. the translations of a node held only by joints."""
    M = np.asarray(M, dtype=float)
    scale = float(np.abs(M).max(initial=0.0))
    return np.flatnonzero(np.all(np.abs(M) <= 1e-14 * scale, axis=1))


def mass_scales(M: Array, names: list[str] | None = None) -> Array:
    """N_ii = (M^{-1})_ii^{-1/2} (n,), the weights of the projective criterion: zero at massless
    coordinates (the limit of a vanishing mass: such a coordinate moves only as the constraints
    carry it, never independently). ModelError if the massive coordinates' mass is singular."""
    M = np.asarray(M, dtype=float)
    zero = massless(M)
    rest = np.setdiff1d(np.arange(M.shape[0]), zero)
    N = np.zeros(M.shape[0])
    try:
        N[rest] = 1.0 / np.sqrt(np.diag(np.linalg.inv(M[np.ix_(rest, rest)])))
    except np.linalg.LinAlgError:
        raise ModelError("coordinate partitioning: the mass matrix is singular beyond its massless coordinates "
                         f"({_listed(zero, names)}); give the coordinates mass") from None
    return N


def _listed(indices: Array, names: list[str] | None) -> str:
    shown = [names[i] if names is not None else f"q{i}" for i in indices[:8]]
    return ", ".join(shown) + (", ..." if len(indices) > 8 else "") if len(indices) else "none"


def tangent_gram(M: Array, D: Array, names: list[str] | None = None) -> Array:
    """S = N D^T M_d^{-1} D N (n, n) with N = diag((M^{-1})_ii^{-1/2}) (:func:`mass_scales`, zero
    at massless coordinates); diag S = cos^2 alpha (23a). M may be singular where the
    constraints carry the massless coordinates: the reduced mass M_d = D M D^T is what must be
    regular; if it is not, ModelError naming the massless coordinates (``names``, default q<i>)."""
    Md = tangent_mass(M, D)
    X = D * mass_scales(M, names)[None, :]
    try:
        return X.T @ np.linalg.solve(Md, X)
    except np.linalg.LinAlgError:
        raise ModelError("coordinate partitioning: the reduced mass D M D^T is singular: the joints leave massless "
                         f"coordinates free (massless: {_listed(massless(M), names)}); give them mass (a point "
                         "mass) or hold them by joints") from None


def projective_criterion(M: Array, C: Array, D: Array | None = None, form: str = "23a",
                         M_inv: Array | None = None) -> Array:
    """cos^2 alpha_i for every coordinate (n,): eq. (23a) from D (any valid choice; one by LU
    pivoting when omitted) or eq. (23b) as 1 - cos^2 beta_i from M^{-1} (computed when
    ``M_inv`` is not given)."""
    M = np.asarray(M, dtype=float)
    C = np.atleast_2d(np.asarray(C, dtype=float))
    if form == "23a":
        if D is None:
            D = partition(C, choose_independent(M, C, "lu")).D
        return np.clip(np.diag(tangent_gram(M, D)), 0.0, 1.0)
    if form == "23b":
        Minv = np.linalg.inv(M) if M_inv is None else np.asarray(M_inv, dtype=float)
        CMi = C @ Minv
        cos2_beta = np.einsum("ji,ji->i", CMi, np.linalg.solve(CMi @ C.T, CMi)) / np.diag(Minv)
        return np.clip(1.0 - cos2_beta, 0.0, 1.0)
    raise ValueError(f"projective_criterion: form must be '23a' or '23b', got {form!r}")


def choice_criterion(S: Array, independent) -> float:
    """Criterion value of a set of independent coordinates: the smallest eigenvalue of S_II
    (= cos^2 alpha_i for a single coordinate; 0 for a singular set)."""
    ind = np.asarray(independent, dtype=np.int64)
    return float(max(np.linalg.eigvalsh(S[np.ix_(ind, ind)])[0], 0.0))


def _greedy_pivots(S: Array, k: int) -> Array:
    """Pivoted Cholesky of the positive semi-definite S: k pivots, each the largest remaining
    diagonal (ties to the lower index)."""
    S = S.copy()
    chosen = []
    for _ in range(k):
        d = np.diag(S).copy()
        d[chosen] = -np.inf
        i = int(np.argmax(d))
        chosen.append(i)
        if S[i, i] > 0.0:
            S -= np.outer(S[:, i], S[i, :]) / S[i, i]
    return np.sort(np.array(chosen, dtype=np.int64))


def _full_pivot_dependent(C: Array) -> Array:
    """Gaussian elimination with complete pivoting on C (m, n) (Wehage & Haug): the m pivot
    columns are the dependent coordinates."""
    U = np.array(C, dtype=float)
    m, n = U.shape
    rows, cols = np.arange(m), np.arange(n)
    for j in range(m):
        block = np.abs(U[j:, j:])
        r, c = np.unravel_index(int(np.argmax(block)), block.shape)
        r, c = r + j, c + j
        U[[j, r]] = U[[r, j]]
        rows[[j, r]] = rows[[r, j]]
        U[:, [j, c]] = U[:, [c, j]]
        cols[[j, c]] = cols[[c, j]]
        if U[j, j] == 0.0:
            raise SingularChoiceError(f"the constraint Jacobian has rank {j} < {m} constraints "
                                      "(redundant constraints or a singular configuration)")
        U[j + 1:] -= np.outer(U[j + 1:, j] / U[j, j], U[j])
    return np.sort(cols[:m])


def choose_independent(M: Array, C: Array, method: str = "projective", gram: Array | None = None,
                       names: list[str] | None = None) -> Array:
    """The k = n - m independent coordinates (sorted indices) chosen by

    - ``"projective"``: the projective criterion with the mass metric (greedy, see module);
    - ``"lu"``: Gaussian elimination with complete pivoting on C (Wehage & Haug 1982): the
      pivot columns become dependent;
    - ``"svd"``: the null space of C from its singular value decomposition (Mani, Haug &
      Atkinson 1985), the same greedy choice in the Euclidean metric (masses ignored).

    ``gram``: the tangent Gram matrix S of :func:`tangent_gram` when already at hand (it does not
    depend on the choice that produced D), to spare the projective choice computing it again.
    ``names``: the coordinates' names for the error of a singular reduced mass.
    """
    C = np.atleast_2d(np.asarray(C, dtype=float))
    m, n = C.shape
    k = n - m
    if method == "lu":
        return np.setdiff1d(np.arange(n), _full_pivot_dependent(C))
    if method == "svd":
        _, s, Vt = np.linalg.svd(C)
        if m and s[-1] <= 1e-13 * s[0]:
            raise SingularChoiceError(f"the constraint Jacobian is rank-deficient (singular values {s})")
        null = Vt[m:]                                                   # (k, n), orthonormal rows
        return _greedy_pivots(null.T @ null, k)
    if method == "projective":
        if gram is None:
            gram = tangent_gram(M, partition(C, choose_independent(M, C, "lu")).D, names)
        return _greedy_pivots(gram, k)
    raise ValueError(f"choice of independent coordinates must be one of {CHOICE_METHODS}, got {method!r}")


def reduced_dynamics(M: Array, h: Array, part: Partition, b: Array) -> tuple[Array, Array, Array]:
    """M_d, h_d (eqs. 13, 14) and xi (eq. 8) of a partition at one state."""
    xi = part.xi(b)
    Md = tangent_mass(M, part.D)
    hd = part.D @ (h - M @ part.scatter_dependent(xi))
    return Md, hd, xi


def accelerations(system, q: Array, qd: Array, t: float, independent) -> tuple[Array, Array]:
    """q_I'' from the minimal equations (12) and the full q'' from eq. (10) at a state."""
    M, C = system.M(q, t), system.C(q, t)
    part = partition(C, independent, system.a(q, t), system.names)
    Md, hd, xi = reduced_dynamics(M, system.h(q, qd, t), part, system.b(q, qd, t))
    qdd_I = np.linalg.solve(Md, hd)
    return qdd_I, part.D.T @ qdd_I + part.scatter_dependent(xi)
