"""The generalized-alpha step of a small planar beam model in one compiled call per Newton solve.

:class:`flexmb.integrators.dissipative.GeneralizedAlpha` evaluates its residual with a dozen
Python calls (kinematics, the beams' force and tangent, the cubic mass's end-point inertia, the
constant mass's product, the force scale), 50 us per iteration on a 9-DOF slider-crank, and
:func:`flexmb.integrators.newton.newton_solve` adds its own Python around each. For a model of one
:class:`~flexmb.elements.beam2d.Beam2D` group (with or without the cubic mass of
:mod:`flexmb.elements.hermite_mass2d`) without spatial rotations, configuration-dependent loads or
damping, :func:`beam2d_alpha_residual` computes the residual with the existing kernels
(:func:`flexmb.compiled.beam2d.forces`, :func:`flexmb.compiled.hermite_mass2d.end_point_inertia`,
:mod:`flexmb.compiled.scatter`, :func:`flexmb.compiled.sparse_ops.residual_scale`) in the order of
the Python residual, so the values are the same bit for bit, and :func:`beam2d_alpha_newton` runs
the whole Newton solve around it as :func:`flexmb.compiled.mid_point_group.beam2d_mid_point_newton`
does for the mid-point scheme (the same loop: :mod:`flexmb.compiled.dense_newton`). It adds no formula of its
own: the Python residual (``GeneralizedAlpha.residual`` without the plan) is its specification.
"""
from __future__ import annotations

import numba
import numpy as np

from flexmb.compiled.beam2d import forces
from flexmb.compiled.dense_newton import CONTINUE, new_counters, new_work, newton_iteration, solve_result
from flexmb.compiled.hermite_mass2d import end_point_inertia
from flexmb.compiled.mid_point_group import gather
from flexmb.compiled.scatter import scatter_matrix, scatter_vector
from flexmb.compiled.sparse_ops import csr_matvec, residual_scale


@numba.njit(cache=True)
def beam2d_alpha_start(X, EA, EI, second_order, edofs, cubic, alpha0, l0, mass, mass_indptr, mass_indices,
                       mass_values, u, v, a, f, reaction, constraint_force, factor, terms):
    """The balance at the step's start of :class:`~flexmb.integrators.dissipative.GeneralizedAlpha`,
    ``terms = factor (q(u) - f - reaction + M a + constraint_force + f_c(u, v, a))`` (n_dof,),
    written into terms, with factor = alpha_f / (1 - alpha_f), the start state's u, v, a, external
    force f, support reactions and joint forces (n_dof,; an empty constraint_force: none) and,
    with ``cubic``, the cubic mass's inertia f_c; summed in the order of
    ``GeneralizedAlpha._start_terms`` (the same values). Model arguments as
    :func:`beam2d_alpha_residual`'s."""
    n, n_el = u.size, edofs.shape[0]
    ue = gather(u, edofs, np.empty((n_el, 6)))
    q = np.zeros(n)
    # the flags as bool values, not literals: the kernels compile once, for their Python callers' bools too
    no = np.bool_(False)
    scatter_vector(q, forces(X, ue, EA, EI, second_order, no)[0], edofs)
    inertia = csr_matvec(mass_indptr, mass_indices, mass_values, a)
    for k in range(n):
        terms[k] = q[k] - f[k] - reaction[k] + inertia[k]
    if constraint_force.size:
        for k in range(n):
            terms[k] += constraint_force[k]
    if cubic:
        F = np.empty((n_el, 6))
        end_point_inertia(alpha0, l0, mass, ue, gather(v, edofs, np.empty((n_el, 6))),
                          gather(a, edofs, np.empty((n_el, 6))), 0.0, 0.0, F, np.empty((0, 6, 6)), no)
        f_c = np.zeros(n)
        scatter_vector(f_c, F, edofs)
        for k in range(n):
            terms[k] += f_c[k]
    for k in range(n):
        terms[k] = factor * terms[k]


@numba.njit(cache=True)
def beam2d_alpha_residual(X, EA, EI, second_order, edofs, entry_map, cubic, alpha0, l0, mass,
                          mass_indptr, mass_indices, mass_values, mass_data, free,
                          u0, v0, dv, da, kept, shifted, beta, gamma, weight, start_terms, f1,
                          momentum_norm0, dt, u1, tangent, g, data, v1, a1):
    """Generalized-alpha's residual ``g = q_{n+1} - f_{n+1} + M w a_{n+1} + M c a_n + f_c + start_terms``
    (n_dof,) at u1 (n_dof,) of a model of one Beam2D group, written into g with v1, a1 (n_dof,)
    and, with ``tangent``, the Jacobian data (nnz,) ``w da_du M + dq/du + df_c/du`` into data.

    Kinematics ``a1 = (u1 - u0 - dv - da) / (beta dt^2)``, ``v1 = v0 + dt (kept + gamma a1)`` and
    the mass term's acceleration ``w a1 + shifted`` (dv, da, kept, shifted (n_dof,) the step terms
    of ``GeneralizedAlpha._step_kinematics``, weight w); with ``cubic`` (alpha0, l0, mass (n_el,))
    the cubic mass's end-point inertia f_c at (u1, v1, w a1 + shifted). start_terms
    and f1 (n_dof,) are the step's balance at t_n and the external force at t_{n+1}. The constant
    mass is given as CSR arrays and as its free-free data (nnz,); X, EA, EI, second_order, edofs
    and entry_map as in :mod:`flexmb.compiled.mid_point_group`. Returns the force scale
    (:func:`flexmb.compiled.sparse_ops.residual_scale` of q, f1 and the inertia)."""
    n = u0.size
    mixed = np.empty(n)
    denominator = beta * dt**2
    for k in range(n):
        a1[k] = (u1[k] - u0[k] - dv[k] - da[k]) / denominator
        v1[k] = v0[k] + dt * (kept[k] + gamma * a1[k])
        mixed[k] = weight * a1[k] + shifted[k]
    da_du, dv_du = 1.0 / (beta * dt**2), gamma / (beta * dt)       # the rates of a1 and v1 along u1
    mass_factor = weight * da_du
    if tangent:
        for k in range(data.size):
            data[k] = mass_factor * mass_data[k]
    ue1 = gather(u1, edofs, np.empty((edofs.shape[0], 6)))
    q_e, K_e = forces(X, ue1, EA, EI, second_order, tangent)
    q = np.zeros(n)
    scatter_vector(q, q_e, edofs)
    if tangent:
        scatter_matrix(data, K_e, entry_map)
    inertia = csr_matvec(mass_indptr, mass_indices, mass_values, mixed)
    if cubic:
        n_el = edofs.shape[0]
        F, J = np.empty((n_el, 6)), np.empty((n_el if tangent else 0, 6, 6))
        end_point_inertia(alpha0, l0, mass, ue1, gather(v1, edofs, np.empty((n_el, 6))),
                          gather(mixed, edofs, np.empty((n_el, 6))), dv_du, mass_factor, F, J, tangent)
        f_c = np.zeros(n)
        scatter_vector(f_c, F, edofs)
        for k in range(n):
            inertia[k] = inertia[k] + f_c[k]
        if tangent:                              # assembled apart, then added (the Python residual's sums)
            d_c = np.zeros(data.size)
            scatter_matrix(d_c, J, entry_map)
            for k in range(data.size):
                data[k] += d_c[k]
    for k in range(n):
        g[k] = q[k] - f1[k] + inertia[k] + start_terms[k]
    return residual_scale(mass_indptr, mass_indices, mass_values, v1, free, momentum_norm0, dt, q, f1, inertia)


@numba.njit(cache=True)
def beam2d_alpha_newton(X, EA, EI, second_order, edofs, entry_map, cubic, alpha0, l0, mass,
                        mass_indptr, mass_indices, mass_values, mass_data, free,
                        u0, v0, a0, f0, reaction0, constraint_force0, beta, gamma, start_factor, weight, shift,
                        f1, momentum_norm0, dt,
                        jacobian_indptr, jacobian_indices, length_scale, residual_tol, force_tol, increment_tol,
                        max_iterations, increment_gate, stagnation_tol, round_off_factor, magnitudes,
                        pivot_tol, absurd_correction, capped, max_rotation_correction, u1, g, data, v1, a1,
                        residual_norms, force_scales, increment_norms, smallest_pivots, correction):
    """A whole Newton solve of a generalized-alpha step of the models :func:`beam2d_alpha_residual` takes,
    with the dense LU: the loop of :func:`flexmb.integrators.newton.newton_solve`
    (:func:`flexmb.compiled.dense_newton.newton_iteration`, as
    :func:`flexmb.compiled.mid_point_group.beam2d_mid_point_newton` runs it) around this scheme's
    residual, the same iterates and log. What the residual takes from the step's start alone is
    computed first, once: the balance at t_n (:func:`beam2d_alpha_start` of u0, v0, a0, f0,
    reaction0, constraint_force0 with start_factor = alpha_f / (1 - alpha_f)) and the kinematics'
    terms of ``GeneralizedAlpha._step_kinematics`` (dt v0, dt^2 (1/2 - beta) a0, (1 - gamma) a0 and
    shift a0, shift = (alpha_m - alpha_f) / (1 - alpha_f)), each formed as there (the same values).
    The model arguments, beta, gamma, weight, f1, momentum_norm0 and dt as
    :func:`beam2d_alpha_residual`'s, the rest as beam2d_mid_point_newton's; u1 (n_dof,) holds the
    start value and receives the last iterate, g, data, v1, a1 the residual terms there. Returns the
    outcome (:mod:`flexmb.compiled.dense_newton`'s codes), the iteration it was met at, the last
    force scale and the numbers of residual norms, increments and factorisations logged.
    """
    n = u0.size
    start_terms = np.empty(n)
    beam2d_alpha_start(X, EA, EI, second_order, edofs, cubic, alpha0, l0, mass, mass_indptr, mass_indices,
                       mass_values, u0, v0, a0, f0, reaction0, constraint_force0, start_factor, start_terms)
    dv, da, kept, shifted = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    c_da, c_kept = dt**2 * (0.5 - beta), 1.0 - gamma
    for k in range(n):
        dv[k] = dt * v0[k]
        da[k] = c_da * a0[k]
        kept[k] = c_kept * a0[k]
        shifted[k] = shift * a0[k]
    work, counts = new_work(free, u1), new_counters()
    tangent = np.bool_(True)                 # a bool, not a literal: the residual compiles once (as the Python call's)
    while True:
        evaluated = beam2d_alpha_residual(X, EA, EI, second_order, edofs, entry_map, cubic, alpha0, l0, mass,
                                          mass_indptr, mass_indices, mass_values, mass_data, free,
                                          u0, v0, dv, da, kept, shifted, beta, gamma, weight, start_terms, f1,
                                          momentum_norm0, dt, u1, tangent, g, data, v1, a1)
        outcome = newton_iteration(evaluated, free, g, data, jacobian_indptr, jacobian_indices, length_scale,
                                   residual_tol, force_tol, increment_tol, max_iterations, increment_gate,
                                   stagnation_tol, round_off_factor, magnitudes, pivot_tol, absurd_correction, capped,
                                   max_rotation_correction, u1, residual_norms, force_scales, increment_norms,
                                   smallest_pivots, correction, work, counts)
        if outcome != CONTINUE:
            return solve_result(outcome, evaluated, counts)
