"""The loop of a compiled full-Newton step solve with the dense LU, shared by the schemes' one-call
steps (:mod:`flexmb.compiled.mid_point_group`, :mod:`flexmb.compiled.alpha_group`,
:mod:`flexmb.compiled.spatial_group`).

Each scheme's solve evaluates its own residual and hands it to :func:`newton_iteration`, which does
the rest of one pass of :func:`flexmb.integrators.newton.newton_solve` (full Newton, additive
corrections, its convergence tests in the same order and with the same norms): the tests of the last
correction, the residual norm, the LU of the Jacobian, the correction with the cap of the planar
rotations and the update of u1. Solves whose update is not additive (spatial rotations, multipliers)
call its first part, :func:`newton_correction`, and update the unknowns themselves.
newton_solve is the specification; the schemes' tests check that
both give the same iterates and logs (both take their norms from
:func:`flexmb.compiled.sparse_ops.norm`).
"""
from __future__ import annotations

import numba
import numpy as np

from flexmb.compiled.dense_lu import equilibrated_lu, scaled_solve
from flexmb.compiled.sparse_ops import csc_abs_product_norm, norm

#: outcomes of a compiled solve (see :func:`flexmb.integrators.newton.newton_solve`); CONTINUE: go on
CONVERGED_RESIDUAL, CONVERGED_INCREMENT, CONVERGED_STAGNATION, CONVERGED_ROUND_OFF = 0, 1, 2, 3
NOT_FINITE_RESIDUAL, EXACTLY_SINGULAR, SINGULAR_PIVOT, NOT_FINITE_CORRECTION, ABSURD_CORRECTION, NO_CONVERGENCE = \
    -1, -2, -3, -4, -5, -6
CONTINUE = 99
#: the entries of a solve's counters (:func:`new_counters`)
_K, _NORMS, _INCREMENTS, _FACTORIZATIONS, _CORRECTED = 0, 1, 2, 3, 4


@numba.njit(cache=True)
def new_work(free, u1):
    """The working arrays of a solve over the free DOFs free (n_free,) from the start value u1
    (n_dof,): x (the unknowns), r, the dense LU, its row pivots and scalings, the round-off
    spacing, and (rn, size), the last residual and correction norms."""
    n_free = free.size
    x = np.empty(n_free)
    for i in range(n_free):
        x[i] = u1[free[i]]
    return (x, np.empty(n_free), np.empty((n_free, n_free)), np.empty(n_free, dtype=np.int64), np.empty(n_free),
            np.empty(n_free), np.empty(n_free), np.zeros(2))


@numba.njit(cache=True)
def new_counters():
    """The iteration k, the numbers of residual norms, increments and factorisations logged, and
    whether a correction was made (int64 (5,))."""
    return np.zeros(5, dtype=np.int64)


@numba.njit(cache=True)
def newton_iteration(evaluated, free, g, data, jacobian_indptr, jacobian_indices, length_scale, residual_tol,
                     force_tol, increment_tol, max_iterations, increment_gate, stagnation_tol, round_off_factor,
                     magnitudes, pivot_tol, absurd_correction, capped, max_rotation_correction, u1,
                     residual_norms, force_scales, increment_norms, smallest_pivots, correction, work, counts):
    """One pass of the loop after the residual g (n_dof,) with Jacobian data (nnz,) and force
    scale ``evaluated`` was evaluated at u1: returns an outcome (the constants above) or CONTINUE,
    after which the caller evaluates the residual at the updated u1 (n_dof,) and calls again.
    The pass is :func:`newton_correction` followed by the additive update of the unknowns
    x = u1[free] (the arguments are those of newton_correction, with u1)."""
    outcome, dx = newton_correction(evaluated, free, g, data, jacobian_indptr, jacobian_indices, length_scale,
                                    residual_tol, force_tol, increment_tol, max_iterations, increment_gate,
                                    stagnation_tol, round_off_factor, magnitudes, pivot_tol, absurd_correction, capped,
                                    max_rotation_correction, residual_norms, force_scales, increment_norms,
                                    smallest_pivots, correction, work, counts)
    if outcome != CONTINUE:
        return outcome
    x = work[0]
    for i in range(free.size):
        x[i] = x[i] + dx[i]
        u1[free[i]] = x[i]
    return CONTINUE


@numba.njit(cache=True)
def newton_correction(evaluated, free, g, data, jacobian_indptr, jacobian_indices, length_scale, residual_tol,
                      force_tol, increment_tol, max_iterations, increment_gate, stagnation_tol, round_off_factor,
                      magnitudes, pivot_tol, absurd_correction, capped, max_rotation_correction, residual_norms,
                      force_scales, increment_norms, smallest_pivots, correction, work, counts):
    """One pass of the loop up to the update of the unknowns, after the residual g with Jacobian data
    (nnz,) and force scale ``evaluated`` was evaluated at the unknowns x (``work``'s first array):
    the residual r = g[free] (n_free,) of Newton's unknowns (free: their rows in g), its tests and
    the correction. Returns an outcome (the constants above) and, with CONTINUE, the correction dx
    (n_free,) after the rotations' cap; the caller then applies it (x + dx, or the scheme's update
    of spatial rotations), writes the new unknowns into x, evaluates the residual there and calls
    again.

    magnitudes (n_free,) are the sizes of the unknowns beyond their values for the round-off test
    (``newton_solve``'s argument); corrections whose largest component at the free positions
    ``capped`` (the planar rotations) exceeds ``max_rotation_correction`` (rad) are scaled down to
    it, as the time step's ``update`` does. residual_norms, force_scales (max_iterations + 1,),
    increment_norms and smallest_pivots (max_iterations,) receive the log (nan for the pivots of
    the LU without the pivot test), correction (n_free,) the last correction; work
    (:func:`new_work`) and counts (:func:`new_counters`) carry the solve from one pass to the next."""
    x, r, lu, row_pivots, row_scale, col_scale, spacing, norms = work
    n_free = free.size
    tiny, eps = np.finfo(np.float64).tiny, np.finfo(np.float64).eps
    k, n_norms, n_increments = counts[_K], counts[_NORMS], counts[_INCREMENTS]
    rn, size = norms[0], norms[1]
    scale = evaluated
    if counts[_CORRECTED]:
        increment_norms[n_increments] = size
        n_increments += 1
        counts[_INCREMENTS] = n_increments
        if size <= increment_tol * length_scale and rn <= increment_gate * scale:
            return CONVERGED_INCREMENT, correction
        # newton.at_round_off: the correction below the round-off of the unknowns
        for i in range(n_free):
            spacing[i] = magnitudes[i] + abs(x[i])
        if size <= round_off_factor * eps * norm(spacing):
            return CONVERGED_ROUND_OFF, correction
        # newton._stagnated on the log as it stands (the new residual is not in it yet)
        if n_norms >= 3 and n_increments >= 2:
            small = (increment_norms[n_increments - 1] <= stagnation_tol * length_scale
                     and increment_norms[n_increments - 2] <= stagnation_tol * length_scale)
            stalled = min(residual_norms[n_norms - 2], residual_norms[n_norms - 1]) > 0.5 * residual_norms[n_norms - 3]
            if small and stalled:
                low = True
                for j in range(n_norms - 3, n_norms):
                    if not residual_norms[j] <= increment_gate * force_scales[j]:
                        low = False
                if not low:                        # newton.residual_floor at the new iterate
                    level = eps * csc_abs_product_norm(jacobian_indptr, jacobian_indices, data, spacing)
                    low = True
                    for j in range(n_norms - 3, n_norms):
                        if not residual_norms[j] <= level:
                            low = False
                if low:
                    return CONVERGED_STAGNATION, correction
        k += 1
        counts[_K] = k
    if tiny > scale:                                   # Python's max(scale, tiny)
        scale = tiny
    for i in range(n_free):
        r[i] = g[free[i]]
    rn = norm(r)
    norms[0] = rn
    residual_norms[n_norms] = rn
    force_scales[n_norms] = scale
    n_norms += 1
    counts[_NORMS] = n_norms
    if not rn < np.inf:
        return NOT_FINITE_RESIDUAL, correction
    if rn <= residual_tol * scale or rn <= force_tol:
        return CONVERGED_RESIDUAL, correction
    if k == max_iterations:
        return NO_CONVERGENCE, correction
    smallest = equilibrated_lu(jacobian_indptr, jacobian_indices, data, lu, row_pivots, row_scale, col_scale)
    if smallest == 0.0:
        return EXACTLY_SINGULAR, correction
    counts[_FACTORIZATIONS] += 1
    smallest_pivots[counts[_FACTORIZATIONS] - 1] = smallest if k == 0 else np.nan
    if k == 0 and smallest <= pivot_tol:
        return SINGULAR_PIVOT, correction
    for i in range(n_free):
        correction[i] = -r[i]
    dx = scaled_solve(lu, row_pivots, row_scale, col_scale, correction)
    correction[:] = dx
    size = norm(dx)
    norms[1] = size
    if not size < np.inf:
        return NOT_FINITE_CORRECTION, correction
    if size > absurd_correction * length_scale:
        return ABSURD_CORRECTION, correction
    # the step's cap of rotation corrections (time_stepping's update); the norm stays unscaled
    largest = 0.0
    for i in capped:
        largest = max(largest, abs(dx[i]))
    if largest > max_rotation_correction:
        dx *= max_rotation_correction / largest
    counts[_CORRECTED] = 1
    return CONTINUE, dx


@numba.njit(cache=True)
def solve_result(outcome, evaluated, counts):
    """A compiled solve's return: the outcome, the iteration it was met at (max_iterations for
    NO_CONVERGENCE, which ``counts`` then holds), the force scale of the last residual evaluation
    and the numbers of residual norms, increments and factorisations logged."""
    return outcome, counts[_K], evaluated, counts[_NORMS], counts[_INCREMENTS], counts[_FACTORIZATIONS]
