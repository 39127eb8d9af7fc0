"""Fixed mid-point steps of a small spatial model (3D modal bodies, rigid bodies, joints with drives) as
one compiled loop around the one-call step of :mod:`flexmb.compiled.spatial_group`.

With the step's whole Newton solve compiled (:func:`~flexmb.compiled.spatial_group.spatial_mid_point_newton`),
a small spatial model's step still spent about half its time outside the solve: a 6-mode modal body on a
driven joint took 0.40 ms of CPU per step, 0.19 ms of it the solve's call (with the unboxing of its 60
arguments), 0.08 ms the recording and the rest the Python around the call (the predictor, the
multipliers' scaling, the solve's arguments, the reactions, the work, the new state). In a loop over
steps the same solves take 0.14 ms a step, and the step 0.25 ms with the recording (2026-11-29).
:func:`spatial_mid_point_steps` takes a run of steps from a state in one call and does per step what
``flexmb.integrators.time_stepping._sub_step`` and ``MidPoint`` do around the solve, the same operations
in the same order, so the same values bit for bit: the rigid-motion
predictor of the spatial rotations (``Scheme.predict``), the prescribed values, the multipliers
scaled by their largest (``lam_scale``), the start momentum's norm and the joints' start vectors
(``MidPoint._spatial_step``), the solve, the support reactions (the residual with the joints' force at
the prescribed DOFs), the work of the loads and reactions (``MidPoint.work_increment``) and of the
joints' forces (``MidPoint.constraint_work``) over the step, and the multipliers lambda. What depends
on user functions of time (prescribed values, loads, the joints' drives) comes in as per-step tables,
evaluated in Python (:mod:`flexmb.integrators.spatial_step_loop`).

A loop stops before a step it cannot finish as the Python path would, and returns how many steps it
completed: a step whose multipliers are all zero (``_sub_step`` then scales them by the force scale of
a first residual of the Python scheme), a step whose solve fails or meets a singular pivot (the Python
path decides on the retry, the cut-back or the error), and with ``stop_at_round_off`` the first step
that converges at the round-off floor or by stagnation (the Python path enters it in the run log). The
caller runs that step in Python (the same solve from the same state) and goes on.
"""
from __future__ import annotations

import numba
import numpy as np

from flexmb.compiled.constraints import vectors
from flexmb.compiled.rotations import compose_batch, tangent_operator_batch
from flexmb.compiled.spatial_group import _rows, momentum_norm, spatial_mid_point_newton
from flexmb.compiled.sparse_ops import dot
from flexmb.compiled.step_loop import _reactions, _stops

jit = numba.njit(cache=True)


@jit
def spatial_prediction(u, v, a, dt, half_square, rotation_dofs, u1) -> None:
    """u1 (n_dof,) = :meth:`flexmb.integrators.schemes.Scheme.predict`'s start value for a model with
    spatial rotations, from the state u, v, a (n_dof,), dt (s) and half_square = 0.5 dt^2 (s^2, as the
    caller computes it): every DOF extrapolated by d = dt v + dt^2/2 a, the rotating nodes moved as if
    rigidly attached to their own rotation (translations dt T(dt omega) v, rotations composed with the
    spin dt omega). rotation_dofs (n_r, 3); a rotating node's translations are the three DOFs before
    its rotations. The same operations in the same order (the (3, 3) by (3,) products summed as
    ``einsum("nij,nj->ni")`` sums them, see :func:`flexmb.compiled.spatial_group._spatial_momenta`)."""
    n, n_r = u.size, rotation_dofs.shape[0]
    d = np.empty(n)
    for i in range(n):
        d[i] = dt * v[i] + half_square * a[i]
    spin = np.empty((n_r, 3))
    for k in range(n_r):
        for i in range(3):
            spin[k, i] = dt * v[rotation_dofs[k, i]]
    T = tangent_operator_batch(spin)                                    # (n_r, 3, 3)
    for k in range(n_r):
        x0, x1, x2 = v[rotation_dofs[k, 0] - 3], v[rotation_dofs[k, 1] - 3], v[rotation_dofs[k, 2] - 3]
        for i in range(3):
            d[rotation_dofs[k, i] - 3] = dt * ((T[k, i, 0] * x0 + T[k, i, 2] * x2) + T[k, i, 1] * x1)
            d[rotation_dofs[k, i]] = spin[k, i]
    for i in range(n):                                                  # Assembly.update
        u1[i] = u[i] + d[i]
    psi = compose_batch(_rows(d, rotation_dofs), _rows(u, rotation_dofs))
    for k in range(n_r):
        for i in range(3):
            u1[rotation_dofs[k, i]] = psi[k, i]


@jit
def spatial_mid_point_steps(fe, joints, augmented, jacobian_indptr, jacobian_indices, capped, magnitudes, dts,
                            half_squares, mass_factors, idle_scales, prescribed_values, forces, scales1, scales_m, rhs,
                            prescribed_index, prescribed, length_scale, residual_tol, force_tol, increment_tol,
                            max_iterations, increment_gate, stagnation_tol, round_off_factor, pivot_tol,
                            absurd_correction, max_rotation_correction, stop_at_round_off, u0, v0, a0, lam0, work0,
                            joint_work0, U, V, A, R, L, F, work, joint_work, iterations):
    """Up to dts.size mid-point steps (``_sub_step`` with ``MidPoint.solve_joint_step`` each) of a model
    of ``MidPoint._spatial_plan`` from the state u0, v0, a0 (n_dof,), its multipliers lam0 (n_c,; empty
    without joints), work0 and joint_work0 (J).

    fe, joints, augmented, (jacobian_indptr, jacobian_indices), capped and magnitudes: the plan's
    (:func:`~flexmb.compiled.spatial_group.spatial_mid_point_newton`'s arguments of those names). Per
    step k: its size dts[k] (s), 0.5 dts[k]^2, 2 / dts[k]^2 and the idle force scale (N; zero without
    joints) as ``_sub_step`` computes them, the prescribed values at its end prescribed_values[k] (n_p,)
    for the DOFs prescribed_index (n_p,), the external force over it forces[k] (n_dof,), the joints'
    bilinear scales at its end and mid-step scales1[k], scales_m[k] (n_b,) and right-hand sides at its
    end rhs[k] (n_c,). prescribed: every prescribed DOF (the reactions'); the Newton settings as
    spatial_mid_point_newton takes them, pivot_tol zero where the Jacobian cannot be singular.

    Step k's end state goes to the rows U[k], V[k], A[k] (displacements, velocities, the acceleration
    a_m; n_dof), R[k] (support reactions), L[k] (multipliers, n_c), F[k] (the joints' force G^T lambda),
    work[k], joint_work[k] (zero without joints, as the Python step's State) and iterations[k]. Returns
    the number of steps completed (see the module's description for where a loop stops)."""
    free, rotation_dofs = fe[0], fe[1]
    n, nf, n_c = u0.size, free.size, lam0.size
    m = max_iterations
    x, g, d, force = np.empty(nf + n_c), np.empty(n), np.empty(n), np.empty(n)
    data, r, jacobian = np.empty(fe[6].size), np.empty(nf + n_c), np.empty(augmented[0])
    phi, g_values, c_values, k_values = np.empty(n_c), np.empty(joints[1]), np.empty(joints[1]), np.empty(joints[2])
    residual_norms, force_scales = np.empty(m + 1), np.empty(m + 1)
    increment_norms, smallest_pivots, correction = np.empty(m), np.empty(m), np.empty(nf + n_c)
    arrays = joints[3]
    u, v, a, lam, w, jw = u0, v0, a0, lam0, work0, joint_work0
    for k in range(dts.size):
        dt = dts[k]
        u1 = U[k]
        spatial_prediction(u, v, a, dt, half_squares[k], rotation_dofs, u1)
        for i in range(prescribed_index.size):
            u1[prescribed_index[i]] = prescribed_values[k, i]
        lam_scale, idle_scale = 1.0, 0.0                                # MidPoint.solve_step's, without joints
        if n_c:
            lam_scale = 0.0
            for i in range(n_c):
                size = abs(lam[i])
                if size != size:                                        # NaN: as the Python step takes it
                    return k
                lam_scale = max(lam_scale, size)
            if not lam_scale > 0.0:
                return k
            idle_scale = idle_scales[k]
        for i in range(nf):
            x[i] = u1[free[i]]
        for i in range(n_c):
            x[nf + i] = lam[i] / lam_scale
        momentum = momentum_norm(fe[3], fe[4], fe[5], free, rotation_dofs, fe[2], u, v)
        start_points, start_vectors = vectors(u, arrays[0], arrays[1], arrays[2], arrays[3], arrays[4])
        outcome, _, _, _, n_increments, _, _, _ = spatial_mid_point_newton(
            *fe, joints, augmented, u, v, momentum, dt, mass_factors[k], forces[k], start_points, start_vectors,
            scales1[k], scales_m[k], rhs[k], lam_scale, idle_scale, jacobian_indptr, jacobian_indices, length_scale,
            residual_tol, force_tol, increment_tol, max_iterations, increment_gate, stagnation_tol, round_off_factor,
            magnitudes, pivot_tol, absurd_correction, capped, max_rotation_correction, x, u1, g, data, d, V[k], A[k],
            r, jacobian, phi, F[k], g_values, c_values, k_values, residual_norms, force_scales, increment_norms,
            smallest_pivots, correction)
        if _stops(outcome, stop_at_round_off):
            return k
        _reactions(g, prescribed, R[k])                                 # g holds the joints' force
        for i in range(n):                                              # MidPoint.work_increment: (f_m + r) . d
            force[i] = forces[k, i] + R[k, i]
        w = w + dot(force, d)
        if n_c:
            step_work = -dot(F[k], d)                                   # MidPoint.constraint_work
            w = w + step_work
            jw = jw + step_work
            for i in range(n_c):
                L[k, i] = x[nf + i] * lam_scale
        else:
            jw = 0.0
        work[k] = w
        joint_work[k] = jw
        iterations[k] = n_increments
        u, v, a, lam = u1, V[k], A[k], L[k]
    return dts.size
