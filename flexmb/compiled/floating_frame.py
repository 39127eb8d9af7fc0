"""Compiled kernels of the modal body on a floating frame, 2D (:mod:`flexmb.cms.floating_frame`):
mid-point and end-point inertia, mid-point and end-point weight, kinetic energy and angular momentum.

Specification: the ``reference_*`` methods of :class:`flexmb.cms.floating_frame.FloatingFrameMass`
(the formulas, the mid-point scheme's discrete gradient and Gonzalez's correction are in the module
docstring of :mod:`flexmb.cms.floating_frame`), against which ``tests/test_floating_frame.py`` checks
these kernels to 1e-12.

Per element: DOF vectors x = u_e = (u_x, u_y, theta, q_1 .. q_n) (n_x,), body-frame velocities
w = P(theta) xdot = (A^T rdot, thetadot, qdot) (n_x,), the velocity-field coefficients zeta = E(q) w
(n_z,) and the body-frame mass Mt(q) = E^T G E with the constant Gram matrix G (n_z, n_z). E(q) is
passed as its nonzero terms (:attr:`~flexmb.cms.velocity_fields.BodyVelocityFields.terms_index`),

    E(q) = sum_t value_t e_{z_t} e_{w_t}^T q_{k_t} q_{l_t}      (no factor q_k where k_t = -1),

207 terms for 3 stiffened modes against the 31 x 6 x (1 + 3 + 9) entries of E0, E1, E2: the products
with E and its derivatives are loops over them, and the only dense products are those with G.

Tangents by complex steps (h = 1e-30, exact to round-off: no difference is taken) along the n_x unit
directions of u1 (or of u, v, a moving together). Every quantity carries a last axis of *lanes*
(..., m): one lane per direction (m = n_x) for a value with its tangent, one lane for a value alone,
so that a loop over the terms of E or the entries of G serves all directions at once; all arithmetic
is complex128, one compiled code path for values (real parts) and derivatives (imaginary parts / h).
"""
from __future__ import annotations

import numba
import numpy as np

jit = numba.njit(cache=True)

_STEP = 1e-30                    # complex step (as flexmb.cms.floating_frame._STEP)


# ------------------------------------------------------------------ lanes
@jit
def _lanes(a, m: int, step: float):
    """(n, m) complex: a (n,) in each of m lanes, lane j moved by i h step along e_j (step 0: none)."""
    out = np.empty((a.size, m), dtype=np.complex128)
    for i in range(a.size):
        for d in range(m):
            out[i, d] = a[i]
    if step != 0.0:
        for j in range(m):
            out[j, j] += 1j * _STEP * step
    return out


@jit
def _dot(a, b):
    """Per lane sum_i a_i b_i (m,) of a, b (n, m)."""
    out = np.zeros(a.shape[1], dtype=np.complex128)
    for i in range(a.shape[0]):
        for d in range(a.shape[1]):
            out[d] += a[i, d] * b[i, d]
    return out


@jit
def _sum(a, alpha: float, b, beta: float):
    """alpha a + beta b (n, m): one loop (numba compiles each array expression as a kernel of its own)."""
    out = np.empty(a.shape, dtype=np.complex128)
    for i in range(a.shape[0]):
        for d in range(a.shape[1]):
            out[i, d] = alpha * a[i, d] + beta * b[i, d]
    return out


@jit
def _store(f, F, J, e: int, tangent: bool) -> None:
    """F[e] = the value, J[e, :, j] = d/dx_j from the lanes f (n_x, n_x) (or f (n_x, 1) alone)."""
    for i in range(f.shape[0]):
        F[e, i] = f[i, 0].real
    if tangent:
        for i in range(f.shape[0]):
            for j in range(f.shape[1]):
                J[e, i, j] = f[i, j].imag / _STEP


# ------------------------------------------------------------------ products with E(q) and G
@jit
def _times_E(index, value, q, w, n_z: int):
    """zeta = E(q) w (n_z, m) for q (n_m, m), w (n_x, m)."""
    m = w.shape[1]
    zeta = np.zeros((n_z, m), dtype=np.complex128)
    for t in range(value.size):
        z, j, k, l = index[t, 0], index[t, 1], index[t, 2], index[t, 3]
        a = value[t]
        if k < 0:
            for d in range(m):
                zeta[z, d] += a * w[j, d]
        elif l < 0:
            for d in range(m):
                zeta[z, d] += a * q[k, d] * w[j, d]
        else:
            for d in range(m):
                zeta[z, d] += a * q[k, d] * q[l, d] * w[j, d]
    return zeta


@jit
def _times_E_transposed(index, value, q, y, n_x: int):
    """E(q)^T y (n_x, m) for y (n_z, m)."""
    m = y.shape[1]
    out = np.zeros((n_x, m), dtype=np.complex128)
    for t in range(value.size):
        z, j, k, l = index[t, 0], index[t, 1], index[t, 2], index[t, 3]
        a = value[t]
        if k < 0:
            for d in range(m):
                out[j, d] += a * y[z, d]
        elif l < 0:
            for d in range(m):
                out[j, d] += a * q[k, d] * y[z, d]
        else:
            for d in range(m):
                out[j, d] += a * q[k, d] * q[l, d] * y[z, d]
    return out


@jit
def _add_rate_terms(index, value, q, dq, w, y, E_rate_w, E_rate_T_y) -> None:
    """E_rate_w += dE[dq] w (n_z, m) and E_rate_T_y += dE[dq]^T y (n_x, m): E's derivative along dq
    (n_m, m), whose factor of a term is dq_k or dq_k q_l + q_k dq_l."""
    m = w.shape[1]
    for t in range(value.size):
        z, j, k, l = index[t, 0], index[t, 1], index[t, 2], index[t, 3]
        if k < 0:
            continue
        a = value[t]
        if l < 0:
            for d in range(m):
                rate = a * dq[k, d]
                E_rate_w[z, d] += rate * w[j, d]
                E_rate_T_y[j, d] += rate * y[z, d]
        else:
            for d in range(m):
                rate = a * (dq[k, d] * q[l, d] + q[k, d] * dq[l, d])
                E_rate_w[z, d] += rate * w[j, d]
                E_rate_T_y[j, d] += rate * y[z, d]


@jit
def _add_modal_gradient(index, value, q, w, y, scale: float, grad) -> None:
    """grad[3 + k] += scale y . (dE/dq_k) w (per lane) for every mode k."""
    m = w.shape[1]
    for t in range(value.size):
        z, j, k, l = index[t, 0], index[t, 1], index[t, 2], index[t, 3]
        if k < 0:
            continue
        a = scale * value[t]
        if l < 0:                               # branches outside the lane loops: those vectorize
            for d in range(m):
                grad[3 + k, d] += a * w[j, d] * y[z, d]
        else:
            for d in range(m):
                f = a * w[j, d] * y[z, d]
                grad[3 + k, d] += f * q[l, d]
                grad[3 + l, d] += f * q[k, d]


@jit
def _add_frame_gradient(index, value, q, w, y, grad) -> None:
    """grad[2] += y . E(q) dw/dtheta (per lane), dw/dtheta = (w_y, -w_x, 0, ..) (:func:`_turned`):
    only the terms of E on the columns 0 and 1 (the frame velocity) contribute."""
    m = w.shape[1]
    for t in range(value.size):
        z, j, k, l = index[t, 0], index[t, 1], index[t, 2], index[t, 3]
        if j > 1:
            continue
        a = value[t] if j == 0 else -value[t]
        if k < 0:
            for d in range(m):
                grad[2, d] += a * w[1 - j, d] * y[z, d]
        elif l < 0:
            for d in range(m):
                grad[2, d] += a * q[k, d] * w[1 - j, d] * y[z, d]
        else:
            for d in range(m):
                grad[2, d] += a * q[k, d] * q[l, d] * w[1 - j, d] * y[z, d]


@jit
def _times_G(G, x):
    """G x (n_z, m) for the constant real G (n_z, n_z) and x (n_z, m): one real matrix product
    (BLAS) of G with the real and imaginary parts side by side, 2-3x faster than complex loops."""
    n, m = G.shape[0], x.shape[1]
    parts = np.empty((n, 2 * m))
    for j in range(n):
        for d in range(m):
            parts[j, d], parts[j, m + d] = x[j, d].real, x[j, d].imag
    y = G @ parts
    out = np.empty((n, m), dtype=np.complex128)
    for i in range(n):
        for d in range(m):
            out[i, d] = y[i, d] + 1j * y[i, m + d]
    return out


# ------------------------------------------------------------------ frame rotation
@jit
def _frame(x):
    """cos theta, sin theta (m,) of the lanes x (n_x, m)."""
    c, s = np.empty(x.shape[1], dtype=np.complex128), np.empty(x.shape[1], dtype=np.complex128)
    for d in range(x.shape[1]):
        c[d], s[d] = np.cos(x[2, d]), np.sin(x[2, d])
    return c, s


@jit
def _body_velocity(c, s, v):
    """w = P(theta) v = (A^T v_r, v_theta, v_q) (n_x, m)."""
    w = v.copy()
    for d in range(v.shape[1]):
        w[0, d] = c[d] * v[0, d] + s[d] * v[1, d]
        w[1, d] = -s[d] * v[0, d] + c[d] * v[1, d]
    return w


@jit
def _turned(w):
    """d(P(theta) v)/dtheta = (w_y, -w_x, 0, ..) (n_x, m)."""
    out = np.zeros_like(w)
    for d in range(w.shape[1]):
        out[0, d], out[1, d] = w[1, d], -w[0, d]
    return out


@jit
def _rotate_first_two(c, s, y) -> None:
    """y[:2] = A(theta) y[:2] in place (P^T on body-frame components)."""
    for d in range(y.shape[1]):
        y0 = c[d] * y[0, d] - s[d] * y[1, d]
        y[1, d] = s[d] * y[0, d] + c[d] * y[1, d]
        y[0, d] = y0


# ------------------------------------------------------------------ momentum, velocity form
@jit
def _momentum(G, index, value, x, v):
    """p = Mg(x) v = P^T E^T G E P v (n_x, m)."""
    c, s = _frame(x)
    q = x[3:]
    zeta = _times_E(index, value, q, _body_velocity(c, s, v), G.shape[0])
    p = _times_E_transposed(index, value, q, _times_G(G, zeta), x.shape[0])
    _rotate_first_two(c, s, p)
    return p


@jit
def _velocity_form_gradient(G, index, value, x, va, vb):
    """d(va^T Mg(x) vb)/dx (n_x, m), zero on r: through zeta_a^T G zeta_b, zeta = E(q) P(theta) v."""
    c, s = _frame(x)
    q = x[3:]
    n_z = G.shape[0]
    wa, wb = _body_velocity(c, s, va), _body_velocity(c, s, vb)
    Gza = _times_G(G, _times_E(index, value, q, wa, n_z))
    Gzb = _times_G(G, _times_E(index, value, q, wb, n_z))
    grad = np.zeros(x.shape, dtype=np.complex128)
    _add_frame_gradient(index, value, q, wa, Gzb, grad)
    _add_frame_gradient(index, value, q, wb, Gza, grad)
    _add_modal_gradient(index, value, q, wa, Gzb, 1.0, grad)
    _add_modal_gradient(index, value, q, wb, Gza, 1.0, grad)
    return grad


@jit
def _gonzalez(remainder, dx, weights, floor: float):
    """Gonzalez's correction remainder W dx / (dx^T W dx) (n_x, m), zero below the floor."""
    n, m = dx.shape
    out = np.zeros((n, m), dtype=np.complex128)
    for d in range(m):
        norm = 0.0 + 0.0j
        for i in range(n):
            norm += weights[i] * dx[i, d] * dx[i, d]
        if norm.real > floor:
            factor = remainder[d] / norm
            for i in range(n):
                out[i, d] = factor * weights[i] * dx[i, d]
    return out


# ------------------------------------------------------------------ mid-point inertia
@jit
def _mid_point_force(G, index, value, weights, floor, x0, x1, v0, p0, dt):
    """F = (p1 - p0)/dt - gbar (n_x, m) of one element, p0 = Mg(x0) v0 given; with Mg symmetric,
    v0^T Mg(x0) v1 = p0 . v1 and v0^T Mg(x1) v1 = v0 . p1."""
    dx = _sum(x1, 1.0, x0, -1.0)
    v1 = _sum(dx, 2.0 / dt, v0, -1.0)
    p1 = _momentum(G, index, value, x1, v1)
    grad = _velocity_form_gradient(G, index, value, _sum(x0, 0.5, x1, 0.5), v0, v1)
    phi1, phi0, dx_grad = _dot(v0, p1), _dot(p0, v1), _dot(dx, grad)
    remainder = np.empty(dx.shape[1], dtype=np.complex128)
    for d in range(remainder.size):
        remainder[d] = 0.5 * (phi1[d] - phi0[d] - dx_grad[d])                 # gbar = grad / 2 + correction
    return _sum(_sum(p1, 1.0 / dt, p0, -1.0 / dt), 1.0, _sum(grad, 0.5, _gonzalez(remainder, dx, weights, floor), 1.0),
                -1.0)


@jit
def mid_point_inertia(G, index, value, weights, floor, u0, u1, v0, dt, F, J, tangent) -> None:
    """F (n_el, n_x) and, with ``tangent``, J = dF/du1 (n_el, n_x, n_x), written in place
    (specification: ``FloatingFrameMass.reference_mid_point_inertia``)."""
    n = u1.shape[1]
    m = n if tangent else 1
    for e in range(u1.shape[0]):
        p0 = _momentum(G, index, value, _lanes(u0[e], 1, 0.0), _lanes(v0[e], 1, 0.0))
        f = _mid_point_force(G, index, value, weights, floor, _lanes(u0[e], m, 0.0),
                             _lanes(u1[e], m, 1.0 if tangent else 0.0), _lanes(v0[e], m, 0.0),
                             _lanes(p0[:, 0], m, 0.0), dt)
        _store(f, F, J, e, tangent)


# ------------------------------------------------------------------ end-point inertia
@jit
def _end_point_force(G, index, value, x, v, a):
    """Lagrange's inertia force of one element (n_x, m): P^T [Mt (P a + v_theta w_theta) + dMt[q'] w
    + v_theta Jhat Mt w] - dT/dx, with dMt[q'] w = E^T G dE[q'] w + dE[q']^T G E w and
    dT/dx = (0, (Mt w)_t . w_theta, dE_k w . G E w)."""
    n, n_z = x.shape[0], G.shape[0]
    c, s = _frame(x)
    q = x[3:]
    w = _body_velocity(c, s, v)
    w_theta = _turned(w)
    Gzeta = _times_G(G, _times_E(index, value, q, w, n_z))
    p = _times_E_transposed(index, value, q, Gzeta, n)                      # body-frame momenta Mt w
    # E y + dE[q'] w with y = P a + v_theta w_theta, then Mt y + dMt[q'] w
    y = _body_velocity(c, s, a)
    for i in range(n):
        for d in range(x.shape[1]):
            y[i, d] += v[2, d] * w_theta[i, d]
    zeta_y = _times_E(index, value, q, y, n_z)
    rates = np.zeros((n, x.shape[1]), dtype=np.complex128)
    _add_rate_terms(index, value, q, v[3:], w, Gzeta, zeta_y, rates)
    body = _sum(rates, 1.0, _times_E_transposed(index, value, q, _times_G(G, zeta_y), n), 1.0)
    for d in range(x.shape[1]):
        body[0, d] -= v[2, d] * p[1, d]                                       # v_theta Jhat Mt w
        body[1, d] += v[2, d] * p[0, d]
    _rotate_first_two(c, s, body)
    for d in range(x.shape[1]):
        body[2, d] -= p[0, d] * w_theta[0, d] + p[1, d] * w_theta[1, d]
    _add_modal_gradient(index, value, q, w, Gzeta, -1.0, body)
    return body


@jit
def end_point_inertia(G, index, value, u, v, a, dv_du, da_du, F, J, tangent) -> None:
    """F (n_el, n_x) and, with ``tangent``, J = dF/du + dv_du dF/dv + da_du dF/da (n_el, n_x, n_x),
    in place (specification: ``FloatingFrameMass.reference_end_point_inertia``)."""
    n = u.shape[1]
    m, step = (n, 1.0) if tangent else (1, 0.0)
    for e in range(u.shape[0]):
        f = _end_point_force(G, index, value, _lanes(u[e], m, step), _lanes(v[e], m, step * dv_du),
                             _lanes(a[e], m, step * da_du))
        _store(f, F, J, e, tangent)


# ------------------------------------------------------------------ energy, momentum
@jit
def energy_and_angular_momentum(G, index, value, X, u, v) -> tuple[float, float]:
    """Sums over the elements of T = 1/2 v . Mg v (J) and of the angular momentum about the global
    origin p_theta + r x p_r (kg m^2/s) (specification:
    ``FloatingFrameMass.reference_energy_and_angular_momentum``)."""
    T, L = 0.0, 0.0
    for e in range(u.shape[0]):
        p = _momentum(G, index, value, _lanes(u[e], 1, 0.0), _lanes(v[e], 1, 0.0))
        for i in range(u.shape[1]):
            T += 0.5 * p[i, 0].real * v[e, i]
        L += p[2, 0].real + (X[e, 0] + u[e, 0]) * p[1, 0].real - (X[e, 1] + u[e, 1]) * p[0, 0].real
    return T, L


# ------------------------------------------------------------------ gravity
@jit
def _first_moment(S0, S1, S2, q):
    """S(q) = S0 + S1^T q + q S2 q (dim, m) and dS/dq (n_m, dim, m), S2 (n_m, n_m, dim) symmetric in
    k, l; dim = 2 or 3 (the 3D body's kernels use it too)."""
    n, m = q.shape
    dim = S0.shape[0]
    S = np.empty((dim, m), dtype=np.complex128)
    dS = np.empty((n, dim, m), dtype=np.complex128)
    for d in range(m):
        for i in range(dim):
            S[i, d] = S0[i]
            for l in range(n):
                qS2 = 0.0 + 0.0j                                               # sum_k q_k S2[k, l, i]
                for k in range(n):
                    qS2 += q[k, d] * S2[k, l, i]
                S[i, d] += q[l, d] * (S1[l, i] + qS2)
                dS[l, i, d] = S1[l, i] + 2.0 * qS2
    return S, dS


@jit
def _gravity_gradient(mass, S0, S1, S2, x, g):
    """-dV/dx (n_x, m): (m g, g_b . Jhat S, dS/dq g_b) with the body-frame field g_b = A^T g."""
    c, s = _frame(x)
    S, dS = _first_moment(S0, S1, S2, x[3:])
    F = np.empty(x.shape, dtype=np.complex128)
    for d in range(x.shape[1]):
        gb0, gb1 = c[d] * g[0] + s[d] * g[1], -s[d] * g[0] + c[d] * g[1]
        F[0, d], F[1, d] = mass * g[0], mass * g[1]
        F[2, d] = gb1 * S[0, d] - gb0 * S[1, d]
        for k in range(dS.shape[0]):
            F[3 + k, d] = dS[k, 0, d] * gb0 + dS[k, 1, d] * gb1
    return F


@jit
def _potential(mass, X, S0, S1, S2, x, g):
    """V = -g . (m r + A S(q)) (m,), J."""
    S, _ = _first_moment(S0, S1, S2, x[3:])
    V = np.empty(x.shape[1], dtype=np.complex128)
    for d in range(x.shape[1]):
        c, s = np.cos(x[2, d]), np.sin(x[2, d])
        V[d] = -((mass * (X[0] + x[0, d]) + c * S[0, d] - s * S[1, d]) * g[0]
                 + (mass * (X[1] + x[1, d]) + s * S[0, d] + c * S[1, d]) * g[1])
    return V


@jit
def _mid_point_gravity_force(mass, X, S0, S1, S2, weights, floor, x0, x1, g):
    """-grad V(x_m) plus the correction making F . dx = V0 - V1 exact (n_x, m)."""
    dx = _sum(x1, 1.0, x0, -1.0)
    F = _gravity_gradient(mass, S0, S1, S2, _sum(x0, 0.5, x1, 0.5), g)
    V0, V1, work = _potential(mass, X, S0, S1, S2, x0, g), _potential(mass, X, S0, S1, S2, x1, g), _dot(dx, F)
    remainder = np.empty(V0.size, dtype=np.complex128)
    for d in range(V0.size):
        remainder[d] = V0[d] - V1[d] - work[d]
    return _sum(F, 1.0, _gonzalez(remainder, dx, weights, floor), 1.0)


@jit
def gravity_force(mass, S0, S1, S2, u, g, F, J) -> None:
    """F = -dV/dx (n_el, n_x) and dF/dx (n_el, n_x, n_x), in place
    (specification: ``FloatingFrameMass.reference_gravity_force``)."""
    n = u.shape[1]
    for e in range(u.shape[0]):
        # np.bool_: a bool as the other callers' ``tangent``, not a literal (one compilation of _store)
        _store(_gravity_gradient(mass, S0, S1, S2, _lanes(u[e], n, 1.0), g), F, J, e, np.bool_(True))


@jit
def mid_point_gravity(mass, X, S0, S1, S2, weights, floor, u0, u1, g, F, J) -> None:
    """Gravity force over a step (n_el, n_x) and its derivative w.r.t. u1 (n_el, n_x, n_x), in place
    (specification: ``FloatingFrameMass.reference_mid_point_gravity``)."""
    n = u1.shape[1]
    for e in range(u1.shape[0]):
        f = _mid_point_gravity_force(mass, X[e], S0, S1, S2, weights, floor, _lanes(u0[e], n, 0.0),
                                     _lanes(u1[e], n, 1.0), g)
        _store(f, F, J, e, np.bool_(True))
