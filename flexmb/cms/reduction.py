"""Reductions of a component: free-interface modes with residual flexibility, and Craig-Bampton.

Each function takes a :class:`~flexmb.cms.component.Component` and returns a
:class:`ReducedBasis`: the component's displacements are approximated as u_j = Phi_j p_j
(+ the residual flexibility G_res,j f_j for the interface forces f_j, free-interface only).

Free-interface modes with residual flexibility (MacNeal 1971, Rubin 1975; the form used by
Hutton & Smith 1993, section 2):

* Phi_j = [Phi_r, Phi_e]: the rigid-body modes (eigenvalue 0) and the elastic free-free modes
  up to ``n_modes`` or ``cutoff_hz``, mass-normalised, Phi^T M Phi = I.
* Inertia-relief (elastic) flexibility G = P^T K_c^+ P with the projector P = I - M Phi_r Phi_r^T
  (which removes the rigid-body part of a load by the d'Alembert forces of the rigid-body
  acceleration) and K_c^+ the inverse of K on a statically determinate support, zero-padded at
  the support DOFs. The support DOFs are chosen by a column-pivoted QR of the rigid-body modes
  restricted to the DOFs (``Phi_r^T``): the n_r DOFs picked first are those on which the
  rigid-body motions are best conditioned, so that fixing them stops every rigid motion and
  nothing more (a statically determinate support). G does not depend on that choice.
* Residual flexibility G_res = G - Phi_e Lambda_e^-1 Phi_e^T, the flexibility of the modes left
  out. Only its columns at the interface DOFs are needed (interface forces act there): it is
  stored as (n_j, n_b).

A grounded component (one holding a support) is reduced the same way, free-free: the ground is
an interface of the synthesis. Craig-Bampton (Craig & Bampton 1968): constraint modes
[I; -K_ii^-1 K_ib] for every interface DOF b (grounded ones included) and fixed-interface modes
of (K_ii, M_ii).

Eigenvalues are found by a dense solve of the shifted problem (K + sigma M)^-1 M (symmetric
LAPACK ``eigh(M, K + sigma M)``, which also accepts a singular lumped mass: massless DOFs give
infinite eigenvalues, discarded), with sigma an estimate of the lowest elastic eigenvalue from
inverse iteration on the supported component; components larger than ``dense_limit`` DOFs use
ARPACK in the same shift-invert form.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from flexmb.analysis.arpack import start_vector
from flexmb.checks import ModelError, keywords_listed, methods_keywords_listed
from flexmb.cms.component import Component
from flexmb.integrators.newton import Factorization

#: components with at most this many DOFs are solved densely (above it ARPACK's shift-invert is faster:
#: 4-9x at 2000 DOFs of a beam frame, benchmarks/bench_cms.py)
DENSE_LIMIT = 500
#: an eigenvalue below this fraction of the shift (about the lowest elastic eigenvalue) is a
#: rigid-body mode (round-off gives about 1e-13 of the shift)
RIGID_FRACTION = 1e-6


@methods_keywords_listed
@dataclass
class ReducedBasis:
    """A component's reduced basis.

    Attributes
    ----------
    component : the :class:`~flexmb.cms.component.Component` reduced.
    kind : ``"free-interface"`` or ``"craig-bampton"``.
    vectors : Phi_j (n_j, m_j). Free-interface: rigid-body modes then elastic modes, mass-
        normalised. Craig-Bampton: constraint modes (one per interface DOF, in the order of
        ``component.interface_dofs``) then fixed-interface modes (mass-normalised).
    eigenvalues : omega^2 (rad^2/s^2) of the kept modes: free-interface (m_j,) with the rigid
        ones exactly 0.0; Craig-Bampton those of the fixed-interface modes only.
    n_rigid : number of rigid-body modes (free-interface; 0 for Craig-Bampton).
    residual_flexibility : G_res (n_j, n_b) at the interface DOFs (m/N, ...), free-interface with
        ``residual=True``; else None.
    """

    component: Component
    kind: str
    vectors: np.ndarray
    eigenvalues: np.ndarray
    n_rigid: int
    residual_flexibility: np.ndarray | None

    @property
    def size(self) -> int:
        """m_j, the number of columns of the basis."""
        return self.vectors.shape[1]

    @property
    def omega(self) -> np.ndarray:
        """Angular frequencies of the kept modes (as ``eigenvalues``), rad/s."""
        return np.sqrt(np.maximum(self.eigenvalues, 0.0))

    @property
    def frequencies_hz(self) -> np.ndarray:
        """Frequencies of the kept modes (as ``eigenvalues``), Hz."""
        return self.omega / (2.0 * np.pi)


@keywords_listed(renamed={"n_modes": "n_elastic_modes"})
def free_interface(component: Component, n_elastic_modes: int | None = None, cutoff_hz: float | None = None,
                   residual: bool = True, dense_limit: int = DENSE_LIMIT) -> ReducedBasis:
    """Free-interface modes (rigid-body modes kept) with, by default, the residual flexibility.

    Parameters
    ----------
    component : the component to reduce.
    n_elastic_modes : number of elastic modes kept; the rigid-body modes come on top (a free
        component's basis holds n_rigid + n_elastic_modes modes).
    cutoff_hz : keep the elastic modes up to this frequency (Hz). With ``n_elastic_modes`` too, at
        most ``n_elastic_modes`` of them. One of the two must be given.
    residual : compute the residual flexibility G_res = G - Phi_e Lambda_e^-1 Phi_e^T at the
        interface DOFs (the MacNeal/Rubin correction that makes the method accurate up to the cut-off).
    dense_limit : largest component (DOFs) solved densely.

    Raises
    ------
    ModelError naming the component: no mode count or cut-off, more modes than the component
    has, no elastic mode below the cut-off, no mass, a mechanism (a zero-energy motion that is
    not a rigid-body motion).
    """
    what = f"component {component.name!r}"
    _check_request(n_elastic_modes, cutoff_hz, what, "n_elastic_modes")
    support, rigid_count, factor = _determinate_support(component)
    sigma = _shift_estimate(component.K, component.M, support, factor, what)
    K, M = component.K, component.M
    available = _mass_rank(M) - rigid_count
    wanted = rigid_count + (n_elastic_modes if n_elastic_modes is not None else 0)
    lam, X = _lowest_modes(K, M, sigma, wanted, cutoff_hz, available + rigid_count, dense_limit, what)
    if np.any(np.abs(lam[:rigid_count]) > RIGID_FRACTION * sigma) or (lam.size > rigid_count
                                                              and lam[rigid_count] <= RIGID_FRACTION * sigma):
        raise ModelError(f"{what}: expected {rigid_count} rigid-body modes, found eigenvalues "
                         f"{lam[:rigid_count + 1].tolist()} (a mechanism or a disconnected part?)")
    lam[:rigid_count] = 0.0
    elastic = _select(lam[rigid_count:], n_elastic_modes, cutoff_hz, available, what, "elastic free-interface")
    keep = np.r_[np.arange(rigid_count), rigid_count + elastic]
    Phi, lam = X[:, keep], lam[keep]
    G_res = None
    if residual:
        G_res = _residual_flexibility(component, Phi[:, :rigid_count], Phi[:, rigid_count:],
                                      lam[rigid_count:], support, factor)
    return ReducedBasis(component, "free-interface", Phi, lam, rigid_count, G_res)


@keywords_listed
def craig_bampton(component: Component, n_modes: int | None = None, cutoff_hz: float | None = None,
                  dense_limit: int = DENSE_LIMIT) -> ReducedBasis:
    """Craig-Bampton basis: constraint modes [I; -K_ii^-1 K_ib] for every interface DOF (grounded
    ones included) and the fixed-interface modes of (K_ii, M_ii) up to ``n_modes`` / ``cutoff_hz``
    (``n_modes=0`` keeps the constraint modes only: Guyan reduction).

    Raises ModelError naming the component when the interface does not hold it statically
    (K_ii singular), and for the bad mode requests of :func:`free_interface`.
    """
    what = f"component {component.name!r}"
    _check_request(n_modes, cutoff_hz, what)
    b = component.interface_dofs
    if b.size == 0:
        raise ModelError(f"{what}: Craig-Bampton needs interface DOFs; the component has none")
    i = np.setdiff1d(np.arange(component.n_dof), b)
    K, M = component.K, component.M
    Kii, Mii = K[i][:, i].tocsc(), M[i][:, i].tocsc()
    try:
        factor = Factorization(Kii)
    except RuntimeError:                           # an exactly zero pivot
        factor = None
    if factor is None or factor.is_singular():
        raise ModelError(f"{what}: its interface DOFs do not hold it (K_ii singular: the component moves "
                         "freely with its interface fixed); use free_interface, or add interface nodes")
    Psi = np.zeros((component.n_dof, b.size))
    Psi[b, np.arange(b.size)] = 1.0
    Psi[i] = -factor.solve(K[i][:, b].toarray())
    available = _mass_rank(Mii)
    wanted = n_modes if n_modes is not None else 0
    sigma = _inverse_iteration(factor, Mii, what) if i.size else 1.0
    lam, X = _lowest_modes(Kii, Mii, sigma, wanted, cutoff_hz, available, dense_limit, what)
    keep = _select(lam, n_modes, cutoff_hz, available, what, "fixed-interface")
    Phi_i = np.zeros((component.n_dof, keep.size))
    Phi_i[i] = X[:, keep]
    return ReducedBasis(component, "craig-bampton", np.hstack([Psi, Phi_i]), lam[keep], 0, None)


def shifted_eigh(K: np.ndarray, M: np.ndarray, sigma: float, n: int | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """All finite eigenpairs (or the n lowest) of K x = lambda M x (K, M dense symmetric,
    K + sigma M positive definite, else numpy.linalg.LinAlgError): ascending eigenvalues (k,) and
    mass-normalised vectors (size, k), from the symmetric definite problem
    M x = mu (K + sigma M) x, lambda = 1/mu - sigma. Directions without mass (mu at round-off,
    e.g. rotations of a lumped mass) are infinite eigenvalues and dropped. Low eigenvalues are
    accurate to about eps (lambda + sigma)^2 / (sigma lambda): choose sigma near the lowest
    elastic eigenvalue."""
    size = K.shape[0]
    subset = None if n is None else [size - n, size - 1]
    mu, X = sla.eigh(M, K + sigma * M, subset_by_index=subset)
    finite = mu > 1e-12 * mu.max(initial=0.0)
    mu, X = mu[finite][::-1], X[:, finite][:, ::-1]
    return 1.0 / mu - sigma, X / np.sqrt(mu)[None, :]


# ---------------------------------------------------------------------------- helpers
def _check_request(n_modes: int | None, cutoff_hz: float | None, what: str, keyword: str = "n_modes") -> None:
    """The mode count (given as ``keyword``) or the cut-off frequency of a reduction."""
    if n_modes is None and cutoff_hz is None:
        raise ModelError(f"{what}: give {keyword} (number of modes kept) or cutoff_hz (Hz)")
    if n_modes is not None and (isinstance(n_modes, bool) or not isinstance(n_modes, (int, np.integer))
                                or n_modes < 0):
        raise ModelError(f"{what}: {keyword} must be an integer >= 0, got {n_modes!r}")
    if cutoff_hz is not None and (isinstance(cutoff_hz, bool) or not isinstance(cutoff_hz, (int, float, np.number))
                                  or not np.isfinite(cutoff_hz) or cutoff_hz <= 0):
        raise ModelError(f"{what}: cutoff_hz must be a positive finite frequency (Hz), got {cutoff_hz!r}")


def _mass_rank(M: sp.spmatrix) -> int:
    """Number of finite eigenvalues: DOFs with mass (a lumped mass leaves rotations massless).

    Counted as the DOFs with a non-zero row of M; exact for lumped and consistent masses."""
    return int(np.count_nonzero(abs(M).sum(axis=1).A.ravel() > 0.0))


def _select(lam: np.ndarray, n_modes: int | None, cutoff_hz: float | None, available: int, what: str,
            kind: str) -> np.ndarray:
    """Positions of the kept modes among ascending eigenvalues ``lam`` (rad^2/s^2)."""
    if n_modes is not None and n_modes > available:
        raise ModelError(f"{what}: {n_modes} {kind} modes requested, the component has only {available}")
    keep = np.arange(lam.size if n_modes is None else min(n_modes, lam.size))
    if cutoff_hz is not None:
        below = np.flatnonzero(lam[keep] <= (2.0 * np.pi * cutoff_hz) ** 2)
        if below.size == 0:
            lowest = np.sqrt(max(lam[0], 0.0)) / (2 * np.pi) if lam.size else float("nan")
            raise ModelError(f"{what}: no {kind} mode below the cut-off {cutoff_hz:g} Hz (the lowest is at "
                             f"{lowest:.6g} Hz)")
        keep = keep[below]
    return keep


def _determinate_support(component: Component) -> tuple[np.ndarray, int, Factorization]:
    """Statically determinate support DOFs (n_r,), the number of rigid-body modes n_r and the
    factorisation of K with those DOFs removed (K_c).

    The rigid-body motions span R (n_j, 3|6); a pivoted QR of R^T picks n_r = rank R DOFs on which
    R is best conditioned. K_c must then be regular, else the component has a mechanism."""
    what = f"component {component.name!r}"
    R = component.rigid_motions()
    R = R / np.maximum(np.linalg.norm(R, axis=0), np.finfo(float).tiny)
    _, r, pivots = sla.qr(R.T, mode="economic", pivoting=True)
    diagonal = np.abs(np.diag(r))
    n_r = int(np.count_nonzero(diagonal > 1e-10 * diagonal[0]))
    support = np.sort(pivots[:n_r])
    rest = np.setdiff1d(np.arange(component.n_dof), support)
    try:
        factor = Factorization(component.K[rest][:, rest].tocsc())
    except RuntimeError:                           # an exactly zero pivot
        factor = None
    if factor is None or factor.is_singular():
        raise ModelError(f"{what}: its stiffness is singular beyond the {n_r} rigid-body motions (a mechanism, "
                         "e.g. a truss node held by collinear bars only, or parts that do not touch)")
    return support, n_r, factor


def _inverse_iteration(factor: Factorization, M: sp.spmatrix, what: str, iterations: int = 8) -> float:
    """Estimate of the lowest eigenvalue of (K, M) (rad^2/s^2) by inverse iteration x <- K^-1 M x,
    given K's factorisation: 1 / the Rayleigh quotient of K^-1 M in the M inner product."""
    x = 1.0 + np.linspace(0.0, 1.0, M.shape[0])                    # not orthogonal to the lowest mode
    for _ in range(iterations):
        y = M @ x
        if not np.any(y):
            raise ModelError(f"{what} has no mass: its modes are not defined")
        x = factor.solve(y)
        x /= np.abs(x).max()
    y = M @ x
    return float((x @ y) / (y @ factor.solve(y)))


def _shift_estimate(K: sp.spmatrix, M: sp.spmatrix, support: np.ndarray, factor: Factorization,
                    what: str) -> float:
    """About the lowest elastic eigenvalue: that of the component on its determinate support."""
    rest = np.setdiff1d(np.arange(K.shape[0]), support)
    return _inverse_iteration(factor, M[rest][:, rest], what)


def _lowest_modes(K: sp.spmatrix, M: sp.spmatrix, sigma: float, wanted: int, cutoff_hz: float | None,
                  available: int, dense_limit: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Ascending eigenvalues (k,) and mass-normalised modes (n, k) of K x = lambda M x: at least
    ``wanted`` of them and all up to ``cutoff_hz`` (within the ``available`` finite ones)."""
    n = K.shape[0]
    if n <= dense_limit:
        return shifted_eigh(K.toarray(), M.toarray(), sigma)
    lu = spla.splu((K + sigma * M).tocsc())
    operator = spla.LinearOperator((n, n), matvec=lu.solve, dtype=float)
    k = min(max(wanted, 6), available - 1)
    limit = np.inf if cutoff_hz is None else (2.0 * np.pi * cutoff_hz) ** 2
    while True:
        lam, X = spla.eigsh(K, k=k, M=M, sigma=-sigma, OPinv=operator, which="LM", v0=start_vector(n))
        order = np.argsort(lam)
        lam, X = lam[order], X[:, order]
        if lam[-1] > limit or k >= available - 1 or (cutoff_hz is None and k >= wanted):
            X /= np.sqrt(np.einsum("ik,ik->k", X, M @ X))[None, :]
            return lam, X
        k = min(2 * k, available - 1)


def _residual_flexibility(component: Component, Phi_r: np.ndarray, Phi_e: np.ndarray, lam_e: np.ndarray,
                          support: np.ndarray, factor: Factorization) -> np.ndarray:
    """G_res (n_j, n_b) = (P^T K_c^+ P - Phi_e Lambda_e^-1 Phi_e^T) at the interface DOFs b."""
    b = component.interface_dofs
    n = component.n_dof
    M = component.M
    rest = np.setdiff1d(np.arange(n), support)
    P_b = np.zeros((n, b.size))                                      # P[:, b] = e_b - M Phi_r Phi_r[b]^T
    P_b[b, np.arange(b.size)] = 1.0
    P_b -= M @ (Phi_r @ Phi_r[b].T)
    Y = np.zeros((n, b.size))
    Y[rest] = factor.solve(P_b[rest])                                # K_c^+ P[:, b]
    G_b = Y - Phi_r @ (Phi_r.T @ (M @ Y))                            # P^T K_c^+ P[:, b]
    return G_b - Phi_e @ (Phi_e[b].T / lam_e[:, None])
