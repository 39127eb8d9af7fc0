"""Runs of fixed time steps in one compiled call (:mod:`flexmb.compiled.step_loop`) for the models
whose every step the schemes solve in one compiled call (``MidPoint.solve_step``,
``GeneralizedAlpha.solve_step``: one planar beam group without joints, dense Jacobian), and for the
steps of such models beyond the dense LU's sizes whose every unknown has inertia, which
``newton_solve`` takes by modified Newton with the band LU kept from step to step
(:mod:`flexmb.compiled.kept_newton`; the kept LU goes between the compiled loop and the
scheme's :class:`~flexmb.integrators.newton.KeptFactorization` at the ends of each run of steps).

:class:`CompiledSteps` takes the steps of ``_Run.fixed`` in chunks: it evaluates what depends on
user functions of time (prescribed values and loads, at the times and in the order the Python step
evaluates them), runs the chunk's steps compiled, and hands each end state to the run's
bookkeeping (step sizes, recording, progress) as the Python step does. A step the compiled loop
leaves (a failed solve, a singular pivot, the run's first convergence at the round-off floor, a
user function that raised) is taken by the Python path from the same state, which then retries,
cuts back, logs or raises as it always does; the loop resumes after it. The states are the same
bit for bit (``tests/test_compiled_step_loop.py``).
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np

from flexmb.integrators import newton
from flexmb.integrators.dissipative import GeneralizedAlpha
from flexmb.integrators.schemes import MidPoint, Scheme, State

if TYPE_CHECKING:
    from flexmb.integrators.time_stepping import _Run

#: steps per compiled call: between calls the progress bar and the result file are updated
CHUNK = 128

_EMPTY = np.zeros(0)
#: the schemes' compiled solves and predictor that the loops stand for (another one, patched in, is not)
_SOLVES = {MidPoint: MidPoint.solve_step, GeneralizedAlpha: GeneralizedAlpha.solve_step}
_PREDICT = Scheme.predict
_RESIDUALS = {MidPoint: MidPoint.residual, GeneralizedAlpha: GeneralizedAlpha.residual}


class CompiledSteps:
    """The compiled step loop of one run (:meth:`for_run` says whether it applies)."""

    def __init__(self, stepper: Scheme, settings: newton.NewtonSettings, kept: bool = False) -> None:
        from flexmb.compiled import step_loop          # numba: imported with the first compiled run

        asm = self.asm = stepper.asm
        self.stepper, self.settings = stepper, settings
        self.alpha = isinstance(stepper, GeneralizedAlpha)
        self.kernel = step_loop.alpha_steps if self.alpha else step_loop.mid_point_steps
        plan = stepper._compiled_plan()
        self.model = tuple(plan) if self.alpha else tuple(plan[1])
        presc = asm.dofs.prescribed
        self.set_prescribed = asm.prescribed_by_value
        M = asm.mass
        nf = asm.n_free
        check_singular = not stepper.regular_inertia
        # the arguments of the schemes' solve_step after the step's own, in their order
        self.common = (asm.planar_rotations, presc, M.indptr, M.indices, M.data, asm.dofs.free)
        self.newton = (asm.nnz, asm.pattern_indptr, asm.pattern_indices, asm.characteristic_length,
                       settings.residual_tol, settings.force_tol, settings.increment_tol, settings.max_iterations,
                       settings.increment_gate, settings.stagnation_tol, settings.round_off_factor,
                       asm.round_off_lengths[asm.dofs.free], newton.pivot_tolerance(nf) if check_singular else 0.0,
                       newton.ABSURD_CORRECTION, asm.free_planar_rotations, newton.MAX_ROTATION_CORRECTION)
        self.prescribed_index = presc[self.set_prescribed]
        #: modified Newton with the kept band LU (``kept``): its state, the Factorization objects of
        #: the bank's slots that came from the Python steps, and the LUs the compiled steps made
        self.bank, self._lus, self.factorizations, self._handed_back = None, [None, None], 0, False
        if kept:
            from flexmb.compiled.kept_newton import new_bank
            from flexmb.integrators import sparse_lu

            self.kernel = step_loop.alpha_kept_steps if self.alpha else step_loop.mid_point_kept_steps
            self.pattern = p = sparse_lu.band_pattern(asm.free_matrix(np.zeros(asm.nnz)))
            self.bank = new_bank(nf, 2 * p.kl + p.ku + 1, asm.nnz)
            # solve_step's Newton arguments without nnz and the pivot test, then kept_newton's own
            self.newton = (*self.newton[1:12], *self.newton[13:], newton.REUSE_CONTRACTION, newton.NEAR_SOLUTION,
                           newton.NEAR_CONTRACTION, p.new_index, p.kl, p.ku, self.bank)

    @classmethod
    def for_run(cls, stepper: Scheme, settings: newton.NewtonSettings, keep_logs: bool,
                modified_min_size: int) -> CompiledSteps | None:
        """The loop for a run of ``stepper``, or None where a step would not take the scheme's
        compiled solve in ``_sub_step`` (joints, no one-call plan, a scheme with sub-steps or its own
        step, a predictor or solve other than the scheme's own), or where every step's log is wanted
        (``keep_newton_logs``, debug logging). From ``modified_min_size`` unknowns, where
        ``_sub_step`` takes modified Newton, only the steps of models beyond the dense LU
        (:data:`~flexmb.integrators.newton.DENSE_LIMIT`) with inertia at every unknown
        (``regular_inertia``: no pivot test) whose Jacobian takes the band LU, with the scheme's
        own residual."""
        kind = type(stepper)
        if kind not in _SOLVES or keep_logs or logging.getLogger("flexmb").isEnabledFor(logging.DEBUG):
            return None
        if kind.solve_step is not _SOLVES[kind] or kind.predict is not _PREDICT:
            return None
        asm = stepper.asm
        if asm.constraints is not None or stepper._compiled_plan() is None:
            return None
        if asm.n_free < modified_min_size:
            return cls(stepper, settings) if asm.n_free <= newton.DENSE_LIMIT else None
        if kind.residual is not _RESIDUALS[kind] or asm.n_free <= newton.DENSE_LIMIT or not stepper.regular_inertia:
            return None
        from flexmb.integrators import sparse_lu

        if sparse_lu.backend(settings.solver, asm.n_free, asm.free_matrix(np.zeros(asm.nnz))) != "banded":
            return None
        return cls(stepper, settings, kept=True)

    def _tables(self, state: State, t0: float, dt: float, first: int, count: int) -> tuple[np.ndarray, ...]:
        """Per step of the chunk from step ``first`` (of size dt from t0): its size (the Python
        step's ``t_target - state.t``), the prescribed values at its end and the external forces
        the scheme's solve_step evaluates, with the same calls in the same order. A user function
        that raises shortens the chunk to the steps before it (the Python step then raises)."""
        asm, alpha = self.asm, self.alpha
        n, n_p = asm.n_dof, self.prescribed_index.size
        dts, values = np.empty(count), np.empty((count, n_p))
        starts, ends = np.empty((count, n)), (np.empty((count, n)) if alpha else None)
        t = state.t
        for j in range(count):
            target = t0 + (first + j) * dt
            step = target - t
            try:
                values[j] = asm.prescribed_values(t + step)[self.set_prescribed]
                if alpha:
                    asm.set_time(t)
                    starts[j] = asm.external_force(t, u=state.u)
                    asm.set_time(t + step)
                    ends[j] = asm.external_force(t + step, u=state.u)
                else:
                    starts[j] = asm.mid_point_external_force(t, t + step, state.u, state.u)[0]
            except Exception:                   # the Python step calls it again and raises
                count = j
                break
            dts[j] = step
            t = target
        return dts[:count], values[:count], starts[:count], None if ends is None else ends[:count]

    def run(self, fixed_run: _Run, t0: float, dt: float, first: int, last: int) -> int:
        """Steps ``first`` .. ``last`` of dt from t0, from ``fixed_run.state``, in chunks, each end state
        accepted by ``fixed_run.accept`` (which records it and moves the progress bar); returns the
        number of the first step not taken (last + 1 when all were)."""
        if self.bank is None:
            return self._run(fixed_run, t0, dt, first, last)
        if not self._take_kept():
            return first
        try:
            return self._run(fixed_run, t0, dt, first, last)
        finally:
            self._give_kept()

    def _take_kept(self) -> bool:
        """The scheme's kept factorisation into the bank (False: one the bank cannot hold, whose step
        the Python path then takes): the band LU's factors as the Python steps left them, and the
        values of the assembly's Jacobian object, which the stagnation test reads."""
        from flexmb.compiled.kept_newton import MADE, SLOT, VALID

        kept = self.stepper.kept_factorization
        ab, pivots, row_scale, col_scale, _, jacobian, _, flags, key = self.bank
        key[0] = kept.key
        flags[VALID] = 0
        lu = kept.lu
        if lu is None:
            return True
        band = None if lu.dense else lu.lu
        if (band is None or band.name != "banded" or band._ab.shape != ab.shape[1:]
                or not np.array_equal(band._pattern.new_index, self.pattern.new_index)):
            return False
        ab[0], pivots[0], row_scale[0], col_scale[0] = band._ab, band._pivots, lu.row_scale, lu.col_scale
        jacobian[:] = kept.matrix.data
        flags[SLOT], flags[VALID], flags[MADE] = 0, 1, 0
        self._lus[0] = lu
        return True

    def _give_kept(self) -> None:
        """The bank's kept LU back to the scheme's KeptFactorization, as the Python steps would have
        left it (a Factorization of the matrix the compiled steps factorised, the same factors), and
        the last Jacobian evaluated to the assembly's Jacobian object; after a step handed back,
        the one from before that step."""
        from flexmb.compiled.kept_newton import BACKED_UP, MADE, SLOT, VALID

        kept, asm = self.stepper.kept_factorization, self.asm
        _, _, _, _, lu_data, jacobian, before, flags, key = self.bank
        kept.key = float(key[0])
        kept.lu = kept.matrix = None
        if not flags[VALID]:
            return
        slot = int(flags[SLOT])
        if flags[MADE + slot]:
            self._lus[slot] = newton.Factorization(asm.jacobian_matrix(lu_data[slot].copy()), False,
                                                   self.settings.solver)
            flags[MADE + slot] = 0
        kept.lu = self._lus[slot]
        kept.matrix = asm.jacobian_matrix((before if self._handed_back and flags[BACKED_UP] else jacobian).copy())

    def _run(self, fixed_run: _Run, t0: float, dt: float, first: int, last: int) -> int:
        """:meth:`run` without the kept factorisation's exchange; ``_handed_back``: whether it
        ended at a step the compiled loop could not finish."""
        history = fixed_run.history
        self._handed_back = False
        k = first
        while k <= last:
            state = fixed_run.state
            dts, values, starts, ends = self._tables(state, t0, dt, k, min(CHUNK, last - k + 1))
            count = dts.size
            if count == 0:
                return k
            n = state.u.size
            U, V, A, R = (np.empty((count, n)) for _ in range(4))
            work, iterations = np.empty(count), np.zeros(count, dtype=np.int64)
            stop_at_round_off = not any(e.kind == "round-off" for e in history.events)
            lus = () if self.bank is None else (np.zeros(count, dtype=np.int64),)     # LUs per step
            if self.alpha:
                p = self.stepper.parameters
                S = None
                done = self.kernel(
                    self.model, p.beta, p.gamma, p.alpha_f / (1.0 - p.alpha_f), (1.0 - p.alpha_m) / (1.0 - p.alpha_f),
                    (p.alpha_m - p.alpha_f) / (1.0 - p.alpha_f), dts, starts, ends, self.prescribed_index, values,
                    *self.common, *self.newton, stop_at_round_off, state.u, state.v, state.a, state.reaction,
                    _EMPTY if state.constraint_force is None else state.constraint_force, state.work,
                    U, V, A, R, work, iterations, *lus)
            else:
                director = self.asm.director_dofs
                S = np.empty((count, n if director.size else 0))
                done = self.kernel(
                    self.model, dts, starts, self.prescribed_index, values, *self.common, director, *self.newton,
                    stop_at_round_off, state.u, state.v, state.a, _EMPTY if state.stretch is None else state.stretch,
                    state.work, U, V, A, R, S, work, iterations, *lus)
            if lus:
                self.factorizations += int(lus[0][:done].sum())
            for j in range(done):
                new = State(t0 + (k + j) * dt, U[j], V[j], A[j], R[j], float(work[j]),
                            stretch=S[j] if S is not None and S.shape[1] else None, dissipated=state.dissipated)
                fixed_run.accept(new, int(iterations[j]), k + j)
            k += done
            if done < count:
                self._handed_back = True
                return k
        return k
