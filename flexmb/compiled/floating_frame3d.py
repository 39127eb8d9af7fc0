"""Compiled kernels of the 3D modal body on a floating frame (:mod:`flexmb.elements.floating_frame3d`):
mid-point inertia and weight in the chart of the step's Cayley parameters, end-point (Lagrange)
inertia and weight, kinetic energy and angular momentum.

Specification: the ``reference_*`` methods of
:class:`~flexmb.elements.floating_frame3d.FloatingFrameMass3D` (the numpy implementation these replaced;
the formulas are in that module's docstring), against which ``tests/test_compiled_floating_frame3d.py``
checks these kernels to 1e-12, and their tangents against central differences.

Per element: DOF vectors (n_x,) = (r (3), rotation (3), q (n_m)), body-frame velocities w = (R^T rdot,
R^T omega, qdot), zeta = E(q) w (n_z,) and Mt(q) = E^T G E, E(q) as its nonzero terms
(:attr:`~flexmb.elements.velocity_fields.BodyVelocityFields.terms_index`) merged and gathered on E's
nonzero entries (``floating_frame3d._entry_terms``): E's products loop over its entries, E's values and
the modal gradient over its terms, the product with G is the 2D kernels' (:mod:`flexmb.compiled.floating_frame`,
as are the lanes, the Gonzalez correction and the store of value and tangent). Every quantity carries a last
axis of lanes (..., m), one lane per direction of a complex step (h = 1e-30, exact to round-off: no
difference is taken) or one lane for a value alone; vectors are (3, m), rotation matrices (3, 3, m).
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
    _times_G,
    jit,
)

_STEP = 1e-30                    # complex step (as flexmb.compiled.floating_frame._STEP)


# ------------------------------------------------------------------ 3-vectors and rotations in lanes
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
def _body(R, v_r, v_omega, v):
    """w = (R^T v_r, R^T v_omega, v[6:]) (n_x, m)."""
    w = v.copy()
    _set_rows(w, 0, _apply_transpose(R, v_r))
    _set_rows(w, 3, _apply_transpose(R, v_omega))
    return w


# ------------------------------------------------------------------ E(q) on its (z, w) entries
@jit
def _entries(index, value, entry, q, n_e: int):
    """The nonzero entries of E(q) (n_e, m): entry p at (entry_z[p], entry_w[p]) sums the terms t with
    entry[t] = p, value_t q_k q_l (no factor where k or l is -1)."""
    m = q.shape[1]
    Ep = np.zeros((n_e, m), dtype=np.complex128)
    for t in range(value.size):
        p, k, l = entry[t], index[t, 2], index[t, 3]
        a = value[t]
        if k < 0:
            for d in range(m):
                Ep[p, d] += a
        elif l < 0:
            for d in range(m):
                Ep[p, d] += a * q[k, d]
        else:
            for d in range(m):
                Ep[p, d] += a * q[k, d] * q[l, d]
    return Ep


@jit
def _rate_entries(index, value, entry, q, dq, n_e: int):
    """The entries of E's derivative along dq (n_m, m), dE[dq] (n_e, m): a term's factor q_k becomes
    dq_k, q_k q_l becomes dq_k q_l + q_k dq_l."""
    m = q.shape[1]
    Ep = np.zeros((n_e, m), dtype=np.complex128)
    for t in range(value.size):
        p, k, l = entry[t], index[t, 2], index[t, 3]
        if k < 0:
            continue
        a = value[t]
        if l < 0:
            for d in range(m):
                Ep[p, d] += a * dq[k, d]
        else:
            for d in range(m):
                Ep[p, d] += a * (dq[k, d] * q[l, d] + q[k, d] * dq[l, d])
    return Ep


@jit
def _times(entry_z, entry_w, Ep, w, n_z: int):
    """zeta = E w (n_z, m) from E's entries Ep (n_e, m) and w (n_x, m)."""
    m = w.shape[1]
    zeta = np.zeros((n_z, m), dtype=np.complex128)
    for p in range(entry_z.size):
        z, j = entry_z[p], entry_w[p]
        for d in range(m):
            zeta[z, d] += Ep[p, d] * w[j, d]
    return zeta


@jit
def _times_transposed(entry_z, entry_w, Ep, y, n_x: int):
    """E^T y (n_x, m) from E's entries Ep (n_e, m) and y (n_z, m)."""
    m = y.shape[1]
    out = np.zeros((n_x, m), dtype=np.complex128)
    for p in range(entry_z.size):
        z, j = entry_z[p], entry_w[p]
        for d in range(m):
            out[j, d] += Ep[p, d] * y[z, d]
    return out


@jit
def _add_modal_gradient(index, value, entry, entry_z, entry_w, q, wa, ya, wb, yb, scale: float, grad) -> None:
    """grad[6 + k] += scale (ya . dE_k wa + yb . dE_k wb) (per lane) for every mode k, dE_k = dE/dq_k:
    the products y_z w_j on E's entries first, then one pass over the terms."""
    m = wa.shape[1]
    outer = np.empty((entry_z.size, m), dtype=np.complex128)
    for p in range(entry_z.size):
        z, j = entry_z[p], entry_w[p]
        for d in range(m):
            outer[p, d] = scale * (wa[j, d] * ya[z, d] + wb[j, d] * yb[z, d])
    for t in range(value.size):
        p, k, l = entry[t], index[t, 2], index[t, 3]
        if k < 0:
            continue
        a = value[t]
        if l < 0:                               # branches outside the lane loops: those vectorize
            for d in range(m):
                grad[6 + k, d] += a * outer[p, d]
        else:
            for d in range(m):
                f = a * outer[p, d]
                grad[6 + k, d] += f * q[l, d]
                grad[6 + l, d] += f * q[k, d]


# ------------------------------------------------------------------ mid-point inertia (chart)
@jit
def _chart_momentum(G, index, value, entry, entry_z, entry_w, R0, q0, z, zdot):
    """Mz(z) zdot = (R p_V, D^T R p_Omega, p_q) (n_x, m), p = Mt(q) P(z) zdot."""
    n = z.shape[0]
    R, D, _ = _cayley_frame(z[3:6], R0)
    q = _modal(q0, z[6:])
    Ep = _entries(index, value, entry, q, entry_z.size)
    w = _body(R, zdot[:3], _apply(D, zdot[3:6]), zdot)
    p = _times_transposed(entry_z, entry_w, Ep, _times_G(G, _times(entry_z, entry_w, Ep, w, G.shape[0])), n)
    _set_rows(p, 0, _apply(R, p[:3]))
    _set_rows(p, 3, _apply_transpose(D, _apply(R, p[3:6])))
    return p


@jit
def _chart_form_gradient(G, index, value, entry, entry_z, entry_w, R0, q0, z, za, zb):
    """d(za^T Mz(z) zb)/dz (n_x, m), zero on r: on w, with omega = D wdot, p = Mt wb or Mt wa in
    spatial components (p_v, p_w), sum over (a, b) of D^T (p_v x y - omega x p_w) + s/2 (wdot x p_w -
    w (omega . p_w)); on q, the derivative of zeta_a^T G zeta_b through E(q)."""
    n, n_z, m = z.shape[0], G.shape[0], z.shape[1]
    w = z[3:6]
    R, D, s = _cayley_frame(w, R0)
    q = _modal(q0, z[6:])
    Ep = _entries(index, value, entry, q, entry_z.size)
    omega_a, omega_b = _apply(D, za[3:6]), _apply(D, zb[3:6])
    wa, wb = _body(R, za[:3], omega_a, za), _body(R, zb[:3], omega_b, zb)
    Gea = _times_G(G, _times(entry_z, entry_w, Ep, wa, n_z))
    Geb = _times_G(G, _times(entry_z, entry_w, Ep, wb, n_z))
    pa, pb = _times_transposed(entry_z, entry_w, Ep, Gea, n), _times_transposed(entry_z, entry_w, Ep, Geb, n)
    grad = np.zeros((n, m), dtype=np.complex128)
    for side in range(2):
        y, wdot = (za[:3], za[3:6]) if side == 0 else (zb[:3], zb[3:6])
        omega, p = (omega_a, pb) if side == 0 else (omega_b, pa)
        p_v, p_w = _apply(R, p[:3]), _apply(R, p[3:6])
        rot = _apply_transpose(D, _sum(_cross(p_v, y), 1.0, _cross(omega, p_w), -1.0))
        spin = _cross(wdot, p_w)
        for d in range(m):
            omega_p = omega[0, d] * p_w[0, d] + omega[1, d] * p_w[1, d] + omega[2, d] * p_w[2, d]
            for i in range(3):
                grad[3 + i, d] += rot[i, d] + 0.5 * s[d] * (spin[i, d] - w[i, d] * omega_p)
    _add_modal_gradient(index, value, entry, entry_z, entry_w, q, wa, Geb, wb, Gea, 1.0, grad)
    return grad


@jit
def _mid_point_force(G, index, value, entry, entry_z, entry_w, weights, floor, R0, q0, v0, p0, z1, dt):
    """F = (Mz(z1) zdot1 - p0)/dt - gbar (n_x, m) of one element, p0 = Mz(0) zdot0 given; with Mz
    symmetric, zdot0^T Mz(0) zdot1 = p0 . zdot1 and zdot0^T Mz(z1) zdot1 = zdot0 . p1."""
    zd1 = _sum(z1, 2.0 / dt, v0, -1.0)
    p1 = _chart_momentum(G, index, value, entry, entry_z, entry_w, R0, q0, z1, zd1)
    half_grad = _chart_form_gradient(G, index, value, entry, entry_z, entry_w, R0, q0, _sum(z1, 0.5, z1, 0.0),
                                     v0, zd1)
    phi1, phi0 = _dot(v0, p1), _dot(p0, zd1)
    z_grad = _dot(z1, half_grad)
    remainder = np.empty(z1.shape[1], dtype=np.complex128)
    for d in range(remainder.size):
        remainder[d] = 0.5 * (phi1[d] - phi0[d] - z_grad[d])                    # gbar = grad / 2 + correction
    return _sum(_sum(p1, 1.0 / dt, p0, -1.0 / dt), 1.0,
                _sum(half_grad, 0.5, _gonzalez(remainder, z1, weights, floor), 1.0), -1.0)


@jit
def mid_point_inertia(G, index, value, entry, entry_z, entry_w, weights, floor, R0, q0, v0, z1, dt, F, J,
                      tangent) -> None:
    """F (n_el, n_x), conjugate to the chart increments z1 (n_el, n_x), and with ``tangent`` J = dF/dz1
    (n_el, n_x, n_x), written in place; R0 (n_el, 3, 3) and q0 (n_el, n_m) the start of the step,
    v0 (n_el, n_x) its velocity (= the chart velocity at z = 0). E(q): its terms (index, value), the
    entry of each term (entry) and the entries' rows and columns (entry_z, entry_w)."""
    n = z1.shape[1]
    m = n if tangent else 1
    zero = np.zeros((n, 1), dtype=np.complex128)
    for e in range(z1.shape[0]):
        p0 = _chart_momentum(G, index, value, entry, entry_z, entry_w, R0[e], q0[e], zero, _lanes(v0[e], 1, 0.0))
        f = _mid_point_force(G, index, value, entry, entry_z, entry_w, weights, floor, R0[e], q0[e],
                             _lanes(v0[e], m, 0.0), _lanes(p0[:, 0], m, 0.0),
                             _lanes(z1[e], m, 1.0 if tangent else 0.0), dt)
        _store(f, F, J, e, tangent)


# ------------------------------------------------------------------ end-point inertia
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
def _end_point_force(G, index, value, entry, entry_z, entry_w, R, q, v, a):
    """Lagrange's inertia force (n_x, m) at the rotation R (3, 3, m): P^T [Mt w' + dMt[qdot] w +
    (Omega x p_V, Omega x p_Omega + V x p_V, -1/2 w dMt w)], w' = (R^T (rddot - omega x rdot),
    R^T omegadot, qddot), dMt[qdot] w = E^T G dE[qdot] w + dE[qdot]^T G E w."""
    n, n_z = v.shape[0], G.shape[0]
    Ep, Er = _entries(index, value, entry, q, entry_z.size), _rate_entries(index, value, entry, q, v[6:],
                                                                            entry_z.size)
    w = _body(R, v[:3], v[3:6], v)
    wd = _body(R, _sum(a[:3], 1.0, _cross(v[3:6], v[:3]), -1.0), a[3:6], a)
    Gzeta = _times_G(G, _times(entry_z, entry_w, Ep, w, n_z))
    p = _times_transposed(entry_z, entry_w, Ep, Gzeta, n)                      # body-frame momenta Mt w
    zeta = _sum(_times(entry_z, entry_w, Ep, wd, n_z), 1.0, _times(entry_z, entry_w, Er, w, n_z), 1.0)
    body = _sum(_times_transposed(entry_z, entry_w, Ep, _times_G(G, zeta), n), 1.0,
                _times_transposed(entry_z, entry_w, Er, Gzeta, n), 1.0)        # Mt wd + dMt[qdot] w
    _set_rows(body, 0, _sum(body[:3], 1.0, _cross(w[3:6], p[:3]), 1.0))
    _set_rows(body, 3, _sum(_sum(body[3:6], 1.0, _cross(w[3:6], p[3:6]), 1.0), 1.0, _cross(w[:3], p[:3]), 1.0))
    _add_modal_gradient(index, value, entry, entry_z, entry_w, q, w, Gzeta, w, Gzeta, -0.5, body)  # -1/2 w dMt_k w
    _set_rows(body, 0, _apply(R, body[:3]))
    _set_rows(body, 3, _apply(R, body[3:6]))
    return body


@jit
def end_point_inertia(G, index, value, entry, entry_z, entry_w, R, u, v, a, dv_du, da_du, F, J, tangent) -> None:
    """F (n_el, n_x) at the rotations R (n_el, 3, 3) and, with ``tangent``, J = dF/d(u, spin) + dv_du
    dF/dv + da_du dF/da (n_el, n_x, n_x; at the rotations w.r.t. a spin of R at fixed v, a), in place."""
    n = u.shape[1]
    m, step = (n, 1.0) if tangent else (1, 0.0)
    for e in range(u.shape[0]):
        dz = _lanes(np.zeros(n), m, step)
        q = _modal(u[e, 6:], dz[6:])
        f = _end_point_force(G, index, value, entry, entry_z, entry_w, _spun(R[e], dz), q,
                             _lanes(v[e], m, step * dv_du), _lanes(a[e], m, step * da_du))
        _store(f, F, J, e, tangent)


# ------------------------------------------------------------------ energy, momentum
@jit
def energy_and_angular_momentum(G, index, value, entry, entry_z, entry_w, R, X, u, v):
    """Sums over the elements of T = 1/2 v . p (J) and of the angular momentum about the global origin
    L = r x p_r + R p_Omega (3,), kg m^2/s, with p = Mg v the chart momentum at z = 0 (D(0) = I) and
    r = X + u[:3]; R (n_el, 3, 3) the frame rotations."""
    n = u.shape[1]
    zero = np.zeros((n, 1), dtype=np.complex128)
    T, L = 0.0, np.zeros(3)
    for e in range(u.shape[0]):
        p = _chart_momentum(G, index, value, entry, entry_z, entry_w, R[e], u[e, 6:], zero, _lanes(v[e], 1, 0.0))
        for i in range(n):
            T += 0.5 * p[i, 0].real * v[e, i]
        r0, r1, r2 = X[e, 0] + u[e, 0], X[e, 1] + u[e, 1], X[e, 2] + u[e, 2]
        L[0] += r1 * p[2, 0].real - r2 * p[1, 0].real + p[3, 0].real
        L[1] += r2 * p[0, 0].real - r0 * p[2, 0].real + p[4, 0].real
        L[2] += r0 * p[1, 0].real - r1 * p[0, 0].real + p[5, 0].real
    return T, L


# ------------------------------------------------------------------ gravity
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
        _store(_gravity_gradient(mass, S0, S1, S2, _spun(R[e], dz), _modal(u[e, 6:], dz[6:]), g), F, J, e, True)


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
        _store(_sum(f, 1.0, _gonzalez(remainder, z, weights, floor), 1.0), F, J, e, True)
