"""Compiled mid-point inertia of the planar cubic (Hermitian) mass, director form.

Specification: :func:`flexmb.elements.hermite_mass2d.reference_mid_point_inertia` (formulas and
their derivation in the docstring of :mod:`flexmb.elements.hermite_mass2d`). The inertia is split
as the one-call residual of :mod:`flexmb.compiled.mid_point_group` uses it: what comes from the
start of the step (:func:`inertia_start`, once per step), the director rule's rates at the nodes
(:func:`node_rates`, or the director step's own, :func:`director_node`) and the rest
(:func:`inertia_from_start`); :func:`mid_point_inertia` runs all three.
"""
from __future__ import annotations

import numba
import numpy as np

#: Hermite mass coefficients over [x_p, d_p, x_q, d_q] (multiply by rho_A l0)
_H = np.array([[156.0, 22.0, 54.0, -13.0], [22.0, 4.0, 13.0, -3.0],
               [54.0, 13.0, 156.0, -22.0], [-13.0, -3.0, -22.0, 4.0]]) / 420.0


@numba.njit(cache=True)
def _sinc_and_derivative(x: float) -> tuple[float, float]:
    """sin(x)/x and its derivative, with series near 0 (as :func:`flexmb.rotations.sinc`,
    :func:`~flexmb.rotations.sinc_derivative`)."""
    return _sinc_of(x, np.sin(x), np.cos(x))


@numba.njit(cache=True)
def _sinc_of(x: float, s: float, c: float) -> tuple[float, float]:
    """:func:`_sinc_and_derivative` of x from s = sin x and c = cos x."""
    if abs(x) < 1e-4:
        return 1.0 - x * x / 6.0 + x**4 / 120.0, -x / 3.0 + x**3 / 30.0
    return s / x, (c - s / x) / x


#: per element, the start-of-step quantities of the mid-point inertia (:func:`inertia_start`)
INERTIA_START = 12
#: per element node, what the director rule gives its inertia (:func:`node_rates`)
NODE_RATES = 8


@numba.njit(cache=True)
def inertia_start(alpha0, l0, u0, v0, stretch0, start):
    """What the mid-point inertia takes from the start of the step only, per element into start
    (n_el, INERTIA_START): Qdot_n of the slots [x_1, d_1, x_2, d_2] (4 x 2, m/s, row by row) and
    the cosines and sines of the director angles phi_n of both nodes (2 + 2). A step's Newton
    iterations share them (:mod:`flexmb.compiled.mid_point_group`)."""
    for e in range(u0.shape[0]):
        le = l0[e]
        for i in range(2):
            k, slot = 3 * i, 2 * i
            w0, s0 = v0[e, k + 2], stretch0[e, i]
            phi0 = alpha0[e] + u0[e, k + 2]
            c0, sn0 = np.cos(phi0), np.sin(phi0)
            # Qdot of x_i and of d_i = l0 e(phi): ddot = l0 (s e + w n), n = (-sin, cos)
            start[e, 2 * slot], start[e, 2 * slot + 1] = v0[e, k], v0[e, k + 1]
            start[e, 2 * slot + 2] = le * (s0 * c0 - w0 * sn0)
            start[e, 2 * slot + 3] = le * (s0 * sn0 + w0 * c0)
            start[e, 8 + i], start[e, 10 + i] = c0, sn0


@numba.njit(cache=True)
def mid_point_inertia(alpha0, l0, mass, u0, u1, v0, stretch0, dt, F, J, tangent):
    """F (n_el, 6) and, with ``tangent``, J = dF/du1 (n_el, 6, 6), written in place."""
    n_el = u0.shape[0]
    start, rates = np.empty((n_el, INERTIA_START)), np.empty((n_el, 2, NODE_RATES))
    inertia_start(alpha0, l0, u0, v0, stretch0, start)
    node_rates(u0, u1, v0, stretch0, dt, rates)
    inertia_from_start(alpha0, l0, mass, start, u0, u1, dt, rates, F, J, tangent)


@numba.njit(cache=True)
def node_rates(u0, u1, v0, stretch0, dt, rates):
    """What the director rule gives the inertia of the element nodes, into rates (n_el, 2,
    NODE_RATES): omega_{n+1}, s_{n+1} (1/s), sinc(dtheta/2) and its derivative, cos and sin of
    dtheta and of dtheta/2, as :func:`director_node` gives them."""
    for e in range(u0.shape[0]):
        for i in range(2):
            dth = u1[e, 3 * i + 2] - u0[e, 3 * i + 2]
            c, s, w1, s1 = _director_rule(dth, v0[e, 3 * i + 2], stretch0[e, i], dt)
            ch, sh = np.cos(0.5 * dth), np.sin(0.5 * dth)
            sc, dsc = _sinc_of(0.5 * dth, sh, ch)
            rates[e, i, 0], rates[e, i, 1], rates[e, i, 2], rates[e, i, 3] = w1, s1, sc, dsc
            rates[e, i, 4], rates[e, i, 5], rates[e, i, 6], rates[e, i, 7] = c, s, ch, sh


@numba.njit(cache=True)
def inertia_from_start(alpha0, l0, mass, start, u0, u1, dt, rates, F, J, tangent):
    """:func:`mid_point_inertia` from the step's :func:`inertia_start` quantities start (n_el,
    INERTIA_START) and what the director rule gives the element nodes, rates (n_el, 2,
    NODE_RATES) (:func:`node_rates`). The end and mid-step director angles' cosines and sines
    come from the start angle's and the increment's by the angle sum (phi_{n+1} = phi_n + dtheta,
    phi_m = phi_n + dtheta / 2), not from four more trigonometric calls per node."""
    H = _H
    n_el = u0.shape[0]
    qd0 = np.empty((4, 2))
    qd1 = np.empty((4, 2))
    dP = np.empty((4, 2))
    b = np.empty((2, 2))
    db = np.empty((2, 2))
    n1 = np.empty((2, 2))
    for e in range(n_el):
        le, me = l0[e], mass[e]
        for i in range(2):
            k = 3 * i                                       # first DOF of node i
            slot = 2 * i                                    # Q slot of x_i; its director is slot + 1
            w1, s1, sc, dsc = rates[e, i, 0], rates[e, i, 1], rates[e, i, 2], rates[e, i, 3]
            c, s, ch, sh = rates[e, i, 4], rates[e, i, 5], rates[e, i, 6], rates[e, i, 7]
            c0, sn0 = start[e, 8 + i], start[e, 10 + i]
            c1, sn1 = c0 * c - sn0 * s, sn0 * c + c0 * s
            qd0[slot, 0], qd0[slot, 1] = start[e, 2 * slot], start[e, 2 * slot + 1]
            qd0[slot + 1, 0], qd0[slot + 1, 1] = start[e, 2 * slot + 2], start[e, 2 * slot + 3]
            qd1[slot, 0] = 2.0 * (u1[e, k] - u0[e, k]) / dt - qd0[slot, 0]          # qd0: v0 there
            qd1[slot, 1] = 2.0 * (u1[e, k + 1] - u0[e, k + 1]) / dt - qd0[slot, 1]
            qd1[slot + 1, 0] = le * (s1 * c1 - w1 * sn1)
            qd1[slot + 1, 1] = le * (s1 * sn1 + w1 * c1)
            n1[i, 0], n1[i, 1] = -sn1, c1
            # b = (d1 - d0) / dth = l0 sinc(dth/2) n(phi_m) and its derivative in dth
            cm, sm = c0 * ch - sn0 * sh, sn0 * ch + c0 * sh
            b[i, 0], b[i, 1] = -le * sc * sm, le * sc * cm
            db[i, 0] = 0.5 * le * (-dsc * sm - sc * cm)
            db[i, 1] = 0.5 * le * (dsc * cm - sc * sm)
        for a in range(4):
            for comp in range(2):
                acc = 0.0
                for bb in range(4):
                    acc += H[a, bb] * (qd1[bb, comp] - qd0[bb, comp])
                dP[a, comp] = me * acc
        F[e, 0], F[e, 1] = dP[0, 0] / dt, dP[0, 1] / dt
        F[e, 3], F[e, 4] = dP[2, 0] / dt, dP[2, 1] / dt
        F[e, 2] = (b[0, 0] * dP[1, 0] + b[0, 1] * dP[1, 1]) / dt
        F[e, 5] = (b[1, 0] * dP[3, 0] + b[1, 1] * dP[3, 1]) / dt
        if not tangent:
            continue
        # dQdot1 / du1_j: a translation moves its slot by 2/dt, an angle its director by (2/dt) l0 n(phi1)
        g = me * 2.0 / (dt * dt)
        for j in range(6):
            node, local = j // 3, j % 3
            slot = 2 * node + (1 if local == 2 else 0)
            for a in range(4):
                if local == 2:
                    vx, vy = g * H[a, slot] * le * n1[node, 0], g * H[a, slot] * le * n1[node, 1]
                else:
                    vx = g * H[a, slot] if local == 0 else 0.0
                    vy = g * H[a, slot] if local == 1 else 0.0
                if a == 0:
                    J[e, 0, j], J[e, 1, j] = vx, vy
                elif a == 2:
                    J[e, 3, j], J[e, 4, j] = vx, vy
                elif a == 1:
                    J[e, 2, j] = b[0, 0] * vx + b[0, 1] * vy
                else:
                    J[e, 5, j] = b[1, 0] * vx + b[1, 1] * vy
        J[e, 2, 2] += (db[0, 0] * dP[1, 0] + db[0, 1] * dP[1, 1]) / dt
        J[e, 5, 5] += (db[1, 0] * dP[3, 0] + db[1, 1] * dP[3, 1]) / dt


@numba.njit(cache=True)
def _director_rule(x: float, w0: float, s0: float, dt: float) -> tuple[float, float, float, float]:
    """cos x, sin x and the director rule's omega_{n+1}, s_{n+1} (1/s) for the rotation increment x
    (rad) from the rates w0, s0 (1/s)."""
    c, s = np.cos(x), np.sin(x)
    return c, s, 2.0 / dt * s - w0 * c + s0 * s, 2.0 / dt * (1.0 - c) - s0 * c - w0 * s


@numba.njit(cache=True)
def director_node(x, w0, s0, Jk, dt):
    """One director DOF of rotation increment x (rad), start rates w0, s0 (1/s) and rotary inertia
    Jk (kg m^2): omega_{n+1}, s_{n+1}, d omega_{n+1} / d dtheta, the rotary inertia force in
    director form and its derivative, and sinc(x/2) with its derivative, cos x, sin x, cos(x/2)
    and sin(x/2) (which the inertia of the node's elements takes too, :func:`inertia_from_start`)."""
    c, s, omega1, stretch1 = _director_rule(x, w0, s0, dt)
    domega1 = 2.0 / dt * c + w0 * s + s0 * c
    half = 0.5 * x
    ch, sh = np.cos(half), np.sin(half)
    sc, dsc = _sinc_of(half, sh, ch)
    full, dfull = _sinc_of(x, s, c)
    a = 2.0 / dt + s0
    force = 2.0 * Jk / dt * (half * sc * sc * a - w0 * full)
    dforce = 2.0 * Jk / dt * ((0.5 * sc * sc + half * sc * dsc) * a - w0 * dfull)
    return omega1, stretch1, domega1, force, dforce, sc, dsc, c, s, ch, sh


@numba.njit(cache=True)
def director_step(dtheta, omega0, stretch0, J, dt, omega1, stretch1, domega1, force, dforce):
    """Per director DOF: the director rule's omega_{n+1}, s_{n+1}, d omega_{n+1} / d dtheta and the
    rotary inertia force in director form with its derivative, written in place (specification:
    ``reference_director_rates`` and ``reference_rotary_inertia_force`` of
    :mod:`flexmb.elements.hermite_mass2d`)."""
    for k in range(dtheta.shape[0]):
        omega1[k], stretch1[k], domega1[k], force[k], dforce[k] = director_node(dtheta[k], omega0[k], stretch0[k],
                                                                               J[k], dt)[:5]


@numba.njit(cache=True)
def energy_and_momentum(X, alpha0, l0, mass, u, v, stretch):
    """Sums over the elements of T = 1/2 m Qdot^T H Qdot and L = m sum_ab H_ab Q_a x Qdot_b
    (specification: ``HermiteMass2D.kinetic_energy`` and ``angular_momentum``)."""
    H = _H
    Q = np.empty((4, 2))
    qd = np.empty((4, 2))
    T, L = 0.0, 0.0
    for e in range(u.shape[0]):
        le = l0[e]
        for i in range(2):
            k, slot = 3 * i, 2 * i
            phi = alpha0[e] + u[e, k + 2]
            c, s = np.cos(phi), np.sin(phi)
            w, st = v[e, k + 2], stretch[e, i]
            Q[slot, 0], Q[slot, 1] = X[e, i, 0] + u[e, k], X[e, i, 1] + u[e, k + 1]
            Q[slot + 1, 0], Q[slot + 1, 1] = le * c, le * s
            qd[slot, 0], qd[slot, 1] = v[e, k], v[e, k + 1]
            qd[slot + 1, 0] = le * (st * c - w * s)
            qd[slot + 1, 1] = le * (st * s + w * c)
        te, me = 0.0, 0.0
        for a in range(4):
            for b in range(4):
                te += H[a, b] * (qd[a, 0] * qd[b, 0] + qd[a, 1] * qd[b, 1])
                me += H[a, b] * (Q[a, 0] * qd[b, 1] - Q[a, 1] * qd[b, 0])
        T += 0.5 * mass[e] * te
        L += mass[e] * me
    return T, L


@numba.njit(cache=True)
def end_point_inertia(alpha0, l0, mass, u, v, a, dv_du, da_du, F, J, tangent):
    """Lagrange inertia force F = B^T m H Qddot (n_el, 6) at one state and, with ``tangent``, its
    derivative along a scheme's kinematics, J = dF/du + dv_du dF/dv + da_du dF/da (n_el, 6, 6),
    written in place; Qddot of a director is l0 (alpha n - omega^2 e) (specification:
    ``HermiteMass2D.end_point_force``, by complex steps)."""
    H = _H
    qdd = np.empty((4, 2))
    P = np.empty((4, 2))
    e = np.empty((2, 2))
    n = np.empty((2, 2))
    dq = np.empty((6, 2))                       # d Qddot of the slot moved by DOF j, per DOF j
    for el in range(u.shape[0]):
        le, me = l0[el], mass[el]
        for i in range(2):
            k, slot = 3 * i, 2 * i
            phi = alpha0[el] + u[el, k + 2]
            c, s = np.cos(phi), np.sin(phi)
            e[i, 0], e[i, 1], n[i, 0], n[i, 1] = c, s, -s, c
            w, al = v[el, k + 2], a[el, k + 2]
            qdd[slot, 0], qdd[slot, 1] = a[el, k], a[el, k + 1]
            qdd[slot + 1, 0] = le * (al * n[i, 0] - w * w * c)
            qdd[slot + 1, 1] = le * (al * n[i, 1] - w * w * s)
            dq[k, 0], dq[k, 1] = da_du, 0.0
            dq[k + 1, 0], dq[k + 1, 1] = 0.0, da_du
            # d/dtheta l0 (alpha n - w^2 e) = l0 (-alpha e - w^2 n), d/dw = -2 l0 w e, d/dalpha = l0 n
            for comp in range(2):
                dq[k + 2, comp] = le * (-al * e[i, comp] - w * w * n[i, comp] - dv_du * 2.0 * w * e[i, comp]
                                        + da_du * n[i, comp])
        for sl in range(4):
            for comp in range(2):
                acc = 0.0
                for b in range(4):
                    acc += H[sl, b] * qdd[b, comp]
                P[sl, comp] = me * acc
        F[el, 0], F[el, 1], F[el, 3], F[el, 4] = P[0, 0], P[0, 1], P[2, 0], P[2, 1]
        F[el, 2] = le * (n[0, 0] * P[1, 0] + n[0, 1] * P[1, 1])
        F[el, 5] = le * (n[1, 0] * P[3, 0] + n[1, 1] * P[3, 1])
        if not tangent:
            continue
        for j in range(6):
            node, local = j // 3, j % 3
            sj = 2 * node + (1 if local == 2 else 0)           # the slot DOF j moves
            for sl in range(4):
                gx, gy = me * H[sl, sj] * dq[j, 0], me * H[sl, sj] * dq[j, 1]
                if sl == 0:
                    J[el, 0, j], J[el, 1, j] = gx, gy
                elif sl == 2:
                    J[el, 3, j], J[el, 4, j] = gx, gy
                elif sl == 1:
                    J[el, 2, j] = le * (n[0, 0] * gx + n[0, 1] * gy)
                else:
                    J[el, 5, j] = le * (n[1, 0] * gx + n[1, 1] * gy)
        J[el, 2, 2] -= le * (e[0, 0] * P[1, 0] + e[0, 1] * P[1, 1])
        J[el, 5, 5] -= le * (e[1, 0] * P[3, 0] + e[1, 1] * P[3, 1])
