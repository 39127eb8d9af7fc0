"""Compiled kernels of the co-rotational triangular shell (:class:`flexmb.elements.shell3.Shell3`).

The equations (twelve rotation-invariant generalized strains, the angle map, the energy
``Phi = eh . S eh / 2``, the energy-conserving mid-point force) are written out in the docstring
of :mod:`flexmb.elements.shell3` and not repeated here; this module evaluates them one element
at a time inside compiled loops.

The membrane metric strains are ``(l . l - L . L) / 2`` of the edges ``l = x_j - x_i``; every
other strain is a sum of terms ``sign d . l`` of a director ``d = R_i D_i`` at a node i and an
edge vector from it (tables ``_T_*`` below). No strain is formed from absolute positions: an edge
is ``l = L + (u_j - u_i)``, the reference edge ``L = X_j - X_i`` plus the relative displacement,
and each strain is evaluated as its change from the reference state (zero there in exact
arithmetic), ``(u_j - u_i) . (2 L + u_j - u_i) / 2`` for a metric strain and
``sign ((R_i - I) D_i . L + d . (u_j - u_i))`` for a director term, with ``R_i - I`` summed from
its Rodrigues terms. So the round-off of a strain is eps times the deformation it measures: zero at
rest and under a rigid translation, and independent of where the model lies (``x_j - x_i`` of
``x = X + u`` carries an error eps |X| whatever the deformation, which for a shell far from the
origin or under small loads exceeded the strains themselves). Rows of ``G = de/dq`` on the element DOFs
``[x_1, theta_1, x_2, theta_2, x_3, theta_3]`` (6 per node) are therefore sums of

    metric:    +l at x_j, -l at x_i
    director:  sign (+d at x_j, -d at x_i, P^T l at theta_i)

where ``P = dd/dtheta_i`` is ``-hat(d)`` for spins (so P^T l = d x l) and, for the derivative of
the end-of-step director with respect to the Cayley parameters w of a step,
``-(I - hat(w)/2)^-1 hat(d_m)`` (d_m the step average of the director).

The sum ``sum_k s_k dG_k/dq`` (geometric stiffness) is assembled from 3x3 blocks
(:func:`_add_row_stiffness`); ``kappa`` is the derivative of the vectors the rows are built
from with respect to the end-of-step vectors (1 in statics, 1/2 for step averages).

Speed of the mid-point force alone (modified Newton's residual-only iterations, most of a large
model's step): what it needs of the step's start state (edges, directors, strains, energy) is
the same in every iteration, so :func:`strain_state` packs it once (the element group keeps it
from recording the step before) and the kernel reads it; the force alone evaluates the angle
map's first derivatives only (:func:`_energy_gradient`). Both give the same bits as computing
everything in every call, as the tangent call still does.

``error_model="numpy"``: a rotation increment of a half turn gives infinite Cayley parameters
instead of raising inside the compiled loop; the Newton driver treats that as a failed iterate.
"""
from __future__ import annotations

import numba
import numpy as np

from flexmb.compiled.beam3d import _minus_times_hat
from flexmb.compiled.rotations import cayley_from_matrix_into, cayley_resolvent_into, exp_map_minus_identity_into

N_STRAINS = 12
N_DOF = 18
N_SLOTS = 3
# membrane metric strains k = 0, 1, 2 on the edges (_EDGE_I[k], _EDGE_J[k])
_EDGE_I = np.array([0, 1, 2])
_EDGE_J = np.array([1, 2, 0])
# director strains as sums of terms sign * d . l: term t adds to strain _T_STRAIN[t] the product of
# the director of slot _T_SLOT[t] at node i = _T_NODE[t] with the edge vector x_j - x_i, j = _T_END[t].
# Slots: 0 normal n_i = R_i E3; 1 R_i L_ij and 2 R_i L_ik (reference edges to the next and the
# previous node, turned with the node). Bending b (k = 3..8): n_i . l_ij for both neighbours;
# drilling c_i (k = 9..11): (R_i L_ij) . l_ik - (R_i L_ik) . l_ij.
_T_STRAIN = np.array([3, 4, 5, 6, 7, 8, 9, 9, 10, 10, 11, 11])
_T_NODE = np.array([0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2])
_T_END = np.array([1, 2, 2, 0, 0, 1, 2, 1, 0, 2, 1, 0])
_T_SLOT = np.array([0, 0, 0, 0, 0, 0, 1, 2, 1, 2, 1, 2])
_T_SIGN = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
N_TERMS = 12
# the angle of bending strain k (3..8) is taken against the current length of metric edge _GEDGE[k]
_GEDGE = np.array([-1, -1, -1, 0, 2, 1, 0, 2, 1, -1, -1, -1])
_SINE_LIMIT = 1.0 - 1e-12          # |sine| of an angle strain is clipped below 1 (as Beam3D)
_GAUSS_X, _GAUSS_WX = np.polynomial.legendre.leggauss(4)
_GAUSS_T, _GAUSS_W = 0.5 * (_GAUSS_X + 1.0), 0.5 * _GAUSS_WX       # four-point Gauss rule on [0, 1]
_ROUND_OFF = 64.0 * np.finfo(float).eps     # relative energy miss the mid-point stresses may leave

jit = numba.njit(cache=True, error_model="numpy")


# ------------------------------------------------------------------------ element kinematics
@jit
def _edges(Xe: np.ndarray, ue: np.ndarray, l: np.ndarray) -> None:
    """Edge vectors l (3, 3, 3) of one element, ``l[i, j] = (X_j - X_i) + (u_j - u_i)`` from its
    reference nodes Xe (3, 3) and DOFs ue (18,) (exactly antisymmetric; l[i, i] = 0)."""
    for i in range(3):
        for j in range(3):
            for c in range(3):
                l[i, j, c] = (Xe[j, c] - Xe[i, c]) + (ue[6 * j + c] - ue[6 * i + c])


@jit
def _configuration(X: np.ndarray, u: np.ndarray, D0: np.ndarray, e: int, l: np.ndarray, R: np.ndarray,
                   dirs: np.ndarray, turn: np.ndarray) -> None:
    """Edge vectors l (3, 3, 3) (:func:`_edges`), nodal rotations R (3, 3, 3), directors
    dirs (3, 3, 3) = R_i D0[e, i, s] and their change turn (3, 3, 3) = (R_i - I) D0[e, i, s] of
    element e. ``R_i - I = a hat(psi) + b hat(psi)^2`` is summed from its Rodrigues terms, so the
    change of a director is exact to eps times the rotation, not eps."""
    _edges(X[e], u[e], l)
    for a in range(3):
        psi = u[e, 6 * a + 3:6 * a + 6]
        W = R[a]
        exp_map_minus_identity_into(psi, W)                 # W = R_i - I
        for s in range(N_SLOTS):
            for r in range(3):
                t = W[r, 0] * D0[e, a, s, 0] + W[r, 1] * D0[e, a, s, 1] + W[r, 2] * D0[e, a, s, 2]
                turn[a, s, r] = t
                dirs[a, s, r] = D0[e, a, s, r] + t
        for i in range(3):                                  # R_i = I + W
            W[i, i] += 1.0


@jit
def _strains(X: np.ndarray, u: np.ndarray, e: int, dirs: np.ndarray, turn: np.ndarray, eps: np.ndarray) -> None:
    """Generalized strains e (12,) as changes from the reference state, with L = X_j - X_i and
    du = u_j - u_i: the metric ones ``du . (2 L + du) / 2`` (without the cancellation of
    l . l - L . L), the director terms ``sign (turn . L + d . du)`` (= sign (d . l - D . L), without
    the cancellation of d . l against its reference value D . L, zero in exact arithmetic)."""
    for k in range(3):
        i, j = _EDGE_I[k], _EDGE_J[k]
        acc = 0.0
        for c in range(3):
            du = u[e, 6 * j + c] - u[e, 6 * i + c]
            acc += du * (2.0 * (X[e, j, c] - X[e, i, c]) + du)
        eps[k] = 0.5 * acc
    for k in range(3, N_STRAINS):
        eps[k] = 0.0
    for t in range(N_TERMS):
        i, j, s = _T_NODE[t], _T_END[t], _T_SLOT[t]
        acc = 0.0
        for c in range(3):
            acc += turn[i, s, c] * (X[e, j, c] - X[e, i, c]) + dirs[i, s, c] * (u[e, 6 * j + c] - u[e, 6 * i + c])
        eps[_T_STRAIN[t]] += _T_SIGN[t] * acc


@jit
def _energy(eps: np.ndarray, angle_length: np.ndarray, S: np.ndarray, order: int, eh: np.ndarray,
            ahd: np.ndarray, ahc: np.ndarray, d2: np.ndarray, sigma: np.ndarray) -> float:
    """Phi = eh . S eh / 2 of the strains e (12,), with the angle strains eh, sigma = S eh and, as
    far as ``order`` asks (0: none; 1: first; 2: first and second), what the derivatives need:
    ``Ah = deh/de = diag(ahd) + sum_k ahc_k u_k u_m(k)^T`` (bending angle k also depends on the
    metric strain g_m of its edge, m = _GEDGE[k]) and the second derivatives
    ``d2[k] = (d2eh_k/de_k^2, d2eh_k/de_k dg_m, d2eh_k/dg_m^2)``; the arrays not asked for are left
    as they were. Every value is computed by the same operations whatever the order.

    Bending: eh = L asin(b / r), r = |l| = sqrt(L^2 + 2 g_m); drilling: eh = 4A asin(c / 4A)."""
    for k in range(N_STRAINS):
        if order > 0:
            ahc[k] = 0.0
        if order > 1:
            d2[k, 0] = d2[k, 1] = d2[k, 2] = 0.0
        if k < 3:
            eh[k] = eps[k]
            if order > 0:
                ahd[k] = 1.0
            continue
        L, m, r2, r, xs = _angle_argument(eps, angle_length, k)
        eh[k] = L * np.arcsin(xs)
        if order == 0:
            continue
        a1 = 1.0 / np.sqrt(1.0 - xs * xs)                                  # asin'
        ahd[k] = L * a1 / r
        b = eps[k]
        if m >= 0:
            ahc[k] = -L * a1 * b / (r2 * r)
        if order == 1:
            continue
        a2 = xs * a1 ** 3                                                  # asin''
        d2[k, 0] = L * a2 / r2
        if m >= 0:
            d2[k, 1] = -L * (a2 * b / (r2 * r2) + a1 / (r2 * r))
            d2[k, 2] = L * (a2 * b * b / (r2 * r2 * r2) + 3.0 * a1 * b / (r2 * r2 * r))
    phi = 0.0
    for i in range(N_STRAINS):
        acc = 0.0
        for j in range(N_STRAINS):
            acc += S[i, j] * eh[j]
        sigma[i] = acc
        phi += eh[i] * acc
    return 0.5 * phi


@jit
def _angle_argument(eps: np.ndarray, angle_length: np.ndarray, k: int) -> tuple[float, int, float, float, float]:
    """For the angle strain k (>= 3) of the strains e (12,): its length L, the edge m whose strain
    stretches it (-1: none), r^2 = L^2 + 2 e_m, r and the sine argument e_k / r (limited to
    +-_SINE_LIMIT) of its angle map L asin(e_k / r) (:func:`_energy`, :func:`_energy_gradient`)."""
    L = angle_length[k]
    m = _GEDGE[k]
    r2 = L * L + 2.0 * eps[m] if m >= 0 else L * L
    r = np.sqrt(r2)
    return L, m, r2, r, min(max(eps[k] / r, -_SINE_LIMIT), _SINE_LIMIT)


@jit
def _energy_gradient(eps: np.ndarray, angle_length: np.ndarray, S: np.ndarray, eh: np.ndarray, ahd: np.ndarray,
                     ahc: np.ndarray, sigma: np.ndarray, grad: np.ndarray) -> None:
    """grad (12,) = dPhi/de = Ah^T S eh at the strains e (12,): :func:`_energy` of order 1 and
    :func:`_gradient` in one pass by the same operations (the same bits), without the branches
    on the order and without Phi (eh, ahd, ahc, sigma are filled as scratch)."""
    for k in range(3):
        eh[k] = eps[k]
    for k in range(3, N_STRAINS):
        L, m, r2, r, xs = _angle_argument(eps, angle_length, k)
        eh[k] = L * np.arcsin(xs)
        a1 = 1.0 / np.sqrt(1.0 - xs * xs)                                  # asin'
        ahd[k] = L * a1 / r
        if m >= 0:
            ahc[k] = -L * a1 * eps[k] / (r2 * r)
    for i in range(N_STRAINS):
        acc = 0.0
        for j in range(N_STRAINS):
            acc += S[i, j] * eh[j]
        sigma[i] = acc
    for k in range(3):
        grad[k] = sigma[k]                                                 # ahd = 1 exactly
    for k in range(3, N_STRAINS):
        grad[k] = ahd[k] * sigma[k]
    for k in range(3, 9):
        grad[_GEDGE[k]] += ahc[k] * sigma[k]


@jit
def _gradient(ahd: np.ndarray, ahc: np.ndarray, sigma: np.ndarray, grad: np.ndarray) -> None:
    """grad (12,) = Ah^T sigma = dPhi/de for sigma = S eh."""
    for k in range(N_STRAINS):
        grad[k] = ahd[k] * sigma[k]
    for k in range(3, 9):
        grad[_GEDGE[k]] += ahc[k] * sigma[k]


@jit
def _hessian(S: np.ndarray, ahd: np.ndarray, ahc: np.ndarray, d2: np.ndarray, sigma: np.ndarray,
             material: bool, H: np.ndarray, T: np.ndarray) -> None:
    """H (12, 12) = Ah^T S Ah (with ``material``) + sum_k sigma_k d2eh_k/de2; T (12, 12) scratch."""
    if material:
        for i in range(N_STRAINS):                                         # T = S Ah
            for j in range(N_STRAINS):
                T[i, j] = S[i, j] * ahd[j]
            for k in range(3, 9):
                T[i, _GEDGE[k]] += S[i, k] * ahc[k]
        for i in range(N_STRAINS):                                         # H = Ah^T T
            for j in range(N_STRAINS):
                H[i, j] = ahd[i] * T[i, j]
        for k in range(3, 9):
            m = _GEDGE[k]
            for j in range(N_STRAINS):
                H[m, j] += ahc[k] * T[k, j]
    else:
        H[:, :] = 0.0
    for k in range(3, N_STRAINS):
        H[k, k] += sigma[k] * d2[k, 0]
        m = _GEDGE[k]
        if m >= 0:
            H[k, m] += sigma[k] * d2[k, 1]
            H[m, k] += sigma[k] * d2[k, 1]
            H[m, m] += sigma[k] * d2[k, 2]


# ------------------------------------------------------------------------------ rows
@jit
def _spin_jacobians(dirs: np.ndarray, P: np.ndarray) -> None:
    """P (3, 3, 3, 3) = -hat(d) for every director: d d / d(spin)."""
    for a in range(3):
        for s in range(N_SLOTS):
            _minus_hat(dirs[a, s], P[a, s])


@jit
def _minus_hat(d: np.ndarray, out: np.ndarray) -> None:
    """out (3, 3) = -hat(d)."""
    out[0, 0] = out[1, 1] = out[2, 2] = 0.0
    out[0, 1], out[0, 2] = d[2], -d[1]
    out[1, 0], out[1, 2] = -d[2], d[0]
    out[2, 0], out[2, 1] = d[1], -d[0]


@jit
def _edge_rows(l: np.ndarray, G: np.ndarray) -> None:
    """G (12, 18) zeroed but the membrane rows of the edge vectors l (3, 3, 3): the part of
    :func:`_rows` and :func:`_spin_rows` that does not involve the directors."""
    G[:, :] = 0.0
    for k in range(3):
        i, j = _EDGE_I[k], _EDGE_J[k]
        for c in range(3):
            lc = l[i, j, c]
            G[k, 6 * j + c] = lc
            G[k, 6 * i + c] = -lc


@jit
def _rows(l: np.ndarray, dirs: np.ndarray, P: np.ndarray, G: np.ndarray) -> None:
    """Rows G (12, 18) built from the edge vectors l (3, 3, 3), directors dirs (3, 3, 3) and the
    director Jacobians P (3, 3, 3, 3) (rotation entry P^T l)."""
    _edge_rows(l, G)
    for t in range(N_TERMS):
        k, i, j, s, sign = _T_STRAIN[t], _T_NODE[t], _T_END[t], _T_SLOT[t], _T_SIGN[t]
        for c in range(3):
            v = sign * dirs[i, s, c]
            G[k, 6 * j + c] += v
            G[k, 6 * i + c] -= v
            acc = 0.0
            for r in range(3):
                acc += P[i, s, r, c] * l[i, j, r]
            G[k, 6 * i + 3 + c] += sign * acc


@jit
def _spin_rows(l: np.ndarray, dirs: np.ndarray, G: np.ndarray) -> None:
    """:func:`_rows` for directors that move with spins, P = -hat(d): the rotation entry P^T l is
    d x l, formed from the same two products per component as the P^T l sum, so the same bits
    (up to the sign of an exact zero)."""
    _edge_rows(l, G)
    for t in range(N_TERMS):
        k, i, j, s, sign = _T_STRAIN[t], _T_NODE[t], _T_END[t], _T_SLOT[t], _T_SIGN[t]
        d0, d1, d2 = dirs[i, s, 0], dirs[i, s, 1], dirs[i, s, 2]
        l0_, l1_, l2_ = l[i, j, 0], l[i, j, 1], l[i, j, 2]
        for c in range(3):
            v = sign * dirs[i, s, c]
            G[k, 6 * j + c] += v
            G[k, 6 * i + c] -= v
        ri = 6 * i + 3
        G[k, ri] += sign * (-d2 * l1_ + d1 * l2_)
        G[k, ri + 1] += sign * (d2 * l0_ + -d0 * l2_)
        G[k, ri + 2] += sign * (-d1 * l0_ + d0 * l1_)


@jit
def _add_row_stiffness(weights: np.ndarray, kappa: float, l: np.ndarray, dirs: np.ndarray, P: np.ndarray,
                       K: np.ndarray) -> None:
    """K (18, 18) += sum_k weights_k dG_k/dd for rows built from the edges l, directors dirs (the
    current or the step-averaged vectors) whose end-of-step directors move with P (3, 3, 3, 3)."""
    for k in range(3):                             # row +-l: d l / d(x_j - x_i) = I
        i, j = _EDGE_I[k], _EDGE_J[k]
        w = kappa * weights[k]
        ti, tj = 6 * i, 6 * j
        for c in range(3):
            K[tj + c, tj + c] += w
            K[tj + c, ti + c] -= w
            K[ti + c, tj + c] -= w
            K[ti + c, ti + c] += w
    for t in range(N_TERMS):
        i, j, s = _T_NODE[t], _T_END[t], _T_SLOT[t]
        w = kappa * _T_SIGN[t] * weights[_T_STRAIN[t]]
        ti, tj = 6 * i, 6 * j
        ri = ti + 3
        d = dirs[i, s]
        for r in range(3):
            for c in range(3):
                p = w * P[i, s, r, c]
                K[tj + r, ri + c] += p                  # +d at x_j moves with the director
                K[ti + r, ri + c] -= p
        # theta_i entry d x l: d(d x l) = -hat(l) dd + hat(d) dl, dl = dx_j - dx_i
        l0_, l1_, l2_ = l[i, j, 0], l[i, j, 1], l[i, j, 2]
        for c in range(3):
            p0, p1, p2 = P[i, s, 0, c], P[i, s, 1, c], P[i, s, 2, c]       # -hat(l) P[:, c] = P[:, c] x l
            K[ri, ri + c] += w * (p1 * l2_ - p2 * l1_)
            K[ri + 1, ri + c] += w * (p2 * l0_ - p0 * l2_)
            K[ri + 2, ri + c] += w * (p0 * l1_ - p1 * l0_)
        for sign, tn in ((1.0, tj), (-1.0, ti)):                           # hat(d) on +-dx
            ws = sign * w
            K[ri, tn + 1] -= ws * d[2]
            K[ri, tn + 2] += ws * d[1]
            K[ri + 1, tn] += ws * d[2]
            K[ri + 1, tn + 2] -= ws * d[0]
            K[ri + 2, tn] -= ws * d[1]
            K[ri + 2, tn + 1] += ws * d[0]


@jit
def _add_sandwich(A: np.ndarray, H: np.ndarray, B: np.ndarray, K: np.ndarray, T: np.ndarray) -> None:
    """K (18, 18) += A^T H B for A, B (12, 18), H (12, 12); T (12, 18) scratch."""
    for i in range(N_STRAINS):
        for c in range(N_DOF):
            acc = 0.0
            for k in range(N_STRAINS):
                acc += H[i, k] * B[k, c]
            T[i, c] = acc
    for r in range(N_DOF):
        for i in range(N_STRAINS):
            a = A[i, r]
            if a != 0.0:
                for c in range(N_DOF):
                    K[r, c] += a * T[i, c]


@jit
def _force(G: np.ndarray, weights: np.ndarray, q: np.ndarray) -> None:
    """q (18,) = G^T weights."""
    for c in range(N_DOF):
        acc = 0.0
        for k in range(N_STRAINS):
            acc += G[k, c] * weights[k]
        q[c] = acc


# ---------------------------------------------------------------------------------- kernels
@jit
def force_and_tangent(X: np.ndarray, u: np.ndarray, D0: np.ndarray, angle_length: np.ndarray,
                      S: np.ndarray, tangent: bool, stresses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Internal force q (n_el, 18) and tangent dq/d(spins) (n_el, 18, 18; (0, 18, 18) without
    ``tangent``). With ``stresses`` (n_el, 12) instead of an empty (0, 12) array, the geometric
    stiffness: the part of the tangent linear in those generalized stresses sigma = S eh (q is
    then G^T Ah of them).

    X (n_el, 3, 3) reference nodes, u (n_el, 18) element DOFs, D0 (n_el, 3, 3, 3) reference
    directors (E3, L_ij, L_ik per node), angle_length (n_el, 12) the |L_ij| of the angle map,
    S (n_el, 12, 12) the strain stiffness.
    """
    n = X.shape[0]
    geometric = stresses.shape[0] > 0
    q = np.empty((n, N_DOF))
    K = np.empty((n if tangent else 0, N_DOF, N_DOF))
    l, R, P = np.empty((3, 3, 3)), np.empty((3, 3, 3)), np.empty((3, N_SLOTS, 3, 3))
    dirs, turn = np.empty((3, N_SLOTS, 3)), np.empty((3, N_SLOTS, 3))
    vec = np.empty((6, N_STRAINS))
    eps, eh, ahd, ahc, sigma, grad = vec[0], vec[1], vec[2], vec[3], vec[4], vec[5]
    d2 = np.empty((N_STRAINS, 3))
    G, T = np.empty((N_STRAINS, N_DOF)), np.empty((N_STRAINS, N_DOF))
    H, T12 = np.empty((N_STRAINS, N_STRAINS)), np.empty((N_STRAINS, N_STRAINS))
    for e in range(n):
        _configuration(X, u, D0, e, l, R, dirs, turn)
        _strains(X, u, e, dirs, turn, eps)
        _energy(eps, angle_length[e], S[e], 2 if tangent else 1, eh, ahd, ahc, d2, sigma)
        if geometric:
            sigma[:] = stresses[e]
        _gradient(ahd, ahc, sigma, grad)
        _spin_jacobians(dirs, P)
        _rows(l, dirs, P, G)
        _force(G, grad, q[e])
        if not tangent:
            continue
        _hessian(S[e], ahd, ahc, d2, sigma, not geometric, H, T12)
        Ke = K[e]
        Ke[:, :] = 0.0
        _add_sandwich(G, H, G, Ke, T)
        _add_row_stiffness(grad, 1.0, l, dirs, P, Ke)
    return q, K


N_START = 67        # per element: edges l (27), directors (27), strains e (12), energy Phi (1) of a state


@jit
def _pack_state(l: np.ndarray, dirs: np.ndarray, eps: np.ndarray, phi: float, out: np.ndarray) -> None:
    """out (N_START,) = [l (3, 3, 3), dirs (3, 3, 3), eps (12,), phi], flattened."""
    for a in range(3):
        for b in range(3):
            for c in range(3):
                out[9 * a + 3 * b + c] = l[a, b, c]
                out[27 + 9 * a + 3 * b + c] = dirs[a, b, c]
    for k in range(N_STRAINS):
        out[54 + k] = eps[k]
    out[66] = phi


@jit
def _unpack_state(data: np.ndarray, l: np.ndarray, dirs: np.ndarray, eps: np.ndarray) -> float:
    """l, dirs, eps and the returned phi from one packed state (:func:`_pack_state`)."""
    for a in range(3):
        for b in range(3):
            for c in range(3):
                l[a, b, c] = data[9 * a + 3 * b + c]
                dirs[a, b, c] = data[27 + 9 * a + 3 * b + c]
    for k in range(N_STRAINS):
        eps[k] = data[54 + k]
    return data[66]


@jit
def strain_state(X: np.ndarray, u: np.ndarray, D0: np.ndarray, angle_length: np.ndarray, S: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Strain energy Phi (n_el,), angle strains eh (n_el, 12), generalized stresses
    sigma = S eh (n_el, 12), and the state packed as the ``start`` of a mid-point step from u
    (n_el, N_START; :func:`_pack_state`), each by the same operations as inside
    :func:`mid_point_force_and_tangent`."""
    n = X.shape[0]
    phi, eh, sigma = np.empty(n), np.empty((n, N_STRAINS)), np.empty((n, N_STRAINS))
    start = np.empty((n, N_START))
    l, R = np.empty((3, 3, 3)), np.empty((3, 3, 3))
    dirs, turn = np.empty((3, N_SLOTS, 3)), np.empty((3, N_SLOTS, 3))
    eps, ahd, ahc, d2 = np.empty(N_STRAINS), np.empty(N_STRAINS), np.empty(N_STRAINS), np.empty((N_STRAINS, 3))
    for e in range(n):
        _configuration(X, u, D0, e, l, R, dirs, turn)
        _strains(X, u, e, dirs, turn, eps)
        phi[e] = _energy(eps, angle_length[e], S[e], 0, eh[e], ahd, ahc, d2, sigma[e])
        _pack_state(l, dirs, eps, phi[e], start[e])
    return phi, eh, sigma, start


@jit
def _mid_point_rows(l0: np.ndarray, l1: np.ndarray, dirs0: np.ndarray, dirs1: np.ndarray, lm: np.ndarray,
                    dirsm: np.ndarray, Gm: np.ndarray) -> None:
    """Strain rows Gm (N_STRAINS, 18) about the step-averaged edge vectors lm and directors dirsm
    (filled here), so that Gm d = e_{n+1} - e_n exactly (the strains are bilinear in them)."""
    for a in range(3):
        for b in range(3):
            for c in range(3):
                lm[a, b, c] = 0.5 * (l0[a, b, c] + l1[a, b, c])
        for s in range(N_SLOTS):
            for c in range(3):
                dirsm[a, s, c] = 0.5 * (dirs0[a, s, c] + dirs1[a, s, c])
    _spin_rows(lm, dirsm, Gm)


@jit
def _end_rows(R0: np.ndarray, R1: np.ndarray, l1: np.ndarray, dirs1: np.ndarray, dirsm: np.ndarray,
              Rrel: np.ndarray, w3: np.ndarray, Gres: np.ndarray, Pend: np.ndarray, E1: np.ndarray) -> None:
    """Rows E1 = d e_{n+1} / d d of the end-of-step strains: the end directors move with
    P = -(I - hat(w)/2)^-1 hat(d_m), w the Cayley parameters of the step's rotation R1 R0^T."""
    for a in range(3):
        for r in range(3):
            for c in range(3):
                Rrel[r, c] = R1[a, r, 0] * R0[a, c, 0] + R1[a, r, 1] * R0[a, c, 1] + R1[a, r, 2] * R0[a, c, 2]
        cayley_from_matrix_into(Rrel, w3)
        cayley_resolvent_into(w3, Gres)
        for s in range(N_SLOTS):
            _minus_times_hat(Gres, dirsm[a, s], Pend[a, s])
    _rows(l1, dirs1, Pend, E1)


@jit
def mid_point_force_and_tangent(X: np.ndarray, u0: np.ndarray, u1: np.ndarray, D0: np.ndarray,
                                angle_length: np.ndarray, S: np.ndarray, tangent: bool, start: np.ndarray
                                ) -> tuple[np.ndarray, np.ndarray]:
    """Energy-conserving mid-point force (n_el, 18) and its derivative w.r.t. the step increment
    ``d = [x1_i - x0_i, w_i]`` (w Cayley parameters of R1_i R0_i^T) (n_el, 18, 18; (0, 18, 18)
    without ``tangent``).

    ``start`` (n_el, N_START): the start state u0 packed by :func:`strain_state`, which every
    iteration of a step shares; the force alone then reads it instead of recomputing it (the same
    values, so the same force to the last bit). An empty (0, N_START) array: computed here, as the
    tangent always does (it needs the start rotations)."""
    n = X.shape[0]
    q = np.empty((n, N_DOF))
    K = np.empty((n if tangent else 0, N_DOF, N_DOF))
    l0, l1, lm = np.empty((3, 3, 3)), np.empty((3, 3, 3)), np.empty((3, 3, 3))
    R0, R1 = np.empty((3, 3, 3)), np.empty((3, 3, 3))
    dirs0, dirs1, dirsm = np.empty((3, N_SLOTS, 3)), np.empty((3, N_SLOTS, 3)), np.empty((3, N_SLOTS, 3))
    turn0, turn1 = np.empty((3, N_SLOTS, 3)), np.empty((3, N_SLOTS, 3))
    Pend = np.empty((3, N_SLOTS, 3, 3))
    Gres, Rrel, w3 = np.empty((3, 3)), np.empty((3, 3)), np.empty(3)
    vec = np.empty((12, N_STRAINS))
    eps0, eps1, deps, eps_t, eh, ahd = vec[0], vec[1], vec[2], vec[3], vec[4], vec[5]
    ahc, sigma, grad, st_star, grad1, dcf = vec[6], vec[7], vec[8], vec[9], vec[10], vec[11]
    d2, T12 = np.empty((N_STRAINS, 3)), np.empty((N_STRAINS, N_STRAINS))
    Gm, E1, T = np.empty((N_STRAINS, N_DOF)), np.empty((N_STRAINS, N_DOF)), np.empty((N_STRAINS, N_DOF))
    H, dst_star = np.empty((N_STRAINS, N_STRAINS)), np.empty((N_STRAINS, N_STRAINS))
    started = start.shape[0] > 0 and not tangent     # the tangent needs the start rotations R0
    phi0 = 0.0
    for e in range(n):
        Se, Le = S[e], angle_length[e]
        if started:
            phi0 = _unpack_state(start[e], l0, dirs0, eps0)
        else:
            _configuration(X, u0, D0, e, l0, R0, dirs0, turn0)
            _strains(X, u0, e, dirs0, turn0, eps0)
        _configuration(X, u1, D0, e, l1, R1, dirs1, turn1)
        _strains(X, u1, e, dirs1, turn1, eps1)
        for k in range(N_STRAINS):
            deps[k] = eps1[k] - eps0[k]
        # s* = int_0^1 s~(e_n + t de) dt and its derivative with respect to e_{n+1}
        st_star[:] = 0.0
        if tangent:
            dst_star[:, :] = 0.0
        for g in range(4):
            t, wt = _GAUSS_T[g], _GAUSS_W[g]
            for k in range(N_STRAINS):
                eps_t[k] = eps0[k] + t * deps[k]
            if tangent:
                _energy(eps_t, Le, Se, 2, eh, ahd, ahc, d2, sigma)
                _gradient(ahd, ahc, sigma, grad)
            else:
                _energy_gradient(eps_t, Le, Se, eh, ahd, ahc, sigma, grad)
            for k in range(N_STRAINS):
                st_star[k] += wt * grad[k]
            if tangent:
                _hessian(Se, ahd, ahc, d2, sigma, np.bool_(True), H, T12)       # (a bool, not a literal: one compile)
                for i in range(N_STRAINS):
                    for j in range(N_STRAINS):
                        dst_star[i, j] += wt * t * H[i, j]
        # discrete-gradient correction along de where the quadrature misses the energy increment
        if not started:
            phi0 = _energy(eps0, Le, Se, 0, eh, ahd, ahc, d2, sigma)
        phi1 = _energy(eps1, Le, Se, 1 if tangent else 0, eh, ahd, ahc, d2, sigma)   # its gradient: tangent only
        miss = phi1 - phi0
        dd = 0.0
        for k in range(N_STRAINS):
            miss -= st_star[k] * deps[k]
            dd += deps[k] * deps[k]
        if abs(miss) > _ROUND_OFF * (abs(phi0) + abs(phi1)):
            cf = miss / dd
            if tangent:
                _gradient(ahd, ahc, sigma, grad1)                         # s~(e_{n+1})
                for i in range(N_STRAINS):                                # d miss / d e_{n+1}
                    acc = grad1[i] - st_star[i]
                    for j in range(N_STRAINS):
                        acc -= dst_star[j, i] * deps[j]
                    dcf[i] = acc / dd - (2.0 * cf / dd) * deps[i]         # d cf / d e_{n+1}
                for i in range(N_STRAINS):
                    for j in range(N_STRAINS):
                        dst_star[i, j] += deps[i] * dcf[j]
                    dst_star[i, i] += cf
            for k in range(N_STRAINS):
                st_star[k] += cf * deps[k]
        # rows about the step-averaged vectors: G_m d = e_{n+1} - e_n exactly
        _mid_point_rows(l0, l1, dirs0, dirs1, lm, dirsm, Gm)
        _force(Gm, st_star, q[e])
        if not tangent:
            continue
        _end_rows(R0, R1, l1, dirs1, dirsm, Rrel, w3, Gres, Pend, E1)  # d e_{n+1} / d d
        Ke = K[e]
        Ke[:, :] = 0.0
        _add_sandwich(Gm, dst_star, E1, Ke, T)
        _add_row_stiffness(st_star, 0.5, lm, dirsm, Pend, Ke)
    return q, K



# ------------------------------------------------------------------------- reference state
@jit
def strain_stiffness(X: np.ndarray, D0: np.ndarray, K_local: np.ndarray, frames: np.ndarray,
                     size: np.ndarray, tolerance: float) -> tuple[np.ndarray, np.ndarray, int]:
    """A right inverse Z of B (n_el, 18, 12) and the strain stiffness S = Z^T K_glob Z (n_el, 12, 12),
    K_glob = T^T K_local T; last the first element whose B has rank < 12, or -1.

    X (n_el, 3, 3) reference nodes, D0 (n_el, 3, 3, 3) reference directors, K_local (n_el, 18, 18)
    the linear triangle in local axes, frames (n_el, 3, 3) columns E1 E2 E3 (T = block diagonal of
    E^T), size (n_el,) a length of each element. B = de/dq at the reference comes from
    :func:`_rows` (the same rows as the kernels). Z is the pseudo-inverse of the dimensionless
    ``Bs = Dr B Dc`` (rows g / size^2, b / size, c / size^2, translation columns times size),
    ``Z = Dc Bs^T (Bs Bs^T)^-1 Dr``, so that B Z = I; the rank test is a Cholesky pivot of
    ``Bs Bs^T`` below ``tolerance`` times its largest diagonal entry.
    """
    n = X.shape[0]
    Z = np.empty((n, N_DOF, N_STRAINS))
    S = np.empty((n, N_STRAINS, N_STRAINS))
    P, L, at_rest = np.empty((3, N_SLOTS, 3, 3)), np.empty((3, 3, 3)), np.zeros(N_DOF)
    B, Bs, KZ = np.empty((N_STRAINS, N_DOF)), np.empty((N_STRAINS, N_DOF)), np.empty((N_DOF, N_STRAINS))
    Kg, gram, C = np.empty((N_DOF, N_DOF)), np.empty((N_STRAINS, N_STRAINS)), np.empty((N_STRAINS, N_STRAINS))
    Dr, Dc, blk = np.empty(N_STRAINS), np.empty(N_DOF), np.empty((3, 3))
    bad = -1
    for e in range(n):
        _spin_jacobians(D0[e], P)
        _edges(X[e], at_rest, L)
        _rows(L, D0[e], P, B)
        E = frames[e]
        for a in range(6):                                  # 3x3 blocks of K_glob: E K_ab E^T
            for b in range(6):
                for i in range(3):
                    for j in range(3):
                        acc = 0.0
                        for k in range(3):
                            acc += K_local[e, 3 * a + i, 3 * b + k] * E[j, k]
                        blk[i, j] = acc
                for i in range(3):
                    for j in range(3):
                        Kg[3 * a + i, 3 * b + j] = E[i, 0] * blk[0, j] + E[i, 1] * blk[1, j] + E[i, 2] * blk[2, j]
        h = size[e]
        for k in range(N_STRAINS):
            Dr[k] = 1.0 / (h * h) if (k < 3 or k >= 9) else 1.0 / h
        for c in range(N_DOF):
            Dc[c] = h if (c % 6) < 3 else 1.0
        for k in range(N_STRAINS):
            for c in range(N_DOF):
                Bs[k, c] = Dr[k] * B[k, c] * Dc[c]
        largest = 0.0
        for i in range(N_STRAINS):
            for j in range(i + 1):
                acc = 0.0
                for c in range(N_DOF):
                    acc += Bs[i, c] * Bs[j, c]
                gram[i, j] = gram[j, i] = acc
            largest = max(largest, gram[i, i])
        ok = True                                           # Cholesky gram = C C^T, C lower
        for j in range(N_STRAINS):
            d = gram[j, j]
            for k in range(j):
                d -= C[j, k] * C[j, k]
            if not d > tolerance * largest:
                ok = False
                break
            C[j, j] = np.sqrt(d)
            for i in range(j + 1, N_STRAINS):
                acc = gram[i, j]
                for k in range(j):
                    acc -= C[i, k] * C[j, k]
                C[i, j] = acc / C[j, j]
        if not ok:
            if bad < 0:
                bad = e
            Z[e] = 0.0
            S[e] = 0.0
            continue
        # Zs^T = gram^-1 Bs column by column (forward and back substitution), then Z = Dc Zs Dr
        for c in range(N_DOF):
            for i in range(N_STRAINS):                      # C y = Bs[:, c], y kept in KZ[c]
                acc = Bs[i, c]
                for k in range(i):
                    acc -= C[i, k] * KZ[c, k]
                KZ[c, i] = acc / C[i, i]
            for i in range(N_STRAINS - 1, -1, -1):          # C^T z = y
                acc = KZ[c, i]
                for k in range(i + 1, N_STRAINS):
                    acc -= C[k, i] * Z[e, c, k]
                Z[e, c, i] = acc / C[i, i]
        for c in range(N_DOF):
            for i in range(N_STRAINS):
                Z[e, c, i] *= Dc[c] * Dr[i]
        for r in range(N_DOF):                              # KZ = K_glob Z, S = Z^T KZ
            for i in range(N_STRAINS):
                acc = 0.0
                for c in range(N_DOF):
                    acc += Kg[r, c] * Z[e, c, i]
                KZ[r, i] = acc
        for i in range(N_STRAINS):
            for j in range(i + 1):
                acc = 0.0
                for r in range(N_DOF):
                    acc += Z[e, r, i] * KZ[r, j]
                S[e, i, j] = S[e, j, i] = acc
    return Z, S, bad


# ------------------------------------------------------------------ Rayleigh (strain-rate) damping
@jit
def rayleigh_mid_point(X: np.ndarray, u0: np.ndarray, u1: np.ndarray, D0: np.ndarray, S: np.ndarray,
                       rate: float, tangent: bool) -> tuple[np.ndarray, np.ndarray]:
    """Strain-rate damping over a mid-point step (:mod:`flexmb.elements.rayleigh`): force
    ``G_m^T sigma`` (n_el, 18) with the damping stresses ``sigma = rate S (e_{n+1} - e_n)``
    (rate = beta / dt, e the strains before the angle map) and the exact rows G_m of
    :func:`mid_point_force_and_tangent`; with ``tangent`` its derivative w.r.t. the step increment
    (n_el, 18, 18; (0, 18, 18) without)."""
    n = X.shape[0]
    q = np.empty((n, N_DOF))
    K = np.empty((n if tangent else 0, N_DOF, N_DOF))
    l0, l1, lm = np.empty((3, 3, 3)), np.empty((3, 3, 3)), np.empty((3, 3, 3))
    R0, R1 = np.empty((3, 3, 3)), np.empty((3, 3, 3))
    dirs0, dirs1, dirsm = np.empty((3, N_SLOTS, 3)), np.empty((3, N_SLOTS, 3)), np.empty((3, N_SLOTS, 3))
    turn0, turn1 = np.empty((3, N_SLOTS, 3)), np.empty((3, N_SLOTS, 3))
    Pend = np.empty((3, N_SLOTS, 3, 3))
    Gres, Rrel, w3 = np.empty((3, 3)), np.empty((3, 3)), np.empty(3)
    eps0, eps1, sigma = np.empty(N_STRAINS), np.empty(N_STRAINS), np.empty(N_STRAINS)
    Gm, E1, T = np.empty((N_STRAINS, N_DOF)), np.empty((N_STRAINS, N_DOF)), np.empty((N_STRAINS, N_DOF))
    H = np.empty((N_STRAINS, N_STRAINS))
    for e in range(n):
        _configuration(X, u0, D0, e, l0, R0, dirs0, turn0)
        _configuration(X, u1, D0, e, l1, R1, dirs1, turn1)
        _strains(X, u0, e, dirs0, turn0, eps0)
        _strains(X, u1, e, dirs1, turn1, eps1)
        for i in range(N_STRAINS):
            acc = 0.0
            for k in range(N_STRAINS):
                H[i, k] = rate * S[e, i, k]
                acc += H[i, k] * (eps1[k] - eps0[k])
            sigma[i] = acc
        _mid_point_rows(l0, l1, dirs0, dirs1, lm, dirsm, Gm)
        _force(Gm, sigma, q[e])
        if not tangent:
            continue
        _end_rows(R0, R1, l1, dirs1, dirsm, Rrel, w3, Gres, Pend, E1)  # d e_{n+1} / d d
        Ke = K[e]
        Ke[:, :] = 0.0
        _add_sandwich(Gm, H, E1, Ke, T)
        _add_row_stiffness(sigma, 0.5, lm, dirsm, Pend, Ke)
    return q, K


@jit
def rayleigh_end_point(X: np.ndarray, u: np.ndarray, v: np.ndarray, D0: np.ndarray, S: np.ndarray,
                       beta: float, dv_du: float, tangent: bool) -> tuple[np.ndarray, np.ndarray]:
    """Strain-rate damping at the state (u, v) (:mod:`flexmb.elements.rayleigh`): ``G^T beta S G v``
    (n_el, 18), G = de/dq with nodal spins, v with the spatial angular velocities; with
    ``tangent`` its derivative along dv = dv_du du (n_el, 18, 18; (0, 18, 18) without)."""
    n = X.shape[0]
    q = np.empty((n, N_DOF))
    K = np.empty((n if tangent else 0, N_DOF, N_DOF))
    l, R, P = np.empty((3, 3, 3)), np.empty((3, 3, 3)), np.empty((3, N_SLOTS, 3, 3))
    dirs, turn = np.empty((3, N_SLOTS, 3)), np.empty((3, N_SLOTS, 3))
    rates, sigma, unit = np.empty(N_STRAINS), np.empty(N_STRAINS), np.zeros(N_STRAINS)
    G, A, T = np.empty((N_STRAINS, N_DOF)), np.empty((N_STRAINS, N_DOF)), np.empty((N_STRAINS, N_DOF))
    H, Hk = np.empty((N_STRAINS, N_STRAINS)), np.empty((N_DOF, N_DOF))
    for e in range(n):
        _configuration(X, u, D0, e, l, R, dirs, turn)
        _spin_jacobians(dirs, P)
        _rows(l, dirs, P, G)
        for k in range(N_STRAINS):
            acc = 0.0
            for c in range(N_DOF):
                acc += G[k, c] * v[e, c]
            rates[k] = acc
        for i in range(N_STRAINS):
            acc = 0.0
            for k in range(N_STRAINS):
                H[i, k] = beta * S[e, i, k]
                acc += H[i, k] * rates[k]
            sigma[i] = acc
        _force(G, sigma, q[e])
        if not tangent:
            continue
        # A = dv_du G + d(G v)/dq: row k of the latter is v^T (dG_k/dq), the row stiffness of a unit stress k
        for k in range(N_STRAINS):
            Hk[:, :] = 0.0
            unit[k] = 1.0
            _add_row_stiffness(unit, 1.0, l, dirs, P, Hk)
            unit[k] = 0.0
            for c in range(N_DOF):
                acc = dv_du * G[k, c]
                for r in range(N_DOF):
                    acc += v[e, r] * Hk[r, c]
                A[k, c] = acc
        Ke = K[e]
        Ke[:, :] = 0.0
        _add_sandwich(G, H, A, Ke, T)
        _add_row_stiffness(sigma, 1.0, l, dirs, P, Ke)
    return q, K
