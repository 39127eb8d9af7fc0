"""One compiled call per element group and Newton iteration of the mid-point scheme.

A small model's Newton iteration is dominated by the Python around its kernels: gathering the
element DOF arrays, one call per kernel, allocating their outputs and scattering them. For planar
co-rotational beams (:class:`flexmb.elements.beam2d.Beam2D`, with or without the cubic mass of
:mod:`flexmb.elements.hermite_mass2d`) :func:`beam2d_mid_point` does all of that in one call:
it gathers the element DOFs from the global vectors, runs the existing kernels
(:func:`flexmb.compiled.beam2d.mid_point_forces`' loop and
:func:`flexmb.compiled.hermite_mass2d.mid_point_inertia`) and scatters their output
(:mod:`flexmb.compiled.scatter`). It composes those kernels and adds no formula of its own, so
their specifications (``reference_*``) stay the only ones; the test checks that the fused call
equals the separate calls bit for bit (same kernels, same summation order per entry).

A step's Newton iterations share its start: what the kernels take from u0, v0 and the stretch
rates alone (the start chords, local rotations and section forces, the cubic mass's start
director rates and the cosines and sines of its director angles) is computed once per step
(:func:`beam2d_mid_point_start`) and read by every iteration (:func:`beam2d_mid_point_from_start`);
the one-call residual also hands the director step's rates and the cosines and sines of each
node's rotation increment to the inertia of its elements instead of computing them again. The
values are those of the separate kernels bit for bit.

:func:`director_motion` is the mid-point scheme's kinematics of a step without spatial rotations
(:meth:`flexmb.integrators.schemes.MidPoint._motion`): the increment, the end velocity and the
mean acceleration, with the director rule at the cubic-mass nodes
(:func:`flexmb.compiled.hermite_mass2d.director_step`).
"""
from __future__ import annotations

import numba
import numpy as np

from flexmb.compiled.beam2d import MID_POINT_START, mid_point_from_start, mid_point_start
from flexmb.compiled.dense_newton import CONTINUE, new_counters, new_work, newton_iteration, solve_result
from flexmb.compiled.hermite_mass2d import (INERTIA_START, NODE_RATES, director_node, inertia_from_start, inertia_start,
                                            node_rates)
from flexmb.compiled.scatter import scatter_matrix, scatter_vector
from flexmb.compiled.sparse_ops import csr_matvec, residual_scale


@numba.njit(cache=True)
def new_start(n_el, cubic):
    """Room for a group's start-of-step quantities (:func:`beam2d_mid_point_start`): the tuple
    (ue0 (n_el, 6), beam (n_el, MID_POINT_START), ve0 (n_el, 6), se0 (n_el, 2), mass (n_el,
    INERTIA_START)), the last three with no rows without ``cubic``."""
    n_c = n_el if cubic else 0
    return (np.empty((n_el, 6)), np.empty((n_el, MID_POINT_START)), np.empty((n_c, 6)), np.empty((n_c, 2)),
            np.empty((n_c, INERTIA_START)))


@numba.njit(cache=True)
def beam2d_mid_point_start(X, EA, EI, second_order, edofs, cubic, alpha0, l0, u0, v0, stretch0, start):
    """What a group's mid-point terms take from the start of the step only (u0, v0, stretch0
    (n_dof,) global vectors): the element DOFs ue0, ve0 and stretch rates se0 gathered, and
    :func:`flexmb.compiled.beam2d.mid_point_start` and (with ``cubic``, alpha0 and l0 (n_el,) of
    the cubic mass) :func:`flexmb.compiled.hermite_mass2d.inertia_start`, written into start
    (:func:`new_start`). A step computes them once for all its Newton iterations."""
    ue0, beam, ve0, se0, inertia = start
    gather(u0, edofs, ue0)
    mid_point_start(X, ue0, EA, EI, second_order, beam)
    if not cubic:
        return
    gather(v0, edofs, ve0)
    for e in range(edofs.shape[0]):
        se0[e, 0], se0[e, 1] = stretch0[edofs[e, 2]], stretch0[edofs[e, 5]]
    inertia_start(alpha0, l0, ue0, ve0, se0, inertia)


@numba.njit(cache=True)
def gather(values, edofs, out):
    """The element values of a global vector values (n_dof,) into out (n_el, 6), returned."""
    for e in range(edofs.shape[0]):
        for i in range(edofs.shape[1]):
            out[e, i] = values[edofs[e, i]]
    return out


@numba.njit(cache=True)
def beam2d_mid_point_from_start(X, EA, EI, second_order, edofs, entry_map, start, ue1, tangent, force, data,
                                cubic, alpha0, l0, mass, dt, rates, inertia, inertia_data):
    """:func:`beam2d_mid_point` from the step's :func:`beam2d_mid_point_start` quantities, the
    element DOFs ue1 (n_el, 6) of u1 and, with ``cubic``, the director rule's rates of the
    element nodes, rates (n_el, 2, NODE_RATES) (:func:`flexmb.compiled.hermite_mass2d.node_rates`): the
    same values."""
    n_el = edofs.shape[0]
    ue0, beam, ve0, se0, inertia_0 = start
    q, K = np.empty((n_el, 6)), np.empty((n_el if tangent else 0, 6, 6))
    mid_point_from_start(X, beam, ue0, ue1, EA, EI, second_order, tangent, q, K)
    scatter_vector(force, q, edofs)
    if not cubic:
        if tangent:
            scatter_matrix(data, K, entry_map)
        return
    F, J = np.empty((n_el, 6)), np.empty((n_el if tangent else 0, 6, 6))
    inertia_from_start(alpha0, l0, mass, inertia_0, ue0, ue1, dt, rates, F, J, tangent)
    scatter_vector(inertia, F, edofs)
    if tangent:
        # scatter_matrix of K into data and of J into inertia_data in one pass over the positions
        # (each sum in its order: the same values)
        for e in range(n_el):
            for i in range(6):
                for j in range(6):
                    p = entry_map[e, i, j]
                    if p >= 0:
                        data[p] += K[e, i, j]
                        inertia_data[p] += J[e, i, j]


@numba.njit(cache=True)
def beam2d_mid_point(X, EA, EI, second_order, edofs, entry_map, u0, u1, tangent, force, data,
                     cubic, alpha0, l0, mass, v0, stretch0, dt, inertia, inertia_data):
    """Mid-point force and tangent of a Beam2D group, and its cubic mass's inertia, added in place.

    X (n_el, 2, 2), EA, EI (n_el,) and ``second_order`` as in :mod:`flexmb.compiled.beam2d`;
    edofs (n_el, 6) the element DOFs and entry_map (n_el, 6, 6) the CSC data positions of the
    assembly; u0, u1, v0, stretch0 (n_dof,) global vectors (the stretch rates at the rotation
    DOFs). Adds q_m into force (n_dof,) and, with ``tangent``, dq_m/du1 into data (nnz,). With
    ``cubic`` (alpha0, l0, mass (n_el,) of the cubic mass, dt the step) also the director-form
    inertia F into inertia (n_dof,) and dF/du1 into inertia_data (nnz,)."""
    n_el = edofs.shape[0]
    start = new_start(n_el, cubic)
    beam2d_mid_point_start(X, EA, EI, second_order, edofs, cubic, alpha0, l0, u0, v0, stretch0, start)
    ue1 = gather(u1, edofs, np.empty((n_el, 6)))
    rates = np.empty((n_el if cubic else 0, 2, NODE_RATES))
    if cubic:
        node_rates(start[0], ue1, start[2], start[3], dt, rates)
    beam2d_mid_point_from_start(X, EA, EI, second_order, edofs, entry_map, start, ue1, tangent, force, data,
                                cubic, alpha0, l0, mass, dt, rates, inertia, inertia_data)


@numba.njit(cache=True)
def director_motion(u0, u1, v0, stretch0, director_dofs, director_inertia, dt, d, v1, a_m, director):
    """Mid-point kinematics of a step without spatial rotations, written in place (n_dof,):
    d = u1 - u0, v1 = 2 d / dt - v0 (at the director DOFs omega_{n+1} of the director rule) and
    a_m = (v1 - v0) / dt; director (5, n_d) receives director_step's omega_{n+1}, s_{n+1},
    d omega_{n+1} / d dtheta, the rotary inertia force and its derivative."""
    _director_motion(u0, u1, v0, stretch0, director_dofs, director_inertia, dt, d, v1, a_m, director,
                     np.empty((6, director_dofs.size)))


@numba.njit(cache=True)
def _director_motion(u0, u1, v0, stretch0, director_dofs, director_inertia, dt, d, v1, a_m, director, node):
    """:func:`director_motion`, and what the director rule gives the inertia of the node's
    elements into node (6, n_d): sinc(dtheta/2) with its derivative, cos and sin of dtheta and of
    dtheta/2 (:func:`flexmb.compiled.hermite_mass2d.director_node`)."""
    n = u0.size
    for k in range(n):
        d[k] = u1[k] - u0[k]
        v1[k] = 2.0 * d[k] / dt - v0[k]
    for k in range(director_dofs.size):
        dof = director_dofs[k]
        (director[0, k], director[1, k], director[2, k], director[3, k], director[4, k], node[0, k], node[1, k],
         node[2, k], node[3, k], node[4, k], node[5, k]) = director_node(d[dof], v0[dof], stretch0[dof],
                                                                         director_inertia[k], dt)
        v1[dof] = director[0, k]
    for k in range(n):
        a_m[k] = (v1[k] - v0[k]) / dt


@numba.njit(cache=True)
def beam2d_mid_point_residual(X, EA, EI, second_order, edofs, entry_map, cubic, alpha0, l0, mass,
                              mass_indptr, mass_indices, mass_values, mass_data, free, director_dofs,
                              director_inertia, director_diagonal, director_free, node_director,
                              u0, v0, stretch0, start, refresh, momentum_norm0, dt, mass_factor, f_m, u1,
                              tangent, g, data, d, v1, a_m, director):
    """The mid-point residual of a model of one Beam2D group without spatial rotations and without
    configuration-dependent loads, as :meth:`flexmb.integrators.schemes.MidPoint.residual` computes
    it with the separate calls, in the same order (so the same values): kinematics
    (:func:`director_motion`), group terms (:func:`beam2d_mid_point`), the constant mass's inertia
    M a_m, the director-form rotary inertia at the cubic-mass nodes and the residual
    g = q_m - f_m + inertia (n_dof,), written in place with d, v1, a_m (n_dof,), director (5, n_d)
    and, with ``tangent``, the Jacobian data (nnz,) ``mass_factor M + dq_m/du1 + df/du1``.
    The constant mass is given as CSR arrays (n_dof rows) and as its free-free data (nnz,);
    director_diagonal (n_df,) are the data positions of the free director DOFs' diagonal,
    director_free (n_d,) which director DOFs are free, node_director (n_el, 2) the director index of
    each element node (with ``cubic``, else (0, 2)): the director step's rates and sinc(dtheta/2)
    serve the elements' inertia too. start (:func:`new_start`) holds the start-of-step
    quantities of u0, v0 and stretch0, computed first with ``refresh`` (a step's first call; its
    later ones reuse them). Returns the residual's force scale
    (:func:`flexmb.compiled.sparse_ops.residual_scale`)."""
    if refresh:
        beam2d_mid_point_start(X, EA, EI, second_order, edofs, cubic, alpha0, l0, u0, v0, stretch0, start)
    n_d = director_dofs.size
    node = np.empty((6, n_d))
    _director_motion(u0, u1, v0, stretch0, director_dofs, director_inertia, dt, d, v1, a_m, director, node)
    rates = np.empty((node_director.shape[0], 2, NODE_RATES))   # the director step's, per element node
    for e in range(node_director.shape[0]):
        for i in range(2):
            k = node_director[e, i]
            rates[e, i, 0], rates[e, i, 1] = director[0, k], director[1, k]
            for j in range(6):
                rates[e, i, 2 + j] = node[j, k]
    n = u0.size
    if tangent:
        for k in range(data.size):
            data[k] = mass_factor * mass_data[k]
    q_m, f_c = np.zeros(n), np.zeros(n)
    d_c = np.zeros(data.size if tangent else 0)
    ue1 = gather(u1, edofs, np.empty((edofs.shape[0], 6)))
    beam2d_mid_point_from_start(X, EA, EI, second_order, edofs, entry_map, start, ue1, tangent, q_m, data,
                                cubic, alpha0, l0, mass, dt, rates, f_c, d_c)
    inertia = csr_matvec(mass_indptr, mass_indices, mass_values, a_m)
    if n_d:
        for k in range(n_d):
            inertia[director_dofs[k]] = director[3, k]
        for k in range(n):
            inertia[k] += f_c[k]
        if tangent:                    # in MidPoint.residual's order: the director diagonal, then d_c
            slot = 0
            for k in range(n_d):
                if director_free[k]:
                    data[director_diagonal[slot]] += director[4, k] - mass_factor * director_inertia[k]
                    slot += 1
            for k in range(data.size):
                data[k] += d_c[k]
    for k in range(n):
        g[k] = q_m[k] - f_m[k] + inertia[k]
    return residual_scale(mass_indptr, mass_indices, mass_values, v1, free, momentum_norm0, dt, q_m, f_m, inertia)


@numba.njit(cache=True)
def beam2d_mid_point_newton(X, EA, EI, second_order, edofs, entry_map, cubic, alpha0, l0, mass,
                            mass_indptr, mass_indices, mass_values, mass_data, free, director_dofs,
                            director_inertia, director_diagonal, director_free, node_director,
                            u0, v0, stretch0, momentum_norm0, dt, mass_factor, f_m,
                            jacobian_indptr, jacobian_indices, length_scale, residual_tol, force_tol, increment_tol,
                            max_iterations, increment_gate, stagnation_tol, round_off_factor, magnitudes,
                            pivot_tol, absurd_correction, capped, max_rotation_correction, u1, g, data, d, v1, a_m,
                            director, residual_norms, force_scales, increment_norms, smallest_pivots, correction):
    """A whole Newton solve of a mid-point step of the models :func:`beam2d_mid_point_residual`
    takes, with the dense LU: the loop of :func:`flexmb.integrators.newton.newton_solve`
    (:func:`flexmb.compiled.dense_newton.newton_iteration`) around the one-call residual, so a
    small model's step makes one compiled call instead of a few dozen Python calls per iteration.
    newton_solve is its specification; the test checks that both give the same iterates and
    logs. The step's start quantities (:func:`beam2d_mid_point_start`) are computed once, before
    the first iteration.

    u1 (n_dof,) holds the start value (the predictor with the prescribed values) and receives the
    last iterate; g, data, d, v1, a_m, director receive the residual terms of the last evaluation
    (:func:`beam2d_mid_point_residual`); the tolerances, magnitudes, pivot_tol, capped, the log
    arrays and correction as newton_iteration takes them. Returns the outcome
    (:mod:`flexmb.compiled.dense_newton`'s codes), the iteration it was met at, the force scale
    the last residual evaluation returned and the numbers of residual norms, increments and
    factorisations logged (:func:`flexmb.compiled.dense_newton.solve_result`).
    """
    start = new_start(edofs.shape[0], cubic)                 # the step's start: once for all iterations
    beam2d_mid_point_start(X, EA, EI, second_order, edofs, cubic, alpha0, l0, u0, v0, stretch0, start)
    work, counts = new_work(free, u1), new_counters()
    # the flags as bool values, not literals: the residual compiles once, for its Python callers' bools too
    refresh, tangent = np.bool_(False), np.bool_(True)
    while True:
        evaluated = beam2d_mid_point_residual(X, EA, EI, second_order, edofs, entry_map, cubic, alpha0, l0, mass,
                                              mass_indptr, mass_indices, mass_values, mass_data, free, director_dofs,
                                              director_inertia, director_diagonal, director_free, node_director,
                                              u0, v0, stretch0, start, refresh, momentum_norm0, dt, mass_factor,
                                              f_m, u1, tangent, g, data, d, v1, a_m, director)
        outcome = newton_iteration(evaluated, free, g, data, jacobian_indptr, jacobian_indices, length_scale,
                                   residual_tol, force_tol, increment_tol, max_iterations, increment_gate,
                                   stagnation_tol, round_off_factor, magnitudes, pivot_tol, absurd_correction, capped,
                                   max_rotation_correction, u1, residual_norms, force_scales, increment_norms,
                                   smallest_pivots, correction, work, counts)
        if outcome != CONTINUE:
            return solve_result(outcome, evaluated, counts)
