"""Runs of fixed mid-point steps in one compiled call (:mod:`flexmb.compiled.spatial_step_loop`) for the
small spatial models whose every step ``MidPoint`` solves in one compiled call (``MidPoint._spatial_plan``:
3D modal bodies, rigid bodies, joints with drives; dense Jacobian).

:class:`SpatialSteps` is :class:`~flexmb.integrators.step_loop.CompiledSteps` for these models: it takes
the steps of ``_Run.fixed`` in chunks, evaluates what depends on user functions of time (the prescribed
values, the loads, the joints' drives and bilinear scales: at the times and in the order the Python
step evaluates them), runs the chunk's steps compiled and hands each end state (with its multipliers,
the joints' force and the drives' work) to the run's bookkeeping, which records it (reactions, joint
reactions, energies) as after a Python step. A step the compiled loop leaves (multipliers all zero, as
at the start of a run; a failed solve, a singular pivot, the run's first convergence at the round-off
floor, a user function that raised) is taken by the Python path from the same state, which then scales,
retries, cuts back, logs or raises as it always does; the loop resumes after it. The states are the
same bit for bit (``tests/test_compiled_spatial_steps.py``).
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np

from flexmb.integrators import newton
from flexmb.integrators.schemes import MidPoint, Scheme, State
from flexmb.integrators.step_loop import CHUNK

if TYPE_CHECKING:
    from flexmb.integrators.time_stepping import _Run

#: the scheme's compiled solves and predictor that the loop stands for (another one, patched in, is not)
_METHODS = (("solve_step", MidPoint.solve_step), ("solve_joint_step", MidPoint.solve_joint_step),
            ("predict", Scheme.predict))


class SpatialSteps:
    """The compiled step loop of one run of a spatial model (:meth:`for_run` says whether it applies)."""

    def __init__(self, stepper: MidPoint, settings: newton.NewtonSettings) -> None:
        from flexmb.compiled import spatial_step_loop          # numba: imported with the first compiled run

        self.kernel = spatial_step_loop.spatial_mid_point_steps
        asm = self.asm = stepper.asm
        cs = self.constraints = asm.constraints
        fe, joints, augmented, pattern, capped, magnitudes = stepper._spatial_plan()
        self.plan = (fe, joints, augmented, *pattern, capped, magnitudes)
        n_c = cs.n if cs is not None else 0
        self.widths = (len(cs._b_scale) if cs is not None else 0, n_c)      # bilinear scales, right-hand sides
        # _sub_step's idle force scale is this over dt^2 (with joints)
        self.idle = asm.inertia_scale * asm.characteristic_length if cs is not None else None
        presc = asm.dofs.prescribed
        self.set_prescribed = asm.prescribed_by_value
        self.prescribed = (presc[self.set_prescribed], presc)
        check_singular = not stepper.regular_inertia
        self.newton = (asm.characteristic_length, settings.residual_tol, settings.force_tol, settings.increment_tol,
                       settings.max_iterations, settings.increment_gate, settings.stagnation_tol,
                       settings.round_off_factor,
                       newton.pivot_tolerance(asm.n_free + n_c) if check_singular else 0.0,
                       newton.ABSURD_CORRECTION, newton.MAX_ROTATION_CORRECTION)

    @classmethod
    def for_run(cls, stepper: Scheme, settings: newton.NewtonSettings, keep_logs: bool,
                modified_min_size: int) -> SpatialSteps | None:
        """The loop for a run of ``stepper``, or None where a step would not take
        ``MidPoint.solve_joint_step``'s compiled solve in ``_sub_step`` (not the plain mid-point scheme,
        no spatial one-call plan, modified Newton from ``modified_min_size`` unknowns and multipliers or
        more than the dense LU takes, a predictor or solve other than the scheme's own), or where every
        step's log is wanted (``keep_newton_logs``, debug logging)."""
        if type(stepper) is not MidPoint or keep_logs or logging.getLogger("flexmb").isEnabledFor(logging.DEBUG):
            return None
        if any(getattr(MidPoint, name) is not method for name, method in _METHODS):
            return None
        asm = stepper.asm
        size = asm.n_free + (asm.constraints.n if asm.constraints is not None else 0)
        if size > newton.DENSE_LIMIT or size >= modified_min_size or stepper._spatial_plan() is None:
            return None
        return cls(stepper, settings)

    def _tables(self, state: State, t0: float, dt: float, first: int, count: int) -> tuple[np.ndarray, ...]:
        """Per step of the chunk from step ``first`` (of size dt from t0): its size (the Python step's
        ``t_target - state.t``), 0.5 dt^2, 2 / dt^2 and the idle force scale as ``_sub_step`` computes
        them, then the prescribed values at its end, the external force over it and the joints' bilinear
        scales at its end and mid-step and their right-hand sides at its end, with the same calls in the
        same order as ``_sub_step`` and ``MidPoint._spatial_step``. A user function that raises shortens
        the chunk to the steps before it (the Python step then raises)."""
        asm, cs = self.asm, self.constraints
        n_b, n_c = self.widths
        dts, half_squares, mass_factors, idle_scales = (np.empty(count) for _ in range(4))
        values, forces = np.empty((count, self.prescribed[0].size)), np.empty((count, asm.n_dof))
        scales1, scales_m, rhs = np.empty((count, n_b)), np.empty((count, n_b)), np.empty((count, n_c))
        t = state.t
        for j in range(count):
            target = t0 + (first + j) * dt
            step = target - t
            try:
                values[j] = asm.prescribed_values(t + step)[self.set_prescribed]
                forces[j] = asm.mid_point_external_force(t, t + step, state.u, state.u)[0]
                if cs is not None:
                    s1 = cs.scales(t + step)
                    scales1[j] = s1
                    scales_m[j] = 0.5 * (cs.scales(t) + s1) if cs.b_timed else s1
                    rhs[j] = cs.rhs(t + step)
            except Exception:                   # the Python step calls it again and raises
                count = j
                break
            dts[j], half_squares[j], mass_factors[j] = step, 0.5 * step**2, 2.0 / step**2
            idle_scales[j] = self.idle / step**2 if self.idle is not None else 0.0
            t = target
        return tuple(table[:count] for table in (dts, half_squares, mass_factors, idle_scales, values, forces, scales1,
                                                 scales_m, rhs))

    def run(self, fixed_run: _Run, t0: float, dt: float, first: int, last: int) -> int:
        """Steps ``first`` .. ``last`` of dt from t0, from ``fixed_run.state``, in chunks, each end state
        accepted by ``fixed_run.accept`` (which records it and moves the progress bar); returns the
        number of the first step not taken (last + 1 when all were)."""
        history, cs = fixed_run.history, self.constraints
        k = first
        while k <= last:
            state = fixed_run.state
            if cs is not None and not np.abs(state.lam).max(initial=0.0) > 0.0:
                return k                        # no multipliers to scale Newton's by (the run's first step)
            tables = self._tables(state, t0, dt, k, min(CHUNK, last - k + 1))
            count = tables[0].size
            if count == 0:
                return k
            n, n_c = state.u.size, self.widths[1]
            U, V, A, R, F = (np.empty((count, n)) for _ in range(5))
            L, work, joint_work = np.empty((count, n_c)), np.empty(count), np.empty(count)
            iterations = np.zeros(count, dtype=np.int64)
            stop_at_round_off = not any(e.kind == "round-off" for e in history.events)
            done = self.kernel(*self.plan, *tables, *self.prescribed, *self.newton, stop_at_round_off, state.u,
                               state.v, state.a, np.ascontiguousarray(state.lam, dtype=float), state.work,
                               state.joint_work, U, V, A, R, L, F, work, joint_work, iterations)
            for j in range(done):
                new = State(t0 + (k + j) * dt, U[j], V[j], A[j], R[j], float(work[j]), L[j],
                            F[j] if cs is not None else None, dissipated=state.dissipated,
                            joint_work=float(joint_work[j]))
                fixed_run.accept(new, int(iterations[j]), k + j)
            k += done
            if done < count:
                return k
        return k
