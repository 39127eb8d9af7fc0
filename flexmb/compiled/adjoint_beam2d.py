"""Compiled per-solve work of the discrete adjoint (:mod:`flexmb.sensitivity.adjoint`) on planar
co-rotational beams (:class:`flexmb.elements.beam2d.Beam2D`, with or without the cubic mass of
:mod:`flexmb.elements.hermite_mass2d`).

Per reverse solve the adjoint applies the transposed start derivatives of the step's residual to
the adjoint vectors psi (n_dof, n_r) and forms ``psi . dg/dp`` of the section properties. On a
small model each is a few microseconds of arithmetic behind dozens of numpy calls; here each is
one call per element group that gathers psi and the states by the group's DOF map, runs the
existing element kernels (:func:`flexmb.compiled.beam2d.mid_point_forces`' loop,
:func:`flexmb.compiled.hermite_mass2d.mid_point_inertia`) and scatters the products:

* :func:`beam2d_start_transposed` -- the group's part of ``D^T psi``, ``(dg/dv_n)^T psi`` and
  ``(dg/ds_n)^T psi``: the beam force's tangent of the swapped step, and of a cubic mass its
  reversed-step tangent, rate columns and director-rule terms (the formulas of
  :meth:`flexmb.sensitivity.inertia.InertiaDerivatives._cubic_terms`, their specification);
* :func:`model_start_transposed` -- the model's constant mass (``-2 M / dt^2``, ``-2 M / dt`` on
  the rows off the director DOFs) and the director DOFs' rotary inertia (diagonal closed forms of
  :meth:`~flexmb.sensitivity.inertia.InertiaDerivatives._director_terms`);
* :func:`beam2d_parameter_products` -- per element, psi_e . share_e of the group's four section
  properties EA, EI, rho_A, rho_I (each property's share as
  :meth:`flexmb.sensitivity.parameters.TransientParameter.residual_shares` forms it for a copy of
  the group holding that property alone, without gravity and Rayleigh damping);
* :func:`end_weights` and :func:`start_adjoint` -- the reverse solve's elementwise steps around
  them (mu through the end rates, the new mu at the solve's start), the director rule's turns
  included, as :func:`flexmb.sensitivity.adjoint._solve_adjoint` forms them with numpy.

The numpy paths of :mod:`flexmb.sensitivity` are the specification: ``tests/test_sensitivity_compiled.py``
checks these kernels against them to round-off (the summation order differs) on random states.
"""
from __future__ import annotations

import numba
import numpy as np

from flexmb.compiled.beam2d import _mid_point
from flexmb.compiled.hermite_mass2d import _H, _sinc_of, mid_point_inertia
from flexmb.compiled.scatter import gather_vector

jit = numba.njit(cache=True, error_model="numpy")

#: the section properties of :func:`beam2d_parameter_products`, in its output's order
PROPERTIES = ("EA", "EI", "rho_A", "rho_I")


@jit
def _add_transposed(K, edofs, psi, out) -> None:
    """out[ed] += K_e^T psi[ed] per element, K (n_el, ne, ne), psi and out (n_dof, n_r)."""
    n_r = psi.shape[1]
    ne = edofs.shape[1]
    for e in range(edofs.shape[0]):
        for j in range(ne):
            col = edofs[e, j]
            for r in range(n_r):
                acc = 0.0
                for i in range(ne):
                    acc += K[e, i, j] * psi[edofs[e, i], r]
                out[col, r] += acc


@jit
def _rate_columns(alpha0, l0, mass, a0, a1, dt, Av, As) -> None:
    """dF/dv_n (n_el, 6, 6) and dF/ds_n (n_el, 6, 2) of the cubic mass's step inertia at fixed ends
    a0, a1 (n_el, 6), into Av and As. F = Bbar^T m H (Qdot_{n+1} - Qdot_n) / dt is affine in the start
    rates, and the director rule turns a start rate's director velocity through dtheta into the end's
    (omega_{n+1} n_{n+1} + s_{n+1} e_{n+1} takes -omega_n n_n - s_n e_n turned back), so each start
    rate moves Qdot_{n+1} - Qdot_n by -2 times its own velocity at t_n: a translation rate by its unit
    vector, omega_n by l0 n(phi_n), s_n by l0 e(phi_n). Bbar's director rows are b = l0 sinc(dtheta/2)
    n(phi_m) (:func:`flexmb.compiled.hermite_mass2d.inertia_from_start`)."""
    H = _H
    delta, col = np.empty(2), np.empty(6)
    b, cos0, sin0 = np.empty((2, 2)), np.empty(2), np.empty(2)
    for e in range(a0.shape[0]):
        le = l0[e]
        g = -2.0 * mass[e] / dt
        for i in range(2):
            half = 0.5 * (a1[e, 3 * i + 2] - a0[e, 3 * i + 2])
            ch, sh = np.cos(half), np.sin(half)
            sc = _sinc_of(half, sh, ch)[0]
            phi0 = alpha0[e] + a0[e, 3 * i + 2]
            cos0[i], sin0[i] = np.cos(phi0), np.sin(phi0)
            # phi_m = phi_n + dtheta / 2 by the angle sum
            b[i, 0] = -le * sc * (sin0[i] * ch + cos0[i] * sh)
            b[i, 1] = le * sc * (cos0[i] * ch - sin0[i] * sh)
        for j in range(8):                      # columns: v_n of the 6 DOFs, then s_n of the 2 nodes
            if j < 6:
                node, local = j // 3, j % 3
            else:
                node, local = j - 6, 3
            slot = 2 * node + (1 if local >= 2 else 0)
            if local < 2:
                delta[0], delta[1] = (1.0, 0.0) if local == 0 else (0.0, 1.0)
            elif local == 2:
                delta[0], delta[1] = -le * sin0[node], le * cos0[node]
            else:
                delta[0], delta[1] = le * cos0[node], le * sin0[node]
            col[0], col[1] = g * H[0, slot] * delta[0], g * H[0, slot] * delta[1]
            col[3], col[4] = g * H[2, slot] * delta[0], g * H[2, slot] * delta[1]
            col[2] = g * H[1, slot] * (b[0, 0] * delta[0] + b[0, 1] * delta[1])
            col[5] = g * H[3, slot] * (b[1, 0] * delta[0] + b[1, 1] * delta[1])
            for i in range(6):
                if j < 6:
                    Av[e, i, j] = col[i]
                else:
                    As[e, i, j - 6] = col[i]


@jit
def beam2d_start_transposed(X, EA, EI, second_order, edofs, cubic, alpha0, l0, mass, u0, u1, v0, stretch0, v1,
                            stretch1, domega1, dt, psi, back_u, back_v, back_s) -> None:
    """Adds one Beam2D group's terms of ``D^T psi`` to back_u, ``(dg/dv_n)^T psi`` to back_v and
    ``(dg/ds_n)^T psi`` to back_s (each (n_dof, n_r), psi (n_dof, n_r) on the residual's rows).

    X (n_el, 2, 2) m, EA, EI (n_el,), edofs (n_el, 6); ``cubic``: the group has a cubic mass of
    constants alpha0 (rad), l0 (m), mass (kg) (n_el,) each (empty without); the step's start u0,
    v0, stretch0 and end u1, v1, stretch1 (n_dof,) (the rates at the director DOFs those of the
    director rule), domega1 (n_dof,) d omega_{n+1} / d dtheta at the director DOFs, dt (s)."""
    n_el = X.shape[0]
    a0, a1 = gather_vector(u0, edofs), gather_vector(u1, edofs)
    # the force's start derivative: its tangent of the step with the ends swapped
    q, K = np.empty((n_el, 6)), np.empty((n_el, 6, 6))
    tangent = np.bool_(True)          # a bool, not a literal: the kernels compile once, as for the Python calls
    _mid_point(X, a1, a0, EA, EI, second_order, tangent, q, K)
    _add_transposed(K, edofs, psi, back_u)
    if not cubic:
        return
    # the reversed step (u1 -> u0 over -dt from the end rates): its tangent J_rev
    ve1 = gather_vector(v1, edofs)
    se1 = np.empty((n_el, 2))
    for e in range(n_el):
        se1[e, 0], se1[e, 1] = stretch1[edofs[e, 2]], stretch1[edofs[e, 5]]
    F, J = np.empty((n_el, 6)), np.empty((n_el, 6, 6))
    mid_point_inertia(alpha0, l0, mass, a1, a0, ve1, se1, -dt, F, J, tangent)
    Av, As = np.empty((n_el, 6, 6)), np.empty((n_el, 6, 2))
    _rate_columns(alpha0, l0, mass, a0, a1, dt, Av, As)
    # du = J_rev + 2/dt Av off the angles; at angle i: J_rev - Av alpha_i + As_i beta_i with
    # (alpha, beta) the director rule's d(omega1, s1)/du_n turned through dtheta (inertia.py)
    du = np.empty((n_el, 6, 6))
    ds = np.zeros((n_el, 6, 6))
    for e in range(n_el):
        for i in range(6):
            for j in range(6):
                du[e, i, j] = J[e, i, j] + (2.0 / dt) * Av[e, i, j]
        for node in range(2):
            col = 3 * node + 2
            g = edofs[e, col]
            dth = u1[g] - u0[g]
            c, sn = np.cos(dth), np.sin(dth)
            dw1 = -domega1[g]
            ds1 = -((2.0 / dt + stretch0[g]) * sn - v0[g] * c)
            alpha, beta = c * dw1 + sn * ds1, sn * dw1 - c * ds1
            for i in range(6):
                du[e, i, col] = J[e, i, col] - Av[e, i, col] * alpha + As[e, i, node] * beta
                ds[e, i, col] = As[e, i, node]
    _add_transposed(du, edofs, psi, back_u)
    _add_transposed(Av, edofs, psi, back_v)
    _add_transposed(ds, edofs, psi, back_s)


@jit
def model_start_transposed(indptr, indices, data, director_dofs, director_inertia, director, u0, u1, dt, psi,
                           back_u, back_v, back_s) -> None:
    """Adds the constant mass's and the director DOFs' terms of the three transposed products.

    (indptr, indices, data): the CSR arrays of the constant mass on the rows off the director
    DOFs, S (n_dof, n_dof), kg (d/du_n = -2 S / dt^2, d/dv_n = -2 S / dt); director_dofs (n_d,),
    their rotary inertia (n_d,) kg m^2 and the director step's five rows (5, n_d)
    (:func:`flexmb.compiled.hermite_mass2d.director_step`: row 4 is dF_D / d dtheta)."""
    n_r = psi.shape[1]
    cu, cv = -2.0 / (dt * dt), -2.0 / dt
    for i in range(indptr.size - 1):                    # (S^T psi)[j] = sum_i S_ij psi_i
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            for r in range(n_r):
                back_u[j, r] += cu * data[k] * psi[i, r]
                back_v[j, r] += cv * data[k] * psi[i, r]
    for k in range(director_dofs.size):
        g = director_dofs[k]
        dth = u1[g] - u0[g]
        half = 0.5 * dth
        sc = _sinc_of(half, np.sin(half), np.cos(half))[0]
        full = _sinc_of(dth, np.sin(dth), np.cos(dth))[0]
        du = -director[4, k]                                     # dF_D/du_n = -dF_D/d dtheta
        dv = -2.0 * director_inertia[k] / dt * full
        ds = 2.0 * director_inertia[k] / dt * (half * sc * sc)   # (1 - cos dtheta) / dtheta
        for r in range(n_r):
            back_u[g, r] += du * psi[g, r]
            back_v[g, r] += dv * psi[g, r]
            back_s[g, r] += ds * psi[g, r]


@jit
def beam2d_parameter_products(X, EA, EI, second_order, edofs, cubic, alpha0, l0, mass, masses, u0, u1, v0,
                              stretch0, a_m, unit, at_director, dt, psi, out) -> None:
    """psi_e . share_e (out: (n_el, 4, n_r)) of the group's section properties EA, EI, rho_A, rho_I
    (:data:`PROPERTIES`), psi (n_dof, n_r): the mid-point force of the group with EA alone and with
    EI alone; the inertia of rho_A alone and of rho_I alone, ``M_k a_m`` with the constant masses
    ``masses`` (2, n_el, 6, 6) of the two (kg, kg m^2), at the director DOFs (``at_director``
    (n_dof,) bool) M_k's diagonal times the director form per unit inertia ``unit`` (n_dof,), plus
    the cubic mass's step inertia on rho_A (``cubic``, constants as
    :func:`beam2d_start_transposed`). u0, v0, stretch0 the start, u1 the end, a_m (n_dof,) the mean
    acceleration (m/s^2, rad/s^2), dt (s). Without gravity and Rayleigh damping."""
    n_el = X.shape[0]
    n_r = psi.shape[1]
    a0, a1 = gather_vector(u0, edofs), gather_vector(u1, edofs)
    shares = np.zeros((4, n_el, 6))
    zero = np.zeros(n_el)
    K = np.empty((0, 6, 6))
    tangent = np.bool_(False)         # a bool, not a literal: the kernels compile once, as for the Python calls
    _mid_point(X, a0, a1, EA, zero, second_order, tangent, shares[0], K)
    _mid_point(X, a0, a1, zero, EI, second_order, tangent, shares[1], K)
    for k in range(2):
        for e in range(n_el):
            for i in range(6):
                g = edofs[e, i]
                if at_director[g]:
                    shares[2 + k, e, i] = masses[k, e, i, i] * unit[g]
                else:
                    acc = 0.0
                    for j in range(6):
                        acc += masses[k, e, i, j] * a_m[edofs[e, j]]
                    shares[2 + k, e, i] = acc
    if cubic:
        ve0 = gather_vector(v0, edofs)
        se0 = np.empty((n_el, 2))
        for e in range(n_el):
            se0[e, 0], se0[e, 1] = stretch0[edofs[e, 2]], stretch0[edofs[e, 5]]
        F = np.empty((n_el, 6))
        mid_point_inertia(alpha0, l0, mass, a0, a1, ve0, se0, dt, F, np.empty((0, 6, 6)), tangent)
        for e in range(n_el):
            for i in range(6):
                shares[2, e, i] += F[e, i]
    for k in range(4):
        for e in range(n_el):
            for r in range(n_r):
                acc = 0.0
                for i in range(6):
                    acc += shares[k, e, i] * psi[edofs[e, i], r]
                out[e, k, r] = acc


@jit
def end_weights(mu_u, mu_v, mu_s, director_dofs, director, u0, u1, v0, stretch0, dt, w) -> None:
    """w (n_dof, n_r): mu on the solve's end displacements through the end rates, ``mu_u + 2/dt mu_v``,
    at the director DOFs ``mu_u + d omega_{n+1}/d dtheta mu_v + d s_{n+1}/d dtheta mu_s`` (the
    director rule's; ``director`` (5, n_d) the director step's rows, row 2 d omega_{n+1}/d dtheta),
    for mu (n_dof, n_r) at the solve's end (:func:`flexmb.sensitivity.adjoint._solve_adjoint`)."""
    n, n_r = mu_u.shape
    for i in range(n):
        for r in range(n_r):
            w[i, r] = mu_u[i, r] + (2.0 / dt) * mu_v[i, r]
    for k in range(director_dofs.size):
        g = director_dofs[k]
        dth = u1[g] - u0[g]
        c, s = np.cos(dth), np.sin(dth)
        ds_dth = (2.0 / dt + stretch0[g]) * s - v0[g] * c
        for r in range(n_r):
            w[g, r] = mu_u[g, r] + director[2, k] * mu_v[g, r] + ds_dth * mu_s[g, r]


@jit
def start_adjoint(mu_u, mu_v, mu_s, w, director_dofs, u0, u1, back_u, back_v, back_s) -> None:
    """mu at the solve's start, written over the transposed products back_u, back_v, back_s (n_dof,
    n_r): ``mu_u - w - D^T psi``, ``-mu_v - (dg/dv_n)^T psi`` and zero stretch rates, at the director
    DOFs the director rule's turn of (mu_v, mu_s) through dtheta, ``-cos mu_v - sin mu_s`` and
    ``sin mu_v - cos mu_s``, minus the products (mu (n_dof, n_r) at the solve's end, w its
    :func:`end_weights`)."""
    n, n_r = mu_u.shape
    n_d = director_dofs.size
    v_d, s_d = np.empty((n_d, n_r)), np.empty((n_d, n_r))
    for k in range(n_d):
        g = director_dofs[k]
        dth = u1[g] - u0[g]
        c, s = np.cos(dth), np.sin(dth)
        for r in range(n_r):
            mv, ms = mu_v[g, r], mu_s[g, r]
            v_d[k, r] = -c * mv - s * ms - back_v[g, r]
            s_d[k, r] = s * mv - c * ms - back_s[g, r]
    for i in range(n):
        for r in range(n_r):
            back_u[i, r] = mu_u[i, r] - w[i, r] - back_u[i, r]
            back_v[i, r] = -mu_v[i, r] - back_v[i, r]
            back_s[i, r] = 0.0
    for k in range(n_d):
        for r in range(n_r):
            back_v[director_dofs[k], r], back_s[director_dofs[k], r] = v_d[k, r], s_d[k, r]
