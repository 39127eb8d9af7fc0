"""Compiled kernels of the spatial co-rotational beam (:class:`flexmb.elements.beam3d.Beam3D`).

The specification is the numpy implementation in :mod:`flexmb.elements.beam3d` (the functions and
methods named ``reference_*``); the equations (Meijaard 1993 generalized strains, the angle map,
the second-order strains of eq. 16, the energy-conserving mid-point force) are written out in
that module's docstring and not repeated here. What differs is only the evaluation: one element
at a time inside a compiled loop, with the structure of the matrices used instead of dense
products:

* Translation invariance: every row ``G_i = de_i/dq`` has ``G_i[6:9] = -G_i[0:3]`` (the strains
  depend on the translations through the chord only), and so do the columns and rows of every
  tangent here. Rows, forces and tangents are built on the nine *reduced* DOFs
  ``[x_p, theta_p, theta_q]`` and expanded at the end (:func:`_expand_force`, :func:`_expand_tangent`).
* The angle map ``eh(e)`` has a Jacobian ``Ah = diag(ahd) + ahc e_0^T`` (each angle depends on its
  own strain and on the elongation) and second derivatives with three non-zeros per strain.
* The sum over the bilinear strains of ``s~_i dG_i/dq`` collapses to a few 3x3 blocks
  (:func:`_add_pair_stiffness`), because each triad vector's Jacobian is a 3x3 block at its node.

All kernels take the section properties as separate per-element arrays (as :class:`Beam3D` holds
them), take the chord from :func:`flexmb.compiled.corotational.chord` (shared with the truss and
planar beam), compute the section frame of each element inline, and return the index of the
first element whose y axis is parallel to it (-1 if none), for the caller to report.

``error_model="numpy"``: a rotation increment of a half turn gives infinite Cayley parameters, as
in the reference, instead of raising ZeroDivisionError inside the compiled loop.
"""
from __future__ import annotations

import numba
import numpy as np

from flexmb.compiled.corotational import chord

_SMALL_ANGLE = 1e-4                 # rad; below it exp_map uses its series (as flexmb.rotations)
_SINE_LIMIT = 1.0 - 1e-12           # |sine| of an angle strain is clipped below 1, as the reference
_GAUSS_X, _GAUSS_WX = np.polynomial.legendre.leggauss(4)
_GAUSS_T, _GAUSS_W = 0.5 * (_GAUSS_X + 1.0), 0.5 * _GAUSS_WX       # four-point Gauss rule on [0, 1]
_ROUND_OFF = 64.0 * np.finfo(float).eps       # relative energy miss the mid-point stresses may leave
_FULL = np.array([0, 1, 2, 3, 4, 5, 9, 10, 11])  # reduced DOF [x_p, theta_p, theta_q] -> element DOF


# --------------------------------------------------------------------------- small 3x3 helpers
@numba.njit(cache=True, error_model="numpy")
def _hat_times(a: np.ndarray, M: np.ndarray, out: np.ndarray) -> None:
    """out = hat(a) M (3, 3): each column is a x M[:, j]."""
    for j in range(3):
        out[0, j] = a[1] * M[2, j] - a[2] * M[1, j]
        out[1, j] = a[2] * M[0, j] - a[0] * M[2, j]
        out[2, j] = a[0] * M[1, j] - a[1] * M[0, j]


@numba.njit(cache=True, error_model="numpy")
def _minus_times_hat(G: np.ndarray, a: np.ndarray, out: np.ndarray) -> None:
    """out = -G hat(a) (3, 3): the Jacobian P = d e_{n+1}/dw of a triad vector (G = I for spins)."""
    for i in range(3):
        out[i, 0] = -(G[i, 1] * a[2] - G[i, 2] * a[1])
        out[i, 1] = -(G[i, 2] * a[0] - G[i, 0] * a[2])
        out[i, 2] = -(G[i, 0] * a[1] - G[i, 1] * a[0])


@numba.njit(cache=True, error_model="numpy")
def _rotate_axes(psi: np.ndarray, E: np.ndarray, R: np.ndarray, ey: np.ndarray, ez: np.ndarray) -> None:
    """R = exp(hat(psi)) (Rodrigues, series below _SMALL_ANGLE) and the turned section axes
    ey = R E[:, 1], ez = R E[:, 2]."""
    p0, p1, p2 = psi[0], psi[1], psi[2]
    s0, s1, s2 = p0 * p0, p1 * p1, p2 * p2
    t2 = s0 + s1 + s2
    t = np.sqrt(t2)
    if t < _SMALL_ANGLE:
        a = 1.0 - t2 / 6.0 + t2 * t2 / 120.0
        b = 0.5 - t2 / 24.0 + t2 * t2 / 720.0
    else:
        a = np.sin(t) / t
        h = np.sin(0.5 * t) / (0.5 * t)
        b = 0.5 * h * h
    # R = I + a hat(psi) + b hat(psi)^2, hat(psi)^2 = psi psi^T - |psi|^2 I written without cancellation
    R[0, 0] = 1.0 - b * (s1 + s2)
    R[1, 1] = 1.0 - b * (s0 + s2)
    R[2, 2] = 1.0 - b * (s0 + s1)
    R[0, 1] = -a * p2 + b * p0 * p1
    R[1, 0] = a * p2 + b * p0 * p1
    R[0, 2] = a * p1 + b * p0 * p2
    R[2, 0] = -a * p1 + b * p0 * p2
    R[1, 2] = -a * p0 + b * p1 * p2
    R[2, 1] = a * p0 + b * p1 * p2
    for i in range(3):
        ey[i] = R[i, 0] * E[0, 1] + R[i, 1] * E[1, 1] + R[i, 2] * E[2, 1]
        ez[i] = R[i, 0] * E[0, 2] + R[i, 1] * E[1, 2] + R[i, 2] * E[2, 2]


@numba.njit(cache=True, error_model="numpy")
def _axial_product(R1: np.ndarray, R0: np.ndarray, i: int, j: int) -> float:
    """Component of the axial vector of R1 R0^T: ((R1 R0^T)_ij - (R1 R0^T)_ji) / 2."""
    rij = R1[i, 0] * R0[j, 0] + R1[i, 1] * R0[j, 1] + R1[i, 2] * R0[j, 2]
    rji = R1[j, 0] * R0[i, 0] + R1[j, 1] * R0[i, 1] + R1[j, 2] * R0[i, 2]
    return 0.5 * (rij - rji)


@numba.njit(cache=True, error_model="numpy")
def _cayley_resolvent(R1: np.ndarray, R0: np.ndarray, G: np.ndarray) -> None:
    """G = (I - hat(w)/2)^-1 for the Cayley parameters w of R1 R0^T (see flexmb.rotations)."""
    tr = 0.0
    for i in range(3):
        tr += R1[i, 0] * R0[i, 0] + R1[i, 1] * R0[i, 1] + R1[i, 2] * R0[i, 2]
    w0 = 4.0 * _axial_product(R1, R0, 2, 1) / (1.0 + tr)
    w1 = 4.0 * _axial_product(R1, R0, 0, 2) / (1.0 + tr)
    w2 = 4.0 * _axial_product(R1, R0, 1, 0) / (1.0 + tr)
    f = 1.0 / (1.0 + 0.25 * (w0 * w0 + w1 * w1 + w2 * w2))
    G[0, 0] = (1.0 + 0.25 * w0 * w0) * f
    G[1, 1] = (1.0 + 0.25 * w1 * w1) * f
    G[2, 2] = (1.0 + 0.25 * w2 * w2) * f
    G[0, 1] = (-0.5 * w2 + 0.25 * w0 * w1) * f
    G[1, 0] = (0.5 * w2 + 0.25 * w0 * w1) * f
    G[0, 2] = (0.5 * w1 + 0.25 * w0 * w2) * f
    G[2, 0] = (-0.5 * w1 + 0.25 * w0 * w2) * f
    G[1, 2] = (-0.5 * w0 + 0.25 * w1 * w2) * f
    G[2, 1] = (0.5 * w0 + 0.25 * w1 * w2) * f


# ------------------------------------------------------------------------ element kinematics
@numba.njit(cache=True, error_model="numpy")
def _kinematics(X: np.ndarray, u: np.ndarray, e: int, y_axis: np.ndarray, E: np.ndarray, V: np.ndarray,
                Rp: np.ndarray, Rq: np.ndarray, X21: np.ndarray) -> tuple[bool, float, float, float]:
    """Section frame E (3, 3), nodal rotations Rp, Rq and vector slots V (5, 3) = [l, e_y^p,
    e_z^p, e_y^q, e_z^q] of element e (X21: (3,) scratch for the reference chord); returns
    (frame ok, l0, l, l - l0 without cancellation)."""
    l0, l, stretch = chord(X, u, e, 6, X21, V[0])
    E[0, 0], E[1, 0], E[2, 0] = X21[0] / l0, X21[1] / l0, X21[2] / l0
    if y_axis.shape[0] == 0:                      # default: e_z x e_x, or global y along z
        h0, h1, h2 = -E[1, 0], E[0, 0], 0.0
        if np.sqrt(h0 * h0 + h1 * h1) < 1e-8:
            h0, h1, h2 = 0.0, 1.0, 0.0
    else:
        h0, h1, h2 = y_axis[e, 0], y_axis[e, 1], y_axis[e, 2]
    along = h0 * E[0, 0] + h1 * E[1, 0] + h2 * E[2, 0]
    y0, y1, y2 = h0 - along * E[0, 0], h1 - along * E[1, 0], h2 - along * E[2, 0]
    norm = np.sqrt(y0 * y0 + y1 * y1 + y2 * y2)
    ok = norm >= 1e-8 * max(np.sqrt(h0 * h0 + h1 * h1 + h2 * h2), 1e-300)
    E[0, 1], E[1, 1], E[2, 1] = y0 / norm, y1 / norm, y2 / norm
    E[0, 2] = E[1, 0] * E[2, 1] - E[2, 0] * E[1, 1]
    E[1, 2] = E[2, 0] * E[0, 1] - E[0, 0] * E[2, 1]
    E[2, 2] = E[0, 0] * E[1, 1] - E[1, 0] * E[0, 1]
    _rotate_axes(u[e, 3:6], E, Rp, V[1], V[2])
    _rotate_axes(u[e, 9:12], E, Rq, V[3], V[4])
    return ok, l0, l, stretch


@numba.njit(cache=True, error_model="numpy")
def _strains(V: np.ndarray, l0: float, stretch: float, eps: np.ndarray) -> None:
    """Generalized strains e (6,) of Meijaard's eq. (2) from the vector slots V (5, 3)."""
    l, yp, zp, yq, zq = V[0], V[1], V[2], V[3], V[4]
    eps[0] = stretch
    eps[1] = (0.5 * l0) * (zp[0] * yq[0] + zp[1] * yq[1] + zp[2] * yq[2]) \
        + (-0.5 * l0) * (yp[0] * zq[0] + yp[1] * zq[1] + yp[2] * zq[2])
    eps[2] = -(l[0] * zp[0] + l[1] * zp[1] + l[2] * zp[2])
    eps[3] = l[0] * zq[0] + l[1] * zq[1] + l[2] * zq[2]
    eps[4] = l[0] * yp[0] + l[1] * yp[1] + l[2] * yp[2]
    eps[5] = -(l[0] * yq[0] + l[1] * yq[1] + l[2] * yq[2])


@numba.njit(cache=True, error_model="numpy")
def _section_stiffness(EA: float, GJ: float, EI_y: float, EI_z: float, GA_ky: float, GA_kz: float,
                       l0: float, S: np.ndarray) -> None:
    """Generalized-stress stiffness S (6, 6) of Meijaard's eqs. (5)-(6)."""
    S[:, :] = 0.0
    S[0, 0] = EA / l0
    S[1, 1] = GJ / l0 ** 3
    for k, EI, GAk in ((2, EI_y, GA_kz), (4, EI_z, GA_ky)):
        f = 12.0 * EI / (GAk * l0 ** 2)                                   # 0 for GAk = inf
        c = EI / ((1.0 + f) * l0 ** 3)
        S[k, k] = S[k + 1, k + 1] = c * (4.0 + f)
        S[k, k + 1] = S[k + 1, k] = c * (-2.0 + f)


# ------------------------------------------------------------------------------ strain energy
@numba.njit(cache=True, error_model="numpy")
def _energy(eps: np.ndarray, l0: float, S: np.ndarray, second_order: bool, eh: np.ndarray, ahd: np.ndarray,
            ahc: np.ndarray, d2: np.ndarray, A: np.ndarray, ebar: np.ndarray, sigma: np.ndarray) -> float:
    """Energy Phi of the strains e (6,), with ebar, sigma = S ebar and what derivatives need.

    Angle map (``_angle_strains`` of the reference): angle strains eh (6,), ``Ah = deh/de =
    diag(ahd) + ahc e_0^T``, ``d2[k] = (d2eh_k/de_k^2, d2eh_k/de_k de_0, d2eh_k/de_0^2)``.
    Second-order map: A = debar/deh (6, 6).
    """
    eh[0] = eps[0]
    ahd[0], ahc[0] = 1.0, 0.0
    d2[0, 0] = d2[0, 1] = d2[0, 2] = 0.0
    L = l0 + eps[0]                                                       # current chord length
    for k in range(1, 6):
        den = l0 if k == 1 else L
        x = min(max(eps[k] / den, -_SINE_LIMIT), _SINE_LIMIT)
        a1 = 1.0 / np.sqrt(1.0 - x * x)                                   # asin'
        a2 = x * a1 ** 3                                                  # asin''
        eh[k] = l0 * np.arcsin(x)
        dxk = 1.0 / den
        ahd[k] = (l0 * a1) * dxk
        d2[k, 0] = l0 * (a2 * dxk * dxk)
        if k == 1:
            ahc[k] = d2[k, 1] = d2[k, 2] = 0.0
        else:
            dx0 = -eps[k] / L ** 2
            ahc[k] = (l0 * a1) * dx0
            d2[k, 1] = l0 * (a2 * dxk * dx0 + a1 * (-1.0 / L ** 2))
            d2[k, 2] = l0 * (a2 * dx0 * dx0 + a1 * (2.0 * eps[k] / L ** 3))
    A[:, :] = 0.0
    for i in range(6):
        A[i, i] = 1.0
    if second_order:                  # A = I + Ce, Ce[k] = C_k eh / l0 (Meijaard eq. 16)
        r = 1.0 / l0
        A[0, 2] = (4.0 * eh[2] + eh[3]) / 30.0 * r
        A[0, 3] = (eh[2] + 4.0 * eh[3]) / 30.0 * r
        A[0, 4] = (4.0 * eh[4] + eh[5]) / 30.0 * r
        A[0, 5] = (eh[4] + 4.0 * eh[5]) / 30.0 * r
        A[1, 2], A[1, 3], A[1, 4], A[1, 5] = -eh[5] * r, eh[4] * r, eh[3] * r, -eh[2] * r
        bend_y, bend_z, twist = (eh[4] + eh[5]) / 6.0 * r, (eh[2] + eh[3]) / 6.0 * r, eh[1] / 6.0 * r
        A[2, 1], A[2, 4], A[2, 5] = bend_y, twist, twist
        A[3, 1], A[3, 4], A[3, 5] = -bend_y, -twist, -twist
        A[4, 1], A[4, 2], A[4, 3] = -bend_z, -twist, -twist
        A[5, 1], A[5, 2], A[5, 3] = bend_z, twist, twist
        for k in range(6):                                                # ebar = eh + Ce eh / 2
            acc = 0.0
            for i in range(1, 6):
                if i != k:
                    acc += A[k, i] * eh[i]
            ebar[k] = eh[k] + 0.5 * acc
    else:
        ebar[:] = eh
    phi = 0.0
    for i in range(6):
        acc = 0.0
        for j in range(6):
            acc += S[i, j] * ebar[j]
        sigma[i] = acc
        phi += ebar[i] * acc
    return 0.5 * phi


@numba.njit(cache=True, error_model="numpy")
def _add_congruence(M: np.ndarray, ahd: np.ndarray, ahc: np.ndarray, H: np.ndarray) -> None:
    """H += Ah^T M Ah with Ah = diag(ahd) + ahc e_0^T (6, 6):
    ``d_i M_ij d_j``, plus ``(c^T M)_j d_j`` in row 0, ``d_i (M c)_i`` in column 0, ``c^T M c`` at (0, 0)."""
    cM_c = 0.0
    for i in range(6):
        Mc_i = 0.0
        cM_i = 0.0
        for k in range(6):
            Mc_i += M[i, k] * ahc[k]
            cM_i += ahc[k] * M[k, i]
        for j in range(6):
            H[i, j] += ahd[i] * M[i, j] * ahd[j]
        H[0, i] += cM_i * ahd[i]
        H[i, 0] += ahd[i] * Mc_i
        cM_c += ahc[i] * Mc_i
    H[0, 0] += cM_c


@numba.njit(cache=True, error_model="numpy")
def _stress_terms(sigma: np.ndarray, A: np.ndarray, ahd: np.ndarray, ahc: np.ndarray, d2: np.ndarray,
                  l0: float, second_order: bool, hessian: bool, tau: np.ndarray, grad: np.ndarray,
                  H: np.ndarray, W: np.ndarray) -> None:
    """grad = Ah^T tau, tau = A^T s (6,); if ``hessian``, the part of d2Phi/de2 linear in s in two
    pieces: H = sum_k tau_k d2eh_k/de2 (6, 6) and, for :func:`_add_hessian_congruence` to finish,
    W = sum_k s_k C_k / l0 (6, 6; zero for the first-order element)."""
    for i in range(6):
        acc = 0.0
        for k in range(6):
            acc += A[k, i] * sigma[k]
        tau[i] = acc
    acc = 0.0
    for i in range(6):
        grad[i] = ahd[i] * tau[i]
        acc += ahc[i] * tau[i]
    grad[0] += acc
    if not hessian:
        return
    H[:, :] = 0.0
    H[1, 1] = tau[1] * d2[1, 0]
    for k in range(2, 6):
        H[k, k] += tau[k] * d2[k, 0]
        H[k, 0] += tau[k] * d2[k, 1]
        H[0, k] += tau[k] * d2[k, 1]
        H[0, 0] += tau[k] * d2[k, 2]
    W[:, :] = 0.0
    if second_order:
        r = 1.0 / l0
        diag, pair = 4.0 * sigma[0] / 30.0 * r, sigma[0] / 30.0 * r
        for k in range(2, 6):
            W[k, k] = diag
        W[2, 3] = W[3, 2] = W[4, 5] = W[5, 4] = pair
        W[2, 5] = W[5, 2] = -sigma[1] * r
        W[3, 4] = W[4, 3] = sigma[1] * r
        W[1, 4] = W[4, 1] = W[1, 5] = W[5, 1] = (sigma[2] - sigma[3]) / 6.0 * r
        W[1, 2] = W[2, 1] = W[1, 3] = W[3, 1] = (sigma[5] - sigma[4]) / 6.0 * r


@numba.njit(cache=True, error_model="numpy")
def _add_hessian_congruence(S: np.ndarray, A: np.ndarray, second_order: bool, material: bool,
                            ahd: np.ndarray, ahc: np.ndarray, H: np.ndarray, W: np.ndarray,
                            N: np.ndarray) -> None:
    """H += Ah^T (W + A^T S A) Ah, the material part A^T S A only with ``material`` (A = I for the
    first-order element); W from :func:`_stress_terms`.

    A = I + Ce with the pattern of eq. (16): column 1 of Ce is non-zero in rows 2-5, columns 2
    and 3 in rows 0, 1, 4, 5, columns 4 and 5 in rows 0-3; A^T N = N + Ce^T N skips the zeros.
    """
    if material and not second_order:
        for i in range(6):
            for j in range(6):
                W[i, j] += S[i, j]
    elif material:
        for j in range(6):              # N = S A, S block diagonal: (0), (1), (2, 3), (4, 5)
            N[0, j] = S[0, 0] * A[0, j]
            N[1, j] = S[1, 1] * A[1, j]
            for k in (2, 4):
                N[k, j] = S[k, k] * A[k, j] + S[k, k + 1] * A[k + 1, j]
                N[k + 1, j] = S[k + 1, k] * A[k, j] + S[k + 1, k + 1] * A[k + 1, j]
        for j in range(6):                                                # W += A^T N
            W[0, j] += N[0, j]
            W[1, j] += N[1, j] + A[2, 1] * N[2, j] + A[3, 1] * N[3, j] + A[4, 1] * N[4, j] + A[5, 1] * N[5, j]
            for i in (2, 3):
                W[i, j] += N[i, j] + A[0, i] * N[0, j] + A[1, i] * N[1, j] + A[4, i] * N[4, j] + A[5, i] * N[5, j]
            for i in (4, 5):
                W[i, j] += N[i, j] + A[0, i] * N[0, j] + A[1, i] * N[1, j] + A[2, i] * N[2, j] + A[3, i] * N[3, j]
    if material or second_order:
        _add_congruence(W, ahd, ahc, H)


# ----------------------------------------------------------------------- rows and stiffness
@numba.njit(cache=True, error_model="numpy")
def _jt(Vj: np.ndarray, G: np.ndarray, v: np.ndarray, coef: float, out: np.ndarray) -> None:
    """out += coef * J^T v for a triad vector with J = -G hat(Vj): J^T v = Vj x (G^T v)."""
    g0 = G[0, 0] * v[0] + G[1, 0] * v[1] + G[2, 0] * v[2]
    g1 = G[0, 1] * v[0] + G[1, 1] * v[1] + G[2, 1] * v[2]
    g2 = G[0, 2] * v[0] + G[1, 2] * v[1] + G[2, 2] * v[2]
    out[0] += coef * (Vj[1] * g2 - Vj[2] * g1)
    out[1] += coef * (Vj[2] * g0 - Vj[0] * g2)
    out[2] += coef * (Vj[0] * g1 - Vj[1] * g0)


@numba.njit(cache=True, error_model="numpy")
def _rows(Vb: np.ndarray, Vj: np.ndarray, Gp: np.ndarray, Gq: np.ndarray, row0: np.ndarray, l0: float,
          out: np.ndarray) -> None:
    """Reduced rows (6, 9) over [x_p, theta_p, theta_q] of the bilinear strains' derivative.

    ``G_i = coef (J_a^T b + J_b^T a)`` for each pair (a, b) of strain i, with the vectors b taken
    from Vb (5, 3) and the triad Jacobians ``-G_node hat(Vj_s)``; row 0 is ``J_l^T row0``.
    (Static rows: Vb = Vj = current vectors, G = I; mid-point rows: Vb = Vj = averages, G = I;
    derivative of the end-of-step strains: Vb = end vectors, Vj = averages, G = Cayley resolvents.)
    """
    out[:, :] = 0.0
    l, yp, zp, yq, zq = Vb[0], Vb[1], Vb[2], Vb[3], Vb[4]
    for i in range(3):
        out[0, i] = -row0[i]
        out[2, i] = zp[i]                                                 # e3 = -l . e_z^p
        out[3, i] = -zq[i]                                                # e4 = l . e_z^q
        out[4, i] = -yp[i]                                                # e5 = l . e_y^p
        out[5, i] = yq[i]                                                 # e6 = -l . e_y^q
    half = 0.5 * l0
    _jt(Vj[2], Gp, yq, half, out[1, 3:6])                                 # e2: torsion
    _jt(Vj[1], Gp, zq, -half, out[1, 3:6])
    _jt(Vj[3], Gq, zp, half, out[1, 6:9])
    _jt(Vj[4], Gq, yp, -half, out[1, 6:9])
    _jt(Vj[2], Gp, l, -1.0, out[2, 3:6])
    _jt(Vj[4], Gq, l, 1.0, out[3, 6:9])
    _jt(Vj[1], Gp, l, 1.0, out[4, 3:6])
    _jt(Vj[3], Gq, l, -1.0, out[5, 6:9])


@numba.njit(cache=True, error_model="numpy")
def _add_sandwich(Gl: np.ndarray, H: np.ndarray, Gr: np.ndarray, K: np.ndarray, T: np.ndarray) -> None:
    """K (9, 9) += Gl^T H Gr with reduced rows Gl, Gr (6, 9) of the pattern :func:`_rows` builds:
    the x_p columns are non-zero in rows 0, 2, 3, 4, 5 (chord and bending), the theta_p columns
    in rows 1, 2, 4, the theta_q columns in rows 1, 3, 5; the zeros are skipped (T: (6, 9) scratch)."""
    for i in range(6):                                                    # T = H Gr
        for j in range(3):
            T[i, j] = (H[i, 0] * Gr[0, j] + H[i, 2] * Gr[2, j] + H[i, 3] * Gr[3, j] + H[i, 4] * Gr[4, j]
                       + H[i, 5] * Gr[5, j])
            T[i, 3 + j] = H[i, 1] * Gr[1, 3 + j] + H[i, 2] * Gr[2, 3 + j] + H[i, 4] * Gr[4, 3 + j]
            T[i, 6 + j] = H[i, 1] * Gr[1, 6 + j] + H[i, 3] * Gr[3, 6 + j] + H[i, 5] * Gr[5, 6 + j]
    for j in range(9):                                                    # K += Gl^T T
        for i in range(3):
            K[i, j] += (Gl[0, i] * T[0, j] + Gl[2, i] * T[2, j] + Gl[3, i] * T[3, j] + Gl[4, i] * T[4, j]
                        + Gl[5, i] * T[5, j])
            K[3 + i, j] += Gl[1, 3 + i] * T[1, j] + Gl[2, 3 + i] * T[2, j] + Gl[4, 3 + i] * T[4, j]
            K[6 + i, j] += Gl[1, 6 + i] * T[1, j] + Gl[3, 6 + i] * T[3, j] + Gl[5, 6 + i] * T[5, j]


@numba.njit(cache=True, error_model="numpy")
def _add_chord_pairs(w_y: float, w_z: float, sy: int, r: int, Vm: np.ndarray, G: np.ndarray, K: np.ndarray,
                     c: np.ndarray, B: np.ndarray, C: np.ndarray) -> None:
    """The chord pairs (l, e_y), (l, e_z) of one node's triad with weights w_y, w_z (slots sy, sy + 1,
    rotation block at reduced index r): with c = w_y e_y + w_z e_z and B = sum w_b P_b = -G hat(c),
    ``K[x_p, node] -= B``, ``K[node, x_p] -= hat(c)`` (J_b^T J_l) and ``K[node, node] -= hat(l) B``."""
    for i in range(3):
        c[i] = w_y * Vm[sy, i] + w_z * Vm[sy + 1, i]
    _minus_times_hat(G, c, B)
    _hat_times(Vm[0], B, C)
    for i in range(3):
        for j in range(3):
            K[i, r + j] -= B[i, j]
            K[r + i, r + j] -= C[i, j]
    K[r + 0, 1] += c[2]
    K[r + 0, 2] -= c[1]
    K[r + 1, 0] -= c[2]
    K[r + 1, 2] += c[0]
    K[r + 2, 0] += c[1]
    K[r + 2, 1] -= c[0]


@numba.njit(cache=True, error_model="numpy")
def _add_torsion_pair(w: float, a: np.ndarray, b: np.ndarray, Gp: np.ndarray, Gq: np.ndarray, K: np.ndarray,
                      B: np.ndarray, C: np.ndarray) -> None:
    """The torsion pair w (a . b) of a triad vector a at p and b at q: ``K[p, q] += w hat(a) P_b``,
    ``K[q, p] += w hat(b) P_a`` and the self terms ``K[p, p] -= w hat(b) P_a``, ``K[q, q] -= w hat(a) P_b``."""
    _minus_times_hat(Gq, b, B)
    _hat_times(a, B, C)
    for i in range(3):
        for j in range(3):
            K[3 + i, 6 + j] += w * C[i, j]
            K[6 + i, 6 + j] -= w * C[i, j]
    _minus_times_hat(Gp, a, B)
    _hat_times(b, B, C)
    for i in range(3):
        for j in range(3):
            K[6 + i, 3 + j] += w * C[i, j]
            K[3 + i, 3 + j] -= w * C[i, j]


@numba.njit(cache=True, error_model="numpy")
def _add_pair_stiffness(weights: np.ndarray, kappa: float, Vm: np.ndarray, Gp: np.ndarray, Gq: np.ndarray,
                        l0: float, K: np.ndarray, c: np.ndarray, B: np.ndarray, C: np.ndarray) -> None:
    """K (9, 9) += sum_i weights_i dG_i/dd over the bilinear strains (``_pair_stiffness`` of the
    reference): the rows are built from the vectors Vm (5, 3), the end-of-step triad vectors move
    with ``P_s = -G_node hat(Vm_s)``, and kappa = dVm/dV_end (1 in statics, 1/2 mid-point)."""
    # e3 = -l . e_z^p, e5 = l . e_y^p; e4 = l . e_z^q, e6 = -l . e_y^q
    _add_chord_pairs(kappa * weights[4], -kappa * weights[2], 1, 3, Vm, Gp, K, c, B, C)
    _add_chord_pairs(-kappa * weights[5], kappa * weights[3], 3, 6, Vm, Gq, K, c, B, C)
    w_t = kappa * 0.5 * l0 * weights[1]                     # e2 = l0 (e_z^p . e_y^q - e_y^p . e_z^q) / 2
    _add_torsion_pair(w_t, Vm[2], Vm[3], Gp, Gq, K, B, C)
    _add_torsion_pair(-w_t, Vm[1], Vm[4], Gp, Gq, K, B, C)


@numba.njit(cache=True, error_model="numpy")
def _expand_force(qr: np.ndarray, q: np.ndarray) -> None:
    """Element force (12,) from the reduced one (9,): the force at x_q is minus that at x_p."""
    for i in range(9):
        q[_FULL[i]] = qr[i]
    for i in range(3):
        q[6 + i] = -qr[i]


@numba.njit(cache=True, error_model="numpy")
def _expand_tangent(Kr: np.ndarray, K: np.ndarray) -> None:
    """Element tangent (12, 12) from the reduced one (9, 9) (rows and columns of x_q negate x_p's)."""
    for i in range(9):
        fi = _FULL[i]
        for j in range(9):
            K[fi, _FULL[j]] = Kr[i, j]
        for j in range(3):
            K[fi, 6 + j] = -Kr[i, j]
    for i in range(3):
        for j in range(9):
            K[6 + i, _FULL[j]] = -Kr[i, j]
        for j in range(3):
            K[6 + i, 6 + j] = Kr[i, j]


@numba.njit(cache=True, error_model="numpy")
def _force(Gr: np.ndarray, weights: np.ndarray, qr: np.ndarray, q: np.ndarray) -> None:
    """q (12,) = G^T weights from reduced rows Gr (6, 9) (qr: (9,) scratch)."""
    for j in range(9):
        acc = 0.0
        for i in range(6):
            acc += Gr[i, j] * weights[i]
        qr[j] = acc
    _expand_force(qr, q)


# ---------------------------------------------------------------------------------- kernels
@numba.njit(cache=True, error_model="numpy")
def force_and_tangent(X: np.ndarray, u: np.ndarray, EA: np.ndarray, GJ: np.ndarray, EI_y: np.ndarray,
                      EI_z: np.ndarray, GA_ky: np.ndarray, GA_kz: np.ndarray, y_axis: np.ndarray,
                      second_order: bool, tangent: bool, stresses: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, int]:
    """Internal force q (n_el, 12) and tangent dq/d(spins) (n_el, 12, 12; (0, 12, 12) without
    ``tangent``); with ``stresses`` (n_el, 6) instead of an empty (0, 6) array, the geometric
    stiffness: the part of the tangent linear in those stresses (q is then G^T of them).

    X (n_el, 2, 3) reference nodes, u (n_el, 12) element DOFs, section arrays (n_el,) each,
    y_axis (n_el, 3) or (0, 3) for the default axes. Returns (q, K, first element with a y axis
    parallel to it or -1).
    """
    n = X.shape[0]
    geometric = stresses.shape[0] > 0
    q = np.empty((n, 12))
    K = np.empty((n if tangent else 0, 12, 12))
    # scratch, allocated once per call (few allocations: this kernel also serves single elements)
    m3, m6, v6, m69 = np.empty((6, 3, 3)), np.empty((5, 6, 6)), np.empty((7, 6)), np.empty((2, 6, 9))
    E, Rp, Rq, B, C, I3 = m3[0], m3[1], m3[2], m3[3], m3[4], m3[5]
    I3[:, :] = 0.0
    for i in range(3):
        I3[i, i] = 1.0
    S, A, H, W, N = m6[0], m6[1], m6[2], m6[3], m6[4]
    eps, ahd, ahc, ebar, sigma, grad, eh = v6[0], v6[1], v6[2], v6[3], v6[4], v6[5], v6[6]
    Gr, T = m69[0], m69[1]
    V, d2, Kr, qr, misc = np.empty((5, 3)), np.empty((6, 3)), np.empty((9, 9)), np.empty(9), np.empty((3, 6))
    tau, e_l, c3, X21 = misc[0], misc[1, 0:3], misc[2, 0:3], misc[2, 3:6]
    bad = -1
    for e in range(n):
        ok, l0, l, stretch = _kinematics(X, u, e, y_axis, E, V, Rp, Rq, X21)
        if not ok and bad < 0:
            bad = e
        _section_stiffness(EA[e], GJ[e], EI_y[e], EI_z[e], GA_ky[e], GA_kz[e], l0, S)
        _strains(V, l0, stretch, eps)
        _energy(eps, l0, S, second_order, eh, ahd, ahc, d2, A, ebar, sigma)
        if geometric:
            sigma[:] = stresses[e]
        _stress_terms(sigma, A, ahd, ahc, d2, l0, second_order, tangent, tau, grad, H, W)
        inv_l = 1.0 / l
        for i in range(3):
            e_l[i] = inv_l * V[0, i]
        _rows(V, V, I3, I3, e_l, l0, Gr)
        _force(Gr, grad, qr, q[e])
        if not tangent:
            continue
        _add_hessian_congruence(S, A, second_order, not geometric, ahd, ahc, H, W, N)
        Kr[:, :] = 0.0
        _add_sandwich(Gr, H, Gr, Kr, T)
        _add_pair_stiffness(grad, 1.0, V, I3, I3, l0, Kr, c3, B, C)
        for i in range(3):                                                # s0 J_l^T (I - n n^T)/l J_l
            for j in range(3):
                Kr[i, j] += grad[0] * ((1.0 if i == j else 0.0) - e_l[i] * e_l[j]) / l
        _expand_tangent(Kr, K[e])
    return q, K, bad


@numba.njit(cache=True, error_model="numpy")
def strain_state(X: np.ndarray, u: np.ndarray, EA: np.ndarray, GJ: np.ndarray, EI_y: np.ndarray,
                 EI_z: np.ndarray, GA_ky: np.ndarray, GA_kz: np.ndarray, y_axis: np.ndarray,
                 second_order: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Strain energy Phi (n_el,), strains ebar (n_el, 6), generalized stresses s (n_el, 6) and
    reference lengths l0 (n_el,); last the first element with a degenerate y axis or -1."""
    n = X.shape[0]
    phi, l0s = np.empty(n), np.empty(n)
    ebar, sigma = np.empty((n, 6)), np.empty((n, 6))
    m3, m6, v6 = np.empty((3, 3, 3)), np.empty((2, 6, 6)), np.empty((4, 6))
    E, Rp, Rq = m3[0], m3[1], m3[2]
    S, A = m6[0], m6[1]
    eps, ahd, ahc, eh = v6[0], v6[1], v6[2], v6[3]
    V, d2, X21 = np.empty((5, 3)), np.empty((6, 3)), np.empty(3)
    bad = -1
    for e in range(n):
        ok, l0, l, stretch = _kinematics(X, u, e, y_axis, E, V, Rp, Rq, X21)
        if not ok and bad < 0:
            bad = e
        _section_stiffness(EA[e], GJ[e], EI_y[e], EI_z[e], GA_ky[e], GA_kz[e], l0, S)
        _strains(V, l0, stretch, eps)
        phi[e] = _energy(eps, l0, S, second_order, eh, ahd, ahc, d2, A, ebar[e], sigma[e])
        l0s[e] = l0
    return phi, ebar, sigma, l0s, bad


@numba.njit(cache=True, error_model="numpy")
def mid_point_force_and_tangent(X: np.ndarray, u0: np.ndarray, u1: np.ndarray, EA: np.ndarray,
                                GJ: np.ndarray, EI_y: np.ndarray, EI_z: np.ndarray, GA_ky: np.ndarray,
                                GA_kz: np.ndarray, y_axis: np.ndarray, second_order: bool, tangent: bool
                                ) -> tuple[np.ndarray, np.ndarray, int]:
    """Energy-conserving mid-point force (n_el, 12) and its derivative w.r.t. the step increment
    ``d = [dx_p, w_p, dx_q, w_q]`` (w Cayley parameters of R_{n+1} R_n^T) (n_el, 12, 12; (0, 12, 12)
    without ``tangent``); last the first element with a degenerate y axis or -1."""
    n = X.shape[0]
    q = np.empty((n, 12))
    K = np.empty((n if tangent else 0, 12, 12))
    # scratch, allocated once per call (few allocations: this kernel also serves single elements)
    m3, m6, v6, m69 = np.empty((10, 3, 3)), np.empty((6, 6, 6)), np.empty((12, 6)), np.empty((3, 6, 9))
    E, Rp0, Rq0, Rp1, Rq1, Gp, Gq, B, C, I3 = m3[0], m3[1], m3[2], m3[3], m3[4], m3[5], m3[6], m3[7], m3[8], m3[9]
    I3[:, :] = 0.0
    for i in range(3):
        I3[i, i] = 1.0
    S, A, H, W, N, dst_star = m6[0], m6[1], m6[2], m6[3], m6[4], m6[5]
    eps0, eps1, deps, eps_t, ahd, ahc = v6[0], v6[1], v6[2], v6[3], v6[4], v6[5]
    ebar, sigma, grad, st_star, grad1, eh = v6[6], v6[7], v6[8], v6[9], v6[10], v6[11]
    Gm, E1, T = m69[0], m69[1], m69[2]
    m53, d2, Kr, qr, misc = np.empty((3, 5, 3)), np.empty((6, 3)), np.empty((9, 9)), np.empty(9), np.empty((4, 6))
    V0, V1, Vm = m53[0], m53[1], m53[2]
    tau, e1, row0, c3, X21 = misc[0], misc[1, 0:3], misc[2, 0:3], misc[3, 0:3], misc[3, 3:6]
    bad = -1
    for e in range(n):
        ok, l0, l_0, stretch0 = _kinematics(X, u0, e, y_axis, E, V0, Rp0, Rq0, X21)
        ok, l0, l_1, stretch1 = _kinematics(X, u1, e, y_axis, E, V1, Rp1, Rq1, X21)
        if not ok and bad < 0:
            bad = e
        _section_stiffness(EA[e], GJ[e], EI_y[e], EI_z[e], GA_ky[e], GA_kz[e], l0, S)
        _strains(V0, l0, stretch0, eps0)
        _strains(V1, l0, stretch1, eps1)
        for i in range(6):
            deps[i] = eps1[i] - eps0[i]
        # s* = int_0^1 s~(e_n + t de) dt, and its derivative along the step for the tangent
        st_star[:] = 0.0
        dst_star[:, :] = 0.0
        for g in range(4):
            t, wt = _GAUSS_T[g], _GAUSS_W[g]
            for i in range(6):
                eps_t[i] = eps0[i] + t * deps[i]
            _energy(eps_t, l0, S, second_order, eh, ahd, ahc, d2, A, ebar, sigma)
            _stress_terms(sigma, A, ahd, ahc, d2, l0, second_order, tangent, tau, grad, H, W)
            for i in range(6):
                st_star[i] += wt * grad[i]
            if tangent:
                # np.bool_: a bool as the other callers', not a literal (one compilation)
                _add_hessian_congruence(S, A, second_order, np.bool_(True), ahd, ahc, H, W, N)
                for i in range(6):
                    for j in range(6):
                        dst_star[i, j] += wt * t * H[i, j]
        # discrete-gradient correction along de where the quadrature misses the energy increment
        phi0 = _energy(eps0, l0, S, second_order, eh, ahd, ahc, d2, A, ebar, sigma)
        phi1 = _energy(eps1, l0, S, second_order, eh, ahd, ahc, d2, A, ebar, sigma)
        miss = phi1 - phi0
        dd = 0.0
        for i in range(6):
            miss -= st_star[i] * deps[i]
            dd += deps[i] * deps[i]
        if abs(miss) > _ROUND_OFF * (abs(phi0) + abs(phi1)):
            cf = miss / dd
            if tangent:
                _stress_terms(sigma, A, ahd, ahc, d2, l0, second_order, np.bool_(False), tau, grad1, H, W)
                for i in range(6):                                        # d miss / d e_{n+1}
                    acc = grad1[i] - st_star[i]
                    for j in range(6):
                        acc -= dst_star[j, i] * deps[j]
                    grad[i] = acc / dd - (2.0 * cf / dd) * deps[i]        # d cf / d e_{n+1}
                for i in range(6):
                    for j in range(6):
                        dst_star[i, j] += deps[i] * grad[j]
                    dst_star[i, i] += cf
            for i in range(6):
                st_star[i] += cf * deps[i]
        # rows about the averaged vectors; row 0 = 2 J_l^T l_m / (|l_n| + |l_{n+1}|)
        L_sum = l_0 + l_1
        for s in range(5):
            for i in range(3):
                Vm[s, i] = 0.5 * (V0[s, i] + V1[s, i])
        for i in range(3):
            row0[i] = 2.0 / L_sum * Vm[0, i]
        _rows(Vm, Vm, I3, I3, row0, l0, Gm)
        _force(Gm, st_star, qr, q[e])
        if not tangent:
            continue
        _cayley_resolvent(Rp1, Rp0, Gp)
        _cayley_resolvent(Rq1, Rq0, Gq)
        for i in range(3):
            e1[i] = V1[0, i] / l_1
        _rows(V1, Vm, Gp, Gq, e1, l0, E1)                                 # d e_{n+1} / d d
        Kr[:, :] = 0.0
        _add_sandwich(Gm, dst_star, E1, Kr, T)
        _add_pair_stiffness(st_star, 0.5, Vm, Gp, Gq, l0, Kr, c3, B, C)
        for i in range(3):          # s*_0 d(row 0)/d d = s*_0 J_l^T (I / L_sum - 2 l_m e_1^T / L_sum^2) J_l
            for j in range(3):
                Kr[i, j] += st_star[0] * ((1.0 if i == j else 0.0) / L_sum
                                          - 2.0 * Vm[0, i] * e1[j] / L_sum ** 2)
        _expand_tangent(Kr, K[e])
    return q, K, bad
