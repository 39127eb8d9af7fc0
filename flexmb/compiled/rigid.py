"""Compiled rotary inertia of the nodes with spatial rotations in the mid-point scheme.

Simo & Wong (1991), as in :class:`flexmb.integrators.schemes.MidPoint`: with the step's Cayley
parameters w (``R_{n+1} = cay(w) R_n``), the body angular velocity at the end of the step is
``Omega_{n+1} = 2/dt R_n^T w - R_n^T omega_n`` and the momentum balance's inertia term is
``(pi_{n+1} - pi_n) / dt`` with ``pi = R J R^T omega``; its derivative with respect to w is
``(-G(w) hat(y_m) + 2/dt R_{n+1} J R_n^T) / dt``, y_m the average of ``R_n J Omega_{n+1}`` and
``R_{n+1} J Omega_{n+1}`` (G the Cayley resolvent). Specifications:
``reference_mid_point_body_rates`` and ``reference_mid_point_rotary_terms`` of
:mod:`flexmb.integrators.schemes` (tested in ``tests/test_compiled_rotations.py``).
"""
from __future__ import annotations

import numba
import numpy as np

from flexmb.compiled.rotations import (cayley_resolvent_into, exp_map_into, inverse3_into, matmul3_into,
                                      tangent_operator_into)


@numba.njit(cache=True, error_model="numpy")
def mid_point_body_rates(psi0, psi1, w, omega0, dt):
    """R_n, R_{n+1} (n_r, 3, 3) and Omega_{n+1} (n_r, 3) from the rotation vectors psi0, psi1,
    the Cayley parameters w and the spatial angular velocity omega0 (n_r, 3) each."""
    n = psi0.shape[0]
    R0 = np.empty((n, 3, 3))
    R1 = np.empty((n, 3, 3))
    Om1 = np.empty((n, 3))
    for k in range(n):
        exp_map_into(psi0[k], R0[k])
        exp_map_into(psi1[k], R1[k])
        for i in range(3):
            Om1[k, i] = (2.0 / dt * (R0[k, 0, i] * w[k, 0] + R0[k, 1, i] * w[k, 1] + R0[k, 2, i] * w[k, 2])
                         - (R0[k, 0, i] * omega0[k, 0] + R0[k, 1, i] * omega0[k, 1] + R0[k, 2, i] * omega0[k, 2]))
    return R0, R1, Om1


@numba.njit(cache=True, error_model="numpy")
def mid_point_rotary_terms(R0, R1, Om1, J, omega0, w, dt):
    """Inertia term (pi_{n+1} - pi_n)/dt (n_r, 3) and its derivative w.r.t. w (n_r, 3, 3)."""
    n = R0.shape[0]
    inertia = np.empty((n, 3))
    blocks = np.empty((n, 3, 3))
    G = np.empty((3, 3))
    JOm = np.empty(3)
    y0 = np.empty(3)
    y1 = np.empty(3)
    ym = np.empty(3)
    b = np.empty(3)
    RJ = np.empty((3, 3))
    for k in range(n):
        for i in range(3):
            JOm[i] = J[k, i, 0] * Om1[k, 0] + J[k, i, 1] * Om1[k, 1] + J[k, i, 2] * Om1[k, 2]
        for i in range(3):
            y0[i] = R0[k, i, 0] * JOm[0] + R0[k, i, 1] * JOm[1] + R0[k, i, 2] * JOm[2]   # R_n J Omega_{n+1}
            y1[i] = R1[k, i, 0] * JOm[0] + R1[k, i, 1] * JOm[1] + R1[k, i, 2] * JOm[2]   # pi_{n+1}
            ym[i] = 0.5 * (y0[i] + y1[i])
            b[i] = R0[k, 0, i] * omega0[k, 0] + R0[k, 1, i] * omega0[k, 1] + R0[k, 2, i] * omega0[k, 2]
        for i in range(3):                                               # pi_n = R_n J R_n^T omega_n
            pi0 = 0.0
            for j in range(3):
                pi0 += R0[k, i, j] * (J[k, j, 0] * b[0] + J[k, j, 1] * b[1] + J[k, j, 2] * b[2])
            inertia[k, i] = (y1[i] - pi0) / dt
        cayley_resolvent_into(w[k], G)
        for i in range(3):
            for j in range(3):
                RJ[i, j] = R1[k, i, 0] * J[k, 0, j] + R1[k, i, 1] * J[k, 1, j] + R1[k, i, 2] * J[k, 2, j]
        for i in range(3):
            # -G hat(ym): column j of hat(ym) is ym x e_j
            g0, g1, g2 = G[i, 0], G[i, 1], G[i, 2]
            blocks[k, i, 0] = -(g1 * ym[2] - g2 * ym[1])
            blocks[k, i, 1] = -(-g0 * ym[2] + g2 * ym[0])
            blocks[k, i, 2] = -(g0 * ym[1] - g1 * ym[0])
            for j in range(3):
                blocks[k, i, j] = (blocks[k, i, j] + 2.0 / dt * (RJ[i, 0] * R0[k, j, 0] + RJ[i, 1] * R0[k, j, 1]
                                                                  + RJ[i, 2] * R0[k, j, 2])) / dt
    return inertia, blocks


@numba.njit(cache=True, error_model="numpy")
def newmark_body_rates(psi0, psi1, theta, omega0, alpha0, dt):
    """Newmark in the body frame (Simo & Vu-Quoc 1988): R_n, R_{n+1} (n_r, 3, 3), Omega_{n+1} and
    A_{n+1} (n_r, 3) from the rotation vectors psi0, psi1, the spin increment theta
    (``R_{n+1} = exp(hat(theta)) R_n``) and the spatial angular velocity and acceleration
    omega0, alpha0 at the step's start: ``Theta = R_n^T theta``,
    ``A_{n+1} = 4 (Theta - dt Omega_n) / dt^2 - A_n``, ``Omega_{n+1} = Omega_n + dt (A_n + A_{n+1}) / 2``."""
    n = psi0.shape[0]
    R0 = np.empty((n, 3, 3))
    R1 = np.empty((n, 3, 3))
    Om1 = np.empty((n, 3))
    A1 = np.empty((n, 3))
    for k in range(n):
        exp_map_into(psi0[k], R0[k])
        exp_map_into(psi1[k], R1[k])
        for i in range(3):
            Th = R0[k, 0, i] * theta[k, 0] + R0[k, 1, i] * theta[k, 1] + R0[k, 2, i] * theta[k, 2]
            Om0 = R0[k, 0, i] * omega0[k, 0] + R0[k, 1, i] * omega0[k, 1] + R0[k, 2, i] * omega0[k, 2]
            A0 = R0[k, 0, i] * alpha0[k, 0] + R0[k, 1, i] * alpha0[k, 1] + R0[k, 2, i] * alpha0[k, 2]
            A1[k, i] = 4.0 * (Th - dt * Om0) / dt**2 - A0
            Om1[k, i] = Om0 + 0.5 * dt * (A0 + A1[k, i])
    return R0, R1, Om1, A1


@numba.njit(cache=True, error_model="numpy")
def newmark_rotary_terms(theta, R0, R1, Om1, A1, J, dt):
    """Inertia moment ``R_{n+1} (J A_{n+1} + Omega_{n+1} x J Omega_{n+1})`` (n_r, 3) and its
    derivative w.r.t. a spin of R_{n+1} (n_r, 3, 3),
    ``-hat(R_{n+1} y) + R_{n+1} (4/dt^2 J + 2/dt (hat(Omega) J - hat(J Omega))) R_n^T T(theta)^-1``."""
    n = R0.shape[0]
    inertia = np.empty((n, 3))
    blocks = np.empty((n, 3, 3))
    T = np.empty((3, 3))
    Ti = np.empty((3, 3))
    dy = np.empty((3, 3))
    M1 = np.empty((3, 3))
    M2 = np.empty((3, 3))
    JOm = np.empty(3)
    y = np.empty(3)
    Ry = np.empty(3)
    for k in range(n):
        for i in range(3):
            JOm[i] = J[k, i, 0] * Om1[k, 0] + J[k, i, 1] * Om1[k, 1] + J[k, i, 2] * Om1[k, 2]
        o = Om1[k]
        cross = (o[1] * JOm[2] - o[2] * JOm[1], o[2] * JOm[0] - o[0] * JOm[2], o[0] * JOm[1] - o[1] * JOm[0])
        for i in range(3):
            y[i] = J[k, i, 0] * A1[k, 0] + J[k, i, 1] * A1[k, 1] + J[k, i, 2] * A1[k, 2] + cross[i]
        for i in range(3):
            Ry[i] = R1[k, i, 0] * y[0] + R1[k, i, 1] * y[1] + R1[k, i, 2] * y[2]
            inertia[k, i] = Ry[i]
        # dy = 4/dt^2 J + 2/dt (hat(Omega) J - hat(J Omega))
        for j in range(3):
            hJ0 = -o[2] * J[k, 1, j] + o[1] * J[k, 2, j]
            hJ1 = o[2] * J[k, 0, j] - o[0] * J[k, 2, j]
            hJ2 = -o[1] * J[k, 0, j] + o[0] * J[k, 1, j]
            dy[0, j] = 4.0 / dt**2 * J[k, 0, j] + 2.0 / dt * hJ0
            dy[1, j] = 4.0 / dt**2 * J[k, 1, j] + 2.0 / dt * hJ1
            dy[2, j] = 4.0 / dt**2 * J[k, 2, j] + 2.0 / dt * hJ2
        dy[0, 1] -= 2.0 / dt * -JOm[2]
        dy[0, 2] -= 2.0 / dt * JOm[1]
        dy[1, 0] -= 2.0 / dt * JOm[2]
        dy[1, 2] -= 2.0 / dt * -JOm[0]
        dy[2, 0] -= 2.0 / dt * -JOm[1]
        dy[2, 1] -= 2.0 / dt * JOm[0]
        tangent_operator_into(theta[k], T)
        inverse3_into(T, Ti)
        matmul3_into(R1[k], dy, M1)
        for i in range(3):                                   # M2 = M1 R_n^T
            for j in range(3):
                M2[i, j] = M1[i, 0] * R0[k, j, 0] + M1[i, 1] * R0[k, j, 1] + M1[i, 2] * R0[k, j, 2]
        matmul3_into(M2, Ti, blocks[k])
        blocks[k, 0, 1] += Ry[2]
        blocks[k, 0, 2] -= Ry[1]
        blocks[k, 1, 0] -= Ry[2]
        blocks[k, 1, 2] += Ry[0]
        blocks[k, 2, 0] += Ry[1]
        blocks[k, 2, 1] -= Ry[0]
    return inertia, blocks
