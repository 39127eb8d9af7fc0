"""Modified Newton with the band LU kept from one step to the next, compiled: the solve that
:func:`flexmb.integrators.newton.newton_solve` makes with ``modified=True``, a
:class:`~flexmb.integrators.newton.KeptFactorization` and the band LU backend
(:class:`flexmb.integrators.sparse_lu.BandedLU`), for the mid-point and generalized-alpha steps of
the planar beam models of the one-call residuals (:mod:`flexmb.compiled.mid_point_group`,
:mod:`flexmb.compiled.alpha_group`) of more than :data:`~flexmb.integrators.newton.DENSE_LIMIT`
unknowns whose every unknown has inertia (no pivot test: ``check_singular`` off).

Above the dense LU's sizes such a step cost 0.14 ms at 192 unknowns (Simo's spin-up beam of 64
elements), 0.1 ms of it the Python of newton_solve and of the step around the one-call residual;
here a run of steps is one compiled call (:func:`flexmb.compiled.step_loop.mid_point_kept_steps`,
:func:`~flexmb.compiled.step_loop.alpha_kept_steps`).
newton_solve, KeptFactorization and the band LU are the specification; the same operations in the
same order give the same iterates, logs and factorisations bit for bit
(``tests/test_compiled_step_loop.py``):

* the kept LU is taken when it was made under the same step size (1e-9 relative, as
  ``math.isclose``) and stands for the start point's Jacobian, which is then not evaluated;
* a factorisation is kept while every iteration reduces the residual by ``reuse_contraction``
  (``near_contraction`` below ``near_solution`` force scales); after one that did not (with its
  correction above the stagnation level) the solve goes on as full Newton, from the iterate before
  that correction when the residual grew;
* a Jacobian equal to the one this solve factorised keeps that LU;
* a converged solve keeps its last LU, under its step size (:func:`keep`, called by the loop that
  accepts the step); a failed one, or one the loop hands back to the Python path, leaves the LU it
  was given (the Python path takes it again).

The round-off floor of the stagnation test reads the last Jacobian evaluated, as newton_solve's
reads the assembly's one Jacobian object (:meth:`flexmb.assembly.Assembly.jacobian_matrix`), whose
values are those of the last tangent evaluation.

The kept state (a "bank", :func:`new_bank`) has two slots of factors: a step factorises into the
slot not holding the kept LU, so the kept one survives a step that fails.
"""
from __future__ import annotations

import numba
import numpy as np

from flexmb.compiled.alpha_group import beam2d_alpha_residual, beam2d_alpha_start
from flexmb.compiled.banded_lu import band_lu, equilibrated_band_fill, permuted_band_solve
from flexmb.compiled.dense_newton import (ABSURD_CORRECTION, CONTINUE, CONVERGED_INCREMENT, CONVERGED_RESIDUAL,
                                          CONVERGED_ROUND_OFF, CONVERGED_STAGNATION, EXACTLY_SINGULAR, NO_CONVERGENCE,
                                          NOT_FINITE_CORRECTION, NOT_FINITE_RESIDUAL)
from flexmb.compiled.mid_point_group import beam2d_mid_point_residual, beam2d_mid_point_start, new_start
from flexmb.compiled.sparse_ops import csc_abs_product_norm, norm

#: the entries of a bank's flags (:func:`new_bank`): the slot of the kept LU, whether one is kept,
#: whether each slot's factors were made here (else they are the ones the caller put there), and
#: whether the step under way saved the last Jacobian before its first tangent evaluation
SLOT, VALID, MADE, BACKED_UP = 0, 1, 2, 4
#: the entries of a solve's counters: iteration k, residual norms, increments and factorisations
#: logged, the phase of the next pass, full Newton from now on, the slot of the LU in use (-1: none),
#: whether this solve factorised it
_K, _NORMS, _INCREMENTS, _FACTORIZATIONS, _PHASE, _FULL, _CURRENT, _OWN = 0, 1, 2, 3, 4, 5, 6, 7
#: phases: the evaluation was at the start or after a correction, or at the fall-back to full Newton
_EVALUATED, _CORRECTED, _FALL_BACK = 0, 1, 2


def new_bank(n_free: int, width: int, nnz: int) -> tuple:
    """An empty kept state for Jacobians of n_free unknowns with nnz stored entries, band storage
    of ``width`` = 2 kl + ku + 1 columns (:mod:`flexmb.compiled.banded_lu`): the factors of two
    slots (ab (2, n_free, width), pivots (2, n_free), row and column scales (2, n_free)), the
    Jacobian values each slot factorises (2, nnz), the last Jacobian evaluated and its copy from
    before the step under way (nnz,), the flags (int64 (5,), the entries above) and the key, the
    step size (s) the kept LU was made under ((1,), nan: none)."""
    return (np.zeros((2, n_free, width)), np.zeros((2, n_free), dtype=np.int64), np.ones((2, n_free)),
            np.ones((2, n_free)), np.zeros((2, nnz)), np.zeros(nnz), np.zeros(nnz), np.zeros(5, dtype=np.int64),
            np.full(1, np.nan))


@numba.njit(cache=True)
def same_key(a, b) -> bool:
    """``math.isclose(a, b, rel_tol=1e-9)`` (KeptFactorization.take)."""
    if a == b:
        return True
    if abs(a) == np.inf or abs(b) == np.inf:
        return False
    diff = abs(b - a)
    return diff <= abs(1e-9 * b) or diff <= abs(1e-9 * a)


@numba.njit(cache=True)
def take(bank, key) -> int:
    """The slot of the kept LU if made under ``key`` (the step size), else -1 (KeptFactorization.take);
    the bank is changed only when the step converges (:func:`keep`)."""
    flags = bank[7]
    flags[BACKED_UP] = 0
    if flags[VALID] and same_key(key, bank[8][0]):
        return flags[SLOT]
    return -1


@numba.njit(cache=True)
def keep(bank, key, slot) -> None:
    """A converged solve keeps the LU of ``slot`` (-1: none) under ``key``."""
    flags = bank[7]
    bank[8][0] = key
    flags[VALID] = slot >= 0
    if slot >= 0:
        flags[SLOT] = slot


@numba.njit(cache=True)
def before_tangent(bank) -> None:
    """Save the last Jacobian before the step's first tangent evaluation overwrites it (a step
    handed back to the Python path must leave the assembly's Jacobian as it found it)."""
    flags = bank[7]
    if not flags[BACKED_UP]:
        bank[6][:] = bank[5]
        flags[BACKED_UP] = 1


@numba.njit(cache=True)
def new_solve(free, u1, slot):
    """The working arrays of a solve from u1 (n_dof,) with the kept LU of ``slot`` (-1: none): x
    (the unknowns u1[free]), the iterate before the last correction, r, the round-off spacing
    (n_free,) and (rn, |dx|); and the counters (int64 (8,), the entries above)."""
    n_free = free.size
    x = np.empty(n_free)
    for i in range(n_free):
        x[i] = u1[free[i]]
    counts = np.zeros(8, dtype=np.int64)
    counts[_PHASE], counts[_CURRENT] = _EVALUATED, slot
    return (x, np.empty(n_free), np.empty(n_free), np.empty(n_free), np.zeros(2)), counts


@numba.njit(cache=True)
def _stagnated(residual_norms, force_scales, increment_norms, n_norms, n_increments, length_scale,
               increment_gate, stagnation_tol, jacobian_indptr, jacobian_indices, jacobian, spacing) -> bool:
    """newton._stagnated on the log as it stands, the floor from the last Jacobian evaluated."""
    if n_norms < 3 or n_increments < 2:
        return False
    small = (increment_norms[n_increments - 1] <= stagnation_tol * length_scale
             and increment_norms[n_increments - 2] <= stagnation_tol * length_scale)
    stalled = min(residual_norms[n_norms - 2], residual_norms[n_norms - 1]) > 0.5 * residual_norms[n_norms - 3]
    if not (small and stalled):
        return False
    low = True
    for j in range(n_norms - 3, n_norms):
        if not residual_norms[j] <= increment_gate * force_scales[j]:
            low = False
    if low:
        return True
    level = np.finfo(np.float64).eps * csc_abs_product_norm(jacobian_indptr, jacobian_indices, jacobian, spacing)
    for j in range(n_norms - 3, n_norms):
        if not residual_norms[j] <= level:
            return False
    return True


@numba.njit(cache=True)
def kept_newton_pass(evaluated, tangent, free, g, jacobian_indptr, jacobian_indices, length_scale, residual_tol,
                     force_tol, increment_tol, max_iterations, increment_gate, stagnation_tol, round_off_factor,
                     magnitudes, absurd_correction, capped, max_rotation_correction, reuse_contraction, near_solution,
                     near_contraction, new_index, kl, ku, bank, u1, residual_norms, force_scales, increment_norms,
                     correction, work, counts):
    """One pass of modified Newton after the residual g (n_dof,) with force scale ``evaluated``
    (and, with ``tangent``, the Jacobian in the bank's last-Jacobian array) was evaluated at u1:
    returns an outcome (:mod:`flexmb.compiled.dense_newton`'s codes) or CONTINUE with whether the
    next evaluation, at the u1 written here, takes the tangent.

    The arguments are those of :func:`flexmb.compiled.dense_newton.newton_correction` (no pivot
    test) and: the contraction rule's constants (newton's REUSE_CONTRACTION, NEAR_SOLUTION,
    NEAR_CONTRACTION), the band ordering new_index (n_free,) with its bandwidths kl, ku
    (:class:`flexmb.integrators.sparse_lu._BandPattern`), the bank (:func:`new_bank`), and
    ``work``, ``counts`` of :func:`new_solve`."""
    x, previous, r, spacing, norms = work
    ab, pivots, row_scale, col_scale, lu_data, jacobian, _, flags, _ = bank
    n_free = free.size
    eps = np.finfo(np.float64).eps
    k, n_norms, n_increments = counts[_K], counts[_NORMS], counts[_INCREMENTS]
    phase = counts[_PHASE]
    scale = evaluated
    if phase == _CORRECTED:                      # the end of newton_solve's iteration k
        rn, size = norms[0], norms[1]
        increment_norms[n_increments] = size
        n_increments += 1
        counts[_INCREMENTS] = n_increments
        if size <= increment_tol * length_scale and rn <= increment_gate * scale:
            return CONVERGED_INCREMENT, False
        for i in range(n_free):
            spacing[i] = magnitudes[i] + abs(x[i])
        if size <= round_off_factor * eps * norm(spacing):
            return CONVERGED_ROUND_OFF, False
        if _stagnated(residual_norms, force_scales, increment_norms, n_norms, n_increments, length_scale,
                      increment_gate, stagnation_tol, jacobian_indptr, jacobian_indices, jacobian, spacing):
            return CONVERGED_STAGNATION, False
        k += 1
        counts[_K] = k
    for i in range(n_free):
        r[i] = g[free[i]]
    if phase != _FALL_BACK:
        scale = max(scale, np.finfo(np.float64).tiny)
        rn = norm(r)
        norms[0] = rn
        residual_norms[n_norms] = rn
        force_scales[n_norms] = scale
        n_norms += 1
        counts[_NORMS] = n_norms
        if not rn < np.inf:
            return NOT_FINITE_RESIDUAL, False
        if rn <= residual_tol * scale or rn <= force_tol:
            return CONVERGED_RESIDUAL, False
        if k == max_iterations:
            return NO_CONVERGENCE, False
        contraction = reuse_contraction if rn > near_solution * scale else near_contraction
        if (not counts[_FULL] and not tangent and k > 0 and rn > contraction * residual_norms[n_norms - 2]
                and increment_norms[n_increments - 1] > stagnation_tol * length_scale):
            # the kept factorisation stopped paying: full Newton, from the iterate before the last
            # correction if that made the residual grow (the log keeps the discarded residual)
            counts[_FULL] = 1
            if rn > residual_norms[n_norms - 2]:
                x[:] = previous
            for i in range(n_free):
                u1[free[i]] = x[i]
            counts[_PHASE] = _FALL_BACK
            return CONTINUE, True
    if tangent:
        slot = counts[_CURRENT]
        same = counts[_OWN] == 1                 # a Jacobian equal to the one this solve factorised
        if same:
            for i in range(jacobian.size):
                if jacobian[i] != lu_data[slot, i]:
                    same = False
                    break
        if not same:
            # the slot not holding the kept LU (which a failed step leaves to the Python path)
            slot = 1 - flags[SLOT] if flags[VALID] else 0
            flags[MADE + slot] = 1
            lu_data[slot, :] = jacobian
            equilibrated_band_fill(jacobian_indptr, jacobian_indices, jacobian, new_index, kl, ku, ab[slot],
                                   row_scale[slot], col_scale[slot])
            if band_lu(ab[slot], kl, ku, pivots[slot]) == 0.0:
                return EXACTLY_SINGULAR, False
            counts[_CURRENT], counts[_OWN] = slot, 1
            counts[_FACTORIZATIONS] += 1
    slot = counts[_CURRENT]
    for i in range(n_free):
        correction[i] = -r[i]
    dx = permuted_band_solve(ab[slot], kl, ku, pivots[slot], new_index, row_scale[slot], col_scale[slot], correction)
    correction[:] = dx
    size = norm(dx)
    norms[1] = size
    if not size < np.inf:
        return NOT_FINITE_CORRECTION, False
    if size > absurd_correction * length_scale:
        return ABSURD_CORRECTION, False
    previous[:] = x
    largest = 0.0                                # the step's cap of rotation corrections
    for i in capped:
        largest = max(largest, abs(dx[i]))
    if largest > max_rotation_correction:
        dx *= max_rotation_correction / largest
    for i in range(n_free):
        x[i] = x[i] + dx[i]
        u1[free[i]] = x[i]
    counts[_PHASE] = _CORRECTED
    return CONTINUE, counts[_FULL] == 1


@numba.njit(cache=True)
def beam2d_mid_point_kept_newton(X, EA, EI, second_order, edofs, entry_map, cubic, alpha0, l0, mass,
                                 mass_indptr, mass_indices, mass_values, mass_data, free, director_dofs,
                                 director_inertia, director_diagonal, director_free, node_director,
                                 u0, v0, stretch0, momentum_norm0, dt, mass_factor, f_m,
                                 jacobian_indptr, jacobian_indices, length_scale, residual_tol, force_tol,
                                 increment_tol, max_iterations, increment_gate, stagnation_tol, round_off_factor,
                                 magnitudes, absurd_correction, capped, max_rotation_correction, reuse_contraction,
                                 near_solution, near_contraction, new_index, kl, ku, bank, u1, g, d, v1, a_m,
                                 director, residual_norms, force_scales, increment_norms, correction):
    """A mid-point step's modified Newton solve with the kept band LU, the model's arguments as
    :func:`flexmb.compiled.mid_point_group.beam2d_mid_point_newton` takes them and the others as
    :func:`kept_newton_pass`. u1 (n_dof,) holds the start value and receives the last iterate; g,
    d, v1, a_m, director the residual terms of the last evaluation. Returns the outcome, the
    numbers of increments (the iterations) and of factorisations, and the slot of the last LU (-1:
    none), which the caller keeps (:func:`keep`) when it accepts the step."""
    start = new_start(edofs.shape[0], cubic)
    beam2d_mid_point_start(X, EA, EI, second_order, edofs, cubic, alpha0, l0, u0, v0, stretch0, start)
    jacobian = bank[5]
    work, counts = new_solve(free, u1, take(bank, dt))
    tangent = counts[_CURRENT] < 0               # the kept LU stands for the start point's Jacobian
    refresh = np.bool_(False)                    # a bool, not a literal: the residual compiles once
    while True:
        if tangent:
            before_tangent(bank)
        evaluated = beam2d_mid_point_residual(X, EA, EI, second_order, edofs, entry_map, cubic, alpha0, l0, mass,
                                              mass_indptr, mass_indices, mass_values, mass_data, free, director_dofs,
                                              director_inertia, director_diagonal, director_free, node_director,
                                              u0, v0, stretch0, start, refresh, momentum_norm0, dt, mass_factor,
                                              f_m, u1, tangent, g, jacobian, d, v1, a_m, director)
        outcome, tangent = kept_newton_pass(evaluated, tangent, free, g, jacobian_indptr, jacobian_indices,
                                            length_scale, residual_tol, force_tol, increment_tol, max_iterations,
                                            increment_gate, stagnation_tol, round_off_factor, magnitudes,
                                            absurd_correction, capped, max_rotation_correction, reuse_contraction,
                                            near_solution, near_contraction, new_index, kl, ku, bank, u1,
                                            residual_norms, force_scales, increment_norms, correction, work, counts)
        if outcome != CONTINUE:
            return outcome, counts[_INCREMENTS], counts[_FACTORIZATIONS], counts[_CURRENT]


@numba.njit(cache=True)
def beam2d_alpha_kept_newton(X, EA, EI, second_order, edofs, entry_map, cubic, alpha0, l0, mass,
                             mass_indptr, mass_indices, mass_values, mass_data, free,
                             u0, v0, a0, f0, reaction0, constraint_force0, beta, gamma, start_factor, weight, shift,
                             f1, momentum_norm0, dt, jacobian_indptr, jacobian_indices, length_scale, residual_tol,
                             force_tol, increment_tol, max_iterations, increment_gate, stagnation_tol,
                             round_off_factor, magnitudes, absurd_correction, capped, max_rotation_correction,
                             reuse_contraction, near_solution, near_contraction, new_index, kl, ku, bank, u1, g, v1,
                             a1, residual_norms, force_scales, increment_norms, correction):
    """A generalized-alpha step's modified Newton solve with the kept band LU: the arguments of
    :func:`flexmb.compiled.alpha_group.beam2d_alpha_newton` up to dt, then those of
    :func:`beam2d_mid_point_kept_newton`; u1 (n_dof,) holds the start value and receives the last
    iterate, g, v1, a1 the residual terms there. Returns what beam2d_mid_point_kept_newton returns."""
    n = u0.size
    start_terms = np.empty(n)
    beam2d_alpha_start(X, EA, EI, second_order, edofs, cubic, alpha0, l0, mass, mass_indptr, mass_indices,
                       mass_values, u0, v0, a0, f0, reaction0, constraint_force0, start_factor, start_terms)
    dv, da, kept, shifted = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    c_da, c_kept = dt**2 * (0.5 - beta), 1.0 - gamma     # as beam2d_alpha_newton forms them
    for k in range(n):
        dv[k] = dt * v0[k]
        da[k] = c_da * a0[k]
        kept[k] = c_kept * a0[k]
        shifted[k] = shift * a0[k]
    jacobian = bank[5]
    work, counts = new_solve(free, u1, take(bank, dt))
    tangent = counts[_CURRENT] < 0
    while True:
        if tangent:
            before_tangent(bank)
        evaluated = beam2d_alpha_residual(X, EA, EI, second_order, edofs, entry_map, cubic, alpha0, l0, mass,
                                          mass_indptr, mass_indices, mass_values, mass_data, free,
                                          u0, v0, dv, da, kept, shifted, beta, gamma, weight, start_terms, f1,
                                          momentum_norm0, dt, u1, tangent, g, jacobian, v1, a1)
        outcome, tangent = kept_newton_pass(evaluated, tangent, free, g, jacobian_indptr, jacobian_indices,
                                            length_scale, residual_tol, force_tol, increment_tol, max_iterations,
                                            increment_gate, stagnation_tol, round_off_factor, magnitudes,
                                            absurd_correction, capped, max_rotation_correction, reuse_contraction,
                                            near_solution, near_contraction, new_index, kl, ku, bank, u1,
                                            residual_norms, force_scales, increment_norms, correction, work, counts)
        if outcome != CONTINUE:
            return outcome, counts[_INCREMENTS], counts[_FACTORIZATIONS], counts[_CURRENT]
