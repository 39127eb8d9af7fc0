"""Fixed time steps of a small planar beam model as one compiled loop, for the two schemes with a
one-call Newton solve (:func:`flexmb.compiled.mid_point_group.beam2d_mid_point_newton`,
:func:`flexmb.compiled.alpha_group.beam2d_alpha_newton`), and of such models beyond the dense LU
with modified Newton and the band LU kept from step to step (:func:`mid_point_kept_steps`,
:func:`alpha_kept_steps`; the solves of :mod:`flexmb.compiled.kept_newton`).

With the whole Newton solve of a step compiled, a small model's step still spent most of its time
in Python around it: the predictor, the prescribed values, the solve's arguments, the reactions,
the work and the new state, 60-80 us a step against 25 us of the solve itself (slider-crank A,
9 unknowns). These loops take a run of steps from a state in one call and do per step what
``flexmb.integrators.time_stepping._sub_step`` and the schemes do after the solve (the same
operations in the same order, so the same values bit for bit): the rigid-motion predictor
(:func:`flexmb.compiled.predictor.planar_rigid_prediction`), the prescribed values, the start
momentum's norm, the solve, the support reactions (the residual at the prescribed DOFs), the work
of the loads and reactions over the step (``Scheme.work_increment``) and, in the mid-point scheme,
the director stretch rates of the cubic-mass nodes (``MidPoint.end_stretch``). What depends on
user functions of time (prescribed values, loads) comes in as per-step tables, evaluated in Python
(:mod:`flexmb.integrators.step_loop`).

A loop stops before a step it cannot finish as the Python path would, and returns how many steps
it completed: a step whose solve fails or meets a singular pivot (the Python path decides on the
retry, the cut-back or the error), and with ``stop_at_round_off`` the first step that converges at
the round-off floor or by stagnation (the Python path enters it in the run log). The caller runs
that step in Python (the same solve from the same state) and goes on.
"""
from __future__ import annotations

import numba
import numpy as np

from flexmb.compiled.alpha_group import beam2d_alpha_newton
from flexmb.compiled.dense_newton import CONVERGED_INCREMENT, CONVERGED_RESIDUAL
from flexmb.compiled.kept_newton import beam2d_alpha_kept_newton, beam2d_mid_point_kept_newton, keep
from flexmb.compiled.mid_point_group import beam2d_mid_point_newton
from flexmb.compiled.predictor import planar_rigid_prediction
from flexmb.compiled.sparse_ops import csr_matvec, dot, free_norm


@numba.njit(cache=True)
def _stops(outcome, stop_at_round_off) -> bool:
    """Whether the loop leaves the step to the Python path (see the module's description)."""
    if outcome < 0:
        return True
    return stop_at_round_off and outcome != CONVERGED_RESIDUAL and outcome != CONVERGED_INCREMENT


@numba.njit(cache=True)
def _start_value(u, v, a, dt, planar_rotations, prescribed_index, prescribed_values, u1) -> None:
    """u1 (n_dof,) = the predictor from (u, v, a) with the prescribed values (n_p,) set at
    prescribed_index (n_p,), as ``_sub_step`` starts Newton."""
    u1[:] = planar_rigid_prediction(u, v, a, dt, planar_rotations)
    for i in range(prescribed_index.size):
        u1[prescribed_index[i]] = prescribed_values[i]


@numba.njit(cache=True)
def _reactions(g, prescribed, reaction) -> None:
    """reaction (n_dof,) = g at the prescribed DOFs (n_p,), zero elsewhere (``Scheme.reaction``)."""
    reaction[:] = 0.0
    for p in prescribed:
        reaction[p] = g[p]


@numba.njit(cache=True)
def mid_point_steps(model, dts, forces, prescribed_index, prescribed_values, planar_rotations, prescribed,
                    mass_indptr, mass_indices, mass_values, free, director_dofs, nnz, jacobian_indptr,
                    jacobian_indices, length_scale, residual_tol, force_tol, increment_tol, max_iterations,
                    increment_gate, stagnation_tol, round_off_factor, magnitudes, pivot_tol, absurd_correction,
                    capped, max_rotation_correction, stop_at_round_off, u0, v0, a0, stretch0, work0,
                    U, V, A, R, S, work, iterations):
    """Up to dts.size mid-point steps (``MidPoint.solve_step`` each) from the state u0, v0, a0
    (n_dof,), director stretch rates stretch0 (n_dof,; empty without cubic-mass nodes) and work0
    (J). Per step k: its size dts[k] (s), the external force over it forces[k] (n_dof,; the
    ``mid_point_external_force`` of its ends) and the prescribed values at its end
    prescribed_values[k] (n_p,) for the DOFs prescribed_index. model: the arguments of
    :func:`~flexmb.compiled.mid_point_group.beam2d_mid_point_newton` before u0 (the scheme's plan);
    the Newton arguments as there; prescribed (n_p,): every prescribed DOF (the reactions').
    Step k's end state goes to the rows U[k], V[k], A[k] (displacements, velocities, the
    acceleration a_m), R[k] (support reactions), S[k] (stretch rates, when director_dofs),
    work[k] and iterations[k]. Returns the number of steps completed."""
    n, n_dd = u0.size, director_dofs.size
    u, v, a, stretch, w = u0, v0, a0, stretch0, work0
    residual_norms, force_scales = np.empty(max_iterations + 1), np.empty(max_iterations + 1)
    increment_norms, smallest_pivots = np.empty(max_iterations), np.empty(max_iterations)
    correction = np.empty(free.size)
    g, d, force = np.empty(n), np.empty(n), np.empty(n)
    for k in range(dts.size):
        dt = dts[k]
        u1 = U[k]
        _start_value(u, v, a, dt, planar_rotations, prescribed_index, prescribed_values[k], u1)
        momentum_norm = free_norm(csr_matvec(mass_indptr, mass_indices, mass_values, v), free)
        data, director = np.empty(nnz), np.empty((5, n_dd))
        outcome, _, _, _, n_increments, _ = beam2d_mid_point_newton(
            *model, u, v, stretch, momentum_norm, dt, 2.0 / dt**2, forces[k], jacobian_indptr, jacobian_indices,
            length_scale, residual_tol, force_tol, increment_tol, max_iterations, increment_gate, stagnation_tol,
            round_off_factor, magnitudes, pivot_tol, absurd_correction, capped, max_rotation_correction, u1, g, data,
            d, V[k], A[k], director, residual_norms, force_scales, increment_norms, smallest_pivots, correction)
        if _stops(outcome, stop_at_round_off):
            return k
        w = _mid_point_end(g, d, director, forces[k], prescribed, director_dofs, w, force, R[k], S[k])
        work[k] = w
        iterations[k] = n_increments
        u, v, a = u1, V[k], A[k]
        if n_dd:
            stretch = S[k]
    return dts.size


@numba.njit(cache=True)
def _mid_point_end(g, d, director, external, prescribed, director_dofs, work0, force, reaction, stretch):
    """After a mid-point step's solve: the support reactions into reaction (n_dof,), the director
    stretch rates into stretch (n_dof,; ``MidPoint.end_stretch``, with director_dofs) from the last
    residual evaluation's g, d (n_dof,) and director (5, n_d); returns the work (J) after the step from
    work0 (``MidPoint.work_increment``: (f_ext + reaction) . d, external (n_dof,) the step's external
    force; force (n_dof,) is scratch)."""
    _reactions(g, prescribed, reaction)
    for i in range(g.size):
        force[i] = external[i] + reaction[i]
    if director_dofs.size:
        stretch[:] = 0.0
        for i in range(director_dofs.size):
            stretch[director_dofs[i]] = director[1, i]
    return work0 + dot(force, d)


@numba.njit(cache=True)
def mid_point_kept_steps(model, dts, forces, prescribed_index, prescribed_values, planar_rotations, prescribed,
                         mass_indptr, mass_indices, mass_values, free, director_dofs, jacobian_indptr,
                         jacobian_indices, length_scale, residual_tol, force_tol, increment_tol, max_iterations,
                         increment_gate, stagnation_tol, round_off_factor, magnitudes, absurd_correction, capped,
                         max_rotation_correction, reuse_contraction, near_solution, near_contraction, new_index, kl,
                         ku, bank, stop_at_round_off, u0, v0, a0, stretch0, work0, U, V, A, R, S, work, iterations,
                         factorizations):
    """:func:`mid_point_steps` for models of more than DENSE_LIMIT unknowns: each step's solve is
    modified Newton with the band LU kept from the step before
    (:func:`flexmb.compiled.kept_newton.beam2d_mid_point_kept_newton`; the contraction constants,
    the band ordering new_index, kl, ku and the kept state ``bank`` as there), without the pivot
    test; factorizations[k] receives step k's number of LUs. The other arguments and the return
    as :func:`mid_point_steps`."""
    n, n_dd = u0.size, director_dofs.size
    u, v, a, stretch, w = u0, v0, a0, stretch0, work0
    residual_norms, force_scales = np.empty(max_iterations + 1), np.empty(max_iterations + 1)
    increment_norms = np.empty(max_iterations)
    correction = np.empty(free.size)
    g, d, force = np.empty(n), np.empty(n), np.empty(n)
    for k in range(dts.size):
        dt = dts[k]
        u1 = U[k]
        _start_value(u, v, a, dt, planar_rotations, prescribed_index, prescribed_values[k], u1)
        momentum_norm = free_norm(csr_matvec(mass_indptr, mass_indices, mass_values, v), free)
        director = np.empty((5, n_dd))
        outcome, n_increments, n_factorizations, slot = beam2d_mid_point_kept_newton(
            *model, u, v, stretch, momentum_norm, dt, 2.0 / dt**2, forces[k], jacobian_indptr, jacobian_indices,
            length_scale, residual_tol, force_tol, increment_tol, max_iterations, increment_gate, stagnation_tol,
            round_off_factor, magnitudes, absurd_correction, capped, max_rotation_correction, reuse_contraction,
            near_solution, near_contraction, new_index, kl, ku, bank, u1, g, d, V[k], A[k], director, residual_norms,
            force_scales, increment_norms, correction)
        if _stops(outcome, stop_at_round_off):
            return k
        keep(bank, dt, slot)
        w = _mid_point_end(g, d, director, forces[k], prescribed, director_dofs, w, force, R[k], S[k])
        work[k] = w
        iterations[k] = n_increments
        factorizations[k] = n_factorizations
        u, v, a = u1, V[k], A[k]
        if n_dd:
            stretch = S[k]
    return dts.size


@numba.njit(cache=True)
def alpha_steps(model, beta, gamma, start_factor, weight, shift, dts, start_forces, end_forces, prescribed_index,
                prescribed_values, planar_rotations, prescribed, mass_indptr, mass_indices, mass_values, free, nnz,
                jacobian_indptr, jacobian_indices, length_scale, residual_tol, force_tol, increment_tol,
                max_iterations, increment_gate, stagnation_tol, round_off_factor, magnitudes, pivot_tol,
                absurd_correction, capped, max_rotation_correction, stop_at_round_off, u0, v0, a0, reaction0,
                constraint_force0, work0, U, V, A, R, work, iterations):
    """Up to dts.size generalized-alpha steps (``GeneralizedAlpha.solve_step`` each) from the state
    u0, v0, a0, reaction0 (n_dof,), its constraint force (n_dof, or empty: what the state holds) and
    work0 (J). Per step k: its size dts[k] (s), the external forces at its start and end
    start_forces[k], end_forces[k] (n_dof,) and the prescribed values at its end as
    :func:`mid_point_steps` takes them; model: the arguments of
    :func:`~flexmb.compiled.alpha_group.beam2d_alpha_newton` before u0; beta, gamma, start_factor,
    weight and shift as there. Step k's end state goes to the rows U[k], V[k], A[k], R[k], work[k]
    and iterations[k]. Returns the number of steps completed."""
    n = u0.size
    u, v, a, reaction, constraint_force, w = u0, v0, a0, reaction0, constraint_force0, work0
    residual_norms, force_scales = np.empty(max_iterations + 1), np.empty(max_iterations + 1)
    increment_norms, smallest_pivots = np.empty(max_iterations), np.empty(max_iterations)
    correction = np.empty(free.size)
    g = np.empty(n)
    no_constraint_force = np.zeros(0)
    for k in range(dts.size):
        dt = dts[k]
        u1 = U[k]
        _start_value(u, v, a, dt, planar_rotations, prescribed_index, prescribed_values[k], u1)
        momentum_norm = free_norm(csr_matvec(mass_indptr, mass_indices, mass_values, v), free)
        data = np.empty(nnz)
        outcome, _, _, _, n_increments, _ = beam2d_alpha_newton(
            *model, u, v, a, start_forces[k], reaction, constraint_force, beta, gamma, start_factor, weight, shift,
            end_forces[k], momentum_norm, dt, jacobian_indptr, jacobian_indices, length_scale, residual_tol,
            force_tol, increment_tol, max_iterations, increment_gate, stagnation_tol, round_off_factor, magnitudes,
            pivot_tol, absurd_correction, capped, max_rotation_correction, u1, g, data, V[k], A[k], residual_norms,
            force_scales, increment_norms, smallest_pivots, correction)
        if _stops(outcome, stop_at_round_off):
            return k
        w = _alpha_end(g, start_forces[k], end_forces[k], reaction, u, u1, prescribed, w, R[k])
        work[k] = w
        iterations[k] = n_increments
        u, v, a, reaction, constraint_force = u1, V[k], A[k], R[k], no_constraint_force
    return dts.size


@numba.njit(cache=True)
def _alpha_end(g, start_force, end_force, reaction0, u0, u1, prescribed, work0, reaction):
    """After a generalized-alpha step's solve: the support reactions into reaction (n_dof,) from the
    last residual g (n_dof,); returns the work (J) after the step from work0
    (``Newmark.work_increment``: (f_avg + (r_n + r_{n+1}) / 2) . (u_{n+1} - u_n), f_avg = (f_n +
    f_{n+1}) / 2, with the external forces start_force, end_force and the reactions reaction0 at the
    step's start, all (n_dof,))."""
    _reactions(g, prescribed, reaction)
    n = g.size
    force, d = np.empty(n), np.empty(n)
    for i in range(n):
        force[i] = 0.5 * (start_force[i] + end_force[i]) + 0.5 * (reaction0[i] + reaction[i])
        d[i] = u1[i] - u0[i]
    return work0 + dot(force, d)


@numba.njit(cache=True)
def alpha_kept_steps(model, beta, gamma, start_factor, weight, shift, dts, start_forces, end_forces, prescribed_index,
                     prescribed_values, planar_rotations, prescribed, mass_indptr, mass_indices, mass_values, free,
                     jacobian_indptr, jacobian_indices, length_scale, residual_tol, force_tol, increment_tol,
                     max_iterations, increment_gate, stagnation_tol, round_off_factor, magnitudes, absurd_correction,
                     capped, max_rotation_correction, reuse_contraction, near_solution, near_contraction, new_index,
                     kl, ku, bank, stop_at_round_off, u0, v0, a0, reaction0, constraint_force0, work0, U, V, A, R,
                     work, iterations, factorizations):
    """:func:`alpha_steps` for models of more than DENSE_LIMIT unknowns, each step's solve modified
    Newton with the band LU kept from the step before
    (:func:`flexmb.compiled.kept_newton.beam2d_alpha_kept_newton`; its Newton arguments as
    :func:`mid_point_kept_steps` takes them); factorizations[k] receives step k's number of LUs."""
    n = u0.size
    u, v, a, reaction, constraint_force, w = u0, v0, a0, reaction0, constraint_force0, work0
    residual_norms, force_scales = np.empty(max_iterations + 1), np.empty(max_iterations + 1)
    increment_norms = np.empty(max_iterations)
    correction = np.empty(free.size)
    g = np.empty(n)
    no_constraint_force = np.zeros(0)
    for k in range(dts.size):
        dt = dts[k]
        u1 = U[k]
        _start_value(u, v, a, dt, planar_rotations, prescribed_index, prescribed_values[k], u1)
        momentum_norm = free_norm(csr_matvec(mass_indptr, mass_indices, mass_values, v), free)
        outcome, n_increments, n_factorizations, slot = beam2d_alpha_kept_newton(
            *model, u, v, a, start_forces[k], reaction, constraint_force, beta, gamma, start_factor, weight, shift,
            end_forces[k], momentum_norm, dt, jacobian_indptr, jacobian_indices, length_scale, residual_tol,
            force_tol, increment_tol, max_iterations, increment_gate, stagnation_tol, round_off_factor, magnitudes,
            absurd_correction, capped, max_rotation_correction, reuse_contraction, near_solution, near_contraction,
            new_index, kl, ku, bank, u1, g, V[k], A[k], residual_norms, force_scales, increment_norms, correction)
        if _stops(outcome, stop_at_round_off):
            return k
        keep(bank, dt, slot)
        w = _alpha_end(g, start_forces[k], end_forces[k], reaction, u, u1, prescribed, w, R[k])
        work[k] = w
        iterations[k] = n_increments
        factorizations[k] = n_factorizations
        u, v, a, reaction, constraint_force = u1, V[k], A[k], R[k], no_constraint_force
    return dts.size
