"""Compiled joint equations: values, Jacobian C, (discrete) gradient G, force G^T lambda and its
tangent K in one pass over the vectors and terms of :class:`flexmb.multibody.constraints.ConstraintSystem`.

The notation is that of :mod:`flexmb.multibody.constraints` (body-fixed vectors P = x + R d or
r = R d, linear and bilinear terms, DOF terms). The specification is
``ConstraintSystem.reference_evaluate`` (numpy); the triplet values come out in its order, so
the row and column arrays are computed once per model (``ConstraintSystem._pattern``).
``tests/test_compiled_constraints.py`` checks the kernels against it to 1e-12 and against
central differences.

Per vector v the map from its node's increment (translations, then rotations) to the change of
the vector is M_v (dim, dim + n_rot): ``[I, -hat(r)]`` for spins (3D end point),
``[I, -G(w) hat(r_m)]`` for the step's Cayley parameters w (3D mid-point, end-of-step vector),
``[I, k x r]`` (2D), without the identity for directions; the mid-point discrete gradient takes
E_v = ``[I, -hat(r_m)]`` (3D) or ``[I, sigma(dtheta) k x r_m]`` (2D).
"""
from __future__ import annotations

import math

import numba
import numpy as np

from flexmb.compiled.rotations import cayley_resolvent_into, exp_map_into

jit = numba.njit(cache=True, error_model="numpy")


@jit
def vectors(u, v_d, v_X, v_cols, v_point, v_rotates):
    """Vector values P (n_v, dim) and their body-fixed parts r = R d (n_v, dim) at the state u."""
    n_v, dim = v_d.shape
    P = np.empty((n_v, dim))
    r = np.empty((n_v, dim))
    R = np.empty((3, 3))
    psi = np.empty(3)
    for v in range(n_v):
        if v_rotates[v]:
            if dim == 3:
                for i in range(3):                       # (no fancy indexing: it allocates)
                    psi[i] = u[v_cols[v, 3 + i]]
                exp_map_into(psi, R)
                for i in range(3):
                    r[v, i] = R[i, 0] * v_d[v, 0] + R[i, 1] * v_d[v, 1] + R[i, 2] * v_d[v, 2]
            else:
                th = u[v_cols[v, 2]]
                c, s = math.cos(th), math.sin(th)
                r[v, 0] = c * v_d[v, 0] - s * v_d[v, 1]
                r[v, 1] = s * v_d[v, 0] + c * v_d[v, 1]
        else:
            for i in range(dim):
                r[v, i] = v_d[v, i]
        for i in range(dim):
            if v_point[v]:
                x = v_X[v, i] + (u[v_cols[v, i]] if v_cols[v, i] >= 0 else 0.0)
                P[v, i] = x + r[v, i]
            else:
                P[v, i] = r[v, i]
    return P, r


@jit
def values(P, u, s, rhs, l_row, l_vec, l_c, b_row, b_a, b_b, d_row, d_dof, d_c):
    """Phi (n_c,) = sum c . P + sum s P_a . P_b + sum e u[dof] - f(t); rhs (n_c,) holds f(t)."""
    n_c = rhs.shape[0]
    dim = P.shape[1]
    phi = np.zeros(n_c)
    for k in range(l_row.shape[0]):
        acc = 0.0
        for i in range(dim):
            acc += l_c[k, i] * P[l_vec[k], i]
        phi[l_row[k]] += acc
    for k in range(b_row.shape[0]):
        acc = 0.0
        for i in range(dim):
            acc += P[b_a[k], i] * P[b_b[k], i]
        phi[b_row[k]] += s[k] * acc
    for k in range(d_row.shape[0]):
        phi[d_row[k]] += d_c[k] * u[d_dof[k]]
    for k in range(n_c):
        phi[k] -= rhs[k]
    return phi


@jit
def _sigma(x: float) -> tuple[float, float]:
    """sigma(x) = tan(x/2)/(x/2) and its derivative, with series near 0."""
    if abs(x) < 1e-4:
        return 1.0 + x * x / 12.0, x / 6.0
    t = math.tan(0.5 * x)
    return 2.0 * t / x, (1.0 + t * t) / x - 2.0 * t / (x * x)


@jit
def _term_gradient(k, n_l, n_b, P, s, l_vec, l_c, b_a, b_b, g):
    """dPhi/dP of term k (lin, then bilinear a sides, then b sides) into g (dim,); its vector."""
    dim = P.shape[1]
    if k < n_l:
        for i in range(dim):
            g[i] = l_c[k, i]
        return l_vec[k]
    if k < n_l + n_b:
        j = k - n_l
        for i in range(dim):
            g[i] = s[j] * P[b_b[j], i]
        return b_a[j]
    j = k - n_l - n_b
    for i in range(dim):
        g[i] = s[j] * P[b_a[j], i]
    return b_b[j]


@jit
def evaluate(mid, u1, P0, r0, d, lam, s1, sm, rhs, n_dof, n_entries, n_k,
             v_d, v_X, v_cols, v_point, v_rotates, l_row, l_vec, l_c, b_row, b_a, b_b, d_row, d_dof, d_c):
    """Constraint terms at the end state u1 for the multipliers lam (n_c,).

    End-point form (``mid`` False; P0, r0, d unused): increments are spins and G = C.
    Mid-point form: P0, r0 (n_v, dim) the vectors at the step's start, d (n_dof,) the step
    increment (Cayley parameters at 3D rotations), sm the bilinear scales at mid-step.

    Returns phi (n_c,), force G^T lambda (n_dof,), the values of G and C (n_entries,) and of K
    (n_k,) in the order of ``ConstraintSystem.reference_evaluate``.
    """
    n_v, dim = v_d.shape
    nd = v_cols.shape[1]
    n_l, n_b = l_row.shape[0], b_row.shape[0]
    P1, r1 = vectors(u1, v_d, v_X, v_cols, v_point, v_rotates)
    phi = values(P1, u1, s1, rhs, l_row, l_vec, l_c, b_row, b_a, b_b, d_row, d_dof, d_c)

    # maps M (end of step) and E (discrete gradient) per vector, (n_v, dim, nd)
    M = np.zeros((n_v, dim, nd))
    E = np.zeros((n_v, dim, nd))
    if mid:
        Pm = 0.5 * (P0 + P1)
        rm = 0.5 * (r0 + r1)
        s_g = sm
    else:
        Pm = P1
        rm = r1
        s_g = s1
    Gw = np.zeros((n_v, 3, 3))                           # Cayley resolvents (3D mid-point)
    w = np.empty(3)
    sig = np.zeros(n_v)
    dsig = np.zeros(n_v)
    for v in range(n_v):
        if v_point[v]:
            for i in range(dim):
                M[v, i, i] = 1.0
                E[v, i, i] = 1.0
        if dim == 3:
            if not mid:                                  # -hat(r1), for every vector
                M[v, 0, 4], M[v, 0, 5] = r1[v, 2], -r1[v, 1]
                M[v, 1, 3], M[v, 1, 5] = -r1[v, 2], r1[v, 0]
                M[v, 2, 3], M[v, 2, 4] = r1[v, 1], -r1[v, 0]
            elif v_rotates[v]:
                for i in range(3):
                    w[i] = d[v_cols[v, 3 + i]]
                cayley_resolvent_into(w, Gw[v])
                # -G hat(rm): column j of hat(rm) is rm x e_j
                for i in range(3):
                    G0, G1, G2 = Gw[v, i, 0], Gw[v, i, 1], Gw[v, i, 2]
                    M[v, i, 3] = -(G1 * rm[v, 2] - G2 * rm[v, 1])
                    M[v, i, 4] = -(-G0 * rm[v, 2] + G2 * rm[v, 0])
                    M[v, i, 5] = -(G0 * rm[v, 1] - G1 * rm[v, 0])
                E[v, 0, 4], E[v, 0, 5] = rm[v, 2], -rm[v, 1]
                E[v, 1, 3], E[v, 1, 5] = -rm[v, 2], rm[v, 0]
                E[v, 2, 3], E[v, 2, 4] = rm[v, 1], -rm[v, 0]
            if not mid:
                for i in range(dim):
                    for j in range(3, 6):
                        E[v, i, j] = M[v, i, j]
        else:
            if not mid:
                M[v, 0, 2], M[v, 1, 2] = -r1[v, 1], r1[v, 0]
                E[v, 0, 2], E[v, 1, 2] = -r1[v, 1], r1[v, 0]
            elif v_rotates[v]:
                sig[v], dsig[v] = _sigma(d[v_cols[v, 2]])
                M[v, 0, 2], M[v, 1, 2] = -r1[v, 1], r1[v, 0]
                E[v, 0, 2], E[v, 1, 2] = -sig[v] * rm[v, 1], sig[v] * rm[v, 0]

    # gradients: C = g1^T M, G = gm^T E per term; the force and each vector's force f
    force = np.zeros(n_dof)
    g_vals = np.empty(n_entries)
    c_vals = np.empty(n_entries)
    f = np.zeros((n_v, dim))
    g1 = np.empty(dim)
    gm = np.empty(dim)
    pos = 0
    for k in range(n_l + 2 * n_b):
        vec = _term_gradient(k, n_l, n_b, P1, s1, l_vec, l_c, b_a, b_b, g1)
        _term_gradient(k, n_l, n_b, Pm, s_g, l_vec, l_c, b_a, b_b, gm)
        row = l_row[k] if k < n_l else b_row[(k - n_l) % n_b]
        for i in range(dim):
            f[vec, i] += lam[row] * gm[i]
        for j in range(nd):
            col = v_cols[vec, j]
            if col >= 0:
                cv = 0.0
                gv = 0.0
                for i in range(dim):
                    cv += g1[i] * M[vec, i, j]
                    gv += gm[i] * E[vec, i, j]
                c_vals[pos] = cv
                g_vals[pos] = gv
                force[col] += lam[row] * gv
                pos += 1
    for k in range(d_row.shape[0]):
        c_vals[pos] = d_c[k]
        g_vals[pos] = d_c[k]
        force[d_dof[k]] += lam[d_row[k]] * d_c[k]
        pos += 1

    # K: the bilinear terms' coupling (both orders), then each rotating vector's own block
    k_vals = np.empty(n_k)
    half = 0.5 if mid else 1.0
    pos = 0
    for side in range(2):
        for k in range(n_b):
            va, vb = (b_a[k], b_b[k]) if side == 0 else (b_b[k], b_a[k])
            weight = half * lam[b_row[k]] * s_g[k]
            for i in range(nd):
                if v_cols[va, i] < 0:
                    continue
                for j in range(nd):
                    if v_cols[vb, j] < 0:
                        continue
                    acc = 0.0
                    for x in range(dim):
                        acc += E[va, x, i] * M[vb, x, j]
                    k_vals[pos] = weight * acc
                    pos += 1
    H = np.empty((3, 3))
    for v in range(n_v):
        if not v_rotates[v]:
            continue
        if dim == 3:
            # end point: hat(f) hat(r1); mid-point: 0.5 hat(f) G(w) hat(rm)
            fx, fy, fz = f[v, 0], f[v, 1], f[v, 2]
            if mid:
                for j in range(3):                       # H = hat(f) G
                    H[0, j] = -fz * Gw[v, 1, j] + fy * Gw[v, 2, j]
                    H[1, j] = fz * Gw[v, 0, j] - fx * Gw[v, 2, j]
                    H[2, j] = -fy * Gw[v, 0, j] + fx * Gw[v, 1, j]
                a0, a1, a2, w = rm[v, 0], rm[v, 1], rm[v, 2], 0.5
            else:
                H[0, 0], H[0, 1], H[0, 2] = 0.0, -fz, fy
                H[1, 0], H[1, 1], H[1, 2] = fz, 0.0, -fx
                H[2, 0], H[2, 1], H[2, 2] = -fy, fx, 0.0
                a0, a1, a2, w = r1[v, 0], r1[v, 1], r1[v, 2], 1.0
            for i in range(3):                           # w H hat(a)
                k_vals[pos] = w * (H[i, 1] * a2 - H[i, 2] * a1)
                k_vals[pos + 1] = w * (-H[i, 0] * a2 + H[i, 2] * a0)
                k_vals[pos + 2] = w * (H[i, 0] * a1 - H[i, 1] * a0)
                pos += 3
        else:
            f_r1 = f[v, 0] * r1[v, 0] + f[v, 1] * r1[v, 1]
            if mid:
                k_rm_f = -rm[v, 1] * f[v, 0] + rm[v, 0] * f[v, 1]
                k_vals[pos] = dsig[v] * k_rm_f - 0.5 * sig[v] * f_r1
            else:
                k_vals[pos] = -f_r1
            pos += 1
    return phi, force, g_vals, c_vals, k_vals


@jit
def augmented_data(n_aug, fe_data, fe_pos, k_vals, k_pos, g_vals, g_pos, lam_scale, c_vals, c_pos, kappa):
    """CSC data (n_aug,) of [[J + K, G^T lam_scale], [kappa C, 0]] from the FE part's data and the
    triplet values, at their precomputed positions (-1: a prescribed DOF, dropped)."""
    data = np.zeros(n_aug)
    for i in range(fe_data.shape[0]):
        data[fe_pos[i]] += fe_data[i]
    for i in range(k_vals.shape[0]):
        if k_pos[i] >= 0:
            data[k_pos[i]] += k_vals[i]
    for i in range(g_vals.shape[0]):
        if g_pos[i] >= 0:
            data[g_pos[i]] += lam_scale * g_vals[i]
    for i in range(c_vals.shape[0]):
        if c_pos[i] >= 0:
            data[c_pos[i]] += kappa * c_vals[i]
    return data


@jit
def _rotation_into(u, start, dim, R) -> None:
    """R (dim, dim): the rotation of the node whose rotation DOFs start at u[start] (identity
    for start < 0: no rotations, or the ground)."""
    if start < 0:
        for i in range(dim):
            for j in range(dim):
                R[i, j] = 1.0 if i == j else 0.0
    elif dim == 3:
        exp_map_into(u[start:start + 3], R)
    else:
        c, s = math.cos(u[start]), math.sin(u[start])
        R[0, 0], R[0, 1], R[1, 0], R[1, 1] = c, -s, s, c


@jit
def joint_reactions(rows, cols, c_vals, lam, u, row_joint, first, width, sign, lever0, frames, start_b, start_a):
    """Force (n_j, dim) and moment (n_j, 3 or 1) of every joint on its side (see
    ``ConstraintSystem.joint_reactions``, whose specification is ``reference_joint_reactions``):
    ``-(C^T lambda)`` on the side's node DOFs, the moment moved to the joint point by the lever
    ``R_side lever0``, both written in the joint frame carried by side A, ``R_A frame``."""
    n_j, dim = lever0.shape
    n_rot = 3 if dim == 3 else 1
    out = np.zeros((n_j, dim + n_rot))
    for k in range(rows.shape[0]):
        j = row_joint[rows[k]]
        local = cols[k] - first[j]
        if 0 <= local < width[j]:
            out[j, local] -= c_vals[k] * lam[rows[k]]
    forces = np.empty((n_j, dim))
    moments = np.empty((n_j, n_rot))
    R = np.empty((dim, dim))
    A = np.empty((dim, dim))
    carried = np.empty((dim, dim))
    lever = np.empty(dim)
    m = np.empty(n_rot)
    for j in range(n_j):
        f = sign[j] * out[j, :dim]
        for i in range(n_rot):
            m[i] = sign[j] * out[j, dim + i]
        _rotation_into(u, start_b[j], dim, R)
        for i in range(dim):
            lever[i] = 0.0
            for x in range(dim):
                lever[i] += R[i, x] * lever0[j, x]
        if dim == 3:
            m[0] -= lever[1] * f[2] - lever[2] * f[1]
            m[1] -= lever[2] * f[0] - lever[0] * f[2]
            m[2] -= lever[0] * f[1] - lever[1] * f[0]
        else:
            m[0] -= lever[0] * f[1] - lever[1] * f[0]
        _rotation_into(u, start_a[j], dim, A)
        for i in range(dim):
            for x in range(dim):
                acc = 0.0
                for y in range(dim):
                    acc += A[i, y] * frames[j, y, x]
                carried[i, x] = acc
        for x in range(dim):                             # carried^T f, carried^T m (3D)
            acc = 0.0
            for i in range(dim):
                acc += carried[i, x] * f[i]
            forces[j, x] = acc
        if dim == 3:
            for x in range(3):
                acc = 0.0
                for i in range(3):
                    acc += carried[i, x] * m[i]
                moments[j, x] = acc
        else:
            moments[j, 0] = m[0]
    return forces, moments
