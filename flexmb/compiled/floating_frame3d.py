"""Compiled kernels of the 3D modal body on a floating frame (:mod:`flexmb.elements.floating_frame3d`):
mid-point inertia in the chart of the step's Cayley parameters and end-point (Lagrange) inertia, both
with exact tangents; mid-point and end-point weight; kinetic energy and angular momentum.

Specification: the ``reference_*`` methods of
:class:`~flexmb.elements.floating_frame3d.FloatingFrameMass3D` (the numpy implementation these replaced,
tangents by complex steps; the formulas are in that module's docstring), against which
``tests/test_compiled_floating_frame3d.py`` checks these kernels to 1e-12, and their tangents against
central differences.

Per element: DOF vectors (n_x,) = (r (3), rotation (3), q (n_m)), body-frame velocities W = (R^T rdot,
R^T omega, qdot), zeta = E(q) W (n_z,) and Mt(q) = E^T G E, E(q) given by its terms
(:attr:`~flexmb.elements.velocity_fields.BodyVelocityFields.terms_index`, merged by
``floating_frame3d._entry_terms``) and its nonzero entries (entry_z, entry_w).

Mid-point inertia (real arithmetic). In the chart z = (dr, w, dq) of the step (R = cay(w) R0, q = q0 + dq)
the chart velocity y maps to W = P(z) y = (A y_r, B y_w, y_q), A = R^T, B = R^T D(w), D = s (I + hat(w)/2),
s = 1/(1 + w.w/4), and Mz(z) = P^T Mt P. With zdot1 = 2 z1/dt - v0, phi(z; a, b) = a^T Mz(z) b and the
Gonzalez weights W_g, N = z1^T W_g z1:

    F = (p1 - p0)/dt - g - c W_g z1 / N,   p1 = Mz(z1) zdot1,  p0 = Mz(0) v0,  g = 1/2 grad_z phi(z1/2; v0, zdot1),
    c = 1/2 (v0 . p1 - p0 . zdot1) - z1 . g     (the correction only for N above the floor).

Its tangent, derived here from these definitions (Mz symmetric, so grad_z phi(z; a, b) = K(z, b)^T a with
K(z, y) = d(Mz(z) y)/dz, and its derivative w.r.t. b is K(z, a)^T):

    dp1/dz1 = K(z1, zdot1) + 2/dt Mz(z1),      dg/dz1 = 1/4 H(z1/2; v0, zdot1) + 1/dt K(z1/2, v0)^T,
    dc/dz1 = 1/2 (v0^T dp1/dz1 - 2/dt p0) - g - (dg/dz1)^T z1,
    dF/dz1 = (dp1/dz1)/dt - dg/dz1 - [W_g z1 (dc/dz1)^T + c W_g - 2 c W_g z1 (W_g z1)^T / N] / N,

with H = d^2 phi/dz^2 and, for W = P y, pi = Mt W, W_j = dW/dw_j = (A_j y_r, B_j y_w, 0) and
dMt_k W = dE_k^T G zeta + E^T G dE_k W (dE_k = dE/dq_k), zero on r and

    K[:, w_j] = P_j^T pi + P^T Mt W_j   (P_j^T pi = (A_j^T pi_V, B_j^T pi_Omega, 0)),   K[:, q_k] = P^T dMt_k W,
    H[w_i, w_j] = W_a,ij . pi_b + W_b,ij . pi_a + W_a,i^T Mt W_b,j + W_a,j^T Mt W_b,i,
    H[w_j, q_k] = W_a,j . dMt_k W_b + W_b,j . dMt_k W_a,
    H[q_k, q_l] = (dE_k W_a)^T G (dE_l W_b) + (dE_l W_a)^T G (dE_k W_b) + G zeta_b . d2E_kl W_a + G zeta_a . d2E_kl W_b.

The blocks' derivatives follow from d cay(w) = hat(D dw) cay(w) (module docstring of
:mod:`flexmb.elements.floating_frame3d`), d_j = D e_j, hat(v) a = v x a:

    A_j = -A hat(d_j),   A_ij = A (hat(d_i) hat(d_j) - hat(D_i e_j)),
    B_j = A_j D + A D_j,   B_ij = A_ij D + A_i D_j + A_j D_i + A D_ij,
    D_i = s_i (I + hat(w)/2) + s/2 hat(e_i),   D_ij = s_ij (I + hat(w)/2) + (s_i hat(e_j) + s_j hat(e_i))/2,
    s_i = -s^2 w_i / 2,   s_ij = s^3 w_i w_j / 2 - s^2 delta_ij / 2.

E(q) = E0 + q_k E1[k] + q_k q_l E2[k, l] enters as its nonzero entries (entry_z, entry_w) (n_e,), the
polynomials e = P0 + q_k P1[k] + q_k q_l P2[k, l] (P2 symmetric, dE/dq_k = P1[k] + 2 q_l P2[k, l]; P2 kept
on the run of entries from quadratic_from that holds all quadratic terms, the Omega c_j rows), and as
the body's constant products of its coefficients with G on the columns where E depends on q, EtG0 = E0^T G,
E1tG[k] = E1[k]^T G (cols1: Omega and qdot) and E2tG[k, l] = (E2[k, l] + E2[l, k])^T G (cols2: Omega)
(``floating_frame3d._entry_polynomials`` and ``_gram_products``, at set-up). Per call E^T G = EtG0 +
q_k (E1tG[k] + D2[k]/2) with D2[k] = q_l E2tG[k, l], and G dE_k W = E1tG[k] W + D2[k] W, Mt = (E^T G) E:
with the tangent no product with G itself is left but G zeta at the step's start (the value alone takes
G zeta = G (E W) at q0, q1 and twice at the mid-point); every loop runs along contiguous rows, which numba
vectorizes (a loop over E's terms, with a branch and an indirect write per term, costs 2-3 ns a term;
a loop over E's entries with an indirect write about 1.5 ns an entry and mode; a loop summing into one
scalar runs at the adds' latency, fastmath being off, so the sums run along rows or in BLAS). For the
6-mode blade of ``benchmarks/bench_modal_body3d.py`` (n_z = 90, 165 entries, 45 of them quadratic, 1515
merged terms) a call with the tangent takes 34 us (38 us with P2 on all entries, 54 us from E's terms,
155 us by complex steps), the value alone 14 us (15, 24, 45 us); with 20 modes (n_z = 214, 822 entries,
96 quadratic) 320 and 77 us (490 and 190 us with P2 on all entries); with 1 mode 13 and 7 us, as before
(``benchmarks/bench_modal_inertia3d.py``: CPU medians of 7 x 200 direct calls, measured 2026-11-29).
The end-point inertia forms E's products from its merged terms (index (n_t, 4): z, w, k, l; value
(n_t,)) and E^T G from its nonzero entries, ``floating_frame3d._entry_terms`` (47 against 142 us with the
tangent by complex steps).

End-point inertia (Lagrange), real arithmetic: with W = P v = (V, Omega, qd), P = blockdiag(R^T, R^T, I),
W' = P (rddot - omega x rdot, omegadot, qddot), p = Mt W and dMt[qd] = sum_k qd_k dMt_k = X + X^T,
X = E^T G dE[qd],

    F = P^T body,   body = Mt W' + dMt[qd] W + (Omega x p_V, Omega x p_Omega + V x p_V, -1/2 W^T dMt_k W).

Its tangent J = dF/d(spin, q) + dv_du dF/dv + da_du dF/da (a spin eta turns R to (I + hat(eta)) R, so
d(R^T x) = R^T hat(x) eta and d(R y) = -hat(R y) eta), derived here: with L = d body/dW at fixed W' and
qd, L = dMt[qd] + (-hat(p_V) dOmega + hat(Omega) Mt_V, -hat(p_Omega) dOmega + hat(Omega) Mt_Omega
- hat(p_V) dV + hat(V) Mt_V, -(dMt_k W)^T),

    d body/da = Mt P,   d body/dv = L P + Mt d(W')/dv + (dMt_k W on qd),
        d(W')/dv = R^T (-hat(omega)) on v_r, R^T hat(rdot) on omega (V' only),
    d body/d eta = L (R^T hat(rdot); R^T hat(omega); 0) + Mt (R^T hat(rddot - omega x rdot); R^T hat(omegadot); 0),
    d body/dq_l = dMt_l W' + d(dE[qd])/dq_l^T G zeta + E^T G d(dE[qd])/dq_l W + dE[qd]^T G dE_l W
                  + dE_l^T G dE[qd] W
                  + (Omega x (dMt_l W)_V, Omega x (dMt_l W)_Omega + V x (dMt_l W)_V, -1/2 W^T d2Mt_kl W),
    J = dv_du P^T dbody/dv + da_du P^T dbody/da + (0 | P^T dbody/deta - (hat(F_V); hat(F_Omega); 0) | P^T dbody/dq).

The weights keep complex-step tangents: every quantity there carries a last axis of lanes (..., m), one
lane per direction of a complex step (h = 1e-30, exact to round-off: no difference is taken); vectors
are (3, m), rotation matrices (3, 3, m); the lanes, the Gonzalez correction and the store of value and
tangent are the 2D kernels' (:mod:`flexmb.compiled.floating_frame`).
"""
from __future__ import annotations

import numpy as np

from flexmb.compiled.floating_frame import (
    _dot,
    _first_moment,
    _gonzalez,
    _lanes,
    _store,
    _sum,
    jit,
)
from flexmb.compiled.rotations import cayley_from_matrix_into, cayley_into, exp_map_into


# ------------------------------------------------------------------ mid-point inertia (chart): exact tangent
@jit
def _add_hat(v, factor: float, out) -> None:
    """out (3, 3) += factor hat(v), hat(v) a = v x a."""
    out[0, 1] -= factor * v[2]
    out[0, 2] += factor * v[1]
    out[1, 2] -= factor * v[0]
    out[1, 0] += factor * v[2]
    out[2, 0] -= factor * v[1]
    out[2, 1] += factor * v[0]


@jit
def _add_product(X, Y, factor: float, out) -> None:
    """out (3, 3) += factor X Y of X, Y (3, 3)."""
    for i in range(3):
        for k in range(3):
            x = factor * X[i, k]
            for j in range(3):
                out[i, j] += x * Y[k, j]


@jit
def _chart_blocks(w, R0, second: bool):
    """The rotation blocks of P(z) = blockdiag(A, B, I) at the Cayley parameters w (3,) and their
    derivatives w.r.t. w (module docstring of the mid-point tangent): A = R^T, B = R^T D (3, 3),
    A_j, B_j (3, 3, 3) [j] and, with ``second``, A_ij, B_ij (3, 3, 3, 3) [i, j] (else empty)."""
    s = 1.0 / (1.0 + 0.25 * (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]))
    C = np.empty((3, 3))
    cayley_into(w, C)
    A = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            A[i, j] = C[j, 0] * R0[0, i] + C[j, 1] * R0[1, i] + C[j, 2] * R0[2, i]        # (C R0)^T
    H = np.eye(3)
    _add_hat(w, 0.5, H)                                                                   # I + hat(w)/2
    D = s * H
    B = np.zeros((3, 3))
    _add_product(A, D, 1.0, B)
    ds = -0.5 * s * s * w                                                                 # ds/dw_j (3,)
    unit = np.eye(3)
    Dj, hd = np.empty((3, 3, 3)), np.zeros((3, 3, 3))
    Aj, Bj = np.zeros((3, 3, 3)), np.zeros((3, 3, 3))
    for j in range(3):
        Dj[j] = ds[j] * H                                                                 # dD/dw_j
        _add_hat(unit[j], 0.5 * s, Dj[j])
        _add_hat(D[:, j], 1.0, hd[j])                                                     # hat(d_j), d_j = D e_j
        _add_product(A, hd[j], -1.0, Aj[j])
        _add_product(Aj[j], D, 1.0, Bj[j])
        _add_product(A, Dj[j], 1.0, Bj[j])
    shape = (3, 3, 3, 3) if second else (0, 3, 3, 3)
    Aij, Bij = np.zeros(shape), np.zeros(shape)
    if second:
        a, Dij = np.empty((3, 3)), np.empty((3, 3))
        for i in range(3):
            for j in range(i, 3):
                a[:] = 0.0                                                      # hat(d_i) hat(d_j) - hat(D_i e_j)
                _add_product(hd[i], hd[j], 1.0, a)
                _add_hat(Dj[i][:, j], -1.0, a)
                _add_product(A, a, 1.0, Aij[i, j])
                dds = 0.5 * s * s * s * w[i] * w[j] - (0.5 * s * s if i == j else 0.0)
                Dij[:] = dds * H                                                          # d2D/dw_i dw_j
                _add_hat(unit[j], 0.5 * ds[i], Dij)
                _add_hat(unit[i], 0.5 * ds[j], Dij)
                _add_product(Aij[i, j], D, 1.0, Bij[i, j])
                _add_product(Aj[j], Dj[i], 1.0, Bij[i, j])
                _add_product(Aj[i], Dj[j], 1.0, Bij[i, j])
                _add_product(A, Dij, 1.0, Bij[i, j])
                Aij[j, i], Bij[j, i] = Aij[i, j], Bij[i, j]
    return A, B, Aj, Bj, Aij, Bij


@jit
def _body_of(A, B, y):
    """W = P y = (A y_r, B y_w, y_q) (n_x,) of a chart velocity y (n_x,)."""
    W = y.copy()
    for i in range(3):
        W[i] = A[i, 0] * y[0] + A[i, 1] * y[1] + A[i, 2] * y[2]
        W[3 + i] = B[i, 0] * y[3] + B[i, 1] * y[4] + B[i, 2] * y[5]
    return W


@jit
def _spatial_of(A, B, p):
    """P^T p = (A^T p_V, B^T p_Omega, p_q) (n_x,) of body-frame components p (n_x,)."""
    out = p.copy()
    for i in range(3):
        out[i] = A[0, i] * p[0] + A[1, i] * p[1] + A[2, i] * p[2]
        out[3 + i] = B[0, i] * p[3] + B[1, i] * p[4] + B[2, i] * p[5]
    return out


@jit
def _rates(Aj, Bj, y):
    """W_j = dW/dw_j = (A_j y_r, B_j y_w) (3, 6) [j] (zero on q)."""
    out = np.zeros((Aj.shape[0], 6))
    for j in range(Aj.shape[0]):
        for i in range(3):
            for c in range(3):
                out[j, i] += Aj[j, i, c] * y[c]
                out[j, 3 + i] += Bj[j, i, c] * y[3 + c]
    return out


@jit
def _dot6(a, b) -> float:
    """a[:6] . b[:6]."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@jit
def _coefficients(index, value, q, n_z: int, n_x: int):
    """E(q) (n_z, n_x), dense, from its (merged) terms."""
    E = np.zeros((n_z, n_x))
    for t in range(value.size):
        k, l = index[t, 2], index[t, 3]
        a = value[t]
        if k >= 0:
            a *= q[k]
        if l >= 0:
            a *= q[l]
        E[index[t, 0], index[t, 1]] += a
    return E


@jit
def _modal_gradient(index, value, q, Wa, Gzb, Wb, Gza):
    """W_a . dMt/dq_k W_b (n_m,) = (dE_k W_a) . G zeta_b + (dE_k W_b) . G zeta_a, one pass over E's terms."""
    out = np.zeros(q.size)
    for t in range(value.size):
        z, j, k, l = index[t, 0], index[t, 1], index[t, 2], index[t, 3]
        if k < 0:
            continue
        f = value[t] * (Wa[j] * Gzb[z] + Wb[j] * Gza[z])
        if l < 0:
            out[k] += f
        else:
            out[k] += f * q[l]
            out[l] += f * q[k]
    return out


@jit
def _gram_rows(G, E, entry_z, entry_w):
    """E^T G (n_x, n_z) from E's nonzero entries (entry_z, entry_w) (n_e,): 165 rows of G for 6 stiffened
    modes, a sixth of the dense product's work."""
    EtG = np.zeros((E.shape[1], G.shape[0]))
    for p in range(entry_z.size):
        z, j = entry_z[p], entry_w[p]
        a = E[z, j]
        for c in range(G.shape[0]):
            EtG[j, c] += a * G[z, c]
    return EtG


@jit
def _term_rates(index, value, q, x, n_out: int, quadratic_only: bool, transposed: bool):
    """E's modal rates applied to x: Y = (dE/dq_k x)_k (n_z, n_m) for x (n_x,), or with ``transposed``
    (dE/dq_k^T x)_k (n_x, n_m) for x (n_z,); ``n_out`` rows. With ``quadratic_only`` E's linear terms
    are left out and q stands for a rate qd: then d(dE[qd])/dq_k, dE[qd] = sum_l qd_l dE/dq_l (a term
    a q_k q_l gives a q_l and a q_k on columns k and l, 2 a q_k on column k of a square)."""
    out = np.zeros((n_out, q.size))
    for t in range(value.size):
        z, j, k, l = index[t, 0], index[t, 1], index[t, 2], index[t, 3]
        if k < 0 or (quadratic_only and l < 0):
            continue
        row, col = (j, z) if transposed else (z, j)             # E's entry (z, j), or its transpose
        f = value[t] * x[col]
        if l < 0:
            out[row, k] += f
        else:
            out[row, k] += f * q[l]
            out[row, l] += f * q[k]
    return out


@jit
def _mass_rates(index, value, q, EtG, W):
    """dMt/dq_k W = dE_k^T G zeta + E^T G dE_k W (n_x, n_m) for every mode k, with the columns
    Y = (dE_k W)_k (n_z, n_m) and G zeta = G E W (n_z,) it needs, returned too (G symmetric)."""
    n, n_z = EtG.shape
    Gz = EtG.T @ W
    Y = _term_rates(index, value, q, W, n_z, False, False)
    return _term_rates(index, value, q, Gz, n, False, True) + EtG @ Y, Y, Gz


@jit
def _modal_hessian(G, index, value, Ya, Yb, Wa, Wb, Gza, Gzb):
    """W_a^T d2Mt/dq_k dq_l W_b (n_m, n_m) = (dE_k W_a)^T G (dE_l W_b) + (k <-> l) + G zeta_b . d2E_kl W_a
    + G zeta_a . d2E_kl W_b, with Y = (dE_k W)_k (n_z, n_m) and G zeta (n_z,) of W_a and W_b."""
    Q = Ya.T @ (G @ Yb)
    H = Q + Q.T
    for t in range(value.size):
        z, j, k, l = index[t, 0], index[t, 1], index[t, 2], index[t, 3]
        if l < 0:
            continue
        f = value[t] * (Gzb[z] * Wa[j] + Gza[z] * Wb[j])
        if k == l:
            H[k, k] += 2.0 * f
        else:
            H[k, l] += f
            H[l, k] += f
    return H


@jit
def _momentum_rate(A, B, Aj, Bj, Mt, p, rates, mass_rates):
    """K(z, y) = d(Mz(z) y)/dz (n_x, n_x) at fixed y: zero on r; on w_j, P_j^T p + P^T Mt W_j
    (P_j^T p = (A_j^T p_V, B_j^T p_Omega, 0)); on q_k, P^T dMt/dq_k W. p = Mt W (n_x,) the body momenta,
    rates = W_j (3, 6), mass_rates = dMt/dq_k W (n_x, n_m)."""
    n = Mt.shape[0]
    K = np.zeros((n, n))
    for j in range(3):
        MW = np.zeros(n)
        for i in range(n):
            for c in range(6):
                MW[i] += Mt[i, c] * rates[j, c]
        col = _spatial_of(A, B, MW)
        for i in range(3):
            for c in range(3):
                col[i] += Aj[j, c, i] * p[c]
                col[3 + i] += Bj[j, c, i] * p[3 + c]
        K[:, 3 + j] = col
    for k in range(n - 6):
        K[:, 6 + k] = _spatial_of(A, B, np.ascontiguousarray(mass_rates[:, k]))
    return K


@jit
def _chart_mass(A, B, Mt):
    """Mz = P^T Mt P (n_x, n_x), P = blockdiag(A, B, I)."""
    n = Mt.shape[0]
    MP = Mt.copy()
    for i in range(n):
        for j in range(3):
            MP[i, j] = Mt[i, 0] * A[0, j] + Mt[i, 1] * A[1, j] + Mt[i, 2] * A[2, j]
            MP[i, 3 + j] = Mt[i, 3] * B[0, j] + Mt[i, 4] * B[1, j] + Mt[i, 5] * B[2, j]
    out = MP.copy()
    for j in range(3):
        for c in range(n):
            out[j, c] = A[0, j] * MP[0, c] + A[1, j] * MP[1, c] + A[2, j] * MP[2, c]
            out[3 + j, c] = B[0, j] * MP[3, c] + B[1, j] * MP[4, c] + B[2, j] * MP[5, c]
    return out


@jit
def _chart_momentum(G, index, value, A, B, q, y):
    """Mz(z) y = P^T E^T G E P y (n_x,), value only (A, B the blocks of P at z, q (n_m,))."""
    E = _coefficients(index, value, q, G.shape[0], y.size)
    return _spatial_of(A, B, E.T @ (G @ (E @ _body_of(A, B, y))))


# ------------------------------------------------------------------ mid-point inertia: E(q) on its entries
@jit
def _entry_values(P0, P1, P2, quadratic_from: int, q, rates: bool):
    """E(q)'s nonzero entries e (n_e,) = P0 + q_k P1[k] + q_k q_l P2[k, l] and, with ``rates``, their
    derivatives dE/dq_k = P1[k] + 2 q_l P2[k, l] (n_m, n_e) (else an empty array); P1 (n_m, n_e), P2 (n_m,
    n_m, n_2) symmetric in k, l on the entries quadratic_from ... quadratic_from + n_2 - 1, the only ones
    with quadratic terms (:func:`flexmb.elements.floating_frame3d._entry_polynomials`): the sums over l
    run over these alone."""
    n_m, n_e = P1.shape
    n_2 = P2.shape[2]
    last = quadratic_from + n_2
    S = np.zeros((n_m, n_2))                                                    # q_l P2[k, l]
    for k in range(n_m):
        for l in range(n_m):
            ql = q[l]
            for p in range(n_2):
                S[k, p] += ql * P2[k, l, p]
    e = P0.copy()
    for k in range(n_m):
        qk = q[k]
        for p in range(quadratic_from):
            e[p] += qk * P1[k, p]
        for p in range(n_2):
            e[quadratic_from + p] += qk * (P1[k, quadratic_from + p] + S[k, p])
        for p in range(last, n_e):
            e[p] += qk * P1[k, p]
    if not rates:
        return e, np.empty((0, n_e))
    dE = P1.copy()
    for k in range(n_m):
        for p in range(n_2):
            dE[k, quadratic_from + p] += 2.0 * S[k, p]
    return e, dE


@jit
def _entry_momentum(G, poly, entry_z, entry_w, q, W):
    """Mt(q) W = E^T G E W (n_x,), value only, over E's entries (:func:`_entry_values` of poly = (P0, P1,
    P2, quadratic_from))."""
    e = _entry_values(poly[0], poly[1], poly[2], poly[3], q, np.bool_(False))[0]     # (a bool: one compilation)
    zeta = np.zeros(G.shape[0])
    for p in range(e.size):
        zeta[entry_z[p]] += e[p] * W[entry_w[p]]
    Gz = G @ zeta
    out = np.zeros(W.size)
    for p in range(e.size):
        out[entry_w[p]] += e[p] * Gz[entry_z[p]]
    return out


@jit
def _gram_of_modes(EtG0, E1tG, E2tG, cols1, cols2, q):
    """E(q)^T G (n_x, n_z) and D2 = (q_l (E2[k, l] + E2[l, k])^T G)_k (n_m, n2, n_z) on E2's columns, from
    the body's constant products EtG0 = E0^T G (n_x, n_z), E1tG = E1[k]^T G on E1's columns cols1 (n_m, n1,
    n_z) and E2tG = (E2[k, l] + E2[l, k])^T G on E2's columns cols2 (n_m, n_m, n2, n_z): dE/dq_k^T G is
    E1tG[k] on cols1 plus D2[k] on cols2, and E^T G = EtG0 + q_k (E1tG[k] + D2[k]/2) (E quadratic in q)."""
    n_m, n1, n_z = E1tG.shape
    n2 = cols2.size
    EtG = EtG0.copy()
    for k in range(n_m):
        qk = q[k]
        for c in range(n1):
            row = cols1[c]
            for z in range(n_z):
                EtG[row, z] += qk * E1tG[k, c, z]
    D2 = np.zeros((n_m, n2, n_z))
    for k in range(n_m):
        for l in range(n_m):
            ql = q[l]
            for c in range(n2):
                for z in range(n_z):
                    D2[k, c, z] += ql * E2tG[k, l, c, z]
    for k in range(n_m):
        hk = 0.5 * q[k]
        for c in range(n2):
            row = cols2[c]
            for z in range(n_z):
                EtG[row, z] += hk * D2[k, c, z]
    return EtG, D2


@jit
def _entry_mass_rates(e, dE, entry_z, entry_w, EtG, E1tG, D2, cols1, cols2, Ws):
    """dMt/dq_k W = dE_k^T G zeta + E^T G dE_k W (m, n_x, n_m) for every mode k and each of the m body
    velocities Ws (m, n_x) at the same q, with the G zeta = G E W (m, n_z) and G dE_k W (m, n_m, n_z) it
    needs, returned too (G symmetric): E's entries e (n_e,) and rates dE (n_m, n_e)
    (:func:`_entry_values`), E^T G and D2 (:func:`_gram_of_modes`). The velocities share each pass over
    the constant products and over E's entries."""
    m, n = Ws.shape
    n_m, n1, n_z = E1tG.shape
    Gz = np.zeros((m, n_z))
    for v in range(m):
        for j in range(n):
            a = Ws[v, j]
            for z in range(n_z):
                Gz[v, z] += a * EtG[j, z]
    GY = np.zeros((m, n_m, n_z))
    for k in range(n_m):
        for c in range(n1):
            for v in range(m):
                a = Ws[v, cols1[c]]
                for z in range(n_z):
                    GY[v, k, z] += a * E1tG[k, c, z]
        for c in range(cols2.size):
            for v in range(m):
                a = Ws[v, cols2[c]]
                for z in range(n_z):
                    GY[v, k, z] += a * D2[k, c, z]
    out = np.zeros((m, n, n_m))
    for p in range(e.size):
        z, j, a = entry_z[p], entry_w[p], e[p]
        for v in range(m):
            g = Gz[v, z]
            for k in range(n_m):
                out[v, j, k] += dE[k, p] * g + a * GY[v, k, z]
    return out, Gz, GY


@jit
def _entry_mass(e, entry_z, entry_w, EtG):
    """Mt = (E^T G) E (n_x, n_x) of E's nonzero entries e (n_e,) at (entry_z, entry_w)."""
    E = np.zeros((EtG.shape[1], EtG.shape[0]))
    for p in range(e.size):
        E[entry_z[p], entry_w[p]] = e[p]
    return EtG @ E


@jit
def _entry_modal_hessian(P2, quadratic_from: int, dE, entry_z, entry_w, Wa, Wb, Gza, Gzb, GYb):
    """W_a^T d2Mt/dq_k dq_l W_b (n_m, n_m) = (dE_k W_a)^T G (dE_l W_b) + (k <-> l) + G zeta_b . d2E_kl W_a
    + G zeta_a . d2E_kl W_b, with GYb = (G dE_l W_b)_l (n_m, n_z) and G zeta (n_z,) of W_a and W_b; d2E
    = 2 P2[k, l] on the entries from quadratic_from on (:func:`_entry_values`)."""
    n_m, n_e = dE.shape
    n_z, n_2 = GYb.shape[1], P2.shape[2]
    Ya = np.zeros((n_z, n_m))                                                   # dE_k W_a
    for p in range(n_e):
        z, j = entry_z[p], entry_w[p]
        for k in range(n_m):
            Ya[z, k] += dE[k, p] * Wa[j]
    pair = np.empty(n_2)                                        # G zeta_b . W_a + (a <-> b) per quadratic entry
    for p in range(n_2):
        z, j = entry_z[quadratic_from + p], entry_w[quadratic_from + p]
        pair[p] = Gzb[z] * Wa[j] + Gza[z] * Wb[j]
    Q = np.zeros((n_m, n_m))                                                    # (dE_k W_a)^T G (dE_l W_b)
    for z in range(n_z):                                                        # rows of Q, not dot products:
        for k in range(n_m):                                                    # a sum into one scalar runs at the
            y = Ya[z, k]                                                        # adds' latency (fastmath off)
            for l in range(n_m):
                Q[k, l] += y * GYb[l, z]
    d2 = P2.reshape(n_m * n_m, n_2) @ pair if n_2 else np.zeros(n_m * n_m)      # pair . d2E_kl / 2
    H = np.empty((n_m, n_m))
    for k in range(n_m):
        for l in range(n_m):
            H[k, l] = Q[k, l] + Q[l, k] + 2.0 * d2[k * n_m + l]
    return H


@jit
def _end_momentum(G, entry_z, entry_w, poly, gram, blocks, q, y, dt: float, tangent: bool, jacobian: bool):
    """p1 = Mz(z1) zdot1 (n_x,) and, with ``jacobian``, dp1/dz1 = K(z1, zdot1) + 2/dt Mz(z1) (n_x, n_x)
    (zdot1 = 2 z1/dt - zdot0; else an empty matrix); with ``tangent`` p1 in the tangent's arithmetic
    (from Mt), also without the matrix."""
    A, B, Aj, Bj = blocks[0], blocks[1], blocks[2], blocks[3]
    W = _body_of(A, B, y)
    if not tangent:
        return _spatial_of(A, B, _entry_momentum(G, poly, entry_z, entry_w, q, W)), np.empty((0, 0))
    EtG0, E1tG, E2tG, cols1, cols2 = gram
    e, dE = _entry_values(poly[0], poly[1], poly[2], poly[3], q, jacobian)
    EtG, D2 = _gram_of_modes(EtG0, E1tG, E2tG, cols1, cols2, q)
    Mt = _entry_mass(e, entry_z, entry_w, EtG)                                   # (n_x, n_x)
    p = Mt @ W
    if not jacobian:
        return _spatial_of(A, B, p), np.empty((0, 0))
    mass_rates = _entry_mass_rates(e, dE, entry_z, entry_w, EtG, E1tG, D2, cols1, cols2, W.reshape(1, W.size))[0][0]
    K = _momentum_rate(A, B, Aj, Bj, Mt, p, _rates(Aj, Bj, y), mass_rates)
    return _spatial_of(A, B, p), K + (2.0 / dt) * _chart_mass(A, B, Mt)


@jit
def _half_gradient(G, entry_z, entry_w, poly, gram, blocks, q, a, b, dt: float, tangent: bool, jacobian: bool):
    """1/2 grad_z phi (n_x,), phi = a^T Mz(z) b, at the step's mid-point z = z1/2 with a = zdot0,
    b = zdot1, and, with ``jacobian``, its derivative w.r.t. z1, 1/4 H + 1/dt K(z, a)^T (n_x, n_x)
    (H the Hessian of phi in z; else an empty matrix); with ``tangent`` the gradient in the tangent's
    arithmetic (from Mt and dMt/dq_k W_b), also without the matrix."""
    A, B, Aj, Bj, Aij, Bij = blocks
    n, n_z = a.size, G.shape[0]
    e, dE = _entry_values(poly[0], poly[1], poly[2], poly[3], q, np.bool_(True))     # (a bool: one compilation)
    Wa, Wb = _body_of(A, B, a), _body_of(A, B, b)
    ra, rb = _rates(Aj, Bj, a), _rates(Aj, Bj, b)                              # W_j (3, 6)
    grad = np.zeros(n)
    if not tangent:
        za, zb = np.zeros(n_z), np.zeros(n_z)                                   # zeta = E W
        for p in range(e.size):
            za[entry_z[p]] += e[p] * Wa[entry_w[p]]
            zb[entry_z[p]] += e[p] * Wb[entry_w[p]]
        Gza, Gzb = G @ za, G @ zb
        pa, pb = np.zeros(n), np.zeros(n)                                       # E^T G zeta
        for p in range(e.size):
            z, j = entry_z[p], entry_w[p]
            pa[j] += e[p] * Gza[z]
            pb[j] += e[p] * Gzb[z]
            for k in range(n - 6):                                              # W_a . dMt/dq_k W_b
                grad[6 + k] += dE[k, p] * (Wa[j] * Gzb[z] + Wb[j] * Gza[z])
        for j in range(3):
            grad[3 + j] = _dot6(ra[j], pb) + _dot6(rb[j], pa)
        return 0.5 * grad, np.empty((0, 0))
    EtG0, E1tG, E2tG, cols1, cols2 = gram
    EtG, D2 = _gram_of_modes(EtG0, E1tG, E2tG, cols1, cols2, q)
    Mt = _entry_mass(e, entry_z, entry_w, EtG)
    pa, pb = Mt @ Wa, Mt @ Wb                                                   # body momenta
    if not jacobian:                      # each velocity's rates are summed apart: W_b's alone, the same values
        Mb = _entry_mass_rates(e, dE, entry_z, entry_w, EtG, E1tG, D2, cols1, cols2, Wb.reshape(1, n))[0][0]
        for j in range(3):
            grad[3 + j] = _dot6(ra[j], pb) + _dot6(rb[j], pa)
        grad[6:] = Wa @ Mb
        return 0.5 * grad, np.empty((0, 0))
    Ws = np.empty((2, n))
    Ws[0], Ws[1] = Wa, Wb
    rates, Gz, GY = _entry_mass_rates(e, dE, entry_z, entry_w, EtG, E1tG, D2, cols1, cols2, Ws)
    Ma, Mb, Gza, Gzb, GYb = rates[0], rates[1], Gz[0], Gz[1], GY[1]                # dMt/dq_k W_a, W_b
    for j in range(3):
        grad[3 + j] = _dot6(ra[j], pb) + _dot6(rb[j], pa)
    grad[6:] = Wa @ Mb                                                          # W_a . dMt_k W_b
    H = np.zeros((n, n))
    # w-w: W_ij(a) . p_b + W_ij(b) . p_a + W_i(a)^T Mt W_j(b) + W_j(a)^T Mt W_i(b)
    Mrb = np.zeros((3, 6))                                                      # (Mt W_j(b))[:6]
    for j in range(3):
        for i in range(6):
            for c in range(6):
                Mrb[j, i] += Mt[i, c] * rb[j, c]
    sa, sb = np.zeros((3, 3, 6)), np.zeros((3, 3, 6))                           # W_ij
    for i in range(3):
        sa[i] = _rates(Aij[i], Bij[i], a)
        sb[i] = _rates(Aij[i], Bij[i], b)
    for i in range(3):
        for j in range(3):
            H[3 + i, 3 + j] = (_dot6(sa[i, j], pb) + _dot6(sb[i, j], pa) + _dot6(ra[i], Mrb[j])
                               + _dot6(ra[j], Mrb[i]))
    # w-q: W_j(a) . dMt_k W_b + W_j(b) . dMt_k W_a
    for j in range(3):
        for k in range(n - 6):
            h = 0.0
            for c in range(6):
                h += ra[j, c] * Mb[c, k] + rb[j, c] * Ma[c, k]
            H[3 + j, 6 + k] = H[6 + k, 3 + j] = h
    H[6:, 6:] = _entry_modal_hessian(poly[2], poly[3], dE, entry_z, entry_w, Wa, Wb, Gza, Gzb, GYb)   # q-q
    K = _momentum_rate(A, B, Aj, Bj, Mt, pa, ra, Ma)
    return 0.5 * grad, 0.25 * H + (1.0 / dt) * K.T


@jit
def _mid_point_element(G, entry_z, entry_w, poly, gram, weights, floor: float, R0, q0, v0, p0, z1, dt: float,
                       tangent: bool, jacobian: bool):
    """F = (Mz(z1) zdot1 - Mz(0) zdot0)/dt - gbar (n_x,) of one element and, with ``jacobian``, dF/dz1
    (n_x, n_x) (module docstring; else an empty matrix); p0 = Mz(0) zdot0 (n_x,) (:func:`start_momenta`).
    With ``tangent`` F is the one the tangent's pass computes, also without the matrix (the same values
    bit for bit: the matrix takes nothing away from F's arithmetic)."""
    n = z1.size
    zd1 = (2.0 / dt) * z1 - v0
    # np.bool_: a bool as ``jacobian`` below, not a literal, so that _chart_blocks compiles once
    p1, Jp1 = _end_momentum(G, entry_z, entry_w, poly, gram, _chart_blocks(z1[3:6].copy(), R0, np.bool_(False)),
                            q0 + z1[6:], zd1, dt, tangent, jacobian)
    zm = 0.5 * z1
    hg, Jhg = _half_gradient(G, entry_z, entry_w, poly, gram, _chart_blocks(zm[3:6].copy(), R0, jacobian),
                             q0 + zm[6:], v0, zd1, dt, tangent, jacobian)
    remainder = 0.5 * (v0 @ p1 - p0 @ zd1) - z1 @ hg                            # gbar = hg + correction
    Wz = weights * z1
    norm = z1 @ Wz
    F = (p1 - p0) / dt - hg
    active = norm > floor
    if active:
        F -= (remainder / norm) * Wz
    if not jacobian:
        return F, np.empty((0, 0))
    Jf = Jp1 / dt - Jhg
    if active:
        d_remainder = 0.5 * (v0 @ Jp1 - (2.0 / dt) * p0) - hg - Jhg.T @ z1
        for i in range(n):
            Jf[i, i] -= remainder / norm * weights[i]
            for j in range(n):
                Jf[i, j] -= (Wz[i] * d_remainder[j] - 2.0 * remainder / norm * Wz[i] * Wz[j]) / norm
    return F, Jf


@jit
def _chart_start(psi0, psi1, R0, w) -> None:
    """R0 = exp(hat(psi0)) (3, 3) and the Cayley parameters w (3,) of the step, exp(hat(psi1)) =
    cay(w) R0, in place (the arithmetic of ``flexmb.rotations.cayley_between``)."""
    R1, C = np.empty((3, 3)), np.empty((3, 3))
    exp_map_into(psi0, R0)
    exp_map_into(psi1, R1)
    for i in range(3):
        for j in range(3):
            C[i, j] = R1[i, 0] * R0[j, 0] + R1[i, 1] * R0[j, 1] + R1[i, 2] * R0[j, 2]
    cayley_from_matrix_into(C, w)


@jit
def start_momenta(G, entry_z, entry_w, u0, v0, P0, P1, P2, quadratic_from, p0) -> None:
    """p0 = Mz(0) zdot0 = P0^T Mt(q0) P0 v0 (n_el, n_x), P0 = blockdiag(R0^T, R0^T, I) (D(0) = I), the
    start momenta in the chart of a step from u0 with velocity v0 (n_el, n_x), in place; they depend
    on the step's start alone, so a Newton solve takes them once (:func:`mid_point_inertia_from`)."""
    R0 = np.empty((3, 3))
    poly = (P0, P1, P2, quadratic_from)
    for e in range(u0.shape[0]):
        exp_map_into(u0[e, 3:6], R0)                                             # _chart_start's R0
        A0 = np.ascontiguousarray(R0.T)
        p0[e] = _spatial_of(A0, A0, _entry_momentum(G, poly, entry_z, entry_w, u0[e, 6:].copy(),
                                                    _body_of(A0, A0, v0[e].copy())))


@jit
def mid_point_inertia_from(G, entry_z, entry_w, weights, floor, u0, u1, v0, p0, dt, F, J, tangent, jacobian, P0, P1,
                           P2, EtG0, E1tG, E2tG, cols1, cols2, quadratic_from) -> None:
    """:func:`mid_point_inertia` from the step's start momenta p0 (n_el, n_x) (:func:`start_momenta`):
    F and, with ``jacobian`` (which needs ``tangent``), J written in place; with ``tangent`` F is
    the one of the tangent's pass, also without J (the same values bit for bit, in about half the
    time: a Newton pass that converges needs F alone, and the solve's log and iterates stay the same),
    else the value alone's (equal to round-off)."""
    R0 = np.empty((3, 3))
    for e in range(u0.shape[0]):
        z1 = u1[e] - u0[e]
        _chart_start(u0[e, 3:6], u1[e, 3:6], R0, z1[3:6])
        f, Jf = _mid_point_element(G, entry_z, entry_w, (P0, P1, P2, quadratic_from), (EtG0, E1tG, E2tG, cols1, cols2),
                                   weights, floor, R0, u0[e, 6:].copy(), v0[e].copy(), p0[e], z1, dt, tangent,
                                   jacobian)
        F[e] = f
        if jacobian:
            J[e] = Jf


@jit
def mid_point_inertia(G, entry_z, entry_w, weights, floor, u0, u1, v0, dt, F, J, tangent, P0, P1, P2, EtG0, E1tG,
                      E2tG, cols1, cols2, quadratic_from) -> None:
    """F (n_el, n_x), conjugate to the chart increments z1 of the step u0 -> u1 (n_el, n_x) each, and
    with ``tangent`` J = dF/dz1 (n_el, n_x, n_x), written in place; v0 (n_el, n_x) the velocity at the
    step's start (= the chart velocity at z = 0). E(q) on its nonzero entries' rows and columns (entry_z,
    entry_w) (n_e,) each: the polynomials P0 (n_e,), P1 (n_m, n_e), P2 (n_m, n_m, n_2) of their values (P2
    on the entries quadratic_from ... quadratic_from + n_2 - 1, the only ones quadratic in q) and the
    constant products EtG0 (n_x, n_z), E1tG (n_m, n1, n_z), E2tG (n_m, n_m, n2, n_z) on the columns cols1
    (n1,), cols2 (n2,) (module docstring)."""
    p0 = np.empty(u0.shape)
    start_momenta(G, entry_z, entry_w, u0, v0, P0, P1, P2, quadratic_from, p0)
    mid_point_inertia_from(G, entry_z, entry_w, weights, floor, u0, u1, v0, p0, dt, F, J, tangent, tangent, P0, P1,
                           P2, EtG0, E1tG, E2tG, cols1, cols2, quadratic_from)


@jit
def mid_point_velocity(u0, u1, v0, dt, v1) -> None:
    """The body's end velocity v1 (n_el, n_x) of a mid-point step, in place: zdot1 = 2 z1/dt - v0 in
    the chart, the spatial angular velocity D(w1) wdot1 = s (wdot1 + w1 x wdot1/2)."""
    R0, w = np.empty((3, 3)), np.empty(3)
    for e in range(u0.shape[0]):
        _chart_start(u0[e, 3:6], u1[e, 3:6], R0, w)
        for i in range(u0.shape[1]):
            v1[e, i] = 2.0 * (u1[e, i] - u0[e, i]) / dt - v0[e, i]
        y = 2.0 * w / dt - v0[e, 3:6]
        s = 1.0 / (1.0 + 0.25 * (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]))
        v1[e, 3] = s * (y[0] + 0.5 * (w[1] * y[2] - w[2] * y[1]))
        v1[e, 4] = s * (y[1] + 0.5 * (w[2] * y[0] - w[0] * y[2]))
        v1[e, 5] = s * (y[2] + 0.5 * (w[0] * y[1] - w[1] * y[0]))


# ------------------------------------------------------------------ end-point inertia: exact tangent
@jit
def _add_hat_product(c, M, out) -> None:
    """out (3, k) += hat(c) M for c (3,), M (3, k): the columns c x M[:, i]."""
    for i in range(M.shape[1]):
        out[0, i] += c[1] * M[2, i] - c[2] * M[1, i]
        out[1, i] += c[2] * M[0, i] - c[0] * M[2, i]
        out[2, i] += c[0] * M[1, i] - c[1] * M[0, i]


@jit
def _spatial_rows(A, M):
    """P^T M = (A^T M_V, A^T M_Omega, M_q) (n_x, k) for body-frame rows M (n_x, k), P = blockdiag(A, A, I)."""
    out = M.copy()
    for c in range(M.shape[1]):
        for i in range(3):
            out[i, c] = A[0, i] * M[0, c] + A[1, i] * M[1, c] + A[2, i] * M[2, c]
            out[3 + i, c] = A[0, i] * M[3, c] + A[1, i] * M[4, c] + A[2, i] * M[5, c]
    return out


@jit
def _rate_coefficients(index, value, q, qd, n_z: int, n_x: int):
    """dE[qd] = sum_k qd_k dE/dq_k (n_z, n_x), dense."""
    Er = np.zeros((n_z, n_x))
    for t in range(value.size):
        k, l = index[t, 2], index[t, 3]
        if k < 0:
            continue
        rate = qd[k] if l < 0 else qd[k] * q[l] + q[k] * qd[l]
        Er[index[t, 0], index[t, 1]] += value[t] * rate
    return Er


@jit
def _add_gyroscopic(W, p, body) -> None:
    """body (n_x,) += (Omega x p_V, Omega x p_Omega + V x p_V, 0) for W = (V, Omega, qd), p = Mt W."""
    V, Om = W[:3], W[3:6]
    for i in range(3):
        i1, i2 = (i + 1) % 3, (i + 2) % 3
        body[i] += Om[i1] * p[i2] - Om[i2] * p[i1]
        body[3 + i] += Om[i1] * p[3 + i2] - Om[i2] * p[3 + i1] + V[i1] * p[i2] - V[i2] * p[i1]


@jit
def _end_point_element(G, index, value, entry_z, entry_w, R, q, v, a, dv_du: float, da_du: float,
                       tangent: bool):
    """Lagrange's inertia force F (n_x,) of one element at the rotation R (3, 3) and, with ``tangent``,
    J = dF/d(spin, q) + dv_du dF/dv + da_du dF/da (n_x, n_x) (module docstring; else an empty matrix)."""
    n, n_z = v.size, G.shape[0]
    A = np.ascontiguousarray(R.T)
    qd = v[6:].copy()
    acc = a.copy()                                                              # R V' = rddot - omega x rdot
    acc[0] -= v[4] * v[2] - v[5] * v[1]
    acc[1] -= v[5] * v[0] - v[3] * v[2]
    acc[2] -= v[3] * v[1] - v[4] * v[0]
    W, Wd = _body_of(A, A, v), _body_of(A, A, acc)
    E = _coefficients(index, value, q, n_z, n)
    Er = _rate_coefficients(index, value, q, qd, n_z, n)
    if not tangent:
        Gz = G @ (E @ W)
        p = E.T @ Gz
        body = E.T @ (G @ (E @ Wd + Er @ W)) + Er.T @ Gz                       # Mt W' + dMt[qd] W
        _add_gyroscopic(W, p, body)
        body[6:] -= 0.5 * _modal_gradient(index, value, q, W, Gz, W, Gz)        # -1/2 W dMt_k W
        return _spatial_of(A, A, body), np.empty((0, 0))
    EtG = _gram_rows(G, E, entry_z, entry_w)
    Mt = EtG @ E
    X = EtG @ Er
    dM = X + X.T                                                                # dMt[qd]
    p = Mt @ W
    MR, Y, Gz = _mass_rates(index, value, q, EtG, W)                            # dMt_k W (n_x, n_m)
    body = Mt @ Wd + dM @ W
    _add_gyroscopic(W, p, body)
    body[6:] -= 0.5 * (W @ MR)
    F = _spatial_of(A, A, body)
    # L = d body / d W at fixed W' and qd: dMt[qd] plus the gyroscopic and -1/2 W dMt W terms' derivatives
    L = dM.copy()
    V, Om = W[:3].copy(), W[3:6].copy()
    _add_hat(p[:3], -1.0, L[0:3, 3:6])                                           # -hat(p_V) dOmega
    _add_hat_product(Om, Mt[0:3], L[0:3])                                       # Omega x Mt_V dW
    _add_hat(p[3:6], -1.0, L[3:6, 3:6])                                          # -hat(p_Omega) dOmega
    _add_hat_product(Om, Mt[3:6], L[3:6])
    _add_hat(p[:3], -1.0, L[3:6, 0:3])                                           # -hat(p_V) dV
    _add_hat_product(V, Mt[0:3], L[3:6])
    L[6:] -= MR.T
    # d body / dv: L P + Mt dW'/dv (W'_V = R^T (a_r - omega x v_r)) + dMt_k W on qd
    P = np.eye(n)
    P[0:3, 0:3], P[3:6, 3:6] = A, A
    Bv = L @ P
    Bv[:, 6:] += MR
    turn = np.zeros((3, 3))
    _add_hat(v[3:6], -1.0, turn)                                                # -hat(omega)
    Bv[:, 0:3] += np.ascontiguousarray(Mt[:, 0:3]) @ (A @ turn)
    turn[:] = 0.0
    _add_hat(v[0:3], 1.0, turn)                                                 # hat(v_r)
    Bv[:, 3:6] += np.ascontiguousarray(Mt[:, 0:3]) @ (A @ turn)
    # d body / dq: dMt_k W' + d(dMt[qd])/dq_k W + the gyroscopic terms of dp = dMt_k W - 1/2 W d2Mt W
    MRd = _mass_rates(index, value, q, EtG, Wd)[0]
    ErtG = _gram_rows(G, Er, entry_z, entry_w)
    Bq = (MRd + _term_rates(index, value, qd, Gz, n, True, True)
          + EtG @ _term_rates(index, value, qd, W, n_z, True, False)
          + ErtG @ Y + _term_rates(index, value, q, ErtG.T @ W, n, False, True))
    _add_hat_product(Om, MR[0:3], Bq[0:3])
    _add_hat_product(Om, MR[3:6], Bq[3:6])
    _add_hat_product(V, MR[0:3], Bq[3:6])
    Bq[6:] -= 0.5 * _modal_hessian(G, index, value, Y, Y, W, W, Gz, Gz)
    # d body / d spin: W and W' turn with R (d(R^T x) = R^T hat(x) eta)
    Pe, Ped = np.zeros((n, 3)), np.zeros((n, 3))
    turn[:] = 0.0
    _add_hat(v[0:3], 1.0, turn)
    Pe[0:3] = A @ turn
    turn[:] = 0.0
    _add_hat(v[3:6], 1.0, turn)
    Pe[3:6] = A @ turn
    turn[:] = 0.0
    _add_hat(acc[0:3], 1.0, turn)
    Ped[0:3] = A @ turn
    turn[:] = 0.0
    _add_hat(a[3:6], 1.0, turn)
    Ped[3:6] = A @ turn
    J = dv_du * _spatial_rows(A, Bv) + da_du * _spatial_rows(A, Mt @ P)
    J[:, 3:6] += _spatial_rows(A, L @ Pe + Mt @ Ped)
    _add_hat(F[0:3], -1.0, J[0:3, 3:6])                                         # d(R y)/d eta = -hat(R y)
    _add_hat(F[3:6], -1.0, J[3:6, 3:6])
    J[:, 6:] += _spatial_rows(A, Bq)
    return F, J


@jit
def end_point_inertia(G, index, value, entry_z, entry_w, u, v, a, dv_du, da_du, F, J, tangent) -> None:
    """F (n_el, n_x) at the rotations R = exp(hat(psi)) of u (n_el, n_x) and, with ``tangent``, J =
    dF/d(u, spin) + dv_du dF/dv + da_du dF/da (n_el, n_x, n_x; at the rotations w.r.t. a spin of R at
    fixed v, a), in place; E(q)'s merged terms and nonzero entries as :func:`mid_point_inertia`."""
    R = np.empty((3, 3))
    for e in range(u.shape[0]):
        exp_map_into(u[e, 3:6], R)
        f, Je = _end_point_element(G, index, value, entry_z, entry_w, R, u[e, 6:].copy(), v[e].copy(),
                                   a[e].copy(), dv_du, da_du, tangent)
        F[e] = f
        if tangent:
            J[e] = Je


# ------------------------------------------------------------------ energy, momentum
@jit
def energy_and_angular_momentum(G, index, value, X, u, v):
    """Sums over the elements of T = 1/2 v . p (J) and of the angular momentum about the global origin
    L = r x p_r + R p_Omega (3,), kg m^2/s, with p = Mg v the chart momentum at z = 0 (D(0) = I),
    R = exp(hat(psi)) and r = X + u[:3]; merged terms of E(q) (index, value) as :func:`mid_point_inertia`."""
    n = u.shape[1]
    T, L = 0.0, np.zeros(3)
    R = np.empty((3, 3))
    for e in range(u.shape[0]):
        exp_map_into(u[e, 3:6], R)
        A = np.ascontiguousarray(R.T)
        p = _chart_momentum(G, index, value, A, A, u[e, 6:].copy(), v[e].copy())
        for i in range(n):
            T += 0.5 * p[i] * v[e, i]
        r0, r1, r2 = X[e, 0] + u[e, 0], X[e, 1] + u[e, 1], X[e, 2] + u[e, 2]
        L[0] += r1 * p[2] - r2 * p[1] + p[3]
        L[1] += r2 * p[0] - r0 * p[2] + p[4]
        L[2] += r0 * p[1] - r1 * p[0] + p[5]
    return T, L


# ------------------------------------------------------------------ gravity (complex steps in lanes)
@jit
def _cross(a, b):
    """a x b (3, m) of a, b (3, m)."""
    out = np.empty((3, a.shape[1]), dtype=np.complex128)
    for d in range(a.shape[1]):
        out[0, d] = a[1, d] * b[2, d] - a[2, d] * b[1, d]
        out[1, d] = a[2, d] * b[0, d] - a[0, d] * b[2, d]
        out[2, d] = a[0, d] * b[1, d] - a[1, d] * b[0, d]
    return out


@jit
def _apply(A, y):
    """A y (3, m) of A (3, 3, m), y (3, m)."""
    out = np.zeros((3, y.shape[1]), dtype=np.complex128)
    for i in range(3):
        for j in range(3):
            for d in range(y.shape[1]):
                out[i, d] += A[i, j, d] * y[j, d]
    return out


@jit
def _apply_transpose(A, y):
    """A^T y (3, m) of A (3, 3, m), y (3, m)."""
    out = np.zeros((3, y.shape[1]), dtype=np.complex128)
    for i in range(3):
        for j in range(3):
            for d in range(y.shape[1]):
                out[i, d] += A[j, i, d] * y[j, d]
    return out


@jit
def _cayley_frame(w, R0):
    """R = cay(w) R0 (3, 3, m), D(w) = s (I + hat(w)/2) (3, 3, m) and s = 1/(1 + w.w/4) (m,) for the
    Cayley parameters w (3, m) and the real start rotation R0 (3, 3); cay(w) = I + s (hat(w) +
    hat(w)^2/2) with hat(w)^2 = w w^T - (w.w) I."""
    m = w.shape[1]
    R = np.zeros((3, 3, m), dtype=np.complex128)
    D = np.empty((3, 3, m), dtype=np.complex128)
    s = np.empty(m, dtype=np.complex128)
    C = np.empty((3, 3), dtype=np.complex128)
    for d in range(m):
        x, y, z = w[0, d], w[1, d], w[2, d]
        ww = x * x + y * y + z * z
        s[d] = 1.0 / (1.0 + 0.25 * ww)
        c = s[d]
        for i in range(3):
            for j in range(3):
                C[i, j] = c * 0.5 * w[i, d] * w[j, d]
            C[i, i] += 1.0 - c * 0.5 * ww
        C[0, 1] -= c * z
        C[1, 0] += c * z
        C[0, 2] += c * y
        C[2, 0] -= c * y
        C[1, 2] -= c * x
        C[2, 1] += c * x
        for i in range(3):
            for j in range(3):
                for k in range(3):
                    R[i, j, d] += C[i, k] * R0[k, j]
        for i in range(3):
            for j in range(3):
                D[i, j, d] = 0.0
            D[i, i, d] = s[d]
        D[0, 1, d], D[1, 0, d] = -0.5 * s[d] * z, 0.5 * s[d] * z
        D[0, 2, d], D[2, 0, d] = 0.5 * s[d] * y, -0.5 * s[d] * y
        D[1, 2, d], D[2, 1, d] = -0.5 * s[d] * x, 0.5 * s[d] * x
    return R, D, s


@jit
def _set_rows(out, first: int, y) -> None:
    """out[first:first + 3] = y (3, m)."""
    for i in range(3):
        for d in range(y.shape[1]):
            out[first + i, d] = y[i, d]


@jit
def _modal(q0, dq):
    """q = q0 + dq (n_m, m) for the real q0 (n_m,) and the lanes dq (n_m, m)."""
    out = np.empty(dq.shape, dtype=np.complex128)
    for k in range(dq.shape[0]):
        for d in range(dq.shape[1]):
            out[k, d] = q0[k] + dq[k, d]
    return out


@jit
def _spun(R, dz):
    """R + hat(dz[3:6]) R (3, 3, m): the rotation moved by a spin (exact to first order)."""
    out = np.empty((3, 3, dz.shape[1]), dtype=np.complex128)
    for d in range(dz.shape[1]):
        x, y, z = dz[3, d], dz[4, d], dz[5, d]
        for j in range(3):
            out[0, j, d] = R[0, j] - z * R[1, j] + y * R[2, j]
            out[1, j, d] = R[1, j] + z * R[0, j] - x * R[2, j]
            out[2, j, d] = R[2, j] - y * R[0, j] + x * R[1, j]
    return out


@jit
def _gravity_gradient(mass, S0, S1, S2, R, q, g):
    """-dV/d(r, spin, q) (n_x, m): (m g, (R S) x g, dS/dq R^T g), R (3, 3, m)."""
    n, m = q.shape
    S, dS = _first_moment(S0, S1, S2, q)
    field = np.empty((3, m), dtype=np.complex128)
    for i in range(3):
        for d in range(m):
            field[i, d] = g[i]
    moment = _cross(_apply(R, S), field)
    gb = _apply_transpose(R, field)                                                # R^T g
    F = np.empty((6 + n, m), dtype=np.complex128)
    for d in range(m):
        for i in range(3):
            F[i, d] = mass * g[i]
            F[3 + i, d] = moment[i, d]
        for k in range(n):
            F[6 + k, d] = dS[k, 0, d] * gb[0, d] + dS[k, 1, d] * gb[1, d] + dS[k, 2, d] * gb[2, d]
    return F


@jit
def gravity_force(mass, S0, S1, S2, R, u, g, F, J) -> None:
    """F = -dV/d(x, spin) (n_el, n_x) and its derivative (n_el, n_x, n_x; at the rotations w.r.t. a
    spin of R (n_el, 3, 3)), in place."""
    n = u.shape[1]
    for e in range(u.shape[0]):
        dz = _lanes(np.zeros(n), n, 1.0)
        _store(_gravity_gradient(mass, S0, S1, S2, _spun(R[e], dz), _modal(u[e, 6:], dz[6:]), g), F, J, e,
               np.bool_(True))                                       # (a bool, not a literal: one compilation)


@jit
def _chart_potential(mass, S0, S1, S2, r0, R0, q0, z, g):
    """V(z) = -g . (m (r0 + dr) + cay(w) R0 S(q0 + dq)) (m,), J."""
    R, _, _ = _cayley_frame(z[3:6], R0)
    S, _ = _first_moment(S0, S1, S2, _modal(q0, z[6:]))
    RS = _apply(R, S)
    V = np.empty(z.shape[1], dtype=np.complex128)
    for d in range(z.shape[1]):
        V[d] = 0.0
        for i in range(3):
            V[d] -= g[i] * (mass * (r0[i] + z[i, d]) + RS[i, d])
    return V


@jit
def mid_point_gravity(mass, S0, S1, S2, weights, floor, r0, R0, q0, z1, g, F, J) -> None:
    """Gravity force over a step (n_el, n_x), conjugate to the chart increments z1 (n_el, n_x), with
    F . z1 = V(0) - V(z1) exactly: -grad_z V(z1/2) (on w: D^T ((R S) x g)) plus Gonzalez's correction;
    and its derivative w.r.t. z1 (n_el, n_x, n_x), in place. r0 (n_el, 3) the frame origins, R0 (n_el,
    3, 3) and q0 (n_el, n_m) the start of the step."""
    n = z1.shape[1]
    zero = np.zeros((n, n), dtype=np.complex128)
    for e in range(z1.shape[0]):
        z = _lanes(z1[e], n, 1.0)
        zm = _sum(z, 0.5, z, 0.0)
        R, D, _ = _cayley_frame(zm[3:6], R0[e])
        f = _gravity_gradient(mass, S0, S1, S2, R, _modal(q0[e], zm[6:]), g)
        _set_rows(f, 3, _apply_transpose(D, f[3:6]))
        V0 = _chart_potential(mass, S0, S1, S2, r0[e], R0[e], q0[e], zero, g)
        V1 = _chart_potential(mass, S0, S1, S2, r0[e], R0[e], q0[e], z, g)
        work = _dot(z, f)
        remainder = np.empty(n, dtype=np.complex128)
        for d in range(n):
            remainder[d] = V0[d] - V1[d] - work[d]
        _store(_sum(f, 1.0, _gonzalez(remainder, z, weights, floor), 1.0), F, J, e, np.bool_(True))
